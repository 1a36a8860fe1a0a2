// SPDX-License-Identifier: GPL-2.0
/* RoCEv2 ICRC: masked pseudo-headers and the CRC-32 over them. */
#include <string.h>
#include <sys/socket.h>

#include "bth.h"
#include "icrc.h"

/* Slicing-by-4 tables, built once: the sink checks every packet it gets. */
static uint32_t crc_table[4][256];
static int crc_table_ready;

static void crc_table_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 4; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^
				crc_table[0][crc_table[t - 1][i] & 0xff];
	crc_table_ready = 1;
}

uint32_t crc32_update(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	if (!crc_table_ready)
		crc_table_init();
	while (len >= 4) {
		crc ^= (uint32_t)p[0] | (uint32_t)p[1] << 8 |
		       (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
		crc = crc_table[3][crc & 0xff] ^
		      crc_table[2][(crc >> 8) & 0xff] ^
		      crc_table[1][(crc >> 16) & 0xff] ^
		      crc_table[0][crc >> 24];
		p += 4;
		len -= 4;
	}
	while (len--)
		crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
	return crc;
}

uint32_t icrc_compute(const uint8_t *ip, size_t ip_len, const uint8_t udp[8],
		      const uint8_t *bth, size_t len)
{
	static const uint8_t masked_lrh[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
	};
	uint8_t hdr[60 + 8 + BTH_LEN];
	size_t n = 0;
	uint32_t crc = 0xffffffffu;

	if (ip_len > 60 || len < BTH_LEN)
		return 0;
	memcpy(hdr, ip, ip_len);
	if ((ip[0] >> 4) == 4) {
		hdr[1] = 0xff;			/* TOS: DSCP and ECN */
		hdr[8] = 0xff;			/* TTL */
		hdr[10] = hdr[11] = 0xff;	/* header checksum */
	} else {
		hdr[0] |= 0x0f;			/* traffic class, high nibble */
		hdr[1] = hdr[2] = hdr[3] = 0xff; /* rest of TC, flow label */
		hdr[7] = 0xff;			/* hop limit */
	}
	n = ip_len;
	memcpy(hdr + n, udp, 8);
	hdr[n + 6] = hdr[n + 7] = 0xff;		/* UDP checksum */
	n += 8;
	memcpy(hdr + n, bth, BTH_LEN);
	hdr[n + 4] = 0xff;			/* BTH resv8a (FECN, BECN) */
	n += BTH_LEN;

	crc = crc32_update(crc, masked_lrh, sizeof(masked_lrh));
	crc = crc32_update(crc, hdr, n);
	crc = crc32_update(crc, bth + BTH_LEN, len - BTH_LEN);
	return ~crc;
}

static void put16(uint8_t *p, size_t v)
{
	p[0] = (v >> 8) & 0xff;
	p[1] = v & 0xff;
}

size_t icrc_headers(const struct roce_addr *a, size_t udp_len,
		    uint8_t ip[40], uint8_t udp[8])
{
	size_t ip_len;

	memset(ip, 0, 40);
	if (a->family == AF_INET) {
		ip_len = 20;
		ip[0] = 0x45;
		put16(ip + 2, ip_len + 8 + udp_len);
		/* ip[4..5]: identification 0, what Linux uses with DF */
		ip[6] = 0x40;			/* DF */
		ip[9] = IPPROTO_UDP;
		memcpy(ip + 12, &a->src, 4);
		memcpy(ip + 16, &a->dst, 4);
	} else {
		ip_len = 40;
		ip[0] = 0x60;
		put16(ip + 4, 8 + udp_len);
		ip[6] = IPPROTO_UDP;
		memcpy(ip + 8, &a->src, 16);
		memcpy(ip + 24, &a->dst, 16);
	}
	put16(udp, a->sport);
	put16(udp + 2, a->dport);
	put16(udp + 4, 8 + udp_len);
	return ip_len;
}

uint32_t icrc_for_addr(const struct roce_addr *a, const uint8_t *bth,
		       size_t len)
{
	uint8_t ip[40], udp[8];
	size_t ip_len = icrc_headers(a, len + ICRC_LEN, ip, udp);

	return icrc_compute(ip, ip_len, udp, bth, len);
}
