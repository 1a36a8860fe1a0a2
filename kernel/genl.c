// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "dmsc": policies, the operation table and
 * the namespace-wide commands (INFO, SET). Object commands (tunnels,
 * rules, flows) are implemented beside their objects.
 *
 * Policies are strict: an attribute the kernel does not know, of the
 * wrong type or out of range is refused with an extack naming it.
 * Attributes that only replies carry are NLA_REJECT in requests.
 *
 * Every changing command, and every one that shows tunnels, rules or
 * flows (the flow table names who talks to whom), needs CAP_NET_ADMIN in
 * the user namespace that owns the network namespace
 * (GENL_UNS_ADMIN_PERM, as WireGuard does): plain GENL_ADMIN_PERM would
 * ask it of the initial user namespace and lock containers out of their
 * own namespaces. INFO (version, features, counters) is open to all.
 *
 * Locking: parallel_ops, so genl_mutex serialises nothing of ours. Each
 * namespace's changes and its tunnel and rule dumps take its own mutex
 * (dn->lock); the hook and the flow dump read under RCU.
 */

#include <net/genetlink.h>
#include <linux/dmsc.h>

#include "dmsc.h"
#include "version.h"

#define DMSC_ADMIN_PERM GENL_UNS_ADMIN_PERM

#define DMSC_FEATURES (DMSC_F_SRV6_ENCAP | DMSC_F_SRV6_ENCAP_RED | \
		       DMSC_F_INNER_IPV4 | DMSC_F_INNER_IPV6 | \
		       DMSC_F_FLOW_TABLE | DMSC_F_BACKUP_PATH)

/*
 * u32 ranges beyond the s16 bounds of NLA_POLICY_RANGE. Not const: 6.1's
 * struct nla_policy points at them through a non-const pointer.
 */
static struct netlink_range_validation dmsc_weight_range = {
	.min = 1, .max = DMSC_MAX_WEIGHT,
};

static struct netlink_range_validation dmsc_qpn_range = {
	.min = 0, .max = DMSC_QPN_MAX,
};

static struct netlink_range_validation dmsc_flow_limit_range = {
	.min = 0, .max = DMSC_FLOW_LIMIT_MAX,
};

static struct netlink_range_validation dmsc_flow_timeout_range = {
	.min = DMSC_FLOW_TIMEOUT_MIN, .max = DMSC_FLOW_TIMEOUT_MAX,
};

const struct nla_policy dmsc_path_policy[DMSC_PATH_A_MAX + 1] = {
	/* Length and SID checks are done by the handler, with a message. */
	[DMSC_PATH_A_SEGS]	= { .type = NLA_BINARY },
	[DMSC_PATH_A_WEIGHT]	= NLA_POLICY_FULL_RANGE(NLA_U32,
						      &dmsc_weight_range),
	[DMSC_PATH_A_INDEX]	= { .type = NLA_REJECT },
	[DMSC_PATH_A_PACKETS]	= { .type = NLA_REJECT },
	[DMSC_PATH_A_BYTES]	= { .type = NLA_REJECT },
	[DMSC_PATH_A_FLOWS]	= { .type = NLA_REJECT },
};

const struct nla_policy dmsc_tunnel_policy[DMSC_TUNNEL_A_MAX + 1] = {
	[DMSC_TUNNEL_A_ID]	= NLA_POLICY_MIN(NLA_U32, 1),
	[DMSC_TUNNEL_A_SRC]	= NLA_POLICY_EXACT_LEN(sizeof(struct in6_addr)),
	[DMSC_TUNNEL_A_MODE]	= NLA_POLICY_MAX(NLA_U8, DMSC_MODE_MAX),
	[DMSC_TUNNEL_A_PATH]	= NLA_POLICY_NESTED(dmsc_path_policy),
	[DMSC_TUNNEL_A_BACKUP]	= NLA_POLICY_NESTED(dmsc_path_policy),
	[DMSC_TUNNEL_A_ACTIVE]	= NLA_POLICY_MAX(NLA_U8, DMSC_ACTIVE_MAX),
	[DMSC_TUNNEL_A_ADMIN_UP] = NLA_POLICY_MAX(NLA_U8, 1),
	[DMSC_TUNNEL_A_PACKETS]	= { .type = NLA_REJECT },
	[DMSC_TUNNEL_A_BYTES]	= { .type = NLA_REJECT },
	[DMSC_TUNNEL_A_FLOWS]	= { .type = NLA_REJECT },
	[DMSC_TUNNEL_A_SWITCHES] = { .type = NLA_REJECT },
};

