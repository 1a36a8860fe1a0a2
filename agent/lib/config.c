// SPDX-License-Identifier: GPL-2.0
/* dmsc-agent configuration: read and check every field, name what is wrong. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include <linux/dmsc.h>
#include <linux/dmsc_cbfc.h>

#include "config.h"

static const struct {
	unsigned int role;
	const char *name;
} role_names[] = {
	{ ROLE_SR, "sr" }, { ROLE_SRD, "srd" },
	{ ROLE_SMO, "smo" }, { ROLE_AAM, "aam" }, { ROLE_MG, "mg" },
};

#define NROLES (sizeof(role_names) / sizeof(*role_names))

const char *config_role_name(unsigned int role)
{
	size_t i;

	for (i = 0; i < NROLES; i++)
		if (role_names[i].role == role)
			return role_names[i].name;
	return "?";
}

static int get_string(struct json_object *root, const char *key, char *dst,
		      size_t size, bool required, char *err, int errlen)
{
	struct json_object *v;
	const char *s;

	if (!json_object_object_get_ex(root, key, &v)) {
		if (!required)
			return 0;
		snprintf(err, errlen, "%s: required", key);
		return -1;
	}
	if (!json_object_is_type(v, json_type_string)) {
		snprintf(err, errlen, "%s: expected a string", key);
		return -1;
	}
	s = json_object_get_string(v);
	if (!*s || strlen(s) >= size) {
		snprintf(err, errlen, "%s: must be 1..%zu characters", key,
			 size - 1);
		return -1;
	}
	strcpy(dst, s);
	return 0;
}

static int get_roles(struct json_object *root, unsigned int *roles, char *err,
		     int errlen)
{
	struct json_object *arr;
	size_t i, j, n;

	if (!json_object_object_get_ex(root, "roles", &arr)) {
		snprintf(err, errlen, "roles: required");
		return -1;
	}
	if (!json_object_is_type(arr, json_type_array) ||
	    !(n = json_object_array_length(arr))) {
		snprintf(err, errlen, "roles: expected a non-empty array");
		return -1;
	}
	*roles = 0;
	for (i = 0; i < n; i++) {
		struct json_object *r = json_object_array_get_idx(arr, i);
		const char *s;

		if (!json_object_is_type(r, json_type_string)) {
			snprintf(err, errlen, "roles[%zu]: expected a string", i);
			return -1;
		}
		s = json_object_get_string(r);
		for (j = 0; j < NROLES; j++)
			if (!strcmp(s, role_names[j].name))
				break;
		if (j == NROLES) {
			snprintf(err, errlen,
				 "roles[%zu]: unknown role \"%s\" (sr, srd, smo, aam, mg)",
				 i, s);
			return -1;
		}
		if (*roles & role_names[j].role) {
			snprintf(err, errlen, "roles[%zu]: \"%s\" given twice",
				 i, s);
			return -1;
		}
		*roles |= role_names[j].role;
	}
	return 0;
}

/* Every key of @obj is one of @keys (NULL-terminated), or it is named. */
static int only_keys(struct json_object *obj, const char *path,
		     const char *const *keys, char *err, int errlen)
{
	json_object_object_foreach(obj, key, val) {
		const char *const *k;

		(void)val;
		for (k = keys; *k && strcmp(*k, key); k++)
			;
		if (!*k) {
			snprintf(err, errlen, "%s%s%s: unknown field", path,
				 *path ? "." : "", key);
			return -1;
		}
	}
	return 0;
}

/* An integer @lo..@hi at @path; json-c reads 1.5 and "7" as numbers too. */
static int get_int(struct json_object *v, const char *path, long long lo,
		   long long hi, long long *dst, char *err, int errlen)
{
	long long x;

	if (!json_object_is_type(v, json_type_int)) {
		snprintf(err, errlen, "%s: expected an integer", path);
		return -1;
	}
	errno = 0;
	x = (long long)json_object_get_int64(v);
	if (errno || x < lo || x > hi) {
		snprintf(err, errlen, "%s: must be %lld..%lld", path, lo, hi);
		return -1;
	}
	*dst = x;
	return 0;
}

static int get_uint(struct json_object *v, const char *path, long long lo,
		    long long hi, unsigned int *dst, char *err, int errlen)
{
	long long x;

	if (get_int(v, path, lo, hi, &x, err, errlen))
		return -1;
	*dst = (unsigned int)x;
	return 0;
}

/* A string of 1..@size-1 bytes at @path. */
static int get_str(struct json_object *v, const char *path, char *dst,
		   size_t size, char *err, int errlen)
{
	const char *s;

	if (!json_object_is_type(v, json_type_string)) {
		snprintf(err, errlen, "%s: expected a string", path);
		return -1;
	}
	s = json_object_get_string(v);
	if (!*s || strlen(s) >= size) {
		snprintf(err, errlen, "%s: must be 1..%zu characters", path,
			 size - 1);
		return -1;
	}
	strcpy(dst, s);
	return 0;
}

