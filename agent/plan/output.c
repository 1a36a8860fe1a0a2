// SPDX-License-Identifier: GPL-2.0
/*
 * output.c - a plan as JSON (split points, placement, the prediction and
 * its parts, the task graph the SMO submits) or as a table.  The format
 * is documented in Documentation/planner.md.
 */
#include <string.h>

#include "plan_int.h"

static struct json_object *jd(double v)
{
	return json_object_new_double(v);
}

static void add(struct json_object *o, const char *k, struct json_object *v)
{
	json_object_object_add(o, k, v);
}

/* GPU slots of each stage: stages on a site take consecutive GPUs. */
static void gpu_first(const struct plan_problem *pb, const struct plan_sol *x,
		      int *first)
{
	int used[PLAN_MAX_SITES] = { 0 }, s;

	for (s = 0; s < x->k; s++) {
		first[s] = used[x->site[s]] * pb->d;
		used[x->site[s]]++;
	}
}

static struct json_object *task_graph(const struct plan_problem *pb,
				      const struct plan_sol *x,
				      const struct plan_cost *c,
				      const struct plan_xfer *xf, int nx,
				      const int *g0)
{
	struct json_object *tg = json_object_new_object();
	struct json_object *tasks = json_object_new_array();
	struct json_object *flows = json_object_new_array();
	int M = pb->lim.micro_batches, s, i, y;
	char id[32], id2[32];

	for (s = 0; s < x->k; s++) {
		struct json_object *t = json_object_new_object();
		struct json_object *layers = json_object_new_array();
		struct json_object *gpus = json_object_new_array();

		snprintf(id, sizeof(id), "stage%d", s);
		add(t, "id", json_object_new_string(id));
		add(t, "site", json_object_new_string(pb->s->s[x->site[s]].name));
		for (i = 0; i < pb->d; i++)
			json_object_array_add(gpus, json_object_new_int(g0[s] + i));
		add(t, "gpus", gpus);
		for (y = x->cut[s]; y < x->cut[s + 1]; y++)
			json_object_array_add(layers,
				json_object_new_string(pb->m->l[y].name));
		add(t, "layers", layers);
		add(t, "memory_bytes_per_gpu", jd(c->memory[s]));
		add(t, "allreduce_bytes_per_gpu", jd(c->ar_bytes[s]));
		json_object_array_add(tasks, t);
	}
	for (i = 0; i < nx; i++) {
		int dir;

		for (dir = 0; dir < 2; dir++) {
			struct json_object *f = json_object_new_object();
			int a = dir ? xf[i].b : xf[i].a, b = dir ? xf[i].a : xf[i].b;

			snprintf(id, sizeof(id), "stage%d", a);
			snprintf(id2, sizeof(id2), "stage%d", b);
			add(f, "from", json_object_new_string(id));
			add(f, "to", json_object_new_string(id2));
			add(f, "src_site", json_object_new_string(pb->s->s[x->site[a]].name));
			add(f, "dst_site", json_object_new_string(pb->s->s[x->site[b]].name));
			add(f, "kind", json_object_new_string(dir ? "gradient" : "activation"));
			add(f, "wan", json_object_new_boolean(x->site[a] != x->site[b]));
			add(f, "bytes_per_microbatch", jd(xf[i].bytes));
			add(f, "bytes_per_iteration", jd(xf[i].bytes * M));
			/* the mean rate the link must carry: a demand for MPTE */
			add(f, "mean_gbps", jd(xf[i].bytes * M * 8 / c->T / 1e9));
			json_object_array_add(flows, f);
		}
	}
	add(tg, "tasks", tasks);
	add(tg, "flows", flows);
	return tg;
}

