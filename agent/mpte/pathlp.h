/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pathlp.h - the paths a demand over its max_paths keeps, chosen by the
 * path LP over the paths it holds (pathlp.c).
 */
#ifndef MPTE_PATHLP_H
#define MPTE_PATHLP_H

struct mpte_ctx;

/*
 * For the active demands holding more than max_paths paths: re-solve their
 * flows over those paths (every other flow fixed) and drop the paths the
 * optimum leaves empty.  Loads are recomputed.  Returns how many demands
 * were re-solved; 0 without GLPK or when the LP failed (then nothing
 * changed).  A demand may still hold more than max_paths afterwards.
 */
int mpte_select_paths(struct mpte_ctx *ctx);

#endif
