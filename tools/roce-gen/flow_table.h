/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sink's flows: one per (source address, UDP source port, dest QP),
 * the same tuple a RoCEv2 receiver and ECMP see as one connection.
 */
#ifndef ROCE_GEN_FLOW_TABLE_H
#define ROCE_GEN_FLOW_TABLE_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "psn_window.h"

struct flow_key {
	int family;
	struct in6_addr src;	/* IPv4 in the first 4 bytes */
	uint16_t sport;
	uint32_t dqpn;
};

struct flow {
	struct flow *next;	/* hash chain */
	struct flow_key key;
	struct in6_addr dst;	/* last destination seen */
	struct psn_window win;
	uint8_t opcode;		/* last opcode seen */
	uint64_t packets, bytes, payload_bytes, icrc_errors;
	uint32_t first_psn, last_psn;	/* first and latest arrivals */
	uint64_t first_ns, last_ns;	/* arrival times, CLOCK_REALTIME */
};

struct flow_table {
	struct flow **buckets;
	size_t nbuckets, count;
	bool first_known;	/* PSNs start at first_psn */
	uint32_t first_psn;
};

int flow_table_init(struct flow_table *t, bool first_known, uint32_t first_psn);
void flow_table_free(struct flow_table *t);
/* Find the flow of @k, creating it; NULL only on ENOMEM. */
struct flow *flow_get(struct flow_table *t, const struct flow_key *k);
/* All flows sorted by dest QP, source port, source; caller frees the array. */
struct flow **flow_table_sorted(const struct flow_table *t);

#endif
