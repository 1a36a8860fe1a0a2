/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The object commands of the dmsc CLI. Each command runs in two steps:
 * its arguments are parsed, all of them, into a netlink request; only a
 * request that parsed is sent. So a typo is reported by field name, with
 * exit code 2, whether or not the module is loaded or the namespace exists.
 *
 * Exit codes, everywhere: 0 success, 1 the kernel or the operation failed,
 * 2 a usage error (an unknown word, a bad value, a missing argument).
 */
#ifndef DMSC_CMD_H
#define DMSC_CMD_H

#include <stdbool.h>
#include <stdint.h>

#include "nl.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

struct cli {
	bool json;
	bool stats;
	bool pretty;
	const char *netns;	/* -n: entered before netlink opens */
	struct dmsc_nl nl;
	bool nl_open;
};

/* What one command line asks of the kernel, parsed before netlink opens. */
struct request {
	struct nl_msg *msg;	/* NULL: nothing to send (help was printed) */
	dmsc_nl_parse_fn parse;	/* called for each reply; NULL: an ACK only */
	void *arg;		/* for parse; NULL means the struct cli */
	bool array;		/* replies form one JSON array (show, dump) */
	bool listen;		/* monitor: wait for events instead */
	uint32_t count;		/* monitor: stop after this many; 0 never */
	uint32_t seen;		/* monitor: events so far */
};

/*
 * Parse argv (the words after the object) into @req. Returns 0, or
 * EXIT_USAGE after printing what is wrong. "help" prints the usage on
 * stdout and returns 0 with no message in @req.
 */
typedef int cmd_parse_fn(struct cli *cli, int argc, char **argv,
			 struct request *req);
cmd_parse_fn cmd_info, cmd_set, cmd_tunnel, cmd_rule, cmd_flow, cmd_monitor,
	cmd_cbfc;
/* dmsc mpte needs no netlink: it runs at once and returns the exit code. */
int cmd_mpte(struct cli *cli, int argc, char **argv);
/* dmsc plan, the segmentation planner: likewise. */
int cmd_plan(struct cli *cli, int argc, char **argv);
/* dmsc agent: asks a dmsc-agent on its control socket; no netlink. */
int cmd_agent(struct cli *cli, int argc, char **argv);
/* dmsc telemetry: parsed into @req (telemetry.h), run by telemetry_run(). */
struct telemetry_req;
int cmd_telemetry(struct cli *cli, int argc, char **argv,
		  struct telemetry_req *req);

/* cli.c: the program, one command line, and its parse step alone. */
int cli_main(int argc, char **argv);
int cli_run(struct cli *cli, int argc, char **argv);
int cli_parse(struct cli *cli, int argc, char **argv, struct request *req);
void cli_close(struct cli *cli);
/* batch.c: dmsc -batch FILE, a command line per line. */
int cli_batch(struct cli *cli, const char *path, bool force);
/*
 * Split @line in place into words as a shell would, quotes and all, up
 * to a "#" that starts a word. Returns the number of words, or -1 after
 * printing the error (unterminated quote, too many words).
 */
int batch_split(char *line, char **argv, int max);

/*
 * A usage error: print it in the error context with a pointer to the
 * object's help, and return EXIT_USAGE.
 */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* DMSC_CMD_H */
