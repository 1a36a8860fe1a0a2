// SPDX-License-Identifier: GPL-2.0
/* Address and number parsing shared by both modes. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "addr.h"

int addr_parse(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_DGRAM,
		/* Numbers only: a test tool must not resolve names. */
		.ai_flags = AI_NUMERICHOST,
	};
	struct addrinfo *res;

	if (getaddrinfo(s, NULL, &hints, &res))
		return -1;
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

void addr_set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

uint16_t addr_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
}

void addr_bytes(const struct sockaddr_storage *ss, struct in6_addr *out)
{
	memset(out, 0, sizeof(*out));
	if (ss->ss_family == AF_INET)
		memcpy(out, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	else
		*out = ((const struct sockaddr_in6 *)ss)->sin6_addr;
}

const char *addr_str(const struct sockaddr_storage *ss, char buf[ADDR_STRLEN])
{
	const struct in6_addr *a6;

	if (ss->ss_family == AF_INET)
		return inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr,
				 buf, ADDR_STRLEN);
	a6 = &((const struct sockaddr_in6 *)ss)->sin6_addr;
	if (IN6_IS_ADDR_V4MAPPED(a6))
		return inet_ntop(AF_INET, &a6->s6_addr[12], buf, ADDR_STRLEN);
	return inet_ntop(AF_INET6, a6, buf, ADDR_STRLEN);
}

bool parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

bool parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || isnan(v) || v < min || v > max)
		return false;
	*out = v;
	return true;
}
