// SPDX-License-Identifier: GPL-2.0
/*
 * RoCEv2 telemetry at a tc hook (clsact ingress or egress): per QP
 * packets, bytes, PSN gaps (loss), out-of-order and duplicate packets,
 * with the definitions of roce-gen's sink. It parses
 *
 *   Ethernet [802.1Q/ad x2] IPv4|IPv6 [ext. headers] UDP/4791 BTH
 *   Ethernet ... IPv6 [HBH, SRH (routing type 4), DO] IPv4|IPv6 ... UDP/4791 BTH
 *
 * reading each header in place where the skb's linear part holds it and
 * with bpf_skb_load_bytes() where not (hdr()). It only observes: the
 * verdict is always TC_ACT_UNSPEC, "no opinion", so the packet goes on as
 * if the program were not there and filters after it still run
 * (TC_ACT_OK would end the filter list).
 *
 * uapi headers and libbpf's bpf_helpers.h only: no CO-RE, as nothing here
 * reads a kernel structure; the same object loads on 6.1 and 6.12.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "roce_telemetry.h"

#define AF_INET		2
#define AF_INET6	10
#define BTH_LEN		12
#define ICRC_LEN	4
#define MAX_VLANS	2
#define MAX_EXT_HDRS	8	/* IPv6 extension headers followed per IP header */
#define IP_MF		0x2000	/* not in the uapi headers */
#define IP_OFFSET	0x1fff

/*
 * The QPs: an open-addressed table (roce_telemetry.h, observe() and
 * qp_claim() below), the PSN bitmaps beside it, one per slot.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RT_QP_SLOTS);
	__type(key, __u32);
	__type(value, struct rt_qp);
} rt_qps SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RT_QP_SLOTS);
	__type(key, __u32);
	__type(value, struct rt_qp_psns);
} rt_psns SEC(".maps");

/*
 * Insertion locks, striped by the slot a key hashes to: a new QP's
 * search for its key and its claim of a free slot are one step for all
 * CPUs that see its first packets (qp_claim()). A bpf_spin_lock cannot
 * be it: the claim takes the slot's own, and a program holds one at most.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RT_QP_INS_LOCKS);
	__type(key, __u32);
	__type(value, __u64);
} rt_qp_ins SEC(".maps");

/*
 * [RT_COUNT_CLAIMED]: slots taken by the program, ever; [RT_COUNT_FREED]:
 * slots freed by dmsc, ever (it alone writes that one). The difference is
 * the QPs held, at most RT_MAX_QPS.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RT_COUNT_N);
	__type(key, __u32);
	__type(value, __u64);
} rt_qp_count SEC(".maps");

/* Mixed into the slots' hash; dmsc sets it at load (it is in .rodata). */
const volatile __u64 rt_seed = 0;

/*
 * The attachments' counters, per CPU, by the attachment's slot, which
 * dmsc gives its tc filter as the classid (TCA_BPF_CLASSID): cls_bpf
 * puts that in skb->tc_classid before it runs the program, so the slot
 * is known without a lookup. (A per-CPU hash by device and direction
 * cost 55-65 ns a packet, a quarter of the program.)
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RT_MAX_ATTACH);
	__type(key, __u32);
	__type(value, struct rt_dev);
} rt_devs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RT_MAX_ATTACH);
	__type(key, struct rt_dev_key);
	__type(value, struct rt_attach);
} rt_attach SEC(".maps");

/* What the parser found; the addresses go straight into the QP's key. */
struct pkt {
	void *data, *end;	/* the skb's linear part, read once */
	__u32 off;		/* of the next header to read */
	__u8 encap;		/* inside an outer IPv6 */
	struct rt_qp_key *key;
};

enum parse { P_ROCE, P_OTHER, P_FRAGMENT, P_UNPARSED, P_SHORT, P_SLOW };

/* A well-formed BTH's fields, and the UDP payload's length. */
struct roce {
	__u32 dqpn, psn, payload;
	__u8 op;
};

