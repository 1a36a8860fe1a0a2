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
 * once, and per-path FLOWS counts are sums of per-bucket counts kept in
 * the tunnel.
 *
 * The hook inserts (GFP_ATOMIC) while the namespace holds fewer than
 * flow_limit entries; past it, every packet of a flow that could not be
 * entered counts once in flows_untracked. A delayed work removes entries
 * idle longer than flow_timeout_ms, every half timeout, while the table
 * is not empty. Removal is by rhashtable_remove_fast(): whoever removes
 * an entry first (ageing, flush, tunnel deletion) drops the counts and
 * frees it after a grace period.
 */

#include <linux/rhashtable.h>
#include <linux/slab.h>
#include <net/genetlink.h>

#include "dmsc.h"

struct dmsc_flow {
	struct rhash_head node;
	struct dmsc_flow_key key;
	struct dmsc_tunnel *tun;
	u32 bucket;
	unsigned long last;	/* jiffies of the last packet */
	atomic64_t packets;
	atomic64_t bytes;
	struct rcu_head rcu;
};

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

static void dmsc_flow_untracked(struct dmsc_net *dn)
{
	dmsc_stats_inc(dn, flows_untracked, 1);
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
	/* Reserve a place first, so that the limit is never passed. */
	if (atomic_inc_return(&dn->n_flows) > limit)
		goto untracked;
	f = kmalloc(sizeof(*f), GFP_ATOMIC | __GFP_NOWARN);
	if (!f)
		goto untracked;
	f->key = *key;
	f->tun = tun;
	f->bucket = bucket;
	f->last = jiffies;
	atomic64_set(&f->packets, 1);
	atomic64_set(&f->bytes, len);
	/* Counted before it can be found, so a remover can uncount it. */
	atomic_inc(&tun->bucket_flows[bucket]);

	old = rhashtable_lookup_get_insert_fast(&dn->flows, &f->node,
						dmsc_flow_params);
	if (likely(!old)) {
		queue_delayed_work(system_power_efficient_wq, &dn->flow_gc,
				   dmsc_flow_gc_interval(dn));
		return;
	}
	atomic_dec(&tun->bucket_flows[bucket]);
	kfree(f);
	if (!IS_ERR(old)) {
		/* Another cpu entered the same flow first. */
		atomic_dec(&dn->n_flows);
		dmsc_flow_hit(old, len);
		return;
	}
untracked:
	atomic_dec(&dn->n_flows);
	dmsc_flow_untracked(dn);
}

static void dmsc_flow_remove(struct dmsc_net *dn, struct dmsc_flow *f)
{
	if (rhashtable_remove_fast(&dn->flows, &f->node, dmsc_flow_params))
		return;		/* someone else was first */
	atomic_dec(&f->tun->bucket_flows[f->bucket]);
	atomic_dec(&dn->n_flows);
	kfree_rcu(f, rcu);
}

/* Remove the entries @pred picks; process context. */
static void dmsc_flow_walk(struct dmsc_net *dn,
			   bool (*pred)(const struct dmsc_flow *f,
					const void *arg),
			   const void *arg)
{
	struct rhashtable_iter iter;
	struct dmsc_flow *f;
	unsigned int n = 0;

	rhashtable_walk_enter(&dn->flows, &iter);
	rhashtable_walk_start(&iter);
	while ((f = rhashtable_walk_next(&iter))) {
		if (IS_ERR(f)) {
			if (PTR_ERR(f) == -EAGAIN)
				continue;
			break;
		}
		if (pred(f, arg))
			dmsc_flow_remove(dn, f);
		if (!(++n % 1024)) {
			rhashtable_walk_stop(&iter);
			cond_resched();
			rhashtable_walk_start(&iter);
		}
	}
	rhashtable_walk_stop(&iter);
	rhashtable_walk_exit(&iter);
}

static bool dmsc_flow_idle(const struct dmsc_flow *f, const void *arg)
{
	const unsigned long *timeout = arg;

	return time_after(jiffies, READ_ONCE(f->last) + *timeout);
}

