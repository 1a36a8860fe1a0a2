// SPDX-License-Identifier: GPL-2.0
/* PSN gap, reorder and duplicate accounting over a bitmap window. */
#include <stdlib.h>
#include <string.h>

#include "bth.h"
#include "psn_window.h"

#define WORDS (PSN_WINDOW / 64)

static inline void bit_set(uint64_t *m, uint32_t psn)
{
	uint32_t i = psn % PSN_WINDOW;

	m[i / 64] |= 1ull << (i % 64);
}

static inline void bit_clear(uint64_t *m, uint32_t psn)
{
	uint32_t i = psn % PSN_WINDOW;

	m[i / 64] &= ~(1ull << (i % 64));
}

static inline void span_grow(struct psn_window *w, uint32_t n)
{
	w->span = n >= PSN_WINDOW - w->span ? PSN_WINDOW : w->span + n;
}

static inline bool bit_test(const uint64_t *m, uint32_t psn)
{
	uint32_t i = psn % PSN_WINDOW;

	return m[i / 64] >> (i % 64) & 1;
}

int psn_window_init(struct psn_window *w, bool first_known, uint32_t first)
{
	memset(w, 0, sizeof(*w));
	w->seen = calloc(WORDS, sizeof(uint64_t));
	if (!w->seen)
		return -1;
	if (first_known) {
		w->next = first & PSN_MASK;
		w->started = true;
		w->first_known = true;
	}
	return 0;
}

void psn_window_free(struct psn_window *w)
{
	free(w->seen);
	w->seen = NULL;
}

enum psn_verdict psn_window_add(struct psn_window *w, uint32_t psn)
{
	uint32_t age;
	int32_t d;

	psn &= PSN_MASK;
	if (!w->started) {
		w->started = true;
		w->next = psn;
	}
	d = psn_diff(psn, w->next);
	if (d == 0) {
		bit_set(w->seen, psn);
		w->next = (psn + 1) & PSN_MASK;
		span_grow(w, 1);
		w->in_order++;
		return PSN_IN_ORDER;
	}
	if (d > 0) {
		/*
		 * The slots of the skipped PSNs still hold PSNs a window
		 * older; clear them so a late arrival reads as not seen.
		 */
		if ((uint32_t)d >= PSN_WINDOW)
			memset(w->seen, 0, WORDS * sizeof(uint64_t));
		else
			for (uint32_t p = w->next; p != psn; p = (p + 1) & PSN_MASK)
				bit_clear(w->seen, p);
		bit_set(w->seen, psn);
		w->missing += (uint32_t)d;
		w->next = (psn + 1) & PSN_MASK;
		span_grow(w, (uint32_t)d + 1);
		w->ahead++;
		return PSN_AHEAD;
	}
	age = (uint32_t)-d;
	if (age > PSN_WINDOW || (age > w->span && w->first_known)) {
		w->too_old++;
		return PSN_TOO_OLD;
	}
	if (age > w->span) {
		/*
		 * Older than the first PSN this flow showed: the flow started
		 * earlier than we thought. Move its start back; the PSNs in
		 * between are missing. Their slots are still clear because
		 * nothing at or after the old start maps to them.
		 */
		w->missing += age - w->span - 1;
		w->span = age;
		bit_set(w->seen, psn);
		w->late++;
		return PSN_LATE;
	}
	if (bit_test(w->seen, psn)) {
		w->dups++;
		return PSN_DUP;
	}
	bit_set(w->seen, psn);
	w->missing--;
	w->late++;
	return PSN_LATE;
}
