// SPDX-License-Identifier: GPL-2.0
/*
 * test_plan.c - the planner's unit tests, KTAP: bad input named by field,
 * the cost model against numbers worked out by hand, the DP against
 * brute force, tabu against the DP, the uniform baseline, the discrete-
 * event simulator against the prediction (5 %), and the CLI.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json_strict.h"
#include "../../mpte/tests/ktap.h"
#include "plan_cli.h"
#include "plan_int.h"
#include "sim.h"

static struct json_object *J(const char *text)
{
	char err[256];
	struct json_object *o = json_strict_parse(text, strlen(text),
						  &JSON_STRICT_FILE("t"), err,
						  sizeof(err));

	if (!o)
		fprintf(stderr, "# bad test JSON: %s\n", err);
	return o;
}

/*
 * Build a problem from three JSON texts; NULL and err on failure.  Limits
 * may be NULL.
 */
static struct plan_problem *mk(const char *model, const char *sites,
			       const char *limits, char *err, size_t len)
{
	struct json_object *mj = J(model), *sj = J(sites);
	struct json_object *lj = limits ? J(limits) : NULL;
	struct plan_problem *pb = NULL;
	struct plan_limits l;

	plan_limits_default(&l);
	err[0] = 0;
	if (!mj || !sj || (limits && !lj)) {
		snprintf(err, len, "json");
		goto out;
	}
	pb = plan_problem_load(&(struct plan_docs){
		.model = mj, .sites = sj, .limits = lj,
		.model_name = "model", .sites_name = "sites",
		.limits_name = "limits",
	}, &l, NULL, NULL, err, len);
out:
	plan_limits_clear(&l);
	if (mj)
		json_object_put(mj);
	if (sj)
		json_object_put(sj);
	if (lj)
		json_object_put(lj);
	return pb;
}

#define SITES2 "{\"sites\":[{\"name\":\"a\",\"gpus\":2,\"tflops\":1,\"gpu_memory_bytes\":1e9,\"intra_gbps\":8}," \
	"{\"name\":\"b\",\"gpus\":2,\"tflops\":1,\"gpu_memory_bytes\":1e9,\"intra_gbps\":8}]," \
	"\"wan_gbps\":[[0,0.8],[0.8,0]],\"wan_latency_ms\":[[0,10],[10,0]]}"
#define LAYER(n, extra) "{\"name\":\"" n "\",\"forward_gflop\":1000,\"backward_gflop\":2000," \
	"\"param_bytes\":1e6,\"activation_bytes\":1e7,\"memory_bytes\":1e6" extra "}"
#define MODEL4 "{\"layers\":[" LAYER("l0", "") "," LAYER("l1", "") "," LAYER("l2", "") "," LAYER("l3", "") "]}"

