// SPDX-License-Identifier: GPL-2.0
/*
 * cheap.c - the secondary objective: among routings as good as the one
 * found, the cheapest.
 *
 * The exponential potential spreads flow to lower every link's load, not
 * only the busiest one's, so a demand keeps detours that buy nothing for
 * the maximum utilisation U: longer paths, more SIDs, more latency.  Here
 * each demand moves flow from its costliest paths onto its cheapest path
 * by TE metric among the links that still have room under U (each link
 * may carry up to U x capacity), so U never rises while the total cost
 * sum(flow x te_metric) only falls.  A small cost per hop breaks ties
 * towards fewer hops (and serves links with te_metric 0).  The moves keep
 * to every constraint a path has: colours, failures, max_delay, the hop
 * bound, max_sids, max_paths.  One Dijkstra per demand group and pass.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mpte_int.h"

#define CHEAP_PASSES	3

static double cost_of(const double *cost, const int *arcs, int n)
{
	double c = 0;
	int i;

	for (i = 0; i < n; i++)
		c += cost[arcs[i]];
	return c;
}

/* Move demand di's flow from its paths dearer than q onto q. */
static int cheapen(struct mpte_ctx *ctx, int di, const int *q, int n,
		   const double *cost, double ucap)
{
	const struct mpte_topology *t = ctx->t;
	const struct mpte_demand *d = &ctx->ds->d[di];
	struct mpte_dstate *s = &ctx->st[di];
	double qc = cost_of(cost, q, n);
	int moved = 0, again = 1;

	while (again) {
		int p, worst = -1, have_q = 0, i;
		double wc = qc * (1 + 1e-9) + 1e-12, delta;

		again = 0;
		for (p = 0; p < s->npaths; p++) {
			double c = cost_of(cost, s->paths[p].arcs, s->paths[p].len);

			if (s->paths[p].len == n &&
			    !memcmp(s->paths[p].arcs, q, n * sizeof(int)))
				have_q = 1;
			else if (s->paths[p].flow > 0 && c > wc) {
				wc = c;
				worst = p;
			}
		}
		if (worst < 0)
			return moved;
		/* arcs on both paths do not change; the others need room */
		delta = s->paths[worst].flow;
		ctx->stamp++;
		for (i = 0; i < s->paths[worst].len; i++)
			ctx->mark_a[s->paths[worst].arcs[i]] = ctx->stamp;
		for (i = 0; i < n; i++) {
			int a = q[i];
			double room;

			if (ctx->mark_a[a] == ctx->stamp)
				continue;
			room = ucap * t->arcs[a].capacity - ctx->background[a] -
			       ctx->load[a];
			if (room < delta)
				delta = room;
		}
		if (delta <= 1e-9 * s->admitted)
			return moved;
		/* a new path must fit the tunnel, unless it replaces one */
		if (!have_q && s->npaths >= d->max_paths &&
		    delta < s->paths[worst].flow)
			return moved;
		mpte_shift_flow(ctx, di, worst, q, n, delta);
		moved = again = 1;
	}
	return moved;
}

/* Add sign x the flow of n paths to the loads. */
static void load_paths(struct mpte_ctx *ctx, const struct mpte_path *pp,
		       int n, double sign)
{
	int p, i;

	for (p = 0; p < n; p++)
		for (i = 0; i < pp[p].len; i++)
			ctx->load[pp[p].arcs[i]] += sign * pp[p].flow;
}

static struct mpte_path *paths_copy(const struct mpte_dstate *s)
{
	struct mpte_path *c = mpte_xcalloc(s->npaths ? s->npaths : 1,
					   sizeof(*c));
	int p;

	for (p = 0; p < s->npaths; p++) {
		c[p] = s->paths[p];
		c[p].arcs = mpte_xcalloc(c[p].len ? c[p].len : 1, sizeof(int));
		memcpy(c[p].arcs, s->paths[p].arcs, c[p].len * sizeof(int));
	}
	return c;
}

static void paths_free(struct mpte_path *pp, int n)
{
	int p;

	for (p = 0; p < n; p++)
		free(pp[p].arcs);
	free(pp);
}

/*
 * cheapen(), then make the demand's paths final at once: a move may close
 * a cycle in the union of its paths, whose cancelling decomposes the rest
 * into more paths than max_paths, and the cut then scales the kept ones
 * up past ucap (1.0 to 1.076 on a random instance, over capacity with
 * admission).  Such a demand is put back as it was: its paths were final
 * before, and the loads are exactly those it left.
 */
