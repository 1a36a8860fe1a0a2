// SPDX-License-Identifier: GPL-2.0
/*
 * colgen.c - the end of the free phase on small instances: the path LP
 * over every active demand, with new paths priced in by the LP's duals
 * (column generation), solved by GLPK's simplex.
 *
 * The optimiser's sweeps move flow in steps that shrink as the lengths
 * sharpen; on some instances they crawl, and 400 sweeps end 1.7 to 3.4 %
 * above the LP (soak seeds 2544 and 3176, with max_paths 8 and 64 alike).
 * The master LP over the paths held,
 *
 *   min U
 *   sum_{p uses a} x_p - U c_a <= -fixed_a      every arc
 *   sum_{p of d} x_p = admitted_d              every active demand
 *   x_p >= 0
 *
 * has the flows held as a feasible point.  At its optimum the arc rows'
 * duals are lengths (-dual_a >= 0) and a demand row's dual sigma_d is what
 * a path of d may cost: a path shorter than sigma_d under those lengths
 * lowers U if it comes in.  Each demand's shortest path meeting its own
 * constraints (mpte_best_path(): colours, hop limit, delay; and the SID
 * budget) is priced, the ones that pay come in, and the LP is solved again
 * from its basis, until none pays.  The optimum is a vertex: its positive
 * paths number at most the rows, so most demands hold one or two paths,
 * and the cap to max_paths (pathlp.c) rarely has to choose.
 *
 * Capped (after pathlp.c chose the paths kept under max_paths): new paths
 * come in only for demands that hold fewer than their max_paths, so no
 * demand can end over it (within_caps() checks, for safety: it never
 * refused in a reviewer's 731 capped runs).
 *
 * Only without admission (every demand routed), where the LP is small
 * (at most COLGEN_MAX_ROWS rows: arcs plus demands), and only if it ends
 * below the utilisation held; otherwise nothing changes.  Without GLPK it
 * does nothing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpte_int.h"
#include "colgen.h"
#include "exact.h"

#ifdef MPTE_HAVE_GLPK

#define COLGEN_MAX_ROWS		4000	/* as pathlp.c's LP */
#define COLGEN_ROUNDS		200	/* pricing rounds at most */

struct column {
	int di, next;			/* next: the demand's next column */
	int *arcs, len;
};

struct master {
	glp_prob *p;
	int ucol;			/* U's column */
	int *drow;			/* per demand: its row, or 0 */
	struct column *col;		/* col[j - 2]: column j's path */
	int ncol, capcol;
	int *npaths, *first;		/* per demand: its columns */
	int *ind, *seen;		/* scratch for glp_set_mat_col */
	double *val;
};

static void add_column(struct master *m, int di, const int *arcs, int len)
{
	int j = glp_add_cols(m->p, 1), i, k = 0;
	struct column *c;

	if (m->ncol == m->capcol) {
		m->capcol = m->capcol ? 2 * m->capcol : 64;
		m->col = mpte_xrealloc(m->col, m->capcol * sizeof(*m->col));
	}
	c = &m->col[m->ncol];
	c->di = di;
	c->arcs = mpte_xcalloc(len ? len : 1, sizeof(int));
	memcpy(c->arcs, arcs, len * sizeof(int));
	c->len = len;
	c->next = m->first[di];
	m->first[di] = m->ncol++;
	m->npaths[di]++;
	glp_set_col_bnds(m->p, j, GLP_LO, 0, 0);
	/* arc rows are 1..narcs; an arc twice on a path (GLPK aborts on a
	 * repeated row) is one entry of 2 */
	for (i = 0; i < len; i++) {
		int r = arcs[i] + 1;

		if (m->seen[arcs[i]] == j) {
			int q;

			for (q = 1; q <= k; q++)
				if (m->ind[q] == r)
					m->val[q] += 1;
			continue;
		}
		m->seen[arcs[i]] = j;
		m->ind[++k] = r;
		m->val[k] = 1;
	}
	m->ind[++k] = m->drow[di];
	m->val[k] = 1;
	glp_set_mat_col(m->p, j, k, m->ind, m->val);
}

static int has_column(const struct master *m, int di, const int *arcs,
		      int len)
{
	int k;

	for (k = m->first[di]; k >= 0; k = m->col[k].next)
		if (m->col[k].len == len &&
		    !memcmp(m->col[k].arcs, arcs, len * sizeof(int)))
			return 1;
	return 0;
}

