// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the RSVP-CBFC codec (lib/rsvp.c): every message we send
 * round-trips; every truncation, wrong object length, flipped byte,
 * unknown class, duplicate, missing object and absurd value is refused
 * with its reason.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/dmsc.h>

#include "rsvp.h"
#include "tests/ktap.h"

/*
 * A cumulative total past 2^56, the cap there once was: a session long
 * enough to free that many bytes (17 days at 400 Gbit/s) must still be
 * parsed, and the total is compared wrap-safely.
 */
#define FREED_BIG 0xfedcba9876543210ULL

static char why[256];

static void addr(struct rsvp_addr *a, const char *s)
{
	memset(a, 0, sizeof(*a));
	a->family = strchr(s, ':') ? AF_INET6 : AF_INET;
	inet_pton(a->family, s, a->a);
}

/* A message of @type; @v6 for the flow and the hops. */
static void sample(struct rsvp_msg *m, uint8_t type, bool v6, uint8_t ctype)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	m->send_ttl = 64;
	addr(&m->dst, v6 ? "2001:db8:2::1" : "10.2.0.1");
	addr(&m->src, v6 ? "2001:db8:1::1" : "10.1.0.1");
	m->sport = 49152;
	m->qpn = 0xabcdef;
	addr(&m->hop, v6 ? "fc00:1::1" : "192.0.2.1");
	m->lih = 7;
	m->refresh_ms = 30000;
	if (type == RSVP_MSG_CBFC_PATH) {
		m->objs |= RSVP_O_ERO;
		m->nhops = 2;
		addr(&m->hops[0], v6 ? "fc00:2::1" : "192.0.2.2");
		addr(&m->hops[1], "fc00:9::d4");
	}
	m->credit_ctype = ctype;
	m->credit_mb = 3;
	m->initial = 65536;
	m->freed = FREED_BIG;
	addr(&m->err_node, v6 ? "fc00:3::1" : "192.0.2.3");
	m->err_code = RSVP_ERR_SYSTEM;
	m->err_value = 1;
}

/* Fix up header length and checksum after an edit, as an attacker can. */
static void reseal(uint8_t *b, size_t len)
{
	b[6] = len >> 8;
	b[7] = len;
	b[2] = b[3] = 0;
	uint16_t ck = rsvp_checksum(b, len);

	b[2] = ck >> 8;
	b[3] = ck;
}

/* Offsets of the objects of a built message. */
static unsigned int objects(const uint8_t *b, int len, size_t *off)
{
	unsigned int n = 0;
	size_t o;

	for (o = RSVP_HDR_LEN; (int)o < len; o += (b[o] << 8 | b[o + 1]))
		off[n++] = o;
	return n;
}

static const struct {
	uint8_t type;
	uint8_t ctype;
	const char *name;
} kinds[] = {
	{ RSVP_MSG_CBFC_PATH, 0, "PATH" },
	{ RSVP_MSG_CBFC_RESV, RSVP_CTYPE_CREDIT_MB, "RESV MB" },
	{ RSVP_MSG_CBFC_RESV, RSVP_CTYPE_CREDIT_CUMULATIVE, "RESV cumulative" },
	{ RSVP_MSG_PATHTEAR, 0, "PathTear" },
	{ RSVP_MSG_PATHERR, 0, "PathErr" },
};

