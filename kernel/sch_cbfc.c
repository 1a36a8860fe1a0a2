// SPDX-License-Identifier: GPL-2.0
/*
 * sch_cbfc: credit-based flow control for RoCEv2 (Documentation/cbfc.md).
 *
 * A RoCEv2 packet whose flow has a credit session (credit.c) is queued in
 * that flow's own queue; deficit round robin serves the flows whose head
 * packet the session's credit covers. A flow without credit waits on the
 * stalled list, never dropped for it: the next credit update puts the
 * stalled flows back in the round and runs the qdisc (dmsc_cbfc_kick).
 * Every other packet (not RoCEv2, or RoCEv2 without a session) goes
 * through the plain band, one FIFO that takes its turn in the round as a
 * flow that is always covered.
 *
 * The flow of an SRv6 packet is that of the packet inside it (past the
 * outer IPv6 header and the SRH), so that a transit hop running stock
 * seg6local classifies as the ingress does.
 *
 * Locking: enqueue and dequeue run under the qdisc lock. Sessions are
 * found under RCU and held by reference while a flow has packets; the
 * credit counters they carry are atomics. The namespace's list of cbfc
 * qdiscs is under dn->cbfc_lock, taken in process context only.
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
#include <net/ip.h>
#include <net/pkt_sched.h>
#include <net/sch_generic.h>
#include <linux/seg6.h>
#include <linux/dmsc_cbfc.h>

#include "dmsc.h"

#define CBFC_HASH_BUCKETS	1024
#define CBFC_BTH_LEN		12

struct cbfc_flow {
	struct hlist_node hnode;	/* q->hash */
	struct list_head drr;		/* q->active or q->stalled */
	struct sk_buff *head;
	struct sk_buff *tail;
	struct dmsc_session *sess;	/* NULL: the plain band */
	struct dmsc_cbfc_key key;
	u32 qlen;
	int deficit;
	bool stalled;
};

struct cbfc_sched {
	struct Qdisc *sch;
	struct dmsc_net *dn;
	struct hlist_head *hash;
	u32 hash_rnd;
	struct list_head active;	/* flows in the round */
	struct list_head stalled;	/* flows waiting for credit */
	struct cbfc_flow plain;
	u32 n_flows;
	u32 n_stalled;
	u32 credited_qlen;		/* packets in credited flows */

	u32 limit;
	u32 flow_limit;
	u32 plain_limit;
	u32 credit;
	u32 quantum;
	u32 heartbeat_us;
	u32 credit_batch;
	u64 rate;			/* bytes/s, 0: no shaping */
	u64 time_next;			/* ns: when the rate allows a packet */
	struct qdisc_watchdog watchdog;

	struct list_head dn_node;	/* dn->cbfc_qdiscs */
	unsigned long recheck;		/* bit 0: credit grew, see kick */
	struct tc_cbfc_xstats st;
};

static struct kmem_cache *cbfc_flow_cache __ro_after_init;

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
			  struct dmsc_cbfc_key *key)
{
	struct iphdr _iph;
	const struct iphdr *iph;

	iph = skb_header_pointer(skb, off, sizeof(_iph), &_iph);
	if (!iph || iph->ihl < 5 || iph->protocol != IPPROTO_UDP ||
	    ip_is_fragment(iph))
		return false;
	key->family = AF_INET;
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
			  struct dmsc_cbfc_key *key)
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
		return cbfc_parse_v4(skb, off, key);
	if (nexthdr == IPPROTO_IPV6)
		return cbfc_parse_v6(skb, off, false, key);
	return false;
}

