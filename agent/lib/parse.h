/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Parsers for command-line values. Each one names the field and the value
 * it refuses in its error message, after the command the error context
 * holds (err.h): "dmsc: tunnel add: weight \"0\": out of range 1..65535".
 * They return -1 on error, 0 on success.
 */
#ifndef DMSC_PARSE_H
#define DMSC_PARSE_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>

struct dmsc_prefix {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t addr[16];	/* 4 bytes used for AF_INET */
	uint8_t len;
};

/* iproute2's matches(): @arg is a non-empty prefix of @word. */
bool matches(const char *arg, const char *word);

int parse_u32(const char *field, const char *s, uint32_t min, uint32_t max,
	      uint32_t *out);
int parse_in6(const char *field, const char *s, struct in6_addr *out);
/* "SID[,SID...]" into @segs, at most @max of them; usable as SRv6 SIDs. */
int parse_sid_list(const char *field, const char *s, struct in6_addr *segs,
		   int max, int *n);
/* "ADDR[/LEN]", IPv4 or IPv6, with no host bits set past LEN. */
int parse_prefix(const char *field, const char *s, struct dmsc_prefix *p);
/* "N" or "LO-HI", each at most 2^24 - 1. */
int parse_qpn_range(const char *field, const char *s, uint32_t *lo,
		    uint32_t *hi);

/* Text forms of addresses, for output. */
const char *format_addr(int family, const void *addr, char *buf, size_t len);
/* "ADDR:PORT" for IPv4, "[ADDR]:PORT" for IPv6 (RFC 5952 section 6). */
#define ADDR_PORT_STRLEN (INET6_ADDRSTRLEN + 8)
const char *format_addr_port(int family, const void *addr, unsigned int port,
			     char *buf, size_t len);

#endif /* DMSC_PARSE_H */
