// SPDX-License-Identifier: GPL-2.0
/*
 * admit.c - admission control, priority and preemption, elastic bandwidth,
 * and the incremental re-solves (link failure, bandwidth change).
 *
 * Routing minimises the max utilisation; if even the best routing puts a
 * link over capacity, someone must give way.  On the most loaded link we
 * rank what crosses it: worse priority first (a request by its setup
 * priority, an established demand or reservation by its hold priority),
 * at equal priority a request before an established demand (requests never
 * preempt equals), elastic demands shrink towards their minimum before
 * anyone is dropped, then the larger flow first (fewest victims).  An
 * established demand only ranks ahead of a request whose setup priority is
 * strictly better than its hold priority, which is exactly the RSVP-TE
 * preemption rule.  Then we re-route and look again.
 */
#define _GNU_SOURCE	/* qsort_r */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "mpte_int.h"

void mpte_set_reason(struct mpte_dstate *s, const char *fmt, ...)
{
	va_list ap;
	char buf[512];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	free(s->reason);
	s->reason = mpte_xstrdup(buf);
}

void mpte_append_id(char **list, const char *id)
{
	size_t n = *list ? strlen(*list) : 0;

	*list = mpte_xrealloc(*list, n + strlen(id) + 2);
	if (n)
		(*list)[n++] = ',';
	strcpy(*list + n, id);
}

static void node_set_str(const struct mpte_topology *t, const int *v, int n,
			 char *buf, size_t len)
{
	size_t o = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < n && o + 1 < len; i++)
		o += snprintf(buf + o, len - o, "%s%s", i ? "," : "",
			      t->nodes[v[i]].name);
}

static int reachable(struct mpte_ctx *ctx, const struct mpte_demand *d,
		     const struct mpte_filter *f, const double *w,
		     double *dist)
{
	int j, ok = 0;

	mpte_dijkstra(ctx->t, &ctx->sp2, d->ingress, d->ningress, w, f,
		      d->egress, d->negress);
	*dist = HUGE_VAL_D;
	for (j = 0; j < d->negress; j++)
		if (ctx->sp2.dist[d->egress[j]] < *dist) {
			*dist = ctx->sp2.dist[d->egress[j]];
			ok = 1;
		}
	return ok;
}

/* Is there any path meeting the demand's constraints?  If not, say why. */
int mpte_feasible(struct mpte_ctx *ctx, int di)
{
	const struct mpte_demand *d = &ctx->ds->d[di];
	struct mpte_dstate *s = &ctx->st[di];
	struct mpte_filter f;
	char in[256], out[256];
	double dist, *w;
	int a, any_failed = 0, ok;

	for (a = 0; a < ctx->t->narcs; a++)
		any_failed |= ctx->failed[a];
	node_set_str(ctx->t, d->ingress, d->ningress, in, sizeof(in));
	node_set_str(ctx->t, d->egress, d->negress, out, sizeof(out));
	memset(&f, 0, sizeof(f));
	f.failed = ctx->failed;
	if (!reachable(ctx, d, &f, NULL, &dist)) {
		mpte_set_reason(s, "no path from %s to %s in the topology%s",
				in, out, any_failed ? " after link failures" : "");
		return 0;
	}
	mpte_filter_for(ctx, d, &f);
	if (!reachable(ctx, d, &f, NULL, &dist)) {
		mpte_set_reason(s, "no path from %s to %s meets the colour constraints (include_any 0x%x, include_all 0x%x, exclude_any 0x%x)",
				in, out, d->include_any, d->include_all,
				d->exclude_any);
		return 0;
	}
	if (mpte_fewest_hops(ctx, di) > mpte_hop_limit(ctx, di)) {
		mpte_set_reason(s, "no path from %s to %s within max_hops %d (the fewest hops is %d)",
				in, out, mpte_hop_limit(ctx, di),
				mpte_fewest_hops(ctx, di));
		return 0;
	}
	if (d->max_delay > 0) {
		w = mpte_xcalloc(ctx->t->narcs, sizeof(double));
		for (a = 0; a < ctx->t->narcs; a++)
			w[a] = ctx->t->arcs[a].delay;
		ok = reachable(ctx, d, &f, w, &dist);
		free(w);
		if (!ok || dist > d->max_delay + MPTE_EPS) {
			mpte_set_reason(s, "no path from %s to %s within max_delay %g (the least delay is %g)",
					in, out, d->max_delay, dist);
			return 0;
		}
	}
	return 1;
}

