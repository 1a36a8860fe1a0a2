// SPDX-License-Identifier: GPL-2.0
/*
 * sch_cbfc: credit-based flow control for RoCEv2 (Documentation/cbfc.md).
 *
 * A RoCEv2 packet whose flow has a credit session (credit.c) is queued in
 * that flow's own queue; deficit round robin serves the flows whose head
 * packet the session's credit covers. A flow without credit waits on the
 * stalled list, never dropped for it: the next credit update puts the
 * stalled flows back in the round and runs the qdisc (dmsc_cbfc_wake).
 * Every other packet (not RoCEv2, or RoCEv2 without a session) goes
 * through the plain band, one FIFO that takes its turn in the round as a
 * flow that is always covered.
 *
 * The flow of an SRv6 packet is that of the packet inside it (past the
 * outer IPv6 header and the SRH), so that a transit hop running stock
 * seg6local classifies as the ingress does.
 *
 * A flow whose queue empties stays in the hash, idle, as sch_fq keeps its
 * flows: a steady flow, which often has one packet queued at a time,
 * would otherwise be allocated, have its session looked up and be freed
 * for every packet. A flow that empties goes on q->idle, where it stays
 * while it comes and goes (so a steady flow's packets touch no other
 * flow's memory): the list is in the order flows first emptied, and a
 * flow on it may have packets again. Each new flow frees a few that have
 * been idle CBFC_FLOW_IDLE or whose session was deleted, and any beyond
 * `limit` of them (only new flows add to them), off the path of a packet
 * whose flow exists.
 *
 * Locking: enqueue and dequeue run under the qdisc lock. Sessions are
 * found under RCU and held by reference by each flow; the credit counters
 * they carry are atomics. A flow that waits for credit
 * is on its session's stalled list (s->lock, taken inside the qdisc lock,
 * never around it); a credit update moves the session's flows from there
 * to their qdisc's wake llist and schedules the qdisc, whose next dequeue
 * puts them back in the round (dmsc_cbfc_wake): only the flows of the
 * session that got credit are looked at.
 */

#include <linux/module.h>
#include <linux/skbuff.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <linux/jhash.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/llist.h>
#include <linux/workqueue.h>
#include <net/ipv6.h>
#include <net/ip.h>
#include <net/pkt_sched.h>
#include <net/sch_generic.h>
#include <linux/seg6.h>
#include <linux/dmsc_cbfc.h>

#include "dmsc.h"

/*
 * Hash buckets: limit / 2, a power of two within these. A qdisc holds at
 * most limit credited flows with packets and limit idle ones, so chains
 * stay short at any size that fits (with a fixed 1,024, 10,000 flows made
 * chains of ten, each flow a cache miss for every packet looked up).
 */
#define CBFC_HASH_MIN		1024
#define CBFC_HASH_MAX		65536
#define CBFC_BTH_LEN		12
/* How long an empty flow is kept for its next packet, in jiffies ... */
#define CBFC_FLOW_IDLE		(3 * HZ)
/* ... and how many such flows a new one frees, at most. */
#define CBFC_FLOW_GC_MAX	8
/* How far the rate's clock may lag: the burst after a late timer. */
#define CBFC_RATE_LAG_NS	(10 * NSEC_PER_MSEC)
/* How often a qdisc held for a lost carrier looks at it again. */
#define CBFC_HOLD_POLL_NS	NSEC_PER_MSEC

/*
 * A flow is in exactly one of: q->active; q->stalled and sess->stalled
 * (waiting); q->stalled and q->wake (credit came, not yet back in the
 * round). The wake llist is emptied at the start of every dequeue,
 * before any flow can stall again, so a flow is never on it twice.
 */
struct cbfc_sched;

/*
 * Laid out for the cache (the cache aligns them): the first line holds
 * what a lookup reads of each flow in a chain, the second what a
 * packet's enqueue and dequeue write; the third is for waiting.
 */
struct cbfc_flow {
	struct hlist_node hnode;	/* q->hash */
	u32 hash;			/* of key, before the bucket's mask */
	u32 qlen;
	struct dmsc_cbfc_key key;
	struct list_head drr;		/* q->active or q->stalled */
	struct sk_buff *head;
	struct sk_buff *tail;
	struct dmsc_session *sess;	/* NULL: the plain band */
	unsigned long idle_since;	/* jiffies: when its queue emptied */
	int deficit;
	bool stalled;
	struct list_head sess_node;	/* sess->stalled, under sess->lock */
	struct llist_node wake;		/* q->wake */
	struct cbfc_sched *q;
	u64 wait_since;			/* ns: when it last began to wait */
	struct list_head idle_node;	/* q->idle, from its first emptying */
};

/*
 * A flow whose next hop the heartbeat declared failed, or whose link went
 * down, with the packets it had waiting, handed from the dequeue or the
 * reset (qdisc lock, BH off) to the failover work (process context): the
 * tunnel switch takes the namespace mutex and the re-encapsulation sends.
 */
struct cbfc_fail {
	struct list_head list;		/* q->fo_list */
	struct dmsc_session *sess;	/* a reference */
	u32 event;			/* DMSC_EVENT_NEXTHOP_FAILED or _DOWN,
					 * 0: packets re-sent, no failure
					 */
	int ifindex;
	bool tunnel_down;		/* its tunnel's other sessions fail too */
	u64 waited_us;
	struct sk_buff_head skbs;
};

/* Cookies of cbfc qdiscs: a session knows the one it last went through. */
static atomic_long_t cbfc_cookies = ATOMIC_LONG_INIT(0);

struct cbfc_sched {
	struct Qdisc *sch;
	struct dmsc_net *dn;
	struct hlist_head *hash;
	u32 hash_mask;			/* buckets - 1 */
	u32 hash_rnd;
	struct list_head active;	/* flows in the round */
	struct list_head stalled;	/* flows waiting for credit */
	struct list_head idle;		/* flows that emptied, see the top */
	struct cbfc_flow plain;
	u32 n_flows;			/* credited flows with packets */
	u32 n_idle;			/* flows on q->idle with no packet */
	u32 n_stalled;
	u32 credited_qlen;		/* packets in credited flows */

	u32 limit;
	u32 flow_limit;
	u32 plain_limit;
	u32 credit;
	u32 quantum;
	u32 heartbeat_us;		/* 0: off */
	u32 credit_batch;		/* bytes forwarded per credit return */
	u64 hb_next;			/* ns: first heartbeat deadline, 0 none */
	u64 rate;			/* bytes/s, 0: no shaping */
	u64 time_next;			/* ns: when the rate allows a packet */
	struct qdisc_watchdog watchdog;

	struct llist_head wake;		/* flows whose session got credit */
	u32 drops_deq;			/* dropped in this dequeue: packets */
	u32 drops_deq_len;		/* ... and bytes, for the parents */
	struct tc_cbfc_xstats st;

	/* Failover (cbfc_fail): the list under fo_lock, the work's counts. */
	spinlock_t fo_lock;
	struct list_head fo_list;
	struct work_struct fo_work;
	atomic64_t fo_failovers;
	atomic64_t fo_drops;
	atomic64_t fo_idle;		/* failed over with nothing queued */
	bool fo_link;			/* under fo_lock: the link went down */
	bool down;			/* the link-down reset ran; until a packet */
	bool held;			/* dequeue holds: the carrier is lost */
	bool hold_new;			/* packets came or flows woke since */
	u64 hold_next;			/* ns: the held qdisc's next look */
	int ifindex;			/* the device's, from init */
	unsigned long cookie;		/* this qdisc, for sessions: not 0 */
};

static struct kmem_cache *cbfc_flow_cache __ro_after_init;

/*
 * Every flow of the hash, bucket by bucket; the body may unlink @f, or
 * free it. Only for the paths that must see them all (a link down, a
 * reset, a resize), never per packet. Two loops: a break does not end
 * the walk, it goes on with the next bucket.
 */
#define cbfc_for_each_flow(q, i, f, tmp)				\
	for ((i) = 0; (i) <= (q)->hash_mask; (i)++)			\
		hlist_for_each_entry_safe(f, tmp, &(q)->hash[(i)], hnode)

/* What the qdisc keeps in a queued skb: its length in credit units. */
struct cbfc_skb_cb {
	u32 credit_len;
};

static struct cbfc_skb_cb *cbfc_cb(const struct sk_buff *skb)
{
	qdisc_cb_private_validate(skb, sizeof(struct cbfc_skb_cb));
	return (struct cbfc_skb_cb *)qdisc_skb_cb(skb)->data;
}

/* The BTH destination QP follows the UDP header: bytes 5-7 of the BTH. */
static bool cbfc_parse_udp(const struct sk_buff *skb, int off,
			   struct dmsc_cbfc_key *key)
{
	struct udphdr _uh;
	const struct udphdr *uh;
	u8 _bth[CBFC_BTH_LEN];
	const u8 *bth;

	uh = skb_header_pointer(skb, off, sizeof(_uh), &_uh);
	if (!uh || uh->dest != htons(DMSC_ROCEV2_PORT))
		return false;
	bth = skb_header_pointer(skb, off + sizeof(*uh), sizeof(_bth), _bth);
	if (!bth)
		return false;
	key->sport = uh->source;
	key->qpn = (bth[5] << 16) | (bth[6] << 8) | bth[7];
	return true;
}

static bool cbfc_parse_v4(const struct sk_buff *skb, int off,
			  struct dmsc_cbfc_key *key, u32 *ilen)
{
	struct iphdr _iph;
	const struct iphdr *iph;

	iph = skb_header_pointer(skb, off, sizeof(_iph), &_iph);
	if (!iph || iph->ihl < 5 || iph->protocol != IPPROTO_UDP ||
	    ip_is_fragment(iph))
		return false;
	key->family = AF_INET;
	*ilen = ntohs(iph->tot_len);
	memcpy(&key->src, &iph->saddr, 4);
	memcpy(&key->dst, &iph->daddr, 4);
	return cbfc_parse_udp(skb, off + iph->ihl * 4, key);
}

