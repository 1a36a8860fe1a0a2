// SPDX-License-Identifier: GPL-2.0
/*
 * roce-gen sink: receive RoCEv2 on UDP 4791, check each packet's ICRC and
 * account its PSN per flow, then print a JSON summary.
 *
 * A UDP socket does not show the IP header, so the ICRC is checked against
 * the header the sender must have sent: addresses from IP(V6)_PKTINFO and
 * the source sockaddr, lengths from the datagram, and for IPv4 DF set and
 * identification 0 (what roce-gen send and Linux RoCE stacks emit).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sock_diag.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "addr.h"
#include "flow_table.h"
#include "packet.h"
#include "args.h"
#include "roce_gen.h"

#define BATCH		64
#define BUF_SIZE	(PKT_MAX_PAYLOAD + 256)
#define CMSG_SIZE	256

struct sink_opts {
	struct sockaddr_storage bind;
	socklen_t bind_len;
	bool have_bind;
	const char *dev;
	uint64_t port, rcvbuf, count, psn;
	bool have_psn;
	double duration, idle, wait;
	const char *json, *ready_file;
};

struct sink_sock {
	int fd;
	uint16_t port;		/* bound port: the packets' UDP destination */
	uint32_t drops;		/* latest SO_RXQ_OVFL value */
};

struct sink_stats {
	uint64_t malformed, received;
	uint64_t start_ns, end_ns;
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

void sink_usage(void)
{
	fprintf(stderr,
"Usage: roce-gen sink [ bind ADDR ] [ dev IFNAME ] [ port PORT ]\n"
"                     [ duration SECS ] [ idle SECS ] [ count PKTS ]\n"
"                     [ psn FIRST_PSN ] [ rcvbuf BYTES ] [ json FILE ]\n"
"                     [ ready-file FILE ] [ wait SECS ]\n"
"  bind ADDR       listen on ADDR only; default all IPv4 and IPv6 addresses\n"
"  port PORT       UDP port, default 4791\n"
"  duration SECS   stop after SECS; idle SECS: stop SECS after the last\n"
"                  packet (counted from start until one arrives); count PKTS:\n"
"                  stop after PKTS packets; SIGINT/SIGTERM stop too\n"
"  wait SECS       with idle: wait SECS for the first packet (default: idle),\n"
"                  for a sender that may start late\n"
"  psn FIRST_PSN   senders start at FIRST_PSN: PSNs lost before a flow's first\n"
"                  arrival count as gaps (default: a flow starts where it is\n"
"                  first seen)\n"
"  rcvbuf BYTES    socket receive buffer (SO_RCVBUFFORCE), default 32 MiB\n"
"  dev IFNAME      receive only from IFNAME (SO_BINDTODEVICE)\n"
"  ready-file FILE created once the sockets listen\n"
"Writes a JSON summary to FILE (json FILE) or stdout.\n");
}

static double secs_arg(int argc, char **argv, int *i)
{
	const char *opt = argv[*i];
	const char *v = next_arg(argc, argv, i);
	double d;

	if (!parse_double(v, 0.001, 1e7, &d)) {
		char msg[160];

		snprintf(msg, sizeof(msg), "bad value \"%s\" for \"%s\"", v, opt);
		die_usage(sink_usage, "sink: %s", msg);
	}
	return d;
}

static void parse_opts(int argc, char **argv, struct sink_opts *o)
{
	args_begin("sink", sink_usage);
	*o = (struct sink_opts) { .port = ROCE_UDP_PORT, .rcvbuf = 32 << 20 };
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "help") || !strcmp(a, "-h") || !strcmp(a, "--help")) {
			sink_usage();
			exit(0);
		} else if (!strcmp(a, "bind")) {
			const char *v = next_arg(argc, argv, &i);

			if (addr_parse(v, &o->bind, &o->bind_len))
				usage_err("bad address \"%s\" for \"bind\"", v);
			o->have_bind = true;
		} else if (!strcmp(a, "dev")) {
			o->dev = next_arg(argc, argv, &i);
			if (strlen(o->dev) >= IFNAMSIZ)
				usage_err("bad interface name \"%s\" for \"dev\"", o->dev);
		} else if (!strcmp(a, "port")) {
			o->port = num_arg(argc, argv, &i, 1, 65535);
		} else if (!strcmp(a, "duration")) {
			o->duration = secs_arg(argc, argv, &i);
		} else if (!strcmp(a, "idle")) {
			o->idle = secs_arg(argc, argv, &i);
		} else if (!strcmp(a, "wait")) {
			o->wait = secs_arg(argc, argv, &i);
		} else if (!strcmp(a, "count")) {
			o->count = num_arg(argc, argv, &i, 1, UINT64_MAX);
		} else if (!strcmp(a, "psn")) {
			o->psn = num_arg(argc, argv, &i, 0, PSN_MASK);
			o->have_psn = true;
		} else if (!strcmp(a, "rcvbuf")) {
			o->rcvbuf = num_arg(argc, argv, &i, 4096, INT32_MAX);
		} else if (!strcmp(a, "json")) {
			o->json = next_arg(argc, argv, &i);
		} else if (!strcmp(a, "ready-file")) {
			o->ready_file = next_arg(argc, argv, &i);
		} else {
			usage_err("unknown option \"%s\"", a);
		}
	}
}

