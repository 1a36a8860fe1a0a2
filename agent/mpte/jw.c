// SPDX-License-Identifier: GPL-2.0
/*
 * jw.c - the streaming JSON writer (see jw.h).
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "jw.h"

void jw_init(struct jw *w, FILE *f)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
}

static void put(struct jw *w, const char *s, size_t n)
{
	fwrite_unlocked(s, 1, n, w->f);
}

/* before any value or key: the comma, unless it follows its key */
static void sep(struct jw *w)
{
	if (w->after_key)
		w->after_key = 0;
	else if (w->more[w->depth])
		putc_unlocked(',', w->f);
	w->more[w->depth] = 1;
}

static void open(struct jw *w, char c)
{
	sep(w);
	putc_unlocked(c, w->f);
	w->more[++w->depth] = 0;
}

void jw_obj(struct jw *w)
{
	open(w, '{');
}

void jw_arr(struct jw *w)
{
	open(w, '[');
}

void jw_end_obj(struct jw *w)
{
	w->depth--;
	putc_unlocked('}', w->f);
}

void jw_end_arr(struct jw *w)
{
	w->depth--;
	putc_unlocked(']', w->f);
}

void jw_key(struct jw *w, const char *k)
{
	sep(w);
	putc_unlocked('"', w->f);
	put(w, k, strlen(k));
	put(w, "\":", 2);
	w->after_key = 1;
}

void jw_null(struct jw *w)
{
	sep(w);
	put(w, "null", 4);
}

void jw_bool(struct jw *w, int v)
{
	sep(w);
	if (v)
		put(w, "true", 4);
	else
		put(w, "false", 5);
}

void jw_int(struct jw *w, int64_t v)
{
	char b[24];
	int n = snprintf(b, sizeof(b), "%" PRId64, v);

	sep(w);
	put(w, b, n);
}

/* json-c's escapes: the two-character ones, \u00xx for other controls,
 * '/' as it is (NOSLASHESCAPE) */
void jw_str(struct jw *w, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const char *run;

	if (!s) {
		jw_null(w);
		return;
	}
	sep(w);
	putc_unlocked('"', w->f);
	for (run = s; *s; s++) {
		unsigned char c = *s;
		char e[7] = "\\u00";
		int n = 2;

		if (c >= ' ' && c != '"' && c != '\\')
			continue;
		put(w, run, s - run);
		run = s + 1;
		switch (c) {
		case '\b': e[1] = 'b'; break;
		case '\n': e[1] = 'n'; break;
		case '\r': e[1] = 'r'; break;
		case '\t': e[1] = 't'; break;
		case '\f': e[1] = 'f'; break;
		case '"': e[1] = '"'; break;
		case '\\': e[1] = '\\'; break;
		default:
			e[4] = hex[c >> 4];
			e[5] = hex[c & 15];
			n = 6;
		}
		put(w, e, n);
	}
	put(w, run, s - run);
	putc_unlocked('"', w->f);
}

/* glibc's way, for what the fast path does not cover */
static int slow_double(char *buf, double v)
{
	int n;

	if (isnan(v))
		return sprintf(buf, "NaN");
	if (isinf(v))
		return sprintf(buf, v > 0 ? "Infinity" : "-Infinity");
	n = snprintf(buf, JW_DBL_LEN, "%.17g", v);
	if (!strchr(buf, '.') && !strchr(buf, 'e')) {
		memcpy(buf + n, ".0", 3);
		n += 2;
	}
	return n;
}

/*
 * v * 10^s rounded to an integer as printf rounds (to nearest, ties to
 * even), exactly: v = m * 2^e, so v * 10^s = m * 5^s * 2^(e+s), and
 * m * 5^s fits 128 bits for 0 <= s <= 20.
 */
static uint64_t scaled(uint64_t m, int e, int s)
{
	static const uint64_t p5[21] = {
		1ULL, 5ULL, 25ULL, 125ULL, 625ULL, 3125ULL, 15625ULL, 78125ULL,
		390625ULL, 1953125ULL, 9765625ULL, 48828125ULL, 244140625ULL,
		1220703125ULL, 6103515625ULL, 30517578125ULL, 152587890625ULL,
		762939453125ULL, 3814697265625ULL, 19073486328125ULL,
		95367431640625ULL,
	};
	unsigned __int128 x = (unsigned __int128)m * p5[s], r, half;
	int sh = e + s;
	uint64_t q;

	if (sh >= 0)
		return (uint64_t)(x << sh);
	sh = -sh;
	q = (uint64_t)(x >> sh);
	r = x & (((unsigned __int128)1 << sh) - 1);
	half = (unsigned __int128)1 << (sh - 1);
	if (r > half || (r == half && (q & 1)))
		q++;
	return q;
}

int jw_format_double(char *buf, double v)
{
	static const uint64_t lo = 10000000000000000ULL;	/* 10^16 */
	double a = fabs(v);
	char d[17], *p = buf;
	uint64_t bits, m, n;
	int e, x, s, i, last, tries;

	/* fixed notation (exponent -4..16) with s = 16 - x in 1..20 */
	if (!(a >= 1e-4 && a < 1e15))
		return slow_double(buf, v);
	memcpy(&bits, &a, sizeof(bits));
	m = (bits & ((1ULL << 52) - 1)) | (1ULL << 52);
	e = (int)((bits >> 52) & 0x7ff) - 1075;
	x = (int)floor(log10(a));
	for (tries = 0;; tries++) {
		s = 16 - x;
		if (tries > 2 || s < 1 || s > 20)
			return slow_double(buf, v);
		n = scaled(m, e, s);
		if (n >= 10 * lo)
			x++;
		else if (n < lo)
			x--;
		else
			break;
	}
	for (i = 16; i >= 0; i--, n /= 10)
		d[i] = '0' + n % 10;
	for (last = 16; last > x && last > 0 && d[last] == '0'; last--)
		;
	if (v < 0)
		*p++ = '-';
	if (x >= 0) {
		memcpy(p, d, x + 1);
		p += x + 1;
		*p++ = '.';
		if (last > x) {
			memcpy(p, d + x + 1, last - x);
			p += last - x;
		} else {
			*p++ = '0';	/* json-c's ".0" */
		}
	} else {
		*p++ = '0';
		*p++ = '.';
		for (i = 0; i < -x - 1; i++)
			*p++ = '0';
		memcpy(p, d, last + 1);
		p += last + 1;
	}
	*p = 0;
	return p - buf;
}

void jw_dbl(struct jw *w, double v)
{
	char b[JW_DBL_LEN];
	int n = jw_format_double(b, v);

	sep(w);
	put(w, b, n);
}