static int cheapen_final(struct mpte_ctx *ctx, int di, const int *q, int n,
			 const double *cost, double ucap, bool *loads_changed)
{
	const struct mpte_topology *t = ctx->t;
	struct mpte_dstate *s = &ctx->st[di];
	struct mpte_path *before = paths_copy(s);
	int nbefore = s->npaths, p, i, over = 0, touched = s->touched;

	if (!cheapen(ctx, di, q, n, cost, ucap)) {
		paths_free(before, nbefore);
		return 0;
	}
	/* even if put back below: the sums may differ in their last bits */
	*loads_changed = true;
	load_paths(ctx, s->paths, s->npaths, -1);
	mpte_finalise_paths(ctx, di);
	load_paths(ctx, s->paths, s->npaths, 1);
	for (p = 0; p < s->npaths && !over; p++)
		for (i = 0; i < s->paths[p].len && !over; i++) {
			int a = s->paths[p].arcs[i];

			over = ctx->background[a] + ctx->load[a] >
			       (ucap + 1e-9) * t->arcs[a].capacity;
		}
	if (!over && s->status == MPTE_ADMITTED) {
		paths_free(before, nbefore);
		return 1;
	}
	load_paths(ctx, s->paths, s->npaths, -1);
	paths_free(s->paths, s->npaths);
	s->paths = before;
	s->npaths = s->pcap = nbefore;
	load_paths(ctx, s->paths, s->npaths, 1);
	if (s->status != MPTE_ADMITTED) {
		/* finalising found no installable list left: not so before */
		s->status = MPTE_ADMITTED;
		s->touched = touched;
		free(s->reason);
		s->reason = NULL;
	}
	return 0;
}

/* A move may not use link a: failed, or no room left under ucap. */
static bool link_off(const struct mpte_ctx *ctx, int a, double ucap)
{
	const struct mpte_arc *arc = &ctx->t->arcs[a];

	return ctx->failed[a] ||
	       ucap * arc->capacity - ctx->background[a] - ctx->load[a] <=
	       1e-9 * arc->capacity;
}

/*
 * link_off() for every link, in one array, so that a search without
 * colours takes mpte_dijkstra()'s inline check rather than
 * mpte_arc_usable() on every arc.
 */
static void links_off(const struct mpte_ctx *ctx, double ucap,
		      unsigned char *off)
{
	int a;

	for (a = 0; a < ctx->t->narcs; a++)
		off[a] = link_off(ctx, a, ucap);
}

static bool eligible(const struct mpte_ctx *ctx, int di,
		     const unsigned char *which)
{
	return ctx->st[di].status == MPTE_ADMITTED && ctx->st[di].npaths &&
	       (!which || which[di]);
}

/*
 * The groups of a pass go in batches: each group's cheapest routes are
 * searched for the whole batch at once, side by side (par.c), under the
 * links off at the batch's start; then the batch's demands move, one
 * after the other, as before.  A group whose route lost its room to a
 * move earlier in the batch is searched again then; a route that a move
 * earlier in the batch made cheaper is seen in the next pass.  Eight a
 * batch: with 64, half of wan1000's groups lost a route in the first
 * pass and were searched twice (466 of 1,000; 189 with 8).  Batches of
 * one on small instances and in re-plans: each group searches after the
 * moves before it, exactly as it did without batches.
 */
#define CHEAP_BATCH		8
#define CHEAP_BATCH_MIN_GROUPS	512

struct cheap_route {
	int *arcs;
	int n;			/* -1: no route (not moving, or unreachable) */
};

struct cheap_batch {
	const struct mpte_ctx *ctx;
	const double *cost;
	const unsigned char *off;
	const unsigned char *which;
	int g0;
	bool *searched;			/* [i]: group g0 + i has routes */
	struct cheap_route **route;	/* [i][member] */
	int **buf;			/* per worker, nnodes + 1 */
};

/* A group's cheapest routes under the links off, into worker w's space. */
static void group_search(const struct mpte_ctx *ctx,
			 const struct mpte_group *gr, const double *cost,
			 const unsigned char *off, struct mpte_sp *sp)
{
	struct mpte_filter f;

	memset(&f, 0, sizeof(f));
	f.include_any = gr->include_any;
	f.include_all = gr->include_all;
	f.exclude_any = gr->exclude_any;
	f.failed = off;
	mpte_dijkstra(ctx->t, sp, gr->ingress, gr->ningress, cost, &f,
		      gr->targets, gr->ntargets);
}

