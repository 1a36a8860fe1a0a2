// SPDX-License-Identifier: GPL-2.0
/*
 * tabu.c - tabu search over plans: the cuts of the layer order (a
 * topological order for a DAG) and a site per stage.  Works for chains,
 * DAGs and business heads alike, and places as it cuts.
 *
 * Each iteration takes the best plan of the neighbourhood (the moves of
 * limits.tabu.moves: shift a cut by 1, 2, 4, ... layers; merge two
 * neighbouring stages; split a stage at a quarter, half or three
 * quarters, the new part on any site; move a stage to another site) that
 * is not tabu, or is tabu but better than the best so far (aspiration).
 * What a move takes away - a cut position, a stage's site - may not come
 * back for `tenure` iterations.  Plans compare by (violations, closed-form
 * time), so the search may start from, and pass through, plans that break
 * a constraint.  It stops after `iterations`, or `stall` iterations
 * without a better plan.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan_int.h"

#define TABU_SLOTS 4096

struct tabu {
	const struct plan_problem *pb;
	int until[TABU_SLOTS];	/* iteration an attribute stays tabu to */
	int it;
	unsigned int rnd;
};

/* Attributes: a cut before layer y; stage starting at layer y on site q. */
static unsigned int key_cut(int y)
{
	return ((unsigned int)y * 2654435761u) % TABU_SLOTS;
}

static unsigned int key_site(const struct tabu *t, int y, int q)
{
	return ((unsigned int)(y * t->pb->s->n + q) * 2246822519u + 7) %
		TABU_SLOTS;
}

static int is_tabu(const struct tabu *t, unsigned int key)
{
	return t->until[key] > t->it;
}

static int better(const struct plan_cost *a, const struct plan_cost *b)
{
	if (a->violations != b->violations)
		return a->violations < b->violations;
	return a->T < b->T;
}

struct cand {
	struct plan_sol x;
	struct plan_cost c;
	int have;
	unsigned int removed[4];	/* attributes the move took away */
	int nremoved;
};

/* Consider x as the next plan: keep it if it is the best allowed so far. */
static void consider(struct tabu *t, struct cand *nb, const struct plan_sol *x,
		     int tabu, const struct plan_cost *best,
		     const unsigned int *removed, int nremoved)
{
	struct plan_cost c;

	plan_cost_eval(t->pb, x, &c);
	/* aspiration: a tabu move that beats the best plan is taken */
	if (tabu && !(c.violations == 0 && better(&c, best)))
		return;
	if (nb->have && !better(&c, &nb->c) &&
	    !(c.T == nb->c.T && c.violations == nb->c.violations &&
	      ((t->rnd = t->rnd * 1103515245u + 12345u) >> 16) & 1))
		return;
	nb->x = *x;
	nb->c = c;
	nb->have = 1;
	memcpy(nb->removed, removed, nremoved * sizeof(*removed));
	nb->nremoved = nremoved;
}

static void remove_cut(struct plan_sol *x, int b)
{
	memmove(&x->cut[b], &x->cut[b + 1], (x->k - b) * sizeof(int));
	memmove(&x->site[b], &x->site[b + 1], (x->k - b - 1) * sizeof(int));
	x->k--;
}

static void insert_cut(struct plan_sol *x, int s, int y, int q)
{
	/* stage s splits at y; the part from y on is on site q */
	memmove(&x->cut[s + 2], &x->cut[s + 1], (x->k - s) * sizeof(int));
	memmove(&x->site[s + 2], &x->site[s + 1],
		(x->k - s - 1) * sizeof(int));
	x->cut[s + 1] = y;
	x->site[s + 1] = q;
	x->k++;
}

