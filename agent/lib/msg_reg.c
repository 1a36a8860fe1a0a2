// SPDX-License-Identifier: GPL-2.0
/* Types 1 and 2 (msg_reg.h): their JSON form both ways. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "msg_reg.h"

static const char *const op_names[] = {
	[REG_REGISTER] = "register", [REG_RENEW] = "renew",
	[REG_DEREGISTER] = "deregister", [REG_SYNC] = "sync",
	[REG_DIGEST] = "digest",
};
static const char *const reg_keys[] = {
	"op", "instance", "id", "since", "rev", "sha256", NULL,
};
static const char *const inst_keys[] = {
	"id", "node", "sid", "prefix", "rtype", "capability", "state",
	"ttl_ms", NULL,
};
static const char *const routes_keys[] = {
	"rev", "prev", "full", "routes", "withdrawn", NULL,
};

const char *msg_reg_op_name(enum reg_op op)
{
	return op <= REG_DIGEST ? op_names[op] : "?";
}

static int by_id(const void *a, const void *b)
{
	return strcmp((*(const struct msg_instance *const *)a)->id,
		      (*(const struct msg_instance *const *)b)->id);
}

int msg_routes_digest(const struct msg_instance *routes, size_t n,
		      char hex[MSG_DIGEST_HEX])
{
	const struct msg_instance **v = malloc((n + 1) * sizeof(*v));
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	int ok;

	ok = v && ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	for (size_t i = 0; ok && i < n; i++)
		v[i] = &routes[i];
	if (ok && n)
		qsort(v, n, sizeof(*v), by_id);
	for (size_t i = 0; ok && i < n; i++) {
		const struct msg_instance *x = v[i];
		char cap[16], ttl[16];
		const char *f[] = { x->id, x->node, x->sid, x->prefix, x->rtype,
				    cap, x->state, ttl };

		snprintf(cap, sizeof(cap), "%u", x->capability);
		snprintf(ttl, sizeof(ttl), "%u", x->ttl_ms);
		for (size_t k = 0; ok && k < sizeof(f) / sizeof(*f); k++)
			ok = EVP_DigestUpdate(ctx, f[k], strlen(f[k]) + 1);
	}
	ok = ok && EVP_DigestFinal_ex(ctx, md, &mdlen) && mdlen == 32;
	for (unsigned int i = 0; ok && i < mdlen; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	EVP_MD_CTX_free(ctx);
	free(v);
	return ok ? 0 : -1;
}

/* "sha256": 64 lowercase hex digits. */
static int get_sha256(struct json_object *root, char out[MSG_DIGEST_HEX],
		      char *err, size_t errlen)
{
	if (msg_get_string(root, "", "sha256", out, MSG_DIGEST_HEX, err, errlen))
		return -1;
	if (strlen(out) != MSG_DIGEST_HEX - 1 ||
	    strspn(out, "0123456789abcdef") != MSG_DIGEST_HEX - 1) {
		snprintf(err, errlen, "sha256: expected %d lowercase hex digits",
			 MSG_DIGEST_HEX - 1);
		return -1;
	}
	return 0;
}

/* An instance as types 1 and 2 carry it; the sr role shows it the same. */
struct json_object *msg_instance_json(const struct msg_instance *i)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "id", json_object_new_string(i->id));
	json_object_object_add(o, "node", json_object_new_string(i->node));
	json_object_object_add(o, "sid", json_object_new_string(i->sid));
	json_object_object_add(o, "prefix", json_object_new_string(i->prefix));
	json_object_object_add(o, "rtype", json_object_new_string(i->rtype));
	json_object_object_add(o, "capability",
			       json_object_new_uint64(i->capability));
	json_object_object_add(o, "state", json_object_new_string(i->state));
	json_object_object_add(o, "ttl_ms", json_object_new_uint64(i->ttl_ms));
	return o;
}

/* The codec checks form; the registry checks meaning (srd_instance_check). */
static int inst_get(struct json_object *o, const char *path,
		    struct msg_instance *i, char *err, size_t errlen)
{
	uint64_t v;

