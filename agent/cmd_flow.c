// SPDX-License-Identifier: GPL-2.0
/* dmsc flow show|flush, and dmsc monitor for events. */
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <linux/dmsc.h>

#include "cmd.h"
#include "output.h"
#include "parse.h"

static void flow_usage(void)
{
	fprintf(stderr,
		"Usage: dmsc [-j] flow show [tunnel ID]\n"
		"       dmsc flow flush\n"
		"A flow is (src, dst, UDP source port, destination QP).\n");
}

static int flow_parse(struct nlattr **top, void *arg)
{
	struct nlattr *tb[DMSC_FLOW_A_MAX + 1];
	char a[INET6_ADDRSTRLEN];
	int family;

	(void)arg;
	if (!top[DMSC_A_FLOW] ||
	    nla_parse_nested(tb, DMSC_FLOW_A_MAX, top[DMSC_A_FLOW], NULL) < 0)
		return 0;
	family = tb[DMSC_FLOW_A_FAMILY] ? nla_get_u8(tb[DMSC_FLOW_A_FAMILY]) :
					  AF_INET6;
	out_open_object(NULL);
	if (tb[DMSC_FLOW_A_SRC])
		out_string("src", "%s", format_addr(family,
			   nla_data(tb[DMSC_FLOW_A_SRC]), a, sizeof(a)));
	if (tb[DMSC_FLOW_A_SPORT])
		out_uint("sport", ":%llu", nla_get_u16(tb[DMSC_FLOW_A_SPORT]));
	if (tb[DMSC_FLOW_A_DST])
		out_string("dst", " > %s", format_addr(family,
			   nla_data(tb[DMSC_FLOW_A_DST]), a, sizeof(a)));
	if (tb[DMSC_FLOW_A_QPN])
		out_uint("qpn", " qpn %llu", nla_get_u32(tb[DMSC_FLOW_A_QPN]));
	if (tb[DMSC_FLOW_A_TUNNEL])
		out_uint("tunnel", " tunnel %llu",
			 nla_get_u32(tb[DMSC_FLOW_A_TUNNEL]));
	if (tb[DMSC_FLOW_A_PATH]) {
		uint32_t p = nla_get_u32(tb[DMSC_FLOW_A_PATH]);

		if (p == DMSC_FLOW_PATH_BACKUP)
			out_string("path", " path %s", "backup");
		else
			out_uint("path", " path %llu", p);
	}
	if (tb[DMSC_FLOW_A_PACKETS])
		out_uint("packets", " packets %llu",
			 nla_get_u64(tb[DMSC_FLOW_A_PACKETS]));
	if (tb[DMSC_FLOW_A_BYTES])
		out_uint("bytes", " bytes %llu",
			 nla_get_u64(tb[DMSC_FLOW_A_BYTES]));
	if (tb[DMSC_FLOW_A_IDLE_MS])
		out_uint("idle_ms", " idle %llums",
			 nla_get_u32(tb[DMSC_FLOW_A_IDLE_MS]));
	out_text("\n");
	out_close_object();
	return 0;
}

static int flow_show(struct cli *cli, int argc, char **argv)
{
	uint32_t tunnel = 0;
	struct nl_msg *msg;

	if (argc == 2 && !strcmp(argv[0], "tunnel")) {
		if (parse_u32("tunnel", argv[1], 1, UINT32_MAX, &tunnel))
			return 1;
	} else if (argc) {
		return usage_error("flow", "show: unexpected \"%s\"", argv[0]);
	}
	if (cli_nl(cli))
		return 1;
	msg = dmsc_nl_msg(&cli->nl, DMSC_CMD_FLOW_GET, NLM_F_DUMP);
	if (!msg)
		return 1;
	if (tunnel) {
		struct nlattr *f = nla_nest_start(msg, DMSC_A_FLOW);

		nla_put_u32(msg, DMSC_FLOW_A_TUNNEL, tunnel);
		nla_nest_end(msg, f);
	}
	return cli_show(cli, msg, flow_parse, "flow show");
}

int cmd_flow(struct cli *cli, int argc, char **argv)
{
	const char *verb = argc ? argv[0] : "show";
	struct nl_msg *msg;

	if (argc) {
		argc--;
		argv++;
	}
	if (matches(verb, "help")) {
		flow_usage();
		return 0;
	}
	if (matches(verb, "show") || matches(verb, "list"))
		return flow_show(cli, argc, argv);
	if (!matches(verb, "flush")) {
		flow_usage();
		return usage_error("flow", "unknown command \"%s\"", verb);
	}
	if (argc)
		return usage_error("flow", "flush: unexpected \"%s\"", argv[0]);
	if (cli_nl(cli))
		return 1;
	msg = dmsc_nl_msg(&cli->nl, DMSC_CMD_FLOW_FLUSH, 0);
	if (!msg)
		return 1;
	return cli_talk(cli, msg, NULL, "flow flush");
}

static const char *const event_names[] = {
	[DMSC_EVENT_TUNNEL_BACKUP] = "tunnel-backup",
	[DMSC_EVENT_TUNNEL_PRIMARY] = "tunnel-primary",
};

struct monitor {
	uint32_t count;		/* stop after this many; 0 = never */
	uint32_t seen;
};

static int event_parse(struct nlattr **top, void *arg)
{
	struct monitor *m = arg;
	uint32_t ev;

	if (!top[DMSC_A_EVENT])
		return 0;
	ev = nla_get_u32(top[DMSC_A_EVENT]);
	/* Each event is its own JSON document, one per line. */
	out_open_object(NULL);
	out_string("event", "%s", ev <= DMSC_EVENT_MAX && event_names[ev] ?
		   event_names[ev] : "unknown");
	if (top[DMSC_A_TUNNEL]) {
		struct nlattr *tb[DMSC_TUNNEL_A_MAX + 1];

		if (!nla_parse_nested(tb, DMSC_TUNNEL_A_MAX,
				      top[DMSC_A_TUNNEL], NULL) &&
		    tb[DMSC_TUNNEL_A_ID])
			out_uint("tunnel", " tunnel %llu",
				 nla_get_u32(tb[DMSC_TUNNEL_A_ID]));
	}
	out_text("\n");
	out_close_object();
	fflush(stdout);
	return m->count && ++m->seen >= m->count ? 1 : 0;
}

int cmd_monitor(struct cli *cli, int argc, char **argv)
{
	struct monitor m = { 0 };
	int err;

	if (argc == 2 && !strcmp(argv[0], "count")) {
		if (parse_u32("count", argv[1], 1, UINT32_MAX, &m.count))
			return 1;
	} else if (argc) {
		fprintf(stderr, "Usage: dmsc [-j] monitor [count N]\n");
		return matches(argv[0], "help") ? 0 : 2;
	}
	if (cli_nl(cli))
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	err = dmsc_nl_listen(&cli->nl, DMSC_CMD_EVENT, event_parse, &m);
	if (err) {
		dmsc_nl_perror(&cli->nl, "monitor", err);
		return 1;
	}
	return 0;
}