/* Each bad input is refused with the field named in the message. */
static void test_bad_input(void)
{
	static const struct { const char *model, *sites, *limits, *want; } c[] = {
		{ "{\"layers\":[" LAYER("l0", ",\"colour\":1") "]}", SITES2, NULL,
		  "layers[0]: unknown key \"colour\"" },
		{ "{\"layers\":[{\"name\":\"l0\",\"forward_gflop\":1,\"backward_gflop\":1,\"activation_bytes\":-5}]}",
		  SITES2, NULL, "layers[0].activation_bytes: negative" },
		{ "{\"layers\":[" LAYER("l0", ",\"inputs\":[\"l1\"]") "," LAYER("l1", "") "]}",
		  SITES2, NULL, "inputs: cycle: l" },
		{ "{\"layers\":[" LAYER("l0", "") "," LAYER("l1", ",\"inputs\":[\"zz\"]") "]}",
		  SITES2, NULL, "layers[1].inputs[0]: no layer \"zz\"" },
		{ "{\"layers\":[" LAYER("l0", "") "," LAYER("l0", "") "]}", SITES2, NULL,
		  "layers[1].name: \"l0\" repeats layers[0]" },
		{ "{\"layers\":[{\"name\":\"big\",\"forward_gflop\":1,\"backward_gflop\":1,\"activation_bytes\":1,\"memory_bytes\":5e9}]}",
		  SITES2, NULL, "layers[0].memory_bytes: the layer \"big\" needs" },
		{ MODEL4, "{\"sites\":[{\"name\":\"a\",\"gpus\":0,\"tflops\":1,\"gpu_memory_bytes\":1,\"intra_gbps\":1}]}",
		  NULL, "sites[0].gpus: 0 is out of range" },
		{ MODEL4, "{\"sites\":[{\"name\":\"a\",\"gpus\":1,\"tflops\":1,\"gpu_memory_bytes\":1e9,\"intra_gbps\":1},{\"name\":\"b\",\"gpus\":1,\"tflops\":1,\"gpu_memory_bytes\":1e9,\"intra_gbps\":1}],\"wan_gbps\":[[0,1]]}",
		  NULL, "wan_gbps: expected 2 rows" },
		{ MODEL4, SITES2, "{\"pinned\":{\"l9\":\"a\"}}", "pinned.l9: no layer \"l9\"" },
		{ MODEL4, SITES2, "{\"pinned\":{\"l1\":\"mars\"}}", "pinned.l1: no site \"mars\"" },
		{ MODEL4, SITES2, "{\"stages\":0}", "stages: 0 is out of range" },
		{ MODEL4, SITES2, "{\"tabu\":{\"moves\":[\"jump\"]}}", "tabu.moves[0]: not one of" },
		{ MODEL4, SITES2, "{\"gpus_per_stage\":4}", "gpus_per_stage: 4 is more GPUs" },
	};
	size_t i;
	char err[512];

	for (i = 0; i < sizeof(c) / sizeof(*c); i++) {
		struct plan_problem *pb = mk(c[i].model, c[i].sites, c[i].limits,
					     err, sizeof(err));
		char name[96];

		snprintf(name, sizeof(name), "bad input %zu: %s", i, c[i].want);
		if (pb)
			ktap_fail("accepted");
		else if (!strstr(err, c[i].want))
			ktap_fail("said \"%s\"", err);
		ktap_result(KTAP_FAILED(), name);
		plan_problem_free(pb);
	}
	/* the strict reader refuses what json-c takes */
	{
		char e2[256];
		const char *nan = "{\"layers\":[{\"name\":\"l\",\"forward_gflop\":NaN}]}";
		const char *dup = "{\"layers\":[],\"layers\":[]}";
		int ok = !json_strict_parse(nan, strlen(nan), &JSON_STRICT_FILE("m"),
					    e2, sizeof(e2)) &&
			 strstr(e2, "layers[0].forward_gflop: NaN");

		ok = ok && !json_strict_parse(dup, strlen(dup), &JSON_STRICT_FILE("m"),
					      e2, sizeof(e2)) &&
		     strstr(e2, "duplicate key \"layers\"");
		if (!ok)
			ktap_fail("said \"%s\"", e2);
		ktap_result(!ok, "NaN and a duplicate key are refused, named");
	}
}

/*
 * Two stages by hand.  4 layers of 1 TFLOP forward, 2 back; 1 GPU per
 * stage at 1 TFLOP/s: F = 2 s, B = 4 s per stage of two layers.  The
 * activation (1e7 B) over the WAN at 0.8 Gb/s = 1e8 B/s: 0.1 s + 10 ms
 * each way.  fill = 2 * 6 + 2 * 0.11 = 12.22; period = max(6, 0.1,
 * 12.22 / 2 (stage 0 has 2 in flight), 6 / 1) = 6.11; M = 4:
 * T = 12.22 + 3 * 6.11 = 30.55, no all-reduce with one GPU.
 */
static void test_cost_by_hand(void)
{
	char err[512];
	struct plan_problem *pb = mk(MODEL4, SITES2,
		"{\"micro_batches\":4,\"gpus_per_stage\":1,\"stages\":2}", err,
		sizeof(err));
	struct plan_sol x = { .k = 2, .cut = { 0, 2, 4 }, .site = { 0, 1 } };
	struct plan_cost c;
	struct sim_stats st;
	double sched;

	CHECK(pb, "problem: %s", err);
	plan_cost_eval(pb, &x, &c);
	CHECK(!c.violations, "violation: %s", c.why);
	CHECK(fabs(c.fill - 12.22) < 1e-9, "fill %.9g, want 12.22", c.fill);
	CHECK(fabs(c.period - 6.11) < 1e-9, "period %.9g, want 6.11", c.period);
	CHECK(fabs(c.T - 30.55) < 1e-9, "T %.9g, want 30.55", c.T);
	CHECK(strstr(c.bottleneck, "stage 0 round trip"), "bottleneck %s",
	      c.bottleneck);
	/*
	 * The simulator, by events (traced by hand): stage 0's backwards end
	 * at 12.22, 18.22, 24.44, 30.44; the loop bound overestimates the
	 * period by 0.04 s here (0.4 %).
	 */
	CHECK(!plan_simulate(pb, &x, &st), "simulation failed");
	CHECK(fabs(st.iteration - 30.44) < 1e-9, "simulated %.9g", st.iteration);
	/* the schedule worked out op by op lands where the trace does */
	sched = plan_schedule(pb, &x, &c);
	CHECK(fabs(sched - 30.44) < 1e-9, "schedule %.9g, want 30.44", sched);
out:
	ktap_result(KTAP_FAILED(), "cost model: two stages over the WAN, by hand");
	plan_problem_free(pb);
}