/*
 * Headers further in than this are read only through the helper: a
 * bound on the offset, which the verifier needs for a packet pointer.
 */
#define DIRECT_MAX	1024

/*
 * @len bytes at @off. The parser runs first with @slow 0: a pointer into
 * the packet where the skb's linear part holds the bytes (direct packet
 * access: no helper call, no copy), else NULL, and the parse starts
 * again with @slow 1 (P_SLOW). Then each header is copied into @buf by
 * bpf_skb_load_bytes(), which reads any part of the packet (paged data,
 * as a NIC that splits headers makes): NULL is past the packet's end.
 * Either way the packet is left as it was: no bpf_skb_pull_data(), which
 * may copy a cloned skb.
 *
 * Two whole passes, not a choice per header: a pointer that may be to
 * the packet or to the stack makes the verifier walk every combination
 * of the headers' two ways (five times the instructions, ten times the
 * time, on 6.18).
 */
static __always_inline const void *hdr(struct __sk_buff *skb, struct pkt *p,
					__u32 off, __u32 len, void *buf,
					const int slow)
{
	void *h;

	if (slow)
		return bpf_skb_load_bytes(skb, off, buf, len) ? NULL : buf;
	if (off > DIRECT_MAX)
		return NULL;
	h = p->data + off;
	/* h + len, not data + (off + len): one pointer for the check. */
	asm volatile("" : "+r"(h));
	return h + len <= p->end ? h : NULL;
}

/* What a header the fast pass cannot read in place means. */
#define MISSING(slow)	((slow) ? P_OTHER : P_SLOW)

static __always_inline enum parse ipv4_hdr(struct __sk_buff *skb,
					   struct pkt *p, __u8 *proto,
					   const int slow)
{
	const struct iphdr *ip;
	struct iphdr buf;

	ip = hdr(skb, p, p->off, sizeof(*ip), &buf, slow);
	if (!ip)
		return MISSING(slow);
	if (ip->ihl < 5)
		return P_OTHER;
	/* Only a first fragment has the UDP header, and RoCE sets DF. */
	if (ip->frag_off & bpf_htons(IP_MF | IP_OFFSET))
		return P_FRAGMENT;
	p->key->family = AF_INET;
	/* The key was zeroed: the addresses' last 12 bytes stay 0. */
	__builtin_memcpy(p->key->src, &ip->saddr, 4);
	__builtin_memcpy(p->key->dst, &ip->daddr, 4);
	p->off += ip->ihl * 4;
	*proto = ip->protocol;
	return P_ROCE;
}

/* The IPv6 header and its extension headers; *proto is the upper layer. */
static __always_inline enum parse ipv6_hdr(struct __sk_buff *skb,
					   struct pkt *p, __u8 *proto,
					   const int slow)
{
	const struct ipv6hdr *ip6;
	struct ipv6hdr buf;
	__u8 nh;
	int i;

	ip6 = hdr(skb, p, p->off, sizeof(*ip6), &buf, slow);
	if (!ip6)
		return MISSING(slow);
	p->key->family = AF_INET6;
	__builtin_memcpy(p->key->src, &ip6->saddr, 16);
	__builtin_memcpy(p->key->dst, &ip6->daddr, 16);
	p->off += sizeof(*ip6);
	nh = ip6->nexthdr;
	/*
	 * Unrolled, as the short loops below: clang may lay a loop out so
	 * that its latch falls through into its head, a back-edge 6.1's
	 * verifier refuses ("back-edge from insn N to N+1") where 6.12's
	 * takes it.
	 */
#pragma clang loop unroll(full)
	for (i = 0; i < MAX_EXT_HDRS; i++) {
		const __u8 *h;	/* next header, length in 8 octets less 1 */
		__u8 hbuf[2];

		switch (nh) {
		case IPPROTO_HOPOPTS:
		case IPPROTO_ROUTING:	/* the SRH is routing type 4 */
		case IPPROTO_DSTOPTS:
			break;
		case IPPROTO_FRAGMENT:
			return P_FRAGMENT;
		default:
			*proto = nh;
			return P_ROCE;
		}
		h = hdr(skb, p, p->off, sizeof(hbuf), hbuf, slow);
		if (!h)
			return MISSING(slow);
		nh = h[0];
		p->off += ((__u32)h[1] + 1) * 8;
	}
	return P_UNPARSED;
}

