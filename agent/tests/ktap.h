/* SPDX-License-Identifier: GPL-2.0 */
/* Minimal KTAP for userspace unit tests: one line per test case. */
#ifndef DMSC_KTAP_H
#define DMSC_KTAP_H

#include <stdio.h>

static int ktap_n, ktap_failed, ktap_planned = -1;

static inline void ktap_plan(int n)
{
	ktap_planned = n;
	printf("TAP version 13\n1..%d\n", n);
}

#define ktap_check(cond, name) do {					\
	ktap_n++;							\
	if (cond) {							\
		printf("ok %d %s\n", ktap_n, name);			\
	} else {							\
		ktap_failed++;						\
		printf("not ok %d %s # %s:%d: %s\n", ktap_n, name,	\
		       __FILE__, __LINE__, #cond);			\
	}								\
	fflush(stdout);							\
} while (0)

/* Failed, or ran another number of cases than planned (a lost case). */
static inline int ktap_finish(void)
{
	if (ktap_planned >= 0 && ktap_n != ktap_planned) {
		printf("# planned %d cases, ran %d\n", ktap_planned, ktap_n);
		return 1;
	}
	return ktap_failed ? 1 : 0;
}

#endif /* DMSC_KTAP_H */
