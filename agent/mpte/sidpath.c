// SPDX-License-Identifier: GPL-2.0
/*
 * sidpath.c - a path that fits in a demand's max_sids when the
 * optimiser's shortest one does not.
 *
 * The optimiser routes on its own arc lengths and only then counts the
 * path's SIDs (segments.c).  A demand's first route is taken whatever it
 * needs, and later routes only if they fit; on a WAN with max_sids 3 the
 * first route of 47 of 800 demands needed 4 to 12 SIDs, no route that
 * fitted ever came up, and finishing dropped them ("no installable path")
 * although lists of one or two SIDs reach their egress.  A link's failure
 * did the same to 19 more.
 *
 * The search here is over segments, not hops: one segment is the unique
 * IGP shortest path from a node to another (what a node SID pins), so the
 * nodes one segment reaches from u are those whose count in u's IGP tree
 * is 1.  Level by level, up to max_sids segments, each node keeps the
 * least length (the optimiser's, so the path is also a cheap one now) at
 * which some list of at most that many segments reaches it, and the head
 * it came from; the search stops at the first level an egress is reached.
 * Every arc of a segment must pass the demand's colours and be up.  The
 * path found is checked like any other (hop bound, max_delay, its own
 * count of SIDs, no node twice) and refused if it breaks one.
 *
 * The optimiser's lengths can overflow on a busy arc: a node reached at
 * an infinite length is still reached.  If the cheapest list breaks the
 * hop bound, the search is made again by hops.
 *
 * Adjacency SIDs are not used: a list that needs one is still found by
 * the optimiser when it comes up.  On a topology too large for the cache
 * of IGP trees (segments.c, local searches) this search is not made, and
 * one that would take more than SIDPATH_MAX_HEADS heads' trees gives up
 * (each costs a pass over the arcs): the demand is then as before.
 */
#include <stdlib.h>
#include <string.h>

#include "mpte_int.h"

#define SIDPATH_MAX_HEADS 4096	/* trees a search may read, each O(arcs) */

struct seg_tree {
	const double *dist;
	const unsigned char *count;
	int *par;		/* the arc into v on the unique route; -1 none */
	double *cost;		/* the route's length from the head */
	unsigned char *state;	/* 0 not yet, 1 reachable in one segment, 2 not */
};

/* The head's arcs into each node with one IGP route (count 1). */
static void seg_parents(const struct mpte_topology *t, struct seg_tree *s,
			const unsigned char *failed)
{
	int a;

	memset(s->par, -1, t->nnodes * sizeof(int));
	for (a = 0; a < t->narcs; a++) {
		int w = t->arcs[a].from, v = t->arcs[a].to;
		double dv = s->dist[v], dw = s->dist[w];

		if (failed[a] || s->count[v] != 1 || s->count[w] != 1 ||
		    dw == HUGE_VAL_D)
			continue;
		if (fabs(dw + t->arcs[a].igp_metric - dv) <=
		    1e-9 * (1 + fabs(dv)))
			s->par[v] = a;
	}
}

/* Is v one segment from the head, under filter f?  Its cost if so. */
static int seg_reach(const struct mpte_topology *t, struct seg_tree *s,
		     int head, int v, const struct mpte_filter *f,
		     const double *len, int *stack)
{
	int n = 0, u = v;

	/* walk up to the head or a node already decided */
	while (u != head && !s->state[u]) {
		stack[n++] = u;
		if (s->par[u] < 0)
			break;
		u = t->arcs[s->par[u]].from;
		if (n > t->nnodes)
			break;	/* cannot happen with tight arcs; be safe */
	}
	while (n--) {
		int x = stack[n], a = s->par[x];
		int up = a < 0 ? -1 : t->arcs[a].from;

		if (a < 0 || !mpte_arc_usable(t, a, f) ||
		    (up != head && s->state[up] != 1)) {
			s->state[x] = 2;
			continue;
		}
		s->state[x] = 1;
		s->cost[x] = (up == head ? 0 : s->cost[up]) +
			     (len ? len[a] : 1);
	}
	return v != head && s->state[v] == 1;
}

static void seg_tree_for(struct mpte_ctx *ctx, struct seg_tree *s, int head)
{
	const struct mpte_topology *t = ctx->t;

	s->dist = mpte_sid_tree(mpte_sids(ctx), head, &s->count);
	seg_parents(t, s, ctx->failed);
	memset(s->state, 0, t->nnodes);
}

