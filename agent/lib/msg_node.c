// SPDX-License-Identifier: GPL-2.0
/*
 * Type 4, the node state report (msg_node.h): its JSON form both ways,
 * and the reading of this host's load and links that fills it.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "msg_node.h"

static const char *const opers[] = {
	"unknown", "notpresent", "down", "lowerlayerdown", "testing",
	"dormant", "up", NULL,
};
static const char *const inst_states[] = { "pending", "active", "faulted", NULL };

static bool one_of(const char *s, const char *const *names)
{
	for (size_t i = 0; names[i]; i++)
		if (!strcmp(s, names[i]))
			return true;
	return false;
}

void node_state_free(struct node_state *s)
{
	free(s->links);
	free(s->insts);
	s->links = NULL;
	s->insts = NULL;
	s->nlinks = s->ninsts = 0;
}

/* --- this host ---------------------------------------------------------- */

/* The first line of @path, without its newline. 0 or -1. */
static int read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -1;
	ok = fgets(buf, (int)size, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static int read_meminfo(struct node_state *s)
{
	FILE *f = fopen("/proc/meminfo", "re");
	char line[128];
	unsigned long long v;
	int got = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && got != 3) {
		if (sscanf(line, "MemTotal: %llu kB", &v) == 1) {
			s->mem_total_kb = v;
			got |= 1;
		} else if (sscanf(line, "MemAvailable: %llu kB", &v) == 1) {
			s->mem_available_kb = v;
			got |= 2;
		}
	}
	fclose(f);
	if (got != 3)
		return -1;
	/* both read at one instant of the kernel's, but be sure */
	if (s->mem_available_kb > s->mem_total_kb)
		s->mem_available_kb = s->mem_total_kb;
	return 0;
}

static int cmp_link(const void *a, const void *b)
{
	return strcmp(((const struct node_link *)a)->dev,
		      ((const struct node_link *)b)->dev);
}

static int read_links(struct node_state *s)
{
	DIR *d = opendir("/sys/class/net");
	struct dirent *e;
	char path[96], v[64];

	if (!d)
		return -1;
	free(s->links);
	s->nlinks = 0;
	s->links = calloc(NODE_MAX_LINKS, sizeof(*s->links));
	if (!s->links) {
		closedir(d);
		return -1;
	}
	while ((e = readdir(d)) && s->nlinks < NODE_MAX_LINKS) {
		struct node_link *l = &s->links[s->nlinks];
		char *end;
		long long n;

		if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof(l->dev))
			continue;
		memset(l, 0, sizeof(*l));
		snprintf(l->dev, sizeof(l->dev), "%s", e->d_name);
		snprintf(path, sizeof(path), "/sys/class/net/%s/operstate", l->dev);
		if (read_line(path, v, sizeof(v)) || !one_of(v, opers))
			continue;
		memcpy(l->oper, v, strlen(v) + 1);	/* one of opers */
		snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", l->dev);
		if (read_line(path, v, sizeof(v)))
			continue;
		n = strtoll(v, &end, 10);
		if (*end || n < 0 || n > UINT32_MAX)
			continue;
		l->mtu = (uint32_t)n;
		/* EINVAL for a link without a speed (veth, lo, down): none */
		snprintf(path, sizeof(path), "/sys/class/net/%s/speed", l->dev);
		if (!read_line(path, v, sizeof(v))) {
			n = strtoll(v, &end, 10);
			if (!*end && n > 0 && n <= (long long)NODE_MAX_SPEED_MBPS) {
				l->has_speed = true;
				l->speed_mbps = (uint64_t)n;
			}
		}
		s->nlinks++;
	}
	closedir(d);
	qsort(s->links, s->nlinks, sizeof(*s->links), cmp_link);
	return 0;
}

