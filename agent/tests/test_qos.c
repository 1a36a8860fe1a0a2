// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the report made of two snapshots (telemetry_qos.c): the
 * changes, the rates, and what counter restarts do to them. The
 * snapshots are made by hand, as telemetry_snapshot() returns them.
 */
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "telemetry_qos.h"
#include "tests/ktap.h"

#define SEC 1000000000ull

static struct telemetry_dev dev(uint32_t ifindex, uint32_t dir, const char *name,
				uint64_t attached)
{
	struct telemetry_dev d;

	memset(&d, 0, sizeof(d));
	d.k.ifindex = ifindex;
	d.k.dir = dir;
	d.at.attached_realtime_ns = attached;
	snprintf(d.name, sizeof(d.name), "%s", name);
	return d;
}

static struct telemetry_qp qp(uint32_t ifindex, uint32_t dqpn, uint64_t first,
			      uint64_t packets, uint64_t bytes, uint64_t lost,
			      uint64_t ooo, uint64_t dup)
{
	struct telemetry_qp q;

	memset(&q, 0, sizeof(q));
	q.k.ifindex = ifindex;
	q.k.dqpn = dqpn;
	q.k.sport = 1000;
	q.k.family = 2;
	q.k.src[0] = 10; q.k.src[3] = 1;
	q.k.dst[0] = 10; q.k.dst[3] = 2;
	q.v.first_ns = first;
	q.v.packets = packets;
	q.v.bytes = bytes;
	q.v.lost = lost;
	q.v.out_of_order = ooo;
	q.v.duplicates = dup;
	return q;
}

static const struct qos_qp *find(const struct qos_report *r, uint32_t qpn,
				 const char *dev)
{
	for (size_t i = 0; i < r->nqps; i++)
		if (r->qps[i].qpn == qpn && !strcmp(r->qps[i].dev, dev))
			return &r->qps[i];
	return NULL;
}

static int counts_eq(const struct qos_counts *c, uint64_t p, uint64_t b,
		     uint64_t l, uint64_t o, uint64_t d)
{
	if (c->packets == p && c->bytes == b && c->lost == l &&
	    c->out_of_order == o && c->duplicates == d)
		return 1;
	printf("# got %llu %llu %llu %llu %llu, want %llu %llu %llu %llu %llu\n",
	       (unsigned long long)c->packets, (unsigned long long)c->bytes,
	       (unsigned long long)c->lost, (unsigned long long)c->out_of_order,
	       (unsigned long long)c->duplicates, (unsigned long long)p,
	       (unsigned long long)b, (unsigned long long)l,
	       (unsigned long long)o, (unsigned long long)d);
	return 0;
}

/* The report must be one the decoder takes: encode and decode it. */
static int decodable(struct qos_report *r)
{
	struct msg m = { .type = &msg_qos_type, .node = "n", .body = r }, back;
	char err[256], *frame;
	size_t len;
	int ok;

	if (msg_encode(&m, &frame, &len, err, sizeof(err))) {
		printf("# encode: %s\n", err);
		return 0;
	}
	ok = !msg_decode(frame + MSG_HDR_LEN, len - MSG_HDR_LEN, &back, err,
			 sizeof(err));
	if (!ok)
		printf("# decode: %s\n", err);
	else
		msg_free(&back);
	free(frame);
	return ok;
}

