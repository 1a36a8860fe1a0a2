/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pathlp.h - the paths a demand over its max_paths keeps, chosen by the
 * path LP over the paths it holds (pathlp.c).
 */
#ifndef MPTE_PATHLP_H
#define MPTE_PATHLP_H

#include <stdbool.h>

struct mpte_ctx;

/*
 * For the active demands holding more than max_paths paths: re-solve their
 * flows over those paths (every other flow fixed), barring paths until
 * each has at most max_paths in use, and drop the paths the optimum
 * leaves empty.  Loads are recomputed.  No solve starts after mpte_now()
 * reaches @until (0: no limit).  Returns how many demands were re-solved;
 * 0 without GLPK, when the LP would be too big, or when a solve failed or
 * ran out of time (then nothing changed, and the caller cuts).
 * rebalance: every other admitted demand is in the LP too, its flow free
 * over the paths it holds (none added, so no union gains a cycle), and
 * the result is taken only if U stays as it was (else 0, nothing changed).
 */
int mpte_select_paths(struct mpte_ctx *ctx, double until, bool rebalance);

#endif
