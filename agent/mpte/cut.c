// SPDX-License-Identifier: GPL-2.0
/*
 * cut.c - a second certified lower bound: the cut around one node.
 *
 * Everything a demand sends must leave its ingress and enter its egress,
 * so for any node v
 *	U >= (fixed load on v's in-arcs + what must end at v) / in-capacity
 * and the same for out-arcs and what must start at v.  The dual bound from
 * the optimiser's lengths (solve.c) reaches this only as alpha grows; on a
 * fat-tree, where the busiest ToR's downlinks are the optimum, the cut is
 * exact from the start, so the optimiser can stop after a few sweeps
 * instead of thirty.  One pass over the arcs and the active paths; or,
 * with every admitted demand movable (bound.c: a bound on the whole, after
 * an event), over the arcs and the demands, the reservations fixed.
 */
#include <stdlib.h>

#include "mpte_int.h"

/* v in the set? */
static int in_set(const int *set, int n, int v)
{
	int i;

	for (i = 0; i < n; i++)
		if (set[i] == v)
			return 1;
	return 0;
}

/* The reservations alone: what stays when every admitted demand moves. */
static double *reserved_load(const struct mpte_ctx *ctx)
{
	double *fixed = mpte_xcalloc(ctx->t->narcs, sizeof(double));
	int a, q;

	for (a = 0; a < ctx->t->narcs; a++)
		if (!ctx->failed[a])
			for (q = 0; q < MPTE_PRIORITIES; q++)
				fixed[a] += ctx->bg_prio[a * MPTE_PRIORITIES + q];
	return fixed;
}

double mpte_cut_bound(const struct mpte_ctx *ctx, bool admitted)
{
	const struct mpte_topology *t = ctx->t;
	int nn = t->nnodes, a, di, v;
	/* per node: [0] in-capacity, [1] fixed in, [2] must end here,
	 * [3] out-capacity, [4] fixed out, [5] must start here */
	double *n = mpte_xcalloc((size_t)nn * 6, sizeof(double));
	/* what the movable demands carry now is theirs to move, not fixed */
	double *fixed = admitted ? reserved_load(ctx) : mpte_fixed_load(ctx, NULL);
	double best = 0;

	for (di = 0; di < ctx->ds->n; di++) {
		const struct mpte_dstate *s = &ctx->st[di];
		const struct mpte_demand *d = &ctx->ds->d[di];

		if (admitted ? s->status != MPTE_ADMITTED : !s->active)
			continue;
		if (d->negress == 1 &&
		    !in_set(d->ingress, d->ningress, d->egress[0]))
			n[d->egress[0] * 6 + 2] += s->admitted;
		if (d->ningress == 1 &&
		    !in_set(d->egress, d->negress, d->ingress[0]))
			n[d->ingress[0] * 6 + 5] += s->admitted;
	}
	for (a = 0; a < t->narcs; a++) {
		const struct mpte_arc *arc = &t->arcs[a];
		/* rounding can leave a hair below zero */
		double f = fixed[a] > 0 ? fixed[a] : 0;

		if (ctx->failed[a])
			continue;
		/* an arc alone: what is fixed on it stays (after a failure
		 * the busiest link is often one the moved demands never
		 * touch, and this ends the re-plan after its first sweep) */
		if (f / arc->capacity > best)
			best = f / arc->capacity;
		n[arc->to * 6 + 0] += arc->capacity;
		n[arc->to * 6 + 1] += f;
		n[arc->from * 6 + 3] += arc->capacity;
		n[arc->from * 6 + 4] += f;
	}
	for (v = 0; v < nn; v++) {
		const double *x = &n[v * 6];

		/* no capacity at all: the demand cannot be routed, no bound */
		if (x[2] > 0 && x[0] > 0 && (x[1] + x[2]) / x[0] > best)
			best = (x[1] + x[2]) / x[0];
		if (x[5] > 0 && x[3] > 0 && (x[4] + x[5]) / x[3] > best)
			best = (x[4] + x[5]) / x[3];
	}
	free(n);
	free(fixed);
	return best;
}