#define ROUND_SWEEPS 30	/* optimisation budget per admission round */

struct victim {
	int demand;		/* -1: a background reservation */
	int prio;
	int is_new;
	int shrinkable;
	double flow;		/* on the overloaded arc */
};

static int cmp_victim(const void *x, const void *y)
{
	const struct victim *a = x, *b = y;

	if (a->prio != b->prio)
		return b->prio - a->prio;	/* worse (larger) first */
	if (a->is_new != b->is_new)
		return b->is_new - a->is_new;
	if (a->shrinkable != b->shrinkable)
		return b->shrinkable - a->shrinkable;
	if (a->flow != b->flow)
		return a->flow < b->flow ? 1 : -1;
	return a->demand - b->demand;
}

static double flow_on_arc(const struct mpte_dstate *s, int arc)
{
	double f = 0;
	int p, i;

	for (p = 0; p < s->npaths; p++)
		for (i = 0; i < s->paths[p].len; i++)
			if (s->paths[p].arcs[i] == arc)
				f += s->paths[p].flow;
	return f;
}

static void record_preempt_bg(struct mpte_ctx *ctx, int arc, int prio,
			      double bw)
{
	ctx->bgp = mpte_xrealloc(ctx->bgp, (ctx->nbgp + 1) * sizeof(*ctx->bgp));
	ctx->bgp[ctx->nbgp].arc = arc;
	ctx->bgp[ctx->nbgp].priority = prio;
	ctx->bgp[ctx->nbgp].bandwidth = bw;
	ctx->nbgp++;
}

/* Take a demand out: rejected if it was a request, preempted otherwise. */
static void push_out(struct mpte_ctx *ctx, int di, int arc,
		     const char *by, char **preempted)
{
	struct mpte_dstate *s = &ctx->st[di];
	const struct mpte_arc *a = &ctx->t->arcs[arc];

	mpte_drop_paths(ctx, di);
	s->active = 0;
	s->touched = 1;
	if (s->is_new) {
		s->status = MPTE_REJECTED;
		mpte_set_reason(s, "insufficient capacity: link %s (%g) cannot carry it at setup priority %d",
				a->label, a->capacity, ctx->ds->d[di].setup);
	} else {
		s->status = MPTE_PREEMPTED;
		if (by) {
			mpte_set_reason(s, "preempted on link %s by setup priority better than hold priority %d",
					a->label, ctx->ds->d[di].hold);
			free(s->preempted_by);
			s->preempted_by = mpte_xstrdup(by);
		} else {
			mpte_set_reason(s, "capacity lost on link %s; hold priority %d is the lowest there",
					a->label, ctx->ds->d[di].hold);
		}
		if (preempted)
			mpte_append_id(preempted, ctx->ds->d[di].id);
	}
}

/* Shrink an elastic victim by what the arc lacks, not below its floor. */
static double shrink(struct mpte_ctx *ctx, struct victim *v, double excess)
{
	struct mpte_dstate *s = &ctx->st[v->demand];
	double min = ctx->ds->d[v->demand].bw_min;
	double nb = s->admitted * (1 - excess / v->flow), scale;

	if (nb < min)
		nb = min;
	scale = nb / s->admitted;
	excess -= v->flow * (1 - scale);
	mpte_path_set_flow(ctx, v->demand, scale);
	s->admitted = nb;
	s->touched = 1;
	v->flow *= scale;
	v->shrinkable = 0;
	return excess;
}

/*
 * One round on an overloaded arc: choose victims until the excess is
 * covered.  Returns 1 if something changed.
 */
