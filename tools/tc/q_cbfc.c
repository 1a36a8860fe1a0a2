// SPDX-License-Identifier: GPL-2.0
/*
 * q_cbfc.so: the tc plugin of the cbfc qdisc (kernel/sch_cbfc.c).
 *
 *   tc qdisc add dev DEV root cbfc [limit PKTS] [flow_limit PKTS]
 *       [plain_limit PKTS] [credit BYTES] [quantum BYTES]
 *       [heartbeat TIME] [credit_batch BYTES] [rate RATE]
 *
 * tc loads it from TC_LIB_DIR (default /usr/lib/x86_64-linux-gnu/tc) and
 * looks up cbfc_qdisc_util. Only the options given are sent: a change
 * keeps the others. Each value is checked here against the range the
 * kernel's policy has, so that the error names the option; what depends
 * on the qdisc's other settings (flow_limit <= limit) is the kernel's to
 * refuse, with its extack message.
 */
#include <stdlib.h>
#include <string.h>
#include <linux/dmsc_cbfc.h>

#include "tc_abi.h"

#define CBFC_NLMSG_MAX	1024	/* what tc's plugins give addattr */

static void explain(void)
{
	fprintf(stderr,
		"Usage: ... cbfc [ limit PKTS ] [ flow_limit PKTS ] [ plain_limit PKTS ]\n"
		"                [ credit BYTES ] [ quantum BYTES ] [ heartbeat TIME ]\n"
		"                [ credit_batch BYTES ] [ rate RATE ]\n"
		"  limit, flow_limit, plain_limit 1..%u; credit 0..%u;\n"
		"  quantum %u..%u; heartbeat %ums..%us or 0 (off); credit_batch %u..%u\n",
		CBFC_LIMIT_MAX, CBFC_CREDIT_MAX, CBFC_QUANTUM_MIN,
		CBFC_QUANTUM_MAX, CBFC_HEARTBEAT_MIN / 1000,
		CBFC_HEARTBEAT_MAX / 1000000, CBFC_CREDIT_BATCH_MIN,
		CBFC_CREDIT_BATCH_MAX);
}

struct cbfc_u32_opt {
	const char *name;
	int type;
	__u32 min, max;
};

static const struct cbfc_u32_opt cbfc_u32_opts[] = {
	{ "limit", TCA_CBFC_LIMIT, 1, CBFC_LIMIT_MAX },
	{ "flow_limit", TCA_CBFC_FLOW_LIMIT, 1, CBFC_LIMIT_MAX },
	{ "plain_limit", TCA_CBFC_PLAIN_LIMIT, 1, CBFC_LIMIT_MAX },
	{ "credit", TCA_CBFC_CREDIT, 0, CBFC_CREDIT_MAX },
	{ "quantum", TCA_CBFC_QUANTUM, CBFC_QUANTUM_MIN, CBFC_QUANTUM_MAX },
	{ "credit_batch", TCA_CBFC_CREDIT_BATCH, CBFC_CREDIT_BATCH_MIN,
	  CBFC_CREDIT_BATCH_MAX },
};

static const struct cbfc_u32_opt *cbfc_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(cbfc_u32_opts) / sizeof(cbfc_u32_opts[0]); i++)
		if (!strcmp(name, cbfc_u32_opts[i].name))
			return &cbfc_u32_opts[i];
	return NULL;
}

static int bad(const char *opt, const char *val, const char *why)
{
	fprintf(stderr, "cbfc: bad value \"%s\" for \"%s\"%s%s\n", val, opt,
		why ? ": " : "", why ? why : "");
	return -1;
}

static int cbfc_parse_opt(struct qdisc_util *qu, int argc, char **argv,
			  struct nlmsghdr *n, const char *dev)
{
	unsigned int seen = 0;	/* a bit per attribute type: no repeats */
	struct rtattr *tail;

