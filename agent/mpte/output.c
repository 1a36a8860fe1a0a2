// SPDX-License-Identifier: GPL-2.0
/*
 * output.c - the result as JSON (for the SMO and -j) and as a summary a
 * person can read.  Both are derived from the final paths, so the DAG, the
 * link flows, the segment lists and the weights always agree.
 */
#include <stdlib.h>
#include <string.h>

#include <linux/dmsc.h>

#include "mpte_int.h"
#include "jw.h"

static const char *status_name(enum mpte_status s)
{
	switch (s) {
	case MPTE_ADMITTED:
		return "admitted";
	case MPTE_REJECTED:
		return "rejected";
	case MPTE_PREEMPTED:
		return "preempted";
	default:
		return "pending";
	}
}

static const char *prot_name(enum mpte_protection p)
{
	static const char *const n[] = { "none", "link", "node", "srlg" };

	return n[p];
}

static void hops_write(struct jw *w, const struct mpte_topology *t,
			const int *arcs, int len)
{
	int i;

	jw_arr(w);
	if (len) {
		jw_str(w, t->nodes[t->arcs[arcs[0]].from].name);
		for (i = 0; i < len; i++)
			jw_str(w, t->nodes[t->arcs[arcs[i]].to].name);
	}
	jw_end_arr(w);
}

void mpte_jw_link(struct jw *w, const struct mpte_topology *t, int a)
{
	const struct mpte_arc *arc = &t->arcs[a];

	jw_key(w, "link");
	jw_str(w, t->links[arc->link].id);
	jw_key(w, "from");
	jw_str(w, t->nodes[arc->from].name);
	jw_key(w, "to");
	jw_str(w, t->nodes[arc->to].name);
}

/* The links of a path by id, in order: hops alone cannot tell parallel
 * links apart. */
static void links_write(struct jw *w, const struct mpte_topology *t,
			const int *arcs, int len)
{
	int i;

	jw_arr(w);
	for (i = 0; i < len; i++)
		jw_str(w, t->links[t->arcs[arcs[i]].link].id);
	jw_end_arr(w);
}

static void id_list(struct jw *w, const char *csv)
{
	char *copy, *tok, *save = NULL;

	jw_arr(w);
	if (csv) {
		copy = mpte_xstrdup(csv);
		for (tok = strtok_r(copy, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save))
			jw_str(w, tok);
		free(copy);
	}
	jw_end_arr(w);
}

/* Integer weights for the data plane, summing to about 10000, never 0. */
#define WEIGHT_TOTAL 10000
_Static_assert(WEIGHT_TOTAL <= DMSC_MAX_WEIGHT, "a weight fits the data plane");

static int int_weight(double flow, double total)
{
	int w = (int)(flow / total * WEIGHT_TOTAL + 0.5);

	return w < 1 ? 1 : w;
}

/*
 * One segment list as the data plane gets it.  Two paths can compress to
 * the same list (an inexact one, where a hop without an adjacency SID fell
 * back to the far node's SID): the data plane cannot tell them apart, so
 * they become one list carrying both flows rather than two entries for one
 * route.
 */
struct dp_list {
	const char **sids;
	int n;
	int exact;
	int merged;		/* solver paths in this list */
	int path;		/* the fattest of them: its hops are shown */
	double flow;
};

static int same_list(const struct dp_list *l, const char **sids, int n)
{
	int i;

	if (l->n != n)
		return 0;
	for (i = 0; i < n; i++)
		if (!l->sids[i] || !sids[i] || strcmp(l->sids[i], sids[i]))
			return 0;	/* a missing SID matches nothing */
	return 1;
}

/* Why a list cannot be installed, into why (empty if it can). */
static void list_check(const struct mpte_ctx *ctx, int di, const char *what,
		       int n, int missing, char *why, size_t len)
{
	const struct mpte_topology *t = ctx->t;

	if (why[0])
		return;
	if (missing >= 0)
		snprintf(why, len, "%s needs the SID of node %s (nodes[%d]), which has none",
			 what, t->nodes[missing].name, missing);
	else if (n > mpte_max_sids(ctx, di))
		snprintf(why, len, "%s needs %d SIDs, max_sids is %d", what, n,
			 mpte_max_sids(ctx, di));
}

