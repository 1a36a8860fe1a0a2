/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * The cbfc qdisc (kernel/sch_cbfc.c): its TCA_OPTIONS attributes and the
 * statistics it gives `tc -s` as xstats. Shared by dmsc.ko and the tc
 * plugin q_cbfc.so (tools/tc/). Its credit sessions are configured through
 * the "dmsc" generic netlink family (linux/dmsc.h).
 */
#ifndef _UAPI_LINUX_DMSC_CBFC_H
#define _UAPI_LINUX_DMSC_CBFC_H

#include <linux/types.h>

#define CBFC_LIMIT_MAX		(1U << 20)	/* packets */
#define CBFC_CREDIT_MAX		(1U << 30)	/* bytes */
#define CBFC_QUANTUM_MIN	256
#define CBFC_QUANTUM_MAX	(1U << 20)
#define CBFC_HEARTBEAT_MIN	10000		/* us; 0 is off */
#define CBFC_HEARTBEAT_MAX	60000000	/* us */
#define CBFC_CREDIT_BATCH_MIN	64
#define CBFC_CREDIT_BATCH_MAX	(1U << 24)
#define CBFC_CREDIT_BATCH_DEFAULT 16384	/* a quarter of the default credit */

enum {
	TCA_CBFC_UNSPEC,
	TCA_CBFC_PAD,
	TCA_CBFC_LIMIT,		/* u32: packets in the qdisc, 1..LIMIT_MAX */
	TCA_CBFC_FLOW_LIMIT,	/* u32: packets per credited flow, <= limit */
	TCA_CBFC_PLAIN_LIMIT,	/* u32: packets in the plain band, <= limit */
	TCA_CBFC_CREDIT,	/* u32: bytes this hop reserves per session */
	TCA_CBFC_QUANTUM,	/* u32: DRR quantum, bytes */
	TCA_CBFC_HEARTBEAT,	/* u32: us without credit before failover, 0 off */
	TCA_CBFC_CREDIT_BATCH,	/* u32: bytes freed per credit return */
	TCA_CBFC_RATE,		/* u64: bytes/s the qdisc sends, 0 = no limit */
	__TCA_CBFC_MAX
};
#define TCA_CBFC_MAX (__TCA_CBFC_MAX - 1)

/* TCA_STATS_APP of a cbfc qdisc. Counters only grow, until the qdisc goes. */
struct tc_cbfc_xstats {
	__u32	flows;			/* credited flows with packets queued */
	__u32	stalled_flows;		/* ... of which wait for credit now */
	__u32	plain_qlen;		/* packets in the plain band */
	__u32	idle_flows;		/* credited flows kept empty, for
					 * their next packet (was padding)
					 */
	__u64	credit_stalls;		/* times a flow had to wait for credit */
	__u64	heartbeat_failures;	/* flows whose next hop was declared failed */
	__u64	failovers;		/* ... or link_failures, whose tunnel
					 * went to its backup (with packets
					 * waiting, or none: see link_failures)
					 */
	__u64	drop_limit;		/* the qdisc held limit packets */
	__u64	drop_flow_limit;	/* the flow held flow_limit packets */
	__u64	drop_plain_limit;	/* the plain band held plain_limit */
	__u64	drop_nomem;		/* no memory for a new flow */
	__u64	backlog_credited;	/* bytes queued in credited flows */
	__u64	credited_packets;	/* packets sent under credit */
	__u64	plain_packets;		/* packets sent from the plain band */
	__u64	drop_oversize;		/* head larger than its session's credit */
	__u64	drop_failed;		/* waiting when the next hop failed, no backup */
	__u64	link_failures;		/* sessions failed over as the link to
					 * their next hop went down: flows with
					 * packets queued, sessions last sent
					 * here with none, and on a tunnel's
					 * backup device those whose packets
					 * came bypassing it, with their
					 * tunnel's others
					 */
	__u64	carrier_holds;		/* times a dequeue found the device's
					 * carrier lost with packets queued:
					 * held, not sent into the link, and
					 * failed over then
					 */
};

