// SPDX-License-Identifier: GPL-2.0
/* Unit tests of the dmsc-agent configuration parser. */
#include <string.h>

#include "config.h"
#include "tests/ktap.h"

static struct agent_config cfg;
static char err[256];

static int parse(const char *text)
{
	err[0] = '\0';
	return config_parse(text, &cfg, err, sizeof(err));
}

int main(void)
{
	ktap_plan(57 + 5 + 11 + 3 + 4 + 2);
	ktap_check(!parse("{\"node\":\"pe1\",\"roles\":[\"sr\",\"aam\"]}") &&
		   !strcmp(cfg.node, "pe1") &&
		   cfg.roles == (ROLE_SR | ROLE_AAM), "valid config");
	/* the srd role has its own section (below) */
	ktap_check(!parse("{\"node\":\"c\",\"roles\":[\"aam\"],"
			  "\"listen\":\"127.0.0.1:7450\"}") &&
		   !strcmp(cfg.listen, "127.0.0.1:7450"), "listen address");
	/* the smo pushes over the srd's connections */
	ktap_check(parse("{\"node\":\"c\",\"roles\":[\"smo\"]}") &&
		   !strncmp(err, "roles: \"smo\" needs \"srd\"", 24),
		   "smo without srd refused");
	ktap_check(parse("{\"node\":\"c\",\"roles\":[\"srd\",\"smo\"],"
			 "\"tls\":{\"ca\":\"/a\",\"cert\":\"/b\",\"key\":\"/c\"},"
			 "\"srd\":{\"listen\":\"127.0.0.1:1\"},"
			 "\"smo\":{\"policies\":\"p.json\"}}") &&
		   !strcmp(err, "smo.policies: \"p.json\" is not an absolute path"),
		   "smo.policies: an absolute path");
	/* the aam's token issuer and the verifiers' tokens section */
#define AAM(x) "{\"node\":\"c\",\"roles\":[\"srd\",\"aam\"]," \
	"\"tls\":{\"ca\":\"/a\",\"cert\":\"/b\",\"key\":\"/c\"}," \
	"\"srd\":{\"listen\":\"127.0.0.1:1\"},\"aam\":{\"key\":\"/k\"" x "}}"
	ktap_check(!parse(AAM(",\"grants\":[{\"sub\":\"mi-*\",\"scope\":\"2001:db8:100::/48\"},"
			      "{\"sub\":\"gw\",\"scope\":\"*\"}]")) &&
		   cfg.aam.set && cfg.aam.ngrants == 2 && cfg.aam.lifetime_s == 300 &&
		   !strcmp(cfg.aam.kid, "aam") && !strcmp(cfg.aam.grants[0].sub, "mi-*") &&
		   !strcmp(cfg.aam.grants[1].scope, "*") && !cfg.aam.revoked[0],
		   "aam: grants read; lifetime 300 s and kid \"aam\" by default");
	ktap_check(parse(AAM("")) &&
		   !strcmp(err, "aam.grants: required (an empty list denies everything)"),
		   "aam.grants: required");
	ktap_check(parse(AAM(",\"grants\":[],\"lifetime_s\":3601")) &&
		   !strcmp(err, "aam.lifetime_s: must be 1..3600"), "aam.lifetime_s: at most an hour");
	ktap_check(parse(AAM(",\"grants\":[{\"sub\":\"a\",\"scope\":\"svc\"}]")) &&
		   !strcmp(err, "aam.grants[0].scope: \"svc\" is neither an IPv6 ADDR/LEN nor \"*\""),
		   "aam.grants[0].scope: a scope that allows nothing refused");
	ktap_check(parse(AAM(",\"grants\":[{\"sub\":\"a\",\"scope\":\"*\",\"node\":\"x\"}]")) &&
		   !strcmp(err, "aam.grants[0].node: unknown field"), "aam.grants[0]: unknown key named");
	ktap_check(parse(AAM(",\"grants\":[],\"kid\":\"a b\"")) &&
		   !strncmp(err, "aam.kid: \"a b\" is not 1..63 of a-z", 29) &&
		   parse(AAM(",\"grants\":[],\"kid\":\"Aam\"")) &&
		   parse(AAM(",\"grants\":[],\"kid\":\"aam-\"")) &&
		   !parse(AAM(",\"grants\":[],\"kid\":\"aam-2\"")),
		   "aam.kid: a key name as token_sign() takes it (a DNS label)");
	ktap_check(parse(AAM(",\"grants\":[],\"revoked\":\"r.json\"")) &&
		   !strcmp(err, "aam.revoked: \"r.json\" is not an absolute path"),
		   "aam.revoked: an absolute path");
	ktap_check(parse("{\"node\":\"c\",\"roles\":[\"aam\"],\"aam\":{\"key\":\"/k\",\"grants\":[]}}") &&
		   !strncmp(err, "roles: \"aam\" needs \"srd\"", 24), "aam section without srd refused");
	/* aam.revoked_prefix: the revocations shared through etcd */
	ktap_check(parse(AAM(",\"grants\":[],\"revoked_prefix\":\"/x/\"")) &&
		   !strcmp(err, "aam.revoked_prefix: needs srd.store.etcd (the revocations are shared through it)"),
		   "aam.revoked_prefix: only with an etcd store");
#define AAM_ETCD(x) "{\"node\":\"c\",\"roles\":[\"srd\",\"aam\"]," \
	"\"tls\":{\"ca\":\"/a\",\"cert\":\"/b\",\"key\":\"/c\"}," \
	"\"srd\":{\"listen\":\"127.0.0.1:1\",\"store\":{\"etcd\":\"http://127.0.0.1:2379\"}}," \
	"\"aam\":{\"key\":\"/k\",\"grants\":[]" x "}}"
	ktap_check(!parse(AAM_ETCD("")) &&
		   !strcmp(cfg.aam.revoked_prefix, "/dmsc/aam/revoked/") &&
		   !parse(AAM_ETCD(",\"revoked_prefix\":\"/site1/revoked/\"")) &&
		   !strcmp(cfg.aam.revoked_prefix, "/site1/revoked/"),
		   "aam.revoked_prefix: /dmsc/aam/revoked/ by default, or as given");
	ktap_check(parse(AAM_ETCD(",\"revoked_prefix\":\"\"")) &&
		   !strcmp(err, "aam.revoked_prefix: must be 1..255 characters") &&
		   parse(AAM_ETCD(",\"revoked_prefix\":\"/dmsc/aam/revoked\"")) &&
		   !strcmp(err, "aam.revoked_prefix: \"/dmsc/aam/revoked\" must end in '/'") &&
		   parse(AAM_ETCD(",\"revoked_prefix\":\"/a b/\"")) &&
		   !strcmp(err, "aam.revoked_prefix: not printable ASCII without spaces"),
		   "aam.revoked_prefix: empty, without a trailing '/', with a space: refused");
	ktap_check(parse(AAM_ETCD(",\"revoked_prefix\":\"/dmsc/\"")) &&
		   !strncmp(err, "aam.revoked_prefix: \"/dmsc/\" overlaps", 34) &&
		   parse(AAM_ETCD(",\"revoked_prefix\":\"/dmsc/srd/r/\"")) &&
		   parse(AAM_ETCD(",\"revoked_prefix\":\"/dmsc/smo/\"")) &&
		   !parse(AAM_ETCD(",\"revoked_prefix\":\"/dmsc/s/\"")),
		   "aam.revoked_prefix: over or under the registry's prefix, over the smo's keys: refused");
#undef AAM_ETCD
#undef AAM
#define TOK(x) "{\"node\":\"n1\",\"roles\":[\"sr\"],\"tokens\":{" x "}}"
	ktap_check(!parse(TOK("\"aam_key\":\"/p.pub\"")) && cfg.tokens.enabled &&
		   cfg.tokens.skew_s == 30 && !cfg.tokens.kid[0] &&
		   !strcmp(cfg.tokens.aam_key, "/p.pub"), "tokens: a skew of 30 s and any kid by default");
	ktap_check(parse(TOK("\"aam_key\":\"/p.pub\",\"skew_s\":301")) &&
		   !strcmp(err, "tokens.skew_s: must be 0..300"), "tokens.skew_s: 0..300");
	ktap_check(parse(TOK("\"kid\":\"aam1\"")) &&
		   !strcmp(err, "tokens.aam_key: required"), "tokens.aam_key: required");
#undef TOK
	/* the election: only with etcd, ranges and the key checked by name */
#define SMO_ETCD(extra) "{\"node\":\"c\",\"roles\":[\"srd\",\"smo\"]," \
	"\"tls\":{\"ca\":\"/a\",\"cert\":\"/b\",\"key\":\"/c\"}," \
	"\"srd\":{\"listen\":\"127.0.0.1:1\",\"store\":{\"etcd\":\"http://127.0.0.1:2379\"}}," \
	"\"smo\":{" extra "}}"
	ktap_check(!parse(SMO_ETCD("")) &&
		   !strcmp(cfg.smo.election_key, "/dmsc/smo/leader") &&
		   cfg.smo.election_lease_s == 5,
		   "smo election: defaults /dmsc/smo/leader, a lease of 5 s");
	ktap_check(!parse(SMO_ETCD("\"election_key\":\"/x/leader\",\"election_lease_s\":2")) &&
		   !strcmp(cfg.smo.election_key, "/x/leader") &&
		   cfg.smo.election_lease_s == 2,
		   "smo election: key and lease given");
	ktap_check(parse(SMO_ETCD("\"election_lease_s\":1")) &&
		   !strcmp(err, "smo.election_lease_s: must be 2..60"),
		   "smo.election_lease_s: below etcd's 2 s refused");
	ktap_check(parse(SMO_ETCD("\"election_lease_s\":61")) &&
		   !strcmp(err, "smo.election_lease_s: must be 2..60") &&
		   !parse(SMO_ETCD("\"election_lease_s\":60")) &&
		   cfg.smo.election_lease_s == 60,
		   "smo.election_lease_s: 60 s taken, above a minute refused");
	ktap_check(parse(SMO_ETCD("\"election_lease_s\":2.5")) &&
		   !strcmp(err, "smo.election_lease_s: expected an integer"),
		   "smo.election_lease_s: not an integer");
	ktap_check(parse(SMO_ETCD("\"election_key\":\"\"")) &&
		   !strcmp(err, "smo.election_key: must be 1..255 characters"),
		   "smo.election_key: empty refused");
	ktap_check(parse(SMO_ETCD("\"election_key\":\"/dmsc/srd/leader\"")) &&
		   !strcmp(err, "smo.election_key: \"/dmsc/srd/leader\" is under the registry's prefix /dmsc/srd/"),
		   "smo.election_key: not under the registry's prefix");
	ktap_check(!strcmp(cfg.smo.policies_key, "/dmsc/smo/policies") &&
		   !parse(SMO_ETCD("\"policies_key\":\"/x/set\"")) &&
		   !strcmp(cfg.smo.policies_key, "/x/set"),
		   "smo.policies_key: default /dmsc/smo/policies, or given");
	ktap_check(parse(SMO_ETCD("\"policies_key\":\"/dmsc/srd/set\"")) &&
		   !strcmp(err, "smo.policies_key: \"/dmsc/srd/set\" is under the registry's prefix /dmsc/srd/"),
		   "smo.policies_key: not under the registry's prefix");
	ktap_check(parse(SMO_ETCD("\"election_key\":\"/x/k\",\"policies_key\":\"/x/k\"")) &&
		   !strcmp(err, "smo.policies_key: \"/x/k\" is smo.election_key too"),
		   "smo.policies_key: not the election's key");
	ktap_check(parse(SMO_ETCD("\"election\":true")) &&
		   !strcmp(err, "smo.election: unknown field"),
		   "smo: an unknown field named");
	ktap_check(parse("{\"node\":\"c\",\"roles\":[\"srd\",\"smo\"],"
			 "\"tls\":{\"ca\":\"/a\",\"cert\":\"/b\",\"key\":\"/c\"},"
			 "\"srd\":{\"listen\":\"127.0.0.1:1\"},"
			 "\"smo\":{\"election_lease_s\":5}}") &&
		   !strncmp(err, "smo.election_lease_s: the election needs srd.store.etcd", 55),
		   "smo.election_lease_s: refused with the SQLite store");
	/* the relayed set's size: 1 KiB to 1 MiB (etcd takes 1.5 MiB a request) */
	ktap_check(!parse(SMO_ETCD("")) && cfg.smo.relay_max_bytes == 1048576 &&
		   !parse(SMO_ETCD("\"relay_max_bytes\":1024")) && cfg.smo.relay_max_bytes == 1024,
		   "smo.relay_max_bytes: 1 MiB by default, 1024 taken");
	ktap_check(parse(SMO_ETCD("\"relay_max_bytes\":1023")) &&
		   !strcmp(err, "smo.relay_max_bytes: must be 1024..1048576") &&
		   parse(SMO_ETCD("\"relay_max_bytes\":1048577")) &&
		   !strcmp(err, "smo.relay_max_bytes: must be 1024..1048576") &&
		   parse("{\"node\":\"c\",\"roles\":[\"srd\",\"smo\"],"
			 "\"tls\":{\"ca\":\"/a\",\"cert\":\"/b\",\"key\":\"/c\"},"
			 "\"srd\":{\"listen\":\"127.0.0.1:1\"},"
			 "\"smo\":{\"relay_max_bytes\":4096}}") &&
		   !strncmp(err, "smo.relay_max_bytes: the election needs srd.store.etcd", 54),
		   "smo.relay_max_bytes: below 1 KiB, above 1 MiB, with SQLite refused");
#undef SMO_ETCD
	ktap_check(parse("{\"roles\":[\"sr\"]}") &&
		   !strcmp(err, "node: required"), "node required");
	ktap_check(parse("{\"node\":\"a\",\"roles\":[\"sr\",\"foo\"]}") &&
		   !strncmp(err, "roles[1]: unknown role", 22),
		   "unknown role named with its index");
	ktap_check(parse("{\"node\":\"a\",\"roles\":[\"sr\",\"sr\"]}") &&
		   strstr(err, "given twice"), "duplicate role");
	ktap_check(parse("{\"node\":\"a\",\"roles\":[]}") &&
		   !strncmp(err, "roles:", 6), "empty roles");
	ktap_check(parse("{\"node\":7,\"roles\":[\"sr\"]}") &&
		   !strcmp(err, "node: expected a string"), "node type");
	ktap_check(parse("{\"node\":\"a\",\"roles\":[\"sr\"],\"rols\":1}") &&
		   !strcmp(err, "rols: unknown field"), "unknown field named");
	ktap_check(parse("{\"node\":\"a\",") && strstr(err, "not valid JSON"),
		   "truncated JSON");
	ktap_check(parse("[1]") && strstr(err, "object"), "not an object");
	/* The telemetry section. */
	ktap_check(!parse("{\"node\":\"a\",\"roles\":[\"sr\"],\"telemetry\":{}}") &&
		   cfg.telemetry.enabled && cfg.telemetry.prometheus &&
		   !strcmp(cfg.telemetry.address, "127.0.0.1") &&
		   cfg.telemetry.port == 9791 &&
		   cfg.telemetry.report_interval_ms == 1000 &&
		   !cfg.telemetry.ndevs && !cfg.telemetry.report_to[0],
		   "telemetry: defaults 127.0.0.1:9791, 1000 ms, no reports");
	ktap_check(!parse("{\"node\":\"a\",\"roles\":[\"sr\"]}") &&
		   !cfg.telemetry.enabled, "no telemetry section: none");
	ktap_check(!parse("{\"node\":\"a\",\"roles\":[\"sr\"],\"telemetry\":{"
			  "\"devices\":[{\"dev\":\"e0\"},{\"dev\":\"e0\",\"direction\":\"egress\"}],"
			  "\"prometheus\":{\"address\":\"::1\",\"port\":9100},"
			  "\"report_interval_ms\":250,\"report_to\":\"/run/dmsc/smo.sock\"}}") &&
		   cfg.telemetry.ndevs == 2 && !strcmp(cfg.telemetry.devs[1].dev, "e0") &&
		   cfg.telemetry.devs[0].dir == 0 && cfg.telemetry.devs[1].dir == 1 &&
		   !strcmp(cfg.telemetry.address, "::1") && cfg.telemetry.port == 9100 &&
		   cfg.telemetry.report_interval_ms == 250 &&
		   !strcmp(cfg.telemetry.report_to, "/run/dmsc/smo.sock"),
		   "telemetry: every field");
	ktap_check(!parse("{\"node\":\"a\",\"roles\":[\"sr\"],\"telemetry\":{\"prometheus\":false}}") &&
		   !cfg.telemetry.prometheus, "telemetry: prometheus false");
	ktap_check(parse("{\"node\":\"a\",\"roles\":[\"smo\"],\"telemetry\":{}}") &&
		   !strncmp(err, "telemetry: only the sr role", 27), "telemetry needs sr");
	ktap_check(parse("{\"node\":\"a\",\"roles\":[\"sr\"],\"telemetry\":{\"device\":[]}}") &&
		   !strcmp(err, "telemetry.device: unknown field"), "telemetry: unknown field named");
	ktap_check(parse("{\"node\":\"a\",\"roles\":[\"sr\"],\"telemetry\":{\"devices\":[{\"dev\":\"e0\",\"dir\":1}]}}") &&
		   !strcmp(err, "telemetry.devices[0].dir: unknown field"), "telemetry: unknown device field");
	ktap_check(parse("{\"node\":\"a\",\"roles\":[\"sr\"],\"telemetry\":{\"devices\":[{\"dev\":\"e0\"},{\"dev\":\"e0\",\"direction\":\"ingress\"}]}}") &&
		   !strcmp(err, "telemetry.devices[1]: e0 ingress given twice"), "telemetry: device twice");
	ktap_check(parse("{\"node\":\"a\",\"roles\":[\"sr\"],\"telemetry\":{\"devices\":[{\"dev\":\"e0\",\"direction\":\"up\"}]}}") &&
		   !strcmp(err, "telemetry.devices[0].direction: expected \"ingress\" or \"egress\""),
		   "telemetry: bad direction");
	ktap_check(parse("{\"node\":\"a\",\"roles\":[\"sr\"],\"telemetry\":{\"devices\":[{\"dev\":\"a/b\"}]}}") &&
		   !strcmp(err, "telemetry.devices[0].dev: \"a/b\" is not a valid device name"),
		   "telemetry: bad device name");
	ktap_check(parse("{\"node\":\"a\",\"roles\":[\"sr\"],\"telemetry\":{\"prometheus\":{\"port\":0}}}") &&
		   !strcmp(err, "telemetry.prometheus.port: must be 1..65535"), "telemetry: port range");
	ktap_check(parse("{\"node\":\"a\",\"roles\":[\"sr\"],\"telemetry\":{\"prometheus\":{\"address\":\"localhost\"}}}") &&
		   !strcmp(err, "telemetry.prometheus.address: \"localhost\" is not an IPv4 or IPv6 address"),
		   "telemetry: address literal");
	ktap_check(parse("{\"node\":\"a\",\"roles\":[\"sr\"],\"telemetry\":{\"report_interval_ms\":99.5}}") &&
		   !strcmp(err, "telemetry.report_interval_ms: expected an integer"), "telemetry: interval type");
	ktap_check(parse("{\"node\":\"a\",\"roles\":[\"sr\"],\"telemetry\":{\"report_to\":\"smo.sock\"}}") &&
		   !strcmp(err, "telemetry.report_to: \"smo.sock\" is neither \"smo\" nor an absolute path"),
		   "telemetry: report_to absolute");
	ktap_check(parse("{\"node\":\"a\",\"roles\":[\"sr\"],\"telemetry\":{\"report_to\":\"smo\"}}") &&
		   !strcmp(err, "telemetry.report_to: \"smo\" needs sr.srd (the reports go over the connection to the controller)"),
		   "telemetry: report_to smo needs sr.srd");
	ktap_check(!parse("{\"node\":\"a\",\"roles\":[\"sr\"],\"telemetry\":{\"report_to\":\"smo\"},"
			  "\"tls\":{\"ca\":\"/p/ca.crt\",\"cert\":\"/p/c.crt\",\"key\":\"/p/c.key\"},"
			  "\"sr\":{\"srd\":[{\"node\":\"c\",\"address\":\"10.0.0.1:7400\"}]}}") &&
		   !strcmp(cfg.telemetry.report_to, "smo"), "telemetry: report_to smo over sr.srd");
	/* tls, srd, sr, control (issue 10) */
#define TLS "\"tls\":{\"ca\":\"/p/ca.crt\",\"cert\":\"/p/c.crt\",\"key\":\"/p/c.key\"}"
	ktap_check(!parse("{\"node\":\"c\",\"roles\":[\"srd\",\"aam\"]," TLS ","
			  "\"control\":\"/run/a.sock\",\"srd\":{\"listen\":\"[::1]:7400\","
			  "\"store\":{\"etcd\":\"http://127.0.0.1:2379\"},\"full_interval_ms\":500}}") &&
		   !strcmp(cfg.srd.listen, "[::1]:7400") && !strcmp(cfg.srd.etcd, "http://127.0.0.1:2379") &&
		   !cfg.srd.sqlite[0] && cfg.srd.full_interval_ms == 500 &&
		   !strcmp(cfg.control, "/run/a.sock") && !strcmp(cfg.tls.key, "/p/c.key"),
		   "srd with etcd, tls, control");
	ktap_check(parse("{\"node\":\"c\",\"roles\":[\"srd\"]," TLS "}") &&
		   !strcmp(err, "srd: required by the srd role"), "srd role needs its section");
	ktap_check(parse("{\"node\":\"c\",\"roles\":[\"srd\"],\"srd\":{\"listen\":\"127.0.0.1:1\"}}") &&
		   !strcmp(err, "tls: required by the srd role"), "srd needs tls");
	ktap_check(parse("{\"node\":\"c\",\"roles\":[\"srd\"]," TLS ",\"srd\":{\"listen\":\"ctl:7400\"}}") &&
		   !strcmp(err, "srd.listen: \"ctl:7400\" is not ADDRESS:PORT ([ADDRESS]:PORT for IPv6)"),
		   "srd.listen must be an address");
	ktap_check(parse("{\"node\":\"c\",\"roles\":[\"srd\"]," TLS ",\"srd\":{\"listen\":\"127.0.0.1:1\","
			 "\"store\":{\"sqlite\":\"/a\",\"etcd\":\"http://x\"}}}") &&
		   !strncmp(err, "srd.store: one of", 17), "srd.store: one store");
	ktap_check(!parse("{\"node\":\"pe1\",\"roles\":[\"sr\"]," TLS ",\"sr\":{\"srd\":["
			  "{\"node\":\"c\",\"address\":\"10.0.0.1:7400\"},{\"node\":\"d\",\"address\":\"10.0.0.2:7400\"}],"
			  "\"heartbeat_ms\":250,\"kernel\":false,\"state\":\"/var/s.json\"}}") &&
		   cfg.sr.nsrd == 2 && !strcmp(cfg.sr.srd[1].node, "d") && cfg.sr.heartbeat_ms == 250 &&
		   !cfg.sr.kernel && !strcmp(cfg.sr.state, "/var/s.json"), "sr with two SRDs");
	ktap_check(!parse("{\"node\":\"pe1\",\"roles\":[\"sr\"]}") && cfg.sr.kernel &&
		   cfg.sr.heartbeat_ms == 1000 && !cfg.sr.nsrd &&
		   cfg.sr.digest_interval_ms == 30000, "sr defaults");
	ktap_check(!parse("{\"node\":\"pe1\",\"roles\":[\"sr\"],\"sr\":{\"digest_interval_ms\":0}}") &&
		   !cfg.sr.digest_interval_ms &&
		   !parse("{\"node\":\"pe1\",\"roles\":[\"sr\"],\"sr\":{\"digest_interval_ms\":100}}") &&
		   cfg.sr.digest_interval_ms == 100 &&
		   parse("{\"node\":\"pe1\",\"roles\":[\"sr\"],\"sr\":{\"digest_interval_ms\":99}}") &&
		   !strcmp(err, "sr.digest_interval_ms: 99 is neither 0 (none) nor 100..3600000"),
		   "sr.digest_interval_ms: 0 (none) or 100..3,600,000");
	ktap_check(!parse("{\"node\":\"pe1\",\"roles\":[\"sr\"]}") &&
		   cfg.sr.node_report_ms == 10000 &&
		   !parse("{\"node\":\"pe1\",\"roles\":[\"sr\"],\"sr\":{\"node_report_ms\":0}}") &&
		   !cfg.sr.node_report_ms &&
		   parse("{\"node\":\"pe1\",\"roles\":[\"sr\"],\"sr\":{\"node_report_ms\":50}}") &&
		   !strcmp(err, "sr.node_report_ms: 50 is neither 0 (none) nor 100..3600000") &&
		   parse("{\"node\":\"pe1\",\"roles\":[\"sr\"],\"sr\":{\"node_report_ms\":\"1s\"}}") &&
		   !strncmp(err, "sr.node_report_ms: ", 19),
		   "sr.node_report_ms: default 10,000, 0 (none) or 100..3,600,000, a string refused by name");
	ktap_check(parse("{\"node\":\"pe1\",\"roles\":[\"sr\"]," TLS ",\"sr\":{\"srd\":[{\"node\":\"c\"}]}}") &&
		   !strcmp(err, "sr.srd[0].address: required"), "sr.srd address required, by index");
	ktap_check(parse("{\"node\":\"pe1\",\"roles\":[\"aam\"],\"sr\":{}}") &&
		   !strcmp(err, "sr: roles has no \"sr\""), "sr section needs the sr role");
	/* sr.rsvp: the speaker in the sr role, dmsc-rsvp run's ranges */
#define SR_RSVP(x) "{\"node\":\"p\",\"roles\":[\"sr\"],\"sr\":{\"rsvp\":{" x "}}}"
	ktap_check(!parse(SR_RSVP("\"address6\":\"fc00:a::2\",\"control\":\"/run/r.sock\"")) &&
		   cfg.sr.rsvp.enabled && !strcmp(cfg.sr.rsvp.address6, "fc00:a::2") &&
		   !cfg.sr.rsvp.address4[0] && cfg.sr.rsvp.credit == 65536 && !cfg.sr.rsvp.mb &&
		   cfg.sr.rsvp.refresh_ms == 30000 && cfg.sr.rsvp.retry_ms == 200 &&
		   cfg.sr.rsvp.retries == 3 && !strcmp(cfg.sr.rsvp.control, "/run/r.sock"),
		   "sr.rsvp defaults");
	ktap_check(!parse(SR_RSVP("\"address4\":\"10.0.0.2\",\"credit\":4294967296,"
				  "\"form\":\"mb\",\"refresh_ms\":2000,\"retry_ms\":50,"
				  "\"retries\":0,\"control\":\"/r\"")) &&
		   cfg.sr.rsvp.credit == 4294967296ULL && cfg.sr.rsvp.mb &&
		   cfg.sr.rsvp.refresh_ms == 2000 && cfg.sr.rsvp.retry_ms == 50 &&
		   !cfg.sr.rsvp.retries && !strcmp(cfg.sr.rsvp.address4, "10.0.0.2"),
		   "sr.rsvp: every field");
	ktap_check(!parse("{\"node\":\"p\",\"roles\":[\"sr\"]}") && !cfg.sr.rsvp.enabled,
		   "sr.rsvp: none without the section");
	ktap_check(parse(SR_RSVP("\"control\":\"/r\"")) &&
		   !strncmp(err, "sr.rsvp: needs address6 or address4", 35),
		   "sr.rsvp: an address required");
	ktap_check(parse(SR_RSVP("\"address6\":\"10.0.0.1\",\"control\":\"/r\"")) &&
		   !strcmp(err, "sr.rsvp.address6: \"10.0.0.1\" is not an IPv6 address"),
		   "sr.rsvp.address6 of the wrong family");
	ktap_check(parse(SR_RSVP("\"address6\":\"::1\",\"credit\":4294967297,\"control\":\"/r\"")) &&
		   !strcmp(err, "sr.rsvp.credit: must be 0..4294967296"),
		   "sr.rsvp.credit past DMSC_CREDIT_MAX");
	ktap_check(parse(SR_RSVP("\"address6\":\"::1\",\"form\":\"mb\",\"control\":\"/r\"")) &&
		   !strncmp(err, "sr.rsvp.credit: 65536 bytes: the mb form needs 1..", 50),
		   "sr.rsvp: the mb form needs whole MB");
	ktap_check(parse(SR_RSVP("\"address6\":\"::1\"")) &&
		   !strcmp(err, "sr.rsvp.control: required"), "sr.rsvp.control required");
	ktap_check(parse("{\"node\":\"p\",\"roles\":[\"sr\"],\"control\":\"/run/a.sock\","
			 "\"sr\":{\"rsvp\":{\"address6\":\"::1\",\"control\":\"/run/a.sock\"}}}") &&
		   !strcmp(err, "sr.rsvp.control: \"/run/a.sock\" is the agent's control socket too"),
		   "sr.rsvp.control: not the agent's own socket");
	/* the gateway: its section, its SRDs, its entry, and the AAM's key */
#define MG(extra, tokens) "{\"node\":\"g\",\"roles\":[\"mg\"]," \
	"\"tls\":{\"ca\":\"/a\",\"cert\":\"/b\",\"key\":\"/c\"}," \
	"\"mg\":{\"srd\":[{\"node\":\"ctl\",\"address\":\"127.0.0.1:1\"}]," \
	"\"listen\":\"[::1]:8080\"" extra "}" tokens "}"
#define TOKENS ",\"tokens\":{\"aam_key\":\"/k.pub\"}"
	ktap_check(!parse(MG("", TOKENS)) && cfg.mg.set && cfg.mg.nsrd == 1 &&
		   !strcmp(cfg.mg.listen, "[::1]:8080") && cfg.mg.digest_interval_ms == 30000 &&
		   cfg.mg.connections == 256 && cfg.mg.log_per_s == 10 &&
		   cfg.tokens.enabled && !strcmp(cfg.tokens.aam_key, "/k.pub") &&
		   cfg.tokens.skew_s == 30 && !cfg.tokens.kid[0],
		   "mg and tokens: defaults");
	ktap_check(parse("{\"node\":\"g\",\"roles\":[\"mg\"]" TOKENS "}") &&
		   !strcmp(err, "mg: required by the mg role"), "mg: required by the role");
	ktap_check(parse(MG("", "")) && !strncmp(err, "tokens: required by the mg role", 31),
		   "tokens: required by the mg role");
	ktap_check(parse(MG(",\"connections\":10001", TOKENS)) &&
		   !strcmp(err, "mg.connections: must be 1..10000"), "mg.connections: range");
	ktap_check(parse("{\"node\":\"g\",\"roles\":[\"mg\"],"
			 "\"mg\":{\"srd\":[{\"node\":\"ctl\",\"address\":\"h\"}],"
			 "\"listen\":\"[::1]:8080\"}" TOKENS "}") &&
		   !strcmp(err, "mg.srd[0].address: \"h\" is not ADDRESS:PORT ([ADDRESS]:PORT for IPv6)"),
		   "mg.srd[0].address named");
	return ktap_finish();
}