/*
 * The demand's segment lists, identical ones merged, heaviest first.
 * Returns their number; *lists is malloc'd (free each sids, then it).
 */
static int dp_lists(const struct mpte_ctx *ctx, int di,
		    struct mpte_sid_cache *cache, struct dp_list **lists,
		    char *why, size_t whylen)
{
	const struct mpte_dstate *s = &ctx->st[di];
	struct dp_list *l = mpte_xcalloc(s->npaths + 1, sizeof(*l));
	int nl = 0, p, k;

	for (p = 0; p < s->npaths; p++) {
		const struct mpte_path *pp = &s->paths[p];
		const char **sids = mpte_xcalloc(pp->len + 1, sizeof(*sids));
		int exact, missing, n;
		char what[32];

		n = mpte_segments(cache, pp->arcs, pp->len, sids, pp->len + 1,
				  &exact, &missing);
		snprintf(what, sizeof(what), "path %d", p);
		list_check(ctx, di, what, n, missing, why, whylen);
		for (k = 0; k < nl; k++)
			if (same_list(&l[k], sids, n))
				break;
		if (k < nl) {
			free(sids);
			l[k].exact &= exact;
			l[k].merged++;
			if (pp->flow > s->paths[l[k].path].flow)
				l[k].path = p;
			l[k].flow += pp->flow;
			continue;
		}
		l[nl].sids = sids;
		l[nl].n = n;
		l[nl].exact = exact;
		l[nl].merged = 1;
		l[nl].path = p;
		l[nl].flow = pp->flow;
		nl++;
	}
	/* heaviest first, as the paths are (a merge can change the order) */
	for (p = 1; p < nl; p++)
		for (k = p; k > 0 && l[k].flow > l[k - 1].flow; k--) {
			struct dp_list x = l[k];

			l[k] = l[k - 1];
			l[k - 1] = x;
		}
	if (!why[0] && nl > DMSC_MAX_PATHS)
		snprintf(why, whylen, "%d segment lists, a dmsc tunnel holds %d (max_paths %d is above it)",
			 nl, DMSC_MAX_PATHS, ctx->ds->d[di].max_paths);
	*lists = l;
	return nl;
}

static void sids_write(struct jw *w, const char **sids, int n)
{
	int i;

	jw_arr(w);
	for (i = 0; i < n; i++)
		jw_str(w, sids[i]);	/* NULL: null */
	jw_end_arr(w);
}

static void backup_write(struct jw *w, const struct mpte_ctx *ctx, int di,
			 struct mpte_sid_cache *cache, char *why, size_t whylen)
{
	const struct mpte_topology *t = ctx->t;
	const struct mpte_dstate *s = &ctx->st[di];
	const char **sids = mpte_xcalloc(s->backup.len + 1, sizeof(*sids));
	int i, fits = 1, n, missing, exact;

	for (i = 0; i < s->backup.len; i++) {
		int a = s->backup.arcs[i];

		if (ctx->background[a] + ctx->load[a] +
		    s->admitted > t->arcs[a].capacity * (1 + 1e-9))
			fits = 0;
	}
	n = mpte_segments(cache, s->backup.arcs, s->backup.len, sids,
			  s->backup.len + 1, &exact, &missing);
	list_check(ctx, di, "backup", n, missing, why, whylen);
	jw_obj(w);
	jw_key(w, "hops");
	hops_write(w, t, s->backup.arcs, s->backup.len);
	jw_key(w, "links");
	links_write(w, t, s->backup.arcs, s->backup.len);
	jw_key(w, "segments");
	sids_write(w, sids, n);
	free(sids);
	if (!exact) {
		jw_key(w, "exact");
		jw_bool(w, 0);
	}
	jw_key(w, "fits");
	jw_bool(w, fits);
	jw_end_obj(w);
}

