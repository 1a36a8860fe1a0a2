// SPDX-License-Identifier: GPL-2.0
/*
 * The verifiers' side of type 3 (tokens.h): the AAM's public key, and
 * the revoked jtis as a sorted array searched by bsearch(), replaced
 * whole on each push (at most AUTH_REVOKED_MAX, a few hundred KiB).
 *
 * A client presents the same token with every request until it expires,
 * and the Ed25519 verification is most of a request's cost at the
 * gateway (110 us of 183). So tokens that passed are remembered by their
 * SHA-256, in a direct-mapped table of TOKEN_CACHE_SLOTS: a token seen
 * again costs a hash of its bytes, and what can change since it passed,
 * the clock and the revoked list, is checked again at each use exactly as
 * token_verify() checks it. A slot holds the last token that hashed to
 * it; a collision of slots costs a verification, not a wrong answer (the
 * whole digest is compared).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <inttypes.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <stdbool.h>

#include "agent.h"
#include "log.h"
#include "tokens.h"

#define TOKEN_CACHE_SLOTS	1024	/* about 420 KiB */

struct token_seen {
	unsigned char md[32];		/* SHA-256 of the token's bytes */
	bool used;
	struct token_claims c;		/* what it said when it passed */
};

struct agent_tokens {
	struct token_verifier v;
	struct auth_revoked *revoked;	/* sorted by jti */
	size_t nrevoked;
	int64_t first_exp;		/* the earliest exp in revoked */
	uint64_t pushes, checked;
	struct token_seen *seen;	/* TOKEN_CACHE_SLOTS; NULL: no cache */
	uint64_t seen_hits;
};

/* Drop the entries whose token is dead anyway; order is kept. */
static void prune(struct agent_tokens *t, int64_t now)
{
	size_t k = 0;

	if (!t->nrevoked || t->first_exp + t->v.skew >= now)
		return;
	t->first_exp = INT64_MAX;
	for (size_t i = 0; i < t->nrevoked; i++)
		if (t->revoked[i].exp + t->v.skew >= now) {
			t->revoked[k++] = t->revoked[i];
			if (t->revoked[i].exp < t->first_exp)
				t->first_exp = t->revoked[i].exp;
		}
	t->nrevoked = k;
}

static int cmp_jti(const void *a, const void *b)
{
	return strcmp(((const struct auth_revoked *)a)->jti,
		      ((const struct auth_revoked *)b)->jti);
}

static int is_revoked(const char *jti, void *arg)
{
	struct agent_tokens *t = arg;
	struct auth_revoked key;

	snprintf(key.jti, sizeof(key.jti), "%s", jti);
	return t->nrevoked && bsearch(&key, t->revoked, t->nrevoked,
				      sizeof(*t->revoked), cmp_jti) != NULL;
}

int agent_tokens_start(struct agent *a)
{
	const struct tokens_config *tc = &a->cfg.tokens;
	struct agent_tokens *t;
	EVP_PKEY *key;
	FILE *f;

	if (!tc->enabled)
		return 0;
	f = fopen(tc->aam_key, "re");
	if (!f) {
		agent_log("tokens.aam_key: %s: %s", tc->aam_key, strerror(errno));
		return -1;
	}
	key = PEM_read_PUBKEY(f, NULL, NULL, NULL);
	fclose(f);
	if (!key || EVP_PKEY_id(key) != EVP_PKEY_ED25519) {
		agent_log("tokens.aam_key: %s: not a PEM Ed25519 public key",
			  tc->aam_key);
		EVP_PKEY_free(key);
		return -1;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		EVP_PKEY_free(key);
		return -1;
	}
	t->v.key = key;
	t->v.kid = tc->kid[0] ? tc->kid : NULL;
	t->v.skew = tc->skew_s;
	t->v.revoked = is_revoked;
	t->v.revoked_arg = t;
	/* without it every token is verified: slower, not wrong */
	t->seen = calloc(TOKEN_CACHE_SLOTS, sizeof(*t->seen));
	a->tokens = t;
	agent_log("tokens: verifying with %s%s%s", tc->aam_key,
		  tc->kid[0] ? ", kid " : "", tc->kid);
	return 0;
}

