// SPDX-License-Identifier: GPL-2.0
/*
 * dp.c - the exact planner for chains, the reference the others are
 * measured against.
 *
 * The iteration time L0 + (M - 1) tau + theta mixes a sum (the fill L0)
 * with two maxima (the period tau, the all-reduce theta), which no single
 * dynamic programme minimises.  For thresholds (tau, theta) a DP over
 * suffixes finds the least fill among the plans whose every stage, link
 * and round trip fits tau and every all-reduce fits theta:
 *
 *   V(i, k, q, U, c) = least round trip L of layers [i, n) in k stages,
 *   the first on site q, U the sites the suffix uses (each site one run of
 *   stages), c the stages of q's run from here on.
 *
 * A search over the threshold box then finds the optimum: a box whose
 * upper corner gives fill A cannot hold anything better than A + (M-1)
 * tau_lo + theta_lo (pruned against the best plan), and the part of a box
 * dominated by the corner's plan is cut away.  The search ends when every
 * box is pruned (exact) or after a cap on DP runs, with the least bound
 * of the boxes left as a certified lower bound.
 */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "plan_int.h"

#define DP_MAX_STATES	(48u << 20)
#define DP_MAX_CALLS	4000

struct dp {
	const struct plan_problem *pb;
	int n, S, ns, NU, C, M;
	double *V;		/* states */
	int *nj;		/* choice: end of the first stage */
	signed char *nq, *nc;	/* next site and its run count */
	double *W;		/* min over c of V */
	signed char *Wc;
};

static size_t vidx(const struct dp *p, int i, int k, int q, int U, int c)
{
	return ((((size_t)i * (p->S + 1) + k) * p->ns + q) * p->NU + U) *
		(p->C + 1) + c;
}

static size_t widx(const struct dp *p, int i, int k, int q, int U)
{
	return (((size_t)i * (p->S + 1) + k) * p->ns + q) * p->NU + U;
}

/* Least fill for the thresholds, or INFINITY when nothing fits. */
static double dp_run(struct dp *p, double tau, double theta)
{
	const struct plan_problem *pb = p->pb;
	const struct plan_sites *ss = pb->s;
	const struct plan_model *m = pb->m;
	int maxl = pb->lim.max_layers_per_stage, d = pb->d;
	size_t nv = vidx(p, p->n + 1, 0, 0, 0, 0), nw = widx(p, p->n + 1, 0, 0, 0);
	double best = INFINITY;
	int i, j, q, r, k, U, c;

	for (size_t z = 0; z < nv; z++)
		p->V[z] = INFINITY;
	for (size_t z = 0; z < nw; z++)
		p->W[z] = INFINITY;
	for (i = p->n - 1; i >= 0; i--) {
		for (q = 0; q < p->ns; q++) {
			const struct plan_site *sq = &ss->s[q];
			int capq = pb->cap[q] < p->C ? pb->cap[q] : p->C;

			if (!capq)
				continue;
			for (j = i + 1; j <= p->n; j++) {
				double F, B, ar, resident, act, fb;

				if (maxl && j - i > maxl)
					break;
				if (pb->pinned_other[q][j] != pb->pinned_other[q][i])
					break;
				F = (pb->pf[j] - pb->pf[i]) / (d * sq->flops);
				B = (pb->pb[j] - pb->pb[i]) / (d * sq->flops);
				fb = F + B;
				if (fb > tau)
					break;
				ar = d > 1 ? 2.0 * (d - 1) / d *
					(pb->pp[j] - pb->pp[i]) / sq->intra_bw : 0;
				if (ar > theta)
					break;
				resident = pb->pm[j] - pb->pm[i];
				act = (pb->pa[j] - pb->pa[i]) / d;
				if (resident + act > sq->mem)
					break;
				if (j == p->n) {
					size_t z = vidx(p, i, 1, q, 1 << q, 1);

					if (fb < p->V[z]) {
						p->V[z] = fb;
						p->nj[z] = j;
						p->nq[z] = -1;
					}
					continue;
				}
				{
				double bytes = m->l[j - 1].act;
				double t = bytes / sq->intra_bw;

				for (k = 2; k <= p->S; k++) {
					int w = p->M < k ? p->M : k;

					if (resident + w * act > sq->mem)
						break;
					/* the next stage on the same site */
					if (t <= tau && capq >= 2)
						for (U = 0; U < p->NU; U++) {
							if (!(U & (1 << q)))
								continue;
							for (c = 2; c <= capq && c <= k; c++) {
								double L = p->V[vidx(p, j, k - 1, q, U, c - 1)];
								size_t z;

								if (!isfinite(L))
									continue;
								L += fb + 2 * t;
								z = vidx(p, i, k, q, U, c);
								if (L <= w * tau && L < p->V[z]) {
									p->V[z] = L;
									p->nj[z] = j;
									p->nq[z] = q;
									p->nc[z] = c - 1;
								}
							}
						}
					/* or the next run, on another site */
					for (r = 0; r < p->ns; r++) {
						double tf, tb;

						if (r == q || ss->bw[q][r] <= 0 ||
						    ss->bw[r][q] <= 0 ||
						    bytes / ss->bw[q][r] > tau ||
						    bytes / ss->bw[r][q] > tau)
							continue;
						tf = ss->lat[q][r] + bytes / ss->bw[q][r];
						tb = ss->lat[r][q] + bytes / ss->bw[r][q];
						for (U = 0; U < p->NU; U++) {
							double L;
							size_t z, zw;

							if ((U & (1 << q)) || !(U & (1 << r)))
								continue;
							zw = widx(p, j, k - 1, r, U);
							L = p->W[zw];
							if (!isfinite(L))
								continue;
							L += fb + tf + tb;
							z = vidx(p, i, k, q, U | 1 << q, 1);
							if (L <= w * tau && L < p->V[z]) {
								p->V[z] = L;
								p->nj[z] = j;
								p->nq[z] = r;
								p->nc[z] = p->Wc[zw];
							}
						}
					}
				}
				}
			}
			/* W(i, k, q, U) for the layers before i */
			for (k = 1; k <= p->S; k++)
				for (U = 0; U < p->NU; U++) {
					size_t zw = widx(p, i, k, q, U);

					for (c = 1; c <= capq; c++) {
						double v = p->V[vidx(p, i, k, q, U, c)];

						if (v < p->W[zw]) {
							p->W[zw] = v;
							p->Wc[zw] = c;
						}
					}
				}
		}
	}
	for (k = 1; k <= p->S; k++)
		for (q = 0; q < p->ns; q++)
			for (U = 0; U < p->NU; U++)
				if (p->W[widx(p, 0, k, q, U)] < best)
					best = p->W[widx(p, 0, k, q, U)];
	return best;
}