static void demand_write(struct jw *w, const struct mpte_ctx *ctx, int di,
			 struct mpte_sid_cache *cache)
{
	const struct mpte_topology *t = ctx->t;
	const struct mpte_demand *d = &ctx->ds->d[di];
	const struct mpte_dstate *s = &ctx->st[di];
	struct dp_list *lists;
	char why[256] = "";
	int p, nl;

	jw_obj(w);
	jw_key(w, "id");
	jw_str(w, d->id);
	jw_key(w, "status");
	jw_str(w, status_name(s->status));
	jw_key(w, "requested");
	jw_dbl(w, s->requested);
	jw_key(w, "admitted");
	jw_dbl(w, s->status == MPTE_ADMITTED ? s->admitted : 0);
	if (s->reason && s->status != MPTE_ADMITTED) {
		jw_key(w, "reason");
		jw_str(w, s->reason);
	}
	if (s->preempted_by && s->status == MPTE_PREEMPTED) {
		jw_key(w, "preempted_by");
		id_list(w, s->preempted_by);
	}
	if (s->status != MPTE_ADMITTED) {
		jw_end_obj(w);
		return;
	}

	jw_key(w, "dag");
	mpte_dag_write(w, ctx, di);
	nl = dp_lists(ctx, di, cache, &lists, why, sizeof(why));
	jw_key(w, "paths");
	jw_arr(w);
	for (p = 0; p < nl; p++) {
		const struct mpte_path *pp = &s->paths[lists[p].path];

		jw_obj(w);
		jw_key(w, "weight");
		jw_int(w, int_weight(lists[p].flow, s->admitted));
		jw_key(w, "bandwidth");
		jw_dbl(w, lists[p].flow);
		jw_key(w, "hops");
		hops_write(w, t, pp->arcs, pp->len);
		jw_key(w, "links");
		links_write(w, t, pp->arcs, pp->len);
		jw_key(w, "segments");
		sids_write(w, lists[p].sids, lists[p].n);
		if (!lists[p].exact) {
			jw_key(w, "exact");
			jw_bool(w, 0);
		}
		if (lists[p].merged > 1) {
			jw_key(w, "merged");
			jw_int(w, lists[p].merged);
		}
		jw_key(w, "delay");
		jw_dbl(w, mpte_path_delay(t, pp->arcs, pp->len));
		jw_end_obj(w);
		free(lists[p].sids);
	}
	free(lists);
	jw_end_arr(w);
	if (d->protection != MPTE_PROTECT_NONE) {
		jw_key(w, "protection");
		jw_str(w, prot_name(d->protection));
		jw_key(w, "backup");
		if (s->backup.len) {
			backup_write(w, ctx, di, cache, why, sizeof(why));
		} else {
			jw_null(w);
			if (s->backup_reason) {
				jw_key(w, "backup_reason");
				jw_str(w, s->backup_reason);
			}
		}
	}
	/* what dmsc mpte batch checks before it writes a tunnel */
	jw_key(w, "installable");
	jw_bool(w, !why[0]);
	if (why[0]) {
		jw_key(w, "install_error");
		jw_str(w, why);
	}
	jw_end_obj(w);
}

static void summary_write(struct jw *w, const struct mpte_ctx *ctx)
{
	const struct mpte_topology *t = ctx->t;
	int di, n[4] = { 0 };

	for (di = 0; di < ctx->ds->n; di++)
		n[ctx->st[di].status]++;
	jw_obj(w);
	jw_key(w, "nodes");
	jw_int(w, t->nnodes);
	jw_key(w, "links");
	jw_int(w, t->narcs);
	jw_key(w, "demands");
	jw_int(w, ctx->ds->n);
	jw_key(w, "admitted");
	jw_int(w, n[MPTE_ADMITTED]);
	jw_key(w, "rejected");
	jw_int(w, n[MPTE_REJECTED]);
	jw_key(w, "preempted");
	jw_int(w, n[MPTE_PREEMPTED]);
	jw_key(w, "max_utilisation");
	jw_dbl(w, ctx->max_util);
	jw_key(w, "lower_bound");
	jw_dbl(w, ctx->lower_bound);
	if (ctx->ecmp_util >= 0) {
		jw_key(w, "ecmp_max_utilisation");
		jw_dbl(w, ctx->ecmp_util);
	}
	jw_key(w, "iterations");
	jw_int(w, ctx->iterations);
	jw_key(w, "solve_seconds");
	jw_dbl(w, ctx->solve_seconds);
	jw_end_obj(w);
}