static bool cbfc_parse(const struct sk_buff *skb, struct dmsc_cbfc_key *key)
{
	memset(key, 0, sizeof(*key));
	switch (skb->protocol) {
	case htons(ETH_P_IP):
		return cbfc_parse_v4(skb, skb_network_offset(skb), key);
	case htons(ETH_P_IPV6):
		return cbfc_parse_v6(skb, skb_network_offset(skb), true, key);
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
	return s;
}

/*
 * The queue of @skb: its flow's, the plain band, or NULL when a new flow
 * could not be allocated.
 */
static struct cbfc_flow *cbfc_classify(struct cbfc_sched *q,
				       const struct sk_buff *skb)
{
	struct dmsc_cbfc_key key;
	struct hlist_head *bucket;
	struct dmsc_session *s;
	struct cbfc_flow *f;

	if (!cbfc_parse(skb, &key))
		return &q->plain;
	bucket = &q->hash[jhash2((u32 *)&key, sizeof(key) / 4, q->hash_rnd) &
			  (CBFC_HASH_BUCKETS - 1)];
	hlist_for_each_entry(f, bucket, hnode) {
		if (memcmp(&f->key, &key, sizeof(key)))
			continue;
		/* Its session was deleted and maybe added anew: take that. */
		if (unlikely(READ_ONCE(f->sess->dead))) {
			s = cbfc_session_get(q, &key);
			if (s) {
				dmsc_session_put(f->sess);
				f->sess = s;
			}
		}
		return f;
	}
	s = cbfc_session_get(q, &key);
	if (!s)
		return &q->plain;
	f = kmem_cache_zalloc(cbfc_flow_cache, GFP_ATOMIC | __GFP_NOWARN);
	if (!f) {
		dmsc_session_put(s);
		return NULL;
	}
	f->key = key;
	f->sess = s;
	INIT_LIST_HEAD(&f->drr);
	hlist_add_head(&f->hnode, bucket);
	q->n_flows++;
	return f;
}

static void cbfc_flow_free(struct cbfc_sched *q, struct cbfc_flow *f)
{
	hlist_del(&f->hnode);
	dmsc_session_put(f->sess);
	kmem_cache_free(cbfc_flow_cache, f);
	q->n_flows--;
}

/* A flow made for a packet that is then dropped holds nothing: free it. */
static void cbfc_flow_drop_new(struct cbfc_sched *q, struct cbfc_flow *f)
{
	if (!f->qlen)
		cbfc_flow_free(q, f);
}

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
	}
	skb->next = NULL;
	if (f->head)
		f->tail->next = skb;
	else
		f->head = skb;
	f->tail = skb;
	if (!f->qlen++) {
		f->deficit = q->quantum;
		list_add_tail(&f->drr, &q->active);
	}
	sch->q.qlen++;
	qdisc_qstats_backlog_inc(sch, skb);
	return NET_XMIT_SUCCESS;
}

/* Credit grew somewhere: every stalled flow gets another look. */
static void cbfc_unstall(struct cbfc_sched *q)
{
	struct cbfc_flow *f;

	list_for_each_entry(f, &q->stalled, drr)
		f->stalled = false;
	list_splice_tail_init(&q->stalled, &q->active);
	q->n_stalled = 0;
}

/* Can @f send @len bytes? A deleted session no longer controls. */
static bool cbfc_covered(const struct cbfc_flow *f, unsigned int len)
{
	return !f->sess || READ_ONCE(f->sess->dead) ||
	       dmsc_session_available(f->sess) >= len;
}

static struct sk_buff *cbfc_dequeue(struct Qdisc *sch)
{
	struct cbfc_sched *q = qdisc_priv(sch);
	struct sk_buff *skb;
	struct cbfc_flow *f;
	unsigned int len;
	u64 now = 0;

	if (!sch->q.qlen)
		return NULL;
	/* Ordered with the credit update by the atomic bit operation. */
	if (test_and_clear_bit(0, &q->recheck))
		cbfc_unstall(q);
	if (q->rate) {
		now = ktime_get_ns();
		if (now < q->time_next) {
			qdisc_watchdog_schedule_ns(&q->watchdog, q->time_next);
			return NULL;
		}
	}
	for (;;) {
		f = list_first_entry_or_null(&q->active, struct cbfc_flow, drr);
		if (!f)
			return NULL;	/* all wait for credit: see kick */
		len = qdisc_pkt_len(f->head);
		if (!cbfc_covered(f, len)) {
			f->stalled = true;
			list_move_tail(&f->drr, &q->stalled);
			q->n_stalled++;
			q->st.credit_stalls++;
			continue;
		}
		if (f->deficit <= 0) {
			f->deficit += q->quantum;
			list_move_tail(&f->drr, &q->active);
			continue;
		}
		break;
	}
	skb = f->head;
	f->head = skb->next;
	skb->next = NULL;
	f->deficit -= len;
	sch->q.qlen--;
	qdisc_qstats_backlog_dec(sch, skb);
	qdisc_bstats_update(sch, skb);
	if (f->sess) {
		atomic64_add(len, &f->sess->sent);
		atomic64_inc(&f->sess->packets);
		q->st.backlog_credited -= len;
		q->credited_qlen--;
		q->st.credited_packets++;
	} else {
		q->st.plain_packets++;
	}
	if (!--f->qlen) {
		list_del_init(&f->drr);
		if (f != &q->plain)
			cbfc_flow_free(q, f);
	}
	if (q->rate)
		q->time_next = now + div64_u64((u64)len * NSEC_PER_SEC, q->rate);
	return skb;
}

/*
 * Run every cbfc qdisc of the namespace again after credit grew or a
 * session went away. A qdisc is on the list until its destroy takes it
 * off under cbfc_lock, so it is alive here; qdisc_root() is the device's
 * current root, which is not this qdisc any more once it is being
 * replaced, as in qdisc_watchdog.
 */