static int get_tm_devices(struct json_object *arr, struct telemetry_config *tc,
			  char *err, int errlen)
{
	static const char *const keys[] = { "dev", "direction", NULL };
	size_t n;

	if (!json_object_is_type(arr, json_type_array)) {
		snprintf(err, errlen, "telemetry.devices: expected an array");
		return -1;
	}
	n = json_object_array_length(arr);
	if (n > CONFIG_TM_MAX_DEVS) {
		snprintf(err, errlen, "telemetry.devices: more than %d",
			 CONFIG_TM_MAX_DEVS);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		struct json_object *d = json_object_array_get_idx(arr, i), *v;
		char path[64], *dev = tc->devs[i].dev;

		snprintf(path, sizeof(path), "telemetry.devices[%zu]", i);
		if (!json_object_is_type(d, json_type_object)) {
			snprintf(err, errlen, "%s: expected an object", path);
			return -1;
		}
		if (only_keys(d, path, keys, err, errlen))
			return -1;
		snprintf(path, sizeof(path), "telemetry.devices[%zu].dev", i);
		if (!json_object_object_get_ex(d, "dev", &v)) {
			snprintf(err, errlen, "%s: required", path);
			return -1;
		}
		if (get_str(v, path, dev, sizeof(tc->devs[i].dev), err, errlen))
			return -1;
		/* dev_valid_name()'s rules, as dmsc telemetry's. */
		if (!strcmp(dev, ".") || !strcmp(dev, "..") ||
		    strpbrk(dev, "/: \t\n")) {
			snprintf(err, errlen, "%s: \"%s\" is not a valid device name",
				 path, dev);
			return -1;
		}
		tc->devs[i].dir = 0;
		if (json_object_object_get_ex(d, "direction", &v)) {
			const char *s = json_object_get_string(v);

			snprintf(path, sizeof(path), "telemetry.devices[%zu].direction", i);
			if (!json_object_is_type(v, json_type_string) ||
			    (strcmp(s, "ingress") && strcmp(s, "egress"))) {
				snprintf(err, errlen, "%s: expected \"ingress\" or \"egress\"",
					 path);
				return -1;
			}
			tc->devs[i].dir = !strcmp(s, "egress");
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(tc->devs[j].dev, dev) &&
			    tc->devs[j].dir == tc->devs[i].dir) {
				snprintf(err, errlen, "telemetry.devices[%zu]: %s %s given twice",
					 i, dev, tc->devs[i].dir ? "egress" : "ingress");
				return -1;
			}
		tc->ndevs = i + 1;
	}
	return 0;
}

static int get_tm_prometheus(struct json_object *v, struct telemetry_config *tc,
			     char *err, int errlen)
{
	static const char *const keys[] = { "address", "port", NULL };
	unsigned char buf[16];
	struct json_object *x;

	if (json_object_is_type(v, json_type_boolean)) {
		tc->prometheus = json_object_get_boolean(v);
		return 0;
	}
	if (!json_object_is_type(v, json_type_object)) {
		snprintf(err, errlen, "telemetry.prometheus: expected an object or false");
		return -1;
	}
	if (only_keys(v, "telemetry.prometheus", keys, err, errlen))
		return -1;
	if (json_object_object_get_ex(v, "address", &x)) {
		if (get_str(x, "telemetry.prometheus.address", tc->address,
			    sizeof(tc->address), err, errlen))
			return -1;
		if (inet_pton(AF_INET, tc->address, buf) != 1 &&
		    inet_pton(AF_INET6, tc->address, buf) != 1) {
			snprintf(err, errlen, "telemetry.prometheus.address: \"%s\" is not an IPv4 or IPv6 address",
				 tc->address);
			return -1;
		}
	}
	if (json_object_object_get_ex(v, "port", &x) &&
	    get_uint(x, "telemetry.prometheus.port", 1, 65535, &tc->port, err,
		     errlen))
		return -1;
	return 0;
}

static int get_telemetry(struct json_object *root, struct agent_config *cfg,
			 char *err, int errlen)
{
	static const char *const keys[] = {
		"devices", "prometheus", "report_interval_ms", "report_to", NULL,
	};
	struct telemetry_config *tc = &cfg->telemetry;
	struct json_object *t, *v;

	if (!json_object_object_get_ex(root, "telemetry", &t))
		return 0;
	if (!json_object_is_type(t, json_type_object)) {
		snprintf(err, errlen, "telemetry: expected an object");
		return -1;
	}
	if (!(cfg->roles & ROLE_SR)) {
		snprintf(err, errlen, "telemetry: only the sr role has telemetry (roles has no \"sr\")");
		return -1;
	}
	tc->enabled = true;
	tc->prometheus = true;
	strcpy(tc->address, "127.0.0.1");
	tc->port = CONFIG_TM_PORT;
	tc->report_interval_ms = CONFIG_TM_INTERVAL_MS;
	if (only_keys(t, "telemetry", keys, err, errlen))
		return -1;
	if (json_object_object_get_ex(t, "devices", &v) &&
	    get_tm_devices(v, tc, err, errlen))
		return -1;
	if (json_object_object_get_ex(t, "prometheus", &v) &&
	    get_tm_prometheus(v, tc, err, errlen))
		return -1;
	if (json_object_object_get_ex(t, "report_interval_ms", &v) &&
	    get_uint(v, "telemetry.report_interval_ms", 100, 3600000,
		     &tc->report_interval_ms, err, errlen))
		return -1;
	if (json_object_object_get_ex(t, "report_to", &v)) {
		if (get_str(v, "telemetry.report_to", tc->report_to,
			    sizeof(tc->report_to), err, errlen))
			return -1;
		if (tc->report_to[0] != '/' &&
		    strcmp(tc->report_to, CONFIG_REPORT_TO_SMO)) {
			snprintf(err, errlen, "telemetry.report_to: \"%s\" is neither \"smo\" nor an absolute path",
				 tc->report_to);
			return -1;
		}
	}
	return 0;
}

int config_addr_parse(const char *text, struct sockaddr_storage *sa,
		      socklen_t *len)
{
	char host[128];
	const char *colon;
	char *end;
	unsigned long port;
	size_t n;

	memset(sa, 0, sizeof(*sa));
	colon = strrchr(text, ':');
	if (!colon || colon == text)
		return -1;
	port = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || !port || port > 65535)
		return -1;
	n = (size_t)(colon - text);
	if (text[0] == '[') {
		if (n < 3 || text[n - 1] != ']')
			return -1;
		text++;
		n -= 2;
	}
	if (n >= sizeof(host))
		return -1;
	memcpy(host, text, n);
	host[n] = '\0';
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)sa)->sin_addr) == 1) {
		((struct sockaddr_in *)sa)->sin_family = AF_INET;
		((struct sockaddr_in *)sa)->sin_port = htons((uint16_t)port);
		*len = sizeof(struct sockaddr_in);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)sa)->sin6_addr) == 1) {
		((struct sockaddr_in6 *)sa)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)sa)->sin6_port = htons((uint16_t)port);
		*len = sizeof(struct sockaddr_in6);
		return 0;
	}
	return -1;
}

