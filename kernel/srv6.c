// SPDX-License-Identifier: GPL-2.0
/*
 * SRv6 encapsulation of one packet onto one segment list.
 *
 * The SRH of a segment list is built once, when the tunnel is configured;
 * per packet we only copy it in front of the inner packet, with the
 * outer header: the same code for H.Encaps (the SRH lists every segment)
 * and H.Encaps.Red (the first SID only in the outer destination, the SRH
 * holds the others, a single SID needs no SRH). The kernel's exported
 * seg6_do_srh_encap() would look the outer source address up for every
 * packet, which we then overwrite with the tunnel's: building the
 * header ourselves saves that lookup, and its flow label and hop limit
 * follow the kernel's rules (seg6_make_flowlabel(), the inner hop limit).
 * The outer packet is routed to its first segment (through xfrm, so an
 * IPsec policy for the SRv6 underlay applies) and sent with
 * ip6_local_out(), like IPVS does from its hooks.
 *
 * MTU: as seen from a sender behind the kernel's seg6 lwtunnel. The
 * outer packet is never fragmented; one that would not fit the route to
 * the first segment is dropped and its sender told the MTU it can use,
 * the outer MTU less the encapsulation (ICMP fragmentation needed, even
 * without DF, or ICMPv6 packet too big).
 */

#include <linux/ipv6.h>
#include <linux/icmp.h>
#include <linux/icmpv6.h>
#include <linux/seg6.h>
#include <net/icmp.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/ip6_route.h>
#include <net/ip_tunnels.h>
#include <net/sch_generic.h>
#include <net/seg6.h>
#include <net/xfrm.h>

#include "dmsc.h"

/* Why a SID cannot be used, or NULL if it can. */
const char *dmsc_sid_invalid(const struct in6_addr *sid)
{
	if (ipv6_addr_any(sid))
		return "unspecified";
	if (ipv6_addr_is_multicast(sid))
		return "multicast";
	if (ipv6_addr_loopback(sid))
		return "loopback";
	if (ipv6_addr_v4mapped(sid))
		return "IPv4-mapped";
	return NULL;
}

/*
 * seg6_validate_srh() is not exported: the same checks, on the SRHs we
 * build, once at configuration time. A reduced SRH leaves out the first
 * segment, so Segments Left may be one more than Last Entry.
 */
static bool dmsc_srh_valid(const struct ipv6_sr_hdr *srh, int len,
			   bool reduced)
{
	int max_last_entry = reduced ? srh->first_segment + 1 :
				       srh->first_segment;

	if (srh->type != IPV6_SRCRT_TYPE_4)
		return false;
	if (((srh->hdrlen + 1) << 3) != len)
		return false;
	if (srh->segments_left > max_last_entry)
		return false;
	/* No TLVs: the segments fill the header exactly. */
	return sizeof(*srh) + (srh->first_segment + 1) *
		sizeof(struct in6_addr) == len;
}

int dmsc_srv6_path_init(struct dmsc_path *path, u8 mode,
			const struct in6_addr *segs, u32 nsegs, u32 weight)
{
	bool reduced = mode == DMSC_MODE_ENCAP_RED;
	u32 nsrh = reduced ? nsegs - 1 : nsegs;
	struct ipv6_sr_hdr *srh = NULL;
	int err, i;

	if (WARN_ON_ONCE(!nsegs || nsegs > DMSC_MAX_SEGS))
		return -EINVAL;

	path->weight = weight;
	path->nsegs = nsegs;
	memcpy(path->segs, segs, nsegs * sizeof(*segs));
	path->srh_len = 0;

	if (nsrh) {
		path->srh_len = sizeof(*srh) + nsrh * sizeof(struct in6_addr);
		srh = kzalloc(path->srh_len, GFP_KERNEL_ACCOUNT);
		if (!srh)
			return -ENOMEM;
		srh->hdrlen = (path->srh_len >> 3) - 1;
		srh->type = IPV6_SRCRT_TYPE_4;
		srh->segments_left = nsegs - 1;
		srh->first_segment = nsrh - 1;	/* Last Entry */
		/*
		 * The SRH lists the segments last one first; the reduced
		 * one stops before the first segment, which only the
		 * outer destination carries.
		 */
		for (i = 0; i < nsrh; i++)
			srh->segments[i] = segs[nsegs - 1 - i];
		if (WARN_ON_ONCE(!dmsc_srh_valid(srh, path->srh_len,
						 reduced))) {
			kfree(srh);
			return -EINVAL;
		}
	}

	err = dst_cache_init(&path->dst_cache, GFP_KERNEL_ACCOUNT);
	if (err) {
		kfree(srh);
		return err;
	}
	path->srh = srh;
	path->overhead = sizeof(struct ipv6hdr) + path->srh_len;
	return 0;
}

