// SPDX-License-Identifier: GPL-2.0
/*
 * dmsc-agent's roles as they run: an srd+aam agent and sr agents, each a
 * process on loopback with its certificate from tools/pki/dmsc-pki, asked
 * through their control sockets. Instances register through their node's
 * SR and their routes reach every SR with the SRD's revision; an SR killed
 * and restarted gets the full table and registers its node's instances
 * again; an SR that dies stops renewing, and its instances are withdrawn
 * within 3 heartbeats; what must be refused is refused, counted by reason
 * and not acted on; SIGHUP and SIGTERM. Last, figures: registrations per
 * second through the SRD over TLS, and the latency of a push to 2 and 10
 * SRs (in-process TLS clients), p50 and p99. Anti-entropy by digest:
 * SRs in sync get no full table, one whose table lost a route (a hook of
 * the test build) gets it alone. Then two srd+smo agents on one etcd
 * (skipped without Debian's etcd-server): only the elected SMO pushes,
 * and when it is killed the other leads and the SRs take its set; the
 * registry shared by the two, an etcd member killed on the way.
 *
 *   test_roles AGENT DMSC-PKI DMSC
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>
#include <json-c/json.h>
#include <openssl/err.h>

#include "conn.h"
#include "msg.h"
#include "msg_node.h"
#include "msg_policy.h"
#include "msg_qos.h"
#include "msg_reg.h"
#include "routes_frame.h"
#include "tls.h"
#include "../srd/etcd.h"
#include "../srd/tests/etcd_cluster.h"
#include "../../tests/ktap.h"
#include "agent_proc.h"

#define HB_MS	400	/* the SRs' heartbeat: a lease of 1.2 s */
#define DIGEST_MS	300	/* the SRs' sr.digest_interval_ms */
#define FULL_MS		1000	/* the srd's full_interval_ms, for SRs without digests */
#define NODE_MS		300	/* the SRs' sr.node_report_ms */
#define FULL_GAP_TEST_MS	1100	/* past the srd's FULL_GAP_MS (1 s) */

static char dir[] = "/tmp/dmsc-roles.XXXXXX";
static const char *pki_bin, *dmsc_bin;
static int port;
static pid_t pid_ctl, pid_n1, pid_n2;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* --- agents ------------------------------------------------------------- */

/* An sr agent of @node whose SRDs are @srds, the JSON array's items. */
static int sr_hb_ms = HB_MS;	/* etcd's SRs: a lease of at least 2 s */

static void config_sr_to(const char *node, const char *srds)
{
	char t[2048];

	snprintf(t, sizeof(t),
		 "{ \"node\": \"%s\", \"roles\": [\"sr\"], \"control\": \"%s/%s.sock\",\n"
		 "  \"tls\": { \"ca\": \"%s/ca/ca.crt\", \"cert\": \"%s/ca/%s.crt\",\n"
		 "           \"key\": \"%s/ca/%s.key\", \"crl\": \"%s/ca/crl.pem\" },\n"
		 "  \"sr\": { \"srd\": [ %s ],\n"
		 "          \"heartbeat_ms\": %d, \"digest_interval_ms\": %d,\n"
		 "          \"node_report_ms\": %d,\n"
		 "          \"kernel\": false, \"state\": \"%s/%s.state\" } }\n",
		 node, dir, node, dir, dir, node, dir, node, dir, srds, sr_hb_ms,
		 DIGEST_MS, NODE_MS, dir, node);
	write_config(node, "%s", t);
}

static void config_sr(const char *node)
{
	char srds[128];

	snprintf(srds, sizeof(srds), "{ \"node\": \"ctl\", \"address\": \"127.0.0.1:%d\" }",
		 port);
	config_sr_to(node, srds);
}

static void config_ctl(const char *extra)
{
	char t[2048];

	snprintf(t, sizeof(t),
		 "{ \"node\": \"ctl\", \"roles\": [\"srd\", \"aam\", \"smo\"], \"control\": \"%s/ctl.sock\",\n"
		 "  \"smo\": { \"policies\": \"%s/policies.json\" },\n"
		 "  \"tls\": { \"ca\": \"%s/ca/ca.crt\", \"cert\": \"%s/ca/ctl.crt\",\n"
		 "           \"key\": \"%s/ca/ctl.key\", \"crl\": \"%s/ca/crl.pem\" },\n"
		 "  \"srd\": { \"listen\": \"127.0.0.1:%d\", \"store\": { \"sqlite\": \"%s/srd.db\" },\n"
		 "           \"full_interval_ms\": %d }%s }\n",
		 dir, dir, dir, dir, dir, dir, port, dir, FULL_MS, extra);
	write_config("ctl", "%s", t);
}

/* The length of @o, or -1 if it is no array (a failing case goes on). */
static int arr_len(struct json_object *o)
{
	return json_object_is_type(o, json_type_array) ?
	       (int)json_object_array_length(o) : -1;
}

/* @node's SR: how many routes, at which revision, and whether @id is one. */
static int sr_routes(const char *node, uint64_t *rev, const char *id, int *has)
{
	struct json_object *d = ask(node, "{\"show\":\"routes\"}"), *r;
	int n = -1;

	if (has)
		*has = 0;
	r = path_get(d, "sr", "routes");
	if (r) {
		n = (int)json_object_array_length(r);
		*rev = json_object_get_uint64(path_get(d, "sr", "revision"));
		for (int i = 0; has && i < n; i++)
			if (!strcmp(json_object_get_string(path_get(
				json_object_array_get_idx(r, i), "id", NULL)), id))
				*has = 1;
	}
	json_object_put(d);
	return n;
}

static uint64_t srd_revision(int *ninst)
{
	struct json_object *d = ask("ctl", "{\"show\":\"instances\"}");
	uint64_t rev = json_object_get_uint64(path_get(d, "srd", "revision"));

	*ninst = arr_len(path_get(path_get(d, "srd", NULL), "instances", NULL));
	json_object_put(d);
	return rev;
}

/* A counter of the srd's show peers (full_tables, digests_matched, ...). */
static uint64_t srd_peers_counter(const char *key)
{
	struct json_object *d = ask("ctl", "{\"show\":\"peers\"}");
	uint64_t x = json_object_get_uint64(path_get(path_get(d, "srd", NULL), key, NULL));

	json_object_put(d);
	return x;
}

static uint64_t srd_expired(void)
{
	struct json_object *d = ask("ctl", "{\"show\":\"instances\"}");
	uint64_t x = json_object_get_uint64(path_get(path_get(d, "srd", NULL),
						     "expired", NULL));

	json_object_put(d);
	return x;
}

static uint64_t rejected(const char *reason)
{
	struct json_object *d = ask("ctl", "{\"show\":\"rejected\"}");
	uint64_t n = json_object_get_uint64(path_get(d, "by_reason", reason));

	json_object_put(d);
	return n;
}

static int reg(const char *node, const char *id, const char *sid)
{
	char req[512];
	struct json_object *d;

	snprintf(req, sizeof(req),
		 "{\"register\":{\"id\":\"%s\",\"sid\":\"%s\",\"prefix\":\"fc00:%s::/64\","
		 "\"rtype\":\"gpu\",\"capability\":100,\"state\":\"active\"}}",
		 id, sid, id + 3);
	d = ask(node, req);
	json_object_put(d);
	return d ? 0 : -1;
}

/* --- policies (type 6) -------------------------------------------------- */

/* A policy of tunnel @id for @node, with one rule into it, as JSON text. */
static void policy_text(char *buf, size_t size, const char *name,
			const char *node, int id, int weight)
{
	snprintf(buf, size,
		 "{ \"name\": \"%s\", \"node\": \"%s\", \"tunnel\": %d, \"src\": \"fc00:1::1\",\n"
		 "  \"paths\": [ { \"segs\": [ \"fc00:2::1\", \"fc00:9::d4\" ], \"weight\": %d },\n"
		 "             { \"segs\": [ \"fc00:3::1\" ] } ],\n"
		 "  \"backup\": [ \"fc00:4::1\" ],\n"
		 "  \"rules\": [ { \"dst\": \"10.%d.0.0/16\", \"qpn\": \"16-31\" } ] }",
		 name, node, id, weight, id % 250);
}

static void write_policies(const char *file, const char *a, const char *b)
{
	char p[300];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	f = fopen(p, "w");
	fprintf(f, "{ \"policies\": [ %s%s%s ] }\n", a, b ? ", " : "", b ? b : "");
	fclose(f);
}

/*
 * @node's SR policies: the revision, the desired names and the installed
 * tunnel ids, each as "a,b" in the agent's order, and a counter.
 */
static int sr_pol(const char *node, uint64_t *rev, char *names, char *tuns,
		  const char *counter, uint64_t *cnt)
{
	struct json_object *d = ask(node, "{\"show\":\"policies\"}");
	struct json_object *sr = path_get(d, "sr", NULL), *a, *in;
	size_t i;

	names[0] = tuns[0] = '\0';
	if (!sr) {
		json_object_put(d);
		return -1;
	}
	*rev = json_object_get_uint64(path_get(sr, "rev", NULL));
	a = path_get(sr, "desired", NULL);
	for (i = 0; i < (size_t)(arr_len(a) > 0 ? arr_len(a) : 0); i++)
		sprintf(names + strlen(names), "%s%s", i ? "," : "",
			json_object_get_string(path_get(json_object_array_get_idx(a, i),
							"name", NULL)));
	in = path_get(sr, "installed", "tunnels");
	for (i = 0; i < (size_t)(arr_len(in) > 0 ? arr_len(in) : 0); i++)
		sprintf(tuns + strlen(tuns), "%s%s", i ? "," : "",
			json_object_get_string(json_object_array_get_idx(in, i)));
	if (counter)
		*cnt = json_object_get_uint64(path_get(sr, counter, NULL));
	json_object_put(d);
	return 0;
}

/* --- raw TLS clients, to be refused ------------------------------------ */

static SSL_CTX *client_ctx(const char *cadir, const char *name)
{
	char cert[300], key[300], ca[300], err[256];
	struct tls_conf c = { cert, key, ca, NULL };
	struct peer_id self;
	SSL_CTX *x;

	snprintf(cert, sizeof(cert), "%s/%s/%s.crt", dir, cadir, name);
	snprintf(key, sizeof(key), "%s/%s/%s.key", dir, cadir, name);
	snprintf(ca, sizeof(ca), "%s/%s/ca.crt", dir, cadir);
	x = tls_ctx_new(&c, 0, &self, err, sizeof(err));
	if (!x)
		printf("# %s\n", err);
	return x;
}

/*
 * Connect as @name of CA @cadir, send @len bytes of @data (if any), and
 * wait for the SRD to close or 300 ms: a refused message gets no answer.
 */
static void raw_send(const char *cadir, const char *name, const void *data,
		     size_t len)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { 0, 300000 };
	SSL_CTX *ctx = client_ctx(cadir, name);
	char buf[4096];
	SSL *ssl;
	int fd;

	if (!ctx)
		return;
	fd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		SSL_CTX_free(ctx);
		return;
	}
	ssl = SSL_new(ctx);
	SSL_set_fd(ssl, fd);
	if (SSL_connect(ssl) == 1) {
		if (len)
			SSL_write(ssl, data, (int)len);
		/* the SRD's first frame (a full table, if it took us) or the end */
		while (SSL_read(ssl, buf, sizeof(buf)) > 0)
			;
	}
	ERR_clear_error();
	SSL_free(ssl);
	close(fd);
	SSL_CTX_free(ctx);
}

/* @m from @node, as the codec writes it, into @out: its length, or 0. */
static size_t frame_of(struct msg *m, const char *node, char *out,
		       size_t size)
{
	char err[256] = "too long", *f;
	size_t len;

	snprintf(m->node, sizeof(m->node), "%s", node);
	if (msg_encode(m, &f, &len, err, sizeof(err)) || len > size) {
		printf("# encode: %s\n", err);
		return 0;
	}
	memcpy(out, f, len);
	free(f);
	return len;
}

/* A frame of type 1 from @node with @body. */
static size_t frame_reg(const char *node, const struct msg_reg *body,
			char *out, size_t size)
{
	struct msg m = { .type = &msg_reg_type, .seq = 1, .body = (void *)body };

	return frame_of(&m, node, out, size);
}

/* A type-5 QoS report from @node, number @seq, one ingress device e0. */
static size_t frame_qos(const char *node, uint64_t seq, uint64_t packets,
			char *out, size_t size)
{
	struct qos_dev d = { .dev = "e0", .dir = QOS_INGRESS, .packets = packets };
	struct qos_report r = { .time_ms = 1800000000000ull, .interval_us = 200000,
				.devs = &d, .ndevs = 1 };
	struct msg m = { .type = &msg_qos_type, .seq = seq, .body = &r };

	d.total.packets = packets;
	return frame_of(&m, node, out, size);
}

/* A type-4 node state report from @node, number @seq, @cpus CPUs. */
static size_t frame_node(const char *node, uint64_t seq, uint64_t cpus,
			 char *out, size_t size)
{
	struct node_inst in = { .id = "mi-n", .state = "active", .has_rtt = true,
				 .registration_rtt_ms = 7 };
	struct node_state s = { .time_ms = 1800000000000ull, .loadavg = { 1, 2, 3 },
				.cpus = cpus, .mem_total_kb = 2048,
				.mem_available_kb = 1024, .insts = &in, .ninsts = 1 };
	struct msg m = { .type = &msg_node_type, .seq = seq, .body = &s };

	return frame_of(&m, node, out, size);
}

/* @node's entry of the smo's QoS table (show qos), or NULL. */
static struct json_object *smo_qos_node(struct json_object *d, const char *node)
{
	struct json_object *a = path_get(path_get(d, "smo", NULL), "nodes", NULL);

	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		struct json_object *x = json_object_array_get_idx(a, i);

		if (!strcmp(json_object_get_string(path_get(x, "node", NULL)), node))
			return x;
	}
	return NULL;
}

static uint64_t u64(struct json_object *o, const char *a, const char *b)
{
	return (uint64_t)json_object_get_int64(path_get(o, a, b));
}

/* --- in-process SRs, for the figures ------------------------------------ */

static struct event_base *base;

struct bsr {
	struct conn *c;
	int up;
	uint64_t rev;
	double seen_us;		/* when it reached want */
	uint64_t want;
	int fulls;		/* full tables received */
};

/* 1 if @p is a full table (type 2). */
static int frame_full(const unsigned char *p, size_t len)
{
	char err[256];
	struct msg m;
	int full;

	if (msg_decode((const char *)p, len, &m, err, sizeof(err)))
		return 0;
	full = m.type->type == MSG_ROUTES && ((struct msg_routes *)m.body)->full;
	msg_free(&m);
	return full;
}

static int b_up(struct conn *c, void *arg)
{
	(void)c;
	((struct bsr *)arg)->up = 1;
	return 0;
}

static int b_frame(struct conn *c, const unsigned char *p, size_t len, void *arg)
{
	struct bsr *s = arg;

	(void)c;
	routes_frame_seen(p, len, &s->rev, s->want, &s->seen_us, now_us());
	s->fulls += frame_full(p, len);
	return 0;
}

static void b_down(struct conn *c, const char *why, void *arg)
{
	(void)c;
	printf("# bench sr down: %s\n", why);
	((struct bsr *)arg)->c = NULL;
	((struct bsr *)arg)->up = 0;
}

static const struct conn_ops b_ops = { b_up, b_frame, b_down };

