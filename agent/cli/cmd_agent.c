// SPDX-License-Identifier: GPL-2.0
/*
 * dmsc agent: ask a running dmsc-agent through its local control socket
 * (daemon/ctl.c has the protocol): what it holds and what it refused, and
 * the registration of this node's instances. No netlink.
 *
 *   dmsc agent [socket PATH] show { instances | routes | peers | policies | rsvp | qos | nodes | mg | aam | rejected }
 *   dmsc agent [socket PATH] register id ID sid SID prefix PREFIX
 *              [rtype TYPE] [capability N] [state { active | pending | faulted }]
 *   dmsc agent [socket PATH] deregister ID
 *   dmsc agent [socket PATH] backup NAME
 *   dmsc agent [socket PATH] policy apply FILE | withdraw NAME   (smo)
 *   dmsc agent [socket PATH] aam revoke JTI                      (aam)
 *   dmsc agent [socket PATH] token request sub SUB scope SCOPE [lifetime S]  (sr)
 *   dmsc agent [socket PATH] access token TOKEN prefix PREFIX     (sr)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <json-c/json.h>

#include "cmd.h"
#include "err.h"
#include "json_strict.h"
#include "parse.h"

#define AGENT_SOCKET	"/run/dmsc/agent.sock"

static void agent_usage(void)
{
	printf("Usage: dmsc agent [socket PATH] show { instances | routes | peers | policies | rsvp | qos | nodes | mg | aam | rejected }\n"
	       "       dmsc agent [socket PATH] register id ID sid SID prefix PREFIX\n"
	       "                  [rtype TYPE] [capability N] [state { active | pending | faulted }]\n"
	       "       dmsc agent [socket PATH] deregister ID\n"
	       "       dmsc agent [socket PATH] backup NAME\n"
	       "       dmsc agent [socket PATH] policy { apply FILE | withdraw NAME }\n"
	       "       dmsc agent [socket PATH] aam revoke JTI\n"
	       "       dmsc agent [socket PATH] token request sub SUB scope SCOPE [lifetime SECONDS]\n"
	       "       dmsc agent [socket PATH] access token TOKEN prefix PREFIX\n"
	       "PATH defaults to " AGENT_SOCKET " (the agent's \"control\").\n");
}

/* One request line, one answer line; the answer's "data", or NULL. */
static struct json_object *ask(const char *path, const char *req)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	struct json_object *resp, *v, *data = NULL;
	char buf[1 << 16], *text = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd;

	if (strlen(path) >= sizeof(un.sun_path)) {
		errorf("socket: %s: path too long", path);
		return NULL;
	}
	strcpy(un.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&un, sizeof(un))) {
		errorf("socket: %s: %s (is dmsc-agent running with \"control\" set?)",
		       path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req) ||
	    write(fd, "\n", 1) != 1) {
		errorf("socket: %s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (len + (size_t)n + 1 > cap) {
			cap = 2 * (len + (size_t)n + 1);
			text = realloc(text, cap);
			if (!text) {
				close(fd);
				errorf("out of memory");
				return NULL;
			}
		}
		memcpy(text + len, buf, (size_t)n);
		len += (size_t)n;
	}
	close(fd);
	if (!text) {
		errorf("socket: %s: no answer", path);
		return NULL;
	}
	text[len] = '\0';
	resp = json_tokener_parse(text);
	free(text);
	if (!resp || !json_object_object_get_ex(resp, "ok", &v)) {
		errorf("socket: %s: an answer that is not the agent's", path);
	} else if (!json_object_get_boolean(v)) {
		json_object_object_get_ex(resp, "error", &v);
		errorf("%s", json_object_get_string(v));
	} else if (json_object_object_get_ex(resp, "data", &v)) {
		data = json_object_get(v);
	}
	json_object_put(resp);
	return data;
}

static const char *str(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "";
}

