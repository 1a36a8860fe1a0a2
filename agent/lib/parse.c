// SPDX-License-Identifier: GPL-2.0
/* Command-line value parsers shared by dmsc and dmsc-agent. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/dmsc.h>

#include "err.h"
#include "parse.h"

bool matches(const char *arg, const char *word)
{
	size_t len = strlen(arg);

	return len && len <= strlen(word) && !strncmp(arg, word, len);
}

int parse_u32(const char *field, const char *s, uint32_t min, uint32_t max,
	      uint32_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (!*s || *s == '-' || *s == '+')
		goto bad;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		goto bad;
	if (v < min || v > max) {
		errorf("%s \"%s\": out of range %u..%u", field, s, min, max);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
bad:
	errorf("%s \"%s\": not a number", field, s);
	return -1;
}

int parse_in6(const char *field, const char *s, struct in6_addr *out)
{
	if (inet_pton(AF_INET6, s, out) != 1) {
		errorf("%s \"%s\": not an IPv6 address", field, s);
		return -1;
	}
	return 0;
}

/* What can never be a SID or an outer address: the kernel checks too. */
static const char *bad_sid(const struct in6_addr *a)
{
	if (IN6_IS_ADDR_UNSPECIFIED(a))
		return "the unspecified address";
	if (IN6_IS_ADDR_MULTICAST(a))
		return "a multicast address";
	if (IN6_IS_ADDR_LOOPBACK(a))
		return "the loopback address";
	if (IN6_IS_ADDR_V4MAPPED(a))
		return "an IPv4-mapped address";
	return NULL;
}

int parse_sid_list(const char *field, const char *s, struct in6_addr *segs,
		   int max, int *n)
{
	char *copy = strdup(s), *tok, *save = NULL;
	const char *why;
	int count = 0, ret = -1;

	if (!copy) {
		errorf("%s: out of memory", field);
		return -1;
	}
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (count == max) {
			errorf("%s \"%s\": too many segments (at most %d)",
			       field, s, max);
			goto out;
		}
		if (parse_in6(field, tok, &segs[count]))
			goto out;
		why = bad_sid(&segs[count]);
		if (why) {
			errorf("%s \"%s\": %s, not a SID", field, tok, why);
			goto out;
		}
		count++;
	}
	if (!count) {
		errorf("%s \"%s\": empty segment list", field, s);
		goto out;
	}
	*n = count;
	ret = 0;
out:
	free(copy);
	return ret;
}

int parse_prefix(const char *field, const char *s, struct dmsc_prefix *p)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash;
	int bits, i;
	uint32_t len;

	if (strlen(s) >= sizeof(buf))
		goto bad;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash)
		*slash++ = '\0';
	memset(p, 0, sizeof(*p));
	if (inet_pton(AF_INET, buf, p->addr) == 1)
		p->family = AF_INET;
	else if (inet_pton(AF_INET6, buf, p->addr) == 1)
		p->family = AF_INET6;
	else
		goto bad;
	bits = p->family == AF_INET ? 32 : 128;
	len = bits;
	if (slash) {
		unsigned long l;
		char *end;

		errno = 0;
		l = strtoul(slash, &end, 10);
		len = l;
		if (!*slash || *slash == '-' || *slash == '+' || *end ||
		    errno || l > (unsigned long)bits) {
			errorf("%s \"%s\": prefix length not in 0..%d", field,
			       s, bits);
			return -1;
		}
	}
	p->len = len;
	/* Host bits past the prefix length mean a typo, as in iproute2. */
	for (i = len; i < bits; i++) {
		if (p->addr[i / 8] & (0x80 >> (i % 8))) {
			errorf("%s \"%s\": host bits set past /%u", field, s,
			       len);
			return -1;
		}
	}
	return 0;
bad:
	errorf("%s \"%s\": not an IPv4 or IPv6 prefix", field, s);
	return -1;
}

int parse_qpn_range(const char *field, const char *s, uint32_t *lo,
		    uint32_t *hi)
{
	char buf[32], *dash;

	if (strlen(s) >= sizeof(buf)) {
		errorf("%s \"%s\": not a QP or QP range", field, s);
		return -1;
	}
	strcpy(buf, s);
	dash = strchr(buf, '-');
	if (dash)
		*dash++ = '\0';
	if (parse_u32(field, buf, 0, DMSC_QPN_MAX, lo))
		return -1;
	*hi = *lo;
	if (dash && parse_u32(field, dash, 0, DMSC_QPN_MAX, hi))
		return -1;
	if (*lo > *hi) {
		errorf("%s \"%s\": %u is above %u", field, s, *lo, *hi);
		return -1;
	}
	return 0;
}

const char *format_addr(int family, const void *addr, char *buf, size_t len)
{
	if (!inet_ntop(family, addr, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

/* An IPv6 address needs brackets, or its last group reads as the port. */
const char *format_addr_port(int family, const void *addr, unsigned int port,
			     char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	format_addr(family, addr, a, sizeof(a));
	snprintf(buf, len, family == AF_INET6 ? "[%s]:%u" : "%s:%u", a, port);
	return buf;
}
