/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RoCEv2 telemetry (ebpf/roce_telemetry.bpf.c) loaded, attached, read and
 * detached through its libbpf skeleton. The program and its maps are
 * pinned per network namespace under TELEMETRY_PIN_ROOT/netns-COOKIE, so
 * a later dmsc (show, detach) finds them; the last detach in a namespace
 * removes the pins, its tc filter and the clsact qdisc dmsc added.
 */
#ifndef DMSC_TELEMETRY_H
#define DMSC_TELEMETRY_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "roce_telemetry.h"

#define TELEMETRY_BPFFS		"/sys/fs/bpf"
#define TELEMETRY_PIN_ROOT	TELEMETRY_BPFFS "/dmsc"
/* The tc filter's handle and priority, on clsact ingress or egress. */
#define TELEMETRY_TC_HANDLE	0xd35c
#define TELEMETRY_TC_PRIO	0xd35c

/* dmsc telemetry serve: Prometheus text on http://127.0.0.1:PORT/metrics. */
#define TELEMETRY_HTTP_PORT	9791

enum telemetry_verb { TELEMETRY_HELP, TELEMETRY_ATTACH, TELEMETRY_DETACH,
		      TELEMETRY_SHOW, TELEMETRY_SERVE };

/* One command line, parsed (cmd_telemetry.c) before any kernel access. */
struct telemetry_req {
	enum telemetry_verb verb;
	const char *dev;	/* NULL: show every device */
	int dir;		/* enum rt_dir */
	const char *address;	/* serve: listen here (IPv4 or IPv6 literal) */
	uint16_t port;		/* serve */
};

/* Run @req in the current namespace; prints errors. Exit code (cmd.h). */
int telemetry_run(const struct telemetry_req *req);

/* What the maps hold at one moment, as show and serve print it. */
struct telemetry_qp {
	struct rt_qp_key k;
	struct rt_qp v;
};

struct telemetry_dev {
	struct rt_dev_key k;
	struct rt_attach at;
	struct rt_dev sum;		/* over the CPUs */
	char name[IF_NAMESIZE];
};

struct telemetry_snap {
	struct telemetry_dev *devs;	/* sorted by ifindex, direction */
	size_t ndevs;
	struct telemetry_qp *qps;	/* sorted by device, QP, port, source */
	size_t nqps;
	uint64_t mono_ns, real_ns;	/* when it was taken */
};

/*
 * The QP's rate estimate at @now (CLOCK_MONOTONIC ns): the program's
 * averages of a window's bytes, packets and length, with the window in
 * progress folded in once it is due, as the program would at the next
 * packet, and then divided: bytes (packets) over ns. An idle QP's rate so
 * decays to near zero within RT_RATE_STALE windows. Bytes and packets per
 * second; 0 before the first window closes.
 */
void telemetry_qp_rate(const struct rt_qp *q, uint64_t now, double *Bps,
		       double *pps);

/* @ifindex 0: every device. Nothing attached is an empty snapshot. 0/-1. */
int telemetry_snapshot(struct telemetry_snap *s, int ifindex);
void telemetry_snap_free(struct telemetry_snap *s);
/* telemetry_prom.c: the snapshot in Prometheus' text format. */
void telemetry_prom(FILE *f, const struct telemetry_snap *s);
/*
 * GET /metrics on ADDRESS:PORT from a thread of libmicrohttpd's, until
 * telemetry_http_stop(): for dmsc telemetry serve and dmsc-agent. NULL
 * after printing the error.
 */
struct MHD_Daemon;
struct MHD_Daemon *telemetry_http_start(const char *address, uint16_t port);
void telemetry_http_stop(struct MHD_Daemon *d);
int telemetry_serve(const struct telemetry_req *req);

#endif /* DMSC_TELEMETRY_H */
