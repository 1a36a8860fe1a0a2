// SPDX-License-Identifier: GPL-2.0
/*
 * The flow table: what `dmsc flow show` lists. One entry per flow
 * (family, inner source, inner destination, UDP source port, destination
 * QP, tunnel), with its packets, bytes and the time of its last packet.
 *
 * It only observes: path selection is a hash and does not depend on the
 * table, so a full table or an aged-out entry never moves a flow. An
 * entry keeps its bucket, not its path: the path shown is the one the
 * flow takes now, so a weight change or a switch to the backup shows at
 * once.
 *
 * Lifetimes. Every entry is in two places: the namespace's rhashtable,
 * where the hook finds it, and its tunnel's list, which says who owns
 * it. An entry holds a reference on its tunnel. Whoever takes it off the
 * tunnel's list (ageing, flush, tunnel deletion, each under the tunnel's
 * flow_lock) owns its removal: it unhashes the entry, frees it after a
 * grace period and only then drops the tunnel reference. Deleting a
 * tunnel marks it dead under the same lock, so no entry can join it
 * afterwards, and empties its list: it removes exactly its own entries
 * and never depends on a table walk seeing every one of them (a walk
 * that removes entries while the table resizes restarts, and may end
 * before it came round to all). The ageing work does walk the table, a
 * slice at a time: an entry it misses ages one round later.
 *
 * Cost. An entry is 128 bytes from its own cache, plus the rhashtable's
 * bucket pointer (the table keeps 0.75 to 3 entries per bucket: at most
 * 11 more bytes per entry); at most flow_limit entries exist in a
 * namespace. The hook enters a flow with GFP_ATOMIC; past the limit it
 * reads one shared counter and counts the packet in flows_untracked per
 * cpu, writing nothing shared. The per-packet hit writes only the
 * entry's own counters.
 */

#include <linux/rhashtable.h>
#include <linux/slab.h>
#include <net/genetlink.h>

#include "dmsc.h"

struct dmsc_flow {
	struct rhash_head node;
	struct dmsc_flow_key key;
	struct list_head tun_node;	/* in tun->flows; empty once claimed */
	struct dmsc_tunnel *tun;	/* holds a reference */
	u16 bucket;
	unsigned long last;	/* jiffies of the last packet */
	atomic64_t packets;
	atomic64_t bytes;
	struct rcu_head rcu;
};

static struct kmem_cache *dmsc_flow_cache __read_mostly;

static const struct rhashtable_params dmsc_flow_params = {
	.key_len = sizeof(struct dmsc_flow_key),
	.key_offset = offsetof(struct dmsc_flow, key),
	.head_offset = offsetof(struct dmsc_flow, node),
	.automatic_shrinking = true,
};

static unsigned long dmsc_flow_gc_interval(struct dmsc_net *dn)
{
	return msecs_to_jiffies(READ_ONCE(dn->flow_timeout_ms) / 2);
}

static void dmsc_flow_hit(struct dmsc_flow *f, unsigned int len)
{
	unsigned long now = jiffies;

	atomic64_inc(&f->packets);
	atomic64_add(len, &f->bytes);
	/* Only write when it changes: many cpus may share a flow. */
	if (READ_ONCE(f->last) != now)
		WRITE_ONCE(f->last, now);
}

/* Under tun->flow_lock: join the tunnel. */
static void dmsc_flow_link(struct dmsc_tunnel *tun, struct dmsc_flow *f)
{
	list_add_tail(&f->tun_node, &tun->flows);
	tun->n_flows++;
	tun->bucket_flows[f->bucket]++;
}

/* Under tun->flow_lock: leave the tunnel; the caller now owns @f. */
static void dmsc_flow_unlink(struct dmsc_tunnel *tun, struct dmsc_flow *f)
{
	list_del_init(&f->tun_node);
	tun->n_flows--;
	tun->bucket_flows[f->bucket]--;
}

static void dmsc_flow_free_rcu(struct rcu_head *head)
{
	struct dmsc_flow *f = container_of(head, struct dmsc_flow, rcu);

	dmsc_tunnel_put(f->tun);
	kmem_cache_free(dmsc_flow_cache, f);
}

/* The owner of an unlinked entry takes it out of the table and frees it. */
static void dmsc_flow_finish(struct dmsc_net *dn, struct dmsc_flow *f)
{
	WARN_ON_ONCE(rhashtable_remove_fast(&dn->flows, &f->node,
					    dmsc_flow_params));
	atomic_dec(&dn->n_flows);
	call_rcu(&f->rcu, dmsc_flow_free_rcu);
}

