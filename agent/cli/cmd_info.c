// SPDX-License-Identifier: GPL-2.0
/* dmsc info, dmsc set: the namespace as a whole. */
#include <stdio.h>
#include <string.h>

#include <linux/dmsc.h>

#include "cmd.h"
#include "err.h"
#include "output.h"
#include "parse.h"

static const char *const feature_names[] = {
	"srv6-encap", "srv6-encap-red", "inner-ipv4", "inner-ipv6",
	"flow-table", "backup-path",
};

static void print_features(uint64_t f)
{
	size_t i;
	bool first = true;

	out_open_array("features");
	out_text("features ");
	for (i = 0; i < sizeof(feature_names) / sizeof(*feature_names); i++) {
		if (!(f & (1ULL << i)))
			continue;
		out_text("%s", first ? "" : ",");
		out_string(NULL, "%s", feature_names[i]);
		first = false;
	}
	out_close_array();
	out_text("\n");
}

static const struct {
	int attr;
	const char *key;
	bool u64;
} stats_fields[] = {
	{ DMSC_STATS_A_TUNNELS, "tunnels", false },
	{ DMSC_STATS_A_RULES, "rules", false },
	{ DMSC_STATS_A_FLOWS, "flows", false },
	{ DMSC_STATS_A_ROCE_PACKETS, "roce_packets", true },
	{ DMSC_STATS_A_ENCAP_PACKETS, "encap_packets", true },
	{ DMSC_STATS_A_ENCAP_BYTES, "encap_bytes", true },
	{ DMSC_STATS_A_DROP_MTU, "drop_mtu", true },
	{ DMSC_STATS_A_DROP_NOROUTE, "drop_noroute", true },
	{ DMSC_STATS_A_DROP_NOMEM, "drop_nomem", true },
	{ DMSC_STATS_A_MALFORMED, "malformed", true },
	{ DMSC_STATS_A_FLOWS_UNTRACKED, "flows_untracked", true },
	{ DMSC_STATS_A_CRET_TX, "cret_tx", true },
	{ DMSC_STATS_A_CRET_TX_ERRORS, "cret_tx_errors", true },
	{ DMSC_STATS_A_CRET_RX, "cret_rx", true },
	{ DMSC_STATS_A_CRET_MALFORMED, "cret_malformed", true },
	{ DMSC_STATS_A_CRET_NO_SESSION, "cret_no_session", true },
	{ DMSC_STATS_A_CRET_SOURCE, "cret_source", true },
	{ DMSC_STATS_A_CRET_MODE, "cret_mode", true },
	{ DMSC_STATS_A_CRET_KEEPALIVE, "cret_keepalive", true },
};

static void print_stats(struct nlattr *nest)
{
	struct nlattr *tb[DMSC_STATS_A_MAX + 1];
	char fmt[64];
	size_t i;

	if (nla_parse_nested(tb, DMSC_STATS_A_MAX, nest, NULL) < 0)
		return;
	out_open_object("stats");
	for (i = 0; i < sizeof(stats_fields) / sizeof(*stats_fields); i++) {
		struct nlattr *a = tb[stats_fields[i].attr];

		if (!a)
			continue;
		/* Three to a line in text. */
		snprintf(fmt, sizeof(fmt), "%s %%llu%s", stats_fields[i].key,
			 i % 3 == 2 ? "\n" : " ");
		out_uint(stats_fields[i].key, fmt,
			 stats_fields[i].u64 ? nla_get_u64(a) : nla_get_u32(a));
	}
	out_close_object();
	out_text("\n");
}

static int info_parse(struct nlattr **tb, void *arg)
{
	(void)arg;
	out_open_object(NULL);
	if (tb[DMSC_A_VERSION])
		out_string("version", "dmsc %s",
			   nla_get_string(tb[DMSC_A_VERSION]));
	if (tb[DMSC_A_NETNS_COOKIE])
		out_uint("netns_cookie", " netns %llu",
			 nla_get_u64(tb[DMSC_A_NETNS_COOKIE]));
	out_text("\n");
	if (tb[DMSC_A_FEATURES])
		print_features(nla_get_u64(tb[DMSC_A_FEATURES]));
	if (tb[DMSC_A_FLOW_LIMIT])
		out_uint("flow_limit", "flow_limit %llu",
			 nla_get_u32(tb[DMSC_A_FLOW_LIMIT]));
	if (tb[DMSC_A_FLOW_TIMEOUT])
		out_uint("flow_timeout_ms", " flow_timeout %llums",
			 nla_get_u32(tb[DMSC_A_FLOW_TIMEOUT]));
	out_text("\n");
	if (tb[DMSC_A_STATS])
		print_stats(tb[DMSC_A_STATS]);
	out_close_object();
	return 0;
}

int cmd_info(struct cli *cli, int argc, char **argv, struct request *req)
{
	(void)cli;
	err_set_command("info", NULL);
	if (argc > 0 && matches(argv[0], "help")) {
		printf("Usage: dmsc [-j] info\n"
		       "The module's version, features, settings and counters.\n");
		return 0;
	}
	if (argc > 0)
		return usage_error("unexpected \"%s\"", argv[0]);
	req->msg = dmsc_nl_msg(DMSC_CMD_INFO, 0);
	req->parse = info_parse;
	return req->msg ? 0 : EXIT_FAIL;
}

static void set_usage(FILE *f)
{
	fprintf(f,
		"Usage: dmsc set [flow_limit ENTRIES] [flow_timeout MS]\n"
		"  flow_limit   flows the table tracks, 0..%u (0 = none)\n"
		"  flow_timeout ms of idleness before a flow ages out, %u..%u\n",
		DMSC_FLOW_LIMIT_MAX, DMSC_FLOW_TIMEOUT_MIN,
		DMSC_FLOW_TIMEOUT_MAX);
}

int cmd_set(struct cli *cli, int argc, char **argv, struct request *req)
{
	struct nl_msg *msg;
	uint32_t v;

	(void)cli;
	err_set_command("set", NULL);
	if (argc > 0 && matches(argv[0], "help")) {
		set_usage(stdout);
		return 0;
	}
	if (argc == 0)
		return usage_error("nothing to set");
	msg = dmsc_nl_msg(DMSC_CMD_SET, 0);
	if (!msg)
		return EXIT_FAIL;
	for (; argc > 0; argc -= 2, argv += 2) {
		if (argc < 2) {
			nlmsg_free(msg);
			return usage_error("%s: needs a value", argv[0]);
		}
		if (!strcmp(argv[0], "flow_limit")) {
			if (parse_u32("flow_limit", argv[1], 0,
				      DMSC_FLOW_LIMIT_MAX, &v))
				goto bad;
			nla_put_u32(msg, DMSC_A_FLOW_LIMIT, v);
		} else if (!strcmp(argv[0], "flow_timeout")) {
			if (parse_u32("flow_timeout", argv[1],
				      DMSC_FLOW_TIMEOUT_MIN,
				      DMSC_FLOW_TIMEOUT_MAX, &v))
				goto bad;
			nla_put_u32(msg, DMSC_A_FLOW_TIMEOUT, v);
		} else {
			nlmsg_free(msg);
			return usage_error("unknown setting \"%s\"", argv[0]);
		}
	}
	req->msg = msg;
	return 0;
bad:
	nlmsg_free(msg);
	return EXIT_USAGE;
}
