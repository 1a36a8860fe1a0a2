/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Type 4 of draft-yang-dmsc-distributed-model-04: an SR's periodic node
 * state report to the controller's smo role (msg.h). What the node is
 * and how loaded, as its agent reads it every sr.node_report_ms:
 *
 *   "time_ms": T,                        Unix time of the reading
 *   "load": { "loadavg": [ L1, L5, L15 ],  /proc/loadavg
 *             "cpus": N,                   sysconf(_SC_NPROCESSORS_ONLN)
 *             "mem_total_kb": M,           /proc/meminfo MemTotal
 *             "mem_available_kb": A },     ... MemAvailable, <= M
 *   "links": [ { "dev": "eth0",            /sys/class/net, the agent's netns
 *                "oper": "up",             operstate (RFC 2863 names)
 *                "mtu": 1500,
 *                "speed_mbps": 25000 } ],  optional: absent when the
 *                                          driver gives none (virtual links)
 *   "instances": [ { "id": "mi-a1",        this node's registered MIs
 *                    "state": "active",    pending, active or faulted
 *                    "registration_rtt_ms": 3,      optional, below
 *                    "probe": { "sent": S, "lost": L,
 *                               "rtt_us": R, "srtt_us": A } } ]
 *
 * "registration_rtt_ms": the time from the SR's last registration of the
 * instance to the SRD's route advertisement carrying it back (a round
 * trip through the SRD and its store); absent until that has been seen
 * once.
 *
 * "probe" (sr_probe.c): the SR sends an ICMPv6 echo to the instance's
 * SID every report period; "sent" of them so far, "lost" the ones not
 * answered within the period (L <= S), "rtt_us" the last answer's round
 * trip and "srtt_us" the smoothed one (RFC 6298's 1/8 gain), both absent
 * until an answer has come. Absent when the SR cannot probe (no raw
 * ICMPv6 socket) or sr.probe is false.
 *
 * Strict like every type: unknown keys refused, each value range-checked,
 * a link or an instance named twice refused, at most NODE_MAX_LINKS
 * links and NODE_MAX_INSTANCES instances, NODE_MAX_LEN bytes.
 */
#ifndef DMSC_MSG_NODE_H
#define DMSC_MSG_NODE_H

#include <stdbool.h>
#include <stdint.h>

#include "msg.h"
#include "msg_reg.h"

enum { MSG_NODE_STATE = 4 };

#define NODE_MAX_LINKS		256
#define NODE_MAX_INSTANCES	1024	/* SR_LOCAL_MAX */
#define NODE_MAX_LEN		(256u << 10)
#define NODE_MAX_CPUS		65536
#define NODE_MAX_LOADAVG	1e6
#define NODE_MAX_SPEED_MBPS	UINT32_MAX

struct node_link {
	char dev[16];			/* IF_NAMESIZE */
	char oper[16];			/* "up", "down", "unknown", ... */
	uint32_t mtu;
	bool has_speed;
	uint64_t speed_mbps;
};

struct node_inst {
	char id[MSG_ID_MAX];
	char state[16];			/* "pending", "active", "faulted" */
	bool has_rtt;
	uint64_t registration_rtt_ms;
	bool has_probe;
	uint64_t probe_sent, probe_lost;
	bool has_probe_rtt;
	uint64_t probe_rtt_us, probe_srtt_us;
};

/* a probe answered later than an hour is lost: an upper bound for rtt_us */
#define NODE_MAX_PROBE_RTT_US	3600000000ULL

struct node_state {
	uint64_t time_ms;
	double loadavg[3];
	uint64_t cpus, mem_total_kb, mem_available_kb;
	struct node_link *links;	/* malloc()ed */
	size_t nlinks;
	struct node_inst *insts;	/* malloc()ed */
	size_t ninsts;
};

extern const struct msg_type msg_node_type;

/*
 * The load and links of this host (the network namespace of the caller)
 * into @s, its instances left as they are. 0, or -1 with the file at
 * fault in @err (a link whose attributes cannot be read is skipped).
 */
int node_state_read_host(struct node_state *s, char *err, size_t errlen);
void node_state_free(struct node_state *s);

#endif /* DMSC_MSG_NODE_H */