void agent_tokens_stop(struct agent *a)
{
	struct agent_tokens *t = a->tokens;

	if (!t)
		return;
	EVP_PKEY_free(t->v.key);
	free(t->revoked);
	free(t->seen);
	free(t);
	a->tokens = NULL;
}

/*
 * token_verify() through the table of tokens that passed: a token found
 * there is checked again for what can have changed, the clock (iat, exp
 * with the skew) and revocation, with token_verify()'s words.
 */
static int check_seen(struct agent_tokens *t, const char *tok, size_t len,
		      int64_t now, struct token_claims *c, char *err,
		      size_t errlen)
{
	unsigned char md[32];
	struct token_seen *x;
	unsigned int mdlen;
	uint32_t slot;

	if (!EVP_Digest(tok, len, md, &mdlen, EVP_sha256(), NULL))
		return token_verify(&t->v, tok, len, now, c, err, errlen);
	memcpy(&slot, md, sizeof(slot));
	x = &t->seen[slot % TOKEN_CACHE_SLOTS];
	if (!x->used || memcmp(x->md, md, sizeof(md))) {
		if (token_verify(&t->v, tok, len, now, c, err, errlen))
			return -1;
		memcpy(x->md, md, sizeof(md));
		x->c = *c;
		x->used = true;
		return 0;
	}
	t->seen_hits++;
	if (now + t->v.skew < x->c.iat) {
		snprintf(err, errlen, "not yet valid (iat %" PRId64 " is %" PRId64
			 " s ahead)", x->c.iat, x->c.iat - now);
		return -1;
	}
	if (now - t->v.skew >= x->c.exp) {
		snprintf(err, errlen, "expired %" PRId64 " s ago", now - x->c.exp);
		x->used = false;	/* it will not pass again */
		return -1;
	}
	if (is_revoked(x->c.jti, t)) {
		snprintf(err, errlen, "revoked (jti %s)", x->c.jti);
		return -1;
	}
	*c = x->c;
	return 0;
}

int agent_token_check(struct agent *a, const char *tok, size_t len,
		      struct token_claims *c, char *err, size_t errlen)
{
	struct agent_tokens *t = a->tokens;

	if (!t) {
		snprintf(err, errlen, "no tokens section");
		return -1;
	}
	t->checked++;
	prune(t, (int64_t)time(NULL));
	return t->seen ? check_seen(t, tok, len, (int64_t)time(NULL), c, err, errlen) :
	       token_verify(&t->v, tok, len, (int64_t)time(NULL), c, err, errlen);
}

int agent_tokens_set_revoked(struct agent *a, const struct auth_revoked *r,
			     size_t n)
{
	struct agent_tokens *t = a->tokens;
	int64_t now = (int64_t)time(NULL);
	struct auth_revoked *keep;
	size_t k = 0;

	if (!t)
		return -1;
	keep = calloc(n ? n : 1, sizeof(*keep));
	if (!keep)
		return -1;
	/* a token past exp and the skew is refused as expired anyway */
	for (size_t i = 0; i < n; i++)
		if (r[i].exp + t->v.skew >= now)
			keep[k++] = r[i];
	qsort(keep, k, sizeof(*keep), cmp_jti);
	free(t->revoked);
	t->revoked = keep;
	t->nrevoked = k;
	t->first_exp = INT64_MAX;
	for (size_t i = 0; i < k; i++)
		if (keep[i].exp < t->first_exp)
			t->first_exp = keep[i].exp;
	t->pushes++;
	return 0;
}

struct json_object *agent_tokens_show(struct agent *a)
{
	struct agent_tokens *t = a->tokens;
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "enabled", json_object_new_boolean(t != NULL));
	if (!t)
		return o;
	prune(t, (int64_t)time(NULL));
	json_object_object_add(o, "kid", json_object_new_string(t->v.kid ? t->v.kid : "*"));
	json_object_object_add(o, "skew_s", json_object_new_int64(t->v.skew));
	json_object_object_add(o, "revoked", json_object_new_uint64(t->nrevoked));
	json_object_object_add(o, "revoked_pushes", json_object_new_uint64(t->pushes));
	json_object_object_add(o, "checked", json_object_new_uint64(t->checked));
	json_object_object_add(o, "cache_hits", json_object_new_uint64(t->seen_hits));
	return o;
}
