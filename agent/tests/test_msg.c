// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the messages between agents: framing, the strict JSON
 * reader, type 4 (msg_node.c), type 5 (msg.c, json_strict.c, msg_qos.c) and type 1's anti-entropy
 * digest (msg_reg.c). Each refused input
 * is a valid report with one thing changed, and the error must name the
 * field.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msg.h"
#include "json_strict.h"
#include "msg_auth.h"
#include "msg_node.h"
#include "msg_qos.h"
#include "msg_reg.h"
#include "nl_policy.h"
#include "tests/ktap.h"

static char err[256];

static void sample(struct qos_report *r, struct qos_dev *d, struct qos_qp *q)
{
	memset(r, 0, sizeof(*r));
	memset(d, 0, sizeof(*d));
	memset(q, 0, 2 * sizeof(*q));
	r->time_ms = 1764000000123ull;
	r->interval_us = 1000000;
	strcpy(q[0].dev, "e0");
	strcpy(q[0].src, "10.0.1.1");
	strcpy(q[0].dst, "10.0.2.1");
	q[0].sport = 57331;
	q[0].qpn = 0xabcdef;
	q[0].total = (struct qos_counts){ 400, 108800, 4, 7, 4 };
	q[0].iv.d = (struct qos_counts){ 96, 26112, 4, 1, 0 };
	qos_interval_rates(&q[0].iv, r->interval_us);
	strcpy(q[1].dev, "e0");
	q[1].dir = QOS_EGRESS;
	strcpy(q[1].src, "2001:db8:1::1");
	strcpy(q[1].dst, "2001:db8:2::1");
	q[1].sport = 1;
	q[1].qpn = 2;
	q[1].total = (struct qos_counts){ UINT64_MAX, UINT64_MAX, 0, 0, 0 };
	q[1].iv.d = (struct qos_counts){ UINT64_MAX / 2, UINT64_MAX / 2, 0, 0, 0 };
	qos_interval_rates(&q[1].iv, r->interval_us);
	strcpy(d->dev, "e0");
	d->packets = 401;
	d->malformed = 1;
	d->total = q[0].total;
	d->iv = q[0].iv;
	r->devs = d;
	r->ndevs = 1;
	r->qps = q;
	r->nqps = 2;
}

/* The sample's JSON, without the frame header, in a static buffer. */
static const char *sample_json(void)
{
	static char text[4096];
	struct qos_report r;
	struct qos_dev d;
	struct qos_qp q[2];
	struct msg m = { .type = &msg_qos_type, .node = "h2", .seq = 7, .body = &r };
	char *frame;
	size_t len;

	sample(&r, &d, q);
	if (msg_encode(&m, &frame, &len, err, sizeof(err)) ||
	    len - MSG_HDR_LEN >= sizeof(text))
		abort();
	memcpy(text, frame + MSG_HDR_LEN, len - MSG_HDR_LEN);
	text[len - MSG_HDR_LEN] = '\0';
	free(frame);
	return text;
}

/* Decode the sample with its first @from replaced by @to: the error. */
static const char *mutated(const char *from, const char *to)
{
	static char text[8192];
	const char *s = sample_json(), *at = strstr(s, from);
	struct msg m;

	if (!at) {
		snprintf(err, sizeof(err), "(\"%s\" not in the sample)", from);
		return err;
	}
	snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - s), s, to,
		 at + strlen(from));
	err[0] = '\0';
	if (!msg_decode(text, strlen(text), &m, err, sizeof(err))) {
		msg_free(&m);
		return "(accepted)";
	}
	return err;
}

static const char *decode_text(const char *text)
{
	struct msg m;

	err[0] = '\0';
	if (!msg_decode(text, strlen(text), &m, err, sizeof(err))) {
		msg_free(&m);
		return "(accepted)";
	}
	return err;
}

static int starts(const char *s, const char *prefix)
{
	if (strncmp(s, prefix, strlen(prefix))) {
		printf("# got: %s\n# want: %s...\n", s, prefix);
		return 0;
	}
	return 1;
}

static int roundtrip(void)
{
	struct qos_report r, *o;
	struct qos_dev d;
	struct qos_qp q[2];
	struct msg m = { .type = &msg_qos_type, .node = "h2", .seq = 7, .body = &r };
	struct msg back;
	char *frame;
	size_t len, plen;
	int ok;

	sample(&r, &d, q);
	if (msg_encode(&m, &frame, &len, err, sizeof(err)))
		return 0;
	ok = !msg_frame_len((unsigned char *)frame, &plen, err, sizeof(err)) &&
	     plen == len - MSG_HDR_LEN &&
	     !msg_decode(frame + MSG_HDR_LEN, plen, &back, err, sizeof(err));
	free(frame);
	if (!ok) {
		printf("# %s\n", err);
		return 0;
	}
	o = back.body;
	ok = back.type->type == 5 && !strcmp(back.node, "h2") && back.seq == 7 &&
	     o->time_ms == r.time_ms && o->interval_us == r.interval_us &&
	     o->ndevs == 1 && o->nqps == 2 &&
	     !memcmp(&o->devs[0], &d, sizeof(d)) &&
	     !memcmp(&o->qps[0], &q[0], sizeof(q[0])) &&
	     !memcmp(&o->qps[1], &q[1], sizeof(q[1])) &&
	     o->qps[1].total.bytes == UINT64_MAX;
	msg_free(&back);
	return ok;
}


/* --- type 5's tunnel counters (msg_qos.c, nl_policy.c) ------------------ */

