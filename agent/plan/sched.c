// SPDX-License-Identifier: GPL-2.0
/*
 * sched.c - the predicted iteration time: the plan's 1F1B schedule
 * worked out operation by operation.
 *
 * The closed form in cost.c (fill + (M - 1) tau + all-reduce) is what
 * the DP can search exactly, but it is a bound, not the schedule: on
 * stages of unequal speed the fill and the steady state overlap, a round
 * trip longer than w_s periods stalls less than L_s / w_s says once the
 * bottleneck stage's queue is full, and the all-reduce of a stage that
 * finishes early overlaps the other stages' drain.  Up to 12 % apart
 * on the test suite's chains.  Here every stage takes its 1F1B
 * operations in order (warm-up forwards, one forward one backward,
 * cool-down backwards); an operation starts when the stage is free and
 * its inputs are in; a transfer leaves when its sender's operation ends,
 * waits for its link (one per ordered pair of sites, shared by every
 * transfer that crosses it; inside a site a path of its own per
 * transfer and direction), is serialised at the link's bandwidth and
 * lands a latency later; each stage all-reduces after its last backward.
 *
 * Operations are resolved in dependency order, stage after stage, not in
 * time order: a link shared by two transfers (a DAG only: a chain
 * crosses each ordered pair of sites once) serves them in the order they
 * are resolved, which can differ from the order they are sent.  The
 * simulator (tests/sim.c) is the independent check: it replays events in
 * time order.
 */
#include <stdlib.h>
#include <string.h>

#include "plan_int.h"

/* Stage s's op j of 2M: micro-batch *mb, forward (0) or backward (1). */
static void one_f_one_b(int S, int M, int s, int j, int *mb, int *back)
{
	int warm = S - 1 - s < M ? S - 1 - s : M;
	int steady = 2 * (M - warm);

	if (j < warm) {
		*mb = j;
		*back = 0;
	} else if (j < warm + steady) {
		int p = j - warm;

		/* after the warm-up: forward of warm + i, backward of i */
		*back = p & 1;
		*mb = *back ? p / 2 : warm + p / 2;
	} else {
		*back = 1;
		*mb = M - warm + (j - warm - steady);
	}
}

struct sched {
	int S, M, nx;
	const struct plan_xfer *xf;
	double *free_at;	/* per stage: its last operation's end */
	int *next;		/* per stage: its next operation */
	double *in_at, *grad_at;	/* per (stage, mb): last input landed */
	int *in_n, *grad_n;	/* per (stage, mb): inputs landed */
	int *need_in, *need_grad;	/* per stage */
	double *path;		/* per xfer and direction, inside a site */
	double wan[PLAN_MAX_SITES][PLAN_MAX_SITES];
};

/* The transfers stage s sends after its operation on mb ends at t. */
static void send(const struct plan_problem *pb, const struct plan_sol *x,
		 struct sched *w, int s, int mb, int back, double t)
{
	int i;

	for (i = 0; i < w->nx; i++) {
		const struct plan_xfer *f = &w->xf[i];
		int from = back ? f->b : f->a, to = back ? f->a : f->b;
		int p = x->site[from], q = x->site[to];
		double *link, ser, lat, go;

		if (from != s)
			continue;
		if (p == q) {
			link = &w->path[2 * i + back];
			ser = f->bytes / pb->s->s[p].intra_bw;
			lat = 0;
		} else {
			link = &w->wan[p][q];
			ser = f->bytes / pb->s->bw[p][q];
			lat = pb->s->lat[p][q];
		}
		go = *link > t ? *link : t;
		*link = go + ser;
		if (back) {
			double *a = &w->grad_at[to * w->M + mb];

			if (*link + lat > *a)
				*a = *link + lat;
			w->grad_n[to * w->M + mb]++;
		} else {
			double *a = &w->in_at[to * w->M + mb];

			if (*link + lat > *a)
				*a = *link + lat;
			w->in_n[to * w->M + mb]++;
		}
	}
}

double plan_schedule(const struct plan_problem *pb, const struct plan_sol *x,
		     const struct plan_cost *c)
{
	struct sched w = { .S = x->k, .M = pb->lim.micro_batches };
	static __thread struct plan_xfer xf[PLAN_MAX_STAGES * 8];
	int S = x->k, M = w.M, s, i, progress = 1, done = 0;
	size_t sm = (size_t)S * M;
	double T = 0;

	if (c->violations)
		return INFINITY;
	w.nx = plan_xfers(pb, x, xf, sizeof(xf) / sizeof(*xf));
	w.xf = xf;
	w.free_at = plan_xcalloc(S, sizeof(double));
	w.next = plan_xcalloc(S, sizeof(int));
	w.need_in = plan_xcalloc(S, sizeof(int));
	w.need_grad = plan_xcalloc(S, sizeof(int));
	w.in_at = plan_xcalloc(sm, sizeof(double));
	w.grad_at = plan_xcalloc(sm, sizeof(double));
	w.in_n = plan_xcalloc(sm, sizeof(int));
	w.grad_n = plan_xcalloc(sm, sizeof(int));
	w.path = plan_xcalloc(2 * (size_t)w.nx + 1, sizeof(double));
	for (i = 0; i < w.nx; i++) {
		w.need_in[xf[i].b]++;
		w.need_grad[xf[i].a]++;
	}
	while (progress) {
		progress = 0;
		for (s = 0; s < S; s++)
			while (w.next[s] < 2 * M) {
				int mb, back;
				double ready, end;

				one_f_one_b(S, M, s, w.next[s], &mb, &back);
				if (back ? w.grad_n[s * M + mb] < w.need_grad[s] :
				    w.in_n[s * M + mb] < w.need_in[s])
					break;
				ready = back ? w.grad_at[s * M + mb] :
					w.in_at[s * M + mb];
				end = (ready > w.free_at[s] ? ready : w.free_at[s]) +
				      (back ? c->B[s] : c->F[s]);
				w.free_at[s] = end;
				w.next[s]++;
				send(pb, x, &w, s, mb, back, end);
				progress = 1;
			}
	}
	for (s = 0; s < S; s++) {
		done += w.next[s] == 2 * M;
		if (w.free_at[s] + c->ar[s] > T)
			T = w.free_at[s] + c->ar[s];
	}
	free(w.free_at);
	free(w.next);
	free(w.need_in);
	free(w.need_grad);
	free(w.in_at);
	free(w.grad_at);
	free(w.in_n);
	free(w.grad_n);
	free(w.path);
	/* 1F1B cannot deadlock: a stage left behind is a bug, not a plan */
	return done == S ? T : INFINITY;
}
