// SPDX-License-Identifier: GPL-2.0
/*
 * Framing, the common header and the table of message types (msg.h).
 * A type is one entry here and a file of its own; the header keys and
 * the strictness are the same for all of them.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "json_strict.h"
#include "msg_auth.h"
#include "msg_node.h"
#include "msg_qos.h"
#include "msg_policy.h"
#include "msg_reg.h"

static const struct msg_type *const types[] = {
	&msg_reg_type,
	&msg_routes_type,
	&msg_auth_type,
	&msg_node_type,
	&msg_qos_type,
	&msg_policy_type,
};

static const char *const header_keys[] = {
	"version", "type", "node", "seq", NULL,
};

const struct msg_type *msg_type_get(unsigned int type)
{
	for (size_t i = 0; i < sizeof(types) / sizeof(*types); i++)
		if (types[i]->type == type)
			return types[i];
	return NULL;
}

static int errf(char *err, size_t errlen, const char *path, const char *key,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int errf(char *err, size_t errlen, const char *path, const char *key,
		const char *fmt, ...)
{
	char what[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "%s%s%s: %s", path, *path && key ? "." : "",
		 key ? key : "", what);
	return -1;
}

int msg_keys_only(struct json_object *obj, const char *path,
		  const char *const *keys, const char *const *more, char *err,
		  size_t errlen)
{
	const char *key = json_strict_unknown_key(obj, keys, more);

	if (key)
		return errf(err, errlen, path, key, "unknown field");
	return 0;
}

static struct json_object *need(struct json_object *obj, const char *path,
				const char *key, char *err, size_t errlen)
{
	struct json_object *v;

	if (!json_object_object_get_ex(obj, key, &v)) {
		errf(err, errlen, path, key, "required");
		return NULL;
	}
	return v;
}

int msg_get_u64(struct json_object *obj, const char *path, const char *key,
		uint64_t max, uint64_t *v, char *err, size_t errlen)
{
	struct json_object *o = need(obj, path, key, err, errlen);

	if (!o)
		return -1;
	if (!json_object_is_type(o, json_type_int))
		return errf(err, errlen, path, key, "expected an unsigned integer");
	/* The reader makes an integer above INT64_MAX uint64, others int64. */
	if (json_object_get_int64(o) < 0)
		return errf(err, errlen, path, key, "negative");
	*v = json_object_get_uint64(o);
	if (*v > max)
		return errf(err, errlen, path, key, "%llu is above %llu",
			    (unsigned long long)*v, (unsigned long long)max);
	return 0;
}

int msg_get_double(struct json_object *obj, const char *path, const char *key,
		   double min, double max, double *v, char *err, size_t errlen)
{
	struct json_object *o = need(obj, path, key, err, errlen);

	if (!o)
		return -1;
	if (!json_object_is_type(o, json_type_double) &&
	    !json_object_is_type(o, json_type_int))
		return errf(err, errlen, path, key, "expected a number");
	*v = json_object_get_double(o);
	if (json_object_is_type(o, json_type_int) && json_object_get_int64(o) >= 0)
		*v = (double)json_object_get_uint64(o);
	if (!isfinite(*v) || *v < min || *v > max)
		return errf(err, errlen, path, key, "%g is outside %g..%g", *v,
			    min, max);
	return 0;
}

int msg_get_string(struct json_object *obj, const char *path, const char *key,
		   char *buf, size_t size, char *err, size_t errlen)
{
	struct json_object *o = need(obj, path, key, err, errlen);
	const char *s;
	size_t n;

	if (!o)
		return -1;
	if (!json_object_is_type(o, json_type_string))
		return errf(err, errlen, path, key, "expected a string");
	s = json_object_get_string(o);
	n = (size_t)json_object_get_string_len(o);
	if (!n || n >= size)
		return errf(err, errlen, path, key, "must be 1..%zu bytes",
			    size - 1);
	memcpy(buf, s, n + 1);
	return 0;
}

int msg_get_array(struct json_object *obj, const char *path, const char *key,
		  size_t max, struct json_object **arr, char *err,
		  size_t errlen)
{
	struct json_object *o = need(obj, path, key, err, errlen);

	if (!o)
		return -1;
	if (!json_object_is_type(o, json_type_array))
		return errf(err, errlen, path, key, "expected an array");
	if (json_object_array_length(o) > max)
		return errf(err, errlen, path, key, "more than %zu elements", max);
	*arr = o;
	return 0;
}