const struct nla_policy dmsc_rule_policy[DMSC_RULE_A_MAX + 1] = {
	[DMSC_RULE_A_FAMILY]	= { .type = NLA_U8 },
	[DMSC_RULE_A_DST]	= { .type = NLA_BINARY,
				    .len = sizeof(struct in6_addr) },
	[DMSC_RULE_A_DST_LEN]	= NLA_POLICY_MAX(NLA_U8, 128),
	[DMSC_RULE_A_SRC]	= { .type = NLA_BINARY,
				    .len = sizeof(struct in6_addr) },
	[DMSC_RULE_A_SRC_LEN]	= NLA_POLICY_MAX(NLA_U8, 128),
	[DMSC_RULE_A_QPN_LO]	= NLA_POLICY_FULL_RANGE(NLA_U32, &dmsc_qpn_range),
	[DMSC_RULE_A_QPN_HI]	= NLA_POLICY_FULL_RANGE(NLA_U32, &dmsc_qpn_range),
	[DMSC_RULE_A_TUNNEL]	= NLA_POLICY_MIN(NLA_U32, 1),
	[DMSC_RULE_A_PACKETS]	= { .type = NLA_REJECT },
};

const struct nla_policy dmsc_flow_policy[DMSC_FLOW_A_MAX + 1] = {
	/* A flow dump may be filtered by tunnel; the rest is output. */
	[DMSC_FLOW_A_TUNNEL]	= NLA_POLICY_MIN(NLA_U32, 1),
	[DMSC_FLOW_A_FAMILY]	= { .type = NLA_REJECT },
	[DMSC_FLOW_A_SRC]	= { .type = NLA_REJECT },
	[DMSC_FLOW_A_DST]	= { .type = NLA_REJECT },
	[DMSC_FLOW_A_SPORT]	= { .type = NLA_REJECT },
	[DMSC_FLOW_A_QPN]	= { .type = NLA_REJECT },
	[DMSC_FLOW_A_PATH]	= { .type = NLA_REJECT },
	[DMSC_FLOW_A_PACKETS]	= { .type = NLA_REJECT },
	[DMSC_FLOW_A_BYTES]	= { .type = NLA_REJECT },
	[DMSC_FLOW_A_IDLE_MS]	= { .type = NLA_REJECT },
};

static struct netlink_range_validation dmsc_credit_range = {
	.min = 0, .max = DMSC_CREDIT_MAX,
};

/* A backup is a reservation made: not 0, which is "none yet". */
static struct netlink_range_validation dmsc_backup_credit_range = {
	.min = 1, .max = DMSC_CREDIT_MAX,
};

static struct netlink_range_validation dmsc_delta_range = {
	.min = 1, .max = DMSC_DELTA_MAX,
};

const struct nla_policy dmsc_session_policy[DMSC_SESSION_A_MAX + 1] = {
	/* Family and address lengths are checked together, with a message. */
	[DMSC_SESSION_A_FAMILY]	= { .type = NLA_U8 },
	[DMSC_SESSION_A_SRC]	= { .type = NLA_BINARY,
				    .len = sizeof(struct in6_addr) },
	[DMSC_SESSION_A_DST]	= { .type = NLA_BINARY,
				    .len = sizeof(struct in6_addr) },
	[DMSC_SESSION_A_SPORT]	= { .type = NLA_U16 },
	[DMSC_SESSION_A_QPN]	= NLA_POLICY_FULL_RANGE(NLA_U32, &dmsc_qpn_range),
	[DMSC_SESSION_A_NEXTHOP] = NLA_POLICY_EXACT_LEN(sizeof(struct in6_addr)),
	[DMSC_SESSION_A_MODE]	= NLA_POLICY_MAX(NLA_U8, DMSC_CREDIT_MODE_MAX),
	[DMSC_SESSION_A_CREDIT]	= NLA_POLICY_FULL_RANGE(NLA_U64,
						      &dmsc_credit_range),
	/* Any total: it is compared wrap-safely with sent (credit.c). */
	[DMSC_SESSION_A_FREED]	= { .type = NLA_U64 },
	[DMSC_SESSION_A_DELTA]	= NLA_POLICY_FULL_RANGE(NLA_U64,
						      &dmsc_delta_range),
	[DMSC_SESSION_A_SENT]	= { .type = NLA_REJECT },
	[DMSC_SESSION_A_AVAILABLE] = { .type = NLA_REJECT },
	[DMSC_SESSION_A_PACKETS] = { .type = NLA_REJECT },
	[DMSC_SESSION_A_UPDATES] = { .type = NLA_REJECT },
	[DMSC_SESSION_A_STALE]	= { .type = NLA_REJECT },
	[DMSC_SESSION_A_ABSURD]	= { .type = NLA_REJECT },
	[DMSC_SESSION_A_TUNNEL]	= NLA_POLICY_MIN(NLA_U32, 1),
	[DMSC_SESSION_A_FAILED]	= { .type = NLA_REJECT },
	[DMSC_SESSION_A_IFINDEX] = { .type = NLA_REJECT },
	[DMSC_SESSION_A_WAITED_US] = { .type = NLA_REJECT },
	[DMSC_SESSION_A_PREVHOP] = NLA_POLICY_EXACT_LEN(sizeof(struct in6_addr)),
	[DMSC_SESSION_A_RETURNED] = { .type = NLA_REJECT },
	[DMSC_SESSION_A_RETURNS] = { .type = NLA_REJECT },
	[DMSC_SESSION_A_BACKUP_NEXTHOP] =
		NLA_POLICY_EXACT_LEN(sizeof(struct in6_addr)),
	[DMSC_SESSION_A_BACKUP_CREDIT] = NLA_POLICY_FULL_RANGE(NLA_U64,
						&dmsc_backup_credit_range),
	[DMSC_SESSION_A_ON_BACKUP] = { .type = NLA_REJECT },
	[DMSC_SESSION_A_BACKUP_MODE] = NLA_POLICY_MAX(NLA_U8,
						      DMSC_CREDIT_MODE_MAX),
};

