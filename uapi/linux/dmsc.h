/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * dmsc: SRv6 steering and credit-based flow control for RoCEv2 across
 * AI data centres. This header is the whole ABI between dmsc.ko and
 * userspace (dmsc, dmsc-agent, tc, ebpf): the generic netlink family
 * "dmsc" and the RSVP-CBFC wire constants.
 *
 * Conventions of the family, as in WireGuard's:
 *  - every object travels in one nest (DMSC_A_TUNNEL, DMSC_A_RULE, ...);
 *  - a GET without an object is a dump, resumable across messages;
 *  - NEW/SET/DEL apply all or nothing and need CAP_NET_ADMIN in the user
 *    namespace owning the network namespace;
 *  - errors come with an extack message naming the attribute at fault.
 *
 * The YNL description of this family is Documentation/netlink/specs/dmsc.yaml;
 * keep the two in step.
 */
#ifndef _UAPI_LINUX_DMSC_H
#define _UAPI_LINUX_DMSC_H

#include <linux/types.h>

#define DMSC_GENL_NAME		"dmsc"
#define DMSC_GENL_VERSION	1
#define DMSC_MCGRP_EVENTS	"events"

/* RoCEv2 is UDP with this destination port (IBTA annex A17). */
#define DMSC_ROCEV2_PORT	4791

#define DMSC_MAX_PATHS		8	/* weighted segment lists a tunnel */
#define DMSC_MAX_SEGS		16	/* SIDs in one segment list */
#define DMSC_MAX_WEIGHT		65535
#define DMSC_QPN_MAX		0xffffff	/* BTH destination QP is 24 bits */
#define DMSC_FLOW_LIMIT_MAX	(1U << 20)	/* DMSC_A_FLOW_LIMIT */
#define DMSC_FLOW_TIMEOUT_MIN	100		/* DMSC_A_FLOW_TIMEOUT, ms */
#define DMSC_FLOW_TIMEOUT_MAX	3600000
/*
 * Rules a network namespace may hold; one more is refused with ENOSPC
 * ("rule table full"). A rule costs under 250 bytes plus 8 per possible
 * cpu (Documentation/srv6-steering.md), so a full table is about 62 MiB
 * and 2 MiB per cpu. Lookup cost does not grow with the table.
 */
#define DMSC_RULES_MAX		(1U << 18)

enum dmsc_cmd {
	DMSC_CMD_UNSPEC,
	DMSC_CMD_INFO,		/* version, features, per-netns counters */
	DMSC_CMD_SET,		/* per-netns settings: flow table size, ageing */
	DMSC_CMD_TUNNEL_NEW,
	DMSC_CMD_TUNNEL_SET,	/* change paths/weights/backup/mode/state */
	DMSC_CMD_TUNNEL_DEL,
	DMSC_CMD_TUNNEL_GET,	/* one by DMSC_TUNNEL_A_ID, or dump */
	DMSC_CMD_RULE_NEW,
	DMSC_CMD_RULE_DEL,
	DMSC_CMD_RULE_GET,	/* dump */
	DMSC_CMD_FLOW_GET,	/* dump */
	DMSC_CMD_FLOW_FLUSH,
	DMSC_CMD_EVENT,		/* multicast on "events" */
	DMSC_CMD_SESSION_NEW,	/* a credit session (sch_cbfc) */
	DMSC_CMD_SESSION_DEL,
	DMSC_CMD_SESSION_GET,	/* one by its flow, or dump */
	DMSC_CMD_CREDIT,	/* a credit update for one session */
	DMSC_CMD_SESSION_SET,	/* a live session's backup reservation */
	__DMSC_CMD_MAX
};
#define DMSC_CMD_MAX (__DMSC_CMD_MAX - 1)

/* Feature bits in DMSC_A_FEATURES: what this module can do. */
enum dmsc_feature {
	DMSC_F_SRV6_ENCAP	= 1 << 0,	/* H.Encaps */
	DMSC_F_SRV6_ENCAP_RED	= 1 << 1,	/* H.Encaps.Red */
	DMSC_F_INNER_IPV4	= 1 << 2,
	DMSC_F_INNER_IPV6	= 1 << 3,
	DMSC_F_FLOW_TABLE	= 1 << 4,
	DMSC_F_BACKUP_PATH	= 1 << 5,
};

