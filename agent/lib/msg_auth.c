// SPDX-License-Identifier: GPL-2.0
/*
 * Type 3, service access authentication (msg_auth.h): its JSON form both
 * ways.
 */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "msg_auth.h"

static const char *const op_names[] = { "request", "token", "denied", "revoked" };

static const char *const auth_keys[] = {
	"op", "sub", "scope", "lifetime_s", "re", "token", "reason", "revoked",
	NULL,
};
static const char *const revoked_keys[] = { "jti", "exp", NULL };

/* the keys each op takes, besides "op" */
static const char *const op_keys[][4] = {
	[AUTH_REQUEST] = { "sub", "scope", "lifetime_s" },
	[AUTH_TOKEN] = { "re", "token" },
	[AUTH_DENIED] = { "re", "reason" },
	[AUTH_REVOKED] = { "revoked" },
};

const char *msg_auth_op_name(enum auth_op op)
{
	return op <= AUTH_REVOKED ? op_names[op] : "?";
}

/* Printable ASCII without spaces: a claim of token.h. */
static int text_ok(const char *s)
{
	for (; *s; s++)
		if (*s <= ' ' || *s > '~')
			return 0;
	return 1;
}

static int jti_ok(const char *s)
{
	return strlen(s) == TOKEN_JTI_LEN &&
	       strspn(s, "0123456789abcdef") == TOKEN_JTI_LEN;
}

static int take_of(enum auth_op op, const char *key)
{
	for (size_t i = 0; i < 4 && op_keys[op][i]; i++)
		if (!strcmp(op_keys[op][i], key))
			return 1;
	return 0;
}

static int get_text(struct json_object *root, const char *key, char *buf,
		    size_t size, char *err, size_t errlen)
{
	if (msg_get_string(root, "", key, buf, size, err, errlen))
		return -1;
	if (!text_ok(buf)) {
		snprintf(err, errlen, "%s: not printable ASCII without spaces", key);
		return -1;
	}
	return 0;
}

static const struct auth_revoked *sort_base;

static int by_jti(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int d = strcmp(sort_base[i].jti, sort_base[j].jti);

	return d ? d : (i > j) - (i < j);
}

/*
 * No jti twice, in O(n log n): the list comes from any authenticated peer
 * before its role is checked, and 4096 entries compared pairwise would be
 * 8 million strcmp() a frame. The error names the first entry (by index)
 * that repeats an earlier one.
 */
