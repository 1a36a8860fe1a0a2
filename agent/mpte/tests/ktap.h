/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktap.h - the few lines of KTAP our unit tests print: a plan, then one
 * "ok N name" or "not ok N name # reason" per case.
 */
#ifndef MPTE_KTAP_H
#define MPTE_KTAP_H

#include <stdarg.h>
#include <stdio.h>

static int ktap_count, ktap_failed;
static char ktap_reason[512];

static inline void ktap_plan(int n)
{
	printf("TAP version 13\n1..%d\n", n);
	fflush(stdout);
}

/* Record why the current case fails (the first reason wins). */
static inline int ktap_fail(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline int ktap_fail(const char *fmt, ...)
{
	va_list ap;

	if (!ktap_reason[0]) {
		va_start(ap, fmt);
		vsnprintf(ktap_reason, sizeof(ktap_reason), fmt, ap);
		va_end(ap);
	}
	return 1;
}

static inline void ktap_result(int failed, const char *name)
{
	ktap_count++;
	if (failed) {
		ktap_failed++;
		printf("not ok %d %s # %s\n", ktap_count, name,
		       ktap_reason[0] ? ktap_reason : "failed");
	} else {
		printf("ok %d %s\n", ktap_count, name);
	}
	ktap_reason[0] = 0;
	fflush(stdout);
}

/* A case that could not run here (say why): "ok N name # SKIP why". */
static inline void ktap_skip(const char *name, const char *why)
{
	ktap_count++;
	printf("ok %d %s # SKIP %s\n", ktap_count, name, why);
	ktap_reason[0] = 0;
	fflush(stdout);
}

/* Fail the case and jump to its cleanup label "out". */
#define CHECK(cond, ...)					\
	do {							\
		if (!(cond)) {					\
			ktap_fail(__VA_ARGS__);			\
			goto out;				\
		}						\
	} while (0)

#define KTAP_FAILED() (ktap_reason[0] != 0)

#endif
