// SPDX-License-Identifier: GPL-2.0
/*
 * A type-5 report from two snapshots: see telemetry_qos.h for how the
 * changes are taken and what a counter restart does.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "telemetry_qos.h"

static int key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct rt_qp_key));
}

static int ptr_key_cmp(const void *a, const void *b)
{
	return key_cmp(&(*(const struct telemetry_qp *const *)a)->k,
		       &(*(const struct telemetry_qp *const *)b)->k);
}

static int dev_cmp(const void *key, const void *elem)
{
	const struct rt_dev_key *k = key;
	const struct telemetry_dev *d = elem;

	if (k->ifindex != d->k.ifindex)
		return k->ifindex < d->k.ifindex ? -1 : 1;
	return k->dir < d->k.dir ? -1 : k->dir > d->k.dir;
}

static const struct telemetry_dev *find_dev(const struct telemetry_snap *s,
					    uint32_t ifindex, uint32_t dir)
{
	struct rt_dev_key k = { .ifindex = ifindex, .dir = dir };

	if (!s->ndevs)
		return NULL;	/* and s->devs may be NULL */
	/* telemetry_snapshot() sorts the devices by ifindex, direction. */
	return bsearch(&k, s->devs, s->ndevs, sizeof(*s->devs), dev_cmp);
}

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static void counts_of(const struct rt_qp *v, struct qos_counts *c)
{
	c->packets = v->packets;
	c->bytes = v->bytes;
	c->lost = v->lost;
	c->out_of_order = v->out_of_order;
	c->duplicates = v->duplicates;
}

static void counts_add(struct qos_counts *a, const struct qos_counts *b)
{
	a->packets += b->packets;
	a->bytes += b->bytes;
	a->lost += b->lost;
	a->out_of_order += b->out_of_order;
	a->duplicates += b->duplicates;
}

/* The change of one QP; @p is its entry in the snapshot before, or NULL. */
static void qp_change(const struct rt_qp *c, const struct rt_qp *p,
		      struct qos_counts *d)
{
	counts_of(c, d);
	/* The same entry: same first packet, and no counter went down. */
	if (!p || p->first_ns != c->first_ns || c->packets < p->packets ||
	    c->bytes < p->bytes || c->out_of_order < p->out_of_order ||
	    c->duplicates < p->duplicates)
		return;
	d->packets -= p->packets;
	d->bytes -= p->bytes;
	d->out_of_order -= p->out_of_order;
	d->duplicates -= p->duplicates;
	d->lost = sub0(c->lost, p->lost);
}

/* Busiest first over the interval; ties by QP, port, source, device. */
static int busiest_cmp(const void *a, const void *b)
{
	const struct qos_qp *x = a, *y = b;
	int c;

	if (x->iv.d.bytes != y->iv.d.bytes)
		return x->iv.d.bytes > y->iv.d.bytes ? -1 : 1;
	if (x->qpn != y->qpn)
		return x->qpn < y->qpn ? -1 : 1;
	if (x->sport != y->sport)
		return x->sport < y->sport ? -1 : 1;
	c = strcmp(x->src, y->src);
	if (!c)
		c = strcmp(x->dev, y->dev);
	return c ? c : (int)x->dir - (int)y->dir;
}

int telemetry_qos_report(const struct telemetry_snap *prev,
			 const struct telemetry_snap *cur,
			 struct qos_report *r)
{
	const struct telemetry_qp **index;
	size_t n = 0;

	memset(r, 0, sizeof(*r));
	r->time_ms = cur->real_ns / 1000000;
	r->interval_us = prev->mono_ns && cur->mono_ns > prev->mono_ns ?
		(cur->mono_ns - prev->mono_ns) / 1000 : 0;
	r->devs = calloc(cur->ndevs + 1, sizeof(*r->devs));
	r->qps = calloc(cur->nqps + 1, sizeof(*r->qps));
	index = calloc(prev->nqps + 1, sizeof(*index));
	if (!r->devs || !r->qps || !index) {
		free(index);
		qos_report_free(r);
		return -1;
	}
	for (size_t i = 0; i < prev->nqps; i++)
		index[i] = &prev->qps[i];
	qsort(index, prev->nqps, sizeof(*index), ptr_key_cmp);

	for (size_t i = 0; i < cur->ndevs; i++) {
		const struct telemetry_dev *d = &cur->devs[i];
		struct qos_dev *o = &r->devs[i];

		snprintf(o->dev, sizeof(o->dev), "%s", d->name);
		o->dir = d->k.dir & 1;
		o->packets = d->sum.c[RT_DEV_PACKETS];
		o->malformed = d->sum.c[RT_DEV_SHORT] + d->sum.c[RT_DEV_BAD_VERSION];
		o->qp_overflow = d->sum.c[RT_DEV_QP_OVERFLOW];
	}
	r->ndevs = cur->ndevs;

	for (size_t i = 0; i < cur->nqps; i++) {
		const struct telemetry_qp *q = &cur->qps[i], *pq = NULL, **hit;
		const struct telemetry_dev *d, *pd;
		struct qos_dev *od;
		struct qos_qp *o = &r->qps[n];
		int family = q->k.family == 2 ? AF_INET : AF_INET6;

		d = find_dev(cur, q->k.ifindex, q->k.dir);
		if (!d)
			continue;	/* not (any more) attached: not counted */
		od = &r->devs[d - cur->devs];
		/* A device attached anew restarted its QPs' counters. */
		pd = find_dev(prev, q->k.ifindex, q->k.dir);
		if (pd && prev->nqps &&
		    pd->at.attached_realtime_ns == d->at.attached_realtime_ns) {
			const struct telemetry_qp *key = q;

			hit = bsearch(&key, index, prev->nqps, sizeof(*index),
				      ptr_key_cmp);
			pq = hit ? *hit : NULL;
		}
		snprintf(o->dev, sizeof(o->dev), "%s", d->name);
		o->dir = q->k.dir & 1;
		format_addr(family, q->k.src, o->src, sizeof(o->src));
		format_addr(family, q->k.dst, o->dst, sizeof(o->dst));
		o->sport = q->k.sport;
		o->qpn = q->k.dqpn & 0xffffff;
		counts_of(&q->v, &o->total);
		qp_change(&q->v, pq ? &pq->v : NULL, &o->iv.d);
		qos_interval_rates(&o->iv, r->interval_us);
		counts_add(&od->total, &o->total);
		counts_add(&od->iv.d, &o->iv.d);
		n++;
	}
	for (size_t i = 0; i < r->ndevs; i++)
		qos_interval_rates(&r->devs[i].iv, r->interval_us);
	/* The busiest QPs, as many as a report carries. */
	qsort(r->qps, n, sizeof(*r->qps), busiest_cmp);
	r->nqps = n > QOS_MAX_QPS ? QOS_MAX_QPS : n;
	r->qps_omitted = n - r->nqps;
	free(index);
	return 0;
}
