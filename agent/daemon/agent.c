// SPDX-License-Identifier: GPL-2.0
/*
 * What the roles share (agent.h): the TLS contexts, and the one path by
 * which a message from another agent is let in: decoded by the codec,
 * then held to the AAM's policy by the sender's certificate.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "log.h"
#include "msg_reg.h"
#include "policy.h"
#include "tls.h"

int64_t agent_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int agent_tls_load(struct agent *a, const struct agent_config *cfg)
{
	struct tls_conf tc = {
		.cert = cfg->tls.cert, .key = cfg->tls.key, .ca = cfg->tls.ca,
		.crl = cfg->tls.crl[0] ? cfg->tls.crl : NULL,
	};
	struct peer_id self;
	SSL_CTX *srv, *cli;
	char err[320];

	if (!cfg->tls.set)
		return 0;
	srv = tls_ctx_new(&tc, 1, &self, err, sizeof(err));
	if (!srv) {
		agent_log("%s", err);
		return -1;
	}
	cli = tls_ctx_new(&tc, 0, &self, err, sizeof(err));
	if (!cli) {
		agent_log("%s", err);
		SSL_CTX_free(srv);
		return -1;
	}
	if (strcmp(self.node, cfg->node)) {
		agent_log("tls: cert %s names node %s, the configuration %s",
			  cfg->tls.cert, self.node, cfg->node);
		SSL_CTX_free(srv);
		SSL_CTX_free(cli);
		return -1;
	}
	/* connections up keep the old contexts (OpenSSL counts references) */
	SSL_CTX_free(a->tls_server);
	SSL_CTX_free(a->tls_client);
	a->tls_server = srv;
	a->tls_client = cli;
	a->self = self;
	return 0;
}

/* The policy's why, as a reason of reject.h. */
static const char *policy_reason(const char *why)
{
	if (strstr(why, "only for its own node"))
		return "node";
	if (strstr(why, "may send it"))
		return "role";
	return "type";
}

int agent_msg_accept(struct agent *a, struct conn *c, const unsigned char *p,
		     size_t len, unsigned int want, struct msg *m)
{
	const struct peer_id *peer = conn_peer(c);
	const char *subject = peer->node;
	char err[320], why[400];

	if (msg_decode((const char *)p, len, m, err, sizeof(err))) {
		reject_note(&a->rej, "malformed", peer->node, err);
		return -1;
	}
	if (strcmp(m->node, peer->node)) {
		snprintf(why, sizeof(why), "type %u says node %s, its certificate %s",
			 m->type->type, m->node, peer->node);
		reject_note(&a->rej, "node", peer->node, why);
		goto refuse;
	}
	/* a registration speaks for the node the instance runs on */
	if (m->type->type == MSG_REGISTRATION &&
	    ((struct msg_reg *)m->body)->op == REG_REGISTER)
		subject = ((struct msg_reg *)m->body)->inst.node;
	if (policy_check(peer, m->type->type, subject, err, sizeof(err))) {
		reject_note(&a->rej, policy_reason(err), peer->node, err);
		goto refuse;
	}
	if (m->type->type >= 32 || !(MSG_BIT(m->type->type) & want)) {
		snprintf(why, sizeof(why), "type %u (%s): not for this role",
			 m->type->type, m->type->name);
		reject_note(&a->rej, "type", peer->node, why);
		goto refuse;
	}
	return 0;
refuse:
	msg_free(m);
	return -1;
}

int agent_msg_send(struct agent *a, struct conn *c,
		   const struct msg_type *type, void *body)
{
	struct msg m = { .type = type, .seq = ++a->seq, .body = body };
	char err[256], *frame;
	size_t len;
	int rc;

	snprintf(m.node, sizeof(m.node), "%s", a->cfg.node);
	if (msg_encode(&m, &frame, &len, err, sizeof(err))) {
		agent_log("send %s to %s: %s", type->name, conn_peer(c)->node, err);
		return -1;
	}
	rc = conn_send(c, frame + MSG_HDR_LEN, len - MSG_HDR_LEN);
	free(frame);
	return rc;
}

/* What a failed handshake's why says, as a reason of reject.h. */
static const char *tls_reason(const char *why)
{
	if (strstr(why, "expired"))
		return "cert-expired";
	if (strstr(why, "revoked"))
		return "cert-revoked";
	if (strstr(why, "issuer") || strstr(why, "unknown ca") ||
	    strstr(why, "self-signed") || strstr(why, "self signed"))
		return "cert-unknown-ca";
	return "tls";
}

void agent_conn_down(struct agent *a, struct conn *c, int was_up,
		     const char *role, const char *why)
{
	const char *peer = was_up ? conn_peer(c)->node : "(handshake)";

	if (!strncmp(why, "frame of", 8)) {
		reject_note(&a->rej, "frame", peer, why);
	} else if (!was_up && (strstr(why, "tls") || strstr(why, "identity")) &&
		   !strstr(why, "closed by peer")) {
		reject_note(&a->rej, tls_reason(why), peer, why);
	} else {
		agent_log("%s: connection with %s ended: %s", role, peer, why);
	}
}
