// SPDX-License-Identifier: GPL-2.0
/*
 * start.c - an ECMP-like first routing, tried before the optimiser.
 *
 * On a fabric built for ECMP (a fat-tree) equal splits over IGP shortest
 * paths are already optimal or nearly, and the optimiser, which starts
 * every demand on one path, needs a dozen sweeps of 512 shortest-path
 * trees to spread the flow as evenly again (13 s on fat-tree k=32).  So
 * before it, each demand is given max_paths equal shares on its IGP
 * shortest paths (a dmsc tunnel cannot hold ECMP's hundreds of paths),
 * each share on the shortest path whose busiest link, with the share
 * added, is least busy (ties: the least total utilisation), loads updated
 * share by share.  The caller keeps this start only when it is already
 * within tolerance of the lower bound; otherwise it is undone.
 *
 * Only plain demands take part: one ingress, one egress, no colours, no
 * max_delay; each path must also keep the hop bound and max_sids, or the
 * demand is left to the optimiser.
 */
#include <stdlib.h>
#include <string.h>

#include "mpte_int.h"

struct start {
	struct mpte_ctx *ctx;
	struct mpte_topology rev;	/* arcs reversed: distances to egress */
	struct mpte_sp sp;
	const double *dist;		/* the current tree's: sp's or cached */
	double uniform;			/* every arc's IGP metric if all equal
					 * and positive, else 0 */
	double *bfs_dist;		/* the tree by BFS, when uniform */
	int *nodes, nnodes;		/* a demand's DAG, by distance to egress */
	int *dag_arc, narcs;		/* its arcs, dag_start[u]..dag_end[u] */
	int *dag_start, *dag_end;
	double *igp;			/* out_arc[k]'s IGP metric */
	int *order, norder;		/* reached nodes, nearest egress first */
	double *vol;			/* ECMP: flow through each node */
	double give_up;			/* a link this busy: the start is no good */
	int over;
	unsigned char *in_dag;
	double *bmax, *bsum;		/* best continuation from a node */
	int *bnext;			/* its first arc */
	int *buf, *buf2;
};

#define START_REFINE 1	/* passes re-placing every share */
/* The first pass's trees are kept for the refining pass (computing them
 * again was a tenth of fat-tree k=32's run) up to this many distances
 * (8 bytes each, and 4 for the order): 48 MB */
#define START_TREE_CACHE (4 << 20)

static const double *sort_dist;

static int cmp_asc(const void *x, const void *y)
{
	double a = sort_dist[*(const int *)x], b = sort_dist[*(const int *)y];

	return a < b ? -1 : a > b ? 1 : 0;
}

static const struct mpte_ctx *sort_ctx;

static int cmp_smaller(const void *x, const void *y)
{
	double a = sort_ctx->st[*(const int *)x].admitted;
	double b = sort_ctx->st[*(const int *)y].admitted;

	return a > b ? -1 : a < b ? 1 : *(const int *)x - *(const int *)y;
}

/*
 * Every node's next hops on IGP shortest paths to the tree's egress.  The
 * metrics in CSR order (igp[k]) keep this a scan of small arrays: it runs
 * over every arc once per egress and pass.
 */
static void build_dag(struct start *s)
{
	const struct mpte_topology *t = s->ctx->t;
	const double *dist = s->dist;
	const unsigned char *failed = s->ctx->failed;
	int u, k;

	s->narcs = 0;
	for (u = 0; u < t->nnodes; u++) {
		double du = dist[u];

		s->dag_start[u] = s->narcs;
		if (du != HUGE_VAL_D)
			for (k = t->out_start[u]; k < t->out_start[u + 1]; k++) {
				double dv = dist[t->out_to[k]];

				if (dv != HUGE_VAL_D &&
				    fabs(dv + s->igp[k] - du) <= 1e-9 * (1 + du) &&
				    !failed[t->out_arc[k]])
					s->dag_arc[s->narcs++] = t->out_arc[k];
			}
		s->dag_end[u] = s->narcs;
	}
}