/* The plan behind dp_run's result. */
static void dp_plan(const struct dp *p, struct plan_sol *x)
{
	double best = INFINITY;
	int k, q, U, bk = 0, bq = 0, bU = 0, c, i;

	for (k = 1; k <= p->S; k++)
		for (q = 0; q < p->ns; q++)
			for (U = 0; U < p->NU; U++)
				if (p->W[widx(p, 0, k, q, U)] < best) {
					best = p->W[widx(p, 0, k, q, U)];
					bk = k;
					bq = q;
					bU = U;
				}
	c = p->Wc[widx(p, 0, bk, bq, bU)];
	x->k = bk;
	for (i = 0, k = bk, q = bq, U = bU; k >= 1; k--) {
		size_t z = vidx(p, i, k, q, U, c);
		int nq = p->nq[z];

		x->cut[bk - k] = i;
		x->site[bk - k] = q;
		i = p->nj[z];
		if (nq >= 0 && nq != q)
			U &= ~(1 << q);
		c = p->nc[z];
		q = nq;
	}
	x->cut[bk] = p->n;
}

struct box {
	double ta, tb, ha, hb;	/* tau in [ta, tb], theta in [ha, hb] */
	double lb;
	int thin;		/* too thin to split: evaluate, then bound */
};

struct heap {
	struct box *b;
	int n, cap;
};

static void hpush(struct heap *h, struct box b)
{
	int c;

	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 64;
		h->b = realloc(h->b, h->cap * sizeof(*h->b));
		if (!h->b)
			abort();
	}
	c = h->n++;
	h->b[c] = b;
	while (c && h->b[(c - 1) / 2].lb > h->b[c].lb) {
		struct box t = h->b[c];

		h->b[c] = h->b[(c - 1) / 2];
		h->b[(c - 1) / 2] = t;
		c = (c - 1) / 2;
	}
}

static struct box hpop(struct heap *h)
{
	struct box top = h->b[0];
	int c = 0;

	h->b[0] = h->b[--h->n];
	for (;;) {
		int a = 2 * c + 1, s = c;

		if (a < h->n && h->b[a].lb < h->b[s].lb)
			s = a;
		if (a + 1 < h->n && h->b[a + 1].lb < h->b[s].lb)
			s = a + 1;
		if (s == c)
			break;
		struct box t = h->b[c];

		h->b[c] = h->b[s];
		h->b[s] = t;
		c = s;
	}
	return top;
}