static void build(struct mpte_ctx *ctx, struct master *m)
{
	const struct mpte_topology *t = ctx->t;
	/* the load that stays: background and the inactive demands' flow */
	double *fixed = mpte_fixed_load(ctx, NULL);
	int a, di, p;

	m->p = glp_create_prob();
	glp_set_obj_dir(m->p, GLP_MIN);
	glp_add_rows(m->p, t->narcs);
	m->ucol = glp_add_cols(m->p, 1);
	glp_set_col_bnds(m->p, m->ucol, GLP_LO, 0, 0);
	glp_set_obj_coef(m->p, m->ucol, 1);
	for (a = 0; a < t->narcs; a++) {
		int ind[2] = { 0, m->ucol };
		double val[2] = { 0, -t->arcs[a].capacity };

		/* a failed arc is no limit: no path uses it, and what
		 * reservations it held count nowhere (mpte_current_max_util) */
		if (ctx->failed[a])
			glp_set_row_bnds(m->p, a + 1, GLP_FR, 0, 0);
		else
			glp_set_row_bnds(m->p, a + 1, GLP_UP, 0,
					 fixed[a] > 0 ? -fixed[a] : 0);
		glp_set_mat_row(m->p, a + 1, 1, ind, val);
	}
	free(fixed);
	m->drow = mpte_xcalloc(ctx->ds->n, sizeof(int));
	m->npaths = mpte_xcalloc(ctx->ds->n, sizeof(int));
	m->first = mpte_xcalloc(ctx->ds->n, sizeof(int));
	memset(m->first, 0xff, ctx->ds->n * sizeof(int));	/* -1 */
	m->ind = mpte_xcalloc(t->narcs + 2, sizeof(int));
	m->val = mpte_xcalloc(t->narcs + 2, sizeof(double));
	m->seen = mpte_xcalloc(t->narcs, sizeof(int));
	for (di = 0; di < ctx->ds->n; di++) {
		const struct mpte_dstate *s = &ctx->st[di];

		if (!s->active)
			continue;
		m->drow[di] = glp_add_rows(m->p, 1);
		glp_set_row_bnds(m->p, m->drow[di], GLP_FX, s->admitted,
				 s->admitted);
		/* a first route is kept even over the SID budget (path_join):
		 * it is no column while one within it is held, or the LP
		 * could put all the flow there and the demand be dropped */
		for (p = 0; p < s->npaths; p++)
			if (!mpte_segments_over(mpte_sids(ctx), s->paths[p].arcs,
						s->paths[p].len,
						mpte_max_sids(ctx, di)))
				add_column(m, di, s->paths[p].arcs,
					   s->paths[p].len);
		if (!m->npaths[di])
			for (p = 0; p < s->npaths; p++)
				add_column(m, di, s->paths[p].arcs,
					   s->paths[p].len);
	}
}

/*
 * One pricing round: every active demand's shortest path under the
 * duals' lengths, in if it pays.  The number that came in.
 */
static int price(struct mpte_ctx *ctx, struct master *m, double *len,
		 double *w, int *buf, int bufmax, bool capped)
{
	const struct mpte_topology *t = ctx->t;
	double lmax = 0, temax = 0;
	int a, di, added = 0;

	for (a = 0; a < t->narcs; a++) {
		len[a] = -glp_get_row_dual(m->p, a + 1);
		if (len[a] < 0)
			len[a] = 0;
		if (len[a] > lmax)
			lmax = len[a];
		if (t->arcs[a].te_metric > temax)
			temax = t->arcs[a].te_metric;
	}
	if (lmax <= 0)
		return 0;
	/* most lengths are 0 (arcs off the bottleneck): the TE metric, a
	 * millionth of the longest, breaks the ties towards cheap paths */
	for (a = 0; a < t->narcs; a++)
		w[a] = len[a] + 1e-6 * lmax * (temax > 0 ?
					       t->arcs[a].te_metric / temax : 1);
	for (di = 0; di < ctx->ds->n; di++) {
		double sigma, cost = 0;
		int n, i;

		if (!m->drow[di] || m->npaths[di] >= MPTE_WORK_PATHS ||
		    (capped && m->npaths[di] >= ctx->ds->d[di].max_paths))
			continue;
		sigma = glp_get_row_dual(m->p, m->drow[di]);
		n = mpte_best_path(ctx, di, w, NULL, NULL, buf, bufmax);
		if (n <= 0)
			continue;
		for (i = 0; i < n; i++)
			cost += len[buf[i]];
		if (cost >= sigma - 1e-9 * (1 + fabs(sigma)) ||
		    has_column(m, di, buf, n))
			continue;
		if (mpte_segments_over(mpte_sids(ctx), buf, n,
				       mpte_max_sids(ctx, di)))
			continue;
		add_column(m, di, buf, n);
		added++;
	}
	return added;
}