/* A dump answer of the module for one tunnel, parsed as the SR parses it. */
static int tunnel_from_kernel(struct qos_tunnel *t)
{
	struct nl_msg *msg = nlmsg_alloc();
	struct nlattr *top[DMSC_A_MAX + 1], *n, *p;
	int ok;

	n = nla_nest_start(msg, DMSC_A_TUNNEL);
	nla_put_u32(msg, DMSC_TUNNEL_A_ID, 7);
	nla_put_u8(msg, DMSC_TUNNEL_A_ACTIVE, DMSC_ACTIVE_BACKUP);
	nla_put_u8(msg, DMSC_TUNNEL_A_ADMIN_UP, 1);
	nla_put_u64(msg, DMSC_TUNNEL_A_PACKETS, 30);
	nla_put_u64(msg, DMSC_TUNNEL_A_BYTES, 30000);
	nla_put_u32(msg, DMSC_TUNNEL_A_FLOWS, 3);
	nla_put_u64(msg, DMSC_TUNNEL_A_SWITCHES, 2);
	for (int i = 0; i < 2; i++) {
		p = nla_nest_start(msg, DMSC_TUNNEL_A_PATH);
		nla_put_u32(msg, DMSC_PATH_A_INDEX, (uint32_t)i);
		nla_put_u64(msg, DMSC_PATH_A_PACKETS, 10u + (unsigned)i);
		nla_put_u64(msg, DMSC_PATH_A_BYTES, 10000u + (unsigned)i);
		nla_put_u32(msg, DMSC_PATH_A_FLOWS, 1);
		nla_nest_end(msg, p);
	}
	p = nla_nest_start(msg, DMSC_TUNNEL_A_BACKUP);
	nla_put_u64(msg, DMSC_PATH_A_PACKETS, 9);
	nla_put_u64(msg, DMSC_PATH_A_BYTES, 9999);
	nla_put_u32(msg, DMSC_PATH_A_FLOWS, 1);
	nla_nest_end(msg, p);
	nla_nest_end(msg, n);
	ok = !nla_parse(top, DMSC_A_MAX, nlmsg_attrdata(nlmsg_hdr(msg), 0),
			nlmsg_attrlen(nlmsg_hdr(msg), 0), NULL) &&
	     dmsc_nl_tunnel_counters_parse(top, t) == 1;
	nlmsg_free(msg);
	return ok;
}

#define TUNNEL_CASES 6
static void tunnel_cases(void)
{
	struct qos_report r, *o;
	struct qos_dev d;
	struct qos_qp q[2];
	struct qos_tunnel t;
	struct msg m = { .type = &msg_qos_type, .node = "h2", .seq = 7, .body = &r };
	struct msg back;
	char *frame, text[8192];
	size_t len;
	int ok;

	ok = tunnel_from_kernel(&t);
	ktap_check(ok && t.id == 7 && t.on_backup && t.up && t.packets == 30 &&
		   t.bytes == 30000 && t.flows == 3 && t.switches == 2 &&
		   t.npaths == 2 && t.paths[1].packets == 11 &&
		   t.paths[1].bytes == 10001 && t.has_backup && t.backup.packets == 9,
		   "type 5: a tunnel's counters read from a dump answer (tunnel, segment lists, backup)");
	sample(&r, &d, q);
	r.has_tunnels = true;
	r.tunnels = &t;
	r.ntunnels = 1;
	r.tunnels_omitted = 4;
	ok = ok && !msg_encode(&m, &frame, &len, err, sizeof(err));
	ok = ok && !msg_decode(frame + MSG_HDR_LEN, len - MSG_HDR_LEN, &back, err,
			       sizeof(err));
	if (ok) {
		memcpy(text, frame + MSG_HDR_LEN, len - MSG_HDR_LEN);
		text[len - MSG_HDR_LEN] = 0;
		free(frame);
		o = back.body;
		ok = o->has_tunnels && o->ntunnels == 1 && o->tunnels_omitted == 4 &&
		     !memcmp(&o->tunnels[0], &t, sizeof(t));
		msg_free(&back);
	} else {
		printf("# %s\n", err);
	}
	ktap_check(ok, "type 5 with tunnels encoded and decoded: every counter");
	{
		/* edits of that report: the error names the field */
		const struct { const char *from, *to, *want, *what; } e[] = {
			{ "\"id\":7", "\"id\":0", "tunnels[0].id: 0 is no tunnel",
			  "type 5: a tunnel id 0 refused" },
			{ "\"active\":\"backup\"", "\"active\":\"both\"",
			  "tunnels[0].active: \"both\" is not primary or backup",
			  "type 5: a tunnel neither on its primary nor its backup" },
			{ "\"paths\":[", "\"paths\":[{\"packets\":1,\"bytes\":1,\"flows\":1,\"drops\":1},",
			  "tunnels[0].paths[0].drops: unknown field",
			  "type 5: an unknown counter of a segment list, by path" },
			{ "\"tunnels_omitted\":4", "\"tunnels_omitted\":-4",
			  "tunnels_omitted: negative", "type 5: tunnels_omitted negative" },
		};

		for (size_t i = 0; i < sizeof(e) / sizeof(*e); i++) {
			char buf[8192];
			const char *at = strstr(text, e[i].from);

			snprintf(buf, sizeof(buf), "%.*s%s%s", at ? (int)(at - text) : 0, text,
				 e[i].to, at ? at + strlen(e[i].from) : "");
			ktap_check(at && starts(decode_text(buf), e[i].want), e[i].what);
		}
	}
}

/* --- type 4, the node state report (msg_node.c) ------------------------- */

#define NODE(load, links, insts) "{\"version\":1,\"type\":4,\"node\":\"n1\",\"seq\":9," \
	"\"time_ms\":1764000000123,\"load\":{" load "},\"links\":[" links "]," \
	"\"instances\":[" insts "]}"
#define LOAD "\"loadavg\":[0.5,0.25,0],\"cpus\":8,\"mem_total_kb\":1000,\"mem_available_kb\":400"
#define LINKS "{\"dev\":\"eth0\",\"oper\":\"up\",\"mtu\":9000,\"speed_mbps\":100000}," \
	"{\"dev\":\"veth1\",\"oper\":\"down\",\"mtu\":1500}"
#define INSTS "{\"id\":\"mi-a1\",\"state\":\"active\",\"registration_rtt_ms\":3}," \
	"{\"id\":\"mi-a2\",\"state\":\"pending\"}"