static int relieve_arc(struct mpte_ctx *ctx, int arc, char **preempted,
		       const int *cand, int ncand)
{
	const struct mpte_topology *t = ctx->t;
	double excess = ctx->background[arc] + ctx->load[arc] -
			t->arcs[arc].capacity;
	struct victim *v;
	int nv = 0, di, q, k, c, changed = 0;

	if (excess <= MPTE_EPS * t->arcs[arc].capacity)
		return 0;
	v = mpte_xcalloc(ncand + MPTE_PRIORITIES, sizeof(*v));
	for (c = 0; c < ncand; c++) {
		const struct mpte_dstate *s;
		const struct mpte_demand *d;
		double f;

		di = cand[c];
		s = &ctx->st[di];
		d = &ctx->ds->d[di];

		if (s->status != MPTE_ADMITTED)
			continue;
		f = flow_on_arc(s, arc);
		if (f <= 0)
			continue;
		v[nv].demand = di;
		v[nv].is_new = s->is_new;
		v[nv].prio = s->is_new ? d->setup : d->hold;
		v[nv].shrinkable = d->elastic && s->admitted > d->bw_min + MPTE_EPS;
		v[nv].flow = f;
		nv++;
	}
	for (q = 0; q < MPTE_PRIORITIES; q++) {
		double b = ctx->bg_prio[arc * MPTE_PRIORITIES + q];

		if (b <= 0)
			continue;
		v[nv].demand = -1;
		v[nv].prio = q;
		v[nv].flow = b;
		nv++;
	}
	qsort(v, nv, sizeof(*v), cmp_victim);

	for (k = 0; k < nv && excess > MPTE_EPS * t->arcs[arc].capacity; k++) {
		char *by = NULL;
		int j;

		/* entering a class (priority, request or not): its elastic
		 * headroom goes before any of its members is dropped */
		if (!k || v[k].prio != v[k - 1].prio ||
		    v[k].is_new != v[k - 1].is_new)
			for (j = k; j < nv && v[j].prio == v[k].prio &&
			     v[j].is_new == v[k].is_new &&
			     excess > MPTE_EPS * t->arcs[arc].capacity; j++)
				if (v[j].shrinkable) {
					excess = shrink(ctx, &v[j], excess);
					changed = 1;
				}
		if (excess <= MPTE_EPS * t->arcs[arc].capacity)
			break;

		if (!v[k].is_new) {
			/* who may preempt it: requests here with better setup */
			for (j = 0; j < nv; j++)
				if (v[j].demand >= 0 && v[j].is_new &&
				    v[j].prio < v[k].prio)
					mpte_append_id(&by,
						       ctx->ds->d[v[j].demand].id);
		}
		if (v[k].demand < 0) {
			double take = v[k].flow < excess ? v[k].flow : excess;

			if (!by) {
				/* nothing here outranks it: reservations that
				 * predate us are not ours to move */
				continue;
			}
			ctx->bg_prio[arc * MPTE_PRIORITIES + v[k].prio] -= take;
			record_preempt_bg(ctx, arc, v[k].prio, take);
			excess -= take;
			changed = 1;
			free(by);
			mpte_recompute_loads(ctx);
			continue;
		}
		di = v[k].demand;
		excess -= v[k].flow;
		push_out(ctx, di, arc, by, preempted);
		changed = 1;
		free(by);
	}
	free(v);
	return changed;
}

static double admitted_lb_tolerance(const struct mpte_ctx *ctx)
{
	double lb = ctx->lower_bound;

	if (lb <= 0 || lb >= 1)
		return ctx->opt.tolerance;
	/* reaching U <= 1 is provably possible: aim just below 1 */
	return (1 / lb - 1) * 0.5;
}

/* For every arc, the admitted demands crossing it (CSR). */
static void arc_users(const struct mpte_ctx *ctx, int **start, int **list)
{
	const struct mpte_topology *t = ctx->t;
	int *st = mpte_xcalloc(t->narcs + 1, sizeof(int)), *l = NULL, *fill = NULL;
	int *seen = mpte_xcalloc(t->narcs, sizeof(int));
	int di, p, i, pass;

	for (pass = 0; pass < 2; pass++) {
		if (pass) {
			for (i = 0; i < t->narcs; i++)
				st[i + 1] += st[i];
			l = mpte_xcalloc(st[t->narcs] + 1, sizeof(int));
			fill = mpte_xcalloc(t->narcs, sizeof(int));
		}
		for (di = 0; di < ctx->ds->n; di++) {
			const struct mpte_dstate *s = &ctx->st[di];

			if (s->status != MPTE_ADMITTED)
				continue;
			for (p = 0; p < s->npaths; p++)
				for (i = 0; i < s->paths[p].len; i++) {
					int a = s->paths[p].arcs[i];

					if (seen[a] == 2 * di + pass + 1)
						continue;
					seen[a] = 2 * di + pass + 1;
					if (pass)
						l[st[a] + fill[a]++] = di;
					else
						st[a + 1]++;
				}
		}
	}
	free(fill);
	free(seen);
	*start = st;
	*list = l;
}

