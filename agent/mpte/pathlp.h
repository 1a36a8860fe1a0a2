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
 * flows over those paths (every other flow fixed), barring paths until
 * each has at most max_paths in use, and drop the paths the optimum
 * leaves empty.  Loads are recomputed.  No solve starts after mpte_now()
 * reaches @until (0: no limit).  Returns how many demands over their cap
 * were re-solved;
 * 0 without GLPK, when the LP would be too big, or when a solve failed or
 * ran out of time (then nothing changed, and the caller cuts).
 * rebalance_to > 0: every other admitted demand with two paths or more is
 * in the LP too, its flow free over the paths it holds (none added, so no
 * union gains a cycle); the result is taken only if its U is at most
 * rebalance_to, else nothing changes and 0 is returned.
 */
int mpte_select_paths(struct mpte_ctx *ctx, double until, double rebalance_to);

#endif
