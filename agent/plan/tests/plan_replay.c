// SPDX-License-Identifier: GPL-2.0
/*
 * plan_replay - solve one input with one method and replay the plan in
 * the discrete-event simulator (sim.c), for tools/plan/bench.sh:
 *
 *   plan_replay MODEL.json SITES.json METHOD
 *
 * prints "model_s predicted_s simulated_s wall_s cpu_s" on one line:
 * the closed form the method minimised, the 1F1B schedule worked out
 * (sched.c), the simulator's replay, and the solver's run time.
 */
#include <stdio.h>
#include <stdlib.h>

#include "json_strict.h"
#include "plan_int.h"
#include "sim.h"

static struct json_object *load(const char *path)
{
	char err[512];
	struct json_object *o = json_strict_load(path, err, sizeof(err));

	if (!o)
		fprintf(stderr, "plan_replay: %s\n", err);
	return o;
}

int main(int argc, char **argv)
{
	struct json_object *mj, *sj;
	struct plan_model *m;
	struct plan_sites *s;
	struct plan_problem *pb;
	struct plan_limits l;
	struct plan_result r;
	struct plan_sol x;
	struct sim_stats st;
	enum plan_method meth;
	char err[512];
	int rc = 1;

	if (argc != 4 || plan_method_parse(argv[3], &meth)) {
		fprintf(stderr, "usage: plan_replay MODEL SITES auto|dp|tabu|uniform\n");
		return 2;
	}
	if (!(mj = load(argv[1])) || !(sj = load(argv[2])))
		return 1;
	plan_limits_default(&l);
	if (!(m = plan_model_from_json(mj, err, sizeof(err))) ||
	    !(s = plan_sites_from_json(sj, err, sizeof(err))) ||
	    !(pb = plan_problem_new(m, s, &l, err, sizeof(err)))) {
		fprintf(stderr, "plan_replay: %s\n", err);
		return 1;
	}
	if (plan_solve(pb, meth, &r, err, sizeof(err))) {
		fprintf(stderr, "plan_replay: %s\n", err);
		goto out;
	}
	plan_result_to_sol(&r, &x);
	if (plan_simulate(pb, &x, &st)) {
		fprintf(stderr, "plan_replay: the simulation failed\n");
		goto out;
	}
	printf("%.9g %.9g %.9g %.6f %.6f\n", r.iteration, r.predicted,
	       st.iteration, r.seconds, r.cpu_seconds);
	rc = 0;
out:
	plan_problem_free(pb);
	json_object_put(mj);
	json_object_put(sj);
	return rc;
}
