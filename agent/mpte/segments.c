// SPDX-License-Identifier: GPL-2.0
/*
 * segments.c - turn a path into the shortest SRv6 segment list that still
 * pins it: a node SID sends the packet along IGP shortest paths, so a
 * stretch of the path needs no SID of its own when it is the *unique*
 * IGP shortest path between its ends (a tie would let ECMP spray the
 * packet off our path).  Greedy from the head: extend the stretch while it
 * stays the unique shortest path, then name its end.  A single hop that
 * IGP would not take (worse metric, or a tie) needs the link's adjacency
 * SID (End.X); without one we fall back to the far node's SID and mark the
 * list inexact.
 *
 * IGP routing ignores TE colours but not failures, so the shortest-path
 * trees are computed over all working arcs.  Trees are cached by head
 * node, one slot per node, made when first asked for, while all of them
 * fit in SID_CACHE_BYTES (10,000 nodes: 900 MB at most; sidpath.c adds 4
 * bytes a node to the trees it reads).  A cache of
 * fewer slots than heads thrashed: on a 10,000-node WAN with 4,096 slots
 * the misses made a full Dijkstra per segment, nearly all of the solve's
 * time.  Past that size a segment's search grows from its head only as far
 * as the segment reaches (local_*): no memory, but on a WAN the segments
 * are long and the ball is a third of the graph.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <linux/dmsc.h>

#include "mpte_int.h"

_Static_assert(MPTE_DEFAULT_MAX_SIDS == DMSC_MAX_SEGS,
	       "the solver's default SID limit is the data plane's");

/* whole IGP metrics up to this: the trees' search keeps a bucket per
 * distance (dial()) */
#define SID_DIAL_MAX	65535
/* a tree is 9 bytes a node; one per head node while they fit in this */
#define SID_CACHE_BYTES (1UL << 30)
#define SID_LOCAL_SEARCHES 8	/* searches kept, the least recently used reused */

/* One head's search, grown only as far as asked (large topologies). */
struct sid_local {
	int root;		/* -1: none */
	unsigned long used;	/* when last asked, for the LRU */
	struct mpte_sp sp;
	unsigned char *count;	/* shortest paths to a settled node, <= 2 */
};

struct sid_tree {
	int root;		/* -1: empty slot */
	double *dist;
	unsigned char *count;	/* number of shortest paths, capped at 2 */
	int *par;		/* sidpath.c's: the arc into a node on its
				 * unique route, -1 none; made on first ask */
	bool par_ok;
};

struct mpte_sid_cache {
	const struct mpte_ctx *ctx;
	struct sid_tree *slot;
	int nslots;
	struct mpte_sp sp;
	int *order;
	double *igp;		/* IGP metric in CSR order (out_arc[k]'s) */
	double *igp_arc;	/* and by arc: the trees' lengths, read from
				 * one array, not from the arcs' records */
	int int_max;		/* the largest IGP metric, if all are whole
				 * numbers up to SID_DIAL_MAX; else -1 */
	bool int_pos;		/* and none of them 0 */
	double uniform;		/* every arc's IGP metric, if all are equal
				 * and positive; else 0 */
	/* large topologies: searches from a few heads, grown on demand;
	 * a group's members share their ingress, the first segment's head */
	bool local;
	struct sid_local loc[SID_LOCAL_SEARCHES];
	unsigned long clock;
	/* heads whose tree a recovery dropped since the last
	 * mpte_sid_cache_settle() (all of them with local searches): only
	 * a list with one of them as a head can have grown (a failure
	 * only lengthens other routes: a unique shortest one stays so) */
	unsigned char *moved;
	bool all_moved;
};

static int near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (1 + fabs(a) + fabs(b));
}

/* One more way of @add routes to @v: its count, saturated at 2. */
static void count_more(unsigned char *count, int v, int add)
{
	count[v] = count[v] + add >= 2 ? 2 : count[v] + add;
}

struct mpte_sid_cache *mpte_sid_cache_new(const struct mpte_ctx *ctx)
{
	struct mpte_sid_cache *c = mpte_xcalloc(1, sizeof(*c));
	int i;

