// SPDX-License-Identifier: GPL-2.0
/*
 * Credit sessions of the cbfc qdisc: the per-namespace table, its generic
 * netlink commands (SESSION_NEW, SESSION_DEL, SESSION_GET, CREDIT) and the
 * credit arithmetic. The qdisc (sch_cbfc.c) looks sessions up under RCU
 * when it makes a flow and holds a reference while the flow exists: while
 * it has packets queued, and idle for a while after.
 *
 * Why cumulative counters: an update that carries the next hop's running
 * total of freed bytes is idempotent. A lost update is repaired by the
 * next one, a repeated or reordered one carries a total already seen and
 * changes nothing, so credit can neither leak nor inflate. Delta updates
 * (the draft's form) are accepted per session for comparison: there each
 * update adds, so a lost one is lost credit and a repeated one is credit
 * the next hop never gave.
 */

#include <linux/rhashtable.h>
#include <linux/socket.h>
#include <net/ipv6.h>
#include <net/genetlink.h>
#include <linux/dmsc.h>

#include "dmsc.h"

static const struct rhashtable_params dmsc_session_params = {
	.key_len = sizeof(struct dmsc_cbfc_key),
	.key_offset = offsetof(struct dmsc_session, key),
	.head_offset = offsetof(struct dmsc_session, node),
	.automatic_shrinking = true,
};

/* Under rcu_read_lock(); the result is valid until it is unlocked. */
struct dmsc_session *dmsc_session_lookup(struct dmsc_net *dn,
					 const struct dmsc_cbfc_key *key)
{
	return rhashtable_lookup(&dn->sessions, key, dmsc_session_params);
}

void dmsc_session_put(struct dmsc_session *s)
{
	if (refcount_dec_and_test(&s->refcnt))
		kfree_rcu(s, rcu);
}

/*
 * The flow a request names, from the session nest @tb. Every part of the
 * key is required: a session is one flow, not a pattern.
 */
static int dmsc_session_key(struct nlattr **tb, struct dmsc_cbfc_key *key,
			    struct netlink_ext_ack *extack)
{
	static const int need[] = {
		DMSC_SESSION_A_FAMILY, DMSC_SESSION_A_SRC, DMSC_SESSION_A_DST,
		DMSC_SESSION_A_SPORT, DMSC_SESSION_A_QPN,
	};
	static const char * const names[] = {
		"family", "src", "dst", "sport", "qpn",
	};
	unsigned int alen, i;

	for (i = 0; i < ARRAY_SIZE(need); i++) {
		if (!tb[need[i]]) {
			NL_SET_ERR_MSG_FMT(extack, "session %s missing",
					   names[i]);
			return -EINVAL;
		}
	}
	memset(key, 0, sizeof(*key));
	key->family = nla_get_u8(tb[DMSC_SESSION_A_FAMILY]);
	if (key->family == AF_INET) {
		alen = 4;
	} else if (key->family == AF_INET6) {
		alen = 16;
	} else {
		NL_SET_ERR_MSG_ATTR(extack, tb[DMSC_SESSION_A_FAMILY],
				    "session family: not AF_INET or AF_INET6");
		return -EAFNOSUPPORT;
	}
	if (nla_len(tb[DMSC_SESSION_A_SRC]) != alen) {
		NL_SET_ERR_MSG_ATTR(extack, tb[DMSC_SESSION_A_SRC],
				    "session src: length does not match family");
		return -EINVAL;
	}
	if (nla_len(tb[DMSC_SESSION_A_DST]) != alen) {
		NL_SET_ERR_MSG_ATTR(extack, tb[DMSC_SESSION_A_DST],
				    "session dst: length does not match family");
		return -EINVAL;
	}
	memcpy(&key->src, nla_data(tb[DMSC_SESSION_A_SRC]), alen);
	memcpy(&key->dst, nla_data(tb[DMSC_SESSION_A_DST]), alen);
	key->sport = htons(nla_get_u16(tb[DMSC_SESSION_A_SPORT]));
	key->qpn = nla_get_u32(tb[DMSC_SESSION_A_QPN]);
	return 0;
}

/* Parse the session nest of @info into @tb and the key. */
static int dmsc_session_parse(struct genl_info *info, struct nlattr **tb,
			      struct dmsc_cbfc_key *key)
{
	struct nlattr *nest = info->attrs[DMSC_A_SESSION];
	int err;

	if (!nest) {
		NL_SET_ERR_MSG(info->extack, "session attribute missing");
		return -EINVAL;
	}
	err = nla_parse_nested(tb, DMSC_SESSION_A_MAX, nest,
			       dmsc_session_policy, info->extack);
	if (err)
		return err;
	return dmsc_session_key(tb, key, info->extack);
}

/* Attributes that only credit updates carry, refused elsewhere. */
static int dmsc_session_no_update(struct nlattr **tb,
				  struct netlink_ext_ack *extack)
{
	if (tb[DMSC_SESSION_A_FREED]) {
		NL_SET_ERR_MSG_ATTR(extack, tb[DMSC_SESSION_A_FREED],
				    "session freed: only in a credit update");
		return -EINVAL;
	}
	if (tb[DMSC_SESSION_A_DELTA]) {
		NL_SET_ERR_MSG_ATTR(extack, tb[DMSC_SESSION_A_DELTA],
				    "session delta: only in a credit update");
		return -EINVAL;
	}
	return 0;
}

