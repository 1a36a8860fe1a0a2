// SPDX-License-Identifier: GPL-2.0
/*
 * dmsc cbfc session add|set|del|show and dmsc cbfc credit: the credit
 * sessions of the cbfc qdisc (Documentation/cbfc.md). A session names one
 * RoCEv2 flow as the qdisc classifies it; a credit update gives it credit.
 * A session with a next hop and a tunnel may hold a backup reservation,
 * the credit the first hop of the tunnel's backup list reserved: the
 * session moves onto it when its next hop fails.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/dmsc.h>

#include "cmd.h"
#include "err.h"
#include "output.h"
#include "parse.h"

static void cbfc_usage(FILE *f)
{
	fprintf(f,
		"Usage: dmsc cbfc session add FLOW [nexthop ADDR] [prevhop ADDR6]\n"
		"                              [mode cumulative|delta] [credit BYTES] [tunnel ID]\n"
		"                              [backup-nexthop ADDR backup-credit BYTES\n"
		"                               [backup-mode cumulative|delta]]\n"
		"       (nexthop, prevhop or both; a backup needs nexthop and tunnel;\n"
		"        backup-mode is the form the backup hop returns credit in,\n"
		"        by default the session's mode)\n"
		"       dmsc cbfc session set FLOW backup-nexthop ADDR backup-credit BYTES\n"
		"                              [backup-mode cumulative|delta]\n"
		"       dmsc cbfc session set FLOW backup none\n"
		"       dmsc cbfc session del FLOW\n"
		"       dmsc [-j] cbfc session show [FLOW]\n"
		"       dmsc cbfc credit FLOW freed BYTES     (cumulative session)\n"
		"       dmsc cbfc credit FLOW delta BYTES     (delta session)\n"
		"FLOW := src ADDR dst ADDR sport PORT qpn QPN   (the inner RoCEv2 flow)\n"
		"credit 0..%llu, backup-credit 1..%llu, delta 1..%llu bytes,\n"
		"freed 0..%llu (a running total, may wrap)\n",
		(unsigned long long)DMSC_CREDIT_MAX,
		(unsigned long long)DMSC_CREDIT_MAX,
		(unsigned long long)DMSC_DELTA_MAX,
		(unsigned long long)UINT64_MAX);
}

static int parse_u64(const char *field, const char *s, uint64_t min,
		     uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (s[0] < '0' || s[0] > '9')
		goto bad;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		goto bad;
	if (v < min || v > max) {
		errorf("%s \"%s\": out of range %llu..%llu", field, s,
		       (unsigned long long)min, (unsigned long long)max);
		return -1;
	}
	*out = v;
	return 0;
bad:
	errorf("%s \"%s\": not a number", field, s);
	return -1;
}

/* An IPv4 or IPv6 address; @family 0 takes either, else it must match. */
static int parse_addr(const char *field, const char *s, int *family,
		      uint8_t *addr)
{
	if (*family != AF_INET6 && inet_pton(AF_INET, s, addr) == 1) {
		*family = AF_INET;
		return 0;
	}
	if (*family != AF_INET && inet_pton(AF_INET6, s, addr) == 1) {
		*family = AF_INET6;
		return 0;
	}
	if (*family)
		errorf("%s \"%s\": not an IPv%d address like src", field, s,
		       *family == AF_INET ? 4 : 6);
	else
		errorf("%s \"%s\": not an IP address", field, s);
	return -1;
}

/* A next hop, IPv4 or IPv6: an IPv4 one travels IPv4-mapped. */
static int parse_hop(const char *field, const char *s, struct in6_addr *hop)
{
	int fam = 0;
	uint8_t buf[16];

	if (parse_addr(field, s, &fam, buf))
		return -1;
	memset(hop, 0, sizeof(*hop));
	if (fam == AF_INET) {
		hop->s6_addr[10] = 0xff;
		hop->s6_addr[11] = 0xff;
		memcpy(&hop->s6_addr[12], buf, 4);
	} else {
		memcpy(hop, buf, 16);
	}
	return 0;
}