static int open_socket(const struct sink_opts *o, int family,
		       const struct sockaddr_storage *addr, socklen_t len)
{
	int one = 1, buf = (int)o->rcvbuf;
	int fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -1;
	if (family == AF_INET6 &&
	    (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) ||
	     setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one))))
		goto fail;
	if (family == AF_INET &&
	    setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one)))
		goto fail;
	/* Kernel arrival times, and the socket's drop count on each packet. */
	if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one)))
		goto fail;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	if (o->dev && setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, o->dev,
				 (socklen_t)strlen(o->dev) + 1))
		goto fail;
	if (bind(fd, (const struct sockaddr *)addr, len))
		goto fail;
	return fd;
fail:
	close(fd);
	return -1;
}

static int open_sockets(const struct sink_opts *o, struct sink_sock *s)
{
	struct sockaddr_storage any4 = { .ss_family = AF_INET };
	struct sockaddr_storage any6 = { .ss_family = AF_INET6 };
	struct sockaddr_storage b = o->bind;
	int n = 0, fd;

	if (o->have_bind) {
		addr_set_port(&b, (uint16_t)o->port);
		fd = open_socket(o, b.ss_family, &b, o->bind_len);
		if (fd < 0)
			return -1;
		s[n++].fd = fd;
		return n;
	}
	addr_set_port(&any4, (uint16_t)o->port);
	addr_set_port(&any6, (uint16_t)o->port);
	fd = open_socket(o, AF_INET, &any4, sizeof(struct sockaddr_in));
	if (fd < 0)
		return -1;
	s[n++].fd = fd;
	fd = open_socket(o, AF_INET6, &any6, sizeof(struct sockaddr_in6));
	if (fd >= 0)
		s[n++].fd = fd;
	else if (errno != EAFNOSUPPORT)	/* a host without IPv6 is fine */
		return -1;
	return n;
}

/* Take the addresses, arrival time and drop count out of one message. */
static void read_cmsgs(struct msghdr *m, struct roce_addr *ra, uint64_t *ts,
		       struct sink_sock *s)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			memcpy(&ra->dst, &pi.ipi_addr, 4);
		} else if (c->cmsg_level == IPPROTO_IPV6 &&
			   c->cmsg_type == IPV6_PKTINFO) {
			struct in6_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			ra->dst = pi.ipi6_addr;
		} else if (c->cmsg_level == SOL_SOCKET &&
			   c->cmsg_type == SO_TIMESTAMPNS) {
			struct timespec t;

			memcpy(&t, CMSG_DATA(c), sizeof(t));
			*ts = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
		} else if (c->cmsg_level == SOL_SOCKET &&
			   c->cmsg_type == SO_RXQ_OVFL) {
			uint32_t d;

			memcpy(&d, CMSG_DATA(c), sizeof(d));
			s->drops = d;
		}
	}
}

static void account(struct flow_table *t, struct sink_stats *st,
		    const uint8_t *buf, size_t len,
		    const struct sockaddr_storage *from, struct roce_addr *ra,
		    uint64_t ts)
{
	struct pkt_info pi;
	struct flow_key k = { .family = from->ss_family };
	enum pkt_status status;
	struct flow *f;

	ra->family = from->ss_family;
	addr_bytes(from, &ra->src);
	ra->sport = addr_port(from);
	status = pkt_parse(buf, len, ra, &pi);
	if (status == PKT_MALFORMED) {
		st->malformed++;
		return;
	}
	k.src = ra->src;
	k.sport = ra->sport;
	k.dqpn = pi.bth.dqpn;
	f = flow_get(t, &k);
	if (!f) {
		perror("roce-gen: sink");
		exit(1);
	}
	f->dst = ra->dst;
	if (status == PKT_BAD_ICRC) {
		/* A NIC drops these; so the PSN stays missing. */
		f->icrc_errors++;
		return;
	}
	psn_window_add(&f->win, pi.bth.psn);
	if (!f->packets) {
		f->first_psn = pi.bth.psn;
		f->first_ns = ts;
	}
	f->last_psn = pi.bth.psn;
	f->last_ns = ts;
	f->opcode = pi.bth.opcode;
	f->packets++;
	f->bytes += len;
	f->payload_bytes += pi.payload;
	st->received++;
}

