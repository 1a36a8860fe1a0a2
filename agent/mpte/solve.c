// SPDX-License-Identifier: GPL-2.0
/*
 * solve.c - minimise the maximum link utilisation over the demands that are
 * admitted (a min-congestion multicommodity flow).
 *
 * The max is not smooth, so we minimise the exponential potential
 *	Phi = sum_e exp(alpha (u_e - uref)),	u_e = (background_e + load_e) / c_e
 * whose minimiser approaches the min-max one as alpha grows (the log of Phi
 * over alpha is within ln(m)/alpha of the max).  Each demand keeps at most
 * max_paths paths; a sweep visits demands grouped by ingress set and colour
 * constraints, computes one shortest-path tree per group under the
 * derivative lengths len_e = exp(alpha (u_e - uref)) / c_e, adds the
 * shortest path to each demand's set and moves flow to it from its longer
 * paths with a projected Newton step (Bertsekas-Gafni path formulation).
 * Loads and lengths are updated as each demand moves (Gauss-Seidel), which
 * converges far faster than moving everyone at once.  alpha starts soft and
 * doubles per level (continuation), so early steps move a lot of flow and
 * late steps polish.
 *
 * Lengths normalised to sum_e len_e c_e = 1 are a feasible dual of the LP
 *	min U  s.t.  background_e + load_e <= U c_e,
 * which gives a certified lower bound
 *	LB = sum_e y_e background_e + sum_k d_k dist_y(k).
 * We stop when the max utilisation is within tolerance of the best bound
 * seen, so the gap we report is proven, not guessed.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mpte_int.h"
#include "colgen.h"
#include "pathlp.h"

#define BETA_START	4.0	/* alpha * U at the first level */
#define BETA_MAX	8192.0
#define MIN_SWEEPS_PER_LEVEL 2
#define MAX_SWEEPS_PER_LEVEL 30
#define LEVEL_GAIN 1e-3
#define EXP_ROOM 600.0	/* exponent headroom below the 700 clamp */
#define STALL_GAIN 1e-5	/* at the sharpest level, stop when the max */
#define STALL_SWEEPS 12	/* has not improved for this many sweeps */
#define RESTRICTED_SWEEPS 150	/* budget after the cut, and of a polish */

enum phase { PHASE_FREE, PHASE_CAPPED, PHASE_HELD };
#define START_BETA	256.0	/* re-balancing a start near the optimum */
#define BALANCE_MOVES	3	/* moves among a demand's own paths per visit */
#define BALANCE_GAP	1e-3	/* ... while their lengths differ by more */

void mpte_arc_len_update(struct mpte_ctx *ctx, int a)
{
	const struct mpte_arc *arc = &ctx->t->arcs[a];
	double u = (ctx->background[a] + ctx->load[a]) / arc->capacity;
	double x = ctx->alpha * (u - ctx->uref);

	if (x > 700)
		x = 700;
	ctx->len[a] = exp(x) / arc->capacity;
}

static void all_len_update(struct mpte_ctx *ctx)
{
	int a;

	for (a = 0; a < ctx->t->narcs; a++)
		mpte_arc_len_update(ctx, a);
}

static void add_flow(struct mpte_ctx *ctx, const int *arcs, int len,
		     double f)
{
	int i;

	if (ctx->ver) {
		/* a sweep's tree searched ahead is checked against these */
		for (i = 0; i < len; i++)
			ctx->arc_ver[arcs[i]] = ctx->ver;
		if (f < 0)
			ctx->len_fell = true;
	}
	for (i = 0; i < len; i++) {
		ctx->load[arcs[i]] += f;
		if (ctx->load[arcs[i]] < 0 && ctx->load[arcs[i]] > -1e-9)
			ctx->load[arcs[i]] = 0;
		mpte_arc_len_update(ctx, arcs[i]);
	}
}

/*
 * The load on each arc that stays while the demands in sel (NULL: the
 * active ones) move: background and every other demand's flow.  Rounding
 * can leave a hair below zero.
 */
double *mpte_fixed_load(const struct mpte_ctx *ctx, const unsigned char *sel)
{
	double *fixed = mpte_xcalloc(ctx->t->narcs, sizeof(double));
	int a, di, p, i;

	for (a = 0; a < ctx->t->narcs; a++)
		fixed[a] = ctx->background[a] + ctx->load[a];
	for (di = 0; di < ctx->ds->n; di++) {
		const struct mpte_dstate *s = &ctx->st[di];

		if (sel ? !sel[di] : !s->active)
			continue;
		for (p = 0; p < s->npaths; p++)
			for (i = 0; i < s->paths[p].len; i++)
				fixed[s->paths[p].arcs[i]] -= s->paths[p].flow;
	}
	return fixed;
}

void mpte_recompute_loads(struct mpte_ctx *ctx)
{
	int a, di, p;

	for (a = 0; a < ctx->t->narcs; a++) {
		int q;

		ctx->load[a] = 0;
		ctx->background[a] = 0;
		if (ctx->failed[a])
			continue;
		for (q = 0; q < MPTE_PRIORITIES; q++)
			ctx->background[a] += ctx->bg_prio[a * MPTE_PRIORITIES + q];
	}
	for (di = 0; di < ctx->ds->n; di++) {
		struct mpte_dstate *s = &ctx->st[di];

		for (p = 0; p < s->npaths; p++) {
			int i;

			for (i = 0; i < s->paths[p].len; i++)
				ctx->load[s->paths[p].arcs[i]] +=
					s->paths[p].flow;
		}
	}
	all_len_update(ctx);
}

double mpte_current_max_util(const struct mpte_ctx *ctx, int *argmax)
{
	double best = 0;
	int a;

	if (argmax)
		*argmax = -1;
	for (a = 0; a < ctx->t->narcs; a++) {
		double u;

		if (ctx->failed[a])
			continue;
		u = (ctx->background[a] + ctx->load[a]) /
		    ctx->t->arcs[a].capacity;
		if (u > best || (argmax && *argmax < 0)) {
			best = u;
			if (argmax)
				*argmax = a;
		}
	}
	return best;
}

double mpte_path_delay(const struct mpte_topology *t, const int *arcs,
		       int len)
{
	double d = 0;
	int i;

	for (i = 0; i < len; i++)
		d += t->arcs[arcs[i]].delay;
	return d;
}

static double path_len(const double *len, const int *arcs, int n)
{
	double s = 0;
	int i;

	for (i = 0; i < n; i++)
		s += len[arcs[i]];
	return s;
}

/* Shortest path for demand di alone, in ctx->sp2, under lengths w. */
static int search(struct mpte_ctx *ctx, int di, const double *w,
		  const unsigned char *arc_off, const unsigned char *node_off,
		  int *arcs, int max, double *dist)
{
	const struct mpte_demand *d = &ctx->ds->d[di];
	struct mpte_filter f;
	int v;

	int limit = mpte_hop_limit(ctx, di), n, tries;
	double mu;

	mpte_filter_for(ctx, d, &f);
	f.arc_off = arc_off;
	f.node_off = node_off;
	mpte_dijkstra(ctx->t, &ctx->sp2, d->ingress, d->ningress, w, &f,
		      d->egress, d->negress);
	v = mpte_nearest_egress(&ctx->sp2, d);
	if (v < 0)
		return -1;
	if (dist)
		*dist = ctx->sp2.dist[v];
	n = mpte_sp_extract(ctx->t, &ctx->sp2, v, arcs, max);
	if (n <= limit)
		return n;
	/* The shortest path is too long.  A cost per hop usually finds a
	 * short enough one that is nearly as cheap, in one more Dijkstra; the
	 * hop-bounded Bellman-Ford (exact, but limit x links) is the fallback. */
	for (mu = ctx->sp2.dist[v] / n, tries = 0; mu > 0 && tries < 3;
	     tries++, mu *= 8) {
		f.per_hop = mu;
		mpte_dijkstra(ctx->t, &ctx->sp2, d->ingress, d->ningress, w, &f,
			      d->egress, d->negress);
		v = mpte_nearest_egress(&ctx->sp2, d);
		n = v < 0 ? -1 : mpte_sp_extract(ctx->t, &ctx->sp2, v, arcs, max);
		if (n >= 0 && n <= limit) {
			if (dist)
				*dist = w ? path_len(w, arcs, n) :
					    ctx->sp2.dist[v] - mu * n;
			return n;
		}
	}
	f.per_hop = 0;
	return mpte_hop_bounded_path(ctx, di, w, &f, limit, arcs, max, dist);
}

