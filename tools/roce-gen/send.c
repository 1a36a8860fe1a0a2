// SPDX-License-Identifier: GPL-2.0
/*
 * roce-gen send: paced RoCEv2 packets from many QPs, one UDP socket per QP
 * so each QP has its own source port, as RoCEv2 NICs do for ECMP entropy.
 *
 * The ICRC covers the IPv4 identification field, which the sender must
 * therefore know: sockets are unconnected and use IP_PMTUDISC_DO, for which
 * Linux sends with DF set and identification 0 (ip_select_ident_segs()).
 */
#include <errno.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "addr.h"
#include "packet.h"
#include "args.h"
#include "roce_gen.h"

#define MAX_QPS		16384	/* source ports 0xc000-0xffff */
#define SPORT_HASH_BASE	0xc000
#define RESYNC_NS	50000000ull	/* further behind than this: stop catching up */

struct send_opts {
	struct sockaddr_storage dst, src;
	socklen_t dst_len, src_len;
	bool have_src;
	const char *dev;
	uint64_t qps, qpn, sport, count, size, psn, pkey;
	bool have_sport, have_count;
	double duration, rate;
	int opcode;
	int tclass;
	int sndbuf;
	const char *json;
	bool allow_any_netns;
	uint64_t dup_every, skip_every, swap_every, bad_icrc_every;
};

/* A packet the QP has decided to send next: an index into its PSNs. */
struct pending {
	uint64_t idx;
	bool bad_icrc;
};

