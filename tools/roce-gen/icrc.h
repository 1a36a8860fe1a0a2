/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RoCEv2 invariant CRC (IBA vol. 1, annex A17.3.3): CRC-32 (the Ethernet
 * polynomial) over 8 bytes of 1s standing for the masked LRH, the IP header
 * with its variant fields masked to 1s, the UDP header with its checksum
 * masked, the BTH with resv8a masked, and everything after it up to the
 * ICRC. On the wire the ICRC is the CRC value in little-endian byte order,
 * like the Ethernet FCS.
 */
#ifndef ROCE_GEN_ICRC_H
#define ROCE_GEN_ICRC_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

/* CRC-32 (reflected 0xEDB88320) register update, no pre/post inversion. */
uint32_t crc32_update(uint32_t crc, const void *buf, size_t len);

/*
 * ICRC of a packet given its IP header as on the wire (@ip, 20+ bytes of
 * IPv4 or 40 of IPv6 with no extension headers), its UDP header and @len
 * bytes of UDP payload from the BTH up to, not including, the ICRC.
 */
uint32_t icrc_compute(const uint8_t *ip, size_t ip_len, const uint8_t udp[8],
		      const uint8_t *bth, size_t len);

/* One direction of a RoCEv2 flow: what the IP and UDP headers carry. */
struct roce_addr {
	int family;			/* AF_INET or AF_INET6 */
	struct in6_addr src, dst;	/* IPv4 as the first 4 bytes */
	uint16_t sport, dport;
};

/*
 * The IP and UDP headers Linux puts in front of @udp_len bytes sent on a
 * UDP socket with IP_PMTUDISC_DO and no connect(): IPv4 with DF set and
 * identification 0, IPv6 without extension headers. Fields the ICRC masks
 * are left 0. Returns the IP header length.
 */
size_t icrc_headers(const struct roce_addr *a, size_t udp_len,
		    uint8_t ip[40], uint8_t udp[8]);

/* icrc_compute() for the headers icrc_headers() describes. */
uint32_t icrc_for_addr(const struct roce_addr *a, const uint8_t *bth,
		       size_t len);

static inline void icrc_put(uint8_t *p, uint32_t icrc)
{
	p[0] = icrc & 0xff;
	p[1] = (icrc >> 8) & 0xff;
	p[2] = (icrc >> 16) & 0xff;
	p[3] = icrc >> 24;
}

static inline uint32_t icrc_get(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

#endif
