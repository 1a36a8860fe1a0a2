// SPDX-License-Identifier: GPL-2.0
/*
 * Type 5, the QoS telemetry report (msg_qos.h): its JSON form both ways.
 *
 *   "time_ms": T, "interval_us": I,
 *   "devices": [ { "dev", "direction", "packets", "malformed",
 *                  "qp_overflow", "total": C, "interval": V } ],
 *   "qps": [ { "dev", "direction", "src", "sport", "dst", "qpn",
 *              "total": C, "interval": V } ],
 *   "qps_omitted": N,
 *   "tunnels": [ { "id", "active": "primary"|"backup", "state": "up"|"down",
 *                  "packets", "bytes", "flows", "switches",
 *                  "paths": [ T ], "backup": T } ],     (backup optional)
 *   "tunnels_omitted": N                       (both optional: with the module)
 *
 *   T = { "packets", "bytes", "flows" }, a segment list's
 *
 *   C = { "packets", "bytes", "lost", "out_of_order", "duplicates" }
 *   V = C + { "throughput_bps", "loss_rate" }
 *
 * Beyond the types, the decoder holds a report to what the encoder makes
 * of counters: an interval's change is never above its total, and the
 * throughput and loss rate are those of the interval's changes.
 */
#include <arpa/inet.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg_qos.h"

static const char *const dir_names[] = { "ingress", "egress" };
static const char *const count_keys[] = {
	"packets", "bytes", "lost", "out_of_order", "duplicates", NULL,
};
static const char *const rate_keys[] = { "throughput_bps", "loss_rate", NULL };

static uint64_t *count_field(struct qos_counts *c, size_t i)
{
	uint64_t *f[] = { &c->packets, &c->bytes, &c->lost, &c->out_of_order,
			  &c->duplicates };

	return f[i];
}

void qos_interval_rates(struct qos_interval *iv, uint64_t interval_us)
{
	uint64_t seen = iv->d.packets + iv->d.lost;

	/* 128 bits: a 64-bit byte count times 8e6 does not fit 64. */
	iv->throughput_bps = interval_us ?
		(uint64_t)(((unsigned __int128)iv->d.bytes * 8000000u +
			    interval_us / 2) / interval_us) : 0;
	iv->loss_rate = seen ? (double)iv->d.lost / (double)seen : 0;
}

void qos_report_free(struct qos_report *r)
{
	free(r->devs);
	free(r->qps);
	free(r->tunnels);
	r->tunnels = NULL;
	r->ntunnels = 0;
	r->devs = NULL;
	r->qps = NULL;
	r->ndevs = r->nqps = 0;
}

/* --- encode ------------------------------------------------------------ */

static struct json_object *counts_json(const struct qos_counts *c)
{
	struct json_object *o = json_object_new_object();

	for (size_t i = 0; count_keys[i]; i++)
		json_object_object_add(o, count_keys[i], json_object_new_uint64(
			*count_field((struct qos_counts *)c, i)));
	return o;
}

static struct json_object *interval_json(const struct qos_interval *iv)
{
	struct json_object *o = counts_json(&iv->d);

	json_object_object_add(o, "throughput_bps",
			       json_object_new_uint64(iv->throughput_bps));
	json_object_object_add(o, "loss_rate",
			       json_object_new_double(iv->loss_rate));
	return o;
}

static const char *const tpath_keys[] = { "packets", "bytes", "flows", NULL };
static const char *const tunnel_keys[] = {
	"id", "active", "state", "packets", "bytes", "flows", "switches",
	"paths", "backup", NULL,
};

static struct json_object *tpath_json(const struct qos_tpath *p)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "packets", json_object_new_uint64(p->packets));
	json_object_object_add(o, "bytes", json_object_new_uint64(p->bytes));
	json_object_object_add(o, "flows", json_object_new_uint64(p->flows));
	return o;
}

static struct json_object *tunnels_json(const struct qos_report *r)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; i < r->ntunnels; i++) {
		const struct qos_tunnel *t = &r->tunnels[i];
		struct json_object *o = json_object_new_object(), *ps;

