// SPDX-License-Identifier: GPL-2.0
/*
 * The registry on an etcd cluster, for several controllers sharing one
 * registry. Under a prefix P (default "/dmsc/srd/"):
 *
 *   P inst/ID    the instance, as JSON, attached to its lease
 *   P owner/ID   the node that registered it, same lease: a transaction
 *                compares it, so an id cannot move to another node
 *
 * A registry lease is an etcd lease (granted per registration, kept alive
 * by renew(), revoked on delete): etcd expires it and deletes both keys in
 * one revision, whichever SRD is alive. The registry's revision is etcd's,
 * which counts every key in the cluster: revisions of the registry are
 * increasing but not consecutive, so SRs detect a gap by the previous
 * revision that each push carries, not by counting.
 *
 * Differences from the SQLite store, by etcd's nature:
 *  - expire() removes nothing: etcd does, and the removal comes out of
 *    changes() as SRD_OP_DEL (etcd's watch shows a deletion and an expiry
 *    alike);
 *  - a lease is whole seconds and at least 2 s (etcd's minimum);
 *  - changes() catches up through a watch from @since + 1, ended by a
 *    marker key it writes first (P inst/~sync, '~' is no id character):
 *    when the marker's event arrives, every earlier change has.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcd.h"
#include "etcd_watcher.h"
#include "lease.h"
#include "registry.h"

#define ETCD_MIN_TTL_MS	2000
#define PREFIX_MAX	128

struct etcd_store {
	struct srd_store base;
	struct etcd *e;
	char inst[PREFIX_MAX + 8], owner[PREFIX_MAX + 8], end[PREFIX_MAX + 8];
	char marker[PREFIX_MAX + 16];
	uint64_t rev;
	uint64_t bad_values;	/* values under the prefix that are no instance */
	struct lease_table leases;
	char *endpoints;	/* for the watcher's own connection */
	struct etcd_watcher *watcher;
};

#define E(s) ((struct etcd_store *)(s))

static struct json_object *key(const char *a, const char *b)
{
	char k[PREFIX_MAX + 8 + SRD_ID_MAX];

	snprintf(k, sizeof(k), "%s%s", a, b);
	return etcd_b64(k, strlen(k));
}

static void seen_rev(struct etcd_store *st, struct json_object *resp)
{
	struct json_object *h;
	uint64_t r;

	if (json_object_object_get_ex(resp, "header", &h)) {
		r = etcd_int(h, "revision");
		if (r > st->rev)
			st->rev = r;
	}
}

static int get_str(struct json_object *o, const char *k, char *dst, size_t size)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, k, &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    strlen(json_object_get_string(v)) >= size)
		return -1;
	strcpy(dst, json_object_get_string(v));
	return 0;
}

/*
 * An instance from a kv's base64 value. Another SRD wrote it, perhaps of
 * another version: it must pass the same check as a registration.
 */
static int inst_parse(const char *b64, struct srd_instance *i, char *err,
		      size_t errlen)
{
	char text[1024], state[16];
	struct json_object *o, *v;
	int s, rc = -1;

	memset(i, 0, sizeof(*i));
	if (etcd_unb64(b64, text, sizeof(text))) {
		snprintf(err, errlen, "store: a value that is not base64");
		return -1;
	}
	o = json_tokener_parse(text);
	if (!o || get_str(o, "id", i->id, sizeof(i->id)) ||
	    get_str(o, "node", i->node, sizeof(i->node)) ||
	    get_str(o, "sid", i->sid, sizeof(i->sid)) ||
	    get_str(o, "prefix", i->prefix, sizeof(i->prefix)) ||
	    get_str(o, "rtype", i->rtype, sizeof(i->rtype)) ||
	    get_str(o, "state", state, sizeof(state)) ||
	    (s = srd_state_parse(state)) < 0 ||
	    !json_object_object_get_ex(o, "capability", &v) ||
	    !json_object_object_get_ex(o, "ttl_ms", &v)) {
		snprintf(err, errlen, "store: an instance value that is not one");
		goto out;
	}
	i->state = s;
	json_object_object_get_ex(o, "capability", &v);
	i->capability = json_object_get_int64(v);
	json_object_object_get_ex(o, "ttl_ms", &v);
	i->ttl_ms = json_object_get_int64(v);
	rc = srd_instance_check(i, err, errlen);
out:
	json_object_put(o);
	return rc;
}

