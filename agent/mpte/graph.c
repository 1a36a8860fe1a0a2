// SPDX-License-Identifier: GPL-2.0
/*
 * graph.c - topology indexing, name lookup and the one Dijkstra everything
 * uses (congestion lengths, IGP metric, delay, backups): a binary heap with
 * decrease-key, multi-source start (a super-source for several ingresses),
 * an arc filter for TE constraints, and an early stop once every target is
 * settled.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpte_int.h"

void *mpte_xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz ? sz : 1);

	if (!p)
		abort();
	return p;
}

void *mpte_xrealloc(void *p, size_t sz)
{
	p = realloc(p, sz ? sz : 1);
	if (!p)
		abort();
	return p;
}

char *mpte_xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		abort();
	return p;
}

double mpte_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/*
 * With MPTE_TRACE set, say on stderr how long the part of a run called
 * what took since the last mark, in wall and in process CPU seconds (on
 * a shared machine the wall clock is not only ours).  NULL only marks.
 */
void mpte_trace_phase(const char *what)
{
	static double wall0, cpu0;
	double w = mpte_now(), c = cpu_now();

	if (what && getenv("MPTE_TRACE"))
		fprintf(stderr, "mpte: %s: %.2f s wall, %.2f s CPU\n", what,
			w - wall0, c - cpu0);
	wall0 = w;
	cpu0 = c;
}

