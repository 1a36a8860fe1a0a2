/* SPDX-License-Identifier: GPL-2.0 */
/*
 * plan.h - model segmentation and placement planner, public interface.
 *
 * A model (a chain or DAG of layers, optionally with business heads on a
 * shared backbone) is cut into pipeline stages; each stage goes to one
 * site (AIDC) on gpus_per_stage GPUs that split its micro-batches (data
 * parallel).  The cost model (cost.c, Documentation/planner.md) predicts
 * the iteration time of a 1F1B pipeline: compute, activation and gradient
 * transfers between stages (over the WAN when the sites differ), the
 * pipeline's fill and drain, a steady period set by the slowest stage,
 * link or round trip, and the data-parallel all-reduce after the flush.
 *
 * Usage:
 *	m = plan_model_from_json(mj, err, len);
 *	s = plan_sites_from_json(sj, err, len);
 *	plan_limits_default(&lim);  plan_limits_from_json(lj, &lim, ...);
 *	pb = plan_problem_new(m, s, &lim, err, len);   (checks it all)
 * or all four steps at once, with plan_problem_load().
 *	plan_solve(pb, PLAN_DP, &res, err, len);
 *	j = plan_result_json(pb, &res);
 */
#ifndef PLAN_H
#define PLAN_H

#include <stddef.h>
#include <stdio.h>
#include <json.h>

#define PLAN_MAX_SITES	16
#define PLAN_MAX_STAGES	256

struct plan_model;
struct plan_sites;
struct plan_problem;

enum plan_method {
	PLAN_AUTO,	/* dp for a chain, tabu otherwise */
	PLAN_DP,	/* exact, chains only */
	PLAN_TABU,
	PLAN_UNIFORM,	/* Megatron-style: equal layer counts, sites in order */
};

/* Neighbourhood moves of the tabu search (a bit mask). */
enum {
	PLAN_MOVE_SHIFT = 1 << 0,	/* move one cut by a step */
	PLAN_MOVE_MERGE = 1 << 1,	/* join two neighbouring stages */
	PLAN_MOVE_SPLIT = 1 << 2,	/* cut a stage in two */
	PLAN_MOVE_SITE = 1 << 3,	/* move a stage to another site */
	PLAN_MOVE_ALL = (1 << 4) - 1,
};

struct plan_tabu_opts {
	int tenure;		/* iterations a reversed move stays tabu */
	int iterations;		/* total iterations */
	int stall;		/* stop after this many without improvement */
	unsigned int moves;	/* PLAN_MOVE_* */
	unsigned int seed;	/* sampling of large neighbourhoods */
};

struct plan_limits {
	int stages;		/* at most this many stages */
	int gpus_per_stage;	/* data-parallel width; 0: chosen */
	int max_layers_per_stage;	/* 0: no limit */
	int micro_batches;
	int npins;
	struct plan_pin {
		char *layer;
		char *site;
	} *pins;
	enum plan_method method;
	struct plan_tabu_opts tabu;
};

/* One stage of a plan. */
struct plan_stage {
	int site;
	int gpus;
	int first, count;	/* chains: layers [first, first + count) */
};

/*
 * A plan and its predicted cost.  Stage s holds the layers
 * [first, first + count) of the problem's layer order: the input order
 * for a chain, a topological order for a DAG (plan_layer_name()).
 */
struct plan_result {
	enum plan_method method;
	int nstages;
	struct plan_stage stage[PLAN_MAX_STAGES];
	/* prediction, seconds */
	double predicted;	/* the 1F1B schedule worked out (sched.c) */
	/* the closed form the methods minimise (cost.c): within 12 % of it */
	double iteration;	/* fill + steady + allreduce */
	double fill;		/* one micro-batch forward and back: L0 */
	double period;		/* steady-state time per micro-batch: tau */
	double steady;		/* (M - 1) * period */
	double allreduce;	/* slowest stage's all-reduce after the flush */
	char bottleneck[96];	/* what sets the period */
	double seconds;		/* solver run time, wall clock */
	double cpu_seconds;	/* and the process's CPU time it took */
	/* DP only: certified lower bound and the DP calls it took */
	double lower_bound;
	int dp_calls;
	int iterations;		/* tabu */
};

/* Parsing: NULL and "field: problem" in err on error. */
struct plan_model *plan_model_from_json(struct json_object *o, char *err,
					size_t errlen);
struct plan_sites *plan_sites_from_json(struct json_object *o, char *err,
					size_t errlen);
void plan_limits_default(struct plan_limits *l);
int plan_limits_from_json(struct json_object *o, struct plan_limits *l,
			  char *err, size_t errlen);
void plan_limits_clear(struct plan_limits *l);
int plan_limits_add_pin(struct plan_limits *l, const char *layer,
			const char *site);
/* "shift,merge,split,site" or "all"; -1 on an unknown word. */
int plan_moves_parse(const char *s, unsigned int *moves);
/* "auto", "dp", "tabu", "uniform"; -1 otherwise. */
int plan_method_parse(const char *s, enum plan_method *m);
void plan_model_free(struct plan_model *m);
void plan_sites_free(struct plan_sites *s);

/*
 * Bind the three together: names resolved, pins checked, every layer
 * fitting somewhere, the default data-parallel width chosen.  Takes
 * ownership of m and s.
 */
struct plan_problem *plan_problem_new(struct plan_model *m,
				      struct plan_sites *s,
				      const struct plan_limits *l,
				      char *err, size_t errlen);
void plan_problem_free(struct plan_problem *pb);

/*
 * The documents of one problem, as json_strict_load() read them, each
 * with the name its errors begin with (the file's path).
 */
struct plan_docs {
	struct json_object *model, *sites, *limits;	/* limits: NULL, none */
	const char *model_name, *sites_name, *limits_name;
};

/* Changes the limits after the document (options win over --limits). */
typedef int plan_adjust_fn(struct plan_limits *lim, void *arg, char *err,
			   size_t errlen);

/*
 * Model and sites parsed, the limits document read onto *lim (which the
 * caller defaulted and clears), adjust(lim, arg) if not NULL, then
 * plan_problem_new(). NULL and "NAME: field: problem", or the adjuster's
 * or plan_problem_new()'s error, in err.
 */
struct plan_problem *plan_problem_load(const struct plan_docs *d,
				       struct plan_limits *lim,
				       plan_adjust_fn *adjust, void *arg,
				       char *err, size_t errlen);
int plan_problem_is_chain(const struct plan_problem *pb);
int plan_problem_layers(const struct plan_problem *pb);
/* Layer i of the problem's order. */
const char *plan_layer_name(const struct plan_problem *pb, int i);

/* 0, or -1 with the reason (no feasible plan, dp on a DAG). */
int plan_solve(struct plan_problem *pb, enum plan_method method,
	       struct plan_result *r, char *err, size_t errlen);

struct json_object *plan_result_json(const struct plan_problem *pb,
				     const struct plan_result *r,
				     const struct plan_result *baseline);
void plan_result_print(const struct plan_problem *pb,
		       const struct plan_result *r,
		       const struct plan_result *baseline, FILE *f);

const char *plan_method_name(enum plan_method m);

#endif
