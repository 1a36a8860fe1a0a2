/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-flow PSN accounting. The window remembers which of the last
 * PSN_WINDOW PSNs below the next expected one were seen, so a packet that
 * comes back from behind is told apart exactly: a duplicate if its PSN was
 * seen, a late (out-of-order) packet if it was not, in which case it is no
 * longer missing and the gap count goes down by one.
 */
#ifndef ROCE_GEN_PSN_WINDOW_H
#define ROCE_GEN_PSN_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#define PSN_WINDOW (1u << 16)	/* PSNs remembered; divides 2^24 */

enum psn_verdict {
	PSN_IN_ORDER,	/* the next expected PSN */
	PSN_AHEAD,	/* beyond it: the PSNs in between are now missing */
	PSN_LATE,	/* behind it, not seen before: out of order */
	PSN_DUP,	/* behind it, seen before: duplicate */
	PSN_TOO_OLD,	/* further behind than the window: cannot tell */
};

struct psn_window {
	uint64_t *seen;		/* PSN_WINDOW bits, indexed by psn % PSN_WINDOW */
	uint32_t next;		/* next expected PSN */
	bool started;
	bool first_known;
	uint32_t span;		/* PSNs accounted below next, capped at the window */
	uint64_t missing;	/* PSNs skipped and not (yet) arrived: loss */
	uint64_t in_order, ahead, late, dups, too_old;
};

/*
 * @first_known: the first PSN the sender uses is @first, so packets lost
 * before the first arrival count as missing too. Returns -1 on ENOMEM.
 */
int psn_window_init(struct psn_window *w, bool first_known, uint32_t first);
void psn_window_free(struct psn_window *w);
enum psn_verdict psn_window_add(struct psn_window *w, uint32_t psn);

#endif
