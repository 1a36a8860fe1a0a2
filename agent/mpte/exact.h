/* SPDX-License-Identifier: GPL-2.0 */
/*
 * exact.h - the exact LP optimum of the same problem, through GLPK, for
 * small instances and for tests that hold the solver to it.
 */
#ifndef MPTE_EXACT_H
#define MPTE_EXACT_H

#include <stddef.h>

struct mpte_ctx;

/* 1 if this build has GLPK (make HAVE_GLPK=1, the default with glpk.h). */
int mpte_exact_available(void);

/*
 * Minimum max-utilisation over the demands admitted in ctx, at their
 * admitted bandwidth, with the same colour constraints, failures and
 * reservations (max_delay and max_paths are path properties an arc LP
 * cannot express, so they are relaxed: the value is a lower bound then).
 * Returns 0 with the optimum in *lp, or -1 with the reason in err: built
 * without GLPK, or GLPK did not reach an optimum.  A caller must not take
 * a failure for a result.
 */
int mpte_exact(const struct mpte_ctx *ctx, double *lp, char *err,
	       size_t errlen);

#ifdef MPTE_HAVE_GLPK
#include <glpk.h>

/*
 * An LP being built: its matrix as glp_load_matrix() takes it, triplets
 * from index 1, grown as needed.  exact.c and pathlp.c build theirs so.
 */
struct mpte_lp {
	glp_prob *p;
	int *ia, *ja;
	double *ar;
	int nz, cap;
};

/* Entry (row, col) = v; each pair once (GLPK refuses a repeated one). */
void mpte_lp_put(struct mpte_lp *l, int row, int col, double v);

/*
 * The path LPs (pathlp.c, colgen.c) re-optimised from their last basis,
 * held to MPTE_LP_IT_LIM iterations and, if until > 0, to what is left
 * before mpte_now() reaches it: the objective, or HUGE_VAL_D if the
 * simplex did not reach an optimum.
 */
#define MPTE_LP_IT_LIM	20000
double mpte_lp_resolve(glp_prob *p, double until);
#endif

#endif
