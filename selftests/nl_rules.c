// SPDX-License-Identifier: GPL-2.0
/*
 * nl_rules: load, delete, dump and check many dmsc rules at once over
 * generic netlink, for tests and benchmarks that need tens of thousands
 * of rules (one `dmsc rule add` process per rule is far too slow).
 *
 *   nl_rules add|del [-6] -n N -t TUNNEL [-s SEED] [-a ADDR] [-f FIRST]
 *   nl_rules check [-6] -n N -t TUNNEL [-s SEED] [-a ADDR] [-x]
 *   nl_rules dump
 *
 * add/del: rules FIRST..N-1 (default 0) of a deterministic pseudo-random
 * set for the seed: N distinct rules of one family (IPv4, or IPv6 with
 * -6) whose destination prefixes have mixed lengths (about what a routing
 * table has: mostly /24 and /32, or /48, /64 and /128), one in eight with
 * a source prefix and one in eight with a QP range, all to TUNNEL. With
 * -a, no destination prefix covers ADDR. Requests go many to a send()
 * without acks; errors come back on their own and are counted.
 * Prints "sent=N errors=E ms=T" and, for the first error, "errno=X"
 * and "extack=MSG" on lines of their own.
 *
 * dump: one dump of every rule. Prints "rules=N messages=M intr=0|1
 * order=ok|bad ms=T" (messages: datagrams with rules; order: prefix order by family, address, then length;
 * on one prefix, longest source first, then narrowest QP range).
 *
 * check: a dump compared with the set: "found=K missing=M wrong=W
 * dups=D extra=X" besides the dump's line (wrong: another tunnel;
 * extra: rules not in the set, either family). With -x, the first rule
 * of the set is deleted (on another socket) once the first message of
 * the dump is in: the dump must go on, flagged NLM_F_DUMP_INTR.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/genetlink.h>

#include <linux/dmsc.h>

#define BUFSZ		(1 << 20)
#define BATCH		(48 * 1024)

struct rule {
	uint8_t family, dst_len, src_len;
	uint8_t dst[16], src[16];
	uint32_t qlo, qhi, tunnel;
};

static int fd, family_id;
static uint32_t nl_seq;
static char rbuf[BUFSZ];

/* -- the rule set ------------------------------------------------------- */

static uint64_t rng;

