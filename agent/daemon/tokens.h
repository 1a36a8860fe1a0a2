/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The daemon's check of service access tokens (type 3, lib/token.h) with
 * the AAM's public key of the configuration's "tokens" section: offline,
 * for the roles that verify tokens (mg, sr).
 */
#ifndef DMSC_TOKENS_H
#define DMSC_TOKENS_H

#include <stddef.h>

#include "token.h"

struct agent;

/* Load the verifier of a->cfg.tokens at start; 0 or -1 (logged). Nothing if !enabled. */
int agent_tokens_start(struct agent *a);
void agent_tokens_stop(struct agent *a);
/*
 * Verify a service access token offline: signature, claims, expiry (with
 * skew), revocation (the AAM's pushed list; the aam-role branch adds it).
 * 0 with the claims in @c; -1 with the reason in @err ("no tokens
 * section", "expired", "bad signature", "revoked", ...).
 */
int agent_token_check(struct agent *a, const char *tok, size_t len,
		      struct token_claims *c, char *err, size_t errlen);

#endif /* DMSC_TOKENS_H */
