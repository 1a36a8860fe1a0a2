// SPDX-License-Identifier: GPL-2.0
/*
 * bound.c - the lower bound reported after a solve or an event, kept a
 * bound.
 *
 * The optimiser's bound (solve.c: the dual from its lengths, and the node
 * cuts) holds for the state it was taken in: these admitted demands at
 * these bandwidths, these reservations, these arcs up.  An event that only
 * adds demand or takes capacity away (a failure, a demand added or grown)
 * leaves it a bound; one that takes demand away (a demand withdrawn,
 * shrunk or pushed out, a reservation preempted) or brings capacity back
 * (a recovery) may not: abilene with its three largest demands withdrawn
 * reported the cold solve's 60.35 against a max utilisation of 42.65.
 *
 * So each bound is kept with that state (struct mpte_lbrec) and, when it
 * came from the dual, with the dual itself: the lengths y and each
 * demand's distance under them.  For any y >= 0,
 *	(sum_e y_e reserved_e + sum_k bw_k dist_y(k)) / sum_e y_e c_e
 * is a bound (LP duality, as in solve.c), so the dual is evaluated again
 * for the demands and reservations as they are now, over the arcs up now:
 * a demand withdrawn drops out of the sum.  The distances stay those of
 * the graph then; with arcs failed since, they can only have grown, so
 * the old ones still make a bound, but not with an arc back that was down
 * then (it may shorten them).  With the node cuts for every admitted
 * demand beside it (cut.c), that is one pass over the arcs and demands: no
 * shortest-path tree, nothing that makes a re-plan slower.
 */
#include <stdlib.h>
#include <string.h>

#include "mpte_int.h"

static double bg_now(const struct mpte_ctx *ctx, int a)
{
	double b = 0;
	int q;

	if (ctx->failed[a])
		return 0;
	for (q = 0; q < MPTE_PRIORITIES; q++)
		b += ctx->bg_prio[a * MPTE_PRIORITIES + q];
	return b;
}

static double adm_now(const struct mpte_ctx *ctx, int di)
{
	const struct mpte_dstate *s = &ctx->st[di];

	return s->status == MPTE_ADMITTED ? s->admitted : 0;
}

void mpte_lbrec_set(struct mpte_ctx *ctx, struct mpte_lbrec *r, double value,
		    const double *y, const double *dist, double dual)
{
	int n = ctx->ds->n, na = ctx->t->narcs, di, a;

	if (!r->adm) {
		r->adm = mpte_xcalloc(n ? n : 1, sizeof(double));
		r->dist = mpte_xcalloc(n ? n : 1, sizeof(double));
		r->bg = mpte_xcalloc(na ? na : 1, sizeof(double));
		r->y = mpte_xcalloc(na ? na : 1, sizeof(double));
		r->failed = mpte_xcalloc(na ? na : 1, 1);
	}
	r->value = value;
	for (di = 0; di < n; di++)
		r->adm[di] = adm_now(ctx, di);
	for (a = 0; a < na; a++)
		r->bg[a] = bg_now(ctx, a);
	memcpy(r->failed, ctx->failed, na);
	r->dual = y && dist ? dual : 0;
	if (r->dual > 0) {
		memcpy(r->y, y, na * sizeof(double));
		memcpy(r->dist, dist, n * sizeof(double));
	}
}

void mpte_lbrec_copy(struct mpte_ctx *ctx, struct mpte_lbrec *to,
		     const struct mpte_lbrec *from)
{
	int n = ctx->ds->n, na = ctx->t->narcs;

	if (!from->adm) {
		to->value = to->dual = 0;
		return;
	}
	mpte_lbrec_set(ctx, to, 0, NULL, NULL, 0);
	to->value = from->value;
	to->dual = from->dual;
	memcpy(to->adm, from->adm, n * sizeof(double));
	memcpy(to->bg, from->bg, na * sizeof(double));
	memcpy(to->failed, from->failed, na);
	memcpy(to->y, from->y, na * sizeof(double));
	memcpy(to->dist, from->dist, n * sizeof(double));
}

void mpte_lbrec_free(struct mpte_lbrec *r)
{
	free(r->adm);
	free(r->dist);
	free(r->bg);
	free(r->y);
	free(r->failed);
	memset(r, 0, sizeof(*r));
}

/*
 * Nothing the bound was for has shrunk: it holds as it is.  An arc failed
 * since takes its reservation with it, but the best routing now, laid on
 * the network then, is at most at the larger of its own max and that
 * reservation's utilisation: below the bound, the bound holds.
 */
static bool still_holds(const struct mpte_ctx *ctx, const struct mpte_lbrec *r)
{
	const struct mpte_topology *t = ctx->t;
	int di, a;

	if (r->value <= 0)
		return false;
	for (a = 0; a < t->narcs; a++) {
		if (r->failed[a] && !ctx->failed[a])
			return false;		/* capacity back */
		if (ctx->failed[a] && !r->failed[a]) {
			if (!(r->bg[a] < r->value * t->arcs[a].capacity))
				return false;
		} else if (bg_now(ctx, a) < r->bg[a]) {
			return false;		/* a reservation preempted */
		}
	}
	for (di = 0; di < ctx->ds->n; di++)
		if (adm_now(ctx, di) < r->adm[di])
			return false;
	return true;
}

/* The bound's dual for the demands and reservations as they are now. */
static double dual_now(const struct mpte_ctx *ctx, const struct mpte_lbrec *r)
{
	const struct mpte_topology *t = ctx->t;
	double s = 0, num = 0;
	int di, a;

	if (r->dual <= 0)
		return 0;
	for (a = 0; a < t->narcs; a++) {
		if (ctx->failed[a])
			continue;
		if (r->failed[a])
			return 0;	/* back since: may shorten the paths */
		s += r->y[a] * t->arcs[a].capacity;
		num += r->y[a] * bg_now(ctx, a);
	}
	for (di = 0; di < ctx->ds->n; di++)
		num += adm_now(ctx, di) * r->dist[di];
	return s > 0 ? num / s : 0;
}

/*
 * A lower bound on the max utilisation of the admitted demands as they
 * are now: the best kept bound that still holds, else the best of the
 * kept duals evaluated now and the node cuts.  Only the cold solve's if
 * !with_last.
 */
double mpte_valid_bound(const struct mpte_ctx *ctx, bool with_last)
{
	const struct mpte_lbrec *r[2] = { &ctx->lb_cold, &ctx->lb_last };
	int k, nr = with_last ? 2 : 1;
	double best = 0, b;
	bool held = false;

	for (k = 0; k < nr; k++)
		if (still_holds(ctx, r[k])) {
			held = true;
			if (r[k]->value > best)
				best = r[k]->value;
		}
	if (held)
		return best;
	for (k = 0; k < nr; k++) {
		b = dual_now(ctx, r[k]);
		if (b > best)
			best = b;
	}
	b = mpte_cut_bound(ctx, true);	/* every admitted demand movable */
	return b > best ? b : best;
}

void mpte_bound_refresh(struct mpte_ctx *ctx)
{
	ctx->lower_bound = mpte_valid_bound(ctx, true);
}
