// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the codec and the PSN accounting, built with ASan/UBSan.
 *   unit          run all, KTAP on stdout
 *   unit list     print the test names
 *   unit NAME     run one test; exit 0 when it passes
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "bth.h"
#include "icrc.h"
#include "packet.h"
#include "psn_window.h"

static int failed;

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "# %s:%d: %s\n", __FILE__, __LINE__, #cond); \
		failed = 1;						\
	}								\
} while (0)

static size_t unhex(const char *s, uint8_t *out)
{
	size_t n = 0;
	unsigned int b;

	while (*s) {
		if (*s == ' ' || *s == '\n') {
			s++;
			continue;
		}
		sscanf(s, "%2x", &b);
		out[n++] = (uint8_t)b;
		s += 2;
	}
	return n;
}

/* Check the ICRC of a whole captured IP packet (from the IP header on). */
static void check_captured(const char *hex)
{
	uint8_t p[256];
	size_t n = unhex(hex, p);
	size_t ip_len = (p[0] >> 4) == 4 ? (size_t)(p[0] & 0xf) * 4 : 40;
	const uint8_t *udp = p + ip_len, *bth = udp + 8;
	size_t len = n - ip_len - 8 - ICRC_LEN;

	CHECK(icrc_compute(p, ip_len, udp, bth, len) == icrc_get(bth + len));
}

/*
 * A CNP (opcode 0x81, BECN set in resv8a) captured from a Mellanox
 * ConnectX-4 Lx, published in scapy's RoCE tests: a hardware ICRC, 82fd002a
 * on the wire. The IPv4 ID is not 0, so this also checks we take it as is.
 */
static void test_icrc_vector_connectx4(void)
{
	check_captured("45c2 003c 718c 4000 4011 9161 0a00 1101 0a00 1201"
		       "0000 12b7 0028 0000"
		       "8100 ffff 4000 0118 0000 0000"
		       "0000 0000 0000 0000 0000 0000 0000 0000"
		       "82fd 002a");
}

/*
 * A UC SEND ONLY with pad count 2, MigReq, a TOS and a non-zero IPv4 ID
 * (headers from scapy's RoCE tests), its ICRC built by hand from annex A17
 * with Python's zlib.crc32: b8229901 on the wire.
 */
static void test_icrc_vector_ipv4_pad(void)
{
	check_captured("4501 0040 0478 4000 4011 b4d5 c0a8 0007 c0a8 0007"
		       "c000 12b7 002c aca2"
		       "2460 ffff 0000 00d3 00cf 1a10"
		       "4630 818b e289 35d9 0e9a 9550 5401 be88 5e50 0000"
		       "b822 9901");
}

/*
 * IPv6, built by hand from annex A17 with Python's zlib.crc32: traffic
 * class 0x68, flow label 0x12345 and hop limit 63 are masked; ICRC 136f1ee6.
 */
static void test_icrc_vector_ipv6(void)
{
	check_captured("6681 2345 0028 113f"
		       "fd00 0001 0000 0000 0000 0000 0000 0001"
		       "fd00 0001 0000 0000 0000 0000 0000 0002"
		       "c34f 12b7 0028 1234"
		       "0400 ffff 0000 0100 80ab cdef"
		       "0001 0203 0405 0607 0809 0a0b 0c0d 0e0f"
		       "136f 1ee6");
}