/* Header bytes after the BTH for @op (IBA vol. 1, 9.2-9.5), 0 if unknown. */
static __always_inline __u32 ext_len(__u8 op)
{
	if (op == 0x64)			/* UD send only: DETH */
		return 8;
	if (op == 0x65)			/* UD send only with immediate */
		return 12;
	if (op >= 0x40)			/* RD, CNP, vendor: not parsed */
		return 0;
	switch (op & 0x1f) {		/* RC 0x00.., UC 0x20.. */
	case 0x03: case 0x05: case 0x09:	/* ImmDt */
	case 0x16: case 0x17:			/* IETH */
		return 4;
	case 0x06: case 0x0a: case 0x0c:	/* RETH */
		return 16;
	case 0x0b:				/* RETH + ImmDt */
		return 20;
	case 0x0d: case 0x0f: case 0x10: case 0x11:	/* AETH */
		return 4;
	case 0x12:				/* AETH + AtomicAckETH */
		return 12;
	case 0x13: case 0x14:			/* AtomicETH */
		return 28;
	}
	return 0;
}

static __always_inline __u32 op_class(__u8 op)
{
	if (op == 0x81)
		return RT_OP_CNP;
	if (op >= 0x40 && op != 0x64 && op != 0x65)
		return RT_OP_OTHER;
	if (op >= 0x60)
		return RT_OP_SEND;
	switch (op & 0x1f) {
	case 0x00 ... 0x05: case 0x16: case 0x17:
		return RT_OP_SEND;
	case 0x06 ... 0x0b:
		return RT_OP_WRITE;
	case 0x0c ... 0x10:
		return RT_OP_READ;
	case 0x11:
		return RT_OP_ACK;
	case 0x12 ... 0x14:
		return RT_OP_ATOMIC;
	}
	return RT_OP_OTHER;
}

/* roce-gen's psn_diff(): @a - @b in the 24-bit circle, -2^23..2^23-1. */
static __always_inline __s32 psn_diff(__u32 a, __u32 b)
{
	__u32 d = (a - b) & RT_PSN_MASK;

	return d & 0x800000u ? (__s32)d - 0x1000000 : (__s32)d;
}

/*
 * The bitmap marks the PSNs within span that have not arrived: in-order
 * packets, the common case, mark nothing, so they leave it alone (roce-gen
 * marks the PSNs seen instead, which writes a bit for every packet). Only
 * a slot whose previous PSN, a window back, may still be marked must be
 * cleared when its new PSN arrives in order: q->holes says some may be,
 * q->hole_top is the highest ever marked. Invariants: a bit is set only
 * for a PSN within span that has not arrived, never above hole_top; with
 * holes 0, no bit is set.
 */
static __always_inline __u64 *word(struct rt_qp_psns *m, __u32 psn)
{
	return &m->missing[(psn % RT_PSN_WINDOW / 64) & (RT_WINDOW_WORDS - 1)];
}

static __always_inline void bit_clear(struct rt_qp_psns *m, __u32 psn)
{
	*word(m, psn) &= ~(1ull << (psn % 64));
}

static __always_inline int bit_test(struct rt_qp_psns *m, __u32 psn)
{
	return *word(m, psn) >> (psn % 64) & 1;
}

/*
 * Mark the @n < RT_PSN_WINDOW slots from @psn on: the head of a word,
 * whole words, the tail of one. One branch per loop turn (its end), so
 * the verifier's work grows with the window, not with its powers.
 */
