// SPDX-License-Identifier: GPL-2.0
/*
 * The strict JSON reader of json_strict.h: recursive descent over RFC
 * 8259's grammar, bounded by the caller's rules, building json-c objects
 * so that the decoders above it use json-c's accessors. The path of the
 * value being read is kept as text, so every error names its place.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json_strict.h"

struct rd {
	const unsigned char *p, *end, *start;
	const struct json_strict_rules *rules;
	int depth;
	char path[256];
	size_t plen;		/* strlen(path) */
	char *buf;		/* a string being unescaped */
	size_t cap;
	char *err;
	size_t errlen;
	bool failed;
};

static int line_of(const struct rd *r, const unsigned char *at)
{
	int line = 1;

	for (const unsigned char *q = r->start; q < at && q < r->end; q++)
		line += *q == '\n';
	return line;
}

static int fail_at(struct rd *r, const unsigned char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * The first error only: a file's as "NAME:LINE: path: what", a message's
 * as "path: what (at byte N)". Returns -1 for the caller to pass on.
 */
static int fail_at(struct rd *r, const unsigned char *at, const char *fmt, ...)
{
	char what[192];
	va_list ap;

	if (r->failed)
		return -1;
	r->failed = true;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (r->rules->name)
		snprintf(r->err, r->errlen, "%s:%d: %s%s%s", r->rules->name,
			 line_of(r, at), r->path, r->plen ? ": " : "", what);
	else
		snprintf(r->err, r->errlen, "%s%s%s (at byte %zu)", r->path,
			 r->plen ? ": " : "", what, (size_t)(at - r->start));
	return -1;
}

#define fail(r, ...) fail_at(r, (r)->p, __VA_ARGS__)

/* Path steps: ".key" or "[i]" (no dot at the top), undone by path_pop(). */
static size_t path_push_key(struct rd *r, const char *key)
{
	size_t old = r->plen;

	snprintf(r->path + old, sizeof(r->path) - old, "%s%s", old ? "." : "",
		 key);
	r->plen = strnlen(r->path, sizeof(r->path) - 1);
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

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static int hex4(struct rd *r, unsigned int *v)
{
	*v = 0;
	if (r->end - r->p < 4)
		return fail(r, "bad \\u escape in a string");
	for (int i = 0; i < 4; i++) {
		unsigned char c = *r->p++;

		*v <<= 4;
		if (is_digit(c))
			*v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			*v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			*v |= c - 'A' + 10;
		else
			return fail(r, "bad \\u escape in a string");
	}
	return 0;
}

/* Append code point @cp as UTF-8, within the rules' string limit. */
static int put_utf8(struct rd *r, size_t *n, unsigned int cp)
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
	if (r->rules->max_string && *n + k > r->rules->max_string)
		return fail(r, "string longer than %zu bytes",
			    r->rules->max_string);
	if (*n + k + 1 > r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 256;
		char *b = realloc(r->buf, cap);

		if (!b)
			abort();
		r->buf = b;
		r->cap = cap;
	}
	memcpy(r->buf + *n, u, k);
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
		return fail(r, "invalid UTF-8");
	}
	if ((size_t)(r->end - s) < need + 1)
		return fail(r, "truncated UTF-8");
	for (unsigned int i = 1; i <= need; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return fail(r, "invalid UTF-8");
		*cp = *cp << 6 | (s[i] & 0x3f);
	}
	if (*cp < min || *cp > 0x10ffff || (*cp >= 0xd800 && *cp <= 0xdfff))
		return fail(r, "invalid UTF-8");
	r->p += need + 1;
	return 0;
}