/*
 * The kernel sends credit returns to the previous hop over IPv6, with
 * no interface: it must be a routable unicast address. A link-local one
 * has no scope here (it would leave by whichever link routes fe80::/64
 * first), and ::, loopback, multicast and IPv4-mapped ones never get
 * there, each failed send being retried for the session's life.
 */
static int dmsc_session_prevhop_ok(const struct nlattr *attr,
				   struct netlink_ext_ack *extack)
{
	struct in6_addr a;
	int type;

	if (!attr)
		return 0;
	nla_memcpy(&a, attr, sizeof(a));
	type = ipv6_addr_type(&a);
	if (!(type & IPV6_ADDR_UNICAST) ||
	    type & (IPV6_ADDR_LINKLOCAL | IPV6_ADDR_LOOPBACK |
		    IPV6_ADDR_MAPPED | IPV6_ADDR_COMPATv4 |
		    IPV6_ADDR_SITELOCAL)) {
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "session prevhop: a global or ULA unicast IPv6 address (credit returns are sent to it)");
		return -EINVAL;
	}
	return 0;
}

/*
 * The backup reservation of @tb, both attributes or neither: a backup
 * moves with the tunnel, so it needs one, and a next hop it stands in
 * for. Returns 1 when there is one, 0 when not, or an error.
 */
static int dmsc_session_backup_attrs(struct nlattr **tb, bool has_nexthop,
				     const struct in6_addr *nexthop, u32 tunnel,
				     struct netlink_ext_ack *extack)
{
	struct nlattr *nh = tb[DMSC_SESSION_A_BACKUP_NEXTHOP];
	struct nlattr *cr = tb[DMSC_SESSION_A_BACKUP_CREDIT];
	struct in6_addr a;

	if (!nh && !cr) {
		if (tb[DMSC_SESSION_A_BACKUP_MODE]) {
			NL_SET_ERR_MSG_ATTR(extack,
					    tb[DMSC_SESSION_A_BACKUP_MODE],
					    "session backup-mode: needs backup-nexthop and backup-credit");
			return -EINVAL;
		}
		return 0;
	}
	if (!cr) {
		NL_SET_ERR_MSG_ATTR(extack, nh, "session backup-credit missing");
		return -EINVAL;
	}
	if (!nh) {
		NL_SET_ERR_MSG_ATTR(extack, cr, "session backup-nexthop missing");
		return -EINVAL;
	}
	if (!has_nexthop) {
		NL_SET_ERR_MSG_ATTR(extack, nh,
				    "session backup: the session has no nexthop to stand in for");
		return -EINVAL;
	}
	if (!tunnel) {
		NL_SET_ERR_MSG_ATTR(extack, nh,
				    "session backup: needs the session's tunnel, which moves to its backup list with it");
		return -EINVAL;
	}
	nla_memcpy(&a, nh, sizeof(a));
	if (ipv6_addr_equal(&a, nexthop)) {
		NL_SET_ERR_MSG_ATTR(extack, nh,
				    "session backup-nexthop: the same hop as nexthop");
		return -EINVAL;
	}
	return 1;
}

/*
 * Store the backup reservation @tb carries, or none (@backup false). Its
 * mode is the session's unless given: s->mode must be set before.
 */
static void dmsc_session_store_backup(struct dmsc_session *s,
				      struct nlattr **tb, bool backup)
{
	if (backup) {
		nla_memcpy(&s->backup_nexthop,
			   tb[DMSC_SESSION_A_BACKUP_NEXTHOP],
			   sizeof(s->backup_nexthop));
		s->backup_credit =
			nla_get_u64(tb[DMSC_SESSION_A_BACKUP_CREDIT]);
		s->backup_mode = tb[DMSC_SESSION_A_BACKUP_MODE] ?
				 nla_get_u8(tb[DMSC_SESSION_A_BACKUP_MODE]) :
				 s->mode;
	}
	s->has_backup = backup;
}