	if (!json_object_is_type(o, json_type_object)) {
		snprintf(err, errlen, "%s: expected an object", path);
		return -1;
	}
	if (msg_keys_only(o, path, inst_keys, NULL, err, errlen) ||
	    msg_get_string(o, path, "id", i->id, sizeof(i->id), err, errlen) ||
	    msg_get_string(o, path, "node", i->node, sizeof(i->node), err, errlen) ||
	    msg_get_string(o, path, "sid", i->sid, sizeof(i->sid), err, errlen) ||
	    msg_get_string(o, path, "prefix", i->prefix, sizeof(i->prefix), err,
			   errlen) ||
	    msg_get_string(o, path, "rtype", i->rtype, sizeof(i->rtype), err,
			   errlen) ||
	    msg_get_u64(o, path, "capability", UINT32_MAX, &v, err, errlen))
		return -1;
	i->capability = (uint32_t)v;
	if (msg_get_string(o, path, "state", i->state, sizeof(i->state), err,
			   errlen) ||
	    msg_get_u64(o, path, "ttl_ms", UINT32_MAX, &v, err, errlen))
		return -1;
	i->ttl_ms = (uint32_t)v;
	return 0;
}

static int reg_encode(struct json_object *root, const void *body, char *err,
		      size_t errlen)
{
	const struct msg_reg *r = body;

	if (r->op > REG_DIGEST) {
		snprintf(err, errlen, "op: %d is no operation", (int)r->op);
		return -1;
	}
	json_object_object_add(root, "op", json_object_new_string(op_names[r->op]));
	if (r->op == REG_REGISTER) {
		json_object_object_add(root, "instance", msg_instance_json(&r->inst));
	} else if (r->op == REG_SYNC) {
		json_object_object_add(root, "since", json_object_new_uint64(r->since));
	} else if (r->op == REG_DIGEST) {
		if (strlen(r->sha256) != MSG_DIGEST_HEX - 1) {
			snprintf(err, errlen, "sha256: expected %d hex digits",
				 MSG_DIGEST_HEX - 1);
			return -1;
		}
		json_object_object_add(root, "rev", json_object_new_uint64(r->rev));
		json_object_object_add(root, "sha256", json_object_new_string(r->sha256));
	} else
		json_object_object_add(root, "id", json_object_new_string(r->id));
	return 0;
}

static int reg_decode(struct json_object *root, void *body, char *err,
		      size_t errlen)
{
	/* the keys each op takes, besides "op" */
	static const char *const op_keys[][3] = {
		[REG_REGISTER] = { "instance" }, [REG_RENEW] = { "id" },
		[REG_DEREGISTER] = { "id" }, [REG_SYNC] = { "since" },
		[REG_DIGEST] = { "rev", "sha256" },
	};
	struct msg_reg *r = body;
	struct json_object *o;
	char op[16];
	int n = 0;

	if (msg_get_string(root, "", "op", op, sizeof(op), err, errlen))
		return -1;
	while (n <= REG_DIGEST && strcmp(op, op_names[n]))
		n++;
	if (n > REG_DIGEST) {
		snprintf(err, errlen, "op: \"%s\" is not register, renew, deregister, sync or digest",
			 op);
		return -1;
	}
	r->op = (enum reg_op)n;
	for (size_t k = 1; reg_keys[k]; k++)
		if ((!op_keys[n][0] || strcmp(reg_keys[k], op_keys[n][0])) &&
		    (!op_keys[n][1] || strcmp(reg_keys[k], op_keys[n][1])) &&
		    json_object_object_get_ex(root, reg_keys[k], NULL)) {
			snprintf(err, errlen, "%s: not a field of op %s",
				 reg_keys[k], op);
			return -1;
		}
	switch (r->op) {
	case REG_REGISTER:
		return msg_get_object(root, "", "instance", &o, err, errlen) ||
		       inst_get(o, "instance", &r->inst, err, errlen) ? -1 : 0;
	case REG_SYNC:
		return msg_get_u64(root, "", "since", UINT64_MAX, &r->since,
				   err, errlen);
	case REG_DIGEST:
		return msg_get_u64(root, "", "rev", UINT64_MAX, &r->rev, err,
				   errlen) ||
		       get_sha256(root, r->sha256, err, errlen) ? -1 : 0;
	default:
		return msg_get_string(root, "", "id", r->id, sizeof(r->id), err,
				      errlen);
	}
}

static void reg_free(void *body)
{
	(void)body;
}

const struct msg_type msg_reg_type = {
	.type = MSG_REGISTRATION,
	.name = "instance-registration",
	.max_len = 4096,
	.keys = reg_keys,
	.body_size = sizeof(struct msg_reg),
	.decode = reg_decode,
	.encode = reg_encode,
	.free = reg_free,
};

