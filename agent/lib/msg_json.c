// SPDX-License-Identifier: GPL-2.0
/*
 * The strict JSON reader of msg_json.h: recursive descent over RFC 8259's
 * grammar, bounded in depth and string length, building json-c objects so
 * that the decoders above it use json-c's accessors. The path of the value
 * being read is kept as text, so every error names its place.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg_json.h"

struct rd {
	const unsigned char *p, *end, *start;
	int depth;
	char path[256];
	size_t plen;		/* strlen(path) */
	char *err;
	size_t errlen;
	bool failed;
};

static void fail(struct rd *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail(struct rd *r, const char *fmt, ...)
{
	char what[160];
	va_list ap;

	if (r->failed)
		return;
	r->failed = true;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(r->err, r->errlen, "%s%s%s (at byte %zu)",
		 r->plen ? r->path : "", r->plen ? ": " : "", what,
		 (size_t)(r->p - r->start));
}

/* Path steps: ".key" or "[i]" (no dot at the top), undone by path_pop(). */
static size_t path_push_key(struct rd *r, const char *key)
{
	size_t old = r->plen;
	int n = snprintf(r->path + old, sizeof(r->path) - old, "%s%s",
			 old ? "." : "", key);

	r->plen = n < 0 ? old : strnlen(r->path, sizeof(r->path) - 1);
	return old;
}

static size_t path_push_index(struct rd *r, size_t i)
{
	size_t old = r->plen;

	snprintf(r->path + old, sizeof(r->path) - old, "[%zu]", i);
	r->plen = strnlen(r->path, sizeof(r->path) - 1);
	return old;
}

static void path_pop(struct rd *r, size_t old)
{
	r->plen = old;
	r->path[old] = '\0';
}

static void skip_ws(struct rd *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' ||
				 *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

static int hex4(struct rd *r, unsigned int *v)
{
	*v = 0;
	if (r->end - r->p < 4) {
		fail(r, "truncated \\u escape");
		return -1;
	}
	for (int i = 0; i < 4; i++) {
		unsigned char c = *r->p++;

		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			*v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			*v |= c - 'A' + 10;
		else {
			fail(r, "bad \\u escape");
			return -1;
		}
	}
	return 0;
}

/* Append code point @cp as UTF-8; -1 if the string gets too long. */
static int put_utf8(char *buf, size_t *n, unsigned int cp)
{
	unsigned char u[4];
	size_t k;

	if (cp < 0x80) {
		u[0] = (unsigned char)cp;
		k = 1;
	} else if (cp < 0x800) {
		u[0] = (unsigned char)(0xc0 | cp >> 6);
		u[1] = (unsigned char)(0x80 | (cp & 0x3f));
		k = 2;
	} else if (cp < 0x10000) {
		u[0] = (unsigned char)(0xe0 | cp >> 12);
		u[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (unsigned char)(0x80 | (cp & 0x3f));
		k = 3;
	} else {
		u[0] = (unsigned char)(0xf0 | cp >> 18);
		u[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (unsigned char)(0x80 | (cp & 0x3f));
		k = 4;
	}
	if (*n + k > MSG_JSON_MAX_STRING)
		return -1;
	memcpy(buf + *n, u, k);
	*n += k;
	return 0;
}

/* One raw UTF-8 sequence starting at r->p, checked (RFC 3629). */
static int utf8_seq(struct rd *r, unsigned int *cp)
{
	const unsigned char *s = r->p;
	unsigned int c = s[0], need, min;

	if (c < 0x80) {
		need = 0; min = 0; *cp = c;
	} else if ((c & 0xe0) == 0xc0) {
		need = 1; min = 0x80; *cp = c & 0x1f;
	} else if ((c & 0xf0) == 0xe0) {
		need = 2; min = 0x800; *cp = c & 0x0f;
	} else if ((c & 0xf8) == 0xf0) {
		need = 3; min = 0x10000; *cp = c & 0x07;
	} else {
		fail(r, "invalid UTF-8");
		return -1;
	}
	if ((size_t)(r->end - s) < need + 1) {
		fail(r, "truncated UTF-8");
		return -1;
	}
	for (unsigned int i = 1; i <= need; i++) {
		if ((s[i] & 0xc0) != 0x80) {
			fail(r, "invalid UTF-8");
			return -1;
		}
		*cp = *cp << 6 | (s[i] & 0x3f);
	}
	if (*cp < min || *cp > 0x10ffff || (*cp >= 0xd800 && *cp <= 0xdfff)) {
		fail(r, "invalid UTF-8");
		return -1;
	}
	r->p += need + 1;
	return 0;
}

/* A string at r->p (the opening quote); @buf holds MSG_JSON_MAX_STRING + 1. */
static int read_string(struct rd *r, char *buf, size_t *len)
{
	size_t n = 0;

	r->p++;
	for (;;) {
		unsigned int cp, lo;

		if (r->p >= r->end) {
			fail(r, "unterminated string");
			return -1;
		}
		if (*r->p == '"') {
			r->p++;
			break;
		}
		if (*r->p < 0x20) {
			fail(r, "control character in a string");
			return -1;
		}
		if (*r->p != '\\') {
			if (utf8_seq(r, &cp))
				return -1;
		} else {
			if (r->end - r->p < 2) {
				fail(r, "unterminated string");
				return -1;
			}
			r->p += 2;
			switch (r->p[-1]) {
			case '"': cp = '"'; break;
			case '\\': cp = '\\'; break;
			case '/': cp = '/'; break;
			case 'b': cp = '\b'; break;
			case 'f': cp = '\f'; break;
			case 'n': cp = '\n'; break;
			case 'r': cp = '\r'; break;
			case 't': cp = '\t'; break;
			case 'u':
				if (hex4(r, &cp))
					return -1;
				if (cp >= 0xdc00 && cp <= 0xdfff) {
					fail(r, "lone low surrogate");
					return -1;
				}
				if (cp >= 0xd800 && cp <= 0xdbff) {
					if (r->end - r->p < 2 || r->p[0] != '\\' ||
					    r->p[1] != 'u') {
						fail(r, "lone high surrogate");
						return -1;
					}
					r->p += 2;
					if (hex4(r, &lo))
						return -1;
					if (lo < 0xdc00 || lo > 0xdfff) {
						fail(r, "bad surrogate pair");
						return -1;
					}
					cp = 0x10000 + ((cp - 0xd800) << 10) +
					     (lo - 0xdc00);
				}
				break;
			default:
				fail(r, "bad escape \\%c", r->p[-1]);
				return -1;
			}
			/* C strings end at NUL: a name with one reads two ways. */
			if (!cp) {
				fail(r, "NUL in a string");
				return -1;
			}
		}
		if (put_utf8(buf, &n, cp)) {
			fail(r, "string longer than %d bytes", MSG_JSON_MAX_STRING);
			return -1;
		}
	}
	buf[n] = '\0';
	*len = n;
	return 0;
}

static struct json_object *read_number(struct rd *r)
{
	const unsigned char *s = r->p;
	bool neg = false, frac = false;
	char tok[64];
	size_t n;

	if (r->p < r->end && *r->p == '-') {
		neg = true;
		r->p++;
	}
	if (r->p >= r->end || *r->p < '0' || *r->p > '9') {
		fail(r, "bad number");
		return NULL;
	}
	if (*r->p == '0' && r->p + 1 < r->end && r->p[1] >= '0' && r->p[1] <= '9') {
		fail(r, "leading zero in a number");
		return NULL;
	}
	while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
		r->p++;
	if (r->p < r->end && *r->p == '.') {
		frac = true;
		r->p++;
		if (r->p >= r->end || *r->p < '0' || *r->p > '9') {
			fail(r, "bad number");
			return NULL;
		}
		while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
			r->p++;
	}
	if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
		frac = true;
		r->p++;
		if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
			r->p++;
		if (r->p >= r->end || *r->p < '0' || *r->p > '9') {
			fail(r, "bad number");
			return NULL;
		}
		while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
			r->p++;
	}
	n = (size_t)(r->p - s);
	if (n >= sizeof(tok)) {
		fail(r, "number longer than %zu characters", sizeof(tok) - 1);
		return NULL;
	}
	memcpy(tok, s, n);
	tok[n] = '\0';
	errno = 0;
	if (frac) {
		double d = strtod(tok, NULL);

		if (!isfinite(d) || errno == ERANGE) {
			fail(r, "number out of range: %s", tok);
			return NULL;
		}
		return json_object_new_double(d);
	}
	if (neg) {
		long long v = strtoll(tok, NULL, 10);

		if (errno == ERANGE) {
			fail(r, "integer out of range: %s", tok);
			return NULL;
		}
		return json_object_new_int64(v);
	} else {
		unsigned long long v = strtoull(tok, NULL, 10);

		if (errno == ERANGE) {
			fail(r, "integer out of range: %s", tok);
			return NULL;
		}
		return json_object_new_uint64(v);
	}
}

static bool literal(struct rd *r, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n))
		return false;
	r->p += n;
	return true;
}

static struct json_object *read_value(struct rd *r);

static struct json_object *read_object(struct rd *r)
{
	struct json_object *o = json_object_new_object();
	char key[MSG_JSON_MAX_STRING + 1];
	size_t klen;

	r->p++;
	skip_ws(r);
	if (r->p < r->end && *r->p == '}') {
		r->p++;
		return o;
	}
	for (;;) {
		struct json_object *v;
		size_t old;

		skip_ws(r);
		if (r->p >= r->end || *r->p != '"') {
			fail(r, "expected a key");
			goto bad;
		}
		if (read_string(r, key, &klen))
			goto bad;
		old = path_push_key(r, key);
		if (json_object_object_get_ex(o, key, NULL)) {
			fail(r, "given twice");
			goto bad;
		}
		skip_ws(r);
		if (r->p >= r->end || *r->p != ':') {
			fail(r, "expected ':'");
			goto bad;
		}
		r->p++;
		v = read_value(r);
		if (!v)
			goto bad;
		json_object_object_add(o, key, v);
		path_pop(r, old);
		skip_ws(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			continue;
		}
		if (r->p < r->end && *r->p == '}') {
			r->p++;
			return o;
		}
		fail(r, "expected ',' or '}'");
		goto bad;
	}
bad:
	json_object_put(o);
	return NULL;
}

static struct json_object *read_array(struct rd *r)
{
	struct json_object *a = json_object_new_array();
	size_t i = 0;

	r->p++;
	skip_ws(r);
	if (r->p < r->end && *r->p == ']') {
		r->p++;
		return a;
	}
	for (;; i++) {
		size_t old = path_push_index(r, i);
		struct json_object *v = read_value(r);

		if (!v)
			goto bad;
		json_object_array_add(a, v);
		path_pop(r, old);
		skip_ws(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			continue;
		}
		if (r->p < r->end && *r->p == ']') {
			r->p++;
			return a;
		}
		fail(r, "expected ',' or ']'");
		goto bad;
	}
bad:
	json_object_put(a);
	return NULL;
}

static struct json_object *read_value(struct rd *r)
{
	struct json_object *v = NULL;
	char buf[MSG_JSON_MAX_STRING + 1];
	size_t len;

	skip_ws(r);
	if (r->p >= r->end) {
		fail(r, "expected a value");
		return NULL;
	}
	switch (*r->p) {
	case '{':
	case '[':
		if (++r->depth > MSG_JSON_MAX_DEPTH) {
			fail(r, "nested deeper than %d", MSG_JSON_MAX_DEPTH);
			return NULL;
		}
		v = *r->p == '{' ? read_object(r) : read_array(r);
		r->depth--;
		return v;
	case '"':
		if (read_string(r, buf, &len))
			return NULL;
		return json_object_new_string_len(buf, (int)len);
	case 't':
		if (literal(r, "true"))
			return json_object_new_boolean(1);
		break;
	case 'f':
		if (literal(r, "false"))
			return json_object_new_boolean(0);
		break;
	case 'n':
		/* json-c reads JSON null as a NULL object, our error: and
		 * no message has an optional value spelt null.
		 */
		if (literal(r, "null")) {
			fail(r, "null is not a value any message has");
			return NULL;
		}
		break;
	default:
		if (*r->p == '-' || (*r->p >= '0' && *r->p <= '9'))
			return read_number(r);
	}
	fail(r, "not a JSON value");
	return NULL;
}

struct json_object *msg_json_parse(const char *text, size_t len, char *err,
				   size_t errlen)
{
	struct rd r = {
		.p = (const unsigned char *)text,
		.end = (const unsigned char *)text + len,
		.start = (const unsigned char *)text,
		.err = err, .errlen = errlen,
	};
	struct json_object *v;

	v = read_value(&r);
	if (!v)
		return NULL;
	skip_ws(&r);
	if (r.p != r.end) {
		fail(&r, "trailing characters after the value");
		json_object_put(v);
		return NULL;
	}
	return v;
}