int plan_dp(struct plan_problem *pb, struct plan_sol *best, double *lbout,
	    int *calls, char *err, size_t errlen)
{
	struct dp p = { .pb = pb };
	struct heap h = { 0 };
	struct plan_sol x;
	struct plan_cost c;
	double A0, bestT, lb = INFINITY, wt;
	size_t nv;
	int q, ncalls = 0, rc = -1;

	if (!pb->chain)
		return plan_fail(err, errlen, "method dp: the model is not a chain (use tabu)");
	if (pb->s->n > 8)
		return plan_fail(err, errlen, "method dp: at most 8 sites (use tabu)");
	p.n = pb->m->n;
	p.S = pb->lim.stages;
	p.ns = pb->s->n;
	p.NU = 1 << p.ns;
	p.M = pb->lim.micro_batches;
	for (q = 0; q < p.ns; q++)
		if (pb->cap[q] > p.C)
			p.C = pb->cap[q];
	if (p.C > p.S)
		p.C = p.S;
	nv = vidx(&p, p.n + 1, 0, 0, 0, 0);
	if (nv > DP_MAX_STATES)
		return plan_fail(err, errlen, "method dp: %zu states, more than %u (use tabu)",
				 nv, DP_MAX_STATES);
	p.V = plan_xcalloc(nv, sizeof(double));
	p.nj = plan_xcalloc(nv, sizeof(int));
	p.nq = plan_xcalloc(nv, 1);
	p.nc = plan_xcalloc(nv, 1);
	p.W = plan_xcalloc(widx(&p, p.n + 1, 0, 0, 0), sizeof(double));
	p.Wc = plan_xcalloc(widx(&p, p.n + 1, 0, 0, 0), 1);

	A0 = dp_run(&p, INFINITY, INFINITY);
	ncalls++;
	if (!isfinite(A0)) {
		plan_fail(err, errlen, "no feasible plan: the layers do not fit in %d stages of %d GPUs within the sites' memory, pins and links",
			  p.S, pb->d);
		goto out;
	}
	dp_plan(&p, best);
	plan_cost_eval(pb, best, &c);
	bestT = c.T;
	wt = p.M > 1 ? p.M - 1 : 0;
	/* no plan better than bestT has tau or theta beyond these */
	/* one GPU per stage: no all-reduce, theta is always 0 */
	hpush(&h, (struct box){ 0, wt ? (bestT - A0) / wt : 0, 0,
				pb->d > 1 ? bestT - A0 : 0, A0, 0 });
	while (h.n) {
		struct box b = hpop(&h);
		double A;

		if (b.lb >= bestT * (1 - 1e-12))
			break;
		if (ncalls >= DP_MAX_CALLS) {
			lb = fmin(lb, b.lb);
			break;
		}
		A = dp_run(&p, wt ? b.tb : INFINITY, b.hb);
		ncalls++;
		if (!isfinite(A))
			continue;
		dp_plan(&p, &x);
		plan_cost_eval(pb, &x, &c);
		if (c.T < bestT) {
			bestT = c.T;
			*best = x;
		}
		b.lb = A + wt * b.ta + b.ha;
		if (b.lb >= bestT * (1 - 1e-12))
			continue;
		if (b.thin) {
			lb = fmin(lb, b.lb);
			continue;
		}
		/* what is left: tau below the plan's, or theta below it */
		{
			double tp = nextafter(c.period, 0), hp = nextafter(c.allreduce, 0);
			struct box b1 = { b.ta, wt ? fmin(b.tb, tp) : b.tb, b.ha,
					  b.hb, b.lb, 0 };
			struct box b2 = { wt ? fmax(b.ta, c.period) : b.ta, b.tb,
					  b.ha, fmin(b.hb, hp), b.lb, 0 };
			struct box parts[2] = { b1, b2 };
			int i;

			if (!wt)
				parts[0].tb = -1;	/* tau is free: only theta */
			for (i = 0; i < 2; i++) {
				struct box e = parts[i];
				double wtau = wt * (e.tb - e.ta), wth = e.hb - e.ha;

				if (e.tb < e.ta || e.hb < e.ha)
					continue;
				if (wtau + wth <= 1e-9 * bestT) {
					e.thin = 1;
					hpush(&h, e);
					continue;
				}
				/* halve the wider side, for bounds that bite */
				if (wtau >= wth) {
					double mid = (e.ta + e.tb) / 2;
					struct box lo = e, hi = e;

					lo.tb = mid;
					hi.ta = mid;
					hi.lb = e.lb + wt * (mid - e.ta);
					hpush(&h, lo);
					hpush(&h, hi);
				} else {
					double mid = (e.ha + e.hb) / 2;
					struct box lo = e, hi = e;

					lo.hb = mid;
					hi.ha = mid;
					hi.lb = e.lb + (mid - e.ha);
					hpush(&h, lo);
					hpush(&h, hi);
				}
			}
		}
	}
	*lbout = fmin(lb, bestT);
	*calls = ncalls;
	rc = 0;
out:
	free(h.b);
	free(p.V);
	free(p.nj);
	free(p.nq);
	free(p.nc);
	free(p.W);
	free(p.Wc);
	return rc;
}