static uint64_t next_rand(void)
{
	/* splitmix64 */
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void mask(uint8_t *a, int len, int alen)
{
	int i;

	for (i = 0; i < alen; i++) {
		int keep = len - i * 8;

		if (keep <= 0)
			a[i] = 0;
		else if (keep < 8)
			a[i] &= 0xff << (8 - keep);
	}
}

static int covers(const uint8_t *pfx, int len, const uint8_t *addr)
{
	int i;

	for (i = 0; i < len; i++)
		if ((pfx[i / 8] ^ addr[i / 8]) & (0x80 >> (i % 8)))
			return 0;
	return 1;
}

static const uint8_t len4[] = {
	8, 12, 16, 16, 16, 18, 20, 20, 22, 22, 23, 24, 24, 24, 24, 24,
	24, 24, 24, 25, 26, 27, 28, 29, 30, 32, 32, 32, 32, 32, 32, 32,
};

static const uint8_t len6[] = {
	29, 32, 32, 36, 40, 44, 48, 48, 48, 48, 48, 52, 56, 56, 56, 60,
	64, 64, 64, 64, 64, 64, 64, 64, 80, 96, 112, 124, 127, 128, 128, 128,
};

static void gen_rule(struct rule *r, int v6, uint32_t tunnel)
{
	uint64_t x = next_rand(), y = next_rand(), z = next_rand();

	memset(r, 0, sizeof(*r));
	r->family = v6 ? AF_INET6 : AF_INET;
	r->tunnel = tunnel;
	memcpy(r->dst, &y, 8);
	memcpy(r->dst + 8, &z, 8);
	if (v6)
		r->dst[0] = 0x20 | (r->dst[0] & 0x0f);	/* 2000::/4 */
	r->dst_len = v6 ? len6[x % 32] : len4[x % 32];
	mask(r->dst, r->dst_len, 16);	/* IPv4: the rest is 0 too */
	x >>= 8;
	if (x % 8 == 0) {
		uint64_t s = next_rand();

		memcpy(r->src, &s, 8);
		r->src_len = v6 ? 48 + s % 17 : 16 + s % 9;
		mask(r->src, r->src_len, 16);
	}
	x >>= 3;
	r->qlo = 0;
	r->qhi = DMSC_QPN_MAX;
	if (x % 8 == 0) {
		r->qlo = (x >> 3) % 4096;
		r->qhi = r->qlo + (x >> 15) % 64;
	}
}

static int same_key(const struct rule *a, const struct rule *b)
{
	return a->family == b->family && a->dst_len == b->dst_len &&
	       a->src_len == b->src_len && a->qlo == b->qlo &&
	       a->qhi == b->qhi && !memcmp(a->dst, b->dst, 16) &&
	       !memcmp(a->src, b->src, 16);
}

static uint64_t hash_key(const struct rule *r)
{
	uint64_t h = 1469598103934665603ULL;
	const uint8_t *p = (const uint8_t *)r;
	size_t i;

	/* family .. qhi: every field of the key */
	for (i = 0; i < offsetof(struct rule, tunnel); i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

/* Open addressing, indexes into the rule array + 1; 0 is free. */
static uint32_t *slots;
static uint32_t nslots;
static struct rule *set;
static uint8_t *seen;

static uint32_t *slot_of(const struct rule *r)
{
	uint32_t i = hash_key(r) & (nslots - 1);

	while (slots[i] && !same_key(&set[slots[i] - 1], r))
		i = (i + 1) & (nslots - 1);
	return &slots[i];
}

static void make_set(uint32_t n, int v6, uint32_t tunnel, uint64_t seed,
		     const uint8_t *avoid)
{
	uint32_t i = 0, *s;

	for (nslots = 1024; nslots < 2 * n; nslots *= 2)
		;
	slots = calloc(nslots, sizeof(*slots));
	set = calloc(n ? n : 1, sizeof(*set));
	seen = calloc(n ? n : 1, 1);
	if (!slots || !set || !seen) {
		fprintf(stderr, "nl_rules: out of memory\n");
		exit(2);
	}
	rng = seed * 2 + v6;
	while (i < n) {
		gen_rule(&set[i], v6, tunnel);
		if (avoid && covers(set[i].dst, set[i].dst_len, avoid))
			continue;
		s = slot_of(&set[i]);
		if (*s)
			continue;
		*s = ++i;
	}
}

/* -- netlink ------------------------------------------------------------ */

static char *put(char *p, int type, const void *data, int len)
{
	struct nlattr *a = (struct nlattr *)p;

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy(p + NLA_HDRLEN, data, len);
	memset(p + NLA_HDRLEN + len, 0, NLA_ALIGN(len) - len);
	return p + NLA_HDRLEN + NLA_ALIGN(len);
}

/* One RULE_NEW or RULE_DEL at @p; returns its length. */
static int build(char *p, int cmd, const struct rule *r, int flags)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)p;
	struct genlmsghdr *g = (struct genlmsghdr *)(p + NLMSG_HDRLEN);
	int alen = r->family == AF_INET6 ? 16 : 4;
	struct nlattr *nest;
	char *q;

	nlh->nlmsg_type = family_id;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = ++nl_seq;
	nlh->nlmsg_pid = 0;
	g->cmd = cmd;
	g->version = DMSC_GENL_VERSION;
	g->reserved = 0;
	nest = (struct nlattr *)(p + NLMSG_LENGTH(GENL_HDRLEN));
	nest->nla_type = DMSC_A_RULE | NLA_F_NESTED;
	q = (char *)nest + NLA_HDRLEN;
	q = put(q, DMSC_RULE_A_FAMILY, &r->family, 1);
	q = put(q, DMSC_RULE_A_DST, r->dst, alen);
	q = put(q, DMSC_RULE_A_DST_LEN, &r->dst_len, 1);
	if (r->src_len) {
		q = put(q, DMSC_RULE_A_SRC, r->src, alen);
		q = put(q, DMSC_RULE_A_SRC_LEN, &r->src_len, 1);
	}
	q = put(q, DMSC_RULE_A_QPN_LO, &r->qlo, 4);
	q = put(q, DMSC_RULE_A_QPN_HI, &r->qhi, 4);
	if (cmd == DMSC_CMD_RULE_NEW)
		q = put(q, DMSC_RULE_A_TUNNEL, &r->tunnel, 4);
	nest->nla_len = q - (char *)nest;
	nlh->nlmsg_len = q - p;
	return nlh->nlmsg_len;
}

static uint32_t errors, want_seq;
static int first_errno, acked;
static char first_extack[256];

/* Errors in @n bytes of @rbuf; sets acked when want_seq is answered. */
static void read_acks(int n)
{
	struct nlmsghdr *nlh;

	for (nlh = (struct nlmsghdr *)rbuf; NLMSG_OK(nlh, (unsigned int)n);
	     nlh = NLMSG_NEXT(nlh, n)) {
		struct nlmsgerr *e = NLMSG_DATA(nlh);
		struct nlattr *a;
		int off, rem;

		if (nlh->nlmsg_type != NLMSG_ERROR)
			continue;
		if (want_seq && nlh->nlmsg_seq == want_seq)
			acked = 1;
		if (!e->error)
			continue;
		if (errors++)
			continue;
		first_errno = -e->error;
		if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
			continue;
		off = sizeof(*e);
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
			off += e->msg.nlmsg_len - NLMSG_HDRLEN;
		a = (struct nlattr *)((char *)e + off);
		rem = nlh->nlmsg_len - NLMSG_HDRLEN - off;
		while (rem >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
		       a->nla_len <= rem) {
			if ((a->nla_type & NLA_TYPE_MASK) == NLMSGERR_ATTR_MSG)
				snprintf(first_extack, sizeof(first_extack),
					 "%s", (char *)a + NLA_HDRLEN);
			rem -= NLA_ALIGN(a->nla_len);
			a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
		}
	}
}

static void drain(void)
{
	int n;

	while ((n = recv(fd, rbuf, BUFSZ, MSG_DONTWAIT)) > 0)
		read_acks(n);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * Rules @first..@n-1 as @cmd, many to a send(); the last one asks for
 * an ack, so that when it comes every one before it was handled.
 */
static void bulk(int cmd, uint32_t first, uint32_t n)
{
	static char buf[BATCH + 4096];
	double t0 = now_ms();
	int len = 0, got;
	uint32_t i;

	for (i = first; i < n; i++) {
		int flags = i + 1 == n ? NLM_F_ACK : 0;

		len += build(buf + len, cmd, &set[i], flags);
		if (flags)
			want_seq = nl_seq;
		if (len < BATCH && i + 1 < n)
			continue;
		if (send(fd, buf, len, 0) != len) {
			perror("nl_rules: send");
			exit(2);
		}
		len = 0;
		drain();
	}
	while (first < n && !acked) {
		got = recv(fd, rbuf, BUFSZ, 0);
		if (got < 0) {
			perror("nl_rules: recv");
			exit(2);
		}
		read_acks(got);
	}
	printf("sent=%u errors=%u ms=%.0f\n", n > first ? n - first : 0,
	       errors, now_ms() - t0);
	if (errors)
		printf("errno=%d\nextack=%s\n", first_errno, first_extack);
}

/* -- dump --------------------------------------------------------------- */

static int parse_rule(struct nlmsghdr *nlh, struct rule *r)
{
	struct nlattr *a = (struct nlattr *)((char *)NLMSG_DATA(nlh) +
					     GENL_HDRLEN);
	int rem = nlh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN), found = 0;

	memset(r, 0, sizeof(*r));
	for (; rem >= NLA_HDRLEN; rem -= NLA_ALIGN(a->nla_len),
	     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len))) {
		struct nlattr *b;
		int brem;

		if ((a->nla_type & NLA_TYPE_MASK) != DMSC_A_RULE)
			continue;
		found = 1;
		b = (struct nlattr *)((char *)a + NLA_HDRLEN);
		brem = a->nla_len - NLA_HDRLEN;
		for (; brem >= NLA_HDRLEN; brem -= NLA_ALIGN(b->nla_len),
		     b = (struct nlattr *)((char *)b + NLA_ALIGN(b->nla_len))) {
			void *d = (char *)b + NLA_HDRLEN;
			int dl = b->nla_len - NLA_HDRLEN;

			switch (b->nla_type & NLA_TYPE_MASK) {
			case DMSC_RULE_A_FAMILY:
				r->family = *(uint8_t *)d;
				break;
			case DMSC_RULE_A_DST:
				memcpy(r->dst, d, dl > 16 ? 16 : dl);
				break;
			case DMSC_RULE_A_DST_LEN:
				r->dst_len = *(uint8_t *)d;
				break;
			case DMSC_RULE_A_SRC:
				memcpy(r->src, d, dl > 16 ? 16 : dl);
				break;
			case DMSC_RULE_A_SRC_LEN:
				r->src_len = *(uint8_t *)d;
				break;
			case DMSC_RULE_A_QPN_LO:
				r->qlo = *(uint32_t *)d;
				break;
			case DMSC_RULE_A_QPN_HI:
				r->qhi = *(uint32_t *)d;
				break;
			case DMSC_RULE_A_TUNNEL:
				r->tunnel = *(uint32_t *)d;
				break;
			}
		}
	}
	return found;
}