static const struct nla_policy dmsc_policy[DMSC_A_MAX + 1] = {
	[DMSC_A_VERSION]	= { .type = NLA_REJECT },
	[DMSC_A_FEATURES]	= { .type = NLA_REJECT },
	[DMSC_A_NETNS_COOKIE]	= { .type = NLA_REJECT },
	[DMSC_A_STATS]		= { .type = NLA_REJECT },
	[DMSC_A_FLOW_LIMIT]	= NLA_POLICY_FULL_RANGE(NLA_U32,
						      &dmsc_flow_limit_range),
	[DMSC_A_FLOW_TIMEOUT]	= NLA_POLICY_FULL_RANGE(NLA_U32,
						      &dmsc_flow_timeout_range),
	[DMSC_A_TUNNEL]		= NLA_POLICY_NESTED(dmsc_tunnel_policy),
	[DMSC_A_RULE]		= NLA_POLICY_NESTED(dmsc_rule_policy),
	[DMSC_A_FLOW]		= NLA_POLICY_NESTED(dmsc_flow_policy),
	[DMSC_A_EVENT]		= { .type = NLA_REJECT },
	[DMSC_A_SESSION]	= NLA_POLICY_NESTED(dmsc_session_policy),
};

static int dmsc_put_stats(struct sk_buff *skb, struct dmsc_net *dn)
{
	struct dmsc_stats st;
	struct nlattr *nest;
	int i;

	dmsc_stats_read(dn, &st);
	nest = nla_nest_start(skb, DMSC_A_STATS);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, DMSC_STATS_A_TUNNELS, READ_ONCE(dn->n_tunnels)) ||
	    nla_put_u32(skb, DMSC_STATS_A_RULES, READ_ONCE(dn->n_rules)) ||
	    nla_put_u32(skb, DMSC_STATS_A_FLOWS, atomic_read(&dn->n_flows)) ||
	    nla_put_u64_64bit(skb, DMSC_STATS_A_ROCE_PACKETS,
			      st.roce_packets, DMSC_STATS_A_PAD) ||
	    nla_put_u64_64bit(skb, DMSC_STATS_A_ENCAP_PACKETS,
			      st.encap_packets, DMSC_STATS_A_PAD) ||
	    nla_put_u64_64bit(skb, DMSC_STATS_A_ENCAP_BYTES,
			      st.encap_bytes, DMSC_STATS_A_PAD) ||
	    nla_put_u64_64bit(skb, DMSC_STATS_A_DROP_MTU,
			      st.drop_mtu, DMSC_STATS_A_PAD) ||
	    nla_put_u64_64bit(skb, DMSC_STATS_A_DROP_NOROUTE,
			      st.drop_noroute, DMSC_STATS_A_PAD) ||
	    nla_put_u64_64bit(skb, DMSC_STATS_A_DROP_NOMEM,
			      st.drop_nomem, DMSC_STATS_A_PAD) ||
	    nla_put_u64_64bit(skb, DMSC_STATS_A_MALFORMED,
			      st.malformed, DMSC_STATS_A_PAD) ||
	    nla_put_u64_64bit(skb, DMSC_STATS_A_FLOWS_UNTRACKED,
			      st.flows_untracked, DMSC_STATS_A_PAD)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	for (i = 0; i < DMSC_CRET_NSTATS; i++) {
		if (nla_put_u64_64bit(skb, DMSC_STATS_A_CRET_TX + i,
				      atomic64_read(&dn->cret_stats[i]),
				      DMSC_STATS_A_PAD)) {
			nla_nest_cancel(skb, nest);
			return -EMSGSIZE;
		}
	}
	nla_nest_end(skb, nest);
	return 0;
}

