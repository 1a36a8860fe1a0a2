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
			 const double *cost, double ucap)
{
	const struct mpte_topology *t = ctx->t;
	struct mpte_dstate *s = &ctx->st[di];
	struct mpte_path *before = paths_copy(s);
	int nbefore = s->npaths, p, i, over = 0, touched = s->touched;

	if (!cheapen(ctx, di, q, n, cost, ucap)) {
		paths_free(before, nbefore);
		return 0;
	}
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

void mpte_prefer_cheap(struct mpte_ctx *ctx, const unsigned char *which)
{
	const struct mpte_topology *t = ctx->t;
	double *cost, mean = 0, ucap;
	unsigned char *full;
	int *buf, a, g, k, pass;

	ucap = mpte_current_max_util(ctx, NULL);
	if (ucap <= 0)
		return;
	cost = mpte_xcalloc(t->narcs, sizeof(double));
	full = mpte_xcalloc(t->narcs, 1);
	buf = mpte_xcalloc(t->nnodes + 1, sizeof(int));
	for (a = 0; a < t->narcs; a++)
		mean += t->arcs[a].te_metric;
	mean = t->narcs ? mean / t->narcs : 0;
	for (a = 0; a < t->narcs; a++)
		cost[a] = t->arcs[a].te_metric + 1e-3 * (mean > 0 ? mean : 1);

	for (pass = 0; pass < CHEAP_PASSES; pass++) {
		int moved = 0;

		for (g = 0; g < ctx->ngroups; g++) {
			const struct mpte_group *gr = &ctx->groups[g];
			struct mpte_filter f;

			for (k = 0; k < gr->nmembers; k++) {
				int di = gr->members[k];

				if (ctx->st[di].status == MPTE_ADMITTED &&
				    ctx->st[di].npaths && (!which || which[di]))
					break;
			}
			if (k == gr->nmembers)
				continue;
			/* links with no room left cannot take more */
			for (a = 0; a < t->narcs; a++)
				full[a] = ucap * t->arcs[a].capacity -
					  ctx->background[a] - ctx->load[a] <=
					  1e-9 * t->arcs[a].capacity;
			memset(&f, 0, sizeof(f));
			f.include_any = gr->include_any;
			f.include_all = gr->include_all;
			f.exclude_any = gr->exclude_any;
			f.failed = ctx->failed;
			f.arc_off = full;
			mpte_dijkstra(t, &ctx->sp3, gr->ingress, gr->ningress, cost,
				      &f, gr->targets, gr->ntargets);
			for (k = 0; k < gr->nmembers; k++) {
				int di = gr->members[k], v, n, j;
				const struct mpte_demand *d = &ctx->ds->d[di];

				if (ctx->st[di].status != MPTE_ADMITTED ||
				    !ctx->st[di].npaths || (which && !which[di]))
					continue;
				v = -1;
				for (j = 0; j < d->negress; j++)
					if (ctx->sp3.dist[d->egress[j]] != HUGE_VAL_D &&
					    (v < 0 || ctx->sp3.dist[d->egress[j]] <
						      ctx->sp3.dist[v]))
						v = d->egress[j];
				if (v < 0)
					continue;
				n = mpte_sp_extract(t, &ctx->sp3, v, buf, t->nnodes + 1);
				if (n < 0 || n > mpte_hop_limit(ctx, di) ||
				    (d->max_delay > 0 &&
				     mpte_path_delay(t, buf, n) > d->max_delay + MPTE_EPS) ||
				    mpte_segments_over(mpte_sids(ctx), buf, n,
						       mpte_max_sids(ctx, di)))
					continue;
				moved |= cheapen_final(ctx, di, buf, n, cost, ucap);
			}
		}
		if (getenv("MPTE_TRACE"))
			fprintf(stderr, "mpte: cheap pass %d moved %d\n", pass, moved);
		if (!moved)
			break;
	}
	free(cost);
	free(full);
	free(buf);
}
