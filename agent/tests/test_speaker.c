// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the RSVP-CBFC speaker at a flow's source
 * (daemon/sr/rsvp_speaker.c), with neither a kernel nor a network: the
 * speaker's source is compiled into this file, what it sends is caught
 * (sendto), what it would read is handed to on_datagram(), its log goes
 * to a buffer, and the netlink client is this file's own, which writes
 * down each request's session attributes and answers what a case asks.
 *
 * Checked: the tunnel and the backup list's credit go to the primary's
 * kernel session whichever list comes up first (SESSION_NEW with them,
 * or SESSION_SET); taken back when the backup fails or is replaced, set
 * again when it comes back; EBUSY (moved onto the backup already) and
 * ENOENT are nothing to do, counted and logged once, the flow still up;
 * a module that refuses backups gets the session without; no tunnel, no
 * backup and no TUNNEL; IPv4 hops IPv4-mapped; the control socket's
 * setup ... tunnel, set ... backup and status. The kernel's events, built
 * with libnl as the kernel builds them: a move onto the backup tears the
 * primary down (the PathTear's fields checked), stops its refreshes and
 * keeps the kernel session; tunnel-primary signals it anew; events not
 * ours, unknown or malformed change nothing; an overrun dumps the tunnels
 * and acts on them after the dump.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>

#include <json-c/json.h>
#include <netlink/genl/genl.h>

#include <linux/dmsc.h>

#include "nl.h"
#include "rsvp.h"
#include "tests/ktap.h"

/* The speaker's sends and log, caught: names swapped for its source only. */
static ssize_t caught_sendto(int fd, const void *buf, size_t len, int flags,
			     const struct sockaddr *to, socklen_t tolen);
static FILE *speaker_log;
#define sendto caught_sendto
#undef stderr
#define stderr speaker_log
#include "daemon/sr/rsvp_speaker.c"
#undef sendto
#undef stderr
#define stderr stderr

static char sent[4096], reqs[4096];	/* a line each, since last taken */
/* The last messages sent, as parsed back, and their destinations. */
#define KEPT_MAX 8
static struct rsvp_msg kept[KEPT_MAX];
static char kept_to[KEPT_MAX][INET6_ADDRSTRLEN];
static int nkept;
static char *logbuf;
static size_t loglen;
static int answer_cmd = -1, answer_err;	/* the next such request's answer */

static void append(char *log, size_t cap, const char *line)
{
	size_t l = strlen(log);

	snprintf(log + l, cap - l, "%s\n", line);
}

/* A log's lines since the last call, the log emptied. */
static const char *take(char *log)
{
	static char copy[4096];

	snprintf(copy, sizeof(copy), "%s", log);
	log[0] = '\0';
	return copy;
}

static ssize_t caught_sendto(int fd, const void *buf, size_t len, int flags,
			     const struct sockaddr *to, socklen_t tolen)
{
	char a[INET6_ADDRSTRLEN], why[256], line[320];
	struct rsvp_msg m;

	(void)fd;
	(void)flags;
	(void)tolen;
	if (to->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)to)->sin_addr,
			  a, sizeof(a));
	else
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)to)->sin6_addr,
			  a, sizeof(a));
	if (rsvp_parse(buf, len, &m, why, sizeof(why)) != RSVP_OK) {
		snprintf(line, sizeof(line), "bad to %s: %s", a, why);
	} else {
		snprintf(line, sizeof(line), "%s to %s", rsvp_type_name(m.type), a);
		if (nkept < KEPT_MAX) {
			kept[nkept] = m;
			snprintf(kept_to[nkept++], INET6_ADDRSTRLEN, "%s", a);
		}
	}
	append(sent, sizeof(sent), line);
	return len;
}

/* ---- the kernel, as the speaker's netlink client sees it ---- */

int dmsc_nl_open(struct dmsc_nl *nl)
{
	memset(nl, 0, sizeof(*nl));
	return 0;
}

void dmsc_nl_close(struct dmsc_nl *nl)
{
	(void)nl;
}

/* The events socket: joined; what a read finds, the case says. */
static int recv_answer;

int dmsc_nl_listen_start(struct dmsc_nl *nl, struct dmsc_nl_listener *ls)
{
	(void)nl;
	ls->err = 0;
	return 0;
}

int dmsc_nl_listen_recv(struct dmsc_nl *nl, struct dmsc_nl_listener *ls)
{
	(void)nl;
	(void)ls;
	return recv_answer;
}

/* The kernel's tunnels, for a dump (TUNNEL_GET): id and active. */
static struct { uint32_t id; uint8_t active; } tunnels[4];
static int ntunnels;

/*
 * Set while a dump's replies are handed out: a request then would be
 * sent on a socket whose dump is still being read (its replies mixed
 * with the dump's), which the speaker must not do.
 */
static bool in_dump;

static int dump_tunnels(dmsc_nl_parse_fn parse, void *arg)
{
	in_dump = true;
	for (int i = 0; i < ntunnels; i++) {
		struct nl_msg *msg = nlmsg_alloc();
		struct nlattr *tb[DMSC_A_MAX + 1], *n;

		genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, 0, 0, NLM_F_MULTI,
			    DMSC_CMD_TUNNEL_GET, DMSC_GENL_VERSION);
		n = nla_nest_start(msg, DMSC_A_TUNNEL);
		nla_put_u32(msg, DMSC_TUNNEL_A_ID, tunnels[i].id);
		nla_put_u8(msg, DMSC_TUNNEL_A_ACTIVE, tunnels[i].active);
		nla_nest_end(msg, n);
		genlmsg_parse(nlmsg_hdr(msg), 0, tb, DMSC_A_MAX, NULL);
		parse(tb, arg);
		nlmsg_free(msg);
	}
	in_dump = false;
	return 0;
}

void dmsc_nl_perror(const struct dmsc_nl *nl, const char *what, int err)
{
	(void)nl;
	(void)what;
	(void)err;
}

struct nl_msg *dmsc_nl_msg(int cmd, int flags)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (msg && !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, 0, 0, flags,
				cmd, DMSC_GENL_VERSION)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

static void hop_text(const struct nlattr *a, char *buf, size_t len)
{
	inet_ntop(AF_INET6, nla_data(a), buf, len);
}

/*
 * Each request a line: "new [nexthop A] [prevhop A] mode M [credit N] [tunnel N]
 * [backup A N]", "set [backup A N]", "del"; answered 0, or answer_err
 * once for a request of answer_cmd.
 */