static void link_write(struct jw *w, const struct mpte_ctx *ctx, int a)
{
	const struct mpte_arc *arc = &ctx->t->arcs[a];

	jw_obj(w);
	mpte_jw_link(w, ctx->t, a);
	jw_key(w, "capacity");
	jw_dbl(w, arc->capacity);
	jw_key(w, "reserved");
	jw_dbl(w, ctx->background[a]);
	jw_key(w, "load");
	jw_dbl(w, ctx->load[a]);
	jw_key(w, "utilisation");
	jw_dbl(w, (ctx->background[a] + ctx->load[a]) / arc->capacity);
	if (ctx->failed[a]) {
		jw_key(w, "failed");
		jw_bool(w, 1);
	}
	jw_end_obj(w);
}

static void bg_preempt_write(struct jw *w, const struct mpte_ctx *ctx)
{
	int i;

	jw_arr(w);
	for (i = 0; i < ctx->nbgp; i++) {
		jw_obj(w);
		mpte_jw_link(w, ctx->t, ctx->bgp[i].arc);
		jw_key(w, "priority");
		jw_int(w, ctx->bgp[i].priority);
		jw_key(w, "bandwidth");
		jw_dbl(w, ctx->bgp[i].bandwidth);
		jw_end_obj(w);
	}
	jw_end_arr(w);
}

static void events_write(struct jw *w, const struct mpte_ctx *ctx)
{
	int i;

	jw_arr(w);
	for (i = 0; i < ctx->nevents; i++) {
		jw_obj(w);
		jw_key(w, "event");
		jw_str(w, ctx->events[i].what);
		jw_key(w, "touched");
		id_list(w, ctx->events[i].touched);
		jw_key(w, "preempted");
		id_list(w, ctx->events[i].preempted);
		jw_key(w, "max_utilisation");
		jw_dbl(w, ctx->events[i].max_utilisation);
		jw_end_obj(w);
	}
	jw_end_arr(w);
}

/*
 * The result, streamed one demand (and one link) per line, so a
 * 10,000-demand result never sits in memory as one JSON tree.  The layout
 * (newlines and all) is what json-c printed when each line was a tree of
 * its own.
 */
void mpte_result_print(struct mpte_ctx *ctx, FILE *f)
{
	/* the solver's IGP trees (one per head node): building them again
	 * was a fifth of fat-tree k=32's whole run */
	struct mpte_sid_cache *cache = mpte_sids(ctx);
	struct jw w;
	int di, a;

	jw_init(&w, f);
	fputs("{\n\"summary\": ", f);
	summary_write(&w, ctx);
	fputs(",\n\"demands\": [\n", f);
	for (di = 0; di < ctx->ds->n; di++) {
		jw_init(&w, f);
		demand_write(&w, ctx, di, cache);
		fputs(di + 1 < ctx->ds->n ? ",\n" : "\n", f);
	}
	fputs("],\n\"links\": [\n", f);
	for (a = 0; a < ctx->t->narcs; a++) {
		jw_init(&w, f);
		link_write(&w, ctx, a);
		fputs(a + 1 < ctx->t->narcs ? ",\n" : "\n", f);
	}
	fputs("]", f);
	if (ctx->nbgp) {
		fputs(",\n\"preempted_reservations\": ", f);
		jw_init(&w, f);
		bg_preempt_write(&w, ctx);
		fputs("\n", f);
	}
	if (ctx->nevents) {
		fputs(",\n\"events\": ", f);
		jw_init(&w, f);
		events_write(&w, ctx);
		fputs("\n", f);
	}
	fputs("}\n", f);
}