static void test_round_trips(void)
{
	unsigned int k;
	int v6;

	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		for (v6 = 0; v6 < 2; v6++) {
			struct rsvp_msg m, back, again;
			uint8_t b[RSVP_MSG_MAX], b2[RSVP_MSG_MAX];
			char name[96];
			int len, len2;
			bool ok;

			sample(&m, kinds[k].type, v6, kinds[k].ctype);
			len = rsvp_build(&m, b, sizeof(b), why, sizeof(why));
			ok = len > 0 && rsvp_parse(b, len, &back, why,
						   sizeof(why)) == RSVP_OK;
			len2 = ok ? rsvp_build(&back, b2, sizeof(b2), why,
					       sizeof(why)) : -1;
			ok = ok && len2 == len && !memcmp(b, b2, len) &&
			     back.type == m.type && back.qpn == m.qpn &&
			     back.sport == m.sport &&
			     !memcmp(&back.dst, &m.dst, sizeof(m.dst)) &&
			     !memcmp(&back.src, &m.src, sizeof(m.src)) &&
			     back.objs == (rsvp_mandatory(m.type) |
					   (m.objs & rsvp_optional(m.type)));
			if (ok && m.type == RSVP_MSG_CBFC_PATH)
				ok = back.nhops == 2 && back.refresh_ms == 30000 &&
				     !memcmp(back.hops, m.hops, 2 * sizeof(m.hops[0]));
			if (ok && m.type == RSVP_MSG_CBFC_RESV)
				ok = rsvp_credit_bytes(&back) ==
				     (kinds[k].ctype == RSVP_CTYPE_CREDIT_MB ?
				      3ULL << 20 : 65536) &&
				     (kinds[k].ctype == RSVP_CTYPE_CREDIT_MB ||
				      back.freed == FREED_BIG);
			if (ok && m.type == RSVP_MSG_PATHERR)
				ok = back.err_code == RSVP_ERR_SYSTEM &&
				     !memcmp(&back.err_node, &m.err_node,
					     sizeof(m.err_node));
			snprintf(name, sizeof(name), "round trip %s IPv%d (%d bytes)",
				 kinds[k].name, v6 ? 6 : 4, len);
			ktap_check(ok, name);
			(void)rsvp_parse(b, len, &again, why, sizeof(why));
		}
	}
}

/*
 * Every prefix of every message: as it comes (header length disagrees)
 * and resealed (header and checksum say the prefix is the message).
 */
static void test_truncations(void)
{
	unsigned int k, bad_raw = 0, bad_sealed = 0, tried = 0;

	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		for (int v6 = 0; v6 < 2; v6++) {
			struct rsvp_msg m, back;
			uint8_t b[RSVP_MSG_MAX], c[RSVP_MSG_MAX];
			int len, cut;

			sample(&m, kinds[k].type, v6, kinds[k].ctype);
			len = rsvp_build(&m, b, sizeof(b), why, sizeof(why));
			for (cut = 0; cut < len; cut++) {
				enum rsvp_reason r;

				tried++;
				r = rsvp_parse(b, cut, &back, why, sizeof(why));
				if (r != (cut < RSVP_HDR_LEN ? RSVP_E_SHORT :
					  RSVP_E_LENGTH))
					bad_raw++;
				if (cut < RSVP_HDR_LEN)
					continue;
				memcpy(c, b, cut);
				reseal(c, cut);
				r = rsvp_parse(c, cut, &back, why, sizeof(why));
				/* A cut between objects loses one. */
				if (r != RSVP_E_OBJ_LENGTH && r != RSVP_E_MISSING)
					bad_sealed++;
			}
		}
	}
	printf("# %u truncations, %u raw and %u resealed accepted or misnamed\n",
	       tried, bad_raw, bad_sealed);
	ktap_check(tried > 400 && !bad_raw, "every truncation refused as short/length");
	ktap_check(!bad_sealed, "every resealed truncation refused as object_length/missing");
}