static __always_inline void mark_range(struct rt_qp_psns *m, __u32 psn, __u32 n)
{
	__u32 off = psn % 64, whole;
	int k;

	if (off) {
		if (off + n < 64) {
			*word(m, psn) |= ((1ull << n) - 1) << off;
			return;
		}
		*word(m, psn) |= ~0ull << off;
		psn += 64 - off;
		n -= 64 - off;
	}
	whole = n / 64;
	for (k = 0; k < RT_WINDOW_WORDS; k++) {
		if ((__u32)k >= whole)
			break;
		*word(m, psn + k * 64) = ~0ull;
	}
	psn += whole * 64;
	n %= 64;
	if (n)
		*word(m, psn) |= (1ull << n) - 1;
}

static __always_inline void span_grow(struct rt_qp *q, __u32 n)
{
	q->span = n >= RT_PSN_WINDOW - q->span ? RT_PSN_WINDOW : q->span + n;
}

/*
 * roce-gen's psn_window_add() (without a known first PSN, as a receiver
 * that joins a flow midway), branch for branch and with the same counts,
 * the bitmap inverted; called with the QP locked.
 */
static __always_inline void psn_account(struct rt_qp *q, struct rt_qp_psns *m,
					__u32 psn)
{
	__u32 age, top;
	__s32 d;

	if (!q->packets)
		q->next_psn = psn;
	d = psn_diff(psn, q->next_psn);
	if (d == 0) {
		if (q->holes) {
			if (((psn - q->hole_top) & RT_PSN_MASK) <= RT_PSN_WINDOW)
				bit_clear(m, psn);
			else	/* every mark is a window behind: none left */
				q->holes = 0;
		}
		q->next_psn = (psn + 1) & RT_PSN_MASK;
		span_grow(q, 1);
		return;
	}
	if (d > 0) {
		/* The skipped PSNs' slots now stand for them: missing. */
		if (d >= RT_PSN_WINDOW)
			for (int k = 0; k < RT_WINDOW_WORDS; k++)
				m->missing[k] = ~0ull;
		else
			mark_range(m, q->next_psn, (__u32)d);
		bit_clear(m, psn);
		q->holes = 1;
		q->hole_top = (psn - 1) & RT_PSN_MASK;
		q->lost += (__u32)d;
		q->next_psn = (psn + 1) & RT_PSN_MASK;
		span_grow(q, (__u32)d + 1);
		return;
	}
	age = (__u32)-d;
	if (age > RT_PSN_WINDOW) {
		q->too_old++;
		return;
	}
	if (age > q->span) {
		/*
		 * The flow started before its first arrival here: the PSNs
		 * between this one and the old start are missing. Slots
		 * outside span are clear, this one's too.
		 */
		top = (q->next_psn - q->span - 1) & RT_PSN_MASK;
		if (age - q->span - 1) {
			mark_range(m, psn + 1, age - q->span - 1);
			if (!q->holes || psn_diff(top, q->hole_top) > 0)
				q->hole_top = top;
			q->holes = 1;
		}
		q->lost += age - q->span - 1;
		q->span = age;
		q->out_of_order++;
		return;
	}
	if (!bit_test(m, psn)) {
		q->duplicates++;
		return;
	}
	bit_clear(m, psn);
	q->lost--;
	q->out_of_order++;
}

static __always_inline void dev_count(struct rt_dev *dev, __u32 c)
{
	if (dev && c < RT_DEV_COUNTERS)
		dev->c[c]++;
}

/* One IP header by @eth_proto; fragments and long chains counted. */
static __always_inline enum parse ip_hdr(struct __sk_buff *skb, struct pkt *p,
					 __u8 *proto, __be16 eth_proto,
					 struct rt_dev *dev, const int slow)
{
	enum parse r;

	if (eth_proto == bpf_htons(ETH_P_IP))
		r = ipv4_hdr(skb, p, proto, slow);
	else if (eth_proto == bpf_htons(ETH_P_IPV6))
		r = ipv6_hdr(skb, p, proto, slow);
	else
		return P_OTHER;
	if (r == P_FRAGMENT)
		dev_count(dev, RT_DEV_FRAGMENTS);
	if (r == P_UNPARSED)
		dev_count(dev, RT_DEV_UNPARSED);
	return r;
}