struct qp {
	int fd;
	uint16_t sport;
	uint32_t dqpn;
	struct pkt pkt;
	uint64_t next_idx;		/* PSN indexes handed out so far */
	struct pending pend[2];		/* a swapped pair needs two */
	int npend;
	bool done;
	uint64_t packets, bytes;
	uint32_t first_psn, last_psn;
	uint64_t skipped, duplicated, swapped, bad_icrc;
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

void send_usage(void)
{
	fprintf(stderr,
"Usage: roce-gen send dst ADDR [ src ADDR ] [ dev IFNAME ]\n"
"                     [ qps N ] [ qpn FIRST_QPN ] [ sport PORT ]\n"
"                     [ count PKTS_PER_QP ] [ duration SECS ] [ rate PPS ]\n"
"                     [ size BYTES ] [ opcode OP ] [ dscp DSCP | tclass TC ]\n"
"                     [ psn FIRST_PSN ] [ pkey PKEY ] [ json FILE ]\n"
"                     [ skip-every N ] [ dup-every N ] [ swap-every N ]\n"
"                     [ bad-icrc-every N ] [ sndbuf BYTES ] [ allow-any-netns ]\n"
"  dst ADDR        IPv4 or IPv6 destination; required, there is no default\n"
"  src ADDR        source address to bind; default: the route's source\n"
"  dev IFNAME      bind the sockets to IFNAME (SO_BINDTODEVICE)\n"
"  qps N           QPs (flows), 1..%d, default 1; QP i has dest QP FIRST_QPN+i\n"
"                  (default 256) and its own UDP source port: hashed from\n"
"                  the QPN into 49152..65535, or PORT+i with sport PORT\n"
"  count N         PSNs per QP (default 1000); duration SECS: send for SECS\n"
"                  (no count limit unless count is given too)\n"
"  rate PPS        total packets/s over all QPs, paced; 0 = unpaced; default 1000\n"
"  size BYTES      payload after the BTH (and RETH/DETH/ImmDt), default 1024\n"
"  opcode OP       rc-send-only (default), rc-send-first, rc-send-middle,\n"
"                  rc-send-last, rc-send-only-imm, rc-write-only, uc-send-only,\n"
"                  ud-send-only, or the opcode number of one of them\n"
"  dscp DSCP       DSCP 0..63; tclass TC: the whole TOS/traffic class byte\n"
"  psn FIRST_PSN   first PSN of every QP (default 0); PSNs wrap at 2^24\n"
"  pkey PKEY       BTH partition key, default 0xffff\n"
"  skip-every N    every Nth PSN of a QP is not sent (loss the sink must see)\n"
"  dup-every N     every Nth packet is sent twice\n"
"  swap-every N    every Nth packet is sent after the one that follows it\n"
"  bad-icrc-every N  every Nth packet carries a wrong ICRC\n"
"  sndbuf BYTES    each socket's send buffer (SO_SNDBUFFORCE; default 4 MiB):\n"
"                  how far an unpaced sender runs ahead of a slower qdisc\n"
"  allow-any-netns send although not inside an \"ip netns\" namespace\n"
"Writes a JSON summary to FILE (json FILE) or stdout.\n", MAX_QPS);
}

static void parse_opts(int argc, char **argv, struct send_opts *o)
{
	bool have_dst = false;

	args_begin("send", send_usage);
	*o = (struct send_opts) {
		.qps = 1, .qpn = 256, .count = 1000, .size = 1024,
		.rate = 1000, .opcode = OP_RC_SEND_ONLY, .pkey = BTH_PKEY_DEFAULT,
		.sndbuf = 4 << 20,
	};
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "help") || !strcmp(a, "-h") || !strcmp(a, "--help")) {
			send_usage();
			exit(0);
		} else if (!strcmp(a, "dst")) {
			const char *v = next_arg(argc, argv, &i);

			if (addr_parse(v, &o->dst, &o->dst_len))
				usage_err("bad address \"%s\" for \"dst\"", v);
			have_dst = true;
		} else if (!strcmp(a, "src")) {
			const char *v = next_arg(argc, argv, &i);

			if (addr_parse(v, &o->src, &o->src_len))
				usage_err("bad address \"%s\" for \"src\"", v);
			o->have_src = true;
		} else if (!strcmp(a, "dev")) {
			o->dev = next_arg(argc, argv, &i);
			if (strlen(o->dev) >= IFNAMSIZ)
				usage_err("bad interface name \"%s\" for \"dev\"", o->dev);
		} else if (!strcmp(a, "qps")) {
			o->qps = num_arg(argc, argv, &i, 1, MAX_QPS);
		} else if (!strcmp(a, "qpn")) {
			o->qpn = num_arg(argc, argv, &i, 1, QPN_MASK);
		} else if (!strcmp(a, "sport")) {
			o->sport = num_arg(argc, argv, &i, 1, 65535);
			o->have_sport = true;
		} else if (!strcmp(a, "count")) {
			o->count = num_arg(argc, argv, &i, 1, UINT64_MAX / 2);
			o->have_count = true;
		} else if (!strcmp(a, "duration")) {
			const char *v = next_arg(argc, argv, &i);

			if (!parse_double(v, 0.001, 1e7, &o->duration))
				usage_err("bad value \"%s\" for \"duration\"", v);
		} else if (!strcmp(a, "rate")) {
			const char *v = next_arg(argc, argv, &i);

			if (!parse_double(v, 0, 1e8, &o->rate))
				usage_err("bad value \"%s\" for \"rate\"", v);
		} else if (!strcmp(a, "size")) {
			o->size = num_arg(argc, argv, &i, 0, PKT_MAX_PAYLOAD);
		} else if (!strcmp(a, "opcode")) {
			const char *v = next_arg(argc, argv, &i);

			o->opcode = bth_opcode_parse(v);
			if (o->opcode < 0)
				usage_err("unknown opcode \"%s\"", v);
		} else if (!strcmp(a, "dscp")) {
			o->tclass = (int)num_arg(argc, argv, &i, 0, 63) << 2;
		} else if (!strcmp(a, "tclass") || !strcmp(a, "tos")) {
			o->tclass = (int)num_arg(argc, argv, &i, 0, 255);
		} else if (!strcmp(a, "psn")) {
			o->psn = num_arg(argc, argv, &i, 0, PSN_MASK);
		} else if (!strcmp(a, "pkey")) {
			o->pkey = num_arg(argc, argv, &i, 0, 0xffff);
		} else if (!strcmp(a, "json")) {
			o->json = next_arg(argc, argv, &i);
		} else if (!strcmp(a, "skip-every")) {
			o->skip_every = num_arg(argc, argv, &i, 2, UINT32_MAX);
		} else if (!strcmp(a, "dup-every")) {
			o->dup_every = num_arg(argc, argv, &i, 1, UINT32_MAX);
		} else if (!strcmp(a, "swap-every")) {
			o->swap_every = num_arg(argc, argv, &i, 2, UINT32_MAX);
		} else if (!strcmp(a, "bad-icrc-every")) {
			o->bad_icrc_every = num_arg(argc, argv, &i, 1, UINT32_MAX);
		} else if (!strcmp(a, "sndbuf")) {
			o->sndbuf = (int)num_arg(argc, argv, &i, 4096, 1 << 30);
		} else if (!strcmp(a, "allow-any-netns")) {
			o->allow_any_netns = true;
		} else {
			usage_err("unknown option \"%s\"", a);
		}
	}
	if (!have_dst)
		usage_err("%s", "\"dst ADDR\" is required");
	addr_set_port(&o->dst, ROCE_UDP_PORT);
	if (o->have_src && o->src.ss_family != o->dst.ss_family)
		usage_err("%s", "\"src\" and \"dst\" must be the same family");
	if (o->duration > 0 && !o->have_count)
		o->count = 0;		/* duration alone: no count limit */
	if (o->qpn + o->qps - 1 > QPN_MASK)
		usage_err("%s", "\"qpn\" + \"qps\" exceed the 24-bit QPN space");
	if (o->have_sport && o->sport + o->qps - 1 > 65535)
		usage_err("%s", "\"sport\" + \"qps\" exceed 65535");
}