static int cmp_arc_util(const void *x, const void *y, void *arg)
{
	const double *u = arg;
	double a = u[*(const int *)x], b = u[*(const int *)y];

	return a < b ? 1 : a > b ? -1 : 0;
}

/*
 * One round: the worst arcs over capacity that carry our flow give up
 * victims until they fit (a victim leaves all its arcs, so later arcs may
 * already fit).  Returns 1 if anything changed.
 */
static int relieve_round(struct mpte_ctx *ctx, char **preempted)
{
	const struct mpte_topology *t = ctx->t;
	double *u = mpte_xcalloc(t->narcs, sizeof(double));
	int *hot = mpte_xcalloc(t->narcs, sizeof(int)), nhot = 0, a, k;
	int *start, *list, changed = 0;

	for (a = 0; a < t->narcs; a++) {
		double c = t->arcs[a].capacity;

		if (ctx->failed[a] || ctx->load[a] <= MPTE_EPS * c)
			continue;
		u[a] = (ctx->background[a] + ctx->load[a]) / c;
		if (u[a] > 1 + 1e-9)
			hot[nhot++] = a;
	}
	if (nhot) {
		qsort_r(hot, nhot, sizeof(int), cmp_arc_util, u);
		arc_users(ctx, &start, &list);
		/* min-max routing spreads an overload over many arcs; only the
		 * worst few are surely over for good, the rest may fit after
		 * re-routing, so take victims on a few per round */
		if (nhot > 1)
			nhot = 1 + nhot / 8;
		for (k = 0; k < nhot; k++) {
			a = hot[k];
			changed |= relieve_arc(ctx, a, preempted, list + start[a],
					       start[a + 1] - start[a]);
		}
		free(start);
		free(list);
	}
	free(u);
	free(hot);
	return changed;
}

static int overloaded(const struct mpte_ctx *ctx)
{
	int a;

	for (a = 0; a < ctx->t->narcs; a++) {
		double c = ctx->t->arcs[a].capacity;

		if (!ctx->failed[a] && ctx->load[a] > MPTE_EPS * c &&
		    ctx->background[a] + ctx->load[a] > c * (1 + 1e-9))
			return 1;
	}
	return 0;
}

/*
 * Push out until nothing is over capacity, without re-routing: the last
 * word after paths are final, where a re-route would make them not final
 * again.  Making paths final can overload (a delay-bound demand's path on
 * a cycle dropped, a decomposition cut to max_paths), and the optimiser
 * then re-built the same cycle round after round.  True if anyone went.
 */
bool mpte_shed_overload(struct mpte_ctx *ctx, char **preempted)
{
	int rounds = 0;
	bool shed = false;

	while (rounds++ < 4 * ctx->ds->n + 16 && overloaded(ctx) &&
	       relieve_round(ctx, preempted))
		shed = true;
	return shed;
}

/*
 * Until nothing is over capacity: optimise harder if the bound says it
 * may fit, then push out per round and re-route, with a short sweep budget
 * per round (each round only needs to absorb what moved).
 */
void mpte_resolve_overload(struct mpte_ctx *ctx, char **preempted)
{
	struct mpte_options save = ctx->opt;
	int rounds = 0, tried_harder = 0;

	while (rounds++ < 4 * ctx->ds->n + 16 && overloaded(ctx)) {
		if (!tried_harder && ctx->lower_bound > 0 &&
		    ctx->lower_bound < 1) {
			tried_harder = 1;
			ctx->opt.tolerance = admitted_lb_tolerance(ctx);
			ctx->opt.max_iterations = save.max_iterations;
			mpte_optimise(ctx);
			ctx->opt = save;
			continue;
		}
		if (!relieve_round(ctx, preempted))
			break;		/* nothing movable: report as is */
		ctx->opt.max_iterations = ROUND_SWEEPS;
		mpte_optimise(ctx);
		ctx->opt = save;
	}
	ctx->opt = save;
}

/*
 * Which demands can be routed at all: the group's fewest-hop search
 * (hops.c) reaches an egress of each member that can, over the links its
 * colours allow that still work, so it answers this too.
 */