/*
 * Close the rate window once it has lasted RT_RATE_WINDOW_NS and fold it
 * into the averages of a window's bytes, packets and length, whose ratio
 * the readers take (roce_telemetry.h): shifts and adds, no division. The
 * window's length is the real time since it began (a gap without packets
 * lowers the rate, as it should). A window's bytes stay far below
 * 2^(64 - RT_RATE_FRAC), as they arrive within RT_RATE_WINDOW_NS.
 */
static __always_inline void rate_account(struct rt_qp *q, __u64 now,
					 __u32 bytes)
{
	__u64 el = now - q->win_start_ns;

	if (el >= RT_RATE_WINDOW_NS) {
		__u64 b = q->win_bytes << RT_RATE_FRAC;
		__u64 n = q->win_packets << RT_RATE_FRAC;

		if (!q->avg_ns || el >= RT_RATE_STALE * RT_RATE_WINDOW_NS) {
			/*
			 * The first window, or one after an idleness long
			 * enough that the old rate has decayed away: the
			 * estimate starts at it.
			 */
			q->avg_bytes = b;
			q->avg_packets = n;
			q->avg_ns = el;
		} else {
			q->avg_bytes += (b >> RT_RATE_SHIFT) -
					(q->avg_bytes >> RT_RATE_SHIFT);
			q->avg_packets += (n >> RT_RATE_SHIFT) -
					  (q->avg_packets >> RT_RATE_SHIFT);
			q->avg_ns += (el >> RT_RATE_SHIFT) -
				     (q->avg_ns >> RT_RATE_SHIFT);
		}
		q->win_start_ns = now;
		q->win_bytes = 0;
		q->win_packets = 0;
	}
	q->win_bytes += bytes;
	q->win_packets++;
}

/*
 * Ethernet to BTH: the QP's addresses and source port into p->key, the
 * rest into @rc. Malformed RoCEv2 is counted here, in the sink's order:
 * too short, bad version, too short for the rest.
 */