static void neighbourhood(struct tabu *t, const struct plan_sol *cur,
			  const struct plan_cost *best, struct cand *nb)
{
	const struct plan_problem *pb = t->pb;
	unsigned int moves = pb->lim.tabu.moves, rm[4];
	int ns = pb->s->n, b, s, q, step, dir;
	struct plan_sol x;

	if (moves & PLAN_MOVE_SHIFT)
		for (b = 1; b < cur->k; b++)
			for (dir = -1; dir <= 1; dir += 2)
				for (step = 1;; step *= 2) {
					int y = cur->cut[b] + dir * step;

					if (y <= cur->cut[b - 1] || y >= cur->cut[b + 1])
						break;
					x = *cur;
					x.cut[b] = y;
					rm[0] = key_cut(cur->cut[b]);
					consider(t, nb, &x, is_tabu(t, key_cut(y)), best,
						 rm, 1);
				}
	if ((moves & PLAN_MOVE_MERGE) && cur->k > 1)
		for (b = 1; b < cur->k; b++)
			for (dir = 0; dir < 2; dir++) {
				x = *cur;
				/* the merged stage keeps one of the two sites */
				q = cur->site[b - 1 + dir];
				remove_cut(&x, b);
				x.site[b - 1] = q;
				rm[0] = key_cut(cur->cut[b]);
				consider(t, nb, &x, 0, best, rm, 1);
			}
	if ((moves & PLAN_MOVE_SPLIT) && cur->k < pb->lim.stages)
		for (s = 0; s < cur->k; s++) {
			int len = cur->cut[s + 1] - cur->cut[s], f, last = -1;

			for (f = 1; f <= 3; f++) {
				int y = cur->cut[s] + len * f / 4;

				if (y <= cur->cut[s] || y == last)
					continue;
				last = y;
				for (q = 0; q < ns; q++) {
					if (!pb->cap[q])
						continue;
					x = *cur;
					insert_cut(&x, s, y, q);
					consider(t, nb, &x, is_tabu(t, key_cut(y)),
						 best, rm, 0);
				}
			}
		}
	/* a run of stages on one site moves whole: one stage alone would
	 * split the run, which the constraints forbid */
	if (moves & PLAN_MOVE_SITE)
		for (s = 0; s < cur->k; s++) {
			int e = s, z;

			if (s && cur->site[s - 1] == cur->site[s])
				continue;
			while (e + 1 < cur->k && cur->site[e + 1] == cur->site[s])
				e++;
			if (e == s)
				continue;
			for (q = 0; q < ns; q++) {
				if (q == cur->site[s] || !pb->cap[q])
					continue;
				x = *cur;
				for (z = s; z <= e; z++)
					x.site[z] = q;
				rm[0] = key_site(t, cur->cut[s], cur->site[s]);
				consider(t, nb, &x,
					 is_tabu(t, key_site(t, cur->cut[s], q)),
					 best, rm, 1);
			}
		}
	/* two runs trade sites: the order in which the pipeline visits them */
	if (moves & PLAN_MOVE_SITE)
		for (s = 0; s < cur->k; s++) {
			int s2, z;

			if (s && cur->site[s - 1] == cur->site[s])
				continue;
			for (s2 = s + 1; s2 < cur->k; s2++) {
				int a = cur->site[s], bq = cur->site[s2];

				if (cur->site[s2 - 1] == bq || a == bq)
					continue;
				x = *cur;
				for (z = 0; z < cur->k; z++)
					x.site[z] = cur->site[z] == a ? bq :
						    cur->site[z] == bq ? a : cur->site[z];
				rm[0] = key_site(t, cur->cut[s], a);
				consider(t, nb, &x,
					 is_tabu(t, key_site(t, cur->cut[s], bq)),
					 best, rm, 1);
			}
		}
	if (moves & PLAN_MOVE_SITE)
		for (s = 0; s < cur->k; s++)
			for (q = 0; q < ns; q++) {
				if (q == cur->site[s] || !pb->cap[q])
					continue;
				x = *cur;
				x.site[s] = q;
				rm[0] = key_site(t, cur->cut[s], cur->site[s]);
				consider(t, nb, &x,
					 is_tabu(t, key_site(t, cur->cut[s], q)),
					 best, rm, 1);
			}
}

/*
 * The search starts from the best few placements found by start(); the
 * iterations are shared among them.  Eight: with four, the 96-layer,
 * 10 % WAN benchmark lost the DP's route (a then c) to four cuts of
 * routes starting at c and ended 3.6 % above the DP.
 */
#define TABU_STARTS 8

/* The best few starting plans, best first. */
struct starts {
	struct plan_sol x[TABU_STARTS];
	struct plan_cost c[TABU_STARTS];
	int n;
};