/*
 * Distances to dst over the reversed arcs by breadth-first search, when
 * every metric is the same: what the Dijkstra finds (each distance its
 * parent's plus the metric), without the heap, a tenth of fat-tree k=32's
 * run.
 */
static void bfs_tree(struct start *s, int dst)
{
	const struct mpte_topology *r = &s->rev;
	const unsigned char *failed = s->ctx->failed;
	int *q = s->nodes, head = 0, n = 0, u, k;

	for (u = 0; u < r->nnodes; u++)
		s->bfs_dist[u] = HUGE_VAL_D;
	s->bfs_dist[dst] = 0;
	q[n++] = dst;
	while (head < n) {
		double nd;

		u = q[head++];
		nd = s->bfs_dist[u] + s->uniform;
		for (k = r->out_start[u]; k < r->out_start[u + 1]; k++) {
			int v = r->out_to[k];

			if (s->bfs_dist[v] != HUGE_VAL_D || failed[r->out_arc[k]])
				continue;
			s->bfs_dist[v] = nd;
			q[n++] = v;
		}
	}
	s->dist = s->bfs_dist;
}

/* The reached nodes, nearest the egress first. */
static void build_order(struct start *s)
{
	const struct mpte_topology *t = s->ctx->t;
	const double *dist = s->dist;
	int u;

	s->norder = 0;
	for (u = 0; u < t->nnodes; u++)
		if (dist[u] != HUGE_VAL_D)
			s->order[s->norder++] = u;
	sort_dist = dist;
	qsort(s->order, s->norder, sizeof(int), cmp_asc);
}

/* The nodes of the DAG from src, nearest the egress first. */
static void collect(struct start *s, int src)
{
	const struct mpte_topology *t = s->ctx->t;
	int i, k;

	s->nnodes = 0;
	s->nodes[s->nnodes++] = src;
	s->in_dag[src] = 1;
	for (i = 0; i < s->nnodes; i++) {
		int u = s->nodes[i];

		for (k = s->dag_start[u]; k < s->dag_end[u]; k++) {
			int v = t->arcs[s->dag_arc[k]].to;

			if (!s->in_dag[v]) {
				s->in_dag[v] = 1;
				s->nodes[s->nnodes++] = v;
			}
		}
	}
	/* in the tree's order (by distance to the egress), not sorted
	 * again per demand: a tenth of the start's time on fat-tree k=32 */
	s->nnodes = 0;
	for (i = 0; i < s->norder; i++)
		if (s->in_dag[s->order[i]]) {
			s->in_dag[s->order[i]] = 0;
			s->nodes[s->nnodes++] = s->order[i];
		}
}

/*
 * Exact ties (equally loaded links) go by a hash of arc and demand, not
 * by arc number: by number, every demand into a fat-tree ToR took the same
 * half of its 16 downlinks, and flow could then never move between the
 * halves when re-balanced.
 */
static unsigned int mix(int e, unsigned int salt)
{
	unsigned int h = ((unsigned int)e + 1) * 2654435761u ^ salt * 40503u;

	return e < 0 ? ~0u : (h ^ (h >> 15)) * 2246822519u;
}

/*
 * The DAG path from src to dst whose busiest link, after adding share, is
 * least busy; ties broken by the sum of utilisations.  Returns its arcs.
 */