	c->ctx = ctx;
	c->local = (double)ctx->t->nnodes * ctx->t->nnodes *
		   (sizeof(double) + 1) > SID_CACHE_BYTES;
	c->nslots = c->local ? 1 : ctx->t->nnodes;
	c->slot = mpte_xcalloc(c->nslots, sizeof(*c->slot));
	for (i = 0; i < c->nslots; i++)
		c->slot[i].root = -1;
	mpte_sp_init(&c->sp, ctx->t->nnodes);
	c->order = mpte_xcalloc(ctx->t->nnodes, sizeof(int));
	c->moved = mpte_xcalloc(ctx->t->nnodes, 1);
	c->igp = mpte_xcalloc(ctx->t->narcs, sizeof(double));
	c->igp_arc = mpte_xcalloc(ctx->t->narcs, sizeof(double));
	for (i = 0; i < ctx->t->narcs; i++) {
		c->igp[i] = ctx->t->arcs[ctx->t->out_arc[i]].igp_metric;
		c->igp_arc[i] = ctx->t->arcs[i].igp_metric;
	}
	c->int_max = 0;
	for (i = 0; i < ctx->t->narcs; i++) {
		double w = c->igp[i];

		if (w != floor(w) || w < 0 || w > SID_DIAL_MAX)
			c->int_max = -1;
		else if (c->int_max >= 0 && w > c->int_max)
			c->int_max = (int)w;
	}
	c->int_pos = c->int_max >= 0;
	for (i = 0; i < ctx->t->narcs; i++)
		if (!(c->igp[i] > 0))
			c->int_pos = false;
	c->uniform = ctx->t->narcs ? c->igp[0] : 0;
	for (i = 0; i < ctx->t->narcs; i++)
		if (c->igp[i] != c->uniform || !(c->uniform > 0))
			c->uniform = 0;
	for (i = 0; i < SID_LOCAL_SEARCHES; i++) {
		c->loc[i].root = -1;
		mpte_sp_init(&c->loc[i].sp, ctx->t->nnodes);
		c->loc[i].count = mpte_xcalloc(ctx->t->nnodes, 1);
	}
	return c;
}

/* A failure or a recovery changes IGP distances: forget every search. */
static void local_forget(struct mpte_sid_cache *c)
{
	int i;

	for (i = 0; i < SID_LOCAL_SEARCHES; i++)
		c->loc[i].root = -1;
}

/* Tests compare the two ways on the same paths: they must agree. */
void mpte_sid_cache_set_local(struct mpte_sid_cache *c, bool local)
{
	local_forget(c);
	c->local = local;
}

/*
 * Arc a has failed: forget only the trees it was on (a shortest path from
 * the root used it).  Any other tree keeps its distances and its counts
 * of shortest paths, so it stays right; rebuilding every tree after each
 * failure was a sixth of an incremental re-plan on wan1000.
 */
void mpte_sid_cache_fail_arc(struct mpte_sid_cache *c, int a)
{
	const struct mpte_arc *arc = &c->ctx->t->arcs[a];
	int i;

	local_forget(c);
	for (i = 0; i < c->nslots; i++) {
		struct sid_tree *s = &c->slot[i];

		if (s->root < 0 || s->dist[arc->from] == HUGE_VAL_D)
			continue;
		if (near(s->dist[arc->from] + arc->igp_metric,
			 s->dist[arc->to]))
			s->root = -1;
	}
}

/*
 * Arc a works again: a tree where it offers a path as short as the known
 * one (or shorter) has changed distances or counts; the others have not.
 */
void mpte_sid_cache_recover_arc(struct mpte_sid_cache *c, int a)
{
	const struct mpte_arc *arc = &c->ctx->t->arcs[a];
	int i;

	local_forget(c);
	for (i = 0; i < c->nslots; i++) {
		struct sid_tree *s = &c->slot[i];

		if (s->root < 0 || s->dist[arc->from] == HUGE_VAL_D)
			continue;
		if (s->dist[arc->from] + arc->igp_metric <= s->dist[arc->to] ||
		    near(s->dist[arc->from] + arc->igp_metric,
			 s->dist[arc->to])) {
			c->moved[s->root] = 1;
			s->root = -1;
		}
	}
	c->all_moved |= c->local;
}

bool mpte_sid_head_moved(const struct mpte_sid_cache *c, int v)
{
	return c->all_moved || c->moved[v];
}