/*
 * The group's eligible members' cheapest routes, searched in sp (buf is
 * scratch, nnodes + 1): one per member, n -1 for the others.  A demand's
 * eligibility changes only with its own move, so the routes stay its to
 * take while the group's earlier members move.
 */
static struct cheap_route *group_routes(const struct mpte_ctx *ctx,
					const struct mpte_group *gr,
					const unsigned char *which,
					const struct mpte_sp *sp, int *buf)
{
	struct cheap_route *r = mpte_xcalloc(gr->nmembers, sizeof(*r));
	int k, v;

	for (k = 0; k < gr->nmembers; k++) {
		int di = gr->members[k];

		r[k].n = -1;
		if (!eligible(ctx, di, which))
			continue;
		v = mpte_nearest_egress(sp, &ctx->ds->d[di]);
		if (v < 0)
			continue;
		r[k].n = mpte_sp_extract(ctx->t, sp, v, buf, ctx->t->nnodes + 1);
		if (r[k].n < 0)
			continue;
		r[k].arcs = mpte_xcalloc(r[k].n ? r[k].n : 1, sizeof(int));
		memcpy(r[k].arcs, buf, r[k].n * sizeof(int));
	}
	return r;
}

static void routes_free(struct cheap_route *r, int n)
{
	int k;

	for (k = 0; k < n; k++)
		free(r[k].arcs);
	free(r);
}

static void batch_group(void *arg, int i, int w)
{
	struct cheap_batch *b = arg;
	const struct mpte_ctx *ctx = b->ctx;
	const struct mpte_group *gr = &ctx->groups[b->g0 + i];
	int k;

	for (k = 0; k < gr->nmembers; k++)
		if (eligible(ctx, gr->members[k], b->which))
			break;
	b->searched[i] = k < gr->nmembers;
	if (!b->searched[i])
		return;
	group_search(ctx, gr, b->cost, b->off, &ctx->wsp[w]);
	b->route[i] = group_routes(ctx, gr, b->which, &ctx->wsp[w], b->buf[w]);
}

/* Every link of each route still has room under ucap. */
static bool routes_fit(const struct mpte_ctx *ctx, const struct mpte_group *gr,
		       const struct cheap_route *r, double ucap)
{
	int k, i;

	for (k = 0; k < gr->nmembers; k++)
		for (i = 0; i < r[k].n; i++)
			if (link_off(ctx, r[k].arcs[i], ucap))
				return false;
	return true;
}

/*
 * The IGP trees (segments.c) hold every node's distance from each head
 * by IGP metric.  Where every working arc's reverse works too with the
 * same metric, that is also the distance to the head; and where no
 * arc's cost here is below its IGP metric, it is a lower bound on the
 * cost to the head over any links, which makes it an A* heuristic that
 * is consistent: a demand's cheapest route is then searched towards its
 * egress alone, settling little more than the nodes near that route,
 * instead of a Dijkstra from its ingress out to the farthest egress of
 * its group (nearly all 10,000 nodes of the 10,000-node WAN, 30,000
 * times in three passes: two fifths of its run).
 */
static bool astar_usable(struct mpte_ctx *ctx, const double *cost,
			 double *slack)
{
	const struct mpte_topology *t = ctx->t;
	int a;

	if (!mpte_sid_trees_kept(mpte_sids(ctx)))
		return false;
	*slack = HUGE_VAL_D;
	for (a = 0; a < t->narcs; a++) {
		const struct mpte_arc *x = &t->arcs[a];

		if (ctx->failed[a])
			continue;
		if (cost[a] < x->igp_metric || x->reverse < 0 ||
		    ctx->failed[x->reverse] ||
		    t->arcs[x->reverse].igp_metric != x->igp_metric)
			return false;
		if (cost[a] - x->igp_metric < *slack)
			*slack = cost[a] - x->igp_metric;
	}
	return true;
}

/*
 * No route of demand di costs less than its IGP distance plus slack
 * (the least cost over IGP metric of an arc) a hop, over the fewest hops
 * it can take: a floor known before any search.  On a fat-tree, where
 * every path the optimiser keeps is a shortest one, it is every
 * demand's cost, and the pass searches none (A* among the fat-tree's
 * ties between its many shortest paths took 1.1 s CPU for its 10,000
 * demands, where the group searches had taken 0.4 s).
 */
