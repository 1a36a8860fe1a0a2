// SPDX-License-Identifier: GPL-2.0
/* dmsc tunnel add|change|switch|del|show */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include <linux/dmsc.h>

#include "cmd.h"
#include "err.h"
#include "output.h"
#include "parse.h"

static void tunnel_usage(FILE *f)
{
	fprintf(f,
		"Usage: dmsc tunnel add ID src ADDR PATH [PATH...] [backup SIDS]\n"
		"                       [mode encap|encap.red] [state up|down]\n"
		"       dmsc tunnel change ID [src ADDR] [PATH...] [backup SIDS|none]\n"
		"                       [mode encap|encap.red] [state up|down]\n"
		"       dmsc tunnel switch ID backup|primary\n"
		"       dmsc tunnel del ID\n"
		"       dmsc [-j] [-s] tunnel show [ID]\n"
		"PATH := path SID[,SID...] [weight 1..%u]   (up to %d paths)\n"
		"SIDS := SID[,SID...]   (up to %d SIDs, in travel order)\n",
		DMSC_MAX_WEIGHT, DMSC_MAX_PATHS, DMSC_MAX_SEGS);
}

static int put_segs(struct nl_msg *msg, const char *field, const char *arg)
{
	struct in6_addr segs[DMSC_MAX_SEGS];
	int n;

	if (parse_sid_list(field, arg, segs, DMSC_MAX_SEGS, &n))
		return -1;
	return nla_put(msg, DMSC_PATH_A_SEGS, n * sizeof(segs[0]), segs);
}

/*
 * The options shared by add and change, after the ID. @add says which
 * ones are required. Returns 0 with the options in @msg, or EXIT_USAGE.
 */
static int parse_tunnel_opts(struct nl_msg *msg, int argc, char **argv,
			     bool add)
{
	bool have_src = false;
	int npaths = 0;
	uint32_t w;

	while (argc > 0) {
		const char *opt = argv[0];

		if (argc < 2)
			return usage_error("%s: needs a value", opt);
		if (!strcmp(opt, "src")) {
			struct in6_addr a;

			if (parse_in6("src", argv[1], &a))
				return EXIT_USAGE;
			nla_put(msg, DMSC_TUNNEL_A_SRC, sizeof(a), &a);
			have_src = true;
		} else if (!strcmp(opt, "path")) {
			struct nlattr *p;

			if (++npaths > DMSC_MAX_PATHS)
				return usage_error("path: too many paths (at most %d)",
						   DMSC_MAX_PATHS);
			p = nla_nest_start(msg, DMSC_TUNNEL_A_PATH);
			if (put_segs(msg, "path", argv[1]))
				return EXIT_USAGE;
			if (argc >= 4 && !strcmp(argv[2], "weight")) {
				if (parse_u32("weight", argv[3], 1,
					      DMSC_MAX_WEIGHT, &w))
					return EXIT_USAGE;
				nla_put_u32(msg, DMSC_PATH_A_WEIGHT, w);
				argc -= 2;
				argv += 2;
			}
			nla_nest_end(msg, p);
		} else if (!strcmp(opt, "weight")) {
			return usage_error("weight: must follow a path");
		} else if (!strcmp(opt, "backup")) {
			struct nlattr *b;

			if (add && !strcmp(argv[1], "none"))
				return usage_error("backup \"none\": only with change");
			b = nla_nest_start(msg, DMSC_TUNNEL_A_BACKUP);
			/* An empty backup nest removes the backup. */
			if (strcmp(argv[1], "none") &&
			    put_segs(msg, "backup", argv[1]))
				return EXIT_USAGE;
			/* libnl drops an empty nest unless told to keep it. */
			nla_nest_end_keep_empty(msg, b);
		} else if (!strcmp(opt, "mode")) {
			uint8_t mode;

			if (!strcmp(argv[1], "encap"))
				mode = DMSC_MODE_ENCAP;
			else if (!strcmp(argv[1], "encap.red"))
				mode = DMSC_MODE_ENCAP_RED;
			else
				return usage_error("mode \"%s\": not encap or encap.red",
						   argv[1]);
			nla_put_u8(msg, DMSC_TUNNEL_A_MODE, mode);
		} else if (!strcmp(opt, "state")) {
			if (strcmp(argv[1], "up") && strcmp(argv[1], "down"))
				return usage_error("state \"%s\": not up or down",
						   argv[1]);
			nla_put_u8(msg, DMSC_TUNNEL_A_ADMIN_UP,
				   !strcmp(argv[1], "up"));
		} else {
			return usage_error("unknown option \"%s\"", opt);
		}
		argc -= 2;
		argv += 2;
	}
	if (add && !have_src)
		return usage_error("src: required");
	if (add && !npaths)
		return usage_error("path: at least one is required");
	return 0;
}