	(void)qu;
	(void)dev;
	tail = addattr_nest(n, CBFC_NLMSG_MAX, TCA_OPTIONS | NLA_F_NESTED);
	for (; argc > 0; argc -= 2, argv += 2) {
		const struct cbfc_u32_opt *o = cbfc_find(argv[0]);
		char range[64];
		__u32 v;
		int type;

		if (!strcmp(argv[0], "help")) {
			explain();
			return -1;
		}
		if (o)
			type = o->type;
		else if (!strcmp(argv[0], "heartbeat"))
			type = TCA_CBFC_HEARTBEAT;
		else if (!strcmp(argv[0], "rate"))
			type = TCA_CBFC_RATE;
		else {
			fprintf(stderr, "cbfc: unknown option \"%s\"\n",
				argv[0]);
			explain();
			return -1;
		}
		if (argc < 2) {
			fprintf(stderr, "cbfc: \"%s\" needs a value\n",
				argv[0]);
			return -1;
		}
		if (seen & (1U << type)) {
			fprintf(stderr, "cbfc: \"%s\" given twice\n", argv[0]);
			return -1;
		}
		seen |= 1U << type;
		if (type == TCA_CBFC_RATE) {
			__u64 rate;

			if (get_rate64(&rate, argv[1]))
				return bad(argv[0], argv[1],
					   "not a rate (e.g. 10mbit)");
			addattr64(n, CBFC_NLMSG_MAX, type, rate);
			continue;
		}
		if (type == TCA_CBFC_HEARTBEAT) {
			unsigned int us;

			if (get_time(&us, argv[1]))
				return bad(argv[0], argv[1],
					   "not a time (e.g. 10ms)");
			if (us && (us < CBFC_HEARTBEAT_MIN ||
				   us > CBFC_HEARTBEAT_MAX))
				return bad(argv[0], argv[1],
					   "out of range 10ms..60s, or 0 (off)");
			addattr32(n, CBFC_NLMSG_MAX, type, us);
			continue;
		}
		snprintf(range, sizeof(range), "out of range %u..%u",
			 o->min, o->max);
		if (get_u32(&v, argv[1], 0))
			return bad(argv[0], argv[1], "not a number");
		if (v < o->min || v > o->max)
			return bad(argv[0], argv[1], range);
		addattr32(n, CBFC_NLMSG_MAX, type, v);
	}
	addattr_nest_end(n, tail);
	return 0;
}

static __u32 get32(struct rtattr *a)
{
	__u32 v;

	memcpy(&v, RTA_DATA(a), sizeof(v));
	return v;
}

static __u64 get64(struct rtattr *a)
{
	__u64 v;

	memcpy(&v, RTA_DATA(a), sizeof(v));
	return v;
}

static int cbfc_print_opt(struct qdisc_util *qu, FILE *f, struct rtattr *opt)
{
	struct rtattr *tb[TCA_CBFC_MAX + 1];
	char buf[32];
	size_t i;

	(void)qu;
	(void)f;
	if (!opt)
		return 0;
	memset(tb, 0, sizeof(tb));
	parse_rtattr_flags(tb, TCA_CBFC_MAX, RTA_DATA(opt), RTA_PAYLOAD(opt),
			   NLA_F_NESTED);
	for (i = 0; i < sizeof(cbfc_u32_opts) / sizeof(cbfc_u32_opts[0]); i++) {
		const struct cbfc_u32_opt *o = &cbfc_u32_opts[i];
		const char *unit = o->type == TCA_CBFC_LIMIT ||
				   o->type == TCA_CBFC_FLOW_LIMIT ||
				   o->type == TCA_CBFC_PLAIN_LIMIT ? "p" : "b";
		char fmt[40];
		struct rtattr *a = tb[o->type];

		if (!a || RTA_PAYLOAD(a) < sizeof(__u32))
			continue;
		snprintf(fmt, sizeof(fmt), "%s %%u%s ", o->name, unit);
		print_color_uint(PRINT_ANY, COLOR_NONE, o->name, fmt, get32(a));
	}
	if (tb[TCA_CBFC_HEARTBEAT] &&
	    RTA_PAYLOAD(tb[TCA_CBFC_HEARTBEAT]) >= sizeof(__u32)) {
		__u32 us = get32(tb[TCA_CBFC_HEARTBEAT]);

		print_color_uint(PRINT_JSON, COLOR_NONE, "heartbeat", NULL, us);
		if (us % 1000)
			snprintf(buf, sizeof(buf), "%uus", us);
		else
			snprintf(buf, sizeof(buf), "%ums", us / 1000);
		print_color_string(PRINT_FP, COLOR_NONE, NULL, "heartbeat %s ",
				   buf);
	}
	if (tb[TCA_CBFC_RATE] &&
	    RTA_PAYLOAD(tb[TCA_CBFC_RATE]) >= sizeof(__u64)) {
		__u64 rate = get64(tb[TCA_CBFC_RATE]);

		if (rate)
			tc_print_rate(PRINT_ANY, "rate", "rate %s ", rate);
		else
			print_color_u64(PRINT_ANY, COLOR_NONE, "rate",
					"rate unlimited ", 0);
	}
	return 0;
}

