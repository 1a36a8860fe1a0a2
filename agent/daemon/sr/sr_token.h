/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sr role's side of type 3 (msg_auth.h): token requests to the AAM
 * for the local control socket, the AAM's answers and revoked lists, and
 * the offline access check of a token against a service prefix.
 */
#ifndef DMSC_SR_TOKEN_H
#define DMSC_SR_TOKEN_H

#include <stddef.h>
#include <json-c/json.h>

#include "conn.h"
#include "msg.h"

/* how long a token request waits for the AAM's answer */
#define SR_TOKEN_TIMEOUT_MS	5000
/* requests out at once */
#define SR_TOKEN_PENDING_MAX	64

struct agent;
struct ctl_req;
struct sr_token;

struct sr_token *sr_token_new(struct agent *a);
/* Every request still waiting is answered with an error. */
void sr_token_free(struct sr_token *t);
/* The connection to the controller ended: the waiting requests fail. */
void sr_token_conn_down(struct sr_token *t);
/* A type 3 from the controller (token, denied, revoked). */
void sr_token_frame(struct sr_token *t, struct conn *c, const struct msg *m);
/* { "sub", "scope", "lifetime_s" (optional) } to the AAM over @c. */
int sr_token_request(struct sr_token *t, struct conn *c,
		     struct json_object *req, struct ctl_req *q, char *err,
		     size_t errlen);
/* { "token", "prefix" }: the verdict, or NULL and @err for a bad request. */
struct json_object *sr_token_access(struct sr_token *t, struct json_object *req,
				    char *err, size_t errlen);
struct json_object *sr_token_show(struct sr_token *t);

#endif /* DMSC_SR_TOKEN_H */
