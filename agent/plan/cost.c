// SPDX-License-Identifier: GPL-2.0
/*
 * cost.c - the cost model: the predicted iteration time of a plan.
 *
 * A stage s on site q with d GPUs takes F_s = sum(forward FLOP) /
 * (d * flops_q) per micro-batch forward, B_s likewise backward.  A
 * transfer of the activations from stage a to b takes latency + bytes /
 * bandwidth (the site's own fabric when a and b share a site), the
 * gradients the same way back.  Then, for M micro-batches in 1F1B:
 *
 *   fill   L0: one micro-batch through every stage and back, transfers
 *          included (a critical path over the stage graph);
 *   period tau = max(F_s + B_s, the load of each link per micro-batch,
 *          L_s / w_s), where L_s is the same round trip started at
 *          stage s and w_s = min(M, S - s) the micro-batches 1F1B lets
 *          stage s have in flight: a round trip longer than w_s periods
 *          stalls the stage, which is how a thin WAN shows even when no
 *          link is busy;
 *   iteration = L0 + (M - 1) tau + max_s allreduce_s, the all-reduce of
 *          each stage's gradients over its d GPUs (ring: 2 (d-1)/d of
 *          its parameter bytes per GPU) after the pipeline is flushed.
 *
 * Constraints (each a "violation", counted so the tabu search can climb
 * out of infeasible plans): stage count, layers per stage, GPUs per site,
 * each site hosting one run of consecutive stages, pins, GPU memory
 * (resident bytes plus w_s activations / d), a WAN link where needed.
 */
#include <string.h>

#include "plan_int.h"

double plan_stage_sum(const double *prefix, const struct plan_sol *x, int s)
{
	return prefix[x->cut[s + 1]] - prefix[x->cut[s]];
}

static void violate(struct plan_cost *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void violate(struct plan_cost *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->violations++) {
		va_start(ap, fmt);
		vsnprintf(c->why, sizeof(c->why), fmt, ap);
		va_end(ap);
	}
}

static void xfer_times(const struct plan_problem *pb, const struct plan_sol *x,
		       struct plan_xfer *t)
{
	const struct plan_sites *s = pb->s;
	int p = x->site[t->a], q = x->site[t->b];

	if (p == q) {
		t->fwd = t->bwd = t->bytes / s->s[p].intra_bw;
		return;
	}
	t->fwd = s->bw[p][q] > 0 ? s->lat[p][q] + t->bytes / s->bw[p][q] :
		 INFINITY;
	t->bwd = s->bw[q][p] > 0 ? s->lat[q][p] + t->bytes / s->bw[q][p] :
		 INFINITY;
}

int plan_xfers(const struct plan_problem *pb, const struct plan_sol *x,
	       struct plan_xfer *xf, int max)
{
	const struct plan_model *m = pb->m;
	int n = 0, s, v, j;

	if (pb->chain) {
		for (s = 0; s + 1 < x->k && n < max; s++, n++) {
			xf[n].a = s;
			xf[n].b = s + 1;
			xf[n].bytes = m->l[x->cut[s + 1] - 1].act;
			xfer_times(pb, x, &xf[n]);
		}
		return n;
	}
	{
		int *stage = plan_xcalloc(m->n, sizeof(int));
		int *last = plan_xcalloc(m->n, sizeof(int));
		double *mat = plan_xcalloc((size_t)x->k * x->k, sizeof(double));
		int a, b;

		for (s = 0; s < x->k; s++)
			for (v = x->cut[s]; v < x->cut[s + 1]; v++)
				stage[v] = s;
		for (v = 0; v < m->n; v++)
			last[v] = -1;
		/* an activation goes once to each later stage that reads it */
		for (v = 0; v < m->n; v++)
			for (j = 0; j < m->l[v].nin; j++) {
				int u = m->l[v].in[j];

				if (stage[u] == stage[v] || last[u] == stage[v])
					continue;
				last[u] = stage[v];
				mat[stage[u] * x->k + stage[v]] += m->l[u].act;
			}
		for (a = 0; a < x->k; a++)
			for (b = a + 1; b < x->k; b++)
				if (mat[a * x->k + b] > 0 && n < max) {
					xf[n].a = a;
					xf[n].b = b;
					xf[n].bytes = mat[a * x->k + b];
					xfer_times(pb, x, &xf[n]);
					n++;
				}
		free(stage);
		free(last);
		free(mat);
	}
	return n;
}