int dmsc_nl_talk(struct dmsc_nl *nl, struct nl_msg *msg,
		 dmsc_nl_parse_fn parse, void *arg)
{
	struct nlattr *tb[DMSC_A_MAX + 1], *sb[DMSC_SESSION_A_MAX + 1];
	struct genlmsghdr *g = nlmsg_data(nlmsg_hdr(msg));
	char line[256], a[INET6_ADDRSTRLEN];
	int cmd = g->cmd, l = 0;

	if (in_dump)
		append(reqs, sizeof(reqs), "during a dump:");
	if (cmd == DMSC_CMD_TUNNEL_GET) {
		append(reqs, sizeof(reqs), "dump tunnels");
		nlmsg_free(msg);
		return dump_tunnels(parse, arg);
	}
	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, DMSC_A_MAX, NULL) ||
	    !tb[DMSC_A_SESSION] ||
	    nla_parse_nested(sb, DMSC_SESSION_A_MAX, tb[DMSC_A_SESSION], NULL)) {
		append(reqs, sizeof(reqs), "unparsable");
		nlmsg_free(msg);
		return -EINVAL;
	}
	l += snprintf(line + l, sizeof(line) - l, "%s",
		      cmd == DMSC_CMD_SESSION_NEW ? "new" :
		      cmd == DMSC_CMD_SESSION_SET ? "set" :
		      cmd == DMSC_CMD_SESSION_DEL ? "del" : "other");
	if (sb[DMSC_SESSION_A_NEXTHOP]) {
		hop_text(sb[DMSC_SESSION_A_NEXTHOP], a, sizeof(a));
		l += snprintf(line + l, sizeof(line) - l, " nexthop %s", a);
	}
	if (sb[DMSC_SESSION_A_PREVHOP]) {
		hop_text(sb[DMSC_SESSION_A_PREVHOP], a, sizeof(a));
		l += snprintf(line + l, sizeof(line) - l, " prevhop %s", a);
	}
	if (sb[DMSC_SESSION_A_MODE])
		l += snprintf(line + l, sizeof(line) - l, " mode %s",
			      nla_get_u8(sb[DMSC_SESSION_A_MODE]) ==
			      DMSC_CREDIT_MODE_DELTA ? "delta" : "cumulative");
	if (sb[DMSC_SESSION_A_CREDIT])
		l += snprintf(line + l, sizeof(line) - l, " credit %llu",
			      (unsigned long long)nla_get_u64(sb[DMSC_SESSION_A_CREDIT]));
	if (sb[DMSC_SESSION_A_TUNNEL])
		l += snprintf(line + l, sizeof(line) - l, " tunnel %u",
			      nla_get_u32(sb[DMSC_SESSION_A_TUNNEL]));
	if (sb[DMSC_SESSION_A_BACKUP_NEXTHOP]) {
		hop_text(sb[DMSC_SESSION_A_BACKUP_NEXTHOP], a, sizeof(a));
		l += snprintf(line + l, sizeof(line) - l, " backup %s", a);
	}
	if (sb[DMSC_SESSION_A_BACKUP_CREDIT])
		l += snprintf(line + l, sizeof(line) - l, " %llu",
			      (unsigned long long)nla_get_u64(sb[DMSC_SESSION_A_BACKUP_CREDIT]));
	if (sb[DMSC_SESSION_A_BACKUP_MODE])
		snprintf(line + l, sizeof(line) - l, " %s",
			 nla_get_u8(sb[DMSC_SESSION_A_BACKUP_MODE]) ==
			 DMSC_CREDIT_MODE_DELTA ? "delta" : "cumulative");
	append(reqs, sizeof(reqs), line);
	nlmsg_free(msg);
	nl->errmsg[0] = '\0';
	if (cmd == answer_cmd) {
		answer_cmd = -1;
		snprintf(nl->errmsg, sizeof(nl->errmsg), "as the test asked");
		return answer_err;
	}
	return 0;
}

/* ---- the other hops ---- */

static char dir[] = "/tmp/test_speaker.XXXXXX";
static char ctl_path[108];

static void addr(struct rsvp_addr *a, const char *s)
{
	memset(a, 0, sizeof(*a));
	a->family = strchr(s, ':') ? AF_INET6 : AF_INET;
	inet_pton(a->family, s, a->a);
}

static void flow(struct rsvp_flow *f, int qpn)
{
	memset(f, 0, sizeof(*f));
	addr(&f->src, "10.1.0.1");
	addr(&f->dst, "10.2.0.1");
	f->sport = 49152;
	f->qpn = qpn;
}

/* A source speaker of fc00:a::1 and 192.0.2.1, on the caught sockets. */
static struct rsvp_speaker *source(void)
{
	struct rsvp_speaker_cfg c = {
		.credit = 65536, .form = RSVP_CTYPE_CREDIT_CUMULATIVE,
		.refresh_ms = 30000, .retry_ms = 200, .retries = 3,
		.ctl_path = ctl_path,
	};
	struct rsvp_speaker *s = rsvp_speaker_open(&c);

	if (!s)
		return NULL;
	addr(&s->own.addr6, "fc00:a::1");
	addr(&s->own.addr4, "192.0.2.1");
	s->fd6 = open("/dev/null", O_RDONLY | O_CLOEXEC);
	s->fd4 = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return s;
}

static void deliver(struct rsvp_speaker *s, struct rsvp_msg *m)
{
	uint8_t b[RSVP_MSG_MAX];
	char why[256];
	int len;

	m->send_ttl = RSVP_HOP_LIMIT;
	m->refresh_ms = 30000;
	len = rsvp_build(m, b, sizeof(b), why, sizeof(why));
	if (len < 0) {
		printf("# cannot build: %s\n", why);
		return;
	}
	on_datagram(s, b, len, &m->hop);
}

/* A message of @type for @f from @hop, its other fields zero. */
static void msg_for(struct rsvp_msg *m, uint8_t type,
		    const struct rsvp_flow *f, const char *hop)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	m->dst = f->dst;
	m->src = f->src;
	m->sport = f->sport;
	m->qpn = f->qpn;
	addr(&m->hop, hop);
}

/* @hop's RESV for @f: @credit bytes, in whole MB with @mb. */
static void resv(struct rsvp_speaker *s, const struct rsvp_flow *f,
		 const char *hop, uint64_t credit, bool mb)
{
	struct rsvp_msg m;

	msg_for(&m, RSVP_MSG_CBFC_RESV, f, hop);
	m.credit_ctype = mb ? RSVP_CTYPE_CREDIT_MB : RSVP_CTYPE_CREDIT_CUMULATIVE;
	m.credit_mb = credit >> 20;
	m.initial = credit;
	deliver(s, &m);
}

/* @hop's PathErr for @f: @node did not answer. */
static void patherr(struct rsvp_speaker *s, const struct rsvp_flow *f,
		    const char *hop, const char *node)
{
	struct rsvp_msg m;

	msg_for(&m, RSVP_MSG_PATHERR, f, hop);
	addr(&m.err_node, node);
	m.err_code = RSVP_ERR_SYSTEM;
	deliver(s, &m);
}

/* One command on the control socket: its answer. */
static const char *ctl(struct rsvp_speaker *s, const char *line)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	static char ans[2048];
	ssize_t n;
	size_t got = 0;
	int fd;

	ans[0] = '\0';
	strcpy(sun.sun_path, ctl_path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    send(fd, line, strlen(line), 0) < 0) {
		if (fd >= 0)
			close(fd);
		return "connect";
	}
	/* The speaker takes it from the backlog, answers and closes. */
	rsvp_speaker_input(s, s->ctl);
	while (got + 1 < sizeof(ans) &&
	       (n = recv(fd, ans + got, sizeof(ans) - got - 1, 0)) > 0)
		got += n;
	ans[got] = '\0';
	close(fd);
	return ans;
}

static uint64_t count(const struct rsvp_speaker *s, enum rsvp_counter c)
{
	return s->c[c];
}

