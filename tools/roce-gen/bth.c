// SPDX-License-Identifier: GPL-2.0
/* BTH encode/decode and the table of opcodes roce-gen knows. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bth.h"

void bth_encode(const struct bth *b, uint8_t out[BTH_LEN])
{
	out[0] = b->opcode;
	out[1] = (uint8_t)((b->se ? 0x80 : 0) | (b->mig ? 0x40 : 0) |
			   ((b->pad & 3) << 4) | (b->tver & 0xf));
	out[2] = b->pkey >> 8;
	out[3] = b->pkey & 0xff;
	out[4] = (uint8_t)((b->fecn ? 0x80 : 0) | (b->becn ? 0x40 : 0));
	out[5] = (b->dqpn >> 16) & 0xff;
	out[6] = (b->dqpn >> 8) & 0xff;
	out[7] = b->dqpn & 0xff;
	out[8] = b->ackreq ? 0x80 : 0;
	out[9] = (b->psn >> 16) & 0xff;
	out[10] = (b->psn >> 8) & 0xff;
	out[11] = b->psn & 0xff;
}

void bth_decode(const uint8_t in[BTH_LEN], struct bth *b)
{
	b->opcode = in[0];
	b->se = !!(in[1] & 0x80);
	b->mig = !!(in[1] & 0x40);
	b->pad = (in[1] >> 4) & 3;
	b->tver = in[1] & 0xf;
	b->pkey = (uint16_t)(in[2] << 8 | in[3]);
	b->fecn = !!(in[4] & 0x80);
	b->becn = !!(in[4] & 0x40);
	b->dqpn = (uint32_t)in[5] << 16 | (uint32_t)in[6] << 8 | in[7];
	b->ackreq = !!(in[8] & 0x80);
	b->psn = (uint32_t)in[9] << 16 | (uint32_t)in[10] << 8 | in[11];
}

/* Extension header lengths from IBA vol. 1, table 38 (header layout). */
#define RETH_LEN	16
#define DETH_LEN	8
#define IMMDT_LEN	4

static const struct {
	uint8_t op;
	int ext;
	const char *name;
} opcodes[] = {
	{ OP_RC_SEND_FIRST,	0,		"rc-send-first" },
	{ OP_RC_SEND_MIDDLE,	0,		"rc-send-middle" },
	{ OP_RC_SEND_LAST,	0,		"rc-send-last" },
	{ OP_RC_SEND_ONLY,	0,		"rc-send-only" },
	{ OP_RC_SEND_ONLY_IMM,	IMMDT_LEN,	"rc-send-only-imm" },
	{ OP_RC_WRITE_ONLY,	RETH_LEN,	"rc-write-only" },
	{ OP_UC_SEND_ONLY,	0,		"uc-send-only" },
	{ OP_UD_SEND_ONLY,	DETH_LEN,	"ud-send-only" },
};

#define N_OPCODES (sizeof(opcodes) / sizeof(opcodes[0]))

int bth_ext_len(uint8_t opcode)
{
	for (size_t i = 0; i < N_OPCODES; i++)
		if (opcodes[i].op == opcode)
			return opcodes[i].ext;
	return -1;
}

int bth_opcode_parse(const char *s)
{
	char *end;
	unsigned long v;

	for (size_t i = 0; i < N_OPCODES; i++)
		if (!strcasecmp(s, opcodes[i].name))
			return opcodes[i].op;
	v = strtoul(s, &end, 0);
	if (*s && !*end && v <= 0xff && bth_ext_len((uint8_t)v) >= 0)
		return (int)v;
	return -1;
}

const char *bth_opcode_name(uint8_t opcode)
{
	for (size_t i = 0; i < N_OPCODES; i++)
		if (opcodes[i].op == opcode)
			return opcodes[i].name;
	return "unknown";
}
