// SPDX-License-Identifier: GPL-2.0
/*
 * solve.c - the methods behind one call, and the uniform baseline:
 * Megatron's split, as many stages as allowed with equal layer counts,
 * filling the sites in the order given, blind to speed and to the WAN.
 */
#include <string.h>
#include <time.h>

#include "plan_int.h"

void plan_uniform(const struct plan_problem *pb, struct plan_sol *x)
{
	int n = pb->m->n, k = pb->lim.stages, s, site = 0, used = 0;

	x->k = k;
	for (s = 0; s <= k; s++)
		x->cut[s] = (int)((long long)n * s / k);
	for (s = 0; s < k; s++) {
		while (site + 1 < pb->s->n && used >= pb->cap[site]) {
			site++;
			used = 0;
		}
		x->site[s] = site;
		used++;
	}
}

const char *plan_method_name(enum plan_method m)
{
	switch (m) {
	case PLAN_DP:
		return "dp";
	case PLAN_TABU:
		return "tabu";
	case PLAN_UNIFORM:
		return "uniform";
	default:
		return "auto";
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* a loaded machine stretches wall time; CPU time is the solver's own */
static double now_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int plan_solve(struct plan_problem *pb, enum plan_method method,
	       struct plan_result *r, char *err, size_t errlen)
{
	struct plan_sol x;
	struct plan_cost c;
	double t0 = now(), c0 = now_cpu();

	memset(r, 0, sizeof(*r));
	if (method == PLAN_AUTO)
		method = pb->lim.method != PLAN_AUTO ? pb->lim.method :
			 pb->chain && pb->s->n <= 8 ? PLAN_DP : PLAN_TABU;
	r->method = method;
	switch (method) {
	case PLAN_DP:
		if (plan_dp(pb, &x, &r->lower_bound, &r->dp_calls, err, errlen))
			return -1;
		break;
	case PLAN_TABU:
		if (plan_tabu(pb, &x, &r->iterations, err, errlen))
			return -1;
		break;
	default:
		plan_uniform(pb, &x);
		plan_cost_eval(pb, &x, &c);
		if (c.violations)
			return plan_fail(err, errlen, "the uniform split does not fit: %s",
					 c.why);
		break;
	}
	plan_sol_to_result(pb, &x, r);
	r->seconds = now() - t0;
	r->cpu_seconds = now_cpu() - c0;
	if (method != PLAN_DP)
		r->lower_bound = 0;
	return 0;
}