/* How many lines of the speaker's log hold @what. */
static int logged(const char *what)
{
	int n = 0;

	fflush(speaker_log);
	for (const char *p = logbuf; p && (p = strstr(p, what)); p++)
		n++;
	return n;
}

#define FLOW_WORDS "src 10.1.0.1 dst 10.2.0.1 sport 49152 qpn "

/* ---- the cases ---- */

static void backup_after_primary(void)
{
	struct rsvp_speaker *s = source();
	struct rsvp_addr path[2], backup[2];
	struct rsvp_flow f;
	char err[128];

	if (!s) {
		ktap_check(0, "speaker opened");
		return;
	}
	flow(&f, 256);
	addr(&path[0], "fc00:a::2");
	addr(&path[1], "fc00:a::4");
	addr(&backup[0], "fc00:a::3");
	addr(&backup[1], "fc00:a::4");
	ktap_check(!rsvp_speaker_setup(s, &f, RSVP_OWNER_POLICY, 7, path, 2,
				       backup, 2, err, sizeof(err)),
		   "setup with tunnel 7, a primary and a backup list");
	ktap_check(!strcmp(take(sent), "PATH to fc00:a::2\n"),
		   "PATH down the primary; the backup's held until it is up");
	ktap_check(rsvp_speaker_backup(s, &f, RSVP_OWNER_POLICY) == RSVP_BACKUP_NO,
		   "backup: not in the kernel while nothing is up");
	resv(s, &f, "fc00:a::3", 50000, false);
	ktap_check(!take(reqs)[0] && count(s, RC_UNKNOWN_SESSION) == 1,
		   "a RESV for the held backup: unknown, nothing asked");

	resv(s, &f, "fc00:a::2", 2 << 20, true);
	ktap_check(!strcmp(take(reqs), "new nexthop fc00:a::2 mode delta credit 2097152 tunnel 7\n") &&
		   !strcmp(take(sent), "PATH to fc00:a::3\n"),
		   "primary up alone: SESSION_NEW with the tunnel, no backup; the backup's PATH goes");
	resv(s, &f, "fc00:a::3", 50000, false);
	ktap_check(!strcmp(take(reqs), "set backup fc00:a::3 50000 cumulative\n"),
		   "backup up after: SESSION_SET with its first hop and credit");
	ktap_check(rsvp_speaker_backup(s, &f, RSVP_OWNER_POLICY) == RSVP_BACKUP_KERNEL &&
		   count(s, RC_BACKUPS_SET) == 1, "backup: in the kernel, counted");
	ktap_check(!strcmp(ctl(s, "status " FLOW_WORDS "256"),
			   "primary up nexthop fc00:a::2 credit 2097152 tunnel 7\n"
			   "backup up nexthop fc00:a::3 credit 50000 kernel yes\n"),
		   "status: the tunnel, the backup in the kernel");
	resv(s, &f, "fc00:a::3", 50000, false);
	ktap_check(!take(reqs)[0], "a refresh of the backup: nothing asked again");

	/* The backup fails: taken back; signalled again, set again. */
	patherr(s, &f, "fc00:a::3", "fc00:a::4");
	ktap_check(!strcmp(take(reqs), "set\n") && count(s, RC_BACKUPS_CLEARED) == 1 &&
		   rsvp_speaker_backup(s, &f, RSVP_OWNER_POLICY) == RSVP_BACKUP_NO,
		   "backup failed: SESSION_SET without, cleared");
	ktap_check(rsvp_speaker_retry(s, &f, RSVP_OWNER_POLICY) == 1,
		   "the failed backup retried");
	resv(s, &f, "fc00:a::3", 60000, false);
	ktap_check(!strcmp(take(reqs), "set backup fc00:a::3 60000 cumulative\n"),
		   "backup up again: SESSION_SET with its new credit");

	/* Replaced: PathTear down the old, PATH down the new, taken back. */
	addr(&backup[0], "fc00:a::5");
	take(sent);
	ktap_check(!rsvp_speaker_set_backup(s, &f, RSVP_OWNER_POLICY, backup, 2,
					    err, sizeof(err)) &&
		   !strcmp(take(sent), "PathTear to fc00:a::3\nPATH to fc00:a::5\n") &&
		   !strcmp(take(reqs), "set\n"),
		   "backup replaced: PathTear, PATH, SESSION_SET without");
	resv(s, &f, "fc00:a::5", 30000, false);
	ktap_check(!strcmp(take(reqs), "set backup fc00:a::5 30000 cumulative\n"),
		   "the new backup up: SESSION_SET with it");
	/* Its form goes with it: failed, retried, up in the MB form. */
	patherr(s, &f, "fc00:a::5", "fc00:a::4");
	ktap_check(!strcmp(take(reqs), "set\n"), "the new backup failed: SESSION_SET without");
	rsvp_speaker_retry(s, &f, RSVP_OWNER_POLICY);
	resv(s, &f, "fc00:a::5", 2 << 20, true);
	ktap_check(!strcmp(take(reqs), "set backup fc00:a::5 2097152\n"),
		   "up again in the MB form, the primary's: SESSION_SET without backup-mode (the session's is the default)");

	/* Moved onto the backup already: nothing to do, said once. */
	answer_cmd = DMSC_CMD_SESSION_SET;
	answer_err = -EBUSY;
	patherr(s, &f, "fc00:a::5", "fc00:a::4");
	ktap_check(!strcmp(take(reqs), "set\n") && count(s, RC_BACKUP_MOVED) == 1 &&
		   count(s, RC_KERNEL_ERRORS) == 0 &&
		   rsvp_speaker_backup(s, &f, RSVP_OWNER_POLICY) == RSVP_BACKUP_MOVED,
		   "EBUSY: moved, counted, no kernel error");
	rsvp_speaker_retry(s, &f, RSVP_OWNER_POLICY);
	resv(s, &f, "fc00:a::5", 30000, false);
	patherr(s, &f, "fc00:a::5", "fc00:a::4");
	ktap_check(!take(reqs)[0] && count(s, RC_BACKUP_MOVED) == 1 &&
		   logged("moved onto its backup (or failed) already") == 1,
		   "EBUSY: nothing asked again, logged once");
	ktap_check(rsvp_speaker_status(s, &f, RSVP_OWNER_POLICY, NULL, 0) ==
		   RSVP_FAILED && s->st[source_list(s, &f, 0)].st == ST_UP,
		   "the primary still up");

	ktap_check(rsvp_speaker_teardown(s, &f, RSVP_OWNER_POLICY) == 2 &&
		   !strcmp(take(reqs), "del\n"), "teardown: SESSION_DEL");
	rsvp_speaker_close(s);
}

