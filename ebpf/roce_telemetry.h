/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RoCEv2 telemetry: the maps the tc program (roce_telemetry.bpf.c) fills
 * and dmsc reads (agent/lib/telemetry.c). One header for both sides, uapi
 * types only. Documentation/telemetry.md explains each counter.
 */
#ifndef DMSC_ROCE_TELEMETRY_H
#define DMSC_ROCE_TELEMETRY_H

#include <linux/types.h>
#include <linux/bpf.h>

/*
 * PSNs remembered per QP to tell a late packet from a duplicate. The
 * accounting is roce-gen sink's (tools/roce-gen/psn_window.c) with this
 * window instead of its 65536: the counts agree exactly while no packet
 * arrives more than RT_PSN_WINDOW PSNs behind the highest one. A power
 * of two that divides 2^24, so a PSN's slot survives the wrap.
 */
#define RT_PSN_WINDOW	2048
#define RT_WINDOW_WORDS	(RT_PSN_WINDOW / 64)
#define RT_PSN_MASK	0xffffffu
#define RT_MAX_QPS	16384	/* as many as roce-gen sends; then qp_overflow */
#define RT_MAX_ATTACH	1024	/* devices x directions in one namespace */
#define RT_ROCE_PORT	4791

/*
 * The per-QP rate estimate: bytes and packets are summed over windows of
 * at least RT_RATE_WINDOW_NS, and each window closed moves three
 * exponentially weighted moving averages 1/2^RT_RATE_SHIFT of the way to
 * it: of its bytes, of its packets and of its length in ns. The rate is
 * the ratio of the averages (bytes over ns), which the readers take
 * (agent/lib/telemetry.c): the program has no division to do. Bytes and
 * packets are averaged in 1/2^RT_RATE_FRAC units, so that a window of a
 * few packets is not rounded away. The gain is the kernel's gen_estimator's
 * idea (a 1/4 gain per 250 ms by default: ours answers faster, as a loss
 * burst on a WAN path matters within a second). A window closes at the
 * first packet after it has lasted RT_RATE_WINDOW_NS, so an idle QP keeps
 * its last averages in the map; readers fold in the window that is due.
 */
#define RT_RATE_WINDOW_NS	100000000ull	/* 100 ms */
#define RT_RATE_SHIFT		3
#define RT_RATE_FRAC		8
/* After this many windows without a packet the old rate means nothing. */
#define RT_RATE_STALE		8

enum rt_dir { RT_INGRESS = 0, RT_EGRESS = 1 };

/*
 * A QP as the receiver sees it: the sink's (source, UDP source port,
 * dest QP), plus the destination as the kernel module's flow key has it,
 * plus where it was seen, so each attachment point counts on its own.
 * Addresses are the innermost IP header's (after SRv6 encapsulation).
 */
struct rt_qp_key {
	__u32 ifindex;
	__u32 dqpn;
	__u16 sport;
	__u8 family;		/* AF_INET or AF_INET6 */
	__u8 dir;		/* enum rt_dir */
	__u8 src[16];		/* IPv4 in the first 4 bytes, rest 0 */
	__u8 dst[16];
};

/* Opcode classes counted per QP (all 256 opcodes are counted per device). */
enum rt_op_class {
	RT_OP_SEND, RT_OP_WRITE, RT_OP_READ, RT_OP_ATOMIC, RT_OP_ACK,
	RT_OP_CNP, RT_OP_OTHER, RT_OP_CLASSES
};

/*
 * rt_qps is an open-addressed table in an array (roce_telemetry.bpf.c):
 * a QP's slot is one of RT_QP_PROBES consecutive ones from the slot its
 * key hashes to (rt_qp_hash()), the first free one when it came. An
 * array's lookup is inlined by the verifier, no helper call, and the
 * slot is found from the hash alone, so a packet's QP costs one
 * dependent miss, to the slot's first line, where the lock and the key
 * are, instead of the hash map's bucket, then element, then value.
 * Twice as many slots as RT_MAX_QPS keep the load at most 1/2; at that
 * load a key's slot is within 34 of its first in 40 simulated fillings
 * of 16384 random keys, so 64 probes make a full run below RT_MAX_QPS
 * QPs as good as impossible. (Four times as many slots need only 16
 * probes, but spread 10,000 QPs over twice the pages: 30-50 ns a packet
 * more at 10,000 QPs, TLB misses presumably.)
 */
#define RT_QP_SLOTS	(2 * RT_MAX_QPS)	/* a power of two */
#define RT_QP_PROBES	64
#define RT_QP_INS_LOCKS	4096	/* striped insertion locks, a power of two */

/* rt_qp_count's two counters: QPs held = claimed - freed. */
enum rt_count { RT_COUNT_CLAIMED, RT_COUNT_FREED, RT_COUNT_N };

/*
 * The slot's index: a multiplicative hash of the key's 44 bytes, mixed
 * with @seed (the program's rt_seed, chosen at load), the top bits taken.
 * Shared by the program and the host tests, which look a QP up by it.
 */
static inline __u32 rt_qp_hash(const struct rt_qp_key *k, __u64 seed)
{
	const unsigned char *b = (const unsigned char *)k;
	__u64 w[5], h;
	__u32 t;

	__builtin_memcpy(w, b, sizeof(w));
	__builtin_memcpy(&t, b + sizeof(w), sizeof(t));
	h = (w[0] ^ seed) * 0x9e3779b97f4a7c15ull;
	h ^= (w[1] + seed) * 0xc2b2ae3d27d4eb4full;
	h ^= w[2] * 0x165667b19e3779f9ull;
	h ^= w[3] * 0xd6e8feb86659fd93ull;
	h ^= (w[4] ^ (__u64)t << 32) * 0xff51afd7ed558ccdull;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return (__u32)(h >> 32);
}