static __always_inline enum parse parse(struct __sk_buff *skb, struct pkt *p,
					struct rt_dev *dev, struct roce *rc,
					const int slow)
{
	const struct udphdr *udp;
	const __be16 *ep;
	const __u8 *bth;
	struct udphdr udp_buf;
	__u8 bth_buf[BTH_LEN], proto = 0;
	__be16 eth_proto, ep_buf;
	__u32 payload;
	enum parse r;
	int i;

	ep = hdr(skb, p, 12, sizeof(*ep), &ep_buf, slow);
	if (!ep)
		return MISSING(slow);
	eth_proto = *ep;
	p->off = ETH_HLEN;
	p->encap = 0;
#pragma clang loop unroll(full)
	for (i = 0; i < MAX_VLANS; i++) {
		if (eth_proto != bpf_htons(ETH_P_8021Q) &&
		    eth_proto != bpf_htons(ETH_P_8021AD))
			break;
		ep = hdr(skb, p, p->off + 2, sizeof(*ep), &ep_buf, slow);
		if (!ep)
			return MISSING(slow);
		eth_proto = *ep;
		p->off += 4;
	}

	/* The addresses are written into the key as the parser finds them. */
	__builtin_memset(p->key, 0, sizeof(*p->key));
	/* Outer header, then at most one inner one behind an IPv6 outer. */
	r = ip_hdr(skb, p, &proto, eth_proto, dev, slow);
	if (r != P_ROCE)
		return r;
	if (proto != IPPROTO_UDP) {
		if (p->key->family != AF_INET6 ||
		    (proto != IPPROTO_IPIP && proto != IPPROTO_IPV6))
			return P_OTHER;
		p->encap = 1;
		if (proto == IPPROTO_IPIP)	/* an IPv4 inner leaves 12 bytes */
			__builtin_memset(p->key->src, 0,
					 sizeof(p->key->src) + sizeof(p->key->dst));
		r = ip_hdr(skb, p, &proto, bpf_htons(proto == IPPROTO_IPIP ?
						     ETH_P_IP : ETH_P_IPV6),
			   dev, slow);
		if (r != P_ROCE)
			return r;
	}
	if (proto != IPPROTO_UDP)
		return P_OTHER;
	udp = hdr(skb, p, p->off, sizeof(*udp), &udp_buf, slow);
	if (!udp)
		return MISSING(slow);
	if (udp->dest != bpf_htons(RT_ROCE_PORT))
		return P_OTHER;
	p->key->sport = bpf_ntohs(udp->source);

	/* A UDP length past the packet's end: the UDP stack drops it too. */
	payload = bpf_ntohs(udp->len);
	if (payload < sizeof(*udp) + BTH_LEN + ICRC_LEN ||
	    p->off + payload > skb->len) {
		dev_count(dev, RT_DEV_SHORT);
		return P_SHORT;
	}
	bth = hdr(skb, p, p->off + sizeof(*udp), BTH_LEN, bth_buf, slow);
	if (!bth) {
		if (!slow)
			return P_SLOW;
		dev_count(dev, RT_DEV_SHORT);
		return P_SHORT;
	}
	payload -= sizeof(*udp);
	if (bth[1] & 0x0f) {
		dev_count(dev, RT_DEV_BAD_VERSION);
		return P_OTHER;
	}
	if (payload < BTH_LEN + ext_len(bth[0]) + (bth[1] >> 4 & 3) + ICRC_LEN) {
		dev_count(dev, RT_DEV_SHORT);
		return P_SHORT;
	}
	rc->op = bth[0];
	rc->payload = payload;
	rc->dqpn = (__u32)bth[5] << 16 | (__u32)bth[6] << 8 | bth[7];
	rc->psn = ((__u32)bth[9] << 16 | (__u32)bth[10] << 8 | bth[11]) &
		  RT_PSN_MASK;
	return P_ROCE;
}

/* @s holds @k: five words and one, no branch. Both 8-byte aligned. */
static __always_inline int key_eq(const struct rt_qp *s,
				  const struct rt_qp_key *k)
{
	const __u64 *a = (const __u64 *)&s->key, *b = (const __u64 *)k;
	const __u32 *a4 = (const __u32 *)&a[5], *b4 = (const __u32 *)&b[5];

	return !((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) |
		 (a[3] ^ b[3]) | (a[4] ^ b[4]) | (__u64)(*a4 ^ *b4));
}

/* The slot @h + @i and its bitmap; NULL never happens (the index is masked). */
static __always_inline struct rt_qp *slot(__u32 h, __u32 i,
					  struct rt_qp_psns **m)
{
	__u32 idx = (h + i) & (RT_QP_SLOTS - 1);

	*m = bpf_map_lookup_elem(&rt_psns, &idx);
	return bpf_map_lookup_elem(&rt_qps, &idx);
}

/* The slot among @h's probes from @from on that holds @key, or -1. */
static __always_inline int qp_find(const struct rt_qp_key *key, __u32 h,
				   int from)
{
	struct rt_qp_psns *m;
	struct rt_qp *q;
	int i, found = -1;

	for (i = from; i < RT_QP_PROBES; i++) {
		q = slot(h, i, &m);
		if (!q || !m)
			return -1;
		bpf_spin_lock(&q->lock);
		if (key_eq(q, key))
			found = (h + i) & (RT_QP_SLOTS - 1);
		bpf_spin_unlock(&q->lock);
		if (found >= 0)
			return found;
	}
	return -1;
}

#define INS_SPIN	256	/* tries at the insertion lock before going on without */
#define RT_QP_FAST	2	/* slots observe() looks at itself */