static void backup_before_primary(void)
{
	struct rsvp_speaker *s = source();
	struct rsvp_addr path[1], backup[1];
	struct rsvp_flow f;
	char err[128];

	if (!s) {
		ktap_check(0, "speaker opened");
		return;
	}
	flow(&f, 257);
	addr(&path[0], "fc00:a::2");
	addr(&backup[0], "fc00:a::3");
	rsvp_speaker_setup(s, &f, RSVP_OWNER_CTL, 9, path, 1, backup, 1, err,
			   sizeof(err));
	/*
	 * The primary fails: the backup's PATH goes. Retried, the primary is
	 * signalled before the backup again (which goes back to held), so
	 * that at the tail the primary's state holds the session.
	 */
	take(sent);
	ktap_check(!strcmp(ctl(s, "status " FLOW_WORDS "257"),
			   "primary wait nexthop fc00:a::2 credit 0 tunnel 9\n"
			   "backup held nexthop fc00:a::3 credit 0 kernel no\n"),
		   "status: the backup held while the primary waits");
	patherr(s, &f, "fc00:a::2", "fc00:a::4");
	ktap_check(!strcmp(take(sent), "PATH to fc00:a::3\n"),
		   "primary failed: the backup's PATH goes");
	resv(s, &f, "fc00:a::3", 50000, false);
	ktap_check(!take(reqs)[0], "backup up alone: nothing asked (no session to give it to)");
	ktap_check(rsvp_speaker_retry(s, &f, RSVP_OWNER_CTL) == 2 &&
		   !strcmp(take(sent), "PathTear to fc00:a::3\nPATH to fc00:a::2\n"),
		   "the failed primary retried first: the backup torn down and held again");
	resv(s, &f, "fc00:a::3", 50000, false);
	ktap_check(!take(reqs)[0] && count(s, RC_UNKNOWN_SESSION) >= 1,
		   "a late RESV for the held backup: unknown");
	resv(s, &f, "fc00:a::2", 40000, false);
	ktap_check(!strcmp(take(reqs), "new nexthop fc00:a::2 mode cumulative credit 40000 tunnel 9\n") &&
		   !strcmp(take(sent), "PATH to fc00:a::3\n"),
		   "primary up: SESSION_NEW with the tunnel; the backup's PATH goes");
	resv(s, &f, "fc00:a::3", 50000, false);
	ktap_check(!strcmp(take(reqs), "set backup fc00:a::3 50000\n"),
		   "backup up after: SESSION_SET with it");
	ktap_check(!strcmp(ctl(s, "set " FLOW_WORDS "257 backup none"), "ok\n") &&
		   !strcmp(take(reqs), "set\n") &&
		   !strcmp(ctl(s, "status " FLOW_WORDS "257"),
			   "primary up nexthop fc00:a::2 credit 40000 tunnel 9\n"),
		   "set ... backup none: PathTear, SESSION_SET without");

	/* The kernel lost the session: nothing to do, said once. */
	ctl(s, "set " FLOW_WORDS "257 backup fc00:a::3");
	answer_cmd = DMSC_CMD_SESSION_SET;
	answer_err = -ENOENT;
	resv(s, &f, "fc00:a::3", 50000, false);
	ktap_check(!strcmp(take(reqs), "set backup fc00:a::3 50000\n") &&
		   count(s, RC_BACKUP_NO_SESSION) == 1 &&
		   count(s, RC_KERNEL_ERRORS) == 0 &&
		   !strcmp(ctl(s, "status " FLOW_WORDS "257"),
			   "primary up nexthop fc00:a::2 credit 40000 tunnel 9\n"
			   "backup up nexthop fc00:a::3 credit 50000 kernel no-session\n"),
		   "ENOENT: counted, both lists still up");
	ktap_check(logged("no kernel session to give the backup to") == 1,
		   "ENOENT: logged once");
	rsvp_speaker_close(s);
	ktap_check(!strcmp(take(reqs), "del\n"), "close: SESSION_DEL");
}

/* A PATH from @hop with no hops after us: we are its tail. */
static void path_tail(struct rsvp_speaker *s, const struct rsvp_flow *f,
		      const char *hop)
{
	struct rsvp_msg m;

	msg_for(&m, RSVP_MSG_CBFC_PATH, f, hop);
	m.objs = RSVP_O_ERO;
	deliver(s, &m);
}

static void pathtear(struct rsvp_speaker *s, const struct rsvp_flow *f,
		     const char *hop)
{
	struct rsvp_msg m;

	msg_for(&m, RSVP_MSG_PATHTEAR, f, hop);
	deliver(s, &m);
}

/*
 * The tail: a session with the previous hop only, in its own form; where
 * the primary and the backup meet, the first list's, then the other's
 * once the first goes; a session made by hand left alone; none over IPv4.
 */
static void tail(void)
{
	struct rsvp_speaker *s = source();	/* fc00:a::1 as a tail */
	struct rsvp_flow f;

	if (!s) {
		ktap_check(0, "speaker opened");
		return;
	}
	flow(&f, 300);
	take(reqs);
	take(sent);
	path_tail(s, &f, "fc00:a::2");
	ktap_check(!strcmp(take(reqs), "new prevhop fc00:a::2 mode cumulative\n") &&
		   !strcmp(take(sent), "RESV to fc00:a::2\n"),
		   "tail: SESSION_NEW with the previous hop only, RESV up");
	path_tail(s, &f, "fc00:a::3");
	ktap_check(!take(reqs)[0] && !strcmp(take(sent), "RESV to fc00:a::3\n") &&
		   count(s, RC_TAIL_SHARED) == 1,
		   "tail of the other list: RESV, no second session (counted)");
	path_tail(s, &f, "fc00:a::2");
	ktap_check(!take(reqs)[0] && !strcmp(take(sent), "RESV to fc00:a::2\n"),
		   "a refresh: RESV, nothing asked");
	pathtear(s, &f, "fc00:a::2");
	ktap_check(!strcmp(take(reqs), "del\nnew prevhop fc00:a::3 mode cumulative\n"),
		   "the first list torn down: its session goes, the other list's comes");
	pathtear(s, &f, "fc00:a::3");
	ktap_check(!strcmp(take(reqs), "del\n") && count(s, RC_SESSIONS_ADDED) == 2 &&
		   count(s, RC_SESSIONS_DELETED) == 2, "the other torn down: nothing left");

	flow(&f, 301);
	answer_cmd = DMSC_CMD_SESSION_NEW;
	answer_err = -EEXIST;
	path_tail(s, &f, "fc00:a::2");
	ktap_check(!strcmp(take(reqs), "new prevhop fc00:a::2 mode cumulative\n"
			   "del\nnew prevhop fc00:a::2 mode cumulative\n") &&
		   !strcmp(take(sent), "RESV to fc00:a::2\n") &&
		   count(s, RC_TAIL_REPLACED) == 1 &&
		   logged("was there already (a speaker that died, or by hand): replaced") == 1,
		   "a session there already (a dead speaker's): replaced, the path up, counted and logged");
	pathtear(s, &f, "fc00:a::2");
	ktap_check(!strcmp(take(reqs), "del\n"), "torn down: deleted, it is the speaker's now");

	flow(&f, 302);
	answer_cmd = DMSC_CMD_SESSION_NEW;
	answer_err = -ENOSPC;
	path_tail(s, &f, "fc00:a::2");
	ktap_check(!strcmp(take(reqs), "new prevhop fc00:a::2 mode cumulative\n") &&
		   !strcmp(take(sent), "PathErr to fc00:a::2\n") &&
		   !strcmp(ctl(s, "state"), ""),
		   "the kernel refuses (table full): PathErr up, no state");

	flow(&f, 303);
	path_tail(s, &f, "192.0.2.2");
	ktap_check(!take(reqs)[0] && !strcmp(take(sent), "RESV to 192.0.2.2\n") &&
		   count(s, RC_TAIL_NO_RETURNS) == 1,
		   "an IPv4 previous hop: no session (returns are IPv6), counted");
	/*
	 * The holder's session would not go: no hand-over then; the other
	 * list's state gets the session at its next refresh.
	 */
	flow(&f, 305);
	path_tail(s, &f, "fc00:a::2");
	path_tail(s, &f, "fc00:a::3");
	take(reqs);
	answer_cmd = DMSC_CMD_SESSION_DEL;
	answer_err = -EIO;
	pathtear(s, &f, "fc00:a::2");
	ktap_check(!strcmp(take(reqs), "del\n"), "the holder's DEL fails: no hand-over");
	path_tail(s, &f, "fc00:a::3");
	ktap_check(!strcmp(take(reqs), "new prevhop fc00:a::3 mode cumulative\n"),
		   "the other list's refresh: its session made then");
	pathtear(s, &f, "fc00:a::3");
	take(reqs);
	take(sent);
	flow(&f, 304);
	path_tail(s, &f, "fc00:a::3");
	path_tail(s, &f, "fc00:a::2");
	take(reqs);
	rsvp_speaker_close(s);
	ktap_check(!strcmp(take(reqs), "del\n"),
		   "close: the tail's session deleted, not handed over on the way out");
}

