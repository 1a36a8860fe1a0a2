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

static struct json_object *hops_json(const struct mpte_topology *t,
				     const int *arcs, int len)
{
	struct json_object *h = json_object_new_array();
	int i;

	if (!len)
		return h;
	json_object_array_add(h, json_object_new_string(
		t->nodes[t->arcs[arcs[0]].from].name));
	for (i = 0; i < len; i++)
		json_object_array_add(h, json_object_new_string(
			t->nodes[t->arcs[arcs[i]].to].name));
	return h;
}

void mpte_json_link(struct json_object *o, const struct mpte_topology *t,
		    int a)
{
	const struct mpte_arc *arc = &t->arcs[a];

	json_object_object_add(o, "link",
			       json_object_new_string(t->links[arc->link].id));
	json_object_object_add(o, "from",
			       json_object_new_string(t->nodes[arc->from].name));
	json_object_object_add(o, "to",
			       json_object_new_string(t->nodes[arc->to].name));
}

/* The links of a path by id, in order: hops alone cannot tell parallel
 * links apart. */
static struct json_object *links_of(const struct mpte_topology *t,
				    const int *arcs, int len)
{
	struct json_object *l = json_object_new_array();
	int i;

	for (i = 0; i < len; i++)
		json_object_array_add(l, json_object_new_string(
			t->links[t->arcs[arcs[i]].link].id));
	return l;
}

static struct json_object *id_list(const char *csv)
{
	struct json_object *a = json_object_new_array();
	char *copy, *tok, *save = NULL;

	if (!csv)
		return a;
	copy = mpte_xstrdup(csv);
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		json_object_array_add(a, json_object_new_string(tok));
	free(copy);
	return a;
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

static struct json_object *sids_json(const char **sids, int n)
{
	struct json_object *a = json_object_new_array();
	int i;

	for (i = 0; i < n; i++)
		json_object_array_add(a, sids[i] ? json_object_new_string(sids[i])
						 : NULL);
	return a;
}

static struct json_object *demand_json(const struct mpte_ctx *ctx, int di,
				       struct mpte_sid_cache *cache)
{
	const struct mpte_topology *t = ctx->t;
	const struct mpte_demand *d = &ctx->ds->d[di];
	const struct mpte_dstate *s = &ctx->st[di];
	struct json_object *o = json_object_new_object();
	struct dp_list *lists;
	char why[256] = "";
	int p, nl, exact;

	json_object_object_add(o, "id", json_object_new_string(d->id));
	json_object_object_add(o, "status",
			       json_object_new_string(status_name(s->status)));
	json_object_object_add(o, "requested",
			       json_object_new_double(s->requested));
	json_object_object_add(o, "admitted", json_object_new_double(
		s->status == MPTE_ADMITTED ? s->admitted : 0));
	if (s->reason && s->status != MPTE_ADMITTED)
		json_object_object_add(o, "reason",
				       json_object_new_string(s->reason));
	if (s->preempted_by && s->status == MPTE_PREEMPTED)
		json_object_object_add(o, "preempted_by",
				       id_list(s->preempted_by));
	if (s->status != MPTE_ADMITTED)
		return o;