static int lease_grant(struct etcd_store *st, uint32_t ttl_ms, int64_t *id,
		       char *err, size_t errlen)
{
	struct json_object *req = json_object_new_object(), *resp;
	int rc;

	json_object_object_add(req, "TTL", json_object_new_int64((ttl_ms + 999) / 1000));
	rc = etcd_call(st->e, "/v3/lease/grant", req, &resp, err, errlen);
	json_object_put(req);
	if (rc)
		return -1;
	*id = etcd_int(resp, "ID");
	json_object_put(resp);
	if (*id)
		return 0;
	snprintf(err, errlen, "store: etcd granted no lease");
	return -1;
}

static void lease_revoke(struct etcd_store *st, int64_t id)
{
	struct json_object *req = json_object_new_object(), *resp;
	char err[128];

	/* a lease already gone is fine: nothing to undo */
	json_object_object_add(req, "ID", json_object_new_int64(id));
	if (!etcd_call(st->e, "/v3/lease/revoke", req, &resp, err, sizeof(err)))
		json_object_put(resp);
	json_object_put(req);
}

static struct json_object *arr(struct json_object *a, struct json_object *b)
{
	struct json_object *x = json_object_new_array();

	json_object_array_add(x, a);
	if (b)
		json_object_array_add(x, b);
	return x;
}

/* Did the txn's answer succeed, at the top or in the nested txn? */
static int txn_succeeded(struct json_object *resp, struct json_object **nested)
{
	struct json_object *v, *r0, *t;

	*nested = NULL;
	if (json_object_object_get_ex(resp, "succeeded", &v) &&
	    json_object_get_boolean(v))
		return 1;
	if (!json_object_object_get_ex(resp, "responses", &v) ||
	    !(r0 = json_object_array_get_idx(v, 0)) ||
	    !json_object_object_get_ex(r0, "response_txn", &t))
		return 0;
	*nested = t;
	return json_object_object_get_ex(t, "succeeded", &v) &&
	       json_object_get_boolean(v);
}

static int et_put(struct srd_store *s, const struct srd_instance *i,
		  int64_t now_ms, uint64_t *rev, char *err, size_t errlen)
{
	struct etcd_store *st = E(s);
	struct json_object *val, *txn, *inner, *resp = NULL, *nested, *v;
	const struct lease *old;
	const char *text;
	int64_t lid, old_lid = 0;
	int rc = -1;

	if (srd_instance_check(i, err, errlen))
		return -1;
	if (i->ttl_ms < ETCD_MIN_TTL_MS) {
		snprintf(err, errlen, "ttl_ms: etcd's shortest lease is 2000 ms");
		return -1;
	}
	if (lease_grant(st, i->ttl_ms, &lid, err, errlen))
		return -1;
	val = srd_instance_json(i);
	text = json_object_to_json_string_ext(val, JSON_C_TO_STRING_PLAIN);

	/*
	 * if owner == node: put both; else if no owner: put both; else read
	 * the owner, to name it in the error.
	 */
	inner = json_object_new_object();
	json_object_object_add(inner, "compare",
			       arr(etcd_compare(key(st->owner, i->id), "VERSION", "EQUAL",
					   "version", json_object_new_int64(0)), NULL));
	json_object_object_add(inner, "success",
			       arr(etcd_op_put(key(st->owner, i->id), i->node, lid),
				   etcd_op_put(key(st->inst, i->id), text, lid)));
	{
		struct json_object *r = json_object_new_object(), *g = json_object_new_object();

		json_object_object_add(g, "key", key(st->owner, i->id));
		json_object_object_add(r, "request_range", g);
		json_object_object_add(inner, "failure", arr(r, NULL));
	}
	txn = json_object_new_object();
	json_object_object_add(txn, "compare",
			       arr(etcd_compare(key(st->owner, i->id), "VALUE", "EQUAL",
					   "value", etcd_b64(i->node, strlen(i->node))), NULL));
	json_object_object_add(txn, "success",
			       arr(etcd_op_put(key(st->owner, i->id), i->node, lid),
				   etcd_op_put(key(st->inst, i->id), text, lid)));
	{
		struct json_object *r = json_object_new_object();

		json_object_object_add(r, "request_txn", inner);
		json_object_object_add(txn, "failure", arr(r, NULL));
	}
	if (etcd_call(st->e, "/v3/kv/txn", txn, &resp, err, errlen)) {
		/*
		 * It may have been applied: the lease may hold the keys now.
		 * Left to expire (or to be renewed, if it did apply).
		 */
		goto out;
	}
	seen_rev(st, resp);
	if (!txn_succeeded(resp, &nested)) {
		char owner[SRD_NODE_MAX] = "?";
		struct json_object *rs, *r0, *rr, *kvs, *kv;

		/* the nested failure: a range of the owner key */
		if (nested && json_object_object_get_ex(nested, "responses", &rs) &&
		    (r0 = json_object_array_get_idx(rs, 0)) &&
		    json_object_object_get_ex(r0, "response_range", &rr) &&
		    json_object_object_get_ex(rr, "kvs", &kvs) &&
		    (kv = json_object_array_get_idx(kvs, 0)) &&
		    json_object_object_get_ex(kv, "value", &v))
			etcd_unb64(json_object_get_string(v), owner, sizeof(owner));
		snprintf(err, errlen, "id: %s is registered on node %s", i->id, owner);
		lease_revoke(st, lid);
		goto out;
	}
	old = lease_get(&st->leases, i->id);
	if (old)
		old_lid = old->handle;
	if (lease_put(&st->leases, i->id, now_ms + i->ttl_ms, i->ttl_ms) ||
	    lease_set_handle(&st->leases, i->id, lid)) {
		snprintf(err, errlen, "store: out of memory");
		goto out;
	}
	/* the keys moved to the new lease: the old one holds nothing */
	if (old_lid && old_lid != lid)
		lease_revoke(st, old_lid);
	if (rev)
		*rev = st->rev;
	rc = 0;
out:
	json_object_put(resp);
	json_object_put(txn);
	json_object_put(val);
	return rc;
}