/* A module without backups: the session is made without it. */
static void refused_backup(void)
{
	struct rsvp_speaker *s = source();
	struct rsvp_addr path[1], backup[1];
	struct rsvp_flow f;
	char err[128];

	if (!s) {
		ktap_check(0, "speaker opened");
		return;
	}
	flow(&f, 258);
	addr(&path[0], "fc00:a::2");
	addr(&backup[0], "fc00:a::3");
	rsvp_speaker_setup(s, &f, RSVP_OWNER_CTL, 9, path, 1, backup, 1, err,
			   sizeof(err));
	resv(s, &f, "fc00:a::2", 40000, false);
	take(reqs);
	answer_cmd = DMSC_CMD_SESSION_SET;
	answer_err = -EINVAL;
	resv(s, &f, "fc00:a::3", 50000, false);
	ktap_check(!strcmp(take(reqs), "set backup fc00:a::3 50000\n") &&
		   rsvp_speaker_status(s, &f, RSVP_OWNER_CTL, NULL, 0) == RSVP_UP &&
		   rsvp_speaker_backup(s, &f, RSVP_OWNER_CTL) == RSVP_BACKUP_REFUSED &&
		   count(s, RC_KERNEL_ERRORS) == 1,
		   "backup refused at SESSION_SET: the session kept without, up, counted");
	ktap_check(logged("backup set: kernel") == 1, "the refusal logged");
	patherr(s, &f, "fc00:a::3", "fc00:a::4");
	ktap_check(!take(reqs)[0], "refused: nothing asked when the backup fails");
	rsvp_speaker_close(s);
	take(reqs);
}

/* Without a tunnel, as before: no TUNNEL, the backup's credit kept here. */
static void no_tunnel(void)
{
	struct rsvp_speaker *s = source();
	struct rsvp_flow f;

	if (!s) {
		ktap_check(0, "speaker opened");
		return;
	}
	flow(&f, 259);
	ktap_check(!strcmp(ctl(s, "setup " FLOW_WORDS "259 path fc00:a::2,fc00:a::4 backup fc00:a::3,fc00:a::4"),
			   "ok\n"), "setup without a tunnel");
	resv(s, &f, "fc00:a::2", 2 << 20, true);
	resv(s, &f, "fc00:a::3", 50000, false);
	ktap_check(!strcmp(take(reqs), "new nexthop fc00:a::2 mode delta credit 2097152\n"),
		   "no tunnel: SESSION_NEW as before, no SESSION_SET");
	ktap_check(!strcmp(ctl(s, "status " FLOW_WORDS "259"),
			   "primary up nexthop fc00:a::2 credit 2097152\n"
			   "backup up nexthop fc00:a::3 credit 50000\n") &&
		   rsvp_speaker_backup(s, &f, RSVP_OWNER_ANY) == RSVP_BACKUP_NONE,
		   "no tunnel: status as before");
	rsvp_speaker_close(s);
	take(reqs);
}

/* IPv4 hops go IPv4-mapped; the control socket's words. */
static void ipv4_and_words(void)
{
	struct rsvp_speaker *s = source();
	struct rsvp_flow f;
	struct json_object *j, *v;

	if (!s) {
		ktap_check(0, "speaker opened");
		return;
	}
	flow(&f, 260);
	ktap_check(!strcmp(ctl(s, "setup " FLOW_WORDS "260 path 192.0.2.2 backup 192.0.2.3 tunnel 4294967295"),
			   "ok\n"), "setup over IPv4 with the largest tunnel");
	resv(s, &f, "192.0.2.2", 40000, false);
	resv(s, &f, "192.0.2.3", 2 << 20, true);
	ktap_check(!strcmp(take(reqs),
			   "new nexthop ::ffff:192.0.2.2 mode cumulative credit 40000 tunnel 4294967295\n"
			   "set backup ::ffff:192.0.2.3 2097152 delta\n"),
		   "IPv4 next hop and backup IPv4-mapped; the backup answering in the MB form for a cumulative session: backup-mode delta");
	j = rsvp_speaker_json(s);
	ktap_check(json_object_object_get_ex(j, "backups_in_kernel", &v) &&
		   json_object_get_int(v) == 1, "JSON: backups_in_kernel 1");
	json_object_put(j);
	ktap_check(!strncmp(ctl(s, "setup " FLOW_WORDS "261 path 192.0.2.2 tunnel 0"),
			    "error: tunnel \"0\"", 17), "tunnel 0 refused");
	ktap_check(!strncmp(ctl(s, "setup " FLOW_WORDS "261 path 192.0.2.2 tunnel 4294967296"),
			    "error: tunnel", 13), "tunnel 2^32 refused");
	ktap_check(!strncmp(ctl(s, "setup " FLOW_WORDS "261 path 192.0.2.2 tunnel -1"),
			    "error: tunnel", 13), "tunnel -1 refused");
	ktap_check(!strcmp(ctl(s, "set " FLOW_WORDS "261 backup none"),
			   "error: no such flow set up here\n"), "set: no such flow");
	ktap_check(!strcmp(ctl(s, "set " FLOW_WORDS "260"),
			   "error: backup: required (hops, or none)\n"), "set: backup required");
	ktap_check(!strcmp(ctl(s, "set " FLOW_WORDS "260 path 192.0.2.2"),
			   "error: unknown word \"path\"\n"), "set: no path");
	ktap_check(!strcmp(ctl(s, "status " FLOW_WORDS "260 tunnel 3"),
			   "error: unknown word \"tunnel\"\n"), "status: no tunnel");
	rsvp_speaker_close(s);
	take(reqs);
}

/* ---- the kernel's events ---- */

/*
 * A DMSC_CMD_EVENT message as the kernel builds it (kernel/credit.c,
 * kernel/tunnel.c), parsed as the events socket's callback gets it, and
 * handed to the speaker. @qpn 0: no session nest; @tunnel with @qpn 0:
 * a tunnel nest (@active); @on_backup -1: absent.
 */
static struct nl_msg *ev_msg;
static struct nlattr *ev_tb[DMSC_A_MAX + 1];