static double floor_first(struct mpte_ctx *ctx, int di, double slack)
{
	const struct mpte_demand *d = &ctx->ds->d[di];
	int h = mpte_fewest_hops(ctx, di), i, j;
	double best = HUGE_VAL_D;

	for (j = 0; j < d->negress; j++) {
		const double *to = mpte_sid_tree(mpte_sids(ctx), d->egress[j],
						 NULL);

		for (i = 0; i < d->ningress; i++)
			if (to[d->ingress[i]] < best)
				best = to[d->ingress[i]];
	}
	if (best == HUGE_VAL_D)
		return -1;
	return best + slack * (h > 0 ? h : 0);
}

/* The heuristic: the IGP distance from v to the nearest egress. */
static double astar_h(const double *const *to, int n, int v)
{
	double h = HUGE_VAL_D;
	int i;

	for (i = 0; i < n; i++)
		if (to[i][v] < h)
			h = to[i][v];
	return h;
}

static bool is_egress(const struct mpte_demand *d, int v)
{
	int j;

	for (j = 0; j < d->negress; j++)
		if (d->egress[j] == v)
			return true;
	return false;
}

/*
 * Demand di's cheapest route (cost) over the links its colours allow
 * that have room under ucap now, into buf (nnodes + 1): its length, or
 * -1.  A*, in ctx->sp3, under astar_h() (astar_usable() said it may).
 * A node the IGP cannot take to an egress is not reached at all.
 * *full says whether a link was passed over for want of room: if not,
 * the route is as cheap as any with only failed links off.  The search
 * stops once no route left can cost less than limit: -1 then, and *lb
 * is what every route costs at least (with *full false, over any links
 * but the failed; HUGE_VAL_D if no route was left at all).
 */
static int astar_route(struct mpte_ctx *ctx, int di, const double *cost,
		       double ucap, double limit, int *buf, bool *full,
		       double *lb)
{
	const struct mpte_topology *t = ctx->t;
	const struct mpte_demand *d = &ctx->ds->d[di];
	struct mpte_sp *sp = &ctx->sp3;
	const double **to = mpte_xcalloc(d->negress, sizeof(*to));
	struct mpte_filter f;
	int i, found = -1;
	bool plain = !d->include_any && !d->include_all && !d->exclude_any;

	*full = false;
	for (i = 0; i < d->negress; i++)
		to[i] = mpte_sid_tree(mpte_sids(ctx), d->egress[i], NULL);
	mpte_filter_for(ctx, d, &f);
	mpte_sp_reset(sp);
	for (i = 0; i < d->ningress; i++) {
		int s = d->ingress[i];
		double h = astar_h(to, d->negress, s);

		if (h == HUGE_VAL_D || sp->dist[s] == 0)
			continue;
		mpte_sp_set(sp, s, 0, -1);
		mpte_sp_push(sp, s, h);
	}
	*lb = HUGE_VAL_D;
	while (sp->heap_len) {
		double key;
		int u = mpte_sp_pop(sp, &key), k;

		if (key >= limit) {
			/* no route left costs less than limit */
			*lb = key;
			break;
		}
		if (sp->done[u] & 1)
			continue;
		sp->done[u] |= 1;
		if (is_egress(d, u)) {
			found = u;
			break;
		}
		for (k = t->out_start[u]; k < t->out_start[u + 1]; k++) {
			int a = t->out_arc[k], v = t->out_to[k];
			double nd, h;

			if ((sp->done[v] & 1) ||
			    (plain ? ctx->failed[a] : !mpte_arc_usable(t, a, &f)))
				continue;
			if (link_off(ctx, a, ucap)) {
				*full = true;
				continue;
			}
			nd = sp->dist[u] + cost[a];
			if (!(nd < sp->dist[v]))
				continue;
			h = astar_h(to, d->negress, v);
			if (h == HUGE_VAL_D)
				continue;
			mpte_sp_set(sp, v, nd, a);
			mpte_sp_push(sp, v, nd + h);
		}
	}
	free(to);
	return found < 0 ? -1 :
	       mpte_sp_extract(t, sp, found, buf, t->nnodes + 1);
}

/* Move member di onto route q if every path rule allows it. */
static int member_move(struct mpte_ctx *ctx, int di, const int *q, int n,
		       const double *cost, double ucap, bool *stale)
{
	const struct mpte_demand *d = &ctx->ds->d[di];

	if (n > mpte_hop_limit(ctx, di) ||
	    (d->max_delay > 0 &&
	     mpte_path_delay(ctx->t, q, n) > d->max_delay + MPTE_EPS) ||
	    mpte_segments_over(mpte_sids(ctx), q, n, mpte_max_sids(ctx, di)))
		return 0;
	return cheapen_final(ctx, di, q, n, cost, ucap, stale);
}