static int dmsc_info_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct net *net = genl_info_net(info);
	struct dmsc_net *dn = dmsc_pernet(net);
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &dmsc_genl_family, 0,
				DMSC_CMD_INFO);
	if (!hdr)
		goto nospace;
	if (nla_put_string(msg, DMSC_A_VERSION, DMSC_VERSION) ||
	    nla_put_u64_64bit(msg, DMSC_A_FEATURES, DMSC_FEATURES,
			      DMSC_A_PAD) ||
	    nla_put_u64_64bit(msg, DMSC_A_NETNS_COOKIE, net->net_cookie,
			      DMSC_A_PAD) ||
	    nla_put_u32(msg, DMSC_A_FLOW_LIMIT, READ_ONCE(dn->flow_limit)) ||
	    nla_put_u32(msg, DMSC_A_FLOW_TIMEOUT,
			READ_ONCE(dn->flow_timeout_ms)) ||
	    dmsc_put_stats(msg, dn))
		goto nospace;
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

nospace:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

static int dmsc_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct dmsc_net *dn = dmsc_pernet(genl_info_net(info));
	struct nlattr **tb = info->attrs;

	if (!tb[DMSC_A_FLOW_LIMIT] && !tb[DMSC_A_FLOW_TIMEOUT]) {
		NL_SET_ERR_MSG(info->extack,
			       "nothing to set: give flow_limit or flow_timeout");
		return -EINVAL;
	}
	/* Both values were range-checked by the policy: nothing can fail. */
	mutex_lock(&dn->lock);
	if (tb[DMSC_A_FLOW_LIMIT])
		WRITE_ONCE(dn->flow_limit, nla_get_u32(tb[DMSC_A_FLOW_LIMIT]));
	if (tb[DMSC_A_FLOW_TIMEOUT]) {
		WRITE_ONCE(dn->flow_timeout_ms,
			   nla_get_u32(tb[DMSC_A_FLOW_TIMEOUT]));
		/* The ageing work runs at the old pace until told. */
		dmsc_flow_timeout_changed(dn);
	}
	mutex_unlock(&dn->lock);
	return 0;
}

static const struct genl_ops dmsc_genl_ops[] = {
	{
		.cmd = DMSC_CMD_INFO,
		.doit = dmsc_info_doit,
	},
	{
		.cmd = DMSC_CMD_SET,
		.doit = dmsc_set_doit,
		.flags = DMSC_ADMIN_PERM,
	},
	{
		.cmd = DMSC_CMD_TUNNEL_NEW,
		.doit = dmsc_tunnel_new_doit,
		.flags = DMSC_ADMIN_PERM,
	},
	{
		.cmd = DMSC_CMD_TUNNEL_SET,
		.doit = dmsc_tunnel_set_doit,
		.flags = DMSC_ADMIN_PERM,
	},
	{
		.cmd = DMSC_CMD_TUNNEL_DEL,
		.doit = dmsc_tunnel_del_doit,
		.flags = DMSC_ADMIN_PERM,
	},
	{
		.cmd = DMSC_CMD_TUNNEL_GET,
		.doit = dmsc_tunnel_get_doit,
		.dumpit = dmsc_tunnel_get_dumpit,
		.flags = DMSC_ADMIN_PERM,
	},
	{
		.cmd = DMSC_CMD_RULE_NEW,
		.doit = dmsc_rule_new_doit,
		.flags = DMSC_ADMIN_PERM,
	},
	{
		.cmd = DMSC_CMD_RULE_DEL,
		.doit = dmsc_rule_del_doit,
		.flags = DMSC_ADMIN_PERM,
	},
	{
		.cmd = DMSC_CMD_RULE_GET,
		.dumpit = dmsc_rule_get_dumpit,
		.flags = DMSC_ADMIN_PERM,
	},
	{
		.cmd = DMSC_CMD_FLOW_GET,
		.start = dmsc_flow_get_start,
		.dumpit = dmsc_flow_get_dumpit,
		.done = dmsc_flow_get_done,
		.flags = DMSC_ADMIN_PERM,
	},
	{
		.cmd = DMSC_CMD_FLOW_FLUSH,
		.doit = dmsc_flow_flush_doit,
		.flags = DMSC_ADMIN_PERM,
	},
	{
		.cmd = DMSC_CMD_SESSION_NEW,
		.doit = dmsc_session_new_doit,
		.flags = DMSC_ADMIN_PERM,
	},
	{
		.cmd = DMSC_CMD_SESSION_DEL,
		.doit = dmsc_session_del_doit,
		.flags = DMSC_ADMIN_PERM,
	},
	{
		.cmd = DMSC_CMD_SESSION_GET,
		.doit = dmsc_session_get_doit,
		.dumpit = dmsc_session_get_dumpit,
		.flags = DMSC_ADMIN_PERM,
	},
	{
		.cmd = DMSC_CMD_CREDIT,
		.doit = dmsc_credit_doit,
		.flags = DMSC_ADMIN_PERM,
	},
	{
		.cmd = DMSC_CMD_SESSION_SET,
		.doit = dmsc_session_set_doit,
		.flags = DMSC_ADMIN_PERM,
	},
};

