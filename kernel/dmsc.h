/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal interfaces of dmsc.ko. Everything lives in a struct dmsc_net,
 * one per network namespace: in the tests a namespace is a node.
 */
#ifndef _DMSC_H
#define _DMSC_H

#include <linux/u64_stats_sync.h>
#include <linux/percpu.h>
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

#define DMSC_FLOW_LIMIT_DEFAULT		65536
#define DMSC_FLOW_TIMEOUT_DEFAULT	30000	/* ms */

struct dmsc_net {
	struct net *net;
	struct dmsc_pcpu_stats __percpu *stats;

	/* Settings; written under genl_mutex, read locklessly. */
	u32 flow_limit;
	u32 flow_timeout_ms;

	/* Object counts for INFO; changed under genl_mutex. */
	u32 n_tunnels;
	u32 n_rules;
	atomic_t n_flows;	/* changed by the hook too */
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

int dmsc_genl_init(void);
void dmsc_genl_exit(void);
void dmsc_genl_notify(struct net *net, struct sk_buff *skb);

#endif /* _DMSC_H */