enum dmsc_attr {
	DMSC_A_UNSPEC,
	DMSC_A_PAD,
	DMSC_A_VERSION,		/* string: module version */
	DMSC_A_FEATURES,	/* u64: enum dmsc_feature bits */
	DMSC_A_NETNS_COOKIE,	/* u64: which namespace answered */
	DMSC_A_STATS,		/* nest: enum dmsc_stats_attr */
	DMSC_A_FLOW_LIMIT,	/* u32: flow table entries, 0 = no tracking */
	DMSC_A_FLOW_TIMEOUT,	/* u32: ms of idleness before a flow ages out */
	DMSC_A_TUNNEL,		/* nest: enum dmsc_tunnel_attr */
	DMSC_A_RULE,		/* nest: enum dmsc_rule_attr */
	DMSC_A_FLOW,		/* nest: enum dmsc_flow_attr */
	DMSC_A_EVENT,		/* u32: enum dmsc_event */
	DMSC_A_SESSION,		/* nest: enum dmsc_session_attr */
	__DMSC_A_MAX
};
#define DMSC_A_MAX (__DMSC_A_MAX - 1)

/* Per network namespace counters, all u64 unless noted. */
enum dmsc_stats_attr {
	DMSC_STATS_A_UNSPEC,
	DMSC_STATS_A_PAD,
	DMSC_STATS_A_TUNNELS,		/* u32 */
	DMSC_STATS_A_RULES,		/* u32 */
	DMSC_STATS_A_FLOWS,		/* u32: flows tracked now */
	DMSC_STATS_A_ROCE_PACKETS,	/* RoCEv2 packets the hook saw */
	DMSC_STATS_A_ENCAP_PACKETS,	/* ... of which were encapsulated */
	DMSC_STATS_A_ENCAP_BYTES,	/* inner bytes encapsulated */
	DMSC_STATS_A_DROP_MTU,		/* too big once encapsulated */
	DMSC_STATS_A_DROP_NOROUTE,	/* no route to the first segment */
	DMSC_STATS_A_DROP_NOMEM,	/* headroom or allocation failure */
	DMSC_STATS_A_MALFORMED,	/* UDP/4791 too short for a BTH: passed */
	DMSC_STATS_A_FLOWS_UNTRACKED,	/* flow table full */
	DMSC_STATS_A_CRET_TX,		/* credit-return RESVs sent */
	DMSC_STATS_A_CRET_TX_ERRORS,	/* ... that could not be sent */
	DMSC_STATS_A_CRET_RX,		/* credit returns applied to a session */
	DMSC_STATS_A_CRET_MALFORMED,	/* RESVs refused: bad length, checksum, object */
	DMSC_STATS_A_CRET_NO_SESSION,	/* credit returns for no session here */
	DMSC_STATS_A_CRET_SOURCE,	/* ... not from the session's next hop */
	DMSC_STATS_A_CRET_MODE,	/* ... for a delta session */
	DMSC_STATS_A_CRET_KEEPALIVE,	/* unchanged totals sent while held back */
	__DMSC_STATS_A_MAX
};
#define DMSC_STATS_A_MAX (__DMSC_STATS_A_MAX - 1)

enum dmsc_tunnel_mode {
	DMSC_MODE_ENCAP,	/* H.Encaps: SRH carries every SID */
	DMSC_MODE_ENCAP_RED,	/* H.Encaps.Red: first SID only in DA */
	__DMSC_MODE_MAX
};
#define DMSC_MODE_MAX (__DMSC_MODE_MAX - 1)

enum dmsc_tunnel_active {
	DMSC_ACTIVE_PRIMARY,	/* weighted segment lists */
	DMSC_ACTIVE_BACKUP,	/* every flow on the backup list */
	__DMSC_ACTIVE_MAX
};
#define DMSC_ACTIVE_MAX (__DMSC_ACTIVE_MAX - 1)

enum dmsc_tunnel_attr {
	DMSC_TUNNEL_A_UNSPEC,
	DMSC_TUNNEL_A_PAD,
	DMSC_TUNNEL_A_ID,	/* u32, not 0 */
	DMSC_TUNNEL_A_SRC,	/* in6_addr: outer source address */
	DMSC_TUNNEL_A_MODE,	/* u8: enum dmsc_tunnel_mode */
	DMSC_TUNNEL_A_PATH,	/* nest, repeated 1..DMSC_MAX_PATHS times */
	DMSC_TUNNEL_A_BACKUP,	/* nest: a path whose weight is ignored */
	DMSC_TUNNEL_A_ACTIVE,	/* u8: enum dmsc_tunnel_active */
	DMSC_TUNNEL_A_ADMIN_UP,	/* u8: 0 = out of service, rules skip it */
	DMSC_TUNNEL_A_PACKETS,	/* u64, replies only */
	DMSC_TUNNEL_A_BYTES,	/* u64, replies only */
	DMSC_TUNNEL_A_FLOWS,	/* u32, replies only */
	DMSC_TUNNEL_A_SWITCHES,	/* u64: primary <-> backup, replies only */
	__DMSC_TUNNEL_A_MAX
};
#define DMSC_TUNNEL_A_MAX (__DMSC_TUNNEL_A_MAX - 1)