static int all(struct bsr *s, int n, int (*f)(struct bsr *))
{
	for (int i = 0; i < n; i++)
		if (!f(&s[i]))
			return 0;
	return 1;
}

static int is_up(struct bsr *s) { return s->up; }
static int has_seen(struct bsr *s) { return s->seen_us != 0; }

static int spin(struct bsr *s, int n, int (*f)(struct bsr *), int ms)
{
	int64_t t = mono_ms() + ms;

	while (!all(s, n, f) && mono_ms() < t)
		event_base_loop(base, EVLOOP_ONCE);
	return all(s, n, f);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void send_reg(struct bsr *s, const char *node, const char *id,
		     uint64_t *seq)
{
	struct msg_reg g = { .op = REG_REGISTER };
	struct msg m = { .type = &msg_reg_type, .seq = ++*seq, .body = &g };
	char err[256], *f;
	size_t len;

	snprintf(m.node, sizeof(m.node), "%s", node);
	snprintf(g.inst.id, sizeof(g.inst.id), "%s", id);
	snprintf(g.inst.node, sizeof(g.inst.node), "%s", node);
	snprintf(g.inst.sid, sizeof(g.inst.sid), "fc00:99::%x", (unsigned)*seq & 0xffff);
	snprintf(g.inst.prefix, sizeof(g.inst.prefix), "fc00:98::/64");
	snprintf(g.inst.rtype, sizeof(g.inst.rtype), "gpu");
	snprintf(g.inst.state, sizeof(g.inst.state), "active");
	g.inst.ttl_ms = 600000;
	if (!msg_encode(&m, &f, &len, err, sizeof(err))) {
		conn_send(s->c, f + MSG_HDR_LEN, len - MSG_HDR_LEN);
		free(f);
	}
}

/* @n SRs connected as b0..b@n-1; @rounds registrations by b0, each timed to every SR. */
static int bench(int n, int rounds, int nreg)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct bsr s[10] = { 0 };
	SSL_CTX *ctx[10];
	double *lat = calloc((size_t)(n * rounds), sizeof(double)), t0;
	uint64_t seq = 0;
	char id[32], name[8];
	int ok = 1, k = 0;

	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "b%d", i);
		ctx[i] = client_ctx("ca", name);
		s[i].c = conn_new(base, ctx[i], 0, -1, (struct sockaddr *)&sa,
				  sizeof(sa), "ctl", 0, &b_ops, &s[i]);
	}
	ok = spin(s, n, is_up, 20000);
	if (!ok)
		printf("# bench: not all %d SRs up in 20 s\n", n);
	/* each gets its full table first */
	usleep(200000);
	event_base_loop(base, EVLOOP_NONBLOCK);
	for (int r = 0; ok && r < rounds; r++) {
		uint64_t want = s[0].rev + 1;

		for (int i = 0; i < n; i++) {
			s[i].want = want;
			s[i].seen_us = 0;
		}
		snprintf(id, sizeof(id), "lat-%d-%d", n, r);
		t0 = now_us();
		send_reg(&s[0], "b0", id, &seq);
		ok = spin(s, n, has_seen, 3000);
		if (!ok)
			printf("# bench: change %d did not reach all %d SRs in 3 s\n", r, n);
		for (int i = 0; ok && i < n; i++)
			lat[k++] = (s[i].seen_us - t0) / 1000;
	}
	if (ok) {
		qsort(lat, (size_t)k, sizeof(*lat), cmp_d);
		printf("# push latency to %d SRs over %d changes: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
		       n, rounds, lat[k / 2], lat[(k * 99) / 100], lat[k - 1]);
		/*
		 * The issue's goal is p99 under 1 s (for 100 SRs); on a
		 * machine shared with VMs it is a figure, not a verdict:
		 * each change reaching every SR within 3 s is the check.
		 */
		printf("# p99 goal of 1 s: %s\n", lat[(k * 99) / 100] < 1000 ? "met" : "missed");
	}
	if (ok && nreg) {
		uint64_t want = s[0].rev + (uint64_t)nreg;

		/* pipelined: the figure is the SRD's, not a round trip's */
		for (int i = 0; i < n; i++) {
			s[i].want = want;
			s[i].seen_us = 0;
		}
		t0 = now_us();
		for (int r = 0; r < nreg; r++) {
			snprintf(id, sizeof(id), "reg-%d", r);
			send_reg(&s[0], "b0", id, &seq);
		}
		ok = spin(s, n, has_seen, 60000);
		if (ok)
			printf("# %d registrations over TLS, each a durable SQLite commit pushed to %d SRs: %.0f/s\n",
			       nreg, n, nreg / ((s[0].seen_us - t0) / 1e6));
	}
	for (int i = 0; i < n; i++) {
		if (s[i].c)
			conn_close(s[i].c);
		SSL_CTX_free(ctx[i]);
	}
	free(lat);
	return ok;
}

/* --- anti-entropy by digest ------------------------------------------------ */

static uint64_t sr_counter(const char *node, const char *key);

/*
 * n1 and n2 in sync, 3 routes each: for more than two of the srd's full
 * table periods, their digests match and neither gets a full table. Then
 * a route dropped from n1's table behind the SRD's back (the test build's
 * hook): its next digest differs, and it alone gets the full table.
 */
static void digest_cases(void)
{
	uint64_t f0, m0, x0, d1, d2, a1, a2, f, m, x, rev = 0;
	int ok, has = 0;
	int64_t t;

	f0 = srd_peers_counter("full_tables");
	m0 = srd_peers_counter("digests_matched");
	x0 = srd_peers_counter("digest_mismatches");
	a1 = sr_counter("n1", "full_tables");
	a2 = sr_counter("n2", "full_tables");
	d1 = sr_counter("n1", "digests_sent");
	d2 = sr_counter("n2", "digests_sent");
	usleep((2 * FULL_MS + FULL_MS / 2) * 1000);
	f = srd_peers_counter("full_tables");
	m = srd_peers_counter("digests_matched");
	x = srd_peers_counter("digest_mismatches");
	ok = f == f0 && x == x0 && m >= m0 + 8 &&
	     sr_counter("n1", "digests_sent") >= d1 + 4 &&
	     sr_counter("n2", "digests_sent") >= d2 + 4 &&
	     sr_counter("n1", "full_tables") == a1 && sr_counter("n2", "full_tables") == a2;
	printf("# in sync for %d ms: digests matched %llu, mismatched %llu, full tables %llu (srd full_interval_ms %d, sr digest_interval_ms %d)\n",
	       2 * FULL_MS + FULL_MS / 2, (unsigned long long)(m - m0),
	       (unsigned long long)(x - x0), (unsigned long long)(f - f0), FULL_MS,
	       DIGEST_MS);
	ktap_check(ok, "digest: SRs in sync send digests that match; no full table sent over 2.5 full-table periods");

	/* n1 loses mi-b1 behind the SRD's back */
	a1 = sr_counter("n1", "full_tables");
	a2 = sr_counter("n2", "full_tables");
	{
		struct json_object *d = ask("n1", "{\"test_drop_route\":\"mi-b1\"}");

		ok = d != NULL;
		json_object_put(d);
	}
	ok = ok && sr_routes("n1", &rev, "mi-b1", &has) == 2 && !has;
	t = mono_ms();
	ok = ok && WAIT(3000, sr_routes("n1", &rev, "mi-b1", &has) == 3 && has);
	t = mono_ms() - t;
	printf("# n1's table corrupted (mi-b1 dropped): repaired after %lld ms; srd mismatches %llu, full tables %llu\n",
	       (long long)t,
	       (unsigned long long)(srd_peers_counter("digest_mismatches") - x),
	       (unsigned long long)(srd_peers_counter("full_tables") - f));
	ok = ok && srd_peers_counter("digest_mismatches") == x + 1 &&
	     srd_peers_counter("full_tables") == f + 1 &&
	     sr_counter("n1", "full_tables") == a1 + 1 &&
	     sr_counter("n2", "full_tables") == a2;
	ktap_check(ok, "digest: a route dropped behind the SRD's back: n1's next digest differs, n1 alone gets the full table, mi-b1 is back");
}

/* --- a fake SRD, to hold an SR agent to its revisions -------------------- */

struct fake {
	struct conn *c;
	int up, syncs;
	uint64_t since;
} fake;
static SSL_CTX *fake_ctx;

static int f_up(struct conn *c, void *arg)
{
	(void)arg;
	fake.c = c;
	fake.up = 1;
	return 0;
}

static int f_frame(struct conn *c, const unsigned char *p, size_t len, void *arg)
{
	char err[256];
	struct msg m;

	(void)c;
	(void)arg;
	if (msg_decode((const char *)p, len, &m, err, sizeof(err)))
		return 0;
	if (m.type->type == MSG_REGISTRATION &&
	    ((struct msg_reg *)m.body)->op == REG_SYNC) {
		fake.syncs++;
		fake.since = ((struct msg_reg *)m.body)->since;
	}
	msg_free(&m);
	return 0;
}

static void f_down(struct conn *c, const char *why, void *arg)
{
	(void)c;
	(void)arg;
	printf("# fake srd: sr left: %s\n", why);
	fake.c = NULL;
	fake.up = 0;
}

static const struct conn_ops f_ops = { f_up, f_frame, f_down };

static void f_accept(struct evconnlistener *l, evutil_socket_t fd,
		     struct sockaddr *sa, int salen, void *arg)
{
	(void)l;
	(void)sa;
	(void)salen;
	(void)arg;
	if (!conn_new(base, fake_ctx, 1, fd, NULL, 0, NULL, 0, &f_ops, NULL))
		close(fd);
}

/* Type 2 from the fake SRD: @n routes r1..r@n, full or from @prev. */
static void f_routes(uint64_t rev, uint64_t prev, int full, int from, int n)
{
	struct msg_instance ri[8] = { 0 };
	struct msg_routes mr = { .rev = rev, .prev = prev, .full = full,
				 .routes = ri, .nroutes = (size_t)(n - from + 1) };
	struct msg m = { .type = &msg_routes_type, .node = "ctl", .seq = rev,
			 .body = &mr };
	char err[256], *f;
	size_t len;

	if (!fake.c)
		return;	/* the SR did not come: the checks say so */
	for (int i = from; i <= n; i++) {
		struct msg_instance *x = &ri[i - from];

		snprintf(x->id, sizeof(x->id), "r%d", i);
		snprintf(x->node, sizeof(x->node), "n9");
		snprintf(x->sid, sizeof(x->sid), "fc00:9::%d", i);
		snprintf(x->prefix, sizeof(x->prefix), "fc00:9%d::/64", i);
		snprintf(x->rtype, sizeof(x->rtype), "gpu");
		snprintf(x->state, sizeof(x->state), "active");
		x->ttl_ms = 600;
	}
	if (!msg_encode(&m, &f, &len, err, sizeof(err))) {
		conn_send(fake.c, f + MSG_HDR_LEN, len - MSG_HDR_LEN);
		free(f);
	}
}

static void policy_text(char *buf, size_t size, const char *name,
			const char *node, int id, int weight);

/* Type 6 from the fake: one policy @name (tunnel @id) for n3, at @rev, of @term (0: none). */
static const char *fake_node = "ctl";	/* its certificate's */

static void f_policy_epoch(uint64_t rev, int full, const char *name, int id,
			   uint64_t term, uint64_t epoch);

static void f_policy(uint64_t rev, int full, const char *name, int id,
		     uint64_t term)
{
	f_policy_epoch(rev, full, name, id, term, 0);
}

static void pump(int ms)
{
	int64_t t = mono_ms() + ms;

	while (mono_ms() < t) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		usleep(5000);
	}
}

static uint64_t sr_counter(const char *node, const char *key)
{
	struct json_object *d = ask(node, "{\"show\":\"routes\"}");
	uint64_t v = json_object_get_uint64(path_get(d, "sr", key));

	json_object_put(d);
	return v;
}

/* --- an SR's epochs (the etcd cluster of a term), from the fake SMO --- */

#define SR_EPOCH_CASES	1

/* Type 6 from the fake: as f_policy(), with @epoch (0: none): the one encoder. */
static void f_policy_epoch(uint64_t rev, int full, const char *name, int id,
			   uint64_t term, uint64_t epoch)
{
	struct msg_policy mp = { .rev = rev, .full = full, .n = 1, .term = term,
				 .epoch = epoch };
	struct msg m = { .type = &msg_policy_type, .node = "ctl", .seq = rev,
			 .body = &mp };
	struct policy pol;
	struct json_object *o;
	char text[1024], err[256], *f;
	size_t len;

	policy_text(text, sizeof(text), name, "n3", id, 1);
	o = json_tokener_parse(text);
	if (!o || policy_from_json(o, "p", &pol, err, sizeof(err))) {
		printf("# policy: %s\n", err);
		json_object_put(o);
		return;
	}
	json_object_put(o);
	mp.p = &pol;
	snprintf(m.node, sizeof(m.node), "%s", fake_node);
	if (fake.c && !msg_encode(&m, &f, &len, err, sizeof(err))) {
		conn_send(fake.c, f + MSG_HDR_LEN, len - MSG_HDR_LEN);
		free(f);
	}
}

/*
 * n3 at t3, term 60, no epoch yet (sr_revisions()): term 70 of epoch A
 * taken (an unknown epoch is not another); a full push of term 30 of
 * epoch B (a restored etcd) taken as a new epoch; a change of term 25
 * of B and a full push of term 20 without an epoch refused (stale_term);
 * the epoch in the state file. Then t3 again at term 60 of B, as the
 * restart case after it expects.
 */
static void sr_epochs(void)
{
	const uint64_t A = 0x1111222233334444ull, B = 0xf00dcafe00000001ull;
	char names[256], tuns[64], want[64];
	uint64_t rev = 0, term = 0, ep = 0, changes = 0, st0 = 0, st = 0, se = 0;
	int ok = fake.c != NULL;

	sr_pol("n3", &rev, names, tuns, "stale_term", &st0);
	f_policy_epoch(4, 0, "t4", 104, 70, A);
	pump(300);
	ok = ok && !sr_pol("n3", &rev, names, tuns, "epoch", &ep) && ep == A &&
	     rev == 4 && !strcmp(names, "t4");
	f_policy_epoch(1, 1, "r1", 201, 30, B);
	pump(300);
	ok = ok && !sr_pol("n3", &rev, names, tuns, "epoch_changes", &changes) &&
	     changes == 1 && rev == 1 && !strcmp(names, "r1") &&
	     !sr_pol("n3", &rev, names, tuns, "term", &term) && term == 30 &&
	     !sr_pol("n3", &rev, names, tuns, "epoch", &ep) && ep == B;
	f_policy_epoch(2, 0, "r2", 202, 25, B);
	f_policy_epoch(5, 1, "r5", 205, 20, 0);
	pump(300);
	snprintf(want, sizeof(want), "\"epoch\":%llu", (unsigned long long)B);
	ok = ok && !sr_pol("n3", &rev, names, tuns, "stale_term", &st) && st == st0 + 2 &&
	     rev == 1 && !strcmp(names, "r1") &&
	     !sh("tr -d ' \\n' <%s/n3.state | grep -q '%s'", dir, want);
	/* A again, at a higher term and full: a cluster n3 left, refused */
	f_policy_epoch(6, 1, "old", 206, 90, A);
	pump(300);
	snprintf(want, sizeof(want), "\"retired_epochs\":[%llu]", (unsigned long long)A);
	ok = ok && !sr_pol("n3", &rev, names, tuns, "stale_epoch", &se) && se == 1 &&
	     rev == 1 && !strcmp(names, "r1") &&
	     !sr_pol("n3", &rev, names, tuns, "epoch", &ep) && ep == B &&
	     !sh("tr -d ' \\n' <%s/n3.state | grep -qF '%s'", dir, want);
	printf("# n3: epoch %llx -> %llx, epoch_changes %llu, term %llu, stale_term %llu -> %llu, stale_epoch %llu\n",
	       (unsigned long long)A, (unsigned long long)ep, (unsigned long long)changes,
	       (unsigned long long)term, (unsigned long long)st0, (unsigned long long)st,
	       (unsigned long long)se);
	ktap_check(ok, "sr: epochs: term 70 of epoch A taken; a full push of term 30 of epoch B taken (epoch_changes 1); term 25 of B and term 20 without an epoch refused (stale_term); a full push of term 90 of A refused (stale_epoch: A left for good); B and the retired A in the state file");
	f_policy_epoch(3, 1, "t3", 103, 60, B);
	pump(300);
}

