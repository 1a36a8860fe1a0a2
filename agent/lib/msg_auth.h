/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Type 3 of draft-yang-dmsc-distributed-model-04, service access
 * authentication (msg.h): an SR (or the gateway) asks the AAM for a token
 * on behalf of an MI or a client; the AAM answers with a token (token.h)
 * or a denial, and pushes the jtis it has revoked. One "op" and its keys:
 *
 *   "request":  "sub": WHO, "scope": PREFIX | "*", "lifetime_s": 1..3600
 *   "token":    "re": SEQ, "token": JWT      the request of seq SEQ granted
 *   "denied":   "re": SEQ, "reason": TEXT    ... refused, and why
 *   "revoked":  "revoked": [ { "jti": HEX32, "exp": T }, ... ]
 *               the AAM's whole list, on connect and after each change;
 *               T is the token's expiry (Unix seconds): a verifier drops
 *               the entry after it, when the token is dead anyway
 *
 * "re" is the "seq" of the request's header: an SR may have several
 * requests out at once. Strict like every type: a key of another op is
 * refused naming it; sub and scope are printable ASCII without spaces
 * (token.h's claims); at most AUTH_REVOKED_MAX jtis, each once.
 */
#ifndef DMSC_MSG_AUTH_H
#define DMSC_MSG_AUTH_H

#include <stdint.h>

#include "msg.h"
#include "token.h"

enum { MSG_AUTH = 3 };

#define AUTH_REVOKED_MAX	4096
#define AUTH_REASON_MAX		160
/* the largest exp a verifier takes: year 9999, far from int64 overflow */
#define AUTH_EXP_MAX		253402300799LL
#define AUTH_MAX_LEN		(256u << 10)

enum auth_op { AUTH_REQUEST, AUTH_TOKEN, AUTH_DENIED, AUTH_REVOKED };

struct auth_revoked {
	char jti[TOKEN_JTI_LEN + 1];
	int64_t exp;
};

struct msg_auth {
	enum auth_op op;
	/* request */
	char sub[TOKEN_SUB_MAX];
	char scope[TOKEN_SUB_MAX];
	uint64_t lifetime_s;
	/* token, denied */
	uint64_t re;
	char token[TOKEN_MAX_LEN + 1];
	char reason[AUTH_REASON_MAX];
	/* revoked: malloc()ed */
	struct auth_revoked *revoked;
	size_t nrevoked;
};

extern const struct msg_type msg_auth_type;

const char *msg_auth_op_name(enum auth_op op);

#endif /* DMSC_MSG_AUTH_H */
