// SPDX-License-Identifier: GPL-2.0
/*
 * The netfilter hook that steers RoCEv2 onto SRv6 tunnels.
 *
 * One hook per family at NF_INET_POST_ROUTING, just before conntrack
 * confirmation (see the priority below): it sees packets this node
 * forwards (a PE in front of hosts) and packets it originates (the node
 * is the host), after filtering and NAT, just before they leave.
 *
 * A packet is steered when it is RoCEv2 (UDP to port 4791, IPv4 not a
 * fragment, or IPv6 with UDP as the very next header) and a rule of its
 * family matches. Everything else passes untouched, our own SRv6 output
 * included (its next header is a routing header, IPv6 or IPIP).
 *
 * A flow (source, destination, UDP source port, destination QP) hashes
 * with siphash under a per-namespace key into one of the tunnel's
 * buckets, so it keeps its segment list while the tunnel is unchanged.
 *
 * GSO packets (a UDP_SEGMENT sender, GRO on a forwarding path) are
 * segmented in software first and each segment is classified and goes
 * on its own: that keeps the MTU check exact and needs no outer GSO
 * support in the driver. RoCEv2 senders do not use GSO: the rare path.
 */

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/ipv6.h>

#include "dmsc.h"

#define DMSC_BTH_LEN	12	/* InfiniBand base transport header */

/* Where the UDP header starts, or 0 if the packet is not for us. */
static unsigned int dmsc_steer_parse(struct sk_buff *skb, u8 family,
				     struct dmsc_flow_key *key)
{
	if (family == AF_INET) {
		const struct iphdr *iph = ip_hdr(skb);

		if (iph->protocol != IPPROTO_UDP || ip_is_fragment(iph))
			return 0;
		key->src.s6_addr32[0] = iph->saddr;
		key->dst.s6_addr32[0] = iph->daddr;
		return skb_network_offset(skb) + iph->ihl * 4;
	}
	if (ipv6_hdr(skb)->nexthdr != IPPROTO_UDP)
		return 0;
	key->src = ipv6_hdr(skb)->saddr;
	key->dst = ipv6_hdr(skb)->daddr;
	return skb_network_offset(skb) + sizeof(struct ipv6hdr);
}

static void dmsc_steer_count(struct dmsc_net *dn, enum dmsc_tx tx,
			     unsigned int len)
{
	struct dmsc_pcpu_stats *s = get_cpu_ptr(dn->stats);
	unsigned long flags;

	flags = u64_stats_update_begin_irqsave(&s->syncp);
	switch (tx) {
	case DMSC_TX_OK:
		u64_stats_inc(&s->encap_packets);
		u64_stats_add(&s->encap_bytes, len);
		break;
	case DMSC_TX_MTU:
		u64_stats_inc(&s->drop_mtu);
		break;
	case DMSC_TX_NOROUTE:
		u64_stats_inc(&s->drop_noroute);
		break;
	case DMSC_TX_NOMEM:
		u64_stats_inc(&s->drop_nomem);
		break;
	}
	u64_stats_update_end_irqrestore(&s->syncp, flags);
	put_cpu_ptr(dn->stats);
}

/*
 * Classify one non-GSO packet and, if a rule takes it, encapsulate and
 * send it: true if it was taken (and consumed).
 */
static bool dmsc_steer_one(struct net *net, struct dmsc_net *dn,
			   const struct dmsc_rule_node *rules,
			   struct sk_buff *skb, u8 family)
{
	struct dmsc_tunnel_cfg *cfg;
	struct dmsc_flow_key key;
	struct dmsc_path *path;
	u8 _bth[DMSC_BTH_LEN];
	const u8 *bth;
	struct udphdr _uh;
	const struct udphdr *uh;
	struct dmsc_tunnel *tun;
	struct dmsc_rule *rule;
	unsigned int thoff, len;
	u32 bucket, idx;
	enum dmsc_tx tx;

