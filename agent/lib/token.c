// SPDX-License-Identifier: GPL-2.0
/*
 * Service access tokens of token.h: JWT compact form, Ed25519 signatures
 * through OpenSSL's EVP one-shot interface (Ed25519 signs the message
 * itself, there is no digest to choose), claims read by the agents' strict
 * JSON reader.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <json-c/json.h>
#include <openssl/rand.h>

#include "json_strict.h"
#include "token.h"

#define SIG_LEN	64	/* Ed25519 */

static const char b64url[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* base64url without padding (RFC 7515 §2) of @n bytes, appended at @o. */
static size_t b64_encode(const unsigned char *in, size_t n, char *o)
{
	size_t i, k = 0;

	for (i = 0; i + 2 < n; i += 3) {
		uint32_t v = in[i] << 16 | in[i + 1] << 8 | in[i + 2];

		o[k++] = b64url[v >> 18];
		o[k++] = b64url[(v >> 12) & 63];
		o[k++] = b64url[(v >> 6) & 63];
		o[k++] = b64url[v & 63];
	}
	if (n - i == 1) {
		o[k++] = b64url[in[i] >> 2];
		o[k++] = b64url[(in[i] & 3) << 4];
	} else if (n - i == 2) {
		uint32_t v = in[i] << 8 | in[i + 1];

		o[k++] = b64url[v >> 10];
		o[k++] = b64url[(v >> 4) & 63];
		o[k++] = b64url[(v & 15) << 2];
	}
	return k;
}

static int b64_val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '-')
		return 62;
	if (c == '_')
		return 63;
	return -1;
}

/*
 * Decode @n characters into @out (@outsize bytes, too few is an error). Only the
 * canonical form is taken: no padding, no stray character, and the unused
 * low bits of the last character zero, so that one token has one reading
 * and a changed character is never a no-op. -1 if not canonical.
 */
static int b64_decode(const char *in, size_t n, unsigned char *out,
		      size_t outsize, size_t *outlen)
{
	uint32_t acc = 0;
	size_t i, k = 0;
	int bits = 0, v;

	if (n % 4 == 1 || n / 4 * 3 + (n % 4 ? n % 4 - 1 : 0) > outsize)
		return -1;
	for (i = 0; i < n; i++) {
		v = b64_val(in[i]);
		if (v < 0)
			return -1;
		acc = acc << 6 | v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[k++] = acc >> bits;
			acc &= (1u << bits) - 1;
		}
	}
	if (acc)	/* leftover bits must be zero */
		return -1;
	*outlen = k;
	return 0;
}

/* A node or key name: what dmsc-pki allows, as a DNS label. */
static bool name_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (!n || n >= TOKEN_NAME_MAX || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return true;
}

/*
 * @s as it may go into an error, which ends up in logs and HTTP answers:
 * a header is read before its signature is checked, so its text is the
 * client's. Anything but letters, digits and "._:-" becomes '?', so no
 * line break or quote can forge a log line, and at most 32 characters.
 */
static const char *shown(const char *s, char *buf, size_t size)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < size && i < 32; i++)
		buf[i] = isalnum((unsigned char)s[i]) || strchr("._:-", s[i]) ?
			 s[i] : '?';
	buf[i] = '\0';
	return buf;
}

/* A subject or scope: printable ASCII without spaces. */
static bool text_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (!n || n >= TOKEN_SUB_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (s[i] <= 0x20 || s[i] >= 0x7f)
			return false;
	return true;
}

