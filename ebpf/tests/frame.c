// SPDX-License-Identifier: GPL-2.0
/* RoCEv2 test frames (frame.h). */
#include <string.h>

#include "frame.h"

/* The IPv4 packet from its first byte: IPv4, UDP, BTH, payload, ICRC. */
static size_t ipv4_roce(unsigned char *b, unsigned int opcode,
			unsigned int tver, unsigned int qpn, unsigned int psn,
			unsigned int payload)
{
	unsigned int udp_len = 8 + 12 + payload + 4, ip_len = 20 + udp_len;

	memset(b, 0, ip_len);
	b[0] = 0x45;
	b[2] = (unsigned char)(ip_len >> 8);
	b[3] = (unsigned char)ip_len;
	b[6] = 0x40;			/* DF */
	b[8] = 64;
	b[9] = 17;			/* UDP */
	memcpy(b + 12, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
	b[20] = 0xc0;			/* sport 49152 */
	b[22] = 4791 >> 8;
	b[23] = 4791 & 0xff;
	b[24] = (unsigned char)(udp_len >> 8);
	b[25] = (unsigned char)udp_len;
	b[28] = (unsigned char)opcode;
	b[29] = (unsigned char)tver;
	b[30] = b[31] = 0xff;
	b[33] = (unsigned char)(qpn >> 16);
	b[34] = (unsigned char)(qpn >> 8);
	b[35] = (unsigned char)qpn;
	b[37] = (unsigned char)(psn >> 16);
	b[38] = (unsigned char)(psn >> 8);
	b[39] = (unsigned char)psn;
	return ip_len;
}

size_t frame(unsigned char *b, unsigned int opcode, unsigned int tver,
	     unsigned int qpn, unsigned int psn, unsigned int payload)
{
	memset(b, 0, 14);
	b[12] = 0x08;			/* ETH_P_IP */
	return 14 + ipv4_roce(b + 14, opcode, tver, qpn, psn, payload);
}

size_t frame_srv6_sids(unsigned char *b, unsigned int opcode, unsigned int qpn,
		       unsigned int psn, unsigned int payload, unsigned int nsid)
{
	static const unsigned char sid[16] = { 0xfc, [15] = 2 };
	size_t srh = 8 + 16 * (size_t)nsid, in;

	memset(b, 0, 14 + 40 + srh);
	b[12] = 0x86;			/* ETH_P_IPV6 */
	b[13] = 0xdd;
	in = ipv4_roce(b + 14 + 40 + srh, opcode, 0, qpn, psn, payload);
	b[14] = 0x60;
	b[18] = (unsigned char)((srh + in) >> 8);
	b[19] = (unsigned char)(srh + in);
	b[20] = 43;			/* routing header */
	b[21] = 64;
	b[22] = 0xfc;			/* fc00::1 > fc00::2 */
	b[37] = 1;
	memcpy(b + 38, sid, 16);
	b[54] = 4;			/* SRH: next IPv4 */
	b[55] = (unsigned char)(2 * nsid);	/* length in 8 bytes, less 1 */
	b[56] = 4;			/* type 4 */
	b[57] = 0;			/* segments left */
	b[58] = (unsigned char)(nsid - 1);	/* last entry */
	for (unsigned int i = 0; i < nsid; i++)
		memcpy(b + 62 + 16 * i, sid, 16);
	return 14 + 40 + srh + in;
}

size_t frame_srv6(unsigned char *b, unsigned int opcode, unsigned int qpn,
		  unsigned int psn, unsigned int payload)
{
	return frame_srv6_sids(b, opcode, qpn, psn, payload, 1);
}