int dmsc_session_new_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct dmsc_net *dn = dmsc_pernet(genl_info_net(info));
	struct nlattr *tb[DMSC_SESSION_A_MAX + 1];
	struct in6_addr nh = {};
	struct dmsc_cbfc_key key;
	struct dmsc_session *s;
	int err, backup;

	err = dmsc_session_parse(info, tb, &key);
	if (err)
		return err;
	err = dmsc_session_no_update(tb, info->extack);
	if (err)
		return err;
	/*
	 * A transit hop has both; the first hop only a next hop (credit it
	 * spends), the last only a previous hop (credit it returns).
	 */
	if (!tb[DMSC_SESSION_A_NEXTHOP] && !tb[DMSC_SESSION_A_PREVHOP]) {
		NL_SET_ERR_MSG(info->extack,
			       "session nexthop or prevhop missing");
		return -EINVAL;
	}
	err = dmsc_session_prevhop_ok(tb[DMSC_SESSION_A_PREVHOP], info->extack);
	if (err)
		return err;
	if (tb[DMSC_SESSION_A_NEXTHOP])
		nla_memcpy(&nh, tb[DMSC_SESSION_A_NEXTHOP], sizeof(nh));
	backup = dmsc_session_backup_attrs(tb, !!tb[DMSC_SESSION_A_NEXTHOP], &nh,
					   tb[DMSC_SESSION_A_TUNNEL] ?
					   nla_get_u32(tb[DMSC_SESSION_A_TUNNEL]) :
					   0, info->extack);
	if (backup < 0)
		return backup;
	/*
	 * dmsc.h: what a packet's charge touches is one 64-byte line (on
	 * 64-bit; 32-bit pointers shift it, which costs only speed).
	 */
	BUILD_BUG_ON(IS_ENABLED(CONFIG_64BIT) &&
		     offsetof(struct dmsc_session, has_nexthop) / 64 !=
		     (offsetofend(struct dmsc_session, packets) - 1) / 64);
	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		return -ENOMEM;
	s->key = key;
	if (tb[DMSC_SESSION_A_NEXTHOP]) {
		s->nexthop = nh;
		s->has_nexthop = true;
	}
	if (tb[DMSC_SESSION_A_MODE])
		s->mode = nla_get_u8(tb[DMSC_SESSION_A_MODE]);
	dmsc_session_store_backup(s, tb, backup);
	if (tb[DMSC_SESSION_A_PREVHOP]) {
		nla_memcpy(&s->prevhop, tb[DMSC_SESSION_A_PREVHOP],
			   sizeof(s->prevhop));
		s->has_prevhop = true;
	}
	if (tb[DMSC_SESSION_A_CREDIT])
		s->credit = nla_get_u64(tb[DMSC_SESSION_A_CREDIT]);
	/* Not checked against the tunnels: it is looked up at failover. */
	if (tb[DMSC_SESSION_A_TUNNEL])
		s->tunnel = nla_get_u32(tb[DMSC_SESSION_A_TUNNEL]);
	/* The heartbeat counts from the session's start. */
	atomic64_set(&s->last_update, ktime_get_ns());
	refcount_set(&s->refcnt, 1);
	spin_lock_init(&s->lock);
	spin_lock_init(&s->ret_lock);
	INIT_LIST_HEAD(&s->stalled);

	mutex_lock(&dn->lock);
	if (dn->n_sessions >= DMSC_SESSIONS_MAX) {
		NL_SET_ERR_MSG(info->extack, "session table full");
		err = -ENOSPC;
		goto out_free;
	}
	if (s->has_nexthop) {
		err = dmsc_cret_hook(dn, info->extack);
		if (err)
			goto out_free;
	}
	err = rhashtable_lookup_insert_fast(&dn->sessions, &s->node,
					    dmsc_session_params);
	if (err == -EEXIST) {
		NL_SET_ERR_MSG(info->extack, "session exists for this flow");
		goto out_free;
	}
	if (err)
		goto out_free;
	list_add_tail(&s->list, &dn->session_list);
	dn->n_sessions++;
	dmsc_changed(dn);
	mutex_unlock(&dn->lock);
	return 0;

out_free:
	mutex_unlock(&dn->lock);
	kfree(s);
	return err;
}

/* Under dn->lock: out of the table; its flows lose credit control. */
static void dmsc_session_unlink(struct dmsc_net *dn, struct dmsc_session *s)
{
	rhashtable_remove_fast(&dn->sessions, &s->node, dmsc_session_params);
	list_del(&s->list);
	dn->n_sessions--;
	WRITE_ONCE(s->dead, true);
	dmsc_session_put(s);
}

int dmsc_session_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct dmsc_net *dn = dmsc_pernet(genl_info_net(info));
	struct nlattr *tb[DMSC_SESSION_A_MAX + 1];
	struct dmsc_cbfc_key key;
	struct dmsc_session *s;
	int err;

	err = dmsc_session_parse(info, tb, &key);
	if (err)
		return err;
	mutex_lock(&dn->lock);
	s = rhashtable_lookup_fast(&dn->sessions, &key, dmsc_session_params);
	if (!s) {
		mutex_unlock(&dn->lock);
		NL_SET_ERR_MSG(info->extack, "no such session");
		return -ENOENT;
	}
	/*
	 * Packets that waited for its credit may leave now. Under RCU: the
	 * unlink may drop the last reference, the memory stays till after.
	 */
	rcu_read_lock();
	dmsc_session_unlink(dn, s);
	dmsc_cbfc_wake(s);
	rcu_read_unlock();
	dmsc_changed(dn);
	mutex_unlock(&dn->lock);
	return 0;
}

/*
 * A live session's backup reservation: set or replaced (both attributes),
 * or cleared (neither). The source's speaker learns the backup list's
 * credit when its RESV comes, which may be after the primary's; what it
 * stands for (next hop, credit, tunnel) is fixed at add. Once the
 * session moved onto its backup, the backup is its next hop: refused.
 */