/* Two GPUs per stage: the ring all-reduce of 2 MB over 2 GPUs at 1 GB/s. */
static void test_allreduce_by_hand(void)
{
	char err[512];
	struct plan_problem *pb = mk(MODEL4, SITES2,
		"{\"micro_batches\":1,\"gpus_per_stage\":2,\"stages\":1}", err,
		sizeof(err));
	struct plan_sol x = { .k = 1, .cut = { 0, 4 }, .site = { 1 } };
	struct plan_cost c;

	CHECK(pb, "problem: %s", err);
	plan_cost_eval(pb, &x, &c);
	CHECK(!c.violations, "violation: %s", c.why);
	/* 4e6 param bytes * 2 (d-1)/d = 4e6 bytes at 1e9 B/s = 4 ms;
	 * compute 4 * 3 TFLOP / 2 TFLOP/s = 6 s */
	CHECK(fabs(c.ar_bytes[0] - 4e6) < 1e-3, "ar bytes %g", c.ar_bytes[0]);
	CHECK(fabs(c.T - 6.004) < 1e-9, "T %.9g, want 6.004", c.T);
	/* memory: 4e6 resident + 1 in flight * 4e7 / 2 */
	CHECK(fabs(c.memory[0] - 2.4e7) < 1, "memory %g", c.memory[0]);
out:
	ktap_result(KTAP_FAILED(), "cost model: all-reduce and memory, by hand");
	plan_problem_free(pb);
}

static unsigned int rnd_state = 12345;

static double urand(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return ((rnd_state >> 8) & 0xffff) / 65536.0;
}

/* A random chain and random sites, as JSON text in buf. */
static void random_instance(char *model, size_t mlen, char *sites,
			    size_t slen, int n, int ns, int heads)
{
	int i, j, o;

	o = snprintf(model, mlen, "{\"layers\":[");
	for (i = 0; i < n; i++)
		o += snprintf(model + o, mlen - o,
			      "%s{\"name\":\"l%d\",\"forward_gflop\":%.3f,\"backward_gflop\":%.3f,"
			      "\"param_bytes\":%.0f,\"activation_bytes\":%.0f,\"memory_bytes\":%.0f}",
			      i ? "," : "", i, 50 + 200 * urand(), 100 + 400 * urand(),
			      1e7 + 1e8 * urand(), 1e6 + 2e7 * urand(), 1e8 * urand());
	o += snprintf(model + o, mlen - o, "]");
	for (j = 0; j < heads; j++)
		o += snprintf(model + o, mlen - o,
			      "%s{\"name\":\"h%d\",\"layers\":[{\"name\":\"h%d0\",\"forward_gflop\":100,"
			      "\"backward_gflop\":200,\"param_bytes\":1e7,\"activation_bytes\":1e6},"
			      "{\"name\":\"h%d1\",\"forward_gflop\":80,\"backward_gflop\":160,"
			      "\"activation_bytes\":1e5}]}",
			      j ? "," : ",\"heads\":[", j, j, j);
	snprintf(model + o, mlen - o, "%s}", heads ? "]" : "");
	o = snprintf(sites, slen, "{\"sites\":[");
	for (i = 0; i < ns; i++)
		o += snprintf(sites + o, slen - o,
			      "%s{\"name\":\"s%d\",\"gpus\":%d,\"tflops\":%.1f,"
			      "\"gpu_memory_bytes\":8e9,\"intra_gbps\":100}",
			      i ? "," : "", i, 2 << (int)(3 * urand()), 50 + 150 * urand());
	o += snprintf(sites + o, slen - o, "],\"wan_gbps\":[");
	for (i = 0; i < ns; i++) {
		o += snprintf(sites + o, slen - o, "%s[", i ? "," : "");
		for (j = 0; j < ns; j++)
			o += snprintf(sites + o, slen - o, "%s%.2f", j ? "," : "",
				      i == j ? 0 : 1 + 20 * urand());
		o += snprintf(sites + o, slen - o, "]");
	}
	snprintf(sites + o, slen - o, "],\"wan_latency_ms\":[[0,5,8],[5,0,3],[8,3,0]]}");
}