static int get_path(struct json_object *obj, const char *path, const char *key,
		    char *dst, size_t size, bool required, char *err, int errlen)
{
	struct json_object *v;
	char p[96];

	snprintf(p, sizeof(p), "%s.%s", path, key);
	if (!json_object_object_get_ex(obj, key, &v)) {
		if (!required)
			return 0;
		snprintf(err, errlen, "%s: required", p);
		return -1;
	}
	if (get_str(v, p, dst, size, err, errlen))
		return -1;
	if (dst[0] != '/') {
		snprintf(err, errlen, "%s: \"%s\" is not an absolute path", p, dst);
		return -1;
	}
	return 0;
}

static int get_address(struct json_object *obj, const char *path,
		       const char *key, char *dst, size_t size, char *err,
		       int errlen)
{
	struct sockaddr_storage sa;
	struct json_object *v;
	socklen_t len;
	char p[96];

	snprintf(p, sizeof(p), "%s.%s", path, key);
	if (!json_object_object_get_ex(obj, key, &v)) {
		snprintf(err, errlen, "%s: required", p);
		return -1;
	}
	if (get_str(v, p, dst, size, err, errlen))
		return -1;
	if (config_addr_parse(dst, &sa, &len)) {
		snprintf(err, errlen, "%s: \"%s\" is not ADDRESS:PORT ([ADDRESS]:PORT for IPv6)",
			 p, dst);
		return -1;
	}
	return 0;
}

static struct json_object *section(struct json_object *root, const char *key,
				   const char *const *keys, char *err,
				   int errlen, int *bad)
{
	struct json_object *t;

	*bad = 0;
	if (!json_object_object_get_ex(root, key, &t))
		return NULL;
	if (!json_object_is_type(t, json_type_object)) {
		snprintf(err, errlen, "%s: expected an object", key);
		*bad = 1;
		return NULL;
	}
	if (only_keys(t, key, keys, err, errlen)) {
		*bad = 1;
		return NULL;
	}
	return t;
}

static int get_tls(struct json_object *root, struct agent_config *cfg,
		   char *err, int errlen)
{
	static const char *const keys[] = { "ca", "cert", "key", "crl", NULL };
	struct tls_files *t = &cfg->tls;
	struct json_object *s;
	int bad;

	s = section(root, "tls", keys, err, errlen, &bad);
	if (!s)
		return -bad;
	t->set = true;
	return get_path(s, "tls", "ca", t->ca, sizeof(t->ca), true, err, errlen) ||
	       get_path(s, "tls", "cert", t->cert, sizeof(t->cert), true, err,
			errlen) ||
	       get_path(s, "tls", "key", t->key, sizeof(t->key), true, err,
			errlen) ||
	       get_path(s, "tls", "crl", t->crl, sizeof(t->crl), false, err,
			errlen) ? -1 : 0;
}

static int get_srd(struct json_object *root, struct agent_config *cfg,
		   char *err, int errlen)
{
	static const char *const keys[] = {
		"listen", "store", "full_interval_ms", NULL,
	};
	static const char *const store_keys[] = { "sqlite", "etcd", NULL };
	struct srd_config *c = &cfg->srd;
	struct json_object *s, *st, *v;
	int bad;

	c->full_interval_ms = CONFIG_FULL_MS;
	strcpy(c->sqlite, "/var/lib/dmsc/srd.db");
	s = section(root, "srd", keys, err, errlen, &bad);
	if (!s) {
		if (!bad && (cfg->roles & ROLE_SRD)) {
			snprintf(err, errlen, "srd: required by the srd role");
			return -1;
		}
		return -bad;
	}
	if (!(cfg->roles & ROLE_SRD)) {
		snprintf(err, errlen, "srd: roles has no \"srd\"");
		return -1;
	}
	c->set = true;
	if (get_address(s, "srd", "listen", c->listen, sizeof(c->listen), err,
			errlen))
		return -1;
	if (json_object_object_get_ex(s, "store", &st)) {
		if (!json_object_is_type(st, json_type_object)) {
			snprintf(err, errlen, "srd.store: expected an object");
			return -1;
		}
		if (only_keys(st, "srd.store", store_keys, err, errlen))
			return -1;
		if (json_object_object_get_ex(st, "sqlite", NULL) ==
		    json_object_object_get_ex(st, "etcd", NULL)) {
			snprintf(err, errlen, "srd.store: one of \"sqlite\" (a path) or \"etcd\" (member URLs)");
			return -1;
		}
		if (json_object_object_get_ex(st, "etcd", &v)) {
			c->sqlite[0] = '\0';
			if (get_str(v, "srd.store.etcd", c->etcd, sizeof(c->etcd),
				    err, errlen))
				return -1;
		} else if (get_path(st, "srd.store", "sqlite", c->sqlite,
				    sizeof(c->sqlite), true, err, errlen)) {
			return -1;
		}
	}
	if (json_object_object_get_ex(s, "full_interval_ms", &v) &&
	    get_uint(v, "srd.full_interval_ms", 100, 3600000,
		     &c->full_interval_ms, err, errlen))
		return -1;
	return 0;
}

/* An address of @family at @path.@key into @dst; "" when not there. */
static int get_host(struct json_object *obj, const char *path,
		    const char *key, int family, char *dst, size_t size,
		    char *err, int errlen)
{
	unsigned char buf[sizeof(struct in6_addr)];
	struct json_object *v;
	char p[96];

	snprintf(p, sizeof(p), "%s.%s", path, key);
	if (!json_object_object_get_ex(obj, key, &v))
		return 0;
	if (get_str(v, p, dst, size, err, errlen))
		return -1;
	if (inet_pton(family, dst, buf) != 1) {
		snprintf(err, errlen, "%s: \"%s\" is not an %s address", p, dst,
			 family == AF_INET ? "IPv4" : "IPv6");
		return -1;
	}
	return 0;
}

/*
 * sr.rsvp, the speaker's settings: the ranges are dmsc-rsvp run's
 * (rsvp_main.c), so that a configuration moves between the two as is.
 */
