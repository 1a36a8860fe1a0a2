// SPDX-License-Identifier: GPL-2.0
/*
 * Connections of conn.h on libevent's OpenSSL bufferevents.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/err.h>

#include "conn.h"
#include "tls.h"

struct conn {
	struct bufferevent *bev;
	struct event *deadline;	/* of the handshake */
	const struct conn_ops *ops;
	void *arg;
	struct peer_id peer;
	char expect[PEER_NODE_MAX];
	int up;
};

static void end(struct conn *c, const char *why)
{
	c->ops->down(c, why, c->arg);
	conn_close(c);
}

static void on_read(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	unsigned char hdr[CONN_HDR_LEN], *p;
	char why[64];
	uint32_t len;

	if (!c->up)
		return;	/* nothing before the identity is known */
	while (evbuffer_get_length(in) >= CONN_HDR_LEN) {
		evbuffer_copyout(in, hdr, CONN_HDR_LEN);
		len = (uint32_t)hdr[0] << 24 | hdr[1] << 16 | hdr[2] << 8 | hdr[3];
		if (!len || len > CONN_MAX_FRAME) {
			snprintf(why, sizeof(why), "frame of %u bytes (1 to %u)",
				 len, CONN_MAX_FRAME);
			end(c, why);
			return;
		}
		if (evbuffer_get_length(in) < CONN_HDR_LEN + len) {
			/* wake when the whole frame is here, not at each byte */
			bufferevent_setwatermark(bev, EV_READ, CONN_HDR_LEN + len, 0);
			return;
		}
		bufferevent_setwatermark(bev, EV_READ, 0, 0);
		evbuffer_drain(in, CONN_HDR_LEN);
		p = evbuffer_pullup(in, len);
		if (c->ops->frame(c, p, len, c->arg))
			return;	/* closed by the callee */
		evbuffer_drain(in, len);
	}
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;
	char why[256], e[160];
	unsigned long ssl_e;

	if (what & BEV_EVENT_CONNECTED) {
		SSL *ssl = bufferevent_openssl_get_ssl(bev);

		if (tls_peer_id(ssl, &c->peer, e, sizeof(e))) {
			snprintf(why, sizeof(why), "identity: %s", e);
			end(c, why);
			return;
		}
		if (c->expect[0] && strcmp(c->expect, c->peer.node)) {
			snprintf(why, sizeof(why), "peer is node %s, expected %s",
				 c->peer.node, c->expect);
			end(c, why);
			return;
		}
		c->up = 1;
		event_del(c->deadline);
		if (c->ops->up(c, c->arg))
			return;	/* closed by the callee */
		/* frames that came with the handshake's last flight */
		if (evbuffer_get_length(bufferevent_get_input(bev)))
			on_read(bev, c);
		return;
	}
	why[0] = '\0';
	while ((ssl_e = bufferevent_get_openssl_error(bev))) {
		if (!why[0]) {
			ERR_error_string_n(ssl_e, e, sizeof(e));
			snprintf(why, sizeof(why), "tls: %s", e);
		}
	}
	if (!c->up) {
		/* OpenSSL says "verify failed"; the store says why */
		long v = SSL_get_verify_result(bufferevent_openssl_get_ssl(bev));

		if (v != X509_V_OK) {
			snprintf(why, sizeof(why), "tls: peer certificate: %s",
				 X509_verify_cert_error_string(v));
		}
	}
	if (!why[0])
		snprintf(why, sizeof(why), "%s%s",
			 what & BEV_EVENT_EOF ? "closed by peer" : "socket error",
			 c->up ? "" : " (before the handshake finished)");
	end(c, why);
}

/*
 * The handshake's deadline, absolute: a bufferevent timeout would restart
 * at every byte, and a peer sending one a second would hold a connection,
 * unauthenticated, for ever.
 */
static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	(void)fd;
	(void)what;
	if (!c->up)
		end(c, "handshake not finished in time");
}

struct conn *conn_new(struct event_base *base, SSL_CTX *ctx, int server,
		      int fd, const struct sockaddr *addr, int addrlen,
		      const char *expect_node, long handshake_ms,
		      const struct conn_ops *ops, void *arg)
{
	struct conn *c;
	struct timeval hs;
	SSL *ssl;

	if (!server && (!expect_node || !*expect_node))
		return NULL;	/* a client must know whom it talks to */
	if (handshake_ms <= 0)
		handshake_ms = CONN_HANDSHAKE_MS;
	hs.tv_sec = handshake_ms / 1000;
	hs.tv_usec = handshake_ms % 1000 * 1000;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	ssl = SSL_new(ctx);
	if (!ssl) {
		free(c);
		return NULL;
	}
	c->ops = ops;
	c->arg = arg;
	if (expect_node)
		snprintf(c->expect, sizeof(c->expect), "%s", expect_node);
	c->bev = bufferevent_openssl_socket_new(base, fd, ssl,
			server ? BUFFEREVENT_SSL_ACCEPTING : BUFFEREVENT_SSL_CONNECTING,
			BEV_OPT_CLOSE_ON_FREE);
	if (!c->bev) {
		/* libevent has freed the SSL on this path already */
		free(c);
		return NULL;
	}
	c->deadline = evtimer_new(base, on_deadline, c);
	if (!c->deadline) {
		bufferevent_free(c->bev);
		free(c);
		return NULL;
	}
	evtimer_add(c->deadline, &hs);
	bufferevent_setcb(c->bev, on_read, NULL, on_event, c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	if (!server && bufferevent_socket_connect(c->bev, addr, addrlen)) {
		conn_close(c);
		return NULL;
	}
	return c;
}

int conn_send(struct conn *c, const void *payload, size_t len)
{
	unsigned char hdr[CONN_HDR_LEN] = {
		len >> 24, len >> 16, len >> 8, len
	};

	if (!c->up || !len || len > CONN_MAX_FRAME)
		return -1;
	if (bufferevent_write(c->bev, hdr, sizeof(hdr)) ||
	    bufferevent_write(c->bev, payload, len))
		return -1;
	return 0;
}

size_t conn_pending(const struct conn *c)
{
	return evbuffer_get_length(bufferevent_get_output(c->bev));
}

const struct peer_id *conn_peer(const struct conn *c)
{
	return &c->peer;
}

void conn_close(struct conn *c)
{
	if (!c)
		return;
	/*
	 * A TLS close_notify, so that the peer tells our leaving from a cut
	 * connection (best effort: what is still queued is lost, as the
	 * caller asked to close now).
	 */
	if (c->up)
		SSL_shutdown(bufferevent_openssl_get_ssl(c->bev));
	/* frees the SSL too (BEV_OPT_CLOSE_ON_FREE closes the socket) */
	bufferevent_free(c->bev);
	if (c->deadline)
		event_free(c->deadline);
	free(c);
}