static void print_instances(struct json_object *arr)
{
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *x = json_object_array_get_idx(arr, i);

		printf("  %s node %s sid %s prefix %s rtype %s capability %s state %s\n",
		       str(x, "id"), str(x, "node"), str(x, "sid"), str(x, "prefix"),
		       str(x, "rtype"), str(x, "capability"), str(x, "state"));
	}
}

/*
 * show qos: at the smo a line per reporting node and one per device of its
 * last report; at an sr what became of its reports.
 */
static void print_qos(struct json_object *d)
{
	struct json_object *role, *v, *last, *devs, *qps;

	if (json_object_object_get_ex(d, "smo", &role)) {
		printf("smo reports %s refused %s\n", str(role, "reports"),
		       str(role, "refused"));
		json_object_object_get_ex(role, "nodes", &v);
		for (size_t i = 0; v && i < json_object_array_length(v); i++) {
			struct json_object *x = json_object_array_get_idx(v, i);

			json_object_object_get_ex(x, "last", &last);
			qps = devs = NULL;
			if (last) {
				json_object_object_get_ex(last, "devices", &devs);
				json_object_object_get_ex(last, "qps", &qps);
			}
			printf("  node %s reports %s missed %s restarts %s seq %s age_ms %s qps %zu\n",
			       str(x, "node"), str(x, "reports"), str(x, "missed"),
			       str(x, "restarts"), str(x, "seq"), str(x, "age_ms"),
			       qps ? json_object_array_length(qps) : 0);
			for (size_t j = 0; devs && j < json_object_array_length(devs); j++) {
				struct json_object *e = json_object_array_get_idx(devs, j), *iv;

				json_object_object_get_ex(e, "interval", &iv);
				printf("    dev %s %s throughput_bps %s loss_rate %s\n",
				       str(e, "dev"), str(e, "direction"),
				       str(iv, "throughput_bps"), str(iv, "loss_rate"));
			}
		}
	}
	if (json_object_object_get_ex(d, "sr", &role))
		printf("sr report_to %s reports %s queued %s dropped %s\n",
		       str(role, "report_to"), str(role, "reports"),
		       str(role, "queued"), str(role, "dropped"));
	if (!json_object_object_get_ex(d, "smo", &role) &&
	    !json_object_object_get_ex(d, "sr", &role))
		printf("no smo or sr role\n");
}

/*
 * show nodes: at the smo a line per reporting node (its load), one per
 * link and one per instance of its last node state report; at an sr what
 * became of its reports.
 */
