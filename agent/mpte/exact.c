// SPDX-License-Identifier: GPL-2.0
/*
 * exact.c - min-congestion multicommodity flow as an arc LP, solved by
 * GLPK's simplex.  Commodities are aggregated per group (same ingress set,
 * same colour constraints): flows from the same sources over the same
 * admissible arcs can share one set of arc variables, which keeps the LP
 * at groups x arcs columns instead of demands x arcs.
 *
 *   min U
 *   sum_g x[g][a] - U c_a <= -background_a		for every arc a
 *   out_g(v) - in_g(v) - s[g][v] + sink_g(v) = 0	for every group g, node v
 *   sum_v s[g][v] = D_g   (several ingresses; else s is the constant D_g)
 *   sum_v o[d][v] = b_d   (several egresses; else sink is the constant b_d)
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpte_int.h"
#include "exact.h"

#ifdef MPTE_HAVE_GLPK

double mpte_lp_resolve(glp_prob *p, double until)
{
	glp_smcp parm;

	glp_init_smcp(&parm);
	parm.msg_lev = GLP_MSG_OFF;
	/*
	 * No presolve: the simplex's own basic solution (a vertex), and a
	 * warm start from the last basis when a bound changed or a column
	 * came in.  The primal simplex throughout: the dual one, natural
	 * after a bound tightens, ends on other vertices of these degenerate
	 * LPs, and the paths pathlp.c kept came out worse (3 of 2,000 soak
	 * instances above 1.01x, not 1).
	 */
	parm.presolve = GLP_OFF;
	parm.it_lim = MPTE_LP_IT_LIM;
	if (until > 0) {
		double left = until - mpte_now();

		if (left <= 0)
			return HUGE_VAL_D;
		parm.tm_lim = left * 1000 < INT_MAX ? (int)(left * 1000) + 1 :
			      INT_MAX;
	}
	if (glp_simplex(p, &parm) || glp_get_status(p) != GLP_OPT)
		return HUGE_VAL_D;
	return glp_get_obj_val(p);
}

void mpte_lp_put(struct mpte_lp *l, int row, int col, double v)
{
	if (l->nz + 1 >= l->cap) {
		l->cap = l->cap ? 2 * l->cap : 1024;
		l->ia = mpte_xrealloc(l->ia, l->cap * sizeof(int));
		l->ja = mpte_xrealloc(l->ja, l->cap * sizeof(int));
		l->ar = mpte_xrealloc(l->ar, l->cap * sizeof(double));
	}
	l->nz++;
	l->ia[l->nz] = row;
	l->ja[l->nz] = col;
	l->ar[l->nz] = v;
}

static int add_col(struct mpte_lp *l, double lo, double hi)
{
	int c = glp_add_cols(l->p, 1);

	glp_set_col_bnds(l->p, c, hi > lo ? GLP_DB : GLP_LO, lo, hi);
	return c;
}

int mpte_exact_available(void)
{
	return 1;
}

