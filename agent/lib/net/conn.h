/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A connection between agents: TLS (tls.h) on a libevent bufferevent, and
 * frames on it, each a 4-byte big-endian length and that many bytes (the
 * framing of agent/msg.h; what is inside is the codec's business, not
 * this file's). The peer's identity is known when up() is called and
 * before any frame is delivered. A frame of length 0 or above
 * CONN_MAX_FRAME ends the connection: a reader cannot resynchronise.
 * The process must ignore SIGPIPE: a peer that hangs up mid-write would
 * otherwise end it.
 */
#ifndef DMSC_NET_CONN_H
#define DMSC_NET_CONN_H

#include <stddef.h>
#include <event2/event.h>
#include <openssl/ssl.h>

#include "peer.h"

#define CONN_HDR_LEN	4
#define CONN_MAX_FRAME	(4u << 20)
#define CONN_HANDSHAKE_MS	10000	/* a peer that does not finish in time goes */

struct conn;

struct conn_ops {
	/*
	 * The handshake is done and the peer is who it must be. Returns 0,
	 * or -1 if it closed @c (conn_close), which must then not be used.
	 */
	int (*up)(struct conn *c, void *arg);
	/* One frame; returns as up() does. */
	int (*frame)(struct conn *c, const unsigned char *payload, size_t len,
		     void *arg);
	/* The end, with why; @c is freed when this returns. */
	void (*down)(struct conn *c, const char *why, void *arg);
};

/*
 * A connection on accepted socket @fd (@server 1), or one to @addr
 * (@server 0, @fd -1). A client must give @expect_node, the node the
 * server's certificate must name, as HTTPS checks a host name. The
 * handshake must end within @handshake_ms (0: CONN_HANDSHAKE_MS) from
 * now, however the peer trickles its bytes. NULL on error.
 */
struct conn *conn_new(struct event_base *base, SSL_CTX *ctx, int server,
		      int fd, const struct sockaddr *addr, int addrlen,
		      const char *expect_node, long handshake_ms,
		      const struct conn_ops *ops, void *arg);
/* Queue one frame of @len bytes. -1 if too long or the peer is not up. */
int conn_send(struct conn *c, const void *payload, size_t len);
/* Bytes queued on @c and not yet written to the socket. */
size_t conn_pending(const struct conn *c);
/* The peer's identity (valid once up() was called). */
const struct peer_id *conn_peer(const struct conn *c);
/* Close and free without calling down(). */
void conn_close(struct conn *c);

#endif /* DMSC_NET_CONN_H */
