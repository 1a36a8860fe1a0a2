// SPDX-License-Identifier: GPL-2.0
/*
 * Tunnels: a source address, a mode, 1..DMSC_MAX_PATHS weighted segment
 * lists and an optional backup list, kept per namespace in an xarray by
 * id.
 *
 * What the hook reads of a tunnel is one immutable struct
 * dmsc_tunnel_cfg, replaced whole under RCU by TUNNEL_SET: a change is
 * built completely, allocations included, before it is published, so a
 * failed request changes nothing. The active list (primary or backup)
 * and the administrative state are single bytes beside it, so switching
 * to the backup moves every flow at once and needs no allocation (the
 * credit heartbeat will switch from softirq). Counters live in the
 * tunnel, not in the configuration, and survive changes.
 *
 * Path selection: a flow hashes into one of DMSC_BUCKETS buckets, each
 * naming a path; buckets are dealt in proportion to the weights, by
 * largest remainder. A new configuration keeps every bucket whose path
 * index still exists and has quota left and deals only the rest, so a
 * change moves as few flows as it can. A path is known by its index.
 */

#include <linux/slab.h>
#include <net/genetlink.h>
#include <net/ipv6.h>

#include "dmsc.h"

/* The configuration a request asks for, before it is built. */
struct dmsc_path_spec {
	u32 weight;
	u32 nsegs;
	struct in6_addr segs[DMSC_MAX_SEGS];
};

struct dmsc_tunnel_spec {
	struct in6_addr src;
	u8 mode;
	u32 n_paths;
	bool has_backup;
	struct dmsc_path_spec paths[DMSC_MAX_PATHS + 1];
};

/* Under dn->lock, or RCU for as long as the section lasts. */
struct dmsc_tunnel *dmsc_tunnel_lookup(struct dmsc_net *dn, u32 id)
{
	return xa_load(&dn->tunnels, id);
}

void dmsc_tunnel_count(struct dmsc_tunnel *tun, u32 idx, unsigned int len)
{
	struct dmsc_tunnel_pcpu *s = get_cpu_ptr(tun->stats);
	unsigned long flags;

	flags = u64_stats_update_begin_irqsave(&s->syncp);
	u64_stats_inc(&s->packets[idx]);
	u64_stats_add(&s->bytes[idx], len);
	u64_stats_update_end_irqrestore(&s->syncp, flags);
	put_cpu_ptr(tun->stats);
}

static void dmsc_tunnel_read_stats(struct dmsc_tunnel *tun, u64 *packets,
				   u64 *bytes)
{
	int cpu, i;

	memset(packets, 0, sizeof(u64) * (DMSC_MAX_PATHS + 1));
	memset(bytes, 0, sizeof(u64) * (DMSC_MAX_PATHS + 1));
	for_each_possible_cpu(cpu) {
		const struct dmsc_tunnel_pcpu *s = per_cpu_ptr(tun->stats, cpu);
		u64 p[DMSC_MAX_PATHS + 1], b[DMSC_MAX_PATHS + 1];
		unsigned int start;

		do {
			start = u64_stats_fetch_begin(&s->syncp);
			for (i = 0; i <= DMSC_MAX_PATHS; i++) {
				p[i] = u64_stats_read(&s->packets[i]);
				b[i] = u64_stats_read(&s->bytes[i]);
			}
		} while (u64_stats_fetch_retry(&s->syncp, start));
		for (i = 0; i <= DMSC_MAX_PATHS; i++) {
			packets[i] += p[i];
			bytes[i] += b[i];
		}
	}
}

/* Flows in the flow table per path index, as the hook sends them now. */
static void dmsc_tunnel_read_flows(struct dmsc_tunnel *tun,
				   const struct dmsc_tunnel_cfg *cfg, u32 *flows)
{
	u32 b;

	memset(flows, 0, sizeof(u32) * (DMSC_MAX_PATHS + 1));
	spin_lock_bh(&tun->flow_lock);
	for (b = 0; b < DMSC_BUCKETS; b++)
		flows[dmsc_tunnel_path(tun, cfg, b)] += tun->bucket_flows[b];
	spin_unlock_bh(&tun->flow_lock);
}

/*
 * Deal the buckets: quotas by largest remainder (ties to the lower
 * index), keep what @old gave to a path that still has quota, then hand
 * out the rest round robin so that paths interleave.
 */