static int get_rsvp(struct json_object *sr, struct rsvp_config *c, char *err,
		    int errlen)
{
	static const char *const keys[] = {
		"address6", "address4", "credit", "form", "refresh_ms",
		"retry_ms", "retries", "control", NULL,
	};
	struct json_object *s, *v;
	long long credit = CONFIG_RSVP_CREDIT;
	const char *form;

	if (!json_object_object_get_ex(sr, "rsvp", &s))
		return 0;
	if (!json_object_is_type(s, json_type_object)) {
		snprintf(err, errlen, "sr.rsvp: expected an object");
		return -1;
	}
	if (only_keys(s, "sr.rsvp", keys, err, errlen))
		return -1;
	c->enabled = true;
	c->refresh_ms = CONFIG_RSVP_REFRESH_MS;
	c->retry_ms = CONFIG_RSVP_RETRY_MS;
	c->retries = CONFIG_RSVP_RETRIES;
	if (get_host(s, "sr.rsvp", "address6", AF_INET6, c->address6,
		     sizeof(c->address6), err, errlen) ||
	    get_host(s, "sr.rsvp", "address4", AF_INET, c->address4,
		     sizeof(c->address4), err, errlen))
		return -1;
	if (!c->address6[0] && !c->address4[0]) {
		snprintf(err, errlen, "sr.rsvp: needs address6 or address4 (this node's, the hop address of its PATH and RESV)");
		return -1;
	}
	if (json_object_object_get_ex(s, "credit", &v) &&
	    get_int(v, "sr.rsvp.credit", 0, DMSC_CREDIT_MAX, &credit, err,
		    errlen))
		return -1;
	c->credit = (unsigned long long)credit;
	if (json_object_object_get_ex(s, "form", &v)) {
		form = json_object_is_type(v, json_type_string) ?
		       json_object_get_string(v) : "";
		if (strcmp(form, "mb") && strcmp(form, "cumulative")) {
			snprintf(err, errlen, "sr.rsvp.form: expected \"cumulative\" or \"mb\"");
			return -1;
		}
		c->mb = !strcmp(form, "mb");
	}
	/* The MB form carries whole MB: the reservation must be one at least. */
	if (c->mb && ((c->credit >> 20) < 1 ||
		      (c->credit >> 20) > RSVP_CREDIT_MB_MAX)) {
		snprintf(err, errlen, "sr.rsvp.credit: %llu bytes: the mb form needs 1..%u MB",
			 c->credit, RSVP_CREDIT_MB_MAX);
		return -1;
	}
	if ((json_object_object_get_ex(s, "refresh_ms", &v) &&
	     get_uint(v, "sr.rsvp.refresh_ms", 1, 3600000, &c->refresh_ms, err,
		      errlen)) ||
	    (json_object_object_get_ex(s, "retry_ms", &v) &&
	     get_uint(v, "sr.rsvp.retry_ms", 1, 3600000, &c->retry_ms, err,
		      errlen)) ||
	    (json_object_object_get_ex(s, "retries", &v) &&
	     get_uint(v, "sr.rsvp.retries", 0, 10, &c->retries, err, errlen)))
		return -1;
	return get_path(s, "sr.rsvp", "control", c->control,
			sizeof(c->control), true, err, errlen);
}

static int get_sr(struct json_object *root, struct agent_config *cfg,
		  char *err, int errlen)
{
	static const char *const keys[] = {
		"srd", "heartbeat_ms", "digest_interval_ms", "node_report_ms",
		"state", "kernel", "rsvp", "probe", NULL,
	};
	static const char *const srd_keys[] = { "node", "address", NULL };
	struct sr_config *c = &cfg->sr;
	struct json_object *s, *v;
	char path[64];
	int bad;

	c->heartbeat_ms = CONFIG_HEARTBEAT_MS;
	c->digest_interval_ms = CONFIG_DIGEST_MS;
	c->node_report_ms = CONFIG_NODE_REPORT_MS;
	c->kernel = true;
	c->probe = true;
	s = section(root, "sr", keys, err, errlen, &bad);
	if (!s)
		return -bad;
	if (!(cfg->roles & ROLE_SR)) {
		snprintf(err, errlen, "sr: roles has no \"sr\"");
		return -1;
	}
	if (json_object_object_get_ex(s, "srd", &v)) {
		if (!json_object_is_type(v, json_type_array) ||
		    !json_object_array_length(v) ||
		    json_object_array_length(v) > CONFIG_SR_SRDS) {
			snprintf(err, errlen, "sr.srd: expected an array of 1..%d",
				 CONFIG_SR_SRDS);
			return -1;
		}
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			struct json_object *d = json_object_array_get_idx(v, i), *n;

			snprintf(path, sizeof(path), "sr.srd[%zu]", i);
			if (!json_object_is_type(d, json_type_object)) {
				snprintf(err, errlen, "%s: expected an object", path);
				return -1;
			}
			if (only_keys(d, path, srd_keys, err, errlen))
				return -1;
			if (!json_object_object_get_ex(d, "node", &n)) {
				snprintf(err, errlen, "%s.node: required", path);
				return -1;
			}
			snprintf(path, sizeof(path), "sr.srd[%zu].node", i);
			if (get_str(n, path, c->srd[i].node, sizeof(c->srd[i].node),
				    err, errlen))
				return -1;
			snprintf(path, sizeof(path), "sr.srd[%zu]", i);
			if (get_address(d, path, "address", c->srd[i].address,
					sizeof(c->srd[i].address), err, errlen))
				return -1;
			c->nsrd = i + 1;
		}
	}
	if (json_object_object_get_ex(s, "heartbeat_ms", &v) &&
	    get_uint(v, "sr.heartbeat_ms", 100, 600000, &c->heartbeat_ms, err,
		     errlen))
		return -1;
	if (json_object_object_get_ex(s, "digest_interval_ms", &v)) {
		if (get_uint(v, "sr.digest_interval_ms", 0, 3600000,
			     &c->digest_interval_ms, err, errlen))
			return -1;
		if (c->digest_interval_ms && c->digest_interval_ms < 100) {
			snprintf(err, errlen, "sr.digest_interval_ms: %u is neither 0 (none) nor 100..3600000",
				 c->digest_interval_ms);
			return -1;
		}
	}
	if (json_object_object_get_ex(s, "node_report_ms", &v)) {
		if (get_uint(v, "sr.node_report_ms", 0, 3600000,
			     &c->node_report_ms, err, errlen))
			return -1;
		if (c->node_report_ms && c->node_report_ms < 100) {
			snprintf(err, errlen, "sr.node_report_ms: %u is neither 0 (none) nor 100..3600000",
				 c->node_report_ms);
			return -1;
		}
	}
	if (get_path(s, "sr", "state", c->state, sizeof(c->state), false, err,
		     errlen))
		return -1;
	if (json_object_object_get_ex(s, "kernel", &v)) {
		if (!json_object_is_type(v, json_type_boolean)) {
			snprintf(err, errlen, "sr.kernel: expected true or false");
			return -1;
		}
		c->kernel = json_object_get_boolean(v);
	}
	if (json_object_object_get_ex(s, "probe", &v)) {
		if (!json_object_is_type(v, json_type_boolean)) {
			snprintf(err, errlen, "sr.probe: expected true or false");
			return -1;
		}
		c->probe = json_object_get_boolean(v);
	}
	return get_rsvp(s, &c->rsvp, err, errlen);
}