int node_state_read_host(struct node_state *s, char *err, size_t errlen)
{
	struct timespec ts;
	char line[128];
	long cpus;

	clock_gettime(CLOCK_REALTIME, &ts);
	s->time_ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	if (read_line("/proc/loadavg", line, sizeof(line)) ||
	    sscanf(line, "%lf %lf %lf", &s->loadavg[0], &s->loadavg[1],
		   &s->loadavg[2]) != 3) {
		snprintf(err, errlen, "/proc/loadavg: unreadable");
		return -1;
	}
	for (int i = 0; i < 3; i++)
		if (!(s->loadavg[i] >= 0 && s->loadavg[i] <= NODE_MAX_LOADAVG))
			s->loadavg[i] = NODE_MAX_LOADAVG;
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	s->cpus = cpus < 1 ? 1 : cpus > NODE_MAX_CPUS ? NODE_MAX_CPUS : (uint64_t)cpus;
	if (read_meminfo(s)) {
		snprintf(err, errlen, "/proc/meminfo: no MemTotal or MemAvailable");
		return -1;
	}
	if (read_links(s)) {
		snprintf(err, errlen, "/sys/class/net: unreadable");
		return -1;
	}
	return 0;
}

/* --- encode ------------------------------------------------------------ */

static int node_encode(struct json_object *root, const void *body, char *err,
		       size_t errlen)
{
	const struct node_state *s = body;
	struct json_object *load, *avg, *arr;

	if (s->nlinks > NODE_MAX_LINKS || s->ninsts > NODE_MAX_INSTANCES) {
		snprintf(err, errlen, "more than %d links or %d instances",
			 NODE_MAX_LINKS, NODE_MAX_INSTANCES);
		return -1;
	}
	json_object_object_add(root, "time_ms", json_object_new_uint64(s->time_ms));
	load = json_object_new_object();
	avg = json_object_new_array();
	for (int i = 0; i < 3; i++)
		json_object_array_add(avg, json_object_new_double(s->loadavg[i]));
	json_object_object_add(load, "loadavg", avg);
	json_object_object_add(load, "cpus", json_object_new_uint64(s->cpus));
	json_object_object_add(load, "mem_total_kb",
			       json_object_new_uint64(s->mem_total_kb));
	json_object_object_add(load, "mem_available_kb",
			       json_object_new_uint64(s->mem_available_kb));
	json_object_object_add(root, "load", load);
	arr = json_object_new_array();
	for (size_t i = 0; i < s->nlinks; i++) {
		const struct node_link *l = &s->links[i];
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "dev", json_object_new_string(l->dev));
		json_object_object_add(o, "oper", json_object_new_string(l->oper));
		json_object_object_add(o, "mtu", json_object_new_uint64(l->mtu));
		if (l->has_speed)
			json_object_object_add(o, "speed_mbps",
					       json_object_new_uint64(l->speed_mbps));
		json_object_array_add(arr, o);
	}
	json_object_object_add(root, "links", arr);
	arr = json_object_new_array();
	for (size_t i = 0; i < s->ninsts; i++) {
		const struct node_inst *n = &s->insts[i];
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "id", json_object_new_string(n->id));
		json_object_object_add(o, "state", json_object_new_string(n->state));
		if (n->has_rtt)
			json_object_object_add(o, "registration_rtt_ms",
					       json_object_new_uint64(n->registration_rtt_ms));
		if (n->has_probe) {
			struct json_object *p = json_object_new_object();

			json_object_object_add(p, "sent", json_object_new_uint64(n->probe_sent));
			json_object_object_add(p, "lost", json_object_new_uint64(n->probe_lost));
			if (n->has_probe_rtt) {
				json_object_object_add(p, "rtt_us",
						       json_object_new_uint64(n->probe_rtt_us));
				json_object_object_add(p, "srtt_us",
						       json_object_new_uint64(n->probe_srtt_us));
			}
			json_object_object_add(o, "probe", p);
		}
		json_object_array_add(arr, o);
	}
	json_object_object_add(root, "instances", arr);
	return 0;
}

/* --- decode ------------------------------------------------------------ */

static const char *const load_keys[] = {
	"loadavg", "cpus", "mem_total_kb", "mem_available_kb", NULL,
};
static const char *const link_keys[] = { "dev", "oper", "mtu", "speed_mbps", NULL };
static const char *const inst_keys[] = {
	"id", "state", "registration_rtt_ms", "probe", NULL,
};
static const char *const probe_keys[] = { "sent", "lost", "rtt_us", "srtt_us", NULL };

static int bad(char *err, size_t errlen, const char *path, const char *what,
	       const char *v)
{
	snprintf(err, errlen, "%s: \"%s\" %s", path, v, what);
	return -1;
}