static struct nlattr **event_attrs(uint32_t type, int qpn, uint32_t tunnel,
				   int on_backup, uint8_t active)
{
	struct in_addr src, dst;
	struct nlattr *n;

	nlmsg_free(ev_msg);
	ev_msg = nlmsg_alloc();
	genlmsg_put(ev_msg, 0, 0, 0, 0, 0, DMSC_CMD_EVENT, DMSC_GENL_VERSION);
	nla_put_u32(ev_msg, DMSC_A_EVENT, type);
	if (qpn) {
		inet_pton(AF_INET, "10.1.0.1", &src);
		inet_pton(AF_INET, "10.2.0.1", &dst);
		n = nla_nest_start(ev_msg, DMSC_A_SESSION);
		nla_put_u8(ev_msg, DMSC_SESSION_A_FAMILY, AF_INET);
		nla_put(ev_msg, DMSC_SESSION_A_SRC, 4, &src);
		nla_put(ev_msg, DMSC_SESSION_A_DST, 4, &dst);
		nla_put_u16(ev_msg, DMSC_SESSION_A_SPORT, 49152);
		nla_put_u32(ev_msg, DMSC_SESSION_A_QPN, qpn);
		if (tunnel)
			nla_put_u32(ev_msg, DMSC_SESSION_A_TUNNEL, tunnel);
		nla_put_u32(ev_msg, DMSC_SESSION_A_IFINDEX, 3);
		if (on_backup >= 0)
			nla_put_u8(ev_msg, DMSC_SESSION_A_ON_BACKUP, on_backup);
		nla_put_u64(ev_msg, DMSC_SESSION_A_WAITED_US, 10400);
		nla_nest_end(ev_msg, n);
	} else if (tunnel) {
		n = nla_nest_start(ev_msg, DMSC_A_TUNNEL);
		nla_put_u32(ev_msg, DMSC_TUNNEL_A_ID, tunnel);
		nla_put_u8(ev_msg, DMSC_TUNNEL_A_ACTIVE, active);
		nla_nest_end(ev_msg, n);
	}
	if (genlmsg_parse(nlmsg_hdr(ev_msg), 0, ev_tb, DMSC_A_MAX, NULL))
		memset(ev_tb, 0, sizeof(ev_tb));
	return ev_tb;
}

static void event(struct rsvp_speaker *s, uint32_t type, int qpn,
		  uint32_t tunnel, int on_backup)
{
	rsvp_speaker_event(s, event_attrs(type, qpn, tunnel, on_backup,
					  type == DMSC_EVENT_TUNNEL_BACKUP ?
					  DMSC_ACTIVE_BACKUP : DMSC_ACTIVE_PRIMARY));
}

/* kept[@i] is a @type to @to for 10.1.0.1:49152 > 10.2.0.1 QP @qpn from fc00:a::1. */
static bool kept_is(int i, uint8_t type, const char *to, int qpn)
{
	struct rsvp_flow f;
	struct rsvp_addr me;

	flow(&f, qpn);
	addr(&me, "fc00:a::1");
	return i < nkept && kept[i].type == type && !strcmp(kept_to[i], to) &&
	       rsvp_addr_eq(&kept[i].dst, &f.dst) &&
	       rsvp_addr_eq(&kept[i].src, &f.src) &&
	       kept[i].sport == 49152 && kept[i].qpn == (uint32_t)qpn &&
	       rsvp_addr_eq(&kept[i].hop, &me);
}

/* A flow @qpn with tunnel 7 on p (MB, 2 MB) and b (cumulative): both up. */
static void both_up(struct rsvp_speaker *s, struct rsvp_flow *f, int qpn)
{
	struct rsvp_addr path[2], backup[2];
	char err[128];

	flow(f, qpn);
	addr(&path[0], "fc00:a::2");
	addr(&path[1], "fc00:a::4");
	addr(&backup[0], "fc00:a::3");
	addr(&backup[1], "fc00:a::4");
	rsvp_speaker_setup(s, f, RSVP_OWNER_POLICY, 7, path, 2, backup, 2,
			   err, sizeof(err));
	resv(s, f, "fc00:a::2", 2 << 20, true);
	resv(s, f, "fc00:a::3", 50000, false);
}

/*
 * A heartbeat failure moves the session onto the backup: PathTear down
 * the primary (its hops' states go, and the tail's session returns to
 * the backup's last hop), no more refreshes of it, the backup refreshed;
 * the kernel session kept. The tunnel switched back: the backup torn down
 * and held, the primary made anew, then the backup.
 */
static void failover_events(void)
{
	struct rsvp_speaker *s = source();
	struct rsvp_flow f;
	int p, b;

	if (!s) {
		ktap_check(0, "speaker opened");
		return;
	}
	both_up(s, &f, 256);
	p = source_list(s, &f, 0);
	b = source_list(s, &f, 1);
	ktap_check(!strcmp(take(reqs), "new nexthop fc00:a::2 mode delta credit 2097152 tunnel 7\n"
			   "set backup fc00:a::3 50000 cumulative\n"),
		   "a backup answering cumulative for a delta session: handed over with its own form");
	take(sent);
	nkept = 0;

	event(s, DMSC_EVENT_NEXTHOP_FAILED, 256, 7, 1);
	ktap_check(!strcmp(take(sent), "PathTear to fc00:a::2\n") &&
		   kept_is(0, RSVP_MSG_PATHTEAR, "fc00:a::2", 256),
		   "nexthop-failed, on-backup 1: a PathTear for the flow from fc00:a::1 to the primary's first hop");
	ktap_check(!take(reqs)[0] && s->st[p].kernel,
		   "the kernel session (on the backup's credit now) kept: nothing asked");
	ktap_check(count(s, RC_EVENTS_SEEN) == 1 && count(s, RC_FAILOVERS_HANDLED) == 1 &&
		   count(s, RC_PRIMARY_TORN) == 1 && count(s, RC_EVENTS_IGNORED) == 0,
		   "counted: events_seen 1 failovers_handled 1 primary_torn 1");
	ktap_check(!strcmp(ctl(s, "status " FLOW_WORDS "256"),
			   "primary moved nexthop fc00:a::2 credit 2097152 tunnel 7 # on the backup since nexthop-failed\n"
			   "backup up nexthop fc00:a::3 credit 50000 kernel moved\n") &&
		   rsvp_speaker_status(s, &f, RSVP_OWNER_POLICY, NULL, 0) == RSVP_UP,
		   "status: primary moved, the backup's credit moved with it; the flow up");

	/* The tunnel's own switch comes too: nothing more to do. */
	event(s, DMSC_EVENT_TUNNEL_BACKUP, 0, 7, -1);
	ktap_check(!take(sent)[0] && !take(reqs)[0] &&
		   count(s, RC_EVENTS_IGNORED) == 1 && count(s, RC_FAILOVERS_HANDLED) == 1,
		   "tunnel-backup after it: nothing sent, counted as ignored");

	/* Refreshes due: the backup's goes, the primary's does not. */
	s->st[p].refresh_at = s->st[b].refresh_at = 0;
	nkept = 0;
	rsvp_speaker_tick(s);
	ktap_check(!strcmp(take(sent), "PATH to fc00:a::3\n") &&
		   kept_is(0, RSVP_MSG_CBFC_PATH, "fc00:a::3", 256) &&
		   kept[0].nhops == 1 && !strcmp(kept_to[0], "fc00:a::3"),
		   "refresh: PATH down the backup (ERO fc00:a::4), none down the primary");
	{
		char a[INET6_ADDRSTRLEN];

		inet_ntop(AF_INET6, kept[0].hops[0].a, a, sizeof(a));
		ktap_check(!strcmp(a, "fc00:a::4"), "the backup's PATH routes to the tail");
	}

	/* Late answers of the primary change nothing. */
	resv(s, &f, "fc00:a::2", 2 << 20, true);
	patherr(s, &f, "fc00:a::2", "fc00:a::4");
	ktap_check(!take(reqs)[0] && !take(sent)[0] && s->st[p].kernel &&
		   s->st[p].st == ST_MOVED,
		   "a late RESV or PathErr of the primary: no SESSION_DEL, still moved");

	/* Back on the primary: made anew, the backup after it. */
	event(s, DMSC_EVENT_TUNNEL_PRIMARY, 0, 7, -1);
	ktap_check(!strcmp(take(reqs), "del\n") &&
		   !strcmp(take(sent), "PathTear to fc00:a::3\nPATH to fc00:a::2\n") &&
		   count(s, RC_PRIMARY_RESIGNALLED) == 1,
		   "tunnel-primary: SESSION_DEL, PathTear down the backup, PATH down the primary");
	ktap_check(!strcmp(ctl(s, "status " FLOW_WORDS "256"),
			   "primary wait nexthop fc00:a::2 credit 2097152 tunnel 7\n"
			   "backup held nexthop fc00:a::3 credit 0 kernel no\n"),
		   "status: primary waiting, backup held");
	resv(s, &f, "fc00:a::2", 2 << 20, true);
	ktap_check(!strcmp(take(reqs), "new nexthop fc00:a::2 mode delta credit 2097152 tunnel 7\n") &&
		   !strcmp(take(sent), "PATH to fc00:a::3\n"),
		   "primary up again: SESSION_NEW, then the backup's PATH");
	resv(s, &f, "fc00:a::3", 50000, false);
	ktap_check(!strcmp(take(reqs), "set backup fc00:a::3 50000 cumulative\n"),
		   "backup up again: its credit in the new session");
	ktap_check(rsvp_speaker_teardown(s, &f, RSVP_OWNER_POLICY) == 2, "torn down");
	take(reqs);
	take(sent);
	rsvp_speaker_close(s);
}

