// SPDX-License-Identifier: GPL-2.0
/*
 * The leader election of election.h on etcd's v3 JSON gateway.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "election.h"
#include "etcd.h"

#define NODE_MAX	64
/* an etcd call of an election step: how long a stop may wait for it */
#define ELECTION_CALL_MAX_MS	1000

struct election {
	struct etcd *e;
	char key[256], node[NODE_MAX];
	int ttl_s;
	int64_t lease;		/* ours while we lead or campaign, or 0 */
	/*
	 * Read by other threads (the SMO's loop) while the step's thread
	 * writes them: 0 when we do not hold the seat.
	 */
	_Atomic int64_t seat_rev;	/* etcd revision of our winning campaign */
	_Atomic int64_t lead_until;	/* monotonic ms: act until then */
	uint64_t cluster;		/* cluster_id of etcd's last answer */
};

static int64_t mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000ll + t.tv_nsec / 1000000;
}

/* @sent: when the request that (re)granted @ttl seconds left us. */
static void hold_until(struct election *el, int64_t sent, int64_t ttl)
{
	atomic_store(&el->lead_until, sent + ttl * 1000 - ttl * 100);
}

/* The seat is no longer ours (or never was): stop acting at once. */
static void unseat(struct election *el)
{
	atomic_store(&el->lead_until, 0);
	atomic_store(&el->seat_rev, 0);
	el->lease = 0;
}

int election_leading(const struct election *el)
{
	return mono_ms() < atomic_load(&el->lead_until);
}

/* etcd's cluster_id, a uint64 sent as a decimal string (0 if absent). */
static void note_cluster(struct election *el, struct json_object *resp)
{
	struct json_object *h, *v;
	const char *s;

	if (json_object_object_get_ex(resp, "header", &h) &&
	    json_object_object_get_ex(h, "cluster_id", &v) &&
	    (s = json_object_get_string(v)))
		el->cluster = strtoull(s, NULL, 10);
}

uint64_t election_cluster(const struct election *el)
{
	return el->cluster;
}

struct election *election_open(const char *endpoints, const char *key,
			       const char *node, int ttl_s, char *err,
			       size_t errlen)
{
	struct election *el;

	if (ttl_s < 2 || ttl_s > 3600) {
		snprintf(err, errlen, "election: ttl %d s: 2 to 3600", ttl_s);
		return NULL;
	}
	if (!*key || strlen(key) >= sizeof(el->key) || !*node ||
	    strlen(node) >= NODE_MAX) {
		snprintf(err, errlen, "election: key or node name empty or too long");
		return NULL;
	}
	el = calloc(1, sizeof(*el));
	if (!el) {
		snprintf(err, errlen, "election: out of memory");
		return NULL;
	}
	el->e = etcd_open(endpoints, err, errlen);
	if (!el->e) {
		free(el);
		return NULL;
	}
	strcpy(el->key, key);
	strcpy(el->node, node);
	el->ttl_s = ttl_s;
	/*
	 * A step must end well before the lease it keeps alive, and a stop
	 * waits for the call under way: a call at most a quarter of the
	 * lease and never above ELECTION_CALL_MAX_MS.
	 */
	etcd_set_timeouts(el->e, ttl_s * 250 < ELECTION_CALL_MAX_MS ?
				 ttl_s * 250 : ELECTION_CALL_MAX_MS,
			  ttl_s * 250 < 500 ? ttl_s * 250 : 500);
	return el;
}

/* The holder of K: 1 and its name and lease, 0 if K is absent, -1. */
static int holder(struct election *el, char *name, size_t size,
		  int64_t *lease, char *err, size_t errlen)
{
	struct json_object *req = json_object_new_object(), *resp, *kvs, *kv, *v;
	int rc;

	json_object_object_add(req, "key", etcd_b64(el->key, strlen(el->key)));
	rc = etcd_call(el->e, "/v3/kv/range", req, &resp, err, errlen);
	json_object_put(req);
	if (rc)
		return -1;
	note_cluster(el, resp);
	rc = 0;
	if (json_object_object_get_ex(resp, "kvs", &kvs) &&
	    (kv = json_object_array_get_idx(kvs, 0)) &&
	    json_object_object_get_ex(kv, "value", &v)) {
		if (etcd_unb64(json_object_get_string(v), name, size))
			snprintf(name, size, "?");
		*lease = etcd_int(kv, "lease");
		rc = 1;
	}
	json_object_put(resp);
	return rc;
}

static int64_t call_lease(struct election *el, const char *path, int64_t id,
			  int ttl, char *err, size_t errlen)
{
	struct json_object *req = json_object_new_object(), *resp, *r;
	int64_t out = 0;

	if (id)
		json_object_object_add(req, "ID", json_object_new_int64(id));
	if (ttl)
		json_object_object_add(req, "TTL", json_object_new_int64(ttl));
	if (etcd_call(el->e, path, req, &resp, err, errlen)) {
		json_object_put(req);
		return -1;
	}
	json_object_put(req);
	if (!strcmp(path, "/v3/lease/grant"))
		out = etcd_int(resp, "ID");
	else if (json_object_object_get_ex(resp, "result", &r))
		out = etcd_int(r, "TTL");	/* keepalive: 0 if gone */
	json_object_put(resp);
	return out;
}