static void print_nodes(struct json_object *d)
{
	struct json_object *role, *v, *last, *load, *links, *insts, *avg;

	if (json_object_object_get_ex(d, "smo", &role)) {
		printf("smo reports %s refused %s\n", str(role, "reports"),
		       str(role, "refused"));
		json_object_object_get_ex(role, "nodes", &v);
		for (size_t i = 0; v && i < json_object_array_length(v); i++) {
			struct json_object *x = json_object_array_get_idx(v, i);

			last = load = links = insts = avg = NULL;
			json_object_object_get_ex(x, "last", &last);
			if (last) {
				json_object_object_get_ex(last, "load", &load);
				json_object_object_get_ex(last, "links", &links);
				json_object_object_get_ex(last, "instances", &insts);
			}
			if (load)
				json_object_object_get_ex(load, "loadavg", &avg);
			printf("  node %s reports %s missed %s restarts %s seq %s age_ms %s cpus %s loadavg %s mem_available_kb %s mem_total_kb %s\n",
			       str(x, "node"), str(x, "reports"), str(x, "missed"),
			       str(x, "restarts"), str(x, "seq"), str(x, "age_ms"),
			       str(load, "cpus"),
			       avg ? json_object_to_json_string_ext(avg, JSON_C_TO_STRING_PLAIN) : "",
			       str(load, "mem_available_kb"), str(load, "mem_total_kb"));
			for (size_t j = 0; links && j < json_object_array_length(links); j++) {
				struct json_object *l = json_object_array_get_idx(links, j);

				printf("    link %s oper %s mtu %s speed_mbps %s\n",
				       str(l, "dev"), str(l, "oper"), str(l, "mtu"),
				       *str(l, "speed_mbps") ? str(l, "speed_mbps") : "unknown");
			}
			for (size_t j = 0; insts && j < json_object_array_length(insts); j++) {
				struct json_object *n = json_object_array_get_idx(insts, j);

				struct json_object *pr = NULL;

				printf("    instance %s state %s registration_rtt_ms %s",
				       str(n, "id"), str(n, "state"),
				       *str(n, "registration_rtt_ms") ?
				       str(n, "registration_rtt_ms") : "unknown");
				if (json_object_object_get_ex(n, "probe", &pr))
					printf(" probe sent %s lost %s rtt_us %s srtt_us %s",
					       str(pr, "sent"), str(pr, "lost"),
					       *str(pr, "rtt_us") ? str(pr, "rtt_us") : "unknown",
					       *str(pr, "srtt_us") ? str(pr, "srtt_us") : "unknown");
				printf("\n");
			}
		}
	}
	if (json_object_object_get_ex(d, "sr", &role)) {
		struct json_object *pr = NULL;

		printf("sr interval_ms %s reports %s queued %s dropped %s",
		       str(role, "interval_ms"), str(role, "reports"),
		       str(role, "queued"), str(role, "dropped"));
		if (json_object_object_get_ex(role, "probe", &pr))
			printf(" probe sent %s answered %s lost %s send_errors %s strays %s",
			       str(pr, "sent"), str(pr, "answered"), str(pr, "lost"),
			       str(pr, "send_errors"), str(pr, "strays"));
		printf("\n");
	}
	if (!json_object_object_get_ex(d, "smo", &role) &&
	    !json_object_object_get_ex(d, "sr", &role))
		printf("no smo or sr role\n");
}

/* The smo's seat: elected through etcd, or the one SMO (SQLite). */
static void print_election(struct json_object *smo)
{
	struct json_object *e, *v;

	if (!json_object_object_get_ex(smo, "election", &e))
		return;
	if (!json_object_object_get_ex(e, "elected", &v) || !json_object_get_boolean(v)) {
		printf("smo election none (one SMO: %s leads)\n", str(e, "leader"));
		return;
	}
	printf("smo election %s leader %s key %s lease_s %s terms_won %s terms_lost %s errors %s withheld %s\n",
	       str(e, "seat"), *str(e, "leader") ? str(e, "leader") : "none",
	       str(e, "key"), str(e, "lease_s"), str(e, "terms_won"),
	       str(e, "terms_lost"), str(e, "errors"), str(e, "withheld"));
	if (*str(e, "last_error"))
		printf("  last_error %s\n", str(e, "last_error"));
}

/* With etcd: the leader's set this SMO relays to its SRs, and our writes. */
static void print_relay(struct json_object *smo)
{
	struct json_object *r;

	if (!json_object_object_get_ex(smo, "relay", &r))
		return;
	printf("smo relay term %s leader %s revision %s policies %s relayed %s writes %s write_failures %s\n",
	       str(r, "term"), *str(r, "leader") ? str(r, "leader") : "none",
	       str(r, "rev"), str(r, "policies"), str(r, "relayed"),
	       str(r, "writes"), str(r, "write_failures"));
	if (*str(r, "last_error"))
		printf("  last_error %s\n", str(r, "last_error"));
	if (*str(r, "last_write_error"))
		printf("  last_write_error %s\n", str(r, "last_write_error"));
}

/*
 * show mg: the gateway's SRD and table, its requests by outcome, its
 * refusals by reason, and a line per service prefix with its choices.
 */