/*
 * One micro-batch with nothing else in the pipeline, started at stage
 * `from` (stages it does not reach are left out): returns the end of
 * from's backward.  For from = 0 that is the fill L0.
 */
static double round_trip(const struct plan_sol *x, const struct plan_cost *c,
			 const struct plan_xfer *xf, int nx, int from,
			 double *sf, double *ef, double *eb, char *reach)
{
	int s, i;
	double end = 0;

	for (s = 0; s < x->k; s++) {
		reach[s] = s == from;
		sf[s] = 0;
	}
	for (s = from; s < x->k; s++) {
		for (i = 0; i < nx; i++)
			if (xf[i].b == s && reach[xf[i].a]) {
				reach[s] = 1;
				if (ef[xf[i].a] + xf[i].fwd > sf[s])
					sf[s] = ef[xf[i].a] + xf[i].fwd;
			}
		ef[s] = sf[s] + c->F[s];
	}
	for (s = x->k - 1; s >= from; s--) {
		double sb = ef[s];

		if (!reach[s])
			continue;
		for (i = 0; i < nx; i++)
			if (xf[i].a == s && reach[xf[i].b] &&
			    eb[xf[i].b] + xf[i].bwd > sb)
				sb = eb[xf[i].b] + xf[i].bwd;
		eb[s] = sb + c->B[s];
		if (eb[s] > end)
			end = eb[s];
	}
	return from == 0 ? end : eb[from];
}

void plan_cost_eval(const struct plan_problem *pb, const struct plan_sol *x,
		    struct plan_cost *c)
{
	const struct plan_sites *ss = pb->s;
	const struct plan_limits *l = &pb->lim;
	int M = l->micro_batches, k = x->k, d = pb->d, s, i, nx;
	int used[PLAN_MAX_SITES] = { 0 }, seen[PLAN_MAX_SITES] = { 0 };
	double link[PLAN_MAX_SITES][PLAN_MAX_SITES] = { { 0 } };
	static __thread struct plan_xfer xf[PLAN_MAX_STAGES * 8];
	static __thread double sf[PLAN_MAX_STAGES], ef[PLAN_MAX_STAGES],
		eb[PLAN_MAX_STAGES], loop[PLAN_MAX_STAGES];
	static __thread char reach[PLAN_MAX_STAGES];