/* An SR agent (n3) against the fake SRD: revisions applied once, gaps noticed. */
static void sr_revisions(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(sa);
	struct evconnlistener *ln;
	char cert[300], key[300], ca[300], err[256], t[300];
	struct tls_conf tc = { cert, key, ca, NULL };
	struct peer_id self;
	uint64_t rev = 0;
	int real_port = port, ok, n = 0;
	pid_t pid;

	snprintf(cert, sizeof(cert), "%s/ca/ctl.crt", dir);
	snprintf(key, sizeof(key), "%s/ca/ctl.key", dir);
	snprintf(ca, sizeof(ca), "%s/ca/ca.crt", dir);
	fake_ctx = tls_ctx_new(&tc, 1, &self, err, sizeof(err));
	ln = evconnlistener_new_bind(base, f_accept, NULL,
				     LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 16,
				     (struct sockaddr *)&sa, sizeof(sa));
	getsockname(evconnlistener_get_fd(ln), (struct sockaddr *)&sa, &l);
	port = ntohs(sa.sin_port);
	config_sr("n3");
	port = real_port;
	pid = spawn("n3");
	ok = ({ int64_t e = mono_ms() + 20000;
		while (!fake.up && mono_ms() < e)
			event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
		fake.up; });
	if (ok) {
		f_routes(5, 0, 1, 1, 1);	/* full: r1 at 5 */
		f_routes(6, 5, 0, 2, 2);	/* r2: 5 -> 6 */
		f_routes(8, 7, 0, 3, 3);	/* r3: 7 -> 8, but 7 never came */
		pump(300);
		n = sr_routes("n3", &rev, NULL, NULL);
	}
	ktap_check(ok && fake.syncs == 1 && fake.since == 6 && n == 2 && rev == 6 &&
		   sr_counter("n3", "gaps") == 1,
		   "sr: a gap (7..8 at revision 6) is not applied; it asks for the full table since 6");
	if (!(fake.syncs == 1 && fake.since == 6 && n == 2 && rev == 6))
		printf("# syncs %d since %llu, %d routes at %llu\n", fake.syncs,
		       (unsigned long long)fake.since, n, (unsigned long long)rev);
	f_routes(6, 5, 0, 2, 2);		/* 5 -> 6 again */
	pump(200);
	n = sr_routes("n3", &rev, NULL, NULL);
	ok = n == 2 && rev == 6 && sr_counter("n3", "stale") == 1;
	f_routes(8, 0, 1, 1, 3);		/* the full table at 8 */
	pump(300);
	n = sr_routes("n3", &rev, NULL, NULL);
	ktap_check(ok && n == 3 && rev == 8 && fake.syncs == 1,
		   "sr: a change it has is applied once; the full table brings it to 8");
	{
		/*
		 * A sync the SRD does not answer (its store failed, a limit):
		 * asked again after one digest interval (at least 2 s), not
		 * waited for until the connection drops.
		 */
		uint64_t r0 = sr_counter("n3", "sync_retries");
		int s0 = fake.syncs;

		f_routes(10, 9, 0, 1, 1);	/* a gap at 8 */
		pump(300);
		ok = fake.syncs == s0 + 1;
		pump(2000);
		ok = ok && fake.syncs >= s0 + 2 && fake.since == 8 &&
		     sr_counter("n3", "sync_retries") >= r0 + 1;
		if (!ok)
			printf("# syncs %d -> %d since %llu, sync_retries %llu -> %llu\n",
			       s0, fake.syncs, (unsigned long long)fake.since,
			       (unsigned long long)r0,
			       (unsigned long long)sr_counter("n3", "sync_retries"));
		f_routes(10, 0, 1, 1, 3);	/* the full table at 10 */
		pump(300);
		n = sr_routes("n3", &rev, NULL, NULL);
		ktap_check(ok && n == 3 && rev == 10,
			   "sr: a sync not answered is asked again after a digest interval (2 s at least); the full table then brings it to 10");
	}
	{
		/* the SRD's certificate says srd: it may not register */
		struct msg_reg g = { .op = REG_REGISTER };
		uint64_t a;
		size_t len;

		g.inst = (struct msg_instance){ "mi-q", "ctl", "fc00::9", "fc00::/64",
						"gpu", 1, "active", 1000 };
		len = frame_reg("ctl", &g, t, sizeof(t));
		{
			struct json_object *d = ask("n3", "{\"show\":\"rejected\"}");

			a = json_object_get_uint64(path_get(d, "by_reason", "role"));
			json_object_put(d);
		}
		if (fake.c)
			conn_send(fake.c, t + MSG_HDR_LEN, len - MSG_HDR_LEN);
		pump(300);
		{
			struct json_object *d = ask("n3", "{\"show\":\"rejected\"}");

			ok = json_object_get_uint64(path_get(d, "by_reason", "role")) == a + 1;
			json_object_put(d);
		}
		ktap_check(ok && sr_routes("n3", &rev, NULL, NULL) == 3,
			   "sr: a registration from its SRD refused (role), its table unchanged");
	}
	{
		/* policies by revision: full 5, then 6, 8 (a gap: taken, the set
		 * is whole), 7 (stale: ignored)
		 */
		char names[256], tuns[64];
		uint64_t gaps = 9, stale = 9, prev = 0;

		if (fake.c) {
			f_policy(5, 1, "q5", 105, 0);
			f_policy(6, 0, "q6", 106, 0);
			f_policy(8, 0, "q8", 108, 0);
			f_policy(7, 0, "q7", 107, 0);
		}
		pump(400);
		ok = !sr_pol("n3", &rev, names, tuns, "gaps", &gaps) &&
		     !sr_pol("n3", &prev, names, tuns, "stale", &stale);
		ktap_check(ok && rev == 8 && gaps == 1 && stale == 1 &&
			   !strcmp(names, "q8") && !strcmp(tuns, "108"),
			   "sr: policies 5 (full), 6, 8 (a gap, counted, its whole set taken), 7 (stale, ignored): q8 at 8");
		if (!(rev == 8 && gaps == 1 && stale == 1 && !strcmp(names, "q8")))
			printf("# rev %llu gaps %llu stale %llu [%s] [%s]\n",
			       (unsigned long long)rev, (unsigned long long)gaps,
			       (unsigned long long)stale, names, tuns);
	}
	{
		/*
		 * Terms (several controllers on etcd): 9 of term 50 taken; then
		 * a full push and a change of lower terms refused (stale_term),
		 * whatever their revisions; a full push of term 60 at a lower
		 * revision (another leader's) taken.
		 */
		char names[256], tuns[64];
		uint64_t st = 9, term = 0, t50 = 0;

		if (fake.c) {
			f_policy(9, 0, "t9", 109, 50);
			pump(300);
			sr_pol("n3", &rev, names, tuns, "term", &t50);
			f_policy(20, 1, "t20", 120, 40);
			f_policy(10, 0, "t10", 110, 45);
			pump(300);
			ok = !sr_pol("n3", &rev, names, tuns, "stale_term", &st) &&
			     rev == 9 && !strcmp(names, "t9") && t50 == 50 && st == 2;
			f_policy(3, 1, "t3", 103, 60);
			pump(300);
		}
		ok = ok && !sr_pol("n3", &rev, names, tuns, "term", &term) &&
		     rev == 3 && term == 60 && !strcmp(names, "t3") && !strcmp(tuns, "103");
		ktap_check(ok, "sr: terms: t9 of term 50 taken; a full push of term 40 and a change of term 45 refused (stale_term 2); a full push of term 60 at revision 3 taken");
		if (!ok)
			printf("# rev %llu term %llu stale_term %llu [%s] [%s]\n",
			       (unsigned long long)rev, (unsigned long long)term,
			       (unsigned long long)st, names, tuns);
	}
	sr_epochs();
	stop(&pid);
	{
		/*
		 * An sr certificate pushing policy: n3 (restarted, its policies
		 * from its state file) dials "fsr", whose certificate says sr.
		 */
		char names[256], tuns[64];
		uint64_t a = 0, after = 0;

		if (fake.c)
			conn_close(fake.c);
		fake.c = NULL;
		fake.up = 0;
		SSL_CTX_free(fake_ctx);
		snprintf(cert, sizeof(cert), "%s/ca/fsr.crt", dir);
		snprintf(key, sizeof(key), "%s/ca/fsr.key", dir);
		fake_ctx = tls_ctx_new(&tc, 1, &self, err, sizeof(err));
		fake_node = "fsr";
		sh("sed -i 's/\"node\": \"ctl\"/\"node\": \"fsr\"/' %s/n3.json", dir);
		pid = spawn("n3");
		ok = ({ int64_t e = mono_ms() + 20000;
			while (!fake.up && mono_ms() < e)
				event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
			fake.up; });
		ok = ok && !sr_pol("n3", &rev, names, tuns, "term", &a) && rev == 3 &&
		     a == 60 && !strcmp(names, "t3") && !strcmp(tuns, "103");
		{
			struct json_object *d = ask("n3", "{\"show\":\"rejected\"}");

			a = json_object_get_uint64(path_get(d, "by_reason", "role"));
			json_object_put(d);
		}
		if (fake.c)
			f_policy(9, 1, "q9", 109, 0);
		pump(400);
		{
			struct json_object *d = ask("n3", "{\"show\":\"rejected\"}");

			after = json_object_get_uint64(path_get(d, "by_reason", "role"));
			json_object_put(d);
		}
		ok = ok && after == a + 1 && !sr_pol("n3", &rev, names, tuns, NULL, NULL) &&
		     rev == 3 && !strcmp(names, "t3");
		ktap_check(ok, "sr: restarted, t3 and its term 60 from its state file; a policy push from an sr certificate refused (role), not applied");
		if (!ok)
			printf("# role rejections %llu -> %llu, rev %llu [%s] [%s]\n",
			       (unsigned long long)a, (unsigned long long)after,
			       (unsigned long long)rev, names, tuns);
	}
	stop(&pid);
	if (fake.c)
		conn_close(fake.c);
	evconnlistener_free(ln);
	SSL_CTX_free(fake_ctx);
}

/* --- limits on the full tables an SR asks for ------------------------------ */

/* A digest from @node at @s's revision that cannot match (all zeros). */
static void l_digest(struct bsr *s, const char *node)
{
	struct msg_reg g = { .op = REG_DIGEST, .rev = s->rev };
	char f[512];
	size_t len;

	memset(g.sha256, '0', MSG_DIGEST_HEX - 1);
	len = frame_reg(node, &g, f, sizeof(f));
	if (len && s->c)
		conn_send(s->c, f + MSG_HDR_LEN, len - MSG_HDR_LEN);
}

static int l_connect(struct bsr *s, SSL_CTX *ctx)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int64_t e = mono_ms() + 10000;

	if (!ctx)
		return 0;
	s->c = conn_new(base, ctx, 0, -1, (struct sockaddr *)&sa, sizeof(sa),
			"ctl", 0, &b_ops, s);
	while (s->c && !s->up && mono_ms() < e)
		event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	return s->up;
}

/*
 * An SR certificate (b0) sending a burst of 20 digests that cannot match
 * within a second: one full table, the rest counted (fulls_limited); its
 * next digest a second later gets the table. Then the store failing the
 * full table of a new SR (b1, the test build's hook), which sends no
 * digests: the SRD's tick sends it a second later.
 */
static void full_limits(void)
{
	struct bsr s = { 0 }, t = { 0 };
	SSL_CTX *ctx = client_ctx("ca", "b0"), *ctx1 = client_ctx("ca", "b1");
	uint64_t l0, x0, f0;
	int ok, burst, n0;
	int64_t t0;

	l0 = srd_peers_counter("fulls_limited");
	ok = l_connect(&s, ctx);
	/*
	 * At once a digest at revision 0 (deferred: not the one sent it), so
	 * that it gets no periodic full table (srd.full_interval_ms 1 s).
	 */
	l_digest(&s, "b0");
	pump(300);
	n0 = s.fulls;
	ok = ok && n0 >= 1;	/* on connecting (and a periodic one, rarely) */
	/* a wrong digest within the second of that table: limited */
	l_digest(&s, "b0");
	pump(200);
	ok = ok && s.fulls == n0 && srd_peers_counter("fulls_limited") == l0 + 1;
	if (!ok)
		printf("# b0: %d full tables on connecting and a digest; limited %llu\n",
		       s.fulls, (unsigned long long)(srd_peers_counter("fulls_limited") - l0));
	pump(FULL_GAP_TEST_MS);		/* that one's second passes */
	n0 = s.fulls;
	l0 = srd_peers_counter("fulls_limited");
	x0 = srd_peers_counter("digest_mismatches");
	f0 = srd_peers_counter("full_tables");
	for (int i = 0; i < 20; i++)
		l_digest(&s, "b0");
	pump(500);
	burst = s.fulls - n0;
	printf("# 20 wrong digests within a second: %d full tables, mismatches %llu, limited %llu, srd full tables %llu\n",
	       burst,
	       (unsigned long long)(srd_peers_counter("digest_mismatches") - x0),
	       (unsigned long long)(srd_peers_counter("fulls_limited") - l0),
	       (unsigned long long)(srd_peers_counter("full_tables") - f0));
	ok = ok && burst >= 1 && burst <= 2 &&
	     srd_peers_counter("fulls_limited") >= l0 + 18 &&
	     srd_peers_counter("digest_mismatches") == x0 + (uint64_t)burst;
	pump(FULL_GAP_TEST_MS);
	l_digest(&s, "b0");
	pump(500);
	ok = ok && s.fulls - n0 == burst + 1;
	ktap_check(ok, "srd: 20 wrong digests within a second get 1 full table, the rest counted fulls_limited; the next digest after the second gets the table");
	if (s.c)
		conn_close(s.c);

	/* the store cannot list b1's first table */
	{
		struct json_object *d = ask("ctl", "{\"test_fail_list\":1}");

		ok = d != NULL;		/* the count; NULL: refused */
		json_object_put(d);
	}
	f0 = srd_peers_counter("fulls_failed");
	t0 = mono_ms();
	ok = ok && l_connect(&t, ctx1);
	ok = ok && ({ int64_t e = mono_ms() + 4000;
		while (!t.fulls && mono_ms() < e)
			pump(20);
		t.fulls == 1; });
	printf("# b1's first full table failed (fulls_failed %llu), sent %lld ms after connecting\n",
	       (unsigned long long)(srd_peers_counter("fulls_failed") - f0),
	       (long long)(mono_ms() - t0));
	ok = ok && srd_peers_counter("fulls_failed") == f0 + 1;
	ktap_check(ok, "srd: a full table the store could not list is sent from the tick a second later, to an SR that sends no digests");
	if (t.c)
		conn_close(t.c);
	SSL_CTX_free(ctx);
	SSL_CTX_free(ctx1);
}

