// SPDX-License-Identifier: GPL-2.0
/*
 * dag.c - from a demand's weighted paths to what MPTE signals: a DAG of
 * junctions with per-next-hop load-balancing weights, and at most
 * max_paths weighted paths that realise exactly the same link flows.
 *
 * The optimiser's paths are each simple, but together they may form a
 * cycle (one path crossing u->v, another v->u); forwarding state per
 * junction must be acyclic, so such flow is cancelled (it only ever adds
 * load) and the rest decomposed again.
 */
#include <stdlib.h>
#include <string.h>

#include "mpte_int.h"
#include "jw.h"

struct arcflow {
	int arc;
	double flow;
};

/* Sum the demand's path flows per arc (small: paths x hops entries). */
static int collect(const struct mpte_ctx *ctx, const struct mpte_dstate *s,
		   struct arcflow **out)
{
	struct arcflow *af;
	int n = 0, cap = 0, p, i, k;

	(void)ctx;
	for (p = 0; p < s->npaths; p++)
		cap += s->paths[p].len;
	af = mpte_xcalloc(cap, sizeof(*af));
	for (p = 0; p < s->npaths; p++)
		for (i = 0; i < s->paths[p].len; i++) {
			int a = s->paths[p].arcs[i];

			for (k = 0; k < n; k++)
				if (af[k].arc == a)
					break;
			if (k == n) {
				af[n].arc = a;
				af[n++].flow = 0;
			}
			af[k].flow += s->paths[p].flow;
		}
	*out = af;
	return n;
}

/*
 * Find a cycle among arcs with flow (DFS over the tiny subgraph) and put
 * its arc indices (into af) in cyc.  Returns its length, 0 if acyclic.
 */
static int find_cycle(const struct mpte_topology *t, const struct arcflow *af,
		      int n, int *cyc)
{
	int *state = mpte_xcalloc(n, sizeof(int));	/* per arc entry */
	int *stack = mpte_xcalloc(n + 1, sizeof(int));
	int start, len = 0;

	/* DFS over arcs: arc e is followed by arcs leaving its head */
	for (start = 0; start < n && !len; start++) {
		int depth = 0, i;

		if (state[start] || af[start].flow <= 0)
			continue;
		stack[depth++] = start;
		state[start] = 1;
		while (depth && !len) {
			int e = stack[depth - 1], next = -1;

			for (i = 0; i < n; i++) {
				if (af[i].flow <= 0 ||
				    t->arcs[af[i].arc].from != t->arcs[af[e].arc].to)
					continue;
				if (state[i] == 1) {
					/* back edge: the cycle is i..e */
					int j = depth - 1;

					while (stack[j] != i)
						j--;
					for (; j < depth; j++)
						cyc[len++] = stack[j];
					break;
				}
				if (state[i] == 0) {
					next = i;
					break;
				}
			}
			if (len)
				break;
			if (next >= 0) {
				state[next] = 1;
				stack[depth++] = next;
			} else {
				state[e] = 2;
				depth--;
			}
		}
	}
	free(state);
	free(stack);
	return len;
}

