// SPDX-License-Identifier: GPL-2.0
/*
 * dmsc-rsvp: the RSVP-CBFC speaker on its own, until dmsc-agent's sr role
 * runs it, and its client. Documentation/cbfc.md, "Signalling".
 *   dmsc-rsvp run -C SOCK [-6 ADDR] [-4 ADDR] [-c BYTES] [-f mb|cumulative]
 *                 [-r REFRESH_MS] [-t RETRY_MS] [-n RETRIES]
 *   dmsc-rsvp -C SOCK setup FLOW path HOP[,HOP...] [backup HOP[,HOP...]]
 *                   [tunnel ID]
 *   dmsc-rsvp -C SOCK set FLOW backup HOP[,HOP...]|none
 *   dmsc-rsvp -C SOCK teardown|status FLOW
 *   dmsc-rsvp -C SOCK stats|state
 *   dmsc-rsvp inject FROM TO truncated|badlen|badsum|unknown|absurd|class
 * FLOW := src ADDR dst ADDR sport PORT qpn QPN
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <linux/dmsc.h>

#include "rsvp_speaker.h"

static int usage(void)
{
	fprintf(stderr,
		"Usage: dmsc-rsvp run -C SOCK [-6 ADDR] [-4 ADDR] [-c BYTES] [-f mb|cumulative]\n"
		"                     [-r REFRESH_MS] [-t RETRY_MS] [-n RETRIES]\n"
		"       dmsc-rsvp -C SOCK setup FLOW path HOP[,HOP...] [backup HOP[,HOP...]]\n"
		"                       [tunnel ID]\n"
		"       dmsc-rsvp -C SOCK set FLOW backup HOP[,HOP...]|none\n"
		"       dmsc-rsvp -C SOCK teardown|status FLOW\n"
		"       dmsc-rsvp -C SOCK stats|state\n"
		"       dmsc-rsvp inject FROM TO truncated|badlen|badsum|unknown|absurd|class\n"
		"FLOW := src ADDR dst ADDR sport PORT qpn QPN\n");
	return 2;
}

static int addr(const char *field, const char *s, struct rsvp_addr *a)
{
	memset(a, 0, sizeof(*a));
	a->family = strchr(s, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(a->family, s, a->a) == 1)
		return 0;
	fprintf(stderr, "dmsc-rsvp: %s \"%s\": not an address\n", field, s);
	return -1;
}

static int num(const char *field, const char *s, unsigned long long max,
	       unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	if (s[0] >= '0' && s[0] <= '9' && !errno && !*end && *v <= max)
		return 0;
	fprintf(stderr, "dmsc-rsvp: %s \"%s\": not a number in 0..%llu\n",
		field, s, max);
	return -1;
}

static int run(int argc, char **argv, const char *ctl)
{
	struct rsvp_speaker_cfg c = {
		.credit = 65536, .form = RSVP_CTYPE_CREDIT_CUMULATIVE,
		.refresh_ms = 30000, .retry_ms = 200, .retries = 3,
		.ctl_path = ctl,
	};
	unsigned long long v;
	int i;

	for (i = 0; i < argc; i++) {
		const char *o = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(o, "--no-kernel")) {
			c.no_kernel = true;
			continue;
		}
		if (!val)
			return usage();
		i++;
		if (!strcmp(o, "-6") || !strcmp(o, "-4")) {
			struct rsvp_addr *a = o[1] == '6' ? &c.addr6 : &c.addr4;

			if (addr(o, val, a))
				return 2;
			if (a->family != (o[1] == '6' ? AF_INET6 : AF_INET)) {
				fprintf(stderr, "dmsc-rsvp: %s \"%s\": wrong family\n",
					o, val);
				return 2;
			}
		} else if (!strcmp(o, "-C")) {
			c.ctl_path = val;
		} else if (!strcmp(o, "-c")) {
			if (num("credit", val, DMSC_CREDIT_MAX, &v))
				return 2;
			c.credit = v;
		} else if (!strcmp(o, "-f")) {
			if (!strcmp(val, "mb"))
				c.form = RSVP_CTYPE_CREDIT_MB;
			else if (!strcmp(val, "cumulative"))
				c.form = RSVP_CTYPE_CREDIT_CUMULATIVE;
			else
				return usage();
		} else if (!strcmp(o, "-r") || !strcmp(o, "-t")) {
			if (num(o, val, 3600000, &v) || !v)
				return 2;
			*(o[1] == 'r' ? &c.refresh_ms : &c.retry_ms) = v;
		} else if (!strcmp(o, "-n")) {
			if (num("retries", val, 10, &v))
				return 2;
			c.retries = v;
		} else {
			return usage();
		}
	}
	if (!c.ctl_path || (!c.addr4.family && !c.addr6.family)) {
		fprintf(stderr, "dmsc-rsvp: run needs -C SOCK and -6 or -4 ADDR\n");
		return 2;
	}
	/* The MB form carries whole MB: the reservation must be one at least. */
	if (c.form == RSVP_CTYPE_CREDIT_MB &&
	    ((c.credit >> 20) < 1 || (c.credit >> 20) > RSVP_CREDIT_MB_MAX)) {
		fprintf(stderr, "dmsc-rsvp: credit %llu: the mb form needs 1..%u MB\n",
			(unsigned long long)c.credit, RSVP_CREDIT_MB_MAX);
		return 2;
	}
	return rsvp_speaker_run(&c);
}