/* Called by the hook, under RCU, for a packet it sent. */
void dmsc_flow_account(struct dmsc_net *dn, const struct dmsc_flow_key *key,
		       struct dmsc_tunnel *tun, u32 bucket, unsigned int len)
{
	struct dmsc_flow *f, *old;
	u32 limit;

	f = rhashtable_lookup(&dn->flows, key, dmsc_flow_params);
	if (likely(f)) {
		dmsc_flow_hit(f, len);
		return;
	}

	limit = READ_ONCE(dn->flow_limit);
	if (!limit)
		return;		/* tracking off: old entries still count */
	/* A full table is the common case under a flood: only read. */
	if (atomic_read(&dn->n_flows) >= limit)
		goto untracked;
	/* Reserve a place first, so that the limit is never passed. */
	if (atomic_inc_return(&dn->n_flows) > limit)
		goto unreserve;
	f = kmem_cache_alloc(dmsc_flow_cache, GFP_ATOMIC | __GFP_NOWARN);
	if (!f)
		goto unreserve;
	f->key = *key;
	f->tun = tun;
	f->bucket = bucket;
	f->last = jiffies;
	atomic64_set(&f->packets, 1);
	atomic64_set(&f->bytes, len);

	/*
	 * Hashed and linked under the tunnel's lock, so that a remover
	 * that finds the entry in either place finds it in both, and a
	 * dead tunnel gains nothing.
	 */
	spin_lock_bh(&tun->flow_lock);
	if (unlikely(tun->dead)) {
		old = ERR_PTR(-ENOENT);
	} else {
		old = rhashtable_lookup_get_insert_fast(&dn->flows, &f->node,
							dmsc_flow_params);
		if (likely(!old)) {
			refcount_inc(&tun->refcnt);
			dmsc_flow_link(tun, f);
		}
	}
	spin_unlock_bh(&tun->flow_lock);

	if (likely(!old)) {
		queue_delayed_work(system_power_efficient_wq, &dn->flow_gc,
				   dmsc_flow_gc_interval(dn));
		return;
	}
	kmem_cache_free(dmsc_flow_cache, f);
	if (!IS_ERR(old)) {
		/* Another cpu entered the same flow first. */
		atomic_dec(&dn->n_flows);
		dmsc_flow_hit(old, len);
		return;
	}
unreserve:
	atomic_dec(&dn->n_flows);
untracked:
	dmsc_stats_inc(dn, flows_untracked, 1);
}

/* Claim @f if nobody has yet; true if the caller now owns it. */
static bool dmsc_flow_claim(struct dmsc_flow *f)
{
	struct dmsc_tunnel *tun = f->tun;
	bool mine;

	spin_lock_bh(&tun->flow_lock);
	mine = !list_empty(&f->tun_node);
	if (mine)
		dmsc_flow_unlink(tun, f);
	spin_unlock_bh(&tun->flow_lock);
	return mine;
}

/*
 * Remove every entry of @tun; with @kill, mark it dead first so that
 * none can join. Process context; the namespace lock is held.
 */
void dmsc_flow_purge_tunnel(struct dmsc_net *dn, struct dmsc_tunnel *tun,
			    bool kill)
{
	struct dmsc_flow *f;
	unsigned int n = 0, max;

	/*
	 * Without @kill, flows may keep joining while we remove: take as
	 * many as there were, from the head (the oldest), or under a flood
	 * of new flows a flush would never end.
	 */
	spin_lock_bh(&tun->flow_lock);
	if (kill)
		tun->dead = true;
	max = tun->n_flows;
	spin_unlock_bh(&tun->flow_lock);

	while (n < max) {
		spin_lock_bh(&tun->flow_lock);
		f = list_first_entry_or_null(&tun->flows, struct dmsc_flow,
					     tun_node);
		if (f)
			dmsc_flow_unlink(tun, f);
		spin_unlock_bh(&tun->flow_lock);
		if (!f)
			break;
		dmsc_flow_finish(dn, f);
		if (!(++n % 1024))
			cond_resched();
	}
	/* Dead: none joined since, so the list is empty now. */
	WARN_ON_ONCE(kill && !list_empty(&tun->flows));
}

/*
 * Ageing, a slice at a time, as conntrack's gc does: a full walk of a
 * large table in one go would hold a worker (and, without preemption,
 * the cpu) for as long as it takes. A slice looks at DMSC_FLOW_GC_SLICE
 * entries in one RCU read section and requeues the work, which goes on
 * from where it stopped once the worker has let others run; a round that
 * ends waits for the next interval. A round costs what it did (every
 * entry is looked at once per timeout/2), but no run of the work holds
 * the cpu for more than a slice.
 */
