// SPDX-License-Identifier: GPL-2.0
/*
 * Generic netlink plumbing for the dmsc tools. libnl does the socket and
 * message work; what it does not do is read the extended ACK, so the
 * error callback below parses NLMSGERR_ATTR_MSG itself: a user must see
 * the kernel's reason, not just "Invalid argument".
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/msg.h>

#include <linux/dmsc.h>

#include "nl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

static const struct nla_policy top_policy[DMSC_A_MAX + 1];

struct talk_state {
	struct dmsc_nl *nl;
	dmsc_nl_parse_fn parse;
	void *arg;
	int err;
	bool done;
	bool intr;		/* a dump message came with NLM_F_DUMP_INTR */
};

int dmsc_nl_open(struct dmsc_nl *nl)
{
	int one = 1, err;

	memset(nl, 0, sizeof(*nl));
	nl->err_off = -1;
	nl->sk = nl_socket_alloc();
	if (!nl->sk)
		return -ENOMEM;
	err = genl_connect(nl->sk);
	if (err < 0)
		goto fail;
	/* Ask for extack messages, without the echo of our own request. */
	setsockopt(nl_socket_get_fd(nl->sk), SOL_NETLINK, NETLINK_EXT_ACK,
		   &one, sizeof(one));
	setsockopt(nl_socket_get_fd(nl->sk), SOL_NETLINK, NETLINK_CAP_ACK,
		   &one, sizeof(one));
	nl->family = genl_ctrl_resolve(nl->sk, DMSC_GENL_NAME);
	if (nl->family < 0) {
		err = -ENOENT;
		snprintf(nl->errmsg, sizeof(nl->errmsg),
			 "generic netlink family \"%s\" not found (is dmsc.ko loaded?)",
			 DMSC_GENL_NAME);
		goto fail;
	}
	nl->events_group = genl_ctrl_resolve_grp(nl->sk, DMSC_GENL_NAME,
						 DMSC_MCGRP_EVENTS);
	return 0;
fail:
	nl_socket_free(nl->sk);
	nl->sk = NULL;
	/* libnl's own error codes are not errnos: say EIO for those. */
	return err == -ENOENT ? err : -EIO;
}

void dmsc_nl_close(struct dmsc_nl *nl)
{
	if (nl->sk)
		nl_socket_free(nl->sk);
	nl->sk = NULL;
}

struct nl_msg *dmsc_nl_msg(int cmd, int flags)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg)
		return NULL;
	/* The family's id is known only once the socket asked for it. */
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, 0, 0,
			 flags, cmd, DMSC_GENL_VERSION)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct talk_state *st = arg;
	struct nlattr *tb[DMSC_A_MAX + 1];
	int err;

	err = genlmsg_parse(nlmsg_hdr(msg), 0, tb, DMSC_A_MAX,
			    (struct nla_policy *)top_policy);
	if (err < 0) {
		st->err = -EPROTO;
		return NL_STOP;
	}
	if (st->parse) {
		err = st->parse(tb, st->arg);
		if (err < 0) {
			st->err = err;
			return NL_STOP;
		}
	}
	return NL_OK;
}

/* The extack TLVs follow the error and, unless capped, our request. */
static void read_extack(struct dmsc_nl *nl, struct nlmsgerr *e)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	size_t off = sizeof(*e);
	char *tlvs;
	int len;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - NLMSG_HDRLEN;
	tlvs = (char *)e + off;
	len = (int)nlh->nlmsg_len - NLMSG_HDRLEN - (int)off;
	if (len <= 0 || nla_parse(tb, NLMSGERR_ATTR_MAX, (struct nlattr *)tlvs,
				  len, NULL) < 0)
		return;
	if (tb[NLMSGERR_ATTR_MSG])
		snprintf(nl->errmsg, sizeof(nl->errmsg), "%s",
			 (char *)nla_data(tb[NLMSGERR_ATTR_MSG]));
	if (tb[NLMSGERR_ATTR_OFFS])
		nl->err_off = (int)nla_get_u32(tb[NLMSGERR_ATTR_OFFS]);
}

static int on_error(struct sockaddr_nl *who, struct nlmsgerr *e, void *arg)
{
	struct talk_state *st = arg;

	(void)who;
	st->err = e->error;
	read_extack(st->nl, e);
	st->done = true;
	return NL_STOP;
}

/*
 * The kernel flags the messages of a dump during which the table changed
 * (a tunnel or rule added or removed, the flow table resized): what we
 * print may miss or repeat an entry. Say so, as ip(8) does, and go on.
 */
