/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mpte_int.h - data structures shared by the solver's modules.
 *
 * The topology is a directed graph of arcs; a bidirectional link becomes two
 * arcs that remember each other (a fibre cut takes both).  Demands carry
 * their TE constraints; the context holds the solution: per demand a small
 * set of weighted paths (the working representation, from which the DAG,
 * junction weights and segment lists are derived), per arc the load.
 */
#ifndef MPTE_INT_H
#define MPTE_INT_H

#include <math.h>
#include <stdbool.h>

#include "mpte.h"

#define HUGE_VAL_D	HUGE_VAL

#define MPTE_EPS	1e-9
/* paths a demand may hold while optimising; cut to max_paths at the end */
#define MPTE_WORK_PATHS	32
/* the largest max_hops accepted */
#define MPTE_MAX_HOPS	1024

struct mpte_node {
	char *name;
	char *sid;		/* node SID (End), canonical; NULL if none given:
				 * a list that needs it is not installable */
};

struct mpte_arc {
	int from, to;
	int link;		/* index of the input link it came from */
	int reverse;		/* the other direction of the same link, or -1 */
	double capacity;
	double te_metric;
	double igp_metric;	/* what shortest-path routing uses */
	double delay;
	uint32_t colours;	/* admin-group bitmask */
	int *srlg;
	int nsrlg;
	double reserved[MPTE_PRIORITIES];	/* already in use, per priority */
	char *adj_sid;		/* End.X SID, for hops IGP routing won't take
				 * (canonical IPv6 text) */
	char *name;		/* "from->to" */
	char *label;		/* for messages: name, or "from->to (id)"
				 * when parallel links share from and to */
};

struct mpte_link {
	char *id;		/* given id, or "from-to" */
	int arc[2];		/* one or two arcs; arc[1] = -1 if directed */
};

struct mpte_topology {
	int nnodes, narcs, nlinks;
	struct mpte_node *nodes;
	struct mpte_arc *arcs;
	struct mpte_link *links;
	int *out_start, *out_arc;	/* CSR adjacency, outgoing */
	int *out_to;			/* out_arc[k]'s head */
	char **colour_names;		/* bit number -> name, may be NULL */
	int ncolours;
	int *node_hash;			/* open addressing, -1 = empty */
	unsigned int hash_mask;
	int max_sids;			/* "max_sids", DMSC_MAX_SEGS if absent */
	double max_stretch;		/* 0: none; MPTE_DEFAULT_MAX_STRETCH */
	int max_hops;			/* 0: none */
};

struct mpte_demand {
	char *id;
	int *ingress, ningress;
	int *egress, negress;
	double bandwidth;		/* requested */
	double bw_min, bw_max;		/* elastic range; min == max if fixed */
	int elastic;
	int setup, hold;
	uint32_t include_any, include_all, exclude_any;
	double max_delay;		/* 0: unconstrained */
	enum mpte_protection protection;
	int max_paths;
	int max_sids;			/* its own and the topology's, the least */
	int existing;			/* already established: preemptable */
	double max_stretch;		/* -1: not given; 0: none */
	int max_hops;			/* 0: not given */
};

struct mpte_demand_set {
	int n;
	struct mpte_demand *d;
};

struct mpte_path {
	int *arcs;
	int len;
	double flow;
};

struct mpte_dstate {
	enum mpte_status status;
	char *reason;
	double requested;		/* current request (elastic may change) */
	double admitted;		/* bandwidth carried when admitted */
	struct mpte_path *paths;
	int npaths, pcap;
	int group;			/* shared-Dijkstra group */
	int active;			/* being optimised in this run */
	int is_new;			/* a request, not an established one:
					 * loses ties, may preempt worse holds */
	int touched;			/* moved by the last incremental event */
	int withdrawn;			/* removed by mpte_remove_demand */
	int lost;			/* pushed out by a link failure: offered
					 * again when a link recovers */
	struct mpte_path backup;	/* len 0: none */
	char *backup_reason;
	char *preempted_by;		/* ids, comma separated */
};

/* Demands with the same ingress set and colour constraints share one
 * shortest-path tree per sweep. */
struct mpte_group {
	int *ingress, ningress;
	uint32_t include_any, include_all, exclude_any;
	int *members, nmembers;
	int *targets, ntargets;		/* union of the members' egresses */
};

