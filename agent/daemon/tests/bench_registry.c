// SPDX-License-Identifier: GPL-2.0
/*
 * The SRD at scale (issue 10's figures): one dmsc-agent in roles srd+aam
 * on loopback, N SR connections over mutual TLS (in this process, one
 * libevent loop, each with its own node certificate from dmsc-pki), M
 * instances registered through them (M/N per node, each on its own node)
 * and renewed on their heartbeat for the whole run. Printed:
 *   - registrations per second, each a durable SQLite commit pushed to N;
 *   - the SRD's memory per instance (its RSS before and after, and the
 *     store's file);
 *   - the latency of one registration change to all N SRs, p50/p99/max,
 *     while every instance renews (goal: p99 under 1 s at 100 SRs);
 *   - the bytes the SRD sends in one anti-entropy period, the full table
 *     to every SR (one full table's frame, measured, times N) against
 *     every SR sending the digest of its table (type 1 "digest"), all
 *     frames the SRs receive in that period counted;
 *   - that no instance expired meanwhile (renewals kept up).
 *
 *   bench_registry AGENT DMSC-PKI [SRS [INSTANCES [CHANGES]]]
 *
 * AGENT should be the plain build (daemon/dmsc-agent), not the ASan one:
 * the memory figure is the daemon's. tools/bench/registry.sh runs this and
 * etcd's watch latency on the same machine beside it.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "conn.h"
#include "msg.h"
#include "msg_reg.h"
#include "agent_proc.h"
#include "routes_frame.h"
#include "tls.h"

#define TTL_MS		30000	/* each instance's lease */
#define RENEW_MS	10000	/* renewed three times a lease */
#define TICK_MS		100	/* renewals go out spread over ticks */

static char dir[] = "/tmp/dmsc-benchreg.XXXXXX";
static struct event_base *base;
static int nsr, nmi;