/*
 * The best path under lengths len that meets the demand's constraints,
 * max_delay included.  A delay bound makes this a constrained shortest path
 * (NP-hard), so we use LARAC: Lagrangian relaxation over len + lambda delay,
 * which returns a delay-feasible path close to the cheapest one.
 * Returns the number of arcs, or -1 if no feasible path exists.
 */
int mpte_best_path(struct mpte_ctx *ctx, int di, const double *len,
		   const unsigned char *arc_off, const unsigned char *node_off,
		   int *arcs, int max)
{
	const struct mpte_topology *t = ctx->t;
	const struct mpte_demand *d = &ctx->ds->d[di];
	double *w, cd, dd, cc, dc;
	int *pd, n, nd, a, it;

	/* search() keeps to the hop limit */
	n = search(ctx, di, len, arc_off, node_off, arcs, max, NULL);
	if (n < 0 || d->max_delay <= 0 ||
	    mpte_path_delay(t, arcs, n) <= d->max_delay + MPTE_EPS)
		return n;

	w = mpte_xcalloc(t->narcs, sizeof(double));
	pd = mpte_xcalloc(max, sizeof(int));
	for (a = 0; a < t->narcs; a++)
		w[a] = t->arcs[a].delay;
	nd = search(ctx, di, w, arc_off, node_off, pd, max, NULL);
	if (nd < 0 || mpte_path_delay(t, pd, nd) > d->max_delay + MPTE_EPS) {
		n = -1;
		goto out;
	}
	cc = path_len(len, arcs, n);
	dc = mpte_path_delay(t, arcs, n);
	for (it = 0; it < 12; it++) {
		double lambda, cr, dr, comb;
		int nr;

		cd = path_len(len, pd, nd);
		dd = mpte_path_delay(t, pd, nd);
		if (dc - dd <= 0)
			break;
		lambda = (cd - cc) / (dc - dd);
		if (lambda < 0)
			lambda = 0;
		for (a = 0; a < t->narcs; a++)
			w[a] = len[a] + lambda * t->arcs[a].delay;
		nr = search(ctx, di, w, arc_off, node_off, arcs, max, &comb);
		if (nr < 0)
			break;
		cr = path_len(len, arcs, nr);
		dr = mpte_path_delay(t, arcs, nr);
		/* no path improves on the current pair: pd is the answer */
		if (comb >= cc + lambda * dc - 1e-12 * (1 + fabs(comb)))
			break;
		if (dr <= d->max_delay + MPTE_EPS) {
			memcpy(pd, arcs, nr * sizeof(int));
			nd = nr;
		} else {
			cc = cr;
			dc = dr;
		}
	}
	memcpy(arcs, pd, nd * sizeof(int));
	n = nd;
out:
	free(w);
	free(pd);
	return n;
}

static int same_path(const struct mpte_path *p, const int *arcs, int n)
{
	return p->len == n && !memcmp(p->arcs, arcs, n * sizeof(int));
}

static int cmp_path_flow(const void *x, const void *y)
{
	const struct mpte_path *a = x, *b = y;

	return a->flow < b->flow ? 1 : a->flow > b->flow ? -1 : 0;
}

static void path_remove(struct mpte_dstate *s, int p)
{
	free(s->paths[p].arcs);
	s->paths[p] = s->paths[--s->npaths];
}

/*
 * alpha (u - uref) of arc a with x more flow on it.  From the load, not as
 * len[a] exp(alpha x / c): len underflows to 0 on an arc more than 745 /
 * alpha under uref (at the sharpest level, 9 % of the utilisation), and
 * then looks free however much flow it is offered.
 */
static double arc_exponent(const struct mpte_ctx *ctx, int a, double x)
{
	const struct mpte_arc *arc = &ctx->t->arcs[a];

	return ctx->alpha *
	       ((ctx->background[a] + ctx->load[a] + x) / arc->capacity -
		ctx->uref);
}

/*
 * How much flow to move from path p to path q: the exact minimiser of the
 * potential along that direction (one-dimensional and convex), by Newton
 * steps kept inside a bisection bracket.  A single Newton step from 0
 * would move at most about 1/alpha of utilisation, far too little when
 * alpha is large and the flow is far from balanced.  Arcs shared by both
 * paths do not change and are skipped (marks set by the caller).
 */
static double line_search(struct mpte_ctx *ctx, const int *p, int np,
			  const int *q, int nq, double max)
{
	const struct mpte_arc *arcs = ctx->t->arcs;
	double lo = 0, hi = max, x = 0, alpha = ctx->alpha, step = HUGE_VAL_D;
	int it, i;

	/* lengths saturate at exp(700): never push an arc that far, or the
	 * saturated (flat) potential would invite ever more flow onto it */
	for (i = 0; i < nq; i++) {
		int a = q[i];
		double room = (EXP_ROOM / alpha + ctx->uref) * arcs[a].capacity -
			      ctx->background[a] - ctx->load[a];

		if (ctx->mark_b[a] == ctx->stamp)
			continue;
		if (room < hi)
			hi = room > 0 ? room : 0;
	}
	if (hi <= 0)
		return 0;
	max = hi;

	for (it = 0; it < 60; it++) {
		double d1 = 0, d2 = 0, nx;

		for (i = 0; i < nq; i++) {
			int a = q[i];
			double e, l;

			if (ctx->mark_b[a] == ctx->stamp)
				continue;
			e = arc_exponent(ctx, a, x);
			l = exp(e > 700 ? 700 : e) / arcs[a].capacity;
			d1 += l;
			d2 += l / arcs[a].capacity;
		}
		for (i = 0; i < np; i++) {
			int a = p[i];
			double e, l;

			if (ctx->mark_a[a] == ctx->stamp)
				continue;
			e = arc_exponent(ctx, a, -x);
			l = exp(e > 700 ? 700 : e) / arcs[a].capacity;
			d1 -= l;
			d2 += l / arcs[a].capacity;
		}
		/* d1: derivative of the potential (over alpha) at x */
		if (!isfinite(d1) || d1 > 0)
			hi = x;
		else
			lo = x;
		if (it == 0 && d1 >= 0)
			return 0;
		if (isfinite(d1) && fabs(d1) <= 1e-10 * d2 * alpha * (hi + 1e-300))
			return x;
		if (hi - lo <= 1e-12 * max)
			break;
		nx = isfinite(d1) && d2 > 0 ? x - d1 / (alpha * d2) : -1;
		/*
		 * Bisect when Newton leaves the bracket or does not halve the
		 * step: from above the minimum, an exponential's Newton step
		 * is one e-fold (c / alpha), and a first trial at the room's
		 * edge sits hundreds of e-folds up.  Thirty such steps left x
		 * far past the minimum (u 0.75 to 0.97 in one move).
		 */
		if (!(nx > lo && nx < hi))
			nx = x == 0 && it == 0 ? hi : 0.5 * (lo + hi);
		else if (it > 0 && fabs(nx - x) > 0.5 * step)
			nx = 0.5 * (lo + hi);
		step = fabs(nx - x);
		x = nx;
	}
	/* not converged: lo is the last point left of the minimum, so the
	 * move there lowers the potential (convex along the direction) */
	return lo;
}