int msg_get_object(struct json_object *obj, const char *path,
		   const char *key, struct json_object **o, char *err,
		   size_t errlen)
{
	struct json_object *v = need(obj, path, key, err, errlen);

	if (!v)
		return -1;
	if (!json_object_is_type(v, json_type_object))
		return errf(err, errlen, path, key, "expected an object");
	*o = v;
	return 0;
}

int msg_encode(const struct msg *m, char **frame, size_t *len, char *err,
	       size_t errlen)
{
	struct json_object *root = json_object_new_object();
	const char *text;
	size_t n;
	int ret = -1;

	*frame = NULL;
	json_object_object_add(root, "version", json_object_new_int(MSG_VERSION));
	json_object_object_add(root, "type", json_object_new_int((int)m->type->type));
	json_object_object_add(root, "node", json_object_new_string(m->node));
	json_object_object_add(root, "seq", json_object_new_uint64(m->seq));
	if (m->type->encode(root, m->body, err, errlen))
		goto out;
	/* Plain and with "/" unescaped: the reader takes both. */
	text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN |
					      JSON_C_TO_STRING_NOSLASHESCAPE);
	n = strlen(text);
	if (n > m->type->max_len) {
		snprintf(err, errlen, "type %u (%s): %zu bytes, more than %zu",
			 m->type->type, m->type->name, n, m->type->max_len);
		goto out;
	}
	*frame = malloc(MSG_HDR_LEN + n);
	if (!*frame) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	(*frame)[0] = (char)(n >> 24);
	(*frame)[1] = (char)(n >> 16);
	(*frame)[2] = (char)(n >> 8);
	(*frame)[3] = (char)n;
	memcpy(*frame + MSG_HDR_LEN, text, n);
	*len = MSG_HDR_LEN + n;
	ret = 0;
out:
	json_object_put(root);
	return ret;
}

int msg_frame_len(const unsigned char *hdr, size_t *len, char *err,
		  size_t errlen)
{
	*len = (size_t)hdr[0] << 24 | (size_t)hdr[1] << 16 |
	       (size_t)hdr[2] << 8 | hdr[3];
	if (!*len || *len > MSG_MAX_LEN) {
		snprintf(err, errlen, "frame length %zu is outside 1..%u", *len,
			 MSG_MAX_LEN);
		return -1;
	}
	return 0;
}

int msg_decode(const char *payload, size_t len, struct msg *m, char *err,
	       size_t errlen)
{
	struct json_object *root;
	const struct msg_type *t;
	uint64_t v;
	int ret = -1;

	memset(m, 0, sizeof(*m));
	if (len > MSG_MAX_LEN) {
		snprintf(err, errlen, "%zu bytes, more than %u", len, MSG_MAX_LEN);
		return -1;
	}
	root = json_strict_parse(payload, len, &JSON_STRICT_WIRE, err, errlen);
	if (!root)
		return -1;
	if (!json_object_is_type(root, json_type_object)) {
		snprintf(err, errlen, "expected a JSON object");
		goto out;
	}
	if (msg_get_u64(root, "", "version", UINT64_MAX, &v, err, errlen))
		goto out;
	if (v != MSG_VERSION) {
		snprintf(err, errlen, "version: %llu, this agent speaks %d",
			 (unsigned long long)v, MSG_VERSION);
		goto out;
	}
	if (msg_get_u64(root, "", "type", UINT64_MAX, &v, err, errlen))
		goto out;
	t = v <= UINT32_MAX ? msg_type_get((unsigned int)v) : NULL;
	if (!t) {
		snprintf(err, errlen, "type: %llu is not a message type this agent reads",
			 (unsigned long long)v);
		goto out;
	}
	if (len > t->max_len) {
		snprintf(err, errlen, "type %u (%s): %zu bytes, more than %zu",
			 t->type, t->name, len, t->max_len);
		goto out;
	}
	if (msg_keys_only(root, "", header_keys, t->keys, err, errlen) ||
	    msg_get_string(root, "", "node", m->node, sizeof(m->node), err,
			   errlen) ||
	    msg_get_u64(root, "", "seq", UINT64_MAX, &m->seq, err, errlen))
		goto out;
	m->body = calloc(1, t->body_size);
	if (!m->body) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	m->type = t;
	if (t->decode(root, m->body, err, errlen)) {
		msg_free(m);
		goto out;
	}
	ret = 0;
out:
	json_object_put(root);
	return ret;
}

void msg_free(struct msg *m)
{
	if (m->type && m->body)
		m->type->free(m->body);
	free(m->body);
	memset(m, 0, sizeof(*m));
}
