// SPDX-License-Identifier: GPL-2.0
/* Building and checking RoCEv2 UDP payloads. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "packet.h"

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = (v >> 16) & 0xff;
	p[2] = (v >> 8) & 0xff;
	p[3] = v & 0xff;
}

/* Plausible extension headers so dissectors see well-formed packets. */
static void fill_ext(uint8_t *ext, uint8_t opcode, uint32_t dqpn, size_t payload)
{
	switch (opcode) {
	case OP_RC_WRITE_ONLY:		/* RETH: VA, R_Key, DMA length */
		put32(ext, 0);
		put32(ext + 4, 0x10000000u);
		put32(ext + 8, 0x00001234u);
		put32(ext + 12, (uint32_t)payload);
		break;
	case OP_UD_SEND_ONLY:		/* DETH: Q_Key, reserved, source QP */
		put32(ext, 0x00012345u);
		put32(ext + 4, dqpn & QPN_MASK);
		break;
	case OP_RC_SEND_ONLY_IMM:	/* ImmDt */
		put32(ext, dqpn);
		break;
	}
}

int pkt_init(struct pkt *p, const struct roce_addr *a, uint8_t opcode,
	     uint32_t dqpn, uint16_t pkey, size_t payload)
{
	int ext = bth_ext_len(opcode);
	size_t pad = (4 - payload % 4) % 4;

	memset(p, 0, sizeof(*p));
	if (ext < 0 || payload > PKT_MAX_PAYLOAD || dqpn > QPN_MASK) {
		errno = EINVAL;
		return -1;
	}
	p->addr = *a;
	p->len = BTH_LEN + (size_t)ext + payload + pad + ICRC_LEN;
	p->buf = calloc(1, p->len);
	if (!p->buf)
		return -1;
	p->bth = (struct bth) {
		.opcode = opcode,
		.pad = (uint8_t)pad,
		.pkey = pkey,
		.dqpn = dqpn,
	};
	fill_ext(p->buf + BTH_LEN, opcode, dqpn, payload);
	/* A pattern a capture shows as data, different per QP. */
	for (size_t i = 0; i < payload; i++)
		p->buf[BTH_LEN + ext + i] = (uint8_t)(i + dqpn);
	pkt_set_psn(p, 0, false, false);
	return 0;
}

void pkt_free(struct pkt *p)
{
	free(p->buf);
	p->buf = NULL;
}

void pkt_set_psn(struct pkt *p, uint32_t psn, bool ackreq, bool bad_icrc)
{
	size_t n = p->len - ICRC_LEN;
	uint32_t icrc;

	p->bth.psn = psn & PSN_MASK;
	p->bth.ackreq = ackreq;
	bth_encode(&p->bth, p->buf);
	icrc = icrc_for_addr(&p->addr, p->buf, n);
	icrc_put(p->buf + n, bad_icrc ? ~icrc : icrc);
}

enum pkt_status pkt_parse(const uint8_t *buf, size_t len,
			  const struct roce_addr *a, struct pkt_info *out)
{
	size_t hdrs;
	int ext;

	if (len < BTH_LEN + ICRC_LEN)
		return PKT_MALFORMED;
	bth_decode(buf, &out->bth);
	if (out->bth.tver != 0)
		return PKT_MALFORMED;
	/* Unknown opcodes still count; only their payload size is a guess. */
	ext = bth_ext_len(out->bth.opcode);
	hdrs = BTH_LEN + (ext > 0 ? (size_t)ext : 0) + out->bth.pad + ICRC_LEN;
	if (len < hdrs)
		return PKT_MALFORMED;
	out->payload = len - hdrs;
	if (icrc_get(buf + len - ICRC_LEN) !=
	    icrc_for_addr(a, buf, len - ICRC_LEN))
		return PKT_BAD_ICRC;
	return PKT_OK;
}
