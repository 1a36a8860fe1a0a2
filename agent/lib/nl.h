/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small generic netlink client for the "dmsc" family on libnl-3:
 * one request, its replies (or a dump) and the kernel's extack message.
 */
#ifndef DMSC_NL_H
#define DMSC_NL_H

#include <stdbool.h>
#include <netlink/netlink.h>
#include <netlink/genl/genl.h>
#include <netlink/attr.h>

struct dmsc_nl {
	struct nl_sock *sk;
	int family;
	int events_group;
	char errmsg[256];	/* extack message of the last failure */
	int err_off;		/* offset of the bad attribute, or -1 */
};

/* Called for every reply message; return 0 to go on, < 0 to stop. */
typedef int (*dmsc_nl_parse_fn)(struct nlattr **tb, void *arg);

int dmsc_nl_open(struct dmsc_nl *nl);
void dmsc_nl_close(struct dmsc_nl *nl);

/*
 * A message for @cmd with @flags (NLM_F_DUMP for dumps). It needs no
 * socket: a command is parsed into its message before netlink is opened,
 * and dmsc_nl_talk() fills in the family's id when it sends it.
 */
struct nl_msg *dmsc_nl_msg(int cmd, int flags);

/*
 * Send @msg (consumed), hand each reply's top-level attributes to @parse,
 * and wait for the final ACK or DONE. Returns 0 or a negative errno; on a
 * kernel error nl->errmsg holds its extack message, if any.
 */
int dmsc_nl_talk(struct dmsc_nl *nl, struct nl_msg *msg,
		 dmsc_nl_parse_fn parse, void *arg);

/* Print "dmsc: WHAT: <strerror>: <extack>" to stderr. */
void dmsc_nl_perror(const struct dmsc_nl *nl, const char *what, int err);

/* Join the "events" group: -ENOENT if the family has none, -EIO. */
int dmsc_nl_join_events(struct dmsc_nl *nl);

/* Join the "events" group and call @parse for each event until it fails. */
int dmsc_nl_listen(struct dmsc_nl *nl, int cmd_filter,
		   dmsc_nl_parse_fn parse, void *arg);

/*
 * The same for an event loop: dmsc_nl_listen_start() joins and sets the
 * callback, then dmsc_nl_listen_recv() reads what came once the socket
 * (nl_socket_get_fd(nl->sk)) is readable: 0 to go on, > 0 when @parse
 * asked to stop, or a negative errno: -ENOBUFS when the socket's buffer
 * overran and events were lost (the listener goes on, and should look
 * at the state it follows again), -EIO for other failures.
 */
struct dmsc_nl_listener {
	int cmd_filter;
	dmsc_nl_parse_fn parse;
	void *arg;
	int err;
};
int dmsc_nl_listen_start(struct dmsc_nl *nl, struct dmsc_nl_listener *ls);
int dmsc_nl_listen_recv(struct dmsc_nl *nl, struct dmsc_nl_listener *ls);

#endif /* DMSC_NL_H */