void mpte_sid_cache_settle(struct mpte_sid_cache *c)
{
	memset(c->moved, 0, c->ctx->t->nnodes);
	c->all_moved = false;
}

void mpte_sid_cache_free(struct mpte_sid_cache *c)
{
	int i;

	if (!c)
		return;
	for (i = 0; i < c->nslots; i++) {
		free(c->slot[i].dist);
		free(c->slot[i].par);
		free(c->slot[i].count);
	}
	free(c->slot);
	mpte_sp_fini(&c->sp);
	free(c->order);
	free(c->moved);
	free(c->igp);
	free(c->igp_arc);
	for (i = 0; i < SID_LOCAL_SEARCHES; i++) {
		mpte_sp_fini(&c->loc[i].sp);
		free(c->loc[i].count);
	}
	free(c);
}


/*
 * With one metric on every arc (a fat-tree), the tree is a breadth-first
 * search: the same distances (each is its parent's plus the metric, as
 * the Dijkstra adds them) in an order of non-decreasing distance, without
 * the heap.  The Dijkstra was a ninth of fat-tree k=32's whole run, in
 * the output's segment lists.  Fills s->dist, order and the route
 * counts (a node's is final when it is taken from the queue: every node
 * one hop nearer came out before it); returns the number of nodes
 * reached.
 */
static int bfs(struct mpte_sid_cache *c, struct sid_tree *s, int root,
	       int *order)
{
	const struct mpte_topology *t = c->ctx->t;
	const unsigned char *failed = c->ctx->failed;
	int head = 0, n = 0, i;

	for (i = 0; i < t->nnodes; i++)
		s->dist[i] = HUGE_VAL_D;
	s->dist[root] = 0;
	s->count[root] = 1;
	order[n++] = root;
	while (head < n) {
		int u = order[head++], k;
		double nd = s->dist[u] + c->uniform;

		for (k = t->out_start[u]; k < t->out_start[u + 1]; k++) {
			int v = t->out_to[k];

			if (failed[t->out_arc[k]])
				continue;
			if (s->dist[v] != HUGE_VAL_D) {
				/* another route at v's level */
				if (s->dist[v] == nd)
					count_more(s->count, v, s->count[u]);
				continue;
			}
			s->dist[v] = nd;
			s->count[v] = s->count[u];
			order[n++] = v;
		}
	}
	return n;
}

/*
 * With whole IGP metrics up to int_max (IS-IS and OSPF metrics are
 * integers), Dial's search: a bucket per distance, int_max + 1 of them
 * used round, since every distance waiting lies within int_max of the
 * one being settled; a node moves between buckets in O(1) (a doubly
 * linked list), so there is no heap.  The distances are sums of whole
 * numbers, exact, so the same as the Dijkstra's to the bit; nodes come
 * out in an order of non-decreasing distance, which is all the counting
 * in tree_build() needs.  Fills s->dist and order; returns the number of
 * nodes reached.  With @counts (no metric is 0) the route counts too, as
 * the arcs are relaxed: a node's nearer neighbours all came out of their
 * buckets before it does, so its count is final when it passes it on,
 * and the walk over every arc again is saved (a fifth of the trees' time
 * on the 10,000-node WAN).
 */