/*
 * RSVP-CBFC signalling (draft-hu-rtgwg-cbfc-rsvp over RFC 2205), spoken
 * by the agents' speakers (agent/lib/rsvp.c, Documentation/cbfc.md,
 * "Signalling"). IP protocol 46 (IPPROTO_RSVP), RSVP version 1.
 */
#define RSVP_VERSION		1
#define RSVP_HDR_LEN		8	/* common header */
#define RSVP_OBJ_HDR_LEN	4	/* length, Class-Num, C-Type */
#define RSVP_MSG_MAX		1024	/* bytes; ours are far smaller */
/*
 * Messages go one hop and leave with IP TTL / hop limit (and Send_TTL)
 * 255; the kernel applies a credit return only if it still has 255, so
 * an off-link forgery of the next hop's address is refused (RFC 5082).
 */
#define RSVP_HOP_LIMIT		255

/* Message types: RFC 2205's that we use and the draft's two. */
#define RSVP_MSG_PATHERR	3	/* a hop could not set up; upstream */
#define RSVP_MSG_PATHTEAR	5	/* the source's teardown, downstream */
#define RSVP_MSG_CBFC_PATH	28	/* Credit-based PATH, downstream */
#define RSVP_MSG_CBFC_RESV	29	/* Credit-based RESV, upstream */

/* RFC 2205 Class-Nums and the C-Types we send (IPv4 1, IPv6 2). */
#define RSVP_CLASS_SESSION		1
#define RSVP_CLASS_RSVP_HOP		3
#define RSVP_CLASS_TIME_VALUES		5
#define RSVP_CLASS_ERROR_SPEC		6
#define RSVP_CLASS_FILTER_SPEC		10
#define RSVP_CLASS_SENDER_TEMPLATE	11
/* RFC 3209's EXPLICIT_ROUTE: the hops PATH has still to visit. */
#define RSVP_CLASS_EXPLICIT_ROUTE	20
#define RSVP_CTYPE_IPV4			1
#define RSVP_CTYPE_IPV6			2
#define RSVP_CTYPE_ERO			1
#define RSVP_ERO_SUB_IPV4		1	/* 8 bytes */
#define RSVP_ERO_SUB_IPV6		2	/* 20 bytes */
#define RSVP_ERO_HOPS_MAX		16

/*
 * Our two Class-Nums, from RFC 3936's private range of the form 0bbbbbbb
 * (124..127): a node that does not know them must refuse the message
 * (RFC 2205, 3.10), which is what we want from a hop that would otherwise
 * forward data it has granted no credit for. Objects in that range start
 * with an enterprise number (RFC 6411), as tshark expects: ours is
 * RFC 5612's documentation number until dmsc has one of its own.
 */
#define RSVP_CBFC_ENTERPRISE		32473
#define RSVP_CLASS_CBFC_CREDIT		124
#define RSVP_CTYPE_CREDIT_MB		1	/* draft: u32 MB, a delta */
#define RSVP_CTYPE_CREDIT_CUMULATIVE	2	/* u64 initial, u64 freed */
#define RSVP_CTYPE_CREDIT_DELTA		3	/* u64 bytes freed: the kernel's */
#define RSVP_CLASS_CBFC_QP		125
#define RSVP_CTYPE_QP			1	/* u32: 0, then the 24-bit QPN */

/* The Credit object's bounds: the kernel session's (linux/dmsc.h). */
#define RSVP_CREDIT_MB_MAX		4096	/* DMSC_DELTA_MAX in MB */

/* ERROR_SPEC codes (RFC 2205 appendix B) we send in a PathErr. */
#define RSVP_ERR_CONFLICT		2	/* policy / local conflict */
#define RSVP_ERR_SYSTEM		23	/* the next hop did not answer */
#define RSVP_ERR_UNKNOWN_CLASS		13
#define RSVP_ERR_UNKNOWN_CTYPE		14
#define RSVP_ERR_API			20	/* kernel refused the session */

#endif /* _UAPI_LINUX_DMSC_CBFC_H */
