// SPDX-License-Identifier: GPL-2.0
/*
 * The TLS set-up and identity of tls.h.
 */
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include "tls.h"

#define URN_NODE	"urn:dmsc:node:"
#define URN_ROLE	"urn:dmsc:role:"

static void ssl_err(char *err, size_t errlen, const char *what, const char *file)
{
	char e[160];

	ERR_error_string_n(ERR_get_error(), e, sizeof(e));
	snprintf(err, errlen, "tls: %s %s: %s", what, file, e);
	ERR_clear_error();
}

int tls_cert_id(X509 *cert, struct peer_id *id, char *err, size_t errlen)
{
	GENERAL_NAMES *names;
	int i, n, nodes = 0;

	memset(id, 0, sizeof(*id));
	names = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
	n = names ? sk_GENERAL_NAME_num(names) : 0;
	for (i = 0; i < n; i++) {
		const GENERAL_NAME *g = sk_GENERAL_NAME_value(names, i);
		const char *uri;
		int len;

		if (g->type != GEN_URI)
			continue;
		uri = (const char *)ASN1_STRING_get0_data(g->d.uniformResourceIdentifier);
		len = ASN1_STRING_length(g->d.uniformResourceIdentifier);
		/* an embedded NUL would let "a\0b" pass as "a" */
		if ((int)strnlen(uri, len) != len)
			continue;
		if (!strncmp(uri, URN_NODE, strlen(URN_NODE))) {
			const char *node = uri + strlen(URN_NODE);

			if (!*node || strlen(node) >= sizeof(id->node) ||
			    strspn(node, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(node))
				continue;
			nodes++;
			snprintf(id->node, sizeof(id->node), "%s", node);
		} else if (!strncmp(uri, URN_ROLE, strlen(URN_ROLE))) {
			/* an unknown role is one we give no right to: ignored */
			id->roles |= peer_role_bit(uri + strlen(URN_ROLE));
		}
	}
	GENERAL_NAMES_free(names);
	if (nodes == 1)
		return 0;
	snprintf(err, errlen, "certificate names %s node (urn:dmsc:node:NAME)",
		 nodes ? "more than one" : "no");
	memset(id, 0, sizeof(*id));
	return -1;
}

int tls_peer_id(SSL *ssl, struct peer_id *id, char *err, size_t errlen)
{
	X509 *cert = SSL_get1_peer_certificate(ssl);
	long v = SSL_get_verify_result(ssl);
	int rc;

	if (!cert) {
		snprintf(err, errlen, "peer sent no certificate");
		return -1;
	}
	if (v != X509_V_OK) {
		X509_free(cert);
		snprintf(err, errlen, "peer certificate: %s",
			 X509_verify_cert_error_string(v));
		return -1;
	}
	rc = tls_cert_id(cert, id, err, errlen);
	X509_free(cert);
	return rc;
}

SSL_CTX *tls_ctx_new(const struct tls_conf *c, int server,
		     struct peer_id *self, char *err, size_t errlen)
{
	SSL_CTX *ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
	X509_STORE *store;
	X509_CRL *crl;
	FILE *f;

	if (!ctx) {
		ssl_err(err, errlen, "context", "");
		return NULL;
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
	SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION);
	if (SSL_CTX_use_certificate_chain_file(ctx, c->cert) != 1) {
		ssl_err(err, errlen, "cert", c->cert);
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, c->key, SSL_FILETYPE_PEM) != 1) {
		ssl_err(err, errlen, "key", c->key);
		goto fail;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		ssl_err(err, errlen, "key does not match cert", c->cert);
		goto fail;
	}
	if (tls_cert_id(SSL_CTX_get0_certificate(ctx), self, err, errlen)) {
		char e[160];

		snprintf(e, sizeof(e), "%s", err);
		snprintf(err, errlen, "tls: cert %s: %s", c->cert, e);
		goto fail;
	}
	if (SSL_CTX_load_verify_locations(ctx, c->ca, NULL) != 1) {
		ssl_err(err, errlen, "ca", c->ca);
		goto fail;
	}
	if (c->crl) {
		f = fopen(c->crl, "r");
		crl = f ? PEM_read_X509_CRL(f, NULL, NULL, NULL) : NULL;
		if (f)
			fclose(f);
		store = SSL_CTX_get_cert_store(ctx);
		if (!crl || X509_STORE_add_crl(store, crl) != 1) {
			X509_CRL_free(crl);
			ssl_err(err, errlen, "crl", c->crl);
			goto fail;
		}
		X509_CRL_free(crl);
		X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK);
	}
	/* both ends prove who they are */
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
			   NULL);
	SSL_CTX_set_verify_depth(ctx, 2);
	return ctx;
fail:
	SSL_CTX_free(ctx);
	return NULL;
}