static int dial(struct mpte_sid_cache *c, struct sid_tree *s, int root,
		int *order, bool counts)
{
	const struct mpte_topology *t = c->ctx->t;
	const unsigned char *failed = c->ctx->failed;
	int nb = c->int_max + 1, left = 1, n = 0, i;
	int *head = mpte_xcalloc(nb, sizeof(int));
	int *next = mpte_xcalloc(2 * (size_t)t->nnodes, sizeof(int));
	int *prev = next + t->nnodes;
	long cur = 0;

	for (i = 0; i < nb; i++)
		head[i] = -1;
	for (i = 0; i < t->nnodes; i++)
		s->dist[i] = HUGE_VAL_D;
	s->dist[root] = 0;
	if (counts)
		s->count[root] = 1;
	head[0] = root;
	next[root] = prev[root] = -1;
	while (left) {
		int b = (int)(cur % nb), u, k;

		if (head[b] < 0) {
			cur++;
			continue;
		}
		u = head[b];
		head[b] = next[u];
		if (next[u] >= 0)
			prev[next[u]] = -1;
		left--;
		order[n++] = u;
		for (k = t->out_start[u]; k < t->out_start[u + 1]; k++) {
			int v = t->out_to[k], bv;
			double nd = (double)cur + c->igp[k];

			if (failed[t->out_arc[k]])
				continue;
			if (counts && nd == s->dist[v])
				count_more(s->count, v, s->count[u]);
			if (!(nd < s->dist[v]))
				continue;
			if (counts)
				s->count[v] = s->count[u];
			if (s->dist[v] == HUGE_VAL_D) {
				left++;
			} else {	/* out of its bucket */
				if (prev[v] >= 0)
					next[prev[v]] = next[v];
				else
					head[(long)s->dist[v] % nb] = next[v];
				if (next[v] >= 0)
					prev[next[v]] = prev[v];
			}
			s->dist[v] = nd;
			bv = (int)((long)nd % nb);
			prev[v] = -1;
			next[v] = head[bv];
			if (head[bv] >= 0)
				prev[head[bv]] = v;
			head[bv] = v;
		}
	}
	free(head);
	free(next);
	return n;
}

/*
 * Counting the IGP's shortest routes, capped at 2.  What is counted are
 * the walks from the root over tight arcs: the ones an ECMP router can
 * forward a packet along, since a router at distance d may hand it to
 * any neighbour the arc to which is tight.  A node passes its count on
 * along its tight arcs when it is settled.  A zero-metric arc can raise
 * the count of a node at the same distance that has passed its count on
 * already; the raise is then passed on from it, and on from there,
 * until it meets nodes that have not passed theirs on yet or are at 2.
 * A count only grows and stops at 2, so this ends.
 *
 * A zero-metric cycle (a zero-metric link is one, both ways, and so is
 * one back to the root) leaves every node on it and after it at 2: the
 * routers on it are each other's next hops and a packet can loop there.
 * For a packet addressed to a node on the cycle itself that is one too
 * many (it stops at the node the first time): the list gets a SID, or
 * is called not exact, that it did not need; it is never called pinned
 * where the IGP can take another way.  Without zero-metric arcs nothing
 * is raised after it was passed on, and the counts are the paths'.
 */
#define COUNT_MASK	0x03
#define PASSED		0x80	/* in a sid_tree's count while it is built */

struct count_walk {
	const struct mpte_sid_cache *c;
	const double *dist;
	unsigned char *count;		/* & COUNT_MASK */
	const unsigned char *passed;	/* & bit: has passed its count on */
	unsigned char bit;
	int *stack, depth;		/* (node, raise) pairs, made on need */
};

static void count_walk_init(struct count_walk *w, const struct mpte_sid_cache *c,
			    const double *dist, unsigned char *count,
			    const unsigned char *passed, unsigned char bit)
{
	*w = (struct count_walk){ .c = c, .dist = dist, .count = count,
				  .passed = passed, .bit = bit };
}

static void count_walk_done(struct count_walk *w)
{
	free(w->stack);
	w->stack = NULL;
}

/* v gets @add more paths, and so does every node its count went to */
static void count_add(struct count_walk *w, int v, int add)
{
	const struct mpte_topology *t = w->c->ctx->t;
	const unsigned char *failed = w->c->ctx->failed;

	for (;;) {
		int old = w->count[v] & COUNT_MASK;
		int now = old + add > 2 ? 2 : old + add;

		w->count[v] = (w->count[v] & ~COUNT_MASK) | now;
		if (now > old && (w->passed[v] & w->bit)) {
			int k;

			/* a node is raised at most twice after it passed
			 * its count on, and pushes its arcs each time: at
			 * most 2 * narcs pairs */
			if (!w->stack)
				w->stack = mpte_xcalloc(4 * (size_t)t->narcs,
							sizeof(int));
			for (k = t->out_start[v]; k < t->out_start[v + 1]; k++) {
				int x = t->out_to[k];

				if (failed[t->out_arc[k]] ||
				    w->dist[x] == HUGE_VAL_D ||
				    !near(w->dist[v] + w->c->igp[k], w->dist[x]))
					continue;
				w->stack[w->depth++] = x;
				w->stack[w->depth++] = now - old;
			}
		}
		if (!w->depth)
			return;
		add = w->stack[--w->depth];
		v = w->stack[--w->depth];
	}
}