static int is_in(const int *set, int n, int v)
{
	int i;

	for (i = 0; i < n; i++)
		if (set[i] == v)
			return 1;
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Index of node id v in the sorted array ids[0..m), which holds it. */
static int node_index(const int *ids, int m, int v)
{
	int lo = 0, hi = m - 1;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (ids[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The widest path in acyclic arc flows: from an ingress to the first
 * egress it meets, over arcs with flow above floor, with the largest
 * bottleneck.  One pass over the nodes in topological order (Kahn): W[v]
 * is the widest bottleneck of a path from an ingress to v (an ingress
 * itself: unbounded), pred[v] the arc (index into af) it came by.  No
 * path goes on from an egress.  The path's arcs go into buf; returns its
 * length, 0 if no ingress reaches an egress.  O(n log n) for n arcs.
 */
static int widest(const struct mpte_topology *t, const struct mpte_demand *d,
		  const struct arcflow *af, int n, double floor, int *buf,
		  double *bott)
{
	int *ids = mpte_xcalloc(2 * n + 1, sizeof(int));
	int *start, *out, *indeg, *queue, *pred, *pos;
	int m = 0, i, k, qh = 0, qt = 0, end = -1, len = 0, v;
	double *W;

	for (i = 0; i < n; i++)
		if (af[i].flow > floor) {
			ids[m++] = t->arcs[af[i].arc].from;
			ids[m++] = t->arcs[af[i].arc].to;
		}
	if (!m) {
		free(ids);
		return 0;
	}
	qsort(ids, m, sizeof(int), cmp_int);
	for (i = k = 0; i < m; i++)
		if (!k || ids[i] != ids[k - 1])
			ids[k++] = ids[i];
	m = k;
	start = mpte_xcalloc(m + 1, sizeof(int));
	pos = mpte_xcalloc(m, sizeof(int));
	out = mpte_xcalloc(n, sizeof(int));
	indeg = mpte_xcalloc(m, sizeof(int));
	queue = mpte_xcalloc(m, sizeof(int));
	pred = mpte_xcalloc(m, sizeof(int));
	W = mpte_xcalloc(m, sizeof(double));
	/* out-arcs by tail (CSR), in-degrees by head */
	for (i = 0; i < n; i++)
		if (af[i].flow > floor) {
			start[node_index(ids, m, t->arcs[af[i].arc].from) + 1]++;
			indeg[node_index(ids, m, t->arcs[af[i].arc].to)]++;
		}
	for (k = 0; k < m; k++)
		start[k + 1] += start[k];
	for (i = 0; i < n; i++)
		if (af[i].flow > floor) {
			k = node_index(ids, m, t->arcs[af[i].arc].from);
			out[start[k] + pos[k]++] = i;
		}
	for (k = 0; k < m; k++) {
		pred[k] = -1;
		W[k] = is_in(d->ingress, d->ningress, ids[k]) ? HUGE_VAL_D : 0;
		if (!indeg[k])
			queue[qt++] = k;
	}
	while (qh < qt) {
		int u = queue[qh++];
		/* a path ends at the first egress it meets */
		int stop = W[u] <= 0 ||
			   (W[u] < HUGE_VAL_D &&
			    is_in(d->egress, d->negress, ids[u]));

		for (k = start[u]; k < start[u + 1]; k++) {
			int a = out[k];
			int h = node_index(ids, m, t->arcs[af[a].arc].to);
			double b = W[u] < af[a].flow ? W[u] : af[a].flow;

			if (!stop && b > W[h]) {
				W[h] = b;
				pred[h] = a;
			}
			if (!--indeg[h])
				queue[qt++] = h;
		}
	}
	for (k = 0; k < m; k++)
		if (W[k] > 0 && W[k] < HUGE_VAL_D && pred[k] >= 0 &&
		    is_in(d->egress, d->negress, ids[k]) &&
		    (end < 0 || W[k] > W[end]))
			end = k;
	if (end >= 0) {
		*bott = W[end];
		for (v = end; pred[v] >= 0 && len <= n;
		     v = node_index(ids, m, t->arcs[af[pred[v]].arc].from))
			len++;
		if (len > n)	/* not expected: the flows are acyclic */
			len = 0;
		for (v = end, k = len; k > 0;
		     v = node_index(ids, m, t->arcs[af[pred[v]].arc].from))
			buf[--k] = pred[v];
	}
	free(ids);
	free(start);
	free(pos);
	free(out);
	free(indeg);
	free(queue);
	free(pred);
	free(W);
	return len;
}

/*
 * Re-derive paths from acyclic arc flows, the widest first (fewer paths
 * than following the fattest arc: the cap is cut less often), from an
 * ingress until an egress.  Each path is spliced from pieces of the old
 * ones, so it meets arc constraints (colours) but not necessarily a delay
 * bound: only used for demands without one.
 */
static int decompose(struct mpte_ctx *ctx, int di, struct arcflow *af, int n)
{
	const struct mpte_topology *t = ctx->t;
	const struct mpte_demand *d = &ctx->ds->d[di];
	struct mpte_dstate *s = &ctx->st[di];
	struct mpte_path *np = NULL;
	int nnp = 0, cap = 0, p, *buf = mpte_xcalloc(n + 1, sizeof(int));
	double floor = 1e-9 * s->admitted;

	for (;;) {
		double bott;
		int len = widest(t, d, af, n, floor, buf, &bott), i;

		if (!len)
			break;	/* only rounding dust is left */
		if (nnp == cap) {
			cap = cap ? 2 * cap : MPTE_WORK_PATHS;
			np = mpte_xrealloc(np, cap * sizeof(*np));
		}
		np[nnp].arcs = mpte_xcalloc(len, sizeof(int));
		np[nnp].len = len;
		np[nnp].flow = bott;
		for (i = 0; i < len; i++) {
			np[nnp].arcs[i] = af[buf[i]].arc;
			af[buf[i]].flow -= bott;
		}
		nnp++;
	}
	free(buf);
	/* a spliced path may be longer than any it came from: over the
	 * demand's hop limit, keep the old paths (the caller then drops the
	 * thinnest one on the cycle instead) */
	for (p = 0; p < nnp && np[p].len <= mpte_hop_limit(ctx, di); p++)
		;
	if (p < nnp) {
		for (p = 0; p < nnp; p++)
			free(np[p].arcs);
		free(np);
		return 0;
	}
	if (!nnp)
		return 0;	/* keep what we had rather than nothing */
	for (p = 0; p < s->npaths; p++)
		free(s->paths[p].arcs);
	free(s->paths);
	s->paths = np;
	s->npaths = nnp;
	s->pcap = cap;
	return 1;
}

static int cmp_flow_desc(const void *x, const void *y)
{
	const struct mpte_path *a = x, *b = y;

	if (a->flow != b->flow)
		return a->flow < b->flow ? 1 : -1;
	return 0;
}

/* Does path pp use an arc of the cycle? */
static int on_cycle(const struct mpte_path *pp, const struct arcflow *af,
		    const int *cyc, int len)
{
	int i, k;

	for (i = 0; i < pp->len; i++)
		for (k = 0; k < len; k++)
			if (pp->arcs[i] == af[cyc[k]].arc)
				return 1;
	return 0;
}

/*
 * Paths whose compressed segment list needs more than max_sids SIDs cannot
 * be installed: drop them before the cut to max_paths, so that the paths
 * kept are the fattest installable ones; their flow spreads over the rest
 * (re-balanced and, if a link overflows, re-admitted by mpte_finish).  If
 * none is left, all the flow goes on a path that fits, or if there is none
 * the demand is out, with the reason.  Returns 1 if it is;
 * *dropped says whether any path went.
 */
static int drop_long_lists(struct mpte_ctx *ctx, int di, int *dropped)
{
	struct mpte_dstate *s = &ctx->st[di];
	int m = mpte_max_sids(ctx, di), p, n, shortest = 0;

	for (p = 0; p < s->npaths;) {
		n = mpte_segments_over(mpte_sids(ctx), s->paths[p].arcs,
				       s->paths[p].len, m);
		if (!n) {
			p++;
			continue;
		}
		if (!shortest || n < shortest)
			shortest = n;
		free(s->paths[p].arcs);
		s->paths[p] = s->paths[--s->npaths];
		*dropped = 1;
	}
	if (s->npaths)
		return 0;
	/* none left: one that fits, if there is one (sidpath.c).  A
	 * recovery changes IGP routes, and with them what a list needs:
	 * every path a demand held could need a SID more afterwards */
	if (*dropped) {
		int *q = mpte_xcalloc(ctx->t->nnodes, sizeof(int));

		n = mpte_sid_path(ctx, di, NULL, q, ctx->t->nnodes);
		if (n > 0) {
			s->paths[0].arcs = q;
			s->paths[0].len = n;
			s->paths[0].flow = s->admitted;
			s->npaths = 1;
			return 0;
		}
		free(q);
	}
	free(s->paths);
	s->paths = NULL;
	s->pcap = 0;
	s->active = 0;
	s->touched = 1;
	s->status = s->is_new ? MPTE_REJECTED : MPTE_PREEMPTED;
	mpte_set_reason(s, "no installable path: the shortest segment list found needs %d SIDs, max_sids is %d",
			shortest, m);
	return 1;
}

/*
 * Make the demand's paths final: acyclic union, at most max_paths, no
 * negligible paths, flows summing to the admitted bandwidth.  Flow around
 * a cycle is cancelled and the rest decomposed again; for a demand with a
 * delay bound that could splice a path over the bound, so there the
 * thinnest path through the cycle is dropped instead (its flow spreads
 * over the others).  A path whose segment list would not fit in max_sids
 * goes too (the data plane could not install it).  Returns 1 if the flows
 * changed; loads are recomputed by the caller.
 */
int mpte_finalise_paths(struct mpte_ctx *ctx, int di)
{
	const struct mpte_demand *d = &ctx->ds->d[di];
	struct mpte_dstate *s = &ctx->st[di];
	struct arcflow *af;
	int n, *cyc, len, p, changed = 0, dropped = 0;
	double sum = 0;

	for (;;) {
		int victim = -1, k;
		double m = HUGE_VAL_D;

		n = collect(ctx, s, &af);
		cyc = mpte_xcalloc(n + 1, sizeof(int));
		len = find_cycle(ctx->t, af, n, cyc);
		if (len && d->max_delay <= 0) {
			/* cancel the cycle's flow (it only adds load), then
			 * read paths off what is left; if that splices a path
			 * over the hop limit, fall through to dropping one */
			struct arcflow *cp = mpte_xcalloc(n, sizeof(*cp));
			int *c2 = mpte_xcalloc(n + 1, sizeof(int)), l2 = len;

			memcpy(cp, af, n * sizeof(*cp));
			memcpy(c2, cyc, len * sizeof(int));
			do {
				for (k = 0, m = HUGE_VAL_D; k < l2; k++)
					if (cp[c2[k]].flow < m)
						m = cp[c2[k]].flow;
				for (k = 0; k < l2; k++)
					cp[c2[k]].flow -= m;
			} while ((l2 = find_cycle(ctx->t, cp, n, c2)) > 0);
			if (decompose(ctx, di, cp, n)) {
				changed = 1;
				len = 0;
			}
			free(cp);
			free(c2);
		}
		for (p = 0; len && p < s->npaths; p++)
			if (on_cycle(&s->paths[p], af, cyc, len) &&
			    (victim < 0 || s->paths[p].flow < s->paths[victim].flow))
				victim = p;
		free(cyc);
		free(af);
		if (!len || victim < 0 || s->npaths < 2)
			break;
		/* delay- or hop-bound: drop the thinnest path on the cycle */
		free(s->paths[victim].arcs);
		s->paths[victim] = s->paths[--s->npaths];
		changed = 1;
	}

	if (drop_long_lists(ctx, di, &dropped))
		return 1;
	/* the flow of the paths that went is spread below: a re-balance
	 * must follow (mpte_finish polishes what changed) */
	if (dropped)
		changed = 1;
	qsort(s->paths, s->npaths, sizeof(*s->paths), cmp_flow_desc);
	while (s->npaths > 1 &&
	       ((s->npaths > d->max_paths && !ctx->defer_cut) ||
		s->paths[s->npaths - 1].flow < 1e-6 * s->admitted)) {
		s->npaths--;
		free(s->paths[s->npaths].arcs);
		changed = 1;
	}
	for (p = 0; p < s->npaths; p++)
		sum += s->paths[p].flow;
	/* every path that carried flow went over max_sids and those left
	 * carried none (the loop above left one of them): it takes it all,
	 * or the demand stayed admitted carrying nothing (a reviewer's
	 * rich instances, 19 of 180) */
	if (sum <= 0 && s->npaths) {
		s->paths[0].flow = s->admitted;
		changed = 1;
	} else if (sum > 0 && fabs(sum - s->admitted) > 1e-12 * s->admitted) {
		for (p = 0; p < s->npaths; p++)
			s->paths[p].flow *= s->admitted / sum;
	}
	return changed;
}

/* The junctions of the demand's DAG with their next hops and weights, as
 * the value of the key the caller wrote. */
void mpte_dag_write(struct jw *w, const struct mpte_ctx *ctx, int di)
{
	const struct mpte_topology *t = ctx->t;
	const struct mpte_demand *d = &ctx->ds->d[di];
	const struct mpte_dstate *s = &ctx->st[di];
	struct arcflow *af;
	int n, i, k, *nodes, nn = 0;

	n = collect(ctx, s, &af);
	nodes = mpte_xcalloc(2 * n + 1, sizeof(int));
	for (i = 0; i < n; i++) {
		int u = t->arcs[af[i].arc].from, v = t->arcs[af[i].arc].to;

		if (!is_in(nodes, nn, u))
			nodes[nn++] = u;
		if (!is_in(nodes, nn, v))
			nodes[nn++] = v;
	}
	jw_obj(w);
	jw_key(w, "junctions");
	jw_arr(w);
	for (k = 0; k < nn; k++) {
		int u = nodes[k];
		double out = 0;

		for (i = 0; i < n; i++)
			if (t->arcs[af[i].arc].from == u)
				out += af[i].flow;
		jw_obj(w);
		jw_key(w, "node");
		jw_str(w, t->nodes[u].name);
		jw_key(w, "role");
		jw_str(w, is_in(d->ingress, d->ningress, u) ? "ingress" :
			  is_in(d->egress, d->negress, u) ? "egress" : "transit");
		jw_key(w, "next_hops");
		jw_arr(w);
		for (i = 0; i < n; i++) {
			const struct mpte_arc *a = &t->arcs[af[i].arc];

			if (a->from != u)
				continue;
			jw_obj(w);
			jw_key(w, "node");
			jw_str(w, t->nodes[a->to].name);
			jw_key(w, "link");
			jw_str(w, t->links[a->link].id);
			jw_key(w, "bandwidth");
			jw_dbl(w, af[i].flow);
			jw_key(w, "weight");
			jw_dbl(w, out > 0 ? af[i].flow / out : 0);
			jw_end_obj(w);
		}
		jw_end_arr(w);
		jw_end_obj(w);
	}
	jw_end_arr(w);
	jw_key(w, "links");
	jw_arr(w);
	for (i = 0; i < n; i++) {
		jw_obj(w);
		mpte_jw_link(w, t, af[i].arc);
		jw_key(w, "bandwidth");
		jw_dbl(w, af[i].flow);
		jw_end_obj(w);
	}
	jw_end_arr(w);
	jw_end_obj(w);
	free(nodes);
	free(af);
}
