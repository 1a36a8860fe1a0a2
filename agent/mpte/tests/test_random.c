// SPDX-License-Identifier: GPL-2.0
/*
 * test_random.c - randomised instances, every solution checked for what
 * must always hold: flow conservation, paths that start at an ingress and
 * end at an egress over allowed links, admitted bandwidth carried in full,
 * capacity respected, at most max_paths paths, an acyclic DAG, a reason for
 * every demand not admitted - before and after a link failure.  A second
 * set holds the max utilisation to within 1% of GLPK's LP optimum and the
 * reported lower bound under it, once with path caps that cannot bind and
 * once with the default cap of 8.
 */
#include <stdlib.h>
#include <string.h>

#include <linux/dmsc.h>

#include "mpte_int.h"
#include "exact.h"
#include "ktap.h"

static unsigned long long rng;

static unsigned int rnd(void)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned int)(rng >> 33);
}

static int rint_(int lo, int hi)
{
	return lo + (int)(rnd() % (unsigned int)(hi - lo + 1));
}

static char *name(int i)
{
	static char buf[8][16];
	static int k;

	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "n%d", i);
	return buf[k];
}

/* Nodes n0..n(n-1), each with a SID (every result installable). */
static struct json_object *gen_nodes(int n)
{
	struct json_object *nodes = json_object_new_array();
	int i;

	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_new_object();
		char sid[32];

		json_object_object_add(o, "name", json_object_new_string(name(i)));
		snprintf(sid, sizeof(sid), "fc00:%x::", i + 1);
		json_object_object_add(o, "sid", json_object_new_string(sid));
		json_object_array_add(nodes, o);
	}
	return nodes;
}

/* TE-rich: colours, SRLGs, delays, reservations, unidirectional links. */
static struct json_object *gen_topology(int n, int rich)
{
	struct json_object *t = json_object_new_object();
	struct json_object *nodes = gen_nodes(n);
	struct json_object *links = json_object_new_array();
	int i, extra = rint_(n / 2, 2 * n);

	for (i = 1; i < n + extra; i++) {
		struct json_object *l = json_object_new_object();
		int a = i < n ? i : rint_(0, n - 1);
		int b = i < n ? rint_(0, i - 1) : rint_(0, n - 1);
		static const double caps[] = { 10, 40, 100, 400 };

		char id[16];

		if (a == b)
			b = (a + 1) % n;
		/* parallel links happen here: they need ids of their own */
		snprintf(id, sizeof(id), "l%d", i);
		json_object_object_add(l, "id", json_object_new_string(id));
		json_object_object_add(l, "from", json_object_new_string(name(a)));
		json_object_object_add(l, "to", json_object_new_string(name(b)));
		json_object_object_add(l, "capacity",
				       json_object_new_double(caps[rint_(0, 3)]));
		json_object_object_add(l, "te_metric", json_object_new_int(rint_(1, 10)));
		if (rich) {
			struct json_object *srlg = json_object_new_array();

			json_object_object_add(l, "delay", json_object_new_int(rint_(1, 20)));
			json_object_object_add(l, "colours", json_object_new_int(rint_(0, 7)));
			json_object_array_add(srlg, json_object_new_int(rint_(1, 6)));
			json_object_object_add(l, "srlg", srlg);
			if (i >= n && rint_(0, 4) == 0)
				json_object_object_add(l, "bidirectional",
						       json_object_new_boolean(0));
			if (rint_(0, 5) == 0) {
				struct json_object *r = json_object_new_array();
				int q;

				for (q = 0; q < 8; q++)
					json_object_array_add(r, json_object_new_double(
						q == rint_(0, 7) ? rint_(0, 5) : 0));
				json_object_object_add(l, "reserved", r);
			}
		}
		json_object_array_add(links, l);
	}
	json_object_object_add(t, "nodes", nodes);
	json_object_object_add(t, "links", links);
	return t;
}

static struct json_object *node_set(int n, int k, const int *avoid, int navoid,
				    int *out)
{
	struct json_object *a = json_object_new_array();
	int got = 0, tries = 0;

	while (got < k && tries++ < 100) {
		int v = rint_(0, n - 1), j, dup = 0;

		for (j = 0; j < navoid; j++)
			dup |= avoid[j] == v;
		for (j = 0; j < got; j++)
			dup |= out[j] == v;
		if (dup)
			continue;
		out[got++] = v;
		json_object_array_add(a, json_object_new_string(name(v)));
	}
	return a;
}

/* max_paths: the plain (not rich) demands' cap; the rich ones draw theirs */
static struct json_object *gen_demands(int n, int nd, int rich, int max_paths)
{
	struct json_object *d = json_object_new_object();
	struct json_object *arr = json_object_new_array();
	static const char *prot[] = { "none", "link", "node", "srlg" };
	int i;

	for (i = 0; i < nd; i++) {
		struct json_object *o = json_object_new_object();
		int in[2], out[2], nin = rich ? rint_(1, 2) : 1;
		int nout = rich ? rint_(1, 2) : 1;
		char id[16];
		double bw = rint_(1, 60);

		snprintf(id, sizeof(id), "d%d", i);
		json_object_object_add(o, "id", json_object_new_string(id));
		json_object_object_add(o, "ingress", node_set(n, nin, NULL, 0, in));
		json_object_object_add(o, "egress", node_set(n, nout, in, nin, out));
		json_object_object_add(o, "bandwidth", json_object_new_double(bw));
		if (rich) {
			int setup = rint_(0, 7);

			json_object_object_add(o, "setup_priority", json_object_new_int(setup));
			json_object_object_add(o, "hold_priority",
					       json_object_new_int(rint_(0, setup)));
			json_object_object_add(o, "max_paths", json_object_new_int(rint_(1, 8)));
			json_object_object_add(o, "protection",
					       json_object_new_string(prot[rint_(0, 3)]));
			json_object_object_add(o, "existing",
					       json_object_new_boolean(rint_(0, 2) == 0));
			if (rint_(0, 4) == 0)
				json_object_object_add(o, "exclude_any",
						       json_object_new_int(1 << rint_(0, 2)));
			if (rint_(0, 6) == 0)
				json_object_object_add(o, "include_any",
						       json_object_new_int(rint_(1, 7)));
			if (rint_(0, 5) == 0)
				json_object_object_add(o, "max_delay",
						       json_object_new_int(rint_(10, 60)));
			if (rint_(0, 3) == 0) {
				struct json_object *e = json_object_new_object();

				json_object_object_add(e, "min", json_object_new_double(bw / 4));
				json_object_object_add(e, "max", json_object_new_double(bw));
				json_object_object_add(o, "elastic", e);
			}
		} else {
			json_object_object_add(o, "max_paths",
					       json_object_new_int(max_paths));
		}
		json_object_array_add(arr, o);
	}
	json_object_object_add(d, "demands", arr);
	return d;
}

static int in_set(const int *s, int n, int v)
{
	int i;

	for (i = 0; i < n; i++)
		if (s[i] == v)
			return 1;
	return 0;
}

/* Every invariant of a solution; returns 0 or fails the case. */
static int check_solution(const struct mpte_ctx *ctx, const char *when)
{
	const struct mpte_topology *t = ctx->t;
	double *load = mpte_xcalloc(t->narcs, sizeof(double));
	double *bal = mpte_xcalloc(t->nnodes, sizeof(double));
	int di, p, i, a, bad = 0;

	for (di = 0; di < ctx->ds->n && !bad; di++) {
		const struct mpte_demand *d = &ctx->ds->d[di];
		const struct mpte_dstate *s = &ctx->st[di];
		struct mpte_filter f;
		double sum = 0;

		if (s->status != MPTE_ADMITTED) {
			if (!s->reason)
				bad = ktap_fail("%s: %s not admitted without a reason", when, d->id);
			continue;
		}
		if (s->npaths < 1 || s->npaths > d->max_paths)
			bad = ktap_fail("%s: %s has %d paths (max %d)", when, d->id,
					s->npaths, d->max_paths);
		if (s->admitted < d->bw_min - 1e-9 || s->admitted > s->requested + 1e-9)
			bad = ktap_fail("%s: %s admitted %g outside %g..%g", when, d->id,
					s->admitted, d->bw_min, s->requested);
		mpte_filter_for(ctx, d, &f);
		memset(bal, 0, t->nnodes * sizeof(double));
		for (p = 0; p < s->npaths && !bad; p++) {
			const struct mpte_path *pp = &s->paths[p];

			sum += pp->flow;
			if (pp->flow < 0)
				bad = ktap_fail("%s: %s negative path flow", when, d->id);
			if (!in_set(d->ingress, d->ningress, t->arcs[pp->arcs[0]].from))
				bad = ktap_fail("%s: %s path starts off its ingress", when, d->id);
			if (!in_set(d->egress, d->negress, t->arcs[pp->arcs[pp->len - 1]].to))
				bad = ktap_fail("%s: %s path ends off its egress", when, d->id);
			for (i = 0; i < pp->len && !bad; i++) {
				a = pp->arcs[i];
				if (i && t->arcs[pp->arcs[i - 1]].to != t->arcs[a].from)
					bad = ktap_fail("%s: %s path is broken", when, d->id);
				if (!mpte_arc_usable(t, a, &f))
					bad = ktap_fail("%s: %s uses %s against its constraints%s",
							when, d->id, t->arcs[a].name,
							ctx->failed[a] ? " (failed)" : "");
				load[a] += pp->flow;
				bal[t->arcs[a].from] -= pp->flow;
				bal[t->arcs[a].to] += pp->flow;
			}
			if (d->max_delay > 0 &&
			    mpte_path_delay(t, pp->arcs, pp->len) > d->max_delay + 1e-9)
				bad = ktap_fail("%s: %s path delay over max_delay", when, d->id);
		}
		if (!bad && fabs(sum - s->admitted) > 1e-6 * (1 + s->admitted))
			bad = ktap_fail("%s: %s carries %g of %g", when, d->id, sum, s->admitted);
		/* conservation: only ingresses emit and only egresses absorb */
		for (i = 0; i < t->nnodes && !bad; i++) {
			if (in_set(d->ingress, d->ningress, i) && bal[i] <= 1e-9)
				continue;
			if (in_set(d->egress, d->negress, i) && bal[i] >= -1e-9)
				continue;
			if (fabs(bal[i]) > 1e-6 * (1 + s->admitted))
				bad = ktap_fail("%s: %s not conserved at %s (%g)", when,
						d->id, t->nodes[i].name, bal[i]);
		}
	}
	for (a = 0; a < t->narcs && !bad; a++) {
		if (fabs(load[a] - ctx->load[a]) > 1e-6 * (1 + load[a]))
			bad = ktap_fail("%s: load on %s is %g, paths say %g", when,
					t->arcs[a].name, ctx->load[a], load[a]);
		/* reservations given over capacity are the input's business */
		if (ctx->opt.admission && load[a] > 1e-9 &&
		    ctx->background[a] + load[a] > t->arcs[a].capacity * (1 + 1e-6))
			bad = ktap_fail("%s: %s over capacity: %g + %g > %g", when,
					t->arcs[a].name, ctx->background[a], load[a],
					t->arcs[a].capacity);
		if (ctx->failed[a] && load[a] > 0)
			bad = ktap_fail("%s: flow on failed %s", when, t->arcs[a].name);
	}
	free(load);
	free(bal);
	return bad;
}