int dmsc_session_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct dmsc_net *dn = dmsc_pernet(genl_info_net(info));
	struct nlattr *tb[DMSC_SESSION_A_MAX + 1];
	struct netlink_ext_ack *extack = info->extack;
	struct dmsc_cbfc_key key;
	struct dmsc_session *s;
	int err, backup;

	err = dmsc_session_parse(info, tb, &key);
	if (err)
		return err;
	err = dmsc_session_no_update(tb, extack);
	if (err)
		return err;
	if (tb[DMSC_SESSION_A_NEXTHOP] || tb[DMSC_SESSION_A_MODE] ||
	    tb[DMSC_SESSION_A_CREDIT] || tb[DMSC_SESSION_A_TUNNEL] ||
	    tb[DMSC_SESSION_A_PREVHOP]) {
		NL_SET_ERR_MSG(extack,
			       "session set: only the backup; nexthop, prevhop, mode, credit and tunnel are fixed at session add");
		return -EINVAL;
	}
	mutex_lock(&dn->lock);
	s = rhashtable_lookup_fast(&dn->sessions, &key, dmsc_session_params);
	if (!s) {
		NL_SET_ERR_MSG(extack, "no such session");
		err = -ENOENT;
		goto out;
	}
	backup = dmsc_session_backup_attrs(tb, s->has_nexthop, &s->nexthop,
					   s->tunnel, extack);
	if (backup < 0) {
		err = backup;
		goto out;
	}
	spin_lock_bh(&s->lock);
	if (s->on_backup) {
		spin_unlock_bh(&s->lock);
		NL_SET_ERR_MSG(extack,
			       "session set: the session moved onto its backup already");
		err = -EBUSY;
		goto out;
	}
	if (READ_ONCE(s->failed)) {
		spin_unlock_bh(&s->lock);
		NL_SET_ERR_MSG(extack,
			       "session set: the session's next hop failed already");
		err = -EBUSY;
		goto out;
	}
	dmsc_session_store_backup(s, tb, backup);
	spin_unlock_bh(&s->lock);
	dmsc_changed(dn);
out:
	mutex_unlock(&dn->lock);
	return err;
}

/* The session's identity: its flow, next hop and tunnel. */
static int dmsc_session_fill_id(struct sk_buff *msg, struct dmsc_session *s)
{
	unsigned int alen = s->key.family == AF_INET ? 4 : 16;

	if (nla_put_u8(msg, DMSC_SESSION_A_FAMILY, s->key.family) ||
	    nla_put(msg, DMSC_SESSION_A_SRC, alen, &s->key.src) ||
	    nla_put(msg, DMSC_SESSION_A_DST, alen, &s->key.dst) ||
	    nla_put_u16(msg, DMSC_SESSION_A_SPORT, ntohs(s->key.sport)) ||
	    nla_put_u32(msg, DMSC_SESSION_A_QPN, s->key.qpn) ||
	    (s->has_nexthop &&
	     nla_put_in6_addr(msg, DMSC_SESSION_A_NEXTHOP,
			      dmsc_session_nexthop(s))) ||
	    (s->has_prevhop &&
	     nla_put_in6_addr(msg, DMSC_SESSION_A_PREVHOP, &s->prevhop)) ||
	    (s->tunnel && nla_put_u32(msg, DMSC_SESSION_A_TUNNEL, s->tunnel)))
		return -EMSGSIZE;
	return 0;
}

