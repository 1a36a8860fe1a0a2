/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TLS between agents: TLS 1.3 only, both sides present a certificate of
 * the cluster's CA (mutual authentication), the CA's revocation list is
 * checked, and a peer is known by the node and roles in its certificate's
 * URI SANs (urn:dmsc:node:NAME, urn:dmsc:role:ROLE; tools/pki/dmsc-pki
 * makes them). OpenSSL does the cryptography; this file sets it up and
 * reads the identity.
 */
#ifndef DMSC_NET_TLS_H
#define DMSC_NET_TLS_H

#include <stddef.h>
#include <openssl/ssl.h>

#include "peer.h"

struct tls_conf {
	const char *cert;	/* our certificate (PEM) */
	const char *key;	/* its private key (PEM) */
	const char *ca;		/* the cluster's CA certificate (PEM) */
	const char *crl;	/* the CA's revocation list (PEM), or NULL */
};

/*
 * A context for a server (@server 1) or a client. Refuses a certificate
 * that does not match its key or names no node. NULL with the file or the
 * reason in @err.
 */
SSL_CTX *tls_ctx_new(const struct tls_conf *c, int server,
		     struct peer_id *self, char *err, size_t errlen);

/* The identity in @cert: -1 if it names no node, or two. */
int tls_cert_id(X509 *cert, struct peer_id *id, char *err, size_t errlen);

/* The verified peer of a finished handshake on @ssl. */
int tls_peer_id(SSL *ssl, struct peer_id *id, char *err, size_t errlen);

#endif /* DMSC_NET_TLS_H */