static int node_roundtrip(void)
{
	struct node_link l[2] = {
		{ "eth0", "up", 9000, true, 100000 }, { "veth1", "down", 1500, false, 0 },
	};
	struct node_inst in[2] = {
		{ .id = "mi-a1", .state = "active", .has_rtt = true, .registration_rtt_ms = 3,
		  .has_probe = true, .probe_sent = 9, .probe_lost = 2, .has_probe_rtt = true,
		  .probe_rtt_us = 250, .probe_srtt_us = NODE_MAX_PROBE_RTT_US },
		{ .id = "mi-a2", .state = "pending", .has_probe = true, .probe_sent = 1 },
	};
	struct node_state s = {
		.time_ms = 1764000000123ull, .loadavg = { 0.5, 0.25, 1e6 }, .cpus = 8,
		.mem_total_kb = UINT64_MAX, .mem_available_kb = 400,
		.links = l, .nlinks = 2, .insts = in, .ninsts = 2,
	};
	struct msg m = { .type = &msg_node_type, .node = "n1", .seq = 9, .body = &s };
	struct msg back;
	struct node_state *o;
	char *frame;
	size_t len;
	int ok;

	if (msg_encode(&m, &frame, &len, err, sizeof(err)))
		return 0;
	ok = !msg_decode(frame + MSG_HDR_LEN, len - MSG_HDR_LEN, &back, err,
			 sizeof(err));
	free(frame);
	if (!ok) {
		printf("# %s\n", err);
		return 0;
	}
	o = back.body;
	ok = back.type->type == MSG_NODE_STATE && back.seq == 9 &&
	     !strcmp(back.node, "n1") && o->time_ms == s.time_ms &&
	     o->loadavg[0] == 0.5 && o->loadavg[1] == 0.25 && o->loadavg[2] == 1e6 &&
	     o->cpus == 8 && o->mem_total_kb == UINT64_MAX &&
	     o->mem_available_kb == 400 && o->nlinks == 2 && o->ninsts == 2 &&
	     o->nlinks == 2 && o->ninsts == 2;
	for (size_t i = 0; ok && i < 2; i++)
		ok = !strcmp(o->links[i].dev, l[i].dev) &&
		     !strcmp(o->links[i].oper, l[i].oper) &&
		     o->links[i].mtu == l[i].mtu &&
		     o->links[i].has_speed == l[i].has_speed &&
		     o->links[i].speed_mbps == l[i].speed_mbps &&
		     !strcmp(o->insts[i].id, in[i].id) &&
		     !strcmp(o->insts[i].state, in[i].state) &&
		     o->insts[i].has_rtt == in[i].has_rtt &&
		     o->insts[i].registration_rtt_ms == in[i].registration_rtt_ms &&
		     o->insts[i].has_probe == in[i].has_probe &&
		     o->insts[i].probe_sent == in[i].probe_sent &&
		     o->insts[i].probe_lost == in[i].probe_lost &&
		     o->insts[i].has_probe_rtt == in[i].has_probe_rtt &&
		     o->insts[i].probe_rtt_us == in[i].probe_rtt_us &&
		     o->insts[i].probe_srtt_us == in[i].probe_srtt_us;
	if (!ok)
		printf("# decoded: %llu %g %g %g %llu %zu %zu\n",
		       (unsigned long long)o->time_ms, o->loadavg[0], o->loadavg[1],
		       o->loadavg[2], (unsigned long long)o->cpus, o->nlinks, o->ninsts);
	msg_free(&back);
	return ok;
}

/* This host, read as the sr role reads it: plausible values. */
static int node_host(void)
{
	struct node_state s = { 0 };
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int lo = 0, ok;

	if (node_state_read_host(&s, err, sizeof(err))) {
		printf("# %s\n", err);
		return 0;
	}
	for (size_t i = 0; i < s.nlinks; i++)
		lo |= !strcmp(s.links[i].dev, "lo") && s.links[i].mtu > 0 &&
		      !s.links[i].has_speed;
	ok = s.cpus == (uint64_t)cpus && s.mem_total_kb > 0 &&
	     s.mem_available_kb <= s.mem_total_kb && s.loadavg[0] >= 0 && lo &&
	     s.time_ms > 1700000000000ull;
	if (!ok)
		printf("# cpus %llu (sysconf %ld) mem %llu/%llu links %zu lo %d\n",
		       (unsigned long long)s.cpus, cpus,
		       (unsigned long long)s.mem_available_kb,
		       (unsigned long long)s.mem_total_kb, s.nlinks, lo);
	node_state_free(&s);
	return ok;
}

