// SPDX-License-Identifier: GPL-2.0
/*
 * capbound.c - a lower bound for routings with at most max_paths paths a
 * demand, which the LP (no path limit) cannot give.
 *
 * Every path of a demand crosses each cut C between its ingress and its
 * egress on at least one arc; give each path the first such arc.  The
 * demand's flow then runs through at most max_paths = K arcs of C, each
 * carrying at most U c_a, so
 *
 *	bw <= U * topK(C)	(the sum of the K largest capacities in C)
 *	U  >= bw / min over cuts C of topK(C).
 *
 * The minimum over cuts is exact and cheap: topK(C) = min over l >= 0 of
 * (K l + sum over C of max(0, c_a - l)) (the LP dual of choosing K), and
 * the l at which it is attained is one of the capacities, so
 *
 *	min_C topK(C) = min over capacities l of (K l + mincut with c_a - l)
 *
 * one max-flow per distinct capacity.  Where a demand has to spread over
 * more arcs than its cap allows (ten small links side by side), this
 * bound is above the LP optimum, and no routing with the cap can reach
 * the LP.  Background and other demands are left out (they could only
 * raise it), so the bound is weak where they matter; it is for the
 * benchmark and the tests, not the optimiser's stopping rule.
 */
#include <stdlib.h>
#include <string.h>

#include "mpte_int.h"

/* A residual graph: arc 2i is topology arc i, 2i+1 its reverse. */
struct flownet {
	int n, m;
	double *res;
	int *head, *next, *first;
	int *it, *queue;		/* the arc into each node; BFS queue */
};

static void net_init(struct flownet *g, const struct mpte_topology *t)
{
	int a;

	g->n = t->nnodes;
	g->m = 2 * t->narcs;
	g->res = mpte_xcalloc(g->m, sizeof(double));
	g->head = mpte_xcalloc(g->m, sizeof(int));
	g->next = mpte_xcalloc(g->m, sizeof(int));
	g->first = mpte_xcalloc(g->n, sizeof(int));
	g->it = mpte_xcalloc(g->n, sizeof(int));
	g->queue = mpte_xcalloc(g->n, sizeof(int));
	memset(g->first, -1, g->n * sizeof(int));
	for (a = 0; a < g->m; a++) {
		const struct mpte_arc *arc = &t->arcs[a / 2];
		int tail = a % 2 ? arc->to : arc->from;

		g->head[a] = a % 2 ? arc->from : arc->to;
		g->next[a] = g->first[tail];
		g->first[tail] = a;
	}
}

static void net_free(struct flownet *g)
{
	free(g->res);
	free(g->head);
	free(g->next);
	free(g->first);
	free(g->it);
	free(g->queue);
}

/* A shortest augmenting path (BFS) into g->it as the arc into each node. */
static int bfs(struct flownet *g, int s, int t, double eps)
{
	int qh = 0, qt = 0, v, a;

	for (v = 0; v < g->n; v++)
		g->it[v] = -1;
	g->it[s] = -2;
	g->queue[qt++] = s;
	while (qh < qt && g->it[t] == -1) {
		v = g->queue[qh++];
		for (a = g->first[v]; a >= 0; a = g->next[a])
			if (g->res[a] > eps && g->it[g->head[a]] == -1) {
				g->it[g->head[a]] = a;
				g->queue[qt++] = g->head[a];
			}
	}
	return g->it[t] != -1;
}

/*
 * The max flow (= min cut) from s to t with arc capacities max(0, c - l):
 * Edmonds-Karp, which is enough for the instances this bound is for.
 */
static double min_cut(struct flownet *g, const struct mpte_ctx *ctx, int s,
		      int t, double l)
{
	double flow = 0, eps = 1e-12;
	int a, v;

	for (a = 0; a < g->m; a++) {
		double c = ctx->t->arcs[a / 2].capacity - l;

		g->res[a] = a % 2 || ctx->failed[a / 2] || c < 0 ? 0 : c;
	}
	while (bfs(g, s, t, eps)) {
		double f = HUGE_VAL_D;

		for (v = t; v != s; v = g->head[g->it[v] ^ 1])
			if (g->res[g->it[v]] < f)
				f = g->res[g->it[v]];
		for (v = t; v != s; v = g->head[g->it[v] ^ 1]) {
			g->res[g->it[v]] -= f;
			g->res[g->it[v] ^ 1] += f;
		}
		flow += f;
	}
	return flow;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double mpte_cap_bound(const struct mpte_ctx *ctx)
{
	const struct mpte_topology *t = ctx->t;
	struct flownet g;
	double *caps = mpte_xcalloc(t->narcs + 1, sizeof(double)), best = 0;
	int ncap = 0, a, i, di;

	for (a = 0; a < t->narcs; a++)
		if (!ctx->failed[a])
			caps[ncap++] = t->arcs[a].capacity;
	caps[ncap++] = 0;
	qsort(caps, ncap, sizeof(double), cmp_double);
	for (a = i = 0; a < ncap; a++)
		if (!i || caps[a] != caps[i - 1])
			caps[i++] = caps[a];
	ncap = i;
	net_init(&g, t);
	for (di = 0; di < ctx->ds->n; di++) {
		const struct mpte_dstate *s = &ctx->st[di];
		const struct mpte_demand *d = &ctx->ds->d[di];
		double top = HUGE_VAL_D;
		int k = d->max_paths;

		if (!s->active || s->admitted <= 0 || d->ningress != 1 ||
		    d->negress != 1 || d->ingress[0] == d->egress[0])
			continue;
		for (i = 0; i < ncap; i++) {
			double v = k * caps[i] +
				   min_cut(&g, ctx, d->ingress[0], d->egress[0],
					   caps[i]);

			if (v < top)
				top = v;
		}
		if (top > 0 && top < HUGE_VAL_D && s->admitted / top > best)
			best = s->admitted / top;
	}
	net_free(&g);
	free(caps);
	return best;
}
