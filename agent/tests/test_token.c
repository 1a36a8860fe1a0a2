// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the service access tokens (token.c). Each refused token is
 * a valid one with one thing changed, and the error must say what. The
 * tokens are also checked against an independent JWT implementation,
 * Debian's PyJWT with python3-cryptography, both ways: it verifies ours,
 * we verify its.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "token.h"
#include "tests/ktap.h"

#define NOW	1764000000

static char err[256];
static EVP_PKEY *key, *other;

static EVP_PKEY *ed25519(void)
{
	EVP_PKEY *k = NULL;
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);

	if (!c || EVP_PKEY_keygen_init(c) != 1 || EVP_PKEY_keygen(c, &k) != 1)
		abort();
	EVP_PKEY_CTX_free(c);
	return k;
}

static void claims(struct token_claims *c)
{
	memset(c, 0, sizeof(*c));
	strcpy(c->iss, "ctl");
	strcpy(c->sub, "mi-llama-stage3");
	strcpy(c->node, "pe1");
	strcpy(c->scope, "2001:db8:100::/48");
	c->iat = NOW;
	c->exp = NOW + 600;
}

static char *sign(struct token_claims *c)
{
	char *t;

	if (token_sign(key, "aam-1", c, &t, err, sizeof(err)))
		return NULL;
	return t;
}

static struct token_verifier ver;

static int verify(const char *t, int64_t now)
{
	struct token_claims c;

	err[0] = '\0';
	return token_verify(&ver, t, strlen(t), now, &c, err, sizeof(err));
}

/* Does @t verify with an error containing @want? */
static int refused(const char *t, const char *want)
{
	if (!verify(t, NOW + 1))
		return 0;
	if (!strstr(err, want)) {
		printf("# error \"%s\" lacks \"%s\"\n", err, want);
		return 0;
	}
	return 1;
}

static const char *revoked_jti;

static int is_revoked(const char *jti, void *arg)
{
	(void)arg;
	return revoked_jti && !strcmp(jti, revoked_jti);
}

/* base64url of @s, for hand-made tokens */
static void b64(const char *s, char *o)
{
	static const char a[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	size_t n = strlen(s), i, k = 0;

	for (i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)s[i] << 16;

		v |= i + 1 < n ? (unsigned char)s[i + 1] << 8 : 0;
		v |= i + 2 < n ? (unsigned char)s[i + 2] : 0;
		o[k++] = a[v >> 18];
		o[k++] = a[(v >> 12) & 63];
		if (i + 1 < n)
			o[k++] = a[(v >> 6) & 63];
		if (i + 2 < n)
			o[k++] = a[v & 63];
	}
	o[k] = '\0';
}