static void keep(struct starts *st, const struct plan_sol *x,
		 const struct plan_cost *c)
{
	int i;

	/* one start per placement: the search moves the cuts itself */
	for (i = 0; i < st->n; i++)
		if (st->x[i].k == x->k &&
		    !memcmp(st->x[i].site, x->site, x->k * sizeof(int))) {
			if (!better(c, &st->c[i]))
				return;
			break;
		}
	if (i < st->n) {
		/* a better cut of a kept placement takes its slot */
		st->x[i] = *x;
		st->c[i] = *c;
		goto sift;
	}

	if (st->n == TABU_STARTS) {
		if (!better(c, &st->c[TABU_STARTS - 1]))
			return;
		i = TABU_STARTS - 1;
	} else {
		i = st->n++;
	}
	st->x[i] = *x;
	st->c[i] = *c;
sift:
	for (; i > 0 && better(&st->c[i], &st->c[i - 1]); i--) {
		struct plan_sol tx = st->x[i];
		struct plan_cost tc = st->c[i];

		st->x[i] = st->x[i - 1];
		st->c[i] = st->c[i - 1];
		st->x[i - 1] = tx;
		st->c[i - 1] = tc;
	}
}

static void try_order(const struct plan_problem *pb, const int *order,
		      struct starts *st)
{
	struct plan_sol bx;
	struct plan_cost bc = { .violations = 1 << 30 };
	int ns = pb->s->n, n = pb->m->n, k, j;
	struct plan_sol x;
	struct plan_cost c;

	for (k = 1; k <= pb->lim.stages; k++) {
		double speed[PLAN_MAX_STAGES], total = 0, acc = 0;
		double work = pb->pf[n] + pb->pb[n];
		int s = 0, used = 0, site = 0;

		x.k = k;
		for (s = 0; s < k; s++) {
			while (site < ns && used >= pb->cap[order[site]]) {
				site++;
				used = 0;
			}
			if (site == ns)
				break;
			x.site[s] = order[site];
			used++;
			speed[s] = pb->s->s[x.site[s]].flops;
			total += speed[s];
		}
		if (s < k)
			break;
		x.cut[0] = 0;
		for (s = 0, j = 0; s < k; s++) {
			acc += speed[s] / total;
			while (j < n && (pb->pf[j] + pb->pb[j]) < acc * work)
				j++;
			x.cut[s + 1] = j;
		}
		x.cut[k] = n;
		/* each stage at least one layer */
		for (s = 1; s <= k; s++)
			if (x.cut[s] <= x.cut[s - 1])
				x.cut[s] = x.cut[s - 1] + 1;
		for (s = k - 1; s >= 1; s--)
			if (x.cut[s] >= x.cut[s + 1])
				x.cut[s] = x.cut[s + 1] - 1;
		plan_cost_eval(pb, &x, &c);
		if (better(&c, &bc)) {
			bx = x;
			bc = c;
		}
	}
	/* one start per order: different orders are different valleys */
	if (bc.violations < 1 << 30)
		keep(st, &bx, &bc);
}

/* Every order of the sites (Heap's algorithm), up to 6 sites. */
static void permute(const struct plan_problem *pb, int *a, int n,
		    struct starts *st)
{
	int i;

	if (n == 1) {
		try_order(pb, a, st);
		return;
	}
	for (i = 0; i < n; i++) {
		int t, j = n % 2 ? 0 : i;

		permute(pb, a, n - 1, st);
		t = a[j];
		a[j] = a[n - 1];
		a[n - 1] = t;
	}
}

/* Cut x (sites set, x->k stages) so each stage's compute matches its speed. */
static void balance(const struct plan_problem *pb, struct plan_sol *x)
{
	int n = pb->m->n, k = x->k, s, j;
	double total = 0, acc = 0, work = pb->pf[n] + pb->pb[n];

	for (s = 0; s < k; s++)
		total += pb->s->s[x->site[s]].flops;
	x->cut[0] = 0;
	for (s = 0, j = 0; s < k; s++) {
		acc += pb->s->s[x->site[s]].flops / total;
		while (j < n && (pb->pf[j] + pb->pb[j]) < acc * work)
			j++;
		x->cut[s + 1] = j;
	}
	x->cut[k] = n;
	for (s = 1; s <= k; s++)
		if (x->cut[s] <= x->cut[s - 1])
			x->cut[s] = x->cut[s - 1] + 1;
	for (s = k - 1; s >= 1; s--)
		if (x->cut[s] >= x->cut[s + 1])
			x->cut[s] = x->cut[s + 1] - 1;
}

/*
 * Every route through the sites (an ordered subset) and every number of
 * stages on each site of it, cut by balance(): the shape of the DP's
 * optimum is one of these (a thin WAN wants few sites and uneven counts,
 * the round-trip bound wants short stages at the end), and a search
 * started in the wrong valley seldom crosses to it.  Stops after
 * `budget` plans (many sites).
 */