/* Every plan of up to S stages, every site per stage: the true optimum. */
static double brute(const struct plan_problem *pb, struct plan_sol *bx)
{
	int n = pb->m->n, ns = pb->s->n, S = pb->lim.stages, k, mask, code;
	double best = INFINITY;

	for (k = 1; k <= S; k++)
		for (mask = 0; mask < 1 << (n - 1); mask++) {
			struct plan_sol x;
			int y, total = 1, s;

			if (__builtin_popcount(mask) != k - 1)
				continue;
			x.k = k;
			x.cut[0] = 0;
			for (y = 1, s = 1; y < n; y++)
				if (mask & 1 << (y - 1))
					x.cut[s++] = y;
			x.cut[k] = n;
			for (s = 0; s < k; s++)
				total *= ns;
			for (code = 0; code < total; code++) {
				struct plan_cost c;
				int v = code;

				for (s = 0; s < k; s++, v /= ns)
					x.site[s] = v % ns;
				plan_cost_eval(pb, &x, &c);
				if (!c.violations && c.T < best) {
					best = c.T;
					*bx = x;
				}
			}
		}
	return best;
}

static char mbuf[1 << 16], sbuf[4096];

static void test_dp_brute(void)
{
	int t, bad = 0;
	double worst = 0;

	for (t = 0; t < 30; t++) {
		char err[512], lim[128];
		struct plan_problem *pb;
		struct plan_result r;
		struct plan_sol bx;
		double b;

		random_instance(mbuf, sizeof(mbuf), sbuf, sizeof(sbuf),
				6 + t % 4, 3, 0);
		snprintf(lim, sizeof(lim),
			 "{\"stages\":%d,\"micro_batches\":%d,\"gpus_per_stage\":%d}",
			 2 + t % 3, 1 + 3 * (t % 5), 1 + t % 2);
		pb = mk(mbuf, sbuf, lim, err, sizeof(err));
		if (!pb) {
			ktap_fail("instance %d: %s", t, err);
			bad++;
			continue;
		}
		b = brute(pb, &bx);
		if (plan_solve(pb, PLAN_DP, &r, err, sizeof(err))) {
			if (isfinite(b)) {
				ktap_fail("instance %d: dp: %s, brute %g", t, err, b);
				bad++;
			}
		} else if (fabs(r.iteration - b) > 1e-9 * b) {
			ktap_fail("instance %d: dp %.9g, brute force %.9g", t,
				  r.iteration, b);
			bad++;
		} else if (fabs(r.lower_bound - b) > 1e-6 * b) {
			ktap_fail("instance %d: lower bound %.9g", t, r.lower_bound);
			bad++;
		}
		if (isfinite(b) && fabs(r.iteration - b) / b > worst)
			worst = fabs(r.iteration - b) / b;
		plan_problem_free(pb);
	}
	printf("# dp vs brute force: 30 chains, worst gap %.3g\n", worst);
	ktap_result(bad, "dp equals brute force on 30 random chains (6-9 layers, 3 sites)");
}

/*
 * Tabu against the DP (on the closed form both minimise), the simulator
 * against each plan's prediction (the 1F1B schedule, sched.c).  The
 * checks hold the goals: 1 % and 5 %.  How far the closed form
 * is from the simulator is printed beside, for the record.
 */
