// SPDX-License-Identifier: GPL-2.0
/*
 * hops.c - how long a demand's paths may be.
 *
 * Min-max utilisation alone does not care how long a path is: on a meshed
 * WAN it happily sends a demand over 20 hops where 2 would do, when that
 * lowers some other link's load by a hair.  RoCE latency and the SID budget
 * do care, so every path of a demand is bounded in hops:
 *
 *	limit = min(max_hops, max(ceil(max_stretch * h), h + 6))
 *
 * where h is the fewest hops from the demand's ingresses to its egresses
 * over the links its colours allow that still work.  max_stretch defaults
 * to 2 (MPTE_DEFAULT_MAX_STRETCH); the "+ 6" keeps short demands from
 * being pinned to their shortest paths (below).
 * A demand's own value beats --max-stretch, which beats the topology's.
 *
 * h is found per demand group (one breadth-first search serves every
 * member) and cached until a link fails.  When the shortest path under the
 * optimiser's lengths is over the limit, a demand without a route takes
 * its group's fewest-hop path (solve.c), one with routes re-balances among
 * them; searches for a single demand (delay bounds) add a cost per hop,
 * and as a last resort a hop-bounded Bellman-Ford finds the shortest path
 * within the limit: O(limit x links).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpte_int.h"

/* Short demands may always detour this many hops more than the fewest:
 * a thin one-hop link can need a detour of several hops to reach the
 * LP's optimum.  Of 400 random instances (test_random, MPTE_RANDOM_N=400)
 * 13 ended over 1.01 x the LP with + 3, none with + 6. */
#define MPTE_HOP_SLACK	6

/* The stretch that applies to demand d: 0 for none. */
double mpte_max_stretch(const struct mpte_ctx *ctx, int di)
{
	const struct mpte_demand *d = &ctx->ds->d[di];

	if (d->max_stretch >= 0)
		return d->max_stretch;
	if (ctx->opt.max_stretch > 0)
		return ctx->opt.max_stretch;
	if (ctx->opt.max_stretch < 0)
		return 0;
	return ctx->t->max_stretch;
}

static int limit_for(const struct mpte_ctx *ctx, int di, int h)
{
	const struct mpte_demand *d = &ctx->ds->d[di];
	int hops = d->max_hops > 0 ? d->max_hops : ctx->t->max_hops;
	double st = mpte_max_stretch(ctx, di);
	long lim = hops > 0 ? hops : INT_MAX;

	if (st > 0 && h > 0) {
		long s = (long)ceil(st * h - 1e-9);

		if (s < h + MPTE_HOP_SLACK)
			s = h + MPTE_HOP_SLACK;
		if (s < lim)
			lim = s;
	}
	return (int)lim;
}

/* Fill fewest hops and limits for every member of group gr, searching
 * in sp. */
static void group_hops(struct mpte_ctx *ctx, const struct mpte_group *gr,
		       struct mpte_sp *sp)
{
	struct mpte_filter f;
	int k, j;

	memset(&f, 0, sizeof(f));
	f.include_any = gr->include_any;
	f.include_all = gr->include_all;
	f.exclude_any = gr->exclude_any;
	f.failed = ctx->failed;
	mpte_bfs(ctx->t, sp, gr->ingress, gr->ningress, &f,
		 gr->targets, gr->ntargets);
	for (k = 0; k < gr->nmembers; k++) {
		int m = gr->members[k], h = -1;
		const struct mpte_demand *d = &ctx->ds->d[m];

		for (j = 0; j < d->negress; j++) {
			double x = sp->dist[d->egress[j]];

			if (x != HUGE_VAL_D && (h < 0 || x < h))
				h = (int)(x + 0.5);
		}
		ctx->fewest_hops[m] = h;
		ctx->hop_limit[m] = limit_for(ctx, m, h);
	}
}

/* sp2: callers compute the limit before their own search in sp2 */
static void compute_group(struct mpte_ctx *ctx, int di)
{
	group_hops(ctx, &ctx->groups[ctx->st[di].group], &ctx->sp2);
}

static void prefill_group(void *arg, int g, int w)
{
	struct mpte_ctx *ctx = arg;

	group_hops(ctx, &ctx->groups[g], &ctx->wsp[w]);
}

