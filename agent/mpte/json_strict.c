// SPDX-License-Identifier: GPL-2.0
/*
 * json_strict.c - read a JSON document the way RFC 8259 spells it, and no
 * other way, before json-c builds the tree.
 *
 * json-c (0.16, even with JSON_TOKENER_STRICT) accepts NaN, Infinity,
 * -Infinity, single-quoted strings and numbers like 1e999 that overflow to
 * infinity, and keeps the last of two equal keys in an object without a
 * word.  A topology that says "capacity" twice, or a bandwidth of NaN, is a
 * mistake we must name rather than solve.  So one pass over the text checks
 * the grammar, that every number is finite and that no object repeats a
 * key, and names the place as file:line and the field's path
 * ("T.json:12: nodes[3]: duplicate key \"sid\""); then json-c parses it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "mpte_int.h"

#define SCAN_MAX_DEPTH	64
#define SCAN_PATH_LEN	256

struct scan {
	const char *start, *p, *end;
	const char *name;
	char path[SCAN_PATH_LEN];
	char *err;
	size_t errlen;
	int failed;
	int depth;
};

static int line_of(const struct scan *s, const char *at)
{
	const char *q;
	int line = 1;

	for (q = s->start; q < at && q < s->end; q++)
		line += *q == '\n';
	return line;
}

static int sfail(struct scan *s, const char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int sfail(struct scan *s, const char *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (s->failed)
		return -1;
	s->failed = 1;
	n = snprintf(s->err, s->errlen, "%s:%d: %s%s", s->name, line_of(s, at),
		     s->path, s->path[0] ? ": " : "");
	if (n < 0 || (size_t)n >= s->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(s->err + n, s->errlen - n, fmt, ap);
	va_end(ap);
	return -1;
}

/* The path grows by ".key" or "[i]" while a value is scanned. */
static size_t path_push_key(struct scan *s, const char *key)
{
	size_t len = strlen(s->path);

	snprintf(s->path + len, sizeof(s->path) - len, "%s%s",
		 len ? "." : "", key);
	return len;
}

static size_t path_push_index(struct scan *s, size_t i)
{
	size_t len = strlen(s->path);

	snprintf(s->path + len, sizeof(s->path) - len, "[%zu]", i);
	return len;
}

static void path_pop(struct scan *s, size_t len)
{
	s->path[len] = 0;
}

