/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal interfaces of dmsc.ko. Everything lives in a struct dmsc_net,
 * one per network namespace: in the tests a namespace is a node.
 */
#ifndef _DMSC_H
#define _DMSC_H

#include <linux/u64_stats_sync.h>
#include <linux/percpu.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/rhashtable-types.h>
#include <linux/siphash.h>
#include <linux/workqueue.h>
#include <linux/llist.h>
#include <linux/xarray.h>
#include <linux/in6.h>
#include <net/dst_cache.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/genetlink.h>
#include <linux/dmsc.h>

#include "compat.h"

/* Counters of the hook, per cpu so the fast path never shares a line. */
struct dmsc_pcpu_stats {
	u64_stats_t roce_packets;
	u64_stats_t encap_packets;
	u64_stats_t encap_bytes;
	u64_stats_t drop_mtu;
	u64_stats_t drop_noroute;
	u64_stats_t drop_nomem;
	u64_stats_t malformed;
	u64_stats_t flows_untracked;
	struct u64_stats_sync syncp;
};

/* The same counters summed over cpus, for INFO replies. */
struct dmsc_stats {
	u64 roce_packets;
	u64 encap_packets;
	u64 encap_bytes;
	u64 drop_mtu;
	u64 drop_noroute;
	u64 drop_nomem;
	u64 malformed;
	u64 flows_untracked;
};

/* Per-namespace counters of the credit returns, in DMSC_STATS_A_ order. */
enum {
	DMSC_CRET_TX,
	DMSC_CRET_TX_ERRORS,
	DMSC_CRET_RX,
	DMSC_CRET_MALFORMED,
	DMSC_CRET_NO_SESSION,
	DMSC_CRET_SOURCE,
	DMSC_CRET_MODE,
	DMSC_CRET_KEEPALIVE,
	DMSC_CRET_NSTATS
};

#define DMSC_FLOW_LIMIT_DEFAULT		65536
#define DMSC_FLOW_TIMEOUT_DEFAULT	30000	/* ms */

struct dmsc_rule_node;

struct dmsc_net {
	struct net *net;
	struct dmsc_pcpu_stats __percpu *stats;

	/*
	 * Serialises every change in this namespace (the family has
	 * parallel_ops: genl_mutex is not ours to rely on) and the dumps
	 * of tunnels and rules. The hook never takes it.
	 */
	struct mutex lock;
	u32 gen;		/* bumped on every change, for dumps; not 0 */
	bool hooked;		/* netfilter hooks registered */

	/* Tunnels by id (tunnel.c); the xarray holds a reference. */
	struct xarray tunnels;

	/*
	 * Rules by inner family, [0] IPv4 and [1] IPv6: the root of a
	 * binary trie of destination prefixes (rule.c). NULL when the
	 * family has no rule: the hook returns at once.
	 */
	struct dmsc_rule_node __rcu *rules[2];
	u64 rule_seq;		/* age of rules, for the last tie-break */

	/*
	 * Flows (flow.c) and the work that ages them out, a slice of the
	 * table at a time; the walker stays entered between slices, and
	 * only the work touches it.
	 */
	struct rhashtable flows;
	struct delayed_work flow_gc;
	struct rhashtable_iter flow_gc_iter;
	bool flow_gc_walking;

	/* Flow hash key for path selection, random per namespace. */
	siphash_key_t hash_key;

	/* Settings; written under lock, read locklessly. */
	u32 flow_limit;
	u32 flow_timeout_ms;

	/* Object counts for INFO; changed under lock. */
	u32 n_tunnels;
	u32 n_rules;
	atomic_t n_flows;	/* changed by the hook too */

	/*
	 * Credit sessions (credit.c): the table holds a reference on each;
	 * lookups under RCU, changes and dumps under lock. session_list
	 * keeps them in creation order for dumps.
	 */
	struct rhashtable sessions;
	struct list_head session_list;
	u32 n_sessions;
	u32 fail_walk;			/* dmsc_session_fail_link's, dn->lock */