/* header.claims of the given JSON texts, signed with @k. */
static char *handmade(const char *hdr, const char *body, EVP_PKEY *k)
{
	static const char a[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	unsigned char sig[64];
	size_t siglen = sizeof(sig), n, i;
	char *t = malloc(4096);
	EVP_MD_CTX *md = EVP_MD_CTX_new();

	b64(hdr, t);
	strcat(t, ".");
	b64(body, t + strlen(t));
	n = strlen(t);
	if (EVP_DigestSignInit(md, NULL, NULL, NULL, k) != 1 ||
	    EVP_DigestSign(md, sig, &siglen, (unsigned char *)t, n) != 1)
		abort();
	EVP_MD_CTX_free(md);
	t[n++] = '.';
	for (i = 0; i < 63; i += 3) {
		unsigned v = sig[i] << 16 | sig[i + 1] << 8 | sig[i + 2];

		t[n++] = a[v >> 18];
		t[n++] = a[(v >> 12) & 63];
		t[n++] = a[(v >> 6) & 63];
		t[n++] = a[v & 63];
	}
	t[n++] = a[sig[63] >> 2];
	t[n++] = a[(sig[63] & 3) << 4];
	t[n] = '\0';
	return t;
}

#define HDR "{\"alg\":\"EdDSA\",\"typ\":\"JWT\",\"kid\":\"aam-1\"}"
#define BODY(extra) "{\"iss\":\"ctl\",\"sub\":\"mi\",\"aud\":\"dmsc\",\"node\":\"pe1\"," \
	"\"scope\":\"svc\",\"iat\":1764000000,\"exp\":1764000600," extra \
	"\"jti\":\"00112233445566778899aabbccddeeff\"}"

static int interop(void)
{
	char dir[] = "/tmp/dmsc-token.XXXXXX", path[256], cmd[1536], line[2048];
	struct token_claims c;
	FILE *f;
	char *t;
	int ok;

	if (!mkdtemp(dir))
		return 0;
	snprintf(path, sizeof(path), "%s/key.pem", dir);
	f = fopen(path, "w");
	PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL);
	fclose(f);

	/* ours, read by PyJWT with the public key, audience and expiry checked */
	claims(&c);
	c.iat = time(NULL);
	c.exp = c.iat + 300;
	t = sign(&c);
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 -c 'import jwt,sys\n"
		 "from cryptography.hazmat.primitives import serialization as s\n"
		 "k=s.load_pem_private_key(open(\"%s\",\"rb\").read(),None).public_key()\n"
		 "c=jwt.decode(sys.argv[1],k,algorithms=[\"EdDSA\"],audience=\"dmsc\")\n"
		 "h=jwt.get_unverified_header(sys.argv[1])\n"
		 "print(h[\"kid\"],c[\"sub\"],c[\"node\"],c[\"scope\"],c[\"exp\"]-c[\"iat\"])\n"
		 "print(jwt.encode({\"iss\":\"ctl\",\"sub\":\"py\",\"aud\":\"dmsc\",\"node\":\"pe2\","
		 "\"scope\":\"svc\",\"iat\":c[\"iat\"],\"exp\":c[\"iat\"]+60,\"jti\":\"ab\"*16},"
		 "open(\"%s\",\"rb\").read(),algorithm=\"EdDSA\",headers={\"kid\":\"aam-1\"}))' '%s'",
		 path, path, t ? t : "");
	free(t);
	f = popen(cmd, "r");
	ok = f && fgets(line, sizeof(line), f) &&
	     !strcmp(line, "aam-1 mi-llama-stage3 pe1 2001:db8:100::/48 300\n");
	if (!ok)
		printf("# PyJWT read our token as: %s", f ? line : "(no python)\n");
	/* PyJWT's, read by us */
	if (ok && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		ok = !token_verify(&ver, line, strlen(line), time(NULL) + 1, &c,
				   err, sizeof(err)) &&
		     !strcmp(c.sub, "py") && !strcmp(c.node, "pe2") &&
		     c.exp - c.iat == 60;
		if (!ok)
			printf("# PyJWT's token refused: %s\n", err);
	} else {
		ok = 0;
	}
	if (f)
		pclose(f);
	unlink(path);
	rmdir(dir);
	return ok;
}

