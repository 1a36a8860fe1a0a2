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
	__u32	pad;
	__u64	credit_stalls;		/* times a flow had to wait for credit */
	__u64	heartbeat_failures;	/* flows whose next hop was declared failed */
	__u64	failovers;		/* ... whose packets went to the backup */
	__u64	drop_limit;		/* the qdisc held limit packets */
	__u64	drop_flow_limit;	/* the flow held flow_limit packets */
	__u64	drop_plain_limit;	/* the plain band held plain_limit */
	__u64	drop_nomem;		/* no memory for a new flow */
	__u64	backlog_credited;	/* bytes queued in credited flows */
	__u64	credited_packets;	/* packets sent under credit */
	__u64	plain_packets;		/* packets sent from the plain band */
	__u64	drop_oversize;		/* head larger than its session's credit */
	__u64	drop_failed;		/* waiting when the next hop failed, no backup */
};

#endif /* _UAPI_LINUX_DMSC_CBFC_H */