enum dmsc_path_attr {
	DMSC_PATH_A_UNSPEC,
	DMSC_PATH_A_PAD,
	DMSC_PATH_A_SEGS,	/* in6_addr[]: SIDs in travel order */
	DMSC_PATH_A_WEIGHT,	/* u32: 1..DMSC_MAX_WEIGHT, default 1 */
	DMSC_PATH_A_INDEX,	/* u32: position in the tunnel, replies only */
	DMSC_PATH_A_PACKETS,	/* u64, replies only */
	DMSC_PATH_A_BYTES,	/* u64, replies only */
	DMSC_PATH_A_FLOWS,	/* u32, replies only */
	__DMSC_PATH_A_MAX
};
#define DMSC_PATH_A_MAX (__DMSC_PATH_A_MAX - 1)

/*
 * A rule matches inner packets by destination prefix, optional source
 * prefix and optional BTH destination-QP range. The most specific rule
 * wins: longest destination prefix, then longest source prefix, then the
 * narrowest QP range, then the rule added first. Its key (family, dst,
 * dst_len, src, src_len, qpn range) is unique. A dump lists IPv4 rules,
 * then IPv6, in prefix order (by destination address, a shorter prefix
 * before the longer ones it covers) and the rules of one destination
 * prefix in precedence order.
 */
enum dmsc_rule_attr {
	DMSC_RULE_A_UNSPEC,
	DMSC_RULE_A_PAD,
	DMSC_RULE_A_FAMILY,	/* u8: AF_INET or AF_INET6 (inner) */
	DMSC_RULE_A_DST,	/* 4 or 16 bytes, per family */
	DMSC_RULE_A_DST_LEN,	/* u8 */
	DMSC_RULE_A_SRC,	/* 4 or 16 bytes; absent = any */
	DMSC_RULE_A_SRC_LEN,	/* u8 */
	DMSC_RULE_A_QPN_LO,	/* u32 <= DMSC_QPN_MAX; absent = 0 */
	DMSC_RULE_A_QPN_HI,	/* u32 <= DMSC_QPN_MAX; absent = max */
	DMSC_RULE_A_TUNNEL,	/* u32: tunnel id */
	DMSC_RULE_A_PACKETS,	/* u64: packets matched, replies only */
	__DMSC_RULE_A_MAX
};
#define DMSC_RULE_A_MAX (__DMSC_RULE_A_MAX - 1)

/* DMSC_FLOW_A_PATH of a flow carried by the backup segment list. */
#define DMSC_FLOW_PATH_BACKUP	0xffffffff

/* A flow is (inner src, inner dst, UDP source port, BTH dest QP). */
enum dmsc_flow_attr {
	DMSC_FLOW_A_UNSPEC,
	DMSC_FLOW_A_PAD,
	DMSC_FLOW_A_FAMILY,	/* u8 */
	DMSC_FLOW_A_SRC,	/* 4 or 16 bytes */
	DMSC_FLOW_A_DST,	/* 4 or 16 bytes */
	DMSC_FLOW_A_SPORT,	/* u16, host order */
	DMSC_FLOW_A_QPN,	/* u32 */
	DMSC_FLOW_A_TUNNEL,	/* u32 */
	DMSC_FLOW_A_PATH,	/* u32: path index or DMSC_FLOW_PATH_BACKUP */
	DMSC_FLOW_A_PACKETS,	/* u64 */
	DMSC_FLOW_A_BYTES,	/* u64 */
	DMSC_FLOW_A_IDLE_MS,	/* u32: since the last packet */
	__DMSC_FLOW_A_MAX
};
#define DMSC_FLOW_A_MAX (__DMSC_FLOW_A_MAX - 1)

/* DMSC_A_EVENT values, sent with DMSC_CMD_EVENT on "events". */
enum dmsc_event {
	DMSC_EVENT_UNSPEC,
	DMSC_EVENT_TUNNEL_BACKUP,	/* a tunnel moved to its backup */
	DMSC_EVENT_TUNNEL_PRIMARY,	/* ... and back */
	DMSC_EVENT_NEXTHOP_FAILED,	/* a cbfc heartbeat: DMSC_A_SESSION */
	DMSC_EVENT_NEXTHOP_DOWN,	/* cbfc: the link lost its carrier: ditto */
	__DMSC_EVENT_MAX
};
#define DMSC_EVENT_MAX (__DMSC_EVENT_MAX - 1)