/*
 * The lower bound reported is one: not above the max utilisation, nor
 * (with GLPK) above the LP optimum for the demands admitted now.  A
 * removal or a shrink once left the cold solve's, above both.
 */
static int bound_holds(const struct mpte_ctx *ctx, const char *when)
{
	double lb = mpte_lower_bound(ctx), u = mpte_max_utilisation(ctx), lp;
	char err[256];

	if (lb > u * (1 + 1e-9) + 1e-9)
		return ktap_fail("%s: lower bound %g above max util %g", when,
				 lb, u);
	if (!mpte_exact_available())
		return 0;
	if (mpte_exact(ctx, &lp, err, sizeof(err)))
		return ktap_fail("%s: exact LP: %s", when, err);
	if (lb > lp * (1 + 1e-6) + 1e-9)
		return ktap_fail("%s: lower bound %g above the LP optimum %g",
				 when, lb, lp);
	return 0;
}

/*
 * The SID count of every path held, from the cached IGP trees and from the
 * local searches large topologies use (segments.c): the same lists.
 */
static int sids_agree(struct mpte_ctx *ctx, const char *when)
{
	struct mpte_sid_cache *c = mpte_sids(ctx);
	int di, p, i, bad = 0;

	for (di = 0; di < ctx->ds->n && !bad; di++) {
		const struct mpte_dstate *s = &ctx->st[di];

		for (p = 0; p < s->npaths && !bad; p++) {
			const struct mpte_path *pp = &s->paths[p];
			const char **a = mpte_xcalloc(pp->len + 1, sizeof(*a));
			const char **b = mpte_xcalloc(pp->len + 1, sizeof(*b));
			int na, nb, ea, eb, ma, mb;

			mpte_sid_cache_set_local(c, false);
			na = mpte_segments(c, pp->arcs, pp->len, a, pp->len + 1,
					   &ea, &ma);
			mpte_sid_cache_set_local(c, true);
			nb = mpte_segments(c, pp->arcs, pp->len, b, pp->len + 1,
					   &eb, &mb);
			mpte_sid_cache_set_local(c, false);
			if (na != nb || ea != eb || ma != mb)
				bad = ktap_fail("%s: %s path %d: %d SIDs (exact %d) from trees, %d (exact %d) from local searches",
						when, ctx->ds->d[di].id, p, na, ea,
						nb, eb);
			for (i = 0; i < na && !bad; i++)
				if (a[i] != b[i])
					bad = ktap_fail("%s: %s path %d: SID %d differs: %s, %s",
							when, ctx->ds->d[di].id, p, i,
							a[i] ? a[i] : "-", b[i] ? b[i] : "-");
			free(a);
			free(b);
		}
	}
	return bad;
}

/*
 * What the data plane gets: every admitted demand installable (every node
 * has a SID here), at most max_sids SIDs and DMSC_MAX_PATHS lists, weights
 * in range, no two equal lists.
 */
static int lists_installable(struct json_object *d, const struct mpte_ctx *ctx,
			     size_t i)
{
	struct json_object *paths, *inst;
	size_t p, q, n;
	int max = mpte_max_sids(ctx, (int)i);

	if (!json_object_object_get_ex(d, "installable", &inst) ||
	    !json_object_get_boolean(inst))
		return ktap_fail("demand %zu: not installable: %s", i,
				 json_object_get_string(json_object_object_get(d, "install_error")));
	paths = json_object_object_get(d, "paths");
	n = json_object_array_length(paths);
	if (n < 1 || n > DMSC_MAX_PATHS)
		return ktap_fail("demand %zu: %zu lists", i, n);
	for (p = 0; p < n; p++) {
		struct json_object *pp = json_object_array_get_idx(paths, p);
		struct json_object *sp = json_object_object_get(pp, "segments");
		int w = json_object_get_int(json_object_object_get(pp, "weight"));

		if (json_object_array_length(sp) < 1 ||
		    (int)json_object_array_length(sp) > max)
			return ktap_fail("demand %zu: a list of %zu SIDs (max %d)",
					 i, json_object_array_length(sp), max);
		if (w < 1 || w > DMSC_MAX_WEIGHT)
			return ktap_fail("demand %zu: weight %d", i, w);
		for (q = 0; q < p; q++)
			if (!strcmp(json_object_to_json_string(sp),
				    json_object_to_json_string(json_object_object_get(
					json_object_array_get_idx(paths, q), "segments"))))
				return ktap_fail("demand %zu: lists %zu and %zu are equal: %s",
						 i, q, p, json_object_to_json_string(sp));
	}
	return 0;
}

static int dag_acyclic(const struct mpte_ctx *ctx)
{
	struct json_object *r = mpte_result_json((struct mpte_ctx *)ctx);
	struct json_object *dem = json_object_object_get(r, "demands");
	size_t i;
	int bad = 0;

	/* a DAG's junctions can be ordered so every next hop comes later:
	 * peel junctions with no remaining previous hop */
	for (i = 0; i < json_object_array_length(dem) && !bad; i++) {
		struct json_object *d = json_object_array_get_idx(dem, i), *dag, *links;
		int *indeg, *from, *to, n, k, left, changed, v;

		if (!json_object_object_get_ex(d, "dag", &dag))
			continue;
		if (lists_installable(d, ctx, i)) {
			bad = 1;
			break;
		}
		links = json_object_object_get(dag, "links");
		n = json_object_array_length(links);
		indeg = mpte_xcalloc(ctx->t->nnodes, sizeof(int));
		from = mpte_xcalloc(n + 1, sizeof(int));
		to = mpte_xcalloc(n + 1, sizeof(int));
		for (k = 0; k < n; k++) {
			struct json_object *lk = json_object_array_get_idx(links, k);
			const char *nm = json_object_get_string(json_object_object_get(lk, "link"));
			const char *fr = json_object_get_string(json_object_object_get(lk, "from"));
			int a;

			/* a link is named by its id (parallel links happen
			 * here), its direction by from */
			for (a = 0; a < ctx->t->narcs; a++)
				if (nm && fr && !strcmp(ctx->t->links[ctx->t->arcs[a].link].id, nm) &&
				    !strcmp(ctx->t->nodes[ctx->t->arcs[a].from].name, fr))
					break;
			if (a == ctx->t->narcs) {
				bad = ktap_fail("demand %zu: dag.links[%d] names no link: %s",
						i, k, json_object_to_json_string(lk));
				n = k;	/* the rest is not checked */
				break;
			}
			from[k] = ctx->t->arcs[a].from;
			to[k] = ctx->t->arcs[a].to;
			indeg[to[k]]++;
		}
		left = n;
		do {
			changed = 0;
			for (k = 0; k < n; k++)
				if (from[k] >= 0 && !indeg[from[k]]) {
					v = to[k];
					indeg[v]--;
					from[k] = -1;
					left--;
					changed = 1;
				}
		} while (changed);
		if (left && !bad)
			bad = ktap_fail("demand %zu: DAG has a cycle", i);
		free(indeg);
		free(from);
		free(to);
	}
	json_object_put(r);
	return bad;
}