/* The arguments after ID of switch, del, add and change, into @msg. */
static int parse_tunnel_args(struct nl_msg *msg, int cmd, const char *verb,
			     int argc, char **argv)
{
	if (!strcmp(verb, "switch")) {
		if (argc != 1 || (strcmp(argv[0], "backup") &&
				  strcmp(argv[0], "primary")))
			return usage_error("say backup or primary");
		nla_put_u8(msg, DMSC_TUNNEL_A_ACTIVE,
			   !strcmp(argv[0], "backup") ? DMSC_ACTIVE_BACKUP :
							DMSC_ACTIVE_PRIMARY);
		return 0;
	}
	if (cmd == DMSC_CMD_TUNNEL_DEL) {
		if (argc)
			return usage_error("unexpected \"%s\"", argv[0]);
		return 0;
	}
	if (cmd == DMSC_CMD_TUNNEL_SET && !argc)
		return usage_error("nothing to change");
	return parse_tunnel_opts(msg, argc, argv, cmd == DMSC_CMD_TUNNEL_NEW);
}

static int tunnel_request(int cmd, const char *verb, int argc, char **argv,
			  struct request *req)
{
	struct nl_msg *msg;
	struct nlattr *t;
	uint32_t id;
	int ret;

	if (argc < 1)
		return usage_error("tunnel ID required");
	if (parse_u32("ID", argv[0], 1, UINT32_MAX, &id))
		return EXIT_USAGE;
	msg = dmsc_nl_msg(cmd, 0);
	if (!msg)
		return EXIT_FAIL;
	t = nla_nest_start(msg, DMSC_A_TUNNEL);
	nla_put_u32(msg, DMSC_TUNNEL_A_ID, id);
	ret = parse_tunnel_args(msg, cmd, verb, argc - 1, argv + 1);
	if (ret) {
		nlmsg_free(msg);
		return ret;
	}
	nla_nest_end(msg, t);
	req->msg = msg;
	return 0;
}

static void print_counters(struct nlattr **tb, int packets, int bytes,
			   int flows, bool stats)
{
	if (tb[flows])
		out_uint("flows", " flows %llu", nla_get_u32(tb[flows]));
	if (!stats)
		return;
	if (tb[packets])
		out_uint("packets", " packets %llu", nla_get_u64(tb[packets]));
	if (tb[bytes])
		out_uint("bytes", " bytes %llu", nla_get_u64(tb[bytes]));
}

static void print_path(struct nlattr *nest, const char *key, bool stats)
{
	struct nlattr *tb[DMSC_PATH_A_MAX + 1];
	char buf[INET6_ADDRSTRLEN];
	const struct in6_addr *segs;
	int i, n;

	if (nla_parse_nested(tb, DMSC_PATH_A_MAX, nest, NULL) < 0)
		return;
	out_open_object(key);
	out_text("\t%s", key ? "backup" : "path");
	if (tb[DMSC_PATH_A_INDEX] && !key)
		out_uint("index", " %llu", nla_get_u32(tb[DMSC_PATH_A_INDEX]));
	if (tb[DMSC_PATH_A_WEIGHT] && !key)
		out_uint("weight", " weight %llu",
			 nla_get_u32(tb[DMSC_PATH_A_WEIGHT]));
	out_open_array("segs");
	out_text(" segs ");
	if (tb[DMSC_PATH_A_SEGS]) {
		segs = nla_data(tb[DMSC_PATH_A_SEGS]);
		n = nla_len(tb[DMSC_PATH_A_SEGS]) / sizeof(*segs);
		for (i = 0; i < n; i++) {
			out_text("%s", i ? "," : "");
			out_string(NULL, "%s",
				   format_addr(AF_INET6, &segs[i], buf,
					       sizeof(buf)));
		}
	}
	out_close_array();
	print_counters(tb, DMSC_PATH_A_PACKETS, DMSC_PATH_A_BYTES,
		       DMSC_PATH_A_FLOWS, stats);
	out_text("\n");
	out_close_object();
}