static int best_share_path(struct start *s, int src, int dst, double share,
			   unsigned int salt)
{
	const struct mpte_ctx *ctx = s->ctx;
	const struct mpte_topology *t = ctx->t;
	int i, k, n = 0, v;

	/* all first: a zero-metric tie may order a successor later */
	for (i = 0; i < s->nnodes; i++)
		s->bmax[s->nodes[i]] = HUGE_VAL_D;
	for (i = 0; i < s->nnodes; i++) {
		int u = s->nodes[i];

		s->bmax[u] = u == dst ? 0 : HUGE_VAL_D;
		s->bsum[u] = 0;
		s->bnext[u] = -1;
		if (u == dst)
			continue;
		for (k = s->dag_start[u]; k < s->dag_end[u]; k++) {
			int e = s->dag_arc[k], w = t->arcs[e].to;
			double ue, m, sum;

			if (s->bmax[w] == HUGE_VAL_D)
				continue;
			ue = (ctx->background[e] + ctx->load[e] + share) /
			     t->arcs[e].capacity;
			m = ue > s->bmax[w] ? ue : s->bmax[w];
			sum = ue + s->bsum[w];
			if (m < s->bmax[u] - 1e-12 ||
			    (m <= s->bmax[u] + 1e-12 &&
			     (sum < s->bsum[u] - 1e-12 ||
			      (sum <= s->bsum[u] + 1e-12 &&
			       mix(e, salt) < mix(s->bnext[u], salt))))) {
				s->bmax[u] = m;
				s->bsum[u] = sum;
				s->bnext[u] = e;
			}
		}
	}
	for (v = src; v != dst; v = t->arcs[s->bnext[v]].to) {
		if (s->bnext[v] < 0 || n == t->nnodes)
			return -1;
		s->buf[n++] = s->bnext[v];
	}
	return n;
}

static int plain(const struct mpte_ctx *ctx, int di)
{
	const struct mpte_demand *d = &ctx->ds->d[di];
	const struct mpte_dstate *st = &ctx->st[di];

	return st->active && !st->npaths && st->admitted > 0 &&
	       d->ningress == 1 && d->negress == 1 &&
	       d->ingress[0] != d->egress[0] && d->max_delay <= 0 &&
	       !d->include_any && !d->include_all && !d->exclude_any;
}

static void add_share(struct mpte_ctx *ctx, int di, const int *arcs, int n,
		      double f)
{
	struct mpte_dstate *st = &ctx->st[di];
	int p, i;

	for (p = 0; p < st->npaths; p++)
		if (st->paths[p].len == n &&
		    !memcmp(st->paths[p].arcs, arcs, n * sizeof(int)))
			break;
	if (p == st->npaths) {
		st->paths[p].arcs = mpte_xcalloc(n, sizeof(int));
		memcpy(st->paths[p].arcs, arcs, n * sizeof(int));
		st->paths[p].len = n;
		st->paths[p].flow = 0;
		st->npaths++;
	}
	st->paths[p].flow += f;
	for (i = 0; i < n; i++)
		ctx->load[arcs[i]] += f;
}

/* Take one share off path p (the path goes when it carries nothing). */
static void remove_share(struct mpte_ctx *ctx, int di, int p, double f)
{
	struct mpte_dstate *st = &ctx->st[di];
	struct mpte_path *pp = &st->paths[p];
	int i;

	for (i = 0; i < pp->len; i++) {
		ctx->load[pp->arcs[i]] -= f;
		if (ctx->load[pp->arcs[i]] < 0)
			ctx->load[pp->arcs[i]] = 0;
	}
	pp->flow -= f;
	if (pp->flow <= 1e-12 * st->admitted) {
		free(pp->arcs);
		st->paths[p] = st->paths[--st->npaths];
	}
}

/*
 * Re-place each share of a demand once: off its path, onto the best one
 * given everything else.  A later demand may have filled a link an
 * earlier one chose; this evens it out (fat-tree k=32: 2.066 -> ...).
 */