#ifdef DMSC_NEED_EXTACK_BUF
/* See compat.h: formatted extack messages on kernels before 6.2. */
struct dmsc_extack_buf {
	struct list_head list;
	struct pid *pid;	/* the task using it */
	char msg[DMSC_EXTACK_LEN];
};

static LIST_HEAD(dmsc_extack_bufs);
static DEFINE_SPINLOCK(dmsc_extack_lock);

/*
 * At most this many buffers (6 KiB): past it, a task whose buffer cannot
 * be had gets the unformatted message, and unprivileged users (through
 * a user namespace) cannot make the list grow without bound.
 */
#define DMSC_EXTACK_BUFS	64
static unsigned int dmsc_extack_nbufs;

/* This task's buffer: its own, one of a task that is gone, or a new one. */
char *dmsc_extack_buf(void)
{
	struct pid *me = task_pid(current);
	struct dmsc_extack_buf *b, *spare = NULL;

	spin_lock(&dmsc_extack_lock);
	rcu_read_lock();
	list_for_each_entry(b, &dmsc_extack_bufs, list) {
		if (b->pid == me)
			goto found;
		if (!spare && !pid_task(b->pid, PIDTYPE_PID))
			spare = b;
	}
	b = spare;
	if (b) {
		put_pid(b->pid);
		b->pid = get_pid(me);
	}
found:
	rcu_read_unlock();
	spin_unlock(&dmsc_extack_lock);
	if (b)
		return b->msg;

	b = kmalloc(sizeof(*b), GFP_KERNEL_ACCOUNT);
	if (!b)
		return NULL;
	spin_lock(&dmsc_extack_lock);
	if (dmsc_extack_nbufs == DMSC_EXTACK_BUFS) {
		spin_unlock(&dmsc_extack_lock);
		kfree(b);
		return NULL;
	}
	dmsc_extack_nbufs++;
	b->pid = get_pid(me);
	list_add(&b->list, &dmsc_extack_bufs);
	spin_unlock(&dmsc_extack_lock);
	return b->msg;
}

/* Once the family is gone: no request can use one any more. */
void dmsc_extack_bufs_free(void)
{
	struct dmsc_extack_buf *b, *tmp;

	list_for_each_entry_safe(b, tmp, &dmsc_extack_bufs, list) {
		put_pid(b->pid);
		kfree(b);
	}
	INIT_LIST_HEAD(&dmsc_extack_bufs);
	dmsc_extack_nbufs = 0;
}
#endif

static const struct genl_multicast_group dmsc_mcgrps[] = {
	{ .name = DMSC_MCGRP_EVENTS },
};

struct genl_family dmsc_genl_family __ro_after_init = {
	.name = DMSC_GENL_NAME,
	.version = DMSC_GENL_VERSION,
	.maxattr = DMSC_A_MAX,
	.policy = dmsc_policy,
	.netnsok = true,
	.parallel_ops = true,	/* each namespace has its own lock */
	.module = THIS_MODULE,
	.ops = dmsc_genl_ops,
	.n_ops = ARRAY_SIZE(dmsc_genl_ops),
	.mcgrps = dmsc_mcgrps,
	.n_mcgrps = ARRAY_SIZE(dmsc_mcgrps),
};

/* Send a finished event message to the namespace's listeners. */
void dmsc_genl_notify(struct net *net, struct sk_buff *skb)
{
	genlmsg_multicast_netns(&dmsc_genl_family, net, skb, 0, 0,
				GFP_KERNEL);
}

int __init dmsc_genl_init(void)
{
	return genl_register_family(&dmsc_genl_family);
}

void dmsc_genl_exit(void)
{
	genl_unregister_family(&dmsc_genl_family);
}