static void print_mg(struct json_object *d)
{
	struct json_object *mg, *v, *x;

	if (!json_object_object_get_ex(d, "mg", &mg)) {
		printf("no mg role\n");
		return;
	}
	json_object_object_get_ex(mg, "srd", &x);
	printf("mg listen %s srd %s up %s connects %s\n", str(mg, "listen"),
	       str(x, "node"), str(x, "up"), str(x, "connects"));
	json_object_object_get_ex(mg, "routes", &x);
	printf("mg routes %s revision %s full %s increments %s gaps %s digests %s\n",
	       str(x, "count"), str(x, "revision"), str(x, "full_tables"),
	       str(x, "increments"), str(x, "gaps"), str(x, "digests_sent"));
	printf("mg requests");
	json_object_object_get_ex(mg, "requests", &v);
	json_object_object_foreach(v, o, n)
		printf(" %s %s", o, json_object_get_string(n));
	printf("\nmg refused");
	json_object_object_get_ex(mg, "refused", &v);
	json_object_object_foreach(v, why, k)
		printf(" %s %s", why, json_object_get_string(k));
	printf("\n");
	json_object_object_get_ex(mg, "services", &v);
	for (size_t i = 0; v && i < json_object_array_length(v); i++) {
		struct json_object *s = json_object_array_get_idx(v, i), *in;

		printf("  service %s chosen %s instances %s active %s\n",
		       str(s, "prefix"), str(s, "chosen"), str(s, "instances"),
		       str(s, "active"));
		if (json_object_object_get_ex(s, "chosen_by_instance", &in)) {
			json_object_object_foreach(in, id, c)
				printf("    %s %s\n", id, json_object_get_string(c));
		}
	}
}

/* The text form: a line per item under the role that holds it. */
static void print_aam(struct json_object *d)
{
	struct json_object *role, *v, *x;

	if (json_object_object_get_ex(d, "aam", &role)) {
		printf("aam kid %s grants %s requests %s issued %s denied %s revoked %d pushes %s\n",
		       str(role, "kid"), str(role, "grants"), str(role, "requests"),
		       str(role, "issued"), str(role, "denied"),
		       json_object_object_get_ex(role, "revoked", &v) ?
		       (int)json_object_array_length(v) : 0,
		       str(role, "revoked_pushes"));
		if (json_object_object_get_ex(role, "denied_by_reason", &x)) {
			json_object_object_foreach(x, reason, n)
				printf("  denied_%s %s\n", reason, json_object_get_string(n));
		}
		if (json_object_object_get_ex(role, "revoked_prefix", NULL))
			printf("  shared %s etcd %s pending %s in %s out %s errors %s bad_values %s\n",
			       str(role, "revoked_prefix"), str(role, "revoked_etcd"),
			       str(role, "revoked_etcd_pending"), str(role, "revoked_shared_in"),
			       str(role, "revoked_shared_out"), str(role, "revoked_etcd_errors"),
			       str(role, "revoked_bad_values"));
		for (size_t i = 0; v && i < json_object_array_length(v); i++) {
			x = json_object_array_get_idx(v, i);
			printf("  revoked %s until %s\n", str(x, "jti"), str(x, "exp"));
		}
	}
	if (json_object_object_get_ex(d, "sr", &role)) {
		if (json_object_object_get_ex(role, "token_requests", &x))
			printf("sr token requests %s granted %s denied %s timeouts %s failed %s\n",
			       str(x, "requests"), str(x, "granted"), str(x, "denied"),
			       str(x, "timeouts"), str(x, "failed"));
		if (json_object_object_get_ex(role, "access", &x)) {
			printf("sr access allowed %s refused %s\n", str(x, "allowed"),
			       str(x, "refused"));
			if (json_object_object_get_ex(x, "refused_by_reason", &v)) {
				json_object_object_foreach(v, reason, n)
					printf("  refused_%s %s\n", reason,
					       json_object_get_string(n));
			}
		}
	}
	if (json_object_object_get_ex(d, "tokens", &role))
		printf("tokens kid %s skew_s %s revoked %s pushes %s checked %s\n",
		       str(role, "kid"), str(role, "skew_s"), str(role, "revoked"),
		       str(role, "revoked_pushes"), str(role, "checked"));
}