/*
 * Root's tree into slot s, searching in sp and ordering in order: the
 * solver's own workspace, or a worker's (mpte_sid_cache_prefill()).
 */
static void tree_build(struct mpte_sid_cache *c, struct sid_tree *s, int root,
		       struct mpte_sp *sp, int *order)
{
	const struct mpte_topology *t = c->ctx->t;
	struct mpte_filter f;
	struct count_walk cw;
	int i, n = 0;

	if (!s->dist) {
		s->dist = mpte_xcalloc(t->nnodes, sizeof(double));
		s->count = mpte_xcalloc(t->nnodes, 1);
	}
	s->root = root;
	s->par_ok = false;
	memset(s->count, 0, t->nnodes);
	if (c->uniform) {
		bfs(c, s, root, order);
		return;
	} else if (c->int_max >= 0) {
		n = dial(c, s, root, order, c->int_pos);
		if (c->int_pos)
			return;
	} else {
		memset(&f, 0, sizeof(f));
		f.failed = c->ctx->failed;
		/* distances, and nodes in an order of them: the counts
		 * below are the same for any order among equal ones */
		f.dist_only = true;
		mpte_dijkstra(t, sp, &root, 1, c->igp_arc, &f, NULL, 0);
		for (i = 0; i < t->nnodes; i++)
			s->dist[i] = sp->dist[i];
		n = sp->nsettled;
		memcpy(order, sp->settled, n * sizeof(int));
	}
	/* count the routes in the order the search settled the nodes; a
	 * node's count is final when it passes it on, but for a zero-metric
	 * arc between nodes at one distance, which count_add() follows (the
	 * PASSED bit, cleared below) */
	count_walk_init(&cw, c, s->dist, s->count, s->count, PASSED);
	s->count[root] = 1;
	for (i = 0; i < n; i++) {
		int u = order[i], cu = s->count[u], k;

		s->count[u] |= PASSED;
		if (!cu)
			continue;
		for (k = t->out_start[u]; k < t->out_start[u + 1]; k++) {
			int v = t->out_to[k];

			if (c->ctx->failed[t->out_arc[k]])
				continue;
			if (near(s->dist[u] + c->igp[k], s->dist[v]))
				count_add(&cw, v, cu);
		}
	}
	for (i = 0; i < n; i++)
		s->count[order[i]] &= COUNT_MASK;
	count_walk_done(&cw);
}

static const struct sid_tree *tree(struct mpte_sid_cache *c, int root)
{
	struct sid_tree *s = &c->slot[root % c->nslots];

	if (s->root != root)
		tree_build(c, s, root, &c->sp, c->order);
	return s;
}

struct prefill {
	struct mpte_sid_cache *c;
	const int *roots;
	struct mpte_sp *sp;	/* per worker */
	int **order;		/* per worker */
};

static void prefill_one(void *arg, int i, int w)
{
	struct prefill *p = arg;
	int root = p->roots[i];

	tree_build(p->c, &p->c->slot[root], root, &p->sp[w], p->order[w]);
}

/*
 * The trees of these distinct roots, built side by side in the workers'
 * workspaces sp[0..nw) (par.c), before anyone asks for them: a tree is
 * the same whoever builds it, so only the time changes.  Every path
 * starts its first segment at its ingress, so the solver asks for the
 * ingresses' trees one after another; on the 10,000-node WAN they were
 * a fifth of its run on one core.  Not with the local searches, which
 * keep no trees.
 */
void mpte_sid_cache_prefill(struct mpte_sid_cache *c, const int *roots, int n,
			    struct mpte_sp *sp, int nw)
{
	struct prefill p = { .c = c, .sp = sp };
	int *todo, i, k = 0, w;

	if (c->local || n <= 0)
		return;
	todo = mpte_xcalloc(n, sizeof(int));
	for (i = 0; i < n; i++)		/* the trees built stay */
		if (c->slot[roots[i]].root != roots[i])
			todo[k++] = roots[i];
	p.roots = todo;
	p.order = mpte_xcalloc(nw, sizeof(*p.order));
	for (w = 0; w < nw; w++)
		p.order[w] = mpte_xcalloc(c->ctx->t->nnodes, sizeof(int));
	mpte_par_for(k, nw, prefill_one, &p);
	for (w = 0; w < nw; w++)
		free(p.order[w]);
	free(p.order);
	free(todo);
}