/*
 * smo.election_* and smo.policies_key (the leader's set, relayed to
 * every controller's SMO): only where the registry is in etcd, the one place
 * several controllers share; with SQLite there is one controller, which
 * always leads, and a knob that does nothing is refused like a typo.
 */
static int get_election(struct json_object *s, struct agent_config *cfg,
			char *err, int errlen)
{
	static const char *const keys[] = {
		"election_key", "election_lease_s", "policies_key",
		"relay_max_bytes", NULL,
	};
	static const char srd_prefix[] = "/dmsc/srd/";	/* store_etcd.c's */
	struct smo_config *c = &cfg->smo;
	struct json_object *v;

	for (const char *const *k = keys; *k; k++)
		if (json_object_object_get_ex(s, *k, NULL) && !cfg->srd.etcd[0]) {
			snprintf(err, errlen, "smo.%s: the election needs srd.store.etcd (with SQLite the one SMO always leads)",
				 *k);
			return -1;
		}
	if (json_object_object_get_ex(s, "election_lease_s", &v) &&
	    get_uint(v, "smo.election_lease_s", 2, 60, &c->election_lease_s,
		     err, errlen))
		return -1;
	/* etcd refuses a request above 1.5 MiB (its default): room for the key */
	if (json_object_object_get_ex(s, "relay_max_bytes", &v) &&
	    get_uint(v, "smo.relay_max_bytes", 1024, CONFIG_RELAY_MAX_BYTES,
		     &c->relay_max_bytes, err, errlen))
		return -1;
	if (json_object_object_get_ex(s, "election_key", &v)) {
		if (get_str(v, "smo.election_key", c->election_key,
			    sizeof(c->election_key), err, errlen))
			return -1;
		/* the registry's store reads everything under its prefix */
		if (!strncmp(c->election_key, srd_prefix, strlen(srd_prefix))) {
			snprintf(err, errlen, "smo.election_key: \"%s\" is under the registry's prefix %s",
				 c->election_key, srd_prefix);
			return -1;
		}
	}
	if (json_object_object_get_ex(s, "policies_key", &v)) {
		if (get_str(v, "smo.policies_key", c->policies_key,
			    sizeof(c->policies_key), err, errlen))
			return -1;
		if (!strncmp(c->policies_key, srd_prefix, strlen(srd_prefix))) {
			snprintf(err, errlen, "smo.policies_key: \"%s\" is under the registry's prefix %s",
				 c->policies_key, srd_prefix);
			return -1;
		}
	}
	/* the relayed set must not be taken for the seat, nor replace it */
	if (!strcmp(c->policies_key, c->election_key)) {
		snprintf(err, errlen, "smo.policies_key: \"%s\" is smo.election_key too",
			 c->policies_key);
		return -1;
	}
	return 0;
}

static int get_smo(struct json_object *root, struct agent_config *cfg,
		   char *err, int errlen)
{
	static const char *const keys[] = {
		"policies", "election_key", "election_lease_s", "policies_key",
		"relay_max_bytes", NULL,
	};
	struct json_object *s;
	int bad;

	strcpy(cfg->smo.election_key, CONFIG_ELECTION_KEY);
	strcpy(cfg->smo.policies_key, CONFIG_POLICIES_KEY);
	cfg->smo.election_lease_s = CONFIG_ELECTION_LEASE_S;
	cfg->smo.relay_max_bytes = CONFIG_RELAY_MAX_BYTES;
	s = section(root, "smo", keys, err, errlen, &bad);
	if (!s)
		return -bad;
	if (!(cfg->roles & ROLE_SMO)) {
		snprintf(err, errlen, "smo: roles has no \"smo\"");
		return -1;
	}
	cfg->smo.set = true;
	return get_path(s, "smo", "policies", cfg->smo.policies,
			sizeof(cfg->smo.policies), false, err, errlen) ||
	       get_election(s, cfg, err, errlen) ? -1 : 0;
}

/*
 * A kid as token_sign() takes it (token.c's name_ok()): a DNS label,
 * 1..63 of a-z, 0-9 and '-', not starting or ending with '-'.
 */
static int get_kid(struct json_object *v, const char *path, char *dst,
		   size_t size, char *err, int errlen)
{
	size_t n;

	if (get_str(v, path, dst, size, err, errlen))
		return -1;
	n = strlen(dst);
	if (strspn(dst, "abcdefghijklmnopqrstuvwxyz0123456789-") != n ||
	    dst[0] == '-' || dst[n - 1] == '-') {
		snprintf(err, errlen, "%s: \"%s\" is not 1..63 of a-z, 0-9 and '-' (not first or last)",
			 path, dst);
		return -1;
	}
	return 0;
}

/* Printable ASCII without spaces, as a token's claims (token.h). */
static bool claim_text(const char *s)
{
	for (; *s; s++)
		if (*s <= ' ' || *s > '~')
			return false;
	return true;
}

