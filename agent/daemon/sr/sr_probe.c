// SPDX-License-Identifier: GPL-2.0
/*
 * The SR's ICMPv6 echo probe of its instances (sr_probe.h).
 *
 * One raw ICMPv6 socket, whose checksum the kernel computes (RFC 3542).
 * The kernel gives a raw ICMPv6 socket every ICMPv6 message the host
 * receives; a classic BPF filter keeps only echo replies with this agent's
 * identifier, so another program's pings cost the loop nothing (and
 * ICMP6_FILTER, where a filter cannot be attached, keeps out what is not
 * an echo reply). One wake-up reads at most PROBE_READ_BATCH replies:
 * a flood past the filter cannot hold the loop. Echo
 * requests carry an identifier of this agent and a sequence number; a
 * reply counts only from the instance's SID, with the identifier and the
 * sequence of that instance's echo of this round. Any other one (another
 * program's ping, a late or forged reply) is a stray, counted. At most
 * one echo per instance is out at a time, so a round needs no table of
 * outstanding echoes: the instances themselves are it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <linux/filter.h>

#include "agent.h"
#include "log.h"
#include "sr_probe.h"

/* replies read per wake-up; the rest wait for the next turn of the loop */
#define PROBE_READ_BATCH	64

struct probe_inst {
	char id[MSG_ID_MAX];
	struct in6_addr sid;
	bool sid_ok;		/* the SID parsed */
	bool waiting;		/* an echo of this round is out */
	uint16_t seq;		/* ... with this sequence number */
	int64_t sent_us;	/* ... sent then */
	uint64_t sent, lost;
	bool has_rtt;
	uint64_t rtt_us, srtt_us;
	bool keep;		/* still registered: sr_probe_round() */
};

struct sr_probe {
	struct agent *a;
	int fd;
	struct event *ev;
	uint16_t ident, seq;
	struct probe_inst *insts;
	size_t n, cap;
	uint64_t sent, answered, lost, send_errors, strays;
	bool send_error_said;
	bool filtered;		/* the BPF filter is attached */
};

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static struct probe_inst *find(struct sr_probe *p, const char *id)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->insts[i].id, id))
			return &p->insts[i];
	return NULL;
}

static void on_reply(evutil_socket_t fd, short what, void *arg)
{
	struct sr_probe *p = arg;
	unsigned char buf[256];
	struct sockaddr_in6 from;
	socklen_t fl = sizeof(from);
	ssize_t len;
	int budget = PROBE_READ_BATCH;

	(void)what;
	while (budget-- > 0 &&
	       (len = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from,
			       &fl)) >= 0) {
		const struct icmp6_hdr *h = (const struct icmp6_hdr *)buf;
		struct probe_inst *x = NULL;
		int64_t rtt;

		fl = sizeof(from);
		if ((size_t)len < sizeof(*h) || h->icmp6_type != ICMP6_ECHO_REPLY ||
		    ntohs(h->icmp6_id) != p->ident) {
			p->strays++;
			continue;
		}
		for (size_t i = 0; i < p->n && !x; i++)
			if (p->insts[i].waiting &&
			    p->insts[i].seq == ntohs(h->icmp6_seq) &&
			    !memcmp(&p->insts[i].sid, &from.sin6_addr, sizeof(from.sin6_addr)))
				x = &p->insts[i];
		if (!x) {
			p->strays++;	/* late (lost already), or not ours */
			continue;
		}
		rtt = now_us() - x->sent_us;
		x->waiting = false;
		x->rtt_us = rtt > 0 ? (uint64_t)rtt : 0;
		if (x->rtt_us > NODE_MAX_PROBE_RTT_US)
			x->rtt_us = NODE_MAX_PROBE_RTT_US;
		/* RFC 6298's smoothing: srtt += (rtt - srtt) / 8 */
		x->srtt_us = x->has_rtt ? (uint64_t)((int64_t)x->srtt_us +
				((int64_t)x->rtt_us - (int64_t)x->srtt_us) / 8) :
				x->rtt_us;
		x->has_rtt = true;
		p->answered++;
	}
}

/*
 * In the kernel: an ICMPv6 echo reply (type 129) whose identifier is
 * @ident passes; anything else is dropped before it is queued. The
 * offsets are from the ICMPv6 header, where a raw IPv6 socket's data
 * starts.
 */
static int attach_filter(int fd, uint16_t ident)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0),		/* type */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ICMP6_ECHO_REPLY, 0, 3),
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 4),		/* identifier */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ident, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 0xffff),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]),
				   .filter = code };

	return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
}

struct sr_probe *sr_probe_new(struct agent *a)
{
	struct sr_probe *p = calloc(1, sizeof(*p));
	struct icmp6_filter filt;