static int one_random(int seed)
{
	struct json_object *tj, *dj;
	struct mpte_topology *t = NULL;
	struct mpte_demand_set *ds = NULL;
	struct mpte_ctx *ctx = NULL;
	char err[512];
	int n, used = -1, di;

	rng = 0x9e3779b97f4a7c15ULL * (seed + 1);
	n = rint_(5, 24);
	tj = gen_topology(n, 1);
	dj = gen_demands(n, rint_(3, 40), 1, 0);
	if (getenv("MPTE_DUMP") && atoi(getenv("MPTE_DUMP")) == seed + 1000) {
		json_object_to_file("/tmp/mpte-dump-topo.json", tj);
		json_object_to_file("/tmp/mpte-dump-demands.json", dj);
	}
	t = mpte_topology_from_json(tj, err, sizeof(err));
	CHECK(t, "topology: %s", err);
	ds = mpte_demands_from_json(dj, t, err, sizeof(err));
	CHECK(ds, "demands: %s", err);
	ctx = mpte_new(t, ds, NULL);
	mpte_solve(ctx);
	CHECK(!check_solution(ctx, "solve"), "%s", "see above");
	CHECK(!dag_acyclic(ctx), "%s", "see above");
	CHECK(!sids_agree(ctx, "solve"), "%s", "see above");
	/* fail a link some admitted demand uses, then re-check */
	for (di = 0; di < ds->n && used < 0; di++)
		if (ctx->st[di].status == MPTE_ADMITTED && ctx->st[di].npaths)
			used = t->arcs[ctx->st[di].paths[0].arcs[0]].link;
	if (used >= 0) {
		CHECK(!mpte_fail_link(ctx, t->links[used].id, err, sizeof(err)),
		      "fail: %s", err);
		CHECK(!check_solution(ctx, "after failure"), "%s", "see above");
		CHECK(!sids_agree(ctx, "after failure"), "%s", "see above");
		CHECK(!bound_holds(ctx, "after failure"), "%s", "see above");
	}
	for (di = 0; di < ds->n; di++)
		if (ds->d[di].elastic) {
			CHECK(!mpte_set_bandwidth(ctx, ds->d[di].id, ds->d[di].bw_max,
						  err, sizeof(err)), "%s", err);
			CHECK(!check_solution(ctx, "after elastic growth"), "%s", "see above");
			CHECK(!bound_holds(ctx, "after elastic growth"), "%s", "see above");
			/* and down to its floor: less demand */
			CHECK(!mpte_set_bandwidth(ctx, ds->d[di].id, ds->d[di].bw_min,
						  err, sizeof(err)), "%s", err);
			CHECK(!check_solution(ctx, "after elastic shrink"), "%s", "see above");
			CHECK(!bound_holds(ctx, "after elastic shrink"), "%s", "see above");
			break;
		}
out:
	mpte_free(ctx);
	mpte_demands_free(ds);
	mpte_topology_free(t);
	json_object_put(tj);
	json_object_put(dj);
	return KTAP_FAILED();
}

/*
 * IGP metrics with zeros and fractions (the other sets have integers
 * 1..10, as TE metrics): ties over zero-metric arcs and sums that are not
 * integers.  The SID lists from trees and from local searches agree.
 */
static int one_sids(int seed)
{
	static const double igp[] = { 0, 0.5, 1, 1, 2, 2.5, 0.1, 0.2 };
	struct json_object *tj, *dj, *links;
	struct mpte_topology *t = NULL;
	struct mpte_demand_set *ds = NULL;
	struct mpte_ctx *ctx = NULL;
	char err[512];
	size_t i;
	int n;

	rng = 0x2545f4914f6cdd1dULL * (seed + 1);
	n = rint_(5, 24);
	tj = gen_topology(n, 0);
	links = json_object_object_get(tj, "links");
	for (i = 0; i < json_object_array_length(links); i++)
		json_object_object_add(json_object_array_get_idx(links, i),
				       "igp_metric",
				       json_object_new_double(igp[rint_(0, 7)]));
	dj = gen_demands(n, rint_(3, 40), 0, MPTE_DEFAULT_MAX_PATHS);
	t = mpte_topology_from_json(tj, err, sizeof(err));
	CHECK(t, "topology: %s", err);
	ds = mpte_demands_from_json(dj, t, err, sizeof(err));
	CHECK(ds, "demands: %s", err);
	ctx = mpte_new(t, ds, NULL);
	mpte_solve(ctx);
	CHECK(!sids_agree(ctx, "solve"), "%s", "see above");
out:
	mpte_free(ctx);
	mpte_demands_free(ds);
	mpte_topology_free(t);
	json_object_put(tj);
	json_object_put(dj);
	return KTAP_FAILED();
}

static int tight_arc(const struct mpte_topology *t, const double *d, int a)
{
	const struct mpte_arc *arc = &t->arcs[a];
	double nd = d[arc->from] + arc->igp_metric;

	return d[arc->from] != HUGE_VAL &&
	       fabs(nd - d[arc->to]) <= 1e-9 * (1 + fabs(nd) + fabs(d[arc->to]));
}

/*
 * The number of shortest IGP routes from root to every node, capped at 2,
 * counted apart from segments.c: walks over the arcs that are tight for
 * the distances from root (Bellman-Ford), counted by length.  Such a walk
 * is one ECMP forwarding can take, so a walk through a zero-metric cycle
 * (a zero-metric link is one, both ways) makes as many as the packet can
 * loop: 2.  A walk of n arcs or more has a cycle, and if one through a
 * cycle reaches a node, one of at most 3n arcs does.
 */
static void igp_route_counts(const struct mpte_topology *t, int root,
			     double *d, int *cnt)
{
	int n = t->nnodes, i, k, a;
	double *w = mpte_xcalloc(n, sizeof(double));
	double *nw = mpte_xcalloc(n, sizeof(double));

	for (i = 0; i < n; i++)
		d[i] = HUGE_VAL;
	d[root] = 0;
	for (k = 0; k < n; k++)
		for (a = 0; a < t->narcs; a++)
			if (d[t->arcs[a].from] + t->arcs[a].igp_metric <
			    d[t->arcs[a].to])
				d[t->arcs[a].to] = d[t->arcs[a].from] +
						   t->arcs[a].igp_metric;
	for (i = 0; i < n; i++)
		cnt[i] = i == root;
	w[root] = 1;
	for (k = 1; k <= 3 * n; k++) {
		memset(nw, 0, n * sizeof(double));
		for (a = 0; a < t->narcs; a++)
			if (tight_arc(t, d, a))
				nw[t->arcs[a].to] += w[t->arcs[a].from];
		for (i = 0; i < n; i++) {
			w[i] = nw[i] > 2 ? 2 : nw[i];
			if (w[i] > 0)
				cnt[i] = k >= n ? 2 : (cnt[i] + w[i] > 2 ?
						       2 : cnt[i] + (int)w[i]);
		}
	}
	free(w);
	free(nw);
}

/*
 * The SID counts (segments.c's trees and local searches) against
 * igp_route_counts() on small graphs with IGP metrics 0, 1 and 2: for a
 * shortest path from every node to every other, one SID (the egress's)
 * exactly when the IGP has one route there.  With zero metrics the
 * trees used to count in the order the search settled nodes at one
 * distance: one route where there were two.  Without (@positive: 1, 2
 * and 3, many ties) Dial's search counts as it goes (segments.c).
 */
static int one_sid_counts(int seed, bool positive)
{
	struct json_object *tj, *dj, *links;
	struct mpte_topology *t = NULL;
	struct mpte_demand_set *ds = NULL;
	struct mpte_ctx *ctx = NULL;
	struct mpte_sid_cache *c;
	double *d = NULL;
	int *cnt = NULL, *parc = NULL, *queue = NULL, *path = NULL;
	const char **sids = NULL;
	char err[512];
	int n, root, v, local, bad = 0;
	size_t i;

	rng = 0x9e3779b97f4a7c15ULL * (seed + 3);
	n = rint_(4, 11);
	tj = gen_topology(n, 0);
	links = json_object_object_get(tj, "links");
	/* a third one-way: a zero-metric link both ways is a cycle, and
	 * counting 2 for any zero-metric arc would pass with only those */
	for (i = 0; i < json_object_array_length(links); i++) {
		struct json_object *l = json_object_array_get_idx(links, i);

		json_object_object_add(l, "igp_metric",
				       json_object_new_int(positive ? rint_(1, 3) :
							   rint_(0, 2)));
		if (rint_(0, 2) == 0)
			json_object_object_add(l, "bidirectional",
					       json_object_new_boolean(0));
	}
	dj = gen_demands(n, 1, 0, MPTE_DEFAULT_MAX_PATHS);
	t = mpte_topology_from_json(tj, err, sizeof(err));
	CHECK(t, "topology: %s", err);
	ds = mpte_demands_from_json(dj, t, err, sizeof(err));
	CHECK(ds, "demands: %s", err);
	ctx = mpte_new(t, ds, NULL);
	c = mpte_sids(ctx);
	d = mpte_xcalloc(n, sizeof(double));
	cnt = mpte_xcalloc(n, sizeof(int));
	parc = mpte_xcalloc(n, sizeof(int));
	queue = mpte_xcalloc(n, sizeof(int));
	path = mpte_xcalloc(n, sizeof(int));
	sids = mpte_xcalloc(n + 1, sizeof(*sids));
	for (root = 0; root < n && !bad; root++) {
		int head = 0, tail = 0;

		igp_route_counts(t, root, d, cnt);
		/* a shortest path to each node: breadth first over tight arcs */
		for (v = 0; v < n; v++)
			parc[v] = -2;
		parc[root] = -1;
		queue[tail++] = root;
		while (head < tail) {
			int u = queue[head++], k;

			for (k = t->out_start[u]; k < t->out_start[u + 1]; k++) {
				int a = t->out_arc[k];

				if (parc[t->arcs[a].to] == -2 &&
				    tight_arc(t, d, a)) {
					parc[t->arcs[a].to] = a;
					queue[tail++] = t->arcs[a].to;
				}
			}
		}
		for (v = 0; v < n && !bad; v++) {
			int len = 0, x, ns, exact;

			if (v == root || parc[v] < 0)
				continue;
			for (x = v; x != root; x = t->arcs[parc[x]].from)
				len++;
			for (x = v, i = len; x != root; x = t->arcs[parc[x]].from)
				path[--i] = parc[x];
			for (local = 0; local < 2 && !bad; local++) {
				mpte_sid_cache_set_local(c, local);
				ns = mpte_segments(c, path, len, sids, n + 1,
						   &exact, NULL);
				/* one SID, and exact: the IGP's only route */
				if ((ns == 1 && exact) != (cnt[v] == 1))
					bad = ktap_fail("%s to %s (%d hops): %d SIDs (exact %d) from %s, the IGP has %s",
							t->nodes[root].name,
							t->nodes[v].name, len,
							ns, exact,
							local ? "local searches" : "trees",
							cnt[v] == 1 ? "one route" : "two or more");
			}
			mpte_sid_cache_set_local(c, false);
		}
	}
	CHECK(!bad, "%s", "see above");
out:
	free(d);
	free(cnt);
	free(parc);
	free(queue);
	free(path);
	free(sids);
	mpte_free(ctx);
	mpte_demands_free(ds);
	mpte_topology_free(t);
	json_object_put(tj);
	json_object_put(dj);
	return KTAP_FAILED();
}