int main(void)
{
	struct telemetry_dev pd[2], cd[3];
	struct telemetry_qp pq[5], cq[7];
	struct telemetry_snap prev = { pd, 2, pq, 5, 10 * SEC, 0 };
	struct telemetry_snap cur = { cd, 3, cq, 7, 12 * SEC, 1764000000 * SEC };
	struct telemetry_snap none = { 0 };
	const struct qos_qp *q;
	struct qos_report r;

	/* e0 (3) stays attached, e1 (4) is detached and attached again. */
	pd[0] = dev(3, 0, "e0", 100);
	pd[1] = dev(4, 0, "e1", 100);
	pq[0] = qp(3, 1, 5, 100, 10000, 5, 2, 1);	/* goes on */
	pq[1] = qp(3, 2, 5, 1000, 100000, 0, 0, 0);	/* deleted, made again */
	pq[2] = qp(3, 3, 5, 1000, 100000, 0, 0, 0);	/* counters went down */
	pq[3] = qp(4, 1, 5, 10, 1000, 0, 0, 0);	/* on the re-attached e1 */
	pq[4] = qp(3, 9, 5, 10, 1000, 0, 0, 0);	/* gone by now */
	cd[0] = dev(3, 0, "e0", 100);
	cd[1] = dev(4, 0, "e1", 200);
	cd[2] = dev(5, 1, "e2", 300);		/* attached since */
	cq[0] = qp(3, 1, 5, 300, 30000, 4, 3, 1);	/* lost fell 5 -> 4 */
	cq[1] = qp(3, 2, 11 * SEC, 2000, 150000, 10, 0, 0);
	cq[2] = qp(3, 3, 5, 50, 5000, 0, 0, 0);
	cq[3] = qp(4, 1, 11 * SEC, 20, 2000, 0, 0, 0);
	cq[4] = qp(3, 4, 11 * SEC, 90, 9000, 10, 0, 0);	/* new */
	cq[5] = qp(5, 1, 11 * SEC, 7, 700, 0, 0, 0);
	cq[5].k.dir = 1;
	cq[6] = qp(6, 1, 11 * SEC, 7, 700, 0, 0, 0);	/* not attached */

	ktap_plan(13);
	ktap_check(!telemetry_qos_report(&prev, &cur, &r), "report made");
	ktap_check(r.interval_us == 2000000 && r.time_ms == 1764000000000ull &&
		   r.ndevs == 3 && r.nqps == 6 && !r.qps_omitted,
		   "interval from the snapshots' clocks; unattached QP left out");
	q = find(&r, 1, "e0");
	ktap_check(q && counts_eq(&q->iv.d, 200, 20000, 0, 1, 0) &&
		   counts_eq(&q->total, 300, 30000, 4, 3, 1),
		   "a QP that goes on: changes; lost falling is 0, not negative or 2^64-1");
	ktap_check(q && q->iv.throughput_bps == 80000 && q->iv.loss_rate == 0,
		   "throughput over the interval in bit/s");
	q = find(&r, 2, "e0");
	ktap_check(q && counts_eq(&q->iv.d, 2000, 150000, 10, 0, 0),
		   "a QP made again (new first packet): its count since, not cur - prev");
	q = find(&r, 3, "e0");
	ktap_check(q && counts_eq(&q->iv.d, 50, 5000, 0, 0, 0),
		   "counters that went down: a restart, not a huge change");
	q = find(&r, 1, "e1");
	ktap_check(q && counts_eq(&q->iv.d, 20, 2000, 0, 0, 0),
		   "a device attached again: its QPs restart, even when higher than before");
	q = find(&r, 4, "e0");
	ktap_check(q && counts_eq(&q->iv.d, 90, 9000, 10, 0, 0) &&
		   q->iv.loss_rate == 0.1 && q->iv.throughput_bps == 36000,
		   "a new QP: its whole count; loss rate lost / (packets + lost)");
	ktap_check(r.devs[0].dir == 0 && !strcmp(r.devs[0].dev, "e0") &&
		   counts_eq(&r.devs[0].total, 2440, 194000, 24, 3, 1) &&
		   counts_eq(&r.devs[0].iv.d, 2340, 184000, 20, 1, 0) &&
		   r.devs[0].iv.throughput_bps == 736000,
		   "a device: the sums of its QPs' totals and changes");
	ktap_check(r.qps[0].qpn == 2 && r.qps[r.nqps - 1].iv.d.bytes == 700,
		   "busiest QP first");
	ktap_check(decodable(&r), "the report is one the decoder accepts");
	qos_report_free(&r);

	ktap_check(!telemetry_qos_report(&none, &cur, &r) && r.interval_us == 0 &&
		   r.devs[0].iv.throughput_bps == 0 && decodable(&r),
		   "no snapshot before: interval 0, throughput 0");
	qos_report_free(&r);

	/* More QPs than a report carries: the busiest, and a count of the rest. */
	{
		size_t n = QOS_MAX_QPS + 10;
		struct telemetry_qp *many = calloc(n, sizeof(*many));
		struct telemetry_snap big = { cd, 1, many, n, 12 * SEC, 0 };
		int ok;

		for (size_t i = 0; i < n; i++)
			many[i] = qp(3, (uint32_t)i, 11 * SEC, 1, i == 5 ? 99999 : 100, 0, 0, 0);
		ok = !telemetry_qos_report(&prev, &big, &r) &&
		     r.nqps == QOS_MAX_QPS && r.qps_omitted == 10 &&
		     r.qps[0].qpn == 5 && r.devs[0].total.packets == n &&
		     decodable(&r);
		ktap_check(ok, "4106 QPs: 4096 reported, busiest first, 10 omitted, all in the device's sums");
		qos_report_free(&r);
		free(many);
	}
	return ktap_finish();
}
