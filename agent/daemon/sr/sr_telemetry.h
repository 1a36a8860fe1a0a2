/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sr role's telemetry (the "telemetry" section of the configuration):
 * attach the RoCEv2 program to the devices named, serve /metrics, and
 * every report_interval_ms send a type-5 QoS report (msg_qos.h) to
 * report_to. Stopping detaches exactly what starting attached.
 */
#ifndef DMSC_SR_TELEMETRY_H
#define DMSC_SR_TELEMETRY_H

#include "config.h"

struct sr_telemetry;

/* Attach, serve, take the first snapshot; NULL (all undone) on failure. */
struct sr_telemetry *sr_telemetry_start(const struct telemetry_config *cfg,
					const char *node);
/* The report timer: poll it, then call sr_telemetry_tick(). -1: none. */
int sr_telemetry_fd(const struct sr_telemetry *t);
void sr_telemetry_tick(struct sr_telemetry *t);
/* Stop serving, detach what start attached, free. */
void sr_telemetry_stop(struct sr_telemetry *t);

#endif /* DMSC_SR_TELEMETRY_H */