/*
 * The instances held to GLPK's LP (the soaks and one_colgen()): seed's
 * topology of n nodes, its demands in *dj.
 */
static struct json_object *gen_lp_instance(int seed, int max_paths,
					   struct json_object **dj, int *n)
{
	struct json_object *tj;

	rng = 0x2545f4914f6cdd1dULL * (seed + 7);
	*n = rint_(6, 30);
	tj = gen_topology(*n, 0);
	*dj = gen_demands(*n, rint_(5, 80), 0, max_paths);
	return tj;
}

/*
 * No admission: ours vs GLPK's LP.  With max_paths 64 no path constraint
 * binds that the LP does not have; with the default 8 the cut to max_paths
 * binds on some demands, and the LP (no path limit) is the bound we are
 * held to all the same.  The ratio is printed for a soak by hand
 * (MPTE_RANDOM_N=2000: see Documentation/mpte.md).
 */
static int one_vs_lp_within(int seed, int max_paths, double within)
{
	struct json_object *tj, *dj;
	struct mpte_topology *t = NULL;
	struct mpte_demand_set *ds = NULL;
	struct mpte_ctx *ctx = NULL;
	struct mpte_options o;
	char err[512];
	double lp, capb;
	int n, i;

	tj = gen_lp_instance(seed, max_paths, &dj, &n);
	if (getenv("MPTE_DUMP") && atoi(getenv("MPTE_DUMP")) == seed) {
		json_object_to_file("/tmp/mpte-dump-topo.json", tj);
		json_object_to_file("/tmp/mpte-dump-demands.json", dj);
	}
	t = mpte_topology_from_json(tj, err, sizeof(err));
	CHECK(t, "topology: %s", err);
	ds = mpte_demands_from_json(dj, t, err, sizeof(err));
	CHECK(ds, "demands: %s", err);
	mpte_options_default(&o);
	o.admission = 0;
	o.backups = 0;
	ctx = mpte_new(t, ds, &o);
	mpte_solve(ctx);
	CHECK(!check_solution(ctx, "no admission"), "%s", "see above");
	/* a GLPK failure is a failure, not a pass; without GLPK main() skips */
	CHECK(!mpte_exact(ctx, &lp, err, sizeof(err)), "exact LP: %s", err);
	/* the cap's own bound, on the result's paths taken as the demands' */
	for (i = 0; i < ds->n; i++)
		ctx->st[i].active = ctx->st[i].status == MPTE_ADMITTED;
	capb = mpte_cap_bound(ctx);
	for (i = 0; i < ds->n; i++)
		ctx->st[i].active = 0;
	printf("# seed %d max_paths %d: ours/LP %.6f (%d nodes, %d demands) cap bound/LP %.6f ours/max(LP, cap bound) %.6f\n",
	       seed, max_paths, lp > 0 ? ctx->max_util / lp : 1.0, n, ds->n,
	       lp > 0 ? capb / lp : 0, ctx->max_util / (capb > lp ? capb : lp));
	/* ours is a routing with the cap: the cap's bound must hold for it */
	CHECK(ctx->max_util >= capb * (1 - 1e-9),
	      "max util %g below the path cap's lower bound %g", ctx->max_util,
	      capb);
	/* where no routing with the cap reaches the LP, the cap's bound is
	 * the optimum's floor (seed 2169: 1.0286 x the LP) */
	if (capb > lp)
		lp = capb;
	CHECK(ctx->max_util <= lp * within + 1e-9,
	      "max util %g > %g x max(LP, path cap bound) %g", ctx->max_util,
	      within, lp);
	CHECK(ctx->lower_bound <= lp * (1 + 1e-6) + 1e-9,
	      "lower bound %g above LP optimum %g", ctx->lower_bound, lp);
out:
	mpte_free(ctx);
	mpte_demands_free(ds);
	mpte_topology_free(t);
	json_object_put(tj);
	json_object_put(dj);
	return KTAP_FAILED();
}

/*
 * The sweeps stopped after one (--max-iterations 1): each demand holds one
 * path, so the path LP over them (colgen.c) reaches the optimum only by
 * pricing new paths in.  Ours must be the LP's optimum then, but for what
 * the sharp polish after it moves (up to 1.03e-4 in 400 seeds; without
 * the pricing, 17 of the first 20 seeds end 1.08 to 9.8 times above).
 */
static int one_colgen(int seed)
{
	struct json_object *tj, *dj;
	struct mpte_topology *t = NULL;
	struct mpte_demand_set *ds = NULL;
	struct mpte_ctx *ctx = NULL;
	struct mpte_options o;
	char err[512];
	double lp;
	int n;

	tj = gen_lp_instance(seed, 64, &dj, &n);
	t = mpte_topology_from_json(tj, err, sizeof(err));
	CHECK(t, "topology: %s", err);
	ds = mpte_demands_from_json(dj, t, err, sizeof(err));
	CHECK(ds, "demands: %s", err);
	mpte_options_default(&o);
	o.admission = 0;
	o.backups = 0;
	o.max_iterations = 1;
	ctx = mpte_new(t, ds, &o);
	mpte_solve(ctx);
	CHECK(!check_solution(ctx, "one sweep"), "%s", "see above");
	CHECK(!mpte_exact(ctx, &lp, err, sizeof(err)), "exact LP: %s", err);
	printf("# seed %d after one sweep: ours/LP %.9f\n", seed,
	       lp > 0 ? ctx->max_util / lp : 1.0);
	CHECK(ctx->max_util <= lp * (1 + 5e-4) + 1e-9,
	      "max util %.9g above the LP optimum %.9g after one sweep",
	      ctx->max_util, lp);
out:
	mpte_free(ctx);
	mpte_demands_free(ds);
	mpte_topology_free(t);
	json_object_put(tj);
	json_object_put(dj);
	return KTAP_FAILED();
}

/*
 * Tight SID budgets on rich instances (colours, delay bounds, elastic
 * demands, hop limits, max_paths 1..3), routing every demand, the sweeps
 * stopped after 1 to 3: what a reviewer's 10,800 such cases found, a
 * demand admitted that carried nothing once the paths that held its flow
 * went over max_sids (the paths left held none).
 */
/* Which demands are admitted now, into was (one byte each). */
static void mark_admitted(const struct mpte_ctx *ctx, unsigned char *was)
{
	int di;

	for (di = 0; di < ctx->ds->n; di++)
		was[di] = ctx->st[di].status == MPTE_ADMITTED;
}

/*
 * No demand is out for its SID budget while a list of node SIDs within it
 * reaches its egress (sidpath.c's search, the oracle): with max_sids 3 a
 * 120-node WAN dropped 47 of 800 so, and a link's failure 19 more.
 * was: the demands admitted before the event (NULL: a cold solve).
 */
static int dropped_but_fits(struct mpte_ctx *ctx, const unsigned char *was,
			    const char *when)
{
	int *buf = mpte_xcalloc(ctx->t->nnodes, sizeof(int)), di, n, bad = 0;

	for (di = 0; di < ctx->ds->n && !bad; di++) {
		const struct mpte_dstate *s = &ctx->st[di];

		/* after an event, only the demands it pushed out: one out
		 * before may fit now (a failure changes IGP routes), but no
		 * event looks at it again */
		if (s->status == MPTE_ADMITTED || (was && !was[di]) ||
		    !s->reason ||
		    !strstr(s->reason, "no installable path"))
			continue;
		n = mpte_sid_path(ctx, di, NULL, buf, ctx->t->nnodes);
		if (n > 0)
			bad = ktap_fail("%s: %s is out (%s) though a path of %d hops fits",
					when, ctx->ds->d[di].id, s->reason, n);
	}
	free(buf);
	return bad;
}