static int dmsc_session_fill(struct sk_buff *msg, struct dmsc_session *s)
{
	struct nlattr *nest;

	nest = nla_nest_start(msg, DMSC_A_SESSION);
	if (!nest)
		return -EMSGSIZE;
	if (dmsc_session_fill_id(msg, s) ||
	    nla_put_u8(msg, DMSC_SESSION_A_FAILED, READ_ONCE(s->failed)) ||
	    nla_put_u8(msg, DMSC_SESSION_A_MODE, s->mode) ||
	    nla_put_u8(msg, DMSC_SESSION_A_ON_BACKUP, READ_ONCE(s->on_backup)) ||
	    (s->has_backup &&
	     (nla_put_in6_addr(msg, DMSC_SESSION_A_BACKUP_NEXTHOP,
			       &s->backup_nexthop) ||
	      nla_put_u64_64bit(msg, DMSC_SESSION_A_BACKUP_CREDIT,
				s->backup_credit, DMSC_SESSION_A_PAD) ||
	      nla_put_u8(msg, DMSC_SESSION_A_BACKUP_MODE, s->backup_mode))) ||
	    nla_put_u64_64bit(msg, DMSC_SESSION_A_CREDIT, READ_ONCE(s->credit),
			      DMSC_SESSION_A_PAD) ||
	    nla_put_u64_64bit(msg, DMSC_SESSION_A_FREED,
			      atomic64_read(&s->freed), DMSC_SESSION_A_PAD) ||
	    nla_put_u64_64bit(msg, DMSC_SESSION_A_SENT,
			      atomic64_read(&s->sent), DMSC_SESSION_A_PAD) ||
	    nla_put_u64_64bit(msg, DMSC_SESSION_A_AVAILABLE,
			      dmsc_session_available(s), DMSC_SESSION_A_PAD) ||
	    nla_put_u64_64bit(msg, DMSC_SESSION_A_PACKETS,
			      atomic64_read(&s->packets), DMSC_SESSION_A_PAD) ||
	    nla_put_u64_64bit(msg, DMSC_SESSION_A_UPDATES,
			      atomic64_read(&s->updates), DMSC_SESSION_A_PAD) ||
	    nla_put_u64_64bit(msg, DMSC_SESSION_A_STALE,
			      atomic64_read(&s->stale), DMSC_SESSION_A_PAD) ||
	    nla_put_u64_64bit(msg, DMSC_SESSION_A_ABSURD,
			      atomic64_read(&s->absurd), DMSC_SESSION_A_PAD) ||
	    nla_put_u64_64bit(msg, DMSC_SESSION_A_RETURNED,
			      atomic64_read(&s->ret_freed), DMSC_SESSION_A_PAD) ||
	    nla_put_u64_64bit(msg, DMSC_SESSION_A_RETURNS,
			      atomic64_read(&s->returns), DMSC_SESSION_A_PAD)) {
		nla_nest_cancel(msg, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}

/*
 * @s failed over as the link through device @ifindex went down: its
 * nexthop-down event, and its flows waiting in any qdisc go on, as
 * cbfc_failover() has them (those may hold what the hook sent the
 * backup's way). Under dn->lock, in process context.
 */
static void dmsc_session_failed_down(struct dmsc_net *dn,
				     struct dmsc_session *s, int ifindex)
{
	dmsc_session_notify_failed(dn, s, DMSC_EVENT_NEXTHOP_DOWN, ifindex, 0);
	rcu_read_lock();
	dmsc_cbfc_wake(s);
	rcu_read_unlock();
}

/*
 * The link under the cbfc qdisc @qdisc (a cookie) of device @ifindex went
 * down, and the qdisc failed over the sessions it had packets of
 * (sch_cbfc.c, cbfc_fail_link). The others whose packets last went out
 * there on their tunnel's present path, alive and with a tunnel that has
 * a backup and is on its primary (or moved early by that reset), fail
 * over too, with no packets to carry: their next packets would be
 * steered onto the dead link and dropped by the deactivated device,
 * which no heartbeat sees (they never reach a cbfc queue). Each fails
 * (dmsc_session_fail: onto its backup reservation, or marked failed) with
 * its nexthop-down event, then each tunnel switches once: those of the
 * sessions whose packets last went out there, and of those this walk
 * failed, marked with its number (a packet steered to the backup
 * meanwhile moves its session's last_qdisc to the backup's qdisc, and
 * that tunnel would stay moved early with no switch and no event).
 * Process context (the failover work), before that reset's own failovers
 * switch their tunnels. Up to two walks of the namespace's sessions under
 * its lock: a link going down is rare. Returns how many failed.
 */
unsigned int dmsc_session_fail_link(struct dmsc_net *dn, unsigned long qdisc,
				    int ifindex)
{
	struct dmsc_session *s;
	unsigned int n = 0;
	u32 walk;

	mutex_lock(&dn->lock);
	walk = ++dn->fail_walk ?: ++dn->fail_walk;	/* 0: never failed */
	list_for_each_entry(s, &dn->session_list, list) {
		if (READ_ONCE(s->last_qdisc) != qdisc || !s->tunnel ||
		    !s->has_nexthop || READ_ONCE(s->dead) ||
		    READ_ONCE(s->failed) || READ_ONCE(s->on_backup))
			continue;
		/* Early marks the tunnels this walk moves: switched below. */
		if (!dmsc_tunnel_steer_backup(dn, s->tunnel) ||
		    !dmsc_session_fail_primary(s))
			continue;
		dmsc_session_failed_down(dn, s, ifindex);
		s->fail_walk = walk;
		n++;
	}
	if (n) {
		list_for_each_entry(s, &dn->session_list, list)
			if (s->tunnel && (s->fail_walk == walk ||
					  READ_ONCE(s->last_qdisc) == qdisc))
				dmsc_tunnel_switch_early(dn, s->tunnel);
	}
	mutex_unlock(&dn->lock);
	return n;
}

/*
 * A first hop of tunnel @tunnel's primary, through device @ifindex, lost
 * its carrier, and a cbfc qdisc on the backup's device saw it first: the
 * hook sent a session's packet the backup's way (sch_cbfc.c,
 * cbfc_fail_early), and that session failed over. The tunnel's other
 * sessions still on the primary fail over with it, as the link's own
 * qdisc would have failed those whose packets it saw
 * (dmsc_session_fail_link): each onto its backup reservation or marked
 * failed, with its nexthop-down event. Left on the primary's credit,
 * their packets on the backup would be charged to a hop that never sees
 * them, and a session with no backup reservation would wait there for
 * good. Process context (the failover work), before the tunnel's switch.
 * Returns how many failed.
 */
unsigned int dmsc_session_fail_tunnel(struct dmsc_net *dn, u32 tunnel,
				      int ifindex)
{
	struct dmsc_tunnel *tun;
	struct dmsc_session *s;
	unsigned int n = 0;

	mutex_lock(&dn->lock);
	/*
	 * Still moved early: not if the operator switched it back or took
	 * its backup away meanwhile.
	 */
	tun = dmsc_tunnel_lookup(dn, tunnel);
	if (!tun || READ_ONCE(tun->active) == DMSC_ACTIVE_PRIMARY ||
	    !dmsc_dereference(dn, tun->cfg)->has_backup) {
		mutex_unlock(&dn->lock);
		return 0;
	}
	list_for_each_entry(s, &dn->session_list, list) {
		if (s->tunnel != tunnel || !s->has_nexthop ||
		    !dmsc_session_fail_primary(s))
			continue;
		dmsc_session_failed_down(dn, s, ifindex);
		n++;
	}
	mutex_unlock(&dn->lock);
	return n;
}

/*
 * The flows of @s that wait for credit go on, as the session now lets
 * them: moved onto the backup, a head encapsulated for the primary is
 * re-sent on the backup list (sch_cbfc.c, cbfc_old_path) and one for
 * the backup is charged to the backup's credit; failed, they go
 * uncontrolled. No return of the hop they waited for is taken any more,
 * so with the heartbeat off they would wait for good. Process context
 * (dn->lock).
 */
static void dmsc_session_wake_moved(struct dmsc_session *s)
{
	rcu_read_lock();
	dmsc_cbfc_wake(s);
	rcu_read_unlock();
}

/*
 * Tunnel @tunnel moved to its backup or back: where its sessions' packets
 * went before says nothing of where their next hop is now, so a link
 * going down there must not fail them (dmsc_session_fail_link). Moved to
 * its backup (@backup: a failover, or the operator's switch), its
 * packets go the backup list's way: its sessions with a backup
 * reservation move onto it, as the one whose failure moved the tunnel
 * did (dmsc_session_fail). Back on the primary, a moved session has no
 * credit there (the primary's hops forgot what was in flight, the
 * backup's returns stop): it is marked failed rather than left to stall,
 * until its speaker sets it up anew (Documentation/cbfc.md). The waiting
 * flows of a session moved or failed here are woken. Under dn->lock.
 */
void dmsc_session_forget_path(struct dmsc_net *dn, u32 tunnel, bool backup)
{
	struct dmsc_session *s;

	list_for_each_entry(s, &dn->session_list, list) {
		if (s->tunnel != tunnel)
			continue;
		WRITE_ONCE(s->last_qdisc, 0);
		if (backup && s->has_backup && !READ_ONCE(s->on_backup)) {
			dmsc_session_fail(s, true);
		} else if (!backup && READ_ONCE(s->on_backup)) {
			/*
			 * Under s->lock, under which cbfc_stall() tests it
			 * before a flow waits: either the flow sees it or
			 * the wake below finds the flow waiting.
			 */
			spin_lock_bh(&s->lock);
			WRITE_ONCE(s->failed, true);
			spin_unlock_bh(&s->lock);
		} else {
			continue;
		}
		dmsc_session_wake_moved(s);
	}
}

/*
 * Tell the events group that a cbfc qdisc on @ifindex declared the next
 * hop of @s failed: @event is DMSC_EVENT_NEXTHOP_FAILED after @waited_us
 * without credit (the heartbeat), DMSC_EVENT_NEXTHOP_DOWN when the link
 * lost its carrier (@waited_us: how long the flow had been waiting for
 * credit then, 0 if it was not). Process context.
 */
void dmsc_session_notify_failed(struct dmsc_net *dn, struct dmsc_session *s,
				u32 event, int ifindex, u64 waited_us)
{
	struct nlattr *nest;
	struct sk_buff *msg;
	void *hdr;

	if (!genl_has_listeners(&dmsc_genl_family, dn->net, 0))
		return;
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &dmsc_genl_family, 0, DMSC_CMD_EVENT);
	if (!hdr)
		goto fail;
	if (nla_put_u32(msg, DMSC_A_EVENT, event))
		goto fail;
	nest = nla_nest_start(msg, DMSC_A_SESSION);
	if (!nest || dmsc_session_fill_id(msg, s) ||
	    nla_put_u32(msg, DMSC_SESSION_A_IFINDEX, ifindex) ||
	    nla_put_u8(msg, DMSC_SESSION_A_ON_BACKUP,
		       READ_ONCE(s->on_backup) && !READ_ONCE(s->failed)) ||
	    nla_put_u64_64bit(msg, DMSC_SESSION_A_WAITED_US, waited_us,
			      DMSC_SESSION_A_PAD))
		goto fail;
	nla_nest_end(msg, nest);
	genlmsg_end(msg, hdr);
	dmsc_genl_notify(dn->net, msg);
	return;

fail:
	nlmsg_free(msg);
}

int dmsc_session_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct dmsc_net *dn = dmsc_pernet(genl_info_net(info));
	struct nlattr *tb[DMSC_SESSION_A_MAX + 1];
	struct dmsc_cbfc_key key;
	struct dmsc_session *s;
	struct sk_buff *msg;
	void *hdr;
	int err;

	err = dmsc_session_parse(info, tb, &key);
	if (err)
		return err;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &dmsc_genl_family, 0,
				DMSC_CMD_SESSION_GET);
	err = -EMSGSIZE;
	if (!hdr)
		goto out_free;
	mutex_lock(&dn->lock);
	s = rhashtable_lookup_fast(&dn->sessions, &key, dmsc_session_params);
	if (!s) {
		NL_SET_ERR_MSG(info->extack, "no such session");
		err = -ENOENT;
	} else {
		err = dmsc_session_fill(msg, s);
	}
	mutex_unlock(&dn->lock);
	if (err)
		goto out_free;
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