	json_object_object_add(o, "dag", mpte_dag_json(ctx, di));
	nl = dp_lists(ctx, di, cache, &lists, why, sizeof(why));
	{
		struct json_object *paths = json_object_new_array();

		for (p = 0; p < nl; p++) {
			const struct mpte_path *pp = &s->paths[lists[p].path];
			struct json_object *po = json_object_new_object();

			json_object_object_add(po, "weight", json_object_new_int(
				int_weight(lists[p].flow, s->admitted)));
			json_object_object_add(po, "bandwidth",
					       json_object_new_double(lists[p].flow));
			json_object_object_add(po, "hops",
					       hops_json(t, pp->arcs, pp->len));
			json_object_object_add(po, "links",
					       links_of(t, pp->arcs, pp->len));
			json_object_object_add(po, "segments",
					       sids_json(lists[p].sids, lists[p].n));
			if (!lists[p].exact)
				json_object_object_add(po, "exact",
					json_object_new_boolean(0));
			if (lists[p].merged > 1)
				json_object_object_add(po, "merged",
					json_object_new_int(lists[p].merged));
			json_object_object_add(po, "delay", json_object_new_double(
				mpte_path_delay(t, pp->arcs, pp->len)));
			json_object_array_add(paths, po);
			free(lists[p].sids);
		}
		free(lists);
		json_object_object_add(o, "paths", paths);
	}
	if (d->protection != MPTE_PROTECT_NONE) {
		json_object_object_add(o, "protection",
			json_object_new_string(prot_name(d->protection)));
		if (s->backup.len) {
			struct json_object *b = json_object_new_object();
			const char **sids = mpte_xcalloc(s->backup.len + 1,
							 sizeof(*sids));
			int i, fits = 1, n, missing;

			for (i = 0; i < s->backup.len; i++) {
				int a = s->backup.arcs[i];

				if (ctx->background[a] + ctx->load[a] +
				    s->admitted > t->arcs[a].capacity * (1 + 1e-9))
					fits = 0;
			}
			n = mpte_segments(cache, s->backup.arcs, s->backup.len,
					  sids, s->backup.len + 1, &exact,
					  &missing);
			list_check(ctx, di, "backup", n, missing, why,
				   sizeof(why));
			json_object_object_add(b, "hops",
				hops_json(t, s->backup.arcs, s->backup.len));
			json_object_object_add(b, "links",
				links_of(t, s->backup.arcs, s->backup.len));
			json_object_object_add(b, "segments", sids_json(sids, n));
			free(sids);
			if (!exact)
				json_object_object_add(b, "exact",
					json_object_new_boolean(0));
			json_object_object_add(b, "fits",
					       json_object_new_boolean(fits));
			json_object_object_add(o, "backup", b);
		} else {
			json_object_object_add(o, "backup", NULL);
			if (s->backup_reason)
				json_object_object_add(o, "backup_reason",
					json_object_new_string(s->backup_reason));
		}
	}
	/* what dmsc mpte batch checks before it writes a tunnel */
	json_object_object_add(o, "installable",
			       json_object_new_boolean(!why[0]));
	if (why[0])
		json_object_object_add(o, "install_error",
				       json_object_new_string(why));
	return o;
}

static struct json_object *summary_json(const struct mpte_ctx *ctx)
{
	const struct mpte_topology *t = ctx->t;
	struct json_object *sum = json_object_new_object();
	int di, n[4] = { 0 };

	for (di = 0; di < ctx->ds->n; di++)
		n[ctx->st[di].status]++;
	json_object_object_add(sum, "nodes", json_object_new_int(t->nnodes));
	json_object_object_add(sum, "links", json_object_new_int(t->narcs));
	json_object_object_add(sum, "demands", json_object_new_int(ctx->ds->n));
	json_object_object_add(sum, "admitted",
			       json_object_new_int(n[MPTE_ADMITTED]));
	json_object_object_add(sum, "rejected",
			       json_object_new_int(n[MPTE_REJECTED]));
	json_object_object_add(sum, "preempted",
			       json_object_new_int(n[MPTE_PREEMPTED]));
	json_object_object_add(sum, "max_utilisation",
			       json_object_new_double(ctx->max_util));
	json_object_object_add(sum, "lower_bound",
			       json_object_new_double(ctx->lower_bound));
	if (ctx->ecmp_util >= 0)
		json_object_object_add(sum, "ecmp_max_utilisation",
				       json_object_new_double(ctx->ecmp_util));
	json_object_object_add(sum, "iterations",
			       json_object_new_int(ctx->iterations));
	json_object_object_add(sum, "solve_seconds",
			       json_object_new_double(ctx->solve_seconds));
	return sum;
}

static struct json_object *links_json(const struct mpte_ctx *ctx)
{
	const struct mpte_topology *t = ctx->t;
	struct json_object *links = json_object_new_array();
	int a;

