// SPDX-License-Identifier: GPL-2.0
/*
 * sim.c - the discrete-event replay of a planned 1F1B schedule (sim.h).
 * It shares nothing with the prediction but the per-stage times and the
 * transfers' sizes: no formula, only events in time order.
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

enum { EV_OP, EV_ARRIVE };

struct ev {
	double t;
	long seq;
	int kind, who, mb, dir;	/* OP: who = stage; ARRIVE: who = xfer */
};

struct evq {
	struct ev *e;
	int n, cap;
	long seq;
};

static int ev_less(const struct ev *a, const struct ev *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void push(struct evq *q, struct ev e)
{
	int c;

	if (q->n == q->cap) {
		q->cap = q->cap ? 2 * q->cap : 256;
		q->e = realloc(q->e, q->cap * sizeof(*q->e));
		if (!q->e)
			abort();
	}
	e.seq = q->seq++;
	c = q->n++;
	q->e[c] = e;
	while (c && ev_less(&q->e[c], &q->e[(c - 1) / 2])) {
		struct ev t = q->e[c];

		q->e[c] = q->e[(c - 1) / 2];
		q->e[(c - 1) / 2] = t;
		c = (c - 1) / 2;
	}
}

static struct ev pop(struct evq *q)
{
	struct ev top = q->e[0];
	int c = 0;

	q->e[0] = q->e[--q->n];
	for (;;) {
		int a = 2 * c + 1, s = c;

		if (a < q->n && ev_less(&q->e[a], &q->e[s]))
			s = a;
		if (a + 1 < q->n && ev_less(&q->e[a + 1], &q->e[s]))
			s = a + 1;
		if (s == c)
			break;
		struct ev t = q->e[c];

		q->e[c] = q->e[s];
		q->e[s] = t;
		c = s;
	}
	return top;
}

/* Stage s's 1F1B order: op j is micro-batch mb, forward (0) or back (1). */
static void op_of(int S, int M, int s, int j, int *mb, int *back)
{
	int warm = S - s - 1 < M ? S - s - 1 : M;

	if (j < warm) {
		*mb = j;
		*back = 0;
	} else if (j < warm + 2 * (M - warm)) {
		int p = j - warm;

		*mb = p % 2 ? p / 2 : warm + p / 2;
		*back = p % 2;
	} else {
		*mb = M - warm + (j - warm - 2 * (M - warm));
		*back = 1;
	}
}

int plan_simulate(const struct plan_problem *pb, const struct plan_sol *x,
		  struct sim_stats *st)
{
	const struct plan_sites *ss = pb->s;
	int S = x->k, M = pb->lim.micro_batches, nx, i, s;
	static struct plan_xfer xf[PLAN_MAX_STAGES * 8];
	struct plan_cost c;
	struct evq q = { 0 };
	/* per stage */
	int *next = calloc(S, sizeof(int)), *busy = calloc(S, sizeof(int));
	double *lastb = calloc(S, sizeof(double));
	/* arrivals per (stage, mb): inputs (forward) and gradients (back) */
	int *nin = calloc(S, sizeof(int)), *nout = calloc(S, sizeof(int));
	int *got_in = calloc((size_t)S * M, sizeof(int));
	int *got_grad = calloc((size_t)S * M, sizeof(int));
	char *fdone = calloc((size_t)S * M, 1);
	/* links: a WAN link per ordered site pair; a path per xfer inside */
	double wan_free[PLAN_MAX_SITES][PLAN_MAX_SITES] = { { 0 } };
	double *path_free;
	double now = 0;

	plan_cost_eval(pb, x, &c);
	if (c.violations)
		return -1;
	nx = plan_xfers(pb, x, xf, sizeof(xf) / sizeof(*xf));
	path_free = calloc(2 * nx + 1, sizeof(double));
	for (i = 0; i < nx; i++) {
		nin[xf[i].b]++;
		nout[xf[i].a]++;
	}
	memset(st, 0, sizeof(*st));
	for (;;) {
		/* start whatever stage can start its next operation now */
		for (s = 0; s < S; s++) {
			int mb, back;

			if (busy[s] || next[s] >= 2 * M)
				continue;
			op_of(S, M, s, next[s], &mb, &back);
			if (!back && got_in[s * M + mb] < nin[s])
				continue;
			if (back && (!fdone[s * M + mb] ||
				     got_grad[s * M + mb] < nout[s]))
				continue;
			busy[s] = 1;
			push(&q, (struct ev){ now + (back ? c.B[s] : c.F[s]), 0,
					      EV_OP, s, mb, back });
		}
		if (!q.n)
			break;
		{
			struct ev e = pop(&q);

			now = e.t;
			st->events++;
			if (e.kind == EV_ARRIVE) {
				if (e.dir)
					got_grad[xf[e.who].a * M + e.mb]++;
				else
					got_in[xf[e.who].b * M + e.mb]++;
				continue;
			}
			s = e.who;
			busy[s] = 0;
			next[s]++;
			if (!e.dir)
				fdone[s * M + e.mb] = 1;
			else
				lastb[s] = now;
			/* send: activations after a forward, gradients after a back */
			for (i = 0; i < nx; i++) {
				int from = e.dir ? xf[i].b : xf[i].a;
				int p, r;
				double *fr, ser, lat, start;

				if (from != s)
					continue;
				p = x->site[e.dir ? xf[i].b : xf[i].a];
				r = x->site[e.dir ? xf[i].a : xf[i].b];
				if (p == r) {
					fr = &path_free[2 * i + e.dir];
					ser = xf[i].bytes / ss->s[p].intra_bw;
					lat = 0;
				} else {
					fr = &wan_free[p][r];
					ser = xf[i].bytes / ss->bw[p][r];
					lat = ss->lat[p][r];
				}
				start = *fr > now ? *fr : now;
				*fr = start + ser;
				push(&q, (struct ev){ *fr + lat, 0, EV_ARRIVE, i,
						      e.mb, e.dir });
			}
		}
	}
	for (s = 0; s < S; s++) {
		if (next[s] < 2 * M) {
			st->iteration = -1;	/* deadlock: a bug */
			break;
		}
		if (lastb[s] > st->pipeline)
			st->pipeline = lastb[s];
		if (lastb[s] + c.ar[s] > st->iteration)
			st->iteration = lastb[s] + c.ar[s];
	}
	free(q.e);
	free(next); free(busy); free(lastb); free(nin); free(nout);
	free(got_in); free(got_grad); free(fdone); free(path_free);
	return st->iteration < 0 ? -1 : 0;
}