static void skip_ws(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' ||
				 *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

static int hex4(const char *p, unsigned int *out)
{
	unsigned int v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	*out = v;
	return 0;
}

static void put_utf8(char **o, unsigned int cp)
{
	char *q = *o;

	if (cp < 0x80) {
		*q++ = cp;
	} else if (cp < 0x800) {
		*q++ = 0xc0 | (cp >> 6);
		*q++ = 0x80 | (cp & 0x3f);
	} else if (cp < 0x10000) {
		*q++ = 0xe0 | (cp >> 12);
		*q++ = 0x80 | ((cp >> 6) & 0x3f);
		*q++ = 0x80 | (cp & 0x3f);
	} else {
		*q++ = 0xf0 | (cp >> 18);
		*q++ = 0x80 | ((cp >> 12) & 0x3f);
		*q++ = 0x80 | ((cp >> 6) & 0x3f);
		*q++ = 0x80 | (cp & 0x3f);
	}
	*o = q;
}

/*
 * A string's body from s->p (past the opening quote) to the closing quote,
 * decoded into o when o is not NULL.  Leaves s->p past the closing quote.
 */
static int string_body(struct scan *s, char *o)
{
	const char *q = s->p;

	while (s->p < s->end && *s->p != '"') {
		unsigned char c = *s->p;

		if (c < 0x20)
			return sfail(s, s->p, "control character 0x%02x in a string", c);
		if (c != '\\') {
			if (o)
				*o++ = c;
			s->p++;
			continue;
		}
		if (s->p + 1 >= s->end)
			break;
		c = s->p[1];
		if (c == 'u') {
			unsigned int cp, lo;

			if (s->end - s->p < 6 || hex4(s->p + 2, &cp))
				return sfail(s, s->p, "bad \\u escape in a string");
			s->p += 6;
			if (cp >= 0xd800 && cp < 0xdc00) {
				if (s->end - s->p < 6 || s->p[0] != '\\' ||
				    s->p[1] != 'u' || hex4(s->p + 2, &lo) ||
				    lo < 0xdc00 || lo > 0xdfff)
					return sfail(s, s->p, "unpaired surrogate in a string");
				s->p += 6;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			} else if (cp >= 0xdc00 && cp <= 0xdfff) {
				return sfail(s, s->p, "unpaired surrogate in a string");
			}
			if (o)
				put_utf8(&o, cp);
			continue;
		}
		switch (c) {
		case '"': case '\\': case '/':
			break;
		case 'b': c = '\b'; break;
		case 'f': c = '\f'; break;
		case 'n': c = '\n'; break;
		case 'r': c = '\r'; break;
		case 't': c = '\t'; break;
		default:
			return sfail(s, s->p, "bad escape \\%c in a string", c);
		}
		if (o)
			*o++ = c;
		s->p += 2;
	}
	if (s->p >= s->end)
		return sfail(s, q - 1, "unterminated string");
	s->p++;
	return 0;
}

/*
 * A string at s->p (on its opening quote).  With out, its decoded value
 * (malloc'd) is returned there: keys are compared decoded, so "a" and
 * "\u0061" are the same key, as they are to json-c.  Decoding never makes
 * the text longer, so the raw length bounds the buffer.
 */
static int scan_string(struct scan *s, char **out)
{
	const char *q = ++s->p;

	if (string_body(s, NULL))
		return -1;
	if (out) {
		*out = mpte_xcalloc(s->p - q, 1);
		s->p = q;
		string_body(s, *out);
	}
	return 0;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, finite as a double. */
static int scan_number(struct scan *s)
{
	const char *b = s->p, *q = s->p;
	char *copy;
	double v;

	if (q < s->end && *q == '-')
		q++;
	if (q < s->end && *q == '0') {
		q++;
	} else if (q < s->end && is_digit(*q)) {
		while (q < s->end && is_digit(*q))
			q++;
	} else {
		return sfail(s, b, "bad number");
	}
	if (q < s->end && *q == '.') {
		if (++q >= s->end || !is_digit(*q))
			return sfail(s, b, "bad number");
		while (q < s->end && is_digit(*q))
			q++;
	}
	if (q < s->end && (*q == 'e' || *q == 'E')) {
		q++;
		if (q < s->end && (*q == '+' || *q == '-'))
			q++;
		if (q >= s->end || !is_digit(*q))
			return sfail(s, b, "bad number");
		while (q < s->end && is_digit(*q))
			q++;
	}
	if (q < s->end && (is_digit(*q) || *q == '.' || *q == 'x' ||
			   *q == 'X' || (*q >= 'a' && *q <= 'z')))
		return sfail(s, b, "bad number");
	copy = mpte_xcalloc(q - b + 1, 1);
	memcpy(copy, b, q - b);
	errno = 0;
	v = strtod(copy, NULL);
	if (!isfinite(v)) {
		sfail(s, b, "%s is out of range (numbers must be finite)", copy);
		free(copy);
		return -1;
	}
	free(copy);
	s->p = q;
	return 0;
}

/* true, false, null; name NaN and Infinity, which JSON does not have. */
static int scan_word(struct scan *s)
{
	const char *b = s->p, *q = s->p;
	char w[16];
	size_t n;

	if (q < s->end && *q == '-')
		q++;
	while (q < s->end && ((*q >= 'a' && *q <= 'z') ||
			      (*q >= 'A' && *q <= 'Z')))
		q++;
	n = q - b;
	if (!n)
		return sfail(s, b, "unexpected '%c'", *b);
	snprintf(w, sizeof(w), "%.*s", (int)(n < sizeof(w) ? n : sizeof(w) - 1), b);
	if (!strcmp(w, "true") || !strcmp(w, "false") || !strcmp(w, "null")) {
		s->p = q;
		return 0;
	}
	if (!strcasecmp(w + (*w == '-'), "nan") ||
	    !strcasecmp(w + (*w == '-'), "infinity") ||
	    !strcasecmp(w + (*w == '-'), "inf"))
		return sfail(s, b, "%s is not a JSON number (numbers must be finite)", w);
	return sfail(s, b, "unexpected \"%s\"", w);
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int scan_value(struct scan *s);

static int scan_object(struct scan *s)
{
	const char *open = s->p;
	char **keys = NULL;
	size_t nkeys = 0, cap = 0, i;
	int rc = -1;

	s->p++;
	skip_ws(s);
	if (s->p < s->end && *s->p == '}') {
		s->p++;
		return 0;
	}
	for (;;) {
		char *key;
		size_t plen;

		skip_ws(s);
		if (s->p >= s->end || *s->p != '"') {
			sfail(s, s->p, s->p < s->end && *s->p == '\'' ?
			      "strings take double quotes" :
			      "expected a key in double quotes");
			goto out;
		}
		if (scan_string(s, &key))
			goto out;
		if (nkeys == cap) {
			cap = cap ? 2 * cap : 16;
			keys = mpte_xrealloc(keys, cap * sizeof(*keys));
		}
		keys[nkeys++] = key;
		skip_ws(s);
		if (s->p >= s->end || *s->p != ':') {
			sfail(s, s->p, "expected ':' after key \"%s\"", key);
			goto out;
		}
		s->p++;
		plen = path_push_key(s, key);
		if (scan_value(s))
			goto out;
		path_pop(s, plen);
		skip_ws(s);
		if (s->p < s->end && *s->p == ',') {
			s->p++;
			continue;
		}
		if (s->p < s->end && *s->p == '}') {
			s->p++;
			break;
		}
		sfail(s, s->p, "expected ',' or '}' in the object opened at line %d",
		      line_of(s, open));
		goto out;
	}
	/* json-c would keep the last of two equal keys without a word */
	qsort(keys, nkeys, sizeof(*keys), cmp_key);
	for (i = 1; i < nkeys; i++)
		if (!strcmp(keys[i - 1], keys[i])) {
			sfail(s, open, "duplicate key \"%s\"", keys[i]);
			goto out;
		}
	rc = 0;
out:
	for (i = 0; i < nkeys; i++)
		free(keys[i]);
	free(keys);
	return rc;
}

static int scan_array(struct scan *s)
{
	const char *open = s->p;
	size_t i = 0, plen;

	s->p++;
	skip_ws(s);
	if (s->p < s->end && *s->p == ']') {
		s->p++;
		return 0;
	}
	for (;; i++) {
		plen = path_push_index(s, i);
		if (scan_value(s))
			return -1;
		path_pop(s, plen);
		skip_ws(s);
		if (s->p < s->end && *s->p == ',') {
			s->p++;
			continue;
		}
		if (s->p < s->end && *s->p == ']') {
			s->p++;
			return 0;
		}
		return sfail(s, s->p, "expected ',' or ']' in the array opened at line %d",
			     line_of(s, open));
	}
}

static int scan_value(struct scan *s)
{
	int rc;

	skip_ws(s);
	if (s->p >= s->end)
		return sfail(s, s->p, "unexpected end of the document");
	if (++s->depth > SCAN_MAX_DEPTH)
		return sfail(s, s->p, "nested deeper than %d", SCAN_MAX_DEPTH);
	switch (*s->p) {
	case '{':
		rc = scan_object(s);
		break;
	case '[':
		rc = scan_array(s);
		break;
	case '"':
		rc = scan_string(s, NULL);
		break;
	case '\'':
		rc = sfail(s, s->p, "strings take double quotes");
		break;
	default:
		if (is_digit(*s->p) ||
		    (*s->p == '-' && s->p + 1 < s->end && is_digit(s->p[1])))
			rc = scan_number(s);
		else
			rc = scan_word(s);
	}
	s->depth--;
	return rc;
}

struct json_object *mpte_json_parse(const char *text, size_t len,
				    const char *name, char *err, size_t errlen)
{
	struct scan s = { .start = text, .p = text, .end = text + len,
			  .name = name, .err = err, .errlen = errlen };
	struct json_tokener *tok;
	struct json_object *o;

	if (scan_value(&s))
		return NULL;
	skip_ws(&s);
	if (s.p < s.end) {
		sfail(&s, s.p, "text after the end of the document");
		return NULL;
	}
	tok = json_tokener_new_ex(SCAN_MAX_DEPTH + 1);
	if (!tok) {
		snprintf(err, errlen, "%s: out of memory", name);
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, text, (int)len);
	if (!o)
		snprintf(err, errlen, "%s: %s", name, json_tokener_error_desc(
			json_tokener_get_error(tok)));
	json_tokener_free(tok);
	return o;
}

struct json_object *mpte_json_load(const char *path, char *err,
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
			buf = mpte_xrealloc(buf, cap);
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n);
	if (ferror(f)) {
		snprintf(err, errlen, "%s: %s", name, strerror(errno));
	} else if (len > INT32_MAX) {
		snprintf(err, errlen, "%s: larger than 2 GiB", name);
	} else {
		o = mpte_json_parse(buf, len, name, err, errlen);
	}
	if (f != stdin)
		fclose(f);
	free(buf);
	return o;
}