static int tunnel_parse(struct nlattr **top, void *arg)
{
	struct nlattr *tb[DMSC_TUNNEL_A_MAX + 1], *a;
	struct cli *cli = arg;
	char buf[INET6_ADDRSTRLEN];
	int rem;

	if (!top[DMSC_A_TUNNEL] ||
	    nla_parse_nested(tb, DMSC_TUNNEL_A_MAX, top[DMSC_A_TUNNEL],
			     NULL) < 0)
		return 0;
	out_open_object(NULL);
	if (tb[DMSC_TUNNEL_A_ID])
		out_uint("id", "tunnel %llu", nla_get_u32(tb[DMSC_TUNNEL_A_ID]));
	if (tb[DMSC_TUNNEL_A_SRC])
		out_string("src", " src %s",
			   format_addr(AF_INET6, nla_data(tb[DMSC_TUNNEL_A_SRC]),
				       buf, sizeof(buf)));
	if (tb[DMSC_TUNNEL_A_MODE])
		out_string("mode", " mode %s",
			   nla_get_u8(tb[DMSC_TUNNEL_A_MODE]) ==
			   DMSC_MODE_ENCAP_RED ? "encap.red" : "encap");
	if (tb[DMSC_TUNNEL_A_ACTIVE])
		out_string("active", " active %s",
			   nla_get_u8(tb[DMSC_TUNNEL_A_ACTIVE]) ==
			   DMSC_ACTIVE_BACKUP ? "backup" : "primary");
	if (tb[DMSC_TUNNEL_A_ADMIN_UP])
		out_string("state", " state %s",
			   nla_get_u8(tb[DMSC_TUNNEL_A_ADMIN_UP]) ? "up" : "down");
	print_counters(tb, DMSC_TUNNEL_A_PACKETS, DMSC_TUNNEL_A_BYTES,
		       DMSC_TUNNEL_A_FLOWS, cli->stats);
	if (cli->stats && tb[DMSC_TUNNEL_A_SWITCHES])
		out_uint("switches", " switches %llu",
			 nla_get_u64(tb[DMSC_TUNNEL_A_SWITCHES]));
	out_text("\n");

	/* The paths repeat inside the tunnel nest: walk it. */
	out_open_array("paths");
	nla_for_each_nested(a, top[DMSC_A_TUNNEL], rem)
		if (nla_type(a) == DMSC_TUNNEL_A_PATH)
			print_path(a, NULL, cli->stats);
	out_close_array();
	if (tb[DMSC_TUNNEL_A_BACKUP])
		print_path(tb[DMSC_TUNNEL_A_BACKUP], "backup", cli->stats);
	out_close_object();
	return 0;
}

static int tunnel_show(int argc, char **argv, struct request *req)
{
	uint32_t id = 0;

	if (argc > 1)
		return usage_error("unexpected \"%s\"", argv[1]);
	if (argc == 1 && parse_u32("ID", argv[0], 1, UINT32_MAX, &id))
		return EXIT_USAGE;
	req->msg = dmsc_nl_msg(DMSC_CMD_TUNNEL_GET, id ? 0 : NLM_F_DUMP);
	if (!req->msg)
		return EXIT_FAIL;
	if (id) {
		struct nlattr *t = nla_nest_start(req->msg, DMSC_A_TUNNEL);

		nla_put_u32(req->msg, DMSC_TUNNEL_A_ID, id);
		nla_nest_end(req->msg, t);
	}
	req->parse = tunnel_parse;
	req->array = true;
	return 0;
}

int cmd_tunnel(struct cli *cli, int argc, char **argv, struct request *req)
{
	const char *verb = argc ? argv[0] : "show";

	(void)cli;
	err_set_command("tunnel", NULL);
	if (argc) {
		argc--;
		argv++;
	}
	if (matches(verb, "help")) {
		tunnel_usage(stdout);
		return 0;
	}
	if (matches(verb, "show") || matches(verb, "list")) {
		err_set_command("tunnel", "show");
		return tunnel_show(argc, argv, req);
	}
	if (matches(verb, "add")) {
		err_set_command("tunnel", "add");
		return tunnel_request(DMSC_CMD_TUNNEL_NEW, "add", argc, argv,
				      req);
	}
	if (matches(verb, "change") || matches(verb, "set")) {
		err_set_command("tunnel", "change");
		return tunnel_request(DMSC_CMD_TUNNEL_SET, "change", argc, argv,
				      req);
	}
	if (matches(verb, "switch")) {
		err_set_command("tunnel", "switch");
		return tunnel_request(DMSC_CMD_TUNNEL_SET, "switch", argc, argv,
				      req);
	}
	if (matches(verb, "delete")) {
		err_set_command("tunnel", "del");
		return tunnel_request(DMSC_CMD_TUNNEL_DEL, "del", argc, argv,
				      req);
	}
	return usage_error("unknown command \"%s\"", verb);
}