/*
 * The etcd lease @id's key is attached to now, and the node it is
 * registered on. Read from the key every time, never from our notes:
 * another SRD may have re-registered it under a new lease. 0 if there is
 * no such instance (and @err empty), -1 if etcd could not be asked.
 */
static int64_t lease_of(struct etcd_store *st, const char *id, char *owner,
			size_t osize, char *err, size_t errlen)
{
	struct json_object *req, *resp, *kvs, *kv, *v;
	struct srd_instance i;
	char e2[128];
	int64_t lid = 0;

	err[0] = '\0';
	owner[0] = '\0';
	req = json_object_new_object();
	json_object_object_add(req, "key", key(st->inst, id));
	if (etcd_call(st->e, "/v3/kv/range", req, &resp, err, errlen)) {
		json_object_put(req);
		return -1;
	}
	json_object_put(req);
	seen_rev(st, resp);
	if (json_object_object_get_ex(resp, "kvs", &kvs) &&
	    (kv = json_object_array_get_idx(kvs, 0))) {
		lid = etcd_int(kv, "lease");
		if (json_object_object_get_ex(kv, "value", &v) &&
		    !inst_parse(json_object_get_string(v), &i, e2, sizeof(e2)))
			snprintf(owner, osize, "%s", i.node);
	}
	json_object_put(resp);
	return lid;
}

static int et_renew(struct srd_store *s, const char *id, const char *node,
		    int64_t now_ms, char *err, size_t errlen)
{
	struct etcd_store *st = E(s);
	struct json_object *req, *resp, *r;
	char owner[SRD_NODE_MAX];
	int64_t lid, ttl = 0;

	lid = lease_of(st, id, owner, sizeof(owner), err, errlen);
	if (lid < 0)
		return -1;
	if (!lid) {
		snprintf(err, errlen, "no instance %.63s", id);
		return -1;
	}
	if (node && strcmp(node, owner)) {
		return srd_not_owner(id, owner, node, err, errlen);
	}
	req = json_object_new_object();
	json_object_object_add(req, "ID", json_object_new_int64(lid));
	if (etcd_call(st->e, "/v3/lease/keepalive", req, &resp, err, errlen)) {
		json_object_put(req);
		return -1;	/* not "gone": we could not tell */
	}
	json_object_put(req);
	if (json_object_object_get_ex(resp, "result", &r))
		ttl = etcd_int(r, "TTL");
	json_object_put(resp);
	if (ttl <= 0) {
		/* etcd let it expire between our two calls: it is gone */
		lease_del(&st->leases, id);
		snprintf(err, errlen, "no instance %.63s", id);
		return -1;
	}
	/* our note, for list()'s expiry times only */
	if (!lease_get(&st->leases, id) &&
	    lease_put(&st->leases, id, now_ms + ttl * 1000, ttl * 1000))
		return 0;
	lease_set_handle(&st->leases, id, lid);
	lease_renew(&st->leases, id, now_ms);
	return 0;
}