	/*
	 * Credit returns (creditret.c): the sessions with freed bytes to
	 * report to their previous hop, each on the list once (with a
	 * reference), and the work that sends their RESVs through an IPv6
	 * control socket it makes at its first run; the sessions whose
	 * batch is full, each on cret_now once (with a reference), sent at
	 * once from softirq by cret_bh. The hook takes them in.
	 */
	struct llist_head cret_list;
	struct delayed_work cret_work;
	spinlock_t cret_lock;		/* cret_due, and the work's timer */
	unsigned long cret_due;		/* jiffies: when the work runs next */
	struct sock *cret_sk;		/* set once by the work, then read-only */
	struct llist_head cret_now;
	struct dmsc_bh cret_bh;
	bool cret_hooked;
	atomic64_t cret_stats[DMSC_CRET_NSTATS];
};

extern unsigned int dmsc_net_id;
extern struct genl_family dmsc_genl_family;

static inline struct dmsc_net *dmsc_pernet(const struct net *net)
{
	return net_generic(net, dmsc_net_id);
}

/* Bump one per-cpu counter; callable from any context. */
#define dmsc_stats_inc(dn, field, val) do {				\
	struct dmsc_pcpu_stats *__s = get_cpu_ptr((dn)->stats);		\
	unsigned long __flags = u64_stats_update_begin_irqsave(&__s->syncp); \
	u64_stats_add(&__s->field, (val));				\
	u64_stats_update_end_irqrestore(&__s->syncp, __flags);		\
	put_cpu_ptr((dn)->stats);					\
} while (0)

void dmsc_stats_read(struct dmsc_net *dn, struct dmsc_stats *out);

/* What the namespace lock protects; the hook reads it under RCU. */
#define dmsc_dereference(dn, p) \
	rcu_dereference_protected(p, lockdep_is_held(&(dn)->lock))

/*
 * A change visible to dumps; under dn->lock. Never 0: a dump compares
 * with its last sequence only when that is not 0.
 */
static inline void dmsc_changed(struct dmsc_net *dn)
{
	lockdep_assert_held(&dn->lock);
	if (!++dn->gen)
		dn->gen = 1;
}

/* srv6.c: one segment list, ready to push. */
struct dmsc_path {
	u32 weight;
	u8 nsegs;
	u16 srh_len;		/* bytes of SRH pushed, 0 if none */
	u16 overhead;		/* outer IPv6 header + SRH */
	struct in6_addr segs[DMSC_MAX_SEGS];	/* travel order */
	struct ipv6_sr_hdr *srh;	/* prebuilt, per the tunnel mode */
	struct dst_cache dst_cache;	/* route to segs[0] */
};

const char *dmsc_sid_invalid(const struct in6_addr *sid);
int dmsc_srv6_path_init(struct dmsc_path *path, u8 mode,
			const struct in6_addr *segs, u32 nsegs, u32 weight);
void dmsc_srv6_path_release(struct dmsc_path *path);

/* Outcome of dmsc_srv6_xmit(); the skb is consumed in every case. */
enum dmsc_tx {
	DMSC_TX_OK,
	DMSC_TX_MTU,
	DMSC_TX_NOROUTE,
	DMSC_TX_NOMEM,
};

struct dmsc_tunnel_cfg;
enum dmsc_tx dmsc_srv6_xmit(struct net *net, struct sk_buff *skb,
			    const struct dmsc_tunnel_cfg *cfg,
			    struct dmsc_path **pathp, u8 family);
int dmsc_srv6_primary_down(const struct dmsc_tunnel_cfg *cfg);

/*
 * tunnel.c. A flow hashes into one of DMSC_BUCKETS buckets, each naming
 * a path: 1024 buckets give every weight a share within 1/1024 of its
 * exact value, and a flow keeps its path while its bucket keeps it.
 */
#define DMSC_BUCKETS		1024
#define DMSC_BACKUP_IDX		DMSC_MAX_PATHS	/* paths[] slot of the backup */

/* What a tunnel carries; immutable once published, replaced whole. */
struct dmsc_tunnel_cfg {
	struct rcu_head rcu;
	struct in6_addr src;
	u8 mode;
	u8 n_paths;
	bool has_backup;
	u8 buckets[DMSC_BUCKETS];
	struct dmsc_path paths[DMSC_MAX_PATHS + 1];
};

/* Per cpu, per path index; [DMSC_BACKUP_IDX] counts the backup. */
struct dmsc_tunnel_pcpu {
	u64_stats_t packets[DMSC_MAX_PATHS + 1];
	u64_stats_t bytes[DMSC_MAX_PATHS + 1];
	struct u64_stats_sync syncp;
};

