/* SPDX-License-Identifier: GPL-2.0 */
/*
 * InfiniBand Base Transport Header (IBA vol. 1, 9.2) as RoCEv2 carries it
 * right after the UDP header, plus the few extension headers our opcodes need.
 */
#ifndef ROCE_GEN_BTH_H
#define ROCE_GEN_BTH_H

#include <stddef.h>
#include <stdint.h>

#define ROCE_UDP_PORT	4791
#define BTH_LEN		12
#define ICRC_LEN	4
#define PSN_MASK	0xffffffu	/* PSNs are 24 bits and wrap */
#define QPN_MASK	0xffffffu
#define BTH_PKEY_DEFAULT 0xffff

/* Opcodes we generate; the value is the BTH opcode byte. */
enum bth_opcode {
	OP_RC_SEND_FIRST	= 0x00,
	OP_RC_SEND_MIDDLE	= 0x01,
	OP_RC_SEND_LAST		= 0x02,
	OP_RC_SEND_ONLY		= 0x04,
	OP_RC_SEND_ONLY_IMM	= 0x05,
	OP_RC_WRITE_ONLY	= 0x0a,
	OP_UC_SEND_ONLY		= 0x24,
	OP_UD_SEND_ONLY		= 0x64,
};

struct bth {
	uint8_t opcode;
	uint8_t se;		/* solicited event */
	uint8_t mig;		/* MigReq */
	uint8_t pad;		/* pad count, 0..3 bytes before the ICRC */
	uint8_t tver;		/* transport header version, 0 */
	uint16_t pkey;
	uint8_t fecn, becn;	/* RoCEv2 leaves these in resv8a; ICRC masks them */
	uint32_t dqpn;		/* 24 bits */
	uint8_t ackreq;
	uint32_t psn;		/* 24 bits */
};

void bth_encode(const struct bth *b, uint8_t out[BTH_LEN]);
void bth_decode(const uint8_t in[BTH_LEN], struct bth *b);

/*
 * Length of the extension headers (RETH, DETH, ImmDt) that follow the BTH
 * for @opcode, or -1 when roce-gen does not know the opcode.
 */
int bth_ext_len(uint8_t opcode);
/* Parse "rc-send-only", "ud-send-only", ... or a number; -1 if unknown. */
int bth_opcode_parse(const char *s);
const char *bth_opcode_name(uint8_t opcode);

/* Signed distance a - b in the 24-bit PSN space, in [-2^23, 2^23). */
static inline int32_t psn_diff(uint32_t a, uint32_t b)
{
	uint32_t d = (a - b) & PSN_MASK;

	return d & 0x800000u ? (int32_t)d - 0x1000000 : (int32_t)d;
}

#endif
