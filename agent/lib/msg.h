/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Messages between agents (control signalling of
 * draft-yang-dmsc-distributed-model-04): a frame is a 4-byte big-endian
 * length and that many bytes of one JSON object,
 *
 *   { "version": 1, "type": N, "node": "NAME", "seq": S, ...the type's keys }
 *
 * read by the strict reader of json_strict.h (its JSON_STRICT_WIRE rules)
 * and checked key by key against the type's table entry: an unknown key,
 * a missing one, a value of the wrong type or out of range, a frame
 * longer than its type allows, is an error that names the field. A transport (today a Unix stream socket,
 * with issue 10 the TLS channel between agents) moves frames and nothing
 * else; each type lives in its own file (msg_auth.c: type 3, msg_node.c:
 * type 4, msg_qos.c: type 5) behind one
 * struct msg_type.
 */
#ifndef DMSC_MSG_H
#define DMSC_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#define MSG_VERSION	1
#define MSG_HDR_LEN	4
/* The largest payload of any type: a length above it ends the stream. */
#define MSG_MAX_LEN	(4u << 20)
#define MSG_NODE_MAX	64	/* a node's name, with the NUL */

/* Signalling types of the draft; those to come are issue 10's. */
enum msg_type_id {
	MSG_QOS_REPORT = 5,	/* an SR's QoS telemetry, to the SMO */
};

struct msg_type {
	unsigned int type;
	const char *name;
	size_t max_len;			/* payload bytes */
	const char *const *keys;	/* the body's keys, NULL-terminated */
	size_t body_size;		/* of the decoded body */
	/* Read the body's keys of @root into @body (zeroed). 0 or -1. */
	int (*decode)(struct json_object *root, void *body, char *err,
		      size_t errlen);
	/* Add the body's keys to @root. 0 or -1. */
	int (*encode)(struct json_object *root, const void *body, char *err,
		      size_t errlen);
	void (*free)(void *body);	/* what decode allocated in @body */
};

struct msg {
	const struct msg_type *type;
	char node[MSG_NODE_MAX];
	uint64_t seq;
	void *body;		/* the type's struct */
};

/* The table entry of @type, or NULL for a type no one handles yet. */
const struct msg_type *msg_type_get(unsigned int type);

/*
 * A frame (header and JSON) of @m in a malloc()ed buffer. -1 with the
 * reason in @err if the body is invalid or the frame longer than its
 * type allows.
 */
int msg_encode(const struct msg *m, char **frame, size_t *len, char *err,
	       size_t errlen);

/*
 * The payload length of the frame whose header is at @hdr (MSG_HDR_LEN
 * bytes): 0 and @len, or -1 if it is 0 or above MSG_MAX_LEN, which a
 * reader must take as the end of the stream (it cannot resynchronise).
 */
int msg_frame_len(const unsigned char *hdr, size_t *len, char *err,
		  size_t errlen);

/*
 * Decode one payload (the JSON, without the header). On success @m holds
 * a malloc()ed body of its type; free it with msg_free(). -1 with the
 * field named in @err.
 */
int msg_decode(const char *payload, size_t len, struct msg *m, char *err,
	       size_t errlen);
void msg_free(struct msg *m);

/*
 * For the types' decoders: read @key of @obj, the error as
 * "PATH.KEY: what" (PATH "" at the top). Counters are unsigned 64-bit
 * integers: a negative one, a fraction or a string is refused.
 */
int msg_keys_only(struct json_object *obj, const char *path,
		  const char *const *keys, const char *const *more, char *err,
		  size_t errlen);
int msg_get_u64(struct json_object *obj, const char *path, const char *key,
		uint64_t max, uint64_t *v, char *err, size_t errlen);
int msg_get_double(struct json_object *obj, const char *path, const char *key,
		   double min, double max, double *v, char *err, size_t errlen);
int msg_get_string(struct json_object *obj, const char *path, const char *key,
		   char *buf, size_t size, char *err, size_t errlen);
/* An array of at most @max elements (objects, checked by the caller). */
int msg_get_array(struct json_object *obj, const char *path, const char *key,
		  size_t max, struct json_object **arr, char *err,
		  size_t errlen);
int msg_get_object(struct json_object *obj, const char *path,
		   const char *key, struct json_object **o, char *err,
		   size_t errlen);

#endif /* DMSC_MSG_H */