static int one_rich_sids(int seed)
{
	struct json_object *tj, *dj, *arr;
	struct mpte_topology *t = NULL;
	struct mpte_demand_set *ds = NULL;
	struct mpte_ctx *ctx = NULL;
	struct mpte_options o;
	unsigned char *was = NULL;
	char err[512];
	size_t i;
	int n;

	rng = 0x9e3779b97f4a7c15ULL * (seed + 1);
	n = rint_(5, 24);
	tj = gen_topology(n, 1);
	dj = gen_demands(n, rint_(3, 60), 1, 0);
	arr = json_object_object_get(dj, "demands");
	for (i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *d = json_object_array_get_idx(arr, i);

		json_object_object_add(d, "max_paths",
				       json_object_new_int(rint_(1, 3)));
		if (rint_(0, 4) == 0)
			json_object_object_add(d, "max_hops",
					       json_object_new_int(rint_(2, 6)));
	}
	t = mpte_topology_from_json(tj, err, sizeof(err));
	CHECK(t, "topology: %s", err);
	ds = mpte_demands_from_json(dj, t, err, sizeof(err));
	CHECK(ds, "demands: %s", err);
	mpte_options_default(&o);
	o.admission = seed % 3 == 2;	/* the recovery's admission path */
	o.backups = seed & 1;
	o.max_sids = 2 + seed % 2;
	o.max_iterations = 1 + seed % 3;
	ctx = mpte_new(t, ds, &o);
	mpte_solve(ctx);
	CHECK(!check_solution(ctx, "tight SID budget"), "%s", "see above");
	CHECK(!dag_acyclic(ctx), "%s", "see above");
	CHECK(!dropped_but_fits(ctx, NULL, "cold"), "%s", "see above");
	was = mpte_xcalloc(ds->n, 1);
	mark_admitted(ctx, was);
	for (i = 0; i < (size_t)ds->n; i++)
		if (ctx->st[i].status == MPTE_ADMITTED && ctx->st[i].npaths)
			break;
	if (i < (size_t)ds->n) {
		int l = t->arcs[ctx->st[i].paths[0].arcs[0]].link;

		CHECK(!mpte_fail_link(ctx, t->links[l].id, err, sizeof(err)),
		      "fail: %s", err);
		CHECK(!check_solution(ctx, "tight SID budget, a link failed"),
		      "%s", "see above");
		CHECK(!dropped_but_fits(ctx, was, "after a failure"), "%s",
		      "see above");
		/* the recovery changes IGP routes back: a list held may need
		 * more SIDs now */
		mark_admitted(ctx, was);
		CHECK(!mpte_recover_link(ctx, t->links[l].id, err, sizeof(err)),
		      "recover: %s", err);
		CHECK(!check_solution(ctx, "tight SID budget, the link back"),
		      "%s", "see above");
		CHECK(!dropped_but_fits(ctx, was, "after the recovery"), "%s",
		      "see above");
		/* out only if no list fits: a recovery preempts no one */
		for (i = 0; i < (size_t)ds->n; i++)
			CHECK(!was[i] || ctx->st[i].status == MPTE_ADMITTED ||
			      (ctx->st[i].reason &&
			       strstr(ctx->st[i].reason, "no installable path")),
			      "the recovery pushed out %s (%s)", ds->d[i].id,
			      ctx->st[i].reason ? ctx->st[i].reason : "");
	}
out:
	free(was);
	mpte_free(ctx);
	mpte_demands_free(ds);
	mpte_topology_free(t);
	json_object_put(tj);
	json_object_put(dj);
	return KTAP_FAILED();
}

/* A demand's paths as text (arcs and flows, exact), to see who moved. */
static char *paths_sig(const struct mpte_ctx *ctx, int di)
{
	const struct mpte_dstate *s = &ctx->st[di];
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int p, i;

	fprintf(f, "%d:", s->status);
	for (p = 0; p < s->npaths; p++) {
		for (i = 0; i < s->paths[p].len; i++)
			fprintf(f, "%d,", s->paths[p].arcs[i]);
		fprintf(f, "=%.17g|", s->paths[p].flow);
	}
	fclose(f);
	return buf;
}

static char **snapshot(const struct mpte_ctx *ctx)
{
	char **sig = mpte_xcalloc(ctx->ds->n, sizeof(char *));
	int di;

	for (di = 0; di < ctx->ds->n; di++)
		sig[di] = paths_sig(ctx, di);
	return sig;
}

static void snapshot_free(char **sig, int n)
{
	int di;

	for (di = 0; di < n; di++)
		free(sig[di]);
	free(sig);
}

/* Every demand the event did not touch (but skip) kept its paths. */
static int untouched_unchanged(const struct mpte_ctx *ctx, char **before,
			       int skip, int strict, const char *when)
{
	int di, bad = 0;

	for (di = 0; di < ctx->ds->n && !bad; di++) {
		char *now;

		if (di == skip || (!strict && ctx->st[di].touched))
			continue;
		now = paths_sig(ctx, di);
		if (strcmp(now, before[di]))
			bad = ktap_fail("%s: demand %s moved: %s -> %s", when,
					ctx->ds->d[di].id, before[di], now);
		free(now);
	}
	return bad;
}

/* cold solve of the same instance: the reference for quality */
static double cold_util(const struct mpte_topology *t,
			const struct mpte_demand_set *ds,
			const struct mpte_options *o)
{
	struct mpte_ctx *c = mpte_new(t, ds, o);
	double u;

	mpte_solve(c);
	u = mpte_max_utilisation(c);
	mpte_free(c);
	return u;
}

#define INCR_QUALITY 1.02	/* re-planned max util over a cold solve's */

/*
 * The incremental events (remove, add back, fail, recover): each result
 * passes the invariants, a removal moves no other demand, no event moves
 * a demand it does not report as touched, and after add-back and
 * recovery the max utilisation is within INCR_QUALITY of a cold solve.
 */
static int one_incremental(int seed)
{
	struct json_object *tj, *dj;
	struct mpte_topology *t = NULL;
	struct mpte_demand_set *ds = NULL;
	struct mpte_ctx *ctx = NULL;
	struct mpte_options o;
	char err[512], **before = NULL;
	double cold;
	int n, di, victim = -1, used = -1;

	rng = 0x5851f42d4c957f2dULL * (seed + 3);
	n = rint_(8, 30);
	tj = gen_topology(n, 0);
	dj = gen_demands(n, rint_(10, 80), 0, 64);
	t = mpte_topology_from_json(tj, err, sizeof(err));
	CHECK(t, "topology: %s", err);
	ds = mpte_demands_from_json(dj, t, err, sizeof(err));
	CHECK(ds, "demands: %s", err);
	mpte_options_default(&o);
	o.admission = 0;
	o.backups = 0;
	ctx = mpte_new(t, ds, &o);
	mpte_solve(ctx);
	cold = mpte_max_utilisation(ctx);
	for (di = 0; di < ds->n && victim < 0; di++)
		if (ctx->st[di].status == MPTE_ADMITTED && ctx->st[di].npaths)
			victim = di;
	CHECK(victim >= 0, "no admitted demand");

	before = snapshot(ctx);
	CHECK(!mpte_remove_demand(ctx, ds->d[victim].id, err, sizeof(err)),
	      "remove: %s", err);
	CHECK(!check_solution(ctx, "after removal"), "%s", "see above");
	CHECK(!bound_holds(ctx, "after removal"), "%s", "see above");
	CHECK(ctx->st[victim].status == MPTE_REJECTED && !ctx->st[victim].npaths,
	      "removed demand still routed");
	CHECK(!untouched_unchanged(ctx, before, victim, 1, "removal"), "-");
	CHECK(!mpte_remove_demand(ctx, ds->d[victim].id, err, sizeof(err)) == 0,
	      "a second removal was accepted");
	snapshot_free(before, ds->n);

	before = snapshot(ctx);
	CHECK(!mpte_add_demand(ctx, ds->d[victim].id, 0, err, sizeof(err)),
	      "add: %s", err);
	CHECK(!check_solution(ctx, "after add"), "%s", "see above");
	CHECK(!bound_holds(ctx, "after add"), "%s", "see above");
	CHECK(ctx->st[victim].status == MPTE_ADMITTED, "added demand not routed");
	CHECK(!untouched_unchanged(ctx, before, victim, 0, "add"), "-");
	CHECK(mpte_max_utilisation(ctx) <= cold * INCR_QUALITY + 1e-9,
	      "after add-back: max util %g > %g x cold %g",
	      mpte_max_utilisation(ctx), INCR_QUALITY, cold);
	snapshot_free(before, ds->n);

	used = t->arcs[ctx->st[victim].paths[0].arcs[0]].link;
	before = snapshot(ctx);
	CHECK(!mpte_fail_link(ctx, t->links[used].id, err, sizeof(err)),
	      "fail: %s", err);
	CHECK(!untouched_unchanged(ctx, before, -1, 0, "failure"), "-");
	CHECK(!bound_holds(ctx, "after failure"), "%s", "see above");
	snapshot_free(before, ds->n);
	before = snapshot(ctx);
	CHECK(!mpte_recover_link(ctx, t->links[used].id, err, sizeof(err)),
	      "recover: %s", err);
	CHECK(mpte_recover_link(ctx, t->links[used].id, err, sizeof(err)),
	      "a second recovery was accepted");
	CHECK(!check_solution(ctx, "after recovery"), "%s", "see above");
	CHECK(!bound_holds(ctx, "after recovery"), "%s", "see above");
	CHECK(!untouched_unchanged(ctx, before, -1, 0, "recovery"), "-");
	CHECK(mpte_max_utilisation(ctx) <= cold_util(t, ds, &o) * INCR_QUALITY + 1e-9,
	      "after recovery: max util %g > %g x cold %g",
	      mpte_max_utilisation(ctx), INCR_QUALITY, cold_util(t, ds, &o));
out:
	if (before)
		snapshot_free(before, ds->n);
	mpte_free(ctx);
	mpte_demands_free(ds);
	mpte_topology_free(t);
	json_object_put(tj);
	json_object_put(dj);
	return KTAP_FAILED();
}

/*
 * Two links fail, then come back one after the other.  After each step
 * the invariants hold, the lower bound is one (bound_holds), and, once
 * every demand the cold solve admitted is in again, the cold solve's (a
 * recovery that moved every demand once took the bound of the network
 * with the other link still down: a later recovery then moved nothing,
 * zib54 1.20 x a cold solve), and a recovery pushes out no demand.  Once
 * both are back, without admission, the max utilisation is within
 * INCR_QUALITY of a cold solve.  With admission, fewer demands than a cold
 * solve admits is said (a recovery puts back what fits without moving the
 * others much, where a cold solve re-arranges them all).
 */