struct cbfc_args {
	bool flow;		/* src, dst, sport, qpn all given */
	int family;
	uint8_t src[16], dst[16];
	uint32_t sport, qpn;
	bool have_src, have_dst, have_sport, have_qpn;
	bool have_nexthop, have_mode, have_credit, have_freed, have_delta;
	bool have_tunnel, have_prevhop;
	bool have_backup_nexthop, have_backup_credit, backup_none;
	bool have_backup_mode;
	struct in6_addr nexthop, prevhop, backup_nexthop;
	uint8_t mode, backup_mode;
	uint32_t tunnel;
	uint64_t credit, freed, delta, backup_credit;
};

/*
 * The words of a session or credit command; @allowed says which options
 * beyond the flow this verb takes (a bit per option, below).
 */
enum { OPT_NEXTHOP = 1, OPT_MODE = 2, OPT_CREDIT = 4, OPT_FREED = 8,
       OPT_DELTA = 16, OPT_TUNNEL = 32, OPT_PREVHOP = 64,
       OPT_BACKUP_NEXTHOP = 128, OPT_BACKUP_CREDIT = 256, OPT_BACKUP = 512,
       OPT_BACKUP_MODE = 1024 };

/* A credit mode by its name; @field names the option in the error. */
static int parse_mode(const char *field, const char *val, uint8_t *mode)
{
	if (!strcmp(val, "cumulative"))
		*mode = DMSC_CREDIT_MODE_CUMULATIVE;
	else if (!strcmp(val, "delta"))
		*mode = DMSC_CREDIT_MODE_DELTA;
	else
		return usage_error("%s \"%s\": not cumulative or delta", field,
				   val);
	return 0;
}