struct json_object *plan_result_json(const struct plan_problem *pb,
				     const struct plan_result *r,
				     const struct plan_result *baseline)
{
	struct json_object *o = json_object_new_object();
	struct json_object *stages = json_object_new_array();
	struct json_object *splits = json_object_new_array();
	struct json_object *xfers = json_object_new_array();
	struct json_object *it = json_object_new_object();
	struct json_object *sol = json_object_new_object();
	static struct plan_xfer xf[PLAN_MAX_STAGES * 8];
	struct plan_sol x;
	struct plan_cost c;
	int g0[PLAN_MAX_STAGES], s, i, nx, M = pb->lim.micro_batches;
	double busy = 0;

	plan_result_to_sol(r, &x);
	plan_cost_eval(pb, &x, &c);
	nx = plan_xfers(pb, &x, xf, sizeof(xf) / sizeof(*xf));
	gpu_first(pb, &x, g0);
	add(o, "model", json_object_new_string(pb->m->name));
	add(o, "method", json_object_new_string(plan_method_name(r->method)));
	add(o, "chain", json_object_new_boolean(pb->chain));
	add(o, "micro_batches", json_object_new_int(M));
	add(o, "gpus_per_stage", json_object_new_int(pb->d));
	for (s = 1; s < x.k; s++)
		json_object_array_add(splits,
			json_object_new_string(pb->m->l[x.cut[s]].name));
	add(o, "split_points", splits);
	for (s = 0; s < x.k; s++) {
		struct json_object *t = json_object_new_object();
		struct json_object *gpus = json_object_new_array();

		add(t, "stage", json_object_new_int(s));
		add(t, "site", json_object_new_string(pb->s->s[x.site[s]].name));
		for (i = 0; i < pb->d; i++)
			json_object_array_add(gpus, json_object_new_int(g0[s] + i));
		add(t, "gpus", gpus);
		add(t, "first_layer", json_object_new_string(pb->m->l[x.cut[s]].name));
		add(t, "last_layer", json_object_new_string(pb->m->l[x.cut[s + 1] - 1].name));
		add(t, "layers", json_object_new_int(x.cut[s + 1] - x.cut[s]));
		add(t, "forward_s", jd(c.F[s]));
		add(t, "backward_s", jd(c.B[s]));
		add(t, "in_flight", json_object_new_int(c.inflight[s]));
		add(t, "memory_bytes_per_gpu", jd(c.memory[s]));
		add(t, "allreduce_bytes_per_gpu", jd(c.ar_bytes[s]));
		add(t, "allreduce_s", jd(c.ar[s]));
		json_object_array_add(stages, t);
		busy += c.F[s] + c.B[s];
	}
	add(o, "stages", stages);
	for (i = 0; i < nx; i++) {
		struct json_object *t = json_object_new_object();

		add(t, "from_stage", json_object_new_int(xf[i].a));
		add(t, "to_stage", json_object_new_int(xf[i].b));
		add(t, "wan", json_object_new_boolean(x.site[xf[i].a] != x.site[xf[i].b]));
		add(t, "bytes_per_microbatch", jd(xf[i].bytes));
		add(t, "forward_s", jd(xf[i].fwd));
		add(t, "backward_s", jd(xf[i].bwd));
		json_object_array_add(xfers, t);
	}
	add(o, "transfers", xfers);
	add(it, "predicted_s", jd(r->predicted));
	add(it, "model_s", jd(r->iteration));
	add(it, "fill_s", jd(r->fill));
	add(it, "period_s", jd(r->period));
	add(it, "steady_s", jd(r->steady));
	add(it, "allreduce_s", jd(r->allreduce));
	add(it, "bottleneck", json_object_new_string(r->bottleneck));
	/* the share of GPU time the pipeline leaves idle */
	add(it, "bubble_fraction",
	    jd(1 - M * busy / (x.k * (r->iteration - r->allreduce))));
	add(o, "iteration", it);
	add(sol, "seconds", jd(r->seconds));
	add(sol, "cpu_seconds", jd(r->cpu_seconds));
	if (r->method == PLAN_DP) {
		add(sol, "dp_runs", json_object_new_int(r->dp_calls));
		add(sol, "lower_bound_s", jd(r->lower_bound));
	}
	if (r->method == PLAN_TABU)
		add(sol, "iterations", json_object_new_int(r->iterations));
	add(o, "solver", sol);
	if (baseline) {
		struct json_object *b = json_object_new_object();

		add(b, "method", json_object_new_string("uniform"));
		add(b, "predicted_s", isfinite(baseline->predicted) ?
		    jd(baseline->predicted) : NULL);
		add(b, "speedup", isfinite(baseline->predicted) ?
		    jd(baseline->predicted / r->predicted) : NULL);
		add(o, "baseline", b);
	}
	add(o, "task_graph", task_graph(pb, &x, &c, xf, nx, g0));
	return o;
}

void plan_result_print(const struct plan_problem *pb,
		       const struct plan_result *r,
		       const struct plan_result *baseline, FILE *f)
{
	struct plan_sol x;
	struct plan_cost c;
	int s;

	plan_result_to_sol(r, &x);
	plan_cost_eval(pb, &x, &c);
	fprintf(f, "model %s: %d layers%s, %d micro-batches, %d GPUs per stage, method %s\n",
		pb->m->name, pb->m->n, pb->chain ? "" : " (DAG)",
		pb->lim.micro_batches, pb->d, plan_method_name(r->method));
	fprintf(f, "%-5s %-12s %-6s %-24s %10s %10s %12s\n", "stage", "site",
		"layers", "first..last", "fwd ms", "bwd ms", "mem GB/GPU");
	for (s = 0; s < x.k; s++) {
		char span[64];

		snprintf(span, sizeof(span), "%s..%s", pb->m->l[x.cut[s]].name,
			 pb->m->l[x.cut[s + 1] - 1].name);
		fprintf(f, "%-5d %-12s %-6d %-24s %10.3f %10.3f %12.3f\n", s,
			pb->s->s[x.site[s]].name, x.cut[s + 1] - x.cut[s], span,
			c.F[s] * 1e3, c.B[s] * 1e3, c.memory[s] / 1e9);
	}
	fprintf(f, "predicted iteration %.6f s (1F1B schedule)\n", r->predicted);
	fprintf(f, "model %.6f s = fill %.6f + steady %.6f (%d x period %.6f, %s) + all-reduce %.6f\n",
		r->iteration, r->fill, r->steady, pb->lim.micro_batches - 1,
		r->period, r->bottleneck, r->allreduce);
	if (baseline && isfinite(baseline->predicted))
		fprintf(f, "uniform split %.6f s: %.2fx\n", baseline->predicted,
			baseline->predicted / r->predicted);
	fprintf(f, "solved in %.3f s (%.3f s CPU)\n", r->seconds, r->cpu_seconds);
}