/*
 * The RoCEv2 flow of the IPv6 packet at @off, or false. @outer: the
 * packet may be SRv6 (or plain IPv6-in-IPv6, H.Encaps.Red with one SID)
 * and then its inner packet is the flow; only one level is looked into.
 */
static bool cbfc_parse_v6(const struct sk_buff *skb, int off, bool outer,
			  struct dmsc_cbfc_key *key, u32 *ilen)
{
	struct ipv6hdr _ip6h;
	const struct ipv6hdr *ip6h;
	u8 nexthdr;

	ip6h = skb_header_pointer(skb, off, sizeof(_ip6h), &_ip6h);
	if (!ip6h)
		return false;
	nexthdr = ip6h->nexthdr;
	off += sizeof(*ip6h);
	if (nexthdr == IPPROTO_UDP) {
		key->family = AF_INET6;
		*ilen = sizeof(*ip6h) + ntohs(ip6h->payload_len);
		key->src = ip6h->saddr;
		key->dst = ip6h->daddr;
		return cbfc_parse_udp(skb, off, key);
	}
	if (!outer)
		return false;
	if (nexthdr == IPPROTO_ROUTING) {
		struct ipv6_sr_hdr _srh;
		const struct ipv6_sr_hdr *srh;

		srh = skb_header_pointer(skb, off, sizeof(_srh), &_srh);
		if (!srh || srh->type != IPV6_SRCRT_TYPE_4)
			return false;
		nexthdr = srh->nexthdr;
		off += (srh->hdrlen + 1) << 3;
	}
	if (nexthdr == IPPROTO_IPIP)
		return cbfc_parse_v4(skb, off, key, ilen);
	if (nexthdr == IPPROTO_IPV6)
		return cbfc_parse_v6(skb, off, false, key, ilen);
	return false;
}

/*
 * The flow of @skb and its length in credit units, *@ilen: the RoCEv2
 * packet's own IP length (the inner one of SRv6). The outer headers and
 * the link's differ from hop to hop (encapsulation at the PE, End at P,
 * decapsulation at the tail); the inner packet does not, so a byte
 * charged upstream is the byte the next hop counts freed.
 */
static bool cbfc_parse(const struct sk_buff *skb, struct dmsc_cbfc_key *key,
		       u32 *ilen)
{
	memset(key, 0, sizeof(*key));
	switch (skb->protocol) {
	case htons(ETH_P_IP):
		return cbfc_parse_v4(skb, skb_network_offset(skb), key, ilen);
	case htons(ETH_P_IPV6):
		return cbfc_parse_v6(skb, skb_network_offset(skb), true, key,
				     ilen);
	default:
		return false;
	}
}

/* A live session of @key with a reference for the caller, or NULL. */
static struct dmsc_session *cbfc_session_get(struct cbfc_sched *q,
					     const struct dmsc_cbfc_key *key)
{
	struct dmsc_session *s;

	rcu_read_lock();
	s = dmsc_session_lookup(q->dn, key);
	if (s && !refcount_inc_not_zero(&s->refcnt))
		s = NULL;
	rcu_read_unlock();
	/* Found before a concurrent delete unlinked it: no control. */
	if (s && READ_ONCE(s->dead)) {
		dmsc_session_put(s);
		s = NULL;
	}
	return s;
}

/* Off its session's stalled list: whether it was on it (else a no-op). */
static bool cbfc_flow_detach(struct cbfc_flow *f)
{
	bool waiting;

	spin_lock_bh(&f->sess->lock);
	waiting = !list_empty(&f->sess_node);
	list_del_init(&f->sess_node);
	spin_unlock_bh(&f->sess->lock);
	return waiting;
}

/* Back in the round; under the qdisc lock. */
static void cbfc_flow_unstall(struct cbfc_sched *q, struct cbfc_flow *f)
{
	if (!f->stalled)
		return;
	f->stalled = false;
	list_move_tail(&f->drr, &q->active);
	q->n_stalled--;
}

/*
 * Off the hash and q->idle, and freed: the caller took it off its round
 * and counted it out of n_idle.
 */
static void cbfc_flow_free(struct cbfc_flow *f)
{
	hlist_del(&f->hnode);
	list_del(&f->idle_node);
	dmsc_session_put(f->sess);
	kmem_cache_free(cbfc_flow_cache, f);
}

/* Just made: it never held a packet (an idle flow is on q->idle). */
static bool cbfc_flow_new(const struct cbfc_flow *f)
{
	return !f->qlen && list_empty(&f->idle_node);
}

/* An empty flow, idle or just made (on no list), goes. */
static void cbfc_flow_forget(struct cbfc_sched *q, struct cbfc_flow *f)
{
	if (!list_empty(&f->idle_node))
		q->n_idle--;
	cbfc_flow_free(f);
}

/*
 * Free, of the oldest idle flows and up to @max of them, those that have
 * waited CBFC_FLOW_IDLE for a packet or lost their session and those
 * beyond `limit`: the memory of idle flows is bounded as that of queued
 * packets is. Look at no more than @looks entries of q->idle: a new flow
 * frees up to CBFC_FLOW_GC_MAX and looks at four times as many (the work
 * a packet may do is bounded; entries left wait for the next new flow),
 * a change that lowers the limit frees all that are beyond it.
 */
static void cbfc_flow_gc(struct cbfc_sched *q, int max, unsigned int looks)
{
	struct cbfc_flow *f;
	int n = 0;

	while (n < max && looks--) {
		f = list_first_entry_or_null(&q->idle, struct cbfc_flow,
					     idle_node);
		if (!f)
			return;
		/* Busy again: off the list until it empties next. */
		if (f->qlen) {
			list_del_init(&f->idle_node);
			continue;
		}
		if (q->n_idle > q->limit || READ_ONCE(f->sess->dead) ||
		    !time_before(jiffies, f->idle_since + CBFC_FLOW_IDLE)) {
			cbfc_flow_forget(q, f);
			n++;
			continue;
		}
		/*
		 * Emptied again since it was listed, maybe after flows
		 * behind it, or the oldest and recent: to the back.
		 */
		list_move_tail(&f->idle_node, &q->idle);
	}
}

/*
 * Keyed over every bit of the key, since sessions, and so flows, may be
 * made for keys others chose (an RSVP speaker's PATH states): for IPv4,
 * whose addresses fill a word each, over the four words that hold it all,
 * a third of jhash2() over the whole key, which was much of the enqueue's
 * cost.
 */
static u32 cbfc_hash(const struct dmsc_cbfc_key *k, u32 rnd)
{
	u32 w[4];

	if (k->family != AF_INET)
		return jhash2((const u32 *)k, sizeof(*k) / 4, rnd);
	w[0] = k->src.s6_addr32[0];
	w[1] = k->dst.s6_addr32[0];
	w[2] = (u32)(__force u16)k->sport << 16 | k->family;
	w[3] = k->qpn;
	return jhash2(w, ARRAY_SIZE(w), rnd);
}

/* Keys are five u64s (with the padding zeroed): no memcmp() call. */
static bool cbfc_key_eq(const struct dmsc_cbfc_key *a,
			const struct dmsc_cbfc_key *b)
{
	const u64 *x = (const u64 *)a, *y = (const u64 *)b;

	BUILD_BUG_ON(sizeof(*a) != 5 * sizeof(u64));
	return !((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2]) |
		 (x[3] ^ y[3]) | (x[4] ^ y[4]));
}

/*
 * The config of @s's tunnel, when the tunnel exists and has a backup
 * list, with the tunnel in *@tunp; NULL otherwise. Under RCU.
 */
static const struct dmsc_tunnel_cfg *
cbfc_backup_cfg(struct cbfc_sched *q, const struct dmsc_session *s,
		struct dmsc_tunnel **tunp)
{
	const struct dmsc_tunnel_cfg *cfg;

	*tunp = dmsc_tunnel_lookup(q->dn, s->tunnel);
	cfg = *tunp ? rcu_dereference((*tunp)->cfg) : NULL;
	return cfg && cfg->has_backup ? cfg : NULL;
}

/*
 * Is @skb, of session @s, encapsulated for the primary list while the
 * session is off it: moved onto its backup's credit (dmsc_session_fail),
 * or failed with its tunnel on the backup? A packet that waited since
 * before the move, or was steered just before it, is not the backup's to
 * charge, and one of a failed session would pass uncontrolled into the
 * hop that failed: both are re-sent on the backup list
 * (cbfc_flow_resend). Told by its outer destination, the first SID of
 * the list it was encapsulated for (srv6.c), when it is at the head of
 * its flow: only for a moved or failed session is the tunnel looked up.
 */
static bool cbfc_old_path(struct cbfc_sched *q, struct dmsc_session *s,
			  const struct sk_buff *skb)
{
	bool moved = READ_ONCE(s->on_backup), failed = READ_ONCE(s->failed);
	const struct dmsc_tunnel_cfg *cfg;
	struct dmsc_tunnel *tun;
	bool old = false;

	if (likely(!moved && !failed) || !s->tunnel ||
	    skb->protocol != htons(ETH_P_IPV6))
		return false;
	rcu_read_lock();
	cfg = cbfc_backup_cfg(q, s, &tun);
	if (cfg && (!failed || READ_ONCE(tun->active) != DMSC_ACTIVE_PRIMARY))
		old = !ipv6_addr_equal(&ipv6_hdr(skb)->daddr,
				       &cfg->paths[DMSC_BACKUP_IDX].segs[0]);
	rcu_read_unlock();
	return old;
}