/*
 * A tunnel. References: one from the xarray while it is configured, one
 * per flow in the flow table; freed after a grace period once the last
 * is dropped, so a hook or dump that found it under RCU may finish.
 * Rules do not take references: a tunnel with rules cannot be deleted.
 */
struct dmsc_tunnel {
	u32 id;
	u32 active;		/* dmsc_tunnel_active or DMSC_ACTIVE_EARLY */
	u8 admin_up;		/* READ_ONCE */
	u32 n_rules;		/* rules pointing here, under dn->lock */
	refcount_t refcnt;
	atomic64_t switches;
	struct dmsc_tunnel_cfg __rcu *cfg;
	struct dmsc_tunnel_pcpu __percpu *stats;

	/*
	 * The tunnel's own flows (flow.c), so that deleting it removes
	 * exactly them without walking the table. Under flow_lock: the
	 * list, dead (set once, at deletion: no flow joins after it) and
	 * the counts, per bucket (DMSC_BUCKETS of them, 4 KiB, allocated
	 * beside): a path's count is the sum over the buckets dealt to it,
	 * so a new deal needs no recount.
	 */
	spinlock_t flow_lock;
	bool dead;
	struct list_head flows;
	u32 n_flows;
	u32 *bucket_flows;
	struct rcu_head rcu;
};

/*
 * tun->active beside the uAPI's two: on the backup already, moved there
 * by a cbfc qdisc that lost the next hop (dmsc_tunnel_steer_backup) and
 * not yet switched, counted or told; netlink shows it as the backup.
 * Read with READ_ONCE, changed by xchg and cmpxchg only (u32: a byte's
 * cmpxchg is not on every architecture).
 */
#define DMSC_ACTIVE_EARLY	(DMSC_ACTIVE_MAX + 1)

/* What netlink shows: primary or backup. */
static inline u8 dmsc_tunnel_active(const struct dmsc_tunnel *tun)
{
	return READ_ONCE(tun->active) == DMSC_ACTIVE_PRIMARY ?
	       DMSC_ACTIVE_PRIMARY : DMSC_ACTIVE_BACKUP;
}

/* Path index of a flow hash: the bucket's path, or the backup. */
static inline u32 dmsc_tunnel_path(const struct dmsc_tunnel *tun,
				   const struct dmsc_tunnel_cfg *cfg, u32 bucket)
{
	if (READ_ONCE(tun->active) != DMSC_ACTIVE_PRIMARY && cfg->has_backup)
		return DMSC_BACKUP_IDX;
	return cfg->buckets[bucket];
}

void dmsc_tunnel_count(struct dmsc_tunnel *tun, u32 idx, unsigned int len);
bool dmsc_tunnel_failover(struct dmsc_net *dn, u32 id);
bool dmsc_tunnel_steer_backup(struct dmsc_net *dn, u32 id);
bool dmsc_tunnel_has_backup(struct dmsc_net *dn, u32 id);
void dmsc_tunnel_switch_early(struct dmsc_net *dn, u32 id);
struct dmsc_tunnel *dmsc_tunnel_lookup(struct dmsc_net *dn, u32 id);
void dmsc_tunnel_put(struct dmsc_tunnel *tun);
int dmsc_tunnel_net_init(struct dmsc_net *dn);
void dmsc_tunnel_net_exit(struct dmsc_net *dn);
int dmsc_tunnel_new_doit(struct sk_buff *skb, struct genl_info *info);
int dmsc_tunnel_set_doit(struct sk_buff *skb, struct genl_info *info);
int dmsc_tunnel_del_doit(struct sk_buff *skb, struct genl_info *info);
int dmsc_tunnel_get_doit(struct sk_buff *skb, struct genl_info *info);
int dmsc_tunnel_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);

/* rule.c */
struct dmsc_rule {
	u8 family;		/* AF_INET or AF_INET6 */
	u8 dst_len;
	u8 src_len;		/* 0: any source */
	struct in6_addr dst;	/* IPv4 in the first 4 bytes */
	struct in6_addr src;
	u32 qpn_lo;
	u32 qpn_hi;
	u64 seq;
	struct dmsc_tunnel *tun;	/* holds tun->n_rules */
	u64 __percpu *packets;
	struct hlist_node list;	/* on its trie node, in precedence order */
	struct rcu_head rcu;
};