static bool dmsc_flow_any(const struct dmsc_flow *f, const void *arg)
{
	return true;
}

static bool dmsc_flow_of(const struct dmsc_flow *f, const void *arg)
{
	return f->tun == arg;
}

static void dmsc_flow_gc(struct work_struct *work)
{
	struct dmsc_net *dn = container_of(to_delayed_work(work),
					   struct dmsc_net, flow_gc);
	unsigned long timeout;

	timeout = msecs_to_jiffies(READ_ONCE(dn->flow_timeout_ms));
	dmsc_flow_walk(dn, dmsc_flow_idle, &timeout);
	/* A flow entered now queues the work again itself. */
	if (atomic_read(&dn->n_flows))
		queue_delayed_work(system_power_efficient_wq, &dn->flow_gc,
				   dmsc_flow_gc_interval(dn));
}

/*
 * DMSC_CMD_SET changed flow_timeout: the work may be queued for half the
 * old timeout; run it now, and it requeues itself with the new one.
 */
void dmsc_flow_timeout_changed(struct dmsc_net *dn)
{
	if (atomic_read(&dn->n_flows))
		mod_delayed_work(system_power_efficient_wq, &dn->flow_gc, 0);
}

/* Under genl_mutex, once no hook can reach @tun any more. */
void dmsc_flow_purge_tunnel(struct dmsc_net *dn, struct dmsc_tunnel *tun)
{
	dmsc_flow_walk(dn, dmsc_flow_of, tun);
}

int dmsc_flow_flush_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct dmsc_net *dn = dmsc_pernet(genl_info_net(info));

	dmsc_flow_walk(dn, dmsc_flow_any, NULL);
	return 0;
}

struct dmsc_flow_dump {
	struct rhashtable_iter iter;
	u32 tunnel;		/* 0: all */
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

static int dmsc_flow_fill(struct sk_buff *skb, const struct dmsc_flow *f,
			  u32 portid, u32 seq)
{
	const struct dmsc_tunnel_cfg *cfg = dmsc_dereference(f->tun->cfg);
	u32 alen = f->key.family == AF_INET6 ? 16 : 4;
	u32 path = dmsc_tunnel_path(f->tun, cfg, f->bucket);
	struct nlattr *nest;
	void *hdr;

	if (path == DMSC_BACKUP_IDX)
		path = DMSC_FLOW_PATH_BACKUP;
	hdr = genlmsg_put(skb, portid, seq, &dmsc_genl_family, NLM_F_MULTI,
			  DMSC_CMD_FLOW_GET);
	if (!hdr)
		return -EMSGSIZE;
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
 * between two messages restarts the walk (rhashtable's rule), so a dump
 * may repeat entries then; it never loses one that stayed in the table.
 */
int dmsc_flow_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct dmsc_flow_dump *ctx = (struct dmsc_flow_dump *)cb->args[0];
	struct dmsc_flow *f;

	rhashtable_walk_start(&ctx->iter);
	f = rhashtable_walk_peek(&ctx->iter);
	while (f) {
		if (IS_ERR(f)) {
			if (PTR_ERR(f) != -EAGAIN)
				break;
		} else if ((!ctx->tunnel || f->key.tunnel == ctx->tunnel) &&
			   dmsc_flow_fill(skb, f, NETLINK_CB(cb->skb).portid,
					  cb->nlh->nlmsg_seq)) {
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
	INIT_DELAYED_WORK(&dn->flow_gc, dmsc_flow_gc);
	return rhashtable_init(&dn->flows, &dmsc_flow_params);
}

static void dmsc_flow_free(void *ptr, void *arg)
{
	kfree(ptr);
}

/* The hook is gone and no request can come: free without grace. */
void dmsc_flow_net_exit(struct dmsc_net *dn)
{
	cancel_delayed_work_sync(&dn->flow_gc);
	rhashtable_free_and_destroy(&dn->flows, dmsc_flow_free, NULL);
	atomic_set(&dn->n_flows, 0);
}