static int get_grants(struct json_object *arr, struct aam_config *c, char *err,
		      int errlen)
{
	static const char *const keys[] = { "sub", "scope", "nodes", NULL };
	size_t n;

	if (!json_object_is_type(arr, json_type_array)) {
		snprintf(err, errlen, "aam.grants: expected an array");
		return -1;
	}
	n = json_object_array_length(arr);
	if (n > CONFIG_AAM_GRANTS) {
		snprintf(err, errlen, "aam.grants: more than %d", CONFIG_AAM_GRANTS);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		struct json_object *g = json_object_array_get_idx(arr, i), *v;
		struct aam_grant *a = &c->grants[i];
		char p[48];

		snprintf(p, sizeof(p), "aam.grants[%zu]", i);
		if (!json_object_is_type(g, json_type_object)) {
			snprintf(err, errlen, "%s: expected an object", p);
			return -1;
		}
		if (only_keys(g, p, keys, err, errlen))
			return -1;
		/* the asking peers' nodes: any, unless the grant says */
		snprintf(a->nodes, sizeof(a->nodes), "*");
		if (json_object_object_get_ex(g, "nodes", &v)) {
			char q[64];

			snprintf(q, sizeof(q), "%s.nodes", p);
			if (get_str(v, q, a->nodes, sizeof(a->nodes), err, errlen))
				return -1;
			if (!claim_text(a->nodes)) {
				snprintf(err, errlen, "%s: not printable ASCII without spaces", q);
				return -1;
			}
		}
		for (const char *const *k = keys; k < keys + 2; k++) {
			char q[64], *dst = *k == keys[0] ? a->sub : a->scope;

			snprintf(q, sizeof(q), "%s.%s", p, *k);
			if (!json_object_object_get_ex(g, *k, &v)) {
				snprintf(err, errlen, "%s: required", q);
				return -1;
			}
			if (get_str(v, q, dst, TOKEN_SUB_MAX, err, errlen))
				return -1;
			if (!claim_text(dst)) {
				snprintf(err, errlen, "%s: not printable ASCII without spaces", q);
				return -1;
			}
		}
		/* a scope that allows nothing is a typo, not a grant */
		if (!token_scope_allows(a->scope, a->scope)) {
			snprintf(err, errlen, "%s.scope: \"%s\" is neither an IPv6 ADDR/LEN nor \"*\"",
				 p, a->scope);
			return -1;
		}
		c->ngrants++;
	}
	return 0;
}

/*
 * aam.revoked_prefix: the etcd keys of the revoked jtis the AAMs of one
 * cluster share (aam_shared.h), a key per jti under it. Only with
 * srd.store.etcd; ends in '/' so that one jti's key is not the start of
 * another name; not over the registry's keys nor the SMO's, which its
 * reads would take for bad values.
 */
static int get_revoked_prefix(struct json_object *v, struct agent_config *cfg,
			      char *err, int errlen)
{
	static const char srd_prefix[] = "/dmsc/srd/";	/* store_etcd.c's */
	char *p = cfg->aam.revoked_prefix;
	size_t n;

	if (!cfg->srd.etcd[0]) {
		snprintf(err, errlen, "aam.revoked_prefix: needs srd.store.etcd (the revocations are shared through it)");
		return -1;
	}
	if (get_str(v, "aam.revoked_prefix", p, sizeof(cfg->aam.revoked_prefix),
		    err, errlen))
		return -1;
	n = strlen(p);
	if (!n || p[n - 1] != '/') {
		snprintf(err, errlen, "aam.revoked_prefix: \"%s\" must end in '/'", p);
		return -1;
	}
	for (const char *q = p; *q; q++)
		if (*q <= ' ' || *q > '~') {
			snprintf(err, errlen, "aam.revoked_prefix: not printable ASCII without spaces");
			return -1;
		}
	if (!strncmp(p, srd_prefix, n < strlen(srd_prefix) ? n : strlen(srd_prefix)) ||
	    !strncmp(cfg->smo.election_key, p, n) || !strncmp(cfg->smo.policies_key, p, n)) {
		snprintf(err, errlen, "aam.revoked_prefix: \"%s\" overlaps the registry's %s or the smo's keys",
			 p, srd_prefix);
		return -1;
	}
	return 0;
}

static int get_aam(struct json_object *root, struct agent_config *cfg,
		   char *err, int errlen)
{
	static const char *const keys[] = {
		"key", "kid", "lifetime_s", "grants", "revoked", "revoked_prefix",
		NULL,
	};
	struct aam_config *c = &cfg->aam;
	struct json_object *s, *v;
	int bad;

	strcpy(c->kid, CONFIG_AAM_KID);
	strcpy(c->revoked_prefix, CONFIG_AAM_REVOKED_PREFIX);
	c->lifetime_s = CONFIG_AAM_LIFETIME_S;
	s = section(root, "aam", keys, err, errlen, &bad);
	if (!s)
		return -bad;
	if (!(cfg->roles & ROLE_AAM)) {
		snprintf(err, errlen, "aam: roles has no \"aam\"");
		return -1;
	}
	c->set = true;
	if (get_path(s, "aam", "key", c->key, sizeof(c->key), true, err, errlen) ||
	    get_path(s, "aam", "revoked", c->revoked, sizeof(c->revoked), false,
		     err, errlen))
		return -1;
	if (json_object_object_get_ex(s, "revoked_prefix", &v) &&
	    get_revoked_prefix(v, cfg, err, errlen))
		return -1;
	if (json_object_object_get_ex(s, "kid", &v) &&
	    get_kid(v, "aam.kid", c->kid, sizeof(c->kid), err, errlen))
		return -1;
	if (json_object_object_get_ex(s, "lifetime_s", &v) &&
	    get_uint(v, "aam.lifetime_s", 1, TOKEN_MAX_LIFETIME, &c->lifetime_s,
		     err, errlen))
		return -1;
	if (!json_object_object_get_ex(s, "grants", &v)) {
		snprintf(err, errlen, "aam.grants: required (an empty list denies everything)");
		return -1;
	}
	return get_grants(v, c, err, errlen);
}