/* <0, 0, >0: @a before, with, after @b in the documented dump order. */
static int order(const struct rule *a, const struct rule *b)
{
	int c;

	if (a->family != b->family)
		return a->family == AF_INET ? -1 : 1;
	c = memcmp(a->dst, b->dst, 16);
	if (c)
		return c;
	if (a->dst_len != b->dst_len)
		return a->dst_len - b->dst_len;
	if (a->src_len != b->src_len)
		return b->src_len - a->src_len;
	if (a->qhi - a->qlo != b->qhi - b->qlo)
		return a->qhi - a->qlo < b->qhi - b->qlo ? -1 : 1;
	return 0;
}

static uint32_t found, missing, wrong, dups, extra;

/* Delete set[0] through a socket of its own, waiting for the ack. */
static void poke(void)
{
	static char buf[1024];
	int save = fd, n;

	fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
	if (fd < 0) {
		perror("nl_rules: socket");
		exit(2);
	}
	n = build(buf, DMSC_CMD_RULE_DEL, &set[0], NLM_F_ACK);
	want_seq = nl_seq;
	acked = 0;
	if (send(fd, buf, n, 0) != n) {
		perror("nl_rules: send");
		exit(2);
	}
	while (!acked && (n = recv(fd, rbuf, BUFSZ, 0)) > 0)
		read_acks(n);
	close(fd);
	fd = save;
}