static int search(struct mpte_ctx *ctx, int di, const double *len, int *out,
		  int max)
{
	const struct mpte_topology *t = ctx->t;
	const struct mpte_demand *d = &ctx->ds->d[di];
	int m = mpte_max_sids(ctx, di), nn = t->nnodes, lv, i, v, u;
	int best = -1, n = 0, heads = 0, *pred, *stack, *tmp;
	double *cost, *next;
	unsigned char *changed, *now, *seen, *reached;
	struct mpte_filter f;
	struct seg_tree s;

	if (m <= 0 || !mpte_sid_tree(mpte_sids(ctx), d->ingress[0], NULL))
		return 0;
	mpte_filter_for(ctx, d, &f);
	pred = mpte_xcalloc((size_t)(m + 1) * nn, sizeof(int));
	stack = mpte_xcalloc(nn + 1, sizeof(int));
	tmp = mpte_xcalloc(nn, sizeof(int));
	cost = mpte_xcalloc(nn, sizeof(double));
	next = mpte_xcalloc(nn, sizeof(double));
	changed = mpte_xcalloc(nn, 1);
	now = mpte_xcalloc(nn, 1);
	seen = mpte_xcalloc(nn, 1);
	reached = mpte_xcalloc(nn, 1);
	s.par = mpte_xcalloc(nn, sizeof(int));
	s.cost = mpte_xcalloc(nn, sizeof(double));
	s.state = mpte_xcalloc(nn, 1);
	for (v = 0; v < nn; v++)
		cost[v] = HUGE_VAL_D;
	for (i = 0; i < d->ningress; i++) {
		cost[d->ingress[i]] = 0;
		changed[d->ingress[i]] = reached[d->ingress[i]] = 1;
	}
	/* level lv: lists of at most lv segments; pred[lv][v] the head of
	 * the last one, -1 if v was reached as cheaply with fewer */
	for (lv = 1; lv <= m && best < 0; lv++) {
		memcpy(next, cost, nn * sizeof(double));
		memset(now, 0, nn);
		for (v = 0; v < nn; v++)
			pred[lv * nn + v] = -1;
		for (u = 0; u < nn; u++) {
			if (!changed[u])
				continue;
			if (++heads > SIDPATH_MAX_HEADS)
				goto out;
			seg_tree_for(ctx, &s, u);
			/* reached, not finite: the optimiser's lengths can
			 * overflow on a busy arc, and a way is still a way */
			for (v = 0; v < nn; v++)
				if (seg_reach(t, &s, u, v, &f, len, stack) &&
				    (!reached[v] ||
				     cost[u] + s.cost[v] < next[v])) {
					next[v] = cost[u] + s.cost[v];
					pred[lv * nn + v] = u;
					now[v] = reached[v] = 1;
				}
		}
		memcpy(cost, next, nn * sizeof(double));
		memcpy(changed, now, nn);
		for (i = 0; i < d->negress; i++)
			if (reached[d->egress[i]] &&
			    (best < 0 || cost[d->egress[i]] < cost[best]))
				best = d->egress[i];
	}
	if (best < 0)
		goto out;
	/* back from the egress, a segment at a time; the walk is the
	 * segments' arcs in reverse */
	for (v = best, lv--; lv > 0; lv--) {
		u = pred[lv * nn + v];
		if (u < 0)
			continue;
		seg_tree_for(ctx, &s, u);
		for (i = v; i != u; i = t->arcs[s.par[i]].from) {
			if (n >= nn || n >= max) {
				n = 0;
				goto out;
			}
			tmp[n++] = s.par[i];
		}
		v = u;
	}
	for (i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	/* a rule the search did not keep: refuse the path */
	seen[t->arcs[out[0]].from] = 1;
	for (i = 0; i < n; i++) {
		if (seen[t->arcs[out[i]].to]) {
			n = 0;
			break;
		}
		seen[t->arcs[out[i]].to] = 1;
	}
	if (n && (n > mpte_hop_limit(ctx, di) ||
		  (d->max_delay > 0 &&
		   mpte_path_delay(t, out, n) > d->max_delay + MPTE_EPS) ||
		  mpte_segments_over(mpte_sids(ctx), out, n, m)))
		n = 0;
out:
	free(pred);
	free(stack);
	free(tmp);
	free(cost);
	free(next);
	free(changed);
	free(now);
	free(seen);
	free(reached);
	free(s.par);
	free(s.cost);
	free(s.state);
	return n;
}

int mpte_sid_path(struct mpte_ctx *ctx, int di, const double *len, int *out,
		  int max)
{
	int n = search(ctx, di, len, out, max);

	/* the cheapest list by len may break the hop bound where the one
	 * of fewest hops does not */
	if (!n && len)
		n = search(ctx, di, NULL, out, max);
	return n;
}