static int parse_cbfc_args(int argc, char **argv, unsigned int allowed,
			   struct cbfc_args *a)
{
	memset(a, 0, sizeof(*a));
	for (; argc > 0; argc -= 2, argv += 2) {
		const char *opt = argv[0], *val = argv[1];
		unsigned int bit = 0;

		if (!strcmp(opt, "nexthop"))
			bit = OPT_NEXTHOP;
		else if (!strcmp(opt, "mode"))
			bit = OPT_MODE;
		else if (!strcmp(opt, "credit"))
			bit = OPT_CREDIT;
		else if (!strcmp(opt, "freed"))
			bit = OPT_FREED;
		else if (!strcmp(opt, "delta"))
			bit = OPT_DELTA;
		else if (!strcmp(opt, "tunnel"))
			bit = OPT_TUNNEL;
		else if (!strcmp(opt, "prevhop"))
			bit = OPT_PREVHOP;
		else if (!strcmp(opt, "backup-nexthop"))
			bit = OPT_BACKUP_NEXTHOP;
		else if (!strcmp(opt, "backup-credit"))
			bit = OPT_BACKUP_CREDIT;
		else if (!strcmp(opt, "backup"))
			bit = OPT_BACKUP;
		else if (!strcmp(opt, "backup-mode"))
			bit = OPT_BACKUP_MODE;
		else if (strcmp(opt, "src") && strcmp(opt, "dst") &&
			 strcmp(opt, "sport") && strcmp(opt, "qpn"))
			return usage_error("unknown option \"%s\"", opt);
		if (bit && !(allowed & bit))
			return usage_error("%s: not for this command", opt);
		if (argc < 2)
			return usage_error("%s: needs a value", opt);
		if (!strcmp(opt, "src")) {
			if (a->have_src)
				return usage_error("src: given twice");
			if (parse_addr("src", val, &a->family, a->src))
				return EXIT_USAGE;
			a->have_src = true;
		} else if (!strcmp(opt, "dst")) {
			if (a->have_dst)
				return usage_error("dst: given twice");
			if (parse_addr("dst", val, &a->family, a->dst))
				return EXIT_USAGE;
			a->have_dst = true;
		} else if (!strcmp(opt, "sport")) {
			if (parse_u32("sport", val, 0, 65535, &a->sport))
				return EXIT_USAGE;
			a->have_sport = true;
		} else if (!strcmp(opt, "qpn")) {
			if (parse_u32("qpn", val, 0, DMSC_QPN_MAX, &a->qpn))
				return EXIT_USAGE;
			a->have_qpn = true;
		} else if (bit == OPT_NEXTHOP) {
			if (parse_hop("nexthop", val, &a->nexthop))
				return EXIT_USAGE;
			a->have_nexthop = true;
		} else if (bit == OPT_BACKUP_NEXTHOP) {
			if (parse_hop("backup-nexthop", val, &a->backup_nexthop))
				return EXIT_USAGE;
			a->have_backup_nexthop = true;
		} else if (bit == OPT_BACKUP_CREDIT) {
			if (parse_u64("backup-credit", val, 1, DMSC_CREDIT_MAX,
				      &a->backup_credit))
				return EXIT_USAGE;
			a->have_backup_credit = true;
		} else if (bit == OPT_BACKUP) {
			if (strcmp(val, "none"))
				return usage_error("backup \"%s\": not none", val);
			a->backup_none = true;
		} else if (bit == OPT_PREVHOP) {
			int fam = AF_INET6;

			/* Credit returns are sent over IPv6 only. */
			if (parse_addr("prevhop", val, &fam,
				       a->prevhop.s6_addr))
				return EXIT_USAGE;
			a->have_prevhop = true;
		} else if (bit == OPT_MODE) {
			if (parse_mode("mode", val, &a->mode))
				return EXIT_USAGE;
			a->have_mode = true;
		} else if (bit == OPT_BACKUP_MODE) {
			if (parse_mode("backup-mode", val, &a->backup_mode))
				return EXIT_USAGE;
			a->have_backup_mode = true;
		} else if (bit == OPT_TUNNEL) {
			uint64_t id;

			if (parse_u64("tunnel", val, 1, UINT32_MAX, &id))
				return EXIT_USAGE;
			a->tunnel = (uint32_t)id;
			a->have_tunnel = true;
		} else if (bit == OPT_CREDIT) {
			if (parse_u64("credit", val, 0, DMSC_CREDIT_MAX,
				      &a->credit))
				return EXIT_USAGE;
			a->have_credit = true;
		} else if (bit == OPT_FREED) {
			if (parse_u64("freed", val, 0, UINT64_MAX,
				      &a->freed))
				return EXIT_USAGE;
			a->have_freed = true;
		} else if (bit == OPT_DELTA) {
			if (parse_u64("delta", val, 1, DMSC_DELTA_MAX,
				      &a->delta))
				return EXIT_USAGE;
			a->have_delta = true;
		}
	}
	a->flow = a->have_src && a->have_dst && a->have_sport && a->have_qpn;
	return 0;
}

/* The flow must be whole: name the first part missing. */
static int need_flow(const struct cbfc_args *a)
{
	if (!a->have_src)
		return usage_error("src: required");
	if (!a->have_dst)
		return usage_error("dst: required");
	if (!a->have_sport)
		return usage_error("sport: required");
	if (!a->have_qpn)
		return usage_error("qpn: required");
	return 0;
}

/* A backup reservation is its first hop and its credit: both or neither. */
static int need_backup_pair(const struct cbfc_args *a)
{
	if (a->have_backup_nexthop && !a->have_backup_credit)
		return usage_error("backup-credit: required with backup-nexthop");
	if (a->have_backup_credit && !a->have_backup_nexthop)
		return usage_error("backup-nexthop: required with backup-credit");
	if (a->have_backup_mode && !a->have_backup_nexthop)
		return usage_error("backup-mode: needs backup-nexthop and backup-credit");
	return 0;
}

static struct nl_msg *cbfc_msg(int cmd, int flags, const struct cbfc_args *a)
{
	unsigned int alen = a->family == AF_INET ? 4 : 16;
	struct nl_msg *msg = dmsc_nl_msg(cmd, flags);
	struct nlattr *s;