#define TABU_GAP	0.01
#define SIM_GAP		0.05
static void test_tabu_sim(int heads)
{
	int t, bad = 0, simbad = 0, n = 0;
	double worst = 0, simworst = 0, formworst = 0;
	char simwhy[256] = "";

	for (t = 0; t < 12; t++) {
		char err[512], lim[128];
		struct plan_problem *pb;
		struct plan_result r[3];
		enum plan_method meth[3] = { PLAN_DP, PLAN_TABU, PLAN_UNIFORM };
		int i;

		random_instance(mbuf, sizeof(mbuf), sbuf, sizeof(sbuf),
				24 + 8 * t, 3, heads ? 1 + t % 3 : 0);
		snprintf(lim, sizeof(lim), "{\"stages\":%d,\"micro_batches\":%d}",
			 3 + t % 4, 4 + 4 * (t % 4));
		pb = mk(mbuf, sbuf, lim, err, sizeof(err));
		if (!pb) {
			ktap_fail("instance %d: %s", t, err);
			bad++;
			continue;
		}
		for (i = heads ? 1 : 0; i < 3; i++) {
			struct plan_sol x;
			struct sim_stats st;
			double e;

			if (plan_solve(pb, meth[i], &r[i], err, sizeof(err)))
				continue;
			plan_result_to_sol(&r[i], &x);
			if (plan_simulate(pb, &x, &st)) {
				snprintf(simwhy, sizeof(simwhy), "instance %d %s: simulation failed",
					 t, plan_method_name(meth[i]));
				simbad++;
				continue;
			}
			n++;
			e = fabs(st.iteration - r[i].iteration) / st.iteration;
			if (e > formworst)
				formworst = e;
			e = fabs(st.iteration - r[i].predicted) / st.iteration;
			if (getenv("PLAN_DEBUG"))
				printf("# %d %s pred %.5g form %.5g sim %.5g err %.2f%% %s\n",
				       t, plan_method_name(meth[i]), r[i].predicted,
				       r[i].iteration, st.iteration, 100 * e,
				       r[i].bottleneck);
			if (e > simworst)
				simworst = e;
			if (e > SIM_GAP) {
				snprintf(simwhy, sizeof(simwhy),
					 "instance %d %s: predicted %.6g, simulated %.6g",
					 t, plan_method_name(meth[i]),
					 r[i].predicted, st.iteration);
				simbad++;
			}
		}
		if (!heads) {
			double g = r[1].iteration / r[0].iteration - 1;

			if (g > worst)
				worst = g;
			if (getenv("PLAN_DEBUG")) {
				int z;

				for (i = 0; i < 2; i++) {
					printf("# %s:", plan_method_name(meth[i]));
					for (z = 0; z < r[i].nstages; z++)
						printf(" [%d+%d@%d]", r[i].stage[z].first,
						       r[i].stage[z].count, r[i].stage[z].site);
					printf(" %s\n", r[i].bottleneck);
				}
			}
			if (g > TABU_GAP || g < -1e-9) {
				ktap_fail("instance %d: tabu %.6g, dp %.6g", t,
					  r[1].iteration, r[0].iteration);
				bad++;
			}
		}
		plan_problem_free(pb);
	}
	if (!heads) {
		printf("# tabu vs dp: 12 chains of 24-112 layers, worst gap %.4f%%\n",
		       100 * worst);
		ktap_result(bad, "tabu within 1% of the dp on 12 random chains");
	}
	printf("# simulator vs prediction: %d plans, worst %.3f%% (goal 5%%); "
	       "vs the closed form: worst %.3f%%\n", n, 100 * simworst,
	       100 * formworst);
	if (simbad)
		ktap_fail("%s", simwhy);
	ktap_result(simbad || !n, heads ?
		    "DAG with business heads: simulated within 5% of predicted" :
		    "chains: simulated within 5% of predicted (dp, tabu, uniform)");
}