/* The masked fields must not change the ICRC; everything else must. */
static void test_icrc_masking(void)
{
	uint8_t p[256];
	size_t n = unhex("6681 2345 0028 113f"
			 "fd00 0001 0000 0000 0000 0000 0000 0001"
			 "fd00 0001 0000 0000 0000 0000 0000 0002"
			 "c34f 12b7 0028 1234"
			 "0400 ffff 0000 0100 80ab cdef"
			 "0001 0203 0405 0607 0809 0a0b 0c0d 0e0f", p);
	size_t len = n - 48;
	uint32_t ref = icrc_compute(p, 40, p + 40, p + 48, len);
	static const size_t masked[] = { 0, 1, 2, 3, 7, 46, 47, 52 };
	static const uint8_t maskbits[] = { 0x0f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const size_t covered[] = { 4, 6, 8, 39, 40, 44, 48, 50, 55, 59, 63 };

	for (size_t i = 0; i < sizeof(masked) / sizeof(masked[0]); i++) {
		p[masked[i]] ^= maskbits[i] & 0x5a;
		CHECK(icrc_compute(p, 40, p + 40, p + 48, len) == ref);
		p[masked[i]] ^= maskbits[i] & 0x5a;
	}
	for (size_t i = 0; i < sizeof(covered) / sizeof(covered[0]); i++) {
		p[covered[i]] ^= 0x01;
		CHECK(icrc_compute(p, 40, p + 40, p + 48, len) != ref);
		p[covered[i]] ^= 0x01;
	}
}

static void test_bth_codec(void)
{
	struct bth b = {
		.opcode = 0x64, .se = 1, .mig = 1, .pad = 3, .tver = 0,
		.pkey = 0xffff, .becn = 1, .dqpn = 0xabcdef, .ackreq = 1,
		.psn = 0xfedcba,
	}, d;
	static const uint8_t want[BTH_LEN] = {
		0x64, 0xf0, 0xff, 0xff, 0x40, 0xab, 0xcd, 0xef, 0x80, 0xfe, 0xdc, 0xba
	};
	uint8_t out[BTH_LEN];

	bth_encode(&b, out);
	CHECK(!memcmp(out, want, BTH_LEN));
	bth_decode(out, &d);
	CHECK(d.opcode == 0x64 && d.se && d.mig && d.pad == 3 && d.tver == 0);
	CHECK(d.pkey == 0xffff && d.becn && !d.fecn && d.dqpn == 0xabcdef);
	CHECK(d.ackreq && d.psn == 0xfedcba);
	CHECK(bth_opcode_parse("rc-send-only") == OP_RC_SEND_ONLY);
	CHECK(bth_opcode_parse("0x64") == OP_UD_SEND_ONLY);
	CHECK(bth_opcode_parse("0x99") == -1);
	CHECK(bth_opcode_parse("bogus") == -1);
	CHECK(psn_diff(0, 0xffffff) == 1 && psn_diff(0xffffff, 0) == -1);
	CHECK(psn_diff(0x7fffff, 0) == 0x7fffff && psn_diff(0x800000, 0) == -0x800000);
}

static void test_packet_roundtrip(void)
{
	struct roce_addr a = { .family = AF_INET, .sport = 50000, .dport = 4791 };
	static const uint8_t ops[] = {
		OP_RC_SEND_ONLY, OP_RC_SEND_ONLY_IMM, OP_RC_WRITE_ONLY, OP_UD_SEND_ONLY
	};
	struct pkt_info pi;
	struct pkt p;

	inet_pton(AF_INET, "10.1.2.3", &a.src);
	inet_pton(AF_INET, "10.1.2.4", &a.dst);
	for (size_t i = 0; i < sizeof(ops); i++) {
		for (size_t size = 0; size < 9; size++) {
			CHECK(!pkt_init(&p, &a, ops[i], 0x123, 0xffff, size));
			CHECK(p.len % 4 == 0);
			pkt_set_psn(&p, 0x1000000 + 7, false, false);	/* wraps to 7 */
			CHECK(pkt_parse(p.buf, p.len, &a, &pi) == PKT_OK);
			CHECK(pi.bth.psn == 7 && pi.bth.dqpn == 0x123 && pi.payload == size);
			CHECK(pi.bth.opcode == ops[i]);
			pkt_set_psn(&p, 8, false, true);
			CHECK(pkt_parse(p.buf, p.len, &a, &pi) == PKT_BAD_ICRC);
			pkt_set_psn(&p, 9, false, false);
			p.buf[p.len - 5] ^= 1;		/* a flipped payload bit */
			CHECK(pkt_parse(p.buf, p.len, &a, &pi) == PKT_BAD_ICRC);
			pkt_free(&p);
		}
	}
	CHECK(pkt_parse((const uint8_t *)"short", 5, &a, &pi) == PKT_MALFORMED);
	CHECK(pkt_init(&p, &a, 0x99, 1, 0xffff, 4) == -1);
}

/* Feed PSNs, then compare every counter. */
struct win_case {
	const char *name;
	bool first_known;
	uint32_t first;
	uint32_t psns[16];
	size_t n;
	uint64_t missing, in_order, ahead, late, dups, too_old;
	uint32_t next;
};

static const struct win_case win_cases[] = {
	{ "in order", false, 0, { 5, 6, 7, 8 }, 4, 0, 4, 0, 0, 0, 0, 9 },
	{ "gap", false, 0, { 1, 2, 5, 6 }, 4, 2, 3, 1, 0, 0, 0, 7 },
	{ "reorder", false, 0, { 1, 3, 2, 4 }, 4, 0, 2, 1, 1, 0, 0, 5 },
	{ "duplicate", false, 0, { 1, 2, 2, 3, 1 }, 5, 0, 3, 0, 0, 2, 0, 4 },
	{ "late then dup", false, 0, { 1, 4, 2, 2, 3, 3 }, 6, 0, 1, 1, 2, 2, 0, 5 },
	{ "wrap", false, 0, { 0xfffffe, 0xffffff, 0, 2, 1, 1 }, 6,
	  0, 3, 1, 1, 1, 0, 3 },
	{ "gap across wrap", false, 0, { 0xfffffd, 1 }, 2, 3, 1, 1, 0, 0, 0, 2 },
	{ "first known, head lost", true, 10, { 13, 14 }, 2, 3, 1, 1, 0, 0, 0, 15 },
	{ "first known, older is stale", true, 10, { 10, 9 }, 2, 0, 1, 0, 0, 0, 1, 11 },
	{ "first arrival late", false, 0, { 5, 6, 3, 4 }, 4, 0, 2, 0, 2, 0, 0, 7 },
	{ "first arrival late, gap", false, 0, { 5, 2 }, 2, 2, 1, 0, 1, 0, 0, 6 },
};

static void run_win_case(const struct win_case *c)
{
	struct psn_window w;

	CHECK(!psn_window_init(&w, c->first_known, c->first));
	for (size_t i = 0; i < c->n; i++)
		psn_window_add(&w, c->psns[i]);
	if (w.missing != c->missing || w.in_order != c->in_order ||
	    w.ahead != c->ahead || w.late != c->late || w.dups != c->dups ||
	    w.too_old != c->too_old || w.next != c->next) {
		fprintf(stderr, "# psn case \"%s\": missing %llu in_order %llu ahead %llu "
			"late %llu dups %llu too_old %llu next %u\n", c->name,
			(unsigned long long)w.missing, (unsigned long long)w.in_order,
			(unsigned long long)w.ahead, (unsigned long long)w.late,
			(unsigned long long)w.dups, (unsigned long long)w.too_old, w.next);
		failed = 1;
	}
	psn_window_free(&w);
}

static void test_psn_window_cases(void)
{
	for (size_t i = 0; i < sizeof(win_cases) / sizeof(win_cases[0]); i++)
		run_win_case(&win_cases[i]);
}

/*
 * The window edge: a packet exactly PSN_WINDOW behind is still judged,
 * one further is too old; a jump of more than a window forgets everything.
 */
static void test_psn_window_edges(void)
{
	struct psn_window w;
	uint32_t base = 0xfff000;	/* run across the 2^24 wrap */

	CHECK(!psn_window_init(&w, true, base));
	for (uint32_t i = 0; i < 3 * PSN_WINDOW; i++)
		if (i != 100 + 2 * PSN_WINDOW && i != 101 + 2 * PSN_WINDOW)
			psn_window_add(&w, base + i);
	CHECK(w.missing == 2 && w.in_order == 3 * PSN_WINDOW - 3 && w.ahead == 1);
	/* next = base + 3W; PSN next - W is the oldest the window holds */
	CHECK(psn_window_add(&w, base + 2 * PSN_WINDOW) == PSN_DUP);
	CHECK(psn_window_add(&w, base + 2 * PSN_WINDOW - 1) == PSN_TOO_OLD);
	CHECK(psn_window_add(&w, base + 2 * PSN_WINDOW + 100) == PSN_LATE);
	CHECK(psn_window_add(&w, base + 2 * PSN_WINDOW + 100) == PSN_DUP);
	CHECK(w.missing == 1);
	/* A jump of two windows: the skipped PSNs are missing, none seen. */
	CHECK(psn_window_add(&w, base + 5 * PSN_WINDOW) == PSN_AHEAD);
	CHECK(w.missing == 1 + 2 * PSN_WINDOW);
	CHECK(psn_window_add(&w, base + 5 * PSN_WINDOW - 1) == PSN_LATE);
	CHECK(psn_window_add(&w, base + 5 * PSN_WINDOW - 1) == PSN_DUP);
	CHECK(w.missing == 2 * PSN_WINDOW);
	psn_window_free(&w);
}

/* Random loss, reorder and duplication against an exact model. */
static void test_psn_window_random(void)
{
	enum { N = 200000 };
	uint32_t *seq = malloc(sizeof(*seq) * 2 * N);
	uint8_t *seen = calloc(N, 1);
	uint64_t lost = 0, late = 0, dups = 0, sent = 0;
	struct psn_window w;
	uint32_t base = 0xffff00, max = 0;
	bool any = false;

	srand(42);
	for (uint32_t i = 0; i < N; i++) {
		int r = rand() % 100;

		if (r < 3)
			continue;			/* lost */
		seq[sent++] = i;
		if (r < 5)
			seq[sent++] = i;		/* duplicated */
	}
	/* Swap neighbours now and then: reordering within a small distance. */
	for (uint64_t i = 0; i + 8 < sent; i++)
		if (rand() % 50 == 0) {
			uint32_t t = seq[i];

			seq[i] = seq[i + 8];
			seq[i + 8] = t;
		}
	CHECK(!psn_window_init(&w, true, base));
	for (uint64_t i = 0; i < sent; i++) {
		uint32_t s = seq[i];

		psn_window_add(&w, base + s);
		if (seen[s])
			dups++;
		else if (any && s < max)
			late++;
		seen[s] = 1;
		if (!any || s > max)
			max = s;
		any = true;
	}
	for (uint32_t i = 0; i <= max; i++)
		lost += !seen[i];
	CHECK(w.missing == lost && w.late == late && w.dups == dups);
	CHECK(w.too_old == 0);
	psn_window_free(&w);
	free(seq);
	free(seen);
}

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
	{ "icrc_vector_connectx4", test_icrc_vector_connectx4 },
	{ "icrc_vector_ipv4_pad", test_icrc_vector_ipv4_pad },
	{ "icrc_vector_ipv6", test_icrc_vector_ipv6 },
	{ "icrc_masking", test_icrc_masking },
	{ "bth_codec", test_bth_codec },
	{ "packet_roundtrip", test_packet_roundtrip },
	{ "psn_window_cases", test_psn_window_cases },
	{ "psn_window_edges", test_psn_window_edges },
	{ "psn_window_random", test_psn_window_random },
};

#define N_TESTS (sizeof(tests) / sizeof(tests[0]))

int main(int argc, char **argv)
{
	int bad = 0;

	if (argc > 1 && !strcmp(argv[1], "list")) {
		for (size_t i = 0; i < N_TESTS; i++)
			printf("%s\n", tests[i].name);
		return 0;
	}
	if (argc > 1) {
		for (size_t i = 0; i < N_TESTS; i++)
			if (!strcmp(argv[1], tests[i].name)) {
				tests[i].fn();
				return failed;
			}
		fprintf(stderr, "unit: no test \"%s\"\n", argv[1]);
		return 2;
	}
	printf("TAP version 13\n1..%zu\n", N_TESTS);
	for (size_t i = 0; i < N_TESTS; i++) {
		failed = 0;
		tests[i].fn();
		printf("%sok %zu %s\n", failed ? "not " : "", i + 1, tests[i].name);
		bad |= failed;
	}
	return bad;
}
