// SPDX-License-Identifier: GPL-2.0
/*
 * ecmp.c - the naive baseline: every demand follows IGP shortest paths and
 * each router splits equally over its shortest next hops (what a fabric
 * does without TE).  Used to show what the optimiser buys.  Colours and
 * delay bounds are ignored, as IGP routing ignores them; a demand with
 * several ingresses or egresses uses its first of each.
 */
#include <stdlib.h>
#include <string.h>

#include "mpte_int.h"

static const double *order_dist;

static int cmp_desc(const void *x, const void *y)
{
	double a = order_dist[*(const int *)x], b = order_dist[*(const int *)y];

	return a < b ? 1 : a > b ? -1 : 0;
}

double mpte_ecmp(const struct mpte_ctx *ctx)
{
	const struct mpte_topology *t = ctx->t;
	struct mpte_topology rev;
	struct mpte_sp sp;
	struct mpte_filter f;
	double *load, *vol, best = 0;
	int *order, *dst_seen, a, di, i, k;

	/* the reversed graph gives distances *to* an egress in one run */
	memset(&rev, 0, sizeof(rev));
	rev.nnodes = t->nnodes;
	rev.narcs = t->narcs;
	rev.arcs = mpte_xcalloc(t->narcs, sizeof(*rev.arcs));
	for (a = 0; a < t->narcs; a++) {
		rev.arcs[a] = t->arcs[a];
		rev.arcs[a].from = t->arcs[a].to;
		rev.arcs[a].to = t->arcs[a].from;
	}
	mpte_topology_csr(&rev);

	mpte_sp_init(&sp, t->nnodes);
	memset(&f, 0, sizeof(f));
	f.failed = ctx->failed;
	load = mpte_xcalloc(t->narcs, sizeof(double));
	vol = mpte_xcalloc(t->nnodes, sizeof(double));
	order = mpte_xcalloc(t->nnodes, sizeof(int));
	dst_seen = mpte_xcalloc(t->nnodes, sizeof(int));

	for (di = 0; di < ctx->ds->n; di++) {
		int dst = ctx->ds->d[di].egress[0], n = 0;

		if (dst_seen[dst])
			continue;
		dst_seen[dst] = 1;
		mpte_dijkstra(&rev, &sp, &dst, 1, NULL, &f, NULL, 0);
		memset(vol, 0, t->nnodes * sizeof(double));
		for (k = di; k < ctx->ds->n; k++)
			if (ctx->ds->d[k].egress[0] == dst)
				vol[ctx->ds->d[k].ingress[0]] +=
					ctx->st[k].requested;
		for (i = 0; i < t->nnodes; i++)
			if (sp.dist[i] != HUGE_VAL_D && i != dst)
				order[n++] = i;
		order_dist = sp.dist;
		qsort(order, n, sizeof(int), cmp_desc);
		for (i = 0; i < n; i++) {
			int u = order[i], nh = 0;

			if (vol[u] <= 0)
				continue;
			for (k = t->out_start[u]; k < t->out_start[u + 1]; k++) {
				int e = t->out_arc[k], v = t->arcs[e].to;

				if (mpte_arc_usable(t, e, &f) &&
				    fabs(sp.dist[v] + t->arcs[e].igp_metric -
					 sp.dist[u]) <= 1e-9 * (1 + sp.dist[u]))
					nh++;
			}
			for (k = t->out_start[u]; nh && k < t->out_start[u + 1];
			     k++) {
				int e = t->out_arc[k], v = t->arcs[e].to;

				if (mpte_arc_usable(t, e, &f) &&
				    fabs(sp.dist[v] + t->arcs[e].igp_metric -
					 sp.dist[u]) <= 1e-9 * (1 + sp.dist[u])) {
					load[e] += vol[u] / nh;
					vol[v] += vol[u] / nh;
				}
			}
		}
	}
	for (a = 0; a < t->narcs; a++) {
		double u;

		if (ctx->failed[a])
			continue;
		u = (ctx->background[a] + load[a]) / t->arcs[a].capacity;
		if (u > best)
			best = u;
	}
	mpte_sp_fini(&sp);
	free(rev.arcs);
	free(rev.out_start);
	free(rev.out_arc);
	free(rev.out_to);
	free(load);
	free(vol);
	free(order);
	free(dst_seen);
	return best;
}