/*
 * Would moving all of flow f from path p onto path q lower the potential?
 * Not a line search: the path set is full and p gives way whole, so the
 * move is all or nothing.  A shorter q says only that a little flow should
 * move; at a sharp level all of a fat path's flow can overshoot far.  The
 * potential is the sum over arcs of exp(alpha (u - uref)) (len is its
 * derivative over alpha); arcs on both paths do not change.  Each term from
 * the exponents, clamped as the lengths are: exp(e) x expm1(alpha f / c)
 * gave 0 x inf on an arc far below uref.
 */
static bool swap_pays(struct mpte_ctx *ctx, const int *p, int np,
		      const int *q, int nq, double f)
{
	double d = 0;
	int i;

	if (f <= 0)
		return true;	/* an empty path gives way for nothing */
	ctx->stamp++;
	for (i = 0; i < nq; i++)
		ctx->mark_a[q[i]] = ctx->stamp;
	for (i = 0; i < np; i++)
		ctx->mark_b[p[i]] = ctx->stamp;
	for (i = 0; i < nq; i++) {
		int a = q[i];
		double e1 = arc_exponent(ctx, a, f);

		if (ctx->mark_b[a] == ctx->stamp)
			continue;
		if (e1 > EXP_ROOM)
			return false;	/* past the room line_search keeps */
		d += exp(e1) - exp(arc_exponent(ctx, a, 0));
	}
	for (i = 0; i < np; i++) {
		int a = p[i];
		double e0 = arc_exponent(ctx, a, 0);

		if (ctx->mark_a[a] == ctx->stamp)
			continue;
		d += exp(arc_exponent(ctx, a, -f)) - exp(e0 > 700 ? 700 : e0);
	}
	return d < 0;
}

/*
 * The demand's shortest path under the current lengths, or -1; its length
 * into *lo and the longest length of a path with flow into *hi (either may
 * be NULL).
 */
static int shortest_held(const struct mpte_ctx *ctx,
			 const struct mpte_dstate *s, double *lo, double *hi)
{
	double bl = HUGE_VAL_D, bh = 0;
	int p, best = -1;

	for (p = 0; p < s->npaths; p++) {
		double l = path_len(ctx->len, s->paths[p].arcs,
				    s->paths[p].len);

		if (l < bl) {
			bl = l;
			best = p;
		}
		if (s->paths[p].flow > 0 && l > bh)
			bh = l;
	}
	if (lo)
		*lo = bl;
	if (hi)
		*hi = bh;
	return best;
}

/* A copy of path q (arcs/n) into pp; the caller sets its flow. */
static void path_set(struct mpte_path *pp, const int *q, int n)
{
	pp->arcs = mpte_xcalloc(n ? n : 1, sizeof(int));
	memcpy(pp->arcs, q, n * sizeof(int));
	pp->len = n;
}

/*
 * Let path q (arcs/n) join demand di's set (which holds at least one
 * path) with no flow yet: its slot, or -1 if it may not join now.  A full
 * set takes it in place of its thinnest path, whose flow moves onto q.
 */
static int path_join(struct mpte_ctx *ctx, int di, const int *q, int n)
{
	const struct mpte_demand *d = &ctx->ds->d[di];
	struct mpte_dstate *s = &ctx->st[di];
	int cap = d->max_paths > MPTE_WORK_PATHS || ctx->capped ?
		  d->max_paths : MPTE_WORK_PATHS;
	int p, pmin = 0;

	/* PHASE_HELD: the path sets are fixed */
	if (ctx->restricted)
		return -1;
	/* a list the data plane could not hold is no candidate (the first
	 * route is taken anyway: finishing drops it if nothing shorter came
	 * along, and says so) */
	if (mpte_segments_over(mpte_sids(ctx), q, n, mpte_max_sids(ctx, di)))
		return -1;
	if (s->pcap < cap) {
		s->paths = mpte_xrealloc(s->paths, cap * sizeof(*s->paths));
		s->pcap = cap;
	}
	if (s->npaths < cap) {
		path_set(&s->paths[s->npaths], q, n);
		s->paths[s->npaths].flow = 0;
		return s->npaths++;
	}
	/* full: the thinnest path gives way, if q is shorter and the whole
	 * move lowers the potential */
	for (p = 1; p < s->npaths; p++)
		if (s->paths[p].flow < s->paths[pmin].flow)
			pmin = p;
	if (path_len(ctx->len, s->paths[pmin].arcs, s->paths[pmin].len) <=
	    path_len(ctx->len, q, n) ||
	    !swap_pays(ctx, s->paths[pmin].arcs, s->paths[pmin].len, q, n,
		       s->paths[pmin].flow))
		return -1;
	add_flow(ctx, s->paths[pmin].arcs, s->paths[pmin].len,
		 -s->paths[pmin].flow);
	add_flow(ctx, q, n, s->paths[pmin].flow);
	free(s->paths[pmin].arcs);
	path_set(&s->paths[pmin], q, n);
	return pmin;
}

/*
 * Move flow of demand di towards path q (arcs/n): add q to the set if it
 * is new, then one projected Newton step from each longer path.  If q may
 * not join, towards the shortest path held instead: returning froze every
 * demand whose set is full once the cut to max_paths had made them all
 * full (u stuck 18 % above the LP after the cut).
 */
static void update_demand(struct mpte_ctx *ctx, int di, const int *q, int n)
{
	struct mpte_dstate *s = &ctx->st[di];
	int qi = -1, p, i, *fit = NULL;

	for (p = 0; p < s->npaths; p++)
		if (same_path(&s->paths[p], q, n)) {
			qi = p;
			break;
		}
	if (qi < 0 && !s->npaths) {
		if (ctx->restricted)
			return;
		/* first route: everything on the shortest path; if the data
		 * plane cannot hold its list, on the cheapest that fits
		 * (later routes join only if they fit: this one would be
		 * the demand's only one, and finishing would drop it) */
		if (mpte_segments_over(mpte_sids(ctx), q, n,
				       mpte_max_sids(ctx, di))) {
			fit = mpte_xcalloc(ctx->t->nnodes, sizeof(int));
			p = mpte_sid_path(ctx, di, ctx->len, fit,
					  ctx->t->nnodes);
			if (p > 0) {
				q = fit;
				n = p;
			}
		}
		if (s->pcap < MPTE_WORK_PATHS) {
			s->paths = mpte_xrealloc(s->paths, MPTE_WORK_PATHS *
						 sizeof(*s->paths));
			s->pcap = MPTE_WORK_PATHS;
		}
		path_set(&s->paths[0], q, n);
		s->paths[0].flow = s->admitted;
		s->npaths = 1;
		add_flow(ctx, q, n, s->admitted);
		free(fit);
		return;
	}
	if (qi < 0)
		qi = path_join(ctx, di, q, n);
	if (qi < 0) {
		qi = shortest_held(ctx, s, NULL, NULL);
		if (qi < 0)
			return;
		q = s->paths[qi].arcs;
		n = s->paths[qi].len;
	}

	for (p = 0; p < s->npaths; p++) {
		struct mpte_path *pp = &s->paths[p];
		double lp, lq, step;

		if (p == qi || pp->flow <= 0)
			continue;
		lp = path_len(ctx->len, pp->arcs, pp->len);
		lq = path_len(ctx->len, q, n);
		if (lp <= lq * (1 + 1e-12))
			continue;
		/* arcs on both paths see no change: only the symmetric
		 * difference enters the curvature and the move */
		ctx->stamp++;
		for (i = 0; i < n; i++)
			ctx->mark_a[q[i]] = ctx->stamp;
		for (i = 0; i < pp->len; i++)
			ctx->mark_b[pp->arcs[i]] = ctx->stamp;
		step = line_search(ctx, pp->arcs, pp->len, q, n, pp->flow);
		for (i = 0; i < pp->len; i++)
			if (ctx->mark_a[pp->arcs[i]] != ctx->stamp)
				add_flow(ctx, &pp->arcs[i], 1, -step);
		for (i = 0; i < n; i++)
			if (ctx->mark_b[q[i]] != ctx->stamp)
				add_flow(ctx, &q[i], 1, step);
		pp->flow -= step;
		s->paths[qi].flow += step;
	}
	/* paths that carry (almost) nothing free their slot */
	for (p = s->npaths - 1; p >= 0; p--) {
		if (p == qi || s->paths[p].flow > 1e-12 * s->admitted)
			continue;
		if (s->paths[p].flow > 0) {
			add_flow(ctx, s->paths[p].arcs, s->paths[p].len,
				 -s->paths[p].flow);
			add_flow(ctx, s->paths[qi].arcs, s->paths[qi].len,
				 s->paths[p].flow);
			s->paths[qi].flow += s->paths[p].flow;
		}
		if (qi == s->npaths - 1)
			qi = p;
		path_remove(s, p);
	}
}