#define DMSC_FLOW_GC_SLICE	1024

/* Remove the idle entries; a skipped one waits for the next round. */
static void dmsc_flow_gc(struct work_struct *work)
{
	struct dmsc_net *dn = container_of(to_delayed_work(work),
					   struct dmsc_net, flow_gc);
	struct rhashtable_iter *iter = &dn->flow_gc_iter;
	unsigned long timeout;
	struct dmsc_flow *f;
	unsigned int n = 0;

	if (!dn->flow_gc_walking) {
		rhashtable_walk_enter(&dn->flows, iter);
		dn->flow_gc_walking = true;
	}
	timeout = msecs_to_jiffies(READ_ONCE(dn->flow_timeout_ms));
	rhashtable_walk_start(iter);
	while (n < DMSC_FLOW_GC_SLICE && (f = rhashtable_walk_next(iter))) {
		if (IS_ERR(f)) {
			/* A resize restarted the walk: go on from the top. */
			if (PTR_ERR(f) == -EAGAIN)
				continue;
			break;
		}
		if (time_after(jiffies, READ_ONCE(f->last) + timeout) &&
		    dmsc_flow_claim(f))
			dmsc_flow_finish(dn, f);
		n++;
	}
	rhashtable_walk_stop(iter);

	if (n == DMSC_FLOW_GC_SLICE) {
		queue_delayed_work(system_power_efficient_wq, &dn->flow_gc, 0);
		return;
	}
	rhashtable_walk_exit(iter);
	dn->flow_gc_walking = false;

	/* A flow entered now queues the work again itself. */
	if (atomic_read(&dn->n_flows))
		queue_delayed_work(system_power_efficient_wq, &dn->flow_gc,
				   dmsc_flow_gc_interval(dn));
}

/*
 * DMSC_CMD_SET changed flow_timeout: the work may be queued for half the
 * old timeout, even with the table empty now (a new flow does not
 * shorten a pending delay); run it now, and it requeues itself with the
 * new one while there are flows.
 */
void dmsc_flow_timeout_changed(struct dmsc_net *dn)
{
	mod_delayed_work(system_power_efficient_wq, &dn->flow_gc, 0);
}

int dmsc_flow_flush_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct dmsc_net *dn = dmsc_pernet(genl_info_net(info));
	struct dmsc_tunnel *tun;
	unsigned long id;

	/* Every entry belongs to a configured tunnel: flush them each. */
	mutex_lock(&dn->lock);
	xa_for_each(&dn->tunnels, id, tun)
		dmsc_flow_purge_tunnel(dn, tun, false);
	mutex_unlock(&dn->lock);
	return 0;
}

struct dmsc_flow_dump {
	struct rhashtable_iter iter;
	u32 tunnel;		/* 0: all */
	u32 restarts;		/* the table resized under the walk */
};

int dmsc_flow_get_start(struct netlink_callback *cb)
{
	struct dmsc_net *dn = dmsc_pernet(sock_net(cb->skb->sk));
	struct nlattr **attrs = dmsc_dump_attrs(cb);
	struct nlattr *tb[DMSC_FLOW_A_MAX + 1];
	struct dmsc_flow_dump *ctx;
	u32 tunnel = 0;
	int err;

	if (attrs && attrs[DMSC_A_FLOW]) {
		err = nla_parse_nested(tb, DMSC_FLOW_A_MAX, attrs[DMSC_A_FLOW],
				       dmsc_flow_policy, cb->extack);
		if (err)
			return err;
		if (tb[DMSC_FLOW_A_TUNNEL])
			tunnel = nla_get_u32(tb[DMSC_FLOW_A_TUNNEL]);
	}
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	ctx->tunnel = tunnel;
	rhashtable_walk_enter(&dn->flows, &ctx->iter);
	cb->args[0] = (long)ctx;
	return 0;
}

int dmsc_flow_get_done(struct netlink_callback *cb)
{
	struct dmsc_flow_dump *ctx = (struct dmsc_flow_dump *)cb->args[0];

	if (ctx) {
		rhashtable_walk_exit(&ctx->iter);
		kfree(ctx);
	}
	return 0;
}

/* Under RCU: the entry and its tunnel stay until the section ends. */
static int dmsc_flow_fill(struct sk_buff *skb, const struct dmsc_flow *f,
			  struct netlink_callback *cb)
{
	const struct dmsc_tunnel_cfg *cfg = rcu_dereference(f->tun->cfg);
	u32 alen = f->key.family == AF_INET6 ? 16 : 4;
	u32 path = dmsc_tunnel_path(f->tun, cfg, f->bucket);
	struct nlattr *nest;
	void *hdr;