struct routes {
	const struct plan_problem *pb;
	struct starts *st;
	struct plan_sol x;
	int used[PLAN_MAX_SITES];
	long budget;
};

static void route(struct routes *r, int depth)
{
	const struct plan_problem *pb = r->pb;
	int q, cnt, k0 = r->x.k;

	for (q = 0; q < pb->s->n && r->budget > 0; q++) {
		if (r->used[q] || !pb->cap[q])
			continue;
		r->used[q] = 1;
		for (cnt = 1; cnt <= pb->cap[q] && k0 + cnt <= pb->lim.stages &&
		     k0 + cnt <= pb->m->n; cnt++) {
			struct plan_cost c;
			int s;

			r->x.k = k0 + cnt;
			for (s = k0; s < r->x.k; s++)
				r->x.site[s] = q;
			balance(pb, &r->x);
			plan_cost_eval(pb, &r->x, &c);
			r->budget--;
			keep(r->st, &r->x, &c);
			route(r, depth + 1);
		}
		r->used[q] = 0;
	}
	r->x.k = k0;
}

/*
 * Starting plans: the uniform split, every route through the sites with
 * every count of stages per site (route()), and for many sites every
 * order of them filled in turn (by capacity and as given beyond 6).
 */
static void start(const struct plan_problem *pb, struct starts *st)
{
	int order[PLAN_MAX_SITES], ns = pb->s->n, i, j;
	struct routes *r = plan_xcalloc(1, sizeof(*r));
	struct plan_sol x;
	struct plan_cost c;

	plan_uniform(pb, &x);
	plan_cost_eval(pb, &x, &c);
	keep(st, &x, &c);
	r->pb = pb;
	r->st = st;
	r->budget = 20000;
	route(r, 0);
	free(r);
	for (i = 0; i < ns; i++)
		order[i] = i;
	if (ns <= 6) {
		permute(pb, order, ns, st);
		return;
	}
	try_order(pb, order, st);
	for (i = 0; i < ns; i++)
		for (j = i + 1; j < ns; j++)
			if (pb->s->s[order[j]].flops * pb->cap[order[j]] >
			    pb->s->s[order[i]].flops * pb->cap[order[i]]) {
				int tmp = order[i];

				order[i] = order[j];
				order[j] = tmp;
			}
	try_order(pb, order, st);
}

/* One descent from *cur; *best and *bc updated. */
static int search(struct tabu *t, struct plan_sol cur, struct plan_cost cc,
		  int iterations, struct plan_sol *best, struct plan_cost *bc)
{
	const struct plan_problem *pb = t->pb;
	struct cand *nb = plan_xcalloc(1, sizeof(*nb));
	int stall = 0, i, it;

	memset(t->until, 0, sizeof(t->until));
	if (better(&cc, bc)) {
		*best = cur;
		*bc = cc;
	}
	for (it = 0, t->it = 0; it < iterations && stall < pb->lim.tabu.stall;
	     it++, t->it++) {
		nb->have = 0;
		neighbourhood(t, &cur, bc, nb);
		if (!nb->have)
			break;
		for (i = 0; i < nb->nremoved; i++)
			t->until[nb->removed[i]] = t->it + 1 + pb->lim.tabu.tenure;
		cur = nb->x;
		cc = nb->c;
		if (better(&cc, bc)) {
			*best = cur;
			*bc = cc;
			stall = 0;
		} else {
			stall++;
		}
	}
	free(nb);
	return it;
}

int plan_tabu(struct plan_problem *pb, struct plan_sol *best, int *iters,
	      char *err, size_t errlen)
{
	struct tabu *t = plan_xcalloc(1, sizeof(*t));
	struct starts *st = plan_xcalloc(1, sizeof(*st));
	struct plan_cost bc = { .violations = 1 << 30, .T = INFINITY };
	int i;

	t->pb = pb;
	t->rnd = pb->lim.tabu.seed;
	start(pb, st);
	*iters = 0;
	/* the iterations shared among the best starts */
	for (i = 0; i < st->n; i++)
		*iters += search(t, st->x[i], st->c[i],
				 pb->lim.tabu.iterations / st->n, best, &bc);
	free(t);
	free(st);
	if (bc.violations)
		return plan_fail(err, errlen, "no feasible plan found: %s", bc.why);
	return 0;
}