static int one_two_failures(int seed, int admission)
{
	struct json_object *tj, *dj;
	struct mpte_topology *t = NULL;
	struct mpte_demand_set *ds = NULL;
	struct mpte_ctx *ctx = NULL;
	struct mpte_options o;
	unsigned char *was = NULL;
	char err[512];
	double lb, *cold_bw = NULL;
	int n, di, l[2] = { -1, -1 }, k, cold_adm = 0, adm = 0;

	rng = 0x2545f4914f6cdd1dULL * (seed + 7);
	n = rint_(8, 30);
	tj = gen_topology(n, 0);
	dj = gen_demands(n, rint_(10, 80), 0, 64);
	t = mpte_topology_from_json(tj, err, sizeof(err));
	CHECK(t, "topology: %s", err);
	ds = mpte_demands_from_json(dj, t, err, sizeof(err));
	CHECK(ds, "demands: %s", err);
	mpte_options_default(&o);
	o.admission = admission;
	o.backups = 0;
	ctx = mpte_new(t, ds, &o);
	mpte_solve(ctx);
	lb = mpte_lower_bound(ctx);
	cold_bw = mpte_xcalloc(ds->n, sizeof(double));
	for (di = 0; di < ds->n; di++)
		if (ctx->st[di].status == MPTE_ADMITTED)
			cold_bw[di] = ctx->st[di].admitted;
	/* two links the routing uses, the first hops of two demands */
	for (di = 0; di < ds->n; di++) {
		const struct mpte_dstate *s = &ctx->st[di];
		int li;

		if (s->status != MPTE_ADMITTED)
			continue;
		cold_adm++;
		if (!s->npaths)
			continue;
		li = t->arcs[s->paths[0].arcs[0]].link;
		if (l[0] < 0)
			l[0] = li;
		else if (l[1] < 0 && li != l[0])
			l[1] = li;
	}
	if (l[1] < 0)
		goto out;	/* one link carries it all: nothing to test */
	for (k = 0; k < 2; k++) {
		CHECK(!mpte_fail_link(ctx, t->links[l[k]].id, err, sizeof(err)),
		      "fail %s: %s", t->links[l[k]].id, err);
		CHECK(!check_solution(ctx, "after a failure"), "%s", "see above");
		CHECK(!bound_holds(ctx, "after a failure"), "%s", "see above");
	}
	was = mpte_xcalloc(ds->n, 1);
	for (k = 0; k < 2; k++) {
		mark_admitted(ctx, was);
		CHECK(!mpte_recover_link(ctx, t->links[l[k]].id, err, sizeof(err)),
		      "recover %s: %s", t->links[l[k]].id, err);
		CHECK(!check_solution(ctx, "after a recovery"), "%s", "see above");
		CHECK(!bound_holds(ctx, "after a recovery"), "%s", "see above");
		/* every demand the cold solve admitted is in again, at its
		 * bandwidth: its bound holds, and is the one reported */
		for (di = 0; di < ds->n; di++)
			if (cold_bw[di] > 0 &&
			    (ctx->st[di].status != MPTE_ADMITTED ||
			     ctx->st[di].admitted < cold_bw[di]))
				break;
		CHECK(di < ds->n || mpte_lower_bound(ctx) == lb,
		      "recovery %d: lower bound %g, the cold solve's %g", k,
		      mpte_lower_bound(ctx), lb);
		for (di = 0; di < ds->n; di++)
			CHECK(!was[di] || ctx->st[di].status == MPTE_ADMITTED,
			      "recovery %d pushed out %s (%s)", k, ds->d[di].id,
			      ctx->st[di].reason ? ctx->st[di].reason : "");
	}
	for (di = 0; di < ds->n; di++)
		adm += ctx->st[di].status == MPTE_ADMITTED;
	if (admission && adm < cold_adm)
		printf("# seed %d: %d admitted once both links are back, %d by a cold solve\n",
		       seed, adm, cold_adm);
	if (!admission)
		CHECK(mpte_max_utilisation(ctx) <=
		      cold_util(t, ds, &o) * INCR_QUALITY + 1e-9,
		      "both links back: max util %g > %g x cold %g",
		      mpte_max_utilisation(ctx), INCR_QUALITY,
		      cold_util(t, ds, &o));
out:
	free(cold_bw);
	free(was);
	mpte_free(ctx);
	mpte_demands_free(ds);
	mpte_topology_free(t);
	json_object_put(tj);
	json_object_put(dj);
	return KTAP_FAILED();
}

/* 1.012, 1.111, 1.029, 1.035 and 1.125 x the LP before pathlp.c; then
 * 1.034 and 1.017 before colgen.c (the sweeps stopped at 400) */
static const int capped_regressions[] = { 122, 856, 1105, 1192, 2169,
					  2544, 3176 };

/*
 * Held to 0.5 %: 1245 and 2596 (1.0081 and 1.0066 x the LP) while the
 * paths made final were chosen with every other demand's flow fixed
 * (context.c, cap_final()); 2646 (1.0006) went to 1.0140 while that LP's
 * re-balance was taken even where it raised U.
 */
static const int capped_regressions_half_pct[] = { 1245, 2596, 2646 };

/*
 * After a link's recovery 1.22, 1.03, 1.03, 1.37 and 1.51 x a cold solve
 * while a recovery moved only the demands on the busiest links (incr.c)
 */
static const int incr_regressions[] = { 51, 69, 128, 156, 214 };

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define N_RANDOM 40
#define N_VS_LP 20
#define N_INCR 20

/* One case against GLPK's LP, named NAME_seed_SEED; SKIP without GLPK. */
static void lp_case_within(const char *name, int seed, int max_paths,
			   double within)
{
	char nm[96];

	snprintf(nm, sizeof(nm), "%s_seed_%d", name, seed);
	if (!mpte_exact_available())
		ktap_skip(nm, "built without GLPK (HAVE_GLPK=0)");
	else
		ktap_result(one_vs_lp_within(seed, max_paths, within), nm);
}

static void lp_case(const char *name, int seed, int max_paths)
{
	lp_case_within(name, seed, max_paths, 1.01);
}

/*
 * The same routing on one thread as on two: the dual bound's searches,
 * the IGP trees, the hop counts and the cheap pass's batches run side by
 * side (par.c), and their results must not depend on how many threads
 * did them (the cheap pass batches only where it cannot search by A*:
 * the torus with a one-way link).  A 600-node
 * torus, 1,500 demands: over 512 demand groups, so the cheap pass batches; the
 * bound's searches and the trees' are made parallel at any size.  The
 * whole result is compared, after the cold solve, a failure and the
 * recovery (re-plans keep the trees the cold solve built).
 */
static struct mpte_ctx *solve_threads_sweeps(struct mpte_topology *t,
					     struct mpte_demand_set *ds,
					     const char *threads, int sweeps)
{
	struct mpte_ctx *ctx;
	struct mpte_options o;

	mpte_options_default(&o);
	if (sweeps)
		o.max_iterations = sweeps;
	o.admission = 0;	/* every demand routed: U and its bound to compare */
	setenv("MPTE_THREADS", threads, 1);
	ctx = mpte_new(t, ds, &o);
	ctx->par_min_work = 0;	/* the bound and the trees too, this small */
	mpte_solve(ctx);
	unsetenv("MPTE_THREADS");
	return ctx;
}

static struct mpte_ctx *solve_threads(struct mpte_topology *t,
				      struct mpte_demand_set *ds,
				      const char *threads)
{
	return solve_threads_sweeps(t, ds, threads, 0);
}

/*
 * The cold first sweep in pairs (solve.c, sweep_pairs()) on small rich
 * instances (colours, delay bounds, multiple ingresses and egresses,
 * admission), made to take it at any size: every route from a tree
 * searched beside and kept must be as short as a search under the
 * lengths at its turn finds (ctx->check_pairs), and the result must
 * check out.  Trees both kept and not over the set.
 */
static int first_sweep_pairs_exact(void)
{
	int seed, checked = 0, wrong = 0, used = 0, redone = 0;
	bool bad = false;

	setenv("MPTE_THREADS", "2", 1);
	for (seed = 0; seed < 40; seed++) {
		struct json_object *tj, *dj;
		struct mpte_topology *t = NULL;
		struct mpte_demand_set *ds = NULL;
		struct mpte_ctx *ctx = NULL;
		char err[512];
		int n;

		rng = 0x9e3779b97f4a7c15ULL * (seed + 7001);
		n = rint_(10, 30);
		tj = gen_topology(n, 1);
		dj = gen_demands(n, rint_(20, 120), 1, 0);
		t = mpte_topology_from_json(tj, err, sizeof(err));
		ds = t ? mpte_demands_from_json(dj, t, err, sizeof(err)) : NULL;
		if (ds) {
			ctx = mpte_new(t, ds, NULL);
			ctx->par_min_work = 0;
			ctx->check_pairs = true;
			mpte_solve(ctx);
			checked += ctx->pairs_checked;
			wrong += ctx->pairs_wrong;
			used += ctx->ahead_used;
			redone += ctx->ahead_redone;
			bad = check_solution(ctx, "pairs");
			mpte_free(ctx);
		}
		mpte_demands_free(ds);
		mpte_topology_free(t);
		json_object_put(tj);
		json_object_put(dj);
		CHECK(ds, "seed %d: %s", seed, err);
		CHECK(!bad, "seed %d: the solution does not check out", seed);
	}
	printf("# first sweep in pairs: %d trees kept, %d searched again; %d routes from kept trees checked, %d longer than a search now\n",
	       used, redone, checked, wrong);
	CHECK(!wrong && checked > 0 && used > 0 && redone > 0,
	      "%d of %d routes from kept trees longer than a search now (%d kept, %d again)",
	      wrong, checked, used, redone);
out:
	unsetenv("MPTE_THREADS");
	return KTAP_FAILED();
}