	if (!p)
		return NULL;
	p->a = a;
	p->fd = socket(AF_INET6, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
		       IPPROTO_ICMPV6);
	if (p->fd < 0) {
		agent_log("sr: no probe of the instances (type 4 probe): raw ICMPv6 socket: %s",
			  strerror(errno));
		free(p);
		return NULL;
	}
	ICMP6_FILTER_SETBLOCKALL(&filt);
	ICMP6_FILTER_SETPASS(ICMP6_ECHO_REPLY, &filt);
	if (setsockopt(p->fd, IPPROTO_ICMPV6, ICMP6_FILTER, &filt, sizeof(filt)))
		agent_log("sr: probe: ICMP6_FILTER: %s (replies are sorted here)",
			  strerror(errno));
	/* another agent's echoes on this host are not ours */
	if (getrandom(&p->ident, sizeof(p->ident), 0) != sizeof(p->ident))
		p->ident = (uint16_t)(getpid() ^ now_us());
	p->filtered = !attach_filter(p->fd, p->ident);
	if (!p->filtered)
		agent_log("sr: probe: SO_ATTACH_FILTER: %s (other echo replies are sorted here)",
			  strerror(errno));
	/* nor is a reply to it guessed from the first sequence number */
	if (getrandom(&p->seq, sizeof(p->seq), 0) != sizeof(p->seq))
		p->seq = (uint16_t)now_us();
	p->ev = event_new(a->base, p->fd, EV_READ | EV_PERSIST, on_reply, p);
	if (!p->ev || event_add(p->ev, NULL)) {
		agent_log("sr: probe: cannot watch its socket");
		sr_probe_free(p);
		return NULL;
	}
	return p;
}

void sr_probe_free(struct sr_probe *p)
{
	if (!p)
		return;
	if (p->ev)
		event_free(p->ev);
	close(p->fd);
	free(p->insts);
	free(p);
}

/* @x's echo; a send that fails (no route to the SID) is lost at once. */
static void send_echo(struct sr_probe *p, struct probe_inst *x)
{
	struct sockaddr_in6 to = { .sin6_family = AF_INET6, .sin6_addr = x->sid };
	struct icmp6_hdr h = { .icmp6_type = ICMP6_ECHO_REQUEST };

	x->seq = ++p->seq;
	h.icmp6_id = htons(p->ident);
	h.icmp6_seq = htons(x->seq);
	x->sent++;
	p->sent++;
	x->sent_us = now_us();
	if (sendto(p->fd, &h, sizeof(h), 0, (struct sockaddr *)&to, sizeof(to)) ==
	    (ssize_t)sizeof(h)) {
		x->waiting = true;
		return;
	}
	x->lost++;
	p->lost++;
	p->send_errors++;
	if (!p->send_error_said)
		agent_log("sr: probe of %s (%s): %s (counted lost; said once)", x->id,
			  inet_ntop(AF_INET6, &x->sid, (char[INET6_ADDRSTRLEN]){ 0 },
				    INET6_ADDRSTRLEN),
			  strerror(errno));
	p->send_error_said = true;
}

void sr_probe_round(struct sr_probe *p, const struct msg_instance *local,
		    size_t n)
{
	size_t k = 0;

	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		struct probe_inst *x = &p->insts[i];

		if (x->waiting) {
			x->waiting = false;
			x->lost++;
			p->lost++;
		}
		x->keep = false;
	}
	for (size_t i = 0; i < n; i++) {
		struct probe_inst *x = find(p, local[i].id);

		if (!x) {
			if (p->n == p->cap) {
				size_t cap = p->cap ? 2 * p->cap : 16;
				void *m = realloc(p->insts, cap * sizeof(*p->insts));

				if (!m)
					continue;	/* this one next round */
				p->insts = m;
				p->cap = cap;
			}
			x = &p->insts[p->n++];
			memset(x, 0, sizeof(*x));
			snprintf(x->id, sizeof(x->id), "%s", local[i].id);
		}
		x->sid_ok = inet_pton(AF_INET6, local[i].sid, &x->sid) == 1;
		x->keep = true;
	}
	/* the deregistered go; the rest keep their order */
	for (size_t i = 0; i < p->n; i++)
		if (p->insts[i].keep)
			p->insts[k++] = p->insts[i];
	p->n = k;
	for (size_t i = 0; i < p->n; i++)
		if (p->insts[i].sid_ok)
			send_echo(p, &p->insts[i]);
}

void sr_probe_fill(const struct sr_probe *p, const char *id,
		   struct node_inst *n)
{
	const struct probe_inst *x = NULL;

	for (size_t i = 0; p && i < p->n && !x; i++)
		if (!strcmp(p->insts[i].id, id))
			x = &p->insts[i];
	if (!x || !x->sent)
		return;
	n->has_probe = true;
	n->probe_sent = x->sent;
	/* the one still out is not lost yet */
	n->probe_lost = x->lost;
	n->has_probe_rtt = x->has_rtt;
	n->probe_rtt_us = x->rtt_us;
	n->probe_srtt_us = x->srtt_us;
}

struct json_object *sr_probe_show(const struct sr_probe *p)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "sent", json_object_new_uint64(p->sent));
	json_object_object_add(o, "answered", json_object_new_uint64(p->answered));
	json_object_object_add(o, "lost", json_object_new_uint64(p->lost));
	json_object_object_add(o, "send_errors", json_object_new_uint64(p->send_errors));
	json_object_object_add(o, "strays", json_object_new_uint64(p->strays));
	json_object_object_add(o, "instances", json_object_new_uint64(p->n));
	json_object_object_add(o, "filtered", json_object_new_boolean(p->filtered));
	return o;
}