static int get_load(struct json_object *root, struct node_state *s, char *err,
		    size_t errlen)
{
	struct json_object *load, *avg;
	char p[32];

	if (msg_get_object(root, "", "load", &load, err, errlen) ||
	    msg_keys_only(load, "load", load_keys, NULL, err, errlen) ||
	    msg_get_array(load, "load", "loadavg", 3, &avg, err, errlen))
		return -1;
	if (json_object_array_length(avg) != 3) {
		snprintf(err, errlen, "load.loadavg: expected 3 numbers (1, 5 and 15 minutes)");
		return -1;
	}
	for (size_t i = 0; i < 3; i++) {
		struct json_object *w = json_object_new_object();
		int rc;

		/* one element as a key, for msg_get_double's checks and error */
		json_object_object_add(w, "x", json_object_get(
			json_object_array_get_idx(avg, i)));
		snprintf(p, sizeof(p), "load.loadavg[%zu]", i);
		rc = msg_get_double(w, "", "x", 0, NODE_MAX_LOADAVG,
				    &s->loadavg[i], err, errlen);
		json_object_put(w);
		if (rc) {
			/* "x: what" into "load.loadavg[i]: what" */
			char what[256];

			snprintf(what, sizeof(what), "%s", err + 3);
			snprintf(err, errlen, "%s: %s", p, what);
			return -1;
		}
	}
	if (msg_get_u64(load, "load", "cpus", NODE_MAX_CPUS, &s->cpus, err, errlen) ||
	    msg_get_u64(load, "load", "mem_total_kb", UINT64_MAX, &s->mem_total_kb,
			err, errlen) ||
	    msg_get_u64(load, "load", "mem_available_kb", UINT64_MAX,
			&s->mem_available_kb, err, errlen))
		return -1;
	if (!s->cpus) {
		snprintf(err, errlen, "load.cpus: 0, a node has one at least");
		return -1;
	}
	if (s->mem_available_kb > s->mem_total_kb) {
		snprintf(err, errlen, "load.mem_available_kb: %llu is above mem_total_kb %llu",
			 (unsigned long long)s->mem_available_kb,
			 (unsigned long long)s->mem_total_kb);
		return -1;
	}
	return 0;
}

static int get_link(struct json_object *o, const char *path,
		    struct node_link *l, char *err, size_t errlen)
{
	uint64_t v;

	if (!json_object_is_type(o, json_type_object)) {
		snprintf(err, errlen, "%s: expected an object", path);
		return -1;
	}
	if (msg_keys_only(o, path, link_keys, NULL, err, errlen) ||
	    msg_get_string(o, path, "dev", l->dev, sizeof(l->dev), err, errlen) ||
	    msg_get_string(o, path, "oper", l->oper, sizeof(l->oper), err, errlen))
		return -1;
	if (!one_of(l->oper, opers)) {
		snprintf(err, errlen, "%s.oper: \"%s\" is not an operstate (up, down, unknown, ...)",
			 path, l->oper);
		return -1;
	}
	if (msg_get_u64(o, path, "mtu", UINT32_MAX, &v, err, errlen))
		return -1;
	l->mtu = (uint32_t)v;
	if (json_object_object_get_ex(o, "speed_mbps", NULL)) {
		if (msg_get_u64(o, path, "speed_mbps", NODE_MAX_SPEED_MBPS,
				&l->speed_mbps, err, errlen))
			return -1;
		if (!l->speed_mbps) {
			snprintf(err, errlen, "%s.speed_mbps: 0 (leave it out when unknown)",
				 path);
			return -1;
		}
		l->has_speed = true;
	}
	return 0;
}

/* An instance's "probe": L <= S, the two round trips together or neither. */
static int get_probe(struct json_object *o, const char *path,
		     struct node_inst *n, char *err, size_t errlen)
{
	struct json_object *p;
	char q[64];
	int rtt, srtt;