void dmsc_cbfc_kick(struct dmsc_net *dn)
{
	struct cbfc_sched *q;

	spin_lock_bh(&dn->cbfc_lock);
	rcu_read_lock();
	list_for_each_entry(q, &dn->cbfc_qdiscs, dn_node) {
		set_bit(0, &q->recheck);
		__netif_schedule(qdisc_root(q->sch));
	}
	rcu_read_unlock();
	spin_unlock_bh(&dn->cbfc_lock);
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
	for (i = 0; i < CBFC_HASH_BUCKETS; i++) {
		hlist_for_each_entry_safe(f, tmp, &q->hash[i], hnode) {
			cbfc_flow_purge(f);
			cbfc_flow_free(q, f);
		}
	}
	cbfc_flow_purge(&q->plain);
	INIT_LIST_HEAD(&q->active);
	INIT_LIST_HEAD(&q->stalled);
	INIT_LIST_HEAD(&q->plain.drr);
	q->n_stalled = 0;
	q->st.backlog_credited = 0;
	q->credited_qlen = 0;
	q->time_next = 0;
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
	.min = CBFC_HEARTBEAT_MIN, .max = CBFC_HEARTBEAT_MAX,
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

static int cbfc_change(struct Qdisc *sch, struct nlattr *opt,
		       struct netlink_ext_ack *extack)
{
	struct cbfc_sched *q = qdisc_priv(sch);
	struct nlattr *tb[TCA_CBFC_MAX + 1];
	u32 limit, flow_limit, plain_limit;
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
	/* limit - plain_limit is the credited flows' room: not 0. */
	if (plain_limit >= limit) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_CBFC_PLAIN_LIMIT] ?:
				    tb[TCA_CBFC_LIMIT],
				    "cbfc: plain_limit must be below limit");
		return -EINVAL;
	}

	sch_tree_lock(sch);
	q->limit = limit;
	q->flow_limit = flow_limit;
	q->plain_limit = plain_limit;
	q->credit = cbfc_get(tb, TCA_CBFC_CREDIT, q->credit);
	q->quantum = cbfc_get(tb, TCA_CBFC_QUANTUM, q->quantum);
	q->heartbeat_us = cbfc_get(tb, TCA_CBFC_HEARTBEAT, q->heartbeat_us);
	q->credit_batch = cbfc_get(tb, TCA_CBFC_CREDIT_BATCH, q->credit_batch);
	if (tb[TCA_CBFC_RATE]) {
		q->rate = nla_get_u64(tb[TCA_CBFC_RATE]);
		q->time_next = 0;
	}
	/*
	 * Packets over a lowered limit stay queued and leave as credit
	 * allows; only new ones are refused until the queue is below it.
	 */
	sch_tree_unlock(sch);
	return 0;
}

static int cbfc_init(struct Qdisc *sch, struct nlattr *opt,
		     struct netlink_ext_ack *extack)
{
	struct cbfc_sched *q = qdisc_priv(sch);
	struct dmsc_net *dn = dmsc_pernet(qdisc_net(sch));
	unsigned int i;
	int err;

	q->sch = sch;
	q->dn = dn;
	INIT_LIST_HEAD(&q->active);
	INIT_LIST_HEAD(&q->stalled);
	INIT_LIST_HEAD(&q->plain.drr);
	INIT_LIST_HEAD(&q->dn_node);
	q->limit = 10000;
	q->flow_limit = 1000;
	q->plain_limit = 1000;
	q->credit = 64 * 1024;
	q->quantum = 2 * psched_mtu(qdisc_dev(sch));
	q->heartbeat_us = 100 * USEC_PER_MSEC;
	q->credit_batch = 4096;
	q->hash_rnd = get_random_u32();
	qdisc_watchdog_init(&q->watchdog, sch);

	q->hash = kvcalloc(CBFC_HASH_BUCKETS, sizeof(*q->hash), GFP_KERNEL);
	if (!q->hash)
		return -ENOMEM;
	for (i = 0; i < CBFC_HASH_BUCKETS; i++)
		INIT_HLIST_HEAD(&q->hash[i]);
	if (opt) {
		err = cbfc_change(sch, opt, extack);
		if (err)
			return err;	/* the core calls cbfc_destroy */
	}
	spin_lock_bh(&dn->cbfc_lock);
	list_add_tail(&q->dn_node, &dn->cbfc_qdiscs);
	spin_unlock_bh(&dn->cbfc_lock);
	return 0;
}

/* Also after a failed init: every step checks what init got to. */
static void cbfc_destroy(struct Qdisc *sch)
{
	struct cbfc_sched *q = qdisc_priv(sch);

	/* From here no credit update can reach this qdisc. */
	spin_lock_bh(&q->dn->cbfc_lock);
	list_del_init(&q->dn_node);
	spin_unlock_bh(&q->dn->cbfc_lock);
	qdisc_watchdog_cancel(&q->watchdog);
	cbfc_reset(sch);
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
	st.plain_qlen = q->plain.qlen;
	sch_tree_unlock(sch);
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
					    sizeof(struct cbfc_flow), 0, 0,
					    NULL);
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