static void print_text(const char *what, struct json_object *d)
{
	struct json_object *role, *v;

	if (!strcmp(what, "aam")) {
		print_aam(d);
		return;
	}

	if (!strcmp(what, "rejected")) {
		printf("rejected %s\n", str(d, "total"));
		json_object_object_get_ex(d, "by_reason", &v);
		json_object_object_foreach(v, reason, n)
			printf("  %s %s\n", reason, json_object_get_string(n));
		json_object_object_get_ex(d, "recent", &v);
		for (size_t i = 0; v && i < json_object_array_length(v); i++) {
			struct json_object *x = json_object_array_get_idx(v, i);

			printf("  recent %s from %s: %s\n", str(x, "reason"),
			       str(x, "peer"), str(x, "why"));
		}
		return;
	}
	if (!strcmp(what, "qos")) {
		print_qos(d);
		return;
	}
	if (!strcmp(what, "nodes")) {
		print_nodes(d);
		return;
	}
	if (!strcmp(what, "mg")) {
		print_mg(d);
		return;
	}
	if (!strcmp(what, "rsvp")) {
		if (!json_object_object_get_ex(d, "sr", &role)) {
			printf("no sr role\n");
			return;
		}
		if (!json_object_object_get_ex(role, "counters", &v)) {
			printf("sr: no RSVP-CBFC speaker (sr.rsvp)\n");
			return;
		}
		printf("sr rsvp control %s states %s up %s\n", str(role, "control"),
		       str(role, "states"), str(role, "states_up"));
		json_object_object_foreach(v, name, n)
			printf("  %s %s\n", name, json_object_get_string(n));
		if (json_object_object_get_ex(role, "refused", &v)) {
			json_object_object_foreach(v, reason, r)
				printf("  refused_%s %s\n", reason,
				       json_object_get_string(r));
		}
		return;
	}
	if (!strcmp(what, "policies")) {
		if (json_object_object_get_ex(d, "smo", &role)) {
			json_object_object_get_ex(role, "policies", &v);
			printf("smo revision %s policies %zu pushes %s\n", str(role, "rev"),
			       v ? json_object_array_length(v) : 0, str(role, "pushes"));
			print_election(role);
			print_relay(role);
			for (size_t i = 0; v && i < json_object_array_length(v); i++) {
				struct json_object *x = json_object_array_get_idx(v, i);

				printf("  %s node %s tunnel %s\n", str(x, "name"),
				       str(x, "node"), str(x, "tunnel"));
			}
		}
		if (json_object_object_get_ex(d, "sr", &role)) {
			struct json_object *in, *t;

			json_object_object_get_ex(role, "desired", &v);
			printf("sr revision %s desired %zu gaps %s stale %s conflicts %s errors %s term %s stale_term %s\n",
			       str(role, "rev"), v ? json_object_array_length(v) : 0,
			       str(role, "gaps"), str(role, "stale"),
			       str(role, "conflicts"), str(role, "errors"),
			       str(role, "term"), str(role, "stale_term"));
			for (size_t i = 0; v && i < json_object_array_length(v); i++) {
				struct json_object *x = json_object_array_get_idx(v, i);

				printf("  desired %s tunnel %s\n", str(x, "name"),
				       str(x, "tunnel"));
			}
			if (json_object_object_get_ex(role, "installed", &in) &&
			    json_object_object_get_ex(in, "tunnels", &t))
				for (size_t i = 0; i < json_object_array_length(t); i++)
					printf("  installed tunnel %s\n",
					       json_object_get_string(json_object_array_get_idx(t, i)));
		}
		return;
	}
	if (json_object_object_get_ex(d, "srd", &role)) {
		printf("srd revision %s\n", str(role, "revision"));
		if (json_object_object_get_ex(role, "digests", &v))
			printf("srd pushes %s full_tables %s digests %s matched %s mismatched %s deferred %s forced %s\n",
			       str(role, "pushes"), str(role, "full_tables"),
			       str(role, "digests"), str(role, "digests_matched"),
			       str(role, "digest_mismatches"),
			       str(role, "digests_deferred"),
			       str(role, "digests_forced"));
		if (json_object_object_get_ex(role, "instances", &v))
			print_instances(v);
		if (json_object_object_get_ex(role, "peers", &v))
			for (size_t i = 0; i < json_object_array_length(v); i++) {
				struct json_object *x = json_object_array_get_idx(v, i);

				printf("  peer %s roles %s synced %s messages %s\n",
				       str(x, "node"), str(x, "roles"),
				       str(x, "synced"), str(x, "messages"));
			}
	}
	if (json_object_object_get_ex(d, "sr", &role)) {
		if (json_object_object_get_ex(role, "routes", &v)) {
			printf("sr revision %s full %s increments %s gaps %s digests %s\n",
			       str(role, "revision"), str(role, "full_tables"),
			       str(role, "increments"), str(role, "gaps"),
			       str(role, "digests_sent"));
			print_instances(v);
		}
		if (json_object_object_get_ex(role, "local", &v)) {
			printf("sr local instances\n");
			print_instances(v);
		}
		if (json_object_object_get_ex(role, "srd", &v))
			for (size_t i = 0; i < json_object_array_length(v); i++) {
				struct json_object *x = json_object_array_get_idx(v, i);

				printf("sr srd %s at %s up %s connects %s\n",
				       str(x, "node"), str(x, "address"),
				       str(x, "up"), str(x, "connects"));
			}
	}
}

