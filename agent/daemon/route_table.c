// SPDX-License-Identifier: GPL-2.0
/*
 * The route table of a reader of the SRD (route_table.h), shared by the
 * sr and mg roles so that the revision and digest rules are written once.
 */
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "log.h"
#include "route_table.h"

struct msg_instance *route_table_find(struct route_table *t, const char *id)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->routes[i].id, id))
			return &t->routes[i];
	return NULL;
}

int route_table_put(struct route_table *t, const struct msg_instance *m)
{
	struct msg_instance *x = route_table_find(t, m->id);

	if (!x) {
		if (t->n == t->cap) {
			size_t cap = t->cap ? 2 * t->cap : 64;
			void *p = realloc(t->routes, cap * sizeof(*t->routes));

			if (!p)
				return -1;
			t->routes = p;
			t->cap = cap;
		}
		x = &t->routes[t->n++];
	}
	*x = *m;
	t->gen++;
	return 0;
}

void route_table_del(struct route_table *t, const char *id)
{
	struct msg_instance *x = route_table_find(t, id);

	if (x) {
		*x = t->routes[--t->n];
		t->gen++;
	}
}

/* A full table is awaited: if none comes in time, on_sync_late. */
static void sync_wait(struct route_table *t)
{
	struct timeval tv = { .tv_sec = t->retry_ms / 1000,
			      .tv_usec = t->retry_ms % 1000 * 1000 };

	if (t->sync_ev)
		evtimer_add(t->sync_ev, &tv);
}

static void ask_sync(struct route_table *t)
{
	struct msg_reg g = { .op = REG_SYNC, .since = t->rev };

	if (t->sync_asked || !t->c)
		return;
	t->sync_asked = 1;
	agent_msg_send(t->a, t->c, &msg_reg_type, &g);
	sync_wait(t);
}

/*
 * The full table, due on connecting or asked for, has not come: without
 * this, a reader whose table the SRD could not send would wait for it (no
 * digests, no increments) until the connection drops.
 */
static void on_sync_late(evutil_socket_t fd, short what, void *arg)
{
	struct route_table *t = arg;

	(void)fd;
	(void)what;
	if (!t->c || (t->synced && !t->sync_asked))
		return;
	t->sync_retries++;
	agent_log("%s: no full table from the SRD since %s: asking for it (at %llu)",
		  t->who, t->sync_asked ? "asking" : "connecting",
		  (unsigned long long)t->rev);
	t->sync_asked = 0;
	ask_sync(t);
}

int route_table_init(struct route_table *t, struct agent *a, const char *who,
		     unsigned int digest_ms)
{
	t->a = a;
	t->who = who;
	t->retry_ms = digest_ms && digest_ms < SYNC_RETRY_MAX_MS ?
		      digest_ms : SYNC_RETRY_MAX_MS;
	if (t->retry_ms < SYNC_RETRY_MIN_MS)
		t->retry_ms = SYNC_RETRY_MIN_MS;
	t->sync_ev = evtimer_new(a->base, on_sync_late, t);
	return t->sync_ev ? 0 : -1;
}

enum route_apply route_table_apply(struct route_table *t,
				   const struct msg_routes *m)
{
	if (m->full) {
		t->n = 0;
		t->gen++;
		for (size_t i = 0; i < m->nroutes; i++)
			route_table_put(t, &m->routes[i]);
		t->rev = m->rev;
		t->fulls++;
		t->sync_asked = 0;
		t->synced = 1;
		if (t->sync_ev)
			evtimer_del(t->sync_ev);
		agent_log("%s: full table of %zu routes at revision %llu", t->who,
			  m->nroutes, (unsigned long long)m->rev);
		return ROUTES_FULL;
	}
	if (m->rev <= t->rev) {
		t->stale++;	/* had it: applied once only */
		return ROUTES_STALE;
	}
	if (m->prev != t->rev) {
		t->gaps++;
		agent_log("%s: revision %llu..%llu, this table is at %llu: asking for the full table",
			  t->who, (unsigned long long)m->prev,
			  (unsigned long long)m->rev, (unsigned long long)t->rev);
		ask_sync(t);
		return ROUTES_GAP;
	}
	for (size_t i = 0; i < m->nwithdrawn; i++)
		route_table_del(t, m->withdrawn[i]);
	for (size_t i = 0; i < m->nroutes; i++)
		route_table_put(t, &m->routes[i]);
	t->rev = m->rev;
	t->increments++;
	return ROUTES_INCREMENT;
}

void route_table_conn_up(struct route_table *t, struct conn *c)
{
	t->c = c;
	t->sync_asked = 0;
	t->synced = 0;
	sync_wait(t);		/* the SRD sends the full table unasked */
}

void route_table_conn_down(struct route_table *t)
{
	t->c = NULL;
	t->sync_asked = 0;
	t->synced = 0;
	if (t->sync_ev)
		evtimer_del(t->sync_ev);
}

void route_table_send_digest(struct route_table *t)
{
	struct msg_reg g = { .op = REG_DIGEST, .rev = t->rev };

	if (!t->c || !t->synced || t->sync_asked)
		return;		/* a table is on its way: nothing to compare */
	if (msg_routes_digest(t->routes, t->n, g.sha256)) {
		agent_log("%s: digest of the routes: SHA-256 failed", t->who);
		return;
	}
	if (!agent_msg_send(t->a, t->c, &msg_reg_type, &g))
		t->digests++;
}

void route_table_json(const struct route_table *t, struct json_object *o,
		      int with_routes)
{
	json_object_object_add(o, "revision", json_object_new_uint64(t->rev));
	json_object_object_add(o, "full_tables", json_object_new_uint64(t->fulls));
	json_object_object_add(o, "increments", json_object_new_uint64(t->increments));
	json_object_object_add(o, "gaps", json_object_new_uint64(t->gaps));
	json_object_object_add(o, "stale", json_object_new_uint64(t->stale));
	json_object_object_add(o, "digests_sent", json_object_new_uint64(t->digests));
	json_object_object_add(o, "sync_retries", json_object_new_uint64(t->sync_retries));
	if (with_routes) {
		struct json_object *arr = json_object_new_array();

		for (size_t i = 0; i < t->n; i++)
			json_object_array_add(arr, msg_instance_json(&t->routes[i]));
		json_object_object_add(o, "routes", arr);
	}
}

void route_table_free(struct route_table *t)
{
	if (t->sync_ev)
		event_free(t->sync_ev);
	free(t->routes);
	memset(t, 0, sizeof(*t));
}
