/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A RoCEv2 UDP payload: BTH, extension headers, payload, pad, ICRC.
 * The sender keeps one per QP and only rewrites the PSN and ICRC per packet.
 */
#ifndef ROCE_GEN_PACKET_H
#define ROCE_GEN_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bth.h"
#include "icrc.h"

#define PKT_MAX_PAYLOAD 9000

struct pkt {
	struct roce_addr addr;
	struct bth bth;
	size_t len;		/* UDP payload length, ICRC included */
	uint8_t *buf;
};

/* Build the template; -1 with errno on a bad opcode or size. */
int pkt_init(struct pkt *p, const struct roce_addr *a, uint8_t opcode,
	     uint32_t dqpn, uint16_t pkey, size_t payload);
void pkt_free(struct pkt *p);
/* Put @psn in the BTH and a correct ICRC, or a wrong one if @bad_icrc. */
void pkt_set_psn(struct pkt *p, uint32_t psn, bool ackreq, bool bad_icrc);

enum pkt_status {
	PKT_OK,
	PKT_MALFORMED,	/* too short for its opcode, wrong TVer, bad pad */
	PKT_BAD_ICRC,
};

struct pkt_info {
	struct bth bth;
	size_t payload;	/* bytes after BTH and extension headers, pad excluded */
};

/* Check a received UDP payload that came over @a. */
enum pkt_status pkt_parse(const uint8_t *buf, size_t len,
			  const struct roce_addr *a, struct pkt_info *out);

#endif
