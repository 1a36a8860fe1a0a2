// SPDX-License-Identifier: GPL-2.0
/*
 * segments.c - turn a path into the shortest SRv6 segment list that still
 * pins it: a node SID sends the packet along IGP shortest paths, so a
 * stretch of the path needs no SID of its own when it is the *unique*
 * IGP shortest path between its ends (a tie would let ECMP spray the
 * packet off our path).  Greedy from the head: extend the stretch while it
 * stays the unique shortest path, then name its end.  A single hop that
 * IGP would not take (worse metric, or a tie) needs the link's adjacency
 * SID (End.X); without one we fall back to the far node's SID and mark the
 * list inexact.
 *
 * IGP routing ignores TE colours but not failures, so the shortest-path
 * trees are computed over all working arcs.  Trees are cached by head
 * node (direct-mapped, one slot per node up to SID_CACHE_MAX_SLOTS).
 */
#include <stdlib.h>
#include <string.h>

#include <linux/dmsc.h>

#include "mpte_int.h"

_Static_assert(MPTE_DEFAULT_MAX_SIDS == DMSC_MAX_SEGS,
	       "the solver's default SID limit is the data plane's");

#define SID_CACHE_MAX_SLOTS 4096	/* one tree per head node up to this many nodes */

struct sid_tree {
	int root;		/* -1: empty slot */
	double *dist;
	unsigned char *count;	/* number of shortest paths, capped at 2 */
};

struct mpte_sid_cache {
	const struct mpte_ctx *ctx;
	struct sid_tree *slot;
	int nslots;
	struct mpte_sp sp;
	int *order;
	double *igp;		/* IGP metric in CSR order (out_arc[k]'s) */
	double uniform;		/* every arc's IGP metric, if all are equal
				 * and positive; else 0 */
};

static int near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (1 + fabs(a) + fabs(b));
}

struct mpte_sid_cache *mpte_sid_cache_new(const struct mpte_ctx *ctx)
{
	struct mpte_sid_cache *c = mpte_xcalloc(1, sizeof(*c));
	int i;

	c->ctx = ctx;
	c->nslots = ctx->t->nnodes < SID_CACHE_MAX_SLOTS ? ctx->t->nnodes
							 : SID_CACHE_MAX_SLOTS;
	c->slot = mpte_xcalloc(c->nslots, sizeof(*c->slot));
	for (i = 0; i < c->nslots; i++)
		c->slot[i].root = -1;
	mpte_sp_init(&c->sp, ctx->t->nnodes);
	c->order = mpte_xcalloc(ctx->t->nnodes, sizeof(int));
	c->igp = mpte_xcalloc(ctx->t->narcs, sizeof(double));
	for (i = 0; i < ctx->t->narcs; i++)
		c->igp[i] = ctx->t->arcs[ctx->t->out_arc[i]].igp_metric;
	c->uniform = ctx->t->narcs ? c->igp[0] : 0;
	for (i = 0; i < ctx->t->narcs; i++)
		if (c->igp[i] != c->uniform || !(c->uniform > 0))
			c->uniform = 0;
	return c;
}

/*
 * Arc a has failed: forget only the trees it was on (a shortest path from
 * the root used it).  Any other tree keeps its distances and its counts
 * of shortest paths, so it stays right; rebuilding every tree after each
 * failure was a sixth of an incremental re-plan on wan1000.
 */
void mpte_sid_cache_fail_arc(struct mpte_sid_cache *c, int a)
{
	const struct mpte_arc *arc = &c->ctx->t->arcs[a];
	int i;

	for (i = 0; i < c->nslots; i++) {
		struct sid_tree *s = &c->slot[i];

		if (s->root < 0 || s->dist[arc->from] == HUGE_VAL_D)
			continue;
		if (near(s->dist[arc->from] + arc->igp_metric,
			 s->dist[arc->to]))
			s->root = -1;
	}
}

/*
 * Arc a works again: a tree where it offers a path as short as the known
 * one (or shorter) has changed distances or counts; the others have not.
 */
void mpte_sid_cache_recover_arc(struct mpte_sid_cache *c, int a)
{
	const struct mpte_arc *arc = &c->ctx->t->arcs[a];
	int i;

	for (i = 0; i < c->nslots; i++) {
		struct sid_tree *s = &c->slot[i];

		if (s->root < 0 || s->dist[arc->from] == HUGE_VAL_D)
			continue;
		if (s->dist[arc->from] + arc->igp_metric <= s->dist[arc->to] ||
		    near(s->dist[arc->from] + arc->igp_metric,
			 s->dist[arc->to]))
			s->root = -1;
	}
}

void mpte_sid_cache_free(struct mpte_sid_cache *c)
{
	int i;

	if (!c)
		return;
	for (i = 0; i < c->nslots; i++) {
		free(c->slot[i].dist);
		free(c->slot[i].count);
	}
	free(c->slot);
	mpte_sp_fini(&c->sp);
	free(c->order);
	free(c->igp);
	free(c);
}


/*
 * With one metric on every arc (a fat-tree), the tree is a breadth-first
 * search: the same distances (each is its parent's plus the metric, as
 * the Dijkstra adds them) in an order of non-decreasing distance, without
 * the heap.  The Dijkstra was a ninth of fat-tree k=32's whole run, in
 * the output's segment lists.  Fills s->dist and c->order; returns the
 * number of nodes reached.
 */