_Static_assert(sizeof(struct rt_qp_key) == 44, "rt_qp_hash() reads 44 bytes");

/*
 * One slot of rt_qps: the QP's key and counters, laid out for the cache.
 * Slots are 256 bytes, four cache lines, end to end from the start of a
 * page, so each starts a line. The first line holds the lock, the key
 * (compared under the lock) and the PSN state: the lookup's one miss,
 * written by every packet. An in-order packet writes the second (packet
 * and byte counts, times, the rate window) and the third (the opcode
 * classes); a rate window's close writes the averages in the third and
 * fourth; the loss counters in the fourth change only on loss or
 * reordering. The PSN bitmap, 256 bytes, is in a parallel array
 * (struct rt_qp_psns, rt_psns), read only while a loss is in the window:
 * half the memory an in-order packet would otherwise spread over. A
 * slot is free when key.ifindex is 0 (no device has index 0); dmsc
 * frees a detached device's slots by writing a zeroed one under the lock.
 */
struct rt_qp {
	struct bpf_spin_lock lock;	/* the PSN state is one sequence */
	__u32 next_psn;		/* one past the highest PSN seen */
	struct rt_qp_key key;	/* 8-byte aligned: compared a word at a time */
	__u32 span;		/* PSNs accounted below next, capped at the window */
	__u32 last_psn;		/* PSN of the latest arrival */
	__u32 hole_top;		/* highest PSN ever marked in missing[] */
	/* Second line. */
	__u8 holes;		/* missing[] may hold bits an in-order PSN must clear */
	__u8 last_opcode;
	__u8 pad[6];
	__u64 packets;		/* RoCEv2 packets with a well-formed BTH */
	__u64 bytes;		/* their UDP payload: BTH to ICRC, as the sink */
	__u64 last_ns;		/* bpf_ktime_get_ns() of the latest */
	__u64 win_start_ns;	/* the rate window in progress began */
	__u64 win_bytes;	/* bytes and packets in it so far */
	__u64 win_packets;
	__u64 srv6_packets;	/* of packets, inside an outer IPv6 (SRv6) */
	/* Third line. */
	__u64 ops[RT_OP_CLASSES];
	/* Written when a rate window closes. */
	__u64 avg_bytes;	/* EWMA of a window's bytes, x 2^RT_RATE_FRAC */
	/* Fourth line. */
	__u64 avg_packets;	/* EWMA of a window's packets, x 2^RT_RATE_FRAC */
	__u64 avg_ns;		/* EWMA of a window's length; 0: none closed */
	/* Written only on loss or reordering, and by the first packet. */
	__u64 lost;		/* PSNs skipped and not (yet) arrived: psn_gaps */
	__u64 out_of_order;	/* behind the highest, not seen before */
	__u64 duplicates;	/* behind the highest, seen before */
	__u64 too_old;		/* further behind than the window */
	__u64 first_ns;		/* bpf_ktime_get_ns() of the first */
	__u64 spare;
};

_Static_assert(sizeof(struct rt_qp) == 256,
	       "struct rt_qp: a slot must stay four cache lines");
_Static_assert(__builtin_offsetof(struct rt_qp, key) == 8 &&
	       __builtin_offsetof(struct rt_qp, holes) == 64 &&
	       __builtin_offsetof(struct rt_qp, ops) == 128 &&
	       __builtin_offsetof(struct rt_qp, avg_packets) == 192,
	       "struct rt_qp: the lines as described");

/*
 * The PSN bitmap of the QP in the slot of the same index in rt_qps, under
 * that slot's lock. Bit psn % RT_PSN_WINDOW, for PSNs within span: not
 * arrived. Cleared by the program when a QP takes the slot.
 */
struct rt_qp_psns {
	__u64 missing[RT_WINDOW_WORDS];
};

/* Per attachment point (device, direction), per CPU, in rt_devs[slot]. */
enum rt_dev_counter {
	RT_DEV_PACKETS,		/* every packet the program ran on */
	RT_DEV_ROCE,		/* counted in a QP */
	RT_DEV_SRV6,		/* of those, SRv6/IPv6-encapsulated */
	RT_DEV_SHORT,		/* UDP/4791 too short for BTH, ext. headers, ICRC */
	RT_DEV_BAD_VERSION,	/* BTH transport version not 0 */
	RT_DEV_FRAGMENTS,	/* IP fragments: no UDP header to read */
	RT_DEV_UNPARSED,	/* IPv6 header chain longer than we follow */
	RT_DEV_QP_OVERFLOW,	/* RoCEv2 packets of QPs the full map could not take */
	RT_DEV_COUNTERS
};

struct rt_dev_key {
	__u32 ifindex;
	__u32 dir;
};

struct rt_dev {
	__u64 c[RT_DEV_COUNTERS];
	__u64 opcodes[256];	/* well-formed BTHs by opcode */
};

/* What dmsc keeps about an attachment; the program does not read it. */
struct rt_attach {
	__u64 attached_realtime_ns;
	__u32 prog_id;
	__u32 created_clsact;	/* dmsc added the clsact qdisc: it removes it */
	__u32 slot;		/* its counters in rt_devs; its filter's classid */
	__u32 pad;
};

#endif /* DMSC_ROCE_TELEMETRY_H */
