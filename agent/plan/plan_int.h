/* SPDX-License-Identifier: GPL-2.0 */
/*
 * plan_int.h - the planner's internal structures, shared by its files.
 * Units inside: FLOP, FLOP/s, bytes, bytes/s, seconds.
 */
#ifndef PLAN_INT_H
#define PLAN_INT_H

#include <math.h>
#include <stdarg.h>

#include "plan.h"

struct plan_layer {
	char *name;
	char *path;		/* where it was: "layers[3]" */
	double fwd, bwd;	/* FLOP per micro-batch */
	double param;		/* bytes of weights (= gradient bytes) */
	double act;		/* bytes of output activation per micro-batch */
	double mem;		/* resident bytes: weights, grads, optimiser */
	int nin;
	int *in;		/* input layers (indices, after renumbering) */
	char **in_names;	/* as written, resolved by the problem */
	int head;		/* -1 backbone, else index of its head */
};

struct plan_model {
	char *name;
	int n;
	struct plan_layer *l;
	int nheads;
	char **head_names;
};

struct plan_site {
	char *name;
	int gpus;
	double flops;		/* per GPU */
	double mem;		/* per GPU */
	double intra_bw;	/* between GPUs of the site */
};

struct plan_sites {
	int n;
	struct plan_site s[PLAN_MAX_SITES];
	double bw[PLAN_MAX_SITES][PLAN_MAX_SITES];	/* 0: no link */
	double lat[PLAN_MAX_SITES][PLAN_MAX_SITES];
};

struct plan_problem {
	struct plan_model *m;	/* layers in topological order */
	struct plan_sites *s;
	struct plan_limits lim;	/* pins copied */
	int chain;
	int d;			/* GPUs per stage */
	int cap[PLAN_MAX_SITES];	/* stages a site can host */
	int *pin;		/* per layer: site or -1 */
	/* prefix sums over the layer order, n + 1 entries */
	double *pf, *pb, *pp, *pm, *pa;
	/* pinned_other[site][i]: layers < i pinned to another site */
	int *pinned_other[PLAN_MAX_SITES];
};

/* A solution in the common form: cuts and sites. */
struct plan_sol {
	int k;
	int cut[PLAN_MAX_STAGES + 1];	/* cut[0] = 0 .. cut[k] = n */
	int site[PLAN_MAX_STAGES];
};

/* What the cost model says of a solution. */
struct plan_cost {
	int violations;		/* 0: feasible */
	char why[160];		/* the first violation */
	double T, fill, period, allreduce;
	char bottleneck[96];
	/* per stage */
	double F[PLAN_MAX_STAGES], B[PLAN_MAX_STAGES];
	double memory[PLAN_MAX_STAGES], ar[PLAN_MAX_STAGES];
	double ar_bytes[PLAN_MAX_STAGES];
	int inflight[PLAN_MAX_STAGES];
};

/* One transfer of activations from stage a to stage b (gradients back). */
struct plan_xfer {
	int a, b;
	double bytes;
	double fwd, bwd;	/* seconds, latency included */
};

int plan_fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void *plan_xcalloc(size_t n, size_t sz);
char *plan_xstrdup(const char *s);

/* cost.c */
void plan_cost_eval(const struct plan_problem *pb, const struct plan_sol *x,
		    struct plan_cost *c);
/* The transfers of x, at most max; returns their number. */
int plan_xfers(const struct plan_problem *pb, const struct plan_sol *x,
	       struct plan_xfer *xf, int max);
double plan_stage_sum(const double *prefix, const struct plan_sol *x, int s);
void plan_sol_to_result(const struct plan_problem *pb,
			const struct plan_sol *x, struct plan_result *r);
void plan_result_to_sol(const struct plan_result *r, struct plan_sol *x);

/* sched.c: the 1F1B schedule played out; INFINITY if c has violations */
double plan_schedule(const struct plan_problem *pb, const struct plan_sol *x,
		     const struct plan_cost *c);

/* dp.c, tabu.c, solve.c */
int plan_dp(struct plan_problem *pb, struct plan_sol *best, double *lb,
	    int *calls, char *err, size_t errlen);
int plan_tabu(struct plan_problem *pb, struct plan_sol *best, int *iters,
	      char *err, size_t errlen);
void plan_uniform(const struct plan_problem *pb, struct plan_sol *x);

#endif