static bool every(uint64_t n, uint64_t idx)
{
	return n && (idx + 1) % n == 0;
}

/* Decide what the QP sends next, applying the injected faults. */
static void qp_refill(struct qp *q, const struct send_opts *o, bool last_round)
{
	uint64_t k;

	while (!q->npend) {
		if (last_round || (o->count && q->next_idx >= o->count)) {
			q->done = true;
			return;
		}
		k = q->next_idx++;
		if (every(o->skip_every, k)) {
			q->skipped++;
			continue;
		}
		if (every(o->swap_every, k) &&
		    (!o->count || k + 1 < o->count) && !every(o->skip_every, k + 1)) {
			q->next_idx++;
			q->pend[0] = (struct pending){ k + 1, every(o->bad_icrc_every, k + 1) };
			q->pend[1] = (struct pending){ k, every(o->bad_icrc_every, k) };
			q->npend = 2;
			q->swapped++;
			break;
		}
		q->pend[0] = (struct pending){ k, every(o->bad_icrc_every, k) };
		q->npend = 1;
		if (every(o->dup_every, k)) {
			q->pend[1] = q->pend[0];
			q->npend = 2;
			q->duplicated++;
		}
	}
}

static uint16_t sport_hash(uint32_t qpn)
{
	uint32_t h = qpn * 0x9e3779b1u;

	h ^= h >> 15;
	return (uint16_t)(SPORT_HASH_BASE | (h & 0x3fff));
}

static int set_sockopts(int fd, const struct send_opts *o)
{
	int v6 = o->dst.ss_family == AF_INET6;
	int pmtu = v6 ? IPV6_PMTUDISC_DO : IP_PMTUDISC_DO;
	int tc = o->tclass, sndbuf = o->sndbuf;

	if (setsockopt(fd, v6 ? IPPROTO_IPV6 : IPPROTO_IP,
		       v6 ? IPV6_MTU_DISCOVER : IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)) ||
	    setsockopt(fd, v6 ? IPPROTO_IPV6 : IPPROTO_IP,
		       v6 ? IPV6_TCLASS : IP_TOS, &tc, sizeof(tc)))
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	if (o->dev && setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, o->dev,
				 (socklen_t)strlen(o->dev) + 1))
		return -1;
	return 0;
}

/* Ask the routing table which source address reaches dst. */
static int pick_source(struct send_opts *o)
{
	struct sockaddr_storage ss = o->dst;
	socklen_t len = sizeof(o->src);
	int fd = socket(o->dst.ss_family, SOCK_DGRAM, 0);

	if (fd < 0)
		return -1;
	addr_set_port(&ss, ROCE_UDP_PORT);
	if ((o->dev && setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, o->dev,
				  (socklen_t)strlen(o->dev) + 1)) ||
	    connect(fd, (struct sockaddr *)&ss, o->dst_len) ||
	    getsockname(fd, (struct sockaddr *)&o->src, &len)) {
		close(fd);
		return -1;
	}
	close(fd);
	o->src_len = len;
	addr_set_port(&o->src, 0);
	return 0;
}

static int qp_open(struct qp *q, const struct send_opts *o, uint32_t dqpn,
		   uint16_t sport, bool probe, uint8_t *used)
{
	struct sockaddr_storage bind_addr = o->src;
	struct roce_addr ra = { .family = o->dst.ss_family, .dport = ROCE_UDP_PORT };

	q->dqpn = dqpn;
	q->fd = socket(o->dst.ss_family, SOCK_DGRAM, 0);
	if (q->fd < 0 || set_sockopts(q->fd, o))
		return -1;
	for (int tries = 0;; tries++) {
		/* Hashed ports: skip ports our other QPs own or others bound. */
		while (probe && used[sport - SPORT_HASH_BASE])
			sport = sport == 0xffff ? SPORT_HASH_BASE : sport + 1;
		addr_set_port(&bind_addr, sport);
		if (!bind(q->fd, (struct sockaddr *)&bind_addr, o->src_len))
			break;
		if (!probe || errno != EADDRINUSE || tries > 16384)
			return -1;
		used[sport - SPORT_HASH_BASE] = 1;
	}
	if (probe)
		used[sport - SPORT_HASH_BASE] = 1;
	q->sport = sport;
	addr_bytes(&o->src, &ra.src);
	addr_bytes(&o->dst, &ra.dst);
	ra.sport = sport;
	return pkt_init(&q->pkt, &ra, (uint8_t)o->opcode, dqpn,
			(uint16_t)o->pkey, o->size);
}

