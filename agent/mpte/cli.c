// SPDX-License-Identifier: GPL-2.0
/*
 * cli.c - "dmsc [-j] mpte solve --topology T.json --demands D.json ...":
 * read, solve, apply incremental events in the order given, print; and
 * "dmsc mpte batch" (batch.c), which turns a result into tunnels.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/dmsc.h>

#include "mpte_cli.h"
#include "mpte_int.h"
#include "json_strict.h"
#include "exact.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: dmsc [-j] mpte solve --topology T.json --demands D.json [OPTIONS]\n"
		"       dmsc mpte batch --result R.json --src ADDR --tunnel-id N [--ingress NODE]\n"
		"       dmsc mpte help\n"
		"Options:\n"
		"  -j, --json              print the full result as JSON\n"
		"  --brief                 print only the totals\n"
		"  --ecmp                  also compute the ECMP baseline utilisation\n"
		"  --no-admission          route every demand even past capacity\n"
		"  --no-backups            skip protection paths\n"
		"  --tolerance X           stop within X of the lower bound (0.002)\n"
		"  --max-iterations N      cap on optimisation sweeps (400)\n"
		"  --time-limit S          cap on seconds per optimisation run\n"
		"  --fail-link ID          after solving, fail link ID (\"A-B\" or its id)\n"
		"  --set-bandwidth ID=BW   after solving, change elastic demand ID to BW\n"
		"  --recover-link ID       after solving, put failed link ID back\n"
		"  --remove-demand ID      after solving, withdraw demand ID\n"
		"  --add-demand ID[=BW]    after solving, add withdrawn demand ID back\n"
		"  --max-sids N            at most N SIDs in a segment list, 1..%d (%d)\n"
		"  --max-stretch X         a path's hops at most X times the fewest (0: no bound)\n"
		"  --exact                 also solve the LP exactly with GLPK (small instances)\n"
		"Events (--fail-link ... --add-demand) apply in the order given and\n"
		"re-solve incrementally; the result lists the demands each touched.\n"
		"batch prints the admitted demands of a -j result as dmsc -batch lines\n"
		"(tunnel N+i for demands[i]): see dmsc(8).\n",
		DMSC_MAX_SEGS, DMSC_MAX_SEGS);
}

static struct json_object *load_json(const char *path, const char *what)
{
	char err[512];
	struct json_object *o = json_strict_load(path, err, sizeof(err));

	if (!o)
		fprintf(stderr, "mpte: %s %s\n", what, err);
	return o;
}

static int parse_double(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno || end == s || *end || !isfinite(*out) ? -1 : 0;
}

enum { EV_FAIL, EV_BW, EV_RECOVER, EV_REMOVE, EV_ADD };

struct event {
	int kind;
	char *arg;
};

static int solve(int argc, char **argv, int json)
{
	const char *tpath = NULL, *dpath = NULL;
	struct json_object *tj = NULL, *dj = NULL;
	struct mpte_topology *t = NULL;
	struct mpte_demand_set *ds = NULL;
	struct mpte_ctx *ctx = NULL;
	struct mpte_options opt;
	struct event *ev;
	char err[512];
	int i, nev = 0, brief = 0, exact = 0, rc = 1;
	double lp = 0;

	mpte_options_default(&opt);
	ev = calloc(argc ? argc : 1, sizeof(*ev));
	if (!ev)
		return 1;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		double x;

#define NEED_ARG()							\
		do {							\
			if (!v) {					\
				fprintf(stderr, "mpte: %s: needs an argument\n", a); \
				goto out;				\
			}						\
			i++;						\
		} while (0)
		if (!strcmp(a, "--topology")) {
			NEED_ARG();
			tpath = v;
		} else if (!strcmp(a, "--demands")) {
			NEED_ARG();
			dpath = v;
		} else if (!strcmp(a, "-j") || !strcmp(a, "--json")) {
			json = 1;
		} else if (!strcmp(a, "--brief")) {
			brief = 1;
		} else if (!strcmp(a, "--ecmp")) {
			opt.ecmp_baseline = 1;
		} else if (!strcmp(a, "--no-admission")) {
			opt.admission = 0;
		} else if (!strcmp(a, "--no-backups")) {
			opt.backups = 0;
		} else if (!strcmp(a, "--exact")) {
			if (!mpte_exact_available()) {
				fprintf(stderr, "mpte: --exact: this build has no GLPK (built with HAVE_GLPK=0)\n");
				goto out;
			}
			exact = 1;
		} else if (!strcmp(a, "--max-sids")) {
			NEED_ARG();
			if (parse_double(v, &x) || x < 1 || x > DMSC_MAX_SEGS ||
			    x != (int)x) {
				fprintf(stderr, "mpte: --max-sids: expected an integer 1..%d, got \"%s\"\n",
					DMSC_MAX_SEGS, v);
				goto out;
			}
			opt.max_sids = (int)x;
		} else if (!strcmp(a, "--max-stretch")) {
			NEED_ARG();
			if (parse_double(v, &x) || (x != 0 && !(x >= 1 && x <= MPTE_MAX_HOPS))) {
				fprintf(stderr, "mpte: --max-stretch: expected 0 (no bound) or a ratio 1..%d, got \"%s\"\n",
					MPTE_MAX_HOPS, v);
				goto out;
			}
			opt.max_stretch = x ? x : -1;
		} else if (!strcmp(a, "--tolerance")) {
			NEED_ARG();
			if (parse_double(v, &x) || x <= 0 || x > 1) {
				fprintf(stderr, "mpte: --tolerance: expected a number in (0, 1]\n");
				goto out;
			}
			opt.tolerance = x;
		} else if (!strcmp(a, "--max-iterations")) {
			NEED_ARG();
			if (parse_double(v, &x) || x < 1 || x > 1e7) {
				fprintf(stderr, "mpte: --max-iterations: expected a positive integer\n");
				goto out;
			}
			opt.max_iterations = (int)x;
		} else if (!strcmp(a, "--time-limit")) {
			NEED_ARG();
			if (parse_double(v, &x) || x < 0) {
				fprintf(stderr, "mpte: --time-limit: expected seconds\n");
				goto out;
			}
			opt.time_limit = x;
		} else if (!strcmp(a, "--fail-link")) {
			NEED_ARG();
			ev[nev].kind = EV_FAIL;
			ev[nev++].arg = (char *)v;
		} else if (!strcmp(a, "--recover-link") ||
			   !strcmp(a, "--remove-demand") ||
			   !strcmp(a, "--add-demand")) {
			NEED_ARG();
			ev[nev].kind = a[2] == 'r' && a[4] == 'c' ? EV_RECOVER :
				       a[2] == 'r' ? EV_REMOVE : EV_ADD;
			ev[nev++].arg = (char *)v;
		} else if (!strcmp(a, "--set-bandwidth")) {
			NEED_ARG();
			if (!strchr(v, '=')) {
				fprintf(stderr, "mpte: --set-bandwidth: expected ID=BW\n");
				goto out;
			}
			ev[nev].kind = EV_BW;
			ev[nev++].arg = (char *)v;
		} else {
			fprintf(stderr, "mpte: unknown option \"%s\"\n", a);
			usage(stderr);
			goto out;
		}
#undef NEED_ARG
	}
	if (!tpath || !dpath) {
		fprintf(stderr, "mpte: solve needs --topology and --demands\n");
		goto out;
	}
	mpte_trace_phase(NULL);
	tj = load_json(tpath, "topology");
	dj = tj ? load_json(dpath, "demands") : NULL;
	if (!tj || !dj)
		goto out;
	t = mpte_topology_from_json(tj, err, sizeof(err));
	if (!t) {
		fprintf(stderr, "mpte: %s\n", err);
		goto out;
	}
	ds = mpte_demands_from_json(dj, t, err, sizeof(err));
	if (!ds) {
		fprintf(stderr, "mpte: %s\n", err);
		goto out;
	}
	ctx = mpte_new(t, ds, &opt);
	mpte_trace_phase("parse, context");
	mpte_solve(ctx);
	for (i = 0; i < nev; i++) {
		int r;

		if (ev[i].kind == EV_FAIL) {
			r = mpte_fail_link(ctx, ev[i].arg, err, sizeof(err));
		} else if (ev[i].kind == EV_RECOVER) {
			r = mpte_recover_link(ctx, ev[i].arg, err, sizeof(err));
		} else if (ev[i].kind == EV_REMOVE) {
			r = mpte_remove_demand(ctx, ev[i].arg, err, sizeof(err));
		} else if (ev[i].kind == EV_ADD) {
			char *id = mpte_xstrdup(ev[i].arg), *eq = strchr(id, '=');
			double bw = 0;

			if (eq)
				*eq = 0;
			if (eq && (parse_double(eq + 1, &bw) || bw <= 0)) {
				snprintf(err, sizeof(err), "--add-demand %s: bad bandwidth",
					 ev[i].arg);
				r = -1;
			} else {
				r = mpte_add_demand(ctx, id, bw, err,
						    sizeof(err));
			}
			free(id);
		} else {
			char *id = mpte_xstrdup(ev[i].arg), *eq = strchr(id, '=');
			double bw;

			*eq = 0;
			if (parse_double(eq + 1, &bw)) {
				snprintf(err, sizeof(err), "--set-bandwidth %s: bad bandwidth",
					 ev[i].arg);
				r = -1;
			} else {
				r = mpte_set_bandwidth(ctx, id, bw, err,
						       sizeof(err));
			}
			free(id);
		}
		if (r) {
			fprintf(stderr, "mpte: %s\n", err);
			goto out;
		}
	}
	/* an LP that failed is an error, never a number to print */
	if (exact && mpte_exact(ctx, &lp, err, sizeof(err))) {
		fprintf(stderr, "mpte: --exact: %s\n", err);
		goto out;
	}
	if (json) {
		if (exact)
			fprintf(stderr, "mpte: LP optimum (GLPK): %.9g\n", lp);
		/* tens of MB at scale: fewer, larger writes */
		setvbuf(stdout, NULL, _IOFBF, 1 << 20);
		mpte_result_print(ctx, stdout);
		fflush(stdout);
		mpte_trace_phase("JSON result");
	} else if (brief) {
		printf("max utilisation %.6f lower bound %.6f", ctx->max_util,
		       ctx->lower_bound);
		if (ctx->ecmp_util >= 0)
			printf(" ecmp %.6f", ctx->ecmp_util);
		if (exact)
			printf(" lp %.6f", lp);
		printf(" sweeps %d seconds %.4f\n", ctx->iterations,
		       ctx->solve_seconds);
	} else {
		mpte_print_summary(ctx, stdout);
		if (exact)
			printf("LP optimum (GLPK): %.6f\n", lp);
	}
	rc = 0;
out:
	mpte_free(ctx);
	mpte_demands_free(ds);
	mpte_topology_free(t);
	if (tj)
		json_object_put(tj);
	if (dj)
		json_object_put(dj);
	free(ev);
	return rc;
}

int mpte_cli(int argc, char **argv, int json)
{
	if (argc < 1 || !strcmp(argv[0], "help") || !strcmp(argv[0], "-h") ||
	    !strcmp(argv[0], "--help")) {
		usage(argc < 1 ? stderr : stdout);
		return argc < 1 ? 1 : 0;
	}
	if (!strcmp(argv[0], "solve"))
		return solve(argc, argv, json);
	if (!strcmp(argv[0], "batch"))
		return mpte_batch(argc, argv);
	fprintf(stderr, "mpte: unknown command \"%s\"; try \"dmsc mpte help\"\n",
		argv[0]);
	return 1;
}