	if (!msg || !a->flow)
		return msg;
	s = nla_nest_start(msg, DMSC_A_SESSION);
	nla_put_u8(msg, DMSC_SESSION_A_FAMILY, a->family);
	nla_put(msg, DMSC_SESSION_A_SRC, alen, a->src);
	nla_put(msg, DMSC_SESSION_A_DST, alen, a->dst);
	nla_put_u16(msg, DMSC_SESSION_A_SPORT, a->sport);
	nla_put_u32(msg, DMSC_SESSION_A_QPN, a->qpn);
	if (a->have_nexthop)
		nla_put(msg, DMSC_SESSION_A_NEXTHOP, sizeof(a->nexthop),
			&a->nexthop);
	if (a->have_prevhop)
		nla_put(msg, DMSC_SESSION_A_PREVHOP, sizeof(a->prevhop),
			&a->prevhop);
	if (a->have_mode)
		nla_put_u8(msg, DMSC_SESSION_A_MODE, a->mode);
	if (a->have_credit)
		nla_put_u64(msg, DMSC_SESSION_A_CREDIT, a->credit);
	if (a->have_freed)
		nla_put_u64(msg, DMSC_SESSION_A_FREED, a->freed);
	if (a->have_delta)
		nla_put_u64(msg, DMSC_SESSION_A_DELTA, a->delta);
	if (a->have_tunnel)
		nla_put_u32(msg, DMSC_SESSION_A_TUNNEL, a->tunnel);
	/* SESSION_SET with neither clears the backup. */
	if (a->have_backup_nexthop)
		nla_put(msg, DMSC_SESSION_A_BACKUP_NEXTHOP,
			sizeof(a->backup_nexthop), &a->backup_nexthop);
	if (a->have_backup_credit)
		nla_put_u64(msg, DMSC_SESSION_A_BACKUP_CREDIT, a->backup_credit);
	if (a->have_backup_mode)
		nla_put_u8(msg, DMSC_SESSION_A_BACKUP_MODE, a->backup_mode);
	nla_nest_end(msg, s);
	return msg;
}

static void put_u64(struct nlattr **tb, int type, const char *key,
		    const char *fmt)
{
	if (tb[type])
		out_uint(key, fmt, nla_get_u64(tb[type]));
}

/* A next hop; an IPv4-mapped one as the IPv4 address it stands for. */
static void put_hop(struct nlattr **tb, int type, const char *key,
		    const char *fmt)
{
	const struct in6_addr *nh;
	char a[INET6_ADDRSTRLEN];

	if (!tb[type] || nla_len(tb[type]) < (int)sizeof(*nh))
		return;
	nh = nla_data(tb[type]);
	if (IN6_IS_ADDR_V4MAPPED(nh))
		out_string(key, fmt, format_addr(AF_INET, &nh->s6_addr[12], a,
						 sizeof(a)));
	else
		out_string(key, fmt, format_addr(AF_INET6, nh, a, sizeof(a)));
}