static void check_feasible_all(struct mpte_ctx *ctx)
{
	int di;

	for (di = 0; di < ctx->ds->n; di++) {
		const struct mpte_demand *d = &ctx->ds->d[di];
		int h = mpte_fewest_hops(ctx, di);

		/* unreachable, delay- or hop-bound: the full check says why */
		ctx->st[di].status = h >= 0 && d->max_delay <= 0 &&
				     h <= mpte_hop_limit(ctx, di) ?
				     MPTE_ADMITTED : MPTE_PENDING;
	}
}

/*
 * Requests pushed out early may fit once the rest has been re-routed:
 * offer them again, best priority first, each moved alone.
 */
static void readmit(struct mpte_ctx *ctx)
{
	int di, tries = 0, prio;

	for (prio = 0; prio < MPTE_PRIORITIES; prio++)
		for (di = 0; di < ctx->ds->n && tries < 64; di++) {
			struct mpte_dstate *s = &ctx->st[di];
			int k;

			if (s->status != MPTE_REJECTED || !s->touched ||
			    ctx->ds->d[di].setup != prio)
				continue;
			tries++;
			for (k = 0; k < ctx->ds->n; k++)
				ctx->st[k].active = 0;
			s->status = MPTE_ADMITTED;
			s->admitted = ctx->ds->d[di].elastic ?
				      ctx->ds->d[di].bw_min : s->requested;
			s->active = 1;
			mpte_optimise(ctx);
			if (mpte_current_max_util(ctx, NULL) <= 1 + 1e-9) {
				free(s->reason);
				s->reason = NULL;
				continue;
			}
			mpte_drop_paths(ctx, di);
			s->status = MPTE_REJECTED;
			s->active = 0;
		}
}

int mpte_admit(struct mpte_ctx *ctx)
{
	int di, nrej = 0;

	check_feasible_all(ctx);
	for (di = 0; di < ctx->ds->n; di++) {
		struct mpte_dstate *s = &ctx->st[di];

		mpte_drop_paths(ctx, di);
		s->touched = 0;
		if (s->withdrawn) {
			s->status = MPTE_REJECTED;
			s->active = 0;
			continue;
		}
		if (s->status != MPTE_ADMITTED && !mpte_feasible(ctx, di)) {
			s->status = MPTE_REJECTED;
			s->active = 0;
			nrej++;
			continue;
		}
		s->status = MPTE_ADMITTED;
		s->admitted = s->requested;
		s->active = 1;
	}
	mpte_optimise(ctx);
	if (!ctx->opt.admission)
		return 0;
	mpte_resolve_overload(ctx, NULL);
	readmit(ctx);
	for (di = 0; di < ctx->ds->n; di++)
		ctx->st[di].active = ctx->st[di].status == MPTE_ADMITTED;
	ctx->max_util = mpte_current_max_util(ctx, NULL);
	return 0;
}

/* Make the admitted demands crossing overloaded arcs movable too. */
static int widen(struct mpte_ctx *ctx)
{
	const struct mpte_topology *t = ctx->t;
	unsigned char *hot = mpte_xcalloc(t->narcs, 1);
	int a, di, p, i, n = 0, any = 0;

	for (a = 0; a < t->narcs; a++)
		if (!ctx->failed[a] &&
		    ctx->background[a] + ctx->load[a] >
		    t->arcs[a].capacity * (1 + 1e-9))
			hot[a] = any = 1;
	for (di = 0; any && di < ctx->ds->n; di++) {
		struct mpte_dstate *s = &ctx->st[di];

		if (s->status != MPTE_ADMITTED || s->active)
			continue;
		for (p = 0; p < s->npaths && !s->active; p++)
			for (i = 0; i < s->paths[p].len; i++)
				if (hot[s->paths[p].arcs[i]]) {
					s->active = s->touched = 1;
					n++;
					break;
				}
	}
	free(hot);
	return n;
}

void mpte_begin_event(struct mpte_ctx *ctx)
{
	int di;

	mpte_sid_path_budget(ctx);
	for (di = 0; di < ctx->ds->n; di++) {
		ctx->st[di].active = 0;
		ctx->st[di].touched = 0;
		ctx->st[di].is_new = 0;
	}
}