/* Each object's length field +-4, +-1, 0, huge, resealed: all refused. */
static void test_wrong_lengths(void)
{
	static const int deltas[] = { -4, 4, -1, 1, 2 };
	unsigned int k, tried = 0, bad = 0;

	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		for (int v6 = 0; v6 < 2; v6++) {
			struct rsvp_msg m, back;
			uint8_t b[RSVP_MSG_MAX], c[RSVP_MSG_MAX];
			size_t off[16];
			unsigned int n, i, d;
			int len;

			sample(&m, kinds[k].type, v6, kinds[k].ctype);
			len = rsvp_build(&m, b, sizeof(b), why, sizeof(why));
			n = objects(b, len, off);
			for (i = 0; i < n; i++) {
				uint16_t ol = b[off[i]] << 8 | b[off[i] + 1];

				for (d = 0; d < 7; d++) {
					uint16_t nl = d < 5 ? ol + deltas[d] :
						      d == 5 ? 0 : 0xfffc;

					memcpy(c, b, len);
					c[off[i]] = nl >> 8;
					c[off[i] + 1] = nl;
					reseal(c, len);
					tried++;
					enum rsvp_reason r = rsvp_parse(c, len,
						&back, why, sizeof(why));

					/* A longer ERO reads the next object
					 * as a subobject: a bad one. */
					if (r != RSVP_E_OBJ_LENGTH &&
					    !(r == RSVP_E_VALUE &&
					      b[off[i] + 2] == RSVP_CLASS_EXPLICIT_ROUTE)) {
						bad++;
						printf("# %s obj %u len %u: %s\n",
						       kinds[k].name, i, nl, why);
					}
				}
			}
		}
	}
	printf("# %u wrong object lengths\n", tried);
	ktap_check(tried > 300 && !bad, "every wrong object length refused as object_length");
}

/* Any one bit flipped without resealing: the checksum catches it. */
static void test_checksum(void)
{
	struct rsvp_msg m, back;
	uint8_t b[RSVP_MSG_MAX];
	unsigned int bad = 0, bit;
	int len;

	sample(&m, RSVP_MSG_CBFC_RESV, true, RSVP_CTYPE_CREDIT_CUMULATIVE);
	len = rsvp_build(&m, b, sizeof(b), why, sizeof(why));
	for (bit = 0; bit < (unsigned int)len * 8; bit++) {
		/* Version and length bits fail earlier, for their reason. */
		enum rsvp_reason r;

		b[bit / 8] ^= 1 << (bit % 8);
		r = rsvp_parse(b, len, &back, why, sizeof(why));
		if (r == RSVP_OK)
			bad++;
		if ((bit / 8 >= 8 || bit / 8 == 1 || bit / 8 == 4 ||
		     bit / 8 == 5) && r != RSVP_E_CHECKSUM)
			bad++;
		b[bit / 8] ^= 1 << (bit % 8);
	}
	ktap_check(!bad && rsvp_parse(b, len, &back, why, sizeof(why)) == RSVP_OK,
		   "every flipped bit refused, as checksum past the version/length");
	b[2] = b[3] = 0;
	ktap_check(rsvp_parse(b, len, &back, why, sizeof(why)) == RSVP_E_CHECKSUM,
		   "checksum 0 (none sent) refused");

	/*
	 * A message whose sum folds to 0 (the LIH chosen to make it so)
	 * goes out with 0xffff, not the 0 that means "none", and is taken.
	 */
	{
		uint32_t lih;

		for (lih = 0; lih < 0x20000; lih++) {
			m.lih = lih;
			len = rsvp_build(&m, b, sizeof(b), why, sizeof(why));
			if (len > 0 && b[2] == 0xff && b[3] == 0xff)
				break;
		}
		printf("# a sum folding to 0 at LIH %u\n", lih);
		ktap_check(lih < 0x20000 &&
			   rsvp_parse(b, len, &back, why, sizeof(why)) == RSVP_OK &&
			   back.lih == lih,
			   "a sum that folds to 0 is sent as 0xffff and parsed");
	}
}

/* Append a raw object to a built message and reseal. */
static int append(uint8_t *b, int len, uint8_t cls, uint8_t ctype,
		  const uint8_t *body, int blen)
{
	b[len] = (blen + 4) >> 8;
	b[len + 1] = blen + 4;
	b[len + 2] = cls;
	b[len + 3] = ctype;
	memcpy(b + len + 4, body, blen);
	len += 4 + blen;
	reseal(b, len);
	return len;
}