static int cbfc_print_xstats(struct qdisc_util *qu, FILE *f,
			     struct rtattr *xstats)
{
	struct tc_cbfc_xstats st;

	(void)qu;
	(void)f;
	if (!xstats)
		return 0;
	/* An older module's shorter struct reads as zeros past its end. */
	memset(&st, 0, sizeof(st));
	memcpy(&st, RTA_DATA(xstats),
	       RTA_PAYLOAD(xstats) < sizeof(st) ? RTA_PAYLOAD(xstats) :
						   sizeof(st));
	print_color_uint(PRINT_ANY, COLOR_NONE, "flows", "  flows %u", st.flows);
	print_color_uint(PRINT_ANY, COLOR_NONE, "stalled_flows",
			 " stalled_flows %u", st.stalled_flows);
	print_color_uint(PRINT_ANY, COLOR_NONE, "plain_qlen", " plain_qlen %u",
			 st.plain_qlen);
	print_color_uint(PRINT_ANY, COLOR_NONE, "idle_flows", " idle_flows %u",
			 st.idle_flows);
	print_color_u64(PRINT_ANY, COLOR_NONE, "backlog_credited",
			" backlog_credited %llub", st.backlog_credited);
	print_nl();
	print_color_u64(PRINT_ANY, COLOR_NONE, "credit_stalls",
			"  credit_stalls %llu", st.credit_stalls);
	print_color_u64(PRINT_ANY, COLOR_NONE, "heartbeat_failures",
			" heartbeat_failures %llu", st.heartbeat_failures);
	print_color_u64(PRINT_ANY, COLOR_NONE, "link_failures",
			" link_failures %llu", st.link_failures);
	print_color_u64(PRINT_ANY, COLOR_NONE, "failovers", " failovers %llu",
			st.failovers);
	print_color_u64(PRINT_ANY, COLOR_NONE, "carrier_holds",
			" carrier_holds %llu", st.carrier_holds);
	print_color_u64(PRINT_ANY, COLOR_NONE, "credited_packets",
			" credited_packets %llu", st.credited_packets);
	print_color_u64(PRINT_ANY, COLOR_NONE, "plain_packets",
			" plain_packets %llu", st.plain_packets);
	print_nl();
	print_color_u64(PRINT_ANY, COLOR_NONE, "drop_limit",
			"  drops: limit %llu", st.drop_limit);
	print_color_u64(PRINT_ANY, COLOR_NONE, "drop_flow_limit",
			" flow_limit %llu", st.drop_flow_limit);
	print_color_u64(PRINT_ANY, COLOR_NONE, "drop_plain_limit",
			" plain_limit %llu", st.drop_plain_limit);
	print_color_u64(PRINT_ANY, COLOR_NONE, "drop_nomem", " nomem %llu",
			st.drop_nomem);
	print_color_u64(PRINT_ANY, COLOR_NONE, "drop_oversize",
			" oversize %llu", st.drop_oversize);
	print_color_u64(PRINT_ANY, COLOR_NONE, "drop_failed", " failed %llu",
			st.drop_failed);
	return 0;
}

struct qdisc_util cbfc_qdisc_util = {
	.id		= "cbfc",
	.parse_qopt	= cbfc_parse_opt,
	.print_qopt	= cbfc_print_opt,
	.print_xstats	= cbfc_print_xstats,
};
