// SPDX-License-Identifier: GPL-2.0
/*
 * Writes every RSVP-CBFC message the speaker sends (PATH, RESV with each
 * Credit form, PathTear, PathErr), over IPv4 and over IPv6, into a pcap
 * of raw IP packets for tests/rsvp_tshark.sh; with -s DIR also each bare
 * message into DIR (the fuzzer's seeds). -b gives the Credit object of
 * every RESV a wrong length (4 more), so the tshark check can be seen to
 * fail.
 *   rsvp_pcap [-b] [-s DIR] OUT.pcap
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rsvp.h"

static void addr(struct rsvp_addr *a, const char *s)
{
	memset(a, 0, sizeof(*a));
	a->family = strchr(s, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(a->family, s, a->a) != 1)
		abort();
}

static void put32le(FILE *f, uint32_t v)
{
	fwrite(&v, 4, 1, f);	/* pcap in host order: x86 */
}

static uint16_t ip_sum(const uint8_t *b, size_t n)
{
	return rsvp_checksum(b, n);
}

/* One raw IP packet around @msg from @src to @dst. */
static void packet(FILE *f, const struct rsvp_addr *src,
		   const struct rsvp_addr *dst, const uint8_t *msg, int len)
{
	uint8_t p[40 + RSVP_MSG_MAX];
	int hl = src->family == AF_INET ? 20 : 40;
	uint16_t s;

	memset(p, 0, hl);
	if (hl == 20) {
		p[0] = 0x45;
		p[2] = (20 + len) >> 8;
		p[3] = (20 + len) & 0xff;
		p[8] = 64;
		p[9] = 46;
		memcpy(p + 12, src->a, 4);
		memcpy(p + 16, dst->a, 4);
		s = ip_sum(p, 20);
		p[10] = s >> 8;
		p[11] = s & 0xff;
	} else {
		p[0] = 0x60;
		p[4] = len >> 8;
		p[5] = len & 0xff;
		p[6] = 46;
		p[7] = 64;
		memcpy(p + 8, src->a, 16);
		memcpy(p + 24, dst->a, 16);
	}
	memcpy(p + hl, msg, len);
	put32le(f, 1764000000);
	put32le(f, 0);
	put32le(f, hl + len);
	put32le(f, hl + len);
	fwrite(p, hl + len, 1, f);
}

int main(int argc, char **argv)
{
	static const struct {
		uint8_t type, ctype;
		const char *name;
	} kinds[] = {
		{ RSVP_MSG_CBFC_PATH, 0, "path" },
		{ RSVP_MSG_CBFC_RESV, RSVP_CTYPE_CREDIT_MB, "resv-mb" },
		{ RSVP_MSG_CBFC_RESV, RSVP_CTYPE_CREDIT_CUMULATIVE, "resv-cum" },
		{ RSVP_MSG_PATHTEAR, 0, "pathtear" },
		{ RSVP_MSG_PATHERR, 0, "patherr" },
	};
	const char *seeds = NULL;
	bool bad = false;
	unsigned int k;
	FILE *f;
	int opt;

	while ((opt = getopt(argc, argv, "bs:")) != -1) {
		if (opt == 'b')
			bad = true;
		else if (opt == 's')
			seeds = optarg;
		else
			return 2;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: rsvp_pcap [-b] [-s DIR] OUT.pcap\n");
		return 2;
	}
	f = fopen(argv[optind], "wb");
	if (!f) {
		perror(argv[optind]);
		return 1;
	}
	put32le(f, 0xa1b2c3d4);
	put32le(f, 0x00040002);	/* version 2.4 */
	put32le(f, 0);
	put32le(f, 0);
	put32le(f, 65535);
	put32le(f, 101);	/* LINKTYPE_RAW */
	for (int v6 = 0; v6 < 2; v6++) {
		for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			struct rsvp_addr me, next;
			struct rsvp_msg m;
			uint8_t b[RSVP_MSG_MAX];
			char why[256];
			int len;

			memset(&m, 0, sizeof(m));
			m.type = kinds[k].type;
			m.send_ttl = 64;
			addr(&m.dst, v6 ? "2001:db8:2::1" : "10.2.0.1");
			addr(&m.src, v6 ? "2001:db8:1::1" : "10.1.0.1");
			m.sport = 49152;
			m.qpn = 256;
			addr(&me, v6 ? "fc00:1::1" : "192.0.2.1");
			addr(&next, v6 ? "fc00:2::1" : "192.0.2.2");
			m.hop = me;
			m.refresh_ms = 30000;
			m.objs = RSVP_O_ERO;
			m.nhops = 1;
			addr(&m.hops[0], v6 ? "fc00:9::d4" : "192.0.2.4");
			m.credit_ctype = kinds[k].ctype;
			m.credit_mb = 2;
			m.initial = 65536;
			m.freed = 123456789;
			m.err_node = next;
			m.err_code = RSVP_ERR_SYSTEM;
			len = rsvp_build(&m, b, sizeof(b), why, sizeof(why));
			if (len < 0) {
				fprintf(stderr, "rsvp_pcap: %s: %s\n",
					kinds[k].name, why);
				return 1;
			}
			if (bad && m.type == RSVP_MSG_CBFC_RESV) {
				/* The Credit object claims 4 more bytes. */
				for (int o = RSVP_HDR_LEN; o < len;
				     o += b[o] << 8 | b[o + 1]) {
					if (b[o + 2] == RSVP_CLASS_CBFC_CREDIT) {
						b[o + 1] += 4;
						break;
					}
				}
			}
			packet(f, &me, &next, b, len);
			if (seeds) {
				char path[4096];
				FILE *s;

				snprintf(path, sizeof(path), "%s/%s-ipv%d.bin",
					 seeds, kinds[k].name, v6 ? 6 : 4);
				s = fopen(path, "wb");
				if (!s || fwrite(b, len, 1, s) != 1 || fclose(s)) {
					perror(path);
					return 1;
				}
			}
		}
	}
	return fclose(f) ? 1 : 0;
}