		json_object_object_add(o, "id", json_object_new_uint64(t->id));
		json_object_object_add(o, "active", json_object_new_string(
			t->on_backup ? "backup" : "primary"));
		json_object_object_add(o, "state", json_object_new_string(
			t->up ? "up" : "down"));
		json_object_object_add(o, "packets", json_object_new_uint64(t->packets));
		json_object_object_add(o, "bytes", json_object_new_uint64(t->bytes));
		json_object_object_add(o, "flows", json_object_new_uint64(t->flows));
		json_object_object_add(o, "switches", json_object_new_uint64(t->switches));
		ps = json_object_new_array();
		for (uint32_t j = 0; j < t->npaths && j < 8; j++)
			json_object_array_add(ps, tpath_json(&t->paths[j]));
		json_object_object_add(o, "paths", ps);
		if (t->has_backup)
			json_object_object_add(o, "backup", tpath_json(&t->backup));
		json_object_array_add(arr, o);
	}
	return arr;
}

static void add_where(struct json_object *o, const char *dev, unsigned int dir)
{
	json_object_object_add(o, "dev", json_object_new_string(dev));
	json_object_object_add(o, "direction",
			       json_object_new_string(dir_names[dir & 1]));
}

static int qos_encode(struct json_object *root, const void *body, char *err,
		      size_t errlen)
{
	const struct qos_report *r = body;
	struct json_object *devs, *qps;

	if (r->ndevs > QOS_MAX_DEVS || r->nqps > QOS_MAX_QPS) {
		snprintf(err, errlen, "more than %d devices or %d QPs",
			 QOS_MAX_DEVS, QOS_MAX_QPS);
		return -1;
	}
	json_object_object_add(root, "time_ms", json_object_new_uint64(r->time_ms));
	json_object_object_add(root, "interval_us",
			       json_object_new_uint64(r->interval_us));
	devs = json_object_new_array();
	for (size_t i = 0; i < r->ndevs; i++) {
		const struct qos_dev *d = &r->devs[i];
		struct json_object *o = json_object_new_object();

		add_where(o, d->dev, d->dir);
		json_object_object_add(o, "packets", json_object_new_uint64(d->packets));
		json_object_object_add(o, "malformed", json_object_new_uint64(d->malformed));
		json_object_object_add(o, "qp_overflow",
				       json_object_new_uint64(d->qp_overflow));
		json_object_object_add(o, "total", counts_json(&d->total));
		json_object_object_add(o, "interval", interval_json(&d->iv));
		json_object_array_add(devs, o);
	}
	json_object_object_add(root, "devices", devs);
	qps = json_object_new_array();
	for (size_t i = 0; i < r->nqps; i++) {
		const struct qos_qp *q = &r->qps[i];
		struct json_object *o = json_object_new_object();

		add_where(o, q->dev, q->dir);
		json_object_object_add(o, "src", json_object_new_string(q->src));
		json_object_object_add(o, "sport", json_object_new_int(q->sport));
		json_object_object_add(o, "dst", json_object_new_string(q->dst));
		json_object_object_add(o, "qpn", json_object_new_int64(q->qpn));
		json_object_object_add(o, "total", counts_json(&q->total));
		json_object_object_add(o, "interval", interval_json(&q->iv));
		json_object_array_add(qps, o);
	}
	json_object_object_add(root, "qps", qps);
	json_object_object_add(root, "qps_omitted",
			       json_object_new_uint64(r->qps_omitted));
	if (r->has_tunnels) {
		if (r->ntunnels > QOS_MAX_TUNNELS) {
			snprintf(err, errlen, "more than %d tunnels", QOS_MAX_TUNNELS);
			return -1;
		}
		json_object_object_add(root, "tunnels", tunnels_json(r));
		json_object_object_add(root, "tunnels_omitted",
				       json_object_new_uint64(r->tunnels_omitted));
	}
	return 0;
}

/* --- decode ------------------------------------------------------------ */

static int get_counts(struct json_object *o, const char *path,
		      struct qos_counts *c, const char *const *more, char *err,
		      size_t errlen)
{
	if (msg_keys_only(o, path, count_keys, more, err, errlen))
		return -1;
	for (size_t i = 0; count_keys[i]; i++)
		if (msg_get_u64(o, path, count_keys[i], UINT64_MAX,
				count_field(c, i), err, errlen))
			return -1;
	return 0;
}