/*
 * Is @skb, of session @s, which is on its primary, encapsulated for the
 * backup list while its tunnel is on its primary (*@early false) or
 * moved early to the backup (*@early true)? Sent there by the hook
 * while the primary's first hop had lost its carrier (srv6.c,
 * dmsc_srv6_bypass), or after a link-down failover elsewhere moved the
 * tunnel: its session's next hop is still the primary's, behind that
 * link (cbfc_fail_early). Only when last_qdisc would change.
 */
static bool cbfc_early_path(struct cbfc_sched *q, struct dmsc_session *s,
			    const struct sk_buff *skb, bool *early)
{
	const struct dmsc_tunnel_cfg *cfg;
	struct dmsc_tunnel *tun;
	bool ret = false;
	u32 active;

	if (READ_ONCE(s->on_backup) || !s->tunnel ||
	    skb->protocol != htons(ETH_P_IPV6))
		return false;
	rcu_read_lock();
	cfg = cbfc_backup_cfg(q, s, &tun);
	active = cfg ? READ_ONCE(tun->active) : DMSC_ACTIVE_BACKUP;
	if (active == DMSC_ACTIVE_PRIMARY || active == DMSC_ACTIVE_EARLY) {
		const struct in6_addr *da = &ipv6_hdr(skb)->daddr;
		u32 i;

		ret = ipv6_addr_equal(da, &cfg->paths[DMSC_BACKUP_IDX].segs[0]);
		/* A primary list that starts there too: not told apart. */
		for (i = 0; ret && i < cfg->n_paths; i++)
			if (ipv6_addr_equal(da, &cfg->paths[i].segs[0]))
				ret = false;
		*early = active == DMSC_ACTIVE_EARLY;
	}
	rcu_read_unlock();
	return ret;
}

/*
 * The queue of @skb: its flow's, the plain band, or NULL when a new flow
 * could not be allocated.
 */
static struct cbfc_flow *cbfc_classify(struct cbfc_sched *q,
				       struct sk_buff *skb)
{
	struct dmsc_cbfc_key key;
	struct hlist_head *bucket;
	struct dmsc_session *s;
	struct cbfc_flow *f;
	u32 ilen = 0, hash;

	if (!cbfc_parse(skb, &key, &ilen))
		return &q->plain;
	cbfc_cb(skb)->credit_len = ilen;
	hash = cbfc_hash(&key, q->hash_rnd);
	bucket = &q->hash[hash & q->hash_mask];
	hlist_for_each_entry(f, bucket, hnode) {
		if (f->hash != hash || !cbfc_key_eq(&f->key, &key))
			continue;
		/* Its session was deleted and maybe added anew: take that. */
		if (unlikely(READ_ONCE(f->sess->dead))) {
			s = cbfc_session_get(q, &key);
			if (s) {
				/* The new session's credit has not been tried. */
				cbfc_flow_detach(f);
				cbfc_flow_unstall(q, f);
				dmsc_session_put(f->sess);
				f->sess = s;
			} else if (!f->qlen) {
				/* No session: the plain band, as if never seen. */
				cbfc_flow_forget(q, f);
				return &q->plain;
			}
		}
		return f;
	}
	s = cbfc_session_get(q, &key);
	if (!s)
		return &q->plain;
	if (!list_empty(&q->idle))
		cbfc_flow_gc(q, CBFC_FLOW_GC_MAX, 4 * CBFC_FLOW_GC_MAX);
	f = kmem_cache_zalloc(cbfc_flow_cache, GFP_ATOMIC | __GFP_NOWARN);
	if (!f) {
		dmsc_session_put(s);
		return NULL;
	}
	f->key = key;
	f->hash = hash;
	f->sess = s;
	f->q = q;
	f->idle_since = jiffies;
	INIT_LIST_HEAD(&f->drr);
	INIT_LIST_HEAD(&f->sess_node);
	INIT_LIST_HEAD(&f->idle_node);
	hlist_add_head(&f->hnode, bucket);
	return f;
}

/*
 * The flow of a packet that is then dropped: one made for it holds
 * nothing and goes; so does an idle one, which would have soon.
 */
static void cbfc_flow_drop_new(struct cbfc_sched *q, struct cbfc_flow *f)
{
	if (!f->qlen)
		cbfc_flow_forget(q, f);
}

static int cbfc_enqueue_segs(struct sk_buff *skb, struct Qdisc *sch,
			     struct sk_buff **to_free);
static bool cbfc_fail_early(struct Qdisc *sch, struct dmsc_session *s,
			    const struct sk_buff *skb);

static int cbfc_enqueue(struct sk_buff *skb, struct Qdisc *sch,
			struct sk_buff **to_free)
{
	struct cbfc_sched *q = qdisc_priv(sch);
	struct cbfc_flow *f;

	/*
	 * The limits drop: they bound the memory a qdisc may hold, whatever
	 * the credit says. A flow whose upstream honours credit never meets
	 * flow_limit (credit is less than the buffer it stands for); a host
	 * whose own socket sends faster than credit allows is held back by
	 * its send buffer, charged for the packets queued here, long before.
	 * So these are drops of traffic that is not under credit control or
	 * misbehaves, not drops for lack of credit.
	 *
	 * The plain band's room is its own: credited flows, which may wait
	 * for credit a long time, hold at most limit - plain_limit packets,
	 * so ARP/ND, routing and the credit messages themselves always find
	 * room (review finding 1).
	 */
	f = cbfc_classify(q, skb);
	if (unlikely(!f)) {
		q->st.drop_nomem++;
		return qdisc_drop(skb, sch, to_free);
	}
	if (f == &q->plain) {
		if (unlikely(f->qlen >= q->plain_limit)) {
			q->st.drop_plain_limit++;
			return qdisc_drop(skb, sch, to_free);
		}
	} else {
		/*
		 * Credit is counted per packet on the wire: a GSO skb of a
		 * credited flow could be larger than the session's whole
		 * reservation and never be covered (review finding 8).
		 */
		if (skb_is_gso(skb)) {
			/*
			 * Each segment finds its flow. One made for this skb
			 * (on no list) goes, or it would stay on no list if
			 * every segment failed; an idle one is kept for them.
			 */
			if (cbfc_flow_new(f))
				cbfc_flow_drop_new(q, f);
			return cbfc_enqueue_segs(skb, sch, to_free);
		}
		if (unlikely(q->credited_qlen >= q->limit - q->plain_limit)) {
			q->st.drop_limit++;
			cbfc_flow_drop_new(q, f);
			return qdisc_drop(skb, sch, to_free);
		}
		/* A new flow holds no packet yet: flow_limit >= 1 admits it. */
		if (unlikely(f->qlen >= q->flow_limit)) {
			q->st.drop_flow_limit++;
			return qdisc_drop(skb, sch, to_free);
		}
		q->credited_qlen++;
		q->st.backlog_credited += qdisc_pkt_len(skb);
		/* Where its next hop is: for a link down (cbfc_fail_link). */
		if (unlikely(READ_ONCE(f->sess->last_qdisc) != q->cookie) &&
		    !cbfc_fail_early(sch, f->sess, skb))
			WRITE_ONCE(f->sess->last_qdisc, q->cookie);
		/* Not while held: the carrier's loss is one link down. */
		if (!q->held || netif_carrier_ok(qdisc_dev(sch)))
			q->down = false;
	}
	skb->next = NULL;
	if (f->head)
		f->tail->next = skb;
	else
		f->head = skb;
	f->tail = skb;
	if (!f->qlen++) {
		f->deficit = q->quantum;
		if (f->sess) {
			/* Idle, or just made and on no list. */
			if (!list_empty(&f->idle_node))
				q->n_idle--;
			q->n_flows++;
		}
		list_move_tail(&f->drr, &q->active);
	}
	sch->q.qlen++;
	qdisc_qstats_backlog_inc(sch, skb);
	/* Something new for a held qdisc's next look (cbfc_hold). */
	q->hold_new = true;
	return NET_XMIT_SUCCESS;
}

/*
 * Segment a credited GSO skb and queue each segment as a packet of its
 * own, as tbf does; the parents learn the new count and length.
 */
static int cbfc_enqueue_segs(struct sk_buff *skb, struct Qdisc *sch,
			     struct sk_buff **to_free)
{
	netdev_features_t features = netif_skb_features(skb);
	unsigned int len = 0, prev_len = qdisc_pkt_len(skb);
	struct sk_buff *segs, *nskb;
	int nb = 0;

	segs = skb_gso_segment(skb, features & ~NETIF_F_GSO_MASK);
	if (IS_ERR_OR_NULL(segs)) {
		struct cbfc_sched *q = qdisc_priv(sch);

		q->st.drop_nomem++;
		return qdisc_drop(skb, sch, to_free);
	}
	skb_list_walk_safe(segs, segs, nskb) {
		unsigned int seg_len = segs->len;

		skb_mark_not_on_list(segs);
		qdisc_skb_cb(segs)->pkt_len = seg_len;
		if (cbfc_enqueue(segs, sch, to_free) == NET_XMIT_SUCCESS) {
			nb++;
			len += seg_len;
		}
	}
	if (!nb) {
		/* Each segment was dropped and counted: the skb was not. */
		kfree_skb(skb);
		return NET_XMIT_DROP;
	}
	qdisc_tree_reduce_backlog(sch, 1 - nb, prev_len - len);
	consume_skb(skb);
	return NET_XMIT_SUCCESS;
}

/*
 * Can @f send its head packet of @len bytes? If so the bytes are charged
 * to its session now, as one reservation. A deleted session no longer
 * controls.
 */
static bool cbfc_charge(const struct cbfc_flow *f, unsigned int len)
{
	return !f->sess || READ_ONCE(f->sess->dead) ||
	       READ_ONCE(f->sess->failed) ||
	       dmsc_session_charge(f->sess, len);
}

