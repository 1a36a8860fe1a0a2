/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sr role's telemetry (the "telemetry" section of the configuration):
 * attach the RoCEv2 program to the devices named, serve /metrics, and
 * every report_interval_ms send a type-5 QoS report (msg_qos.h) to
 * report_to: a Unix socket, or ("smo") the sr role's TLS connection to
 * its controller. Stopping detaches exactly what starting attached.
 */
#ifndef DMSC_SR_TELEMETRY_H
#define DMSC_SR_TELEMETRY_H

#include <json-c/json.h>

#include "config.h"

struct sr_telemetry;

/*
 * For report_to "smo": queue one encoded frame (@frame, @len bytes with
 * its 4-byte length) to the controller. 0, or -1 with @why when the
 * connection is not up, not to an smo, or SR_TELEMETRY_BACKLOG bytes
 * wait on it: that report is dropped (its sequence number is not reused,
 * so the SMO counts it missed).
 */
typedef int (*sr_telemetry_send_fn)(void *arg, const char *frame, size_t len,
				    const char **why);
/*
 * A report is queued only while less than this waits on the connection:
 * the SR's lease renewals go on the same stream and must not wait behind
 * reports (one may be 1.5 MB).
 */
#define SR_TELEMETRY_BACKLOG	(64u << 10)

/*
 * Attach, serve, take the first snapshot; NULL (all undone) on failure.
 * @send and @arg: how reports reach "smo" (NULL otherwise).
 */
struct sr_telemetry *sr_telemetry_start(const struct telemetry_config *cfg,
					const char *node,
					sr_telemetry_send_fn send, void *arg);
/* The reports made, queued (to the socket or connection) and dropped. */
struct json_object *sr_telemetry_show(const struct sr_telemetry *t);
/* The report timer: poll it, then call sr_telemetry_tick(). -1: none. */
int sr_telemetry_fd(const struct sr_telemetry *t);
void sr_telemetry_tick(struct sr_telemetry *t);
/* Stop serving, detach what start attached, free. */
void sr_telemetry_stop(struct sr_telemetry *t);

#endif /* DMSC_SR_TELEMETRY_H */