	if (path == DMSC_BACKUP_IDX)
		path = DMSC_FLOW_PATH_BACKUP;
	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			  &dmsc_genl_family, NLM_F_MULTI, DMSC_CMD_FLOW_GET);
	if (!hdr)
		return -EMSGSIZE;
	genl_dump_check_consistent(cb, hdr);
	nest = nla_nest_start(skb, DMSC_A_FLOW);
	if (!nest)
		goto cancel;
	if (nla_put_u8(skb, DMSC_FLOW_A_FAMILY, f->key.family) ||
	    nla_put(skb, DMSC_FLOW_A_SRC, alen, &f->key.src) ||
	    nla_put(skb, DMSC_FLOW_A_DST, alen, &f->key.dst) ||
	    nla_put_u16(skb, DMSC_FLOW_A_SPORT, ntohs(f->key.sport)) ||
	    nla_put_u32(skb, DMSC_FLOW_A_QPN, f->key.qpn) ||
	    nla_put_u32(skb, DMSC_FLOW_A_TUNNEL, f->key.tunnel) ||
	    nla_put_u32(skb, DMSC_FLOW_A_PATH, path) ||
	    nla_put_u64_64bit(skb, DMSC_FLOW_A_PACKETS,
			      atomic64_read(&f->packets), DMSC_FLOW_A_PAD) ||
	    nla_put_u64_64bit(skb, DMSC_FLOW_A_BYTES,
			      atomic64_read(&f->bytes), DMSC_FLOW_A_PAD) ||
	    nla_put_u32(skb, DMSC_FLOW_A_IDLE_MS,
			jiffies_to_msecs(jiffies - READ_ONCE(f->last))))
		goto cancel;
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	return 0;

cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/*
 * Resumes where the last message ended: the entry that did not fit is
 * still the walker's current one, and peek returns it again. A resize
 * during the dump, between two messages or within one, restarts the walk
 * from the top (rhashtable's rule), so entries already sent come again;
 * none that stayed in the table is lost, and every message after a
 * restart is flagged NLM_F_DUMP_INTR.
 */
int dmsc_flow_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct dmsc_flow_dump *ctx = (struct dmsc_flow_dump *)cb->args[0];
	struct dmsc_flow *f;

	/* A resize while we were away restarts the walk: count it too. */
	if (rhashtable_walk_start_check(&ctx->iter) == -EAGAIN)
		ctx->restarts++;
	f = rhashtable_walk_peek(&ctx->iter);
	while (f) {
		if (IS_ERR(f)) {
			if (PTR_ERR(f) != -EAGAIN)
				break;
			ctx->restarts++;
		} else {
			cb->seq = ctx->restarts + 1;	/* not 0 */
			if ((!ctx->tunnel || f->key.tunnel == ctx->tunnel) &&
			    dmsc_flow_fill(skb, f, cb))
				break;
		}
		f = rhashtable_walk_next(&ctx->iter);
	}
	rhashtable_walk_stop(&ctx->iter);
	return skb->len;
}

int dmsc_flow_net_init(struct dmsc_net *dn)
{
	atomic_set(&dn->n_flows, 0);
	dn->flow_gc_walking = false;
	INIT_DELAYED_WORK(&dn->flow_gc, dmsc_flow_gc);
	return rhashtable_init(&dn->flows, &dmsc_flow_params);
}

/* No hook, no request, no tunnel lock taker left: free without grace. */
static void dmsc_flow_free(void *ptr, void *arg)
{
	struct dmsc_flow *f = ptr;

	dmsc_flow_unlink(f->tun, f);
	dmsc_tunnel_put(f->tun);
	kmem_cache_free(dmsc_flow_cache, f);
}

void dmsc_flow_net_exit(struct dmsc_net *dn)
{
	cancel_delayed_work_sync(&dn->flow_gc);
	/* A round cut short between slices: leave the table's walkers. */
	if (dn->flow_gc_walking)
		rhashtable_walk_exit(&dn->flow_gc_iter);
	dn->flow_gc_walking = false;
	rhashtable_free_and_destroy(&dn->flows, dmsc_flow_free, NULL);
	atomic_set(&dn->n_flows, 0);
}

int __init dmsc_flow_cache_init(void)
{
	dmsc_flow_cache = KMEM_CACHE(dmsc_flow, SLAB_HWCACHE_ALIGN);
	return dmsc_flow_cache ? 0 : -ENOMEM;
}

/* After rcu_barrier(): every entry freed through call_rcu() is gone. */
void dmsc_flow_cache_exit(void)
{
	kmem_cache_destroy(dmsc_flow_cache);
}
