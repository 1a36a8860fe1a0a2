// SPDX-License-Identifier: GPL-2.0
/*
 * cli.c - "dmsc [-j] plan segment --model M.json --sites S.json [...]".
 * Every argument is parsed before a file is opened, so a typo is a usage
 * error (exit 2) naming the option; options override --limits.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json_strict.h"
#include "plan_cli.h"
#include "plan_int.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: dmsc [-j] plan segment --model M.json --sites S.json [OPTIONS]\n"
		"       dmsc plan help\n"
		"Options (they override --limits):\n"
		"  -j, --json                  print the plan as JSON\n"
		"  --limits L.json             limits and tabu rules as a document\n"
		"  --stages N                  at most N pipeline stages (8)\n"
		"  --gpus-per-stage N          data-parallel GPUs of a stage (chosen)\n"
		"  --max-layers-per-stage N    at most N layers in a stage\n"
		"  --micro-batches N           micro-batches per iteration (16)\n"
		"  --pin LAYER=SITE            keep LAYER at SITE (repeatable)\n"
		"  --method auto|dp|tabu|uniform  dp: exact, chains only; auto: dp for\n"
		"                              a chain, tabu otherwise\n"
		"  --tabu-tenure N             iterations a reversed move stays tabu (12)\n"
		"  --tabu-iterations N         iterations of the tabu search (400)\n"
		"  --tabu-stall N              stop after N without improvement (150)\n"
		"  --tabu-moves LIST           shift,merge,split,site or all\n"
		"  --seed N                    tie-breaking of the tabu search (1)\n"
		"  --no-baseline               do not compare with the uniform split\n"
		"See Documentation/planner.md for the file formats.\n");
}

static int uerr(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int uerr(const char *fmt, ...)
{
	va_list ap;

	fputs("plan segment: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (try \"dmsc plan help\")\n", stderr);
	return 2;
}

static int parse_int(const char *s, int min, int max, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = (int)v;
	return 0;
}

/* An option's value, or -1 when the option was not given. */
struct over {
	int stages, gpus, maxl, mb, tenure, iters, stall, seed;
	unsigned int moves;
	int method;
};

static struct json_object *load(const char *what, const char *path)
{
	char err[512];
	struct json_object *o = json_strict_load(path, err, sizeof(err));

	if (!o)
		fprintf(stderr, "plan segment: %s: %s\n", what, err);
	return o;
}

/* What plan_problem_load() applies after the limits document. */
struct adjust {
	const struct over *ov;
	char **pins;
	int npins;
};

static int adjust(struct plan_limits *lim, void *arg, char *err, size_t errlen)
{
	const struct adjust *a = arg;
	const struct over *ov = a->ov;
	int i;

#define OVR(f, dst) do { if (ov->f >= 0) lim->dst = ov->f; } while (0)
	OVR(stages, stages);
	OVR(gpus, gpus_per_stage);
	OVR(maxl, max_layers_per_stage);
	OVR(mb, micro_batches);
	OVR(tenure, tabu.tenure);
	OVR(iters, tabu.iterations);
	OVR(stall, tabu.stall);
	OVR(seed, tabu.seed);
#undef OVR
	if (ov->method >= 0)
		lim->method = ov->method;
	if (ov->moves)
		lim->tabu.moves = ov->moves;
	for (i = 0; i < a->npins; i++) {
		char *layer = plan_xstrdup(a->pins[i]), *eq = strchr(layer, '=');
		int twice;

		*eq = 0;
		twice = plan_limits_add_pin(lim, layer, eq + 1);
		free(layer);
		if (twice)
			return plan_fail(err, errlen,
					 "--pin %s: the layer is pinned twice",
					 a->pins[i]);
	}
	return 0;
}

