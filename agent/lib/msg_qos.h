/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Type 5 of draft-yang-dmsc-distributed-model-04: an SR's periodic QoS
 * telemetry report to the SMO. What the RoCEv2 telemetry program counted
 * at this node's attachments (Documentation/telemetry.md), per device and
 * direction and per QP: the counters since the attachment ("total") and
 * what changed over the report's interval ("interval"), with the
 * throughput and loss rate of that interval. Latency is not measured by
 * the program and is not in the report. With the dmsc module, the
 * counters it keeps per tunnel and per segment list (DMSC_CMD_TUNNEL_GET:
 * packets, bytes, flows, primary/backup switches), totals since the
 * tunnel was made; the module counts encapsulation errors per namespace
 * only (DMSC_STATS_A_DROP_*, `dmsc -s info`), not per tunnel.
 */
#ifndef DMSC_MSG_QOS_H
#define DMSC_MSG_QOS_H

#include <stdbool.h>
#include <stdint.h>

#include "msg.h"

#define QOS_MAX_DEVS	1024	/* RT_MAX_ATTACH */
#define QOS_MAX_QPS	4096	/* per report; the rest counted as omitted */
#define QOS_MAX_LEN	(4u << 20)
#define QOS_MAX_TUNNELS	1024	/* per report; the rest counted as omitted */

struct qos_counts {
	uint64_t packets, bytes, lost, out_of_order, duplicates;
};

struct qos_interval {
	struct qos_counts d;		/* changes over the interval, >= 0 */
	uint64_t throughput_bps;	/* d.bytes * 8 / interval, rounded */
	double loss_rate;		/* d.lost / (d.packets + d.lost); 0 if none */
};

enum { QOS_INGRESS, QOS_EGRESS };

struct qos_dev {
	char dev[16];			/* IF_NAMESIZE */
	unsigned int dir;		/* QOS_INGRESS, QOS_EGRESS */
	uint64_t packets;		/* every packet the program ran on */
	uint64_t malformed;		/* short + bad_version */
	uint64_t qp_overflow;
	struct qos_counts total;	/* the sum over its QPs */
	struct qos_interval iv;		/* the sum over its QPs' changes */
};

struct qos_qp {
	char dev[16];
	unsigned int dir;
	char src[46], dst[46];		/* INET6_ADDRSTRLEN, one family */
	uint16_t sport;
	uint32_t qpn;			/* 24 bits */
	struct qos_counts total;
	struct qos_interval iv;
};

/* A segment list's counters: DMSC_PATH_A_PACKETS, _BYTES, _FLOWS. */
struct qos_tpath {
	uint64_t packets, bytes, flows;
};

/* A tunnel's (DMSC_TUNNEL_A_*): totals since it was made. */
struct qos_tunnel {
	uint32_t id;
	bool on_backup;			/* DMSC_TUNNEL_A_ACTIVE */
	bool up;			/* DMSC_TUNNEL_A_ADMIN_UP */
	uint64_t packets, bytes, flows, switches;
	uint32_t npaths;		/* 1..DMSC_MAX_PATHS, in their order */
	struct qos_tpath paths[8];	/* DMSC_MAX_PATHS */
	bool has_backup;
	struct qos_tpath backup;
};

struct qos_report {
	uint64_t time_ms;		/* Unix time of the later snapshot */
	uint64_t interval_us;		/* between the two snapshots */
	struct qos_dev *devs;
	size_t ndevs;
	struct qos_qp *qps;		/* the busiest QOS_MAX_QPS */
	size_t nqps;
	uint64_t qps_omitted;		/* QPs beyond those */
	/* "tunnels": only when read from the module (sr.kernel) */
	bool has_tunnels;
	struct qos_tunnel *tunnels;
	size_t ntunnels;
	uint64_t tunnels_omitted;
};

extern const struct msg_type msg_qos_type;

/* The interval's throughput and loss rate from its changes. */
void qos_interval_rates(struct qos_interval *iv, uint64_t interval_us);
void qos_report_free(struct qos_report *r);

#endif /* DMSC_MSG_QOS_H */