/* Remove a demand's flow from the network and forget its paths. */
void mpte_drop_paths(struct mpte_ctx *ctx, int di)
{
	struct mpte_dstate *s = &ctx->st[di];
	int p;

	for (p = 0; p < s->npaths; p++) {
		add_flow(ctx, s->paths[p].arcs, s->paths[p].len,
			 -s->paths[p].flow);
		free(s->paths[p].arcs);
	}
	free(s->paths);
	s->paths = NULL;
	s->npaths = 0;
	s->pcap = 0;
}

/* Scale a demand's path flows (elastic grow/shrink), keeping its split. */
void mpte_path_set_flow(struct mpte_ctx *ctx, int di, double scale)
{
	struct mpte_dstate *s = &ctx->st[di];
	int p;

	for (p = 0; p < s->npaths; p++) {
		double nf = s->paths[p].flow * scale;

		add_flow(ctx, s->paths[p].arcs, s->paths[p].len,
			 nf - s->paths[p].flow);
		s->paths[p].flow = nf;
	}
}

/*
 * Shortest paths under the current lengths from a group's ingresses, over
 * the links its colours allow, into ctx->sp. False (and nothing computed)
 * when no member of the group is active.
 */
static bool group_sp_into(const struct mpte_ctx *ctx,
			  const struct mpte_group *gr, struct mpte_sp *sp,
			  bool dist_only)
{
	struct mpte_filter f;
	int k;

	for (k = 0; k < gr->nmembers; k++)
		if (ctx->st[gr->members[k]].active)
			break;
	if (k == gr->nmembers)
		return false;
	memset(&f, 0, sizeof(f));
	f.include_any = gr->include_any;
	f.include_all = gr->include_all;
	f.exclude_any = gr->exclude_any;
	f.failed = ctx->failed;
	f.dist_only = dist_only;
	mpte_dijkstra(ctx->t, sp, gr->ingress, gr->ningress,
		      ctx->len, &f, gr->targets, gr->ntargets);
	return true;
}

static bool group_shortest_paths(struct mpte_ctx *ctx,
				 const struct mpte_group *gr)
{
	return group_sp_into(ctx, gr, &ctx->sp, false);
}

/*
 * The group's fewest-hop paths, the cheapest under the current lengths
 * among them, into ctx->sp3: a cost per hop above any path's length makes
 * hops count first.  A first route over the hop limit comes from here (one
 * Dijkstra per group, not a bounded search per demand).
 */
static void group_fewest_hops(struct mpte_ctx *ctx, const struct mpte_group *gr,
			      const struct mpte_sp *sp)
{
	struct mpte_filter f;
	double far = 0;
	int k;

	for (k = 0; k < gr->ntargets; k++)
		if (sp->dist[gr->targets[k]] != HUGE_VAL_D &&
		    sp->dist[gr->targets[k]] > far)
			far = sp->dist[gr->targets[k]];
	memset(&f, 0, sizeof(f));
	f.include_any = gr->include_any;
	f.include_all = gr->include_all;
	f.exclude_any = gr->exclude_any;
	f.failed = ctx->failed;
	f.per_hop = 2 * far + 1e-300;
	mpte_dijkstra(ctx->t, &ctx->sp3, gr->ingress, gr->ningress,
		      ctx->len, &f, gr->targets, gr->ntargets);
}

/*
 * A few more moves of demand di among the paths it holds, towards the
 * shortest of them, while they differ.  One move per demand and sweep
 * jams: at a sharp level a demand's own paths stay unbalanced for
 * hundreds of sweeps while u creeps (1.03 x the LP after 400 sweeps on an
 * 8-node instance, 1.0015 in 30 with these moves).  No Dijkstra: the
 * lengths of the paths held are all it needs.
 */
static void balance_held(struct mpte_ctx *ctx, int di, int *buf)
{
	struct mpte_dstate *s = &ctx->st[di];
	int r;

	for (r = 0; r < BALANCE_MOVES && s->npaths > 1; r++) {
		double lo, hi;
		int best = shortest_held(ctx, s, &lo, &hi);

		if (best < 0 || hi <= lo * (1 + BALANCE_GAP))
			return;
		memcpy(buf, s->paths[best].arcs,
		       s->paths[best].len * sizeof(int));
		update_demand(ctx, di, buf, s->paths[best].len);
	}
}

/* Active member di's path in the tree sp, into buf: its length, or -1. */
static int member_path(const struct mpte_ctx *ctx, const struct mpte_sp *sp,
		       int di, int *buf, int bufmax)
{
	int v;

	if (!ctx->st[di].active)
		return -1;
	v = mpte_nearest_egress(sp, &ctx->ds->d[di]);
	return v < 0 ? -1 : mpte_sp_extract(ctx->t, sp, v, buf, bufmax);
}

/*
 * Route the active members of group gr from its tree sp (searched under
 * the lengths before any of them moves, as a Gauss-Seidel sweep does).
 */
static void sweep_group(struct mpte_ctx *ctx, const struct mpte_group *gr,
			const struct mpte_sp *sp, int *buf, int bufmax)
{
	bool hop_tree = false;
	int k;

	for (k = 0; k < gr->nmembers; k++) {
		int di = gr->members[k], v, n;
		const struct mpte_demand *d = &ctx->ds->d[di];

		/* unreached: filtered out earlier */
		n = member_path(ctx, sp, di, buf, bufmax);
		if (n < 0)
			continue;
		if (n > mpte_hop_limit(ctx, di) &&
		    !ctx->st[di].npaths && d->max_delay <= 0) {
			if (!hop_tree)
				group_fewest_hops(ctx, gr, sp);
			hop_tree = true;
			v = mpte_nearest_egress(&ctx->sp3, d);
			n = v < 0 ? -1 : mpte_sp_extract(ctx->t, &ctx->sp3, v,
							 buf, bufmax);
			if (n < 0 || n > mpte_hop_limit(ctx, di))
				n = mpte_best_path(ctx, di, ctx->len, NULL,
						   NULL, buf, bufmax);
			if (n < 0)
				continue;
		} else if (n > mpte_hop_limit(ctx, di) ||
		    (d->max_delay > 0 &&
		     mpte_path_delay(ctx->t, buf, n) >
		     d->max_delay + MPTE_EPS)) {
			n = mpte_best_path(ctx, di, ctx->len, NULL,
					   NULL, buf, bufmax);
			if (n < 0)
				continue;
		}
		update_demand(ctx, di, buf, n);
		balance_held(ctx, di, buf);
	}
}

/*
 * Is the tree sp of group gr, searched before the commit ctx->ver of the
 * group before it, still the one a search now would give its members?
 * Only lengths that rose since (a first route adds flow, it takes none
 * away), so a member's path none of whose arcs changed is still a
 * shortest one: every other path is as long or longer than it was.  A
 * member that would not simply take its tree's path (over its hop
 * limit or delay bound: searches under the lengths now) makes it no.
 */