/*
 * Send one datagram; retries what the kernel asks us to retry. Returns 1,
 * the datagram not sent, when a stop was asked for while the send waited
 * (a qdisc holding the flow keeps the socket's buffer full for as long as
 * it likes: without this a blocked sender could not be stopped).
 */
static int qp_xmit(struct qp *q, const struct send_opts *o)
{
	struct pending p = q->pend[0];
	uint32_t psn = (uint32_t)((o->psn + p.idx) & PSN_MASK);

	pkt_set_psn(&q->pkt, psn, false, p.bad_icrc);
	for (;;) {
		ssize_t n = sendto(q->fd, q->pkt.buf, q->pkt.len, 0,
				   (const struct sockaddr *)&o->dst, o->dst_len);

		if (n == (ssize_t)q->pkt.len)
			break;
		if (n < 0 && errno == EINTR && stop_requested)
			return 1;
		if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == ENOBUFS)) {
			usleep(errno == EINTR ? 0 : 100);
			continue;
		}
		return -1;
	}
	if (!q->packets)
		q->first_psn = psn;
	q->last_psn = psn;
	q->packets++;
	q->bytes += q->pkt.len;
	if (p.bad_icrc)
		q->bad_icrc++;
	q->pend[0] = q->pend[1];
	q->npend--;
	return 0;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = {
		.tv_sec = (time_t)(t / 1000000000ull),
		.tv_nsec = (long)(t % 1000000000ull),
	};

	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

static struct json_object *report(const struct send_opts *o, struct qp *qps,
				  uint64_t elapsed_ns)
{
	struct json_object *root = json_object_new_object();
	struct json_object *tot = json_object_new_object();
	struct json_object *inj = json_object_new_object();
	struct json_object *arr = json_object_new_array();
	uint64_t pk = 0, by = 0, skip = 0, dup = 0, swap = 0, bad = 0;
	double secs = (double)elapsed_ns / 1e9;
	char buf[ADDR_STRLEN];

	for (uint64_t i = 0; i < o->qps; i++) {
		struct qp *q = &qps[i];
		struct json_object *j = json_object_new_object();

		json_object_object_add(j, "dest_qp", json_object_new_int64(q->dqpn));
		json_object_object_add(j, "sport", json_object_new_int(q->sport));
		json_object_object_add(j, "packets", json_object_new_int64((int64_t)q->packets));
		json_object_object_add(j, "bytes", json_object_new_int64((int64_t)q->bytes));
		json_object_object_add(j, "psns", json_object_new_int64((int64_t)q->next_idx));
		json_object_object_add(j, "first_psn", json_object_new_int64(q->first_psn));
		json_object_object_add(j, "last_psn", json_object_new_int64(q->last_psn));
		json_object_object_add(j, "skipped", json_object_new_int64((int64_t)q->skipped));
		json_object_object_add(j, "duplicated", json_object_new_int64((int64_t)q->duplicated));
		json_object_object_add(j, "swapped", json_object_new_int64((int64_t)q->swapped));
		json_object_object_add(j, "bad_icrc", json_object_new_int64((int64_t)q->bad_icrc));
		json_object_array_add(arr, j);
		pk += q->packets;
		by += q->bytes;
		skip += q->skipped;
		dup += q->duplicated;
		swap += q->swapped;
		bad += q->bad_icrc;
	}
	json_object_object_add(root, "mode", json_object_new_string("send"));
	json_object_object_add(root, "src", json_object_new_string(addr_str(&o->src, buf)));
	json_object_object_add(root, "dst", json_object_new_string(addr_str(&o->dst, buf)));
	json_object_object_add(root, "opcode", json_object_new_string(bth_opcode_name((uint8_t)o->opcode)));
	json_object_object_add(root, "qp_count", json_object_new_int64((int64_t)o->qps));
	json_object_object_add(root, "payload_size", json_object_new_int64((int64_t)o->size));
	json_object_object_add(root, "udp_payload_size", json_object_new_int64((int64_t)qps[0].pkt.len));
	json_object_object_add(root, "tclass", json_object_new_int(o->tclass));
	json_object_object_add(root, "target_rate_pps", json_object_new_double(o->rate));
	json_object_object_add(root, "duration_s", json_object_new_double(secs));
	json_object_object_add(root, "rate_pps", json_object_new_double(secs > 0 ? (double)pk / secs : 0));
	json_object_object_add(tot, "packets", json_object_new_int64((int64_t)pk));
	json_object_object_add(tot, "bytes", json_object_new_int64((int64_t)by));
	json_object_object_add(root, "totals", tot);
	json_object_object_add(inj, "skipped", json_object_new_int64((int64_t)skip));
	json_object_object_add(inj, "duplicated", json_object_new_int64((int64_t)dup));
	json_object_object_add(inj, "swapped", json_object_new_int64((int64_t)swap));
	json_object_object_add(inj, "bad_icrc", json_object_new_int64((int64_t)bad));
	json_object_object_add(root, "injected", inj);
	json_object_object_add(root, "qps", arr);
	return root;
}