	memset(&key, 0, sizeof(key));
	thoff = dmsc_steer_parse(skb, family, &key);
	if (!thoff)
		return false;
	uh = skb_header_pointer(skb, thoff, sizeof(_uh), &_uh);
	if (!uh || uh->dest != htons(DMSC_ROCEV2_PORT))
		return false;
	dmsc_stats_inc(dn, roce_packets, 1);
	bth = skb_header_pointer(skb, thoff + sizeof(_uh), sizeof(_bth), _bth);
	if (!bth) {
		dmsc_stats_inc(dn, malformed, 1);
		return false;
	}

	key.family = family;
	key.sport = uh->source;
	key.qpn = (bth[5] << 16) | (bth[6] << 8) | bth[7];
	rule = dmsc_rule_lookup(rules, &key.src, &key.dst, key.qpn);
	if (!rule)
		return false;
	this_cpu_inc(*rule->packets);

	tun = rule->tun;
	cfg = rcu_dereference(tun->cfg);
	bucket = siphash(&key, DMSC_FLOW_HASH_LEN, &dn->hash_key) &
		 (DMSC_BUCKETS - 1);
	idx = dmsc_tunnel_path(tun, cfg, bucket);
	key.tunnel = tun->id;

	skb_set_transport_header(skb, thoff);
	len = skb->len;
	path = &cfg->paths[idx];
	tx = dmsc_srv6_xmit(net, skb, cfg, &path, family);
	dmsc_steer_count(dn, tx, len);
	if (tx == DMSC_TX_OK) {
		/* On the backup if the list's first hop lost its carrier. */
		dmsc_tunnel_count(tun, path - cfg->paths, len);
		if (READ_ONCE(dn->flow_limit) || atomic_read(&dn->n_flows))
			dmsc_flow_account(dn, &key, tun, bucket, len);
	}
	return true;
}

/*
 * Does a rule take any datagram of this GSO packet? Addresses and ports
 * are those of every segment; each segment's payload, gso_size bytes,
 * starts with its own BTH, whose QP may differ.
 */
static bool dmsc_steer_gso_wanted(const struct sk_buff *skb,
				  const struct dmsc_rule_node *rules,
				  const struct dmsc_flow_key *key,
				  unsigned int thoff)
{
	unsigned int off, step = skb_shinfo(skb)->gso_size;
	u8 _bth[DMSC_BTH_LEN];
	const u8 *bth;

	if (!step)
		return false;
	for (off = thoff + sizeof(struct udphdr); off < skb->len; off += step) {
		bth = skb_header_pointer(skb, off, sizeof(_bth), _bth);
		if (bth && dmsc_rule_lookup(rules, &key->src, &key->dst,
					    (bth[5] << 16) | (bth[6] << 8) |
					    bth[7]))
			return true;
	}
	return false;
}

/*
 * A GSO packet (a UDP_SEGMENT sender, GRO on a forwarding path) to the
 * RoCEv2 port: each segment carries its own BTH and may belong to
 * another QP. One no rule takes at all passes whole and untouched.
 * Otherwise segment and classify each segment; a segment no rule takes
 * then continues on the normal output path, skipping the hooks after
 * ours (conntrack confirmation only, see the priority below). RoCEv2
 * senders do not use GSO: a mixed packet is a corner of a rare case.
 */
static unsigned int dmsc_steer_gso(struct sk_buff *skb, u8 family,
				   const struct dmsc_rule_node *rules,
				   const struct nf_hook_state *state)
{
	struct dmsc_net *dn = dmsc_pernet(state->net);
	struct sk_buff *segs, *seg, *next;
	struct dmsc_flow_key key = {};
	struct udphdr _uh;
	const struct udphdr *uh;
	unsigned int thoff;

	thoff = dmsc_steer_parse(skb, family, &key);
	if (!thoff)
		return NF_ACCEPT;
	uh = skb_header_pointer(skb, thoff, sizeof(_uh), &_uh);
	if (!uh || uh->dest != htons(DMSC_ROCEV2_PORT) ||
	    !dmsc_steer_gso_wanted(skb, rules, &key, thoff))
		return NF_ACCEPT;

	segs = skb_gso_segment(skb, 0);
	if (IS_ERR_OR_NULL(segs)) {
		/* Ours, but it cannot be split: never send it unsteered. */
		dmsc_steer_count(dn, DMSC_TX_NOMEM, 0);
		return NF_DROP;
	}
	consume_skb(skb);
	skb_list_walk_safe(segs, seg, next) {
		skb_mark_not_on_list(seg);
		if (!dmsc_steer_one(state->net, dn, rules, seg, family))
			state->okfn(state->net, state->sk, seg);
	}
	return NF_STOLEN;
}