static bool tree_still_holds(struct mpte_ctx *ctx,
			     const struct mpte_group *gr,
			     const struct mpte_sp *sp, int *buf, int bufmax)
{
	int k, i;

	if (ctx->len_fell)
		return false;
	for (k = 0; k < gr->nmembers; k++) {
		int di = gr->members[k], n;
		const struct mpte_demand *d = &ctx->ds->d[di];

		n = member_path(ctx, sp, di, buf, bufmax);
		if (n < 0)
			continue;
		if (ctx->st[di].npaths || n > mpte_hop_limit(ctx, di) ||
		    d->max_delay > 0)
			return false;
		for (i = 0; i < n; i++)
			if (ctx->arc_ver[buf[i]] == ctx->ver)
				return false;
	}
	return true;
}

/*
 * Tests only (ctx->check_pairs): is each member's route from the tree sp
 * kept for group gr as short as a search under the lengths now finds?
 * Searched into ctx->sp, whose tree (the pair's first) is done with.
 */
static void pairs_oracle(struct mpte_ctx *ctx, const struct mpte_group *gr,
			 const struct mpte_sp *sp, int *buf, int bufmax)
{
	int k, v, n;

	if (!group_shortest_paths(ctx, gr))
		return;
	for (k = 0; k < gr->nmembers; k++) {
		const struct mpte_demand *d = &ctx->ds->d[gr->members[k]];
		double now;

		n = member_path(ctx, sp, gr->members[k], buf, bufmax);
		if (n < 0)
			continue;
		now = path_len(ctx->len, buf, n);
		v = mpte_nearest_egress(&ctx->sp, d);
		ctx->pairs_checked++;
		if (v < 0 || now > ctx->sp.dist[v] * (1 + 1e-12))
			ctx->pairs_wrong++;
	}
}

#define PAIR_TRIAL	64	/* pairs tried before the rule on them */

/*
 * The second tree of a pair is searched by a helper thread that lives
 * for the sweep, not one a pair (6,000 pairs on the 10,000-node WAN):
 * two waits at a barrier a pair, one to start, one to end.
 */
struct ahead_job {
	const struct mpte_ctx *ctx;
	const struct mpte_group *gr[2];
	struct mpte_sp *sp[2];
	bool found[2];
	bool stop;
	pthread_barrier_t start, end;
};

static void ahead_tree(struct ahead_job *j, int i)
{
	j->found[i] = j->gr[i] &&
		      group_sp_into(j->ctx, j->gr[i], j->sp[i], false);
}

static void *ahead_helper(void *arg)
{
	struct ahead_job *j = arg;

	for (;;) {
		pthread_barrier_wait(&j->start);
		if (j->stop)
			return NULL;
		ahead_tree(j, 1);
		pthread_barrier_wait(&j->end);
	}
}

/* Every active demand is still to get its first route: a cold first sweep. */
static bool first_sweep(const struct mpte_ctx *ctx)
{
	int di;

	for (di = 0; di < ctx->ds->n; di++)
		if (ctx->st[di].active && ctx->st[di].npaths)
			return false;
	return true;
}

/*
 * The cold first sweep two groups at a time: the trees of the next two
 * groups are searched side by side under the same lengths, the first
 * group routed from its own, then the second from the tree searched
 * beside if the first's routes changed none of the arcs its members
 * take (tree_still_holds), else it leads the next pair.  The same as a
 * sweep for every group whose tree is used, and the same routing
 * however many threads ran: each tree is searched under lengths that
 * do not depend on them.  On the 10,000-node WAN 3,893 of 6,106 trees
 * searched beside are kept, and the sweep takes 10.4-12.0 s instead of
 * 13.5-14.4 on two cores (16 on one: a tree not kept was searched for
 * nothing).  Returns the groups it routed; the rest go one at a time.
 */
static int sweep_pairs(struct mpte_ctx *ctx, int *buf, int bufmax)
{
	struct ahead_job job = { .ctx = ctx,
				 .sp = { &ctx->sp, &ctx->sp_next } };
	bool helper = false;
	pthread_t tid;
	int g = 0, used = 0, redone = 0;

	if (!ctx->sp_next.dist)
		mpte_sp_init(&ctx->sp_next, ctx->t->nnodes);
	/* stamps of an earlier solve's sweep would read as this one's */
	if (!ctx->arc_ver)
		ctx->arc_ver = mpte_xcalloc(ctx->t->narcs, sizeof(int));
	else
		memset(ctx->arc_ver, 0, ctx->t->narcs * sizeof(int));
	if (mpte_par_width(ctx) > 1 &&
	    !pthread_barrier_init(&job.start, NULL, 2)) {
		if (!pthread_barrier_init(&job.end, NULL, 2)) {
			helper = !pthread_create(&tid, NULL, ahead_helper,
						 &job);
			if (!helper)
				pthread_barrier_destroy(&job.end);
		}
		if (!helper)
			pthread_barrier_destroy(&job.start);
	}
	ctx->ver = 1;
	while (g < ctx->ngroups) {
		/*
		 * Where most trees searched beside are not kept (wan1000:
		 * 9 in 10 meet a route of the group before), pairs cost
		 * more than they save: the rest of the sweep goes one
		 * group at a time.  Decided by the counts alone, so the
		 * same on any number of threads.
		 */
		if (used + redone == PAIR_TRIAL && redone > used)
			break;
		job.gr[0] = &ctx->groups[g];
		job.gr[1] = g + 1 < ctx->ngroups ? &ctx->groups[g + 1] : NULL;
		if (helper)
			pthread_barrier_wait(&job.start);
		ahead_tree(&job, 0);
		if (helper)
			pthread_barrier_wait(&job.end);
		else
			ahead_tree(&job, 1);
		ctx->ver++;
		ctx->len_fell = false;
		if (job.found[0])
			sweep_group(ctx, job.gr[0], job.sp[0], buf, bufmax);
		g++;
		if (!job.gr[1])
			break;
		if (job.found[1] &&
		    !tree_still_holds(ctx, job.gr[1], job.sp[1], buf, bufmax)) {
			redone++;
			continue;	/* searched again, leading the next pair */
		}
		if (job.found[1]) {
			if (ctx->check_pairs)
				pairs_oracle(ctx, job.gr[1], job.sp[1], buf,
					     bufmax);
			sweep_group(ctx, job.gr[1], job.sp[1], buf, bufmax);
			used++;
		}
		g++;
	}
	ctx->ver = 0;
	ctx->ahead_used += used;
	ctx->ahead_redone += redone;
	if (getenv("MPTE_TRACE"))
		fprintf(stderr, "mpte: first sweep in pairs: %d trees searched beside kept, %d searched again; groups %d of %d\n",
			used, redone, g, ctx->ngroups);
	if (helper) {
		job.stop = true;
		pthread_barrier_wait(&job.start);
		pthread_join(tid, NULL);
		pthread_barrier_destroy(&job.start);
		pthread_barrier_destroy(&job.end);
	}
	return g;
}

/* One Gauss-Seidel sweep over the active demands. */
static void sweep(struct mpte_ctx *ctx, int *buf, int bufmax)
{
	int g = 0;

	/* a re-plan's first routes are few, and it runs on one core; the
	 * groups the pairs leave (PAIR_TRIAL) go one at a time below */
	if (ctx->cold &&
	    (double)ctx->ngroups * ctx->t->nnodes >= ctx->par_min_work &&
	    first_sweep(ctx))
		g = sweep_pairs(ctx, buf, bufmax);
	for (; g < ctx->ngroups; g++) {
		const struct mpte_group *gr = &ctx->groups[g];

		if (group_shortest_paths(ctx, gr))
			sweep_group(ctx, gr, &ctx->sp, buf, bufmax);
	}
}

struct lb_job {
	const struct mpte_ctx *ctx;
	double *moved;		/* per group */
	double *sum;		/* or one sum, term by term (one worker) */
	double *dist;		/* per demand, if asked: its distance */
};

