/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mpte.h - multipath traffic engineering (MPTE) solver, public interface.
 *
 * The SMO hands us a topology and a set of communication demands; we give
 * back, per demand, a constrained DAG with load-balancing weights at each
 * junction, the flow on every link, at most max_paths weighted SRv6 segment
 * lists and a backup, or the reason the demand was not admitted.  Globally we
 * minimise the maximum link utilisation of what is admitted, respect
 * capacity, priorities and preemption, and re-solve incrementally when a
 * link fails or an elastic demand changes its bandwidth.
 *
 * Usage:
 *	topo = mpte_topology_from_json(obj, err, sizeof(err));
 *	dset = mpte_demands_from_json(obj, topo, err, sizeof(err));
 *	ctx  = mpte_new(topo, dset, &opts);
 *	mpte_solve(ctx);
 *	mpte_fail_link(ctx, "L1-S1");           (optional, incremental:
 *	mpte_recover_link, mpte_set_bandwidth, mpte_remove_demand,
 *	mpte_add_demand likewise)
 *	json = mpte_result_json(ctx);
 *	mpte_free(ctx); mpte_demands_free(dset); mpte_topology_free(topo);
 */
#ifndef MPTE_H
#define MPTE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <json.h>

#define MPTE_PRIORITIES		8	/* setup/hold priority 0 (best) .. 7 */
#define MPTE_DEFAULT_MAX_PATHS	8	/* a dmsc tunnel holds 8 segment lists */
#define MPTE_DEFAULT_MAX_SIDS	16	/* and 16 SIDs in a list (DMSC_MAX_SEGS) */
#define MPTE_DEFAULT_MAX_STRETCH 0	/* no hop bound unless asked: 2 is
					 * sane but doubles wan1000's CPU */

struct mpte_topology;
struct mpte_demand_set;
struct mpte_ctx;

enum mpte_protection {
	MPTE_PROTECT_NONE,
	MPTE_PROTECT_LINK,
	MPTE_PROTECT_NODE,
	MPTE_PROTECT_SRLG,
};

enum mpte_status {
	MPTE_PENDING,		/* not solved yet */
	MPTE_ADMITTED,
	MPTE_REJECTED,		/* never admitted: no path, or no capacity */
	MPTE_PREEMPTED,		/* was admitted (or existing), pushed out */
};

struct mpte_options {
	int admission;		/* 1: drop/shrink/preempt until capacity holds;
				 * 0: route everything, utilisation may pass 1 */
	int max_iterations;	/* cap on optimisation sweeps per solve */
	double tolerance;	/* stop when max-util <= lower bound * (1+tol) */
	double time_limit;	/* seconds per optimisation run, 0 = none */
	int ecmp_baseline;	/* also compute the ECMP max utilisation */
	int backups;		/* compute protection backups (default 1) */
	int max_sids;		/* SIDs in a segment list, 1..DMSC_MAX_SEGS;
				 * 0: what the topology and demands say */
	double max_stretch;	/* for demands without their own: >= 1 that,
				 * < 0 no bound, 0 the topology's */
};

void mpte_options_default(struct mpte_options *o);

/*
 * The documents are read by agent/lib/json_strict.h (json_strict_load):
 * RFC 8259 only, every number finite, no key twice; an error is
 * "NAME:LINE: path: problem".
 */

/* Parsing.  On error return NULL and write "field: problem" into err. */
struct mpte_topology *mpte_topology_from_json(struct json_object *obj,
					      char *err, size_t errlen);
struct mpte_demand_set *mpte_demands_from_json(struct json_object *obj,
					       const struct mpte_topology *t,
					       char *err, size_t errlen);
void mpte_topology_free(struct mpte_topology *t);
void mpte_demands_free(struct mpte_demand_set *d);

/* Solving. */
struct mpte_ctx *mpte_new(const struct mpte_topology *t,
			  const struct mpte_demand_set *d,
			  const struct mpte_options *o);
void mpte_free(struct mpte_ctx *ctx);
int mpte_solve(struct mpte_ctx *ctx);

/*
 * Incremental re-solve.  Both return 0, or -1 with a message in err (unknown
 * link or demand, bandwidth outside the elastic range).  Only the demands
 * that must move are re-optimised; the result records them as "touched".
 */
int mpte_fail_link(struct mpte_ctx *ctx, const char *link, char *err,
		   size_t errlen);
int mpte_set_bandwidth(struct mpte_ctx *ctx, const char *demand, double bw,
		       char *err, size_t errlen);
/*
 * The SMO's other events (incr.c), same contract.  A withdrawn demand
 * keeps its place in the set: status "rejected", reason "withdrawn", no
 * load; only a withdrawn demand can be added (back), with bandwidth bw
 * (<= 0: the one in its set).  New demands are added to the set and
 * withdrawn before mpte_solve.  A recovery offers again what failures
 * pushed out and re-balances the demands on the busiest links.
 */
int mpte_remove_demand(struct mpte_ctx *ctx, const char *demand, char *err,
		       size_t errlen);
int mpte_add_demand(struct mpte_ctx *ctx, const char *demand, double bw,
		    char *err, size_t errlen);
int mpte_recover_link(struct mpte_ctx *ctx, const char *link, char *err,
		      size_t errlen);

/* Results. */
struct json_object *mpte_result_json(struct mpte_ctx *ctx);
/* The same, streamed (one demand per line), for large results. */
void mpte_result_print(struct mpte_ctx *ctx, FILE *f);
void mpte_print_summary(struct mpte_ctx *ctx, FILE *f);

/* Scalar accessors, for tests and the benchmark. */
double mpte_max_utilisation(const struct mpte_ctx *ctx);
double mpte_lower_bound(const struct mpte_ctx *ctx);
double mpte_ecmp_max_utilisation(const struct mpte_ctx *ctx);
double mpte_solve_seconds(const struct mpte_ctx *ctx);
enum mpte_status mpte_demand_status(const struct mpte_ctx *ctx,
				    const char *demand);
double mpte_demand_admitted(const struct mpte_ctx *ctx, const char *demand);

#endif
