// SPDX-License-Identifier: GPL-2.0
/* Unit tests of the CLI value parsers: accepted forms and refused ones. */
#include <arpa/inet.h>
#include <string.h>

#include <linux/dmsc.h>

#include "parse.h"
#include "tests/ktap.h"

int main(void)
{
	struct in6_addr segs[DMSC_MAX_SEGS], a;
	struct dmsc_prefix p;
	char buf[512];
	uint32_t v, lo, hi;
	int n, i;

	ktap_plan(27);
	ktap_check(!parse_u32("weight", "3", 1, 65535, &v) && v == 3,
		   "u32 plain");
	ktap_check(!parse_u32("id", "0x10", 1, 100, &v) && v == 16, "u32 hex");
	ktap_check(parse_u32("weight", "0", 1, 65535, &v), "u32 below range");
	ktap_check(parse_u32("weight", "65536", 1, 65535, &v),
		   "u32 above range");
	ktap_check(parse_u32("weight", "-1", 0, 65535, &v), "u32 negative");
	ktap_check(parse_u32("weight", "3x", 0, 65535, &v), "u32 trailing junk");
	ktap_check(parse_u32("weight", "", 0, 65535, &v), "u32 empty");
	ktap_check(parse_u32("id", "99999999999", 0, UINT32_MAX, &v),
		   "u32 overflow");

	ktap_check(!parse_sid_list("path", "fc00::1,fc00::2", segs, 16, &n) &&
		   n == 2 && inet_pton(AF_INET6, "fc00::2", &a) == 1 &&
		   !memcmp(&a, &segs[1], 16), "sid list of two, in order");
	strcpy(buf, "fc00::1");
	for (i = 2; i <= 17; i++)
		sprintf(buf + strlen(buf), ",fc00::%x", i);
	ktap_check(parse_sid_list("path", buf, segs, 16, &n),
		   "sid list of 17 refused");
	ktap_check(parse_sid_list("path", "ff02::1", segs, 16, &n),
		   "multicast sid refused");
	ktap_check(parse_sid_list("path", "::", segs, 16, &n),
		   "unspecified sid refused");
	ktap_check(parse_sid_list("path", "::1", segs, 16, &n),
		   "loopback sid refused");
	ktap_check(parse_sid_list("path", "::ffff:10.0.0.1", segs, 16, &n),
		   "v4-mapped sid refused");
	ktap_check(parse_sid_list("path", "fc00::1,,", segs, 16, &n) == 0 &&
		   n == 1, "empty items skipped");
	ktap_check(parse_sid_list("path", ",", segs, 16, &n),
		   "empty list refused");

	ktap_check(!parse_prefix("dst", "10.1.0.0/16", &p) &&
		   p.family == AF_INET && p.len == 16, "ipv4 prefix");
	ktap_check(!parse_prefix("dst", "2001:db8::/32", &p) &&
		   p.family == AF_INET6 && p.len == 32, "ipv6 prefix");
	ktap_check(!parse_prefix("dst", "10.1.2.3", &p) && p.len == 32,
		   "host address is /32");
	ktap_check(parse_prefix("dst", "10.1.2.3/16", &p),
		   "host bits refused");
	ktap_check(parse_prefix("dst", "10.1.0.0/33", &p) &&
		   parse_prefix("dst", "10.1.0.0/4294967328", &p) &&
		   parse_prefix("dst", "10.1.0.0/", &p),
		   "ipv4 length above 32, wrapping or empty refused");

	ktap_check(!parse_qpn_range("qpn", "17", &lo, &hi) && lo == 17 &&
		   hi == 17, "single qpn");
	ktap_check(!parse_qpn_range("qpn", "16-31", &lo, &hi) && lo == 16 &&
		   hi == 31, "qpn range");
	ktap_check(parse_qpn_range("qpn", "31-16", &lo, &hi) &&
		   parse_qpn_range("qpn", "0-16777216", &lo, &hi),
		   "reversed or too wide qpn range refused");

	inet_pton(AF_INET6, "2001:db8::1", &a);
	ktap_check(!strcmp(format_addr_port(AF_INET6, &a, 4791, buf,
					    ADDR_PORT_STRLEN),
			   "[2001:db8::1]:4791"), "ipv6 with port in brackets");
	inet_pton(AF_INET6, "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255", &a);
	ktap_check(!strcmp(format_addr_port(AF_INET6, &a, 65535, buf,
					    ADDR_PORT_STRLEN),
			   "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535"),
		   "longest ipv6 with port fits ADDR_PORT_STRLEN");
	inet_pton(AF_INET, "10.0.0.1", &v);
	ktap_check(!strcmp(format_addr_port(AF_INET, &v, 49152, buf,
					    ADDR_PORT_STRLEN),
			   "10.0.0.1:49152"), "ipv4 with port bare");
	return ktap_finish();
}