/* A w x h torus: no cut a handful of demands fill, so the optimiser
 * works (a random tree with extra links is decided by its cuts).  With
 * one_way, one more link, one way only: the cheap pass cannot take the
 * IGP trees for its A* then, and searches its groups in batches. */
static struct json_object *gen_torus(int w, int h, bool one_way)
{
	struct json_object *t = json_object_new_object();
	struct json_object *nodes = gen_nodes(w * h);
	struct json_object *links = json_object_new_array();
	int i, d;

	for (i = 0; i < w * h; i++)
		for (d = 0; d < 2; d++) {
			struct json_object *l = json_object_new_object();
			int x = i % w, y = i / w;
			int j = d ? y * w + (x + 1) % w : ((y + 1) % h) * w + x;

			json_object_object_add(l, "from", json_object_new_string(name(i)));
			json_object_object_add(l, "to", json_object_new_string(name(j)));
			json_object_object_add(l, "capacity",
					       json_object_new_double(rint_(0, 1) ? 400 : 100));
			json_object_object_add(l, "te_metric",
					       json_object_new_int(rint_(1, 10)));
			json_object_array_add(links, l);
		}
	if (one_way) {
		struct json_object *l = json_object_new_object();

		json_object_object_add(l, "from", json_object_new_string(name(0)));
		json_object_object_add(l, "to", json_object_new_string(name(w + 1)));
		json_object_object_add(l, "capacity", json_object_new_double(100));
		json_object_object_add(l, "bidirectional",
				       json_object_new_boolean(0));
		json_object_array_add(links, l);
	}
	json_object_object_add(t, "nodes", nodes);
	json_object_object_add(t, "links", links);
	return t;
}

/* The whole JSON result (paths, DAGs, SID lists, backups) of both, the
 * time taken aside: 0 if the same, else 1 and says where they part. */
static int same_output(struct mpte_ctx *a, struct mpte_ctx *b,
		       const char *when)
{
	char *ta = NULL, *tb = NULL;
	size_t la = 0, lb = 0, i;
	FILE *fa = open_memstream(&ta, &la), *fb = open_memstream(&tb, &lb);
	int differ;

	a->solve_seconds = b->solve_seconds = 0;
	mpte_result_print(a, fa);
	mpte_result_print(b, fb);
	fclose(fa);
	fclose(fb);
	differ = la != lb || memcmp(ta, tb, la);
	if (differ) {
		for (i = 0; i < la && i < lb && ta[i] == tb[i]; i++)
			;
		printf("# after %s: the results differ from byte %zu: %.60s | %.60s\n",
		       when, i, ta + (i > 20 ? i - 20 : 0), tb + (i > 20 ? i - 20 : 0));
	}
	free(ta);
	free(tb);
	return differ;
}

static int threads_same_routing(bool one_way)
{
	static const char *const fail[] = { "n30-n31" };
	struct json_object *tj, *dj;
	struct mpte_topology *t = NULL;
	struct mpte_demand_set *ds = NULL;
	struct mpte_ctx *one = NULL, *two = NULL;
	char err[512], what[64];
	int di, p, i, same = 0;

	rng = 0x2545f4914f6cdd1dULL * 4242;
	tj = gen_torus(25, 24, one_way);
	dj = gen_demands(600, 1500, 0, MPTE_DEFAULT_MAX_PATHS);
	t = mpte_topology_from_json(tj, err, sizeof(err));
	CHECK(t, "topology: %s", err);
	ds = mpte_demands_from_json(dj, t, err, sizeof(err));
	CHECK(ds, "demands: %s", err);
	one = solve_threads(t, ds, "1");
	two = solve_threads(t, ds, "2");
	CHECK(one->nworkers == 1 && two->nworkers == 2,
	      "%d and %d workers, want 1 and 2", one->nworkers, two->nworkers);
	CHECK(one->ngroups >= 512, "%d demand groups: the cheap pass does not batch below 512",
	      one->ngroups);
	CHECK(one->max_util == two->max_util && one->lower_bound == two->lower_bound,
	      "one thread: U %.17g, bound %.17g; two: %.17g, %.17g",
	      one->max_util, one->lower_bound, two->max_util, two->lower_bound);
	CHECK(!same_output(one, two, "the cold solve"), "%s", "see above");
	/* its first sweep went in pairs, and both ways a pair can go */
	CHECK(one->ahead_used > 0 && one->ahead_redone > 0 &&
	      one->ahead_used == two->ahead_used &&
	      one->ahead_redone == two->ahead_redone,
	      "trees searched beside: one thread %d kept, %d again; two %d, %d",
	      one->ahead_used, one->ahead_redone, two->ahead_used,
	      two->ahead_redone);
	/* the trees a threaded solve built are kept across events */
	for (i = 0; i < (int)ARRAY_SIZE(fail); i++) {
		CHECK(!mpte_fail_link(one, fail[i], err, sizeof(err)) &&
		      !mpte_fail_link(two, fail[i], err, sizeof(err)), "%s", err);
		snprintf(what, sizeof(what), "link %s failed", fail[i]);
		CHECK(!same_output(one, two, what), "%s", "see above");
	}
	CHECK(!mpte_recover_link(one, fail[0], err, sizeof(err)) &&
	      !mpte_recover_link(two, fail[0], err, sizeof(err)), "%s", err);
	CHECK(!same_output(one, two, "a link recovered"), "%s", "see above");
	for (di = 0; di < ds->n; di++) {
		const struct mpte_dstate *a = &one->st[di], *b = &two->st[di];

		CHECK(a->status == b->status && a->npaths == b->npaths,
		      "demand %s: status %d / %d, %d / %d paths", ds->d[di].id,
		      a->status, b->status, a->npaths, b->npaths);
		for (p = 0; p < a->npaths; p++)
			CHECK(a->paths[p].len == b->paths[p].len &&
			      a->paths[p].flow == b->paths[p].flow &&
			      !memcmp(a->paths[p].arcs, b->paths[p].arcs,
				      a->paths[p].len * sizeof(int)),
			      "demand %s: path %d differs", ds->d[di].id, p);
		same++;
	}
	printf("# %d demands routed alike, U %.6f, bound %.6f\n", same,
		   one->max_util, one->lower_bound);
out:
	mpte_free(one);
	mpte_free(two);
	mpte_demands_free(ds);
	mpte_topology_free(t);
	json_object_put(tj);
	json_object_put(dj);
	return KTAP_FAILED();
}

/*
 * The cheap pass's A* stops at the cost below which a route must come to
 * move any flow (cheap.c, useful_below()).  On tori with over 512 demand
 * groups, where it searches by A*, every search so cut is searched
 * again without the bound (ctx->check_cheap): none may find a route that
 * would have moved flow, nor one below the bound the cut gave; and the
 * routing must check out, and on the first be the same as a solve's
 * without the bound (ctx->cheap_unbounded), to the byte: the floors the
 * cuts raise, which spare later searches, must spare none that would
 * move (seen failing with a floor raised past a full link).
 */
static int cheap_cut_exact(void)
{
	int seed, cut = 0, wrong = 0;

	for (seed = 0; seed < 2; seed++) {
		struct json_object *tj, *dj;
		struct mpte_topology *t = NULL;
		struct mpte_demand_set *ds = NULL;
		struct mpte_ctx *ctx = NULL, *plain = NULL;
		struct mpte_options o;
		char err[512];
		bool bad = false, differ = false;

		rng = 0x2545f4914f6cdd1dULL * (5150 + seed);
		/* 4,092 rows, past column generation's 4,000 (colgen.c) */
		tj = gen_torus(27, 24, false);
		dj = gen_demands(648, 1500, 0, MPTE_DEFAULT_MAX_PATHS);
		t = mpte_topology_from_json(tj, err, sizeof(err));
		ds = t ? mpte_demands_from_json(dj, t, err, sizeof(err)) : NULL;
		if (ds) {
			mpte_options_default(&o);
			/* admission: the sweeps take 10 times longer here */
			o.admission = 0;
			ctx = mpte_new(t, ds, &o);
			ctx->check_cheap = true;
			mpte_solve(ctx);
			cut += ctx->cheap_cut;
			wrong += ctx->cheap_cut_wrong;
			bad = ctx->ngroups < 512 || check_solution(ctx, "solve");
			if (ctx->ngroups < 512)
				printf("# seed %d: %d demand groups, no A* below 512\n",
				       seed, ctx->ngroups);
			/* the first seed only: 16 s more under ASan */
			if (!seed) {
				plain = mpte_new(t, ds, &o);
				plain->cheap_unbounded = true;
				mpte_solve(plain);
				differ = same_output(ctx, plain, "the cold solve");
				mpte_free(plain);
			}
			mpte_free(ctx);
		}
		mpte_demands_free(ds);
		mpte_topology_free(t);
		json_object_put(tj);
		json_object_put(dj);
		CHECK(ds, "seed %d: %s", seed, err);
		CHECK(!bad, "seed %d: see above", seed);
		CHECK(!differ, "seed %d: not the routing without the bound", seed);
	}
	printf("# %d A* searches cut at their bound, %d wrong\n", cut, wrong);
	CHECK(cut > 0 && !wrong, "%d of %d searches cut at their bound were wrong",
	      wrong, cut);
out:
	return KTAP_FAILED();
}