struct dmsc_rule *dmsc_rule_lookup(const struct dmsc_rule_node *root,
				   const void *saddr, const void *daddr,
				   u32 qpn);
int dmsc_rule_cache_init(void);
void dmsc_rule_cache_exit(void);
int dmsc_rule_net_init(struct dmsc_net *dn);
void dmsc_rule_net_exit(struct dmsc_net *dn);
int dmsc_rule_new_doit(struct sk_buff *skb, struct genl_info *info);
int dmsc_rule_del_doit(struct sk_buff *skb, struct genl_info *info);
int dmsc_rule_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);

/* flow.c. The key is also what path selection hashes (without tunnel). */
struct dmsc_flow_key {
	struct in6_addr src;	/* IPv4 in the first 4 bytes, rest 0 */
	struct in6_addr dst;
	__be16 sport;
	u8 family;
	u8 pad;
	u32 qpn;
	u32 tunnel;		/* not part of the path hash */
	u32 pad2;		/* no implicit padding: the table hashes it all */
} __aligned(8);

#define DMSC_FLOW_HASH_LEN	offsetof(struct dmsc_flow_key, tunnel)

void dmsc_flow_account(struct dmsc_net *dn, const struct dmsc_flow_key *key,
		       struct dmsc_tunnel *tun, u32 bucket, unsigned int len);
void dmsc_flow_purge_tunnel(struct dmsc_net *dn, struct dmsc_tunnel *tun,
			    bool kill);
void dmsc_flow_timeout_changed(struct dmsc_net *dn);
int dmsc_flow_net_init(struct dmsc_net *dn);
void dmsc_flow_net_exit(struct dmsc_net *dn);
int dmsc_flow_cache_init(void);
void dmsc_flow_cache_exit(void);
int dmsc_flow_get_start(struct netlink_callback *cb);
int dmsc_flow_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int dmsc_flow_get_done(struct netlink_callback *cb);
int dmsc_flow_flush_doit(struct sk_buff *skb, struct genl_info *info);

/* steer.c: hooks registered with the namespace's first rule. */
int dmsc_steer_hook(struct dmsc_net *dn, struct netlink_ext_ack *extack);
void dmsc_steer_net_exit(struct dmsc_net *dn);

/*
 * credit.c: credit sessions of the cbfc qdisc. The key is what the qdisc
 * classifies a RoCEv2 packet on (the inner one of an SRv6 packet).
 */
struct dmsc_cbfc_key {
	struct in6_addr src;	/* IPv4 in the first 4 bytes, rest 0 */
	struct in6_addr dst;
	__be16 sport;
	u8 family;
	u8 pad;
	u32 qpn;
} __aligned(8);

/*
 * A session. References: one from the table while it is configured, one
 * per cbfc flow (a queue in a qdisc) that carries it; freed after a grace
 * period once the last is dropped. The counters are atomics: sent is
 * reserved by the qdiscs that send (dmsc_session_charge), freed moved by
 * credit updates (process context, or softirq for the kernel's own
 * returns) without any qdisc lock.
 *
 * Invariant: freed <= sent (an update that would break it is absurd and
 * ignored), so in flight = sent - freed >= 0 and available = credit -
 * in flight <= credit. All three are u64 totals that may wrap: only
 * their differences are used, as s64 (review findings 3 and 7).
 */