static bool jti_ok(const char *s)
{
	size_t i;

	if (strlen(s) != TOKEN_JTI_LEN)
		return false;
	for (i = 0; i < TOKEN_JTI_LEN; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* The claims' own rules, the same when signing and verifying. */
static int claims_check(const struct token_claims *c, char *err, size_t errlen)
{
	const char *bad = NULL;
	char life[48];

	if (!name_ok(c->iss))
		bad = "iss: not a node name";
	else if (!text_ok(c->sub))
		bad = "sub: empty, too long or not printable ASCII";
	else if (!name_ok(c->node))
		bad = "node: not a node name";
	else if (!text_ok(c->scope))
		bad = "scope: empty, too long or not printable ASCII";
	else if (!jti_ok(c->jti))
		bad = "jti: not 32 lower-case hex digits";
	else if (c->iat <= 0)
		bad = "iat: not a time";
	else if (c->exp <= c->iat)
		bad = "exp: not after iat";
	else if (c->exp - c->iat > TOKEN_MAX_LIFETIME) {
		snprintf(life, sizeof(life), "exp: lifetime above %d s",
			 TOKEN_MAX_LIFETIME);
		bad = life;
	}
	if (!bad)
		return 0;
	snprintf(err, errlen, "claims: %s", bad);
	return -1;
}

int token_sign(EVP_PKEY *key, const char *kid, struct token_claims *c,
	       char **out, char *err, size_t errlen)
{
	unsigned char sig[SIG_LEN], rnd[TOKEN_JTI_LEN / 2];
	struct json_object *h = NULL, *p = NULL;
	const char *hs, *ps;
	size_t hl, pl, siglen = sizeof(sig), k, i;
	EVP_MD_CTX *md = NULL;
	char *t = NULL;
	int ret = -1;

	*out = NULL;
	if (!kid || !name_ok(kid)) {
		snprintf(err, errlen, "kid: not a key name");
		return -1;
	}
	if (!c->jti[0]) {
		if (RAND_bytes(rnd, sizeof(rnd)) != 1) {
			snprintf(err, errlen, "no random bytes for jti");
			return -1;
		}
		for (i = 0; i < sizeof(rnd); i++)
			snprintf(c->jti + 2 * i, 3, "%02x", rnd[i]);
	}
	if (claims_check(c, err, errlen))
		return -1;

	h = json_object_new_object();
	json_object_object_add(h, "alg", json_object_new_string("EdDSA"));
	json_object_object_add(h, "typ", json_object_new_string("JWT"));
	json_object_object_add(h, "kid", json_object_new_string(kid));
	p = json_object_new_object();
	json_object_object_add(p, "iss", json_object_new_string(c->iss));
	json_object_object_add(p, "sub", json_object_new_string(c->sub));
	json_object_object_add(p, "aud", json_object_new_string(TOKEN_AUDIENCE));
	json_object_object_add(p, "node", json_object_new_string(c->node));
	json_object_object_add(p, "scope", json_object_new_string(c->scope));
	json_object_object_add(p, "iat", json_object_new_int64(c->iat));
	json_object_object_add(p, "exp", json_object_new_int64(c->exp));
	json_object_object_add(p, "jti", json_object_new_string(c->jti));
	hs = json_object_to_json_string_ext(h, JSON_C_TO_STRING_PLAIN |
					    JSON_C_TO_STRING_NOSLASHESCAPE);
	ps = json_object_to_json_string_ext(p, JSON_C_TO_STRING_PLAIN |
					    JSON_C_TO_STRING_NOSLASHESCAPE);
	hl = strlen(hs);
	pl = strlen(ps);

	/* header.payload.signature, each base64url: 4 chars per 3 bytes */
	t = malloc((hl + pl + SIG_LEN) / 3 * 4 + 16);
	if (!t) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	k = b64_encode((const unsigned char *)hs, hl, t);
	t[k++] = '.';
	k += b64_encode((const unsigned char *)ps, pl, t + k);

	md = EVP_MD_CTX_new();
	if (!md || EVP_DigestSignInit(md, NULL, NULL, NULL, key) != 1 ||
	    EVP_DigestSign(md, sig, &siglen, (unsigned char *)t, k) != 1 ||
	    siglen != SIG_LEN) {
		snprintf(err, errlen, "signing failed (is the key Ed25519?)");
		goto out;
	}
	t[k++] = '.';
	k += b64_encode(sig, siglen, t + k);
	t[k] = '\0';
	if (k > TOKEN_MAX_LEN) {
		snprintf(err, errlen, "token of %zu bytes, above %d", k,
			 TOKEN_MAX_LEN);
		goto out;
	}
	*out = t;
	t = NULL;
	ret = 0;
out:
	EVP_MD_CTX_free(md);
	free(t);
	json_object_put(h);
	json_object_put(p);
	return ret;
}

/* Copy string member @key of @o into @dst (@size with the NUL). */
static int get_str(struct json_object *o, const char *key, char *dst,
		   size_t size, const char *part, char *err, size_t errlen)
{
	struct json_object *v;
	const char *s;

	if (!json_object_object_get_ex(o, key, &v)) {
		snprintf(err, errlen, "%s: %s: missing", part, key);
		return -1;
	}
	if (!json_object_is_type(v, json_type_string)) {
		snprintf(err, errlen, "%s: %s: not a string", part, key);
		return -1;
	}
	s = json_object_get_string(v);
	if (strlen(s) >= size) {
		snprintf(err, errlen, "%s: %s: longer than %zu bytes", part,
			 key, size - 1);
		return -1;
	}
	strcpy(dst, s);
	return 0;
}

static int get_time(struct json_object *o, const char *key, int64_t *t,
		    char *err, size_t errlen)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v)) {
		snprintf(err, errlen, "claims: %s: missing", key);
		return -1;
	}
	/* the strict reader makes every integer an int64 or uint64 */
	if (!json_object_is_type(v, json_type_int)) {
		snprintf(err, errlen, "claims: %s: not an integer", key);
		return -1;
	}
	*t = json_object_get_int64(v);
	return 0;
}