out_free:
	nlmsg_free(msg);
	return err;
}

/*
 * A dump resumes by position in creation order (cb->args[0]); a change
 * between two parts is flagged through the generation, as for tunnels.
 */
int dmsc_session_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct dmsc_net *dn = dmsc_pernet(sock_net(skb->sk));
	long skip = cb->args[0], i = 0;
	struct dmsc_session *s;
	int err = 0;

	mutex_lock(&dn->lock);
	cb->seq = dn->gen;
	list_for_each_entry(s, &dn->session_list, list) {
		void *hdr;

		if (i++ < skip)
			continue;
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &dmsc_genl_family,
				  NLM_F_MULTI, DMSC_CMD_SESSION_GET);
		if (!hdr) {
			err = -EMSGSIZE;
			break;
		}
		genl_dump_check_consistent(cb, hdr);
		if (dmsc_session_fill(skb, s)) {
			genlmsg_cancel(skb, hdr);
			err = -EMSGSIZE;
			break;
		}
		genlmsg_end(skb, hdr);
		cb->args[0] = i;
	}
	mutex_unlock(&dn->lock);
	/* A full buffer ends this part only; an empty one would loop. */
	if (err == -EMSGSIZE && skb->len)
		return skb->len;
	return err ? err : skb->len;
}