static int run(struct send_opts *o)
{
	uint8_t *used = calloc(MAX_QPS, 1);
	struct qp *qps = calloc(o->qps, sizeof(*qps));
	uint64_t t0, end = 0, sent = 0, rr = 0, live = o->qps;
	double interval = o->rate > 0 ? 1e9 / o->rate : 0;
	struct json_object *js;
	int err = 0, rc;

	if (!used || !qps) {
		perror("roce-gen: send");
		exit(1);
	}
	for (uint64_t i = 0; i < o->qps; i++) {
		uint32_t dqpn = (uint32_t)(o->qpn + i);
		uint16_t sport = o->have_sport ? (uint16_t)(o->sport + i) : sport_hash(dqpn);

		if (qp_open(&qps[i], o, dqpn, sport, !o->have_sport, used)) {
			fprintf(stderr, "roce-gen: send: QP %u: %s\n", dqpn, strerror(errno));
			exit(1);
		}
	}
	prctl(PR_SET_TIMERSLACK, 1UL);
	t0 = now_ns(CLOCK_MONOTONIC);
	if (o->duration > 0)
		end = t0 + (uint64_t)(o->duration * 1e9);
	while (live) {
		struct qp *q = &qps[rr];
		bool last_round = stop_requested;
		uint64_t now = 0;

		rr = (rr + 1) % o->qps;
		if (q->done)
			continue;
		if (interval > 0 || end) {
			now = now_ns(CLOCK_MONOTONIC);
			last_round |= end && now >= end;
		}
		/* Stopping early: finish a swapped pair, start nothing new. */
		if (!q->npend)
			qp_refill(q, o, last_round);
		if (q->done) {
			live--;
			continue;
		}
		if (interval > 0) {
			uint64_t due = t0 + (uint64_t)((double)sent * interval);

			if (now > due + RESYNC_NS)
				t0 += now - due;	/* fell behind: do not burst */
			else if (due > now)
				sleep_until(due);
		}
		rc = qp_xmit(q, o);
		if (rc > 0)
			break;		/* stopped while blocked */
		if (rc) {
			fprintf(stderr, "roce-gen: send: QP %u: %s\n", q->dqpn, strerror(errno));
			err = 1;
			break;
		}
		sent++;
	}
	js = report(o, qps, now_ns(CLOCK_MONOTONIC) - t0);
	if (json_write(js, o->json))
		err = 1;
	json_object_put(js);
	for (uint64_t i = 0; i < o->qps; i++) {
		close(qps[i].fd);
		pkt_free(&qps[i].pkt);
	}
	free(qps);
	free(used);
	return err;
}

int send_main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct send_opts o;
	struct rlimit rl;

	parse_opts(argc, argv, &o);
	if (!o.allow_any_netns && !in_named_netns()) {
		fprintf(stderr, "roce-gen: send: refusing to send outside a test network "
			"namespace; run it under \"ip netns exec NAME\" or add "
			"\"allow-any-netns\"\n");
		return 2;
	}
	if (!o.have_src && pick_source(&o)) {
		fprintf(stderr, "roce-gen: send: no route to dst: %s\n", strerror(errno));
		return 1;
	}
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < o.qps + 64) {
		rl.rlim_cur = o.qps + 64;
		if (rl.rlim_max < rl.rlim_cur)
			rl.rlim_max = rl.rlim_cur;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	return run(&o);
}