struct dmsc_session {
	struct rhash_head node;		/* dn->sessions */
	struct list_head list;		/* dn->session_list */
	struct dmsc_cbfc_key key;
	/*
	 * What each packet's charge reads and writes, together in the
	 * second cache line (kmalloc aligns the session to its size): a
	 * qdisc with 10,000 flows misses here once a packet, not thrice.
	 */
	bool has_nexthop;		/* else its packets pass uncontrolled */
	bool has_prevhop;		/* its forwarded bytes are returned */
	u8 mode;			/* enum dmsc_credit_mode */
	bool dead;			/* deleted: no credit control */
	bool failed;			/* next hop failed: no credit control */
	bool on_backup;			/* moved: see dmsc_session_fail */
	u32 tunnel;			/* steering tunnel, 0: none */
	refcount_t refcnt;
	unsigned long last_qdisc;	/* cookie of the cbfc qdisc it last
					 * went through on its tunnel's
					 * present path, 0: none; READ_ONCE
					 */
	u64 credit;			/* the next hop's reservation; the
					 * backup's once on it: READ_ONCE
					 */
	u64 base;			/* cumulative totals count from here */
	atomic64_t freed;
	atomic64_t sent;
	atomic64_t packets;
	struct in6_addr nexthop;
	struct in6_addr prevhop;
	u32 fail_walk;			/* the link walk that failed it, dn->lock */
	/*
	 * The backup list's first hop and its reservation (DMSC_CMD_SESSION_
	 * SET, under dn->lock and lock): when the next hop fails, a session
	 * with a tunnel moves onto them (dmsc_session_fail) rather than
	 * losing credit control. Fixed once on_backup is set.
	 */
	struct in6_addr backup_nexthop;
	u64 backup_credit;
	u8 backup_mode;			/* the form the backup hop returns in */
	bool has_backup;
	atomic64_t updates;
	atomic64_t stale;
	atomic64_t absurd;		/* updates with freed above sent */
	atomic64_t last_update;		/* ns (ktime_get_ns) of the last update */
	spinlock_t lock;		/* stalled, wait_start */
	struct list_head stalled;	/* cbfc flows waiting for credit */
	atomic64_t wait_start;		/* ns: the stalled list last filled */

	/*
	 * Credit returns to the previous hop (creditret.c): ret_freed is
	 * what the qdiscs forwarded, ret_sent the total the last RESV
	 * carried, ret_flags DMSC_RET_*. ret_lock serialises the sends of
	 * the work and of the softirq, and guards ret_sent to ret_fails.
	 */
	atomic64_t ret_freed;
	spinlock_t ret_lock;
	u64 ret_sent;
	atomic64_t returns;
	unsigned long ret_flags;
	unsigned long ret_next;		/* jiffies: next repeat */
	u8 ret_repeats;			/* repeats of ret_sent left */
	u8 ret_fails;			/* failed sends in a row */
	u32 ret_initial;		/* the qdisc's credit, for the object */
	struct llist_node ret_node;	/* dn->cret_list */
	struct llist_node ret_now_node;	/* dn->cret_now */
	struct rcu_head rcu;
};

#define DMSC_RET_QUEUED		0	/* on dn->cret_list */
#define DMSC_RET_KICKED		1	/* a batch is due: a send asked for */
#define DMSC_RET_TICKED		2	/* new bytes: a run within a tick */
#define DMSC_RET_NOW		3	/* on dn->cret_now */

/*
 * A session with a previous hop returns credit to it (creditret.c): a
 * cumulative one its running total, a delta one what it freed since its
 * last return.
 */
static inline bool dmsc_session_returns(const struct dmsc_session *s)
{
	return s->has_prevhop;
}

/*
 * The hop that grants the session credit now: its next hop, or its
 * backup's once it moved there (whose address is fixed from then on).
 */
static inline const struct in6_addr *
dmsc_session_nexthop(const struct dmsc_session *s)
{
	/* Pairs with dmsc_session_fail()'s release of on_backup. */
	return smp_load_acquire(&s->on_backup) ? &s->backup_nexthop :
						 &s->nexthop;
}

/*
 * The form the hop granting credit returns it in: the session's mode, or
 * the backup's once the session moved there (@on_backup, read with
 * smp_load_acquire(): backup_mode is fixed before the move publishes it).
 * The session's own returns to its previous hop keep its mode: the move
 * changes the next hop only.
 */
static inline bool dmsc_session_nh_delta(const struct dmsc_session *s,
					 bool on_backup)
{
	return (on_backup ? s->backup_mode : s->mode) ==
	       DMSC_CREDIT_MODE_DELTA;
}

/* Bytes in flight: sent, not yet reported freed. */
static inline s64 dmsc_session_inflight(const struct dmsc_session *s,
					u64 sent)
{
	return (s64)(sent - (u64)atomic64_read(&s->freed));
}