static int segment(int argc, char **argv, int json)
{
	const char *mpath = NULL, *spath = NULL, *lpath = NULL;
	struct over ov = { -1, -1, -1, -1, -1, -1, -1, -1, 0, -1 };
	struct json_object *mj = NULL, *sj = NULL, *lj = NULL, *out;
	struct adjust adj = { .ov = &ov };
	struct plan_problem *pb = NULL;
	struct plan_limits lim;
	struct plan_result *r = NULL, *base = NULL;
	char **pins = calloc(argc, sizeof(char *));
	int npins = 0, baseline = 1, rc = 2, i;
	char err[512] = "";

	if (!pins)
		return 1;
	plan_limits_default(&lim);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		struct {
			const char *name;
			int *dst, min, max;
		} ints[] = {
			{ "--stages", &ov.stages, 1, PLAN_MAX_STAGES },
			{ "--gpus-per-stage", &ov.gpus, 1, 1 << 20 },
			{ "--max-layers-per-stage", &ov.maxl, 1, 1 << 30 },
			{ "--micro-batches", &ov.mb, 1, 1 << 20 },
			{ "--tabu-tenure", &ov.tenure, 0, 1 << 20 },
			{ "--tabu-iterations", &ov.iters, 0, 1 << 24 },
			{ "--tabu-stall", &ov.stall, 1, 1 << 24 },
			{ "--seed", &ov.seed, 0, 1 << 30 },
		};
		size_t k;

		if (!strcmp(a, "-j") || !strcmp(a, "--json")) {
			json = 1;
			continue;
		}
		if (!strcmp(a, "--no-baseline")) {
			baseline = 0;
			continue;
		}
		if (strncmp(a, "--", 2))
			{ rc = uerr("unexpected \"%s\"", a); goto out; }
		if (!v)
			{ rc = uerr("%s: needs a value", a); goto out; }
		for (k = 0; k < sizeof(ints) / sizeof(*ints); k++)
			if (!strcmp(a, ints[k].name))
				break;
		if (k < sizeof(ints) / sizeof(*ints)) {
			if (parse_int(v, ints[k].min, ints[k].max, ints[k].dst)) {
				rc = uerr("%s: \"%s\" is not an integer in %d..%d", a,
					  v, ints[k].min, ints[k].max);
				goto out;
			}
		} else if (!strcmp(a, "--model")) {
			mpath = v;
		} else if (!strcmp(a, "--sites")) {
			spath = v;
		} else if (!strcmp(a, "--limits")) {
			lpath = v;
		} else if (!strcmp(a, "--pin")) {
			const char *eq = strchr(v, '=');

			if (!eq || eq == v || !eq[1]) {
				rc = uerr("--pin: \"%s\" is not LAYER=SITE", v);
				goto out;
			}
			pins[npins++] = (char *)v;
		} else if (!strcmp(a, "--method")) {
			enum plan_method meth;

			if (plan_method_parse(v, &meth)) {
				rc = uerr("--method: \"%s\" is not auto, dp, tabu or uniform", v);
				goto out;
			}
			ov.method = meth;
		} else if (!strcmp(a, "--tabu-moves")) {
			if (plan_moves_parse(v, &ov.moves)) {
				rc = uerr("--tabu-moves: \"%s\" is not a list of shift, merge, split, site, all", v);
				goto out;
			}
		} else {
			rc = uerr("unknown option \"%s\"", a);
			goto out;
		}
		i++;
	}
	if (!mpath || !spath) {
		rc = uerr("%s is required", mpath ? "--sites" : "--model");
		goto out;
	}
	/* the arguments are good: from here on a failure is exit 1 */
	rc = 1;
	if (!(mj = load("model", mpath)) || !(sj = load("sites", spath)) ||
	    (lpath && !(lj = load("limits", lpath))))
		goto out;
	adj.pins = pins;
	adj.npins = npins;
	pb = plan_problem_load(&(struct plan_docs){
		.model = mj, .sites = sj, .limits = lj,
		.model_name = mpath, .sites_name = spath, .limits_name = lpath,
	}, &lim, adjust, &adj, err, sizeof(err));
	if (!pb) {
		fprintf(stderr, "plan segment: %s\n", err);
		goto out;
	}
	r = plan_xcalloc(1, sizeof(*r));
	if (plan_solve(pb, lim.method, r, err, sizeof(err))) {
		fprintf(stderr, "plan segment: %s\n", err);
		goto out;
	}
	if (baseline) {
		base = plan_xcalloc(1, sizeof(*base));
		/* an infeasible uniform split is reported as such, not fatal */
		if (plan_solve(pb, PLAN_UNIFORM, base, err, sizeof(err)))
			base->iteration = base->predicted = INFINITY;
	}
	if (json) {
		out = plan_result_json(pb, r, base);
		printf("%s\n", json_object_to_json_string_ext(out,
			JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(out);
	} else {
		plan_result_print(pb, r, base, stdout);
	}
	rc = 0;
out:
	plan_problem_free(pb);
	plan_limits_clear(&lim);
	if (mj)
		json_object_put(mj);
	if (sj)
		json_object_put(sj);
	if (lj)
		json_object_put(lj);
	free(r);
	free(base);
	free(pins);
	return rc;
}

int plan_cli(int argc, char **argv, int json)
{
	if (argc < 1)
		return uerr("a command is required");
	if (!strcmp(argv[0], "help") || !strcmp(argv[0], "-h") ||
	    !strcmp(argv[0], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[0], "segment"))
		return segment(argc, argv, json);
	return uerr("unknown command \"%s\"", argv[0]);
}
