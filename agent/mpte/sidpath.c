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
 * it came from; the search stops at the first level an egress is reached
 * by a path that keeps every rule.
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
 * of IGP trees (segments.c, local searches) this search is not made.
 * Each head's tree costs a pass over the arcs, and where IGP has many
 * ties (every metric 1) few segments are unique and a search reads
 * hundreds: a 3,000-node WAN with max_sids 3 took 144 s instead of 6.
 * So a search gives up past SIDPATH_MAX_HEADS heads (wan1000's largest
 * read 998), a solve or event
 * past SIDPATH_BUDGET in all (on wan1000 with max_sids 3, 8,049
 * searches read 56,585 of its 104,384, at most 998 in one; the 3,000-node
 * WAN's searches stop at 56,384), and one that gave up is not made again
 * by hops: the demand is then as before.  A tree's arcs into its nodes
 * are kept with it (segments.c), made once.
 */
#include <stdlib.h>
#include <string.h>

#include "mpte_int.h"

#define SIDPATH_MAX_HEADS 2048	/* trees a search may read, each O(nodes) */
/* a solve's or event's, in trees: 8 a demand and a node, and some */
#define SIDPATH_BUDGET(ndem, nnodes) (8L * ((ndem) + (nnodes)) + 16384)

void mpte_sid_path_budget(struct mpte_ctx *ctx)
{
	ctx->sidpath_heads = SIDPATH_BUDGET(ctx->ds->n, ctx->t->nnodes);
}

struct seg_tree {
	const int *par;		/* the arc into v on the unique route; -1 none */
	double *cost;		/* the route's length from the head */
	unsigned char *state;	/* 0 not yet, 1 reachable in one segment, 2 not */
};

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

	s->par = mpte_sid_tree_par(mpte_sids(ctx), head);
	memset(s->state, 0, t->nnodes);
}

/*
 * The path to egress best with lv segments at most, back a segment at a
 * time (pred[k][v]: the head of v's last segment at level k, -1 if v
 * was reached as cheaply with fewer), into out; its length, or 0 if it
 * breaks a rule the search does not keep (a node twice, the hop bound,
 * max_delay, its own count of SIDs).
 */
static int take(struct mpte_ctx *ctx, int di, struct seg_tree *s,
		const int *pred, int lv, int best, int *tmp,
		unsigned char *seen, int *out, int max)
{
	const struct mpte_topology *t = ctx->t;
	const struct mpte_demand *d = &ctx->ds->d[di];
	int nn = t->nnodes, n = 0, i, u, v;

	for (v = best; lv > 0; lv--) {
		u = pred[lv * nn + v];
		if (u < 0)
			continue;
		seg_tree_for(ctx, s, u);
		for (i = v; i != u; i = t->arcs[s->par[i]].from) {
			if (n >= nn || n >= max)
				return 0;
			tmp[n++] = s->par[i];
		}
		v = u;
	}
	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	memset(seen, 0, nn);
	seen[t->arcs[out[0]].from] = 1;
	for (i = 0; i < n; i++) {
		if (seen[t->arcs[out[i]].to])
			return 0;
		seen[t->arcs[out[i]].to] = 1;
	}
	if (n > mpte_hop_limit(ctx, di) ||
	    (d->max_delay > 0 &&
	     mpte_path_delay(t, out, n) > d->max_delay + MPTE_EPS) ||
	    mpte_segments_over(mpte_sids(ctx), out, n, mpte_max_sids(ctx, di)))
		return 0;
	return n;
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
	for (lv = 1; lv <= m && n <= 0; lv++) {
		memcpy(next, cost, nn * sizeof(double));
		memset(now, 0, nn);
		for (v = 0; v < nn; v++)
			pred[lv * nn + v] = -1;
		for (u = 0; u < nn; u++) {
			if (!changed[u])
				continue;
			if (++heads > SIDPATH_MAX_HEADS ||
			    --ctx->sidpath_heads < 0) {
				n = -1;	/* gave up: no retry */
				goto out;
			}
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
		/* the cheapest egress reached; if its path breaks a rule,
		 * a list of more segments may not (its cost is lower) */
		best = -1;
		for (i = 0; i < d->negress; i++)
			if (reached[d->egress[i]] &&
			    (best < 0 || cost[d->egress[i]] < cost[best]))
				best = d->egress[i];
		if (best >= 0)
			n = take(ctx, di, &s, pred, lv, best, tmp, seen, out,
				 max);
	}
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
	free(s.cost);
	free(s.state);
	return n;
}

int mpte_sid_path(struct mpte_ctx *ctx, int di, const double *len, int *out,
		  int max)
{
	const struct mpte_topology *t = ctx->t;
	int n = search(ctx, di, len, out, max), a;
	double *delay;

	/* the cheapest list by len may break the hop bound where the one
	 * of fewest hops does not, or max_delay where the one of least
	 * delay does not (at the last level, the least of all) */
	if (!n && len)
		n = search(ctx, di, NULL, out, max);
	if (!n && ctx->ds->d[di].max_delay > 0) {
		delay = mpte_xcalloc(t->narcs, sizeof(double));
		for (a = 0; a < t->narcs; a++)
			delay[a] = t->arcs[a].delay;
		n = search(ctx, di, delay, out, max);
		free(delay);
	}
	return n > 0 ? n : 0;
}
