// SPDX-License-Identifier: GPL-2.0
/*
 * The QoS reports (signalling type 5, msg_qos.h) the SRs send the SMO over
 * their connection to the controller (telemetry.report_to "smo"), and
 * their node state reports (type 4, msg_node.h, every sr.node_report_ms),
 * each type in a table of its own: the last report of each node, for the
 * closed loop that will re-plan from it and for `dmsc agent show qos` and
 * `dmsc agent show nodes`.
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
 * The last reports kept, as sent (the text, parsed again for show only:
 * a json-c tree would take several times the bytes): a report may carry
 * 4,096 QPs (about 1.5 MB), so the table is bounded in bytes too.
 */
#define SMO_QOS_BYTES	(64u << 20)

struct smo_qos_node {
	char node[MSG_NODE_MAX];
	uint64_t reports, missed, restarts, last_seq;
	int64_t last_ms;		/* when the last one came */
	char *last;			/* the report as sent, not NUL-ended */
	size_t last_len;
	struct smo_qos_node *next;
};

struct smo_qos {
	const char *what;		/* "QoS report", for the log */
	struct smo_qos_node *nodes;
	size_t n, bytes;		/* nodes; last_len summed */
	uint64_t reports, refused;
	bool full_said, bytes_said;	/* logged once, until it passes again */
};

struct smo_qos *smo_qos_new(const char *what)
{
	struct smo_qos *q = calloc(1, sizeof(struct smo_qos));

	if (q)
		q->what = what;
	return q;
}

void smo_qos_free(struct smo_qos *q)
{
	if (!q)
		return;
	while (q->nodes) {
		struct smo_qos_node *x = q->nodes;

		q->nodes = x->next;
		free(x->last);
		free(x);
	}
	free(q);
}

static struct smo_qos_node *node_find(struct smo_qos *q, const char *node)
{
	for (struct smo_qos_node *x = q->nodes; x; x = x->next)
		if (!strcmp(x->node, node))
			return x;
	return NULL;
}

/* Refused: counted, and said once until a report is taken again. */
static void refuse(struct smo_qos *q, bool *said, const struct msg *m,
		   const char *why)
{
	if (!*said)
		agent_log("smo: %s %llu from %s dropped: %s", q->what,
			  (unsigned long long)m->seq, m->node, why);
	*said = true;
	q->refused++;
}

void smo_qos_report(struct smo_qos *q, const struct msg *m,
		    const unsigned char *payload, size_t len, int64_t now_ms)
{
	struct smo_qos_node *x = node_find(q, m->node);
	size_t old = x ? x->last_len : 0;
	char *copy;

	if (q->bytes - old + len > SMO_QOS_BYTES) {
		/* Its previous report stays. */
		refuse(q, &q->bytes_said, m, "the reports kept reach 64 MiB");
		return;
	}
	if (!x && q->n >= SMO_QOS_NODES) {
		refuse(q, &q->full_said, m, "reports from 4096 nodes kept already");
		return;
	}
	copy = malloc(len);
	if (!x)
		x = calloc(1, sizeof(*x));
	if (!copy || !x) {
		free(copy);
		if (x && !x->node[0])
			free(x);
		agent_log("smo: %s from %s: out of memory", q->what, m->node);
		q->refused++;
		return;
	}
	if (!x->node[0]) {
		snprintf(x->node, sizeof(x->node), "%s", m->node);
		x->next = q->nodes;
		q->nodes = x;
		q->n++;
	}
	memcpy(copy, payload, len);
	if (x->reports && m->seq <= x->last_seq) {
		x->restarts++;
		agent_log("smo: %s's %ss from %llu again (was at %llu): its agent restarted",
			  m->node, q->what, (unsigned long long)m->seq,
			  (unsigned long long)x->last_seq);
	} else if (x->reports && m->seq > x->last_seq + 1) {
		x->missed += m->seq - x->last_seq - 1;
	}
	x->reports++;
	x->last_seq = m->seq;
	x->last_ms = now_ms;
	free(x->last);
	x->last = copy;
	q->bytes = q->bytes - old + len;
	x->last_len = len;
	q->reports++;
	q->full_said = q->bytes_said = false;
}

struct json_object *smo_qos_show(const struct smo_qos *q, int64_t now_ms)
{
	struct json_object *o = json_object_new_object();
	struct json_object *arr = json_object_new_array();

	for (const struct smo_qos_node *x = q->nodes; x; x = x->next) {
		struct json_object *e = json_object_new_object();
		struct json_tokener *tok = json_tokener_new();
		struct json_object *last = NULL;

		/* Read whole by the strict reader before it was kept. */
		if (tok)
			last = json_tokener_parse_ex(tok, x->last, (int)x->last_len);
		json_tokener_free(tok);
		json_object_object_add(e, "node", json_object_new_string(x->node));
		json_object_object_add(e, "reports", json_object_new_uint64(x->reports));
		json_object_object_add(e, "missed", json_object_new_uint64(x->missed));
		json_object_object_add(e, "restarts", json_object_new_uint64(x->restarts));
		json_object_object_add(e, "seq", json_object_new_uint64(x->last_seq));
		json_object_object_add(e, "age_ms", json_object_new_int64(now_ms - x->last_ms));
		json_object_object_add(e, "bytes", json_object_new_uint64(x->last_len));
		json_object_object_add(e, "last", last);
		json_object_array_add(arr, e);
	}
	json_object_object_add(o, "reports", json_object_new_uint64(q->reports));
	json_object_object_add(o, "refused", json_object_new_uint64(q->refused));
	json_object_object_add(o, "bytes", json_object_new_uint64(q->bytes));
	json_object_object_add(o, "nodes", arr);
	return o;
}