int main(void)
{
	struct token_claims c, got;
	char *t, *u, hb[512], tok[4096];
	size_t n;
	int i, ok;

	key = ed25519();
	other = ed25519();
	ver.key = key;
	ver.kid = "aam-1";
	ver.skew = 30;
	ver.revoked = is_revoked;

	ktap_plan(24);

	claims(&c);
	t = sign(&c);
	ok = t && !token_verify(&ver, t, strlen(t), NOW + 10, &got, err, sizeof(err)) &&
	     !strcmp(got.sub, c.sub) && !strcmp(got.node, "pe1") &&
	     !strcmp(got.scope, c.scope) && got.iat == NOW && got.exp == NOW + 600 &&
	     strlen(got.jti) == 32 && !strcmp(got.jti, c.jti);
	ktap_check(ok, "a signed token verifies and gives back its claims, with a fresh jti");

	claims(&c);
	u = sign(&c);
	ktap_check(u && strcmp(c.jti, got.jti), "two tokens get two jtis");
	free(u);

	ktap_check(refused(t, "") == 0 && !verify(t, NOW + 599 + 30),
		   "valid until exp, with the allowed clock skew");
	ktap_check(verify(t, NOW + 600 + 30) && strstr(err, "expired"),
		   "refused once expired (beyond the skew): \"expired\"");
	ktap_check(verify(t, NOW - 31) && strstr(err, "not yet valid"),
		   "refused before iat (beyond the skew): \"not yet valid\"");

	revoked_jti = got.jti;
	ktap_check(refused(t, "revoked"), "a revoked jti is refused");
	revoked_jti = NULL;

	/* every byte flipped in the signed part or the signature is caught */
	ok = 1;
	n = strlen(t);
	for (i = 0; i < (int)n && ok; i++) {
		char save = t[i];

		if (t[i] == '.')
			continue;
		t[i] = t[i] == 'A' ? 'B' : 'A';
		ok = verify(t, NOW + 1) != 0;
		t[i] = save;
	}
	ktap_check(ok, "a change to any character of the token is refused");
	ktap_check(refused(t, "") == 0, "the original still verifies after the flips");

	ver.key = other;
	ktap_check(refused(t, "bad signature"), "another key's verifier: \"bad signature\"");
	ver.key = key;
	ver.kid = "aam-2";
	ktap_check(refused(t, "kid"), "a token for another key id is refused naming kid");
	ver.kid = "aam-1";

	u = handmade("{\"alg\":\"none\",\"typ\":\"JWT\",\"kid\":\"aam-1\"}", BODY(""), key);
	ktap_check(refused(u, "alg: \"none\", only EdDSA"), "alg none is refused");
	free(u);

	u = handmade(HDR, BODY("\"role\":\"admin\","), key);
	ktap_check(refused(u, "claims: role: unknown key"), "an unknown claim is refused naming it");
	free(u);

	u = handmade(HDR, BODY("\"sub\":\"other\","), key);
	ktap_check(refused(u, "sub") && strstr(err, "duplicate key \"sub\""),
		   "a repeated claim is refused (one token, one reading)");
	free(u);

	u = handmade(HDR, "{\"iss\":\"ctl\",\"sub\":\"mi\",\"aud\":\"dmsc\",\"node\":\"pe1\","
		     "\"scope\":\"svc\",\"iat\":1764000000,\"exp\":1764007200,"
		     "\"jti\":\"00112233445566778899aabbccddeeff\"}", key);
	ktap_check(refused(u, "lifetime above 3600 s"), "a lifetime above an hour is refused");
	free(u);

	u = handmade(HDR, "{\"iss\":\"ctl\",\"sub\":\"mi\",\"aud\":\"web\",\"node\":\"pe1\","
		     "\"scope\":\"svc\",\"iat\":1764000000,\"exp\":1764000600,"
		     "\"jti\":\"00112233445566778899aabbccddeeff\"}", key);
	ktap_check(refused(u, "aud"), "another audience is refused");
	free(u);

	u = handmade(HDR, "{\"iss\":\"ctl\",\"sub\":\"mi\",\"aud\":\"dmsc\",\"node\":\"pe1\","
		     "\"scope\":\"svc\",\"iat\":\"1764000000\",\"exp\":1764000600,"
		     "\"jti\":\"00112233445566778899aabbccddeeff\"}", key);
	ktap_check(refused(u, "claims: iat: not an integer"), "a time as a string is refused");
	free(u);

	/* padding, a non-canonical last character, garbage */
	snprintf(tok, sizeof(tok), "%s=", t);
	ok = refused(tok, "signature");
	snprintf(tok, sizeof(tok), "%s", t);
	n = strlen(tok);
	/* the last character of 64 bytes carries 2 bits: set an unused one */
	tok[n - 1] = tok[n - 1] == '-' ? '_' : tok[n - 1] == 'z' ? '0' :
		     tok[n - 1] == '9' ? '-' : tok[n - 1] + 1;
	ok = ok && refused(tok, "");
	ok = ok && refused("a.b", "three") && refused("a.b.c.d", "three") &&
	     refused("..", "header");
	b64("{\"alg\":\"EdDSA\"", hb);
	snprintf(tok, sizeof(tok), "%s.e30.AAAA", hb);
	ok = ok && refused(tok, "header");
	ktap_check(ok, "padding, non-canonical base64url and malformed tokens are refused");

	/*
	 * A header read before the signature: its key (a line break in it),
	 * its alg and its kid reach the error, and the log, as printable
	 * text only, so no one forges a log line through them.
	 */
	b64("{\"a\\nFAKE dmsc-agent: forged\": nan}", hb);
	snprintf(tok, sizeof(tok), "%s.e30.AAAA", hb);
	ok = refused(tok, "header") && !strchr(err, '\n');
	b64("{\"alg\":\"x\\ny\",\"typ\":\"JWT\",\"kid\":\"aam-1\"}", hb);
	snprintf(tok, sizeof(tok), "%s.e30.AAAA", hb);
	ok = ok && refused(tok, "alg") && !strchr(err, '\n');
	if (!ok)
		printf("# %s\n", err);
	ktap_check(ok, "a header's text in the error is printable only (no line break to forge a log line)");

	memset(tok, 'A', sizeof(tok) - 1);
	tok[sizeof(tok) - 1] = '\0';
	ktap_check(refused(tok, "above 2048"), "a token above 2048 bytes is refused before parsing");

	claims(&c);
	strcpy(c.node, "PE_1");
	ok = token_sign(key, "aam-1", &c, &u, err, sizeof(err)) && strstr(err, "node");
	claims(&c);
	c.exp = c.iat;
	ok = ok && token_sign(key, "aam-1", &c, &u, err, sizeof(err)) && strstr(err, "exp");
	ok = ok && token_sign(key, "bad kid", &c, &u, err, sizeof(err)) && strstr(err, "kid");
	ktap_check(ok, "signing refuses bad claims naming the field");

	ktap_check(interop(), "PyJWT verifies our token and we verify PyJWT's (EdDSA)");

	/* the scope rule (shared-iface: token_scope_allows) */
	ok = token_scope_allows("2001:db8:100::/48", "2001:db8:100:5::/64") &&
	     token_scope_allows("2001:db8:100::/48", "2001:db8:100::/48") &&
	     token_scope_allows("2001:db8:100::/47", "2001:db8:101::/48") &&
	     token_scope_allows("::/0", "fc00::/7") &&
	     token_scope_allows("fc00:1::a1/128", "fc00:1::a1/128") &&
	     token_scope_allows("*", "anything") &&
	     token_scope_allows("2001:db8::/29", "2001:db8:7::/48");
	ktap_check(ok, "scope: a prefix inside the scope, the scope itself and * are allowed");
	ok = !token_scope_allows("2001:db8:100::/48", "2001:db8:101::/64") &&
	     !token_scope_allows("2001:db8:100::/48", "2001:db8::/32") &&
	     !token_scope_allows("2001:db8:100::/47", "2001:db8:102::/48") &&
	     !token_scope_allows("2001:db8::/29", "2001:db0::/48") &&
	     !token_scope_allows("fc00:1::a1/128", "fc00:1::a2/128");
	ktap_check(ok, "scope: a prefix outside, shorter, or differing in the last bits is refused");
	ok = !token_scope_allows("svc", "2001:db8::/64") &&
	     !token_scope_allows("2001:db8::/129", "2001:db8::/130") &&
	     !token_scope_allows("2001:db8::/48", "2001:db8::") &&
	     !token_scope_allows("2001:db8::/048", "2001:db8::/64") &&
	     !token_scope_allows("2001:db8::/+48", "2001:db8::/64") &&
	     !token_scope_allows("10.0.0.0/8", "10.1.0.0/16") &&
	     !token_scope_allows("2001:db8::/", "2001:db8::/64") &&
	     !token_scope_allows("2001:db8::/48", "2001:db8::/64x") &&
	     !token_scope_allows("", "") && !token_scope_allows(NULL, "::/0") &&
	     !token_scope_allows("*x", "::/0");
	ktap_check(ok, "scope: what does not parse (names, IPv4, bad lengths) allows nothing");

	free(t);
	EVP_PKEY_free(key);
	EVP_PKEY_free(other);
	return ktap_finish();
}