/*
 * A QP not in the first RT_QP_FAST slots from @h: one further on, a new
 * one, or one another CPU has just made. Find or claim its slot among
 * the RT_QP_PROBES from @h; returns the slot's index, or -1 when none is
 * free or RT_MAX_QPS are held (qp_overflow). An existing QP is looked
 * for first; a new QP's search and claim follow.
 *
 * The search and the claim are one step under the key's insertion lock
 * (rt_qp_ins, by @h): a second CPU with the same new key waits, then
 * finds the slot the first took. Without it two could take two slots
 * for one QP: the first passes a slot still in use, dmsc frees it (a
 * detach), the second takes it, the first a later one. The wait is
 * bounded; after INS_SPIN tries (the holder is slow: a preempted vCPU)
 * the CPU goes on without the lock, exact unless all of the above also
 * happen at that moment.
 *
 * A slot is claimed under its own lock, which is what a reader of its
 * key takes: free (key.ifindex 0, the whole slot 0: dmsc frees by
 * writing a zeroed one), it gets the key, and its bitmap is cleared.
 *
 * A global function: the verifier checks it once, not once for every
 * way the parser can reach it (its loops are most of the program's
 * instructions), so it returns an index, not a locked slot.
 */
__noinline int qp_claim(const struct rt_qp_key *key, __u32 h)
{
	__u32 stripe = h & (RT_QP_INS_LOCKS - 1), c0 = RT_COUNT_CLAIMED,
	      c1 = RT_COUNT_FREED;
	__u64 *ins, *claimed, *freed, n;
	struct rt_qp_psns *m;
	struct rt_qp *q;
	int i, locked = 0, found = -1;

	if (!key)
		return -1;
	ins = bpf_map_lookup_elem(&rt_qp_ins, &stripe);
	claimed = bpf_map_lookup_elem(&rt_qp_count, &c0);
	freed = bpf_map_lookup_elem(&rt_qp_count, &c1);
	if (!ins || !claimed || !freed)
		return -1;
	/* An existing QP beyond the first two slots, which the caller saw. */
	found = qp_find(key, h, RT_QP_FAST);
	if (found >= 0)
		return found;
	for (i = 0; i < INS_SPIN; i++) {
		if (!*(volatile __u64 *)ins &&
		    !__sync_val_compare_and_swap(ins, 0, 1)) {
			locked = 1;
			break;
		}
	}
	/* Made by another CPU since this one looked? */
	found = qp_find(key, h, 0);
	if (found >= 0)
		goto out;
	/* Full: no claim (each packet of a QP that did not fit comes here). */
	if (*(volatile __u64 *)claimed - *(volatile __u64 *)freed >= RT_MAX_QPS)
		goto out;
	for (i = 0; i < RT_QP_PROBES; i++) {
		q = slot(h, i, &m);
		if (!q || !m)
			goto out;
		bpf_spin_lock(&q->lock);
		if (!q->key.ifindex) {
			n = __sync_fetch_and_add(claimed, 1);
			if (n - *(volatile __u64 *)freed >= RT_MAX_QPS) {
				__sync_fetch_and_add(claimed, -1);
				bpf_spin_unlock(&q->lock);
				goto out;
			}
			q->key = *key;
			for (int k = 0; k < RT_WINDOW_WORDS; k++)
				m->missing[k] = 0;
			found = (h + i) & (RT_QP_SLOTS - 1);
		}
		bpf_spin_unlock(&q->lock);
		if (found >= 0)
			goto out;
	}
out:
	if (locked)
		__sync_lock_test_and_set(ins, 0);
	return found;
}

