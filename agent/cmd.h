/* SPDX-License-Identifier: GPL-2.0 */
/* The object commands of the dmsc CLI; each returns the exit code. */
#ifndef DMSC_CMD_H
#define DMSC_CMD_H

#include <stdbool.h>

#include "nl.h"

struct cli {
	bool json;
	bool stats;
	struct dmsc_nl nl;
	bool nl_open;
};

/* Open the netlink socket on first use; prints the error itself. */
int cli_nl(struct cli *cli);
/*
 * Send @msg (consumed), hand each reply to @parse with @cli as its
 * argument, print "dmsc: WHAT: error: extack" on failure. Returns the
 * exit code. cli_show() wraps the replies in one JSON array.
 */
int cli_talk(struct cli *cli, struct nl_msg *msg, dmsc_nl_parse_fn parse,
	     const char *what);
int cli_show(struct cli *cli, struct nl_msg *msg, dmsc_nl_parse_fn parse,
	     const char *what);

int cmd_info(struct cli *cli, int argc, char **argv);
int cmd_set(struct cli *cli, int argc, char **argv);
int cmd_tunnel(struct cli *cli, int argc, char **argv);
int cmd_rule(struct cli *cli, int argc, char **argv);
int cmd_flow(struct cli *cli, int argc, char **argv);
int cmd_monitor(struct cli *cli, int argc, char **argv);

/* "dmsc: OBJECT: what is wrong" and the exit code of a usage error. */
int usage_error(const char *object, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* DMSC_CMD_H */