/*
 * Credit sessions of the cbfc qdisc (Documentation/cbfc.md). A session is
 * one RoCEv2 flow as the qdisc classifies it, (family, src, dst, UDP
 * source port, BTH dest QP), towards one next hop, in one namespace. The
 * qdisc sends a packet of the flow only when the session's available
 * credit covers it:
 *
 *   available = credit + freed - sent     (bytes, as qdisc_pkt_len counts)
 *
 * where credit is the buffer the next hop reserved, sent what the qdiscs
 * of the namespace dequeued for the session, and freed what the next hop
 * reported freed. freed can never exceed sent (an update saying so is
 * counted as absurd and ignored), so available is at most credit. In cumulative mode a credit update carries the next
 * hop's running total of freed bytes and only a larger total counts, so a
 * lost, repeated or reordered update costs nothing; in delta mode (the
 * draft's form) each update adds its delta.
 */
#define DMSC_SESSIONS_MAX	65536		/* per namespace */
#define DMSC_CREDIT_MAX		(1ULL << 32)	/* DMSC_SESSION_A_CREDIT */
/* No longer a limit: freed is any u64, compared wrap-safely with sent. */
#define DMSC_FREED_MAX		(1ULL << 56)
#define DMSC_DELTA_MAX		(1ULL << 32)	/* DMSC_SESSION_A_DELTA */

enum dmsc_credit_mode {
	DMSC_CREDIT_MODE_CUMULATIVE,	/* updates carry the freed total */
	DMSC_CREDIT_MODE_DELTA,		/* ... bytes freed since the last */
	__DMSC_CREDIT_MODE_MAX
};
#define DMSC_CREDIT_MODE_MAX (__DMSC_CREDIT_MODE_MAX - 1)

enum dmsc_session_attr {
	DMSC_SESSION_A_UNSPEC,
	DMSC_SESSION_A_PAD,
	DMSC_SESSION_A_FAMILY,	/* u8: AF_INET or AF_INET6 (inner) */
	DMSC_SESSION_A_SRC,	/* 4 or 16 bytes, per family */
	DMSC_SESSION_A_DST,	/* 4 or 16 bytes, per family */
	DMSC_SESSION_A_SPORT,	/* u16, host order: UDP source port */
	DMSC_SESSION_A_QPN,	/* u32 <= DMSC_QPN_MAX: BTH dest QP */
	DMSC_SESSION_A_NEXTHOP,	/* in6_addr: the hop granting credit */
	DMSC_SESSION_A_MODE,	/* u8: enum dmsc_credit_mode, default cumulative */
	DMSC_SESSION_A_CREDIT,	/* u64 <= DMSC_CREDIT_MAX: initial credit */
	DMSC_SESSION_A_FREED,	/* u64, any: CREDIT, cumulative */
	DMSC_SESSION_A_DELTA,	/* u64 1..DMSC_DELTA_MAX: CREDIT, delta mode */
	DMSC_SESSION_A_SENT,	/* u64: bytes sent, replies only */
	DMSC_SESSION_A_AVAILABLE, /* u64: credit available, replies only */
	DMSC_SESSION_A_PACKETS,	/* u64: packets sent, replies only */
	DMSC_SESSION_A_UPDATES,	/* u64: credit updates applied, replies only */
	DMSC_SESSION_A_STALE,	/* u64: ... ignored as stale, replies only */
	DMSC_SESSION_A_ABSURD,	/* u64: ... ignored, freed above sent, replies only */
	DMSC_SESSION_A_TUNNEL,	/* u32: tunnel the flow is steered by, for failover */
	DMSC_SESSION_A_FAILED,	/* u8: next hop declared failed, replies only */
	DMSC_SESSION_A_IFINDEX,	/* u32: device of the qdisc, events only */
	DMSC_SESSION_A_WAITED_US, /* u64: waited without credit, events only */
	DMSC_SESSION_A_PREVHOP,	/* in6_addr: the hop this one returns credit to */
	DMSC_SESSION_A_RETURNED, /* u64: bytes forwarded, returned to prevhop, replies only */
	DMSC_SESSION_A_RETURNS,	/* u64: credit-return RESVs sent, replies only */
	DMSC_SESSION_A_BACKUP_NEXTHOP, /* in6_addr: first hop of the backup list */
	DMSC_SESSION_A_BACKUP_CREDIT, /* u64 1..DMSC_CREDIT_MAX: its reservation */
	DMSC_SESSION_A_ON_BACKUP, /* u8: moved to the backup's credit, replies, events */
	DMSC_SESSION_A_BACKUP_MODE, /* u8: enum dmsc_credit_mode the backup hop returns in, default MODE */
	__DMSC_SESSION_A_MAX
};
#define DMSC_SESSION_A_MAX (__DMSC_SESSION_A_MAX - 1)

#endif /* _UAPI_LINUX_DMSC_H */