/*
 * The same document as a json-c tree, for callers that want one (the
 * tests): parsed back from the stream, so there is one encoder.  json-c
 * keeps a parsed number's text, so printing the tree gives the same bytes.
 */
struct json_object *mpte_result_json(struct mpte_ctx *ctx)
{
	struct json_object *r;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		abort();	/* out of memory, as mpte_xcalloc */
	mpte_result_print(ctx, f);
	if (fclose(f))
		abort();	/* out of memory, as mpte_xcalloc */
	r = json_tokener_parse(buf);
	free(buf);
	if (!r)
		abort();	/* our own output is valid JSON: only memory */
	return r;
}

/* " A B -id-> C": a hop over one of parallel links names it. */
static void print_hops(FILE *f, const struct mpte_topology *t, const int *arcs,
		       int len)
{
	int i;

	fprintf(f, " %s", t->nodes[t->arcs[arcs[0]].from].name);
	for (i = 0; i < len; i++) {
		const struct mpte_arc *a = &t->arcs[arcs[i]];

		if (strcmp(a->label, a->name))
			fprintf(f, " -%s->", t->links[a->link].id);
		fprintf(f, " %s", t->nodes[a->to].name);
	}
	fputc('\n', f);
}

void mpte_print_summary(struct mpte_ctx *ctx, FILE *f)
{
	const struct mpte_topology *t = ctx->t;
	int di, p, i, n[4] = { 0 };

	for (di = 0; di < ctx->ds->n; di++)
		n[ctx->st[di].status]++;
	fprintf(f, "topology: %d nodes, %d links; demands: %d admitted, %d rejected, %d preempted\n",
		t->nnodes, t->narcs, n[MPTE_ADMITTED], n[MPTE_REJECTED],
		n[MPTE_PREEMPTED]);
	fprintf(f, "max utilisation %.4f (lower bound %.4f", ctx->max_util,
		ctx->lower_bound);
	if (ctx->ecmp_util >= 0)
		fprintf(f, ", ECMP %.4f", ctx->ecmp_util);
	fprintf(f, "), %d sweeps, %.3f s\n", ctx->iterations,
		ctx->solve_seconds);
	for (di = 0; di < ctx->ds->n; di++) {
		const struct mpte_demand *d = &ctx->ds->d[di];
		const struct mpte_dstate *s = &ctx->st[di];

		if (s->status != MPTE_ADMITTED) {
			fprintf(f, "%s: %s: %s\n", d->id, status_name(s->status),
				s->reason ? s->reason : "");
			continue;
		}
		fprintf(f, "%s: admitted %g of %g on %d path%s\n", d->id,
			s->admitted, s->requested, s->npaths,
			s->npaths == 1 ? "" : "s");
		for (p = 0; p < s->npaths; p++) {
			const struct mpte_path *pp = &s->paths[p];

			fprintf(f, "  %6.2f%% %10g ", 100 * pp->flow / s->admitted,
				pp->flow);
			print_hops(f, t, pp->arcs, pp->len);
		}
		if (d->protection != MPTE_PROTECT_NONE) {
			if (s->backup.len) {
				fprintf(f, "  backup (%s):    ",
					prot_name(d->protection));
				print_hops(f, t, s->backup.arcs, s->backup.len);
			} else {
				fprintf(f, "  backup (%s): none: %s\n",
					prot_name(d->protection),
					s->backup_reason ? s->backup_reason : "");
			}
		}
	}
	for (i = 0; i < ctx->nevents; i++)
		fprintf(f, "event %s: touched [%s], preempted [%s], max utilisation %.4f\n",
			ctx->events[i].what,
			ctx->events[i].touched ? ctx->events[i].touched : "",
			ctx->events[i].preempted ? ctx->events[i].preempted : "",
			ctx->events[i].max_utilisation);
}