static int do_register(struct cli *cli, const char *path, int argc, char **argv)
{
	static const char *const words[] = {
		"id", "sid", "prefix", "rtype", "capability", "state", "node", NULL,
	};
	struct json_object *inst = json_object_new_object(), *req, *d;
	unsigned long cap;
	char *end;
	int ret;

	json_object_object_add(inst, "rtype", json_object_new_string("gpu"));
	json_object_object_add(inst, "capability", json_object_new_int(0));
	json_object_object_add(inst, "state", json_object_new_string("active"));
	for (; argc > 0; argc -= 2, argv += 2) {
		size_t k;

		for (k = 0; words[k] && strcmp(argv[0], words[k]); k++)
			;
		if (!words[k]) {
			json_object_put(inst);
			return usage_error("register: unknown word \"%s\"", argv[0]);
		}
		if (argc < 2) {
			json_object_put(inst);
			return usage_error("register: %s needs a value", argv[0]);
		}
		if (!strcmp(argv[0], "capability")) {
			errno = 0;
			cap = strtoul(argv[1], &end, 0);
			if (errno || *end || !*argv[1] || cap > UINT32_MAX) {
				json_object_put(inst);
				return usage_error("register: capability: \"%s\" is not 0..4294967295",
						   argv[1]);
			}
			json_object_object_add(inst, "capability",
					       json_object_new_int64((int64_t)cap));
		} else {
			json_object_object_add(inst, argv[0],
					       json_object_new_string(argv[1]));
		}
	}
	for (const char *need[] = { "id", "sid", "prefix", NULL }, **w = need; *w; w++)
		if (!json_object_object_get_ex(inst, *w, NULL)) {
			json_object_put(inst);
			return usage_error("register: %s is required", *w);
		}
	req = json_object_new_object();
	json_object_object_add(req, "register", inst);
	d = ask(path, json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN));
	json_object_put(req);
	if (!d)
		return EXIT_FAIL;
	ret = EXIT_OK;
	if (cli->json)
		printf("{\"registered\":%s}\n", json_object_to_json_string(d));
	json_object_put(d);
	return ret;
}

/* The file is read here, with the caller's rights, and sent whole. */
static int do_policy(struct cli *cli, const char *path, int argc, char **argv)
{
	struct json_object *req, *doc, *d;
	char err[320];

	if (argc != 2 || (!matches(argv[0], "apply") && !matches(argv[0], "withdraw")))
		return usage_error("policy: apply FILE or withdraw NAME");
	req = json_object_new_object();
	if (matches(argv[0], "apply")) {
		doc = json_strict_load(argv[1], err, sizeof(err));
		if (!doc) {
			json_object_put(req);
			errorf("policy apply: %s", err);
			return EXIT_FAIL;
		}
		json_object_object_add(req, "policy_apply", doc);
	} else {
		json_object_object_add(req, "policy_withdraw", json_object_new_string(argv[1]));
	}
	d = ask(path, json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN |
						      JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(req);
	if (!d)
		return EXIT_FAIL;
	if (cli->json)
		printf("%s\n", json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN));
	json_object_put(d);
	return EXIT_OK;
}