/*
 * Apply one update. Cumulative: only a total beyond the one held counts
 * (try_cmpxchg, so two updates racing keep the later). Delta: the delta
 * adds. Totals are compared wrap-safely, as differences. Either way a
 * total above sent is bytes the next hop cannot have freed: counted as
 * absurd and ignored, so available credit never exceeds the session's
 * reservation. sent only grows, so freed <= sent read here holds after.
 * Returns true when credit grew. Also the kernel's credit returns
 * (creditret.c) come here, from softirq.
 *
 * @on_backup: which next hop the caller took the update to be from. A
 * session that moved onto its backup meanwhile (dmsc_session_fail) set
 * freed to sent, which fails the cmpxchg of an update from the old hop
 * in flight; the retry sees the move and counts the update stale. The
 * backup hop's totals count from the move: base is added to them.
 */
bool dmsc_session_credit(struct dmsc_session *s, bool delta, u64 arg,
			 bool on_backup)
{
	s64 old;
	u64 val;

	old = atomic64_read(&s->freed);
	do {
		/*
		 * freed, then on_backup, then base: pairs with the two
		 * smp_wmb() in dmsc_session_fail().
		 */
		smp_rmb();
		/* and on_backup before base: the acquire */
		if (smp_load_acquire(&s->on_backup) != on_backup) {
			atomic64_inc(&s->stale);
			return false;
		}
		val = delta ? (u64)old + arg :
			      (on_backup ? READ_ONCE(s->base) : 0) + arg;
		if ((s64)(val - (u64)old) <= 0) {
			atomic64_inc(&s->stale);
			return false;
		}
		if ((s64)(val - (u64)atomic64_read(&s->sent)) > 0) {
			atomic64_inc(&s->absurd);
			return false;
		}
	} while (!atomic64_try_cmpxchg(&s->freed, &old, (s64)val));
	atomic64_inc(&s->updates);
	return true;
}

/* dmsc_session_fail() (below), under s->lock. */
static bool __dmsc_session_fail(struct dmsc_session *s, bool can_move)
{
	bool moved = false;
	u64 sent;

	if (READ_ONCE(s->dead) || READ_ONCE(s->failed))
		return false;
	if (can_move && s->has_backup && !s->on_backup && s->tunnel) {
		sent = atomic64_read(&s->sent);
		WRITE_ONCE(s->base, sent);
		WRITE_ONCE(s->credit, s->backup_credit);
		/* The backup hop's heartbeat counts from the move. */
		atomic64_set(&s->last_update, ktime_get_ns());
		/* base, credit: before on_backup (dmsc_session_nexthop). */
		smp_store_release(&s->on_backup, true);
		/*
		 * on_backup before freed: an update of the old hop that
		 * sees the new freed sees the move (dmsc_session_credit);
		 * a charge that sees the new freed sees the new credit
		 * (dmsc_session_charge).
		 */
		smp_wmb();
		atomic64_set(&s->freed, sent);
		moved = true;
	} else {
		WRITE_ONCE(s->failed, true);
	}
	return moved;
}

/*
 * The next hop of @s failed: the heartbeat, or its link went down, or its
 * tunnel moved to its backup list. A session with a backup reservation
 * whose tunnel goes to its backup (@can_move: the caller checked) moves
 * onto the backup list's first hop and its credit and stays under credit
 * control; any other is marked failed and its packets pass uncontrolled.
 * Returns true when it moved.
 *
 * The move rebases the counters: what was in flight to the failed hop
 * is forgotten (freed = sent: those bytes will never be returned), and
 * the backup hop's cumulative totals, which count from 0 what it
 * forwarded of this flow, are read from sent at the move (base). Only
 * the backup hop grants credit from then on (dmsc_session_nexthop).
 * Bounds of the rebase (Documentation/cbfc.md): a packet charged on
 * another CPU between the read of sent and the store of freed counts as
 * in flight on the backup; bytes of the flow that reached the backup
 * hop before the move, charged to the primary (a sibling session's
 * failure moved the tunnel first), are counted by it and returned as if
 * sent on the backup's credit.
 *
 * Flows waiting for credit are not woken here (the callers hold qdisc
 * locks); a link's failover work wakes them after (dmsc_cbfc_wake), as
 * does a tunnel switch (dmsc_session_forget_path). A packet encapsulated
 * for the primary list is not charged to the backup's credit: it is
 * re-sent on the backup list when it is next dequeued or its flow's
 * heartbeat fails, without failing the session again (sch_cbfc.c,
 * cbfc_old_path).
 *
 * Process or softirq context, not hardirq: the qdisc's dequeue and
 * reset (BH off), the failover work and tunnel switches (dn->lock).
 */