/* The flows whose session got credit rejoin the round, in wake order. */
static void cbfc_wake_flows(struct cbfc_sched *q)
{
	struct llist_node *list = llist_del_all(&q->wake);
	struct cbfc_flow *f, *tmp;

	list = llist_reverse_order(list);
	llist_for_each_entry_safe(f, tmp, list, wake)
		cbfc_flow_unstall(q, f);
}

/*
 * @f cannot send its head packet: wait on its session's stalled list.
 * The charge is tried again under the session's lock, which the credit
 * update takes to wake the list: either the update finds the flow there
 * or the flow sees the update's credit (or that the session was deleted).
 * Returns false when it can send after all (the bytes are then charged).
 */
static bool cbfc_stall(struct cbfc_sched *q, struct cbfc_flow *f,
		       unsigned int len)
{
	struct dmsc_session *s = f->sess;
	bool wait;

	spin_lock(&s->lock);
	wait = !READ_ONCE(s->dead) && !READ_ONCE(s->failed) &&
	       !dmsc_session_charge(s, len);
	if (wait) {
		/* The session's wait begins: creditret.c's keepalives. */
		if (list_empty(&s->stalled))
			atomic64_set(&s->wait_start, ktime_get_ns());
		list_add_tail(&f->sess_node, &s->stalled);
	}
	spin_unlock(&s->lock);
	if (!wait)
		return false;
	f->stalled = true;
	list_move_tail(&f->drr, &q->stalled);
	q->n_stalled++;
	q->st.credit_stalls++;
	/*
	 * Held back here, this hop forwards nothing of the session: list it
	 * for the credit-return work, which keeps its previous hop's
	 * heartbeat up while it waits (creditret.c, keepalives). No bytes.
	 */
	if (dmsc_session_returns(s))
		dmsc_cret_account(q->dn, s, 0, q->credit_batch, q->credit);
	/* 0: stalled while the heartbeat was off (cbfc_heartbeat). */
	f->wait_since = 0;
	if (q->heartbeat_us) {
		u64 deadline;

		f->wait_since = ktime_get_ns();
		deadline = f->wait_since + (u64)q->heartbeat_us * NSEC_PER_USEC;
		if (!q->hb_next || deadline < q->hb_next)
			q->hb_next = deadline;
	}
	return true;
}

/* Take the head packet of @f off the queues. */
static struct sk_buff *cbfc_flow_pop(struct Qdisc *sch, struct cbfc_flow *f)
{
	struct cbfc_sched *q = qdisc_priv(sch);
	struct sk_buff *skb = f->head;

	f->head = skb->next;
	skb->next = NULL;
	f->qlen--;
	sch->q.qlen--;
	qdisc_qstats_backlog_dec(sch, skb);
	if (f->sess) {
		q->st.backlog_credited -= qdisc_pkt_len(skb);
		q->credited_qlen--;
		if (!f->qlen)
			q->n_flows--;
	}
	return skb;
}

/* An empty flow leaves the round; a credited one is kept, idle. */
static void cbfc_flow_done(struct cbfc_sched *q, struct cbfc_flow *f)
{
	if (f->qlen)
		return;
	if (f == &q->plain) {
		list_del_init(&f->drr);
		return;
	}
	list_del_init(&f->drr);
	f->idle_since = jiffies;
	q->n_idle++;
	if (list_empty(&f->idle_node))
		list_add_tail(&f->idle_node, &q->idle);
}

/*
 * The head packet of @f is larger than its session's whole reservation:
 * no credit can ever cover it, so it is dropped and counted rather than
 * stalling the flow for good (review finding 8). A reservation of 0 is
 * none yet (the next hop has not answered): the flow waits, bounded by
 * the heartbeat. Dequeue context: the parents hear of it once the
 * dequeue ends.
 */
static bool cbfc_drop_oversize(struct Qdisc *sch, struct cbfc_flow *f,
			       unsigned int len)
{
	u64 credit = f->sess ? READ_ONCE(f->sess->credit) : 0;
	struct cbfc_sched *q = qdisc_priv(sch);
	struct sk_buff *skb;

	if (!credit || len <= credit)
		return false;
	skb = cbfc_flow_pop(sch, f);
	q->st.drop_oversize++;
	qdisc_qstats_drop(sch);
	q->drops_deq++;
	q->drops_deq_len += len;
	kfree_skb(skb);
	cbfc_flow_done(q, f);
	return true;
}

/* A failover of @s for the work; GFP_ATOMIC, NULL when out of memory. */
static struct cbfc_fail *cbfc_fail_new(struct Qdisc *sch,
				       struct dmsc_session *s, u32 event,
				       u64 waited)
{
	struct cbfc_fail *fail = kzalloc(sizeof(*fail),
					 GFP_ATOMIC | __GFP_NOWARN);

	if (!fail)
		return NULL;
	refcount_inc(&s->refcnt);	/* the flow holds one */
	fail->sess = s;
	fail->event = event;
	fail->ifindex = qdisc_dev(sch)->ifindex;
	fail->waited_us = div_u64(waited, NSEC_PER_USEC);
	__skb_queue_head_init(&fail->skbs);
	return fail;
}

/* A failover not made after all: its reference goes. */
static void cbfc_fail_free(struct cbfc_fail *fail)
{
	dmsc_session_put(fail->sess);
	kfree(fail);
}

/* BH off already from the dequeue and the core's reset, not from destroy. */
static void cbfc_fail_queue(struct cbfc_sched *q, struct cbfc_fail *fail)
{
	spin_lock_bh(&q->fo_lock);
	list_add_tail(&fail->list, &q->fo_list);
	spin_unlock_bh(&q->fo_lock);
	queue_work(system_highpri_wq, &q->fo_work);
}

/*
 * The heartbeat found @f waiting for @waited ns with no credit update
 * from its next hop: the next hop has failed. The session moves onto its
 * backup reservation, or is marked failed (no credit control from now
 * on: dmsc_session_fail); the flow's packets leave the queue for the
 * failover work, which sends them on the backup list (where they are
 * charged to the backup's credit, if the session moved), or are dropped
 * when the session names no tunnel, and the flow goes. Under the qdisc
 * lock.
 */
static void cbfc_fail_flow(struct Qdisc *sch, struct cbfc_flow *f, u64 waited)
{
	struct cbfc_sched *q = qdisc_priv(sch);
	struct dmsc_session *s = f->sess;
	struct cbfc_fail *fail;
	struct sk_buff *skb;
	bool stale;

	if (!cbfc_flow_detach(f))
		return;		/* credit came just now: it is on q->wake */
	q->st.heartbeat_failures++;
	/*
	 * Waiting since before its session moved onto the backup (another
	 * flow's failure moved it): its packets went the primary's way, to
	 * the hop that failed. They are re-sent on the backup list as a
	 * failed flow's are (no event, no switch); the session is not
	 * failed again. Otherwise the session fails: onto the backup's
	 * reservation if its tunnel goes to a backup list with it, else
	 * marked failed.
	 */
	stale = cbfc_old_path(q, s, f->head);
	fail = cbfc_fail_new(sch, s, stale ? 0 : DMSC_EVENT_NEXTHOP_FAILED,
			     waited);
	if (!stale)
		dmsc_session_fail(s, fail && s->tunnel &&
				  dmsc_tunnel_has_backup(q->dn, s->tunnel));
	/*
	 * New packets of its tunnel go to the backup from now on: until the
	 * work switches it they would be steered onto the primary, to a
	 * next hop that is silent, and be lost (a failed session's packets
	 * pass the qdisc).
	 */
	if (fail && s->tunnel)
		dmsc_tunnel_steer_backup(q->dn, s->tunnel);
	while (f->qlen) {
		skb = cbfc_flow_pop(sch, f);
		/* Gone from this qdisc either way: the parents must know. */
		q->drops_deq++;
		q->drops_deq_len += qdisc_pkt_len(skb);
		if (fail && s->tunnel) {
			__skb_queue_tail(&fail->skbs, skb);
		} else {
			q->st.drop_failed++;
			qdisc_qstats_drop(sch);
			kfree_skb(skb);
		}
	}
	f->stalled = false;
	list_del_init(&f->drr);
	q->n_stalled--;
	cbfc_flow_free(f);
	if (fail)
		cbfc_fail_queue(q, fail);
}

/*
 * The head packets of @f were encapsulated for the primary list, and its
 * session has moved onto its backup's credit (cbfc_old_path): they are
 * not charged to it. They go to the failover work to be re-sent on
 * the backup list, as a failed flow's are, with no event (the session did
 * not fail again); a cbfc qdisc there charges them to the backup's
 * credit. Under the qdisc lock, from dequeue.
 */
static void cbfc_flow_resend(struct Qdisc *sch, struct cbfc_flow *f)
{
	struct cbfc_sched *q = qdisc_priv(sch);
	struct cbfc_fail *fail;
	struct sk_buff *skb;

	fail = cbfc_fail_new(sch, f->sess, 0, 0);
	while (f->qlen && cbfc_old_path(q, f->sess, f->head)) {
		skb = cbfc_flow_pop(sch, f);
		q->drops_deq++;
		q->drops_deq_len += qdisc_pkt_len(skb);
		if (fail) {
			__skb_queue_tail(&fail->skbs, skb);
		} else {
			q->st.drop_nomem++;
			qdisc_qstats_drop(sch);
			kfree_skb(skb);
		}
	}
	cbfc_flow_done(q, f);
	if (fail)
		cbfc_fail_queue(q, fail);
}

/*
 * The link went down: the core resets the qdisc when the device loses its
 * carrier (linkwatch) or is set down (dev_close, which clears "running"
 * first), through dev_deactivate, which first points every tx queue at
 * noop_qdisc and then resets under the qdisc lock with BH off; and a
 * reset frees every packet. Only that reset is a link going down: not a
 * qdisc deleted or replaced (the device is up, or was deactivated and
 * its qdisc emptied then), nor one in a namespace being dismantled.
 */