	for (a = 0; a < t->narcs; a++) {
		struct json_object *l = json_object_new_object();
		const struct mpte_arc *arc = &t->arcs[a];

		mpte_json_link(l, t, a);
		json_object_object_add(l, "capacity",
				       json_object_new_double(arc->capacity));
		json_object_object_add(l, "reserved",
				       json_object_new_double(ctx->background[a]));
		json_object_object_add(l, "load",
				       json_object_new_double(ctx->load[a]));
		json_object_object_add(l, "utilisation", json_object_new_double(
			(ctx->background[a] + ctx->load[a]) / arc->capacity));
		if (ctx->failed[a])
			json_object_object_add(l, "failed",
					       json_object_new_boolean(1));
		json_object_array_add(links, l);
	}
	return links;
}

static struct json_object *bg_preempt_json(const struct mpte_ctx *ctx)
{
	struct json_object *bp = json_object_new_array();
	int i;

	for (i = 0; i < ctx->nbgp; i++) {
		struct json_object *o = json_object_new_object();

		mpte_json_link(o, ctx->t, ctx->bgp[i].arc);
		json_object_object_add(o, "priority",
				       json_object_new_int(ctx->bgp[i].priority));
		json_object_object_add(o, "bandwidth",
				       json_object_new_double(ctx->bgp[i].bandwidth));
		json_object_array_add(bp, o);
	}
	return bp;
}

static struct json_object *events_json(const struct mpte_ctx *ctx)
{
	struct json_object *ev = json_object_new_array();
	int i;

	for (i = 0; i < ctx->nevents; i++) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "event",
				       json_object_new_string(ctx->events[i].what));
		json_object_object_add(o, "touched",
				       id_list(ctx->events[i].touched));
		json_object_object_add(o, "preempted",
				       id_list(ctx->events[i].preempted));
		json_object_object_add(o, "max_utilisation", json_object_new_double(
			ctx->events[i].max_utilisation));
		json_object_array_add(ev, o);
	}
	return ev;
}

struct json_object *mpte_result_json(struct mpte_ctx *ctx)
{
	struct json_object *r = json_object_new_object();
	struct json_object *dem = json_object_new_array();
	struct mpte_sid_cache *cache = mpte_sids(ctx);	/* the solver's */
	int di;

	for (di = 0; di < ctx->ds->n; di++)
		json_object_array_add(dem, demand_json(ctx, di, cache));
	json_object_object_add(r, "summary", summary_json(ctx));
	json_object_object_add(r, "demands", dem);
	json_object_object_add(r, "links", links_json(ctx));
	if (ctx->nbgp)
		json_object_object_add(r, "preempted_reservations",
				       bg_preempt_json(ctx));
	if (ctx->nevents)
		json_object_object_add(r, "events", events_json(ctx));
	return r;
}

static void put_json(FILE *f, const char *key, struct json_object *o,
		     const char *sep)
{
	fprintf(f, "\"%s\": %s%s\n", key, json_object_to_json_string_ext(o,
		JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE), sep);
	json_object_put(o);
}

/*
 * The same document as mpte_result_json, streamed one demand (and one
 * link) per line, so a 10,000-demand result never sits in memory as one
 * JSON tree.
 */
void mpte_result_print(struct mpte_ctx *ctx, FILE *f)
{
	/* the solver's IGP trees (one per head node): building them again
	 * was a fifth of fat-tree k=32's whole run */
	struct mpte_sid_cache *cache = mpte_sids(ctx);
	struct json_object *links = links_json(ctx);
	size_t i, n;
	int di;

	fputs("{\n", f);
	put_json(f, "summary", summary_json(ctx), ",");
	fputs("\"demands\": [\n", f);
	for (di = 0; di < ctx->ds->n; di++) {
		struct json_object *o = demand_json(ctx, di, cache);

		fprintf(f, "%s%s\n", json_object_to_json_string_ext(o,
			JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
			di + 1 < ctx->ds->n ? "," : "");
		json_object_put(o);
	}
	fputs("],\n\"links\": [\n", f);
	n = json_object_array_length(links);
	for (i = 0; i < n; i++)
		fprintf(f, "%s%s\n", json_object_to_json_string_ext(
			json_object_array_get_idx(links, i),
			JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
			i + 1 < n ? "," : "");
	json_object_put(links);
	fputs("]", f);
	if (ctx->nbgp) {
		fputs(",\n", f);
		put_json(f, "preempted_reservations", bg_preempt_json(ctx), "");
	}
	if (ctx->nevents) {
		fputs(",\n", f);
		put_json(f, "events", events_json(ctx), "");
	}
	fputs("}\n", f);
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