void mpte_end_event(struct mpte_ctx *ctx, const char *what,
		    char *preempted, const unsigned char *extra, int reroute)
{
	unsigned char *which = mpte_xcalloc(ctx->ds->n, 1);
	struct mpte_event *ev;
	int di;

	/* a withdrawal only frees capacity: an overload it leaves was
	 * there before (no admission), and moves no one */
	if (reroute && mpte_current_max_util(ctx, NULL) > 1 + 1e-9) {
		for (di = 0; di < ctx->ds->n; di++)
			if (ctx->st[di].touched &&
			    ctx->st[di].status == MPTE_ADMITTED)
				ctx->st[di].active = 1;
		if (widen(ctx))
			mpte_optimise(ctx);
		/* without admission every demand is routed past capacity, an
		 * event's overload included: re-routing is all we may do */
		if (ctx->opt.admission)
			mpte_resolve_overload(ctx, &preempted);
	}
	ctx->events = mpte_xrealloc(ctx->events,
				    (ctx->nevents + 1) * sizeof(*ctx->events));
	ev = &ctx->events[ctx->nevents++];
	memset(ev, 0, sizeof(*ev));
	ev->what = mpte_xstrdup(what);
	for (di = 0; di < ctx->ds->n; di++)
		if (ctx->st[di].touched || (extra && extra[di]))
			which[di] = 1;
	ev->preempted = preempted;
	mpte_finish(ctx, which, &ev->preempted);
	/* less demand, a reservation preempted, a link back: the bound may
	 * no longer hold */
	mpte_bound_refresh(ctx);
	/* after finishing: it may push out demands of its own */
	for (di = 0; di < ctx->ds->n; di++)
		if (ctx->st[di].touched)
			mpte_append_id(&ev->touched, ctx->ds->d[di].id);
	ev->max_utilisation = ctx->max_util;
	for (di = 0; di < ctx->ds->n; di++)
		ctx->st[di].active = 0;
	free(which);
}

/*
 * A recovery changes IGP routes, and with them the SIDs a list needs: a
 * route as short as a segment's may appear, and the segment is no longer
 * the unique shortest path (wan120m, max_sids 3: a recovery left one
 * demand with no path that fitted, and it was dropped).  Such a demand is
 * routed again, its first route within max_sids (sidpath.c).  Only a path
 * with a head whose IGP tree the recovery dropped, and too long to fit
 * however IGP routes, is counted again; counting every held path made
 * wan1000's median failure re-plan 70 ms, not 25.  A failure needs no
 * count: it only lengthens routes that did not use the link, so a
 * segment the failure leaves stays the unique shortest path.
 */
static bool list_may_have_grown(const struct mpte_ctx *ctx, int di,
				const struct mpte_path *pp)
{
	int i;

	if (pp->len + 1 <= mpte_max_sids(ctx, di))
		return false;	/* fits, however IGP routes */
	for (i = 0; i < pp->len; i++)
		if (mpte_sid_head_moved(ctx->sids,
					ctx->t->arcs[pp->arcs[i]].from))
			return true;
	return false;
}

int mpte_reroute_long_lists(struct mpte_ctx *ctx)
{
	int di, p, n = 0;

	if (!ctx->sids)
		return 0;	/* no list counted yet: none has changed */
	for (di = 0; di < ctx->ds->n; di++) {
		struct mpte_dstate *s = &ctx->st[di];

		if (s->status != MPTE_ADMITTED || s->active)
			continue;
		for (p = 0; p < s->npaths; p++)
			if (list_may_have_grown(ctx, di, &s->paths[p]) &&
			    mpte_segments_over(ctx->sids, s->paths[p].arcs,
					       s->paths[p].len,
					       mpte_max_sids(ctx, di)))
				break;
		if (p == s->npaths)
			continue;
		mpte_drop_paths(ctx, di);
		s->active = s->touched = 1;
		n++;
	}
	mpte_sid_cache_settle(ctx->sids);
	return n;
}

