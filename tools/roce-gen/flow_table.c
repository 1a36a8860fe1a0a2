// SPDX-License-Identifier: GPL-2.0
/* Chained hash table of sink flows that doubles as it fills. */
#include <stdlib.h>
#include <string.h>

#include "flow_table.h"

static size_t key_hash(const struct flow_key *k)
{
	/* FNV-1a over the fields; flows come from few hosts, many QPs. */
	uint64_t h = 0xcbf29ce484222325ull;
	const uint8_t *p = k->src.s6_addr;

	for (int i = 0; i < 16; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	h = (h ^ k->sport) * 0x100000001b3ull;
	h = (h ^ k->dqpn) * 0x100000001b3ull;
	h = (h ^ (uint64_t)k->family) * 0x100000001b3ull;
	return (size_t)(h ^ h >> 32);
}

static bool key_eq(const struct flow_key *a, const struct flow_key *b)
{
	return a->family == b->family && a->sport == b->sport &&
	       a->dqpn == b->dqpn && !memcmp(&a->src, &b->src, sizeof(a->src));
}

int flow_table_init(struct flow_table *t, bool first_known, uint32_t first_psn)
{
	memset(t, 0, sizeof(*t));
	t->nbuckets = 1024;
	t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
	t->first_known = first_known;
	t->first_psn = first_psn;
	return t->buckets ? 0 : -1;
}

void flow_table_free(struct flow_table *t)
{
	for (size_t i = 0; i < t->nbuckets; i++) {
		struct flow *f = t->buckets[i], *n;

		for (; f; f = n) {
			n = f->next;
			psn_window_free(&f->win);
			free(f);
		}
	}
	free(t->buckets);
	t->buckets = NULL;
}

static void grow(struct flow_table *t)
{
	size_t n = t->nbuckets * 2;
	struct flow **b = calloc(n, sizeof(*b));

	if (!b)
		return;		/* longer chains, still correct */
	for (size_t i = 0; i < t->nbuckets; i++) {
		struct flow *f = t->buckets[i], *next;

		for (; f; f = next) {
			size_t h = key_hash(&f->key) & (n - 1);

			next = f->next;
			f->next = b[h];
			b[h] = f;
		}
	}
	free(t->buckets);
	t->buckets = b;
	t->nbuckets = n;
}

struct flow *flow_get(struct flow_table *t, const struct flow_key *k)
{
	size_t h = key_hash(k) & (t->nbuckets - 1);
	struct flow *f;

	for (f = t->buckets[h]; f; f = f->next)
		if (key_eq(&f->key, k))
			return f;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	if (psn_window_init(&f->win, t->first_known, t->first_psn)) {
		free(f);
		return NULL;
	}
	f->key = *k;
	f->next = t->buckets[h];
	t->buckets[h] = f;
	if (++t->count > t->nbuckets)
		grow(t);
	return f;
}

static int flow_cmp(const void *a, const void *b)
{
	const struct flow *x = *(struct flow * const *)a;
	const struct flow *y = *(struct flow * const *)b;

	if (x->key.dqpn != y->key.dqpn)
		return x->key.dqpn < y->key.dqpn ? -1 : 1;
	if (x->key.sport != y->key.sport)
		return x->key.sport < y->key.sport ? -1 : 1;
	if (x->key.family != y->key.family)
		return x->key.family < y->key.family ? -1 : 1;
	return memcmp(&x->key.src, &y->key.src, sizeof(x->key.src));
}

struct flow **flow_table_sorted(const struct flow_table *t)
{
	struct flow **v = calloc(t->count + 1, sizeof(*v));
	size_t n = 0;

	if (!v)
		return NULL;
	for (size_t i = 0; i < t->nbuckets; i++)
		for (struct flow *f = t->buckets[i]; f; f = f->next)
			v[n++] = f;
	qsort(v, n, sizeof(*v), flow_cmp);
	return v;
}
