// SPDX-License-Identifier: GPL-2.0
/*
 * The lease table of lease.h. Linear probing with deleted-slot markers; the
 * table doubles at half full (live and deleted slots counted), which also
 * sweeps the markers out. Expiry scans the whole table: at 10,000
 * instances that is tens of microseconds, far below a heartbeat.
 */
#include <stdlib.h>
#include <string.h>

#include "lease.h"

enum { LEASE_FREE, LEASE_USED, LEASE_GONE };

/* FNV-1a: ids are short strings chosen by clients; the table only needs
 * spread, and a client that picks colliding ids slows only itself.
 */
static size_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static struct lease *find(const struct lease_table *t, const char *id)
{
	size_t i, k;

	if (!t->cap)
		return NULL;
	for (i = hash(id) & (t->cap - 1), k = 0; k < t->cap;
	     i = (i + 1) & (t->cap - 1), k++) {
		struct lease *l = &t->slot[i];

		if (l->state == LEASE_FREE)
			return NULL;
		if (l->state == LEASE_USED && !strcmp(l->id, id))
			return l;
	}
	return NULL;
}

static int grow(struct lease_table *t)
{
	struct lease_table n = { .cap = t->cap ? 2 * t->cap : 64 };
	size_t i;

	/* as many live as before: a table of tombstones shrinks back */
	while (n.cap > 64 && t->used * 4 < n.cap)
		n.cap /= 2;
	n.slot = calloc(n.cap, sizeof(*n.slot));
	if (!n.slot)
		return -1;
	for (i = 0; i < t->cap; i++)
		if (t->slot[i].state == LEASE_USED) {
			lease_put(&n, t->slot[i].id, t->slot[i].expires_ms,
				  t->slot[i].ttl_ms);
			lease_set_handle(&n, t->slot[i].id, t->slot[i].handle);
		}
	free(t->slot);
	*t = n;
	return 0;
}

int lease_put(struct lease_table *t, const char *id, int64_t expires_ms,
	      uint32_t ttl_ms)
{
	struct lease *l = find(t, id);
	size_t i;

	if (!l) {
		if ((t->filled + 1) * 2 > t->cap && grow(t))
			return -1;
		for (i = hash(id) & (t->cap - 1); t->slot[i].state == LEASE_USED;
		     i = (i + 1) & (t->cap - 1))
			;
		l = &t->slot[i];
		if (l->state == LEASE_FREE)
			t->filled++;
		l->state = LEASE_USED;
		l->handle = 0;
		strncpy(l->id, id, sizeof(l->id) - 1);
		l->id[sizeof(l->id) - 1] = '\0';
		t->used++;
	}
	l->expires_ms = expires_ms;
	l->ttl_ms = ttl_ms;
	return 0;
}

int lease_renew(struct lease_table *t, const char *id, int64_t now_ms)
{
	struct lease *l = find(t, id);

	if (!l)
		return -1;
	l->expires_ms = now_ms + l->ttl_ms;
	return 0;
}

int lease_set_handle(struct lease_table *t, const char *id, int64_t handle)
{
	struct lease *l = find(t, id);

	if (!l)
		return -1;
	l->handle = handle;
	return 0;
}

void lease_del(struct lease_table *t, const char *id)
{
	struct lease *l = find(t, id);

	if (!l)
		return;
	l->state = LEASE_GONE;
	t->used--;
}

const struct lease *lease_get(const struct lease_table *t, const char *id)
{
	return find(t, id);
}

static int by_expiry(const void *a, const void *b)
{
	const struct lease *x = *(struct lease *const *)a;
	const struct lease *y = *(struct lease *const *)b;

	if (x->expires_ms != y->expires_ms)
		return x->expires_ms < y->expires_ms ? -1 : 1;
	return strcmp(x->id, y->id);
}

int lease_expired(const struct lease_table *t, int64_t now_ms,
		  char (**ids)[SRD_ID_MAX], size_t *n)
{
	struct lease **hit = NULL, **m;
	size_t i, k = 0, cap = 0;

	*ids = NULL;
	*n = 0;
	for (i = 0; i < t->cap; i++) {
		if (t->slot[i].state != LEASE_USED ||
		    t->slot[i].expires_ms > now_ms)
			continue;
		if (k == cap) {
			cap = cap ? 2 * cap : 16;
			m = realloc(hit, cap * sizeof(*hit));
			if (!m) {
				free(hit);
				return -1;
			}
			hit = m;
		}
		hit[k++] = &t->slot[i];
	}
	if (!k)
		return 0;
	qsort(hit, k, sizeof(*hit), by_expiry);
	*ids = malloc(k * sizeof(**ids));
	if (*ids) {
		for (i = 0; i < k; i++)
			memcpy((*ids)[i], hit[i]->id, SRD_ID_MAX);
		*n = k;
	}
	free(hit);
	return *ids ? 0 : -1;
}

void lease_free(struct lease_table *t)
{
	free(t->slot);
	memset(t, 0, sizeof(*t));
}