static int et_del(struct srd_store *s, const char *id, const char *node,
		  uint64_t *rev, char *err, size_t errlen)
{
	struct etcd_store *st = E(s);
	struct json_object *txn, *resp, *ops, *nested;
	char owner[SRD_NODE_MAX];
	int64_t lid;
	int rc = -1, k;

	lid = lease_of(st, id, owner, sizeof(owner), err, errlen);
	if (lid < 0)
		return -1;
	if (lid && node && strcmp(node, owner)) {
		return srd_not_owner(id, owner, node, err, errlen);
	}
	txn = json_object_new_object();
	json_object_object_add(txn, "compare",
			       arr(etcd_compare(key(st->inst, id), "VERSION", "GREATER",
					   "version", json_object_new_int64(0)), NULL));
	ops = json_object_new_array();
	for (k = 0; k < 2; k++) {
		struct json_object *r = json_object_new_object(), *d = json_object_new_object();

		json_object_object_add(d, "key", key(k ? st->owner : st->inst, id));
		json_object_object_add(r, "request_delete_range", d);
		json_object_array_add(ops, r);
	}
	json_object_object_add(txn, "success", ops);
	if (etcd_call(st->e, "/v3/kv/txn", txn, &resp, err, errlen))
		goto out;
	seen_rev(st, resp);
	if (!txn_succeeded(resp, &nested)) {
		snprintf(err, errlen, "no instance %.63s", id);
		json_object_put(resp);
		goto out;
	}
	json_object_put(resp);
	if (lid)
		lease_revoke(st, lid);
	lease_del(&st->leases, id);
	if (rev)
		*rev = st->rev;
	rc = 0;
out:
	json_object_put(txn);
	return rc;
}

static int et_expire(struct srd_store *s, int64_t now_ms, srd_change_fn fn,
		     void *arg, char *err, size_t errlen)
{
	struct etcd_store *st = E(s);
	char (*ids)[SRD_ID_MAX];
	size_t n, k;

	(void)fn;
	(void)arg;
	/*
	 * etcd expires leases itself; forget our notes of those long past
	 * (a lease renewed by another SRD is looked up again if needed).
	 */
	if (lease_expired(&st->leases, now_ms - 60000, &ids, &n)) {
		snprintf(err, errlen, "store: out of memory");
		return -1;
	}
	for (k = 0; k < n; k++)
		lease_del(&st->leases, ids[k]);
	free(ids);
	return 0;
}

static struct json_object *range_req(struct etcd_store *st, int count_only)
{
	struct json_object *req = json_object_new_object();

	json_object_object_add(req, "key", etcd_b64(st->inst, strlen(st->inst)));
	json_object_object_add(req, "range_end", etcd_b64(st->end, strlen(st->end)));
	if (count_only)
		json_object_object_add(req, "count_only", json_object_new_boolean(1));
	return req;
}

static int et_list(struct srd_store *s, srd_inst_fn fn, void *arg,
		   uint64_t *rev, char *err, size_t errlen)
{
	struct etcd_store *st = E(s);
	struct json_object *req = range_req(st, 0), *resp, *kvs, *kv, *v, *h;
	struct srd_instance i;
	const struct lease *l;
	size_t k, n;
	int rc;

	rc = etcd_call(st->e, "/v3/kv/range", req, &resp, err, errlen);
	json_object_put(req);
	if (rc)
		return -1;
	seen_rev(st, resp);
	if (rev)
		*rev = json_object_object_get_ex(resp, "header", &h) ?
		       (uint64_t)etcd_int(h, "revision") : st->rev;
	n = json_object_object_get_ex(resp, "kvs", &kvs) ?
	    json_object_array_length(kvs) : 0;
	for (k = 0; k < n; k++) {
		char kname[PREFIX_MAX + 16 + SRD_ID_MAX];

		kv = json_object_array_get_idx(kvs, k);
		if (!json_object_object_get_ex(kv, "key", &v) ||
		    etcd_unb64(json_object_get_string(v), kname, sizeof(kname)) ||
		    !strcmp(kname, st->marker))
			continue;
		if (!json_object_object_get_ex(kv, "value", &v) ||
		    inst_parse(json_object_get_string(v), &i, err, errlen)) {
			/* another writer's mistake must not hide the rest */
			st->bad_values++;
			continue;
		}
		i.mod_rev = etcd_int(kv, "mod_revision");
		l = lease_get(&st->leases, i.id);
		i.expires_ms = l ? l->expires_ms : 0;
		if (fn(&i, arg))
			break;
	}
	json_object_put(resp);
	return 0;
}