static int session_parse(struct nlattr **top, void *arg)
{
	struct nlattr *tb[DMSC_SESSION_A_MAX + 1];
	char a[INET6_ADDRSTRLEN];
	int family;

	(void)arg;
	if (!top[DMSC_A_SESSION] ||
	    nla_parse_nested(tb, DMSC_SESSION_A_MAX, top[DMSC_A_SESSION],
			     NULL) < 0)
		return 0;
	family = tb[DMSC_SESSION_A_FAMILY] ?
		 nla_get_u8(tb[DMSC_SESSION_A_FAMILY]) : AF_INET6;
	out_open_object(NULL);
	if (tb[DMSC_SESSION_A_SRC])
		out_string("src", "src %s", format_addr(family,
			   nla_data(tb[DMSC_SESSION_A_SRC]), a, sizeof(a)));
	if (tb[DMSC_SESSION_A_DST])
		out_string("dst", " dst %s", format_addr(family,
			   nla_data(tb[DMSC_SESSION_A_DST]), a, sizeof(a)));
	if (tb[DMSC_SESSION_A_SPORT])
		out_uint("sport", " sport %llu",
			 nla_get_u16(tb[DMSC_SESSION_A_SPORT]));
	if (tb[DMSC_SESSION_A_QPN])
		out_uint("qpn", " qpn %llu", nla_get_u32(tb[DMSC_SESSION_A_QPN]));
	/* The current next hop: the backup's once the session moved. */
	put_hop(tb, DMSC_SESSION_A_NEXTHOP, "nexthop", " nexthop %s");
	if (tb[DMSC_SESSION_A_PREVHOP])
		out_string("prevhop", " prevhop %s",
			   format_addr(AF_INET6,
				       nla_data(tb[DMSC_SESSION_A_PREVHOP]),
				       a, sizeof(a)));
	if (tb[DMSC_SESSION_A_MODE])
		out_string("mode", " mode %s",
			   nla_get_u8(tb[DMSC_SESSION_A_MODE]) ==
			   DMSC_CREDIT_MODE_DELTA ? "delta" : "cumulative");
	put_u64(tb, DMSC_SESSION_A_CREDIT, "credit", " credit %llu");
	put_u64(tb, DMSC_SESSION_A_FREED, "freed", " freed %llu");
	put_u64(tb, DMSC_SESSION_A_SENT, "sent", " sent %llu");
	put_u64(tb, DMSC_SESSION_A_AVAILABLE, "available", " available %llu");
	put_u64(tb, DMSC_SESSION_A_PACKETS, "packets", " packets %llu");
	put_u64(tb, DMSC_SESSION_A_UPDATES, "updates", " updates %llu");
	put_u64(tb, DMSC_SESSION_A_STALE, "stale", " stale %llu");
	put_u64(tb, DMSC_SESSION_A_ABSURD, "absurd", " absurd %llu");
	if (tb[DMSC_SESSION_A_PREVHOP]) {
		put_u64(tb, DMSC_SESSION_A_RETURNED, "returned",
			" returned %llu");
		put_u64(tb, DMSC_SESSION_A_RETURNS, "returns", " returns %llu");
	}
	if (tb[DMSC_SESSION_A_TUNNEL])
		out_uint("tunnel", " tunnel %llu",
			 nla_get_u32(tb[DMSC_SESSION_A_TUNNEL]));
	put_hop(tb, DMSC_SESSION_A_BACKUP_NEXTHOP, "backup_nexthop",
		" backup-nexthop %s");
	put_u64(tb, DMSC_SESSION_A_BACKUP_CREDIT, "backup_credit",
		" backup-credit %llu");
	if (tb[DMSC_SESSION_A_BACKUP_MODE])
		out_string("backup_mode", " backup-mode %s",
			   nla_get_u8(tb[DMSC_SESSION_A_BACKUP_MODE]) ==
			   DMSC_CREDIT_MODE_DELTA ? "delta" : "cumulative");
	if (tb[DMSC_SESSION_A_FAILED])
		out_uint("failed", " failed %llu",
			 nla_get_u8(tb[DMSC_SESSION_A_FAILED]));
	if (tb[DMSC_SESSION_A_ON_BACKUP])
		out_uint("on_backup", " on-backup %llu",
			 nla_get_u8(tb[DMSC_SESSION_A_ON_BACKUP]));
	out_text("\n");
	out_close_object();
	return 0;
}

static int session_cmd(const char *verb, int argc, char **argv,
		       struct request *req)
{
	struct cbfc_args a;
	int ret;

