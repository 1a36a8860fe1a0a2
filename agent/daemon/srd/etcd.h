/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small client of etcd's v3 API through its JSON gateway (etcd 3.4, as
 * Debian ships it), over libcurl: a request is a JSON object POSTed to
 * /v3/<service>/<method>, keys and values in base64. Several endpoints
 * may be given: a call that cannot reach one member tries the next, so a
 * dead member costs one connection attempt, not the registry. A request
 * that was sent is never sent again to another member (it may have been
 * applied: a transaction must not run twice); the call fails, and the
 * next call starts at the next member.
 */
#ifndef DMSC_SRD_ETCD_H
#define DMSC_SRD_ETCD_H

#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#define ETCD_MAX_ENDPOINTS	8

struct etcd;

/*
 * @endpoints: "http://127.0.0.1:2379,http://10.0.0.2:2379" (at most
 * ETCD_MAX_ENDPOINTS). NULL with the reason in @err.
 */
struct etcd *etcd_open(const char *endpoints, char *err, size_t errlen);
void etcd_close(struct etcd *e);

/*
 * POST @req to @path ("/v3/kv/range"): 0 and the parsed answer in *@resp
 * (put it with json_object_put), or -1 with the reason in @err: no member
 * reachable, an HTTP error with etcd's message, an answer that is not
 * JSON. @req is not consumed.
 */
int etcd_call(struct etcd *e, const char *path, struct json_object *req,
	      struct json_object **resp, char *err, size_t errlen);

/*
 * Open a watch with @req ({"create_request": ...}) and call @fn for each
 * answer ({"result": ...}) until it returns non-zero (1: done, -1: error),
 * or @timeout_ms passes (-1, "timed out"). 0 if @fn said done.
 */
typedef int (*etcd_line_fn)(struct json_object *result, void *arg);
int etcd_watch(struct etcd *e, struct json_object *req, etcd_line_fn fn,
	       void *arg, long timeout_ms, char *err, size_t errlen);

/*
 * Bound each call: @total_ms for the whole request, @connect_ms to reach a
 * member (defaults 5000 and 1000). A caller with a deadline, such as the
 * election, sets them below it.
 */
void etcd_set_timeouts(struct etcd *e, long total_ms, long connect_ms);

/* The endpoint the last call used (for logs and tests). */
const char *etcd_endpoint(const struct etcd *e);

/*
 * Pieces of a /v3/kv/txn request. etcd_op_put(): {"request_put": {key,
 * value, lease}}, the lease left out if 0. etcd_compare(): {key, target,
 * result, @field: @v}, e.g. ("VERSION", "EQUAL", "version", 0). @key
 * (base64, etcd_b64()) and @v are taken.
 */
struct json_object *etcd_op_put(struct json_object *key, const char *value,
				int64_t lease);
struct json_object *etcd_compare(struct json_object *key, const char *target,
				 const char *result, const char *field,
				 struct json_object *v);

/* base64 of @n bytes of @s, as a new json-c string. */
struct json_object *etcd_b64(const void *s, size_t n);
/* Decode base64 @in into @out (@size bytes with the NUL). -1 if bad. */
int etcd_unb64(const char *in, char *out, size_t size);
/* An int64 field that etcd sends as a string ("revision": "42"). */
int64_t etcd_int(struct json_object *o, const char *key);

#endif /* DMSC_SRD_ETCD_H */