struct sr {
	char name[16];
	SSL_CTX *ctx;
	struct conn *c;
	int up;
	uint64_t rev, want, seq;
	double seen_us;
	uint64_t rx;		/* bytes received, headers included */
	int capture;		/* keep the next full table's digest */
};
/* the full table b0 asked for: its frame's size, revision and digest */
static size_t full_len;
static uint64_t full_rev;
static char full_dg[MSG_DIGEST_HEX];
static struct sr *srs;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* VmRSS of @pid in KiB. */
static long rss_kib(pid_t pid)
{
	char p[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/status", (int)pid);
	f = fopen(p, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

static uint64_t srd_count_of(const char *what, const char *key)
{
	char req[64];
	struct json_object *d, *s, *v;
	uint64_t n = UINT64_MAX;

	snprintf(req, sizeof(req), "{\"show\":\"%s\"}", what);
	d = ask("ctl", req);
	if (d && json_object_object_get_ex(d, "srd", &s) &&
	    json_object_object_get_ex(s, key, &v))
		n = json_object_get_uint64(v);
	json_object_put(d);
	return n;
}

static uint64_t srd_count(const char *key)
{
	return srd_count_of("instances", key);
}

static int sr_up(struct conn *c, void *arg)
{
	(void)c;
	((struct sr *)arg)->up = 1;
	return 0;
}

static int sr_frame(struct conn *c, const unsigned char *p, size_t len, void *arg)
{
	struct sr *s = arg;

	(void)c;
	s->rx += MSG_HDR_LEN + len;
	if (s->capture) {
		char err[256];
		struct msg m;

		if (!msg_decode((const char *)p, len, &m, err, sizeof(err))) {
			struct msg_routes *r = m.body;

			if (m.type->type == MSG_ROUTES && r->full &&
			    !msg_routes_digest(r->routes, r->nroutes, full_dg)) {
				full_len = MSG_HDR_LEN + len;
				full_rev = r->rev;
				s->capture = 0;
			}
			msg_free(&m);
		}
	}
	routes_frame_seen(p, len, &s->rev, s->want, &s->seen_us, now_us());
	return 0;
}

static void sr_down(struct conn *c, const char *why, void *arg)
{
	struct sr *s = arg;

	(void)c;
	printf("# %s down: %s\n", s->name, why);
	s->c = NULL;
	s->up = 0;
}

static const struct conn_ops sr_ops = { sr_up, sr_frame, sr_down };

/*
 * Send one type-1 message from @s: register @id, or renew it; sync and
 * digest (@id the digest) at the SR's revision. Its size.
 */
static size_t send_reg(struct sr *s, enum reg_op op, const char *id)
{
	struct msg_reg g = { .op = op, .since = s->rev, .rev = s->rev };
	struct msg m = { .type = &msg_reg_type, .seq = ++s->seq, .body = &g };
	char err[256], *f;
	size_t len;

	snprintf(m.node, sizeof(m.node), "%s", s->name);
	if (op == REG_REGISTER) {
		struct msg_instance *i = &g.inst;

		snprintf(i->id, sizeof(i->id), "%s", id);
		snprintf(i->node, sizeof(i->node), "%s", s->name);
		snprintf(i->sid, sizeof(i->sid), "fc00:%x::%lx",
			 (unsigned)(s - srs), (unsigned long)s->seq);
		snprintf(i->prefix, sizeof(i->prefix), "fc00:%x::/64",
			 (unsigned)(s - srs));
		snprintf(i->rtype, sizeof(i->rtype), "gpu");
		snprintf(i->state, sizeof(i->state), "active");
		i->capability = 100;
		i->ttl_ms = TTL_MS;
	} else if (op == REG_DIGEST) {
		snprintf(g.sha256, sizeof(g.sha256), "%s", id);
	} else if (op != REG_SYNC) {
		snprintf(g.id, sizeof(g.id), "%s", id);
	}
	if (msg_encode(&m, &f, &len, err, sizeof(err))) {
		printf("# encode: %s\n", err);
		return 0;
	}
	if (s->c)
		conn_send(s->c, f + MSG_HDR_LEN, len - MSG_HDR_LEN);
	free(f);
	return len;
}

static void mi_id(char *id, size_t len, int k)
{
	snprintf(id, len, "mi-%d-%d", k % nsr, k / nsr);
}

/* Every instance renewed once per RENEW_MS, a slice of them each tick. */
static int renew_next;
static uint64_t renewals;
static void renew_tick(evutil_socket_t fd, short what, void *arg)
{
	int slice = nmi / (RENEW_MS / TICK_MS) + 1;
	char id[MSG_ID_MAX];

	(void)fd, (void)what, (void)arg;
	for (int i = 0; i < slice && nmi; i++, renew_next = (renew_next + 1) % nmi) {
		mi_id(id, sizeof(id), renew_next);
		send_reg(&srs[renew_next % nsr], REG_RENEW, id);
		renewals++;
	}
}

/* Run the loop until every SR satisfies @f or @ms pass. */
static int spin(int (*f)(const struct sr *), int ms)
{
	double end = now_us() + ms * 1e3;
	int all;

	do {
		all = 1;
		for (int i = 0; i < nsr && all; i++)
			all = f(&srs[i]);
		if (all)
			return 1;
		event_base_loop(base, EVLOOP_ONCE);
	} while (now_us() < end);
	return 0;
}

static int is_up(const struct sr *s) { return s->up; }
static int captured(const struct sr *s) { return !s->capture; }
static int has_seen(const struct sr *s) { return s->seen_us != 0; }

static void want_all(uint64_t want)
{
	for (int i = 0; i < nsr; i++) {
		srs[i].want = want;
		srs[i].seen_us = 0;
	}
}

static int same_rev(const struct sr *s) { return s->rev == full_rev; }

/*
 * One anti-entropy period at this scale, both ways. Before: the full
 * table to every SR; its frame is measured once (b0 asks for it with a
 * sync) and the period sends that frame to each SR. After: every SR
 * sends the digest of its table (the SRs got the same pushes, so b0's
 * table's digest stands for each) and everything the SRs receive until
 * the SRD has answered all of them is counted. Then one SR with a wrong
 * digest, to see that it gets the table. 0, or -1 if the SRD did not.
 */
static int anti_entropy(void)
{
	uint64_t m0 = srd_count_of("peers", "digests_matched");
	uint64_t f0 = srd_count_of("peers", "full_tables"), up = 0, rx = 0;
	double t0, t1;
	char bad[MSG_DIGEST_HEX];

	srs[0].capture = 1;
	send_reg(&srs[0], REG_SYNC, NULL);
	if (!spin(captured, 30000) || !spin(same_rev, 10000)) {
		printf("# anti-entropy: no full table for b0, or the SRs at other revisions\n");
		return -1;
	}
	for (int i = 0; i < nsr; i++)
		srs[i].rx = 0;
	t0 = now_us();
	for (int i = 0; i < nsr; i++)
		up += send_reg(&srs[i], REG_DIGEST, full_dg);
	/* the SRD answers a match with nothing: ask it when it has read them */
	while (srd_count_of("peers", "digests_matched") < m0 + (uint64_t)nsr &&
	       now_us() - t0 < 30e6)
		event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	t1 = now_us();
	/* anything it sends after them comes within this */
	while (now_us() - t1 < 500000)
		event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	for (int i = 0; i < nsr; i++)
		rx += srs[i].rx;
	printf("anti-entropy period, %d SRs, %d instances: full tables %zu bytes x %d = %.1f MB from the SRD (before); digests: %llu bytes from the SRD, %llu bytes of digests to it, %llu of %d matched in %.1f ms, %llu full tables (after)\n",
	       nsr, nmi, full_len, nsr, (double)full_len * nsr / 1e6,
	       (unsigned long long)rx, (unsigned long long)up,
	       (unsigned long long)(srd_count_of("peers", "digests_matched") - m0), nsr,
	       (t1 - t0) / 1e3,
	       (unsigned long long)(srd_count_of("peers", "full_tables") - f0 - 1));
	/* b1's table wrong: the full table for it alone */
	snprintf(bad, sizeof(bad), "%s", full_dg);
	bad[0] = bad[0] == '0' ? '1' : '0';
	for (int i = 0; i < nsr; i++)
		srs[i].rx = 0;
	send_reg(&srs[nsr > 1], REG_DIGEST, bad);
	t0 = now_us();
	while (srs[nsr > 1].rx < full_len && now_us() - t0 < 30e6)
		event_base_loop(base, EVLOOP_ONCE);
	rx = 0;
	for (int i = 0; i < nsr; i++)
		rx += srs[i].rx;
	printf("one SR's digest wrong: %llu bytes from the SRD (its full table), %.1f ms\n",
	       (unsigned long long)rx, (now_us() - t0) / 1e3);
	return srs[nsr > 1].rx < full_len ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int changes = argc > 5 ? atoi(argv[5]) : 50, port, rc = 1, k = 0;
	char cmd[1024], cfg[2048], id[MSG_ID_MAX], path[300];
	struct event *tick;
	double t0, *lat;
	long rss0, rss1;
	struct stat st;
	pid_t srd;

	if (argc < 3) {
		fprintf(stderr, "usage: bench_registry AGENT DMSC-PKI [SRS [INSTANCES [CHANGES]]]\n");
		return 2;
	}
	nsr = argc > 3 ? atoi(argv[3]) : 100;
	nmi = argc > 4 ? atoi(argv[4]) : 10000;
	if (nsr < 1 || nsr > 1000 || nmi < 0 || nmi > MSG_ROUTES_MAX || changes < 1) {
		fprintf(stderr, "bench_registry: SRS 1..1000, INSTANCES 0..%d, CHANGES >= 1\n",
			MSG_ROUTES_MAX);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);	/* progress shows under tee */
	agents_dir = dir;
	if (!mkdtemp(dir))
		return 1;

	/* the CA, the SRD's certificate and one per SR node */
	snprintf(cmd, sizeof(cmd),
		 "(set -e; p=%s; d=%s/ca; $p -d $d init; $p -d $d node ctl --roles srd,aam;"
		 " i=0; while [ $i -lt %d ]; do $p -d $d node b$i --roles sr; i=$((i+1)); done)"
		 " >%s/pki.log 2>&1", argv[2], dir, nsr, dir);
	t0 = now_us();
	if (system(cmd)) {
		fprintf(stderr, "bench_registry: dmsc-pki failed, see %s/pki.log\n", dir);
		return 1;
	}
	printf("# %d node certificates in %.1f s\n", nsr + 1, (now_us() - t0) / 1e6);

	port = free_port();
	/*
	 * The full table goes to every SR on connect and every
	 * full_interval_ms: at 10,000 instances it is about 2.5 MB, to 100
	 * SRs 250 MB, so the period is an hour here and the run measures the
	 * changes (Documentation/registry.md says what it costs).
	 */
	snprintf(cfg, sizeof(cfg),
		 "{ \"node\": \"ctl\", \"roles\": [\"srd\", \"aam\"], \"control\": \"%s/ctl.sock\",\n"
		 "  \"tls\": { \"ca\": \"%s/ca/ca.crt\", \"cert\": \"%s/ca/ctl.crt\",\n"
		 "           \"key\": \"%s/ca/ctl.key\", \"crl\": \"%s/ca/crl.pem\" },\n"
		 "  \"srd\": { \"listen\": \"127.0.0.1:%d\", \"store\": { \"sqlite\": \"%s/srd.db\" },\n"
		 "           \"full_interval_ms\": 3600000 } }\n",
		 dir, dir, dir, dir, dir, port, dir);
	write_config("ctl", "%s", cfg);
	agent_bin = argv[1];
	srd = spawn("ctl");
	snprintf(path, sizeof(path), "%s/ctl.sock", dir);
	for (int i = 0; i < 300 && access(path, F_OK); i++)
		usleep(50000);

	base = event_base_new();
	srs = calloc((size_t)nsr, sizeof(*srs));
	lat = calloc((size_t)nsr * (size_t)changes, sizeof(*lat));
	sa.sin_port = htons((uint16_t)port);
	t0 = now_us();
	for (int i = 0; i < nsr; i++) {
		char cert[300], key[300], ca[300], err[256];
		struct tls_conf c = { cert, key, ca, NULL };
		struct peer_id self;

		snprintf(srs[i].name, sizeof(srs[i].name), "b%d", i);
		snprintf(cert, sizeof(cert), "%s/ca/b%d.crt", dir, i);
		snprintf(key, sizeof(key), "%s/ca/b%d.key", dir, i);
		snprintf(ca, sizeof(ca), "%s/ca/ca.crt", dir);
		srs[i].ctx = tls_ctx_new(&c, 0, &self, err, sizeof(err));
		if (!srs[i].ctx) {
			printf("# b%d: %s\n", i, err);
			goto out;
		}
		srs[i].c = conn_new(base, srs[i].ctx, 0, -1, (struct sockaddr *)&sa,
				    sizeof(sa), "ctl", 5000, &sr_ops, &srs[i]);
	}
	/* up, and each given the (empty) full table at revision 0 */
	if (!spin(is_up, 60000)) {
		printf("# not all %d SRs connected in 60 s\n", nsr);
		goto out;
	}
	printf("# %d SRs connected over mutual TLS in %.2f s\n", nsr, (now_us() - t0) / 1e6);

	/* M registrations, pipelined, each pushed to every SR */
	rss0 = rss_kib(srd);
	want_all((uint64_t)nmi);
	t0 = now_us();
	for (k = 0; k < nmi; k++) {
		mi_id(id, sizeof(id), k);
		send_reg(&srs[k % nsr], REG_REGISTER, id);
		/* keep the loop turning: the pushes come back meanwhile */
		if (k % 64 == 63)
			event_base_loop(base, EVLOOP_NONBLOCK);
	}
	if (nmi && !spin(has_seen, 600000)) {
		printf("# %d registrations did not reach all SRs in 600 s\n", nmi);
		goto out;
	}
	rss1 = rss_kib(srd);
	snprintf(path, sizeof(path), "%s/srd.db", dir);
	if (stat(path, &st))
		st.st_size = 0;
	printf("registrations: %d over TLS, each a durable SQLite commit pushed to %d SRs: %.0f/s\n",
	       nmi, nsr, nmi ? nmi / ((now_us() - t0) / 1e6) : 0);
	if (nmi)
		printf("srd memory: RSS %ld KiB before, %ld KiB after: %.0f bytes per instance; SQLite file %.0f bytes per instance\n",
		       rss0, rss1, (rss1 - rss0) * 1024.0 / nmi,
		       (double)st.st_size / nmi);

	/* renewals from now on, then the timed changes among them */
	tick = event_new(base, -1, EV_PERSIST, renew_tick, NULL);
	event_add(tick, &(struct timeval){ 0, TICK_MS * 1000 });
	k = 0;
	for (int r = 0; r < changes; r++) {
		uint64_t want = srs[0].rev + 1;
		double c0;

		/* one change every 200 ms, renewals in between */
		c0 = now_us();
		while (now_us() - c0 < 200000)
			event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
		want_all(want);
		snprintf(id, sizeof(id), "lat-%d", r);
		t0 = now_us();
		send_reg(&srs[r % nsr], REG_REGISTER, id);
		if (!spin(has_seen, 10000)) {
			printf("# change %d did not reach all %d SRs in 10 s\n", r, nsr);
			goto out;
		}
		for (int i = 0; i < nsr; i++)
			lat[k++] = (srs[i].seen_us - t0) / 1e3;
	}
	qsort(lat, (size_t)k, sizeof(*lat), cmp_d);
	printf("push latency: %d changes to %d SRs, %d instances renewing (%llu renewals): p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
	       changes, nsr, nmi, (unsigned long long)renewals, lat[k / 2],
	       lat[(size_t)k * 99 / 100], lat[k - 1]);
	printf("p99 goal of 1 s: %s\n", lat[(size_t)k * 99 / 100] < 1000 ? "met" : "missed");
	if (anti_entropy())
		goto out;
	event_free(tick);
	{
		uint64_t expired = srd_count("expired"), renewed = srd_count("renewed");

		printf("srd: %llu renewals applied, %llu instances expired\n",
		       (unsigned long long)renewed, (unsigned long long)expired);
		/* a figure taken while instances lapse measures nothing */
		rc = expired != 0 || renewed == UINT64_MAX;
		if (expired)
			printf("# renewals did not keep up: the figures do not hold\n");
	}
out:
	kill(srd, SIGTERM);
	waitpid(srd, NULL, 0);
	for (int i = 0; i < nsr; i++) {
		if (srs[i].c)
			conn_close(srs[i].c);
		if (srs[i].ctx)
			SSL_CTX_free(srs[i].ctx);
	}
	free(srs);
	free(lat);
	event_base_free(base);
	if (!rc) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			rc = 1;
	} else {
		printf("# kept %s\n", dir);
	}
	return rc;
}
