/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Service access tokens (signalling type 3 of
 * draft-yang-dmsc-distributed-model-04): the AAM signs a short-lived token
 * for a microservice instance or a client that passed its check, and SRs
 * and the gateway verify it offline with the AAM's public key, without a
 * round trip to the AAM.
 *
 * A token is a JSON Web Token (RFC 7519) in compact form, signed with
 * Ed25519 ("alg": "EdDSA", RFC 8037), so standard tools read it:
 *
 *   base64url({"alg":"EdDSA","typ":"JWT","kid":K}) "."
 *   base64url({"iss":AAM,"sub":WHO,"aud":"dmsc","node":N,"scope":S,
 *              "iat":T0,"exp":T1,"jti":ID}) "." base64url(signature)
 *
 * Verification is strict, because the verifier faces the network: the
 * header must say EdDSA (no "none", no algorithm chosen by the token), the
 * base64url must be canonical, both JSON objects are read by the strict
 * reader (a repeated key is an error) and hold exactly the keys above, the
 * lifetime is at most TOKEN_MAX_LIFETIME, and a revoked jti is refused.
 */
#ifndef DMSC_TOKEN_H
#define DMSC_TOKEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <openssl/evp.h>

#define TOKEN_MAX_LEN		2048	/* bytes of the compact form */
#define TOKEN_MAX_LIFETIME	3600	/* seconds from iat to exp */
#define TOKEN_NAME_MAX		64	/* iss, node, kid, with the NUL */
#define TOKEN_SUB_MAX		128	/* sub, scope, with the NUL */
#define TOKEN_JTI_LEN		32	/* hex digits of 128 random bits */
#define TOKEN_AUDIENCE		"dmsc"

struct token_claims {
	char iss[TOKEN_NAME_MAX];	/* the AAM node that signed */
	char sub[TOKEN_SUB_MAX];	/* the instance or client */
	char node[TOKEN_NAME_MAX];	/* the node it may act on */
	char scope[TOKEN_SUB_MAX];	/* service prefix it may reach */
	int64_t iat, exp;		/* seconds since the epoch */
	char jti[TOKEN_JTI_LEN + 1];	/* unique id, for revocation */
};

/* Is the token with this jti revoked? Non-zero if so. */
typedef int (*token_revoked_fn)(const char *jti, void *arg);

struct token_verifier {
	EVP_PKEY *key;		/* the AAM's Ed25519 public key */
	const char *kid;	/* the key's id; NULL accepts any kid */
	int64_t skew;		/* seconds of clock difference tolerated */
	token_revoked_fn revoked;	/* NULL: nothing is revoked */
	void *revoked_arg;
};

/*
 * Sign @c with the Ed25519 private @key under key id @kid. Fills @c->jti
 * with a fresh random id if it is empty. The token is malloc()ed into
 * *@out. -1 with the reason in @err if a claim is invalid (the field is
 * named) or signing fails.
 */
int token_sign(EVP_PKEY *key, const char *kid, struct token_claims *c,
	       char **out, char *err, size_t errlen);

/*
 * Verify @len bytes of @tok at time @now. 0 and the claims in @c, or -1
 * with the reason in @err ("expired", "bad signature", "claims: scope:
 * missing", ...).
 */
int token_verify(const struct token_verifier *v, const char *tok, size_t len,
		 int64_t now, struct token_claims *c, char *err,
		 size_t errlen);

/*
 * Does a token's @scope allow access to the service prefix @prefix? Both
 * are IPv6 prefixes "ADDR/LEN" (registry.md), or @scope is "*", which
 * allows everything. @prefix must lie inside @scope: its length at least
 * the scope's, and its address equal to the scope's in the scope's first
 * LEN bits. A scope or prefix that does not parse allows nothing.
 */
bool token_scope_allows(const char *scope, const char *prefix);

#endif /* DMSC_TOKEN_H */