void dmsc_srv6_path_release(struct dmsc_path *path)
{
	dst_cache_destroy(&path->dst_cache);
	kfree(path->srh);
	path->srh = NULL;
}

/* The outer flow label, as the kernel's seg6 encap makes it. */
static __be32 dmsc_flowlabel(struct net *net, struct sk_buff *skb,
			     const struct ipv6hdr *inner, u8 family)
{
	int do_flowlabel = net->ipv6.sysctl.seg6_flowlabel;

	if (do_flowlabel > 0)
		return (__force __be32)rol32(skb_get_hash(skb), 16) &
			IPV6_FLOWLABEL_MASK;
	if (!do_flowlabel && family == AF_INET6)
		return ip6_flowlabel(inner);
	return 0;
}

/*
 * Push the outer IPv6 header and the path's SRH, if any (H.Encaps or
 * H.Encaps.Red: the prebuilt SRH says which). The caller made the
 * headroom; the inner dst is still attached (hop limit).
 */
static void dmsc_encap(struct net *net, struct sk_buff *skb,
			   const struct dmsc_path *path, u8 proto, u8 family)
{
	const struct ipv6hdr *inner = ipv6_hdr(skb);
	struct ipv6_sr_hdr *srh;
	struct ipv6hdr *hdr;
	__be32 flowlabel;
	u8 tclass = 0;
	u8 hlim;

	flowlabel = dmsc_flowlabel(net, skb, inner, family);
	if (family == AF_INET6) {
		tclass = ip6_tclass(ip6_flowinfo(inner));
		hlim = inner->hop_limit;
	} else {
		hlim = ip6_dst_hoplimit(skb_dst(skb));
	}

	skb_push(skb, path->overhead);
	skb_reset_network_header(skb);
	skb_mac_header_rebuild(skb);
	hdr = ipv6_hdr(skb);
	ip6_flow_hdr(hdr, tclass, flowlabel);
	hdr->hop_limit = hlim;
	hdr->daddr = path->segs[0];
	if (path->srh) {
		hdr->nexthdr = NEXTHDR_ROUTING;
		srh = (struct ipv6_sr_hdr *)(hdr + 1);
		memcpy(srh, path->srh, path->srh_len);
		srh->nexthdr = proto;
	} else {
		hdr->nexthdr = proto;
	}
	hdr->payload_len = htons(skb->len - sizeof(*hdr));
	skb_postpush_rcsum(skb, hdr, path->overhead);
}

/*
 * The route to the first segment from the tunnel source. Cached per path
 * for unmarked packets; a mark may select another table, so marked
 * packets look their route up each time.
 */
static struct dst_entry *dmsc_srv6_route(struct net *net, u32 mark,
					 const struct dmsc_tunnel_cfg *cfg,
					 struct dmsc_path *path, u8 proto)
{
	bool cache = !mark;
	struct dst_entry *dst;
	struct flowi6 fl6 = {};

	if (cache) {
		local_bh_disable();
		dst = dst_cache_get(&path->dst_cache);
		local_bh_enable();
		if (dst)
			return dst;
	}