/*
 * Every group's hop counts, searched side by side (par.c): a cold solve
 * asks for all of them at once, in its check of which demands can be
 * routed (one search a group: 10,000 on the 10,000-node WAN).  Each
 * group writes its own members' counts only, and a count is the same
 * whoever searched, so the result is the same on any number of threads.
 * Not below the size where threads pay: those are searched on demand,
 * as before.
 */
void mpte_hop_limits_prefill(struct mpte_ctx *ctx)
{
	if ((double)ctx->ngroups * ctx->t->nnodes < ctx->par_min_work)
		return;
	mpte_par_for(ctx->ngroups, mpte_par_width(ctx), prefill_group, ctx);
}

int mpte_hop_limit(struct mpte_ctx *ctx, int di)
{
	if (ctx->ignore_hops)
		return INT_MAX;
	if (!ctx->hop_limit[di])
		compute_group(ctx, di);
	return ctx->hop_limit[di];
}

int mpte_fewest_hops(struct mpte_ctx *ctx, int di)
{
	if (!ctx->hop_limit[di])
		compute_group(ctx, di);
	return ctx->fewest_hops[di];
}

void mpte_hop_limits_invalidate(struct mpte_ctx *ctx)
{
	memset(ctx->hop_limit, 0, ctx->ds->n * sizeof(int));
}

/*
 * The shortest path under lengths w with at most limit arcs, from the
 * demand's ingresses to its nearest egress: Bellman-Ford by rounds, round k
 * holding the best walk of at most k arcs.  Lengths are never negative and
 * only strict improvements are kept, so the walk found is a simple path.
 * Returns its length in arcs (into arcs, at most max), or -1.
 */
int mpte_hop_bounded_path(struct mpte_ctx *ctx, int di, const double *w,
			  const struct mpte_filter *f, int limit, int *arcs,
			  int max, double *dist)
{
	const struct mpte_topology *t = ctx->t;
	const struct mpte_demand *d = &ctx->ds->d[di];
	int n = t->nnodes, k, a, j, v, best = -1, len = 0, *pred;
	double *cur, *nxt;

	if (limit > n)
		limit = n;
	cur = mpte_xcalloc(n, sizeof(double));
	nxt = mpte_xcalloc(n, sizeof(double));
	pred = mpte_xcalloc((size_t)(limit + 1) * n, sizeof(int));
	for (v = 0; v < n; v++)
		cur[v] = HUGE_VAL_D;
	for (j = 0; j < d->ningress; j++)
		if (!(f->node_off && f->node_off[d->ingress[j]]))
			cur[d->ingress[j]] = 0;
	for (k = 1; k <= limit; k++) {
		int *pk = pred + (size_t)k * n, changed = 0;

		memcpy(nxt, cur, n * sizeof(double));
		for (v = 0; v < n; v++)
			pk[v] = -2;		/* as in round k - 1 */
		for (a = 0; a < t->narcs; a++) {
			int u = t->arcs[a].from, x = t->arcs[a].to;
			double nd;

			if (cur[u] == HUGE_VAL_D || !mpte_arc_usable(t, a, f))
				continue;
			nd = cur[u] + (w ? w[a] : t->arcs[a].igp_metric);
			if (nd < nxt[x]) {
				nxt[x] = nd;
				pk[x] = a;
				changed = 1;
			}
		}
		memcpy(cur, nxt, n * sizeof(double));
		if (!changed)
			break;
	}
	if (k > limit)
		k = limit;
	for (j = 0; j < d->negress; j++) {
		v = d->egress[j];
		if (cur[v] != HUGE_VAL_D && (best < 0 || cur[v] < cur[best]))
			best = v;
	}
	if (best >= 0) {
		if (dist)
			*dist = cur[best];
		/* walk back through the rounds */
		for (v = best; k > 0; k--) {
			int pa = pred[(size_t)k * n + v];

			if (pa == -2)
				continue;
			if (len == max) {
				len = -1;
				break;
			}
			arcs[len++] = pa;
			v = t->arcs[pa].from;
		}
		for (j = 0; len > 0 && j < len / 2; j++) {
			int x = arcs[j];

			arcs[j] = arcs[len - 1 - j];
			arcs[len - 1 - j] = x;
		}
	} else {
		len = -1;
	}
	free(cur);
	free(nxt);
	free(pred);
	return len;
}