/* The LP's flows become the demands' paths: those it gives flow. */
static void take(struct mpte_ctx *ctx, struct master *m)
{
	int di, k;

	for (di = 0; di < ctx->ds->n; di++) {
		struct mpte_dstate *s = &ctx->st[di];

		if (!m->drow[di])
			continue;
		for (k = 0; k < s->npaths; k++)
			free(s->paths[k].arcs);
		s->npaths = 0;
	}
	for (k = 0; k < m->ncol; k++) {
		struct column *c = &m->col[k];
		struct mpte_dstate *s = &ctx->st[c->di];
		double x = glp_get_col_prim(m->p, k + 2);

		if (x <= s->admitted * 1e-12)
			continue;
		if (s->npaths == s->pcap) {
			s->pcap = s->pcap ? 2 * s->pcap : 4;
			s->paths = mpte_xrealloc(s->paths,
						 s->pcap * sizeof(*s->paths));
		}
		memset(&s->paths[s->npaths], 0, sizeof(s->paths[0]));
		s->paths[s->npaths].arcs = c->arcs;
		s->paths[s->npaths].len = c->len;
		s->paths[s->npaths].flow = x;
		s->npaths++;
		c->arcs = NULL;		/* the demand's now */
	}
	/* the flows sum to admitted within the simplex's tolerance: exactly */
	for (di = 0; di < ctx->ds->n; di++) {
		struct mpte_dstate *s = &ctx->st[di];
		double sum = 0;

		if (!m->drow[di])
			continue;
		for (k = 0; k < s->npaths; k++)
			sum += s->paths[k].flow;
		for (k = 0; k < s->npaths && sum > 0; k++)
			s->paths[k].flow *= s->admitted / sum;
	}
	mpte_recompute_loads(ctx);
}

/* Does the LP give no demand more positive paths than its max_paths? */
static bool within_caps(const struct mpte_ctx *ctx, const struct master *m)
{
	int di, k, n;

	for (di = 0; di < ctx->ds->n; di++) {
		if (!m->drow[di])
			continue;
		n = 0;
		for (k = m->first[di]; k >= 0; k = m->col[k].next)
			if (glp_get_col_prim(m->p, k + 2) >
			    ctx->st[di].admitted * 1e-12)
				n++;
		if (n > ctx->ds->d[di].max_paths)
			return false;
	}
	return true;
}

int mpte_colgen(struct mpte_ctx *ctx, double until, bool capped)
{
	const struct mpte_topology *t = ctx->t;
	struct master m;
	double *len = NULL, *w = NULL, u0;
	int *buf = NULL, di, rows = t->narcs, round, added = 0, ret = 0;

	/* admission's rounds (30 sweeps each, one demand at a time when
	 * re-admitting) were made on the sweeps' results: with the path LP
	 * in them janos-us admitted 50 demands, not 51, and ta2 after one
	 * sweep took 11 times as long; it runs where every demand is
	 * routed (--no-admission) */
	if (ctx->opt.admission)
		return 0;
	for (di = 0; di < ctx->ds->n; di++) {
		if (!ctx->st[di].active)
			continue;
		/* every active demand must hold its flow somewhere */
		if (!ctx->st[di].npaths)
			return 0;
		rows++;
	}
	if (rows == t->narcs || rows > COLGEN_MAX_ROWS)
		return 0;
	memset(&m, 0, sizeof(m));
	build(ctx, &m);
	if (mpte_lp_resolve(m.p, until) == HUGE_VAL_D)
		goto out;	/* not expected: the flows held are feasible */
	len = mpte_xcalloc(t->narcs, sizeof(double));
	w = mpte_xcalloc(t->narcs, sizeof(double));
	buf = mpte_xcalloc(t->nnodes + 1, sizeof(int));
	for (round = 0; round < COLGEN_ROUNDS; round++) {
		int n = price(ctx, &m, len, w, buf, t->nnodes + 1, capped);

		if (!n)
			break;
		added += n;
		if (mpte_lp_resolve(m.p, until) == HUGE_VAL_D)
			goto out;
	}
	u0 = mpte_current_max_util(ctx, NULL);
	if (getenv("MPTE_TRACE"))
		fprintf(stderr, "mpte: column generation: %d rows, %d paths in, %d rounds, U %.6f, u was %.6f\n",
			glp_get_num_rows(m.p), added, round,
			glp_get_obj_val(m.p), u0);
	/* a gain within the simplex's noise is no reason to move flow */
	if (glp_get_obj_val(m.p) < u0 * (1 - 1e-6) &&
	    (!capped || within_caps(ctx, &m))) {
		take(ctx, &m);
		ret = 1;
	}
out:
	for (di = 0; di < m.ncol; di++)
		free(m.col[di].arcs);
	free(m.col);
	free(m.drow);
	free(m.npaths);
	free(m.first);
	free(m.seen);
	free(m.ind);
	free(m.val);
	if (m.p)
		glp_delete_prob(m.p);
	free(len);
	free(w);
	free(buf);
	return ret;
}

#else

int mpte_colgen(struct mpte_ctx *ctx, double until, bool capped)
{
	(void)ctx;
	(void)until;
	(void)capped;
	return 0;
}

#endif