/* One request of one key, its data printed with -j; the data, or NULL. */
static struct json_object *ask_one(struct cli *cli, const char *path,
				   const char *key, struct json_object *v)
{
	struct json_object *req = json_object_new_object(), *d;

	json_object_object_add(req, key, v);
	d = ask(path, json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN |
						      JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(req);
	if (d && cli->json)
		printf("%s\n", json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN |
							    JSON_C_TO_STRING_NOSLASHESCAPE));
	return d;
}

/* WORD VALUE pairs of @words into an object; NULL after a usage error. */
static struct json_object *pairs(const char *verb, const char *const *words,
				 int argc, char **argv)
{
	struct json_object *o = json_object_new_object();

	for (; argc > 0; argc -= 2, argv += 2) {
		size_t k;

		for (k = 0; words[k] && strcmp(argv[0], words[k]); k++)
			;
		if (!words[k] || argc < 2 ||
		    json_object_object_get_ex(o, words[k], NULL)) {
			usage_error("%s: \"%s\" %s", verb, argv[0],
				    !words[k] ? "is not a word of it" :
				    argc < 2 ? "needs a value" : "given twice");
			json_object_put(o);
			return NULL;
		}
		json_object_object_add(o, words[k], json_object_new_string(argv[1]));
	}
	return o;
}

/* token request sub SUB scope SCOPE [lifetime S]: the token on stdout. */
static int do_token(struct cli *cli, const char *path, int argc, char **argv)
{
	static const char *const words[] = { "sub", "scope", "lifetime", NULL };
	struct json_object *o, *v, *d;
	unsigned long life;
	char *end;

	if (argc < 1 || !matches(argv[0], "request"))
		return usage_error("token: request sub SUB scope SCOPE [lifetime SECONDS]");
	o = pairs("token request", words, argc - 1, argv + 1);
	if (!o)
		return EXIT_USAGE;
	for (const char *need[] = { "sub", "scope", NULL }, **w = need; *w; w++)
		if (!json_object_object_get_ex(o, *w, NULL)) {
			json_object_put(o);
			return usage_error("token request: %s is required", *w);
		}
	if (json_object_object_get_ex(o, "lifetime", &v)) {
		errno = 0;
		life = strtoul(json_object_get_string(v), &end, 10);
		if (errno || *end || life < 1 || life > 3600) {
			json_object_put(o);
			return usage_error("token request: lifetime: not 1..3600 seconds");
		}
		json_object_object_del(o, "lifetime");
		json_object_object_add(o, "lifetime_s", json_object_new_int64((int64_t)life));
	}
	d = ask_one(cli, path, "token", o);
	if (!d)
		return EXIT_FAIL;
	if (!cli->json)
		printf("%s\n", str(d, "token"));
	json_object_put(d);
	return EXIT_OK;
}

/* access token T prefix P: exit 0 if allowed, 1 (and why) if refused. */
static int do_access(struct cli *cli, const char *path, int argc, char **argv)
{
	static const char *const words[] = { "token", "prefix", NULL };
	struct json_object *o = pairs("access", words, argc, argv), *d, *v;
	int allowed;

	if (!o)
		return EXIT_USAGE;
	if (!json_object_object_get_ex(o, "token", NULL) ||
	    !json_object_object_get_ex(o, "prefix", NULL)) {
		json_object_put(o);
		return usage_error("access: token TOKEN prefix PREFIX");
	}
	d = ask_one(cli, path, "access", o);
	if (!d)
		return EXIT_FAIL;
	allowed = json_object_object_get_ex(d, "allowed", &v) &&
		  json_object_get_boolean(v);
	if (!cli->json && allowed)
		printf("allowed %s to %s (scope %s, until %s)\n", str(d, "sub"),
		       str(d, "prefix"), str(d, "scope"), str(d, "exp"));
	else if (!allowed)
		errorf("access refused: %s: %s", str(d, "reason"), str(d, "error"));
	json_object_put(d);
	return allowed ? EXIT_OK : EXIT_FAIL;
}