static int get_tokens(struct json_object *root, struct agent_config *cfg,
		      char *err, int errlen)
{
	static const char *const keys[] = { "aam_key", "kid", "skew_s", NULL };
	struct tokens_config *c = &cfg->tokens;
	struct json_object *s, *v;
	int bad;

	c->skew_s = CONFIG_TOKENS_SKEW_S;
	s = section(root, "tokens", keys, err, errlen, &bad);
	if (!s)
		return -bad;
	if (!(cfg->roles & (ROLE_SR | ROLE_MG))) {
		snprintf(err, errlen, "tokens: only the sr and mg roles verify tokens");
		return -1;
	}
	c->enabled = true;
	if (get_path(s, "tokens", "aam_key", c->aam_key, sizeof(c->aam_key),
		     true, err, errlen))
		return -1;
	if (json_object_object_get_ex(s, "kid", &v) &&
	    get_kid(v, "tokens.kid", c->kid, sizeof(c->kid), err, errlen))
		return -1;
	if (json_object_object_get_ex(s, "skew_s", &v) &&
	    get_uint(v, "tokens.skew_s", 0, 300, &c->skew_s, err, errlen))
		return -1;
	return 0;
}

static int get_control(struct json_object *root, struct agent_config *cfg,
		       char *err, int errlen)
{
	struct json_object *v;

	if (!json_object_object_get_ex(root, "control", &v))
		return 0;
	if (get_str(v, "control", cfg->control, sizeof(cfg->control), err,
		    errlen))
		return -1;
	if (cfg->control[0] != '/') {
		snprintf(err, errlen, "control: \"%s\" is not an absolute path",
			 cfg->control);
		return -1;
	}
	return 0;
}

/*
 * A list of SRDs, [ { "node", "address" }... ] of 1..@max, at @path
 * (sr.srd, mg.srd).
 */
static int get_srd_list(struct json_object *v, const char *path, size_t max,
			char (*node)[64], size_t node_stride,
			char (*addr)[128], size_t addr_stride, size_t *n,
			char *err, int errlen)
{
	static const char *const srd_keys[] = { "node", "address", NULL };
	char p[64];

	if (!json_object_is_type(v, json_type_array) ||
	    !json_object_array_length(v) || json_object_array_length(v) > max) {
		snprintf(err, errlen, "%s: expected an array of 1..%zu", path, max);
		return -1;
	}
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		struct json_object *d = json_object_array_get_idx(v, i), *x;
		char *nd = (char *)node + i * node_stride;
		char *ad = (char *)addr + i * addr_stride;

		snprintf(p, sizeof(p), "%s[%zu]", path, i);
		if (!json_object_is_type(d, json_type_object)) {
			snprintf(err, errlen, "%s: expected an object", p);
			return -1;
		}
		if (only_keys(d, p, srd_keys, err, errlen))
			return -1;
		if (!json_object_object_get_ex(d, "node", &x)) {
			snprintf(err, errlen, "%s.node: required", p);
			return -1;
		}
		snprintf(p, sizeof(p), "%s[%zu].node", path, i);
		if (get_str(x, p, nd, 64, err, errlen))
			return -1;
		snprintf(p, sizeof(p), "%s[%zu]", path, i);
		if (get_address(d, p, "address", ad, 128, err, errlen))
			return -1;
		*n = i + 1;
	}
	return 0;
}

static int get_mg(struct json_object *root, struct agent_config *cfg,
		  char *err, int errlen)
{
	static const char *const keys[] = {
		"srd", "listen", "digest_interval_ms", "connections", "log_per_s",
		"connections_per_ip", "token_nodes", "https", NULL,
	};
	struct mg_config *c = &cfg->mg;
	struct json_object *s, *v;
	int bad;

	c->digest_interval_ms = CONFIG_DIGEST_MS;
	c->connections = CONFIG_MG_CONNECTIONS;
	c->log_per_s = CONFIG_MG_LOG_PER_S;
	c->connections_per_ip = CONFIG_MG_CONNECTIONS_PER_IP;
	snprintf(c->token_nodes, sizeof(c->token_nodes), "%s", cfg->node);
	s = section(root, "mg", keys, err, errlen, &bad);
	if (!s) {
		if (!bad && (cfg->roles & ROLE_MG)) {
			snprintf(err, errlen, "mg: required by the mg role");
			return -1;
		}
		return -bad;
	}
	if (!(cfg->roles & ROLE_MG)) {
		snprintf(err, errlen, "mg: roles has no \"mg\"");
		return -1;
	}
	c->set = true;
	if (!json_object_object_get_ex(s, "srd", &v)) {
		snprintf(err, errlen, "mg.srd: required (the SRDs the gateway learns routes from)");
		return -1;
	}
	if (get_srd_list(v, "mg.srd", CONFIG_MG_SRDS, &c->srd[0].node,
			 sizeof(c->srd[0]), &c->srd[0].address, sizeof(c->srd[0]),
			 &c->nsrd, err, errlen) ||
	    get_address(s, "mg", "listen", c->listen, sizeof(c->listen), err,
			errlen))
		return -1;
	if (json_object_object_get_ex(s, "digest_interval_ms", &v)) {
		if (get_uint(v, "mg.digest_interval_ms", 0, 3600000,
			     &c->digest_interval_ms, err, errlen))
			return -1;
		if (c->digest_interval_ms && c->digest_interval_ms < 100) {
			snprintf(err, errlen, "mg.digest_interval_ms: %u is neither 0 (none) nor 100..3600000",
				 c->digest_interval_ms);
			return -1;
		}
	}
	if (json_object_object_get_ex(s, "connections", &v) &&
	    get_uint(v, "mg.connections", 1, 10000, &c->connections, err,
		     errlen))
		return -1;
	if (json_object_object_get_ex(s, "log_per_s", &v) &&
	    get_uint(v, "mg.log_per_s", 0, 1000, &c->log_per_s, err, errlen))
		return -1;
	if (json_object_object_get_ex(s, "connections_per_ip", &v) &&
	    get_uint(v, "mg.connections_per_ip", 0, 10000, &c->connections_per_ip,
		     err, errlen))
		return -1;
	if (json_object_object_get_ex(s, "https", &v)) {
		static const char *const hkeys[] = { "cert", "key", NULL };

		if (!json_object_is_type(v, json_type_object)) {
			snprintf(err, errlen, "mg.https: expected an object { cert, key }");
			return -1;
		}
		if (only_keys(v, "mg.https", hkeys, err, errlen) ||
		    get_path(v, "mg.https", "cert", c->https_cert, sizeof(c->https_cert),
			     true, err, errlen) ||
		    get_path(v, "mg.https", "key", c->https_key, sizeof(c->https_key),
			     true, err, errlen))
			return -1;
	}
	if (json_object_object_get_ex(s, "token_nodes", &v)) {
		if (get_str(v, "mg.token_nodes", c->token_nodes,
			    sizeof(c->token_nodes), err, errlen))
			return -1;
		if (!claim_text(c->token_nodes)) {
			snprintf(err, errlen, "mg.token_nodes: not printable ASCII without spaces");
			return -1;
		}
	}
	return 0;
}