#define NODE_CASES 20
static void node_cases(void)
{
	ktap_check(node_roundtrip(), "type 4 encoded and decoded: every field, optional ones absent and present");
	ktap_check(node_host(), "type 4: this host read: cpus is sysconf's, memory available <= total, lo without a speed");
	ktap_check(!strcmp(decode_text(NODE(LOAD, LINKS, INSTS)), "(accepted)"),
		   "type 4: a report of two links and two instances accepted");
	ktap_check(!strcmp(decode_text(NODE(LOAD, "", "")), "(accepted)"),
		   "type 4: no links, no instances accepted");
	ktap_check(starts(decode_text(NODE(LOAD ",\"gpus\":1", LINKS, INSTS)),
			  "load.gpus: unknown field"), "type 4: an unknown key in load, by path");
	ktap_check(starts(decode_text(NODE("\"loadavg\":[0.5,0.25],\"cpus\":8,\"mem_total_kb\":1,\"mem_available_kb\":0",
					   LINKS, INSTS)),
			  "load.loadavg: expected 3 numbers"), "type 4: two load averages");
	ktap_check(starts(decode_text(NODE("\"loadavg\":[0.5,-1,0],\"cpus\":8,\"mem_total_kb\":1,\"mem_available_kb\":0",
					   LINKS, INSTS)),
			  "load.loadavg[1]: -1 is outside 0..1e+06"), "type 4: a negative load average");
	ktap_check(starts(decode_text(NODE("\"loadavg\":[0,0,0],\"cpus\":0,\"mem_total_kb\":1,\"mem_available_kb\":0",
					   LINKS, INSTS)),
			  "load.cpus: 0"), "type 4: no CPU");
	ktap_check(starts(decode_text(NODE("\"loadavg\":[0,0,0],\"cpus\":1,\"mem_total_kb\":1,\"mem_available_kb\":2",
					   LINKS, INSTS)),
			  "load.mem_available_kb: 2 is above mem_total_kb 1"), "type 4: more memory available than there is");
	ktap_check(starts(decode_text(NODE(LOAD, "{\"dev\":\"eth0\",\"oper\":\"sideways\",\"mtu\":1}", "")),
			  "links[0].oper: \"sideways\" is not an operstate"), "type 4: a link's operstate unknown");
	ktap_check(starts(decode_text(NODE(LOAD, "{\"dev\":\"eth0\",\"oper\":\"up\",\"mtu\":1,\"speed_mbps\":0}", "")),
			  "links[0].speed_mbps: 0"), "type 4: a speed of 0 (absent when unknown)");
	ktap_check(starts(decode_text(NODE(LOAD, LINKS ",{\"dev\":\"eth0\",\"oper\":\"up\",\"mtu\":1}", "")),
			  "links[2].dev: \"eth0\" is named twice"), "type 4: one link twice");
	ktap_check(starts(decode_text(NODE(LOAD, "{\"dev\":\"a-name-too-long-x\",\"oper\":\"up\",\"mtu\":1}", "")),
			  "links[0].dev: must be 1..15 bytes"), "type 4: a link name above IF_NAMESIZE");
	ktap_check(starts(decode_text(NODE(LOAD, LINKS, "{\"id\":\"mi-a1\",\"state\":\"gone\"}")),
			  "instances[0].state: \"gone\" is not pending, active or faulted"),
		   "type 4: an instance's state unknown");
	ktap_check(starts(decode_text(NODE(LOAD, LINKS, INSTS ",{\"id\":\"mi-a1\",\"state\":\"active\",\"registration_rtt_ms\":3600001}")),
			  "instances[2].registration_rtt_ms: 3600001 is above 3600000"),
		   "type 4: a registration round trip above an hour");
	ktap_check(starts(decode_text(NODE(LOAD, LINKS, "{\"id\":\"mi-a1\",\"state\":\"active\",\"probe\":{\"sent\":1,\"lost\":2}}")),
			  "instances[0].probe.lost: 2 is above sent 1"),
		   "type 4: a probe with more lost than sent");
	ktap_check(starts(decode_text(NODE(LOAD, LINKS, "{\"id\":\"mi-a1\",\"state\":\"active\",\"probe\":{\"sent\":1,\"lost\":0,\"rtt_us\":5}}")),
			  "instances[0].probe.srtt_us: missing"),
		   "type 4: a probe's round trip without the smoothed one");
	ktap_check(starts(decode_text(NODE(LOAD, LINKS, "{\"id\":\"mi-a1\",\"state\":\"active\",\"probe\":{\"sent\":1,\"lost\":0,\"rtt_us\":3600000001,\"srtt_us\":1}}")),
			  "instances[0].probe.rtt_us: 3600000001 is above 3600000000"),
		   "type 4: a probe's round trip above an hour");
	ktap_check(starts(decode_text(NODE(LOAD, LINKS, "{\"id\":\"mi-a1\",\"state\":\"active\",\"probe\":{\"sent\":1,\"lost\":0,\"jitter\":1}}")),
			  "instances[0].probe.jitter: unknown field"),
		   "type 4: an unknown key in a probe");
	{
		/* at the cap: 257 links */
		static char text[NODE_MAX_LEN];
		size_t n = 0;

		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "{\"version\":1,\"type\":4,\"node\":\"n1\",\"seq\":9,\"time_ms\":1,\"load\":{"
				      LOAD "},\"instances\":[],\"links\":[");
		for (int i = 0; i <= NODE_MAX_LINKS; i++)
			n += (size_t)snprintf(text + n, sizeof(text) - n,
					      "%s{\"dev\":\"e%d\",\"oper\":\"up\",\"mtu\":1}",
					      i ? "," : "", i);
		snprintf(text + n, sizeof(text) - n, "]}");
		ktap_check(starts(decode_text(text), "links: more than 256 elements"),
			   "type 4: more links than a report carries");
	}
}
#undef NODE
#undef LOAD
#undef LINKS
#undef INSTS

/* --- type 1 "digest" and the table digest (msg_reg.c) -------------------- */

#define DG "c285aeb01bd66a64524103b83be06e93b51d727c406108906626ea56f3c5ab34"
#define DIGEST(x) "{\"version\":1,\"type\":1,\"node\":\"pe1\",\"seq\":3,\"op\":\"digest\"" x "}"

