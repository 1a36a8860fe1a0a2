// SPDX-License-Identifier: GPL-2.0
/*
 * replan_bench.c - how long an incremental re-plan takes as a library
 * call (what the SMO does on a fault), for tools/mpte/bench.py; not part
 * of make check.
 *
 *   mpte-replan-bench TOPOLOGY DEMANDS [N] [SEED]
 *
 * Solves cold (no admission, no backups, as the benchmark's table), then
 * fails N links one after the other, chosen at random among the links
 * that carry flow, and times each mpte_fail_link(); then resizes N elastic
 * demands with mpte_set_bandwidth().  Prints each kind's median, 90th percentile and worst in ms,
 * and how many demands each event touched.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpte_int.h"
#include "json_strict.h"

/* CPU seconds of this process: the machine is shared, wall time is not
 * only ours */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *what, double *ms, double *cpu, int *touched,
		   int n)
{
	long tsum = 0;
	int i;

	if (!n) {
		printf("%s: none\n", what);
		return;
	}
	for (i = 0; i < n; i++)
		tsum += touched[i];
	qsort(ms, n, sizeof(double), cmp_dbl);
	qsort(cpu, n, sizeof(double), cmp_dbl);
	printf("%s: %d events, re-plan ms wall median %.2f p90 %.2f max %.2f, CPU median %.2f p90 %.2f max %.2f; demands touched per event %.1f on average\n",
	       what, n, ms[n / 2], ms[(n * 9) / 10], ms[n - 1],
	       cpu[n / 2], cpu[(n * 9) / 10], cpu[n - 1], (double)tsum / n);
}

static int count_touched(const struct mpte_ctx *ctx)
{
	int di, n = 0;

	for (di = 0; di < ctx->ds->n; di++)
		n += ctx->st[di].touched != 0;
	return n;
}

int main(int argc, char **argv)
{
	char err[512];
	struct json_object *tj, *dj;
	struct mpte_topology *t;
	struct mpte_demand_set *ds;
	struct mpte_options o;
	struct mpte_ctx *ctx;
	int n = argc > 3 ? atoi(argv[3]) : 20, i, k, ne = 0;
	double *ms, *cpu, t0, c0, cold;
	int *touched;

	if (argc < 3) {
		fprintf(stderr, "usage: mpte-replan-bench TOPOLOGY DEMANDS [N] [SEED]\n");
		return 2;
	}
	srand(argc > 4 ? atoi(argv[4]) : 1);
	tj = json_strict_load(argv[1], err, sizeof(err));
	dj = tj ? json_strict_load(argv[2], err, sizeof(err)) : NULL;
	if (!tj || !dj) {
		fprintf(stderr, "mpte-replan-bench: %s\n", err);
		return 1;
	}
	t = mpte_topology_from_json(tj, err, sizeof(err));
	ds = t ? mpte_demands_from_json(dj, t, err, sizeof(err)) : NULL;
	if (!t || !ds) {
		fprintf(stderr, "mpte-replan-bench: %s\n", err);
		return 1;
	}
	mpte_options_default(&o);
	o.admission = 0;
	o.backups = 0;
	ctx = mpte_new(t, ds, &o);
	t0 = mpte_now();
	mpte_solve(ctx);
	cold = mpte_now() - t0;
	printf("cold solve %.3f s, max utilisation %.6f\n", cold,
	       mpte_max_utilisation(ctx));
	ms = mpte_xcalloc(n, sizeof(double));
	cpu = mpte_xcalloc(n, sizeof(double));
	touched = mpte_xcalloc(n, sizeof(int));
	for (i = 0; i < n; i++) {
		int l, tries;

		/* a link that carries flow: failing an idle one is free */
		for (tries = 0; tries < 1000; tries++) {
			l = rand() % t->nlinks;
			if (!ctx->failed[t->links[l].arc[0]] &&
			    ctx->load[t->links[l].arc[0]] > 0)
				break;
		}
		t0 = mpte_now();
		c0 = cpu_now();
		if (mpte_fail_link(ctx, t->links[l].id, err, sizeof(err))) {
			fprintf(stderr, "mpte-replan-bench: %s\n", err);
			continue;
		}
		ms[ne] = (mpte_now() - t0) * 1e3;
		cpu[ne] = (cpu_now() - c0) * 1e3;
		touched[ne++] = count_touched(ctx);
	}
	report("link failure", ms, cpu, touched, ne);
	printf("after %d failures: max utilisation %.6f\n", ne,
	       mpte_max_utilisation(ctx));
	ne = 0;
	for (i = 0, k = 0; i < n && k < 100 * n; k++) {
		int di = rand() % ds->n;

		if (!ds->d[di].elastic || ctx->st[di].status != MPTE_ADMITTED)
			continue;
		t0 = mpte_now();
		c0 = cpu_now();
		if (mpte_set_bandwidth(ctx, ds->d[di].id,
				       ds->d[di].bw_min +
				       (ds->d[di].bw_max - ds->d[di].bw_min) *
				       (rand() % 1000) / 999.0, err, sizeof(err))) {
			fprintf(stderr, "mpte-replan-bench: %s\n", err);
			continue;
		}
		ms[ne] = (mpte_now() - t0) * 1e3;
		cpu[ne] = (cpu_now() - c0) * 1e3;
		touched[ne++] = count_touched(ctx);
		i++;
	}
	report("demand resized", ms, cpu, touched, ne);
	free(ms);
	free(cpu);
	free(touched);
	mpte_free(ctx);
	mpte_demands_free(ds);
	mpte_topology_free(t);
	json_object_put(tj);
	json_object_put(dj);
	return 0;
}