/* Pins are kept; a pin the DP cannot honour is no plan at all. */
static void test_pins(void)
{
	char err[512];
	struct plan_problem *pb = mk(MODEL4, SITES2,
		"{\"gpus_per_stage\":1,\"stages\":2,\"pinned\":{\"l0\":\"b\",\"l3\":\"b\"}}",
		err, sizeof(err));
	struct plan_result r;
	int s;

	CHECK(pb, "problem: %s", err);
	CHECK(!plan_solve(pb, PLAN_DP, &r, err, sizeof(err)), "dp: %s", err);
	for (s = 0; s < r.nstages; s++)
		CHECK(r.stage[s].site == 1, "stage %d on site %d", s, r.stage[s].site);
	plan_problem_free(pb);
	/* first at a, last at b, a third in the middle at a: no single run */
	pb = mk(MODEL4, SITES2,
		"{\"gpus_per_stage\":1,\"pinned\":{\"l0\":\"a\",\"l1\":\"b\",\"l3\":\"a\"}}",
		err, sizeof(err));
	CHECK(pb, "problem: %s", err);
	CHECK(plan_solve(pb, PLAN_DP, &r, err, sizeof(err)) &&
	      strstr(err, "no feasible plan"), "dp said \"%s\"", err);
	CHECK(plan_solve(pb, PLAN_TABU, &r, err, sizeof(err)) &&
	      strstr(err, "no feasible plan found"), "tabu said \"%s\"", err);
out:
	ktap_result(KTAP_FAILED(), "pinned layers stay on their site; impossible pins are an error");
	plan_problem_free(pb);
}

/*
 * The benchmark's chain of 96 layers over a WAN at 10 % of the fabric
 * (tests/data/chain96-*.json, from tools/plan/gen.py model --layers 96
 * --hidden 2048 --seq 4096 --mbs 4 --vary; sites --wan-fraction 0.1):
 * the optimum is 4 stages on aidc-a then 3 uneven ones on aidc-c, a
 * valley tabu missed by 3.76 % before it started from every route.
 */
static void test_tabu_bench96(void)
{
	const char *dir = getenv("PLAN_TESTDATA");
	char err[512], path[4096];
	struct json_object *mj = NULL, *sj = NULL;
	struct plan_problem *pb = NULL;
	struct plan_limits l;
	struct plan_result dp, tabu;

	plan_limits_default(&l);
	CHECK(dir, "PLAN_TESTDATA is not set");
	snprintf(path, sizeof(path), "%s/chain96-model.json", dir);
	CHECK((mj = json_strict_load(path, err, sizeof(err))), "%s", err);
	snprintf(path, sizeof(path), "%s/chain96-sites.json", dir);
	CHECK((sj = json_strict_load(path, err, sizeof(err))), "%s", err);
	pb = plan_problem_load(&(struct plan_docs){
		.model = mj, .sites = sj,
		.model_name = "chain96-model.json", .sites_name = "chain96-sites.json",
	}, &l, NULL, NULL, err, sizeof(err));
	CHECK(pb, "%s", err);
	CHECK(!plan_solve(pb, PLAN_DP, &dp, err, sizeof(err)), "dp: %s", err);
	CHECK(!plan_solve(pb, PLAN_TABU, &tabu, err, sizeof(err)), "tabu: %s", err);
	printf("# 96 layers, WAN 10 %%: dp %.6f s, tabu %.6f s (%.3f%%), tabu %.3f s CPU\n",
	       dp.iteration, tabu.iteration,
	       100 * (tabu.iteration / dp.iteration - 1), tabu.cpu_seconds);
	CHECK(tabu.iteration <= dp.iteration * (1 + TABU_GAP),
	      "tabu %.6f, dp %.6f: %.2f%% above", tabu.iteration, dp.iteration,
	      100 * (tabu.iteration / dp.iteration - 1));
out:
	ktap_result(KTAP_FAILED(), "tabu within 1% of the dp on the 96-layer benchmark chain");
	plan_problem_free(pb);
	if (mj)
		json_object_put(mj);
	if (sj)
		json_object_put(sj);
}

/* A WAN much thinner than the fabric: the planner keeps to one site
 * where uniform crosses it, and wins by >= 1.3x. */
static void test_beats_uniform(void)
{
	char err[512];
	const char *sites = "{\"sites\":[{\"name\":\"a\",\"gpus\":4,\"tflops\":100,\"gpu_memory_bytes\":8e9,\"intra_gbps\":400},"
		"{\"name\":\"b\",\"gpus\":4,\"tflops\":100,\"gpu_memory_bytes\":8e9,\"intra_gbps\":400}],"
		"\"wan_gbps\":[[0,4],[4,0]],\"wan_latency_ms\":[[0,20],[20,0]]}";
	struct plan_problem *pb;
	struct plan_result r, u;

	random_instance(mbuf, sizeof(mbuf), sbuf, sizeof(sbuf), 32, 3, 0);
	pb = mk(mbuf, sites, "{\"stages\":8,\"gpus_per_stage\":1,\"micro_batches\":8}",
		err, sizeof(err));
	CHECK(pb, "problem: %s", err);
	CHECK(!plan_solve(pb, PLAN_DP, &r, err, sizeof(err)), "dp: %s", err);
	CHECK(!plan_solve(pb, PLAN_UNIFORM, &u, err, sizeof(err)), "uniform: %s", err);
	printf("# thin WAN: dp %.4f s, uniform %.4f s (%.2fx)\n", r.iteration,
	       u.iteration, u.iteration / r.iteration);
	CHECK(u.iteration / r.iteration >= 1.3, "only %.2fx",
	      u.iteration / r.iteration);
out:
	ktap_result(KTAP_FAILED(), "dp beats the uniform split by >= 1.3x over a thin WAN");
	plan_problem_free(pb);
}