static bool cbfc_link_down(struct net_device *dev)
{
	return !(netif_running(dev) && netif_carrier_ok(dev)) &&
	       rcu_access_pointer(netdev_get_tx_queue(dev, 0)->qdisc) ==
	       &noop_qdisc &&
	       check_net(dev_net(dev));
}

/*
 * A link-down failover can carry @s's packets, @head first: the session
 * is alive, not failed and not moved yet, its tunnel has a backup to go
 * to and is on its primary, or was moved early (by another link's
 * failover, or by the backup's qdisc: cbfc_fail_early) in the same
 * moment while @head went the primary's way, into this link. Anything
 * else would mark it failed (credit control off for good) and re-send
 * onto a path no better than the one that went (a tunnel on its backup,
 * whose packets here went the backup's way). A moved session's packets
 * for the primary are re-sent, not failed over (cbfc_resend_old). Under
 * RCU.
 */
static bool cbfc_can_fail_over(struct cbfc_sched *q, struct dmsc_session *s,
			       const struct sk_buff *head)
{
	const struct dmsc_tunnel_cfg *cfg;
	struct dmsc_tunnel *tun;

	if (!s->tunnel || READ_ONCE(s->dead) || READ_ONCE(s->failed) ||
	    READ_ONCE(s->on_backup))
		return false;
	cfg = cbfc_backup_cfg(q, s, &tun);
	if (!cfg)
		return false;
	switch (READ_ONCE(tun->active)) {
	case DMSC_ACTIVE_PRIMARY:
		return true;
	case DMSC_ACTIVE_EARLY:
		return head->protocol == htons(ETH_P_IPV6) &&
		       !ipv6_addr_equal(&ipv6_hdr(head)->daddr,
					&cfg->paths[DMSC_BACKUP_IDX].segs[0]);
	default:
		return false;
	}
}

/*
 * Then a credited flow that can fail over does, as on a heartbeat
 * failure but at once: its next hop is behind this link, and its
 * packets, never sent, go out on the backup through the work. From the
 * reset (@deq false) the others' packets are freed by the reset that
 * follows, as before. From a dequeue that found the carrier lost
 * (@deq, cbfc_hold) the qdisc lives on: the packets taken are told to
 * the parents, the flow stays, empty, and one on q->wake is left for a
 * later look.
 */
static void cbfc_fail_link(struct Qdisc *sch, bool deq)
{
	struct cbfc_sched *q = qdisc_priv(sch);
	u64 now = ktime_get_ns();
	struct cbfc_fail *fail;
	struct hlist_node *tmp;
	struct sk_buff *skb;
	struct cbfc_flow *f;
	unsigned int i;
	LIST_HEAD(fails);
	u64 waited;

	rcu_read_lock();
	cbfc_for_each_flow(q, i, f, tmp) {
		if (!f->qlen || !cbfc_can_fail_over(q, f->sess, f->head))
			continue;
		/* wait_since: 0 while the heartbeat is off. */
		waited = f->stalled && f->wait_since ?
			 now - f->wait_since : 0;
		/* One on q->wake is left for a later look. */
		if (deq && f->stalled) {
			if (!cbfc_flow_detach(f))
				continue;
			cbfc_flow_unstall(q, f);
		}
		fail = cbfc_fail_new(sch, f->sess,
				     DMSC_EVENT_NEXTHOP_DOWN, waited);
		if (!fail) {
			/* Held: the reset tries again, or frees. */
			if (!deq)
				q->st.drop_nomem += f->qlen;
			continue;
		}
		/* Moved by the backup's qdisc just now: re-sent. */
		if (!dmsc_session_fail_primary(f->sess)) {
			cbfc_fail_free(fail);
			continue;
		}
		q->st.link_failures++;
		/* The reset that follows zeroes the counts. */
		while (f->qlen) {
			skb = cbfc_flow_pop(sch, f);
			if (deq) {
				q->drops_deq++;
				q->drops_deq_len += qdisc_pkt_len(skb);
			}
			__skb_queue_tail(&fail->skbs, skb);
		}
		f->tail = NULL;
		if (deq)
			cbfc_flow_done(q, f);
		list_add_tail(&fail->list, &fails);
	}
	rcu_read_unlock();
	/*
	 * Steered early only now: every flow of a tunnel was tested on
	 * its primary, the tunnel's second flow here too.
	 */
	list_for_each_entry(fail, &fails, list)
		dmsc_tunnel_steer_backup(q->dn, fail->sess->tunnel);
	/*
	 * Then the sessions that last went out here with nothing queued
	 * now: the work finds them (dmsc_session_fail_link), first. Once
	 * a link down: the resets that follow while the device stays down
	 * (a second deactivation, the qdisc's deletion or destroy) and the
	 * looks of a held qdisc find nothing new, until a packet comes.
	 */
	if (q->down && list_empty(&fails))
		return;
	spin_lock_bh(&q->fo_lock);
	if (!q->down)
		q->fo_link = true;
	list_splice_tail(&fails, &q->fo_list);
	spin_unlock_bh(&q->fo_lock);
	q->down = true;
	queue_work(system_highpri_wq, &q->fo_work);
}

/*
 * The packets at the head of each flow that were encapsulated for a
 * primary list its session has left (cbfc_old_path), re-sent on the
 * backup: those a link down finds queued, steered just before their
 * session moved. From a held dequeue (@deq) not a stalled flow's, which
 * the failover wakes; from the reset every flow's, since it frees the
 * rest.
 */
static void cbfc_resend_old(struct Qdisc *sch, bool deq)
{
	struct cbfc_sched *q = qdisc_priv(sch);
	struct hlist_node *tmp;
	struct cbfc_flow *f;
	unsigned int i;

	cbfc_for_each_flow(q, i, f, tmp)
		if (f->qlen && !(deq && f->stalled) &&
		    cbfc_old_path(q, f->sess, f->head))
			cbfc_flow_resend(sch, f);
}

/*
 * A packet of @s came here encapsulated for its tunnel's backup list
 * while @s is on its primary (cbfc_early_path): the hook bypassed a
 * primary's first hop that lost its carrier (srv6.c, dmsc_srv6_bypass),
 * or a failover moved the tunnel early for such a link. That link is
 * down for @s, and the qdisc behind it may see so only at its reset, or
 * never (a carrier back before linkwatch deactivated the device; no
 * qdisc there). So @s fails over here, as that qdisc's link-down
 * failover would (cbfc_fail_link): onto its backup's credit (or marked
 * failed), with a nexthop-down event naming that device, its tunnel to
 * the backup, and then the tunnel's other sessions (the work,
 * dmsc_session_fail_tunnel); its packets here are charged to the backup
 * hop, which sees them, not to the primary's, which never would. The
 * device is found by the primaries' cached routes, as the hook left them
 * (a marked packet's are not cached, and then nothing is done here).
 * Returns whether the packet must leave the session's last_qdisc as it
 * is: a packet of the primary's, or one for the backup of a tunnel on
 * its primary with no first hop down (queued before an operator's
 * switch back). Under the qdisc lock, from enqueue.
 */
static bool cbfc_fail_early(struct Qdisc *sch, struct dmsc_session *s,
			    const struct sk_buff *skb)
{
	struct cbfc_sched *q = qdisc_priv(sch);
	const struct dmsc_tunnel_cfg *cfg;
	struct dmsc_tunnel *tun;
	struct cbfc_fail *fail;
	int ifindex = 0;
	bool early;

	if (!cbfc_early_path(q, s, skb, &early))
		return false;
	/* Failed already, or never charged: nothing to move, no event. */
	if (!s->has_nexthop || READ_ONCE(s->failed) || READ_ONCE(s->dead))
		return !early;
	rcu_read_lock();
	cfg = cbfc_backup_cfg(q, s, &tun);
	if (cfg)
		ifindex = dmsc_srv6_primary_down(cfg);
	rcu_read_unlock();
	if (!ifindex)
		return !early;
	fail = cbfc_fail_new(sch, s, DMSC_EVENT_NEXTHOP_DOWN, 0);
	if (!fail)
		return true;
	/* The link's own qdisc, or another CPU here, got there first. */
	if (!dmsc_session_fail_primary(s)) {
		cbfc_fail_free(fail);
		return true;
	}
	fail->ifindex = ifindex;
	fail->tunnel_down = true;
	q->st.link_failures++;
	dmsc_tunnel_steer_backup(q->dn, s->tunnel);
	cbfc_fail_queue(q, fail);
	return true;
}

/*
 * Fail the flows that have waited a heartbeat since they stalled and
 * since their session's last credit update; the next deadline is the
 * earliest of the others'. Under the qdisc lock, from dequeue.
 */
static void cbfc_heartbeat(struct Qdisc *sch, u64 now)
{
	struct cbfc_sched *q = qdisc_priv(sch);
	u64 hb = (u64)q->heartbeat_us * NSEC_PER_USEC, next = 0;
	struct cbfc_flow *f, *tmp;

	list_for_each_entry_safe(f, tmp, &q->stalled, drr) {
		u64 since;

		/* Stalled while the heartbeat was off: it counts from now. */
		if (!f->wait_since)
			f->wait_since = now;
		since = max_t(u64, f->wait_since,
			      atomic64_read(&f->sess->last_update));

		if ((s64)(now - since) < (s64)hb) {
			if (!next || since + hb < next)
				next = since + hb;
			continue;
		}
		cbfc_fail_flow(sch, f, now - since);
	}
	q->hb_next = q->heartbeat_us ? next : 0;
}

/*
 * @skb as the qdisc holds it, an SRv6 packet of dmsc's (outer IPv6, an
 * optional SRH, then IPv4 or IPv6): leave the inner packet, its network
 * header at skb->data, as dmsc_srv6_xmit() takes it. The qdisc sees
 * packets after encapsulation (dmsc steers at POST_ROUTING, before the
 * device), so this is the only shape a failover has to undo.
 */