	snprintf(q, sizeof(q), "%s.probe", path);
	if (msg_get_object(o, path, "probe", &p, err, errlen) ||
	    msg_keys_only(p, q, probe_keys, NULL, err, errlen) ||
	    msg_get_u64(p, q, "sent", UINT64_MAX, &n->probe_sent, err, errlen) ||
	    msg_get_u64(p, q, "lost", UINT64_MAX, &n->probe_lost, err, errlen))
		return -1;
	if (n->probe_lost > n->probe_sent) {
		snprintf(err, errlen, "%s.lost: %llu is above sent %llu", q,
			 (unsigned long long)n->probe_lost,
			 (unsigned long long)n->probe_sent);
		return -1;
	}
	rtt = json_object_object_get_ex(p, "rtt_us", NULL);
	srtt = json_object_object_get_ex(p, "srtt_us", NULL);
	if (rtt != srtt) {
		snprintf(err, errlen, "%s.%s: missing (rtt_us and srtt_us come together)",
			 q, rtt ? "srtt_us" : "rtt_us");
		return -1;
	}
	if (rtt && (msg_get_u64(p, q, "rtt_us", NODE_MAX_PROBE_RTT_US,
				&n->probe_rtt_us, err, errlen) ||
		    msg_get_u64(p, q, "srtt_us", NODE_MAX_PROBE_RTT_US,
				&n->probe_srtt_us, err, errlen)))
		return -1;
	n->has_probe = true;
	n->has_probe_rtt = rtt;
	return 0;
}

static int get_inst(struct json_object *o, const char *path,
		    struct node_inst *n, char *err, size_t errlen)
{
	if (!json_object_is_type(o, json_type_object)) {
		snprintf(err, errlen, "%s: expected an object", path);
		return -1;
	}
	if (msg_keys_only(o, path, inst_keys, NULL, err, errlen) ||
	    msg_get_string(o, path, "id", n->id, sizeof(n->id), err, errlen) ||
	    msg_get_string(o, path, "state", n->state, sizeof(n->state), err,
			   errlen))
		return -1;
	if (!one_of(n->state, inst_states)) {
		char p[64];

		snprintf(p, sizeof(p), "%s.state", path);
		return bad(err, errlen, p, "is not pending, active or faulted",
			   n->state);
	}
	if (json_object_object_get_ex(o, "registration_rtt_ms", NULL)) {
		/* an hour: a lease is 3 heartbeats of at most 10 minutes */
		if (msg_get_u64(o, path, "registration_rtt_ms", 3600000,
				&n->registration_rtt_ms, err, errlen))
			return -1;
		n->has_rtt = true;
	}
	if (json_object_object_get_ex(o, "probe", NULL))
		return get_probe(o, path, n, err, errlen);
	return 0;
}

static int node_decode(struct json_object *root, void *body, char *err,
		       size_t errlen)
{
	struct node_state *s = body;
	struct json_object *links, *insts;
	char path[48];

	if (msg_get_u64(root, "", "time_ms", UINT64_MAX, &s->time_ms, err, errlen) ||
	    get_load(root, s, err, errlen) ||
	    msg_get_array(root, "", "links", NODE_MAX_LINKS, &links, err, errlen) ||
	    msg_get_array(root, "", "instances", NODE_MAX_INSTANCES, &insts, err,
			  errlen))
		return -1;
	s->links = calloc(json_object_array_length(links) + 1, sizeof(*s->links));
	s->insts = calloc(json_object_array_length(insts) + 1, sizeof(*s->insts));
	if (!s->links || !s->insts) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < json_object_array_length(links); i++) {
		snprintf(path, sizeof(path), "links[%zu]", i);
		if (get_link(json_object_array_get_idx(links, i), path,
			     &s->links[i], err, errlen))
			return -1;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(s->links[j].dev, s->links[i].dev)) {
				snprintf(path, sizeof(path), "links[%zu].dev", i);
				return bad(err, errlen, path, "is named twice",
					   s->links[i].dev);
			}
		s->nlinks++;
	}
	for (size_t i = 0; i < json_object_array_length(insts); i++) {
		snprintf(path, sizeof(path), "instances[%zu]", i);
		if (get_inst(json_object_array_get_idx(insts, i), path,
			     &s->insts[i], err, errlen))
			return -1;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(s->insts[j].id, s->insts[i].id)) {
				snprintf(path, sizeof(path), "instances[%zu].id", i);
				return bad(err, errlen, path, "is named twice",
					   s->insts[i].id);
			}
		s->ninsts++;
	}
	return 0;
}

static void node_free(void *body)
{
	node_state_free(body);
}

static const char *const node_keys[] = {
	"time_ms", "load", "links", "instances", NULL,
};

const struct msg_type msg_node_type = {
	.type = MSG_NODE_STATE,
	.name = "node-state-report",
	.max_len = NODE_MAX_LEN,
	.keys = node_keys,
	.body_size = sizeof(struct node_state),
	.decode = node_decode,
	.encode = node_encode,
	.free = node_free,
};