/* "total" and "interval" of @o, held to each other and to @interval_us. */
static int get_total_interval(struct json_object *o, const char *path,
			      uint64_t interval_us, struct qos_counts *total,
			      struct qos_interval *iv, char *err, size_t errlen)
{
	struct json_object *t, *v;
	char tp[96], vp[96];
	struct qos_interval want;

	snprintf(tp, sizeof(tp), "%s.total", path);
	snprintf(vp, sizeof(vp), "%s.interval", path);
	if (msg_get_object(o, path, "total", &t, err, errlen) ||
	    get_counts(t, tp, total, NULL, err, errlen) ||
	    msg_get_object(o, path, "interval", &v, err, errlen) ||
	    get_counts(v, vp, &iv->d, rate_keys, err, errlen) ||
	    msg_get_u64(v, vp, "throughput_bps", UINT64_MAX, &iv->throughput_bps,
			err, errlen) ||
	    msg_get_double(v, vp, "loss_rate", 0, 1, &iv->loss_rate, err,
			   errlen))
		return -1;
	for (size_t i = 0; count_keys[i]; i++) {
		uint64_t d = *count_field(&iv->d, i), a = *count_field(total, i);

		if (d > a) {
			snprintf(err, errlen, "%s.%s: %llu is above the total %llu",
				 vp, count_keys[i], (unsigned long long)d,
				 (unsigned long long)a);
			return -1;
		}
	}
	want.d = iv->d;
	qos_interval_rates(&want, interval_us);
	if (want.throughput_bps != iv->throughput_bps) {
		snprintf(err, errlen, "%s.throughput_bps: %llu, the bytes over interval_us make %llu",
			 vp, (unsigned long long)iv->throughput_bps,
			 (unsigned long long)want.throughput_bps);
		return -1;
	}
	if (fabs(want.loss_rate - iv->loss_rate) > 1e-9) {
		snprintf(err, errlen, "%s.loss_rate: %g, lost over packets and lost make %g",
			 vp, iv->loss_rate, want.loss_rate);
		return -1;
	}
	return 0;
}

static int get_where(struct json_object *o, const char *path, char *dev,
		     size_t devlen, unsigned int *dir, char *err, size_t errlen)
{
	char s[16];

	if (msg_get_string(o, path, "dev", dev, devlen, err, errlen) ||
	    msg_get_string(o, path, "direction", s, sizeof(s), err, errlen))
		return -1;
	if (!strcmp(s, "ingress"))
		*dir = QOS_INGRESS;
	else if (!strcmp(s, "egress"))
		*dir = QOS_EGRESS;
	else {
		snprintf(err, errlen, "%s.direction: \"%s\" is not ingress or egress",
			 path, s);
		return -1;
	}
	return 0;
}

static const char *const dev_keys[] = {
	"dev", "direction", "packets", "malformed", "qp_overflow", "total",
	"interval", NULL,
};
static const char *const qp_keys[] = {
	"dev", "direction", "src", "sport", "dst", "qpn", "total", "interval",
	NULL,
};

static int get_dev(struct json_object *o, const char *path, uint64_t iv_us,
		   struct qos_dev *d, char *err, size_t errlen)
{
	if (!json_object_is_type(o, json_type_object)) {
		snprintf(err, errlen, "%s: expected an object", path);
		return -1;
	}
	return msg_keys_only(o, path, dev_keys, NULL, err, errlen) ||
	       get_where(o, path, d->dev, sizeof(d->dev), &d->dir, err, errlen) ||
	       msg_get_u64(o, path, "packets", UINT64_MAX, &d->packets, err, errlen) ||
	       msg_get_u64(o, path, "malformed", UINT64_MAX, &d->malformed, err,
			   errlen) ||
	       msg_get_u64(o, path, "qp_overflow", UINT64_MAX, &d->qp_overflow,
			   err, errlen) ||
	       get_total_interval(o, path, iv_us, &d->total, &d->iv, err,
				  errlen) ? -1 : 0;
}

static int get_addr(struct json_object *o, const char *path, const char *key,
		    char *buf, size_t size, int *family, char *err,
		    size_t errlen)
{
	unsigned char a[16];

	if (msg_get_string(o, path, key, buf, size, err, errlen))
		return -1;
	if (inet_pton(AF_INET, buf, a) == 1)
		*family = AF_INET;
	else if (inet_pton(AF_INET6, buf, a) == 1)
		*family = AF_INET6;
	else {
		snprintf(err, errlen, "%s.%s: \"%s\" is not an IPv4 or IPv6 address",
			 path, key, buf);
		return -1;
	}
	return 0;
}