struct catchup {
	struct etcd_store *st;
	uint64_t marker_rev;
	srd_change_fn fn;
	void *arg;
	int gap, stopped;
	char *err;
	size_t errlen;
};

static int catchup_line(struct json_object *r, void *arg)
{
	struct catchup *c = arg;
	struct json_object *evs, *ev, *kv, *v;
	char kname[PREFIX_MAX + 16 + SRD_ID_MAX];
	struct srd_change ch;
	size_t k, n;

	if (etcd_int(r, "compact_revision")) {
		c->gap = 1;
		return 1;
	}
	if (json_object_object_get_ex(r, "canceled", &v) && json_object_get_boolean(v)) {
		snprintf(c->err, c->errlen, "etcd watch: canceled");
		return -1;
	}
	n = json_object_object_get_ex(r, "events", &evs) ? json_object_array_length(evs) : 0;
	for (k = 0; k < n; k++) {
		ev = json_object_array_get_idx(evs, k);
		if (!json_object_object_get_ex(ev, "kv", &kv) ||
		    !json_object_object_get_ex(kv, "key", &v) ||
		    etcd_unb64(json_object_get_string(v), kname, sizeof(kname)))
			continue;
		if (!strcmp(kname, c->st->marker)) {
			if ((uint64_t)etcd_int(kv, "mod_revision") >= c->marker_rev)
				return 1;	/* everything before it came */
			continue;
		}
		if (c->stopped)
			continue;
		memset(&ch, 0, sizeof(ch));
		ch.rev = etcd_int(kv, "mod_revision");
		if (json_object_object_get_ex(ev, "type", &v) &&
		    !strcmp(json_object_get_string(v), "DELETE")) {
			struct json_object *pkv;

			ch.op = SRD_OP_DEL;
			snprintf(ch.inst.id, sizeof(ch.inst.id), "%s",
				 kname + strlen(c->st->inst));
			if (json_object_object_get_ex(ev, "prev_kv", &pkv) &&
			    json_object_object_get_ex(pkv, "value", &v)) {
				struct srd_instance prev;
				char e2[64];

				if (!inst_parse(json_object_get_string(v), &prev, e2, sizeof(e2)))
					memcpy(ch.inst.node, prev.node, sizeof(prev.node));
			}
		} else {
			ch.op = SRD_OP_PUT;
			if (!json_object_object_get_ex(kv, "value", &v) ||
			    inst_parse(json_object_get_string(v), &ch.inst, c->err, c->errlen)) {
				c->st->bad_values++;
				c->err[0] = '\0';
				continue;
			}
			ch.inst.mod_rev = ch.rev;
		}
		if (c->fn(&ch, c->arg))
			c->stopped = 1;
	}
	return 0;
}