/* Exactly the keys of @keys (NULL-terminated), no other. */
static int only_keys(struct json_object *o, const char *const *keys,
		     const char *part, char *err, size_t errlen)
{
	const char *const *k;

	json_object_object_foreach(o, key, val) {
		(void)val;
		for (k = keys; *k; k++)
			if (!strcmp(*k, key))
				break;
		if (!*k) {
			char b[40];

			snprintf(err, errlen, "%s: %s: unknown key", part,
				 shown(key, b, sizeof(b)));
			return -1;
		}
	}
	return 0;
}

/* Parse base64url part @s of @n chars as a strict JSON object. */
static struct json_object *part_json(const char *s, size_t n,
				     const char *part, char *err,
				     size_t errlen)
{
	unsigned char buf[TOKEN_MAX_LEN];
	struct json_object *o;
	char jerr[200];
	size_t len;

	if (b64_decode(s, n, buf, sizeof(buf), &len)) {
		snprintf(err, errlen, "%s: not canonical base64url", part);
		return NULL;
	}
	o = json_strict_parse((const char *)buf, len, &JSON_STRICT_WIRE, jerr,
			      sizeof(jerr));
	if (!o) {
		char b[160];
		size_t i;

		/* the reader quotes the client's key, unescaped: printable only */
		for (i = 0; jerr[i] && i + 1 < sizeof(b); i++)
			b[i] = jerr[i] >= 0x20 && jerr[i] < 0x7f ? jerr[i] : '?';
		b[i] = '\0';
		snprintf(err, errlen, "%s: %s", part, b);
		return NULL;
	}
	if (!json_object_is_type(o, json_type_object)) {
		snprintf(err, errlen, "%s: not a JSON object", part);
		json_object_put(o);
		return NULL;
	}
	return o;
}

static const char *const header_keys[] = { "alg", "typ", "kid", NULL };
static const char *const claim_keys[] = {
	"iss", "sub", "aud", "node", "scope", "iat", "exp", "jti", NULL
};