/* @op (register or deregister) of instance @id of @node, through @s. */
static void send_op(struct bsr *s, enum reg_op op, const char *node,
		    const char *id, uint64_t *seq)
{
	struct msg_reg g = { .op = op };
	struct msg m = { .type = &msg_reg_type, .seq = ++*seq, .body = &g };
	char err[256], *f;
	size_t len;

	if (op == REG_REGISTER) {
		send_reg(s, node, id, seq);
		return;
	}
	snprintf(m.node, sizeof(m.node), "%s", node);
	snprintf(g.id, sizeof(g.id), "%s", id);
	if (!msg_encode(&m, &f, &len, err, sizeof(err))) {
		conn_send(s->c, f + MSG_HDR_LEN, len - MSG_HDR_LEN);
		free(f);
	}
}

/*
 * b2's frames that have come, read for up to @ms: the revision of the
 * last full table among them in *@full_rev, the bytes read returned.
 */
static size_t drain_frames(SSL *ssl, int ms, uint64_t want, uint64_t *full_rev)
{
	static unsigned char rb[MSG_HDR_LEN + MSG_MAX_LEN];
	size_t have = 0, total = 0, len;
	int64_t e = mono_ms() + ms;
	char err[256];

	while (*full_rev < want && mono_ms() < e) {
		int r = SSL_read(ssl, rb + have, (int)(sizeof(rb) - have));

		if (r <= 0) {
			int why = SSL_get_error(ssl, r);

			ERR_clear_error();
			if (why == SSL_ERROR_WANT_READ ||
			    (why == SSL_ERROR_SYSCALL && errno == EAGAIN))
				continue;	/* SO_RCVTIMEO: nothing yet */
			break;
		}
		have += (size_t)r;
		total += (size_t)r;
		while (have >= MSG_HDR_LEN &&
		       !msg_frame_len(rb, &len, err, sizeof(err)) &&
		       have >= MSG_HDR_LEN + len) {
			if (frame_full(rb + MSG_HDR_LEN, len))
				*full_rev = routes_frame_rev(rb + MSG_HDR_LEN, len);
			have -= MSG_HDR_LEN + len;
			memmove(rb, rb + MSG_HDR_LEN + len, have);
		}
	}
	return total;
}

/*
 * An SR that does not read (b2: a 4 KiB receive buffer and a 536-byte
 * MSS, so that the kernel holds little of what is sent to it) while
 * 1000 registrations are pushed: the SRD sets it aside at its cap (the
 * test build lowers the 8 MiB to 64 KiB, as 8 MiB would take 32,000
 * instances here), counts it (peers_backlogged) and pushes no more to
 * it; once b2 reads, the tick sends it the full table at the SRD's
 * revision.
 */
static void peer_backlog(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	SSL_CTX *ctx = client_ctx("ca", "b2"), *ctx3 = client_ctx("ca", "b3");
	struct timeval tv = { 0, 200000 };
	uint64_t b0, seq = 0, rev0, rev1, full_rev = 0;
	int fd, rb = 4096, mss = 536, n0, n, ok, set_aside;
	struct json_object *d;
	struct bsr s = { 0 };
	char id[MSG_ID_MAX];
	SSL *ssl = NULL;
	size_t got;
	int64_t t0;

	d = ask("ctl", "{\"test_peer_backlog\":65536}");
	ok = d != NULL && ctx && ctx3;
	json_object_put(d);
	b0 = srd_peers_counter("peers_backlogged");
	fd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rb, sizeof(rb));
	setsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof(mss));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (ok && !connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ssl = SSL_new(ctx);
		SSL_set_fd(ssl, fd);
		ok = SSL_connect(ssl) == 1;
	} else {
		ok = 0;
	}
	/* its first table, read; then it reads nothing */
	ok = ok && drain_frames(ssl, 3000, 1, &full_rev) > 0 && full_rev;
	rev0 = srd_revision(&n0);
	ok = ok && l_connect(&s, ctx3);
	t0 = mono_ms();
	for (int i = 0; ok && i < 1000; i++) {
		snprintf(id, sizeof(id), "bk-%04d", i);
		send_op(&s, REG_REGISTER, "b3", id, &seq);
	}
	ok = ok && WAIT(30000, ({ pump(50); srd_revision(&n) >= rev0 + 1000; }));
	set_aside = WAIT(5000, srd_peers_counter("peers_backlogged") > b0);
	printf("# 1000 registrations pushed in %lld ms; b2 set aside: %d (peers_backlogged %llu -> %llu)\n",
	       (long long)(mono_ms() - t0), set_aside, (unsigned long long)b0,
	       (unsigned long long)srd_peers_counter("peers_backlogged"));
	/* b2 reads now: the table at the SRD's revision comes */
	rev1 = srd_revision(&n);
	t0 = mono_ms();
	got = ok ? drain_frames(ssl, 10000, rev1, &full_rev) : 0;
	printf("# b2 then read %zu bytes in %lld ms: a full table at revision %llu (srd %llu)\n",
	       got, (long long)(mono_ms() - t0), (unsigned long long)full_rev,
	       (unsigned long long)rev1);
	ktap_check(ok && set_aside && full_rev == rev1,
		   "srd: an SR that does not read is set aside at the cap on unsent bytes (peers_backlogged) and gets the full table once it reads");

	for (int i = 0; s.c && i < 1000; i++) {
		snprintf(id, sizeof(id), "bk-%04d", i);
		send_op(&s, REG_DEREGISTER, "b3", id, &seq);
	}
	if (!WAIT(30000, ({ pump(50); srd_revision(&n), n == n0; })))
		printf("# b3's instances not all gone: %d, were %d\n", n, n0);
	json_object_put(ask("ctl", "{\"test_peer_backlog\":0}"));
	if (s.c)
		conn_close(s.c);
	if (ssl)
		SSL_free(ssl);
	close(fd);
	SSL_CTX_free(ctx);
	SSL_CTX_free(ctx3);
}

/* --- the SMO election on etcd -------------------------------------------- */

#define LEASE_S		2	/* smo.election_lease_s: etcd's least */
#define LEASE_MS	(LEASE_S * 1000)
/* offloop_cases(), restore_case(): the etcd calls off the loop, the set's size, a restore */
#define OFFLOOP_CASES	3
#define ELECTION_CASES	(13 + OFFLOOP_CASES)

static pid_t pid_sa, pid_sb, pid_e1, pid_e2;

/* An srd+aam+smo agent of @node on the test's etcd, listening on @p. */
static void config_smo(const char *node, int p)
{
	char t[2048];

	snprintf(t, sizeof(t),
		 "{ \"node\": \"%s\", \"roles\": [\"srd\", \"aam\", \"smo\"], \"control\": \"%s/%s.sock\",\n"
		 "  \"smo\": { \"policies\": \"%s/%s.pol\", \"election_lease_s\": %d },\n"
		 "  \"tls\": { \"ca\": \"%s/ca/ca.crt\", \"cert\": \"%s/ca/%s.crt\",\n"
		 "           \"key\": \"%s/ca/%s.key\", \"crl\": \"%s/ca/crl.pem\" },\n"
		 "  \"srd\": { \"listen\": \"127.0.0.1:%d\", \"store\": { \"etcd\": \"%s\" } } }\n",
		 node, dir, node, dir, node, LEASE_S, dir, dir, node, dir, node, dir,
		 p, cluster_endpoints);
	write_config(node, "%s", t);
}

/* @node's smo election: @key's value as text into @out ("" if none). */
static const char *el_get(const char *node, const char *key, char *out,
			  size_t size)
{
	struct json_object *d = ask(node, "{\"show\":\"policies\"}");
	struct json_object *e = path_get(path_get(d, "smo", NULL), "election", NULL);
	struct json_object *v = path_get(e, key, NULL);

	snprintf(out, size, "%s", v ? json_object_get_string(v) : "");
	json_object_put(d);
	return out;
}

static int seat_is(const char *node, const char *seat)
{
	char b[64];

	return !strcmp(el_get(node, "seat", b, sizeof(b)), seat);
}

static uint64_t smo_counter(const char *node, const char *key)
{
	struct json_object *d = ask(node, "{\"show\":\"policies\"}");
	uint64_t x = json_object_get_uint64(path_get(path_get(d, "smo", NULL), key, NULL));

	json_object_put(d);
	return x;
}

/* @node's SR holds exactly @names at revision @rev (0: any); its "full" count in @full. */
static int sr_holds(const char *node, const char *names, uint64_t rev, uint64_t *full)
{
	char n[1024], t[256];
	uint64_t r = 0, f = 0;

	if (sr_pol(node, &r, n, t, "full", &f))
		return 0;
	if (full)
		*full = f;
	return !strcmp(n, names) && (!rev || r == rev);
}

/* @node's smo relay: @key as text into @out ("" if none). */
static const char *relay_get(const char *node, const char *key, char *out,
			     size_t size)
{
	struct json_object *d = ask(node, "{\"show\":\"policies\"}");
	struct json_object *v = path_get(path_get(path_get(d, "smo", NULL), "relay", NULL),
					 key, NULL);

	snprintf(out, size, "%s", v ? json_object_get_string(v) : "");
	json_object_put(d);
	return out;
}

static uint64_t relay_u64(const char *node, const char *key)
{
	char b[64];

	return strtoull(relay_get(node, key, b, sizeof(b)), NULL, 10);
}

/* The term @node's SR applied last (0: none, or no answer). */
static uint64_t sr_term(const char *node)
{
	char n[1024], t[256];
	uint64_t r, term = 0;

	return sr_pol(node, &r, n, t, "term", &term) ? 0 : term;
}

static void election_skip(int from, const char *why)
{
	for (int k = from; k < ELECTION_CASES; k++)
		printf("ok %d election case %d # SKIP %s\n", ++ktap_n, k + 1, why);
}

/* A counter of @node's srd show peers. */
static uint64_t peers_counter(const char *node, const char *key)
{
	struct json_object *d = ask(node, "{\"show\":\"peers\"}");
	uint64_t x = json_object_get_uint64(path_get(path_get(d, "srd", NULL), key, NULL));

	json_object_put(d);
	return x;
}

/* @node's SRD stored no registration for @ms, within @deadline ms. */
static int srd_quiet(const char *node, int ms, int deadline)
{
	int64_t end = mono_ms() + deadline, since = mono_ms();
	uint64_t n = 0, k;
	struct json_object *d;

	for (int first = 1; mono_ms() < end; first = 0) {
		d = ask(node, "{\"show\":\"instances\"}");
		k = json_object_get_uint64(path_get(path_get(d, "srd", NULL), "registered", NULL));
		json_object_put(d);
		if (first || k != n) {
			n = k;
			since = mono_ms();
		} else if (mono_ms() - since >= ms) {
			return 1;
		}
		usleep(50000);
	}
	return 0;
}

static void offloop_cases(int port_a);
static void restore_case(int port_a);

/*
 * The registry shared by two SRD agents on one etcd, each with an SR:
 * smoa (e1's) and smob (e2's). An instance registered through one
 * reaches the other's SR by the etcd watch; with an etcd member killed
 * it still does; an instance whose SR died expires in etcd and is
 * withdrawn at the SR of the other SRD. The SRs' digests match on the
 * etcd store too.
 */
static void shared_registry(void)
{
	int ok, ok_smob, has = 0, gone;
	uint64_t rev = 0, m0, x0, x;
	int64_t t;

	/* smob back (following), e2 at it again (it dials smob first) */
	pid_sb = spawn("smob");
	ok = WAIT(15000, seat_is("smob", "follower"));
	stop(&pid_e2);
	pid_e2 = spawn("e2");
	ok = ok && WAIT(15000, ({
		struct json_object *d = ask("smob", "{\"show\":\"peers\"}");
		struct json_object *p = path_get(path_get(d, "srd", NULL), "peers", NULL);
		int k = arr_len(p) == 1 && json_object_get_boolean(
			path_get(json_object_array_get_idx(p, 0), "synced", NULL));

		json_object_put(d);
		k; }));
	ok = ok && !reg("e1", "mi-ea", "fc00:e1::a");
	t = mono_ms();
	ok = ok && WAIT(5000, sr_routes("e2", &rev, "mi-ea", &has) == 1 && has);
	t = mono_ms() - t;
	ok = ok && sr_routes("e1", &rev, "mi-ea", &has) == 1 && has;
	printf("# mi-ea registered through e1 at smoa: at e2 (at smob) after %lld ms\n",
	       (long long)t);
	printf("# pushes from an SR's own revision (a full table listed past a push): smoa %llu, smob %llu\n",
	       (unsigned long long)peers_counter("smoa", "pushes_overlapped"),
	       (unsigned long long)peers_counter("smob", "pushes_overlapped"));
	/* the route may come by a digest's push first; the watch wakes anyway */
	ktap_check(ok && WAIT(3000, peers_counter("smob", "watch_wakes") > 0),
		   "shared etcd: an instance registered through SRD smoa reaches the SR of SRD smob (etcd watch)");

	/* one etcd member killed: the registry goes on */
	cluster_kill(0);
	ok = !reg("e2", "mi-eb", "fc00:e2::b");
	t = mono_ms();
	ok = ok && WAIT(8000, sr_routes("e1", &rev, "mi-eb", &has) == 2 && has);
	t = mono_ms() - t;
	ok = ok && WAIT(3000, sr_routes("e2", &rev, "mi-eb", &has) == 2 && has);
	printf("# etcd member 0 killed: mi-eb registered through e2 at smob, at e1 (at smoa) after %lld ms\n",
	       (long long)t);
	ktap_check(ok, "shared etcd: with an etcd member killed, an instance registered through smob reaches smoa's SR");

	/*
	 * e2 is smob's only SR and it is killed below: a digest of e2's must
	 * have reached smob and matched before, which the test cannot take
	 * for granted (e2 has been at smob for about one digest period, and
	 * smob's loop may have waited seconds for the etcd member killed).
	 * Until then e2 may still be registering mi-eb again (so may e1
	 * mi-ea), and pushes of it would hide the case below: both SRDs
	 * quiet for a second, e1 matched at smoa too.
	 */
	m0 = peers_counter("smoa", "digests_matched");
	ok_smob = WAIT(8000, peers_counter("smob", "digests_matched") > 0);
	srd_quiet("smob", 1000, 10000);
	srd_quiet("smoa", 1000, 10000);
	WAIT(8000, peers_counter("smoa", "digests_matched") > m0);

	/*
	 * A table really wrong is still found on etcd: e1 loses mi-eb (of
	 * e2, through smob) behind smoa's back; e1's own instances it would
	 * register again itself.
	 */
	x0 = peers_counter("smoa", "digest_mismatches");
	{
		struct json_object *d = ask("e1", "{\"test_drop_route\":\"mi-eb\"}");

		/* e1 answered that it dropped the route (ask(): an ok
		 * answer's data, else NULL) */
		ok = d != NULL;
		json_object_put(d);
	}
	/*
	 * Seen gone, as a rule; but a digest sent just after the drop can
	 * bring the repair before this first look (once, at load 2: "repaired
	 * after 0 ms; smoa mismatches 1"), and then the mismatch counted
	 * says the drop was seen.
	 */
	gone = sr_routes("e1", &rev, "mi-eb", &has) == 1 && !has;
	t = mono_ms();
	ok = ok && WAIT(8000, sr_routes("e1", &rev, "mi-eb", &has) == 2 && has);
	t = mono_ms() - t;
	x = peers_counter("smoa", "digest_mismatches");
	printf("# e1's table corrupted (mi-eb dropped, %s): repaired after %lld ms; smoa mismatches %llu\n",
	       gone ? "seen gone" : "repaired before the first look",
	       (long long)t, (unsigned long long)(x - x0));
	/*
	 * x0 + 1; or x0 when a full table e1 was waiting for (a sync the
	 * SRD limited, sent from its tick) repaired it first.
	 */
	ktap_check(ok && x <= x0 + 1 && (gone || x == x0 + 1),
		   "shared etcd: a route dropped behind smoa's back: e1's next digest differs, its table is repaired");

	/* e2 dies: mi-eb's lease runs out in etcd, smoa's SR loses it */
	stop(&pid_e2);
	t = mono_ms();
	ok = sr_routes("e1", &rev, "mi-eb", &has) == 2 && has;
	ok = ok && WAIT(10000, sr_routes("e1", &rev, "mi-eb", &has) == 1 && !has);
	t = mono_ms() - t;
	ok = ok && sr_routes("e1", &rev, "mi-ea", &has) == 1 && has;
	printf("# e2 killed: its mi-eb withdrawn at e1 after %lld ms (ttl %d ms)\n",
	       (long long)t, 3 * sr_hb_ms);
	ktap_check(ok, "shared etcd: an instance whose SR died expires in etcd and is withdrawn at the other SRD's SR; mi-ea stays");

	/*
	 * The SRs' digests on the etcd store: matched (e1's once more after
	 * mi-eb's expiry), none found wrong but the one dropped above (a
	 * change through the other SRD or etcd's expiry, its watch event not
	 * yet in, is deferred).
	 */
	m0 = peers_counter("smoa", "digests_matched");
	ok = WAIT(10 * DIGEST_MS, peers_counter("smoa", "digests_matched") > m0) &&
	     ok_smob && peers_counter("smoa", "digest_mismatches") == x &&
	     peers_counter("smob", "digest_mismatches") == 0;
	for (int k = 0; k < 2; k++) {
		const char *s = k ? "smob" : "smoa";

		printf("# digests on etcd at %s: %llu received, matched %llu deferred %llu (full table forced %llu) mismatched %llu, full tables %llu\n",
		       s, (unsigned long long)peers_counter(s, "digests"),
		       (unsigned long long)peers_counter(s, "digests_matched"),
		       (unsigned long long)peers_counter(s, "digests_deferred"),
		       (unsigned long long)peers_counter(s, "digests_forced"),
		       (unsigned long long)peers_counter(s, "digest_mismatches"),
		       (unsigned long long)peers_counter(s, "full_tables"));
	}
	ktap_check(ok, "shared etcd: the SRs' digests match the registry on etcd at both SRDs, none mismatched but the route dropped");
}