static unsigned int hash_name(const char *s)
{
	unsigned int h = 2166136261u;	/* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* Build the name hash and the CSR adjacency; call once after parsing. */
int mpte_topology_index(struct mpte_topology *t)
{
	unsigned int size = 16;
	int i;

	while (size < 2u * (unsigned int)t->nnodes + 1)
		size <<= 1;
	t->hash_mask = size - 1;
	t->node_hash = mpte_xcalloc(size, sizeof(int));
	for (i = 0; i < (int)size; i++)
		t->node_hash[i] = -1;
	for (i = 0; i < t->nnodes; i++) {
		unsigned int h = hash_name(t->nodes[i].name) & t->hash_mask;

		while (t->node_hash[h] >= 0) {
			if (!strcmp(t->nodes[t->node_hash[h]].name,
				    t->nodes[i].name))
				return -1;	/* duplicate */
			h = (h + 1) & t->hash_mask;
		}
		t->node_hash[h] = i;
	}

	mpte_topology_csr(t);
	return 0;
}

/*
 * The outgoing arcs of each node, contiguous (CSR), with each arc's head
 * beside it: the Dijkstra's inner loop then reads two small arrays instead
 * of one large arc struct per relaxation (a third of its time on
 * fat-tree k=32).
 */
void mpte_topology_csr(struct mpte_topology *t)
{
	int i, *fill;

	t->out_start = mpte_xcalloc(t->nnodes + 1, sizeof(int));
	t->out_arc = mpte_xcalloc(t->narcs, sizeof(int));
	t->out_to = mpte_xcalloc(t->narcs, sizeof(int));
	for (i = 0; i < t->narcs; i++)
		t->out_start[t->arcs[i].from + 1]++;
	for (i = 0; i < t->nnodes; i++)
		t->out_start[i + 1] += t->out_start[i];
	fill = mpte_xcalloc(t->nnodes, sizeof(int));
	for (i = 0; i < t->narcs; i++) {
		int u = t->arcs[i].from, k = t->out_start[u] + fill[u]++;

		t->out_arc[k] = i;
		t->out_to[k] = t->arcs[i].to;
	}
	free(fill);
}

int mpte_node_lookup(const struct mpte_topology *t, const char *name)
{
	unsigned int h = hash_name(name) & t->hash_mask;

	while (t->node_hash[h] >= 0) {
		if (!strcmp(t->nodes[t->node_hash[h]].name, name))
			return t->node_hash[h];
		h = (h + 1) & t->hash_mask;
	}
	return -1;
}

/*
 * A link by its id, or "A->B" naming its end points: -1 if none, -2 if
 * "A->B" fits more than one link (parallel links: only the id tells them
 * apart).
 */
int mpte_link_lookup(const struct mpte_topology *t, const char *id)
{
	int i, found = -1;

	for (i = 0; i < t->nlinks; i++)
		if (!strcmp(t->links[i].id, id))
			return i;
	for (i = 0; i < t->narcs; i++)
		if (!strcmp(t->arcs[i].name, id)) {
			if (found >= 0 && found != t->arcs[i].link)
				return -2;
			found = t->arcs[i].link;
		}
	return found;
}

/* mpte_link_lookup() for a caller's request: -1 with the reason in @err. */
int mpte_link_find(const struct mpte_topology *t, const char *id, char *err,
		   size_t errlen)
{
	int l = mpte_link_lookup(t, id);

	if (l == -2)
		snprintf(err, errlen, "link \"%s\" is ambiguous: parallel links join those nodes, name one by its id",
			 id);
	else if (l < 0)
		snprintf(err, errlen, "unknown link \"%s\"", id);
	return l < 0 ? -1 : l;
}

int mpte_sp_init(struct mpte_sp *sp, int n)
{
	int i;

	memset(sp, 0, sizeof(*sp));
	sp->n = n;
	sp->dist = mpte_xcalloc(n, sizeof(double));
	sp->pred = mpte_xcalloc(n, sizeof(int));
	sp->done = mpte_xcalloc(n, 1);
	sp->touched = mpte_xcalloc(n, sizeof(int));
	sp->settled = mpte_xcalloc(n, sizeof(int));
	sp->heap_cap = n;
	sp->heap = mpte_xcalloc(n, sizeof(*sp->heap));
	for (i = 0; i < n; i++) {
		sp->dist[i] = HUGE_VAL_D;
		sp->pred[i] = -1;
	}
	return 0;
}

void mpte_sp_fini(struct mpte_sp *sp)
{
	free(sp->dist);
	free(sp->pred);
	free(sp->done);
	free(sp->touched);
	free(sp->settled);
	free(sp->heap);
	if (sp->radix) {
		int i;

		for (i = 0; i < MPTE_RADIX_BUCKETS; i++)
			free(sp->radix->b[i]);
		free(sp->radix);
	}
	memset(sp, 0, sizeof(*sp));
}

int mpte_arc_usable(const struct mpte_topology *t, int a,
		    const struct mpte_filter *f)
{
	const struct mpte_arc *arc = &t->arcs[a];

	if (arc->capacity <= 0)
		return 0;
	if (f->failed && f->failed[a])
		return 0;
	if (f->arc_off && f->arc_off[a])
		return 0;
	if (f->node_off && f->node_off[arc->to])
		return 0;
	if (f->exclude_any && (arc->colours & f->exclude_any))
		return 0;
	if (f->include_any && !(arc->colours & f->include_any))
		return 0;
	if ((arc->colours & f->include_all) != f->include_all)
		return 0;
	return 1;
}

/*
 * Lazy-deletion binary heap: a node may sit in the heap more than once; the
 * stale copies are skipped when popped.  Simpler than decrease-key and just
 * as fast on sparse graphs.  Key and node side by side: one cache line
 * where two arrays took two.  (A 4-ary heap was 3 % faster on the
 * 10,000-node WAN, but it settles nodes at equal distance in another
 * order, and the other shortest paths it then finds moved two instances
 * of the path-cap soak, one of them from 1.0001 to 1.028 x the LP.)
 */
void mpte_sp_push(struct mpte_sp *sp, int v, double key)
{
	struct mpte_heap_ent *h;
	int i;

	if (sp->heap_len == sp->heap_cap) {
		sp->heap_cap *= 2;
		sp->heap = mpte_xrealloc(sp->heap,
					 sp->heap_cap * sizeof(*sp->heap));
	}
	h = sp->heap;
	i = sp->heap_len++;
	while (i > 0) {
		int p = (i - 1) / 2;

		if (h[p].key <= key)
			break;
		h[i] = h[p];
		i = p;
	}
	h[i].key = key;
	h[i].node = v;
}

int mpte_sp_pop(struct mpte_sp *sp, double *key)
{
	struct mpte_heap_ent *h = sp->heap, last;
	int top = h[0].node, i = 0, n;

	*key = h[0].key;
	n = --sp->heap_len;
	if (!n)
		return top;
	last = h[n];
	for (;;) {
		int c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && h[c + 1].key < h[c].key)
			c++;
		if (h[c].key >= last.key)
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = last;
	return top;
}

/*
 * A radix heap (Ahuja, Mehlhorn, Orlin, Tarjan) for a Dijkstra whose
 * caller reads distances only.  Keys never fall below the last popped
 * one, and a non-negative double's bits, read as an unsigned integer,
 * order as the double does; so a key goes into the bucket of the highest
 * bit in which it differs from the last popped key, and a pop takes the
 * least bucket's least key and spreads that bucket over the ones below.
 * Each entry moves a few times at most, against a binary heap's
 * log2(entries) swaps with their cache misses on every pop (the pops
 * were a third of the 10,000-node WAN's run).  Nodes at one distance
 * come out in another order than from the binary heap; a distance is
 * the same whatever that order (the least of the nearer neighbours'
 * distances plus their arcs), so the dual bound and the IGP trees are
 * the same to the bit.  Searches whose paths are read keep the binary
 * heap: its ties are what the tests and the soak were tuned with.
 */
static uint64_t key_bits(double key)
{
	uint64_t k;

	memcpy(&k, &key, sizeof(k));
	return k;
}

static int radix_bucket(const struct mpte_radix *r, uint64_t k)
{
	return k == r->last ? 0 : 64 - __builtin_clzll(k ^ r->last);
}

static void radix_put(struct mpte_radix *r, int i, struct mpte_heap_ent e)
{
	if (r->len[i] == r->cap[i]) {
		r->cap[i] = r->cap[i] ? 2 * r->cap[i] : 64;
		r->b[i] = mpte_xrealloc(r->b[i], r->cap[i] * sizeof(*r->b[i]));
	}
	r->b[i][r->len[i]++] = e;
}

static void radix_reset(struct mpte_sp *sp)
{
	struct mpte_radix *r = sp->radix;

	if (!r)
		r = sp->radix = mpte_xcalloc(1, sizeof(*r));
	memset(r->len, 0, sizeof(r->len));
	r->last = 0;
	r->size = 0;
}

/* A Dijkstra's keys are never below the last popped one: a distance
 * plus a length that is not negative. */
static void radix_push(struct mpte_sp *sp, int v, double key)
{
	struct mpte_radix *r = sp->radix;
	struct mpte_heap_ent e = { .key = key, .node = v };

	radix_put(r, radix_bucket(r, key_bits(key)), e);
	r->size++;
}

static int radix_pop(struct mpte_sp *sp, double *key)
{
	struct mpte_radix *r = sp->radix;
	struct mpte_heap_ent e;

	if (!r->len[0]) {
		int i = 1, j, n;
		uint64_t least;

		while (!r->len[i])
			i++;
		least = key_bits(r->b[i][0].key);
		for (j = 1; j < r->len[i]; j++)
			if (key_bits(r->b[i][j].key) < least)
				least = key_bits(r->b[i][j].key);
		r->last = least;
		n = r->len[i];
		r->len[i] = 0;
		for (j = 0; j < n; j++)
			radix_put(r, radix_bucket(r, key_bits(r->b[i][j].key)),
				  r->b[i][j]);
	}
	e = r->b[0][--r->len[0]];
	r->size--;
	*key = e.key;
	return e.node;
}

/*
 * The binary heap's ties are what the tests and the soaks (all under 100
 * nodes), the benchmark's instances (up to 1,280) and their result files
 * were made with; from MPTE_RADIX_MIN_NODES on, the heap's pushes and pops
 * were a sixth of the 10,000-node WAN's run, and the radix heap's order
 * among equally short paths is as good a choice as the binary one's (the
 * same U, bound and mean hops there).  Deterministic either way: the same
 * input makes the same order on any machine and thread count.  Not for
 * the cheap pass's A* (cheap.c), whose searches are short: it gained
 * nothing there.
 */
bool mpte_pq_radix_for(const struct mpte_topology *t)
{
	return t->nnodes >= MPTE_RADIX_MIN_NODES;
}

/* The search's queue: the radix heap if @radix, else the binary one;
 * empty it for the search to come (mpte_sp_reset() first). */
static void pq_reset(struct mpte_sp *sp, bool radix)
{
	sp->use_radix = radix;
	sp->heap_len = 0;
	if (radix)
		radix_reset(sp);
}

static void pq_push(struct mpte_sp *sp, int v, double key)
{
	if (sp->use_radix)
		radix_push(sp, v, key);
	else
		mpte_sp_push(sp, v, key);
}

static int pq_pop(struct mpte_sp *sp, double *key)
{
	return sp->use_radix ? radix_pop(sp, key) : mpte_sp_pop(sp, key);
}

static bool pq_empty(const struct mpte_sp *sp)
{
	return sp->use_radix ? !sp->radix->size : !sp->heap_len;
}

void mpte_sp_reset(struct mpte_sp *sp)
{
	int i;

	for (i = 0; i < sp->ntouched; i++) {
		int v = sp->touched[i];

		sp->dist[v] = HUGE_VAL_D;
		sp->pred[v] = -1;
		sp->done[v] = 0;
	}
	sp->ntouched = 0;
	sp->nsettled = 0;
	sp->heap_len = 0;
}

void mpte_sp_set(struct mpte_sp *sp, int v, double d, int pred)
{
	if (sp->dist[v] == HUGE_VAL_D)
		sp->touched[sp->ntouched++] = v;
	sp->dist[v] = d;
	sp->pred[v] = pred;
}

/*
 * Targets are marked with bit 1 of done[] (bit 0 is Dijkstra's settled
 * mark).  Returns how many distinct targets there are.
 */
static int mark_targets(struct mpte_sp *sp, const int *targets, int ntargets)
{
	int i, left = ntargets;

	for (i = 0; i < ntargets; i++) {
		if (sp->done[targets[i]] & 2) {
			left--;
			continue;
		}
		sp->done[targets[i]] |= 2;
	}
	return left;
}

/* Clear the target bits; a node never reached was not recorded for reset. */
static void unmark_targets(struct mpte_sp *sp, const int *targets,
			   int ntargets)
{
	int i;

	for (i = 0; i < ntargets; i++) {
		if (sp->dist[targets[i]] == HUGE_VAL_D)
			sp->done[targets[i]] = 0;
		else
			sp->done[targets[i]] &= 1;
	}
}

/*
 * Shortest paths from the source set under per-arc lengths len (NULL: the
 * IGP metric).  With targets, stop once all of them are settled; nodes not
 * reached keep dist HUGE_VAL_D.  The result stays in sp until the next call.
 */
void mpte_dijkstra(const struct mpte_topology *t, struct mpte_sp *sp,
		   const int *src, int nsrc, const double *len,
		   const struct mpte_filter *f, const int *targets,
		   int ntargets)
{
	int i, left = ntargets, plain;
	unsigned char *is_target = NULL;
	const unsigned char *failed;
	double per_hop;

	mpte_sp_reset(sp);
	pq_reset(sp, (f && f->dist_only) || mpte_pq_radix_for(t));
	for (i = 0; i < nsrc; i++) {
		if (f && f->node_off && f->node_off[src[i]])
			continue;
		if (sp->dist[src[i]] == 0)
			continue;
		mpte_sp_set(sp, src[i], 0, -1);
		pq_push(sp, src[i], 0);
	}
	if (ntargets) {
		is_target = sp->done;
		left = mark_targets(sp, targets, ntargets);
	}
	/* no colours or exclusions: only failed arcs to skip,
	 * checked inline (capacities are positive, json_io.c says so) */
	plain = !f || (!f->arc_off && !f->node_off && !f->include_any &&
		       !f->include_all && !f->exclude_any);
	failed = f ? f->failed : NULL;
	per_hop = f ? f->per_hop : 0;
	while (!pq_empty(sp)) {
		double d;
		int u = pq_pop(sp, &d), k, end;

		if ((sp->done[u] & 1) || d > sp->dist[u])
			continue;
		sp->done[u] |= 1;
		if (sp->dist[u] == HUGE_VAL_D)
			continue;
		sp->settled[sp->nsettled++] = u;
		if (is_target && (sp->done[u] & 2) && --left == 0)
			break;
		end = t->out_start[u + 1];
		for (k = t->out_start[u]; k < end; k++) {
			int a = t->out_arc[k], v = t->out_to[k];
			double nd;

			if (sp->done[v] & 1)
				continue;
			if (plain ? failed && failed[a] :
			    !mpte_arc_usable(t, a, f))
				continue;
			nd = d + (len ? len[a] : t->arcs[a].igp_metric) + per_hop;
			if (nd < sp->dist[v]) {
				mpte_sp_set(sp, v, nd, a);
				pq_push(sp, v, nd);
			}
		}
	}
	if (is_target)
		unmark_targets(sp, targets, ntargets);
}

/* Nearest reached egress of demand d in sp, or -1. */
int mpte_nearest_egress(const struct mpte_sp *sp, const struct mpte_demand *d)
{
	int best = -1, j;

	for (j = 0; j < d->negress; j++) {
		int v = d->egress[j];

		if (sp->dist[v] == HUGE_VAL_D)
			continue;
		if (best < 0 || sp->dist[v] < sp->dist[best])
			best = v;
	}
	return best;
}

/*
 * Fewest hops from the source set (every arc counts 1): a breadth-first
 * search, a node's distance final when it is first reached, so no heap.
 * The hop counts of every demand group are a search each, on 10,000 nodes
 * 10,000 of them, and this is several times cheaper than mpte_dijkstra
 * with unit lengths.  f->per_hop is ignored.  With targets, stop once all
 * of them are reached.  sp->settled holds the nodes reached, in order.
 */
void mpte_bfs(const struct mpte_topology *t, struct mpte_sp *sp,
	      const int *src, int nsrc, const struct mpte_filter *f,
	      const int *targets, int ntargets)
{
	int i, head = 0, left = ntargets;
	unsigned char *is_target = NULL;
	/* no colours or exclusions: only failed arcs to skip, as in
	 * mpte_dijkstra(), without reading the arcs' records */
	bool plain = f && !f->arc_off && !f->node_off && !f->include_any &&
		     !f->include_all && !f->exclude_any;
	const unsigned char *failed = f ? f->failed : NULL;

	mpte_sp_reset(sp);
	if (ntargets) {
		is_target = sp->done;
		left = mark_targets(sp, targets, ntargets);
	}
	for (i = 0; i < nsrc; i++) {
		int v = src[i];

		if ((f && f->node_off && f->node_off[v]) ||
		    sp->dist[v] == 0)
			continue;
		mpte_sp_set(sp, v, 0, -1);
		sp->settled[sp->nsettled++] = v;
		if (is_target && (sp->done[v] & 2))
			left--;
	}
	while (head < sp->nsettled && (!is_target || left > 0)) {
		int u = sp->settled[head++], k, end;
		double d = sp->dist[u] + 1;

		end = t->out_start[u + 1];
		for (k = t->out_start[u]; k < end; k++) {
			int a = t->out_arc[k], v = t->out_to[k];

			if (sp->dist[v] != HUGE_VAL_D)
				continue;
			if (plain ? failed && failed[a] :
			    f ? !mpte_arc_usable(t, a, f) :
			    t->arcs[a].capacity <= 0)
				continue;
			mpte_sp_set(sp, v, d, a);
			sp->settled[sp->nsettled++] = v;
			if (is_target && (sp->done[v] & 2) && --left == 0)
				break;
		}
	}
	if (is_target)
		unmark_targets(sp, targets, ntargets);
}

/* Walk predecessors back from node; arcs come out in forward order. */
int mpte_sp_extract(const struct mpte_topology *t, const struct mpte_sp *sp,
		    int node, int *arcs, int max)
{
	int n = 0, v = node, i;

	if (sp->dist[node] == HUGE_VAL_D)
		return -1;
	while (sp->pred[v] >= 0) {
		if (n == max)
			return -1;
		arcs[n++] = sp->pred[v];
		v = t->arcs[sp->pred[v]].from;
	}
	for (i = 0; i < n / 2; i++) {
		int x = arcs[i];

		arcs[i] = arcs[n - 1 - i];
		arcs[n - 1 - i] = x;
	}
	return n;
}

void mpte_filter_for(const struct mpte_ctx *ctx, const struct mpte_demand *d,
		     struct mpte_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->include_any = d->include_any;
	f->include_all = d->include_all;
	f->exclude_any = d->exclude_any;
	f->failed = ctx->failed;
}