/* Group g's share of the bound, in worker w's workspace. */
static void lb_group(void *arg, int g, int w)
{
	struct lb_job *j = arg;
	const struct mpte_ctx *ctx = j->ctx;
	const struct mpte_group *gr = &ctx->groups[g];
	struct mpte_sp *sp = &ctx->wsp[w];
	double moved = 0, *sum = j->sum ? j->sum : &moved;
	int k, p;

	/* the distances only: the bound is the same with any ties */
	if (!group_sp_into(ctx, gr, sp, true))
		return;
	for (k = 0; k < gr->nmembers; k++) {
		int di = gr->members[k], v;
		const struct mpte_dstate *st = &ctx->st[di];
		double cur = 0;

		if (!st->active)
			continue;
		v = mpte_nearest_egress(sp, &ctx->ds->d[di]);
		if (v < 0)
			continue;
		for (p = 0; p < st->npaths; p++)
			cur += st->paths[p].flow *
			       path_len(ctx->len, st->paths[p].arcs,
					st->paths[p].len);
		/* replace this demand's current cost by its cheapest */
		*sum += cur - st->admitted * sp->dist[v];
		if (j->dist)
			j->dist[di] = sp->dist[v];
	}
	if (!j->sum)
		j->moved[g] = moved;
}

/*
 * Certified lower bound on the best max utilisation reachable by moving the
 * active demands only (the others are fixed load), from the current lengths.
 * One search a group, all under the same lengths: on every core when the
 * searches are large enough to pay for the threads (10 % of the
 * 10,000-node WAN's run on one).  The groups' shares are then added in
 * group order, so the bound is the same however many ran; below that
 * size, one sum term by term, as before the threads (the last bits of
 * the bound decide a stopping rule now and then).  With dist, each active
 * demand's distance under the lengths goes there (0 where none): with the
 * lengths, the dual bound.c evaluates again after events.
 */
static double lower_bound(struct mpte_ctx *ctx, double *dist)
{
	const struct mpte_topology *t = ctx->t;
	double s = 0, fixed = 0, moved = 0;
	struct lb_job job = { .ctx = ctx, .dist = dist };
	int a, g, nw;

	if (dist)
		memset(dist, 0, ctx->ds->n * sizeof(double));

	for (a = 0; a < t->narcs; a++) {
		if (ctx->failed[a])
			continue;
		s += ctx->len[a] * t->arcs[a].capacity;
		fixed += ctx->len[a] * (ctx->background[a] + ctx->load[a]);
	}
	if (s <= 0 || !ctx->ngroups)
		return 0;
	nw = mpte_par_width(ctx);
	if ((double)ctx->ngroups * t->nnodes < ctx->par_min_work) {
		job.sum = &moved;
		mpte_par_for(ctx->ngroups, 1, lb_group, &job);
		return (fixed - moved) / s;
	}
	job.moved = mpte_xcalloc(ctx->ngroups, sizeof(double));
	mpte_par_for(ctx->ngroups, nw, lb_group, &job);
	for (g = 0; g < ctx->ngroups; g++)
		moved += job.moved[g];
	free(job.moved);
	return (fixed - moved) / s;
}

/*
 * Cut every active demand to its max_paths fattest paths (its flow moves
 * onto them in proportion).  Returns how many demands were cut.
 */
static int cut_to_max_paths(struct mpte_ctx *ctx)
{
	int di, p, cut = 0;

	for (di = 0; di < ctx->ds->n; di++) {
		struct mpte_dstate *s = &ctx->st[di];
		int keep = ctx->ds->d[di].max_paths;
		double kept = 0;

		if (!s->active || s->npaths <= keep)
			continue;
		qsort(s->paths, s->npaths, sizeof(*s->paths), cmp_path_flow);
		while (s->npaths > keep) {
			struct mpte_path *pp = &s->paths[--s->npaths];

			add_flow(ctx, pp->arcs, pp->len, -pp->flow);
			free(pp->arcs);
		}
		for (p = 0; p < s->npaths; p++)
			kept += s->paths[p].flow;
		if (kept <= 0) {
			s->paths[0].flow = kept = 1e-300;
		}
		mpte_path_set_flow(ctx, di, s->admitted / kept);
		cut++;
	}
	return cut;
}

/* PHASE_HELD sweep: move flow among the paths each demand already has. */
static void restricted_sweep(struct mpte_ctx *ctx, int *buf)
{
	int di;

	for (di = 0; di < ctx->ds->n; di++) {
		struct mpte_dstate *s = &ctx->st[di];
		int best;

		if (!s->active || s->npaths < 2)
			continue;
		best = shortest_held(ctx, s, NULL, NULL);
		if (best < 0)
			continue;
		memcpy(buf, s->paths[best].arcs,
		       s->paths[best].len * sizeof(int));
		update_demand(ctx, di, buf, s->paths[best].len);
	}
}

/*
 * Done when within tolerance of the bound, and not above ECMP's value
 * when that is known (ecmp >= 0): the result is never worse than ECMP.
 */
static double goal(const struct mpte_ctx *ctx, double lb, double ecmp)
{
	double g = lb * (1 + ctx->opt.tolerance) + 1e-12;

	/* equal up to rounding (1e-9) counts as not worse */
	if (ecmp >= 0 && ecmp * (1 + 1e-9) + 1e-12 < g)
		g = ecmp * (1 + 1e-9) + 1e-12;
	return g;
}

/*
 * Equal shares on IGP shortest paths for the demands without a route
 * (start.c); kept only if that is already within tolerance of the bound,
 * else undone.  True if kept and every active demand is routed.
 */
static bool try_ecmp_start(struct mpte_ctx *ctx, double lb, double *ecmp_u)
{
	unsigned char *placed;
	int di, n;
	bool keep = false;

	/* a cold solve only: an event moves a few demands among fixed
	 * others, and one egress tree each would cost more than a sweep */
	for (di = 0; di < ctx->ds->n; di++)
		if (ctx->st[di].status == MPTE_ADMITTED && !ctx->st[di].active)
			return false;
	placed = mpte_xcalloc(ctx->ds->n, 1);
	/* a start 25 % above the bound will not refine to within it */
	n = mpte_ecmp_start(ctx, placed, 1.25 * lb * (1 + ctx->opt.tolerance),
			    ecmp_u);

	if (n) {
		for (di = 0; di < ctx->ds->n; di++)
			if (ctx->st[di].active && !ctx->st[di].npaths)
				break;
		keep = di == ctx->ds->n &&
		       mpte_current_max_util(ctx, NULL) <=
		       lb * (1 + ctx->opt.tolerance) + 1e-12;
		if (getenv("MPTE_TRACE"))
			fprintf(stderr, "mpte: ECMP start %d demands, u %.6f lb %.6f ECMP %.6f%s\n",
				n, mpte_current_max_util(ctx, NULL), lb, *ecmp_u,
				keep ? "" : ", undone");
		if (!keep) {
			for (di = 0; di < ctx->ds->n; di++)
				if (placed[di])
					mpte_drop_paths(ctx, di);
			/* exactly as before, not a rounding residue */
			mpte_recompute_loads(ctx);
		}
	}
	free(placed);
	return keep;
}

/*
 * Routes held to go back to: a re-plan's active demands when optimising
 * began, under admission and with every link within capacity (the sweeps
 * start soft and may end above where they started: a recovery's step
 * from 0.823 went to 0.986 at the first softness; over 1, admission then
 * pushed a demand out at the end of the event, seed 68), or
 * every admitted demand before a recovery offers the failure's demands
 * back (moved for them and they did not fit: the others' moves stay, and
 * left links over capacity that admission then cleared by pushing out
 * demands the recovery had no cause to touch).
 */
struct mpte_held {
	struct mpte_path *paths;
	int npaths;
};