static int revoked_unique(const struct msg_auth *m, char *err, size_t errlen)
{
	size_t n = m->nrevoked, *idx, dup = SIZE_MAX;

	if (n < 2)
		return 0;
	idx = malloc(n * sizeof(*idx));
	if (!idx) {
		snprintf(err, errlen, "revoked: out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	sort_base = m->revoked;
	qsort(idx, n, sizeof(*idx), by_jti);
	for (size_t k = 1; k < n; k++)
		if (!strcmp(m->revoked[idx[k - 1]].jti, m->revoked[idx[k]].jti) &&
		    idx[k] < dup)
			dup = idx[k];
	free(idx);
	if (dup == SIZE_MAX)
		return 0;
	snprintf(err, errlen, "revoked[%zu].jti: %s given twice", dup,
		 m->revoked[dup].jti);
	return -1;
}

static int get_revoked(struct json_object *root, struct msg_auth *m, char *err,
		       size_t errlen)
{
	struct json_object *arr;
	size_t n;

	if (msg_get_array(root, "", "revoked", AUTH_REVOKED_MAX, &arr, err, errlen))
		return -1;
	n = json_object_array_length(arr);
	m->revoked = calloc(n ? n : 1, sizeof(*m->revoked));
	if (!m->revoked) {
		snprintf(err, errlen, "revoked: out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		struct auth_revoked *r = &m->revoked[i];
		char path[32];
		uint64_t exp;

		snprintf(path, sizeof(path), "revoked[%zu]", i);
		if (!json_object_is_type(e, json_type_object)) {
			snprintf(err, errlen, "%s: expected an object", path);
			return -1;
		}
		if (msg_keys_only(e, path, revoked_keys, NULL, err, errlen) ||
		    msg_get_string(e, path, "jti", r->jti, sizeof(r->jti), err,
				   errlen) ||
		    msg_get_u64(e, path, "exp", AUTH_EXP_MAX, &exp, err, errlen))
			return -1;
		if (!jti_ok(r->jti)) {
			snprintf(err, errlen, "%s.jti: not %d lowercase hex digits",
				 path, TOKEN_JTI_LEN);
			return -1;
		}
		r->exp = (int64_t)exp;
		m->nrevoked++;
	}
	return revoked_unique(m, err, errlen);
}

static int auth_decode(struct json_object *root, void *body, char *err,
		       size_t errlen)
{
	struct msg_auth *m = body;
	char op[16];
	int n = 0;

	if (msg_get_string(root, "", "op", op, sizeof(op), err, errlen))
		return -1;
	while (n <= AUTH_REVOKED && strcmp(op, op_names[n]))
		n++;
	if (n > AUTH_REVOKED) {
		snprintf(err, errlen, "op: \"%s\" is not request, token, denied or revoked",
			 op);
		return -1;
	}
	m->op = (enum auth_op)n;
	for (size_t k = 1; auth_keys[k]; k++)
		if (!take_of(m->op, auth_keys[k]) &&
		    json_object_object_get_ex(root, auth_keys[k], NULL)) {
			snprintf(err, errlen, "%s: not a field of op %s",
				 auth_keys[k], op);
			return -1;
		}
	switch (m->op) {
	case AUTH_REQUEST:
		return get_text(root, "sub", m->sub, sizeof(m->sub), err, errlen) ||
		       get_text(root, "scope", m->scope, sizeof(m->scope), err,
				errlen) ||
		       msg_get_u64(root, "", "lifetime_s", TOKEN_MAX_LIFETIME,
				   &m->lifetime_s, err, errlen) ? -1 :
		       !m->lifetime_s ? (snprintf(err, errlen, "lifetime_s: must be 1..%d",
						  TOKEN_MAX_LIFETIME), -1) : 0;
	case AUTH_TOKEN:
		/* token_verify() reads it; here only its size and charset */
		return msg_get_u64(root, "", "re", UINT64_MAX, &m->re, err, errlen) ||
		       get_text(root, "token", m->token, sizeof(m->token), err,
				errlen) ? -1 : 0;
	case AUTH_DENIED:
		return msg_get_u64(root, "", "re", UINT64_MAX, &m->re, err, errlen) ||
		       msg_get_string(root, "", "reason", m->reason,
				      sizeof(m->reason), err, errlen) ? -1 : 0;
	default:
		return get_revoked(root, m, err, errlen);
	}
}

static int auth_encode(struct json_object *root, const void *body, char *err,
		       size_t errlen)
{
	const struct msg_auth *m = body;
	struct json_object *arr;

	if (m->op > AUTH_REVOKED) {
		snprintf(err, errlen, "op: %d is no operation", (int)m->op);
		return -1;
	}
	json_object_object_add(root, "op", json_object_new_string(op_names[m->op]));
	switch (m->op) {
	case AUTH_REQUEST:
		if (!m->sub[0] || !text_ok(m->sub) || !m->scope[0] ||
		    !text_ok(m->scope) || !m->lifetime_s ||
		    m->lifetime_s > TOKEN_MAX_LIFETIME) {
			snprintf(err, errlen, "request: sub, scope or lifetime_s invalid");
			return -1;
		}
		json_object_object_add(root, "sub", json_object_new_string(m->sub));
		json_object_object_add(root, "scope", json_object_new_string(m->scope));
		json_object_object_add(root, "lifetime_s",
				       json_object_new_uint64(m->lifetime_s));
		return 0;
	case AUTH_TOKEN:
		if (!m->token[0] || !text_ok(m->token)) {
			snprintf(err, errlen, "token: empty or not printable");
			return -1;
		}
		json_object_object_add(root, "re", json_object_new_uint64(m->re));
		json_object_object_add(root, "token", json_object_new_string(m->token));
		return 0;
	case AUTH_DENIED:
		json_object_object_add(root, "re", json_object_new_uint64(m->re));
		json_object_object_add(root, "reason",
				       json_object_new_string(m->reason[0] ? m->reason : "denied"));
		return 0;
	default:
		if (m->nrevoked > AUTH_REVOKED_MAX) {
			snprintf(err, errlen, "revoked: more than %d", AUTH_REVOKED_MAX);
			return -1;
		}
		arr = json_object_new_array();
		json_object_object_add(root, "revoked", arr);
		for (size_t i = 0; i < m->nrevoked; i++) {
			struct json_object *e = json_object_new_object();

			json_object_object_add(e, "jti",
					       json_object_new_string(m->revoked[i].jti));
			json_object_object_add(e, "exp",
					       json_object_new_int64(m->revoked[i].exp));
			json_object_array_add(arr, e);
		}
		return 0;
	}
}

static void auth_free(void *body)
{
	struct msg_auth *m = body;

	free(m->revoked);
	m->revoked = NULL;
	m->nrevoked = 0;
}

const struct msg_type msg_auth_type = {
	.type = MSG_AUTH,
	.name = "access-authentication",
	.max_len = AUTH_MAX_LEN,
	.keys = auth_keys,
	.body_size = sizeof(struct msg_auth),
	.decode = auth_decode,
	.encode = auth_encode,
	.free = auth_free,
};
