// SPDX-License-Identifier: GPL-2.0
/* dmsc rule add|del|show */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include <linux/dmsc.h>

#include "cmd.h"
#include "err.h"
#include "output.h"
#include "parse.h"

static void rule_usage(FILE *f)
{
	fprintf(f,
		"Usage: dmsc rule add dst PREFIX [src PREFIX] [qpn QP|LO-HI] tunnel ID\n"
		"       dmsc rule del dst PREFIX [src PREFIX] [qpn QP|LO-HI]\n"
		"       dmsc [-j] [-s] rule show\n"
		"The most specific rule wins: longest dst, then longest src,\n"
		"then the narrowest qpn range, then the oldest rule.\n");
}

static int put_prefix(struct nl_msg *msg, const struct dmsc_prefix *p,
		      int addr_attr, int len_attr)
{
	int alen = p->family == AF_INET ? 4 : 16;

	return nla_put(msg, addr_attr, alen, p->addr) ||
	       nla_put_u8(msg, len_attr, p->len);
}

static int rule_request(int cmd, int argc, char **argv, struct request *req)
{
	struct dmsc_prefix dst = { 0 }, src = { 0 };
	bool have_dst = false, have_src = false, have_qpn = false;
	uint32_t lo = 0, hi = 0, tunnel = 0;
	struct nl_msg *msg;
	struct nlattr *r;

	for (; argc > 0; argc -= 2, argv += 2) {
		if (argc < 2)
			return usage_error("%s: needs a value", argv[0]);
		if (!strcmp(argv[0], "dst")) {
			if (parse_prefix("dst", argv[1], &dst))
				return EXIT_USAGE;
			have_dst = true;
		} else if (!strcmp(argv[0], "src")) {
			if (parse_prefix("src", argv[1], &src))
				return EXIT_USAGE;
			have_src = true;
		} else if (!strcmp(argv[0], "qpn")) {
			if (parse_qpn_range("qpn", argv[1], &lo, &hi))
				return EXIT_USAGE;
			have_qpn = true;
		} else if (!strcmp(argv[0], "tunnel") &&
			   cmd == DMSC_CMD_RULE_NEW) {
			if (parse_u32("tunnel", argv[1], 1, UINT32_MAX,
				      &tunnel))
				return EXIT_USAGE;
		} else {
			return usage_error("unknown option \"%s\"", argv[0]);
		}
	}
	if (!have_dst)
		return usage_error("dst: required");
	if (have_src && src.family != dst.family)
		return usage_error("src: not of the same family as dst");
	if (cmd == DMSC_CMD_RULE_NEW && !tunnel)
		return usage_error("tunnel: required");
	msg = dmsc_nl_msg(cmd, 0);
	if (!msg)
		return EXIT_FAIL;
	r = nla_nest_start(msg, DMSC_A_RULE);
	nla_put_u8(msg, DMSC_RULE_A_FAMILY, dst.family);
	put_prefix(msg, &dst, DMSC_RULE_A_DST, DMSC_RULE_A_DST_LEN);
	if (have_src)
		put_prefix(msg, &src, DMSC_RULE_A_SRC, DMSC_RULE_A_SRC_LEN);
	if (have_qpn) {
		nla_put_u32(msg, DMSC_RULE_A_QPN_LO, lo);
		nla_put_u32(msg, DMSC_RULE_A_QPN_HI, hi);
	}
	if (tunnel)
		nla_put_u32(msg, DMSC_RULE_A_TUNNEL, tunnel);
	nla_nest_end(msg, r);
	req->msg = msg;
	return 0;
}

static void print_prefix(const char *key, const char *fmt, int family,
			 struct nlattr *addr, struct nlattr *len)
{
	char buf[INET6_ADDRSTRLEN + 8], a[INET6_ADDRSTRLEN];

	if (!addr)
		return;
	snprintf(buf, sizeof(buf), "%s/%u",
		 format_addr(family, nla_data(addr), a, sizeof(a)),
		 len ? nla_get_u8(len) : 0);
	out_string(key, fmt, buf);
}

static int rule_parse(struct nlattr **top, void *arg)
{
	struct nlattr *tb[DMSC_RULE_A_MAX + 1];
	struct cli *cli = arg;
	int family;

	if (!top[DMSC_A_RULE] ||
	    nla_parse_nested(tb, DMSC_RULE_A_MAX, top[DMSC_A_RULE], NULL) < 0)
		return 0;
	family = tb[DMSC_RULE_A_FAMILY] ? nla_get_u8(tb[DMSC_RULE_A_FAMILY]) :
					  AF_INET6;
	out_open_object(NULL);
	out_string("family", NULL, family == AF_INET ? "inet" : "inet6");
	print_prefix("dst", "dst %s", family, tb[DMSC_RULE_A_DST],
		     tb[DMSC_RULE_A_DST_LEN]);
	print_prefix("src", " src %s", family, tb[DMSC_RULE_A_SRC],
		     tb[DMSC_RULE_A_SRC_LEN]);
	if (tb[DMSC_RULE_A_QPN_LO] && tb[DMSC_RULE_A_QPN_HI]) {
		uint32_t lo = nla_get_u32(tb[DMSC_RULE_A_QPN_LO]);
		uint32_t hi = nla_get_u32(tb[DMSC_RULE_A_QPN_HI]);

		if (lo != 0 || hi != DMSC_QPN_MAX || out_is_json()) {
			out_uint("qpn_lo", " qpn %llu", lo);
			out_uint("qpn_hi", "-%llu", hi);
		}
	}
	if (tb[DMSC_RULE_A_TUNNEL])
		out_uint("tunnel", " tunnel %llu",
			 nla_get_u32(tb[DMSC_RULE_A_TUNNEL]));
	if (cli->stats && tb[DMSC_RULE_A_PACKETS])
		out_uint("packets", " packets %llu",
			 nla_get_u64(tb[DMSC_RULE_A_PACKETS]));
	out_text("\n");
	out_close_object();
	return 0;
}

static int rule_show(int argc, char **argv, struct request *req)
{
	if (argc)
		return usage_error("unexpected \"%s\"", argv[0]);
	req->msg = dmsc_nl_msg(DMSC_CMD_RULE_GET, NLM_F_DUMP);
	req->parse = rule_parse;
	req->array = true;
	return req->msg ? 0 : EXIT_FAIL;
}

int cmd_rule(struct cli *cli, int argc, char **argv, struct request *req)
{
	const char *verb = argc ? argv[0] : "show";

	(void)cli;
	err_set_command("rule", NULL);
	if (argc) {
		argc--;
		argv++;
	}
	if (matches(verb, "help")) {
		rule_usage(stdout);
		return 0;
	}
	if (matches(verb, "show") || matches(verb, "list")) {
		err_set_command("rule", "show");
		return rule_show(argc, argv, req);
	}
	if (matches(verb, "add")) {
		err_set_command("rule", "add");
		return rule_request(DMSC_CMD_RULE_NEW, argc, argv, req);
	}
	if (matches(verb, "delete")) {
		err_set_command("rule", "del");
		return rule_request(DMSC_CMD_RULE_DEL, argc, argv, req);
	}
	return usage_error("unknown command \"%s\"", verb);
}