static int cbfc_strip(struct sk_buff *skb, u8 *family)
{
	unsigned int off = skb_network_offset(skb) + sizeof(struct ipv6hdr);
	unsigned int inner;
	u8 nexthdr;

	if (skb->protocol != htons(ETH_P_IPV6) || !pskb_may_pull(skb, off))
		return -EINVAL;
	nexthdr = ipv6_hdr(skb)->nexthdr;
	if (nexthdr == IPPROTO_ROUTING) {
		const struct ipv6_sr_hdr *srh;

		if (!pskb_may_pull(skb, off + sizeof(*srh)))
			return -EINVAL;
		srh = (const struct ipv6_sr_hdr *)(skb->data + off);
		nexthdr = srh->nexthdr;
		off += (srh->hdrlen + 1) << 3;
	}
	if (nexthdr == IPPROTO_IPIP) {
		*family = AF_INET;
		inner = sizeof(struct iphdr);
	} else if (nexthdr == IPPROTO_IPV6) {
		*family = AF_INET6;
		inner = sizeof(struct ipv6hdr);
	} else {
		return -EINVAL;
	}
	if (!pskb_may_pull(skb, off + inner))
		return -EINVAL;
	__skb_pull(skb, off);
	skb_reset_network_header(skb);
	skb_reset_mac_header(skb);
	skb->mac_len = 0;
	skb->encapsulation = 0;
	/*
	 * What belonged to the outer packet goes: its route (a device that
	 * keeps it, a VLAN or a tunnel, would hand dmsc_srv6_xmit() an IPv6
	 * route as the inner one, which an ICMP error for an IPv4 inner
	 * would read as an rtable), this qdisc's cb and its conntrack entry.
	 */
	skb_dst_drop(skb);
	nf_reset_ct(skb);
	memset(skb->cb, 0, sizeof(skb->cb));
	/*
	 * Nor its device, which may be down or going: the packet leaves
	 * as this node's own, with no input device for the hooks to see.
	 */
	skb->dev = NULL;
	if (*family == AF_INET) {
		if (ip_hdr(skb)->ihl < 5)
			return -EINVAL;
		skb->protocol = htons(ETH_P_IP);
		skb_set_transport_header(skb, ip_hdr(skb)->ihl * 4);
	} else {
		skb->protocol = htons(ETH_P_IPV6);
		skb_set_transport_header(skb, sizeof(struct ipv6hdr));
	}
	return 0;
}

/*
 * One failed flow, in process context: the tunnel of its session moves
 * to its backup, the event goes out, and the packets that were waiting
 * are re-encapsulated onto the backup list and sent (route lookup and
 * all, as the steering hook does). A re-send (no event) only sends.
 * Without a tunnel, or a backup, they are dropped and counted.
 */
static void cbfc_failover(struct cbfc_sched *q, struct cbfc_fail *fail)
{
	struct dmsc_session *s = fail->sess;
	struct dmsc_net *dn = q->dn;
	const struct dmsc_tunnel_cfg *cfg = NULL;
	struct dmsc_tunnel *tun = NULL;
	struct dmsc_path *path;
	struct sk_buff *skb;
	bool backup;

	/*
	 * A failure switches the tunnel. A re-send (no event) does not:
	 * the move of its session that made its packets old comes with a
	 * switch of its own (a failure's work, a link's, or the operator's
	 * TUNNEL_SET), and an operator's switch back to the primary made
	 * since, before this work ran, must stand. Its packets still go
	 * out on the backup list, as encapsulated anew below.
	 */
	backup = s->tunnel &&
		 (!fail->event || dmsc_tunnel_failover(dn, s->tunnel));
	if (fail->event)
		dmsc_session_notify_failed(dn, s, fail->event, fail->ifindex,
					   fail->waited_us);
	rcu_read_lock();
	/*
	 * Its flows that wait for credit in other qdiscs go on now, as
	 * the failed or moved session lets them: those on the backup's
	 * device may hold packets the hook sent the backup's way while
	 * this link was down (dmsc_srv6_bypass), before the session
	 * failed; no credit the dead hop owes would ever wake them. A
	 * woken head encapsulated for the primary is re-sent
	 * (cbfc_old_path).
	 */
	if (fail->event)
		dmsc_cbfc_wake(s);
	if (backup) {
		tun = dmsc_tunnel_lookup(dn, s->tunnel);
		cfg = tun ? rcu_dereference(tun->cfg) : NULL;
		if (cfg && !cfg->has_backup)
			cfg = NULL;
	}
	/* A failure's, not a re-send of packets encapsulated for before. */
	if (cfg && fail->event)
		atomic64_inc(&q->fo_failovers);
	while ((skb = __skb_dequeue(&fail->skbs))) {
		unsigned int len;
		u8 family;

		if (!cfg || cbfc_strip(skb, &family)) {
			atomic64_inc(&q->fo_drops);
			kfree_skb(skb);
			continue;
		}
		len = skb->len;
		path = (struct dmsc_path *)&cfg->paths[DMSC_BACKUP_IDX];
		if (dmsc_srv6_xmit(dn->net, skb, cfg, &path,
				   family) == DMSC_TX_OK)
			dmsc_tunnel_count(tun, DMSC_BACKUP_IDX, len);
		else
			atomic64_inc(&q->fo_drops);
	}
	rcu_read_unlock();
}

static void cbfc_failover_work(struct work_struct *work)
{
	struct cbfc_sched *q = container_of(work, struct cbfc_sched, fo_work);
	struct cbfc_fail *fail, *tmp;
	LIST_HEAD(list);
	bool link;

	spin_lock_bh(&q->fo_lock);
	list_splice_init(&q->fo_list, &list);
	link = q->fo_link;
	q->fo_link = false;
	spin_unlock_bh(&q->fo_lock);
	/*
	 * The link's idle sessions first: their tunnels may be the ones
	 * the reset moved early for its queued flows, and those flows'
	 * failovers below switch them.
	 */
	if (link)
		atomic64_add(dmsc_session_fail_link(q->dn, q->cookie,
						    q->ifindex),
			     &q->fo_idle);
	list_for_each_entry_safe(fail, tmp, &list, list) {
		list_del(&fail->list);
		/* Before the switch, which moves them with no event. */
		if (fail->tunnel_down)
			atomic64_add(dmsc_session_fail_tunnel(q->dn,
							      fail->sess->tunnel,
							      fail->ifindex),
				     &q->fo_idle);
		cbfc_failover(q, fail);
		dmsc_session_put(fail->sess);
		kfree(fail);
	}
}

/*
 * The device has lost its carrier, and the core has not deactivated it
 * yet (linkwatch does, and resets the qdisc, up to a second later for a
 * NIC). Whatever is dequeued now goes into a link that cannot carry it:
 * veth drops it with its peer down, a NIC whose driver did not stop its
 * queue loses it. So nothing leaves, and the link-down failover the
 * reset would make is made now (cbfc_fail_link): the credited flows and
 * their packets go to the backup, and the tunnels with them. Packets
 * that come meanwhile for the primary list, of sessions that moved
 * (here, or by the backup's qdisc: cbfc_fail_early), are re-sent on the
 * backup (cbfc_resend_old); those that cannot fail over wait for the
 * reset, which frees them as before. A carrier that comes back before
 * linkwatch (a short flap, no reset) is seen by the watchdog, which
 * looks every CBFC_HOLD_POLL_NS meanwhile; the tunnels stay on their
 * backups, as after a heartbeat failure.
 */
static bool cbfc_hold(struct Qdisc *sch)
{
	struct cbfc_sched *q = qdisc_priv(sch);
	struct net_device *dev = qdisc_dev(sch);
	u64 now;

	if (likely(netif_carrier_ok(dev))) {
		q->held = false;
		return false;
	}
	now = ktime_get_ns();
	if (!q->held) {
		/* A new link down, whatever the last one left. */
		q->held = true;
		q->down = false;
		q->hold_next = now;
		q->hold_new = true;
		q->st.carrier_holds++;
	}
	/*
	 * At most once a poll, and only with packets come or flows woken
	 * since the last look: packets that cannot fail over (the plain
	 * band, sessions with no tunnel) may be held until the reset.
	 */
	if (now >= q->hold_next && q->hold_new) {
		q->hold_new = false;
		if (netif_running(dev) && check_net(dev_net(dev))) {
			cbfc_fail_link(sch, true);
			cbfc_resend_old(sch, true);
		}
		q->hold_next = now + CBFC_HOLD_POLL_NS;
	}
	if (sch->q.qlen)
		qdisc_watchdog_schedule_ns(&q->watchdog,
					   max(q->hold_next,
					       now + CBFC_HOLD_POLL_NS));
	return true;
}

static struct sk_buff *cbfc_dequeue_one(struct Qdisc *sch)
{
	struct cbfc_sched *q = qdisc_priv(sch);
	struct sk_buff *skb;
	struct cbfc_flow *f;
	unsigned int len, clen;
	u64 now = 0;

