/* SPDX-License-Identifier: GPL-2.0 */
/* Numeric IPv4/IPv6 address parsing and printing for the command line. */
#ifndef ROCE_GEN_ADDR_H
#define ROCE_GEN_ADDR_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#define ADDR_STRLEN (INET6_ADDRSTRLEN + 16)

/* Parse a numeric address ("10.0.0.1", "fd00::1", "fe80::1%veth0"). */
int addr_parse(const char *s, struct sockaddr_storage *ss, socklen_t *len);
void addr_set_port(struct sockaddr_storage *ss, uint16_t port);
uint16_t addr_port(const struct sockaddr_storage *ss);
/* The address bytes (4 or 16) of @ss into @out, IPv4 in the first 4. */
void addr_bytes(const struct sockaddr_storage *ss, struct in6_addr *out);
/* "10.0.0.1" / "fd00::1"; IPv4-mapped IPv6 is printed as IPv4. */
const char *addr_str(const struct sockaddr_storage *ss, char buf[ADDR_STRLEN]);
/* Parse an unsigned number in [min, max]; false if not one. */
bool parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
bool parse_double(const char *s, double min, double max, double *out);

#endif