/*
 * A tunnel switched while the primary waits and the backup is held: the
 * PathTear down the primary, the backup's PATH now.
 */
static void failover_held_backup(void)
{
	struct rsvp_speaker *s = source();
	struct rsvp_addr path[1], backup[1];
	struct rsvp_flow f;
	char err[128];

	if (!s) {
		ktap_check(0, "speaker opened");
		return;
	}
	flow(&f, 257);
	addr(&path[0], "fc00:a::2");
	addr(&backup[0], "fc00:a::3");
	rsvp_speaker_setup(s, &f, RSVP_OWNER_POLICY, 9, path, 1, backup, 1,
			   err, sizeof(err));
	take(sent);
	event(s, DMSC_EVENT_TUNNEL_BACKUP, 0, 9, -1);
	ktap_check(!strcmp(take(sent), "PathTear to fc00:a::2\nPATH to fc00:a::3\n") &&
		   count(s, RC_FAILOVERS_HANDLED) == 1,
		   "tunnel-backup, backup held: PathTear down the primary, PATH down the backup");
	resv(s, &f, "fc00:a::3", 50000, false);
	ktap_check(!take(reqs)[0] &&
		   rsvp_speaker_status(s, &f, RSVP_OWNER_POLICY, NULL, 0) == RSVP_UP,
		   "the backup up: no kernel session to give it to (the primary never was), flow up");
	rsvp_speaker_teardown(s, &f, RSVP_OWNER_POLICY);
	ktap_check(!strcmp(take(sent), "PathTear to fc00:a::3\n"),
		   "teardown: PathTear down the backup only (the primary's went)");
	take(reqs);
	rsvp_speaker_close(s);
}

/*
 * A tunnel switched under a flow whose kernel session holds no backup
 * (set up without one): the kernel leaves that session on the primary's
 * credit, so the primary is not torn down and the flow not shown moved.
 */
static void failover_no_backup(void)
{
	struct rsvp_speaker *s = source();
	struct rsvp_addr path[1];
	struct rsvp_flow f;
	char err[128];
	int p;

	if (!s) {
		ktap_check(0, "speaker opened");
		return;
	}
	flow(&f, 258);
	addr(&path[0], "fc00:a::2");
	rsvp_speaker_setup(s, &f, RSVP_OWNER_POLICY, 11, path, 1, NULL, 0,
			   err, sizeof(err));
	resv(s, &f, "fc00:a::2", 2 << 20, true);
	p = source_list(s, &f, 0);
	take(sent);
	take(reqs);
	event(s, DMSC_EVENT_TUNNEL_BACKUP, 0, 11, -1);
	ktap_check(p >= 0 && s->st[p].kernel && !take(sent)[0] && !take(reqs)[0] &&
		   s->st[p].st == ST_UP && count(s, RC_FAILOVER_NO_BACKUP) == 1 &&
		   count(s, RC_FAILOVERS_HANDLED) == 0 && count(s, RC_PRIMARY_TORN) == 0,
		   "tunnel-backup for a session without a backup: no PathTear, still up, counted failover_no_backup");
	rsvp_speaker_teardown(s, &f, RSVP_OWNER_POLICY);
	take(sent);
	take(reqs);
	rsvp_speaker_close(s);
}

/*
 * Not ours, nothing to do, unknown or malformed: counted, nothing sent or
 * asked, never read past an attribute's end. The decoder on its own.
 */