/*
 * Two controllers, smoa and smob (srd+aam+smo, lease 2 s), on one etcd,
 * with different policy files; e1 dials smoa first, e2 smob first. The
 * leader's set goes through etcd to both SMOs, which push it to their
 * SRs with its term; a follower's own set is pushed by no one; smoa
 * killed, smob leads within 2 leases and both SRs take its set at a
 * higher term; smob stopped cleanly resigns, and smoa's set (at a lower
 * revision, a higher term) replaces it at the SRs.
 */
static void election_cases(void)
{
	char pa1[1024], pa2[1024], pb1[1024], pb2[1024], srds[256], err[256];
	char buf[1024], b1[64];
	int port_a, port_b, ok, status;
	uint64_t f1 = 0, f2 = 0, g1 = 0, g2 = 0, term1, term2;
	int64_t t0, t_lead, t_set;

	if (sh("command -v etcd >/dev/null")) {
		election_skip(0, "no etcd (Debian's etcd-server)");
		return;
	}
	ok = !cluster_up(err, sizeof(err));
	ktap_check(ok, "election: a three-member etcd on loopback for two controllers");
	if (!ok) {
		printf("# %s\n", err);
		election_skip(1, "no etcd cluster");
		return;
	}
	port_a = free_port();
	do
		port_b = free_port();
	while (port_b == port_a);
	policy_text(pa1, sizeof(pa1), "pa1", "e1", 300, 1);
	policy_text(pa2, sizeof(pa2), "pa2", "e2", 301, 1);
	policy_text(pb1, sizeof(pb1), "pb1", "e1", 310, 1);
	policy_text(pb2, sizeof(pb2), "pb2", "e2", 311, 1);
	write_policies("smoa.pol", pa1, pa2);
	write_policies("smob.pol", pb1, pb2);
	config_smo("smoa", port_a);
	config_smo("smob", port_b);
	snprintf(srds, sizeof(srds),
		 "{ \"node\": \"smoa\", \"address\": \"127.0.0.1:%d\" }, "
		 "{ \"node\": \"smob\", \"address\": \"127.0.0.1:%d\" }", port_a, port_b);
	sr_hb_ms = 700;		/* a lease of 2.1 s: etcd's least is 2 s */
	config_sr_to("e1", srds);
	snprintf(srds, sizeof(srds),
		 "{ \"node\": \"smob\", \"address\": \"127.0.0.1:%d\" }, "
		 "{ \"node\": \"smoa\", \"address\": \"127.0.0.1:%d\" }", port_b, port_a);
	config_sr_to("e2", srds);

	/* smoa first: it takes the empty seat; smob finds it taken */
	pid_sa = spawn("smoa");
	ok = WAIT(15000, seat_is("smoa", "leader"));
	pid_sb = spawn("smob");
	ok = ok && WAIT(15000, seat_is("smob", "follower") &&
			!strcmp(el_get("smob", "leader", b1, sizeof(b1)), "smoa"));
	snprintf(buf, sizeof(buf),
		 "%s agent socket %s/smob.sock show policies | grep -q '^smo election follower leader smoa key /dmsc/smo/leader lease_s 2 terms_won 0 ' && "
		 "%s -j agent socket %s/smob.sock show policies | grep -q '\"seat\":\"follower\",\"leader\":\"smoa\"'",
		 dmsc_bin, dir, dmsc_bin, dir);
	ok = ok && !sh("%s", buf);
	ktap_check(ok, "election: smoa leads, smob follows naming it (dmsc agent show policies, text and -j)");

	/*
	 * The leader's set, relayed through etcd: e1 (at the leader) and e2
	 * (at the follower smob) both hold smoa's, of one term; smob's own
	 * change is not pushed, not even after a whole lease.
	 */
	pid_e1 = spawn("e1");
	pid_e2 = spawn("e2");
	ok = WAIT(15000, sr_holds("e1", "pa1", 1, NULL) && sr_holds("e2", "pa2", 1, NULL));
	term1 = sr_term("e2");
	policy_text(pb1, sizeof(pb1), "pb3", "e2", 312, 1);
	write_policies("apply-b.json", pb1, NULL);
	ok = ok && !sh("%s agent socket %s/smob.sock policy apply %s/apply-b.json",
		       dmsc_bin, dir, dir);
	usleep(LEASE_MS * 1000);
	ok = ok && sr_holds("e2", "pa2", 1, NULL) && sr_holds("e1", "pa1", 1, NULL) &&
	     term1 > 0 && sr_term("e1") == term1 && relay_u64("smob", "term") == term1 &&
	     !strcmp(relay_get("smob", "leader", b1, sizeof(b1)), "smoa") &&
	     relay_u64("smob", "relayed") >= 1 && relay_u64("smob", "writes") == 0 &&
	     relay_u64("smoa", "writes") >= 1 && smo_counter("smob", "rev") == 2 &&
	     strtoull(el_get("smob", "withheld", b1, sizeof(b1)), NULL, 10) >= 1;
	snprintf(buf, sizeof(buf),
		 "%s agent socket %s/smob.sock show policies | grep -q '^smo relay term %llu leader smoa revision 1 policies 2 relayed ' && "
		 "%s agent socket %s/e2.sock show policies | grep -q '^sr revision 1 .* term %llu stale_term 0$'",
		 dmsc_bin, dir, (unsigned long long)term1, dmsc_bin, dir,
		 (unsigned long long)term1);
	ok = ok && !sh("%s", buf);
	ktap_check(ok, "election: the leader's set through etcd: e1 (at smoa) holds pa1, e2 (at the follower smob) pa2, of one term; smob's own revision 2 withheld (show policies, text)");
	if (!ok)
		printf("# smob relayed %llu term %llu withheld %s; SR terms e1 %llu e2 %llu\n",
		       (unsigned long long)relay_u64("smob", "relayed"),
		       (unsigned long long)relay_u64("smob", "term"),
		       el_get("smob", "withheld", b1, sizeof(b1)),
		       (unsigned long long)sr_term("e1"), (unsigned long long)term1);

	/*
	 * Changes at the leader reach the follower's SR: five of them (a
	 * weight changed each time), each timed as polled, from the CLI's
	 * start to e2 holding it, and by the SMOs' own clocks (one machine,
	 * CLOCK_MONOTONIC; no polling in it): smoa's write to smob's read.
	 */
	{
		int64_t worst = 0, relay[5];
		uint64_t tprev = term1;
		int k, rounds_ok = 1;

		for (k = 0; k < 5 && rounds_ok; k++) {
			int64_t ta, tb;

			policy_text(pa1, sizeof(pa1), "pa3", "e2", 302, k + 1);
			write_policies("apply-a.json", pa1, NULL);
			t0 = mono_ms();
			rounds_ok = !sh("%s agent socket %s/smoa.sock policy apply %s/apply-a.json",
					dmsc_bin, dir, dir) &&
				    WAIT(3000, sr_holds("e2", "pa2,pa3", 2 + k, NULL));
			t_set = mono_ms() - t0;
			ta = mono_ms() - (int64_t)relay_u64("smoa", "age_ms");
			tb = mono_ms() - (int64_t)relay_u64("smob", "age_ms");
			relay[k] = tb - ta;
			term2 = sr_term("e2");
			rounds_ok = rounds_ok && term2 > tprev;
			tprev = term2;
			if (t_set > worst)
				worst = t_set;
			printf("# change %d at the leader smoa: at e2 (at the follower smob) after %lld ms as polled; smob read it %lld ms after smoa wrote it; term %llu\n",
			       k + 1, (long long)t_set, (long long)relay[k],
			       (unsigned long long)term2);
		}
		/* e1 (at smoa) applies on its own time: waited for, not raced */
		ok = rounds_ok && worst <= 1000 && WAIT(3000, sr_holds("e1", "pa1", 6, NULL));
		if (!ok) {
			char n[1024], t[256];
			uint64_t r = 0;

			sr_pol("e1", &r, n, t, NULL, NULL);
			printf("# rounds %d (all ok: %d), worst %lld ms, e1 holds [%s] at %llu\n", k,
			       rounds_ok, (long long)worst, n, (unsigned long long)r);
		}
	}
	ktap_check(ok, "election: five changes applied at the leader reach the SR of the follower, each within 1 s and at a higher term");

	/*
	 * A value that is not a set, put by hand where the set is: both
	 * SMOs refuse it and relay none; the leader, its set no longer
	 * published, writes it again at its next step, at a higher term,
	 * which both SRs take.
	 */
	{
		static const char key[] = "/dmsc/smo/policies", bad[] = "{\"leader\":\"x\"}";
		struct etcd *e = etcd_open(cluster_endpoints, err, sizeof(err));
		struct json_object *q = json_object_new_object(), *resp;
		uint64_t w0 = relay_u64("smoa", "writes"), tb = sr_term("e2");

		json_object_object_add(q, "key", etcd_b64(key, strlen(key)));
		json_object_object_add(q, "value", etcd_b64(bad, strlen(bad)));
		ok = e && !etcd_call(e, "/v3/kv/put", q, &resp, err, sizeof(err));
		if (ok)
			json_object_put(resp);
		ok = ok && WAIT(3 * LEASE_MS, relay_u64("smob", "refused") >= 1 &&
				relay_u64("smoa", "refused") >= 1 &&
				relay_u64("smoa", "writes") > w0 && sr_term("e2") > tb &&
				sr_term("e1") == sr_term("e2") &&
				relay_u64("smob", "term") == sr_term("e2"));
		ok = ok && sr_holds("e2", "pa2,pa3", 6, NULL) && sr_holds("e1", "pa1", 6, NULL);
		printf("# a value that is not a set put by hand: refused at smoa %llu, smob %llu; smoa's writes %llu -> %llu; SR terms %llu -> %llu\n",
		       (unsigned long long)relay_u64("smoa", "refused"),
		       (unsigned long long)relay_u64("smob", "refused"),
		       (unsigned long long)w0, (unsigned long long)relay_u64("smoa", "writes"),
		       (unsigned long long)tb, (unsigned long long)sr_term("e2"));
		ktap_check(ok, "election: a value put by hand that is not a set is refused by both SMOs; the leader writes its set again, which both SRs take at a higher term");
		json_object_put(q);
		etcd_close(e);
	}

	/* the leader dies: smob leads; e1 fails over to it, e2 is there */
	sr_holds("e1", "pa1", 0, &f1);
	sr_holds("e2", "pa2,pa3", 0, &f2);
	stop(&pid_sa);
	t0 = mono_ms();
	ok = WAIT(4 * LEASE_MS, seat_is("smob", "leader"));
	t_lead = mono_ms() - t0;
	ok = ok && WAIT(4 * LEASE_MS, sr_holds("e1", "pb1", 2, &g1) &&
			sr_holds("e2", "pb2,pb3", 2, &g2));
	t_set = mono_ms() - t0;
	printf("# smoa killed (SIGKILL): smob led after %lld ms, e1 and e2 held its set after %lld ms (lease %d s)\n",
	       (long long)t_lead, (long long)t_set, LEASE_S);
	ktap_check(t_lead <= 2 * LEASE_MS && seat_is("smob", "leader") &&
		   !strcmp(el_get("smob", "terms_won", b1, sizeof(b1)), "1"),
		   "election: the leader killed: the follower leads within 2 leases");
	printf("# terms: e1 %llu, e2 %llu (smoa's last %llu)\n",
	       (unsigned long long)sr_term("e1"), (unsigned long long)sr_term("e2"),
	       (unsigned long long)term2);
	ktap_check(ok && t_set <= 2 * LEASE_MS && g1 > f1 && g2 > f2 &&
		   sr_term("e1") > term2 && sr_term("e2") == sr_term("e1"),
		   "election: both SRs take the new leader's whole set (full) at its revision 2, of one higher term, within 2 leases");

	/* a clean stop resigns: smoa (back, following) leads within a lease */
	pid_sa = spawn("smoa");
	ok = WAIT(15000, seat_is("smoa", "follower"));
	sr_holds("e1", "pb1", 0, &f1);
	kill(pid_sb, SIGTERM);
	waitpid(pid_sb, &status, 0);
	pid_sb = 0;
	t0 = mono_ms();
	ok = ok && WAIT(4 * LEASE_MS, seat_is("smoa", "leader"));
	t_lead = mono_ms() - t0;
	ok = ok && WAIT(4 * LEASE_MS, sr_holds("e1", "pa1", 1, &g1) &&
			sr_holds("e2", "pa2", 1, NULL));
	printf("# smob stopped (SIGTERM): smoa led after %lld ms\n", (long long)t_lead);
	snprintf(buf, sizeof(buf), "grep -q 'smo: election: resigning' %s/smob.log", dir);
	ok = ok && t_lead <= LEASE_MS && !sh("%s", buf) && g1 > f1;
	ktap_check(ok, "election: the leader stopped (SIGTERM) resigns: the other leads within a lease; the SRs at revision 2 take its full set at revision 1");

	offloop_cases(port_a);
	shared_registry();
	restore_case(port_a);
	stop(&pid_e1);
	stop(&pid_e2);
	stop(&pid_sa);
	stop(&pid_sb);
	cluster_down();
}