static void dump(int check, uint32_t n, int change)
{
	struct {
		struct nlmsghdr n;
		struct genlmsghdr g;
	} m = { 0 };
	uint32_t rules = 0, messages = 0, i;
	struct rule r, prev;
	int intr = 0, bad_order = 0, done = 0, got;
	double t0 = now_ms();

	m.n.nlmsg_len = sizeof(m);
	m.n.nlmsg_type = family_id;
	m.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	m.n.nlmsg_seq = ++nl_seq;
	m.g.cmd = DMSC_CMD_RULE_GET;
	m.g.version = DMSC_GENL_VERSION;
	if (send(fd, &m, sizeof(m), 0) != sizeof(m)) {
		perror("nl_rules: send");
		exit(2);
	}
	while (!done) {
		struct nlmsghdr *nlh;

		got = recv(fd, rbuf, BUFSZ, 0);
		if (got < 0) {
			perror("nl_rules: recv");
			exit(2);
		}
		if (got >= (int)NLMSG_HDRLEN &&
		    ((struct nlmsghdr *)rbuf)->nlmsg_type != NLMSG_DONE)
			messages++;
		for (nlh = (struct nlmsghdr *)rbuf;
		     NLMSG_OK(nlh, (unsigned int)got);
		     nlh = NLMSG_NEXT(nlh, got)) {
			if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
				intr = 1;
			if (nlh->nlmsg_type == NLMSG_DONE) {
				done = 1;
				break;
			}
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(nlh);

				fprintf(stderr, "nl_rules: dump: errno %d\n",
					-e->error);
				exit(1);
			}
			if (!parse_rule(nlh, &r))
				continue;
			if (rules && order(&prev, &r) > 0)
				bad_order++;
			prev = r;
			rules++;
			if (!check)
				continue;
			i = *slot_of(&r);
			if (!i) {
				extra++;
				continue;
			}
			if (seen[i - 1]++) {
				dups++;
				continue;
			}
			found++;
			if (set[i - 1].tunnel != r.tunnel)
				wrong++;
		}
		/* After the datagram is read: poke() reuses rbuf. */
		if (change && messages == 1 && !done) {
			change = 0;
			poke();
		}
	}
	printf("rules=%u messages=%u intr=%d order=%s ms=%.0f\n", rules,
	       messages, intr, bad_order ? "bad" : "ok", now_ms() - t0);
	if (check) {
		for (i = 0; i < n; i++)
			missing += !seen[i];
		printf("found=%u missing=%u wrong=%u dups=%u extra=%u\n", found,
		       missing, wrong, dups, extra);
	}
}

