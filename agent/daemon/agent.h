/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dmsc-agent's roles share one event loop (libevent: its OpenSSL
 * bufferevents carry the mutual TLS of lib/net/) and this state. Each
 * role is a module with start, reload and stop (after BIRD's protocols):
 * srd/srd_role.c, sr/sr_role.c; ctl.c is the local socket the CLI asks;
 * reject.c counts what the agent refused.
 */
#ifndef DMSC_AGENT_H
#define DMSC_AGENT_H

#include <stdint.h>
#include <event2/event.h>
#include <json-c/json.h>
#include <openssl/ssl.h>

#include "config.h"
#include "conn.h"
#include "msg.h"
#include "reject.h"

struct srd_role;
struct sr_role;
struct smo_role;
struct mg_role;
struct aam_role;
struct agent_tokens;
struct ctl;
struct ctl_req;
struct msg_instance;

struct agent {
	struct event_base *base;
	const char *cfg_path;
	struct agent_config cfg;
	/* the mutual TLS of this node: replaced on SIGHUP */
	SSL_CTX *tls_server, *tls_client;
	struct peer_id self;
	uint64_t seq;			/* of the messages this agent sends */
	struct rejects rej;
	struct srd_role *srd;
	struct sr_role *sr;
	struct smo_role *smo;
	struct mg_role *mg;
	struct aam_role *aam;
	struct agent_tokens *tokens;	/* tokens.c: the verifier, NULL without "tokens" */
	struct ctl *ctl;
};

int64_t agent_now_ms(void);

/* (Re)load the TLS contexts of @cfg into @a. -1, with the reason logged. */
int agent_tls_load(struct agent *a, const struct agent_config *cfg);

/*
 * Decode the frame @p from @c and check it against the AAM's policy
 * (lib/net/policy.c) by the sender's certificate: the header's node must
 * be the certificate's, the type one @c's role may send, about the node
 * it names. 0 with @m decoded (msg_free() it); -1 when refused, counted
 * and logged, and @m is empty. @want is the set of types (MSG_BIT) the
 * receiving role reads here: another one is refused too.
 */
#define MSG_BIT(t)	(1u << (t))
int agent_msg_accept(struct agent *a, struct conn *c, const unsigned char *p,
		     size_t len, unsigned int want, struct msg *m);
/* Encode and queue @body of @type on @c. -1 (logged) if it could not. */
int agent_msg_send(struct agent *a, struct conn *c,
		   const struct msg_type *type, void *body);
/* A connection's end before or after its handshake, counted if refused. */
void agent_conn_down(struct agent *a, struct conn *c, int was_up,
		     const char *role, const char *why);

/* The roles: NULL (logged) on failure. */
struct srd_role *srd_role_start(struct agent *a);
void srd_role_stop(struct srd_role *r);
struct json_object *srd_role_show(struct srd_role *r, const char *what);
/*
 * A copy of the registry's store in a new file @name of the store's
 * directory: { "file", "revision", "instances" }, or NULL with the
 * reason in @err (the etcd store has etcdctl snapshot save for it).
 */
struct json_object *srd_role_backup(struct srd_role *r, const char *name,
				    char *err, size_t errlen);

struct sr_role *sr_role_start(struct agent *a);
void sr_role_stop(struct sr_role *r);
struct json_object *sr_role_show(struct sr_role *r, const char *what);
/* The local MIs a client registers through the control socket. */
int sr_role_register(struct sr_role *r, const struct msg_instance *i,
		     char *err, size_t errlen);
int sr_role_deregister(struct sr_role *r, const char *id, char *err,
		       size_t errlen);
#ifdef DMSC_TEST_HOOKS
/* Only in the test build (daemon/tests/dmsc-agent-san): ctl's test_drop_route. */
int sr_role_test_drop_route(struct sr_role *r, const char *id);
/* ... test_fail_list: the srd's next full tables cannot be listed; and
 * test_peer_backlog: its cap on a peer's unsent bytes. */
void srd_role_test_fail_list(struct srd_role *r, unsigned int n);
void srd_role_test_peer_backlog(struct srd_role *r, size_t bytes);
#endif

/* smo: the policies (smo/smo_role.c), pushed over the srd's SR connections. */
struct smo_role *smo_role_start(struct agent *a);
void smo_role_stop(struct smo_role *r);
struct json_object *smo_role_show(struct smo_role *r);
void smo_role_peer_up(struct smo_role *r, struct conn *c);
void smo_role_peer_down(struct smo_role *r, struct conn *c);
/* { "policies": [ ... ] }: added, or replacing those of the same name. */
int smo_role_apply(struct smo_role *r, struct json_object *doc, char *err,
		   size_t errlen);
int smo_role_withdraw(struct smo_role *r, const char *name, char *err,
		      size_t errlen);
/* A QoS report (type 5, decoded from @payload) an SR sent to the srd. */
void smo_role_qos(struct smo_role *r, const struct msg *m,
		  const unsigned char *payload, size_t len);
struct json_object *smo_role_show_qos(struct smo_role *r);
/* A node state report (type 4) likewise: the last of each node kept. */
void smo_role_node(struct smo_role *r, const struct msg *m,
		   const unsigned char *payload, size_t len);
struct json_object *smo_role_show_nodes(struct smo_role *r);

/* mg: the gateway (mg/mg_role.c): routes from the SRD, an HTTP entry. */
struct mg_role *mg_role_start(struct agent *a);
void mg_role_stop(struct mg_role *r);
struct json_object *mg_role_show(struct mg_role *r);
/*
 * aam: the tokens of type 3 (aam/aam_role.c), issued over the srd's
 * connections; without an "aam" section the role issues nothing (NULL).
 */
struct aam_role *aam_role_start(struct agent *a);
void aam_role_stop(struct aam_role *r);
struct json_object *aam_role_show(struct aam_role *r);
void aam_role_peer_up(struct aam_role *r, struct conn *c);
void aam_role_peer_down(struct aam_role *r, struct conn *c);
/* A type 3 an SR or gateway sent to the srd. */
void aam_role_frame(struct aam_role *r, struct conn *c, const struct msg *m);
int aam_role_revoke(struct aam_role *r, const char *jti, char *err,
		    size_t errlen);

/* sr: its side of type 3 (sr/sr_token.c), through the control socket. */
/* Ask the AAM for a token; 0: @q is answered later, -1: @err now. */
int sr_role_token(struct sr_role *r, struct json_object *req,
		  struct ctl_req *q, char *err, size_t errlen);
struct json_object *sr_role_access(struct sr_role *r, struct json_object *req,
				   char *err, size_t errlen);

struct ctl *ctl_start(struct agent *a, const char *path);
void ctl_stop(struct ctl *c);
/*
 * The answer to a request that waited (a token from the AAM): @data
 * (taken) or, if NULL, @error. Frees @q; the client may have gone.
 */
void ctl_req_done(struct ctl_req *q, struct json_object *data,
		  const char *error);

#endif /* DMSC_AGENT_H */
