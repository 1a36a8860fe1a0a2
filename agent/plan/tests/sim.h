/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sim.h - a discrete-event simulator of a plan's iteration, to check the
 * cost model against: every stage runs its 1F1B sequence, one operation
 * at a time; every transfer queues on its link (a WAN link per ordered
 * pair of sites, shared; a path of its own inside a site), is serialised
 * at the link's bandwidth and arrives a latency later; each stage
 * all-reduces its gradients after its last backward.
 */
#ifndef PLAN_SIM_H
#define PLAN_SIM_H

#include "plan_int.h"

struct sim_stats {
	double iteration;	/* last all-reduce done */
	double pipeline;	/* last backward done */
	long events;
};

int plan_simulate(const struct plan_problem *pb, const struct plan_sol *x,
		  struct sim_stats *st);

#endif