/* --- the SMO's etcd calls off the loop, the set's size, an etcd restore --- */

/* The first of the cluster's endpoints, for etcdctl (which wants one). */
static void first_endpoint(char *out, size_t size)
{
	snprintf(out, size, "%s", cluster_endpoints);
	out[strcspn(out, ",")] = '\0';
}

/* smoa's config with smo.relay_max_bytes @max (0: config_smo's). */
static void config_smo_max(int p, unsigned int max)
{
	char t[2048];

	if (!max) {
		config_smo("smoa", p);
		return;
	}
	snprintf(t, sizeof(t),
		 "{ \"node\": \"smoa\", \"roles\": [\"srd\", \"aam\", \"smo\"], \"control\": \"%s/smoa.sock\",\n"
		 "  \"smo\": { \"policies\": \"%s/smoa.pol\", \"election_lease_s\": %d, \"relay_max_bytes\": %u },\n"
		 "  \"tls\": { \"ca\": \"%s/ca/ca.crt\", \"cert\": \"%s/ca/smoa.crt\",\n"
		 "           \"key\": \"%s/ca/smoa.key\", \"crl\": \"%s/ca/crl.pem\" },\n"
		 "  \"srd\": { \"listen\": \"127.0.0.1:%d\", \"store\": { \"etcd\": \"%s\" } } }\n",
		 dir, dir, LEASE_S, max, dir, dir, dir, dir, p, cluster_endpoints);
	write_config("smoa", t);
}

/* @peer's SR is connected to @node's srd (in its smo's peers). */
static int smo_has_peer(const char *node, const char *peer)
{
	struct json_object *d = ask(node, "{\"show\":\"policies\"}");
	struct json_object *a = path_get(path_get(d, "smo", NULL), "peers", NULL);
	int has = 0;

	for (int k = 0; k < arr_len(a); k++) {
		const char *n = json_object_get_string(path_get(json_object_array_get_idx(a, k),
								"node", NULL));

		has |= n && !strcmp(n, peer);
	}
	json_object_put(d);
	return has;
}

/*
 * smoa stopped cleanly (it resigns) and started again, leading (smob is
 * down), with e1 back on it (the shared registry's cases want e1 there).
 */
static int smoa_again(int p, unsigned int max)
{
	int status;

	if (pid_sa > 0) {
		kill(pid_sa, SIGTERM);
		waitpid(pid_sa, &status, 0);
		pid_sa = 0;
	}
	config_smo_max(p, max);
	pid_sa = spawn("smoa");
	return WAIT(15000, seat_is("smoa", "leader") && relay_u64("smoa", "writes") >= 1 &&
			   smo_has_peer("smoa", "e1"));
}

/*
 * One window of 3 s with etcd member 0 (the first endpoint of every
 * etcd handle of smoa's, restarted for it) stopped with SIGSTOP, so that
 * a call to it hangs until its timeout, and pa5 applied at the leader
 * smoa in it (its write, then the relay's reads and the steps). With
 * @pause_srs, e1 and e2 are stopped too: they send the SRD no digest,
 * whose check reads the registry from etcd on the loop (srd_role.c), so
 * what holds the loop is the SMO's. smoa's lateness timer (a 100 ms tick
 * on its loop) says how long the loop was held at most (*@late), the CLI
 * how long the apply took (*@apply); *@hung counts the SMO's calls that
 * failed (steps, reads, writes). 1 if smoa led and e1 held pa5 after.
 */
static int hang_window(int port_a, int pause_srs, int64_t *late, int64_t *apply,
		       uint64_t *hung)
{
	char b[64], p[1024];
	uint64_t e0, r0, w0;
	int64_t t0;
	int ok;

	ok = smoa_again(port_a, 0) && WAIT(15000, sr_holds("e1", "pa1", 1, NULL));
	e0 = strtoull(el_get("smoa", "errors", b, sizeof(b)), NULL, 10);
	r0 = relay_u64("smoa", "read_errors");
	w0 = relay_u64("smoa", "write_failures");
	policy_text(p, sizeof(p), "pa5", "e1", 303, 1);
	write_policies("apply-h.json", p, NULL);
	if (pause_srs) {
		kill(pid_e1, SIGSTOP);
		kill(pid_e2, SIGSTOP);
		/*
		 * What they sent before the stop (a digest every 300 ms, a
		 * renewal every 700 ms) is read by smoa now, while member 0
		 * still answers: one left in smoa's socket would be checked
		 * against etcd on the loop after the stop (a CI run saw the
		 * loop held 4956 ms that way, the apply answered after it).
		 */
		usleep(500 * 1000);
	}
	kill(cluster_member[0], SIGSTOP);
	t0 = mono_ms();
	ok = ok && !sh("%s agent socket %s/smoa.sock policy apply %s/apply-h.json >/dev/null",
		       dmsc_bin, dir, dir);
	*apply = mono_ms() - t0;
	usleep(3000 * 1000);
	*late = strtoll(el_get("smoa", "loop_late_max_ms", b, sizeof(b)), NULL, 10);
	*hung = strtoull(el_get("smoa", "errors", b, sizeof(b)), NULL, 10) - e0 +
		relay_u64("smoa", "read_errors") - r0 +
		relay_u64("smoa", "write_failures") - w0;
	kill(cluster_member[0], SIGCONT);
	if (pause_srs) {
		kill(pid_e1, SIGCONT);
		kill(pid_e2, SIGCONT);
	}
	return ok && WAIT(15000, seat_is("smoa", "leader") &&
			  sr_holds("e1", "pa1,pa5", 2, NULL));
}

/*
 * The loop while an etcd member does not answer (hang_window()), the
 * SRs paused: the check; then with them sending digests: a figure. Also
 * the snapshot that restore_case() restores, and smo.relay_max_bytes.
 */
static void offloop_cases(int port_a)
{
	char b[64], ep[256], p[1024], big[24 * 1100], err[512];
	int64_t late, t_apply, late2, t_apply2;
	uint64_t term0, w0, hung, hung2;
	size_t off;
	int ok, ok2;
	FILE *f;

	first_endpoint(ep, sizeof(ep));
	sh("etcdctl --endpoints=%s snapshot save %s/etcd.snap >%s/snap.log 2>&1", ep, dir, dir);
	ok = hang_window(port_a, 1, &late, &t_apply, &hung);
	printf("# etcd member 0 stopped (SIGSTOP) for 3 s, the SRs paused: smoa's loop late at most %lld ms; the apply answered in %lld ms; SMO calls that hung and failed: %llu\n",
	       (long long)late, (long long)t_apply, (unsigned long long)hung);
	ktap_check(ok && hung >= 1 && late < 250 && t_apply < 250,
		   "etcd off the loop: with an etcd member hanging (SMO calls failing on it), smoa's loop is held under 250 ms (its etcd calls in threads), the apply answers at once, e1 gets the change after");
	ok2 = hang_window(port_a, 0, &late2, &t_apply2, &hung2);
	printf("# the same with the SRs sending digests: smoa's loop late at most %lld ms (the SRD's digest check reads etcd on the loop, 5 s at most); the apply answered in %lld ms; SMO calls that hung and failed: %llu%s\n",
	       (long long)late2, (long long)t_apply2, (unsigned long long)hung2,
	       ok2 ? "" : "; smoa did not lead with e1 holding pa5 after");

	/*
	 * smo.relay_max_bytes 4096 at smoa: an apply whose set would be
	 * larger is refused whole, counted; etcd and the SRs keep the set
	 * before; a small apply goes through after it.
	 */
	ok = smoa_again(port_a, 4096) && WAIT(15000, sr_holds("e1", "pa1", 1, NULL));
	term0 = relay_u64("smoa", "term");
	w0 = relay_u64("smoa", "writes");
	off = (size_t)snprintf(big, sizeof(big), "{ \"policies\": [ ");
	for (int k = 0; k < 20; k++) {
		snprintf(b, sizeof(b), "big%d", k);
		policy_text(p, sizeof(p), b, "e9", 400 + k, 1);
		off += (size_t)snprintf(big + off, sizeof(big) - off, "%s%s", k ? ", " : "", p);
	}
	snprintf(big + off, sizeof(big) - off, " ] }\n");
	snprintf(err, sizeof(err), "%s/apply-big.json", dir);
	f = fopen(err, "w");
	if (f) {
		fputs(big, f);
		fclose(f);
	}
	ok = ok && sh("%s agent socket %s/smoa.sock policy apply %s/apply-big.json 2>%s/big.err",
		      dmsc_bin, dir, dir, dir) != 0 &&
	     !sh("grep -q 'over smo.relay_max_bytes (4096)' %s/big.err", dir) &&
	     relay_u64("smoa", "too_large") == 1 && smo_counter("smoa", "rev") == 1 &&
	     relay_u64("smoa", "term") == term0 && relay_u64("smoa", "writes") == w0;
	write_policies("apply-small.json", p, NULL);
	ok = ok && !sh("%s agent socket %s/smoa.sock policy apply %s/apply-small.json",
		       dmsc_bin, dir, dir) &&
	     WAIT(3000, relay_u64("smoa", "term") > term0 && sr_holds("e1", "pa1", 2, NULL));
	sh("sed 's/^/# /' %s/big.err", dir);
	printf("# a set of %zu bytes of JSON applied at smoa (smo.relay_max_bytes 4096): too_large %llu, revision %llu, term %llu (was %llu)\n",
	       off, (unsigned long long)relay_u64("smoa", "too_large"),
	       (unsigned long long)smo_counter("smoa", "rev"),
	       (unsigned long long)relay_u64("smoa", "term"), (unsigned long long)term0);
	ktap_check(ok, "relay size: an apply whose set is over smo.relay_max_bytes is refused with the limit named, counted (too_large); etcd and e1 keep the set before; the next small apply is written");
	ok = smoa_again(port_a, 0);
	if (!ok)
		printf("# smoa did not lead again\n");
}

/*
 * etcd restored from the snapshot offloop_cases() saved (etcdctl
 * snapshot restore into a new data directory, one member started on it):
 * its revisions went back and it is a new cluster (cluster_id). e1 had
 * a term of the old cluster above every revision of the restored one;
 * it takes smoa's set at the lower term, as a new epoch.
 */
static void restore_case(int port_a)
{
	char p[1024], n[1024], t[256], url[64], peer[64];
	uint64_t term_old, term_new, epochs = 0, stale = 0, r;
	int cport, pport, ok, status;
	int64_t t0;
	FILE *f;
	pid_t etcd_pid = 0;

	if (sh("command -v etcdctl >/dev/null")) {
		printf("ok %d etcd restore # SKIP no etcdctl (Debian's etcd-client)\n", ++ktap_n);
		return;
	}
	policy_text(p, sizeof(p), "pa6", "e1", 304, 1);
	write_policies("apply-r.json", p, NULL);
	ok = WAIT(15000, seat_is("smoa", "leader")) &&
	     !sh("%s agent socket %s/smoa.sock policy apply %s/apply-r.json",
		 dmsc_bin, dir, dir) &&
	     WAIT(5000, sr_holds("e1", "pa1,pa6", 2, NULL) &&
		  sr_term("e1") == relay_u64("smoa", "term"));
	term_old = sr_term("e1");
	/* every controller down, the old cluster gone */
	kill(pid_sa, SIGTERM);
	waitpid(pid_sa, &status, 0);
	pid_sa = 0;
	if (pid_sb > 0) {
		kill(pid_sb, SIGTERM);
		waitpid(pid_sb, &status, 0);
		pid_sb = 0;
	}
	for (int k = 0; k < 3; k++)
		cluster_kill(k);
	cport = free_port();
	do
		pport = free_port();
	while (pport == cport);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", cport);
	snprintf(peer, sizeof(peer), "http://127.0.0.1:%d", pport);
	ok = ok && !sh("etcdctl snapshot restore %s/etcd.snap --data-dir %s/restored --name r0 "
		       "--initial-cluster r0=%s --initial-advertise-peer-urls %s "
		       "--initial-cluster-token restored >%s/restore.log 2>&1",
		       dir, dir, peer, peer, dir) &&
	     !sh("(etcd --name r0 --data-dir %s/restored --listen-client-urls %s "
		 "--advertise-client-urls %s --listen-peer-urls %s "
		 "--initial-advertise-peer-urls %s --initial-cluster r0=%s "
		 "--log-level warn >%s/r0.log 2>&1 & echo $! >%s/r0.pid)",
		 dir, url, url, peer, peer, peer, dir, dir);
	snprintf(n, sizeof(n), "%s/r0.pid", dir);
	f = fopen(n, "r");
	if (f) {
		if (fscanf(f, "%d", &etcd_pid) != 1)
			etcd_pid = 0;
		fclose(f);
	}
	snprintf(cluster_endpoints, sizeof(cluster_endpoints), "%s", url);
	config_smo("smoa", port_a);
	t0 = mono_ms();
	pid_sa = spawn("smoa");
	ok = ok && WAIT(30000, seat_is("smoa", "leader") &&
			relay_u64("smoa", "writes") >= 1 &&
			sr_holds("e1", "pa1", 1, NULL) &&
			sr_term("e1") == relay_u64("smoa", "term"));
	term_new = sr_term("e1");
	sr_pol("e1", &r, n, t, "epoch_changes", &epochs);
	sr_pol("e1", &r, n, t, "stale_term", &stale);
	printf("# etcd restored from a snapshot (etcdctl snapshot restore, one member): e1's term %llu of the old cluster -> %llu of the restored one after %lld ms, epoch_changes %llu, stale_term %llu\n",
	       (unsigned long long)term_old, (unsigned long long)term_new,
	       (long long)(mono_ms() - t0), (unsigned long long)epochs,
	       (unsigned long long)stale);
	ktap_check(ok && term_new && term_new < term_old && epochs >= 1,
		   "etcd restore: e1 takes the restored cluster's set at a lower term, as a new epoch (epoch_changes), without its state file edited");
	stop(&pid_sa);
	if (etcd_pid > 0)
		kill(etcd_pid, SIGKILL);
}

/* --- the cases ------------------------------------------------------------ */

static void dump_logs(void)
{
	sh("for f in %s/*.log; do echo \"# == $f\"; tail -n 15 $f | sed 's/^/# /'; done", dir);
}