	fl6.daddr = path->segs[0];
	fl6.saddr = cfg->src;
	fl6.flowi6_mark = mark;
	fl6.flowi6_proto = path->srh ? NEXTHDR_ROUTING : proto;
	dst = ip6_route_output(net, NULL, &fl6);
	if (dst->error) {
		dst_release(dst);
		return NULL;
	}
	/* As ip6_dst_lookup_flow(): an IPsec policy may want a bundle. */
	dst = xfrm_lookup(net, dst, flowi6_to_flowi(&fl6), NULL, 0);
	if (IS_ERR(dst))
		return NULL;
	if (cache) {
		local_bh_disable();
		dst_cache_set_ip6(&path->dst_cache, dst, &fl6.saddr);
		local_bh_enable();
	}
	return dst;
}

/*
 * Tell the inner sender the MTU it has, with the inner route attached.
 * The _ndo_ variants undo NAT first: we run after source NAT, and the
 * error must quote the packet as its sender sent it.
 */
static void dmsc_srv6_too_big(struct sk_buff *skb, u8 family, u32 mtu)
{
	if (family == AF_INET)
		icmp_ndo_send(skb, ICMP_DEST_UNREACH, ICMP_FRAG_NEEDED,
			      htonl(mtu));
	else
		icmpv6_ndo_send(skb, ICMPV6_PKT_TOOBIG, 0, mtu);
}

/*
 * A primary list whose first hop leaves through a device that has lost
 * its carrier is not taken while the tunnel has a backup whose own first
 * hop has carrier: the packet goes onto the backup list. IPv6 keeps
 * routes through such a device, so the cached route still leads there,
 * and what is sent into it is lost: linkwatch soon points its queues at
 * noop_qdisc, which drops whatever it is given (6.1 counts that
 * nowhere), and a packet that read the device's qdisc just before that
 * is lost too. From the carrier's loss, not from the deactivation: that
 * race is then between the loss and linkwatch, not a window of every
 * packet's. A cbfc qdisc on the backup's device moves a credit session
 * whose packet comes this way onto its backup's credit, with its event
 * (sch_cbfc.c, cbfc_fail_early), so that a carrier that comes back with
 * no reset leaves nothing charged to the primary's hop. No tunnel state
 * changes here: with the carrier back the primary carries the packets
 * of a tunnel no qdisc moved. One read of a bit of the device the packet
 * is about to reach; NULL if there is nothing better to send on.
 */
static struct dst_entry *dmsc_srv6_bypass(struct net *net,
					  struct sk_buff *skb,
					  const struct dmsc_tunnel_cfg *cfg,
					  struct dmsc_path **pathp,
					  struct dst_entry *dst, u8 proto)
{
	struct net_device *dev = dst->dev;
	struct dmsc_path *backup;
	struct dst_entry *bdst;

	if (likely(netif_carrier_ok(dev)) || !cfg->has_backup)
		return NULL;
	backup = (struct dmsc_path *)&cfg->paths[DMSC_BACKUP_IDX];
	if (*pathp == backup)
		return NULL;
	bdst = dmsc_srv6_route(net, skb->mark, cfg, backup, proto);
	if (!bdst)
		return NULL;
	if (!netif_carrier_ok(bdst->dev)) {
		dst_release(bdst);
		return NULL;
	}
	*pathp = backup;
	return bdst;
}

/*
 * The ifindex of the device through which the first of @cfg's primary
 * lists that has lost its carrier leaves, 0 if none has: the link whose
 * packets the hook now sends on the backup (dmsc_srv6_bypass). By the
 * routes the hook cached for unmarked packets: no lookup here (a
 * carrier's change makes the core's routes look anew, and the hook
 * does so first); a list with none cached counts as up. Under RCU.
 */
int dmsc_srv6_primary_down(const struct dmsc_tunnel_cfg *cfg)
{
	struct dst_entry *dst;
	int ifindex = 0;
	u32 i;

	for (i = 0; i < cfg->n_paths && !ifindex; i++) {
		local_bh_disable();
		dst = dst_cache_get((struct dst_cache *)
				    &cfg->paths[i].dst_cache);
		local_bh_enable();
		if (!dst)
			continue;
		if (!netif_carrier_ok(dst->dev))
			ifindex = dst->dev->ifindex;
		dst_release(dst);
	}
	return ifindex;
}

