// SPDX-License-Identifier: GPL-2.0
/*
 * The dmsc command line, whole, in-process and without a kernel: every
 * command's arguments are checked before netlink is touched. The proof:
 * each case runs with -n naming a namespace that does not exist, so a
 * command that reached for netlink fails with the namespace's error
 * (exit 1) instead of its own usage error (exit 2). Also -batch (FILE:LINE
 * in errors, stop or -force), the words of a batch line, and the netlink
 * messages good command lines build.
 */
#include <arpa/inet.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/dmsc.h>

#include "cmd.h"
#include "output.h"
#include "telemetry.h"
#include "tests/ktap.h"

#define NO_NS "dmsc-test-no-such-netns"

static char err[8192], out[8192];
static int mpte_calls;

/* The solver is not linked in: dmsc mpte only has to reach it. */
int mpte_cli(int argc, char **argv, int json)
{
	(void)argv;
	(void)json;
	mpte_calls++;
	return argc > 1 ? 1 : 0;
}

/* Nor the planner: dmsc plan only has to reach it. */
int plan_cli(int argc, char **argv, int json)
{
	(void)argc;
	(void)argv;
	(void)json;
	return 0;
}

static void slurp(FILE *f, char *buf, size_t len)
{
	size_t n;

	rewind(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* dmsc WORDS...: run cli_main() with stdout and stderr captured. */
static int dmsc(const char *words)
{
	char *copy = strdup(words), *argv[64];
	FILE *fo = tmpfile(), *fe = tmpfile();
	int argc, rc, so, se;

	argv[0] = "dmsc";
	argc = batch_split(copy, argv + 1, 62) + 1;
	argv[argc] = NULL;
	fflush(stdout);
	fflush(stderr);
	so = dup(1);
	se = dup(2);
	dup2(fileno(fo), 1);
	dup2(fileno(fe), 2);
	rc = cli_main(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	slurp(fo, out, sizeof(out));
	slurp(fe, err, sizeof(err));
	free(copy);
	return rc;
}

/*
 * bad(ARGS, MESSAGE): with -n NO_NS, exit 2 and exactly the error line
 * "dmsc: MESSAGE"; nothing on stdout.
 */
static void bad(const char *args, const char *msg)
{
	char cmd[512], want[512], name[600];
	int rc;

	snprintf(cmd, sizeof(cmd), "-n " NO_NS " %s", args);
	snprintf(want, sizeof(want), "dmsc: %s\n", msg);
	rc = dmsc(cmd);
	snprintf(name, sizeof(name), "usage error before netlink: %s", args);
	ktap_check(rc == 2 && !strcmp(err, want) && !out[0], name);
	if (rc != 2 || strcmp(err, want))
		printf("# exit %d, stderr: %s", rc, err);
}

/* good(ARGS): parses, so it goes on to enter NO_NS and fails there. */
static void good(const char *args)
{
	char cmd[512], name[600];
	int rc;

	snprintf(cmd, sizeof(cmd), "-n " NO_NS " %s", args);
	rc = dmsc(cmd);
	snprintf(name, sizeof(name), "parses, then needs netlink: %s", args);
	ktap_check(rc == 1 && strstr(err, "netns \"" NO_NS "\": no such namespace"),
		   name);
	if (rc != 1)
		printf("# exit %d, stderr: %s", rc, err);
}

/* The flow of the cbfc cases. */
#define CB_FLOW "src 10.9.0.1 dst 10.9.0.2 sport 50000 qpn 256"

static const char *const bad_cases[][2] = {
	{ "tunnel add 1 src fc00::1 path fc00::2 weight x",
	  "tunnel add: weight \"x\": not a number" },
	{ "tunnel add 1 src fc00::1 path fc00::2 weight 0",
	  "tunnel add: weight \"0\": out of range 1..65535" },
	{ "tunnel add x src fc00::1 path fc00::2",
	  "tunnel add: ID \"x\": not a number" },
	{ "tunnel add 1 src 10.0.0.1 path fc00::2",
	  "tunnel add: src \"10.0.0.1\": not an IPv6 address" },
	{ "tunnel add 1 src fc00::1 path ff02::1",
	  "tunnel add: path \"ff02::1\": a multicast address, not a SID" },
	{ "tunnel add 1 src fc00::1",
	  "tunnel add: path: at least one is required (try \"dmsc tunnel help\")" },
	{ "tunnel add 1 path fc00::2",
	  "tunnel add: src: required (try \"dmsc tunnel help\")" },
	{ "tunnel add 1 src fc00::1 path fc00::2 mode foo",
	  "tunnel add: mode \"foo\": not encap or encap.red (try \"dmsc tunnel help\")" },
	{ "tunnel add 1 src fc00::1 path fc00::2 backup none",
	  "tunnel add: backup \"none\": only with change (try \"dmsc tunnel help\")" },
	{ "tunnel add 1 src fc00::1 path fc00::2 colour red",
	  "tunnel add: unknown option \"colour\" (try \"dmsc tunnel help\")" },
	{ "tunnel add 1 src fc00::1 path",
	  "tunnel add: path: needs a value (try \"dmsc tunnel help\")" },
	{ "tunnel change 1",
	  "tunnel change: nothing to change (try \"dmsc tunnel help\")" },
	{ "tunnel change 1 state sideways",
	  "tunnel change: state \"sideways\": not up or down (try \"dmsc tunnel help\")" },
	{ "tunnel switch 1 left",
	  "tunnel switch: say backup or primary (try \"dmsc tunnel help\")" },
	{ "tunnel del",
	  "tunnel del: tunnel ID required (try \"dmsc tunnel help\")" },
	{ "tunnel del 1 2",
	  "tunnel del: unexpected \"2\" (try \"dmsc tunnel help\")" },
	{ "tunnel show 0", "tunnel show: ID \"0\": out of range 1..4294967295" },
	{ "tunnel frob", "tunnel: unknown command \"frob\" (try \"dmsc tunnel help\")" },
	{ "rule add dst 10.0.0.0/8 tunnel x",
	  "rule add: tunnel \"x\": not a number" },
	{ "rule add dst 10.0.0.1/8 tunnel 1",
	  "rule add: dst \"10.0.0.1/8\": host bits set past /8" },
	{ "rule add dst 10.0.0.0/8 qpn 9-3 tunnel 1",
	  "rule add: qpn \"9-3\": 9 is above 3" },
	{ "rule add dst 10.0.0.0/8 src 2001:db8::/32 tunnel 1",
	  "rule add: src: not of the same family as dst (try \"dmsc rule help\")" },
	{ "rule add dst 10.0.0.0/8",
	  "rule add: tunnel: required (try \"dmsc rule help\")" },
	{ "rule del dst 10.0.0.0/8 tunnel 1",
	  "rule del: unknown option \"tunnel\" (try \"dmsc rule help\")" },
	{ "rule show extra", "rule show: unexpected \"extra\" (try \"dmsc rule help\")" },
	{ "flow show tunnel", "flow show: tunnel: needs a value (try \"dmsc flow help\")" },
	{ "flow show tunnel 0", "flow show: tunnel \"0\": out of range 1..4294967295" },
	{ "flow flush now", "flow flush: unexpected \"now\" (try \"dmsc flow help\")" },
	{ "flow frob", "flow: unknown command \"frob\" (try \"dmsc flow help\")" },
	{ "set", "set: nothing to set (try \"dmsc set help\")" },
	{ "set flow_limit", "set: flow_limit: needs a value (try \"dmsc set help\")" },
	{ "set flow_limit lots", "set: flow_limit \"lots\": not a number" },
	{ "set flow_timeout 1", "set: flow_timeout \"1\": out of range 100..3600000" },
	{ "set colour 1", "set: unknown setting \"colour\" (try \"dmsc set help\")" },
	{ "info now", "info: unexpected \"now\" (try \"dmsc info help\")" },
	{ "cbfc session add " CB_FLOW,
	  "cbfc session add: nexthop or prevhop: required (try \"dmsc cbfc help\")" },
	{ "cbfc session add src 10.9.0.1 dst fc00::2 sport 1 qpn 2 nexthop fc00::3",
	  "cbfc session add: dst \"fc00::2\": not an IPv4 address like src" },
	{ "cbfc session add " CB_FLOW " nexthop fc00::3 tunnel 1 backup-nexthop fc00::4",
	  "cbfc session add: backup-credit: required with backup-nexthop (try \"dmsc cbfc help\")" },
	{ "cbfc session add " CB_FLOW " nexthop fc00::3 tunnel 1 backup-credit 9000",
	  "cbfc session add: backup-nexthop: required with backup-credit (try \"dmsc cbfc help\")" },
	{ "cbfc session add " CB_FLOW " nexthop fc00::3 tunnel 1 backup-nexthop fc00::4 backup-credit 0",
	  "cbfc session add: backup-credit \"0\": out of range 1..4294967296" },
	{ "cbfc session add " CB_FLOW " nexthop fc00::3 tunnel 1 backup-nexthop fc00::4 backup-credit 4294967297",
	  "cbfc session add: backup-credit \"4294967297\": out of range 1..4294967296" },
	{ "cbfc session add " CB_FLOW " nexthop fc00::3 tunnel 1 backup-nexthop fc00::4 backup-credit lots",
	  "cbfc session add: backup-credit \"lots\": not a number" },
	{ "cbfc session add " CB_FLOW " nexthop fc00::3 tunnel 1 backup-nexthop nowhere backup-credit 9000",
	  "cbfc session add: backup-nexthop \"nowhere\": not an IP address" },
	{ "cbfc session add " CB_FLOW " nexthop fc00::3 tunnel 1 backup-credit 9000 backup-nexthop",
	  "cbfc session add: backup-nexthop: needs a value (try \"dmsc cbfc help\")" },
	{ "cbfc session add " CB_FLOW " prevhop fc00::1 tunnel 1 backup-nexthop fc00::4 backup-credit 9000",
	  "cbfc session add: backup-nexthop: needs nexthop (try \"dmsc cbfc help\")" },
	{ "cbfc session add " CB_FLOW " nexthop fc00::3 backup-nexthop fc00::4 backup-credit 9000",
	  "cbfc session add: backup-nexthop: needs tunnel (try \"dmsc cbfc help\")" },
	{ "cbfc session add " CB_FLOW " nexthop 10.9.0.3 tunnel 1 backup-nexthop ::ffff:10.9.0.3 backup-credit 9000",
	  "cbfc session add: backup-nexthop: the same as nexthop (try \"dmsc cbfc help\")" },
	{ "cbfc session add " CB_FLOW " nexthop fc00::3 backup none",
	  "cbfc session add: backup: not for this command (try \"dmsc cbfc help\")" },
	{ "cbfc session set " CB_FLOW,
	  "cbfc session set: backup-nexthop and backup-credit, or backup none: required (try \"dmsc cbfc help\")" },
	{ "cbfc session set src 10.9.0.1 dst 10.9.0.2 sport 50000 backup none",
	  "cbfc session set: qpn: required (try \"dmsc cbfc help\")" },
	{ "cbfc session set " CB_FLOW " backup-nexthop fc00::4",
	  "cbfc session set: backup-credit: required with backup-nexthop (try \"dmsc cbfc help\")" },
	{ "cbfc session set " CB_FLOW " backup-credit 9000",
	  "cbfc session set: backup-nexthop: required with backup-credit (try \"dmsc cbfc help\")" },
	{ "cbfc session set " CB_FLOW " backup fc00::4",
	  "cbfc session set: backup \"fc00::4\": not none (try \"dmsc cbfc help\")" },
	{ "cbfc session add " CB_FLOW " nexthop fc00::3 tunnel 1 backup-mode delta",
	  "cbfc session add: backup-mode: needs backup-nexthop and backup-credit (try \"dmsc cbfc help\")" },
	{ "cbfc session add " CB_FLOW " nexthop fc00::3 tunnel 1 backup-nexthop fc00::4 backup-credit 9000 backup-mode mb",
	  "cbfc session add: backup-mode \"mb\": not cumulative or delta (try \"dmsc cbfc help\")" },
	{ "cbfc session set " CB_FLOW " backup none backup-mode delta",
	  "cbfc session set: backup none: not with backup-mode (try \"dmsc cbfc help\")" },
	{ "cbfc session set " CB_FLOW " backup-mode cumulative",
	  "cbfc session set: backup-nexthop and backup-credit, or backup none: required (try \"dmsc cbfc help\")" },
	{ "cbfc credit " CB_FLOW " freed 1 backup-mode delta",
	  "cbfc credit: backup-mode: not for this command (try \"dmsc cbfc help\")" },
	{ "cbfc session set " CB_FLOW " backup none backup-credit 9000",
	  "cbfc session set: backup none: not with backup-credit (try \"dmsc cbfc help\")" },
	{ "cbfc session set " CB_FLOW " backup none backup-nexthop fc00::4",
	  "cbfc session set: backup none: not with backup-nexthop (try \"dmsc cbfc help\")" },
	{ "cbfc session set " CB_FLOW " nexthop fc00::3 backup none",
	  "cbfc session set: nexthop: not for this command (try \"dmsc cbfc help\")" },
	{ "cbfc session set " CB_FLOW " credit 10 backup none",
	  "cbfc session set: credit: not for this command (try \"dmsc cbfc help\")" },
	{ "cbfc session set " CB_FLOW " tunnel 1 backup none",
	  "cbfc session set: tunnel: not for this command (try \"dmsc cbfc help\")" },
	{ "cbfc session show " CB_FLOW " backup-credit 1",
	  "cbfc session show: backup-credit: not for this command (try \"dmsc cbfc help\")" },
	{ "cbfc credit " CB_FLOW " backup-credit 1",
	  "cbfc credit: backup-credit: not for this command (try \"dmsc cbfc help\")" },
	{ "cbfc session frob",
	  "cbfc: unknown command \"frob\" (try \"dmsc cbfc help\")" },
	{ "monitor count x", "monitor: count \"x\": not a number" },
	{ "monitor forever", "monitor: unexpected \"forever\" (try \"dmsc monitor help\")" },
	{ "telemetry attach",
	  "telemetry attach: dev: required (try \"dmsc telemetry help\")" },
	{ "telemetry attach dev",
	  "telemetry attach: dev: needs a device name (try \"dmsc telemetry help\")" },
	{ "telemetry attach dev a/b",
	  "telemetry attach: dev \"a/b\": not a valid device name" },
	{ "telemetry attach dev 0123456789abcdef",
	  "telemetry attach: dev \"0123456789abcdef\": not a valid device name" },
	{ "telemetry attach dev eth0 sideways",
	  "telemetry attach: unexpected \"sideways\" (try \"dmsc telemetry help\")" },
	{ "telemetry detach egress",
	  "telemetry detach: dev: required (try \"dmsc telemetry help\")" },
	{ "telemetry show ingress",
	  "telemetry show: unexpected \"ingress\" (try \"dmsc telemetry help\")" },
	{ "telemetry frob",
	  "telemetry: unknown command \"frob\" (try \"dmsc telemetry help\")" },
	{ "telemetry serve port 0",
	  "telemetry serve: port \"0\": out of range 1..65535" },
	{ "telemetry serve port",
	  "telemetry serve: port: needs a value (try \"dmsc telemetry help\")" },
	{ "telemetry serve address nowhere",
	  "telemetry serve: address \"nowhere\": not an IPv4 or IPv6 address" },
	{ "telemetry serve dev eth0",
	  "telemetry serve: unexpected \"dev\" (try \"dmsc telemetry help\")" },
	{ "t frob", "tunnel: unknown command \"frob\" (try \"dmsc tunnel help\")" },
	{ "mpte", "mpte: a command is required (try \"dmsc mpte help\")" },
	{ "mpte frob", "mpte: unknown command \"frob\" (try \"dmsc mpte help\")" },
	{ "plan", "plan: a command is required (try \"dmsc plan help\")" },
	{ "plan frob", "plan: unknown command \"frob\" (try \"dmsc plan help\")" },
	{ "frob", "unknown object \"frob\" (try \"dmsc help\")" },
	{ "-x info", "unknown option \"-x\" (try \"dmsc help\")" },
	{ "-batch /dev/null info",
	  "-batch: unexpected \"info\" (commands go in the file) (try \"dmsc help\")" },
};

static const char *const good_cases[] = {
	"info",
	"set flow_limit 100 flow_timeout 500",
	"tunnel show",
	"tunnel add 1 src fc00::1 path fc00::2,fc00::3 weight 3 path fc00::4 backup fc00::5 mode encap.red state down",
	"tunnel change 1 backup none",
	"tunnel switch 1 backup",
	"tunnel del 1",
	"rule add dst 2001:db8::/32 src 2001:db8:1::/48 qpn 16-31 tunnel 1",
	"rule del dst 10.0.0.0/8",
	"flow show tunnel 3",
	"flow flush",
	"cbfc session add " CB_FLOW " nexthop fc00::3 credit 9000 tunnel 1",
	"cbfc session add " CB_FLOW " nexthop 10.9.0.3 credit 9000 tunnel 1 backup-nexthop 10.9.0.4 backup-credit 4294967296",
	"cbfc session add " CB_FLOW " nexthop fc00::3 tunnel 1 backup-credit 1 backup-nexthop fc00::4",
	"cbfc session set " CB_FLOW " backup-nexthop fc00::4 backup-credit 9000",
	"cbfc session set " CB_FLOW " backup none",
	"cbfc session se " CB_FLOW " backup none",
	"cbfc session show",
	"cbfc session s " CB_FLOW,
	"monitor count 2",
	"telemetry show",
	"te show dev lo",
	"telemetry attach dev eth0 egress",
	"telemetry detach dev eth0 ingress",
	"telemetry serve address ::1 port 9000",
};

/* Attributes of the one TUNNEL nest of a request. */
static void check_tunnel_msg(void)
{
	char *argv[32], line[] = "tunnel add 7 src fc00::1 path fc00::2,fc00::3 weight 3 path fc00::4 mode encap.red";
	struct nlattr *tb[DMSC_A_MAX + 1], *tt[DMSC_TUNNEL_A_MAX + 1], *a;
	int argc = batch_split(line, argv, 32), rem, paths = 0, rc;
	uint32_t weights[2] = { 0, 0 };
	int segs[2] = { 0, 0 };
	struct cli cli = { 0 };
	struct request req;

	rc = cli_parse(&cli, argc, argv, &req);
	ktap_check(rc == 0 && req.msg && !req.array, "tunnel add builds a request");
	if (rc || !req.msg)
		return;
	ktap_check(!genlmsg_parse(nlmsg_hdr(req.msg), 0, tb, DMSC_A_MAX, NULL) &&
		   ((struct genlmsghdr *)nlmsg_data(nlmsg_hdr(req.msg)))->cmd ==
		   DMSC_CMD_TUNNEL_NEW && tb[DMSC_A_TUNNEL] &&
		   !nla_parse_nested(tt, DMSC_TUNNEL_A_MAX, tb[DMSC_A_TUNNEL],
				     NULL) &&
		   nla_get_u32(tt[DMSC_TUNNEL_A_ID]) == 7 &&
		   nla_get_u8(tt[DMSC_TUNNEL_A_MODE]) == DMSC_MODE_ENCAP_RED,
		   "tunnel add: command, id and mode in the message");
	nla_for_each_nested(a, tb[DMSC_A_TUNNEL], rem) {
		struct nlattr *pt[DMSC_PATH_A_MAX + 1];

		if (nla_type(a) != DMSC_TUNNEL_A_PATH || paths == 2 ||
		    nla_parse_nested(pt, DMSC_PATH_A_MAX, a, NULL))
			continue;
		if (pt[DMSC_PATH_A_WEIGHT])
			weights[paths] = nla_get_u32(pt[DMSC_PATH_A_WEIGHT]);
		if (pt[DMSC_PATH_A_SEGS])
			segs[paths] = nla_len(pt[DMSC_PATH_A_SEGS]) / 16;
		paths++;
	}
	ktap_check(paths == 2 && weights[0] == 3 && weights[1] == 0 &&
		   segs[0] == 2 && segs[1] == 1,
		   "tunnel add: two paths, weight 3 then none, 2 and 1 SIDs");
	nlmsg_free(req.msg);
}

/* The SESSION nest of the request @line builds; 0, or -1 if none. */
static int session_msg(const char *line, struct request *req, int *cmd,
		       struct nlattr **st)
{
	char copy[512], *argv[32];
	struct nlattr *tb[DMSC_A_MAX + 1];
	struct cli cli = { 0 };
	int argc;

	snprintf(copy, sizeof(copy), "%s", line);
	argc = batch_split(copy, argv, 32);
	req->msg = NULL;
	if (cli_parse(&cli, argc, argv, req) || !req->msg)
		return -1;
	*cmd = ((struct genlmsghdr *)nlmsg_data(nlmsg_hdr(req->msg)))->cmd;
	if (genlmsg_parse(nlmsg_hdr(req->msg), 0, tb, DMSC_A_MAX, NULL) ||
	    !tb[DMSC_A_SESSION] ||
	    nla_parse_nested(st, DMSC_SESSION_A_MAX, tb[DMSC_A_SESSION], NULL))
		return -1;
	return 0;
}

/* Attributes of the nest @st has, as a bit per type. */
static uint64_t session_attrs(struct nlattr **st)
{
	uint64_t bits = 0;
	int i;

	for (i = 0; i <= DMSC_SESSION_A_MAX; i++)
		if (st[i])
			bits |= 1ull << i;
	return bits;
}

#define SA(x) (1ull << DMSC_SESSION_A_##x)
#define SA_KEY (SA(FAMILY) | SA(SRC) | SA(DST) | SA(SPORT) | SA(QPN))

static bool is_addr(struct nlattr *a, const char *want)
{
	struct in6_addr w;

	return a && nla_len(a) == sizeof(w) && inet_pton(AF_INET6, want, &w) == 1 &&
	       !memcmp(nla_data(a), &w, sizeof(w));
}

/* Backup reservations in SESSION_NEW and SESSION_SET. */
static void check_session_msg(void)
{
	struct nlattr *st[DMSC_SESSION_A_MAX + 1];
	struct request req;
	int cmd = 0, rc;

	rc = session_msg("cbfc session add " CB_FLOW " nexthop fc00::3 credit 9000 tunnel 5 backup-nexthop 10.9.0.4 backup-credit 4096",
			 &req, &cmd, st);
	ktap_check(!rc && cmd == DMSC_CMD_SESSION_NEW &&
		   session_attrs(st) == (SA_KEY | SA(NEXTHOP) | SA(CREDIT) |
					 SA(TUNNEL) | SA(BACKUP_NEXTHOP) |
					 SA(BACKUP_CREDIT)) &&
		   is_addr(st[DMSC_SESSION_A_NEXTHOP], "fc00::3") &&
		   is_addr(st[DMSC_SESSION_A_BACKUP_NEXTHOP], "::ffff:10.9.0.4") &&
		   nla_get_u64(st[DMSC_SESSION_A_BACKUP_CREDIT]) == 4096 &&
		   nla_get_u64(st[DMSC_SESSION_A_CREDIT]) == 9000 &&
		   nla_get_u32(st[DMSC_SESSION_A_TUNNEL]) == 5,
		   "session add: backup nexthop (IPv4-mapped) and credit in SESSION_NEW");
	nlmsg_free(req.msg);

	rc = session_msg("cbfc session add " CB_FLOW " nexthop fc00::3 tunnel 5",
			 &req, &cmd, st);
	ktap_check(!rc && cmd == DMSC_CMD_SESSION_NEW &&
		   session_attrs(st) == (SA_KEY | SA(NEXTHOP) | SA(TUNNEL)),
		   "session add: no backup, no backup attributes");
	nlmsg_free(req.msg);

	rc = session_msg("cbfc session set " CB_FLOW " backup-nexthop fc00::4 backup-credit 4294967296",
			 &req, &cmd, st);
	ktap_check(!rc && cmd == DMSC_CMD_SESSION_SET && !req.parse &&
		   session_attrs(st) == (SA_KEY | SA(BACKUP_NEXTHOP) |
					 SA(BACKUP_CREDIT)) &&
		   is_addr(st[DMSC_SESSION_A_BACKUP_NEXTHOP], "fc00::4") &&
		   nla_get_u64(st[DMSC_SESSION_A_BACKUP_CREDIT]) == DMSC_CREDIT_MAX,
		   "session set: the key, backup nexthop and credit in SESSION_SET");
	nlmsg_free(req.msg);

	rc = session_msg("cbfc session add " CB_FLOW " nexthop fc00::3 mode delta tunnel 5 backup-nexthop fc00::4 backup-credit 4096 backup-mode cumulative",
			 &req, &cmd, st);
	ktap_check(!rc && cmd == DMSC_CMD_SESSION_NEW &&
		   session_attrs(st) == (SA_KEY | SA(NEXTHOP) | SA(MODE) |
					 SA(TUNNEL) | SA(BACKUP_NEXTHOP) |
					 SA(BACKUP_CREDIT) | SA(BACKUP_MODE)) &&
		   nla_get_u8(st[DMSC_SESSION_A_MODE]) == DMSC_CREDIT_MODE_DELTA &&
		   nla_get_u8(st[DMSC_SESSION_A_BACKUP_MODE]) ==
		   DMSC_CREDIT_MODE_CUMULATIVE,
		   "session add: mode delta, backup-mode cumulative in SESSION_NEW");
	nlmsg_free(req.msg);

	rc = session_msg("cbfc session set " CB_FLOW " backup-nexthop fc00::4 backup-credit 4096 backup-mode delta",
			 &req, &cmd, st);
	ktap_check(!rc && cmd == DMSC_CMD_SESSION_SET &&
		   session_attrs(st) == (SA_KEY | SA(BACKUP_NEXTHOP) |
					 SA(BACKUP_CREDIT) | SA(BACKUP_MODE)) &&
		   nla_get_u8(st[DMSC_SESSION_A_BACKUP_MODE]) ==
		   DMSC_CREDIT_MODE_DELTA,
		   "session set: backup-mode delta in SESSION_SET");
	nlmsg_free(req.msg);

	rc = session_msg("cbfc session set " CB_FLOW " backup none",
			 &req, &cmd, st);
	ktap_check(!rc && cmd == DMSC_CMD_SESSION_SET &&
		   session_attrs(st) == SA_KEY,
		   "session set backup none: the key alone in SESSION_SET");
	nlmsg_free(req.msg);
}

/* Run @req's parse on the reply @top, text or JSON, into out[]. */
static void print_reply(struct request *req, struct nlattr **top, bool json)
{
	FILE *f = tmpfile();
	struct cli cli = { .json = json };
	int so;

	fflush(stdout);
	so = dup(1);
	dup2(fileno(f), 1);
	out_init(json, false);
	req->parse(top, req->arg ? req->arg : &cli);
	out_flush();
	fflush(stdout);
	dup2(so, 1);
	close(so);
	slurp(f, out, sizeof(out));
}

/* A reply or an event with a SESSION nest, parsed as dmsc would. */
static struct nl_msg *session_reply(int cmd, uint32_t event, bool full,
				    struct nlattr **top)
{
	struct nl_msg *msg = nlmsg_alloc();
	struct in6_addr nh, bnh;
	uint8_t src[4] = { 10, 9, 0, 1 }, dst[4] = { 10, 9, 0, 2 };
	struct nlattr *s;

	inet_pton(AF_INET6, "fc00::3", &nh);
	inet_pton(AF_INET6, "::ffff:10.9.0.4", &bnh);
	genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, 0, 0, 0, cmd, 1);
	if (event)
		nla_put_u32(msg, DMSC_A_EVENT, event);
	s = nla_nest_start(msg, DMSC_A_SESSION);
	if (full) {
		nla_put_u8(msg, DMSC_SESSION_A_FAMILY, AF_INET);
		nla_put(msg, DMSC_SESSION_A_SRC, 4, src);
		nla_put(msg, DMSC_SESSION_A_DST, 4, dst);
		nla_put_u16(msg, DMSC_SESSION_A_SPORT, 50000);
	}
	nla_put_u32(msg, DMSC_SESSION_A_QPN, 256);
	if (full) {
		nla_put(msg, DMSC_SESSION_A_NEXTHOP, 16, &nh);
		nla_put_u64(msg, DMSC_SESSION_A_CREDIT, 9000);
	}
	nla_put_u32(msg, DMSC_SESSION_A_TUNNEL, 5);
	if (full) {
		nla_put(msg, DMSC_SESSION_A_BACKUP_NEXTHOP, 16, &bnh);
		nla_put_u64(msg, DMSC_SESSION_A_BACKUP_CREDIT, 4096);
		nla_put_u8(msg, DMSC_SESSION_A_BACKUP_MODE,
			   DMSC_CREDIT_MODE_DELTA);
		nla_put_u8(msg, DMSC_SESSION_A_FAILED, 0);
	} else {
		nla_put_u32(msg, DMSC_SESSION_A_IFINDEX, 2);
		nla_put_u64(msg, DMSC_SESSION_A_WAITED_US, 1500);
	}
	nla_put_u8(msg, DMSC_SESSION_A_ON_BACKUP, !full);
	nla_nest_end(msg, s);
	genlmsg_parse(nlmsg_hdr(msg), 0, top, DMSC_A_MAX, NULL);
	return msg;
}

/* session show and monitor print the backup reservation, text and JSON. */
static void check_session_print(void)
{
	struct nlattr *top[DMSC_A_MAX + 1], *st[DMSC_SESSION_A_MAX + 1];
	struct nl_msg *msg;
	struct request req;
	const char *want;
	int cmd;

	session_msg("cbfc session show " CB_FLOW, &req, &cmd, st);
	nlmsg_free(req.msg);
	msg = session_reply(DMSC_CMD_SESSION_GET, 0, true, top);
	print_reply(&req, top, false);
	want = "src 10.9.0.1 dst 10.9.0.2 sport 50000 qpn 256 nexthop fc00::3 credit 9000 tunnel 5 backup-nexthop 10.9.0.4 backup-credit 4096 backup-mode delta failed 0 on-backup 0\n";
	ktap_check(!strcmp(out, want), "session show: backup-nexthop, backup-credit, backup-mode, on-backup in text");
	if (strcmp(out, want))
		printf("# got: %s", out);
	print_reply(&req, top, true);
	want = "{\"src\":\"10.9.0.1\",\"dst\":\"10.9.0.2\",\"sport\":50000,\"qpn\":256,\"nexthop\":\"fc00::3\",\"credit\":9000,\"tunnel\":5,\"backup_nexthop\":\"10.9.0.4\",\"backup_credit\":4096,\"backup_mode\":\"delta\",\"failed\":0,\"on_backup\":0}\n";
	ktap_check(!strcmp(out, want), "session show: backup_nexthop, backup_credit, backup_mode, on_backup in JSON");
	if (strcmp(out, want))
		printf("# got: %s", out);
	nlmsg_free(msg);

	/* monitor builds no message, only its parse. */
	session_msg("monitor", &req, &cmd, st);
	msg = session_reply(DMSC_CMD_EVENT, DMSC_EVENT_NEXTHOP_FAILED, false, top);
	print_reply(&req, top, false);
	want = "nexthop-failed qpn 256 tunnel 5 ifindex 2 waited_us 1500 on-backup 1\n";
	ktap_check(!strcmp(out, want), "monitor: nexthop-failed says on-backup in text");
	if (strcmp(out, want))
		printf("# got: %s", out);
	print_reply(&req, top, true);
	want = "{\"event\":\"nexthop-failed\",\"qpn\":256,\"tunnel\":5,\"ifindex\":2,\"waited_us\":1500,\"on_backup\":1}\n";
	ktap_check(!strcmp(out, want), "monitor: nexthop-failed says on_backup in JSON");
	if (strcmp(out, want))
		printf("# got: %s", out);
	nlmsg_free(msg);
}

static void check_split(void)
{
	char l1[] = "  tunnel add \"a b\" 'c\"d'\tx # comment \"unclosed";
	char l2[] = "# only a comment";
	char l3[] = "rule add \"dst";
	char l4[] = "a b c d";
	char *argv[8];
	int n;

	n = batch_split(l1, argv, 8);
	ktap_check(n == 5 && !strcmp(argv[0], "tunnel") &&
		   !strcmp(argv[2], "a b") && !strcmp(argv[3], "c\"d") &&
		   !strcmp(argv[4], "x"), "batch line: quotes, tabs, comment");
	ktap_check(batch_split(l2, argv, 8) == 0, "batch line: comment only");
	ktap_check(batch_split(l3, argv, 8) == -1, "batch line: unterminated quote");
	ktap_check(batch_split(l4, argv, 3) == -1, "batch line: too many words");
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
}

static void check_batch(void)
{
	char path[] = "/tmp/dmsc-test-batch-XXXXXX", cmd[256], want[512];
	int fd = mkstemp(path), rc;

	close(fd);
	/* Line 5 is bad; line 6 would be bad too. No line reaches netlink. */
	write_file(path, "# a batch\n\ntunnel help\n  rule help # ok\n"
			 "rule add dst 10.0.0.0/8 tunnel x\nflow frob\n");
	snprintf(cmd, sizeof(cmd), "-n " NO_NS " -batch %s", path);
	rc = dmsc(cmd);
	snprintf(want, sizeof(want),
		 "dmsc: %s:5: rule add: tunnel \"x\": not a number\n", path);
	ktap_check(rc == 2 && !strcmp(err, want) &&
		   strstr(out, "dmsc tunnel add") && strstr(out, "dmsc rule add"),
		   "-batch: lines before run, the bad one stops it, FILE:LINE");
	if (strcmp(err, want))
		printf("# stderr: %s", err);

	snprintf(cmd, sizeof(cmd), "-n " NO_NS " -force -batch %s", path);
	rc = dmsc(cmd);
	snprintf(want, sizeof(want),
		 "dmsc: %s:5: rule add: tunnel \"x\": not a number\n"
		 "dmsc: %s:6: flow: unknown command \"frob\" (try \"dmsc flow help\")\n",
		 path, path);
	ktap_check(rc == 2 && !strcmp(err, want),
		   "-batch -force: every bad line reported, exit of the first");
	if (strcmp(err, want))
		printf("# stderr: %s", err);

	/* A kernel-side failure (here: entering NO_NS) is exit 1, located. */
	write_file(path, "tunnel help\n\\\n  tunnel show\n# rule help \\\nrule add dst 10.0.0.0/8 tunnel x\n");
	snprintf(cmd, sizeof(cmd), "-n " NO_NS " -force -batch %s", path);
	rc = dmsc(cmd);
	snprintf(want, sizeof(want), "dmsc: %s:2: tunnel show: netns", path);
	ktap_check(rc == 1 && !strncmp(err, want, strlen(want)) &&
		   strstr(err, ":5: rule add: tunnel \"x\""),
		   "-batch: continued line at its first line, not after a comment");
	if (rc != 1 || strncmp(err, want, strlen(want)))
		printf("# exit %d, stderr: %s", rc, err);

	/* A command that prints its own error still gets FILE:LINE. */
	write_file(path, "mpte solve --frob\n");
	mpte_calls = 0;
	snprintf(cmd, sizeof(cmd), "-batch %s", path);
	rc = dmsc(cmd);
	snprintf(want, sizeof(want), "dmsc: %s:1: command failed\n", path);
	ktap_check(rc == 1 && mpte_calls == 1 && !strcmp(err, want),
		   "-batch: a failure without a message of ours is located");
	unlink(path);

	snprintf(cmd, sizeof(cmd), "-batch %s", path);
	rc = dmsc(cmd);
	ktap_check(rc == 1 && strstr(err, "No such file"),
		   "-batch: a missing file is exit 1");
}

/*
 * The reader's side of the rate estimate: a window not yet due leaves the
 * program's averages as they are, a due one is folded into each with gain
 * 1/8 before the division, a stale one replaces them. The averages are
 * 100 bytes and 1 packet per 100 ms window: 1000 B/s, 10 pps.
 */
static void check_rate(void)
{
	struct rt_qp q = { .packets = 100, .win_start_ns = 1000000000ull,
			   .win_bytes = 400, .win_packets = 4,
			   .avg_bytes = 100 << RT_RATE_FRAC,
			   .avg_packets = 1 << RT_RATE_FRAC,
			   .avg_ns = 100000000ull };
	double B, p;

	telemetry_qp_rate(&q, q.win_start_ns + 50000000, &B, &p);
	ktap_check(B == 1000 && p == 10, "rate: a window not due leaves the averages");
	telemetry_qp_rate(&q, q.win_start_ns + 100000000, &B, &p);
	ktap_check(B == 1375 && p == 13.75, "rate: a due window is folded in at 1/8");
	/*
	 * A window twice as long moves the length's average too: 137.5
	 * bytes in 112.5 ms, not the mean of 1000 and 2000 B/s at 1/8
	 * (1125 B/s) that averaging each window's rate would give.
	 */
	telemetry_qp_rate(&q, q.win_start_ns + 200000000, &B, &p);
	ktap_check(fabs(B - 137.5e9 / 112.5e6) < 1e-6 && fabs(p - 1.375e9 / 112.5e6) < 1e-9,
		   "rate: the ratio of the averages, a long window weighing more");
	telemetry_qp_rate(&q, q.win_start_ns + 1000000000, &B, &p);
	ktap_check(B == 400 && p == 4, "rate: after 8 idle windows the window alone");
}

int main(void)
{
	size_t i;
	int rc;

	ktap_plan(sizeof(bad_cases) / sizeof(*bad_cases) +
		  sizeof(good_cases) / sizeof(*good_cases) + 33);
	for (i = 0; i < sizeof(bad_cases) / sizeof(*bad_cases); i++)
		bad(bad_cases[i][0], bad_cases[i][1]);
	for (i = 0; i < sizeof(good_cases) / sizeof(*good_cases); i++)
		good(good_cases[i]);

	rc = dmsc("help");
	ktap_check(rc == 0 && !strncmp(out, "Usage: dmsc", 11) && !err[0],
		   "dmsc help: usage on stdout, exit 0");
	rc = dmsc("");
	ktap_check(rc == 2 && !strncmp(err, "Usage: dmsc", 11) && !out[0],
		   "dmsc alone: usage on stderr, exit 2");
	rc = dmsc("tunnel help");
	ktap_check(rc == 0 && strstr(out, "dmsc tunnel add") && !err[0],
		   "dmsc tunnel help: stdout, exit 0");
	rc = dmsc("mpte help");
	ktap_check(rc == 0 && mpte_calls == 1, "dmsc mpte help reaches the solver's help");
	rc = dmsc("-n a/b info");
	ktap_check(rc == 2 && strstr(err, "netns \"a/b\": not a valid namespace name"),
		   "-n: a name with a slash is a usage error");
	rc = dmsc("-n");
	ktap_check(rc == 2 && strstr(err, "-n: needs a namespace name"),
		   "-n without a name is a usage error");
	rc = dmsc("-n " NO_NS " -V");
	ktap_check(rc == 0 && !strncmp(out, "dmsc ", 5), "-V needs no namespace");

	check_tunnel_msg();
	check_session_msg();
	check_session_print();
	check_split();
	check_batch();
	check_rate();
	return ktap_finish();
}
