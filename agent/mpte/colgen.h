/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MPTE_COLGEN_H
#define MPTE_COLGEN_H

#include <stdbool.h>

struct mpte_ctx;

/*
 * The path LP over every active demand, with new paths priced in by its
 * duals, on small instances (colgen.c): 1 if its flows, below the
 * utilisation held, replaced the active demands' paths (loads current),
 * 0 if nothing changed.  No solve starts past until (mpte_now()), if > 0.
 * capped: new paths only for demands under their max_paths, and no
 * demand over it in the result.
 */
int mpte_colgen(struct mpte_ctx *ctx, double until, bool capped);

#endif