int mpte_fail_link(struct mpte_ctx *ctx, const char *id, char *err,
		   size_t errlen)
{
	const struct mpte_topology *t = ctx->t;
	unsigned char *backup_hit, *was_admitted;
	char what[256];
	int l = mpte_link_find(t, id, err, errlen), k, di, p, i, j;

	if (l < 0)
		return -1;
	was_admitted = mpte_xcalloc(ctx->ds->n, 1);
	for (di = 0; di < ctx->ds->n; di++)
		was_admitted[di] = ctx->st[di].status == MPTE_ADMITTED;
	mpte_begin_event(ctx);
	for (k = 0; k < 2; k++)
		if (t->links[l].arc[k] >= 0) {
			ctx->failed[t->links[l].arc[k]] = 1;
			/* IGP now routes around it: the trees it was on go */
			if (ctx->sids)
				mpte_sid_cache_fail_arc(ctx->sids,
							t->links[l].arc[k]);
		}
	mpte_hop_limits_invalidate(ctx);	/* and the fewest hops may grow */
	backup_hit = mpte_xcalloc(ctx->ds->n, 1);
	for (di = 0; di < ctx->ds->n; di++) {
		struct mpte_dstate *s = &ctx->st[di];
		int hit = 0;

		for (i = 0; i < s->backup.len; i++)
			if (ctx->failed[s->backup.arcs[i]])
				backup_hit[di] = 1;
		if (s->status != MPTE_ADMITTED)
			continue;
		for (p = 0; p < s->npaths && !hit; p++)
			for (j = 0; j < s->paths[p].len; j++)
				if (ctx->failed[s->paths[p].arcs[j]])
					hit = 1;
		if (!hit)
			continue;
		s->touched = 1;
		mpte_drop_paths(ctx, di);
		if (!mpte_feasible(ctx, di)) {
			s->status = MPTE_REJECTED;
			continue;
		}
		s->active = 1;
	}
	mpte_recompute_loads(ctx);
	mpte_optimise(ctx);
	snprintf(what, sizeof(what), "link-failure %s", t->links[l].id);
	mpte_end_event(ctx, what, NULL, backup_hit, 1);
	/* what the failure pushed out is offered again on a recovery */
	for (di = 0; di < ctx->ds->n; di++)
		if (was_admitted[di] &&
		    ctx->st[di].status != MPTE_ADMITTED)
			ctx->st[di].lost = 1;
	free(was_admitted);
	free(backup_hit);
	return 0;
}

int mpte_set_bandwidth(struct mpte_ctx *ctx, const char *id, double bw,
		       char *err, size_t errlen)
{
	int di = mpte_demand_index(ctx, id);
	const struct mpte_demand *d;
	struct mpte_dstate *s;
	char what[256];

	if (di < 0) {
		snprintf(err, errlen, "unknown demand \"%s\"", id);
		return -1;
	}
	d = &ctx->ds->d[di];
	s = &ctx->st[di];
	if (!d->elastic) {
		snprintf(err, errlen, "demand \"%s\" is not elastic", id);
		return -1;
	}
	if (s->withdrawn) {
		snprintf(err, errlen, "demand \"%s\" is withdrawn: add it first", id);
		return -1;
	}
	if (!(bw >= d->bw_min && bw <= d->bw_max)) {
		snprintf(err, errlen,
			 "demand \"%s\": %g is outside its elastic range %g..%g",
			 id, bw, d->bw_min, d->bw_max);
		return -1;
	}
	mpte_begin_event(ctx);
	/* a demand resized: the cold solve's U no longer applies (the bound
	 * is taken again at the end of the event, bound.c) */
	ctx->cold_util = 0;
	s->is_new = 1;		/* the growth is a new request */
	s->touched = 1;
	s->requested = bw;
	if (s->status != MPTE_ADMITTED) {
		if (mpte_feasible(ctx, di)) {
			s->status = MPTE_ADMITTED;
			s->admitted = bw;
			s->active = 1;
			free(s->reason);
			s->reason = NULL;
			free(s->preempted_by);
			s->preempted_by = NULL;
			mpte_optimise(ctx);
		}
	} else if (bw <= s->admitted) {
		/* shrinking frees capacity and moves no one else */
		mpte_path_set_flow(ctx, di, bw / s->admitted);
		s->admitted = bw;
	} else {
		mpte_path_set_flow(ctx, di, bw / s->admitted);
		s->admitted = bw;
		s->active = 1;
		mpte_optimise(ctx);
	}
	snprintf(what, sizeof(what), "bandwidth %s %g", id, bw);
	mpte_end_event(ctx, what, NULL, NULL, 1);
	return 0;
}