static int member_move(struct mpte_ctx *ctx, int di, const int *q, int n,
		       const double *cost, double ucap, bool *stale);

/* The dearest of demand di's paths that carry flow. */
static double dearest(const struct mpte_ctx *ctx, int di, const double *cost)
{
	const struct mpte_dstate *s = &ctx->st[di];
	double w = 0;
	int p;

	for (p = 0; p < s->npaths; p++)
		if (s->paths[p].flow > 0) {
			double c = cost_of(cost, s->paths[p].arcs,
					   s->paths[p].len);

			if (c > w)
				w = c;
		}
	return w;
}

/*
 * cheapen() moves flow off a path only onto a route cheaper than it by
 * its margin: with w the dearest path's cost, a route costing this or
 * more moves nothing, and the search can stop there (the margin on top
 * keeps the rounding in the heuristic's sums from cutting a route that
 * would move).  Without that bound, a search for a demand whose cheaper
 * routes are all full went on to the cheapest route of all over the
 * links with room, dearer than anything it has, to no use.
 */
static double useful_below(double w)
{
	return (w - 1e-12) / (1 + 1e-9) * (1 + 1e-12);
}

/*
 * Tests only (ctx->check_cheap): a search cut at its bound, searched
 * again without: the route it finds must move nothing by cheapen()'s
 * rule (w the cost of the demand's dearest path), nor cost less than the
 * bound lb the cut gave; nor, if the cut met no full link, may a search
 * with every link given room find one below lb.
 */
static void check_cut(struct mpte_ctx *ctx, int di, const double *cost,
		      double ucap, double w, double lb, bool full, int *buf)
{
	double c, nolb;
	bool nofull;
	int n;

	ctx->cheap_cut++;
	n = astar_route(ctx, di, cost, ucap, HUGE_VAL_D, buf, &nofull, &nolb);
	c = n < 0 ? HUGE_VAL_D : cost_of(cost, buf, n);
	if (w > c * (1 + 1e-9) + 1e-12 || c < lb * (1 - 1e-12))
		ctx->cheap_cut_wrong++;
	if (!full) {
		n = astar_route(ctx, di, cost, HUGE_VAL_D, HUGE_VAL_D, buf,
				&nofull, &nolb);
		if (n >= 0 && cost_of(cost, buf, n) < lb * (1 - 1e-12))
			ctx->cheap_cut_wrong++;
	}
}

/*
 * A pass with A*: each eligible member in group order, its route
 * searched at its turn, under the links full then (no batch, no route
 * a move before it made stale).  Returns how many members moved.
 *
 * floor[di] (-1: not known) is the cost of di's cheapest route with
 * only failed links off, what a search that met no full link found, or
 * first a lower bound on it (floor_first()).  A member none of whose
 * paths is dearer cannot move (cheapen() moves
 * flow only off paths dearer than the route found, which costs no less)
 * and is not searched: the same moves, without the searches that cost
 * most, around full links, for nothing (in the later passes most
 * members sit on such a route, and the cheap pass fills it).
 */
static int astar_pass(struct mpte_ctx *ctx, const unsigned char *which,
		      const double *cost, double ucap, int *buf, bool *stale,
		      double *floor, double slack, int *searched)
{
	int g, k, moved = 0;

	for (g = 0; g < ctx->ngroups; g++) {
		const struct mpte_group *gr = &ctx->groups[g];

		for (k = 0; k < gr->nmembers; k++) {
			int di = gr->members[k], n;
			double w, lb;
			bool full;

			if (!eligible(ctx, di, which))
				continue;
			if (floor[di] < 0)
				floor[di] = floor_first(ctx, di, slack);
			w = dearest(ctx, di, cost);
			if (floor[di] >= 0 && w <= floor[di])
				continue;
			n = astar_route(ctx, di, cost, ucap, ctx->cheap_unbounded ?
					HUGE_VAL_D : useful_below(w), buf,
					&full, &lb);
			(*searched)++;
			if (n < 0 && ctx->check_cheap && lb < HUGE_VAL_D)
				check_cut(ctx, di, cost, ucap, w, lb, full,
					  buf);
			if (n < 0) {
				/* no useful route, and none at all below lb */
				if (!full && lb > floor[di])
					floor[di] = lb;
				continue;
			}
			if (!full)
				floor[di] = cost_of(cost, buf, n);
			moved += member_move(ctx, di, buf, n, cost, ucap, stale);
		}
	}
	return moved;
}