static const char *const known_keys[] = {
	"node", "roles", "controller", "listen", "telemetry", "tls", "srd",
	"sr", "control", "smo", "mg", "aam", "tokens",
};

int config_parse(const char *text, struct agent_config *cfg, char *err,
		 int errlen)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *root;
	int ret = -1;

	memset(cfg, 0, sizeof(*cfg));
	if (!tok) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	root = json_tokener_parse_ex(tok, text, (int)strlen(text));
	if (!root || json_tokener_get_error(tok) != json_tokener_success) {
		snprintf(err, errlen, "not valid JSON: %s (at byte %zu)",
			 json_tokener_error_desc(json_tokener_get_error(tok)),
			 json_tokener_get_parse_end(tok));
		goto out;
	}
	if (!json_object_is_type(root, json_type_object)) {
		snprintf(err, errlen, "expected a JSON object at the top");
		goto out;
	}
	/* An unknown key is most likely a typo: refuse it, by name. */
	json_object_object_foreach(root, key, val) {
		size_t i;

		(void)val;
		for (i = 0; i < sizeof(known_keys) / sizeof(*known_keys); i++)
			if (!strcmp(key, known_keys[i]))
				break;
		if (i == sizeof(known_keys) / sizeof(*known_keys)) {
			snprintf(err, errlen, "%s: unknown field", key);
			goto out;
		}
	}
	if (get_string(root, "node", cfg->node, sizeof(cfg->node), true, err,
		       errlen) ||
	    get_roles(root, &cfg->roles, err, errlen) ||
	    get_string(root, "controller", cfg->controller,
		       sizeof(cfg->controller), false, err, errlen) ||
	    get_string(root, "listen", cfg->listen, sizeof(cfg->listen), false,
		       err, errlen) ||
	    get_telemetry(root, cfg, err, errlen) ||
	    get_tls(root, cfg, err, errlen) ||
	    get_srd(root, cfg, err, errlen) ||
	    get_sr(root, cfg, err, errlen) ||
	    get_smo(root, cfg, err, errlen) ||
	    get_mg(root, cfg, err, errlen) ||
	    get_aam(root, cfg, err, errlen) ||
	    get_tokens(root, cfg, err, errlen) ||
	    get_control(root, cfg, err, errlen))
		goto out;
	/* two listeners on one path: the second would take the first's */
	if (cfg->sr.rsvp.enabled && cfg->control[0] &&
	    !strcmp(cfg->sr.rsvp.control, cfg->control)) {
		snprintf(err, errlen, "sr.rsvp.control: \"%s\" is the agent's control socket too",
			 cfg->control);
		goto out;
	}
	/* the smo pushes over the connections the SRs open to the srd */
	if ((cfg->roles & ROLE_SMO) && !(cfg->roles & ROLE_SRD)) {
		snprintf(err, errlen, "roles: \"smo\" needs \"srd\" in the same agent (it pushes over the SRs' connections to the srd)");
		goto out;
	}
	/* the aam answers over the connections the SRs open to the srd */
	if (cfg->aam.set && !(cfg->roles & ROLE_SRD)) {
		snprintf(err, errlen, "roles: \"aam\" needs \"srd\" in the same agent (it answers over the SRs' connections to the srd)");
		goto out;
	}
	/* the reports ride the sr's connection to its controller */
	if (!strcmp(cfg->telemetry.report_to, CONFIG_REPORT_TO_SMO) &&
	    !cfg->sr.nsrd) {
		snprintf(err, errlen, "telemetry.report_to: \"smo\" needs sr.srd (the reports go over the connection to the controller)");
		goto out;
	}
	/* talking to other agents is mutual TLS or nothing */
	if (!cfg->tls.set && ((cfg->roles & ROLE_SRD) || cfg->sr.nsrd ||
			      cfg->mg.nsrd)) {
		snprintf(err, errlen, "tls: required by %s",
			 cfg->roles & ROLE_SRD ? "the srd role" :
			 cfg->sr.nsrd ? "sr.srd" : "mg.srd");
		goto out;
	}
	/* the gateway answers nothing but 401 without the AAM's key */
	if ((cfg->roles & ROLE_MG) && !cfg->tokens.enabled) {
		snprintf(err, errlen, "tokens: required by the mg role (the AAM's key its requests' tokens are checked with)");
		goto out;
	}
	ret = 0;
out:
	json_object_put(root);
	json_tokener_free(tok);
	return ret;
}

int config_load(const char *path, struct agent_config *cfg, char *err,
		int errlen)
{
	char buf[65536];
	size_t n;
	FILE *f;

	f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	if (!feof(f)) {
		fclose(f);
		snprintf(err, errlen, "%s: larger than %zu bytes", path,
			 sizeof(buf) - 1);
		return -1;
	}
	fclose(f);
	buf[n] = '\0';
	return config_parse(buf, cfg, err, errlen);
}
