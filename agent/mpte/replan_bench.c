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
 * that carry flow, and times each mpte_fail_link(); recovers them
 * (mpte_recover_link); removes N admitted demands and adds them back
 * (mpte_remove_demand, mpte_add_demand); resizes N elastic demands
 * (mpte_set_bandwidth).  Prints each kind's median, 90th percentile and
 * worst in ms (wall and CPU), and how many other demands' paths changed.
 */
#include <stdint.h>
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

/* a hash of each demand's paths (arcs and flows): who moved */
static void path_hashes(const struct mpte_ctx *ctx, uint64_t *h)
{
	int di, p, i;

	for (di = 0; di < ctx->ds->n; di++) {
		const struct mpte_dstate *s = &ctx->st[di];
		uint64_t x = 1469598103934665603ULL ^ (uint64_t)s->status;

		for (p = 0; p < s->npaths; p++) {
			uint64_t fb;

			for (i = 0; i < s->paths[p].len; i++)
				x = (x ^ (uint64_t)s->paths[p].arcs[i]) *
				    1099511628211ULL;
			memcpy(&fb, &s->paths[p].flow, sizeof(fb));
			x = (x ^ fb) * 1099511628211ULL;
		}
		h[di] = x;
	}
}

static uint64_t *hb, *ha;

/* demands whose paths changed, the event's own (skip) aside */
static int count_moved(const struct mpte_ctx *ctx, int skip)
{
	int di, n = 0;

	path_hashes(ctx, ha);
	for (di = 0; di < ctx->ds->n; di++)
		n += di != skip && ha[di] != hb[di];
	return n;
}

struct series {
	double *ms, *cpu;
	int *moved, n;
	double t0, c0;
};

static void start(struct mpte_ctx *ctx, struct series *x)
{
	path_hashes(ctx, hb);
	x->t0 = mpte_now();
	x->c0 = cpu_now();
}

static void stop(struct mpte_ctx *ctx, struct series *x, int skip)
{
	x->ms[x->n] = (mpte_now() - x->t0) * 1e3;
	x->cpu[x->n] = (cpu_now() - x->c0) * 1e3;
	x->moved[x->n++] = count_moved(ctx, skip);
}

static void report(const char *what, struct series *x)
{
	long msum = 0;
	int i, n = x->n, mmax = 0;

	if (!n) {
		printf("%s: none\n", what);
		return;
	}
	for (i = 0; i < n; i++) {
		msum += x->moved[i];
		if (x->moved[i] > mmax)
			mmax = x->moved[i];
	}
	qsort(x->ms, n, sizeof(double), cmp_dbl);
	qsort(x->cpu, n, sizeof(double), cmp_dbl);
	printf("%s: %d events, re-plan ms wall median %.2f p90 %.2f max %.2f, CPU median %.2f p90 %.2f max %.2f; other demands moved per event %.1f on average, %d at most\n",
	       what, n, x->ms[n / 2], x->ms[(n * 9) / 10], x->ms[n - 1],
	       x->cpu[n / 2], x->cpu[(n * 9) / 10], x->cpu[n - 1],
	       (double)msum / n, mmax);
	x->n = 0;
}

int main(int argc, char **argv)
{
	char err[512];
	struct json_object *tj, *dj;
	struct mpte_topology *t;
	struct mpte_demand_set *ds;
	struct mpte_options o;
	struct mpte_ctx *ctx;
	int n = argc > 3 ? atoi(argv[3]) : 20, i, k, nl = 0, ng = 0;
	int *links, *gone;
	struct series x;
	double t0, cold, cold_u;

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
	cold_u = mpte_max_utilisation(ctx);
	printf("cold solve %.3f s, max utilisation %.6f\n", cold, cold_u);
	x.ms = mpte_xcalloc(n, sizeof(double));
	x.cpu = mpte_xcalloc(n, sizeof(double));
	x.moved = mpte_xcalloc(n, sizeof(int));
	x.n = 0;
	hb = mpte_xcalloc(ds->n, sizeof(*hb));
	ha = mpte_xcalloc(ds->n, sizeof(*ha));
	links = mpte_xcalloc(n, sizeof(int));
	gone = mpte_xcalloc(n, sizeof(int));
	for (i = 0; i < n; i++) {
		int l, tries;

		/* a link that carries flow: failing an idle one is free */
		for (tries = 0; tries < 1000; tries++) {
			l = rand() % t->nlinks;
			if (!ctx->failed[t->links[l].arc[0]] &&
			    ctx->load[t->links[l].arc[0]] > 0)
				break;
		}
		start(ctx, &x);
		if (mpte_fail_link(ctx, t->links[l].id, err, sizeof(err))) {
			fprintf(stderr, "mpte-replan-bench: %s\n", err);
			continue;
		}
		stop(ctx, &x, -1);
		links[nl++] = l;
	}
	report("link failure", &x);
	printf("after %d failures: max utilisation %.6f\n", nl,
	       mpte_max_utilisation(ctx));
	for (i = 0; i < nl; i++) {
		start(ctx, &x);
		if (mpte_recover_link(ctx, t->links[links[i]].id, err,
				      sizeof(err))) {
			fprintf(stderr, "mpte-replan-bench: %s\n", err);
			continue;
		}
		stop(ctx, &x, -1);
	}
	report("link recovery", &x);
	printf("after %d recoveries: max utilisation %.6f (cold %.6f)\n", nl,
	       mpte_max_utilisation(ctx), cold_u);
	for (i = 0, k = 0; i < n && k < 100 * n; k++) {
		int di = rand() % ds->n;

		if (ctx->st[di].status != MPTE_ADMITTED)
			continue;
		start(ctx, &x);
		if (mpte_remove_demand(ctx, ds->d[di].id, err, sizeof(err))) {
			fprintf(stderr, "mpte-replan-bench: %s\n", err);
			continue;
		}
		stop(ctx, &x, di);
		gone[ng++] = di;
		i++;
	}
	report("demand removed", &x);
	for (i = 0; i < ng; i++) {
		start(ctx, &x);
		if (mpte_add_demand(ctx, ds->d[gone[i]].id, 0, err,
				    sizeof(err))) {
			fprintf(stderr, "mpte-replan-bench: %s\n", err);
			continue;
		}
		stop(ctx, &x, gone[i]);
	}
	report("demand added", &x);
	for (i = 0, k = 0; i < n && k < 100 * n; k++) {
		int di = rand() % ds->n;

		if (!ds->d[di].elastic || ctx->st[di].status != MPTE_ADMITTED)
			continue;
		start(ctx, &x);
		if (mpte_set_bandwidth(ctx, ds->d[di].id,
				       ds->d[di].bw_min +
				       (ds->d[di].bw_max - ds->d[di].bw_min) *
				       (rand() % 1000) / 999.0, err, sizeof(err))) {
			fprintf(stderr, "mpte-replan-bench: %s\n", err);
			continue;
		}
		stop(ctx, &x, di);
		i++;
	}
	report("demand resized", &x);
	printf("after all events: max utilisation %.6f (cold %.6f, ratio %.4f)\n",
	       mpte_max_utilisation(ctx), cold_u,
	       mpte_max_utilisation(ctx) / cold_u);
	free(x.ms);
	free(x.cpu);
	free(x.moved);
	free(hb);
	free(ha);
	free(links);
	free(gone);
	mpte_free(ctx);
	mpte_demands_free(ds);
	mpte_topology_free(t);
	json_object_put(tj);
	json_object_put(dj);
	return 0;
}
