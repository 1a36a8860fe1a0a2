/* SPDX-License-Identifier: GPL-2.0 */
/*
 * exact.h - the exact LP optimum of the same problem, through GLPK, for
 * small instances and for tests that hold the solver to it.
 */
#ifndef MPTE_EXACT_H
#define MPTE_EXACT_H

struct mpte_ctx;

/*
 * Minimum max-utilisation over the demands admitted in ctx, at their
 * admitted bandwidth, with the same colour constraints, failures and
 * reservations (max_delay and max_paths are path properties an arc LP
 * cannot express, so they are relaxed: the value is a lower bound then).
 * Returns -1 if built without GLPK or if GLPK fails.
 */
double mpte_exact(const struct mpte_ctx *ctx);

#endif