/*
 * The local search: a Dijkstra from one head that settles nodes only up to
 * the distance asked for, counting routes (capped at 2) as it settles.
 * A node's count is final when it is settled: every arc on a shortest
 * path into it comes from a node settled before it, but for zero-metric
 * arcs between nodes at one distance, which count_add() follows as it
 * does for tree_build().  All the nodes up to the distance are settled
 * before a count is read.
 */
static struct sid_local *local_start(struct mpte_sid_cache *c, int root)
{
	struct sid_local *l = &c->loc[0];
	int i;

	for (i = 0; i < SID_LOCAL_SEARCHES; i++) {
		if (c->loc[i].root == root) {
			l = &c->loc[i];
			goto found;
		}
		if (c->loc[i].used < l->used)
			l = &c->loc[i];
	}
	for (i = 0; i < l->sp.ntouched; i++)
		l->count[l->sp.touched[i]] = 0;
	mpte_sp_reset(&l->sp);
	mpte_sp_set(&l->sp, root, 0, -1);
	mpte_sp_push(&l->sp, root, 0);
	l->count[root] = 1;
	l->root = root;
found:
	l->used = ++c->clock;
	return l;
}

/* Settle every node at IGP distance up to bound from the head. */
static void local_grow(struct mpte_sid_cache *c, struct sid_local *l,
		       double bound)
{
	const struct mpte_topology *t = c->ctx->t;
	const unsigned char *failed = c->ctx->failed;
	struct mpte_sp *sp = &l->sp;
	struct count_walk cw;

	count_walk_init(&cw, c, sp->dist, l->count, sp->done, 1);
	while (sp->heap_len && sp->heap[0].key <= bound) {
		double d;
		int u = mpte_sp_pop(sp, &d), k;

		if ((sp->done[u] & 1) || d > sp->dist[u])
			continue;
		/* u's count is read at each arc, not once: a raise through a
		 * zero-metric cycle back to u, while its arcs are gone
		 * through, reaches by count_add() only the nodes whose
		 * distance is tight already (counted twice there, at 2
		 * anyway downstream of a cycle), and the rest here */
		sp->done[u] |= 1;
		for (k = t->out_start[u]; k < t->out_start[u + 1]; k++) {
			int v = t->out_to[k];
			double nd = d + c->igp[k];

			if (failed[t->out_arc[k]])
				continue;
			/* near() holds for anything against infinity; a tie
			 * into a settled node (a zero-metric arc) still
			 * counts, and count_add() passes it on */
			if (sp->dist[v] != HUGE_VAL_D && near(nd, sp->dist[v])) {
				count_add(&cw, v, l->count[u]);
			} else if (nd < sp->dist[v] && !(sp->done[v] & 1)) {
				mpte_sp_set(sp, v, nd, t->out_arc[k]);
				mpte_sp_push(sp, v, nd);
				l->count[v] = l->count[u];
			}
		}
	}
	count_walk_done(&cw);
}

/* Is the walk of IGP length cum from the head to v its unique shortest? */
static bool unique_shortest(struct mpte_sid_cache *c, const struct sid_tree *tr,
			    struct sid_local *l, int v, double cum)
{
	if (tr)
		return near(cum, tr->dist[v]) && tr->count[v] == 1;
	/* v is settled when its distance is within near() of cum or less;
	 * one that is not settled is farther than the walk: not shortest */
	local_grow(c, l, cum + 4e-9 * (1 + fabs(cum)));
	return (l->sp.done[v] & 1) && near(cum, l->sp.dist[v]) &&
	       l->count[v] == 1;
}

/* Whether trees are kept (else mpte_sid_tree() gives none). */
bool mpte_sid_trees_kept(const struct mpte_sid_cache *c)
{
	return !c->local;
}

const double *mpte_sid_tree(struct mpte_sid_cache *c, int root,
			    const unsigned char **count)
{
	const struct sid_tree *s;

	if (c->local)
		return NULL;
	s = tree(c, root);	/* its own slot: stays while others are made */
	if (count)
		*count = s->count;
	return s->dist;
}

