// SPDX-License-Identifier: GPL-2.0
/*
 * The netfilter hook that steers RoCEv2 onto SRv6 tunnels.
 *
 * One hook per family at NF_INET_POST_ROUTING, priority LAST: it sees
 * packets this node forwards (a PE in front of hosts) and packets it
 * originates (the node is the host), after filtering and NAT, just
 * before they leave. Conntrack confirmation has the same priority; when
 * conntrack registers after us it runs after us and never sees the
 * packets we steal, which is what we want: the inner flow leaves as a
 * new outer packet, and nf_reset_ct() drops its unconfirmed entry.
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
 * segmented in software first and each segment goes on its own: that
 * keeps the MTU check exact and needs no outer GSO support in the
 * driver. RoCEv2 senders do not use GSO, so this is the rare path.
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

/* Send one non-GSO packet onto @idx and account for it. */
static void dmsc_steer_one(struct net *net, struct dmsc_net *dn,
			   struct sk_buff *skb, u8 family,
			   struct dmsc_tunnel *tun,
			   struct dmsc_tunnel_cfg *cfg, u32 idx,
			   const struct dmsc_flow_key *key, u32 bucket)
{
	unsigned int len = skb->len;
	enum dmsc_tx tx;

	tx = dmsc_srv6_xmit(net, skb, cfg, &cfg->paths[idx], family);
	dmsc_steer_count(dn, tx, len);
	if (tx != DMSC_TX_OK)
		return;
	dmsc_tunnel_count(tun, idx, len);
	if (READ_ONCE(dn->flow_limit) || atomic_read(&dn->n_flows))
		dmsc_flow_account(dn, key, tun, bucket, len);
}

static unsigned int dmsc_steer(struct sk_buff *skb, u8 family,
			       const struct nf_hook_state *state)
{
	struct dmsc_net *dn = dmsc_pernet(state->net);
	const struct dmsc_rule_table *rules;
	struct dmsc_tunnel_cfg *cfg;
	struct sk_buff *segs, *seg, *next;
	struct dmsc_flow_key key;
	u8 _bth[DMSC_BTH_LEN];
	const u8 *bth;
	struct udphdr _uh;
	const struct udphdr *uh;
	struct dmsc_tunnel *tun;
	struct dmsc_rule *rule;
	unsigned int thoff;
	u32 bucket, idx;

	rules = rcu_dereference(dn->rules[family == AF_INET6]);
	if (!rules)
		return NF_ACCEPT;
	/* Traffic to this node itself is not leaving it. */
	if (state->out && (state->out->flags & IFF_LOOPBACK))
		return NF_ACCEPT;

	memset(&key, 0, sizeof(key));
	thoff = dmsc_steer_parse(skb, family, &key);
	if (!thoff)
		return NF_ACCEPT;
	uh = skb_header_pointer(skb, thoff, sizeof(_uh), &_uh);
	if (!uh || uh->dest != htons(DMSC_ROCEV2_PORT))
		return NF_ACCEPT;
	dmsc_stats_inc(dn, roce_packets, 1);
	bth = skb_header_pointer(skb, thoff + sizeof(_uh), sizeof(_bth), _bth);
	if (!bth) {
		dmsc_stats_inc(dn, malformed, 1);
		return NF_ACCEPT;
	}

	key.family = family;
	key.sport = uh->source;
	key.qpn = (bth[5] << 16) | (bth[6] << 8) | bth[7];
	rule = dmsc_rule_lookup(rules, &key.src, &key.dst, key.qpn);
	if (!rule)
		return NF_ACCEPT;
	this_cpu_inc(*rule->packets);

	tun = rule->tun;
	cfg = rcu_dereference(tun->cfg);
	bucket = siphash(&key, DMSC_FLOW_HASH_LEN, &dn->hash_key) &
		 (DMSC_BUCKETS - 1);
	idx = dmsc_tunnel_path(tun, cfg, bucket);
	key.tunnel = tun->id;

	skb_set_transport_header(skb, thoff);
	if (!skb_is_gso(skb)) {
		dmsc_steer_one(state->net, dn, skb, family, tun, cfg, idx,
			       &key, bucket);
		return NF_STOLEN;
	}

	segs = skb_gso_segment(skb, 0);
	if (IS_ERR_OR_NULL(segs)) {
		dmsc_steer_count(dn, DMSC_TX_NOMEM, 0);
		kfree_skb(skb);
		return NF_STOLEN;
	}
	consume_skb(skb);
	skb_list_walk_safe(segs, seg, next) {
		skb_mark_not_on_list(seg);
		dmsc_steer_one(state->net, dn, seg, family, tun, cfg, idx,
			       &key, bucket);
	}
	return NF_STOLEN;
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

static const struct nf_hook_ops dmsc_nf_ops[] = {
	{
		.hook = dmsc_steer_ipv4,
		.pf = NFPROTO_IPV4,
		.hooknum = NF_INET_POST_ROUTING,
		.priority = NF_IP_PRI_LAST,
	},
	{
		.hook = dmsc_steer_ipv6,
		.pf = NFPROTO_IPV6,
		.hooknum = NF_INET_POST_ROUTING,
		.priority = NF_IP6_PRI_LAST,
	},
};

int dmsc_steer_net_init(struct net *net)
{
	return nf_register_net_hooks(net, dmsc_nf_ops, ARRAY_SIZE(dmsc_nf_ops));
}

/*
 * From pernet pre_exit: the namespace core waits for a grace period
 * before the exit methods free what the hook reads.
 */
void dmsc_steer_net_exit(struct net *net)
{
	nf_unregister_net_hooks(net, dmsc_nf_ops, ARRAY_SIZE(dmsc_nf_ops));
}
