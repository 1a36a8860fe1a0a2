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
 * The per-QP rate estimate: an exponentially weighted moving average of
 * the rate over windows of at least RT_RATE_WINDOW_NS, each new window
 * weighing 1/2^RT_RATE_SHIFT (as the kernel's gen_estimator, whose
 * default is a 1/4 gain per 250 ms: ours answers faster, as a loss burst
 * on a WAN path matters within a second). A window closes at the first
 * packet after it has lasted RT_RATE_WINDOW_NS, so an idle QP keeps its
 * last estimate in the map; readers decay it (agent/lib/telemetry.c).
 */
#define RT_RATE_WINDOW_NS	100000000ull	/* 100 ms */
#define RT_RATE_SHIFT		3
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
 * The fields every packet writes come first, so that an in-order packet
 * touches the value's first 136 bytes and nothing after them. The bitmap
 * (256 bytes) is read and written only when a PSN is skipped or arrives
 * late, and for RT_PSN_WINDOW packets after that (roce_telemetry.bpf.c).
 */
struct rt_qp {
	struct bpf_spin_lock lock;	/* the PSN state is one sequence */
	__u32 next_psn;		/* one past the highest PSN seen */
	__u32 span;		/* PSNs accounted below next, capped at the window */
	__u32 last_psn;		/* PSN of the latest arrival */
	__u32 hole_top;		/* highest PSN ever marked in missing[] */
	__u8 holes;		/* missing[] may hold bits an in-order PSN must clear */
	__u8 last_opcode;
	__u8 pad[2];
	__u64 packets;		/* RoCEv2 packets with a well-formed BTH */
	__u64 bytes;		/* their UDP payload: BTH to ICRC, as the sink */
	__u64 last_ns;		/* bpf_ktime_get_ns() of the latest */
	__u64 win_start_ns;	/* the rate window in progress began */
	__u64 win_bytes;	/* bytes and packets in it so far */
	__u64 win_packets;
	__u64 srv6_packets;	/* of packets, inside an outer IPv6 (SRv6) */
	__u64 ops[RT_OP_CLASSES];
	/* Written only on loss, reordering or a rate window's close. */
	__u64 lost;		/* PSNs skipped and not (yet) arrived: psn_gaps */
	__u64 out_of_order;	/* behind the highest, not seen before */
	__u64 duplicates;	/* behind the highest, seen before */
	__u64 too_old;		/* further behind than the window */
	__u64 first_ns;		/* bpf_ktime_get_ns() of the first */
	__u64 rate_Bps;		/* EWMA: bytes per second */
	__u64 rate_mpps;	/* EWMA: packets per 1000 seconds */
	/* Bit psn % RT_PSN_WINDOW, for PSNs within span: not arrived. */
	__u64 missing[RT_WINDOW_WORDS];
};

/* Per attachment point (device, direction), per CPU. */
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
};

#endif /* DMSC_ROCE_TELEMETRY_H */