	memset(c, 0, offsetof(struct plan_cost, F));
	if (k < 1 || k > l->stages) {
		violate(c, "%d stages, the limit is %d", k, l->stages);
		c->T = INFINITY;
		return;
	}
	for (s = 0; s < k; s++) {
		int q = x->site[s], n = x->cut[s + 1] - x->cut[s];
		double act;

		if (n < 1) {
			violate(c, "stage %d is empty", s);
			c->T = INFINITY;
			return;
		}
		if (l->max_layers_per_stage && n > l->max_layers_per_stage)
			violate(c, "stage %d has %d layers, the limit is %d", s,
				n, l->max_layers_per_stage);
		if (++used[q] > pb->cap[q])
			violate(c, "site %s hosts more than %d stages of %d GPUs",
				ss->s[q].name, pb->cap[q], d);
		if (s && x->site[s - 1] != q && seen[q])
			violate(c, "site %s hosts two runs of stages", ss->s[q].name);
		seen[q] = 1;
		if (pb->pinned_other[q][x->cut[s + 1]] !=
		    pb->pinned_other[q][x->cut[s]])
			violate(c, "stage %d on %s holds a layer pinned elsewhere",
				s, ss->s[q].name);
		c->F[s] = plan_stage_sum(pb->pf, x, s) / (d * ss->s[q].flops);
		c->B[s] = plan_stage_sum(pb->pb, x, s) / (d * ss->s[q].flops);
		c->inflight[s] = M < k - s ? M : k - s;
		act = plan_stage_sum(pb->pa, x, s);
		c->memory[s] = plan_stage_sum(pb->pm, x, s) +
			       c->inflight[s] * act / d;
		if (c->memory[s] > ss->s[q].mem)
			violate(c, "stage %d needs %.4g bytes per GPU, site %s has %.4g",
				s, c->memory[s], ss->s[q].name, ss->s[q].mem);
		c->ar_bytes[s] = d > 1 ? 2.0 * (d - 1) / d *
			plan_stage_sum(pb->pp, x, s) : 0;
		c->ar[s] = c->ar_bytes[s] / ss->s[q].intra_bw;
		if (c->ar[s] > c->allreduce)
			c->allreduce = c->ar[s];
		if (c->F[s] + c->B[s] > c->period) {
			c->period = c->F[s] + c->B[s];
			snprintf(c->bottleneck, sizeof(c->bottleneck),
				 "stage %d compute", s);
		}
	}
	nx = plan_xfers(pb, x, xf, sizeof(xf) / sizeof(*xf));
	for (i = 0; i < nx; i++) {
		int p = x->site[xf[i].a], q = x->site[xf[i].b];
		double t;

		if (!isfinite(xf[i].fwd) || !isfinite(xf[i].bwd)) {
			violate(c, "no WAN link between %s and %s",
				ss->s[p].name, ss->s[q].name);
			continue;
		}
		if (p == q) {
			/* each pair of stages has its own path in the fabric */
			t = xf[i].bytes / ss->s[p].intra_bw;
			if (t > c->period) {
				c->period = t;
				snprintf(c->bottleneck, sizeof(c->bottleneck),
					 "%s fabric, stage %d -> %d",
					 ss->s[p].name, xf[i].a, xf[i].b);
			}
			continue;
		}
		link[p][q] += xf[i].bytes / ss->bw[p][q];
		link[q][p] += xf[i].bytes / ss->bw[q][p];
	}
	if (c->violations) {
		c->T = INFINITY;
		return;
	}
	for (s = 0; s < ss->n; s++)
		for (i = 0; i < ss->n; i++)
			if (link[s][i] > c->period) {
				c->period = link[s][i];
				snprintf(c->bottleneck, sizeof(c->bottleneck),
					 "WAN %s -> %s", ss->s[s].name,
					 ss->s[i].name);
			}
	if (pb->chain) {
		/* a chain's round trips are suffix sums */
		for (s = k - 1; s >= 0; s--)
			loop[s] = c->F[s] + c->B[s] + (s + 1 < k ?
				xf[s].fwd + xf[s].bwd + loop[s + 1] : 0);
	} else {
		for (s = 0; s < k; s++)
			loop[s] = round_trip(x, c, xf, nx, s, sf, ef, eb, reach);
	}
	c->fill = loop[0];
	for (s = 0; s < k; s++) {
		double L = loop[s];

		if (L / c->inflight[s] > c->period * (1 + 1e-12)) {
			c->period = L / c->inflight[s];
			snprintf(c->bottleneck, sizeof(c->bottleneck),
				 "stage %d round trip over %d in flight", s,
				 c->inflight[s]);
		}
	}
	c->T = c->fill + (M - 1) * c->period + c->allreduce;
}

void plan_sol_to_result(const struct plan_problem *pb,
			const struct plan_sol *x, struct plan_result *r)
{
	struct plan_cost c;
	int s;

	plan_cost_eval(pb, x, &c);
	r->nstages = x->k;
	for (s = 0; s < x->k; s++) {
		r->stage[s].site = x->site[s];
		r->stage[s].gpus = pb->d;
		r->stage[s].first = x->cut[s];
		r->stage[s].count = x->cut[s + 1] - x->cut[s];
	}
	r->iteration = c.T;
	r->predicted = plan_schedule(pb, x, &c);
	r->fill = c.fill;
	r->period = c.period;
	r->steady = (pb->lim.micro_batches - 1) * c.period;
	r->allreduce = c.allreduce;
	snprintf(r->bottleneck, sizeof(r->bottleneck), "%s", c.bottleneck);
}

void plan_result_to_sol(const struct plan_result *r, struct plan_sol *x)
{
	int s;

	x->k = r->nstages;
	for (s = 0; s < r->nstages; s++) {
		x->cut[s] = r->stage[s].first;
		x->site[s] = r->stage[s].site;
	}
	x->cut[x->k] = r->stage[x->k - 1].first + r->stage[x->k - 1].count;
}