static int routes_encode(struct json_object *root, const void *body,
			 char *err, size_t errlen)
{
	const struct msg_routes *r = body;
	struct json_object *a, *w;

	if (r->nroutes > MSG_ROUTES_MAX || r->nwithdrawn > MSG_ROUTES_MAX) {
		snprintf(err, errlen, "more than %d routes or withdrawals",
			 MSG_ROUTES_MAX);
		return -1;
	}
	json_object_object_add(root, "rev", json_object_new_uint64(r->rev));
	json_object_object_add(root, "prev", json_object_new_uint64(r->prev));
	json_object_object_add(root, "full", json_object_new_boolean(r->full));
	a = json_object_new_array_ext((int)r->nroutes);
	for (size_t i = 0; i < r->nroutes; i++)
		json_object_array_add(a, msg_instance_json(&r->routes[i]));
	json_object_object_add(root, "routes", a);
	w = json_object_new_array_ext((int)r->nwithdrawn);
	for (size_t i = 0; i < r->nwithdrawn; i++)
		json_object_array_add(w, json_object_new_string(r->withdrawn[i]));
	json_object_object_add(root, "withdrawn", w);
	return 0;
}

static void routes_free(void *body)
{
	struct msg_routes *r = body;

	free(r->routes);
	free(r->withdrawn);
	r->routes = NULL;
	r->withdrawn = NULL;
}

static int routes_decode(struct json_object *root, void *body, char *err,
			 size_t errlen)
{
	struct msg_routes *r = body;
	struct json_object *a, *w, *f;
	char path[48];

	/* msg_decode() refused keys of neither the header nor routes_keys */
	if (msg_get_u64(root, "", "rev", UINT64_MAX, &r->rev, err, errlen) ||
	    msg_get_u64(root, "", "prev", UINT64_MAX, &r->prev, err, errlen))
		return -1;
	if (!json_object_object_get_ex(root, "full", &f)) {
		snprintf(err, errlen, "full: required");
		return -1;
	}
	if (!json_object_is_type(f, json_type_boolean)) {
		snprintf(err, errlen, "full: expected true or false");
		return -1;
	}
	r->full = json_object_get_boolean(f);
	if (!r->full && r->prev >= r->rev) {
		snprintf(err, errlen, "prev: %llu is not below rev %llu",
			 (unsigned long long)r->prev, (unsigned long long)r->rev);
		return -1;
	}
	if (msg_get_array(root, "", "routes", MSG_ROUTES_MAX, &a, err, errlen) ||
	    msg_get_array(root, "", "withdrawn", MSG_ROUTES_MAX, &w, err, errlen))
		return -1;
	r->nroutes = json_object_array_length(a);
	r->nwithdrawn = json_object_array_length(w);
	if (r->full && r->nwithdrawn) {
		snprintf(err, errlen, "withdrawn: must be empty in a full table");
		return -1;
	}
	r->routes = calloc(r->nroutes + 1, sizeof(*r->routes));
	r->withdrawn = calloc(r->nwithdrawn + 1, sizeof(*r->withdrawn));
	if (!r->routes || !r->withdrawn) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < r->nroutes; i++) {
		snprintf(path, sizeof(path), "routes[%zu]", i);
		if (inst_get(json_object_array_get_idx(a, i), path,
			     &r->routes[i], err, errlen))
			return -1;
	}
	for (size_t i = 0; i < r->nwithdrawn; i++) {
		struct json_object *s = json_object_array_get_idx(w, i);

		if (!json_object_is_type(s, json_type_string) ||
		    !json_object_get_string_len(s) ||
		    json_object_get_string_len(s) >= MSG_ID_MAX) {
			snprintf(err, errlen, "withdrawn[%zu]: expected an id of 1..%d bytes",
				 i, MSG_ID_MAX - 1);
			return -1;
		}
		strcpy(r->withdrawn[i], json_object_get_string(s));
	}
	return 0;
}

const struct msg_type msg_routes_type = {
	.type = MSG_ROUTES,
	.name = "route-advertisement",
	.max_len = MSG_MAX_LEN,
	.keys = routes_keys,
	.body_size = sizeof(struct msg_routes),
	.decode = routes_decode,
	.encode = routes_encode,
	.free = routes_free,
};