/* Bytes the session may send now: 0..credit, whatever the totals say. */
static inline u64 dmsc_session_available(const struct dmsc_session *s)
{
	s64 inflight = dmsc_session_inflight(s, atomic64_read(&s->sent));
	u64 credit;

	/* freed, then credit: pairs with dmsc_session_fail()'s smp_wmb() */
	smp_rmb();
	credit = READ_ONCE(s->credit);

	if (inflight < 0)
		inflight = 0;	/* cannot happen: freed <= sent */
	return (u64)inflight >= credit ? 0 : credit - inflight;
}

/*
 * Reserve @len bytes of the session's credit for a packet about to be
 * sent: the check and the charge are one cmpxchg on sent, so two qdiscs
 * sending for one session (mq children, a flow moving between devices)
 * cannot both take the last bytes (review finding 2).
 */
static inline bool dmsc_session_charge(struct dmsc_session *s,
				       unsigned int len)
{
	s64 sent = atomic64_read(&s->sent);
	s64 inflight;

	if (!s->has_nexthop)
		return true;	/* a last hop: it returns, it does not wait */
	do {
		inflight = dmsc_session_inflight(s, sent);
		if (inflight < 0)
			inflight = 0;
		/* freed, then credit: see dmsc_session_available() */
		smp_rmb();
		if ((u64)inflight + len > READ_ONCE(s->credit))
			return false;
	} while (!atomic64_try_cmpxchg(&s->sent, &sent, sent + len));
	return true;
}

struct dmsc_session *dmsc_session_lookup(struct dmsc_net *dn,
					 const struct dmsc_cbfc_key *key);
void dmsc_session_put(struct dmsc_session *s);
int dmsc_credit_net_init(struct dmsc_net *dn);
void dmsc_credit_net_exit(struct dmsc_net *dn);
int dmsc_session_new_doit(struct sk_buff *skb, struct genl_info *info);
int dmsc_session_del_doit(struct sk_buff *skb, struct genl_info *info);
int dmsc_session_get_doit(struct sk_buff *skb, struct genl_info *info);
int dmsc_session_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int dmsc_credit_doit(struct sk_buff *skb, struct genl_info *info);
bool dmsc_session_credit(struct dmsc_session *s, bool delta, u64 val,
			 bool on_backup);
bool dmsc_session_fail(struct dmsc_session *s, bool can_move);
bool dmsc_session_fail_primary(struct dmsc_session *s);
int dmsc_session_set_doit(struct sk_buff *skb, struct genl_info *info);

/* creditret.c */
void dmsc_cret_account(struct dmsc_net *dn, struct dmsc_session *s,
		       unsigned int len, u32 batch, u32 initial);
void dmsc_cret_net_init(struct dmsc_net *dn);
int dmsc_cret_hook(struct dmsc_net *dn, struct netlink_ext_ack *extack);
void dmsc_cret_net_pre_exit(struct dmsc_net *dn);
void dmsc_cret_net_exit(struct dmsc_net *dn);

/* sch_cbfc.c */
void dmsc_cbfc_wake(struct dmsc_session *s);
unsigned int dmsc_session_fail_link(struct dmsc_net *dn, unsigned long qdisc,
				    int ifindex);
unsigned int dmsc_session_fail_tunnel(struct dmsc_net *dn, u32 tunnel,
				      int ifindex);
void dmsc_session_forget_path(struct dmsc_net *dn, u32 tunnel, bool backup);
void dmsc_session_notify_failed(struct dmsc_net *dn, struct dmsc_session *s,
				u32 event, int ifindex, u64 waited_us);
int dmsc_cbfc_init(void);
void dmsc_cbfc_exit(void);

/* genl.c: the nested policies, for handlers parsing their nests. */
extern const struct nla_policy dmsc_tunnel_policy[DMSC_TUNNEL_A_MAX + 1];
extern const struct nla_policy dmsc_path_policy[DMSC_PATH_A_MAX + 1];
extern const struct nla_policy dmsc_rule_policy[DMSC_RULE_A_MAX + 1];
extern const struct nla_policy dmsc_flow_policy[DMSC_FLOW_A_MAX + 1];
extern const struct nla_policy dmsc_session_policy[DMSC_SESSION_A_MAX + 1];

int dmsc_genl_init(void);
void dmsc_genl_exit(void);
void dmsc_genl_notify(struct net *net, struct sk_buff *skb);

#endif /* _DMSC_H */
