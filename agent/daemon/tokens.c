// SPDX-License-Identifier: GPL-2.0
/*
 * The verifiers' side of type 3 (tokens.h): the AAM's public key, and
 * the revoked jtis as a sorted array searched by bsearch(), replaced
 * whole on each push (at most AUTH_REVOKED_MAX, a few hundred KiB).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/pem.h>

#include "agent.h"
#include "log.h"
#include "tokens.h"

struct agent_tokens {
	struct token_verifier v;
	struct auth_revoked *revoked;	/* sorted by jti */
	size_t nrevoked;
	int64_t first_exp;		/* the earliest exp in revoked */
	uint64_t pushes, checked;
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
	free(t);
	a->tokens = NULL;
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
	return token_verify(&t->v, tok, len, (int64_t)time(NULL), c, err, errlen);
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
	return o;
}