int cmd_agent(struct cli *cli, int argc, char **argv)
{
	const char *path = AGENT_SOCKET;
	struct json_object *req, *d;
	char line[128];

	if (argc >= 1 && !strcmp(argv[0], "socket")) {
		if (argc < 2)
			return usage_error("socket needs a path");
		path = argv[1];
		argc -= 2;
		argv += 2;
	}
	if (argc == 0)
		return usage_error("a command is required");
	if (matches(argv[0], "help")) {
		agent_usage();
		return EXIT_OK;
	}
	if (matches(argv[0], "show")) {
		static const char *const what[] = {
			"instances", "routes", "peers", "policies", "rsvp", "qos",
			"nodes", "mg", "aam", "rejected", NULL,
		};
		size_t k;

		if (argc != 2)
			return usage_error("show: one of instances, routes, peers, policies, rsvp, qos, nodes, mg, aam, rejected");
		for (k = 0; what[k] && !matches(argv[1], what[k]); k++)
			;
		if (!what[k])
			return usage_error("show: \"%s\" is not instances, routes, peers, policies, rsvp, qos, nodes, mg, aam or rejected",
					   argv[1]);
		snprintf(line, sizeof(line), "{\"show\":\"%s\"}", what[k]);
		d = ask(path, line);
		if (!d)
			return EXIT_FAIL;
		if (cli->json)
			printf("%s\n", json_object_to_json_string_ext(d,
				cli->pretty ? JSON_C_TO_STRING_PRETTY : JSON_C_TO_STRING_PLAIN));
		else
			print_text(what[k], d);
		json_object_put(d);
		return EXIT_OK;
	}
	if (matches(argv[0], "register"))
		return do_register(cli, path, argc - 1, argv + 1);
	if (matches(argv[0], "deregister")) {
		if (argc != 2)
			return usage_error("deregister: one instance id");
		req = json_object_new_object();
		json_object_object_add(req, "deregister", json_object_new_string(argv[1]));
		d = ask(path, json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN));
		json_object_put(req);
		if (!d)
			return EXIT_FAIL;
		json_object_put(d);
		return EXIT_OK;
	}
	if (matches(argv[0], "backup")) {
		if (argc != 2)
			return usage_error("backup: one new file name, made in the store's directory");
		d = ask_one(cli, path, "backup", json_object_new_string(argv[1]));
		if (!d)
			return EXIT_FAIL;
		if (!cli->json)	/* ask_one() printed the JSON */
			printf("backup %s revision %s instances %s\n", str(d, "file"),
			       str(d, "revision"), str(d, "instances"));
		json_object_put(d);
		return EXIT_OK;
	}
	if (matches(argv[0], "policy"))
		return do_policy(cli, path, argc - 1, argv + 1);
	if (matches(argv[0], "aam")) {
		if (argc != 3 || !matches(argv[1], "revoke"))
			return usage_error("aam: revoke JTI");
		d = ask_one(cli, path, "aam_revoke", json_object_new_string(argv[2]));
		if (!d)
			return EXIT_FAIL;
		/* kept and pushed; with etcd, shared once the worker wrote it */
		if (json_object_object_get_ex(d, "revoked_etcd", NULL))
			printf("revoked %s; etcd: %s\n", argv[2], str(d, "revoked_etcd"));
		json_object_put(d);
		return EXIT_OK;
	}
	if (matches(argv[0], "token"))
		return do_token(cli, path, argc - 1, argv + 1);
	if (matches(argv[0], "access"))
		return do_access(cli, path, argc - 1, argv + 1);
	return usage_error("unknown command \"%s\"", argv[0]);
}