int token_verify(const struct token_verifier *v, const char *tok, size_t len,
		 int64_t now, struct token_claims *c, char *err,
		 size_t errlen)
{
	struct json_object *h = NULL, *p = NULL;
	const char *d1, *d2;
	unsigned char sig[SIG_LEN];
	char alg[16], typ[8], kid[TOKEN_NAME_MAX], aud[16];
	EVP_MD_CTX *md = NULL;
	size_t siglen;
	int ret = -1;

	memset(c, 0, sizeof(*c));
	if (len > TOKEN_MAX_LEN) {
		snprintf(err, errlen, "token of %zu bytes, above %d", len,
			 TOKEN_MAX_LEN);
		return -1;
	}
	d1 = memchr(tok, '.', len);
	d2 = d1 ? memchr(d1 + 1, '.', len - (d1 + 1 - tok)) : NULL;
	if (!d2 || memchr(d2 + 1, '.', len - (d2 + 1 - tok))) {
		snprintf(err, errlen, "not three base64url parts joined by '.'");
		return -1;
	}

	/* The header first: it must not choose how it is checked. */
	h = part_json(tok, d1 - tok, "header", err, errlen);
	if (!h || only_keys(h, header_keys, "header", err, errlen) ||
	    get_str(h, "alg", alg, sizeof(alg), "header", err, errlen) ||
	    get_str(h, "typ", typ, sizeof(typ), "header", err, errlen) ||
	    get_str(h, "kid", kid, sizeof(kid), "header", err, errlen))
		goto out;
	if (strcmp(alg, "EdDSA")) {
		char b[40];

		snprintf(err, errlen, "header: alg: \"%s\", only EdDSA is taken",
			 shown(alg, b, sizeof(b)));
		goto out;
	}
	if (strcmp(typ, "JWT")) {
		snprintf(err, errlen, "header: typ: not JWT");
		goto out;
	}
	if (v->kid && strcmp(kid, v->kid)) {
		char b[40];

		snprintf(err, errlen, "header: kid: \"%s\", not this verifier's key \"%s\"",
			 shown(kid, b, sizeof(b)), v->kid);
		goto out;
	}

	/* Then the signature over header.payload, before reading claims. */
	if (b64_decode(d2 + 1, len - (d2 + 1 - tok), sig, sizeof(sig), &siglen) ||
	    siglen != SIG_LEN) {
		snprintf(err, errlen, "signature: not 64 bytes of canonical base64url");
		goto out;
	}
	md = EVP_MD_CTX_new();
	if (!md || EVP_DigestVerifyInit(md, NULL, NULL, NULL, v->key) != 1) {
		snprintf(err, errlen, "verifier key is not an Ed25519 key");
		goto out;
	}
	if (EVP_DigestVerify(md, sig, siglen, (const unsigned char *)tok,
			     d2 - tok) != 1) {
		snprintf(err, errlen, "bad signature");
		goto out;
	}

	p = part_json(d1 + 1, d2 - d1 - 1, "claims", err, errlen);
	if (!p || only_keys(p, claim_keys, "claims", err, errlen) ||
	    get_str(p, "iss", c->iss, sizeof(c->iss), "claims", err, errlen) ||
	    get_str(p, "sub", c->sub, sizeof(c->sub), "claims", err, errlen) ||
	    get_str(p, "aud", aud, sizeof(aud), "claims", err, errlen) ||
	    get_str(p, "node", c->node, sizeof(c->node), "claims", err, errlen) ||
	    get_str(p, "scope", c->scope, sizeof(c->scope), "claims", err, errlen) ||
	    get_str(p, "jti", c->jti, sizeof(c->jti), "claims", err, errlen) ||
	    get_time(p, "iat", &c->iat, err, errlen) ||
	    get_time(p, "exp", &c->exp, err, errlen))
		goto out;
	if (strcmp(aud, TOKEN_AUDIENCE)) {
		snprintf(err, errlen, "claims: aud: not \"%s\"", TOKEN_AUDIENCE);
		goto out;
	}
	if (claims_check(c, err, errlen))
		goto out;
	if (now + v->skew < c->iat) {
		snprintf(err, errlen, "not yet valid (iat %" PRId64 " is %" PRId64
			 " s ahead)", c->iat, c->iat - now);
		goto out;
	}
	if (now - v->skew >= c->exp) {
		snprintf(err, errlen, "expired %" PRId64 " s ago", now - c->exp);
		goto out;
	}
	if (v->revoked && v->revoked(c->jti, v->revoked_arg)) {
		snprintf(err, errlen, "revoked (jti %s)", c->jti);
		goto out;
	}
	ret = 0;
out:
	if (ret)
		memset(c, 0, sizeof(*c));
	EVP_MD_CTX_free(md);
	json_object_put(h);
	json_object_put(p);
	return ret;
}

/* "ADDR/LEN" of IPv6, LEN 0..128 in decimal without sign or leading zero. */
static bool prefix_parse(const char *s, struct in6_addr *a, unsigned int *len)
{
	const char *slash = strchr(s, '/');
	char addr[INET6_ADDRSTRLEN];
	size_t n;

	if (!slash || (size_t)(slash - s) >= sizeof(addr))
		return false;
	memcpy(addr, s, (size_t)(slash - s));
	addr[slash - s] = '\0';
	if (inet_pton(AF_INET6, addr, a) != 1)
		return false;
	n = strlen(slash + 1);
	if (!n || n > 3 || strspn(slash + 1, "0123456789") != n ||
	    (n > 1 && slash[1] == '0'))
		return false;
	*len = (unsigned int)atoi(slash + 1);
	return *len <= 128;
}

bool token_scope_allows(const char *scope, const char *prefix)
{
	struct in6_addr s, p;
	unsigned int sl, pl, full;

	if (!scope || !prefix)
		return false;
	if (!strcmp(scope, "*"))
		return true;
	if (!prefix_parse(scope, &s, &sl) || !prefix_parse(prefix, &p, &pl) ||
	    pl < sl)
		return false;
	full = sl / 8;
	if (memcmp(s.s6_addr, p.s6_addr, full))
		return false;
	if (sl % 8) {
		unsigned char mask = (unsigned char)(0xff << (8 - sl % 8));

		if ((s.s6_addr[full] ^ p.s6_addr[full]) & mask)
			return false;
	}
	return true;
}