/* Drain one socket; returns packets seen, or -1 on a real error. */
static int drain(struct sink_sock *s, struct flow_table *t, struct sink_stats *st,
		 uint8_t (*bufs)[BUF_SIZE], uint8_t (*cbufs)[CMSG_SIZE])
{
	struct sockaddr_storage from[BATCH];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	int n;

	memset(msgs, 0, sizeof(msgs));
	for (int i = 0; i < BATCH; i++) {
		iov[i] = (struct iovec){ bufs[i], BUF_SIZE };
		msgs[i].msg_hdr = (struct msghdr){
			.msg_name = &from[i], .msg_namelen = sizeof(from[i]),
			.msg_iov = &iov[i], .msg_iovlen = 1,
			.msg_control = cbufs[i], .msg_controllen = CMSG_SIZE,
		};
	}
	n = recvmmsg(s->fd, msgs, BATCH, MSG_DONTWAIT, NULL);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	for (int i = 0; i < n; i++) {
		struct roce_addr ra = { .family = 0 };
		uint64_t ts = 0;

		read_cmsgs(&msgs[i].msg_hdr, &ra, &ts, s);
		if (!ts)
			ts = now_ns(CLOCK_REALTIME);
		if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
			st->malformed++;
			continue;
		}
		ra.dport = s->port;
		account(t, st, bufs[i], msgs[i].msg_len, &from[i], &ra, ts);
	}
	return n;
}

static uint32_t socket_drops(const struct sink_sock *s)
{
	uint32_t mem[SK_MEMINFO_VARS] = { 0 };
	socklen_t len = sizeof(mem);

	if (!getsockopt(s->fd, SOL_SOCKET, SO_MEMINFO, mem, &len) &&
	    len > SK_MEMINFO_DROPS * sizeof(uint32_t) &&
	    mem[SK_MEMINFO_DROPS] > s->drops)
		return mem[SK_MEMINFO_DROPS];
	return s->drops;
}

static double epoch_s(uint64_t ns)
{
	return (double)ns / 1e9;
}

#define ADD_U64(obj, key, v) \
	json_object_object_add(obj, key, json_object_new_int64((int64_t)(v)))

static struct json_object *report(const struct flow_table *t,
				  const struct sink_stats *st, uint64_t drops)
{
	struct json_object *root = json_object_new_object();
	struct json_object *tot = json_object_new_object();
	struct json_object *arr = json_object_new_array();
	struct flow **v = flow_table_sorted(t);
	uint64_t pk = 0, by = 0, pb = 0, gaps = 0, ooo = 0, dup = 0, old = 0, bad = 0;
	char buf[ADDR_STRLEN];

	for (size_t i = 0; v && v[i]; i++) {
		const struct flow *f = v[i];
		struct json_object *j = json_object_new_object();
		struct sockaddr_storage ss = { .ss_family = (sa_family_t)f->key.family };

		if (f->key.family == AF_INET)
			memcpy(&((struct sockaddr_in *)&ss)->sin_addr, &f->key.src, 4);
		else
			((struct sockaddr_in6 *)&ss)->sin6_addr = f->key.src;
		json_object_object_add(j, "src", json_object_new_string(addr_str(&ss, buf)));
		ADD_U64(j, "sport", f->key.sport);
		if (f->key.family == AF_INET)
			memcpy(&((struct sockaddr_in *)&ss)->sin_addr, &f->dst, 4);
		else
			((struct sockaddr_in6 *)&ss)->sin6_addr = f->dst;
		json_object_object_add(j, "dst", json_object_new_string(addr_str(&ss, buf)));
		ADD_U64(j, "dest_qp", f->key.dqpn);
		json_object_object_add(j, "opcode", json_object_new_string(bth_opcode_name(f->opcode)));
		ADD_U64(j, "packets", f->packets);
		ADD_U64(j, "bytes", f->bytes);
		ADD_U64(j, "payload_bytes", f->payload_bytes);
		ADD_U64(j, "first_psn", f->first_psn);
		ADD_U64(j, "last_psn", f->last_psn);
		ADD_U64(j, "next_psn", f->win.next);
		ADD_U64(j, "psn_gaps", f->win.missing);
		ADD_U64(j, "out_of_order", f->win.late);
		ADD_U64(j, "duplicates", f->win.dups);
		ADD_U64(j, "too_old", f->win.too_old);
		ADD_U64(j, "icrc_errors", f->icrc_errors);
		json_object_object_add(j, "first_arrival", json_object_new_double(epoch_s(f->first_ns)));
		json_object_object_add(j, "last_arrival", json_object_new_double(epoch_s(f->last_ns)));
		json_object_array_add(arr, j);
		pk += f->packets;
		by += f->bytes;
		pb += f->payload_bytes;
		gaps += f->win.missing;
		ooo += f->win.late;
		dup += f->win.dups;
		old += f->win.too_old;
		bad += f->icrc_errors;
	}
	free(v);
	json_object_object_add(root, "mode", json_object_new_string("sink"));
	json_object_object_add(root, "duration_s",
			       json_object_new_double((double)(st->end_ns - st->start_ns) / 1e9));
	ADD_U64(tot, "flows", t->count);
	ADD_U64(tot, "packets", pk);
	ADD_U64(tot, "bytes", by);
	ADD_U64(tot, "payload_bytes", pb);
	ADD_U64(tot, "psn_gaps", gaps);
	ADD_U64(tot, "out_of_order", ooo);
	ADD_U64(tot, "duplicates", dup);
	ADD_U64(tot, "too_old", old);
	ADD_U64(tot, "icrc_errors", bad);
	ADD_U64(tot, "malformed", st->malformed);
	ADD_U64(tot, "socket_drops", drops);
	json_object_object_add(root, "totals", tot);
	json_object_object_add(root, "qps", arr);
	return root;
}