static unsigned int dmsc_steer(struct sk_buff *skb, u8 family,
			       const struct nf_hook_state *state)
{
	struct dmsc_net *dn = dmsc_pernet(state->net);
	const struct dmsc_rule_node *rules;

	rules = rcu_dereference(dn->rules[family == AF_INET6]);
	if (!rules)
		return NF_ACCEPT;
	/* Traffic to this node itself is not leaving it. */
	if (state->out && (state->out->flags & IFF_LOOPBACK))
		return NF_ACCEPT;
	if (unlikely(skb_is_gso(skb)))
		return dmsc_steer_gso(skb, family, rules, state);
	return dmsc_steer_one(state->net, dn, rules, skb, family) ?
	       NF_STOLEN : NF_ACCEPT;
}

static unsigned int dmsc_steer_ipv4(void *priv, struct sk_buff *skb,
				    const struct nf_hook_state *state)
{
	return dmsc_steer(skb, AF_INET, state);
}

static unsigned int dmsc_steer_ipv6(void *priv, struct sk_buff *skb,
				    const struct nf_hook_state *state)
{
	return dmsc_steer(skb, AF_INET6, state);
}

/*
 * Priority: just before conntrack confirmation, which is the last hook
 * of POST_ROUTING (NF_IP_PRI_CONNTRACK_CONFIRM, INT_MAX; IPv6 confirms
 * at NF_IP6_PRI_LAST). So we run after every filter and mangle table,
 * after source NAT (NF_IP_PRI_NAT_SRC, 100) and after any nftables
 * chain of a lower priority: the inner packet we encapsulate is the one
 * the rule set finished with, addresses translated. Confirmation does
 * not run for a packet we take: its conntrack entry, still unconfirmed,
 * is dropped with it (nf_reset_ct), so a steered RoCEv2 flow leaves no
 * state on this node (a rule set that wants ESTABLISHED state for the
 * flow's replies must accept UDP/4791 by port). Equal priorities would
 * order by load order; one below INT_MAX never ties with confirmation.
 */
static const struct nf_hook_ops dmsc_nf_ops[] = {
	{
		.hook = dmsc_steer_ipv4,
		.pf = NFPROTO_IPV4,
		.hooknum = NF_INET_POST_ROUTING,
		.priority = NF_IP_PRI_CONNTRACK_CONFIRM - 1,
	},
	{
		.hook = dmsc_steer_ipv6,
		.pf = NFPROTO_IPV6,
		.hooknum = NF_INET_POST_ROUTING,
		.priority = NF_IP6_PRI_LAST - 1,
	},
};

/*
 * A namespace without rules costs nothing per packet: the hooks come
 * with its first rule and stay until the namespace goes (unregistering
 * waits for a grace period, and rule sets come and go).
 */
int dmsc_steer_hook(struct dmsc_net *dn, struct netlink_ext_ack *extack)
{
	int err;

	lockdep_assert_held(&dn->lock);
	if (dn->hooked)
		return 0;
	err = nf_register_net_hooks(dn->net, dmsc_nf_ops,
				    ARRAY_SIZE(dmsc_nf_ops));
	if (err) {
		NL_SET_ERR_MSG(extack, "cannot register the netfilter hooks");
		return err;
	}
	dn->hooked = true;
	return 0;
}

/*
 * From pernet pre_exit, when no request can come: the namespace core
 * waits for a grace period before the exit methods free what the hook
 * reads.
 */
void dmsc_steer_net_exit(struct dmsc_net *dn)
{
	if (dn->hooked)
		nf_unregister_net_hooks(dn->net, dmsc_nf_ops,
					ARRAY_SIZE(dmsc_nf_ops));
	dn->hooked = false;
}