static int write_tmp(char *path, const char *text)
{
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		return -1;
	close(fd);
	return 0;
}

/* The CLI: exit codes, the JSON's fields, errors on stderr. */
static void test_cli(void)
{
	char mp[] = "/tmp/plan-m-XXXXXX", sp[] = "/tmp/plan-s-XXXXXX";
	char *argv[16], out[] = "/tmp/plan-o-XXXXXX";
	struct json_object *o = NULL, *v, *it;
	int rc, fd, so;

	CHECK(!write_tmp(mp, MODEL4) && !write_tmp(sp, SITES2), "tmp files");
	argv[0] = "segment";
	argv[1] = "--stages";
	argv[2] = "zero";
	rc = plan_cli(3, argv, 0);
	CHECK(rc == 2, "bad --stages: exit %d", rc);
	argv[1] = "--model";
	argv[2] = mp;
	rc = plan_cli(3, argv, 0);
	CHECK(rc == 2, "no --sites: exit %d", rc);
	argv[3] = "--sites";
	argv[4] = "/nonexistent.json";
	rc = plan_cli(5, argv, 0);
	CHECK(rc == 1, "missing file: exit %d", rc);
	argv[4] = sp;
	argv[5] = "--gpus-per-stage";
	argv[6] = "1";
	argv[7] = "--micro-batches";
	argv[8] = "4";
	argv[9] = "--pin";
	argv[10] = "l3=b";
	fflush(stdout);
	fd = mkstemp(out);
	so = dup(1);
	dup2(fd, 1);
	rc = plan_cli(11, argv, 1);
	fflush(stdout);
	dup2(so, 1);
	close(so);
	close(fd);
	CHECK(rc == 0, "plan: exit %d", rc);
	o = json_object_from_file(out);
	CHECK(o, "output is not JSON");
	CHECK(json_object_object_get_ex(o, "iteration", &it) &&
	      json_object_object_get_ex(it, "predicted_s", &v) &&
	      json_object_get_double(v) > 0, "no iteration.predicted_s");
	CHECK(json_object_object_get_ex(it, "model_s", &v) &&
	      json_object_get_double(v) > 0, "no iteration.model_s");
	CHECK(json_object_object_get_ex(o, "solver", &v) &&
	      json_object_object_get_ex(v, "cpu_seconds", &v) &&
	      json_object_get_double(v) >= 0, "no solver.cpu_seconds");
	CHECK(json_object_object_get_ex(o, "task_graph", &v) &&
	      json_object_object_get_ex(v, "tasks", &it) &&
	      json_object_array_length(it) >= 1, "no task_graph.tasks");
	CHECK(json_object_object_get_ex(o, "stages", &v), "no stages");
	it = json_object_array_get_idx(v, json_object_array_length(v) - 1);
	CHECK(json_object_object_get_ex(it, "site", &v) &&
	      !strcmp(json_object_get_string(v), "b"), "last stage not on b (pin)");
out:
	ktap_result(KTAP_FAILED(), "dmsc plan segment: usage exit 2, input exit 1, JSON plan");
	if (o)
		json_object_put(o);
	unlink(mp);
	unlink(sp);
	unlink(out);
}

int main(void)
{
	ktap_plan(13 + 11);
	test_bad_input();
	test_cost_by_hand();
	test_allreduce_by_hand();
	test_dp_brute();
	test_tabu_sim(0);
	test_tabu_sim(1);
	test_pins();
	test_tabu_bench96();
	test_beats_uniform();
	test_cli();
	return ktap_failed ? 1 : 0;
}