void mpte_prefer_cheap(struct mpte_ctx *ctx, const unsigned char *which)
{
	double *floor = NULL, slack = 0;
	bool astar;
	const struct mpte_topology *t = ctx->t;
	struct cheap_batch b = { .ctx = ctx, .which = which };
	int *buf, a, k, w, pass, nw, batch;
	double *cost, mean = 0, ucap;
	unsigned char *off;
	bool stale = true;

	ucap = mpte_current_max_util(ctx, NULL);
	if (ucap <= 0 || !ctx->ngroups)
		return;
	cost = mpte_xcalloc(t->narcs, sizeof(double));
	off = mpte_xcalloc(t->narcs, 1);
	buf = mpte_xcalloc(t->nnodes + 1, sizeof(int));
	for (a = 0; a < t->narcs; a++)
		mean += t->arcs[a].te_metric;
	mean = t->narcs ? mean / t->narcs : 0;
	for (a = 0; a < t->narcs; a++)
		cost[a] = t->arcs[a].te_metric + 1e-3 * (mean > 0 ? mean : 1);

	/* the batch's size may not depend on the threads (the routing
	 * would); a re-plan takes batches of one */
	nw = mpte_par_width(ctx);
	batch = ctx->cold && ctx->ngroups >= CHEAP_BATCH_MIN_GROUPS ?
		CHEAP_BATCH : 1;
	if (batch == 1)
		nw = 1;
	b.cost = cost;
	b.off = off;
	b.searched = mpte_xcalloc(batch, sizeof(*b.searched));
	b.route = mpte_xcalloc(batch, sizeof(*b.route));
	b.buf = mpte_xcalloc(nw, sizeof(*b.buf));
	for (w = 0; w < nw; w++)
		b.buf[w] = mpte_xcalloc(t->nnodes + 1, sizeof(int));
	/* where batches would be made: smaller instances and re-plans
	 * search as they always did */
	astar = batch > 1 && astar_usable(ctx, cost, &slack);
	if (astar) {
		floor = mpte_xcalloc(ctx->ds->n, sizeof(double));
		for (k = 0; k < ctx->ds->n; k++)
			floor[k] = -1;
	}

	for (pass = 0; pass < CHEAP_PASSES; pass++) {
		double t0 = mpte_now();
		int moved = 0, again = 0;

		if (astar)
			moved = astar_pass(ctx, which, cost, ucap, buf, &stale,
					   floor, slack, &again);
		for (b.g0 = 0; !astar && b.g0 < ctx->ngroups; b.g0 += batch) {
			int nb = ctx->ngroups - b.g0 < batch ?
				 ctx->ngroups - b.g0 : batch, i;

			/* links with no room left cannot take more; only a
			 * move changes which (10,000 groups x 60,000 links
			 * on the 10,000-node WAN, were it done every time) */
			if (stale)
				links_off(ctx, ucap, off);
			stale = false;
			mpte_par_for(nb, nw, batch_group, &b);
			for (i = 0; i < nb; i++) {
				const struct mpte_group *gr = &ctx->groups[b.g0 + i];
				struct cheap_route *r = b.route[i];

				if (!b.searched[i])
					continue;
				if (!routes_fit(ctx, gr, r, ucap)) {
					/* searched again, after the moves */
					again++;
					if (stale)
						links_off(ctx, ucap, off);
					stale = false;
					group_search(ctx, gr, cost, off, &ctx->sp3);
					routes_free(r, gr->nmembers);
					r = group_routes(ctx, gr, which, &ctx->sp3,
							 buf);
				}
				for (k = 0; k < gr->nmembers; k++)
					if (r[k].n >= 0)
						moved += member_move(ctx,
							gr->members[k], r[k].arcs,
							r[k].n, cost, ucap, &stale);
				routes_free(r, gr->nmembers);
				b.route[i] = NULL;
			}
		}
		if (getenv("MPTE_TRACE"))
			fprintf(stderr, "mpte: cheap pass %d moved %d, %d %s, in %.2f s\n",
				pass, moved, again, astar ?
				"demands searched by A*" : "groups searched again",
				mpte_now() - t0);
		if (!moved)
			break;
	}
	for (w = 0; w < nw; w++)
		free(b.buf[w]);
	free(b.buf);
	free(b.route);
	free(b.searched);
	free(floor);
	free(cost);
	free(off);
	free(buf);
}