int mpte_exact(const struct mpte_ctx *ctx, double *lp, char *err,
	       size_t errlen)
{
	const struct mpte_topology *t = ctx->t;
	struct mpte_lp l;
	struct mpte_filter f;
	glp_smcp parm;
	int g, a, k, v, j, ucol, row0, *node_row, rc, st = 0, ret = -1;
	double *supply;

	memset(&l, 0, sizeof(l));
	l.p = glp_create_prob();
	glp_term_out(GLP_OFF);
	glp_set_obj_dir(l.p, GLP_MIN);
	ucol = add_col(&l, 0, 0);
	glp_set_obj_coef(l.p, ucol, 1);

	/* capacity rows 1..narcs */
	glp_add_rows(l.p, t->narcs);
	for (a = 0; a < t->narcs; a++) {
		glp_set_row_bnds(l.p, a + 1, GLP_UP, 0,
				 ctx->failed[a] ? 0 : -ctx->background[a]);
		if (!ctx->failed[a])
			mpte_lp_put(&l, a + 1, ucol, -t->arcs[a].capacity);
	}
	node_row = mpte_xcalloc(t->nnodes, sizeof(int));
	supply = mpte_xcalloc(t->nnodes, sizeof(double));
	for (g = 0; g < ctx->ngroups; g++) {
		const struct mpte_group *gr = &ctx->groups[g];
		double total = 0;
		int any = 0, srow = 0;

		for (k = 0; k < gr->nmembers; k++)
			if (ctx->st[gr->members[k]].status == MPTE_ADMITTED) {
				any = 1;
				total += ctx->st[gr->members[k]].admitted;
			}
		if (!any)
			continue;
		row0 = glp_add_rows(l.p, t->nnodes);
		for (v = 0; v < t->nnodes; v++) {
			node_row[v] = row0 + v;
			supply[v] = 0;
		}
		memset(&f, 0, sizeof(f));
		f.include_any = gr->include_any;
		f.include_all = gr->include_all;
		f.exclude_any = gr->exclude_any;
		f.failed = ctx->failed;
		for (a = 0; a < t->narcs; a++) {
			int c;

			if (!mpte_arc_usable(t, a, &f))
				continue;
			c = add_col(&l, 0, 0);
			mpte_lp_put(&l, node_row[t->arcs[a].from], c, 1);
			mpte_lp_put(&l, node_row[t->arcs[a].to], c, -1);
			mpte_lp_put(&l, a + 1, c, 1);
		}
		if (gr->ningress == 1) {
			supply[gr->ingress[0]] += total;
		} else {
			srow = glp_add_rows(l.p, 1);
			glp_set_row_bnds(l.p, srow, GLP_FX, total, total);
			for (j = 0; j < gr->ningress; j++) {
				int c = add_col(&l, 0, 0);

				mpte_lp_put(&l, node_row[gr->ingress[j]], c, -1);
				mpte_lp_put(&l, srow, c, 1);
			}
		}
		for (k = 0; k < gr->nmembers; k++) {
			const struct mpte_demand *d = &ctx->ds->d[gr->members[k]];
			double b = ctx->st[gr->members[k]].admitted;
			int orow;

			if (ctx->st[gr->members[k]].status != MPTE_ADMITTED)
				continue;
			if (d->negress == 1) {
				supply[d->egress[0]] -= b;
				continue;
			}
			orow = glp_add_rows(l.p, 1);
			glp_set_row_bnds(l.p, orow, GLP_FX, b, b);
			for (j = 0; j < d->negress; j++) {
				int c = add_col(&l, 0, 0);

				mpte_lp_put(&l, node_row[d->egress[j]], c, 1);
				mpte_lp_put(&l, orow, c, 1);
			}
		}
		for (v = 0; v < t->nnodes; v++)
			glp_set_row_bnds(l.p, node_row[v], GLP_FX, supply[v],
					 supply[v]);
	}
	glp_load_matrix(l.p, l.nz, l.ia, l.ja, l.ar);
	glp_init_smcp(&parm);
	parm.msg_lev = GLP_MSG_OFF;
	parm.presolve = GLP_ON;
	rc = glp_simplex(l.p, &parm);
	if (rc == 0)
		st = glp_get_status(l.p);
	if (rc) {
		snprintf(err, errlen, "GLPK: glp_simplex returned %d", rc);
	} else if (st != GLP_OPT) {
		snprintf(err, errlen, "GLPK: no optimum (status %d)", st);
	} else {
		*lp = glp_get_obj_val(l.p);
		ret = 0;
	}
	glp_delete_prob(l.p);
	free(l.ia);
	free(l.ja);
	free(l.ar);
	free(node_row);
	free(supply);
	return ret;
}
#else
int mpte_exact_available(void)
{
	return 0;
}

int mpte_exact(const struct mpte_ctx *ctx, double *lp, char *err,
	       size_t errlen)
{
	(void)ctx;
	(void)lp;
	snprintf(err, errlen, "built without GLPK (HAVE_GLPK=0): no exact LP");
	return -1;
}
#endif