struct mpte_bg_preempt {
	int arc;
	int priority;
	double bandwidth;
};

struct mpte_event {
	char *what;			/* "link-failure L1-S1", "bandwidth d3 300" */
	char *touched;			/* ids re-optimised */
	char *preempted;		/* ids pushed out */
	double max_utilisation;
};

/* Arc filter for a Dijkstra run. */
struct mpte_filter {
	uint32_t include_any, include_all, exclude_any;
	const unsigned char *arc_off;	/* optional per-arc exclusions */
	const unsigned char *node_off;	/* optional per-node exclusions */
	const unsigned char *failed;	/* failed arcs (context-wide) */
	double per_hop;			/* added to every arc's length */
	/* only the distances are read, not which of equally short paths
	 * the search took (its pred, the order it settled nodes at one
	 * distance in): the faster radix heap then, at any size (graph.c) */
	bool dist_only;
};

/* A heap entry: key and node side by side (graph.c). */
struct mpte_heap_ent {
	double key;
	int node;
};

/* A radix heap over the keys' bits (graph.c), made on first use. */
#define MPTE_RADIX_BUCKETS 65
struct mpte_radix {
	struct mpte_heap_ent *b[MPTE_RADIX_BUCKETS];
	int len[MPTE_RADIX_BUCKETS], cap[MPTE_RADIX_BUCKETS];
	uint64_t last;			/* the last key popped */
	int size;
};

/* Reusable Dijkstra workspace. */
struct mpte_sp {
	int n;
	double *dist;
	int *pred;			/* arc into node, -1 at a source */
	unsigned char *done;
	struct mpte_heap_ent *heap;
	int heap_len, heap_cap;
	int *touched;			/* nodes whose dist was set, for reset */
	int ntouched;
	int *settled;			/* nodes in the order settled */
	int nsettled;
	struct mpte_radix *radix;	/* NULL until a radix heap search */
	bool use_radix;			/* this search's queue (graph.c) */
	/*
	 * The workers' workspaces lie side by side (ctx->wsp): without a
	 * cache line between, one's counters written at every node shared
	 * a line with the next one's arrays read at every arc, and with
	 * the array at some offsets the dual bound's searches on two
	 * threads took as long as on one (8.1 s against 4.7 s).
	 */
	char apart[64];
};

/*
 * From this many nodes every mpte_dijkstra() takes the radix heap, also
 * where its paths are read (graph.c, mpte_pq_radix_for()).
 */
#define MPTE_RADIX_MIN_NODES	2048

/*
 * A lower bound and what it was a bound for (bound.c): the admitted
 * bandwidths, reservations and failed arcs then.  It holds as long as no
 * demand carries less, no reservation shrank and no arc failed then is
 * up; else the dual behind it (lengths y, each demand's distance under
 * them), if it came from one, gives a bound for the state as it is.
 */
struct mpte_lbrec {
	double value;			/* 0: none */
	double *adm;			/* per demand, 0 if not admitted */
	double *bg;			/* per arc */
	unsigned char *failed;		/* per arc */
	double dual;			/* the dual's own value, 0: none */
	double *y;			/* per arc */
	double *dist;			/* per demand, 0 where not known */
};

struct mpte_ctx {
	const struct mpte_topology *t;
	const struct mpte_demand_set *ds;
	struct mpte_options opt;

	struct mpte_dstate *st;
	struct mpte_group *groups;
	int ngroups;

	double *load;			/* admitted demand flow per arc */
	double *background;		/* reservations not preempted, per arc */
	double *bg_prio;		/* [arc * 8 + prio] still reserved */
	unsigned char *failed;		/* per arc */

	/* optimisation state */
	double alpha, uref;
	double beta;			/* alpha * max utilisation, last used */
	int restricted;			/* PHASE_HELD: no new paths */
	int capped;			/* PHASE_CAPPED: max_paths at most */
	int defer_cut;			/* finalise leaves max_paths to the
					 * path LP (mpte_finish) */
	double *len;			/* exp(alpha (u - uref)) / c */

