// SPDX-License-Identifier: GPL-2.0
/*
 * tokens.h: the AAM's Ed25519 public key, loaded once at start (a PEM
 * file, tokens.aam_key), and the offline check of a token with it.
 * Minimal: nothing is revoked here (the aam role's list is not read).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/err.h>
#include <openssl/pem.h>

#include "agent.h"
#include "log.h"
#include "tokens.h"

struct agent_tokens {
	struct token_verifier v;
};

int agent_tokens_start(struct agent *a)
{
	const struct tokens_config *tc = &a->cfg.tokens;
	struct agent_tokens *t;
	EVP_PKEY *k;
	FILE *f;

	if (!tc->enabled)
		return 0;
	f = fopen(tc->aam_key, "r");
	if (!f) {
		agent_log("tokens.aam_key: %s: %m", tc->aam_key);
		return -1;
	}
	k = PEM_read_PUBKEY(f, NULL, NULL, NULL);
	fclose(f);
	if (!k || EVP_PKEY_id(k) != EVP_PKEY_ED25519) {
		agent_log("tokens.aam_key: %s: %s", tc->aam_key,
			  k ? "not an Ed25519 key" : "no PEM public key");
		EVP_PKEY_free(k);
		ERR_clear_error();
		return -1;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		EVP_PKEY_free(k);
		return -1;
	}
	t->v.key = k;
	t->v.kid = tc->kid[0] ? tc->kid : NULL;
	t->v.skew = tc->skew_s;
	a->tokens = t;
	agent_log("tokens: verifying with the AAM's key %s%s%s", tc->aam_key,
		  tc->kid[0] ? ", kid " : "", tc->kid);
	return 0;
}

void agent_tokens_stop(struct agent *a)
{
	if (!a->tokens)
		return;
	EVP_PKEY_free(a->tokens->v.key);
	free(a->tokens);
	a->tokens = NULL;
}

int agent_token_check(struct agent *a, const char *tok, size_t len,
		      struct token_claims *c, char *err, size_t errlen)
{
	if (!a->tokens) {
		snprintf(err, errlen, "no tokens section");
		return -1;
	}
	/* the wall clock: exp and iat are seconds since the epoch */
	return token_verify(&a->tokens->v, tok, len, (int64_t)time(NULL), c,
			    err, errlen);
}
