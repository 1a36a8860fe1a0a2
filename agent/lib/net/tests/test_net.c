// SPDX-License-Identifier: GPL-2.0
/*
 * Connections between agents on loopback, with certificates made by
 * tools/pki/dmsc-pki: mutual TLS 1.3 and the identities both ends read,
 * frames whole however they arrive, every kind of peer the server must
 * refuse (expired, revoked, another CA, no node in the certificate, the
 * wrong node for the client, a frame too long), and the AAM's policy.
 */
#include <arpa/inet.h>
#include <signal.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/listener.h>
#include <event2/event.h>

#include "conn.h"
#include "policy.h"
#include "tls.h"
#include "../../../tests/ktap.h"

static char dir[] = "/tmp/dmsc-net.XXXXXX", err[256], path[8][256];
static struct event_base *base;
static struct sockaddr_in srv_addr;
static SSL_CTX *srv_ctx;
static long handshake_ms = 2000;

/* what each side saw */
struct side {
	int up, down, frames;
	size_t bytes[8];
	unsigned char first[8];
	char why[256];
	struct peer_id peer;
	struct conn *c;
	int echo;
} srv, cli;

static int on_up(struct conn *c, void *arg)
{
	struct side *s = arg;

	s->up++;
	s->peer = *conn_peer(c);
	s->c = c;
	return 0;
}

static int on_frame(struct conn *c, const unsigned char *p, size_t len, void *arg)
{
	struct side *s = arg;

	if (s->frames < 8) {
		s->bytes[s->frames] = len;
		s->first[s->frames] = p[len - 1];
	}
	s->frames++;
	if (s->echo)
		conn_send(c, p, len);
	return 0;
}

static void on_down(struct conn *c, const char *why, void *arg)
{
	struct side *s = arg;

	(void)c;
	s->down++;
	s->c = NULL;
	snprintf(s->why, sizeof(s->why), "%s", why);
}

static const struct conn_ops ops = { on_up, on_frame, on_down };

static void on_accept(struct evconnlistener *l, evutil_socket_t fd,
		      struct sockaddr *a, int alen, void *arg)
{
	(void)l;
	(void)a;
	(void)alen;
	(void)arg;
	if (!conn_new(base, srv_ctx, 1, fd, NULL, 0, NULL, handshake_ms, &ops, &srv))
		close(fd);
}