static int et_changes(struct srd_store *s, uint64_t since, srd_change_fn fn,
		      void *arg, char *err, size_t errlen)
{
	struct etcd_store *st = E(s);
	struct json_object *req, *resp, *cr, *put, *h;
	struct catchup c = { .st = st, .fn = fn, .arg = arg, .err = err,
			     .errlen = errlen };
	uint64_t now_rev;
	int rc;

	req = range_req(st, 1);
	rc = etcd_call(st->e, "/v3/kv/range", req, &resp, err, errlen);
	json_object_put(req);
	if (rc)
		return -1;
	seen_rev(st, resp);
	now_rev = json_object_object_get_ex(resp, "header", &h) ? etcd_int(h, "revision") : 0;
	json_object_put(resp);
	if (since > now_rev) {
		snprintf(err, errlen, "revision %" PRIu64 " is ahead of the store's %"
			 PRIu64 " (another store?)", since, now_rev);
		return -1;
	}
	if (since == now_rev)
		return 0;

	/* the marker first: its event ends the catch-up */
	put = json_object_new_object();
	json_object_object_add(put, "key", etcd_b64(st->marker, strlen(st->marker)));
	json_object_object_add(put, "value", etcd_b64("", 0));
	rc = etcd_call(st->e, "/v3/kv/put", put, &resp, err, errlen);
	json_object_put(put);
	if (rc)
		return -1;
	seen_rev(st, resp);
	c.marker_rev = json_object_object_get_ex(resp, "header", &h) ? etcd_int(h, "revision") : 0;
	json_object_put(resp);

	req = json_object_new_object();
	cr = json_object_new_object();
	json_object_object_add(cr, "key", etcd_b64(st->inst, strlen(st->inst)));
	json_object_object_add(cr, "range_end", etcd_b64(st->end, strlen(st->end)));
	json_object_object_add(cr, "start_revision", json_object_new_int64(since + 1));
	json_object_object_add(cr, "prev_kv", json_object_new_boolean(1));
	json_object_object_add(req, "create_request", cr);
	err[0] = '\0';
	rc = etcd_watch(st->e, req, catchup_line, &c, 10000, err, errlen);
	json_object_put(req);
	if (c.gap)
		return SRD_GAP;
	return rc ? -1 : 0;
}

static uint64_t et_revision(struct srd_store *s)
{
	return E(s)->rev;
}

static void et_close(struct srd_store *s)
{
	struct etcd_store *st = E(s);

	if (!st)
		return;
	etcd_watcher_stop(st->watcher);
	free(st->endpoints);
	etcd_close(st->e);
	lease_free(&st->leases);
	free(st);
}

/*
 * Changes made through another SRD: etcd pushes them to a watcher thread
 * (etcd_watcher.c), which wakes the caller; the marker that changes()
 * writes is no change and wakes nobody.
 */
static int et_watch(struct srd_store *s, void (*wake)(void *arg), void *arg,
		    char *err, size_t errlen)
{
	struct etcd_store *st = E(s);

	if (st->watcher) {
		snprintf(err, errlen, "etcd: already watched");
		return -1;
	}
	st->watcher = etcd_watcher_start(st->endpoints, st->inst, st->end,
					 st->marker, st->rev, wake, arg, err,
					 errlen);
	return st->watcher ? 0 : -1;
}

static const struct srd_store_ops etcd_ops = {
	.name = "etcd",
	.put = et_put,
	.renew = et_renew,
	.del = et_del,
	.expire = et_expire,
	.list = et_list,
	.changes = et_changes,
	.revision = et_revision,
	.watch = et_watch,
	.close = et_close,
};

/* Note the leases of what is registered, to renew and revoke them. */
static int note_lease(const struct srd_instance *i, void *arg)
{
	(void)i;
	(void)arg;
	return 0;
}

struct srd_store *srd_store_etcd_open(const char *endpoints, const char *prefix,
				      int64_t now_ms, char *err, size_t errlen)
{
	struct etcd_store *st = calloc(1, sizeof(*st));
	uint64_t rev;

	if (!st) {
		snprintf(err, errlen, "store: out of memory");
		return NULL;
	}
	st->base.ops = &etcd_ops;
	if (!prefix)
		prefix = "/dmsc/srd/";
	if (!*prefix || strlen(prefix) > PREFIX_MAX || prefix[strlen(prefix) - 1] != '/') {
		snprintf(err, errlen, "etcd prefix \"%.140s\": 1-%d bytes ending in '/'",
			 prefix, PREFIX_MAX);
		free(st);
		return NULL;
	}
	snprintf(st->inst, sizeof(st->inst), "%sinst/", prefix);
	snprintf(st->end, sizeof(st->end), "%sinst0", prefix);	/* '/' + 1 */
	snprintf(st->owner, sizeof(st->owner), "%sowner/", prefix);
	snprintf(st->marker, sizeof(st->marker), "%s~sync", st->inst);
	st->endpoints = strdup(endpoints);
	st->e = st->endpoints ? etcd_open(endpoints, err, errlen) : NULL;
	if (!st->e) {
		if (!st->endpoints)
			snprintf(err, errlen, "store: out of memory");
		free(st->endpoints);
		free(st);
		return NULL;
	}
	/* a first call: is anyone there? (leases are looked up when used) */
	(void)now_ms;
	if (et_list(&st->base, note_lease, NULL, &rev, err, errlen)) {
		et_close(&st->base);
		return NULL;
	}
	return &st->base;
}