struct mpte_held *mpte_hold_routes(const struct mpte_ctx *ctx, bool active)
{
	struct mpte_held *h = mpte_xcalloc(ctx->ds->n, sizeof(*h));
	int di, p;

	for (di = 0; di < ctx->ds->n; di++) {
		const struct mpte_dstate *s = &ctx->st[di];

		if (!s->npaths || (active ? !s->active :
				   s->status != MPTE_ADMITTED))
			continue;
		h[di].npaths = s->npaths;
		h[di].paths = mpte_xcalloc(s->npaths, sizeof(*h[di].paths));
		for (p = 0; p < s->npaths; p++) {
			h[di].paths[p] = s->paths[p];
			h[di].paths[p].arcs = mpte_xcalloc(s->paths[p].len,
							   sizeof(int));
			memcpy(h[di].paths[p].arcs, s->paths[p].arcs,
			       s->paths[p].len * sizeof(int));
		}
	}
	return h;
}

void mpte_release_routes(struct mpte_ctx *ctx, struct mpte_held *h,
			 bool restore)
{
	int di, p;

	if (!h)
		return;
	for (di = 0; di < ctx->ds->n; di++) {
		struct mpte_dstate *s = &ctx->st[di];

		/* one no longer admitted (withdrawn, preempted since) keeps
		 * having no route */
		if (!restore || !h[di].paths || s->status != MPTE_ADMITTED) {
			for (p = 0; p < h[di].npaths; p++)
				free(h[di].paths[p].arcs);
			free(h[di].paths);
			continue;
		}
		for (p = 0; p < s->npaths; p++)
			free(s->paths[p].arcs);
		free(s->paths);
		s->paths = h[di].paths;
		s->npaths = s->pcap = h[di].npaths;
	}
	free(h);
	if (restore)
		mpte_recompute_loads(ctx);
}

/* Every active demand has a route: a warm start, one to go back to. */
static bool warm(const struct mpte_ctx *ctx)
{
	int di;

	for (di = 0; di < ctx->ds->n; di++)
		if (ctx->st[di].active && !ctx->st[di].npaths)
			return false;
	return true;
}

/*
 * The dual bounds taken in one run of the optimiser, and, when they are
 * bounds on the whole (every admitted demand active), the dual behind
 * the best of them: its lengths and each demand's distance (bound.c).
 */
struct dual_keep {
	bool whole;
	double *dist;		/* scratch for the next bound */
	double *best_dist, *best_y, best;
};

/* The dual bound under the current lengths; the best one's dual kept. */
static double dual_bound(struct mpte_ctx *ctx, struct dual_keep *k,
			 double u)
{
	int narcs = ctx->t->narcs;
	double lb, t0 = mpte_now();

	if (k->whole && !k->dist)
		k->dist = mpte_xcalloc(ctx->ds->n, sizeof(double));
	lb = lower_bound(ctx, k->dist);
	if (getenv("MPTE_TRACE"))
		fprintf(stderr, "mpte: dual bound %.6f at sweep %d, u %.6f in %.2f s\n",
			lb, ctx->iterations, u, mpte_now() - t0);
	if (k->dist && lb > k->best) {
		double *x = k->best_dist;

		k->best = lb;
		k->best_dist = k->dist;
		k->dist = x;
		if (!k->best_y)
			k->best_y = mpte_xcalloc(narcs, sizeof(double));
		memcpy(k->best_y, ctx->len, narcs * sizeof(double));
	}
	return lb;
}

/*
 * Optimise the active demands.  Demands without paths get their first
 * route in the first sweep (sequential shortest path under congestion
 * lengths, already a decent start).  PHASE_FREE lets a demand hold up to
 * MPTE_WORK_PATHS paths, so the flow can find its shape; then each is cut
 * to its max_paths fattest and PHASE_CAPPED solves again on that start,
 * new paths still coming in but only in place of one held (re-balancing
 * within the kept paths alone left 1 random instance in 50 above 1.01 x
 * the LP).  The first polish after paths were made final is PHASE_CAPPED
 * too, later ones PHASE_HELD (no new paths, so they stay final), which
 * also re-balances an ECMP start.
 */