/* One command line to the speaker; its answer into @ans. */
static int ask(const char *ctl, const char *line, char *ans, size_t len)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	size_t got = 0;
	ssize_t n;
	int fd;

	if (strlen(ctl) >= sizeof(sun.sun_path))
		return -1;
	strcpy(sun.sun_path, ctl);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    send(fd, line, strlen(line), 0) < 0) {
		fprintf(stderr, "dmsc-rsvp: %s: %s\n", ctl, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (got + 1 < len && (n = recv(fd, ans + got, len - got - 1, 0)) > 0)
		got += n;
	ans[got] = 0;
	close(fd);
	return 0;
}

static int client(const char *ctl, int argc, char **argv)
{
	char line[1024] = "", ans[65536], status[1024] = "status";
	/* set-up and set come back once their lists are up or failed */
	bool waits = !strcmp(argv[0], "setup") || !strcmp(argv[0], "set");
	size_t l = 0;
	int i, waited;

	for (i = 0; i < argc; i++) {
		int n = snprintf(line + l, sizeof(line) - l, "%s%s",
				 i ? " " : "", argv[i]);

		if (n < 0 || (size_t)n >= sizeof(line) - l) {
			fprintf(stderr, "dmsc-rsvp: command too long\n");
			return 2;
		}
		l += n;
		/* status takes the flow: the words before path or backup. */
		if (i && waits && i < 9) {
			strcat(status, " ");
			strcat(status, argv[i]);
		}
	}
	if (ask(ctl, line, ans, sizeof(ans)))
		return 1;
	if (!strncmp(ans, "error", 5) || (waits && strncmp(ans, "ok", 2))) {
		fputs(ans, stderr);
		return 1;
	}
	if (!waits) {
		fputs(ans, stdout);
		return 0;
	}
	/* Set-up is hop by hop: wait until no list is still waiting. */
	for (waited = 0; waited < 20000; waited += 50) {
		struct timespec ts = { .tv_nsec = 50 * 1000000 };

		if (ask(ctl, status, ans, sizeof(ans)))
			return 1;
		if (!strstr(ans, " wait "))
			break;
		nanosleep(&ts, NULL);
	}
	fputs(ans, stdout);
	return strstr(ans, " wait ") || strstr(ans, " failed ") ? 1 : 0;
}

static void reseal(uint8_t *b, size_t len)
{
	uint16_t ck;

	b[6] = len >> 8;
	b[7] = len;
	b[2] = b[3] = 0;
	ck = rsvp_checksum(b, len);
	b[2] = ck >> 8;
	b[3] = ck;
}

/* A RESV made wrong in one way, sent once from a raw socket. */
static int inject(int argc, char **argv)
{
	struct rsvp_addr from, to;
	struct sockaddr_storage ss;
	uint8_t b[RSVP_MSG_MAX + 8];
	struct rsvp_msg m;
	const char *kind;
	char why[256];
	socklen_t sl;
	int len, fd, o, cr = 0, hops = RSVP_HOP_LIMIT;

	if (argc != 3 || addr("from", argv[0], &from) || addr("to", argv[1], &to))
		return usage();
	kind = argv[2];
	memset(&m, 0, sizeof(m));
	m.type = RSVP_MSG_CBFC_RESV;
	m.send_ttl = RSVP_HOP_LIMIT;
	addr("dst", "10.99.0.2", &m.dst);
	addr("src", "10.99.0.1", &m.src);
	m.sport = 4242;
	m.qpn = 99;
	m.hop = from;
	m.refresh_ms = 30000;
	m.credit_ctype = RSVP_CTYPE_CREDIT_CUMULATIVE;
	m.initial = 4096;
	len = rsvp_build(&m, b, sizeof(b), why, sizeof(why));
	if (len < 0)
		return 1;
	for (o = RSVP_HDR_LEN; o < len; o += b[o] << 8 | b[o + 1])
		if (b[o + 2] == RSVP_CLASS_CBFC_CREDIT)
			cr = o;
	if (!strcmp(kind, "truncated")) {
		len -= 6;		/* the header still says the whole */
	} else if (!strcmp(kind, "badlen")) {
		b[cr + 1] -= 4;		/* Credit object 4 bytes short */
		reseal(b, len);
	} else if (!strcmp(kind, "badsum")) {
		b[2] ^= 0x55;
	} else if (!strcmp(kind, "absurd")) {
		b[cr + 8] = 0x01;	/* initial credit 2^56 bytes */
		reseal(b, len);
	} else if (!strcmp(kind, "class")) {
		b[cr + 2] = 126;	/* an unknown 0bbbbbbb class */
		reseal(b, len);
	} else if (strcmp(kind, "unknown")) {
		return usage();		/* "unknown": valid, no such session */
	}
	memset(&ss, 0, sizeof(ss));
	if (to.family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, to.a, 4);
		sl = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		memcpy(&sin6->sin6_addr, to.a, 16);
		sl = sizeof(*sin6);
	}
	fd = socket(to.family, SOCK_RAW, IPPROTO_RSVP);
	/* As a neighbour's speaker sends: one hop, 255 (rsvp_speaker.c). */
	if (fd >= 0)
		setsockopt(fd, to.family == AF_INET ? IPPROTO_IP : IPPROTO_IPV6,
			   to.family == AF_INET ? IP_TTL : IPV6_UNICAST_HOPS,
			   &hops, sizeof(hops));
	if (fd < 0 || sendto(fd, b, len, 0, (struct sockaddr *)&ss, sl) < 0) {
		perror("dmsc-rsvp: inject");
		return 1;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	const char *ctl = NULL;

	if (argc > 2 && !strcmp(argv[1], "-C")) {
		ctl = argv[2];
		argc -= 2;
		argv += 2;
	}
	if (argc < 2)
		return usage();
	if (!strcmp(argv[1], "run"))
		return run(argc - 2, argv + 2, ctl);
	if (!strcmp(argv[1], "inject"))
		return inject(argc - 2, argv + 2);
	if (!ctl)
		return usage();
	if (!strcmp(argv[1], "setup") || !strcmp(argv[1], "set") ||
	    !strcmp(argv[1], "teardown") ||
	    !strcmp(argv[1], "status") || !strcmp(argv[1], "stats") ||
	    !strcmp(argv[1], "state"))
		return client(ctl, argc - 1, argv + 1);
	return usage();
}