static __always_inline int observe(struct __sk_buff *skb, __u32 dir)
{
	__u32 dslot = skb->tc_classid, ifindex = skb->ifindex;
	struct rt_qp_key key __attribute__((aligned(8)));
	struct rt_qp_psns *m;
	struct rt_qp *q;
	struct rt_dev *dev;
	struct pkt p = { .key = &key };
	struct roce rc;
	__u32 payload, psn, cls, h;
	int c;
	enum parse r;
	__u8 op;
	__u64 now;

	/*
	 * The attachment's counters: dmsc's filters carry their slot. (A
	 * test run's classid is 0: slot 0.)
	 */
	dev = bpf_map_lookup_elem(&rt_devs, &dslot);
	if (!dev)
		return TC_ACT_UNSPEC;
	dev->c[RT_DEV_PACKETS]++;

	/*
	 * Read once, here: clang would otherwise compute the context
	 * field's address ahead, which the verifier refuses. No helper
	 * below changes the packet, so these stay valid.
	 */
	p.data = (void *)(long)skb->data;
	p.end = (void *)(long)skb->data_end;
	r = parse(skb, &p, dev, &rc, 0);
	if (r == P_SLOW)
		r = parse(skb, &p, dev, &rc, 1);
	if (r != P_ROCE)
		return TC_ACT_UNSPEC;
	op = rc.op;
	payload = rc.payload;
	psn = rc.psn;
	dev->opcodes[op]++;

	key.ifindex = ifindex;
	key.dir = dir;
	key.dqpn = rc.dqpn;

	now = bpf_ktime_get_ns();
	/*
	 * A QP seen before is in one of its probe slots, nearly always the
	 * first or the second (at 10,000 QPs 70 % of the slots are free):
	 * those two are looked at here, each locked while its key is
	 * compared and kept locked on a hit. The others are qp_claim()'s,
	 * which returns the slot's index; that slot is locked again here.
	 * Not a loop: a lock held out of a loop is another state for 6.1's
	 * verifier at every turn, and it checked the rest of the program
	 * once per turn (past 1,000,000 instructions with 16 turns; 4 took
	 * 510,736). A second lock on every packet instead (the slot
	 * unlocked in the loop, locked again after it) cost 40 ns a packet.
	 */
	h = rt_qp_hash(&key, rt_seed);
	q = slot(h, 0, &m);
	if (!q || !m)
		return TC_ACT_UNSPEC;
	bpf_spin_lock(&q->lock);
	if (key_eq(q, &key))
		goto found;
	bpf_spin_unlock(&q->lock);
	q = slot(h, 1, &m);
	if (!q || !m)
		return TC_ACT_UNSPEC;
	bpf_spin_lock(&q->lock);
	if (key_eq(q, &key))
		goto found;
	bpf_spin_unlock(&q->lock);
	c = qp_claim(&key, h);
	if (c < 0) {
		dev_count(dev, RT_DEV_QP_OVERFLOW);
		return TC_ACT_UNSPEC;
	}
	q = slot((__u32)c, 0, &m);
	if (!q || !m)
		return TC_ACT_UNSPEC;
	bpf_spin_lock(&q->lock);
	/* Freed since (its device detached): not counted, as after a detach. */
	if (!key_eq(q, &key)) {
		bpf_spin_unlock(&q->lock);
		return TC_ACT_UNSPEC;
	}
found:
	cls = op_class(op);
	if (cls >= RT_OP_CLASSES)
		cls = RT_OP_OTHER;

	/* q is locked. */
	if (!q->packets) {
		q->first_ns = now;
		q->win_start_ns = now;
	}
	rate_account(q, now, payload);
	psn_account(q, m, psn);
	q->packets++;
	q->bytes += payload;
	q->srv6_packets += p.encap;
	q->last_ns = now;
	q->last_psn = psn;
	q->last_opcode = op;
	q->ops[cls]++;
	bpf_spin_unlock(&q->lock);
	dev->c[RT_DEV_ROCE]++;
	if (p.encap)
		dev->c[RT_DEV_SRV6]++;
	return TC_ACT_UNSPEC;
}

SEC("tc")
int rt_ingress(struct __sk_buff *skb)
{
	return observe(skb, RT_INGRESS);
}

SEC("tc")
int rt_egress(struct __sk_buff *skb)
{
	return observe(skb, RT_EGRESS);
}

char LICENSE[] SEC("license") = "GPL";