static int resolve_family(void)
{
	struct {
		struct nlmsghdr n;
		struct genlmsghdr g;
		char buf[64];
	} m = { 0 };
	struct nlattr *a = (struct nlattr *)m.buf;
	struct nlmsghdr *nlh = (struct nlmsghdr *)rbuf;
	int n, rem;

	a->nla_type = CTRL_ATTR_FAMILY_NAME;
	a->nla_len = NLA_HDRLEN + sizeof(DMSC_GENL_NAME);
	strcpy((char *)a + NLA_HDRLEN, DMSC_GENL_NAME);
	m.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN) + NLA_ALIGN(a->nla_len);
	m.n.nlmsg_type = GENL_ID_CTRL;
	m.n.nlmsg_flags = NLM_F_REQUEST;
	m.g.cmd = CTRL_CMD_GETFAMILY;
	m.g.version = 1;
	if (send(fd, &m, m.n.nlmsg_len, 0) < 0)
		return -1;
	n = recv(fd, rbuf, BUFSZ, 0);
	if (n < 0 || nlh->nlmsg_type == NLMSG_ERROR)
		return -1;
	a = (struct nlattr *)((char *)NLMSG_DATA(nlh) + GENL_HDRLEN);
	rem = nlh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
	while (rem >= NLA_HDRLEN) {
		if (a->nla_type == CTRL_ATTR_FAMILY_ID)
			return *(uint16_t *)((char *)a + NLA_HDRLEN);
		rem -= NLA_ALIGN(a->nla_len);
		a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
	}
	return -1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: nl_rules add|del [-6] -n N -t TUNNEL [-s SEED] [-a ADDR] [-f FIRST]\n"
		"       nl_rules check [-6] -n N -t TUNNEL [-s SEED] [-a ADDR] [-x]\n"
		"       nl_rules dump\n");
	exit(2);
}

int main(int argc, char **argv)
{
	uint32_t n = 0, tunnel = 1, first = 0;
	uint8_t avoid[16], *avoidp = NULL;
	const char *cmd, *a = NULL;
	int v6 = 0, o, one = 1, size = 32 << 20, change = 0;
	uint64_t seed = 1;

	if (argc < 2)
		usage();
	cmd = argv[1];
	optind = 2;
	while ((o = getopt(argc, argv, "6n:t:s:a:f:x")) != -1) {
		switch (o) {
		case 'x':
			change = 1;
			break;
		case '6':
			v6 = 1;
			break;
		case 'n':
			n = strtoul(optarg, NULL, 0);
			break;
		case 't':
			tunnel = strtoul(optarg, NULL, 0);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'a':
			a = optarg;
			break;
		case 'f':
			first = strtoul(optarg, NULL, 0);
			break;
		default:
			usage();
		}
	}
	if (a) {
		memset(avoid, 0, sizeof(avoid));
		if (inet_pton(v6 ? AF_INET6 : AF_INET, a, avoid) != 1)
			usage();
		avoidp = avoid;
	}

	fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
	if (fd < 0) {
		perror("nl_rules: socket");
		return 2;
	}
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	family_id = resolve_family();
	if (family_id < 0) {
		fprintf(stderr, "nl_rules: family %s not found\n",
			DMSC_GENL_NAME);
		return 2;
	}

	if (!strcmp(cmd, "dump")) {
		dump(0, 0, 0);
		return 0;
	}
	make_set(n, v6, tunnel, seed, avoidp);
	if (!strcmp(cmd, "add"))
		bulk(DMSC_CMD_RULE_NEW, first, n);
	else if (!strcmp(cmd, "del"))
		bulk(DMSC_CMD_RULE_DEL, first, n);
	else if (!strcmp(cmd, "check"))
		dump(1, n, change && n);
	else
		usage();
	return 0;
}
