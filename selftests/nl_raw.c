// SPDX-License-Identifier: GPL-2.0
/*
 * nl_raw: send one hand-built request to the "dmsc" generic netlink
 * family and print what the kernel answered, so selftests can provoke
 * malformed input the dmsc CLI would never send.
 *
 *   nl_raw [-d] CMD ATTR...
 *   ATTR := TYPE:u8=V | TYPE:u16=V | TYPE:u32=V | TYPE:u64=V
 *         | TYPE:str=TEXT | TYPE:bin=HEX | TYPE:zeros=LEN
 *         | TYPE:nest{  ATTR...  }
 *
 * Prints "errno=N" (0 = success, N positive), then "extack=MSG" if the
 * kernel gave one, and "replies=N" (messages before the final ACK/DONE).
 * -d sends the request as a dump.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/genetlink.h>

#include <linux/dmsc.h>

#define BUFSZ 65536

static char req[BUFSZ];
static size_t len;
static size_t stack[16];	/* offsets of open nests */
static int depth;

static void *put(int type, const void *data, size_t dlen)
{
	struct nlattr *a = (struct nlattr *)(req + len);
	size_t total = NLA_HDRLEN + dlen;

	if (len + NLA_ALIGN(total) > BUFSZ) {
		fprintf(stderr, "nl_raw: request too big\n");
		exit(2);
	}
	a->nla_type = type;
	a->nla_len = total;
	if (data)
		memcpy(req + len + NLA_HDRLEN, data, dlen);
	else
		memset(req + len + NLA_HDRLEN, 0, dlen);
	memset(req + len + total, 0, NLA_ALIGN(total) - total);
	len += NLA_ALIGN(total);
	return a;
}

static void add_attr(const char *spec)
{
	char kind[16], *eq, *colon;
	int type;

	if (!strcmp(spec, "}")) {
		struct nlattr *a;

		if (!depth) {
			fprintf(stderr, "nl_raw: unbalanced }\n");
			exit(2);
		}
		a = (struct nlattr *)(req + stack[--depth]);
		a->nla_len = len - stack[depth];
		return;
	}
	type = strtol(spec, &colon, 0);
	if (*colon != ':') {
		fprintf(stderr, "nl_raw: bad attribute \"%s\"\n", spec);
		exit(2);
	}
	colon++;
	if (!strcmp(colon, "nest{")) {
		stack[depth++] = len;
		put(type | NLA_F_NESTED, NULL, 0);
		return;
	}
	eq = strchr(colon, '=');
	if (!eq || eq - colon >= (long)sizeof(kind)) {
		fprintf(stderr, "nl_raw: bad attribute \"%s\"\n", spec);
		exit(2);
	}
	memcpy(kind, colon, eq - colon);
	kind[eq - colon] = '\0';
	eq++;
	if (!strcmp(kind, "u8")) {
		__u8 v = strtoul(eq, NULL, 0);

		put(type, &v, 1);
	} else if (!strcmp(kind, "u16")) {
		__u16 v = strtoul(eq, NULL, 0);

		put(type, &v, 2);
	} else if (!strcmp(kind, "u32")) {
		__u32 v = strtoul(eq, NULL, 0);

		put(type, &v, 4);
	} else if (!strcmp(kind, "u64")) {
		__u64 v = strtoull(eq, NULL, 0);

		put(type, &v, 8);
	} else if (!strcmp(kind, "str")) {
		put(type, eq, strlen(eq) + 1);
	} else if (!strcmp(kind, "zeros")) {
		put(type, NULL, strtoul(eq, NULL, 0));
	} else if (!strcmp(kind, "bin")) {
		size_t n = strlen(eq) / 2, i;
		unsigned char buf[4096];

		if (n > sizeof(buf))
			exit(2);
		for (i = 0; i < n; i++)
			sscanf(eq + 2 * i, "%2hhx", &buf[i]);
		put(type, buf, n);
	} else {
		fprintf(stderr, "nl_raw: unknown kind \"%s\"\n", kind);
		exit(2);
	}
}

static int talk(int fd, void *msg, size_t mlen, char *rbuf, int *replies,
		char *extack, size_t elen)
{
	struct nlmsghdr *nlh;
	int n, one = 1;

	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	if (send(fd, msg, mlen, 0) < 0)
		return -errno;
	for (;;) {
		n = recv(fd, rbuf, BUFSZ, 0);
		if (n < 0)
			return -errno;
		for (nlh = (struct nlmsghdr *)rbuf; NLMSG_OK(nlh, (unsigned)n);
		     nlh = NLMSG_NEXT(nlh, n)) {
			struct nlmsgerr *e;
			struct nlattr *a;
			int off, rem;

			if (nlh->nlmsg_type == NLMSG_DONE)
				return 0;
			if (nlh->nlmsg_type != NLMSG_ERROR) {
				(*replies)++;
				continue;
			}
			e = NLMSG_DATA(nlh);
			if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
				return e->error;
			off = sizeof(*e);
			if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
				off += e->msg.nlmsg_len - NLMSG_HDRLEN;
			a = (struct nlattr *)((char *)e + off);
			rem = nlh->nlmsg_len - NLMSG_HDRLEN - off;
			while (rem >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
			       a->nla_len <= rem) {
				if ((a->nla_type & NLA_TYPE_MASK) ==
				    NLMSGERR_ATTR_MSG)
					snprintf(extack, elen, "%s",
						 (char *)a + NLA_HDRLEN);
				rem -= NLA_ALIGN(a->nla_len);
				a = (struct nlattr *)((char *)a +
						      NLA_ALIGN(a->nla_len));
			}
			return e->error;
		}
	}
}

static int resolve_family(int fd, char *rbuf)
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
			return *(__u16 *)((char *)a + NLA_HDRLEN);
		rem -= NLA_ALIGN(a->nla_len);
		a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
	}
	return -1;
}

int main(int argc, char **argv)
{
	static char rbuf[BUFSZ];
	char extack[512] = "";
	struct nlmsghdr *nlh;
	struct genlmsghdr *g;
	int fd, family, err, replies = 0, i = 1, dump = 0;

	if (argc > 1 && !strcmp(argv[1], "-d")) {
		dump = 1;
		i++;
	}
	if (argc <= i) {
		fprintf(stderr, "usage: nl_raw [-d] CMD ATTR...\n");
		return 2;
	}
	fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
	if (fd < 0) {
		perror("nl_raw: socket");
		return 2;
	}
	family = resolve_family(fd, rbuf);
	if (family < 0) {
		fprintf(stderr, "nl_raw: family %s not found\n", DMSC_GENL_NAME);
		return 2;
	}
	nlh = (struct nlmsghdr *)req;
	g = (struct genlmsghdr *)(req + NLMSG_HDRLEN);
	len = NLMSG_LENGTH(GENL_HDRLEN);
	g->cmd = strtoul(argv[i++], NULL, 0);
	g->version = DMSC_GENL_VERSION;
	for (; i < argc; i++)
		add_attr(argv[i]);
	if (depth) {
		fprintf(stderr, "nl_raw: unclosed nest\n");
		return 2;
	}
	nlh->nlmsg_len = len;
	nlh->nlmsg_type = family;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | (dump ? NLM_F_DUMP : 0);
	nlh->nlmsg_seq = 1;
	err = talk(fd, req, len, rbuf, &replies, extack, sizeof(extack));
	printf("errno=%d\n", -err);
	if (extack[0])
		printf("extack=%s\n", extack);
	printf("replies=%d\n", replies);
	close(fd);
	return 0;
}
