/* SPDX-License-Identifier: GPL-2.0 */
/*
 * From two telemetry snapshots (telemetry.h) to a type-5 QoS report
 * (msg_qos.h): the changes of every QP's counters between them, the
 * interval's throughput and loss rate, and their sums per device.
 */
#ifndef DMSC_TELEMETRY_QOS_H
#define DMSC_TELEMETRY_QOS_H

#include "msg_qos.h"
#include "telemetry.h"

/*
 * @prev is the snapshot before @cur in the same namespace (empty, with
 * mono_ns 0, if there is none: the interval is then 0 and the rates 0).
 *
 * Counters restart: a device detached and attached again (its attach
 * time differs) restarts its QPs from 0, and a QP deleted and made again
 * has a new first-packet time. Such a QP, and one @prev does not have,
 * changed by its whole count since it (re)started, as Prometheus' rate()
 * takes a counter reset: so a restart never makes a change negative, nor
 * one that counts what an earlier interval already had. The lost PSNs
 * fall when late packets fill a gap: a fall is a change of 0.
 *
 * Fills @r (free with qos_report_free()); 0, or -1 out of memory.
 */
int telemetry_qos_report(const struct telemetry_snap *prev,
			 const struct telemetry_snap *cur,
			 struct qos_report *r);

#endif /* DMSC_TELEMETRY_QOS_H */