/* An escape after the backslash at r->p[-1]: its code point in @cp. */
static int escape(struct rd *r, unsigned int *cp)
{
	unsigned int lo;

	switch (*r->p++) {
	case '"': *cp = '"'; return 0;
	case '\\': *cp = '\\'; return 0;
	case '/': *cp = '/'; return 0;
	case 'b': *cp = '\b'; return 0;
	case 'f': *cp = '\f'; return 0;
	case 'n': *cp = '\n'; return 0;
	case 'r': *cp = '\r'; return 0;
	case 't': *cp = '\t'; return 0;
	case 'u':
		break;
	default:
		r->p -= 2;
		return fail(r, "bad escape \\%c in a string", r->p[1]);
	}
	if (hex4(r, cp))
		return -1;
	if (*cp >= 0xdc00 && *cp <= 0xdfff)
		return fail(r, "lone low surrogate");
	if (*cp >= 0xd800 && *cp <= 0xdbff) {
		if (r->end - r->p < 2 || r->p[0] != '\\' || r->p[1] != 'u')
			return fail(r, "lone high surrogate");
		r->p += 2;
		if (hex4(r, &lo))
			return -1;
		if (lo < 0xdc00 || lo > 0xdfff)
			return fail(r, "bad surrogate pair");
		*cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	/* C strings end at NUL: a name with one reads two ways. */
	if (!*cp)
		return fail(r, "NUL in a string");
	return 0;
}

/* A string at r->p (the opening quote), unescaped into r->buf. */
static int read_string(struct rd *r, size_t *len)
{
	const unsigned char *open = r->p;
	size_t n = 0;

	r->p++;
	for (;;) {
		unsigned int cp;

		if (r->p >= r->end)
			return fail_at(r, open, "unterminated string");
		if (*r->p == '"')
			break;
		if (*r->p < 0x20)
			return fail(r, "control character 0x%02x in a string",
				    *r->p);
		if (*r->p != '\\') {
			if (utf8_seq(r, &cp))
				return -1;
		} else {
			if (r->end - r->p < 2)
				return fail_at(r, open, "unterminated string");
			r->p++;
			if (escape(r, &cp))
				return -1;
		}
		if (put_utf8(r, &n, cp))
			return -1;
	}
	r->p++;
	r->buf[n] = '\0';	/* put_utf8() keeps room for it */
	*len = n;
	return 0;
}

/*
 * -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, typed as json-c's
 * tokener types it: int64, else uint64, else (fraction or exponent) a
 * finite double that keeps its text.
 */
static int read_number(struct rd *r, struct json_object **out)
{
	const unsigned char *s = r->p, *q = r->p;
	bool frac = false;
	char small[64], *tok = small;
	int rc = -1;
	size_t n;

	if (q < r->end && *q == '-')
		q++;
	if (q < r->end && *q == '0')
		q++;
	else if (q < r->end && is_digit(*q))
		while (q < r->end && is_digit(*q))
			q++;
	else
		return fail(r, "bad number");
	if (q < r->end && *q == '.') {
		frac = true;
		if (++q >= r->end || !is_digit(*q))
			return fail(r, "bad number");
		while (q < r->end && is_digit(*q))
			q++;
	}
	if (q < r->end && (*q == 'e' || *q == 'E')) {
		frac = true;
		q++;
		if (q < r->end && (*q == '+' || *q == '-'))
			q++;
		if (q >= r->end || !is_digit(*q))
			return fail(r, "bad number");
		while (q < r->end && is_digit(*q))
			q++;
	}
	/* 01, 1.2.3, 0x10, 1true: one bad number, not two tokens */
	if (q < r->end && (is_digit(*q) || *q == '.' || *q == 'x' ||
			   *q == 'X' || (*q >= 'a' && *q <= 'z')))
		return fail(r, "bad number");
	/* a file may spell a number with many digits: no length limit */
	n = (size_t)(q - s);
	if (n >= sizeof(small) && !(tok = malloc(n + 1)))
		abort();
	memcpy(tok, s, n);
	tok[n] = '\0';
	errno = 0;
	if (frac) {
		double d = strtod(tok, NULL);

		if (!isfinite(d)) {
			fail(r, "%s is out of range (numbers must be finite)", tok);
			goto out;
		}
		*out = json_object_new_double_s(d, tok);
	} else {
		long long v = strtoll(tok, NULL, 10);

		if (errno == ERANGE && *tok != '-') {
			unsigned long long u;

			errno = 0;
			u = strtoull(tok, NULL, 10);
			if (errno != ERANGE) {
				*out = json_object_new_uint64(u);
				goto done;
			}
		}
		if (errno == ERANGE) {
			fail(r, "integer out of range: %s", tok);
			goto out;
		}
		*out = json_object_new_int64(v);
	}
done:
	r->p = q;
	rc = 0;
out:
	if (tok != small)
		free(tok);
	return rc;
}

/* true, false, null; NaN and Infinity named, which JSON does not have. */
static int read_word(struct rd *r, struct json_object **out)
{
	const unsigned char *q = r->p;
	char w[16];
	size_t n;

	if (q < r->end && *q == '-')
		q++;
	while (q < r->end && ((*q >= 'a' && *q <= 'z') ||
			      (*q >= 'A' && *q <= 'Z')))
		q++;
	n = (size_t)(q - r->p);
	if (!n)
		return fail(r, "unexpected '%c'", *r->p);
	snprintf(w, sizeof(w), "%.*s", (int)(n < sizeof(w) ? n : sizeof(w) - 1),
		 (const char *)r->p);
	if (!strcmp(w, "true") || !strcmp(w, "false")) {
		*out = json_object_new_boolean(*w == 't');
	} else if (!strcmp(w, "null")) {
		/* json-c's null is a NULL object: a message never has one */
		if (!r->rules->allow_null)
			return fail(r, "null is not a value any message has");
		*out = NULL;
	} else if (!strcasecmp(w + (*w == '-'), "nan") ||
		   !strcasecmp(w + (*w == '-'), "infinity") ||
		   !strcasecmp(w + (*w == '-'), "inf")) {
		return fail(r, "%s is not a JSON number (numbers must be finite)", w);
	} else {
		return fail(r, "unexpected \"%s\"", w);
	}
	r->p = q;
	return 0;
}

static int read_value(struct rd *r, struct json_object **out);

static int read_object(struct rd *r, struct json_object *o)
{
	const unsigned char *open = r->p;

	r->p++;
	skip_ws(r);
	if (r->p < r->end && *r->p == '}') {
		r->p++;
		return 0;
	}
	for (;;) {
		struct json_object *v;
		size_t klen, old;
		char *key;

		skip_ws(r);
		if (r->p >= r->end || *r->p != '"')
			return fail(r, r->p < r->end && *r->p == '\'' ?
				    "strings take double quotes" :
				    "expected a key in double quotes");
		if (read_string(r, &klen))
			return -1;
		/* json-c would keep the last of two equal keys in silence */
		if (json_object_object_get_ex(o, r->buf, NULL))
			return fail_at(r, open, "duplicate key \"%s\"", r->buf);
		key = strdup(r->buf);
		if (!key)
			abort();
		skip_ws(r);
		if (r->p >= r->end || *r->p != ':') {
			fail(r, "expected ':' after key \"%s\"", key);
			free(key);
			return -1;
		}
		r->p++;
		old = path_push_key(r, key);
		if (read_value(r, &v)) {
			free(key);
			return -1;
		}
		json_object_object_add(o, key, v);
		free(key);
		path_pop(r, old);
		skip_ws(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			continue;
		}
		if (r->p < r->end && *r->p == '}') {
			r->p++;
			return 0;
		}
		return fail(r, "expected ',' or '}' in the object opened at line %d",
			    line_of(r, open));
	}
}

static int read_array(struct rd *r, struct json_object *a)
{
	const unsigned char *open = r->p;

	r->p++;
	skip_ws(r);
	if (r->p < r->end && *r->p == ']') {
		r->p++;
		return 0;
	}
	for (size_t i = 0;; i++) {
		size_t old = path_push_index(r, i);
		struct json_object *v;

		if (read_value(r, &v))
			return -1;
		json_object_array_add(a, v);
		path_pop(r, old);
		skip_ws(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			continue;
		}
		if (r->p < r->end && *r->p == ']') {
			r->p++;
			return 0;
		}
		return fail(r, "expected ',' or ']' in the array opened at line %d",
			    line_of(r, open));
	}
}

/* One value at r->p into *@out (NULL for null); 0, or -1 after fail(). */
static int read_value(struct rd *r, struct json_object **out)
{
	size_t len;
	int rc;

	*out = NULL;
	skip_ws(r);
	if (r->p >= r->end)
		return fail(r, "unexpected end of the document");
	switch (*r->p) {
	case '{':
	case '[':
		if (++r->depth > r->rules->max_depth)
			return fail(r, "nested deeper than %d",
				    r->rules->max_depth);
		*out = *r->p == '{' ? json_object_new_object() :
				      json_object_new_array();
		rc = *r->p == '{' ? read_object(r, *out) : read_array(r, *out);
		r->depth--;
		if (rc) {
			json_object_put(*out);
			*out = NULL;
		}
		return rc;
	case '"':
		if (read_string(r, &len))
			return -1;
		*out = json_object_new_string_len(r->buf, (int)len);
		return 0;
	case '\'':
		return fail(r, "strings take double quotes");
	default:
		if (is_digit(*r->p) || (*r->p == '-' && r->p + 1 < r->end &&
					is_digit(r->p[1])))
			return read_number(r, out);
		return read_word(r, out);
	}
}

struct json_object *json_strict_parse(const char *text, size_t len,
				      const struct json_strict_rules *rules,
				      char *err, size_t errlen)
{
	struct rd r = {
		.p = (const unsigned char *)text,
		.end = (const unsigned char *)text + len,
		.start = (const unsigned char *)text,
		.rules = rules, .err = err, .errlen = errlen,
	};
	struct json_object *v = NULL;

	r.cap = 256;
	r.buf = malloc(r.cap);
	if (!r.buf)
		abort();
	if (!read_value(&r, &v)) {
		skip_ws(&r);
		if (r.p != r.end)
			fail(&r, "text after the end of the document");
		else if (!v)
			fail_at(&r, r.start, "null where a document was expected");
	}
	free(r.buf);
	if (r.failed) {
		json_object_put(v);
		return NULL;
	}
	return v;
}

struct json_object *json_strict_load(const char *path, char *err,
				     size_t errlen)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	const char *name = f == stdin ? "stdin" : path;
	struct json_object *o = NULL;
	size_t len = 0, cap = 0, n;
	char *buf = NULL;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	do {
		if (cap - len < 65536) {
			cap = cap ? 2 * cap : 65536;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n);
	if (ferror(f)) {
		snprintf(err, errlen, "%s: %s", name, strerror(errno));
	} else if (len > INT32_MAX) {
		/* json-c's lengths are int */
		snprintf(err, errlen, "%s: larger than 2 GiB", name);
	} else {
		o = json_strict_parse(buf, len, &JSON_STRICT_FILE(name), err,
				      errlen);
	}
	if (f != stdin)
		fclose(f);
	free(buf);
	return o;
}

const char *json_strict_unknown_key(struct json_object *obj,
				    const char *const *keys,
				    const char *const *more)
{
	json_object_object_foreach(obj, key, val) {
		const char *const *k;
		bool known = false;

		(void)val;
		for (k = keys; k && *k && !known; k++)
			known = !strcmp(*k, key);
		for (k = more; k && *k && !known; k++)
			known = !strcmp(*k, key);
		if (!known)
			return key;
	}
	return NULL;
}