static void refine(struct start *s, int di)
{
	struct mpte_ctx *ctx = s->ctx;
	const struct mpte_demand *d = &ctx->ds->d[di];
	struct mpte_dstate *st = &ctx->st[di];
	double share = st->admitted / d->max_paths;
	int k, p, n, limit = mpte_hop_limit(ctx, di);
	int msids = mpte_max_sids(ctx, di);

	collect(s, d->ingress[0]);
	for (k = 0; k < d->max_paths; k++) {
		/* the share on the path with the busiest link goes first */
		int worst = -1;
		double wu = -1;

		for (p = 0; p < st->npaths; p++) {
			double m = 0;
			int i;

			for (i = 0; i < st->paths[p].len; i++) {
				int e = st->paths[p].arcs[i];
				double u = (ctx->background[e] + ctx->load[e]) /
					   ctx->t->arcs[e].capacity;

				if (u > m)
					m = u;
			}
			if (m > wu) {
				wu = m;
				worst = p;
			}
		}
		memcpy(s->buf2, st->paths[worst].arcs,
		       st->paths[worst].len * sizeof(int));
		n = st->paths[worst].len;
		remove_share(ctx, di, worst, share);
		p = best_share_path(s, d->ingress[0], d->egress[0], share, di);
		if (p <= 0 || p > limit ||
		    mpte_segments_over(mpte_sids(ctx), s->buf, p, msids))
			add_share(ctx, di, s->buf2, n, share);
		else
			add_share(ctx, di, s->buf, p, share);
	}
}

/*
 * What ECMP would put on each arc for the demands of this egress (list
 * from first): equal splits at every node, farthest nodes first.  The
 * start is compared with it, so it costs no extra trees.
 */
static void ecmp_split(struct start *s, int first, const int *next,
		       double *ecmp)
{
	const struct mpte_ctx *ctx = s->ctx;
	const struct mpte_topology *t = ctx->t;
	int i, k, di;

	for (i = 0; i < s->norder; i++)
		s->vol[s->order[i]] = 0;
	for (di = first; di >= 0; di = next[di])
		s->vol[ctx->ds->d[di].ingress[0]] += ctx->st[di].admitted;
	for (i = s->norder - 1; i >= 0; i--) {
		int u = s->order[i], nh = s->dag_end[u] - s->dag_start[u];

		if (s->vol[u] <= 0 || !nh)
			continue;
		for (k = s->dag_start[u]; k < s->dag_end[u]; k++) {
			int e = s->dag_arc[k];

			ecmp[e] += s->vol[u] / nh;
			s->vol[t->arcs[e].to] += s->vol[u] / nh;
		}
	}
}

/* One demand's shares; 0 and nothing placed if a path breaks a rule. */
static int place(struct start *s, int di)
{
	struct mpte_ctx *ctx = s->ctx;
	const struct mpte_demand *d = &ctx->ds->d[di];
	struct mpte_dstate *st = &ctx->st[di];
	int cap = d->max_paths > MPTE_WORK_PATHS ? d->max_paths
						 : MPTE_WORK_PATHS;
	int src = d->ingress[0], dst = d->egress[0], k, n, i;
	int limit = mpte_hop_limit(ctx, di), msids = mpte_max_sids(ctx, di);
	double share = st->admitted / d->max_paths;

	if (s->dist[src] == HUGE_VAL_D)
		return 0;
	collect(s, src);
	if (st->pcap < cap) {
		st->paths = mpte_xrealloc(st->paths, cap * sizeof(*st->paths));
		st->pcap = cap;
	}
	for (k = 0; k < d->max_paths; k++) {
		n = best_share_path(s, src, dst, share, di);
		if (n <= 0 || n > limit ||
		    mpte_segments_over(mpte_sids(ctx), s->buf, n, msids)) {
			mpte_drop_paths(ctx, di);
			return 0;
		}
		add_share(ctx, di, s->buf, n, share);
		for (i = 0; i < n; i++) {
			int e = s->buf[i];

			if ((ctx->background[e] + ctx->load[e]) /
			    ctx->t->arcs[e].capacity > s->give_up)
				s->over = 1;
		}
	}
	return 1;
}