	if (!llist_empty(&q->wake)) {
		cbfc_wake_flows(q);
		q->hold_new = true;
	}
	if (q->hb_next) {
		now = ktime_get_ns();
		if (now >= q->hb_next)
			cbfc_heartbeat(sch, now);
	}
	if (!sch->q.qlen)
		return NULL;
	if (unlikely(cbfc_hold(sch)))
		return NULL;
	if (q->rate) {
		now = ktime_get_ns();
		if (now < q->time_next) {
			qdisc_watchdog_schedule_ns(&q->watchdog, q->time_next);
			return NULL;
		}
	}
	for (;;) {
		f = list_first_entry_or_null(&q->active, struct cbfc_flow, drr);
		if (!f) {
			/* All wait for credit: see wake, and the heartbeat. */
			if (q->hb_next)
				qdisc_watchdog_schedule_ns(&q->watchdog,
							   q->hb_next);
			return NULL;
		}
		if (f->deficit <= 0) {
			f->deficit += q->quantum;
			list_move_tail(&f->drr, &q->active);
			continue;
		}
		if (unlikely(f->sess && cbfc_old_path(q, f->sess, f->head))) {
			cbfc_flow_resend(sch, f);
			continue;
		}
		/* Last: a successful charge is a packet that leaves. */
		len = qdisc_pkt_len(f->head);
		clen = f->sess ? cbfc_cb(f->head)->credit_len : len;
		if (!cbfc_charge(f, clen)) {
			if (cbfc_drop_oversize(sch, f, clen))
				continue;
			if (cbfc_stall(q, f, clen))
				continue;
		}
		break;
	}
	skb = cbfc_flow_pop(sch, f);
	f->deficit -= len;
	qdisc_bstats_update(sch, skb);
	if (f->sess) {
		atomic64_inc(&f->sess->packets);
		q->st.credited_packets++;
		/* Freed here: the previous hop may send it again. */
		if (dmsc_session_returns(f->sess) && !READ_ONCE(f->sess->dead))
			dmsc_cret_account(q->dn, f->sess, clen, q->credit_batch,
					  q->credit);
	} else {
		q->st.plain_packets++;
	}
	cbfc_flow_done(q, f);
	if (q->rate) {
		u64 delay = div64_u64((u64)len * NSEC_PER_SEC, q->rate);

		/*
		 * time_next is a virtual clock: it advances by each packet's
		 * time at the rate, not from now. When the watchdog or the
		 * softirq was late, the packets the rate allowed meanwhile
		 * may leave back to back, up to CBFC_RATE_LAG_NS of them: a
		 * timer that fires only on ticks (4 ms at HZ=250 where
		 * hrtimers are coarse) would otherwise let one packet out per
		 * tick, whatever the rate. The bound keeps an idle qdisc from
		 * saving up a burst.
		 */
		if (q->time_next + CBFC_RATE_LAG_NS < now)
			q->time_next = now - CBFC_RATE_LAG_NS;
		q->time_next += delay;
	}
	return skb;
}

static struct sk_buff *cbfc_dequeue(struct Qdisc *sch)
{
	struct cbfc_sched *q = qdisc_priv(sch);
	struct sk_buff *skb = cbfc_dequeue_one(sch);

	/*
	 * Also when this emptied the qdisc (a failover or an oversize drop
	 * of the last packets): qlen_notify is idempotent in both kernels,
	 * and fq_codel reports unconditionally there too. Held back, the
	 * count would be lost to the next reset and the parents' qlen and
	 * backlog would stay high for good.
	 */
	if (q->drops_deq) {
		qdisc_tree_reduce_backlog(sch, q->drops_deq, q->drops_deq_len);
		q->drops_deq = 0;
		q->drops_deq_len = 0;
	}
	return skb;
}

/*
 * The session @s got credit, was deleted, failed or moved onto its
 * backup: its waiting flows, in every qdisc, rejoin their round. A flow on s->stalled is alive (it leaves the
 * list under s->lock before it is freed, see cbfc_reset), and so is its
 * qdisc; qdisc_root() is the device's current root, which is not this
 * qdisc any more once it is being replaced, as in qdisc_watchdog. Called
 * under rcu_read_lock(), which keeps @s and the root.
 */
void dmsc_cbfc_wake(struct dmsc_session *s)
{
	struct cbfc_flow *f, *tmp;

	spin_lock_bh(&s->lock);
	list_for_each_entry_safe(f, tmp, &s->stalled, sess_node) {
		list_del_init(&f->sess_node);
		llist_add(&f->wake, &f->q->wake);
		__netif_schedule(qdisc_root(f->q->sch));
	}
	spin_unlock_bh(&s->lock);
}

static void cbfc_flow_purge(struct cbfc_flow *f)
{
	struct sk_buff *skb = f->head;

	while (skb) {
		struct sk_buff *next = skb->next;

		rtnl_kfree_skbs(skb, skb);
		skb = next;
	}
	f->head = NULL;
	f->tail = NULL;
	f->qlen = 0;
}

static void cbfc_reset(struct Qdisc *sch)
{
	struct cbfc_sched *q = qdisc_priv(sch);
	struct hlist_node *tmp;
	struct cbfc_flow *f;
	unsigned int i;

	if (!q->hash)
		return;
	if (cbfc_link_down(qdisc_dev(sch))) {
		cbfc_fail_link(sch, false);
		/*
		 * Every flow's: a stalled one emptied here leaves
		 * q->stalled still marked stalled, which is sound only
		 * because what follows detaches and frees every flow.
		 */
		cbfc_resend_old(sch, false);
	}
	/*
	 * First off every session's stalled list: from then on no credit
	 * update can put a flow of ours on q->wake, which is emptied next.
	 */
	cbfc_for_each_flow(q, i, f, tmp)
		/*
		 * Only a stalled flow is on s->stalled. Not f->qlen:
		 * cbfc_fail_link() just emptied those it failed over.
		 */
		if (f->stalled)
			cbfc_flow_detach(f);
	init_llist_head(&q->wake);
	cbfc_for_each_flow(q, i, f, tmp) {
		cbfc_flow_purge(f);
		cbfc_flow_free(f);
	}
	cbfc_flow_purge(&q->plain);
	INIT_LIST_HEAD(&q->active);
	INIT_LIST_HEAD(&q->stalled);
	INIT_LIST_HEAD(&q->idle);
	INIT_LIST_HEAD(&q->plain.drr);
	q->n_flows = 0;
	q->n_idle = 0;
	q->n_stalled = 0;
	q->st.backlog_credited = 0;
	q->credited_qlen = 0;
	q->drops_deq = 0;
	q->drops_deq_len = 0;
	q->hb_next = 0;
	q->time_next = 0;
	q->held = false;
	sch->q.qlen = 0;
	sch->qstats.backlog = 0;
}

/*
 * u32 ranges beyond the s16 bounds of NLA_POLICY_RANGE. Not const: 6.1's
 * struct nla_policy points at them through a non-const pointer.
 */
static struct netlink_range_validation cbfc_limit_range = {
	.min = 1, .max = CBFC_LIMIT_MAX,
};

static struct netlink_range_validation cbfc_credit_range = {
	.min = 0, .max = CBFC_CREDIT_MAX,
};

static struct netlink_range_validation cbfc_quantum_range = {
	.min = CBFC_QUANTUM_MIN, .max = CBFC_QUANTUM_MAX,
};

static struct netlink_range_validation cbfc_heartbeat_range = {
	.min = 0, .max = CBFC_HEARTBEAT_MAX,
};

static struct netlink_range_validation cbfc_batch_range = {
	.min = CBFC_CREDIT_BATCH_MIN, .max = CBFC_CREDIT_BATCH_MAX,
};

static const struct nla_policy cbfc_policy[TCA_CBFC_MAX + 1] = {
	[TCA_CBFC_LIMIT]	= NLA_POLICY_FULL_RANGE(NLA_U32, &cbfc_limit_range),
	[TCA_CBFC_FLOW_LIMIT]	= NLA_POLICY_FULL_RANGE(NLA_U32, &cbfc_limit_range),
	[TCA_CBFC_PLAIN_LIMIT]	= NLA_POLICY_FULL_RANGE(NLA_U32, &cbfc_limit_range),
	[TCA_CBFC_CREDIT]	= NLA_POLICY_FULL_RANGE(NLA_U32, &cbfc_credit_range),
	[TCA_CBFC_QUANTUM]	= NLA_POLICY_FULL_RANGE(NLA_U32,
							&cbfc_quantum_range),
	/* 0 is off: the minimum is checked in cbfc_change(). */
	[TCA_CBFC_HEARTBEAT]	= NLA_POLICY_FULL_RANGE(NLA_U32,
							&cbfc_heartbeat_range),
	[TCA_CBFC_CREDIT_BATCH]	= NLA_POLICY_FULL_RANGE(NLA_U32,
							&cbfc_batch_range),
	[TCA_CBFC_RATE]		= { .type = NLA_U64 },
};

static u32 cbfc_get(struct nlattr **tb, int type, u32 cur)
{
	return tb[type] ? nla_get_u32(tb[type]) : cur;
}

static u32 cbfc_hash_size(u32 limit)
{
	return clamp_t(u32, roundup_pow_of_two(max(limit / 2, 1U)),
		       CBFC_HASH_MIN, CBFC_HASH_MAX);
}

/*
 * Empty buckets for @limit, their mask in *@mask. Charged to the
 * creator: qdiscs can be made in a user namespace.
 */
static struct hlist_head *cbfc_hash_alloc(u32 limit, u32 *mask)
{
	u32 i, n = cbfc_hash_size(limit);
	struct hlist_head *h;

	h = kvmalloc_array(n, sizeof(*h), GFP_KERNEL_ACCOUNT);
	if (!h)
		return NULL;
	for (i = 0; i < n; i++)
		INIT_HLIST_HEAD(&h[i]);
	*mask = n - 1;
	return h;
}

/* Every flow into @h by its stored hash; under the qdisc lock. */
static void cbfc_hash_move(struct cbfc_sched *q, struct hlist_head *h,
			   u32 mask)
{
	struct hlist_node *tmp;
	struct cbfc_flow *f;
	u32 i;

	cbfc_for_each_flow(q, i, f, tmp) {
		hlist_del(&f->hnode);
		hlist_add_head(&f->hnode, &h[f->hash & mask]);
	}
}