	double max_util;
	double lower_bound;
	double cold_util;		/* max_util after the cold solve: what a
					 * recovery aims at where the bound is
					 * loose (max_sids) */
	/* the bounds lower_bound was taken from, with the state each held
	 * for (bound.c): the last solve's or event's with every admitted
	 * demand active, and the cold solve's (every link up) */
	struct mpte_lbrec lb_last, lb_cold;
	double ecmp_util;
	double solve_seconds;
	int iterations;
	long sidpath_heads;		/* IGP trees sidpath.c may still read in
					 * this solve or event */

	struct mpte_bg_preempt *bgp;
	int nbgp;
	struct mpte_event *events;
	int nevents;

	int *mark_a, *mark_b;		/* per-arc stamps for path overlap */
	int stamp;
	struct mpte_sp sp;		/* group sweeps */
	struct mpte_sp sp2;		/* per-demand searches (delay, backup) */
	struct mpte_sp sp3;		/* a group's fewest-hop tree (first routes) */
	struct mpte_sp sp_next;		/* the next group's tree, searched beside */
	int *arc_ver;			/* per arc: the commit that last changed it */
	int ver;			/* commits counted into arc_ver; 0: off */
	bool len_fell;			/* a length fell since ver was last bumped */
	int ahead_used, ahead_redone;	/* trees searched beside: kept, not */
	/* tests: each route from a tree kept searched again (pairs_oracle) */
	bool check_pairs;
	int pairs_checked, pairs_wrong;
	/* tests: each cheap-pass A* search cut at its bound searched again
	 * without it; or no bound at all (cheap.c) */
	bool check_cheap, cheap_unbounded;
	int cheap_cut, cheap_cut_wrong;
	struct mpte_sp *wsp;		/* one per worker of mpte_par_for() */
	int nworkers;			/* how many of wsp; 0 until first used */
	bool cold;			/* in mpte_solve(), not a re-plan */
	double par_min_work;		/* searches x nodes worth threads */
	struct mpte_sid_cache *sids;	/* IGP trees for SID counts (lazy) */

	/* hop bounds (hops.c), per demand, 0 = not computed yet */
	int *hop_limit, *fewest_hops;
	int ignore_hops;		/* backups: not bounded */
};

/* graph.c */
int mpte_topology_index(struct mpte_topology *t);
void mpte_topology_csr(struct mpte_topology *t);
int mpte_node_lookup(const struct mpte_topology *t, const char *name);
int mpte_link_lookup(const struct mpte_topology *t, const char *id);
int mpte_link_find(const struct mpte_topology *t, const char *id, char *err,
		   size_t errlen);
int mpte_sp_init(struct mpte_sp *sp, int n);
void mpte_sp_fini(struct mpte_sp *sp);
int mpte_arc_usable(const struct mpte_topology *t, int a,
		    const struct mpte_filter *f);
void mpte_dijkstra(const struct mpte_topology *t, struct mpte_sp *sp,
		   const int *src, int nsrc, const double *len,
		   const struct mpte_filter *f, const int *targets,
		   int ntargets);
/* the pieces of mpte_dijkstra, for a search grown in steps (segments.c) */
void mpte_sp_reset(struct mpte_sp *sp);
void mpte_sp_set(struct mpte_sp *sp, int v, double d, int pred);
void mpte_sp_push(struct mpte_sp *sp, int v, double key);
int mpte_sp_pop(struct mpte_sp *sp, double *key);
/* whether mpte_dijkstra() takes the radix heap for every search here */
bool mpte_pq_radix_for(const struct mpte_topology *t);
void mpte_bfs(const struct mpte_topology *t, struct mpte_sp *sp,
	      const int *src, int nsrc, const struct mpte_filter *f,
	      const int *targets, int ntargets);
int mpte_sp_extract(const struct mpte_topology *t, const struct mpte_sp *sp,
		    int node, int *arcs, int max);
int mpte_nearest_egress(const struct mpte_sp *sp, const struct mpte_demand *d);
void mpte_filter_for(const struct mpte_ctx *ctx, const struct mpte_demand *d,
		     struct mpte_filter *f);

/* par.c */
int mpte_par_workers(void);
void mpte_par_for(int n, int nworkers, void (*fn)(void *arg, int i, int w),
		  void *arg);

