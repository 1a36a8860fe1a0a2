/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The SMO's table of the SRs' periodic reports, QoS (type 5) or node
 * state (type 4), one table per type: the last one of each node, with the
 * reports it missed (smo_qos.c).
 */
#ifndef DMSC_SMO_QOS_H
#define DMSC_SMO_QOS_H

#include <stdint.h>
#include <json-c/json.h>

#include "msg.h"

struct smo_qos;

/* @what names the reports in the log: "QoS report", "node state report". */
struct smo_qos *smo_qos_new(const char *what);
void smo_qos_free(struct smo_qos *q);
/*
 * @m: a message of the table's type agent_msg_accept() let through, decoded from
 * @payload (@len bytes), at @now_ms.
 */
void smo_qos_report(struct smo_qos *q, const struct msg *m,
		    const unsigned char *payload, size_t len, int64_t now_ms);
/*
 * { reports, refused, bytes, nodes: [ { node, reports, missed, restarts,
 *   seq, age_ms, bytes, last } ] }, last the report as sent
 */
struct json_object *smo_qos_show(const struct smo_qos *q, int64_t now_ms);

#endif /* DMSC_SMO_QOS_H */