static int on_dump_intr(struct nl_msg *msg, void *arg)
{
	struct talk_state *st = arg;

	(void)msg;
	st->intr = true;
	return NL_OK;
}

static int on_finish(struct nl_msg *msg, void *arg)
{
	struct talk_state *st = arg;

	(void)msg;
	st->done = true;
	return NL_STOP;
}

int dmsc_nl_talk(struct dmsc_nl *nl, struct nl_msg *msg,
		 dmsc_nl_parse_fn parse, void *arg)
{
	struct talk_state st = { .nl = nl, .parse = parse, .arg = arg };
	struct nl_cb *cb;
	int err;

	nl->errmsg[0] = '\0';
	nl->err_off = -1;
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, &st);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_finish, &st);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_finish, &st);
	nl_cb_set(cb, NL_CB_DUMP_INTR, NL_CB_CUSTOM, on_dump_intr, &st);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, &st);

	nlmsg_hdr(msg)->nlmsg_type = nl->family;

	err = nl_send_auto(nl->sk, msg);
	nlmsg_free(msg);
	if (err < 0) {
		nl_cb_put(cb);
		return -EIO;
	}
	while (!st.done && !st.err) {
		err = nl_recvmsgs(nl->sk, cb);
		if (err < 0 && !st.err) {
			st.err = -EIO;
			break;
		}
	}
	/* A parse callback that stopped early leaves replies unread. */
	nl_cb_put(cb);
	if (st.intr && !st.err)
		fprintf(stderr,
			"dmsc: warning: the table changed during the dump, which may be inconsistent\n");
	return st.err;
}

void dmsc_nl_perror(const struct dmsc_nl *nl, const char *what, int err)
{
	if (nl->errmsg[0])
		fprintf(stderr, "dmsc: %s: %s: %s\n", what, strerror(-err),
			nl->errmsg);
	else
		fprintf(stderr, "dmsc: %s: %s\n", what, strerror(-err));
}

static int on_event(struct nl_msg *msg, void *arg)
{
	struct dmsc_nl_listener *ls = arg;
	struct genlmsghdr *gh = nlmsg_data(nlmsg_hdr(msg));
	struct nlattr *tb[DMSC_A_MAX + 1];
	int err;

	if (ls->cmd_filter && gh->cmd != ls->cmd_filter)
		return NL_OK;
	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, DMSC_A_MAX,
			  (struct nla_policy *)top_policy) < 0)
		return NL_OK;
	/* A parse callback returns > 0 to stop listening without error. */
	err = ls->parse(tb, ls->arg);
	if (err) {
		ls->err = err;
		return NL_STOP;
	}
	return NL_OK;
}

int dmsc_nl_join_events(struct dmsc_nl *nl)
{
	if (nl->events_group < 0)
		return -ENOENT;
	/* Joining twice is harmless: the kernel keeps one membership. */
	if (nl_socket_add_membership(nl->sk, nl->events_group) < 0)
		return -EIO;
	return 0;
}

int dmsc_nl_listen_start(struct dmsc_nl *nl, struct dmsc_nl_listener *ls)
{
	int err;

	ls->err = 0;
	err = dmsc_nl_join_events(nl);
	if (err)
		return err;
	nl_socket_disable_seq_check(nl->sk);
	nl_socket_modify_cb(nl->sk, NL_CB_VALID, NL_CB_CUSTOM, on_event, ls);
	return 0;
}

int dmsc_nl_listen_recv(struct dmsc_nl *nl, struct dmsc_nl_listener *ls)
{
	int err = nl_recvmsgs_default(nl->sk);

	/* A non-blocking socket with nothing (more) to read. */
	if (err == -NLE_AGAIN)
		return ls->err;
	/*
	 * libnl reports the kernel's ENOBUFS (the socket's buffer overran:
	 * events were lost) as NLE_NOMEM; a listener must know it to
	 * resynchronise, so it is told apart from other failures.
	 */
	if (err == -NLE_NOMEM && !ls->err)
		return -ENOBUFS;
	if (err < 0 && !ls->err)
		return -EIO;
	return ls->err;
}

int dmsc_nl_listen(struct dmsc_nl *nl, int cmd_filter,
		   dmsc_nl_parse_fn parse, void *arg)
{
	struct dmsc_nl_listener ls = { cmd_filter, parse, arg, 0 };
	int err;

	err = dmsc_nl_listen_start(nl, &ls);
	while (!err)
		err = dmsc_nl_listen_recv(nl, &ls);
	return err > 0 ? 0 : err;
}
