// SPDX-License-Identifier: GPL-2.0
/*
 * The QoS reports (signalling type 5, msg_qos.h) the SRs send the SMO over
 * their connection to the controller (telemetry.report_to "smo"): the last
 * report of each node, for the closed loop that will re-plan from it and
 * for `dmsc agent show qos`.
 *
 * A node's reports are numbered by its agent from 1, one per report made,
 * whether or not it could be sent, so a number skipped is a report lost
 * (the SR was cut off, or its queue to us was full) and is counted, not
 * guessed; a number at or below the last one is a restarted agent, which
 * counts from 1 again. The header's node is the sender's certificate's
 * (agent_msg_accept()), so a node can only report for itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "msg_qos.h"
#include "smo_qos.h"

/* One entry per reporting node: more nodes than a WAN has routers. */
#define SMO_QOS_NODES	4096
/*
 * The last reports kept, as sent: a report may carry 4,096 QPs (about
 * 1.5 MB), so the table is bounded in bytes as well as in nodes.
 */
#define SMO_QOS_BYTES	(64u << 20)

struct smo_qos_node {
	char node[MSG_NODE_MAX];
	uint64_t reports, missed, restarts, last_seq;
	int64_t last_ms;		/* when the last one came */
	struct json_object *last;	/* its body, as sent */
	size_t last_len;		/* its payload's bytes */
	struct smo_qos_node *next;
};

struct smo_qos {
	struct smo_qos_node *nodes;
	size_t n, bytes;		/* nodes; last_len summed */
	uint64_t reports, refused;
	bool full_said, bytes_said;
};

struct smo_qos *smo_qos_new(void)
{
	return calloc(1, sizeof(struct smo_qos));
}

void smo_qos_free(struct smo_qos *q)
{
	if (!q)
		return;
	while (q->nodes) {
		struct smo_qos_node *x = q->nodes;

		q->nodes = x->next;
		json_object_put(x->last);
		free(x);
	}
	free(q);
}

static struct smo_qos_node *node_get(struct smo_qos *q, const char *node)
{
	struct smo_qos_node *x;

	for (x = q->nodes; x; x = x->next)
		if (!strcmp(x->node, node))
			return x;
	if (q->n >= SMO_QOS_NODES) {
		if (!q->full_said)
			agent_log("smo: QoS reports from more than %d nodes: %s's dropped",
				  SMO_QOS_NODES, node);
		q->full_said = true;
		return NULL;
	}
	x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	snprintf(x->node, sizeof(x->node), "%s", node);
	x->next = q->nodes;
	q->nodes = x;
	q->n++;
	return x;
}

void smo_qos_report(struct smo_qos *q, const struct msg *m, size_t len,
		    int64_t now_ms)
{
	struct json_object *body;
	struct smo_qos_node *x;
	char err[256];

	x = node_get(q, m->node);
	if (!x) {
		q->refused++;
		return;
	}
	if (q->bytes - x->last_len + len > SMO_QOS_BYTES) {
		/* Its previous report stays; said once. */
		if (!q->bytes_said)
			agent_log("smo: QoS reports kept reach %u bytes: %s's report %llu dropped",
				  SMO_QOS_BYTES, m->node, (unsigned long long)m->seq);
		q->bytes_said = true;
		q->refused++;
		return;
	}
	body = json_object_new_object();

	if (!body || m->type->encode(body, m->body, err, sizeof(err))) {
		json_object_put(body);
		q->refused++;
		agent_log("smo: QoS report %llu from %s: %s",
			  (unsigned long long)m->seq, m->node,
			  body ? err : "out of memory");
		return;
	}
	if (x->reports && m->seq <= x->last_seq) {
		x->restarts++;
		agent_log("smo: %s reports from %llu again (was at %llu): its agent restarted",
			  m->node, (unsigned long long)m->seq,
			  (unsigned long long)x->last_seq);
	} else if (x->reports && m->seq > x->last_seq + 1) {
		x->missed += m->seq - x->last_seq - 1;
	}
	x->reports++;
	x->last_seq = m->seq;
	x->last_ms = now_ms;
	json_object_put(x->last);
	x->last = body;
	q->bytes = q->bytes - x->last_len + len;
	x->last_len = len;
	q->reports++;
}

struct json_object *smo_qos_show(const struct smo_qos *q, int64_t now_ms)
{
	struct json_object *o = json_object_new_object();
	struct json_object *arr = json_object_new_array();

	for (const struct smo_qos_node *x = q->nodes; x; x = x->next) {
		struct json_object *e = json_object_new_object();

		json_object_object_add(e, "node", json_object_new_string(x->node));
		json_object_object_add(e, "reports", json_object_new_uint64(x->reports));
		json_object_object_add(e, "missed", json_object_new_uint64(x->missed));
		json_object_object_add(e, "restarts", json_object_new_uint64(x->restarts));
		json_object_object_add(e, "seq", json_object_new_uint64(x->last_seq));
		json_object_object_add(e, "age_ms", json_object_new_int64(now_ms - x->last_ms));
		json_object_object_add(e, "last", json_object_get(x->last));
		json_object_array_add(arr, e);
	}
	json_object_object_add(o, "reports", json_object_new_uint64(q->reports));
	json_object_object_add(o, "refused", json_object_new_uint64(q->refused));
	json_object_object_add(o, "nodes", arr);
	return o;
}