static enum rsvp_reason with_object(uint8_t type, uint8_t cls, uint8_t ctype,
				    const uint8_t *body, int blen,
				    struct rsvp_msg *back)
{
	struct rsvp_msg m;
	uint8_t b[RSVP_MSG_MAX];
	int len;

	sample(&m, type, true, RSVP_CTYPE_CREDIT_CUMULATIVE);
	len = rsvp_build(&m, b, sizeof(b), why, sizeof(why));
	len = append(b, len, cls, ctype, body, blen);
	return rsvp_parse(b, len, back, why, sizeof(why));
}

static void test_classes(void)
{
	static const uint8_t four[4] = { 0, 0, 0, 1 };
	/* Our enterprise number (32473 = 0x7ed9), then a word. */
	static const uint8_t ours[8] = { 0, 0, 0x7e, 0xd9, 0, 0, 0, 1 };
	static const uint8_t theirs[8] = { 0, 0, 0x7e, 0xda, 0, 0, 0, 1 };
	uint8_t cum[16] = { 0 };
	struct rsvp_msg back;
	enum rsvp_reason r;

	r = with_object(RSVP_MSG_CBFC_PATH, 126, 1, four, 4, &back);
	ktap_check(r == RSVP_E_UNKNOWN_CLASS && strstr(why, "126"),
		   "unknown Class-Num 0bbbbbbb (126) refuses the message");
	r = with_object(RSVP_MSG_CBFC_PATH, 0x80 | 60, 1, four, 4, &back);
	ktap_check(r == RSVP_OK && back.ignored == 1,
		   "unknown Class-Num 10bbbbbb ignored and counted");
	r = with_object(RSVP_MSG_CBFC_RESV, 0xc0 | 61, 9, four, 4, &back);
	ktap_check(r == RSVP_OK && back.ignored == 1,
		   "unknown Class-Num 11bbbbbb ignored and counted");
	r = with_object(RSVP_MSG_CBFC_PATH, RSVP_CLASS_CBFC_CREDIT, 1, theirs,
			8, &back);
	ktap_check(r == RSVP_E_UNKNOWN_CLASS,
		   "Class-Num 124 of another enterprise refused as unknown class");
	r = with_object(RSVP_MSG_CBFC_RESV, RSVP_CLASS_CBFC_CREDIT, 7, ours, 8,
			&back);
	ktap_check(r == RSVP_E_UNKNOWN_CTYPE, "Credit C-Type 7 refused");
	r = with_object(RSVP_MSG_CBFC_PATH, RSVP_CLASS_CBFC_QP, 1, ours, 8,
			&back);
	ktap_check(r == RSVP_E_DUPLICATE && strstr(why, "second"),
		   "a second QP object refused as duplicate");
	r = with_object(RSVP_MSG_CBFC_PATH, RSVP_CLASS_CBFC_CREDIT,
			RSVP_CTYPE_CREDIT_MB, ours, 8, &back);
	ktap_check(r == RSVP_E_NOT_ALLOWED, "Credit in a PATH refused");
	/* Absurd credit: 2^33 initial bytes; 0 MB; 5000 MB. */
	cum[3] = 2;
	{
		struct rsvp_msg m;
		uint8_t b[RSVP_MSG_MAX];
		size_t off[16];
		unsigned int n, i;
		int len;

		sample(&m, RSVP_MSG_CBFC_RESV, false, RSVP_CTYPE_CREDIT_CUMULATIVE);
		len = rsvp_build(&m, b, sizeof(b), why, sizeof(why));
		n = objects(b, len, off);
		for (i = 0; i < n && b[off[i] + 2] != RSVP_CLASS_CBFC_CREDIT; i++)
			;
		memcpy(b + off[i] + 8, cum, 16);	/* initial 2^33 */
		reseal(b, len);
		r = rsvp_parse(b, len, &back, why, sizeof(why));
		ktap_check(r == RSVP_E_VALUE && strstr(why, "8589934592"),
			   "absurd cumulative credit (2^33 bytes) refused as value");
		sample(&m, RSVP_MSG_CBFC_RESV, false, RSVP_CTYPE_CREDIT_MB);
		len = rsvp_build(&m, b, sizeof(b), why, sizeof(why));
		n = objects(b, len, off);
		for (i = 0; i < n && b[off[i] + 2] != RSVP_CLASS_CBFC_CREDIT; i++)
			;
		memset(b + off[i] + 8, 0, 4);
		reseal(b, len);
		ktap_check(rsvp_parse(b, len, &back, why, sizeof(why)) == RSVP_E_VALUE,
			   "0 MB credit refused as value");
		m.credit_mb = RSVP_CREDIT_MB_MAX + 1;
		ktap_check(rsvp_build(&m, b, sizeof(b), why, sizeof(why)) < 0 &&
			   strstr(why, "4097"), "build refuses 4097 MB");
	}
}

