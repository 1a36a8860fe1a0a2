// SPDX-License-Identifier: GPL-2.0
/* dmsc flow show|flush, and dmsc monitor for events. */
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <linux/dmsc.h>

#include "cmd.h"
#include "err.h"
#include "nl_event.h"
#include "output.h"
#include "parse.h"

static void flow_usage(FILE *f)
{
	fprintf(f,
		"Usage: dmsc [-j] flow show [tunnel ID]\n"
		"       dmsc flow flush\n"
		"A flow is (src, dst, UDP source port, destination QP).\n");
}

static int flow_parse(struct nlattr **top, void *arg)
{
	struct nlattr *tb[DMSC_FLOW_A_MAX + 1];
	char a[ADDR_PORT_STRLEN];
	int family;

	(void)arg;
	if (!top[DMSC_A_FLOW] ||
	    nla_parse_nested(tb, DMSC_FLOW_A_MAX, top[DMSC_A_FLOW], NULL) < 0)
		return 0;
	family = tb[DMSC_FLOW_A_FAMILY] ? nla_get_u8(tb[DMSC_FLOW_A_FAMILY]) :
					  AF_INET6;
	out_open_object(NULL);
	/* Text: ADDR:PORT, [ADDR]:PORT for IPv6; JSON: separate keys. */
	if (tb[DMSC_FLOW_A_SRC] && tb[DMSC_FLOW_A_SPORT] && !out_is_json())
		out_text("%s", format_addr_port(family,
			 nla_data(tb[DMSC_FLOW_A_SRC]),
			 nla_get_u16(tb[DMSC_FLOW_A_SPORT]), a, sizeof(a)));
	else if (tb[DMSC_FLOW_A_SRC])
		out_string("src", "%s", format_addr(family,
			   nla_data(tb[DMSC_FLOW_A_SRC]), a, sizeof(a)));
	if (tb[DMSC_FLOW_A_SPORT])
		out_uint("sport", NULL, nla_get_u16(tb[DMSC_FLOW_A_SPORT]));
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

static int flow_show(int argc, char **argv, struct request *req)
{
	uint32_t tunnel = 0;

	if (argc >= 1 && !strcmp(argv[0], "tunnel")) {
		if (argc < 2)
			return usage_error("tunnel: needs a value");
		if (parse_u32("tunnel", argv[1], 1, UINT32_MAX, &tunnel))
			return EXIT_USAGE;
		if (argc > 2)
			return usage_error("unexpected \"%s\"", argv[2]);
	} else if (argc) {
		return usage_error("unexpected \"%s\"", argv[0]);
	}
	req->msg = dmsc_nl_msg(DMSC_CMD_FLOW_GET, NLM_F_DUMP);
	if (!req->msg)
		return EXIT_FAIL;
	if (tunnel) {
		struct nlattr *f = nla_nest_start(req->msg, DMSC_A_FLOW);

		nla_put_u32(req->msg, DMSC_FLOW_A_TUNNEL, tunnel);
		nla_nest_end(req->msg, f);
	}
	req->parse = flow_parse;
	req->array = true;
	return 0;
}

int cmd_flow(struct cli *cli, int argc, char **argv, struct request *req)
{
	const char *verb = argc ? argv[0] : "show";

	(void)cli;
	err_set_command("flow", NULL);
	if (argc) {
		argc--;
		argv++;
	}
	if (matches(verb, "help")) {
		flow_usage(stdout);
		return 0;
	}
	if (matches(verb, "show") || matches(verb, "list")) {
		err_set_command("flow", "show");
		return flow_show(argc, argv, req);
	}
	if (!matches(verb, "flush"))
		return usage_error("unknown command \"%s\"", verb);
	err_set_command("flow", "flush");
	if (argc)
		return usage_error("unexpected \"%s\"", argv[0]);
	req->msg = dmsc_nl_msg(DMSC_CMD_FLOW_FLUSH, 0);
	return req->msg ? 0 : EXIT_FAIL;
}

/* One codec for the monitor and the speaker: lib/nl_event.c. */
static int event_parse(struct nlattr **top, void *arg)
{
	struct request *req = arg;
	struct dmsc_nl_event ev;
	const char *name;
	char why[128];

	if (dmsc_nl_event_decode(top, &ev, why, sizeof(why))) {
		fprintf(stderr, "dmsc: monitor: malformed event skipped: %s\n",
			why);
		return 0;
	}
	name = dmsc_nl_event_name(ev.type);
	/* Each event is its own JSON document, one per line. */
	out_open_object(NULL);
	out_string("event", "%s", name ? name : "unknown");
	/*
	 * A cbfc next hop failure: the session's QP, tunnel, device, wait,
	 * and whether it moved onto its backup reservation; a tunnel's
	 * switch: its id.
	 */
	if (ev.has_qpn)
		out_uint("qpn", " qpn %llu", ev.qpn);
	if (ev.has_tunnel)
		out_uint("tunnel", " tunnel %llu", ev.tunnel);
	if (ev.has_ifindex)
		out_uint("ifindex", " ifindex %llu", ev.ifindex);
	if (ev.has_waited)
		out_uint("waited_us", " waited_us %llu",
			 (unsigned long long)ev.waited_us);
	/* 1: moved onto its backup credit; 0: uncontrolled. */
	if (ev.on_backup >= 0)
		out_uint("on_backup", " on-backup %llu", ev.on_backup);
	out_text("\n");
	out_close_object();
	fflush(stdout);
	return req->count && ++req->seen >= req->count ? 1 : 0;
}

int cmd_monitor(struct cli *cli, int argc, char **argv, struct request *req)
{
	(void)cli;
	err_set_command("monitor", NULL);
	if (argc >= 1 && matches(argv[0], "help")) {
		printf("Usage: dmsc [-j] monitor [count N]\n"
		       "Print the module's events (tunnel-backup, tunnel-primary,\n"
		       "nexthop-failed, nexthop-down) as they come,\n"
		       "until interrupted or until N have come. A next hop's\n"
		       "failure says on-backup 1 when its session moved onto\n"
		       "its backup credit, on-backup 0 when it lost control.\n");
		return 0;
	}
	if (argc >= 1 && !strcmp(argv[0], "count")) {
		if (argc < 2)
			return usage_error("count: needs a value");
		if (parse_u32("count", argv[1], 1, UINT32_MAX, &req->count))
			return EXIT_USAGE;
		if (argc > 2)
			return usage_error("unexpected \"%s\"", argv[2]);
	} else if (argc) {
		return usage_error("unexpected \"%s\"", argv[0]);
	}
	req->listen = true;
	req->parse = event_parse;
	req->arg = req;
	return 0;
}