static int bfs(struct mpte_sid_cache *c, struct sid_tree *s, int root)
{
	const struct mpte_topology *t = c->ctx->t;
	const unsigned char *failed = c->ctx->failed;
	int head = 0, n = 0, i;

	for (i = 0; i < t->nnodes; i++)
		s->dist[i] = HUGE_VAL_D;
	s->dist[root] = 0;
	c->order[n++] = root;
	while (head < n) {
		int u = c->order[head++], k;
		double nd = s->dist[u] + c->uniform;

		for (k = t->out_start[u]; k < t->out_start[u + 1]; k++) {
			int v = t->out_to[k];

			if (s->dist[v] != HUGE_VAL_D || failed[t->out_arc[k]])
				continue;
			s->dist[v] = nd;
			c->order[n++] = v;
		}
	}
	return n;
}

static const struct sid_tree *tree(struct mpte_sid_cache *c, int root)
{
	const struct mpte_topology *t = c->ctx->t;
	struct sid_tree *s = &c->slot[root % c->nslots];
	struct mpte_filter f;
	int i, n = 0;

	if (s->root == root)
		return s;
	if (!s->dist) {
		s->dist = mpte_xcalloc(t->nnodes, sizeof(double));
		s->count = mpte_xcalloc(t->nnodes, 1);
	}
	s->root = root;
	memset(s->count, 0, t->nnodes);
	if (c->uniform) {
		n = bfs(c, s, root);
	} else {
		memset(&f, 0, sizeof(f));
		f.failed = c->ctx->failed;
		mpte_dijkstra(t, &c->sp, &root, 1, NULL, &f, NULL, 0);
		for (i = 0; i < t->nnodes; i++)
			s->dist[i] = c->sp.dist[i];
		n = c->sp.nsettled;
		memcpy(c->order, c->sp.settled, n * sizeof(int));
	}
	/* count shortest paths in order of distance, capped at 2: the order
	 * the search settled them in (nodes at equal distance in any
	 * order, as a zero-metric arc needs; sorting again cost as much
	 * as the search) */
	s->count[root] = 1;
	for (i = 0; i < n; i++) {
		int u = c->order[i], k;

		if (!s->count[u])
			continue;
		for (k = t->out_start[u]; k < t->out_start[u + 1]; k++) {
			int a = t->out_arc[k], v = t->out_to[k];

			if (v == root || c->ctx->failed[a])
				continue;
			if (near(s->dist[u] + c->igp[k], s->dist[v])) {
				int cnt = s->count[v] + s->count[u];

				s->count[v] = cnt > 2 ? 2 : cnt;
			}
		}
	}
	return s;
}

int mpte_segments(struct mpte_sid_cache *c, const int *arcs, int len,
		  const char **sids, int max, int *exact, int *missing)
{
	const struct mpte_topology *t = c->ctx->t;
	const char *last = NULL;
	int i = 0, n = 0;

#define PUT(sid)						\
	do {							\
		last = (sid);					\
		if (n < max)					\
			sids[n] = last;				\
		n++;						\
	} while (0)
#define PUT_NODE(v)						\
	do {							\
		if (!t->nodes[v].sid && missing && *missing < 0) \
			*missing = (v);				\
		PUT(t->nodes[v].sid);				\
	} while (0)
	*exact = 1;
	if (missing)
		*missing = -1;
	while (i < len) {
		int head = t->arcs[arcs[i]].from, j = i, end;
		const struct sid_tree *tr = tree(c, head);
		double cum = 0;

		/* extend while arcs[i..j] is the unique shortest path */
		while (j < len) {
			int v = t->arcs[arcs[j]].to;

			cum += t->arcs[arcs[j]].igp_metric;
			if (!near(cum, tr->dist[v]) || tr->count[v] != 1)
				break;
			j++;
		}
		if (j == i) {
			const struct mpte_arc *a = &t->arcs[arcs[i]];

			if (a->adj_sid) {
				PUT(a->adj_sid);
			} else {
				*exact = 0;
				PUT_NODE(a->to);
			}
			i++;
			continue;
		}
		end = t->arcs[arcs[j - 1]].to;
		PUT_NODE(end);
		i = j;
	}
	/* an adjacency SID as the last segment still needs the egress */
	if (len && t->arcs[arcs[len - 1]].adj_sid &&
	    last == t->arcs[arcs[len - 1]].adj_sid)
		PUT_NODE(t->arcs[arcs[len - 1]].to);
#undef PUT_NODE
#undef PUT
	return n;
}

int mpte_segments_over(struct mpte_sid_cache *c, const int *arcs, int len,
		       int max_sids)
{
	int exact, n;

	/* a hop adds at most one SID, the egress after an End.X one more:
	 * a short path fits without building IGP trees */
	if (len + 1 <= max_sids)
		return 0;
	n = mpte_segments(c, arcs, len, NULL, 0, &exact, NULL);
	return n > max_sids ? n : 0;
}

struct json_object *mpte_segments_json(struct mpte_sid_cache *c,
				       const int *arcs, int len, int *exact)
{
	const char **sids = mpte_xcalloc(len + 1, sizeof(*sids));
	struct json_object *a = json_object_new_array();
	int n = mpte_segments(c, arcs, len, sids, len + 1, exact, NULL), i;

	for (i = 0; i < n; i++)
		json_object_array_add(a, sids[i] ?
				      json_object_new_string(sids[i]) : NULL);
	free(sids);
	return a;
}

int mpte_max_sids(const struct mpte_ctx *ctx, int di)
{
	int m = ctx->ds->d[di].max_sids;

	if (ctx->opt.max_sids > 0 && ctx->opt.max_sids < m)
		m = ctx->opt.max_sids;
	return m;
}