/* context.c */
/* ctx->wsp[0..return): the workers' search workspaces, made on first use */
int mpte_workers(struct mpte_ctx *ctx);
/*
 * How many of them to use: all in a cold solve, one in a re-plan, which
 * touches few demands (threads made the median failure re-plan on
 * wan1000 40 ms wall instead of 28).  The result is the same either way.
 */
int mpte_par_width(struct mpte_ctx *ctx);
void mpte_finish(struct mpte_ctx *ctx, const unsigned char *which,
		 char **preempted);
/* The IGP trees segment lists are counted against; invalidate them when a
 * link fails (IGP routes around it). */
struct mpte_sid_cache *mpte_sids(struct mpte_ctx *ctx);
void mpte_sids_invalidate(struct mpte_ctx *ctx);
int mpte_demand_index(const struct mpte_ctx *ctx, const char *id);

/* solve.c */
void mpte_arc_len_update(struct mpte_ctx *ctx, int a);
void mpte_recompute_loads(struct mpte_ctx *ctx);
double *mpte_fixed_load(const struct mpte_ctx *ctx, const unsigned char *sel);
double mpte_current_max_util(const struct mpte_ctx *ctx, int *argmax);
int mpte_optimise(struct mpte_ctx *ctx);
void mpte_polish(struct mpte_ctx *ctx, bool new_paths);
int mpte_best_path(struct mpte_ctx *ctx, int di, const double *len,
		   const unsigned char *arc_off, const unsigned char *node_off,
		   int *arcs, int max);
double mpte_path_delay(const struct mpte_topology *t, const int *arcs,
		       int len);
void mpte_path_set_flow(struct mpte_ctx *ctx, int di, double scale);
void mpte_drop_paths(struct mpte_ctx *ctx, int di);
/* A copy of the routes of the active demands (active) or of the admitted
 * ones; put back (restore) or dropped, and freed, by release. */
struct mpte_held;
struct mpte_held *mpte_hold_routes(const struct mpte_ctx *ctx, bool active);
void mpte_release_routes(struct mpte_ctx *ctx, struct mpte_held *h,
			 bool restore);
void mpte_shift_flow(struct mpte_ctx *ctx, int di, int p, const int *q, int n,
		     double delta);

/* bound.c: the bound reported, kept a bound across events */
void mpte_lbrec_set(struct mpte_ctx *ctx, struct mpte_lbrec *r, double value,
		    const double *y, const double *dist, double dual);
void mpte_lbrec_copy(struct mpte_ctx *ctx, struct mpte_lbrec *to,
		     const struct mpte_lbrec *from);
void mpte_lbrec_free(struct mpte_lbrec *r);
double mpte_valid_bound(const struct mpte_ctx *ctx, bool with_last);
void mpte_bound_refresh(struct mpte_ctx *ctx);

/* cut.c: the node-cut lower bound for moving the active demands, the
 * others fixed load, or (admitted) every admitted demand */
double mpte_cut_bound(const struct mpte_ctx *ctx, bool admitted);
/* A lower bound for routings with the path cap (capbound.c); may exceed the LP. */
double mpte_cap_bound(const struct mpte_ctx *ctx);

/* start.c: equal shares on IGP shortest paths for the active demands
 * without paths (plain ones only); marks them in placed, returns how many
 * (0, nothing placed, once a link passes utilisation give_up); *ecmp_u:
 * ECMP's max utilisation when every active demand was placed, else -1 */
int mpte_ecmp_start(struct mpte_ctx *ctx, unsigned char *placed,
		    double give_up, double *ecmp_u);

/* cheap.c: the cheapest routing (TE metric) within the max utilisation */
void mpte_prefer_cheap(struct mpte_ctx *ctx, const unsigned char *which);

/* hops.c */
double mpte_max_stretch(const struct mpte_ctx *ctx, int di);
int mpte_hop_limit(struct mpte_ctx *ctx, int di);	/* INT_MAX: none */
int mpte_fewest_hops(struct mpte_ctx *ctx, int di);	/* -1: no path */
void mpte_hop_limits_invalidate(struct mpte_ctx *ctx);
void mpte_hop_limits_prefill(struct mpte_ctx *ctx);
int mpte_hop_bounded_path(struct mpte_ctx *ctx, int di, const double *w,
			  const struct mpte_filter *f, int limit, int *arcs,
			  int max, double *dist);