static void dmsc_buckets_deal(u8 *buckets, const u8 *old,
			      const struct dmsc_tunnel_spec *s)
{
	u32 quota[DMSC_MAX_PATHS], rem[DMSC_MAX_PATHS];
	u32 used[DMSC_MAX_PATHS] = {};
	bool extra[DMSC_MAX_PATHS] = {};
	u32 n = s->n_paths, total = 0, dealt = 0, i, b;

	for (i = 0; i < n; i++)
		total += s->paths[i].weight;
	for (i = 0; i < n; i++) {
		quota[i] = DMSC_BUCKETS * s->paths[i].weight / total;
		rem[i] = DMSC_BUCKETS * s->paths[i].weight % total;
		dealt += quota[i];
	}
	while (dealt < DMSC_BUCKETS) {
		u32 best = n;

		for (i = 0; i < n; i++)
			if (!extra[i] && (best == n || rem[i] > rem[best]))
				best = i;
		if (WARN_ON_ONCE(best == n))
			best = 0;
		extra[best] = true;
		quota[best]++;
		dealt++;
	}

	for (b = 0; b < DMSC_BUCKETS; b++) {
		u8 p = old ? old[b] : U8_MAX;

		if (p < n && used[p] < quota[p]) {
			buckets[b] = p;
			used[p]++;
		} else {
			buckets[b] = U8_MAX;
		}
	}
	i = 0;
	for (b = 0; b < DMSC_BUCKETS; b++) {
		if (buckets[b] != U8_MAX)
			continue;
		while (used[i] >= quota[i])
			i = (i + 1) % n;
		buckets[b] = i;
		used[i]++;
		i = (i + 1) % n;
	}
}

static void dmsc_cfg_free(struct dmsc_tunnel_cfg *cfg)
{
	u32 i;

	for (i = 0; i < cfg->n_paths; i++)
		dmsc_srv6_path_release(&cfg->paths[i]);
	if (cfg->has_backup)
		dmsc_srv6_path_release(&cfg->paths[DMSC_BACKUP_IDX]);
	kfree(cfg);
}

static void dmsc_cfg_free_rcu(struct rcu_head *head)
{
	dmsc_cfg_free(container_of(head, struct dmsc_tunnel_cfg, rcu));
}

static struct dmsc_tunnel_cfg *
dmsc_cfg_build(const struct dmsc_tunnel_spec *s,
	       const struct dmsc_tunnel_cfg *old, struct netlink_ext_ack *extack)
{
	const struct dmsc_path_spec *ps;
	struct dmsc_tunnel_cfg *cfg;
	int err;
	u32 i;

	cfg = kzalloc(sizeof(*cfg), GFP_KERNEL_ACCOUNT);
	if (!cfg) {
		NL_SET_ERR_MSG(extack, "out of memory for the tunnel configuration");
		return ERR_PTR(-ENOMEM);
	}
	cfg->src = s->src;
	cfg->mode = s->mode;
	for (i = 0; i < s->n_paths; i++) {
		ps = &s->paths[i];
		err = dmsc_srv6_path_init(&cfg->paths[i], s->mode, ps->segs,
					  ps->nsegs, ps->weight);
		if (err)
			goto fail;
		cfg->n_paths = i + 1;
	}
	if (s->has_backup) {
		ps = &s->paths[DMSC_BACKUP_IDX];
		err = dmsc_srv6_path_init(&cfg->paths[DMSC_BACKUP_IDX], s->mode,
					  ps->segs, ps->nsegs, ps->weight);
		if (err)
			goto fail;
		cfg->has_backup = true;
	}
	dmsc_buckets_deal(cfg->buckets, old ? old->buckets : NULL, s);
	return cfg;

fail:
	dmsc_cfg_free(cfg);
	if (err == -ENOMEM)
		NL_SET_ERR_MSG(extack, "out of memory for a segment list");
	else
		NL_SET_ERR_MSG(extack, "segment list cannot be built");
	return ERR_PTR(err);
}

static void dmsc_spec_from_cfg(struct dmsc_tunnel_spec *s,
			       const struct dmsc_tunnel_cfg *cfg)
{
	u32 i;

	s->src = cfg->src;
	s->mode = cfg->mode;
	s->n_paths = cfg->n_paths;
	s->has_backup = cfg->has_backup;
	for (i = 0; i <= DMSC_MAX_PATHS; i++) {
		const struct dmsc_path *p = &cfg->paths[i];

		if (i >= cfg->n_paths && (i != DMSC_BACKUP_IDX ||
					  !cfg->has_backup))
			continue;
		s->paths[i].weight = p->weight;
		s->paths[i].nsegs = p->nsegs;
		memcpy(s->paths[i].segs, p->segs, p->nsegs * sizeof(p->segs[0]));
	}
}

/*
 * One PATH or BACKUP nest. A BACKUP without SEGS means "no backup"
 * (nsegs 0); a PATH must have them.
 */
static int dmsc_path_parse(const struct nlattr *attr,
			   struct dmsc_path_spec *ps, bool backup,
			   struct netlink_ext_ack *extack)
{
	struct nlattr *tb[DMSC_PATH_A_MAX + 1];
	const char *why;
	u32 i, len;
	int err;

	err = nla_parse_nested(tb, DMSC_PATH_A_MAX, attr, dmsc_path_policy,
			       extack);
	if (err)
		return err;