static int get_qp(struct json_object *o, const char *path, uint64_t iv_us,
		  struct qos_qp *q, char *err, size_t errlen)
{
	int fs, fd;
	uint64_t v;

	if (!json_object_is_type(o, json_type_object)) {
		snprintf(err, errlen, "%s: expected an object", path);
		return -1;
	}
	if (msg_keys_only(o, path, qp_keys, NULL, err, errlen) ||
	    get_where(o, path, q->dev, sizeof(q->dev), &q->dir, err, errlen) ||
	    get_addr(o, path, "src", q->src, sizeof(q->src), &fs, err, errlen) ||
	    get_addr(o, path, "dst", q->dst, sizeof(q->dst), &fd, err, errlen))
		return -1;
	if (fs != fd) {
		snprintf(err, errlen, "%s.dst: not of the family of src", path);
		return -1;
	}
	if (msg_get_u64(o, path, "sport", 65535, &v, err, errlen))
		return -1;
	q->sport = (uint16_t)v;
	if (msg_get_u64(o, path, "qpn", 0xffffff, &v, err, errlen))
		return -1;
	q->qpn = (uint32_t)v;
	return get_total_interval(o, path, iv_us, &q->total, &q->iv, err, errlen);
}

static int get_tpath(struct json_object *o, const char *path,
		     struct qos_tpath *p, char *err, size_t errlen)
{
	if (!json_object_is_type(o, json_type_object)) {
		snprintf(err, errlen, "%s: expected an object", path);
		return -1;
	}
	return msg_keys_only(o, path, tpath_keys, NULL, err, errlen) ||
	       msg_get_u64(o, path, "packets", UINT64_MAX, &p->packets, err, errlen) ||
	       msg_get_u64(o, path, "bytes", UINT64_MAX, &p->bytes, err, errlen) ||
	       msg_get_u64(o, path, "flows", UINT32_MAX, &p->flows, err, errlen) ?
	       -1 : 0;
}

static int get_word(struct json_object *o, const char *path, const char *key,
		    const char *no, const char *yes, bool *v, char *err,
		    size_t errlen)
{
	char s[16];

	if (msg_get_string(o, path, key, s, sizeof(s), err, errlen))
		return -1;
	if (strcmp(s, no) && strcmp(s, yes)) {
		snprintf(err, errlen, "%s.%s: \"%s\" is not %s or %s", path, key,
			 s, no, yes);
		return -1;
	}
	*v = !strcmp(s, yes);
	return 0;
}

static int get_tunnel(struct json_object *o, const char *path,
		      struct qos_tunnel *t, char *err, size_t errlen)
{
	struct json_object *ps, *b;
	char p[64];
	uint64_t v;

	if (!json_object_is_type(o, json_type_object)) {
		snprintf(err, errlen, "%s: expected an object", path);
		return -1;
	}
	if (msg_keys_only(o, path, tunnel_keys, NULL, err, errlen) ||
	    msg_get_u64(o, path, "id", UINT32_MAX, &v, err, errlen))
		return -1;
	if (!v) {
		snprintf(err, errlen, "%s.id: 0 is no tunnel", path);
		return -1;
	}
	t->id = (uint32_t)v;
	if (get_word(o, path, "active", "primary", "backup", &t->on_backup, err,
		     errlen) ||
	    get_word(o, path, "state", "down", "up", &t->up, err, errlen) ||
	    msg_get_u64(o, path, "packets", UINT64_MAX, &t->packets, err, errlen) ||
	    msg_get_u64(o, path, "bytes", UINT64_MAX, &t->bytes, err, errlen) ||
	    msg_get_u64(o, path, "flows", UINT32_MAX, &t->flows, err, errlen) ||
	    msg_get_u64(o, path, "switches", UINT64_MAX, &t->switches, err, errlen) ||
	    msg_get_array(o, path, "paths", 8, &ps, err, errlen))
		return -1;
	if (!json_object_array_length(ps)) {
		snprintf(err, errlen, "%s.paths: a tunnel has 1..8 segment lists", path);
		return -1;
	}
	for (size_t i = 0; i < json_object_array_length(ps); i++) {
		snprintf(p, sizeof(p), "%s.paths[%zu]", path, i);
		if (get_tpath(json_object_array_get_idx(ps, i), p, &t->paths[i],
			      err, errlen))
			return -1;
		t->npaths++;
	}
	if (json_object_object_get_ex(o, "backup", &b)) {
		snprintf(p, sizeof(p), "%s.backup", path);
		if (get_tpath(b, p, &t->backup, err, errlen))
			return -1;
		t->has_backup = true;
	}
	return 0;
}