static int optimise(struct mpte_ctx *ctx, enum phase start)
{
	bool polish = start != PHASE_FREE;
	const struct mpte_topology *t = ctx->t;
	double t0 = mpte_now(), u, est = 0, cap = 0, best_lb = 0, beta, lb;
	int *buf, bufmax = t->nnodes + 1, di, a, level_sweeps, nactive = 0;
	enum phase phase = start;
	int sweeps = 0;
	int budget = polish ? RESTRICTED_SWEEPS : ctx->opt.max_iterations;
	int since_best = 0;
	double best_u = HUGE_VAL_D, ecmp_goal = -1;
	struct mpte_held *held = NULL;
	/* every admitted demand active: the bound is one on the whole, and
	 * its dual is kept (bound.c) */
	struct dual_keep dk = { .whole = !polish };
	bool first_routes;

	for (di = 0; di < ctx->ds->n; di++) {
		if (ctx->st[di].active) {
			nactive++;
			if (!ctx->st[di].npaths)
				est += 2 * ctx->st[di].admitted;
		} else if (ctx->st[di].status == MPTE_ADMITTED) {
			dk.whole = false;
		}
	}
	if (!nactive) {
		ctx->max_util = mpte_current_max_util(ctx, NULL);
		return 0;
	}
	/* a re-plan's first routes are few, its sweeps cheap: not there */
	first_routes = ctx->cold && !polish && est > 0;
	for (a = 0; a < t->narcs; a++)
		if (!ctx->failed[a])
			cap += t->arcs[a].capacity;
	buf = mpte_xcalloc(bufmax, sizeof(int));

	/* a first guess of the utilisation sets the softness of step one */
	mpte_recompute_loads(ctx);
	u = mpte_current_max_util(ctx, NULL);
	/* a re-plan with admission never makes a routing that fits one
	 * that does not: admission would push demands out for it */
	if (!ctx->cold && ctx->opt.admission && u <= 1 + 1e-9 && warm(ctx))
		held = mpte_hold_routes(ctx, true);
	if (cap > 0 && est / cap > u)
		u = est / cap;
	if (u <= 0)
		u = 1e-3;
	/* a polish continues at the softness the last run ended with */
	beta = polish && ctx->beta > 0 ? ctx->beta : BETA_START;
	if (polish)
		best_lb = ctx->lower_bound;	/* only a stopping rule here */
	/* the node cuts: often the answer at once (fat-trees) */
	lb = mpte_cut_bound(ctx, false);
	if (getenv("MPTE_TRACE"))
		fprintf(stderr, "mpte: optimise phase %d, %d active, cut bound %.6f\n",
			phase, nactive, lb);
	if (lb > best_lb)
		best_lb = lb;
	ctx->uref = u;
	ctx->alpha = beta / u;
	ctx->restricted = phase == PHASE_HELD;
	ctx->capped = phase == PHASE_CAPPED;
	all_len_update(ctx);

	/*
	 * A fabric made for ECMP may need no optimising at all; if the start
	 * is still above ECMP's value, re-balance within its paths (sharp,
	 * it is near the optimum) until it is not: never worse than ECMP.
	 */
	if (!polish && try_ecmp_start(ctx, best_lb, &ecmp_goal)) {
		u = mpte_current_max_util(ctx, NULL);
		if (u <= goal(ctx, best_lb, ecmp_goal))
			goto done;
		phase = PHASE_HELD;
		first_routes = false;	/* ECMP's, re-balanced */
		ctx->restricted = 1;
		budget = RESTRICTED_SWEEPS;
		beta = START_BETA;
		ctx->uref = u;
		ctx->alpha = beta / u;
		all_len_update(ctx);
	}

	level_sweeps = 0;
	for (;;) {
		double prev = u, ts = mpte_now();
		int stop;

		if (phase != PHASE_HELD)
			sweep(ctx, buf, bufmax);
		else
			restricted_sweep(ctx, buf);
		ctx->iterations++;
		sweeps++;
		level_sweeps++;
		u = mpte_current_max_util(ctx, NULL);
		if (getenv("MPTE_TRACE"))
			fprintf(stderr, "mpte: sweep %d (phase %d) u %.6f in %.2f s\n",
				ctx->iterations, phase, u, mpte_now() - ts);
		if (u < best_u * (1 - STALL_GAIN)) {
			best_u = u;
			since_best = 0;
		} else {
			since_best++;
		}
		/*
		 * A cold solve's first routes, made under lengths that a
		 * first guess of U far below it makes sharp: where they meet
		 * the optimum at once, the bound says so now, not after a
		 * second sweep (and the polish of that sweep's split paths):
		 * on the WANs of bench.py the first sweep's U is the optimum
		 * and the dual of its lengths proves it (wan1000: 0.783170,
		 * 10,000 nodes: 0.841380).  Where it does not, one bound
		 * more in the whole solve.
		 */
		if (first_routes && sweeps == 1 && phase == PHASE_FREE &&
		    u > goal(ctx, best_lb, ecmp_goal)) {
			lb = dual_bound(ctx, &dk, u);
			if (lb > best_lb)
				best_lb = lb;
		}
		/* re-centring only rescales all lengths alike, but keeps the
		 * exponents in range when the max moves */
		if (fabs(u - ctx->uref) > 0.01 * u) {
			ctx->uref = u;
			all_len_update(ctx);
		}
		/* stay at this softness while it still pays (and the bound
		 * does not already say we are done) */
		if (level_sweeps < MAX_SWEEPS_PER_LEVEL && beta < BETA_MAX &&
		    sweeps < budget &&
		    u > goal(ctx, best_lb, ecmp_goal) &&
		    (level_sweeps < MIN_SWEEPS_PER_LEVEL ||
		     prev - u > LEVEL_GAIN * u))
			continue;
		/* the dual bound costs a sweep's Dijkstras: only when needed */
		if (phase == PHASE_FREE && u > goal(ctx, best_lb, ecmp_goal)) {
			lb = dual_bound(ctx, &dk, u);
			if (lb > best_lb)
				best_lb = lb;
		}
		if (getenv("MPTE_TRACE"))
			fprintf(stderr, "mpte: phase %d sweep %d beta %g u %.6f lb %.6f\n",
				phase, ctx->iterations, beta, u, best_lb);
		stop = u <= goal(ctx, best_lb, ecmp_goal) ||
		       sweeps >= budget ||
		       (beta >= BETA_MAX && since_best >= STALL_SWEEPS) ||
		       (ctx->opt.time_limit > 0 &&
			mpte_now() - t0 > ctx->opt.time_limit);
		if (stop && phase == PHASE_FREE) {
			double until = ctx->opt.time_limit > 0 ?
				       t0 + ctx->opt.time_limit : 0;
			int chosen, cut;

			/* sweeps that stopped short of the goal: the path LP
			 * with pricing finishes a small instance (colgen.c) */
			if (u > goal(ctx, best_lb, ecmp_goal) &&
			    mpte_colgen(ctx, until, false)) {
				u = mpte_current_max_util(ctx, NULL);
				/* the LP's optimum: what runs after it runs
				 * sharp (a polish at the first sweeps'
				 * softness moved seed 100 3 % off it, a
				 * sharp one 3.4e-5) */
				beta = BETA_MAX;
			}
			/* the LP over the paths held chooses first (pathlp.c);
			 * what it leaves over a cap is cut */
			chosen = mpte_select_paths(ctx, until, 0);
			cut = cut_to_max_paths(ctx);

			if (chosen || cut) {
				phase = PHASE_CAPPED;
				ctx->capped = 1;
				sweeps = 0;
				budget = RESTRICTED_SWEEPS;
				stop = 0;
				u = mpte_current_max_util(ctx, NULL);
				best_u = HUGE_VAL_D;
				since_best = 0;
				/* a cut moved flow blindly: soften again and
				 * re-balance; the LP's flows are already the
				 * best over their paths, stay sharp */
				if (cut)
					beta = BETA_START * 2;
				else if (u <= goal(ctx, best_lb, ecmp_goal))
					break;
				/* still above: the path LP with pricing,
				 * new paths only within the caps (seed 646:
				 * 1.027 x the LP without, 1.017 with); the
				 * sweeps after it stay sharp */
				else if (mpte_colgen(ctx, until, true)) {
					u = mpte_current_max_util(ctx, NULL);
					beta = BETA_MAX;
				}
			}
		}
		if (stop)
			break;
		/* next level: sharper, re-centred on the current max */
		if (beta < BETA_MAX)
			beta *= 2;
		level_sweeps = 0;
		ctx->uref = u;
		ctx->alpha = beta / (u > 1e-9 ? u : 1e-9);
		all_len_update(ctx);
	}
done:
	ctx->restricted = 0;
	ctx->capped = 0;
	ctx->beta = beta;
	free(buf);
	mpte_release_routes(ctx, held, held &&
			    mpte_current_max_util(ctx, NULL) > 1 + 1e-9);
	ctx->max_util = mpte_current_max_util(ctx, NULL);
	/* a bound with some demands frozen is not a bound on the whole */
	for (di = 0; di < ctx->ds->n; di++)
		if (ctx->st[di].status == MPTE_ADMITTED && !ctx->st[di].active)
			break;
	if (di == ctx->ds->n && !polish) {
		ctx->lower_bound = best_lb;
		mpte_lbrec_set(ctx, &ctx->lb_last, best_lb, dk.best_y,
			       dk.best_dist, dk.best);
	}
	free(dk.dist);
	free(dk.best_dist);
	free(dk.best_y);
	ctx->solve_seconds += mpte_now() - t0;
	return 0;
}

int mpte_optimise(struct mpte_ctx *ctx)
{
	return optimise(ctx, PHASE_FREE);
}

/*
 * Re-balance the active demands after their paths were made final: with
 * new paths (up to max_paths each) if new_paths, else within the paths
 * they hold, which keeps the paths final.
 */
void mpte_polish(struct mpte_ctx *ctx, bool new_paths)
{
	optimise(ctx, new_paths ? PHASE_CAPPED : PHASE_HELD);
}

/*
 * Move delta of demand di's flow from its path p onto the path q (arcs,
 * n), which joins its set if new (the caller checked max_paths and the
 * lists); a path left (almost) empty is removed.
 */
void mpte_shift_flow(struct mpte_ctx *ctx, int di, int p, const int *q, int n,
		     double delta)
{
	struct mpte_dstate *s = &ctx->st[di];
	int qi;

	for (qi = 0; qi < s->npaths; qi++)
		if (same_path(&s->paths[qi], q, n))
			break;
	if (qi == s->npaths) {
		if (s->npaths == s->pcap) {
			s->pcap = s->pcap ? 2 * s->pcap : 4;
			s->paths = mpte_xrealloc(s->paths, s->pcap * sizeof(*s->paths));
		}
		s->paths[qi].arcs = mpte_xcalloc(n ? n : 1, sizeof(int));
		memcpy(s->paths[qi].arcs, q, n * sizeof(int));
		s->paths[qi].len = n;
		s->paths[qi].flow = 0;
		s->npaths++;
	}
	add_flow(ctx, s->paths[p].arcs, s->paths[p].len, -delta);
	add_flow(ctx, q, n, delta);
	s->paths[p].flow -= delta;
	s->paths[qi].flow += delta;
	if (s->paths[p].flow <= 1e-12 * s->admitted) {
		if (s->paths[p].flow > 0) {
			add_flow(ctx, s->paths[p].arcs, s->paths[p].len,
				 -s->paths[p].flow);
			add_flow(ctx, q, n, s->paths[p].flow);
			s->paths[qi].flow += s->paths[p].flow;
		}
		path_remove(s, p);
	}
}