static int cbfc_change(struct Qdisc *sch, struct nlattr *opt,
		       struct netlink_ext_ack *extack)
{
	struct cbfc_sched *q = qdisc_priv(sch);
	struct nlattr *tb[TCA_CBFC_MAX + 1];
	struct hlist_head *nhash = NULL, *ohash = NULL;
	u32 limit, flow_limit, plain_limit, heartbeat_us, nmask = 0;
	struct cbfc_flow *f;
	int err;

	err = nla_parse_nested(tb, TCA_CBFC_MAX, opt, cbfc_policy, extack);
	if (err)
		return err;
	/* Checked together before anything changes: all or nothing. */
	limit = cbfc_get(tb, TCA_CBFC_LIMIT, q->limit);
	flow_limit = cbfc_get(tb, TCA_CBFC_FLOW_LIMIT, q->flow_limit);
	plain_limit = cbfc_get(tb, TCA_CBFC_PLAIN_LIMIT, q->plain_limit);
	if (flow_limit > limit) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_CBFC_FLOW_LIMIT] ?:
				    tb[TCA_CBFC_LIMIT],
				    "cbfc: flow_limit exceeds limit");
		return -EINVAL;
	}
	if (tb[TCA_CBFC_HEARTBEAT] && nla_get_u32(tb[TCA_CBFC_HEARTBEAT]) &&
	    nla_get_u32(tb[TCA_CBFC_HEARTBEAT]) < CBFC_HEARTBEAT_MIN) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_CBFC_HEARTBEAT],
				    "cbfc: heartbeat below 10ms (0 is off)");
		return -EINVAL;
	}
	/* limit - plain_limit is the credited flows' room: not 0. */
	if (plain_limit >= limit) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_CBFC_PLAIN_LIMIT] ?:
				    tb[TCA_CBFC_LIMIT],
				    "cbfc: plain_limit must be below limit");
		return -EINVAL;
	}
	/* The buckets follow limit; the last step that can fail. */
	if (!q->hash || cbfc_hash_size(limit) != q->hash_mask + 1) {
		nhash = cbfc_hash_alloc(limit, &nmask);
		if (!nhash) {
			NL_SET_ERR_MSG(extack, "cbfc: no memory for the flow hash");
			return -ENOMEM;
		}
	}

	sch_tree_lock(sch);
	if (nhash) {
		if (q->hash)
			cbfc_hash_move(q, nhash, nmask);
		ohash = q->hash;
		q->hash = nhash;
		q->hash_mask = nmask;
	}
	q->limit = limit;
	q->flow_limit = flow_limit;
	q->plain_limit = plain_limit;
	/* Idle flows beyond a lowered limit go now, not in a softirq. */
	if (q->n_idle > limit)
		cbfc_flow_gc(q, q->n_idle - limit, UINT_MAX);
	q->credit = cbfc_get(tb, TCA_CBFC_CREDIT, q->credit);
	q->quantum = cbfc_get(tb, TCA_CBFC_QUANTUM, q->quantum);
	heartbeat_us = cbfc_get(tb, TCA_CBFC_HEARTBEAT, q->heartbeat_us);
	/*
	 * Switched off: the flows waiting are as those that stall while it
	 * is off (wait_since 0, cbfc_stall): switched on again, it counts
	 * their waits from then (cbfc_heartbeat), not from a stall under the
	 * earlier heartbeat, which would fail them at once.
	 */
	if (!heartbeat_us && q->heartbeat_us)
		list_for_each_entry(f, &q->stalled, drr)
			f->wait_since = 0;
	q->heartbeat_us = heartbeat_us;
	q->credit_batch = cbfc_get(tb, TCA_CBFC_CREDIT_BATCH, q->credit_batch);
	/* Flows already waiting get their deadlines at the next dequeue. */
	if (!q->heartbeat_us)
		q->hb_next = 0;
	else if (q->n_stalled)
		q->hb_next = ktime_get_ns();
	if (q->hb_next)
		qdisc_watchdog_schedule_ns(&q->watchdog, q->hb_next);
	if (tb[TCA_CBFC_RATE]) {
		q->rate = nla_get_u64(tb[TCA_CBFC_RATE]);
		q->time_next = 0;
	}
	/*
	 * Packets over a lowered limit stay queued and leave as credit
	 * allows; only new ones are refused until the queue is below it.
	 */
	sch_tree_unlock(sch);
	kvfree(ohash);
	return 0;
}

static int cbfc_init(struct Qdisc *sch, struct nlattr *opt,
		     struct netlink_ext_ack *extack)
{
	struct cbfc_sched *q = qdisc_priv(sch);
	struct dmsc_net *dn = dmsc_pernet(qdisc_net(sch));
	int err;

	q->sch = sch;
	q->dn = dn;
	q->ifindex = qdisc_dev(sch)->ifindex;
	q->cookie = atomic_long_inc_return(&cbfc_cookies) ?: 1;
	INIT_LIST_HEAD(&q->active);
	INIT_LIST_HEAD(&q->stalled);
	INIT_LIST_HEAD(&q->idle);
	INIT_LIST_HEAD(&q->plain.drr);
	init_llist_head(&q->wake);
	q->limit = 10000;
	q->flow_limit = 1000;
	q->plain_limit = 1000;
	q->credit = 64 * 1024;
	q->quantum = 2 * psched_mtu(qdisc_dev(sch));
	q->heartbeat_us = 0;
	q->credit_batch = CBFC_CREDIT_BATCH_DEFAULT;
	spin_lock_init(&q->fo_lock);
	INIT_LIST_HEAD(&q->fo_list);
	INIT_WORK(&q->fo_work, cbfc_failover_work);
	q->hash_rnd = get_random_u32();
	qdisc_watchdog_init(&q->watchdog, sch);

	if (opt) {
		err = cbfc_change(sch, opt, extack);
		if (err)
			return err;	/* the core calls cbfc_destroy */
	} else {
		q->hash = cbfc_hash_alloc(q->limit, &q->hash_mask);
		if (!q->hash)
			return -ENOMEM;
	}
	return 0;
}

/* Also after a failed init: every step checks what init got to. */
static void cbfc_destroy(struct Qdisc *sch)
{
	struct cbfc_sched *q = qdisc_priv(sch);

	qdisc_watchdog_cancel(&q->watchdog);
	cbfc_reset(sch);
	/*
	 * A pending failover sends what it holds; then nothing is left that
	 * points at this qdisc. Destroy runs in process context (RTNL), and
	 * the work takes neither RTNL nor the qdisc lock.
	 */
	cancel_work_sync(&q->fo_work);
	cbfc_failover_work(&q->fo_work);
	kvfree(q->hash);
	q->hash = NULL;
}

static int cbfc_dump(struct Qdisc *sch, struct sk_buff *skb)
{
	struct cbfc_sched *q = qdisc_priv(sch);
	struct nlattr *opts;

	opts = nla_nest_start_noflag(skb, TCA_OPTIONS);
	if (!opts)
		return -EMSGSIZE;
	if (nla_put_u32(skb, TCA_CBFC_LIMIT, q->limit) ||
	    nla_put_u32(skb, TCA_CBFC_FLOW_LIMIT, q->flow_limit) ||
	    nla_put_u32(skb, TCA_CBFC_PLAIN_LIMIT, q->plain_limit) ||
	    nla_put_u32(skb, TCA_CBFC_CREDIT, q->credit) ||
	    nla_put_u32(skb, TCA_CBFC_QUANTUM, q->quantum) ||
	    nla_put_u32(skb, TCA_CBFC_HEARTBEAT, q->heartbeat_us) ||
	    nla_put_u32(skb, TCA_CBFC_CREDIT_BATCH, q->credit_batch) ||
	    nla_put_u64_64bit(skb, TCA_CBFC_RATE, q->rate, TCA_CBFC_PAD)) {
		nla_nest_cancel(skb, opts);
		return -EMSGSIZE;
	}
	return nla_nest_end(skb, opts);
}

static int cbfc_dump_stats(struct Qdisc *sch, struct gnet_dump *d)
{
	struct cbfc_sched *q = qdisc_priv(sch);
	struct tc_cbfc_xstats st;

	sch_tree_lock(sch);
	st = q->st;
	st.flows = q->n_flows;
	st.stalled_flows = q->n_stalled;
	st.idle_flows = q->n_idle;
	st.plain_qlen = q->plain.qlen;
	sch_tree_unlock(sch);
	st.failovers = atomic64_read(&q->fo_failovers) +
		       atomic64_read(&q->fo_idle);
	st.link_failures += atomic64_read(&q->fo_idle);
	st.drop_failed += atomic64_read(&q->fo_drops);
	return gnet_stats_copy_app(d, &st, sizeof(st));
}

static struct Qdisc_ops cbfc_qdisc_ops __read_mostly = {
	.id		= "cbfc",
	.priv_size	= sizeof(struct cbfc_sched),
	.enqueue	= cbfc_enqueue,
	.dequeue	= cbfc_dequeue,
	.peek		= qdisc_peek_dequeued,
	.init		= cbfc_init,
	.reset		= cbfc_reset,
	.destroy	= cbfc_destroy,
	.change		= cbfc_change,
	.dump		= cbfc_dump,
	.dump_stats	= cbfc_dump_stats,
	.owner		= THIS_MODULE,
};

int __init dmsc_cbfc_init(void)
{
	int err;

	cbfc_flow_cache = kmem_cache_create("dmsc_cbfc_flow",
					    sizeof(struct cbfc_flow), 0,
					    SLAB_HWCACHE_ALIGN, NULL);
	if (!cbfc_flow_cache)
		return -ENOMEM;
	err = register_qdisc(&cbfc_qdisc_ops);
	if (err)
		kmem_cache_destroy(cbfc_flow_cache);
	return err;
}

/* No qdisc is left: each holds a reference on the module. */
void dmsc_cbfc_exit(void)
{
	unregister_qdisc(&cbfc_qdisc_ops);
	kmem_cache_destroy(cbfc_flow_cache);
}
