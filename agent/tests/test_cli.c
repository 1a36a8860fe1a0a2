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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/dmsc.h>

#include "cmd.h"
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
 * program's EWMA as it is, a due one is folded in with gain 1/8, a stale
 * one replaces it.
 */
static void check_rate(void)
{
	struct rt_qp q = { .packets = 100, .win_start_ns = 1000000000ull,
			   .win_bytes = 400, .win_packets = 4,
			   .rate_Bps = 1000, .rate_mpps = 10000 };
	double B, p;

	telemetry_qp_rate(&q, q.win_start_ns + 50000000, &B, &p);
	ktap_check(B == 1000 && p == 10, "rate: a window not due leaves the EWMA");
	telemetry_qp_rate(&q, q.win_start_ns + 200000000, &B, &p);
	ktap_check(B == 1125 && p == 11.25, "rate: a due window is folded in at 1/8");
	telemetry_qp_rate(&q, q.win_start_ns + 1000000000, &B, &p);
	ktap_check(B == 400 && p == 4, "rate: after 8 idle windows the window alone");
}

int main(void)
{
	size_t i;
	int rc;

	ktap_plan(sizeof(bad_cases) / sizeof(*bad_cases) +
		  sizeof(good_cases) / sizeof(*good_cases) + 22);
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
	check_split();
	check_batch();
	check_rate();
	return ktap_finish();
}