/* A compare of the seat K: @target ("VALUE", "LEASE") equal to @field's @v. */
static struct json_object *seat_is(struct election *el, const char *target,
				   const char *field, struct json_object *v)
{
	return etcd_compare(etcd_b64(el->key, strlen(el->key)), target, "EQUAL",
			    field, v);
}

/*
 * One transaction: if every compare of @compare (taken) holds, put @value
 * at @key, under @lease if not 0. 1 if it did, with the transaction's
 * revision (the put's) in @rev; 0 if a compare failed; -1 with @err.
 */
static int put_if(struct election *el, struct json_object *compare,
		  const char *key, const char *value, int64_t lease,
		  int64_t *rev, char *err, size_t errlen)
{
	struct json_object *txn = json_object_new_object(), *a, *resp, *v;
	int ok;

	json_object_object_add(txn, "compare", compare);
	a = json_object_new_array();
	json_object_array_add(a, etcd_op_put(etcd_b64(key, strlen(key)), value, lease));
	json_object_object_add(txn, "success", a);
	if (etcd_call(el->e, "/v3/kv/txn", txn, &resp, err, errlen)) {
		json_object_put(txn);
		return -1;
	}
	json_object_put(txn);
	note_cluster(el, resp);
	ok = json_object_object_get_ex(resp, "succeeded", &v) &&
	     json_object_get_boolean(v);
	*rev = ok && json_object_object_get_ex(resp, "header", &v) ?
	       etcd_int(v, "revision") : 0;
	json_object_put(resp);
	return ok;
}

/* Write K with our lease if it is absent: 1 if we won. */
static int campaign(struct election *el, char *err, size_t errlen)
{
	struct json_object *a;
	int64_t sent = mono_ms(), rev;
	int won;

	unseat(el);
	el->lease = call_lease(el, "/v3/lease/grant", 0, el->ttl_s, err, errlen);
	if (el->lease <= 0) {
		el->lease = 0;
		return -1;
	}
	a = json_object_new_array();
	json_object_array_add(a, seat_is(el, "VERSION", "version",
					 json_object_new_int64(0)));
	won = put_if(el, a, el->key, el->node, el->lease, &rev, err, errlen);
	if (won < 0)
		return -1;
	if (!won) {
		/* someone was quicker: our lease holds nothing */
		call_lease(el, "/v3/lease/revoke", el->lease, 0, err, errlen);
		el->lease = 0;
		return 0;
	}
	atomic_store(&el->seat_rev, rev);
	hold_until(el, sent, el->ttl_s);
	return 1;
}

int election_step(struct election *el, char *leader, size_t size, char *err,
		  size_t errlen)
{
	char name[NODE_MAX];
	int64_t lease = 0, ttl, sent;
	int rc;

	leader[0] = '\0';
	if (el->lease) {
		sent = mono_ms();
		ttl = call_lease(el, "/v3/lease/keepalive", el->lease, 0, err, errlen);
		if (ttl < 0)
			return -1;	/* cannot tell: election_leading() decides */
		if (ttl == 0)
			unseat(el);	/* it expired: we lost the seat */
		else
			hold_until(el, sent, ttl);
	}
	rc = holder(el, name, sizeof(name), &lease, err, errlen);
	if (rc < 0)
		return -1;
	if (el->lease && !(rc == 1 && lease == el->lease)) {
		/* K went without our lease (deleted by hand?): start over */
		call_lease(el, "/v3/lease/revoke", el->lease, 0, err, errlen);
		unseat(el);
	}
	if (rc == 1 && el->lease) {
		snprintf(leader, size, "%s", el->node);
		return election_leading(el);
	}
	if (rc == 1) {
		snprintf(leader, size, "%s", name);
		return 0;
	}
	rc = campaign(el, err, errlen);
	if (rc == 1)
		snprintf(leader, size, "%s", el->node);
	return rc;
}

int64_t election_seat_revision(const struct election *el)
{
	return atomic_load(&el->seat_rev);
}

int election_put(struct election *el, const char *key, const char *value,
		 int64_t *rev, char *err, size_t errlen)
{
	struct json_object *a;
	int ok;

	if (!el->lease) {
		snprintf(err, errlen, "election: not leading");
		return 0;
	}
	/*
	 * The seat holds our name under our lease, both compared in the
	 * transaction that writes: a leader deposed since its last step
	 * (its lease expired, the seat another's) cannot replace the set.
	 */
	a = json_object_new_array();
	json_object_array_add(a, seat_is(el, "VALUE", "value",
					 etcd_b64(el->node, strlen(el->node))));
	json_object_array_add(a, seat_is(el, "LEASE", "lease",
					 json_object_new_int64(el->lease)));
	ok = put_if(el, a, key, value, 0, rev, err, errlen);
	if (!ok)
		snprintf(err, errlen, "election: the seat %s is not ours", el->key);
	return ok;
}

void election_resign(struct election *el)
{
	char err[128];

	/* revoking the lease deletes K with it, in one revision */
	if (el->lease)
		call_lease(el, "/v3/lease/revoke", el->lease, 0, err, sizeof(err));
	unseat(el);
}

void election_close(struct election *el)
{
	if (!el)
		return;
	etcd_close(el->e);
	free(el);
}