/* Each mandatory object left out: the message is refused naming it. */
static void test_missing(void)
{
	unsigned int k, bad = 0, tried = 0;

	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct rsvp_msg m, back;
		uint8_t b[RSVP_MSG_MAX], c[RSVP_MSG_MAX];
		size_t off[16];
		unsigned int n, i;
		int len;

		sample(&m, kinds[k].type, true, kinds[k].ctype);
		len = rsvp_build(&m, b, sizeof(b), why, sizeof(why));
		n = objects(b, len, off);
		for (i = 0; i < n; i++) {
			int ol = b[off[i]] << 8 | b[off[i] + 1], cl;
			enum rsvp_reason r;

			if (b[off[i] + 2] == RSVP_CLASS_EXPLICIT_ROUTE)
				continue;	/* optional */
			memcpy(c, b, off[i]);
			memcpy(c + off[i], b + off[i] + ol, len - off[i] - ol);
			cl = len - ol;
			reseal(c, cl);
			tried++;
			r = rsvp_parse(c, cl, &back, why, sizeof(why));
			if (r != RSVP_E_MISSING || !strstr(why, ": no ")) {
				bad++;
				printf("# %s without object %u: %s\n",
				       kinds[k].name, i, why);
			}
		}
	}
	ktap_check(tried >= 25 && !bad, "each mandatory object missing refused as missing");
}

static void test_header(void)
{
	struct rsvp_msg m, back;
	uint8_t b[RSVP_MSG_MAX];
	int len;

	sample(&m, RSVP_MSG_CBFC_PATH, false, 0);
	len = rsvp_build(&m, b, sizeof(b), why, sizeof(why));
	b[1] = 27;
	reseal(b, len);
	ktap_check(rsvp_parse(b, len, &back, why, sizeof(why)) == RSVP_E_TYPE,
		   "message type 27 refused");
	b[1] = RSVP_MSG_CBFC_PATH;
	b[0] = 2 << 4;
	reseal(b, len);
	ktap_check(rsvp_parse(b, len, &back, why, sizeof(why)) == RSVP_E_VERSION,
		   "version 2 refused");
	m.qpn = DMSC_QPN_MAX + 1;
	ktap_check(rsvp_build(&m, b, sizeof(b), why, sizeof(why)) < 0,
		   "build refuses a 25-bit QPN");
	sample(&m, RSVP_MSG_CBFC_PATH, false, 0);
	m.nhops = RSVP_ERO_HOPS_MAX;
	for (unsigned int i = 0; i < m.nhops; i++)
		addr(&m.hops[i], "fc00::1");
	len = rsvp_build(&m, b, sizeof(b), why, sizeof(why));
	ktap_check(len > 0 && rsvp_parse(b, len, &back, why, sizeof(why)) == RSVP_OK &&
		   back.nhops == RSVP_ERO_HOPS_MAX, "16 hops round trip");
}

int main(void)
{
	ktap_plan(31);
	test_round_trips();
	test_truncations();
	test_wrong_lengths();
	test_checksum();
	test_classes();
	test_missing();
	test_header();
	return ktap_finish();
}