	if (matches(verb, "help")) {
		cbfc_usage(stdout);
		return 0;
	}
	if (matches(verb, "add")) {
		err_set_command("cbfc", "session add");
		ret = parse_cbfc_args(argc, argv,
				      OPT_NEXTHOP | OPT_MODE | OPT_CREDIT |
				      OPT_TUNNEL | OPT_PREVHOP |
				      OPT_BACKUP_NEXTHOP | OPT_BACKUP_CREDIT |
				      OPT_BACKUP_MODE, &a);
		if (ret || (ret = need_flow(&a)) || (ret = need_backup_pair(&a)))
			return ret;
		if (!a.have_nexthop && !a.have_prevhop)
			return usage_error("nexthop or prevhop: required");
		/* The kernel would refuse these too; say so by name here. */
		if (a.have_backup_nexthop && !a.have_nexthop)
			return usage_error("backup-nexthop: needs nexthop");
		if (a.have_backup_nexthop && !a.have_tunnel)
			return usage_error("backup-nexthop: needs tunnel");
		if (a.have_backup_nexthop &&
		    !memcmp(&a.backup_nexthop, &a.nexthop, sizeof(a.nexthop)))
			return usage_error("backup-nexthop: the same as nexthop");
		req->msg = cbfc_msg(DMSC_CMD_SESSION_NEW, 0, &a);
	} else if (matches(verb, "delete")) {
		err_set_command("cbfc", "session del");
		ret = parse_cbfc_args(argc, argv, 0, &a);
		if (ret || (ret = need_flow(&a)))
			return ret;
		req->msg = cbfc_msg(DMSC_CMD_SESSION_DEL, 0, &a);
	} else if (matches(verb, "show") || matches(verb, "list")) {
		err_set_command("cbfc", "session show");
		ret = parse_cbfc_args(argc, argv, 0, &a);
		if (ret)
			return ret;
		/* No flow: all of them; part of one is a mistake. */
		if (argc && (ret = need_flow(&a)))
			return ret;
		req->msg = cbfc_msg(DMSC_CMD_SESSION_GET,
				    argc ? 0 : NLM_F_DUMP, &a);
		req->parse = session_parse;
		req->array = !argc;
	} else if (matches(verb, "set")) {
		/* After show: "s" stays show, as before set existed. */
		err_set_command("cbfc", "session set");
		ret = parse_cbfc_args(argc, argv,
				      OPT_BACKUP_NEXTHOP | OPT_BACKUP_CREDIT |
				      OPT_BACKUP | OPT_BACKUP_MODE, &a);
		if (ret || (ret = need_flow(&a)))
			return ret;
		if (a.backup_none && a.have_backup_nexthop)
			return usage_error("backup none: not with backup-nexthop");
		if (a.backup_none && a.have_backup_credit)
			return usage_error("backup none: not with backup-credit");
		if (a.backup_none && a.have_backup_mode)
			return usage_error("backup none: not with backup-mode");
		if (!a.backup_none && !a.have_backup_nexthop &&
		    !a.have_backup_credit)
			return usage_error("backup-nexthop and backup-credit, or backup none: required");
		if ((ret = need_backup_pair(&a)))
			return ret;
		req->msg = cbfc_msg(DMSC_CMD_SESSION_SET, 0, &a);
	} else {
		return usage_error("unknown command \"%s\"", verb);
	}
	return req->msg ? 0 : EXIT_FAIL;
}

int cmd_cbfc(struct cli *cli, int argc, char **argv, struct request *req)
{
	struct cbfc_args a;
	int ret;

	(void)cli;
	err_set_command("cbfc", NULL);
	if (!argc || matches(argv[0], "help")) {
		cbfc_usage(stdout);
		return 0;
	}
	if (matches(argv[0], "session")) {
		const char *verb = argc > 1 ? argv[1] : "show";

		if (argc < 2)
			return session_cmd(verb, 0, argv + 1, req);
		return session_cmd(verb, argc - 2, argv + 2, req);
	}
	if (!matches(argv[0], "credit"))
		return usage_error("unknown command \"%s\"", argv[0]);
	err_set_command("cbfc", "credit");
	ret = parse_cbfc_args(argc - 1, argv + 1, OPT_FREED | OPT_DELTA, &a);
	if (ret || (ret = need_flow(&a)))
		return ret;
	if (a.have_freed == a.have_delta)
		return usage_error("freed or delta: give exactly one");
	req->msg = cbfc_msg(DMSC_CMD_CREDIT, 0, &a);
	return req->msg ? 0 : EXIT_FAIL;
}