static void events_ignored(void)
{
	struct rsvp_speaker *s = source();
	struct nl_msg *m;
	struct nlattr *n, **tb;
	struct dmsc_nl_event ev;
	struct rsvp_flow f;
	char why[128];

	if (!s) {
		ktap_check(0, "speaker opened");
		return;
	}
	both_up(s, &f, 256);
	take(sent);
	take(reqs);

	tb = event_attrs(DMSC_EVENT_NEXTHOP_DOWN, 256, 7, 1, 0);
	ktap_check(!dmsc_nl_event_decode(tb, &ev, why, sizeof(why)) &&
		   ev.type == DMSC_EVENT_NEXTHOP_DOWN && ev.has_flow &&
		   ev.family == AF_INET && ev.qpn == 256 && ev.sport == 49152 &&
		   ev.src[0] == 10 && ev.src[1] == 1 && ev.dst[1] == 2 &&
		   ev.has_tunnel && ev.tunnel == 7 && ev.ifindex == 3 &&
		   ev.has_waited && ev.waited_us == 10400 && ev.on_backup == 1,
		   "decoder: every field of a nexthop-down event");

	event(s, DMSC_EVENT_NEXTHOP_FAILED, 999, 7, 1);	/* not set up here */
	event(s, DMSC_EVENT_NEXTHOP_FAILED, 256, 7, 0);	/* failed, not moved */
	event(s, DMSC_EVENT_NEXTHOP_DOWN, 256, 7, -1);	/* says not that it moved */
	event(s, DMSC_EVENT_TUNNEL_BACKUP, 0, 99, -1);	/* another tunnel */
	event(s, DMSC_EVENT_TUNNEL_PRIMARY, 0, 7, -1);	/* never moved */
	event(s, 77, 256, 7, 1);			/* a type to come */
	ktap_check(!take(sent)[0] && !take(reqs)[0] &&
		   count(s, RC_EVENTS_SEEN) == 6 && count(s, RC_EVENTS_IGNORED) == 6 &&
		   count(s, RC_FAILOVERS_HANDLED) == 0 &&
		   s->st[source_list(s, &f, 0)].st == ST_UP,
		   "6 events not ours or with nothing to do: ignored, counted, the flow untouched");

	/* Malformed: the event a u16; no session; a short src; a u8 id. */
	m = nlmsg_alloc();
	genlmsg_put(m, 0, 0, 0, 0, 0, DMSC_CMD_EVENT, DMSC_GENL_VERSION);
	nla_put_u16(m, DMSC_A_EVENT, DMSC_EVENT_TUNNEL_BACKUP);
	n = nla_nest_start(m, DMSC_A_TUNNEL);
	nla_put_u32(m, DMSC_TUNNEL_A_ID, 7);
	nla_nest_end(m, n);
	genlmsg_parse(nlmsg_hdr(m), 0, ev_tb, DMSC_A_MAX, NULL);
	rsvp_speaker_event(s, ev_tb);
	nlmsg_free(m);

	rsvp_speaker_event(s, event_attrs(DMSC_EVENT_NEXTHOP_FAILED, 0, 0, -1, 0));

	m = nlmsg_alloc();
	genlmsg_put(m, 0, 0, 0, 0, 0, DMSC_CMD_EVENT, DMSC_GENL_VERSION);
	nla_put_u32(m, DMSC_A_EVENT, DMSC_EVENT_NEXTHOP_FAILED);
	n = nla_nest_start(m, DMSC_A_SESSION);
	nla_put_u8(m, DMSC_SESSION_A_FAMILY, AF_INET6);
	nla_put(m, DMSC_SESSION_A_SRC, 4, "\x0a\x01\x00\x01");
	nla_put(m, DMSC_SESSION_A_DST, 16, "0123456789abcdef");
	nla_put_u16(m, DMSC_SESSION_A_SPORT, 49152);
	nla_put_u32(m, DMSC_SESSION_A_QPN, 256);
	nla_put_u8(m, DMSC_SESSION_A_ON_BACKUP, 1);
	nla_nest_end(m, n);
	genlmsg_parse(nlmsg_hdr(m), 0, ev_tb, DMSC_A_MAX, NULL);
	ktap_check(dmsc_nl_event_decode(ev_tb, &ev, why, sizeof(why)) == -EINVAL &&
		   !strcmp(why, "session src: 4 bytes, not 16"),
		   "decoder: an IPv6 session with a 4-byte src refused, naming it");
	rsvp_speaker_event(s, ev_tb);
	nlmsg_free(m);

	m = nlmsg_alloc();
	genlmsg_put(m, 0, 0, 0, 0, 0, DMSC_CMD_EVENT, DMSC_GENL_VERSION);
	nla_put_u32(m, DMSC_A_EVENT, DMSC_EVENT_TUNNEL_PRIMARY);
	n = nla_nest_start(m, DMSC_A_TUNNEL);
	nla_put_u8(m, DMSC_TUNNEL_A_ID, 7);
	nla_nest_end(m, n);
	genlmsg_parse(nlmsg_hdr(m), 0, ev_tb, DMSC_A_MAX, NULL);
	rsvp_speaker_event(s, ev_tb);
	nlmsg_free(m);

	memset(ev_tb, 0, sizeof(ev_tb));
	rsvp_speaker_event(s, ev_tb);			/* no DMSC_A_EVENT */
	ktap_check(!take(sent)[0] && !take(reqs)[0] &&
		   count(s, RC_EVENTS_MALFORMED) == 5 && count(s, RC_EVENTS_SEEN) == 11 &&
		   logged("kernel event refused: event: 2 bytes, not 4") == 1 &&
		   logged("kernel event refused: tunnel id: 1 bytes, not 4") == 1,
		   "5 malformed events refused, counted, logged, nothing done");
	rsvp_speaker_teardown(s, &f, RSVP_OWNER_POLICY);
	take(sent);
	take(reqs);
	rsvp_speaker_close(s);
}

/*
 * The events socket overran (ENOBUFS): counted, and the tunnels dumped
 * to catch up: one on its backup fails its flows over, then, back on its
 * primary, they are signalled anew.
 */
static void events_overrun(void)
{
	struct rsvp_speaker *s = source();
	struct rsvp_flow f;

	if (!s) {
		ktap_check(0, "speaker opened");
		return;
	}
	both_up(s, &f, 258);
	take(sent);
	take(reqs);
	ntunnels = 2;
	tunnels[0].id = 8;
	tunnels[0].active = DMSC_ACTIVE_PRIMARY;
	tunnels[1].id = 7;
	tunnels[1].active = DMSC_ACTIVE_BACKUP;
	recv_answer = -ENOBUFS;
	read_events(s);
	ktap_check(!strcmp(take(reqs), "dump tunnels\n") &&
		   !strcmp(take(sent), "PathTear to fc00:a::2\n") &&
		   count(s, RC_EVENTS_LOST) == 1 && count(s, RC_RESYNCS) == 1 &&
		   count(s, RC_FAILOVERS_HANDLED) == 1 &&
		   logged("kernel events lost (No buffer space available)") == 1,
		   "ENOBUFS: counted, tunnels dumped, tunnel 7 on its backup: the primary torn down");
	tunnels[1].active = DMSC_ACTIVE_PRIMARY;
	read_events(s);
	ktap_check(!strcmp(take(reqs), "dump tunnels\ndel\n") &&
		   !strcmp(take(sent), "PathTear to fc00:a::3\nPATH to fc00:a::2\n") &&
		   count(s, RC_RESYNCS) == 2 && count(s, RC_PRIMARY_RESIGNALLED) == 1,
		   "a second overrun, tunnel 7 back on its primary: signalled anew");
	recv_answer = 0;
	read_events(s);
	ktap_check(!take(reqs)[0] && count(s, RC_RESYNCS) == 2,
		   "a read without loss: no dump");
	ntunnels = 0;
	rsvp_speaker_teardown(s, &f, RSVP_OWNER_POLICY);
	take(sent);
	take(reqs);
	rsvp_speaker_close(s);
}

int main(void)
{
	int rc;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(ctl_path, sizeof(ctl_path), "%s/ctl.sock", dir);
	speaker_log = open_memstream(&logbuf, &loglen);
	ktap_plan(84);
	backup_after_primary();
	backup_before_primary();
	refused_backup();
	tail();
	no_tunnel();
	ipv4_and_words();
	failover_events();
	failover_held_backup();
	failover_no_backup();
	events_ignored();
	events_overrun();
	nlmsg_free(ev_msg);
	rc = ktap_finish();
	fclose(speaker_log);
	free(logbuf);
	rmdir(dir);
	return rc;
}