static void digest_cases(void)
{
	struct msg_instance t[3] = {
		{ "mi-b1", "pe2", "fc00:2::b1", "fc00:b1::/64", "cpu", 4294967295u,
		  "faulted", 100 },
		{ "mi-a1", "pe1", "fc00:1::a1", "fc00:a1::/64", "gpu", 100, "active",
		  3000 },
	};
	char a[MSG_DIGEST_HEX], b[MSG_DIGEST_HEX], c[MSG_DIGEST_HEX], *frame;
	struct msg_reg g = { .op = REG_DIGEST, .rev = 42 };
	struct msg m = { .type = &msg_reg_type, .node = "pe1", .seq = 3, .body = &g };
	struct msg back;
	size_t len;
	int ok;

	/*
	 * The value computed apart (Python's hashlib over the canonical
	 * encoding of registry.md), whatever the order of the table.
	 */
	ok = !msg_routes_digest(t, 2, a) && !strcmp(a, DG);
	t[2] = t[0];
	ok = ok && !msg_routes_digest(t + 1, 2, b) && !strcmp(a, b);
	ktap_check(ok, "digest: SHA-256 of the entries sorted by id, the value computed apart, any order");
	if (!ok)
		printf("# %s\n# %s\n", a, b);
	ok = !msg_routes_digest(t, 0, c) &&
	     !strcmp(c, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	t[1].ttl_ms = 3001;
	ok = ok && !msg_routes_digest(t, 2, b) && strcmp(a, b);
	t[1].ttl_ms = 3000;
	strcpy(t[1].sid, "fc00:1::a2");
	ok = ok && !msg_routes_digest(t, 2, c) && strcmp(a, c) && strcmp(b, c);
	/* a field's end is part of it: "ab"+"c" is not "a"+"bc" */
	strcpy(t[1].sid, "fc00:1::a1");
	strcpy(t[1].node, "pe1f");
	strcpy(t[1].sid, "c00:1::a1");
	ok = ok && !msg_routes_digest(t, 2, c) && strcmp(a, c);
	ktap_check(ok, "digest: the empty table is SHA-256 of nothing; a changed ttl, sid or field boundary changes it");

	memcpy(g.sha256, DG, sizeof(DG));
	ok = !msg_encode(&m, &frame, &len, err, sizeof(err)) &&
	     !msg_decode(frame + MSG_HDR_LEN, len - MSG_HDR_LEN, &back, err, sizeof(err));
	ok = ok && ((struct msg_reg *)back.body)->op == REG_DIGEST &&
	     ((struct msg_reg *)back.body)->rev == 42 &&
	     !strcmp(((struct msg_reg *)back.body)->sha256, DG) &&
	     strstr(frame + MSG_HDR_LEN, "\"op\":\"digest\",\"rev\":42,\"sha256\":\"" DG "\"");
	if (ok)
		msg_free(&back);
	free(ok ? frame : NULL);
	ktap_check(ok, "type 1 digest: encoded as {op, rev, sha256} and decoded back");
	ktap_check(starts(decode_text(DIGEST(",\"rev\":1")), "sha256: required") &&
		   starts(decode_text(DIGEST(",\"sha256\":\"" DG "\"")), "rev: required"),
		   "type 1 digest: rev and sha256 required");
	ktap_check(starts(decode_text(DIGEST(",\"rev\":1,\"sha256\":\"" DG "0\"")),
			  "sha256: must be 1..64 bytes") &&
		   starts(decode_text(DIGEST(",\"rev\":1,\"sha256\":\"C285aeb01bd66a64524103b83be06e93b51d727c406108906626ea56f3c5ab34\"")),
			  "sha256: expected 64 lowercase hex digits") &&
		   starts(decode_text(DIGEST(",\"rev\":1,\"sha256\":\"c285\"")),
			  "sha256: expected 64 lowercase hex digits") &&
		   starts(decode_text(DIGEST(",\"rev\":-1,\"sha256\":\"" DG "\"")), "rev: negative"),
		   "type 1 digest: a sha256 of 65 or 4 digits, one in capitals, a negative rev refused");
	ktap_check(starts(decode_text(DIGEST(",\"rev\":1,\"sha256\":\"" DG "\",\"since\":1")),
			  "since: not a field of op digest") &&
		   starts(decode_text("{\"version\":1,\"type\":1,\"node\":\"pe1\",\"seq\":3,"
				      "\"op\":\"sync\",\"since\":1,\"rev\":1}"),
			  "rev: not a field of op sync") &&
		   starts(decode_text("{\"version\":1,\"type\":1,\"node\":\"pe1\",\"seq\":3,"
				      "\"op\":\"renew\",\"id\":\"x\",\"sha256\":\"" DG "\"}"),
			  "sha256: not a field of op renew"),
		   "type 1: since with digest, rev with sync, sha256 with renew refused");
}

/* --- type 3, service access authentication (msg_auth.c) ------------------ */

#define AUTH(x) "{\"version\":1,\"type\":3,\"node\":\"n1\",\"seq\":4," x "}"
#define JTI "00112233445566778899aabbccddeeff"
/* type 6's optional term: a round trip, absent as 0, 0 and non-numbers refused */
#define TERM_CASES 4
static void term_cases(void)
{
	struct msg_policy mp = { .rev = 3, .full = false, .term = 42 };
	struct msg m = { .type = &msg_policy_type, .node = "c", .seq = 1, .body = &mp };
	struct msg back;
	char *frame = NULL, *text;
	size_t len;
	int ok;

	ok = !msg_encode(&m, &frame, &len, err, sizeof(err)) &&
	     !msg_decode(frame + MSG_HDR_LEN, len - MSG_HDR_LEN, &back, err, sizeof(err));
	if (ok) {
		const struct msg_policy *b = back.body;

		ok = b->term == 42 && b->rev == 3 && !b->full && b->n == 0;
		msg_free(&back);
	}
	free(frame);
	text = NULL;
	if (!msg_encode(&m, &frame, &len, err, sizeof(err))) {
		text = strndup(frame + MSG_HDR_LEN, len - MSG_HDR_LEN);
		free(frame);
	}
	ok = ok && text && strstr(text, "\"term\":42");
	free(text);
	ktap_check(ok, "type 6: a term encoded and decoded (42)");
	mp.term = 0;
	frame = text = NULL;
	ok = !msg_encode(&m, &frame, &len, err, sizeof(err)) &&
	     (text = strndup(frame + MSG_HDR_LEN, len - MSG_HDR_LEN)) &&
	     !strstr(text, "term") &&
	     !msg_decode(frame + MSG_HDR_LEN, len - MSG_HDR_LEN, &back, err, sizeof(err));
	if (ok) {
		ok = ((struct msg_policy *)back.body)->term == 0;
		msg_free(&back);
	}
	free(text);
	free(frame);
	ktap_check(ok, "type 6: no term (one controller): none sent, decoded as 0");
#define T(x) "{\"version\":1,\"type\":6,\"node\":\"c\",\"seq\":1,\"rev\":2,\"full\":true," \
	x "\"policies\":[]}"
	text = T("\"term\":0,");
	ktap_check(starts(decode_text(text), "term: 0 is no term (leave it out)"),
		   "type 6: term 0 refused");
	ktap_check(starts(decode_text(T("\"term\":-3,")), "term: negative") &&
		   starts(decode_text(T("\"term\":\"7\",")), "term: expected an unsigned integer") &&
		   starts(decode_text(T("\"term\":1,\"term\":2,")), "duplicate key \"term\""),
		   "type 6: a negative term, a term as a string, a term twice refused");
#undef T
}

/*
 * type 6's optional epoch (the term's etcd cluster_id): a round trip of
 * one above INT64_MAX, none sent without a term, and refused at 0,
 * without a term, negative, as a string, twice.
 */
#define EPOCH_CASES 3
static void epoch_cases(void)
{
	struct msg_policy mp = { .rev = 3, .term = 42, .epoch = 0xcafe0000deadbeefull };
	struct msg m = { .type = &msg_policy_type, .node = "c", .seq = 1, .body = &mp };
	struct msg back;
	char *frame = NULL, *text = NULL;
	size_t len;
	int ok;

	ok = !msg_encode(&m, &frame, &len, err, sizeof(err)) &&
	     (text = strndup(frame + MSG_HDR_LEN, len - MSG_HDR_LEN)) &&
	     strstr(text, "\"epoch\":14627128643481878255") &&
	     !msg_decode(frame + MSG_HDR_LEN, len - MSG_HDR_LEN, &back, err, sizeof(err));
	if (ok) {
		const struct msg_policy *b = back.body;

		ok = b->epoch == 0xcafe0000deadbeefull && b->term == 42;
		msg_free(&back);
	}
	free(text);
	free(frame);
	ktap_check(ok, "type 6: an epoch above INT64_MAX encoded and decoded with its term");
	mp.term = 0;
	frame = text = NULL;
	ok = !msg_encode(&m, &frame, &len, err, sizeof(err)) &&
	     (text = strndup(frame + MSG_HDR_LEN, len - MSG_HDR_LEN)) &&
	     !strstr(text, "epoch");
	free(text);
	free(frame);
	ktap_check(ok, "type 6: no term: no epoch sent");
#define T(x) "{\"version\":1,\"type\":6,\"node\":\"c\",\"seq\":1,\"rev\":2,\"full\":true," \
	x "\"policies\":[]}"
	ktap_check(starts(decode_text(T("\"term\":5,\"epoch\":0,")), "epoch: 0 is no epoch (leave it out)") &&
		   starts(decode_text(T("\"epoch\":7,")), "epoch: only with a term") &&
		   starts(decode_text(T("\"term\":5,\"epoch\":-1,")), "epoch: negative") &&
		   starts(decode_text(T("\"term\":5,\"epoch\":\"7\",")), "epoch: expected an unsigned integer") &&
		   starts(decode_text(T("\"term\":5,\"epoch\":1,\"epoch\":2,")), "duplicate key \"epoch\""),
		   "type 6: an epoch of 0, without a term, negative, as a string, twice refused");
#undef T
}

#define AUTH_CASES 16
static void auth_cases(void)
{
	struct auth_revoked rv[2] = { { JTI, 1764000600 },
				      { "ffeeddccbbaa99887766554433221100", 1 } };
	struct msg_auth a = { .op = AUTH_REVOKED, .revoked = rv, .nrevoked = 2 };
	struct msg m = { .type = &msg_auth_type, .node = "ctl", .seq = 9, .body = &a };
	struct msg back;
	struct msg_auth *b;
	char *frame;
	size_t len;
	int ok;

	ok = !msg_encode(&m, &frame, &len, err, sizeof(err)) &&
	     !msg_decode(frame + MSG_HDR_LEN, len - MSG_HDR_LEN, &back, err, sizeof(err));
	b = ok ? back.body : NULL;
	ok = ok && back.type == &msg_auth_type && b->op == AUTH_REVOKED &&
	     b->nrevoked == 2 && !strcmp(b->revoked[1].jti, rv[1].jti) &&
	     b->revoked[0].exp == 1764000600 && back.seq == 9;
	if (b)
		msg_free(&back);
	free(frame);
	ktap_check(ok, "type 3: a revoked list encoded and decoded");

	memset(&a, 0, sizeof(a));
	a.op = AUTH_REQUEST;
	strcpy(a.sub, "mi-a1");
	strcpy(a.scope, "2001:db8:100::/48");
	a.lifetime_s = 300;
	ok = !msg_encode(&m, &frame, &len, err, sizeof(err)) &&
	     !msg_decode(frame + MSG_HDR_LEN, len - MSG_HDR_LEN, &back, err, sizeof(err));
	b = ok ? back.body : NULL;
	ok = ok && b->op == AUTH_REQUEST && !strcmp(b->sub, "mi-a1") &&
	     !strcmp(b->scope, a.scope) && b->lifetime_s == 300;
	if (b)
		msg_free(&back);
	free(frame);
	ktap_check(ok, "type 3: a request encoded and decoded");

	ktap_check(!strcmp(decode_text(AUTH("\"op\":\"token\",\"re\":3,\"token\":\"a.b.c\"")),
			   "(accepted)") &&
		   !strcmp(decode_text(AUTH("\"op\":\"denied\",\"re\":3,\"reason\":\"no grant\"")),
			   "(accepted)") &&
		   !strcmp(decode_text(AUTH("\"op\":\"revoked\",\"revoked\":[]")), "(accepted)"),
		   "type 3: token, denied and an empty revoked list accepted");
	ktap_check(starts(decode_text(AUTH("\"op\":\"grant\"")),
			  "op: \"grant\" is not request, token, denied or revoked"),
		   "type 3: an unknown op refused");
	ktap_check(starts(decode_text(AUTH("\"op\":\"request\",\"sub\":\"a\",\"scope\":\"*\","
					   "\"lifetime_s\":1,\"token\":\"x\"")),
			  "token: not a field of op request"), "type 3: a token in a request refused");
	ktap_check(starts(decode_text(AUTH("\"op\":\"request\",\"sub\":\"a\",\"scope\":\"*\","
					   "\"lifetime_s\":3601")),
			  "lifetime_s: 3601 is above 3600"), "type 3: a lifetime above an hour refused");
	ktap_check(starts(decode_text(AUTH("\"op\":\"request\",\"sub\":\"a\",\"scope\":\"*\","
					   "\"lifetime_s\":0")),
			  "lifetime_s: must be 1..3600"), "type 3: a lifetime of 0 refused");
	ktap_check(starts(decode_text(AUTH("\"op\":\"request\",\"sub\":\"a b\",\"scope\":\"*\","
					   "\"lifetime_s\":1")),
			  "sub: not printable ASCII without spaces"), "type 3: a subject with a space refused");
	ktap_check(starts(decode_text(AUTH("\"op\":\"request\",\"sub\":\"a\",\"lifetime_s\":1")),
			  "scope: required"), "type 3: a request without scope refused");
	ktap_check(starts(decode_text(AUTH("\"op\":\"token\",\"re\":-1,\"token\":\"a.b.c\"")),
			  "re: negative"), "type 3: a negative re refused");
	ktap_check(starts(decode_text(AUTH("\"op\":\"revoked\",\"revoked\":[{\"jti\":\"" JTI "\","
					   "\"exp\":1},{\"jti\":\"" JTI "\",\"exp\":2}]")),
			  "revoked[1].jti: " JTI " given twice"), "type 3: a jti revoked twice refused");
	ktap_check(starts(decode_text(AUTH("\"op\":\"revoked\",\"revoked\":[{\"jti\":\"00112233\","
					   "\"exp\":1}]")),
			  "revoked[0].jti: not 32 lowercase hex digits"), "type 3: a short jti refused");
	ktap_check(starts(decode_text(AUTH("\"op\":\"revoked\",\"revoked\":[{\"jti\":\"" JTI "\","
					   "\"exp\":1,\"why\":\"x\"}]")),
			  "revoked[0].why: unknown field"), "type 3: an unknown key in a revoked entry refused");
	ktap_check(starts(decode_text(AUTH("\"op\":\"revoked\",\"revoked\":[{\"jti\":\"" JTI "\","
					   "\"exp\":253402300800}]")),
			  "revoked[0].exp: 253402300800 is above"), "type 3: an exp past year 9999 refused");
	{
		/* the longest list the AAM keeps fits the type's cap */
		struct auth_revoked *all = calloc(AUTH_REVOKED_MAX, sizeof(*all));

		for (int i = 0; i < AUTH_REVOKED_MAX; i++) {
			snprintf(all[i].jti, sizeof(all[i].jti), "%032x", i);
			all[i].exp = 253402300799LL;
		}
		memset(&a, 0, sizeof(a));
		a.op = AUTH_REVOKED;
		a.revoked = all;
		a.nrevoked = AUTH_REVOKED_MAX;
		ok = !msg_encode(&m, &frame, &len, err, sizeof(err)) &&
		     !msg_decode(frame + MSG_HDR_LEN, len - MSG_HDR_LEN, &back, err, sizeof(err));
		if (ok) {
			ok = ((struct msg_auth *)back.body)->nrevoked == AUTH_REVOKED_MAX;
			msg_free(&back);
			free(frame);
		}
		free(all);
		ktap_check(ok, "type 3: a revoked list of 4096 jtis, exp in year 9999, fits its cap");
	}
	{
		static const char head[] = "{\"version\":1,\"type\":3,\"node\":\"n1\","
			"\"seq\":4,\"op\":\"revoked\",\"revoked\":[]";
		char *big = malloc(AUTH_MAX_LEN + 256);

		len = strlen(head);
		memcpy(big, head, len);
		memset(big + len, ' ', AUTH_MAX_LEN);
		strcpy(big + len + AUTH_MAX_LEN, "}");
		ktap_check(strstr(decode_text(big), "more than 262144"),
			   "type 3: a frame above its cap refused");
		free(big);
	}
}
#undef AUTH
#undef JTI

int main(void)
{
	unsigned char hdr[4];
	size_t len;
	char deep[64], *big;
	struct qos_report r;
	struct qos_dev d;
	struct qos_qp q[2];

	ktap_plan(51 + NODE_CASES + TUNNEL_CASES + AUTH_CASES + TERM_CASES + EPOCH_CASES);
	ktap_check(roundtrip(), "type 5 encoded and decoded: every field, 2^64-1 counters");
	ktap_check(!strcmp(mutated("\"seq\":7", "\"seq\":7"), "(accepted)"),
		   "the sample is accepted as it is");
	sample(&r, &d, q);
	ktap_check(q[0].iv.throughput_bps == 208896 &&
		   q[0].iv.loss_rate == 4.0 / 100,
		   "throughput = bytes * 8 / interval, loss = lost / (packets + lost)");
	memcpy(hdr, "\x00\x00\x01\x02", 4);
	ktap_check(!msg_frame_len(hdr, &len, err, sizeof(err)) && len == 258,
		   "frame length is 4 bytes big-endian");
	memcpy(hdr, "\x00\x40\x00\x01", 4);
	ktap_check(msg_frame_len(hdr, &len, err, sizeof(err)) &&
		   starts(err, "frame length 4194305 is outside 1..4194304"),
		   "frame above the size cap refused before it is read");
	memcpy(hdr, "\x00\x00\x00\x00", 4);
	ktap_check(msg_frame_len(hdr, &len, err, sizeof(err)), "empty frame refused");
	big = malloc(MSG_MAX_LEN + 2);
	memset(big, ' ', MSG_MAX_LEN + 1);
	big[MSG_MAX_LEN + 1] = '\0';
	ktap_check(starts(decode_text(big), "4194305 bytes, more than 4194304"),
		   "payload above the size cap refused");
	free(big);
	ktap_check(starts(mutated("\"seq\":7", "\"seq\":7,\"bogus\":1"),
			  "bogus: unknown field"), "unknown key at the top named");
	ktap_check(starts(mutated("\"duplicates\":4}", "\"duplicates\":4,\"jitter\":1}"),
			  "devices[0].total.jitter: unknown field"),
		   "unknown key in a device's total named with its path");
	ktap_check(starts(mutated("\"seq\":7", "\"seq\":7,\"seq\":8"),
			  "duplicate key \"seq\" (at byte 0)"), "duplicate key at the top");
	ktap_check(starts(mutated("\"packets\":400,", "\"packets\":400,\"packets\":400,"),
			  "devices[0].total: duplicate key \"packets\""),
		   "duplicate key deep down, named with its path");
	ktap_check(starts(mutated("\"packets\":400,", "\"packets\":-400,"),
			  "devices[0].total.packets: negative"), "negative counter");
	ktap_check(starts(mutated("\"loss_rate\":0.04", "\"loss_rate\":NaN"),
			  "devices[0].interval.loss_rate: NaN is not a JSON number"), "NaN");
	/* the sample's 0.04 is 0.04000...01: the mutation is 1e999000...01 */
	ktap_check(starts(mutated("\"loss_rate\":0.04", "\"loss_rate\":1e999"),
			  "devices[0].interval.loss_rate: 1e999") &&
		   strstr(err, " is out of range (numbers must be finite)"),
		   "a number that is not finite");
	ktap_check(starts(mutated("\"packets\":400,", "\"packets\":18446744073709551616,"),
			  "devices[0].total.packets: integer out of range"),
		   "an integer above 2^64-1");
	ktap_check(starts(mutated("\"packets\":400,", "\"packets\":400.0,"),
			  "devices[0].total.packets: expected an unsigned integer"),
		   "a counter with a fraction");
	ktap_check(starts(mutated("\"packets\":400,", "\"packets\":0400,"),
			  "devices[0].total.packets: bad number"), "leading zero");
	ktap_check(starts(mutated("\"version\":1", "\"version\":2"),
			  "version: 2, this agent speaks 1"), "unknown version");
	ktap_check(starts(mutated("\"type\":5", "\"type\":9"),
			  "type: 9 is not a message type"), "a type no one reads");
	ktap_check(starts(mutated("\"seq\":7,", ""), "seq: required"), "missing header key");
	ktap_check(starts(mutated("\"sport\":57331", "\"sport\":65536"),
			  "qps[0].sport: 65536 is above 65535"), "port out of range");
	ktap_check(starts(mutated("\"10.0.2.1\"", "\"10.0.2.x\""),
			  "qps[0].dst: \"10.0.2.x\" is not an IPv4 or IPv6 address"),
		   "bad address");
	ktap_check(starts(mutated("\"direction\":\"ingress\"", "\"direction\":\"sideways\""),
			  "devices[0].direction: \"sideways\""), "bad direction");
	ktap_check(starts(mutated("\"interval\":{\"packets\":96", "\"interval\":{\"packets\":401"),
			  "devices[0].interval.packets: 401 is above the total 400"),
		   "an interval's change above its total");
	ktap_check(starts(mutated("\"throughput_bps\":208896", "\"throughput_bps\":208897"),
			  "devices[0].interval.throughput_bps: 208897, the bytes over interval_us make 208896"),
		   "a throughput that is not the interval's bytes");
	ktap_check(starts(mutated("\"node\":\"h2\"", "\"node\":\"h\\u0000\""),
			  "node: NUL in a string"), "NUL in a string");
	ktap_check(starts(mutated("\"node\":\"h2\"", "\"node\":\"h\xc3\x28\""),
			  "node: invalid UTF-8"), "invalid UTF-8");
	ktap_check(starts(mutated("\"node\":\"h2\"", "\"node\":\"\\ud800x\""),
			  "node: lone high surrogate"), "lone surrogate");
	ktap_check(starts(mutated("\"node\":\"h2\"", "\"node\":null"),
			  "node: null is not a value"), "null");
	ktap_check(starts(mutated("\"qps_omitted\":0}", "\"qps_omitted\":0} x"),
			  "text after the end of the document"), "trailing characters");
	memset(deep, '[', 17);
	memset(deep + 17, ']', 17);
	deep[34] = '\0';
	ktap_check(starts(decode_text(deep), "[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]: nested deeper than 16"),
		   "nesting capped");
	ktap_check(starts(decode_text("{\"version\":1,\"type\":5,\"node\":\"a\",\"seq\":1,\"time_ms\":1,"
				      "\"interval_us\":1,\"qps_omitted\":0,\"devices\":[],\"qps\":[7]}"),
			  "qps[0]: expected an object"), "a QP that is not an object");
	/* type 6: policies, strictly */
#define POL(x) "{\"version\":1,\"type\":6,\"node\":\"c\",\"seq\":1,\"rev\":2,\"full\":true," \
	"\"policies\":[{\"name\":\"p\",\"node\":\"n1\",\"tunnel\":7,\"src\":\"fc00::1\"," \
	"\"paths\":[{\"segs\":[\"fc00::2\"],\"weight\":2}]" x "}]}"
	ktap_check(!strcmp(decode_text(POL(",\"rules\":[{\"dst\":\"10.1.0.0/16\",\"qpn\":\"16-31\"}]")),
			   "(accepted)"), "type 6: a policy with a rule accepted");
	ktap_check(starts(decode_text(POL(",\"rules\":[{\"dst\":\"10.1.0.1/16\"}]")),
			  "policies[0].rules[0].dst: host bits set past the length in \"10.1.0.1/16\""),
		   "type 6: host bits in a rule's dst refused, by path");
	ktap_check(starts(decode_text(POL(",\"backup\":[\"10.0.0.1\"]")),
			  "policies[0].backup[0]: not an IPv6 address"), "type 6: a backup SID that is not IPv6");
	ktap_check(starts(decode_text(POL(",\"colour\":1")),
			  "policies[0].colour: unknown field"), "type 6: an unknown key in a policy");
	ktap_check(starts(decode_text(POL(",\"rules\":[{\"dst\":\"10.1.0.0/16\",\"qpn\":\"31-16\"}]")),
			  "policies[0].rules[0].qpn: not N or LO-HI"), "type 6: a qpn range upside down");
	/* credit flows: set up hop by hop by the node's speaker */
#define CR(x) POL(",\"credit\":[{\"src\":\"10.1.0.1\",\"dst\":\"10.2.0.1\",\"sport\":49152," \
	"\"qpn\":256,\"path\":[\"fc00:a::2\",\"fc00:a::4\"]" x "}]")
	ktap_check(!strcmp(decode_text(CR(",\"backup\":[\"fc00:a::3\",\"fc00:a::4\"]")), "(accepted)"),
		   "type 6: a credit flow with a primary and a backup list accepted");
	ktap_check(starts(decode_text(CR(",\"backup\":[]")),
			  "policies[0].credit[0].backup: 1..17 hops"), "type 6: an empty backup list refused");
	ktap_check(starts(decode_text(POL(",\"credit\":[{\"src\":\"10.1.0.1\",\"dst\":\"fc00::9\","
					  "\"sport\":1,\"qpn\":2,\"path\":[\"fc00:a::2\"]}]")),
			  "policies[0].credit[0].dst: not of src's family"), "type 6: a credit flow of two families");
	ktap_check(starts(decode_text(CR(",\"path\":[\"fc00:a::2\"]")),
			  "policies[0].credit[0]: duplicate key \"path\""),
		   "type 6: a credit flow's path given twice");
	ktap_check(starts(decode_text(POL(",\"credit\":[{\"src\":\"10.1.0.1\",\"dst\":\"10.2.0.1\","
					  "\"sport\":1,\"qpn\":16777216,\"path\":[\"fc00:a::2\"]}]")),
			  "policies[0].credit[0].qpn: "), "type 6: a credit flow's QPN past 24 bits");
	ktap_check(starts(decode_text(CR(",\"hops\":1")),
			  "policies[0].credit[0].hops: unknown field"), "type 6: an unknown key in a credit flow");
	ktap_check(starts(decode_text(POL(",\"credit\":[{\"src\":\"10.1.0.1\",\"dst\":\"10.2.0.1\","
					  "\"sport\":1,\"qpn\":2,\"path\":[\"a::1\"]},"
					  "{\"src\":\"10.1.0.1\",\"dst\":\"10.2.0.1\","
					  "\"sport\":1,\"qpn\":2,\"path\":[\"a::2\"]}]")),
			  "policies[0].credit[1]: the same flow as an earlier one"),
		   "type 6: one flow twice in a policy");
#undef CR
#undef POL
	r.nqps = QOS_MAX_QPS + 1;
	{
		struct msg m = { .type = &msg_qos_type, .node = "h2", .body = &r };
		char *frame;

		ktap_check(msg_encode(&m, &frame, &len, err, sizeof(err)) &&
			   starts(err, "more than"), "encoder refuses more QPs than a report carries");
	}
	digest_cases();
	node_cases();
	tunnel_cases();
	auth_cases();
	term_cases();
	epoch_cases();
	return ktap_finish();
}