const int *mpte_sid_tree_par(struct mpte_sid_cache *c, int root)
{
	const struct mpte_topology *t = c->ctx->t;
	struct sid_tree *s;
	int a;

	if (c->local)
		return NULL;
	s = &c->slot[root % c->nslots];
	if (s->root != root)
		tree_build(c, s, root, &c->sp, c->order);
	if (s->par_ok)
		return s->par;
	if (!s->par)
		s->par = mpte_xcalloc(t->nnodes, sizeof(int));
	memset(s->par, -1, t->nnodes * sizeof(int));
	for (a = 0; a < t->narcs; a++) {
		int w = t->arcs[a].from, v = t->arcs[a].to;

		if (c->ctx->failed[a] || s->count[v] != 1 ||
		    s->count[w] != 1 || s->dist[w] == HUGE_VAL_D)
			continue;
		if (near(s->dist[w] + t->arcs[a].igp_metric, s->dist[v]))
			s->par[v] = a;
	}
	s->par_ok = true;
	return s->par;
}

int mpte_segments(struct mpte_sid_cache *c, const int *arcs, int len,
		  const char **sids, int max, int *exact, int *missing)
{
	const struct mpte_topology *t = c->ctx->t;
	const char *last = NULL;
	int i = 0, n = 0;

#define PUT(sid)						\
	do {							\
		last = (sid);					\
		if (n < max)					\
			sids[n] = last;				\
		n++;						\
	} while (0)
#define PUT_NODE(v)						\
	do {							\
		if (!t->nodes[v].sid && missing && *missing < 0) \
			*missing = (v);				\
		PUT(t->nodes[v].sid);				\
	} while (0)
	*exact = 1;
	if (missing)
		*missing = -1;
	while (i < len) {
		int head = t->arcs[arcs[i]].from, j = i, end;
		const struct sid_tree *tr = NULL;
		struct sid_local *l = NULL;
		double cum = 0;

		if (c->local)
			l = local_start(c, head);
		else
			tr = tree(c, head);
		/* extend while arcs[i..j] is the unique shortest path */
		while (j < len) {
			int v = t->arcs[arcs[j]].to;

			cum += t->arcs[arcs[j]].igp_metric;
			if (!unique_shortest(c, tr, l, v, cum))
				break;
			j++;
		}
		if (j == i) {
			const struct mpte_arc *a = &t->arcs[arcs[i]];

			if (a->adj_sid) {
				PUT(a->adj_sid);
			} else {
				*exact = 0;
				PUT_NODE(a->to);
			}
			i++;
			continue;
		}
		end = t->arcs[arcs[j - 1]].to;
		PUT_NODE(end);
		i = j;
	}
	/* an adjacency SID as the last segment still needs the egress */
	if (len && t->arcs[arcs[len - 1]].adj_sid &&
	    last == t->arcs[arcs[len - 1]].adj_sid)
		PUT_NODE(t->arcs[arcs[len - 1]].to);
#undef PUT_NODE
#undef PUT
	return n;
}

int mpte_segments_over(struct mpte_sid_cache *c, const int *arcs, int len,
		       int max_sids)
{
	int exact, n;

	/* a hop adds at most one SID, the egress after an End.X one more:
	 * a short path fits without building IGP trees */
	if (len + 1 <= max_sids)
		return 0;
	n = mpte_segments(c, arcs, len, NULL, 0, &exact, NULL);
	return n > max_sids ? n : 0;
}

struct json_object *mpte_segments_json(struct mpte_sid_cache *c,
				       const int *arcs, int len, int *exact)
{
	const char **sids = mpte_xcalloc(len + 1, sizeof(*sids));
	struct json_object *a = json_object_new_array();
	int n = mpte_segments(c, arcs, len, sids, len + 1, exact, NULL), i;

	for (i = 0; i < n; i++)
		json_object_array_add(a, sids[i] ?
				      json_object_new_string(sids[i]) : NULL);
	free(sids);
	return a;
}

int mpte_max_sids(const struct mpte_ctx *ctx, int di)
{
	int m = ctx->ds->d[di].max_sids;

	if (ctx->opt.max_sids > 0 && ctx->opt.max_sids < m)
		m = ctx->opt.max_sids;
	return m;
}