/* admit.c */
int mpte_admit(struct mpte_ctx *ctx);
void mpte_resolve_overload(struct mpte_ctx *ctx, char **preempted);
/* After a recovery: demands with a list now over max_sids become active,
 * without paths, to be routed again; how many. */
int mpte_reroute_long_lists(struct mpte_ctx *ctx);
bool mpte_shed_overload(struct mpte_ctx *ctx, char **preempted);
void mpte_set_reason(struct mpte_dstate *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void mpte_append_id(char **list, const char *id);

/* output.c: the keys "link" (the topology's id), "from", "to" of arc a */
struct jw;
void mpte_jw_link(struct jw *w, const struct mpte_topology *t, int a);

/* admit.c: the frame of an incremental event (incr.c's too) */
int mpte_feasible(struct mpte_ctx *ctx, int di);
void mpte_begin_event(struct mpte_ctx *ctx);
void mpte_end_event(struct mpte_ctx *ctx, const char *what, char *preempted,
		    const unsigned char *extra, int reroute);

/* dag.c */
int mpte_finalise_paths(struct mpte_ctx *ctx, int di);
void mpte_dag_write(struct jw *w, const struct mpte_ctx *ctx, int di);

/* segments.c */
struct mpte_sid_cache;
struct mpte_sid_cache *mpte_sid_cache_new(const struct mpte_ctx *ctx);
void mpte_sid_cache_free(struct mpte_sid_cache *c);
void mpte_sid_cache_prefill(struct mpte_sid_cache *c, const int *roots, int n,
			    struct mpte_sp *sp, int nw);
void mpte_sid_cache_set_local(struct mpte_sid_cache *c, bool local);
/* arc a recovered: drop the trees it gives a path as short or shorter */
void mpte_sid_cache_recover_arc(struct mpte_sid_cache *c, int a);
/* arc a failed: drop the trees it was on */
void mpte_sid_cache_fail_arc(struct mpte_sid_cache *c, int a);
/* Since the last settle, has a recovery changed head v's tree? */
bool mpte_sid_head_moved(const struct mpte_sid_cache *c, int v);
void mpte_sid_cache_settle(struct mpte_sid_cache *c);
/*
 * The compressed segment list of a path: its length (which may exceed max:
 * only the first max entries are stored).  A node without a SID leaves
 * NULL in its place (the first such node in *missing, else -1, if missing
 * is not NULL); *exact is 0 if the list does not pin the path.
 */
int mpte_segments(struct mpte_sid_cache *c, const int *arcs, int len,
		  const char **sids, int max, int *exact, int *missing);
/* 0 if the path's list fits in max_sids SIDs, else its length. */
int mpte_segments_over(struct mpte_sid_cache *c, const int *arcs, int len,
		       int max_sids);
struct json_object *mpte_segments_json(struct mpte_sid_cache *c,
				       const int *arcs, int len, int *exact);
/* The SID limit that applies to demand di (demand, topology, options). */
int mpte_max_sids(const struct mpte_ctx *ctx, int di);
/* root's IGP tree (distances; *count: shortest routes, capped at 2); NULL
 * when the topology is too large to keep trees */
bool mpte_sid_trees_kept(const struct mpte_sid_cache *c);
const double *mpte_sid_tree(struct mpte_sid_cache *c, int root,
			    const unsigned char **count);
/* and its arc into each node with one IGP route (count 1), -1 if none;
 * kept with the tree (NULL as above) */
const int *mpte_sid_tree_par(struct mpte_sid_cache *c, int root);
/* sidpath.c: a path for di within its max_sids, least len among those
 * with the fewest segments, into out; its length, 0 if none */
int mpte_sid_path(struct mpte_ctx *ctx, int di, const double *len, int *out,
		  int max);
/* its budget for a solve or an event */
void mpte_sid_path_budget(struct mpte_ctx *ctx);

/* backup.c */
void mpte_compute_backup(struct mpte_ctx *ctx, int di);

/* ecmp.c */
double mpte_ecmp(const struct mpte_ctx *ctx);

/* util */
void *mpte_xcalloc(size_t n, size_t sz);
void *mpte_xrealloc(void *p, size_t sz);
char *mpte_xstrdup(const char *s);
double mpte_now(void);
void mpte_trace_phase(const char *what);

#endif
