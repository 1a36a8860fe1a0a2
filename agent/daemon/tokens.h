/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The offline check of service access tokens (type 3, token.h) by the
 * roles that guard access: sr and mg. The AAM's public key and the kid
 * come from the "tokens" section; the jtis the AAM revoked come from its
 * "revoked" pushes (msg_auth.h), which replace the set whole, and are
 * kept until the token's exp (and the skew) has passed, when the token is
 * refused as expired anyway.
 */
#ifndef DMSC_TOKENS_H
#define DMSC_TOKENS_H

#include <stddef.h>
#include <json-c/json.h>

#include "msg_auth.h"
#include "token.h"

struct agent;

/* Load the verifier of a->cfg.tokens at start; 0 or -1 (logged). Nothing if !enabled. */
int agent_tokens_start(struct agent *a);
void agent_tokens_stop(struct agent *a);

/*
 * Verify a service access token offline: signature, claims, expiry (with
 * skew), revocation (the AAM's pushed list). 0 with the claims in @c; -1
 * with the reason in @err ("no tokens section", "expired", "bad
 * signature", "revoked", ...).
 */
int agent_token_check(struct agent *a, const char *tok, size_t len,
		      struct token_claims *c, char *err, size_t errlen);

/*
 * The AAM's list, whole (a push, or the AAM of this agent): replaces the
 * revoked set. Entries past their exp are left out. -1 if there is no
 * tokens section (nothing to keep it for) or no memory.
 */
int agent_tokens_set_revoked(struct agent *a, const struct auth_revoked *r,
			     size_t n);
/* { "kid", "skew_s", "revoked": N, "revoked_pushes": N, "checked": N, "cache_hits": N } */
struct json_object *agent_tokens_show(struct agent *a);

#endif /* DMSC_TOKENS_H */