int mpte_ecmp_start(struct mpte_ctx *ctx, unsigned char *placed,
		    double give_up, double *ecmp_u)
{
	const struct mpte_topology *t = ctx->t;
	struct start s;
	struct mpte_filter f;
	int a, di, k, dst, nplaced = 0, pass;
	int *by_egress, *next, *order, *slot = NULL, *ocache = NULL;
	int *ncache = NULL, negress = 0;
	double *fixed, *ecmp, *dcache = NULL;

	*ecmp_u = -1;
	for (di = 0; di < ctx->ds->n; di++)
		if (plain(ctx, di))
			break;
	if (di == ctx->ds->n)
		return 0;
	/* the load of the demands not placed here, and ECMP's of those */
	fixed = mpte_xcalloc(t->narcs, sizeof(double));
	memcpy(fixed, ctx->load, t->narcs * sizeof(double));
	ecmp = mpte_xcalloc(t->narcs, sizeof(double));
	memset(&s, 0, sizeof(s));
	s.ctx = ctx;
	s.give_up = give_up;
	s.rev.nnodes = t->nnodes;
	s.rev.narcs = t->narcs;
	s.rev.arcs = mpte_xcalloc(t->narcs, sizeof(*s.rev.arcs));
	for (a = 0; a < t->narcs; a++) {
		s.rev.arcs[a] = t->arcs[a];
		s.rev.arcs[a].from = t->arcs[a].to;
		s.rev.arcs[a].to = t->arcs[a].from;
	}
	mpte_topology_csr(&s.rev);
	mpte_sp_init(&s.sp, t->nnodes);
	s.nodes = mpte_xcalloc(t->nnodes, sizeof(int));
	s.in_dag = mpte_xcalloc(t->nnodes, 1);
	s.dag_arc = mpte_xcalloc(t->narcs, sizeof(int));
	s.dag_start = mpte_xcalloc(t->nnodes, sizeof(int));
	s.dag_end = mpte_xcalloc(t->nnodes, sizeof(int));
	s.igp = mpte_xcalloc(t->narcs, sizeof(double));
	s.order = mpte_xcalloc(t->nnodes, sizeof(int));
	s.vol = mpte_xcalloc(t->nnodes, sizeof(double));
	for (k = 0; k < t->narcs; k++)
		s.igp[k] = t->arcs[t->out_arc[k]].igp_metric;
	s.uniform = t->narcs ? s.igp[0] : 0;
	for (k = 0; k < t->narcs; k++)
		if (s.igp[k] != s.uniform || !(s.uniform > 0))
			s.uniform = 0;
	s.bfs_dist = mpte_xcalloc(t->nnodes, sizeof(double));
	s.bmax = mpte_xcalloc(t->nnodes, sizeof(double));
	s.bsum = mpte_xcalloc(t->nnodes, sizeof(double));
	s.bnext = mpte_xcalloc(t->nnodes, sizeof(int));
	s.buf = mpte_xcalloc(t->nnodes + 1, sizeof(int));
	s.buf2 = mpte_xcalloc(t->nnodes + 1, sizeof(int));
	memset(&f, 0, sizeof(f));
	f.failed = ctx->failed;

	/* demands by egress: one reversed IGP tree serves each list */
	by_egress = mpte_xcalloc(t->nnodes, sizeof(int));
	next = mpte_xcalloc(ctx->ds->n, sizeof(int));
	for (k = 0; k < t->nnodes; k++)
		by_egress[k] = -1;
	/* largest first (LPT): the small ones then even out what is left */
	order = mpte_xcalloc(ctx->ds->n, sizeof(int));
	for (di = 0; di < ctx->ds->n; di++)
		order[di] = di;
	sort_ctx = ctx;
	qsort(order, ctx->ds->n, sizeof(int), cmp_smaller);
	for (k = ctx->ds->n - 1; k >= 0; k--) {
		di = order[k];
		if (plain(ctx, di)) {
			next[di] = by_egress[ctx->ds->d[di].egress[0]];
			by_egress[ctx->ds->d[di].egress[0]] = di;
		}
	}
	free(order);
	for (dst = 0; dst < t->nnodes; dst++)
		negress += by_egress[dst] >= 0;
	if ((long)negress * t->nnodes <= START_TREE_CACHE) {
		slot = mpte_xcalloc(t->nnodes, sizeof(int));
		dcache = mpte_xcalloc((size_t)negress * t->nnodes,
				      sizeof(double));
		ocache = mpte_xcalloc((size_t)negress * t->nnodes, sizeof(int));
		ncache = mpte_xcalloc(negress, sizeof(int));
		for (dst = 0, k = 0; dst < t->nnodes; dst++)
			slot[dst] = by_egress[dst] >= 0 ? k++ : -1;
	}
	for (dst = 0; dst < t->nnodes; dst++) {
		if (by_egress[dst] < 0)
			continue;
		if (s.uniform) {
			bfs_tree(&s, dst);
		} else {
			s.dist = s.sp.dist;
			mpte_dijkstra(&s.rev, &s.sp, &dst, 1, NULL, &f, NULL, 0);
		}
		build_dag(&s);
		build_order(&s);
		if (slot) {
			size_t o = (size_t)slot[dst] * t->nnodes;

			memcpy(dcache + o, s.dist, t->nnodes * sizeof(double));
			memcpy(ocache + o, s.order, s.norder * sizeof(int));
			ncache[slot[dst]] = s.norder;
		}
		ecmp_split(&s, by_egress[dst], next, ecmp);
		for (di = by_egress[dst]; di >= 0 && !s.over; di = next[di])
			if (place(&s, di)) {
				placed[di] = 1;
				nplaced++;
			}
		if (s.over)
			break;
	}
	if (s.over) {
		/* far above the bound (a WAN, where ECMP is 5x the optimum):
		 * give up now, not after every egress's tree */
		for (di = 0; di < ctx->ds->n; di++)
			if (placed[di]) {
				mpte_drop_paths(ctx, di);
				placed[di] = 0;
			}
		nplaced = 0;
	}
	/* ECMP's value, if it routed exactly the demands now active */
	*ecmp_u = -1;
	for (di = 0; di < ctx->ds->n; di++)
		if (ctx->st[di].active && ctx->st[di].admitted > 0 &&
		    !placed[di])
			break;
	if (di == ctx->ds->n && !s.over) {
		*ecmp_u = 0;
		for (a = 0; a < t->narcs; a++) {
			double u = (ctx->background[a] + fixed[a] + ecmp[a]) /
				   t->arcs[a].capacity;

			if (!ctx->failed[a] && u > *ecmp_u)
				*ecmp_u = u;
		}
	}
	for (pass = 0; pass < START_REFINE && nplaced; pass++)
		for (dst = 0; dst < t->nnodes; dst++) {
			if (by_egress[dst] < 0)
				continue;
			if (slot) {
				size_t o = (size_t)slot[dst] * t->nnodes;

				/* no failure in between: the same tree */
				s.dist = dcache + o;
				build_dag(&s);
				s.norder = ncache[slot[dst]];
				memcpy(s.order, ocache + o,
				       s.norder * sizeof(int));
			} else if (s.uniform) {
				bfs_tree(&s, dst);
				build_dag(&s);
				build_order(&s);
			} else {
				s.dist = s.sp.dist;
				mpte_dijkstra(&s.rev, &s.sp, &dst, 1, NULL, &f,
					      NULL, 0);
				build_dag(&s);
				build_order(&s);
			}
			for (di = by_egress[dst]; di >= 0; di = next[di])
				if (placed[di])
					refine(&s, di);
		}
	for (a = 0; a < t->narcs; a++)
		mpte_arc_len_update(ctx, a);

	free(s.bfs_dist);
	free(slot);
	free(dcache);
	free(ocache);
	free(ncache);
	free(by_egress);
	free(next);
	free(fixed);
	free(ecmp);
	free(s.nodes);
	free(s.in_dag);
	free(s.dag_arc);
	free(s.dag_start);
	free(s.dag_end);
	free(s.igp);
	free(s.order);
	free(s.vol);
	free(s.bmax);
	free(s.bsum);
	free(s.bnext);
	free(s.buf);
	free(s.buf2);
	mpte_sp_fini(&s.sp);
	free(s.rev.arcs);
	free(s.rev.out_start);
	free(s.rev.out_arc);
	free(s.rev.out_to);
	return nplaced;
}