bool dmsc_session_fail(struct dmsc_session *s, bool can_move)
{
	bool moved;

	spin_lock_bh(&s->lock);
	moved = __dmsc_session_fail(s, can_move);
	spin_unlock_bh(&s->lock);
	return moved;
}

/*
 * dmsc_session_fail(@s, true) for a session still on its primary's
 * credit: false, with nothing done, when it is dead, failed or moved
 * already. Two qdiscs may see one link go down at once (the link's own
 * and the backup's, sch_cbfc.c; or the failover work's walks beside a
 * qdisc's reset): the first fails the session over, and the others must
 * neither mark the moved session failed nor tell of it again.
 */
bool dmsc_session_fail_primary(struct dmsc_session *s)
{
	bool live;

	spin_lock_bh(&s->lock);
	live = !READ_ONCE(s->dead) && !READ_ONCE(s->failed) && !s->on_backup;
	if (live)
		__dmsc_session_fail(s, true);
	spin_unlock_bh(&s->lock);
	return live;
}

/*
 * The fast path of credit returns: no namespace mutex, the session is
 * found and updated under RCU, then the qdiscs run again.
 */
int dmsc_credit_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct dmsc_net *dn = dmsc_pernet(genl_info_net(info));
	struct nlattr *tb[DMSC_SESSION_A_MAX + 1];
	struct netlink_ext_ack *extack = info->extack;
	struct dmsc_cbfc_key key;
	struct dmsc_session *s;
	bool on_backup, delta;
	int err;

	err = dmsc_session_parse(info, tb, &key);
	if (err)
		return err;
	if (tb[DMSC_SESSION_A_NEXTHOP] || tb[DMSC_SESSION_A_MODE] ||
	    tb[DMSC_SESSION_A_CREDIT] || tb[DMSC_SESSION_A_TUNNEL] ||
	    tb[DMSC_SESSION_A_PREVHOP] || tb[DMSC_SESSION_A_BACKUP_NEXTHOP] ||
	    tb[DMSC_SESSION_A_BACKUP_CREDIT] || tb[DMSC_SESSION_A_BACKUP_MODE]) {
		NL_SET_ERR_MSG(extack,
			       "credit update: nexthop, prevhop, mode, credit, tunnel and backup are set by session add and set");
		return -EINVAL;
	}
	rcu_read_lock();
	s = dmsc_session_lookup(dn, &key);
	if (!s) {
		rcu_read_unlock();
		NL_SET_ERR_MSG(extack, "no such session");
		return -ENOENT;
	}
	/* Any update, even a stale one, says the next hop is alive. */
	atomic64_set(&s->last_update, ktime_get_ns());
	/*
	 * The form is the granting hop's: the backup's once moved. A move
	 * after this read makes the update stale (dmsc_session_credit).
	 * Pairs with dmsc_session_fail()'s release of on_backup.
	 */
	on_backup = smp_load_acquire(&s->on_backup);
	delta = dmsc_session_nh_delta(s, on_backup);
	/*
	 * Moved onto a backup that returns in the other form: an update in
	 * the session's own form is the left hop's, late. Stale, as one
	 * that raced the move is (dmsc_session_credit), not an error.
	 */
	if (on_backup && s->backup_mode != s->mode &&
	    !tb[DMSC_SESSION_A_FREED] != !tb[DMSC_SESSION_A_DELTA] &&
	    !!tb[DMSC_SESSION_A_DELTA] == !delta) {
		atomic64_inc(&s->stale);
		rcu_read_unlock();
		return 0;
	}
	if (delta) {
		if (tb[DMSC_SESSION_A_FREED] || !tb[DMSC_SESSION_A_DELTA]) {
			rcu_read_unlock();
			NL_SET_ERR_MSG(extack,
				       "credit update: the next hop (the backup hop once moved) returns deltas: delta, not freed");
			return -EINVAL;
		}
	} else if (tb[DMSC_SESSION_A_DELTA] || !tb[DMSC_SESSION_A_FREED]) {
		rcu_read_unlock();
		NL_SET_ERR_MSG(extack,
			       "credit update: the next hop (the backup hop once moved) returns totals: freed, not delta");
		return -EINVAL;
	}
	/* Only this session's waiting flows are woken, under RCU. */
	if (dmsc_session_credit(s, delta,
				nla_get_u64(tb[delta ? DMSC_SESSION_A_DELTA :
						       DMSC_SESSION_A_FREED]),
				on_backup))
		dmsc_cbfc_wake(s);
	rcu_read_unlock();
	return 0;
}

int dmsc_credit_net_init(struct dmsc_net *dn)
{
	INIT_LIST_HEAD(&dn->session_list);
	return rhashtable_init(&dn->sessions, &dmsc_session_params);
}

/*
 * The namespace's devices, and so its qdiscs, are gone before its
 * subsystems exit: nothing else holds a session but the table.
 */
void dmsc_credit_net_exit(struct dmsc_net *dn)
{
	struct dmsc_session *s, *tmp;

	mutex_lock(&dn->lock);
	list_for_each_entry_safe(s, tmp, &dn->session_list, list)
		dmsc_session_unlink(dn, s);
	mutex_unlock(&dn->lock);
	rhashtable_destroy(&dn->sessions);
}