/* Run the loop until *@flag reaches @want or @ms pass. */
static void run_until(int *flag, int want, int ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
		usleep(1000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (*flag < want &&
		 (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

static SSL_CTX *ctx_ca(const char *d, const char *name, int server,
		       const char *ca_dir)
{
	char cert[300], key[300], ca[300], crl[300];
	struct tls_conf c = { cert, key, ca, crl };
	struct peer_id self;
	SSL_CTX *x;

	snprintf(cert, sizeof(cert), "%s/%s.crt", d, name);
	snprintf(key, sizeof(key), "%s/%s.key", d, name);
	snprintf(ca, sizeof(ca), "%s/ca.crt", ca_dir);
	snprintf(crl, sizeof(crl), "%s/crl.pem", ca_dir);
	x = tls_ctx_new(&c, server, &self, err, sizeof(err));
	if (!x)
		printf("# %s\n", err);
	return x;
}

static SSL_CTX *ctx_of(const char *d, const char *name, int server)
{
	return ctx_ca(d, name, server, d);
}

/* One client connection with @ctx to the server; the sides' records reset. */
static void connect_with(SSL_CTX *ctx, const char *expect)
{
	memset(&srv, 0, sizeof(srv));
	memset(&cli, 0, sizeof(cli));
	cli.c = conn_new(base, ctx, 0, -1, (struct sockaddr *)&srv_addr,
			 sizeof(srv_addr), expect, 0, &ops, &cli);
}

static int refused(SSL_CTX *ctx, const char *want)
{
	int ok;

	connect_with(ctx, "ctl");
	run_until(&srv.down, 1, 5000);
	ok = srv.down == 1 && srv.up == 0 && srv.frames == 0 && strstr(srv.why, want);
	if (!ok)
		printf("# server: up %d down %d: %s (want \"%s\")\n", srv.up, srv.down,
		       srv.why, want);
	run_until(&cli.down, 1, 2000);
	if (cli.c)
		conn_close(cli.c);
	return ok;
}

int main(int argc, char **argv)
{
	struct evconnlistener *l;
	socklen_t alen = sizeof(srv_addr);
	char cmd[2048], big[100000];
	SSL_CTX *pe1, *x;
	struct peer_id id;
	int ok;

	(void)argc;
	/* as the daemon: a peer that hangs up must not kill us (conn.h) */
	signal(SIGPIPE, SIG_IGN);
	ktap_plan(15);
	if (!mkdtemp(dir))
		return 1;
	/* tools/pki/dmsc-pki, from agent/lib/net/tests/ */
	snprintf(cmd, sizeof(cmd),
		 "(set -e; p=$(dirname %s)/../../../../tools/pki/dmsc-pki; d=%s;"
		 "$p -d $d/ca init; $p -d $d/ca node ctl --roles srd,smo,aam;"
		 "$p -d $d/ca node pe1 --roles sr; $p -d $d/ca node old --roles sr --expired;"
		 "$p -d $d/ca node gone --roles sr; $p -d $d/ca revoke gone;"
		 "$p -d $d/other init; $p -d $d/other node pe1 --roles sr;"
		 /* signed by our CA, but naming no node: only openssl makes that */
		 "openssl genpkey -algorithm ed25519 -out $d/ca/anon.key;"
		 "openssl req -new -key $d/ca/anon.key -subj /CN=anon -out $d/anon.csr;"
		 "printf 'subjectAltName=URI:urn:dmsc:role:sr\\nextendedKeyUsage=clientAuth\\n' >$d/ext;"
		 "openssl x509 -req -in $d/anon.csr -CA $d/ca/ca.crt -CAkey $d/ca/ca.key"
		 " -CAcreateserial -days 1 -extfile $d/ext -out $d/ca/anon.crt", argv[0], dir);
	snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), ") >%s/pki.log 2>&1", dir);
	ok = system(cmd) == 0;
	ktap_check(ok, "dmsc-pki made the CA and the node certificates");
	if (!ok) {
		snprintf(cmd, sizeof(cmd), "sed 's/^/# /' %s/pki.log", dir);
		if (system(cmd))
			return 1;
		return ktap_finish();
	}
	snprintf(path[0], sizeof(path[0]), "%s/ca", dir);
	snprintf(path[1], sizeof(path[1]), "%s/other", dir);

	base = event_base_new();
	srv_ctx = ctx_of(path[0], "ctl", 1);
	srv_addr.sin_family = AF_INET;
	srv_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = evconnlistener_new_bind(base, on_accept, NULL,
				    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 16,
				    (struct sockaddr *)&srv_addr, sizeof(srv_addr));
	ok = srv_ctx && l && !getsockname(evconnlistener_get_fd(l),
					  (struct sockaddr *)&srv_addr, &alen);
	if (!ok)
		return ktap_finish();

	pe1 = ctx_of(path[0], "pe1", 0);
	connect_with(pe1, "ctl");
	run_until(&srv.up, 1, 5000);
	run_until(&cli.up, 1, 5000);
	{
		char r1[32], r2[32];

		ok = srv.up == 1 && cli.up == 1 && !strcmp(srv.peer.node, "pe1") &&
		     srv.peer.roles == ROLE_SR && !strcmp(cli.peer.node, "ctl") &&
		     cli.peer.roles == (ROLE_SRD | ROLE_SMO | ROLE_AAM);
		printf("# server sees %s [%s], client sees %s [%s]\n", srv.peer.node,
		       peer_roles_text(srv.peer.roles, r1, sizeof(r1)), cli.peer.node,
		       peer_roles_text(cli.peer.roles, r2, sizeof(r2)));
	}
	ktap_check(ok, "mutual TLS 1.3: each side knows the other's node and roles from its certificate");

	memset(big, 'b', sizeof(big));
	big[sizeof(big) - 1] = 'B';
	srv.echo = 1;
	ok = cli.c && !conn_send(cli.c, "a", 1) && !conn_send(cli.c, big, sizeof(big)) &&
	     !conn_send(cli.c, "ccc", 3);
	run_until(&srv.frames, 3, 5000);
	run_until(&cli.frames, 3, 5000);
	ok = ok && srv.frames == 3 && srv.bytes[0] == 1 && srv.bytes[1] == sizeof(big) &&
	     srv.first[1] == 'B' && srv.bytes[2] == 3 && cli.frames == 3 &&
	     cli.bytes[1] == sizeof(big);
	ktap_check(ok, "frames of 1, 100,000 and 3 bytes arrive whole, in order, and echo back");

	ok = cli.c && conn_send(cli.c, big, CONN_MAX_FRAME + 1) == -1 &&
	     conn_send(cli.c, big, 0) == -1;
	ktap_check(ok, "a frame of 0 bytes or above 4 MiB is not sent");
	if (cli.c)
		conn_close(cli.c);
	run_until(&srv.down, 1, 5000);
	ok = srv.down == 1 && strstr(srv.why, "closed by peer");
	if (!ok)
		printf("# server: down %d: %s\n", srv.down, srv.why);
	ktap_check(ok, "the server sees the client leave");

	x = ctx_of(path[0], "old", 0);
	ktap_check(x && refused(x, "peer certificate: certificate has expired"),
		   "an expired client certificate is refused, and said so");
	SSL_CTX_free(x);
	x = ctx_of(path[0], "gone", 0);
	ktap_check(x && refused(x, "peer certificate: certificate revoked"),
		   "a revoked client certificate is refused, and said so");
	SSL_CTX_free(x);
	/* another CA's pe1, trusting ours (so that it is the server that refuses) */
	x = ctx_ca(path[1], "pe1", 0, path[0]);
	ktap_check(x && refused(x, "peer certificate: unable to get local issuer certificate"),
		   "a certificate from another CA is refused, and said so");
	SSL_CTX_free(x);

	/* anon.crt names no node: a client context refuses to use it... */
	x = ctx_of(path[0], "anon", 0);
	ok = !x && strstr(err, "names no node");
	ktap_check(ok, "our own certificate must name our node");

	/* a client that expects another node refuses the server */
	connect_with(pe1, "srd-x");
	run_until(&cli.down, 1, 5000);
	ok = cli.down == 1 && cli.up == 0 && strstr(cli.why, "peer is node ctl, expected srd-x");
	if (!ok)
		printf("# client: %s\n", cli.why);
	ktap_check(ok, "a client refuses a server that is not the node it expects");
	run_until(&srv.down, 1, 2000);

	/* a frame header claiming 4 GiB, from openssl s_client */
	memset(&srv, 0, sizeof(srv));
	snprintf(cmd, sizeof(cmd),
		 "(printf '\\377\\377\\377\\377'; sleep 2) | timeout 5 openssl s_client -quiet"
		 " -connect 127.0.0.1:%d -cert %s/pe1.crt -key %s/pe1.key -CAfile %s/ca.crt"
		 " >/dev/null 2>&1 &", ntohs(srv_addr.sin_port), path[0], path[0], path[0]);
	ok = system(cmd) == 0;
	run_until(&srv.down, 1, 5000);
	ok = ok && srv.up == 1 && srv.down == 1 && srv.frames == 0 &&
	     strstr(srv.why, "frame of 4294967295 bytes");
	if (!ok)
		printf("# server: up %d down %d: %s\n", srv.up, srv.down, srv.why);
	ktap_check(ok, "a frame header above 4 MiB ends the connection, nothing delivered");

	/*
	 * A peer that trickles a ClientHello, one byte every 300 ms after a
	 * record header announcing 512 bytes, never finishes.
	 */
	memset(&srv, 0, sizeof(srv));
	snprintf(cmd, sizeof(cmd),
		 "timeout 6 bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d;"
		 " printf \"\\026\\003\\001\\002\\000\" >&3;"
		 " for i in $(seq 15); do printf \"\\001\" >&3 || exit; sleep 0.3; done'"
		 " >/dev/null 2>&1 &",
		 ntohs(srv_addr.sin_port));
	{
		struct timespec a, b;
		long ms;

		clock_gettime(CLOCK_MONOTONIC, &a);
		ok = system(cmd) == 0;
		run_until(&srv.down, 1, 6000);
		clock_gettime(CLOCK_MONOTONIC, &b);
		ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
		printf("# a byte every 300 ms: dropped after %ld ms (%s)\n", ms, srv.why);
		ok = ok && srv.down == 1 && srv.up == 0 &&
		     strstr(srv.why, "handshake not finished in time") && ms < 4400;
	}
	ktap_check(ok, "a handshake trickled byte by byte is dropped at its deadline");

	ok = !conn_new(base, pe1, 0, -1, (struct sockaddr *)&srv_addr, sizeof(srv_addr),
		       NULL, 0, &ops, &cli);
	ktap_check(ok, "a client that names no server node is refused");

	{
		struct tls_conf c = { NULL, NULL, NULL, NULL };
		char cert[300], key[300], ca[300];

		snprintf(cert, sizeof(cert), "%s/pe1.crt", path[0]);
		snprintf(key, sizeof(key), "%s/ctl.key", path[0]);
		snprintf(ca, sizeof(ca), "%s/ca.crt", path[0]);
		c.cert = cert;
		c.key = key;
		c.ca = ca;
		ok = !tls_ctx_new(&c, 0, &id, err, sizeof(err)) &&
		     strstr(err, "ctl.key") && strstr(err, "mismatch");
		if (!ok)
			printf("# %s\n", err);
		c.key = "/nonexistent.key";
		ok = ok && !tls_ctx_new(&c, 0, &id, err, sizeof(err)) &&
		     strstr(err, "/nonexistent.key");
	}
	ktap_check(ok, "a key that does not match, a missing file: refused by name");

	{
		struct peer_id sr = { "pe1", ROLE_SR }, smo = { "ctl", ROLE_SMO | ROLE_SRD };
		char why[200];

		ok = !policy_check(&sr, 5, "pe1", why, sizeof(why)) &&
		     policy_check(&sr, 5, "pe2", why, sizeof(why)) &&
		     strstr(why, "only for its own node") &&
		     policy_check(&smo, 5, "ctl", why, sizeof(why)) &&
		     strstr(why, "only sr,mg may send it") &&
		     !policy_check(&smo, 2, NULL, why, sizeof(why)) &&
		     policy_check(&sr, 2, NULL, why, sizeof(why)) &&
		     !policy_check(&sr, 1, "pe1", why, sizeof(why)) &&
		     policy_check(&sr, 1, "pe9", why, sizeof(why)) &&
		     policy_check(&smo, 99, NULL, why, sizeof(why)) &&
		     strstr(why, "no rule allows it");
	}
	ktap_check(ok, "policy: an SR reports and registers only for its own node, only an SRD advertises routes, no rule is no");

	evconnlistener_free(l);
	SSL_CTX_free(pe1);
	SSL_CTX_free(srv_ctx);
	event_base_free(base);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	return ktap_finish();
}