static int run(const struct sink_opts *o)
{
	uint8_t (*bufs)[BUF_SIZE] = calloc(BATCH, BUF_SIZE);
	uint8_t (*cbufs)[CMSG_SIZE] = calloc(BATCH, CMSG_SIZE);
	struct sink_sock socks[2] = { { .fd = -1 }, { .fd = -1 } };
	struct sink_stats st = { 0 };
	struct pollfd pfd[2];
	struct flow_table t;
	uint64_t start, last = 0, drops = 0;
	struct json_object *js;
	int nsock, err = 0;

	if (!bufs || !cbufs || flow_table_init(&t, o->have_psn, (uint32_t)o->psn)) {
		perror("roce-gen: sink");
		return 1;
	}
	nsock = open_sockets(o, socks);
	if (nsock < 0) {
		fprintf(stderr, "roce-gen: sink: port %u: %s\n", (unsigned)o->port,
			strerror(errno));
		return 1;
	}
	if (o->ready_file) {
		int fd = open(o->ready_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd >= 0)
			close(fd);
	}
	for (int i = 0; i < nsock; i++) {
		socks[i].port = (uint16_t)o->port;
		socks[i].drops = 0;
	}
	for (int i = 0; i < nsock; i++)
		pfd[i] = (struct pollfd){ .fd = socks[i].fd, .events = POLLIN };
	start = now_ns(CLOCK_MONOTONIC);
	st.start_ns = start;
	while (!stop_requested) {
		uint64_t now = now_ns(CLOCK_MONOTONIC), deadline = UINT64_MAX;
		int timeout, r;

		if (o->duration > 0)
			deadline = start + (uint64_t)(o->duration * 1e9);
		if (o->idle > 0) {
			/* Before the first packet: wait, if given, instead. */
			double secs = !last && o->wait > 0 ? o->wait : o->idle;
			uint64_t idle_end = (last ? last : start) + (uint64_t)(secs * 1e9);

			if (idle_end < deadline)
				deadline = idle_end;
		}
		if (now >= deadline)
			break;
		timeout = deadline == UINT64_MAX ? -1 :
			  (int)((deadline - now + 999999) / 1000000);
		r = poll(pfd, (nfds_t)nsock, timeout);
		if (r < 0 && errno != EINTR) {
			perror("roce-gen: sink: poll");
			err = 1;
			break;
		}
		for (int i = 0; r > 0 && i < nsock; i++) {
			int got, rounds = 0;

			if (!(pfd[i].revents & POLLIN))
				continue;
			/*
			 * Drain in big gulps, but come back to check the
			 * deadlines and the other socket now and then.
			 */
			while (rounds++ < 256 &&
			       (got = drain(&socks[i], &t, &st, bufs, cbufs)) > 0)
				last = now_ns(CLOCK_MONOTONIC);
			if (got < 0) {
				perror("roce-gen: sink: recvmmsg");
				err = 1;
				stop_requested = 1;
			}
		}
		if (o->count && st.received >= o->count)
			break;
	}
	st.end_ns = now_ns(CLOCK_MONOTONIC);
	for (int i = 0; i < nsock; i++) {
		drops += socket_drops(&socks[i]);
		close(socks[i].fd);
	}
	js = report(&t, &st, drops);
	if (json_write(js, o->json))
		err = 1;
	json_object_put(js);
	flow_table_free(&t);
	free(bufs);
	free(cbufs);
	return err;
}

int sink_main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct sink_opts o;

	parse_opts(argc, argv, &o);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	return run(&o);
}