int main(int argc, char **argv)
{
	char buf[8192], big[64];
	struct msg_reg g;
	uint64_t rev, rev0, rev1, expired0;
	int n, n0, n1, has, ok, status;
	int64_t t;

	if (argc != 4) {
		fprintf(stderr, "usage: test_roles AGENT DMSC-PKI DMSC\n");
		return 2;
	}
	agent_bin = argv[1];
	pki_bin = argv[2];
	dmsc_bin = argv[3];
	signal(SIGPIPE, SIG_IGN);
	ktap_plan(41 + SR_EPOCH_CASES + ELECTION_CASES);
	agents_dir = dir;
	if (!mkdtemp(dir))
		return 1;
	ok = !sh("(set -e; p=%s; d=%s;"
		 " $p -d $d/ca init; $p -d $d/ca node ctl --roles srd,aam,smo;"
		 " $p -d $d/ca node fsr --roles sr;"
		 " for n in n1 n2 n3; do $p -d $d/ca node $n --roles sr; done;"
		 " $p -d $d/ca node smo1 --roles smo;"
		 " for n in smoa smob; do $p -d $d/ca node $n --roles srd,aam,smo; done;"
		 " for n in e1 e2; do $p -d $d/ca node $n --roles sr; done;"
		 " $p -d $d/ca node old --roles sr --expired;"
		 " $p -d $d/ca node gone --roles sr; $p -d $d/ca revoke gone;"
		 " for i in 0 1 2 3 4 5 6 7 8 9; do $p -d $d/ca node b$i --roles sr; done;"
		 " $p -d $d/other init; $p -d $d/other node n3 --roles sr) >%s/pki.log 2>&1",
		 pki_bin, dir, dir);
	ktap_check(ok, "dmsc-pki made the CA and the node certificates");
	if (!ok)
		return ktap_finish();
	port = free_port();
	{
		char a[1024], b[1024];

		policy_text(a, sizeof(a), "p1", "n1", 100, 3);
		policy_text(b, sizeof(b), "p2", "n2", 200, 2);
		write_policies("policies.json", a, b);
	}
	config_ctl("");
	config_sr("n1");
	config_sr("n2");
	pid_ctl = spawn("ctl");
	WAIT(15000, access(strcat(strcpy(buf, dir), "/ctl.sock"), F_OK) == 0);
	pid_n1 = spawn("n1");
	pid_n2 = spawn("n2");

	/* 2: both SRs connected and given the (empty) table (ASan agents on a
	 * machine shared with VMs may take seconds to start)
	 */
	ok = WAIT(20000, ({
		struct json_object *d = ask("ctl", "{\"show\":\"peers\"}");
		struct json_object *p = path_get(path_get(d, "srd", NULL), "peers", NULL);
		int k = 0;

		for (size_t i = 0; p && i < json_object_array_length(p); i++)
			k += json_object_get_boolean(path_get(json_object_array_get_idx(p, i),
							      "synced", NULL));
		json_object_put(d);
		k == 2; }));
	ktap_check(ok, "srd: two sr agents connected over mutual TLS, each synced");

	/* 3: instances register through their node's SR; routes reach both */
	/* mi-a2 on ::1, which answers the SR's echoes (the type 4 probe) */
	ok = !reg("n1", "mi-a1", "fc00:1::a1") && !reg("n1", "mi-a2", "::1") &&
	     !reg("n2", "mi-b1", "fc00:2::b1");
	rev = 0;
	ok = ok && WAIT(3000, ({
		uint64_t r1 = 0, r2 = 0;

		rev = srd_revision(&n);
		n == 3 && rev == 3 && sr_routes("n1", &r1, NULL, NULL) == 3 && r1 == rev &&
		sr_routes("n2", &r2, NULL, NULL) == 3 && r2 == rev; }));
	ktap_check(ok, "3 instances registered: routes at both SRs at the SRD's revision 3");

	/* 4: the CLI shows the same */
	snprintf(buf, sizeof(buf), "%s -j agent socket %s/n2.sock show routes > %s/cli.json",
		 dmsc_bin, dir, dir);
	ok = !system(buf);
	if (ok) {
		struct json_object *d;

		snprintf(buf, sizeof(buf), "%s/cli.json", dir);
		d = json_object_from_file(buf);
		ok = arr_len(path_get(path_get(d, "sr", NULL), "routes", NULL)) == 3 &&
		     json_object_get_uint64(path_get(d, "sr", "revision")) == 3;
		json_object_put(d);
	}
	ktap_check(ok, "dmsc -j agent show routes: 3 routes at revision 3");

	/*
	 * Type 4: n1's agent reports its node's state every NODE_MS to the
	 * controller's smo, which keeps the last: this machine's CPU count,
	 * memory, lo among the links, its two instances with the round trip
	 * of their registration.
	 */
	{
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		struct json_object *d = NULL, *x, *last = NULL, *in, *l;
		int lo = 0, rtts = 0;

		ok = WAIT(5000, ({
			json_object_put(d);
			d = ask("ctl", "{\"show\":\"nodes\"}");
			x = smo_qos_node(d, "n1");
			last = path_get(x, "last", NULL);
			in = path_get(last, "instances", NULL);
			rtts = 0;
			for (int i = 0; i < arr_len(in); i++)
				rtts += !!path_get(json_object_array_get_idx(in, i),
						   "registration_rtt_ms", NULL);
			x && u64(x, "reports", NULL) >= 2 && arr_len(in) == 2 && rtts == 2; }));
		l = path_get(last, "links", NULL);
		for (int i = 0; i < arr_len(l); i++)
			lo |= !strcmp(json_object_get_string(path_get(
				json_object_array_get_idx(l, i), "dev", NULL)), "lo");
		ok = ok && u64(last, "load", "cpus") == (uint64_t)cpus &&
		     u64(last, "load", "mem_total_kb") > 0 &&
		     u64(last, "load", "mem_available_kb") <= u64(last, "load", "mem_total_kb") &&
		     arr_len(path_get(last, "load", "loadavg")) == 3 && lo &&
		     json_object_get_int64(path_get(json_object_array_get_idx(in, 0),
						    "registration_rtt_ms", NULL)) < 3000 &&
		     smo_qos_node(d, "n2");
		if (!ok)
			printf("# show nodes: %s\n", json_object_to_json_string(d));
		json_object_put(d);
		snprintf(buf, sizeof(buf),
			 "%s -j agent socket %s/ctl.sock show nodes > %s/nodes.json && "
			 "%s agent socket %s/ctl.sock show nodes | grep -q '^  node n1 .* cpus %ld ' && "
			 "%s agent socket %s/n1.sock show nodes | grep -q '^sr interval_ms %d reports [1-9]'",
			 dmsc_bin, dir, dir, dmsc_bin, dir, cpus, dmsc_bin, dir, NODE_MS);
		ok = ok && !system(buf);
		if (ok) {
			snprintf(buf, sizeof(buf), "%s/nodes.json", dir);
			d = json_object_from_file(buf);
			ok = u64(path_get(smo_qos_node(d, "n1"), "last", NULL), "load", "cpus") ==
			     (uint64_t)cpus;
			json_object_put(d);
		}
		ktap_check(ok, "nodes: n1's type-4 reports at the smo: cpus = sysconf's, memory, lo, 2 instances with a registration round trip; dmsc [-j] agent show nodes");
	}
	{
		/*
		 * The probe: mi-a2's SID ::1 answers n1's echoes, mi-a1's
		 * fc00:1::a1 does not (no route, or no one there).
		 */
		struct json_object *d = NULL, *in = NULL, *a1 = NULL, *a2 = NULL;

		int raw = socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6);

		if (raw >= 0)
			close(raw);
		ok = raw >= 0 && WAIT(5000, ({
			json_object_put(d);
			d = ask("ctl", "{\"show\":\"nodes\"}");
			in = path_get(path_get(smo_qos_node(d, "n1"), "last", NULL), "instances", NULL);
			a1 = a2 = NULL;
			for (int i = 0; i < arr_len(in); i++) {
				struct json_object *x = json_object_array_get_idx(in, i);

				if (!strcmp(json_object_get_string(path_get(x, "id", NULL)), "mi-a1"))
					a1 = path_get(x, "probe", NULL);
				else
					a2 = path_get(x, "probe", NULL);
			}
			a1 && a2 && u64(a2, "sent", NULL) >= 3 && u64(a1, "sent", NULL) >= 3; }));
		printf("# probes of n1's instances: mi-a1 %s, mi-a2 %s\n",
		       a1 ? json_object_to_json_string(a1) : "-",
		       a2 ? json_object_to_json_string(a2) : "-");
		ok = ok && u64(a2, "lost", NULL) == 0 && path_get(a2, "rtt_us", NULL) &&
		     u64(a2, "rtt_us", NULL) < 100000 && u64(a2, "srtt_us", NULL) < 100000 &&
		     u64(a1, "lost", NULL) + 1 >= u64(a1, "sent", NULL) &&
		     !path_get(a1, "rtt_us", NULL);
		json_object_put(d);
		if (raw < 0)
			printf("ok %d nodes: the probe of the instances # SKIP no raw ICMPv6 socket here (CAP_NET_RAW)\n",
			       ++ktap_n);
		else
			ktap_check(ok, "nodes: the SR's echoes: ::1 answers within 100 ms, none lost; fc00:1::a1 never answers, all lost");
	}
	{
		/*
		 * Another program's pings: 100 echoes to ::1, 1 ms apart, with
		 * an identifier of ours, whose replies the kernel also hands to
		 * n1's raw socket. Its BPF filter drops them there: n1's strays
		 * do not move, while our own socket got the replies (most: the
		 * kernel's ICMP rate limit may take some).
		 */
		uint64_t s0 = UINT64_MAX, s1 = UINT64_MAX;
		int raw = socket(AF_INET6, SOCK_RAW | SOCK_NONBLOCK, IPPROTO_ICMPV6);
		struct json_object *d;
		int filtered = 0, got = 0;

		if (raw >= 0) {
			struct sockaddr_in6 lo = { .sin6_family = AF_INET6,
						   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
			unsigned char hdr[8] = { 128, 0, 0, 0, 0x5a, 0x5a, 0, 0 };
			unsigned char rb[256];

			d = ask("n1", "{\"show\":\"nodes\"}");
			filtered = json_object_get_boolean(path_get(path_get(d, "sr", "probe"),
								   "filtered", NULL));
			if (path_get(path_get(d, "sr", "probe"), "strays", NULL))
				s0 = u64(path_get(d, "sr", "probe"), "strays", NULL);
			json_object_put(d);
			for (int i = 0; i < 100; i++) {
				hdr[7] = (unsigned char)i;
				sendto(raw, hdr, sizeof(hdr), 0, (struct sockaddr *)&lo, sizeof(lo));
				usleep(1000);
			}
			WAIT(1000, ({
				ssize_t n;

				while ((n = recv(raw, rb, sizeof(rb), 0)) > 0)
					got += n >= 8 && rb[0] == 129 && rb[4] == 0x5a && rb[5] == 0x5a;
				got >= 100; }));
			close(raw);
			usleep(200 * 1000);	/* n1's loop has read what it was given */
			d = ask("n1", "{\"show\":\"nodes\"}");
			if (path_get(path_get(d, "sr", "probe"), "strays", NULL))
				s1 = u64(path_get(d, "sr", "probe"), "strays", NULL);
			json_object_put(d);
			printf("# 100 foreign echoes: %d replies to us, n1's strays %llu -> %llu, filtered %d\n",
			       got, (unsigned long long)s0, (unsigned long long)s1, filtered);
			ktap_check(filtered && got >= 50 && s0 != UINT64_MAX && s1 == s0,
				   "nodes: another program's echo replies never reach the SR's probe (BPF filter: strays unchanged)");
		} else {
			printf("ok %d nodes: the probe's filter # SKIP no raw ICMPv6 socket here (CAP_NET_RAW)\n",
			       ++ktap_n);
		}
	}
	{
		/* n3 reports for itself; then as n9, another node: refused */
		uint64_t a = rejected("node");
		struct json_object *d;
		size_t len;

		len = frame_node("n3", 1, 4, buf, sizeof(buf));
		len += frame_node("n9", 1, 4, buf + len, sizeof(buf) - len);
		raw_send("ca", "n3", buf, len);
		ok = WAIT(2000, rejected("node") == a + 1);
		d = ask("ctl", "{\"show\":\"nodes\"}");
		ok = ok && smo_qos_node(d, "n3") && !smo_qos_node(d, "n9") &&
		     u64(path_get(smo_qos_node(d, "n3"), "last", NULL), "load", "cpus") == 4;
		if (!ok)
			printf("# show nodes: %s\n", json_object_to_json_string(d));
		json_object_put(d);
		ktap_check(ok, "nodes: n3's own report kept, one naming node n9 refused (node) and not in the table");
	}
	{
		/*
		 * An online backup of the SQLite store (its lock keeps
		 * sqlite3's .backup out): the copy holds the 3 instances at
		 * the registry's revision; the same file again is refused.
		 */
		int n = 0;
		uint64_t rev = srd_revision(&n);

		ok = !sh("%s -j agent socket %s/ctl.sock backup srd-backup.db > %s/backup.json",
			 dmsc_bin, dir, dir) &&
		     !sh("python3 -c 'import json, sqlite3, sys; d = json.load(open(sys.argv[1])); "
			 "c = sqlite3.connect(sys.argv[2]); "
			 "n = c.execute(\"select count(*) from instance\").fetchone()[0]; "
			 "r = c.execute(\"select v from meta where k = ?\", (\"revision\",)).fetchone()[0]; "
			 "print(\"# backup:\", d, \"holds\", n, \"instances at revision\", r); "
			 "sys.exit(not (n == d[\"instances\"] == %llu and r == d[\"revision\"] == %llu and "
			 "d[\"file\"] == sys.argv[2]))' %s/backup.json %s/srd-backup.db",
			 (unsigned long long)n, (unsigned long long)rev, dir, dir) && n == 3 &&
		     !sh("test \"$(stat -c %%a %s/srd-backup.db)\" = 600", dir) &&
		     sh("%s agent socket %s/ctl.sock backup srd-backup.db 2>%s/backup.err", dmsc_bin,
			dir, dir) &&
		     !sh("grep -q 'exists (a backup never overwrites)' %s/backup.err", dir) &&
		     /* a path, or a link planted where the copy would go: refused */
		     sh("%s agent socket %s/ctl.sock backup /tmp/x.db 2>%s/backup.err", dmsc_bin,
			dir, dir) &&
		     !sh("grep -q 'a file name (no ./.)' %s/backup.err", dir) &&
		     !sh("ln -s %s/planted %s/link.db", dir, dir) &&
		     sh("%s agent socket %s/ctl.sock backup link.db 2>%s/backup.err", dmsc_bin,
			dir, dir) &&
		     sh("test -e %s/planted", dir);
		ktap_check(ok, "dmsc agent backup: an online copy (mode 600, in the store's directory) with its instances and revision; an existing file, a path and a symbolic link refused");
	}
	digest_cases();

	/* the smo: each SR got its node's policies from the file, revision 1 */
	{
		char n1s[1024], n2s[1024], t1[64], t2[64];
		uint64_t r1 = 0, r2 = 0, g1 = 9, g2 = 9;

		ok = WAIT(5000, !sr_pol("n1", &r1, n1s, t1, "gaps", &g1) &&
			  !sr_pol("n2", &r2, n2s, t2, "gaps", &g2) &&
			  r1 == 1 && r2 == 1 && !strcmp(n1s, "p1") && !strcmp(t1, "100") &&
			  !strcmp(n2s, "p2") && !strcmp(t2, "200"));
		/* SQLite: one controller, no election, it leads */
		ok = ok && seat_is("ctl", "leader") && ({
			char e[8];

			!strcmp(el_get("ctl", "elected", e, sizeof(e)), "false"); });
		ktap_check(ok && !g1 && !g2,
			   "smo: the policy file's set pushed on connect: n1 holds p1 (tunnel 100), n2 p2 (200), revision 1; with SQLite it leads unelected");
		if (!ok)
			printf("# n1 rev %llu [%s] [%s], n2 rev %llu [%s] [%s]\n",
			       (unsigned long long)r1, n1s, t1, (unsigned long long)r2, n2s, t2);

		/* apply through the CLI: p3 for n1, p1 changed (weight 5) */
		policy_text(n1s, sizeof(n1s), "p3", "n1", 101, 1);
		policy_text(n2s, sizeof(n2s), "p1", "n1", 100, 5);
		write_policies("apply.json", n1s, n2s);
		snprintf(buf, sizeof(buf), "%s -j agent socket %s/ctl.sock policy apply %s/apply.json >%s/apply.out",
			 dmsc_bin, dir, dir, dir);
		ok = !system(buf);
		ok = ok && WAIT(3000, !sr_pol("n1", &r1, n1s, t1, "gaps", &g1) &&
				!sr_pol("n2", &r2, n2s, t2, "gaps", &g2) && r1 == 2 && r2 == 2 &&
				!strcmp(n1s, "p1,p3") && !strcmp(t1, "100,101") &&
				!strcmp(n2s, "p2") && !g1 && !g2);
		{
			struct json_object *d = ask("n1", "{\"show\":\"policies\"}");
			struct json_object *p = path_get(path_get(d, "sr", NULL), "desired", NULL);
			struct json_object *w;

			p = arr_len(p) > 0 ? json_object_array_get_idx(p, 0) : NULL;
			w = arr_len(path_get(p, "paths", NULL)) > 0 ?
			    json_object_array_get_idx(path_get(p, "paths", NULL), 0) : NULL;
			ok = ok && json_object_get_int(path_get(w, "weight", NULL)) == 5;
			json_object_put(d);
		}
		ktap_check(ok, "smo: dmsc agent policy apply: both SRs at revision 2, n1 holds p1 (weight now 5) and p3, n2 only p2, no gap");
		if (!ok)
			printf("# n1 rev %llu [%s] [%s], n2 rev %llu [%s] [%s]\n",
			       (unsigned long long)r1, n1s, t1, (unsigned long long)r2, n2s, t2);

		snprintf(buf, sizeof(buf), "%s agent socket %s/ctl.sock policy withdraw p1", dmsc_bin, dir);
		ok = !system(buf);
		ok = ok && WAIT(3000, !sr_pol("n1", &r1, n1s, t1, NULL, NULL) && r1 == 3 &&
				!strcmp(n1s, "p3") && !strcmp(t1, "101"));
		snprintf(buf, sizeof(buf), "%s agent socket %s/ctl.sock policy withdraw p1 2>/dev/null", dmsc_bin, dir);
		ok = ok && system(buf) != 0;
		ktap_check(ok, "smo: policy withdraw p1: n1 holds p3 only at revision 3; withdrawing it again fails");
	}

	/* 5: an SR killed and restarted: the full table, its own instance again */
	stop(&pid_n2);
	reg("n1", "mi-a3", "fc00:1::a3");	/* a change it misses */
	pid_n2 = spawn("n2");
	/* past a lease: an instance it did not renew would be gone */
	usleep(4 * HB_MS * 1000);
	ok = WAIT(5000, ({
		uint64_t r2 = 0;
		struct json_object *d;
		int full;

		rev = srd_revision(&n);
		d = ask("n2", "{\"show\":\"routes\"}");
		full = (int)json_object_get_uint64(path_get(d, "sr", "full_tables"));
		json_object_put(d);
		n == 4 && sr_routes("n2", &r2, "mi-b1", &has) == 4 && has &&
		r2 == rev && full >= 1; }));
	ktap_check(ok, "sr killed and restarted: full table of 4 at the SRD's revision, mi-b1 still there");

	/* 6: an SR that dies stops renewing: its instances withdrawn within 3 heartbeats */
	ok = WAIT(3000, sr_routes("n2", &rev, NULL, NULL) == 4);
	/* n2's restart may have outlasted its lease: count from here */
	expired0 = srd_expired();
	stop(&pid_n1);
	t = mono_ms();
	ok = ok && WAIT(5000, sr_routes("n2", &rev, NULL, NULL) == 1);
	t = mono_ms() - t;
	printf("# n1 killed: its 3 instances withdrawn at n2 after %lld ms (heartbeat %d ms)\n",
	       (long long)t, HB_MS);
	/* 3 heartbeats, the SRD's 100 ms expiry check, 200 ms for this poll */
	ktap_check(ok && t <= 3 * HB_MS + 100 + 200,
		   "n1's instances expire and are withdrawn within 3 heartbeats");
	sr_routes("n2", &rev, "mi-b1", &has);
	{
		uint64_t x = srd_expired() - expired0;

		ktap_check(has && x == 3, "n2's own instance, renewed, stays: 3 expiries, all n1's");
		if (x != 3)
			printf("# the srd expired %llu instances\n", (unsigned long long)x);
	}

	/* 8..: what must be refused; nothing of it acted on */
	rev0 = srd_revision(&n0);
	{
		uint64_t a = rejected("cert-unknown-ca");

		raw_send("other", "n3", NULL, 0);
		ok = WAIT(2000, rejected("cert-unknown-ca") == a + 1);
		ktap_check(ok, "refused: a certificate of another CA (cert-unknown-ca)");
		a = rejected("cert-expired");
		raw_send("ca", "old", NULL, 0);
		ok = WAIT(2000, rejected("cert-expired") == a + 1);
		ktap_check(ok, "refused: an expired certificate (cert-expired)");
		a = rejected("cert-revoked");
		raw_send("ca", "gone", NULL, 0);
		ok = WAIT(2000, rejected("cert-revoked") == a + 1);
		ktap_check(ok, "refused: a revoked certificate (cert-revoked)");
	}
	{
		/* an smo registering; an sr sending routes as if it were the SRD */
		uint64_t a = rejected("role");
		struct msg_routes mr = { .rev = 99, .full = true };
		struct msg m = { .type = &msg_routes_type, .node = "n3", .seq = 1, .body = &mr };
		char err[256], *f;
		size_t len;

		memset(&g, 0, sizeof(g));
		g.op = REG_REGISTER;
		g.inst = (struct msg_instance){ "mi-x", "smo1", "fc00::1", "fc00::/64",
						"gpu", 1, "active", 1000 };
		len = frame_reg("smo1", &g, buf, sizeof(buf));
		raw_send("ca", "smo1", buf, len);
		if (!msg_encode(&m, &f, &len, err, sizeof(err))) {
			raw_send("ca", "n3", f, len);
			free(f);
		}
		ok = WAIT(2000, rejected("role") == a + 2);
		ktap_check(ok, "refused: wrong role (an smo registering, an sr advertising routes)");
	}
	{
		uint64_t a = rejected("node");
		size_t len;

		/* n3 registers an instance of n2; n3 says it is n2 */
		g.inst = (struct msg_instance){ "mi-y", "n2", "fc00::2", "fc00::/64",
						"gpu", 1, "active", 1000 };
		len = frame_reg("n3", &g, buf, sizeof(buf));

		raw_send("ca", "n3", buf, len);
		g.inst = (struct msg_instance){ "mi-z", "n3", "fc00::3", "fc00::/64",
						"gpu", 1, "active", 1000 };
		len = frame_reg("n2", &g, buf, sizeof(buf));
		raw_send("ca", "n3", buf, len);
		ok = WAIT(2000, rejected("node") == a + 2);
		ktap_check(ok, "refused: an instance of another node, a header naming another node");
	}
	{
		uint64_t a = rejected("owner");
		size_t len;

		memset(&g, 0, sizeof(g));
		g.op = REG_DEREGISTER;
		strcpy(g.id, "mi-b1");
		len = frame_reg("n3", &g, buf, sizeof(buf));
		raw_send("ca", "n3", buf, len);
		ok = WAIT(2000, rejected("owner") == a + 1);
		ktap_check(ok, "refused: n3 deregistering n2's instance (owner)");
	}
	{
		uint64_t a = rejected("frame"), b = rejected("malformed");
		const char *bad = "{\"version\":1,\"type\":1,\"node\":\"n3\",\"seq\":1,\"op\":\"renew\",\"id\":\"mi-b1\",}";

		/* a length of 5 MiB: the connection ends, nothing is read */
		memcpy(big, "\x00\x50\x00\x00{}", 6);
		raw_send("ca", "n3", big, 6);
		ok = WAIT(2000, rejected("frame") == a + 1);
		ktap_check(ok, "refused: a frame of 5 MiB (frame)");
		buf[0] = 0;
		buf[1] = 0;
		buf[2] = (char)(strlen(bad) >> 8);
		buf[3] = (char)strlen(bad);
		memcpy(buf + 4, bad, strlen(bad));
		raw_send("ca", "n3", buf, 4 + strlen(bad));
		ok = WAIT(2000, rejected("malformed") == b + 1);
		ktap_check(ok, "refused: malformed JSON (a trailing comma)");
	}
	{
		/*
		 * Type 5 on an sr's connection reaches the smo: reports 1, 2
		 * and 5 of n3 (3 and 4 lost on the way), then 1 again (its
		 * agent restarted).
		 */
		struct json_object *d, *x;
		size_t len = 0;

		len += frame_qos("n3", 1, 10, buf + len, sizeof(buf) - len);
		len += frame_qos("n3", 2, 20, buf + len, sizeof(buf) - len);
		len += frame_qos("n3", 5, 50, buf + len, sizeof(buf) - len);
		raw_send("ca", "n3", buf, len);
		ok = WAIT(2000, ({
			d = ask("ctl", "{\"show\":\"qos\"}");
			x = smo_qos_node(d, "n3");
			int y = x && u64(x, "reports", NULL) == 3;

			json_object_put(d);
			y; }));
		d = ask("ctl", "{\"show\":\"qos\"}");
		x = smo_qos_node(d, "n3");
		ok = ok && x && u64(x, "missed", NULL) == 2 && u64(x, "seq", NULL) == 5 &&
		     u64(x, "restarts", NULL) == 0 &&
		     json_object_get_int64(path_get(json_object_array_get_idx(
			     path_get(path_get(x, "last", NULL), "devices", NULL), 0),
			     "packets", NULL)) == 50 &&
		     u64(path_get(x, "last", NULL), "interval_us", NULL) == 200000;
		if (!ok)
			printf("# show qos: %s\n", json_object_to_json_string(d));
		json_object_put(d);
		len = frame_qos("n3", 1, 1, buf, sizeof(buf));
		raw_send("ca", "n3", buf, len);
		ok = ok && WAIT(2000, ({
			d = ask("ctl", "{\"show\":\"qos\"}");
			x = smo_qos_node(d, "n3");
			int y = x && u64(x, "restarts", NULL) == 1 && u64(x, "seq", NULL) == 1 &&
				u64(x, "reports", NULL) == 4 && u64(x, "missed", NULL) == 2;

			json_object_put(d);
			y; }));
		snprintf(buf, sizeof(buf),
			 "%s agent socket %s/ctl.sock show qos | grep -qx '  node n3 reports 4 missed 2 restarts 1 seq 1 age_ms [0-9]* qps 0'",
			 dmsc_bin, dir);
		ok = ok && !sh("%s", buf);
		ktap_check(ok, "qos: n3's type-5 reports at the smo, 2 missed counted, a restart seen; dmsc agent show qos");
	}
	{
		/* an smo-only certificate reporting; n3 reporting as n2 */
		uint64_t a = rejected("role"), b = rejected("node");
		struct json_object *d;
		size_t len;

		len = frame_qos("smo1", 1, 1, buf, sizeof(buf));
		raw_send("ca", "smo1", buf, len);
		len = frame_qos("n2", 1, 1, buf, sizeof(buf));
		raw_send("ca", "n3", buf, len);
		ok = WAIT(2000, rejected("role") == a + 1 && rejected("node") == b + 1);
		d = ask("ctl", "{\"show\":\"qos\"}");
		ok = ok && !smo_qos_node(d, "smo1") && !smo_qos_node(d, "n2") &&
		     u64(path_get(d, "smo", NULL), "reports", NULL) == 4;
		json_object_put(d);
		ktap_check(ok, "refused: a QoS report from an smo certificate (role), one naming another node (node); not in the table");
	}
	/*
	 * Not acted on: none of the refused registrations is in the
	 * registry and n2's instance is still there. (The revision may move
	 * on a loaded machine: a late renewal expires mi-b1 and n2
	 * registers it again.)
	 */
	{
		struct json_object *d = ask("ctl", "{\"show\":\"instances\"}");
		struct json_object *in = path_get(path_get(d, "srd", NULL), "instances", NULL);
		int bad = 0, b1 = 0;

		for (int i = 0; i < arr_len(in); i++) {
			const char *id = json_object_get_string(path_get(
				json_object_array_get_idx(in, i), "id", NULL));

			bad += !strcmp(id, "mi-x") || !strcmp(id, "mi-y") || !strcmp(id, "mi-z");
			b1 += !strcmp(id, "mi-b1");
		}
		json_object_put(d);
		rev1 = srd_revision(&n1);
		ktap_check(!bad && b1 == 1 && n1 == n0,
			   "nothing refused was acted on: no refused instance registered, mi-b1 kept");
		if (bad || b1 != 1 || n1 != n0)
			printf("# refused ones registered %d, mi-b1 %d, instances %d -> %d, revision %llu -> %llu\n",
			       bad, b1, n0, n1, (unsigned long long)rev0, (unsigned long long)rev1);
	}

	/* SIGHUP: a bad configuration is refused and the old one kept */
	write_config("ctl", "{ \"node\": \"ctl\", \"roles\": [\"srd\"], \"bogus\": 1 }");
	kill(pid_ctl, SIGHUP);
	snprintf(buf, sizeof(buf), "grep -q 'reload refused.*bogus: unknown field' %s/ctl.log", dir);
	ok = WAIT(2000, !system(buf));
	ok = ok && WAIT(1000, ({ int k; srd_revision(&k); k == n0; }));
	config_ctl("");
	kill(pid_ctl, SIGHUP);
	snprintf(buf, sizeof(buf), "grep -q 'reloaded .*certificates and CRL' %s/ctl.log", dir);
	ok = ok && WAIT(2000, !system(buf));
	ktap_check(ok, "SIGHUP: a bad configuration refused and logged, a good one reloads the certificates");

	/* figures, with in-process SRs */
	base = event_base_new();
	ok = bench(2, 200, 0) && bench(10, 200, 500);
	ktap_check(ok, "push to 2 and 10 SRs: every change reached every SR within 3 s");
	sr_revisions();
	full_limits();
	peer_backlog();
	event_base_free(base);

	/* SIGTERM: a clean stop */
	kill(pid_ctl, SIGTERM);
	waitpid(pid_ctl, &status, 0);
	pid_ctl = 0;
	snprintf(buf, sizeof(buf), "%s/ctl.sock", dir);
	ktap_check(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM && access(buf, F_OK),
		   "SIGTERM: the srd stops, dies of the signal, its control socket gone");
	stop(&pid_n2);
	election_cases();
	if (ktap_failed)
		dump_logs();
	else
		sh("rm -rf %s", dir);
	return ktap_finish();
}