	ps->weight = tb[DMSC_PATH_A_WEIGHT] ?
		     nla_get_u32(tb[DMSC_PATH_A_WEIGHT]) : 1;
	if (!tb[DMSC_PATH_A_SEGS]) {
		if (backup) {
			ps->nsegs = 0;
			return 0;
		}
		NL_SET_ERR_ATTR_MISS(extack, attr, DMSC_PATH_A_SEGS);
		NL_SET_ERR_MSG(extack, "segment list missing");
		return -EINVAL;
	}

	len = nla_len(tb[DMSC_PATH_A_SEGS]);
	if (!len || len % sizeof(struct in6_addr)) {
		NL_SET_ERR_MSG_FMT(extack,
				   "segment list of %u bytes: not a non-zero multiple of 16",
				   len);
		NL_SET_BAD_ATTR(extack, tb[DMSC_PATH_A_SEGS]);
		return -EINVAL;
	}
	ps->nsegs = len / sizeof(struct in6_addr);
	if (ps->nsegs > DMSC_MAX_SEGS) {
		NL_SET_ERR_MSG_FMT(extack, "too many segments: %u > %u",
				   ps->nsegs, DMSC_MAX_SEGS);
		NL_SET_BAD_ATTR(extack, tb[DMSC_PATH_A_SEGS]);
		return -EINVAL;
	}
	memcpy(ps->segs, nla_data(tb[DMSC_PATH_A_SEGS]), len);
	for (i = 0; i < ps->nsegs; i++) {
		why = dmsc_sid_invalid(&ps->segs[i]);
		if (why) {
			NL_SET_ERR_MSG_FMT(extack, "segment %u (%pI6c) is %s",
					   i + 1, &ps->segs[i], why);
			NL_SET_BAD_ATTR(extack, tb[DMSC_PATH_A_SEGS]);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * Apply the attributes of a TUNNEL nest to @s; *@changed tells whether
 * the configuration (not just the state bytes) is asked to change.
 */
static int dmsc_tunnel_parse(struct nlattr *nest, struct nlattr **tb,
			     struct dmsc_tunnel_spec *s, bool *changed,
			     struct netlink_ext_ack *extack)
{
	struct dmsc_path_spec *ps;
	struct nlattr *a;
	u32 n = 0;
	int rem, err;

	*changed = false;
	if (tb[DMSC_TUNNEL_A_SRC]) {
		s->src = nla_get_in6_addr(tb[DMSC_TUNNEL_A_SRC]);
		if (ipv6_addr_any(&s->src) ||
		    ipv6_addr_is_multicast(&s->src)) {
			NL_SET_ERR_MSG_ATTR(extack, tb[DMSC_TUNNEL_A_SRC],
					    "source must be a unicast address");
			return -EINVAL;
		}
		*changed = true;
	}
	if (tb[DMSC_TUNNEL_A_MODE]) {
		s->mode = nla_get_u8(tb[DMSC_TUNNEL_A_MODE]);
		*changed = true;
	}

	/* PATH repeats: the parsed table holds only the last one. */
	nla_for_each_nested(a, nest, rem) {
		if (nla_type(a) != DMSC_TUNNEL_A_PATH)
			continue;
		if (n == DMSC_MAX_PATHS) {
			NL_SET_ERR_MSG_FMT(extack, "too many paths: more than %u",
					   DMSC_MAX_PATHS);
			NL_SET_BAD_ATTR(extack, a);
			return -EINVAL;
		}
		ps = &s->paths[n];
		err = dmsc_path_parse(a, ps, false, extack);
		if (err)
			return err;
		n++;
	}
	if (n) {
		s->n_paths = n;
		*changed = true;
	}

	if (tb[DMSC_TUNNEL_A_BACKUP]) {
		ps = &s->paths[DMSC_BACKUP_IDX];
		err = dmsc_path_parse(tb[DMSC_TUNNEL_A_BACKUP], ps, true,
				      extack);
		if (err)
			return err;
		s->has_backup = ps->nsegs > 0;
		*changed = true;
	}
	return 0;
}

static int dmsc_put_path(struct sk_buff *skb, int type,
			 const struct dmsc_path *p, u32 index, u64 packets,
			 u64 bytes, u32 flows)
{
	struct nlattr *nest = nla_nest_start(skb, type);

	if (!nest)
		return -EMSGSIZE;
	if (nla_put(skb, DMSC_PATH_A_SEGS, p->nsegs * sizeof(p->segs[0]),
		    p->segs) ||
	    nla_put_u32(skb, DMSC_PATH_A_WEIGHT, p->weight) ||
	    nla_put_u32(skb, DMSC_PATH_A_INDEX, index) ||
	    nla_put_u64_64bit(skb, DMSC_PATH_A_PACKETS, packets,
			      DMSC_PATH_A_PAD) ||
	    nla_put_u64_64bit(skb, DMSC_PATH_A_BYTES, bytes,
			      DMSC_PATH_A_PAD) ||
	    nla_put_u32(skb, DMSC_PATH_A_FLOWS, flows)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* Under dn->lock; @cb for a dump, NULL for a reply. */
static int dmsc_tunnel_fill(struct sk_buff *skb, struct dmsc_net *dn,
			    struct dmsc_tunnel *tun, u32 portid, u32 seq,
			    struct netlink_callback *cb)
{
	const struct dmsc_tunnel_cfg *cfg = dmsc_dereference(dn, tun->cfg);
	u64 packets[DMSC_MAX_PATHS + 1], bytes[DMSC_MAX_PATHS + 1];
	u64 tot_packets = 0, tot_bytes = 0;
	u32 flows[DMSC_MAX_PATHS + 1], tot_flows = 0, i;
	struct nlattr *nest;
	void *hdr;

	dmsc_tunnel_read_stats(tun, packets, bytes);
	dmsc_tunnel_read_flows(tun, cfg, flows);
	for (i = 0; i <= DMSC_MAX_PATHS; i++) {
		tot_packets += packets[i];
		tot_bytes += bytes[i];
		tot_flows += flows[i];
	}

	hdr = genlmsg_put(skb, portid, seq, &dmsc_genl_family,
			  cb ? NLM_F_MULTI : 0, DMSC_CMD_TUNNEL_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (cb)
		genl_dump_check_consistent(cb, hdr);
	nest = nla_nest_start(skb, DMSC_A_TUNNEL);
	if (!nest)
		goto cancel;
	if (nla_put_u32(skb, DMSC_TUNNEL_A_ID, tun->id) ||
	    nla_put_in6_addr(skb, DMSC_TUNNEL_A_SRC, &cfg->src) ||
	    nla_put_u8(skb, DMSC_TUNNEL_A_MODE, cfg->mode) ||
	    nla_put_u8(skb, DMSC_TUNNEL_A_ACTIVE, dmsc_tunnel_active(tun)) ||
	    nla_put_u8(skb, DMSC_TUNNEL_A_ADMIN_UP,
		       READ_ONCE(tun->admin_up)) ||
	    nla_put_u64_64bit(skb, DMSC_TUNNEL_A_PACKETS, tot_packets,
			      DMSC_TUNNEL_A_PAD) ||
	    nla_put_u64_64bit(skb, DMSC_TUNNEL_A_BYTES, tot_bytes,
			      DMSC_TUNNEL_A_PAD) ||
	    nla_put_u32(skb, DMSC_TUNNEL_A_FLOWS, tot_flows) ||
	    nla_put_u64_64bit(skb, DMSC_TUNNEL_A_SWITCHES,
			      atomic64_read(&tun->switches),
			      DMSC_TUNNEL_A_PAD))
		goto cancel;
	for (i = 0; i < cfg->n_paths; i++)
		if (dmsc_put_path(skb, DMSC_TUNNEL_A_PATH, &cfg->paths[i], i,
				  packets[i], bytes[i], flows[i]))
			goto cancel;
	if (cfg->has_backup &&
	    dmsc_put_path(skb, DMSC_TUNNEL_A_BACKUP,
			  &cfg->paths[DMSC_BACKUP_IDX], DMSC_FLOW_PATH_BACKUP,
			  packets[DMSC_BACKUP_IDX], bytes[DMSC_BACKUP_IDX],
			  flows[DMSC_BACKUP_IDX]))
		goto cancel;
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	return 0;

cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/* Room for a full tunnel reply: every path at its longest. */
static size_t dmsc_tunnel_msg_size(void)
{
	size_t path = nla_total_size(0) +
		      nla_total_size(DMSC_MAX_SEGS * sizeof(struct in6_addr)) +
		      3 * nla_total_size(sizeof(u32)) +
		      2 * nla_total_size_64bit(sizeof(u64));

	return nla_total_size(0) +		/* DMSC_A_TUNNEL */
	       nla_total_size(sizeof(u32)) +	/* ID */
	       nla_total_size(sizeof(struct in6_addr)) +
	       3 * nla_total_size(sizeof(u8)) +
	       3 * nla_total_size_64bit(sizeof(u64)) +
	       nla_total_size(sizeof(u32)) +	/* FLOWS */
	       (DMSC_MAX_PATHS + 1) * path;
}

static void dmsc_tunnel_notify(struct dmsc_net *dn, struct dmsc_tunnel *tun,
			       u8 active)
{
	struct sk_buff *msg;
	struct nlattr *nest;
	void *hdr;

	if (!genl_has_listeners(&dmsc_genl_family, dn->net, 0))
		return;
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &dmsc_genl_family, 0, DMSC_CMD_EVENT);
	if (!hdr)
		goto fail;
	if (nla_put_u32(msg, DMSC_A_EVENT,
			active == DMSC_ACTIVE_BACKUP ?
			DMSC_EVENT_TUNNEL_BACKUP : DMSC_EVENT_TUNNEL_PRIMARY))
		goto fail;
	nest = nla_nest_start(msg, DMSC_A_TUNNEL);
	if (!nest ||
	    nla_put_u32(msg, DMSC_TUNNEL_A_ID, tun->id) ||
	    nla_put_u8(msg, DMSC_TUNNEL_A_ACTIVE, active))
		goto fail;
	nla_nest_end(msg, nest);
	genlmsg_end(msg, hdr);
	dmsc_genl_notify(dn->net, msg);
	return;

fail:
	nlmsg_free(msg);
}

/*
 * Move every flow of @tun to the backup or back; under dn->lock. A move
 * to the backup made early (dmsc_tunnel_steer_backup) is counted and
 * told here, by its failover work; one undone before that (an operator's
 * switch to primary, meanwhile) was never told and is not.
 */
static void dmsc_tunnel_set_active(struct dmsc_net *dn,
				   struct dmsc_tunnel *tun, u8 active)
{
	u32 old = xchg(&tun->active, active);

	if (old == active)
		return;
	dmsc_session_forget_path(dn, tun->id, active == DMSC_ACTIVE_BACKUP);
	if (old == DMSC_ACTIVE_EARLY && active == DMSC_ACTIVE_PRIMARY)
		return;
	atomic64_inc(&tun->switches);
	dmsc_tunnel_notify(dn, tun, active);
}

/*
 * The next hop of tunnel @id's primary is lost (a cbfc qdisc fails flows
 * over, under its lock, or its failover work walks the sessions of a link
 * that went down, under dn->lock): steer new packets onto the backup now,
 * not into a dead link until the failover work has run. The work then
 * switches the tunnel under dn->lock (dmsc_tunnel_failover), which counts
 * the switch and sends its event, once, however many qdiscs moved it
 * early. Only from the primary, with a backup: a tunnel switched already
 * stays as it is. No lock: the hook reads the word once a packet and
 * falls back to the primary lists should a change have removed the
 * backup meanwhile (TUNNEL_SET checks for a backup before it builds, and
 * publishes after); the work then finds no backup and moves the tunnel
 * back. True when the tunnel is moved early now, by this call or before.
 */
bool dmsc_tunnel_steer_backup(struct dmsc_net *dn, u32 id)
{
	const struct dmsc_tunnel_cfg *cfg;
	struct dmsc_tunnel *tun;
	bool early = false;

	rcu_read_lock();
	tun = dmsc_tunnel_lookup(dn, id);
	cfg = tun ? rcu_dereference(tun->cfg) : NULL;
	if (cfg && cfg->has_backup) {
		cmpxchg(&tun->active, DMSC_ACTIVE_PRIMARY, DMSC_ACTIVE_EARLY);
		early = READ_ONCE(tun->active) == DMSC_ACTIVE_EARLY;
	}
	rcu_read_unlock();
	return early;
}

/* Does tunnel @id exist, with a backup list to move to? Any context. */
bool dmsc_tunnel_has_backup(struct dmsc_net *dn, u32 id)
{
	const struct dmsc_tunnel_cfg *cfg;
	struct dmsc_tunnel *tun;
	bool ret;

	rcu_read_lock();
	tun = dmsc_tunnel_lookup(dn, id);
	cfg = tun ? rcu_dereference(tun->cfg) : NULL;
	ret = cfg && cfg->has_backup;
	rcu_read_unlock();
	return ret;
}

/* Switch tunnel @id if it was moved early: counted, told. Under dn->lock. */
void dmsc_tunnel_switch_early(struct dmsc_net *dn, u32 id)
{
	struct dmsc_tunnel *tun = dmsc_tunnel_lookup(dn, id);

	if (tun && READ_ONCE(tun->active) == DMSC_ACTIVE_EARLY &&
	    dmsc_dereference(dn, tun->cfg)->has_backup) {
		dmsc_tunnel_set_active(dn, tun, DMSC_ACTIVE_BACKUP);
		dmsc_changed(dn);
	}
}

/*
 * A cbfc qdisc declared the next hop of a flow of tunnel @id failed (its
 * heartbeat, or its link went down): the tunnel moves to its backup, as
 * TUNNEL_SET active backup does, with its event. Recovery is the
 * operator's (tunnel switch). Returns false when there is no such tunnel
 * or it has no backup.
 */
bool dmsc_tunnel_failover(struct dmsc_net *dn, u32 id)
{
	struct dmsc_tunnel *tun;
	bool ok = false;

	mutex_lock(&dn->lock);
	tun = dmsc_tunnel_lookup(dn, id);
	if (tun && dmsc_dereference(dn, tun->cfg)->has_backup) {
		dmsc_tunnel_set_active(dn, tun, DMSC_ACTIVE_BACKUP);
		dmsc_changed(dn);
		ok = true;
	} else if (tun) {
		/* The backup went before the switch: back to the primary. */
		cmpxchg(&tun->active, DMSC_ACTIVE_EARLY, DMSC_ACTIVE_PRIMARY);
	}
	mutex_unlock(&dn->lock);
	return ok;
}

static void dmsc_tunnel_free(struct dmsc_tunnel *tun)
{
	WARN_ON_ONCE(!list_empty(&tun->flows));
	dmsc_cfg_free(rcu_dereference_protected(tun->cfg, true));
	free_percpu(tun->stats);
	kfree(tun->bucket_flows);
	kfree(tun);
}

static void dmsc_tunnel_free_rcu(struct rcu_head *head)
{
	dmsc_tunnel_free(container_of(head, struct dmsc_tunnel, rcu));
}

/* Drop a reference; any context. */
void dmsc_tunnel_put(struct dmsc_tunnel *tun)
{
	if (refcount_dec_and_test(&tun->refcnt))
		call_rcu(&tun->rcu, dmsc_tunnel_free_rcu);
}

/* The TUNNEL nest of a request, parsed, and its id. */
static int dmsc_tunnel_attrs(struct genl_info *info, struct nlattr **tb,
			     u32 *id)
{
	int err;

	if (GENL_REQ_ATTR_CHECK(info, DMSC_A_TUNNEL))
		return -EINVAL;
	err = nla_parse_nested(tb, DMSC_TUNNEL_A_MAX,
			       info->attrs[DMSC_A_TUNNEL], dmsc_tunnel_policy,
			       info->extack);
	if (err)
		return err;
	if (!tb[DMSC_TUNNEL_A_ID]) {
		NL_SET_ERR_ATTR_MISS(info->extack, info->attrs[DMSC_A_TUNNEL],
				     DMSC_TUNNEL_A_ID);
		NL_SET_ERR_MSG(info->extack, "tunnel id missing");
		return -EINVAL;
	}
	*id = nla_get_u32(tb[DMSC_TUNNEL_A_ID]);
	return 0;
}

static struct dmsc_tunnel *dmsc_tunnel_find(struct dmsc_net *dn,
					    struct nlattr **tb, u32 id,
					    struct netlink_ext_ack *extack)
{
	struct dmsc_tunnel *tun = dmsc_tunnel_lookup(dn, id);

	if (!tun) {
		NL_SET_ERR_MSG_FMT(extack, "tunnel %u does not exist", id);
		NL_SET_BAD_ATTR(extack, tb[DMSC_TUNNEL_A_ID]);
	}
	return tun;
}

static int dmsc_tunnel_new(struct dmsc_net *dn, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr *tb[DMSC_TUNNEL_A_MAX + 1];
	struct dmsc_tunnel_spec *s;
	struct dmsc_tunnel_cfg *cfg;
	struct dmsc_tunnel *tun;
	bool changed;
	u8 active;
	u32 id;
	int err;

	err = dmsc_tunnel_attrs(info, tb, &id);
	if (err)
		return err;
	if (dmsc_tunnel_lookup(dn, id)) {
		NL_SET_ERR_MSG_FMT(extack, "tunnel %u exists", id);
		NL_SET_BAD_ATTR(extack, tb[DMSC_TUNNEL_A_ID]);
		return -EEXIST;
	}
	if (!tb[DMSC_TUNNEL_A_SRC]) {
		NL_SET_ERR_ATTR_MISS(extack, info->attrs[DMSC_A_TUNNEL],
				     DMSC_TUNNEL_A_SRC);
		NL_SET_ERR_MSG(extack, "tunnel source missing");
		return -EINVAL;
	}

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s) {
		NL_SET_ERR_MSG(extack, "out of memory for the request");
		return -ENOMEM;
	}
	s->mode = DMSC_MODE_ENCAP;
	err = dmsc_tunnel_parse(info->attrs[DMSC_A_TUNNEL], tb, s, &changed,
				extack);
	if (err)
		goto out;
	if (!s->n_paths) {
		NL_SET_ERR_ATTR_MISS(extack, info->attrs[DMSC_A_TUNNEL],
				     DMSC_TUNNEL_A_PATH);
		NL_SET_ERR_MSG(extack, "a tunnel needs at least one path");
		err = -EINVAL;
		goto out;
	}
	active = tb[DMSC_TUNNEL_A_ACTIVE] ?
		 nla_get_u8(tb[DMSC_TUNNEL_A_ACTIVE]) : DMSC_ACTIVE_PRIMARY;
	if (active == DMSC_ACTIVE_BACKUP && !s->has_backup) {
		NL_SET_ERR_MSG_ATTR(extack, tb[DMSC_TUNNEL_A_ACTIVE],
				    "tunnel has no backup path");
		err = -EINVAL;
		goto out;
	}

	err = -ENOMEM;
	tun = kzalloc(sizeof(*tun), GFP_KERNEL_ACCOUNT);
	if (!tun)
		goto nomem;
	tun->bucket_flows = kcalloc(DMSC_BUCKETS, sizeof(u32),
				    GFP_KERNEL_ACCOUNT);
	if (!tun->bucket_flows)
		goto free_tun;
	tun->stats = netdev_alloc_pcpu_stats(struct dmsc_tunnel_pcpu);
	if (!tun->stats)
		goto free_tun;
	cfg = dmsc_cfg_build(s, NULL, extack);
	if (IS_ERR(cfg)) {
		err = PTR_ERR(cfg);
		goto free_stats;
	}
	tun->id = id;
	tun->active = active;
	tun->admin_up = tb[DMSC_TUNNEL_A_ADMIN_UP] ?
			nla_get_u8(tb[DMSC_TUNNEL_A_ADMIN_UP]) : 1;
	refcount_set(&tun->refcnt, 1);		/* the xarray's */
	spin_lock_init(&tun->flow_lock);
	INIT_LIST_HEAD(&tun->flows);
	RCU_INIT_POINTER(tun->cfg, cfg);

	err = xa_insert(&dn->tunnels, id, tun, GFP_KERNEL_ACCOUNT);
	if (err) {
		dmsc_cfg_free(cfg);
		free_percpu(tun->stats);
		kfree(tun->bucket_flows);
		kfree(tun);
		goto nomem;
	}
	WRITE_ONCE(dn->n_tunnels, dn->n_tunnels + 1);
	dmsc_changed(dn);
	goto out;

nomem:
	NL_SET_ERR_MSG(extack, "out of memory for the tunnel");
	goto out;

free_stats:
	free_percpu(tun->stats);
free_tun:
	kfree(tun->bucket_flows);
	kfree(tun);
	/* dmsc_cfg_build() said what it could not build. */
	if (err == -ENOMEM && !extack->_msg)
		goto nomem;
out:
	kfree(s);
	return err;
}

int dmsc_tunnel_new_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct dmsc_net *dn = dmsc_pernet(genl_info_net(info));
	int err;

	mutex_lock(&dn->lock);
	err = dmsc_tunnel_new(dn, info);
	mutex_unlock(&dn->lock);
	return err;
}

static int dmsc_tunnel_set(struct dmsc_net *dn, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct dmsc_tunnel_cfg *old, *cfg = NULL;
	struct nlattr *tb[DMSC_TUNNEL_A_MAX + 1];
	struct dmsc_tunnel_spec *s;
	struct dmsc_tunnel *tun;
	bool changed;
	u8 active;
	u32 id;
	int err;

	err = dmsc_tunnel_attrs(info, tb, &id);
	if (err)
		return err;
	tun = dmsc_tunnel_find(dn, tb, id, extack);
	if (!tun)
		return -ENOENT;
	old = dmsc_dereference(dn, tun->cfg);

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s) {
		NL_SET_ERR_MSG(extack, "out of memory for the request");
		return -ENOMEM;
	}
	dmsc_spec_from_cfg(s, old);
	err = dmsc_tunnel_parse(info->attrs[DMSC_A_TUNNEL], tb, s, &changed,
				extack);
	if (err)
		goto out;
	if (!changed && !tb[DMSC_TUNNEL_A_ACTIVE] &&
	    !tb[DMSC_TUNNEL_A_ADMIN_UP]) {
		NL_SET_ERR_MSG(extack, "nothing to change");
		err = -EINVAL;
		goto out;
	}
	active = tb[DMSC_TUNNEL_A_ACTIVE] ?
		 nla_get_u8(tb[DMSC_TUNNEL_A_ACTIVE]) : dmsc_tunnel_active(tun);
	if (active == DMSC_ACTIVE_BACKUP && !s->has_backup) {
		err = -EINVAL;
		if (tb[DMSC_TUNNEL_A_ACTIVE])
			NL_SET_ERR_MSG_ATTR(extack, tb[DMSC_TUNNEL_A_ACTIVE],
					    "tunnel has no backup path");
		else
			NL_SET_ERR_MSG_ATTR(extack, tb[DMSC_TUNNEL_A_BACKUP],
					    "tunnel is on its backup: switch it to primary first");
		goto out;
	}

	if (changed) {
		cfg = dmsc_cfg_build(s, old, extack);
		if (IS_ERR(cfg)) {
			err = PTR_ERR(cfg);
			goto out;
		}
	}

	/*
	 * Nothing fails from here. Publish in the order that never shows
	 * the hook an active backup without a backup list (it would fall
	 * back to the primary lists anyway). Only when asked: a move made
	 * meanwhile by a failover (dmsc_tunnel_steer_backup) stands.
	 */
	if (tb[DMSC_TUNNEL_A_ACTIVE] && active == DMSC_ACTIVE_PRIMARY)
		dmsc_tunnel_set_active(dn, tun, active);
	if (cfg) {
		rcu_assign_pointer(tun->cfg, cfg);
		call_rcu(&old->rcu, dmsc_cfg_free_rcu);
	}
	if (tb[DMSC_TUNNEL_A_ACTIVE] && active == DMSC_ACTIVE_BACKUP)
		dmsc_tunnel_set_active(dn, tun, active);
	if (tb[DMSC_TUNNEL_A_ADMIN_UP])
		WRITE_ONCE(tun->admin_up,
			   nla_get_u8(tb[DMSC_TUNNEL_A_ADMIN_UP]));
	dmsc_changed(dn);
out:
	kfree(s);
	return err;
}

int dmsc_tunnel_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct dmsc_net *dn = dmsc_pernet(genl_info_net(info));
	int err;

	mutex_lock(&dn->lock);
	err = dmsc_tunnel_set(dn, info);
	mutex_unlock(&dn->lock);
	return err;
}

static int dmsc_tunnel_del(struct dmsc_net *dn, struct genl_info *info)
{
	struct nlattr *tb[DMSC_TUNNEL_A_MAX + 1];
	struct dmsc_tunnel *tun;
	u32 id;
	int err;

	err = dmsc_tunnel_attrs(info, tb, &id);
	if (err)
		return err;
	tun = dmsc_tunnel_find(dn, tb, id, info->extack);
	if (!tun)
		return -ENOENT;
	if (tun->n_rules) {
		NL_SET_ERR_MSG_FMT(info->extack,
				   "tunnel %u is in use by %u rule%s", id,
				   tun->n_rules, tun->n_rules == 1 ? "" : "s");
		NL_SET_BAD_ATTR(info->extack, tb[DMSC_TUNNEL_A_ID]);
		return -EBUSY;
	}

	xa_erase(&dn->tunnels, id);
	WRITE_ONCE(dn->n_tunnels, dn->n_tunnels - 1);
	dmsc_changed(dn);
	/*
	 * No rule points here, but a hook may still run with a rule table
	 * that did, and enter a flow: the tunnel dies under its flow lock
	 * first, so none joins once its entries are removed. The last
	 * reference, the xarray's or a flow's freed after a grace period,
	 * frees it a grace period later.
	 */
	dmsc_flow_purge_tunnel(dn, tun, true);
	dmsc_tunnel_put(tun);
	return 0;
}

int dmsc_tunnel_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct dmsc_net *dn = dmsc_pernet(genl_info_net(info));
	int err;

	mutex_lock(&dn->lock);
	err = dmsc_tunnel_del(dn, info);
	mutex_unlock(&dn->lock);
	return err;
}

static int dmsc_tunnel_get(struct dmsc_net *dn, struct genl_info *info)
{
	struct nlattr *tb[DMSC_TUNNEL_A_MAX + 1];
	struct dmsc_tunnel *tun;
	struct sk_buff *msg;
	u32 id;
	int err;

	err = dmsc_tunnel_attrs(info, tb, &id);
	if (err)
		return err;
	tun = dmsc_tunnel_find(dn, tb, id, info->extack);
	if (!tun)
		return -ENOENT;

	msg = genlmsg_new(dmsc_tunnel_msg_size(), GFP_KERNEL);
	if (!msg) {
		NL_SET_ERR_MSG(info->extack, "out of memory for the reply");
		return -ENOMEM;
	}
	err = dmsc_tunnel_fill(msg, dn, tun, info->snd_portid, info->snd_seq,
			       NULL);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

int dmsc_tunnel_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct dmsc_net *dn = dmsc_pernet(genl_info_net(info));
	int err;

	mutex_lock(&dn->lock);
	err = dmsc_tunnel_get(dn, info);
	mutex_unlock(&dn->lock);
	return err;
}

/*
 * cb->args[0]: the next id to dump; cb->args[1]: set once the last one
 * went out (an id past U32_MAX would not fit a long on 32-bit). Changes
 * between two messages flag the later ones NLM_F_DUMP_INTR.
 */
int dmsc_tunnel_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct dmsc_net *dn = dmsc_pernet(sock_net(skb->sk));
	unsigned long id = cb->args[0];
	struct dmsc_tunnel *tun;

	if (cb->args[1])
		return 0;
	mutex_lock(&dn->lock);
	cb->seq = dn->gen;
	xa_for_each_start(&dn->tunnels, id, tun, cb->args[0]) {
		if (dmsc_tunnel_fill(skb, dn, tun, NETLINK_CB(cb->skb).portid,
				     cb->nlh->nlmsg_seq, cb))
			break;
	}
	mutex_unlock(&dn->lock);
	if (tun)
		cb->args[0] = id;	/* did not fit: first in the next */
	else
		cb->args[1] = 1;
	return skb->len;
}

int dmsc_tunnel_net_init(struct dmsc_net *dn)
{
	xa_init(&dn->tunnels);
	return 0;
}

/*
 * The hook is gone, no request can come and the flows are freed: drop
 * the xarray's references.
 */
void dmsc_tunnel_net_exit(struct dmsc_net *dn)
{
	struct dmsc_tunnel *tun;
	unsigned long id;

	xa_for_each(&dn->tunnels, id, tun)
		dmsc_tunnel_put(tun);
	xa_destroy(&dn->tunnels);
	dn->n_tunnels = 0;
}