/*
 * From MPTE_RADIX_MIN_NODES nodes every search takes the radix heap,
 * those whose paths are read too (graph.c).  On a
 * random 2,304-node topology: the distances of searches from 8 sources,
 * under lengths with many ties (quarters: exact sums) and without, are
 * Bellman-Ford's, and each node's path read back adds up to its
 * distance; then a cold solve there checks out and makes the same
 * result on one thread and on two.
 */
static int radix_heap_searches(void)
{
	struct json_object *tj, *dj;
	struct mpte_topology *t = NULL;
	struct mpte_demand_set *ds = NULL;
	struct mpte_ctx *one = NULL, *two = NULL;
	struct mpte_sp sp = { 0 };
	double *len = NULL, *ref = NULL;
	char err[512];
	int a, v, src, round, bad = 0;

	rng = 0x2545f4914f6cdd1dULL * 4343;
	tj = gen_topology(2304, 0);
	dj = gen_demands(2304, 1500, 0, MPTE_DEFAULT_MAX_PATHS);
	t = mpte_topology_from_json(tj, err, sizeof(err));
	CHECK(t, "topology: %s", err);
	CHECK(mpte_pq_radix_for(t), "%d nodes: not the radix heap's size",
	      t->nnodes);
	len = mpte_xcalloc(t->narcs, sizeof(*len));
	ref = mpte_xcalloc(t->nnodes, sizeof(*ref));
	mpte_sp_init(&sp, t->nnodes);
	for (round = 0; round < 8 && !bad; round++) {
		bool quarters = round % 2 == 0;
		bool changed = true;

		for (a = 0; a < t->narcs; a++)
			len[a] = quarters ? rint_(0, 8) * 0.25 :
				 rint_(1, 1 << 20) / 7919.0;
		src = rint_(0, t->nnodes - 1);
		mpte_dijkstra(t, &sp, &src, 1, len, NULL, NULL, 0);
		CHECK(sp.use_radix, "%s", "the search took the binary heap");
		for (v = 0; v < t->nnodes; v++)
			ref[v] = v == src ? 0 : HUGE_VAL_D;
		while (changed) {
			changed = false;
			for (a = 0; a < t->narcs; a++) {
				const struct mpte_arc *arc = &t->arcs[a];

				if (ref[arc->from] + len[a] < ref[arc->to]) {
					ref[arc->to] = ref[arc->from] + len[a];
					changed = true;
				}
			}
		}
		for (v = 0; v < t->nnodes && !bad; v++) {
			double sum = 0;
			int x;

			if (quarters ? sp.dist[v] != ref[v] :
			    fabs(sp.dist[v] - ref[v]) > 1e-9 * (1 + ref[v]))
				bad = ktap_fail("source %d, node %d: distance %.17g, Bellman-Ford %.17g",
						src, v, sp.dist[v], ref[v]);
			for (x = v; x != src && sp.pred[x] >= 0;
			     x = t->arcs[sp.pred[x]].from)
				sum += len[sp.pred[x]];
			if (!bad && (x != src ||
				     fabs(sum - sp.dist[v]) > 1e-9 * (1 + sum)))
				bad = ktap_fail("source %d, node %d: its path adds up to %.17g, not %.17g",
						src, v, sum, sp.dist[v]);
		}
	}
	CHECK(!bad, "%s", "see above");
	ds = mpte_demands_from_json(dj, t, err, sizeof(err));
	CHECK(ds, "demands: %s", err);
	/* 10 sweeps: the searches, not the optimum, are the question */
	one = solve_threads_sweeps(t, ds, "1", 10);
	two = solve_threads_sweeps(t, ds, "2", 10);
	CHECK(!check_solution(one, "the cold solve"), "%s", "see above");
	CHECK(!same_output(one, two, "the cold solve"), "%s", "see above");
	printf("# %d nodes, %d demands: U %.6f, bound %.6f\n", t->nnodes,
	       ds->n, one->max_util, one->lower_bound);
out:
	mpte_sp_fini(&sp);
	free(len);
	free(ref);
	mpte_free(one);
	mpte_free(two);
	mpte_demands_free(ds);
	mpte_topology_free(t);
	json_object_put(tj);
	json_object_put(dj);
	return KTAP_FAILED();
}

int main(void)
{
	char nm[64];
	int i, nr = N_RANDOM, nl = N_VS_LP, ni = N_INCR, first = 0;

	/* MPTE_RANDOM_N=k runs k of each, for a longer soak by hand;
	 * MPTE_RANDOM_SEED=s from seed s on (one failure again: N=1) */
	if (getenv("MPTE_RANDOM_N"))
		nr = nl = ni = atoi(getenv("MPTE_RANDOM_N"));
	if (getenv("MPTE_RANDOM_SEED"))
		first = atoi(getenv("MPTE_RANDOM_SEED"));
	/* MPTE_RANDOM_CAPPED=1: the capped LP cases alone (the path-cap soak) */
	if (getenv("MPTE_RANDOM_CAPPED") && atoi(getenv("MPTE_RANDOM_CAPPED"))) {
		ktap_plan(nl);
		for (i = 0; i < nl; i++)
			lp_case("random_capped_within_1pct_of_lp", first + i,
				MPTE_DEFAULT_MAX_PATHS);
		return ktap_failed ? 1 : 0;
	}
	ktap_plan(5 * nr + 3 * nl + (int)ARRAY_SIZE(capped_regressions) +
		  (int)ARRAY_SIZE(capped_regressions_half_pct) + ni +
		  (int)ARRAY_SIZE(incr_regressions) + 2 * ni + 6);
	for (i = 0; i < nr; i++) {
		snprintf(nm, sizeof(nm), "random_solution_invariants_seed_%d", first + i);
		ktap_result(one_random(first + i), nm);
	}
	for (i = 0; i < nr; i++) {
		snprintf(nm, sizeof(nm), "random_sids_igp_zero_and_fractions_seed_%d", first + i);
		ktap_result(one_sids(first + i), nm);
	}
	for (i = 0; i < nr; i++) {
		snprintf(nm, sizeof(nm), "random_sid_counts_igp_zero_seed_%d", first + i);
		ktap_result(one_sid_counts(first + i, false), nm);
	}
	for (i = 0; i < nr; i++) {
		snprintf(nm, sizeof(nm), "random_sid_counts_igp_positive_seed_%d", first + i);
		ktap_result(one_sid_counts(first + i, true), nm);
	}
	for (i = 0; i < nr; i++) {
		snprintf(nm, sizeof(nm), "random_rich_tight_sid_budget_seed_%d", first + i);
		ktap_result(one_rich_sids(first + i), nm);
	}
	for (i = 0; i < nl; i++)
		lp_case("random_within_1pct_of_lp", first + i, 64);
	for (i = 0; i < nl; i++) {
		snprintf(nm, sizeof(nm), "random_one_sweep_then_priced_paths_reach_lp_seed_%d", first + i);
		if (!mpte_exact_available())
			ktap_skip(nm, "built without GLPK (HAVE_GLPK=0)");
		else
			ktap_result(one_colgen(first + i), nm);
	}
	for (i = 0; i < nl; i++)
		lp_case("random_capped_within_1pct_of_lp", first + i,
			MPTE_DEFAULT_MAX_PATHS);
	/* seeds the 2,000-instance soak found above 1.01 x with the cap,
	 * while the kept paths were the fattest, cut and scaled */
	for (i = 0; i < (int)ARRAY_SIZE(capped_regressions); i++)
		lp_case("capped_regression", capped_regressions[i],
			MPTE_DEFAULT_MAX_PATHS);
	/* its LP optimum needs more than 8 paths for three demands: 1.058 x
	 * before colgen.c, 1.027 with it, 1.017 with the capped pricing */
	lp_case_within("capped_regression_within_2pct", 646,
		       MPTE_DEFAULT_MAX_PATHS, 1.02);
	for (i = 0; i < (int)ARRAY_SIZE(capped_regressions_half_pct); i++)
		lp_case_within("capped_regression_within_half_pct",
			       capped_regressions_half_pct[i],
			       MPTE_DEFAULT_MAX_PATHS, 1.005);
	for (i = 0; i < ni; i++) {
		snprintf(nm, sizeof(nm), "incremental_events_seed_%d", first + i);
		ktap_result(one_incremental(first + i), nm);
	}
	for (i = 0; i < (int)ARRAY_SIZE(incr_regressions); i++) {
		snprintf(nm, sizeof(nm), "incremental_regression_seed_%d",
			 incr_regressions[i]);
		ktap_result(one_incremental(incr_regressions[i]), nm);
	}
	for (i = 0; i < ni; i++) {
		snprintf(nm, sizeof(nm), "two_failures_recovered_seed_%d", first + i);
		ktap_result(one_two_failures(first + i, 0), nm);
		snprintf(nm, sizeof(nm), "two_failures_recovered_admission_seed_%d",
			 first + i);
		ktap_result(one_two_failures(first + i, 1), nm);
	}
	ktap_result(threads_same_routing(false), "threads_same_routing");
	ktap_result(threads_same_routing(true), "threads_same_routing_batches");
	ktap_result(first_sweep_pairs_exact(), "first_sweep_pairs_exact");
	ktap_result(radix_heap_searches(), "radix_heap_searches");
	ktap_result(cheap_cut_exact(), "cheap_astar_cut_exact");
	return ktap_failed ? 1 : 0;
}