static int get_tunnels(struct json_object *root, struct qos_report *r,
		       char *err, size_t errlen)
{
	struct json_object *ts;
	char path[32];

	if (!json_object_object_get_ex(root, "tunnels", NULL) &&
	    !json_object_object_get_ex(root, "tunnels_omitted", NULL))
		return 0;
	if (msg_get_array(root, "", "tunnels", QOS_MAX_TUNNELS, &ts, err, errlen) ||
	    msg_get_u64(root, "", "tunnels_omitted", UINT64_MAX,
			&r->tunnels_omitted, err, errlen))
		return -1;
	r->has_tunnels = true;
	r->tunnels = calloc(json_object_array_length(ts) + 1, sizeof(*r->tunnels));
	if (!r->tunnels) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < json_object_array_length(ts); i++) {
		snprintf(path, sizeof(path), "tunnels[%zu]", i);
		if (get_tunnel(json_object_array_get_idx(ts, i), path,
			       &r->tunnels[i], err, errlen))
			return -1;
		for (size_t j = 0; j < i; j++)
			if (r->tunnels[j].id == r->tunnels[i].id) {
				snprintf(err, errlen, "%s.id: tunnel %u twice", path,
					 r->tunnels[i].id);
				return -1;
			}
		r->ntunnels++;
	}
	return 0;
}

static int qos_decode(struct json_object *root, void *body, char *err,
		      size_t errlen)
{
	struct qos_report *r = body;
	struct json_object *devs, *qps;
	char path[32];

	if (msg_get_u64(root, "", "time_ms", UINT64_MAX, &r->time_ms, err, errlen) ||
	    msg_get_u64(root, "", "interval_us", UINT64_MAX, &r->interval_us,
			err, errlen) ||
	    msg_get_u64(root, "", "qps_omitted", UINT64_MAX, &r->qps_omitted,
			err, errlen) ||
	    msg_get_array(root, "", "devices", QOS_MAX_DEVS, &devs, err, errlen) ||
	    msg_get_array(root, "", "qps", QOS_MAX_QPS, &qps, err, errlen))
		return -1;
	r->devs = calloc(json_object_array_length(devs) + 1, sizeof(*r->devs));
	r->qps = calloc(json_object_array_length(qps) + 1, sizeof(*r->qps));
	if (!r->devs || !r->qps) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < json_object_array_length(devs); i++) {
		snprintf(path, sizeof(path), "devices[%zu]", i);
		if (get_dev(json_object_array_get_idx(devs, i), path,
			    r->interval_us, &r->devs[i], err, errlen))
			return -1;
		r->ndevs++;
	}
	for (size_t i = 0; i < json_object_array_length(qps); i++) {
		snprintf(path, sizeof(path), "qps[%zu]", i);
		if (get_qp(json_object_array_get_idx(qps, i), path,
			   r->interval_us, &r->qps[i], err, errlen))
			return -1;
		r->nqps++;
	}
	return get_tunnels(root, r, err, errlen);
}

static void qos_free(void *body)
{
	qos_report_free(body);
}

static const char *const qos_keys[] = {
	"time_ms", "interval_us", "devices", "qps", "qps_omitted", "tunnels",
	"tunnels_omitted", NULL,
};

const struct msg_type msg_qos_type = {
	.type = MSG_QOS_REPORT,
	.name = "qos-report",
	.max_len = QOS_MAX_LEN,
	.keys = qos_keys,
	.body_size = sizeof(struct qos_report),
	.decode = qos_decode,
	.encode = qos_encode,
	.free = qos_free,
};