/*
 * Encapsulate a non-GSO inner packet of @family (network header at
 * skb->data, transport header set, inner route attached) onto *@pathp and
 * send it. The skb is consumed whatever the outcome. *@pathp is the list
 * it went on: the backup's when the first hop of the list asked for has
 * lost its carrier (dmsc_srv6_bypass).
 *
 * A CHECKSUM_PARTIAL packet stays partial, as in the kernel's seg6
 * encap: iptunnel_handle_offloads() records the inner headers and marks
 * the skb encapsulated, so the device (through hw_enc_features) or
 * validate_xmit_skb() finishes the inner checksum.
 */
enum dmsc_tx dmsc_srv6_xmit(struct net *net, struct sk_buff *skb,
			    const struct dmsc_tunnel_cfg *cfg,
			    struct dmsc_path **pathp, u8 family)
{
	u8 proto = family == AF_INET6 ? IPPROTO_IPV6 : IPPROTO_IPIP;
	__be16 inner_proto = family == AF_INET6 ? htons(ETH_P_IPV6) :
						  htons(ETH_P_IP);
	struct dst_entry *dst, *inner_dst, *bdst;
	enum dmsc_tx ret = DMSC_TX_NOMEM;
	unsigned int mtu, headroom;
	struct dmsc_path *path;

	dst = dmsc_srv6_route(net, skb->mark, cfg, *pathp, proto);
	if (!dst) {
		kfree_skb(skb);
		return DMSC_TX_NOROUTE;
	}
	bdst = dmsc_srv6_bypass(net, skb, cfg, pathp, dst, proto);
	if (unlikely(bdst)) {
		dst_release(dst);
		dst = bdst;
	}
	path = *pathp;

	/*
	 * A packet without its inner route (a cbfc failover re-sends what
	 * the device had queued, whose route was released) borrows the
	 * outer one for the IPv4 hop limit; it gets no ICMP error. Callers
	 * hold RCU (the hook, the failover work).
	 */
	inner_dst = skb_dst(skb);
	if (!inner_dst)
		skb_dst_set_noref(skb, dst);
	mtu = dst_mtu(dst);
	if (skb->len + path->overhead > mtu) {
		/* Only with the inner route to answer through (see below). */
		if (inner_dst)
			dmsc_srv6_too_big(skb, family,
					  mtu > path->overhead ?
					  mtu - path->overhead : 0);
		ret = DMSC_TX_MTU;
		goto drop;
	}

	/*
	 * Room for our headers: a packet that lacks it is copied here. Not
	 * by growing the route device's needed_headroom, as ip_tunnel does
	 * for its own device: the outer packet usually leaves through that
	 * same device, so every grown reserve would ask for more again.
	 */
	headroom = path->overhead + LL_RESERVED_SPACE(dst->dev);
	if (skb_cow_head(skb, headroom))
		goto drop;
	if (iptunnel_handle_offloads(skb, SKB_GSO_IPXIP6))
		goto drop;

	dmsc_encap(net, skb, path, proto, family);
	ipv6_hdr(skb)->saddr = cfg->src;

	skb_set_inner_transport_header(skb, skb_transport_offset(skb));
	skb_set_inner_protocol(skb, inner_proto);
	skb->protocol = htons(ETH_P_IPV6);
	skb_set_transport_header(skb, sizeof(struct ipv6hdr));

	/* A new packet of this node's: no inner state goes along. */
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	IP6CB(skb)->iif = skb->skb_iif;
	nf_reset_ct(skb);
	skb_dst_drop(skb);
	skb_dst_set(skb, dst);

	ip6_local_out(net, skb->sk, skb);
	return DMSC_TX_OK;

drop:
	/* The skb first: it may hold @dst without a reference (see above). */
	kfree_skb(skb);
	dst_release(dst);
	return ret;
}
