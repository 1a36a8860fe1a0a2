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

#include <stdbool.h>

#define TELEMETRY_BPFFS		"/sys/fs/bpf"
#define TELEMETRY_PIN_ROOT	TELEMETRY_BPFFS "/dmsc"
/* The tc filter's handle and priority, on clsact ingress or egress. */
#define TELEMETRY_TC_HANDLE	0xd35c
#define TELEMETRY_TC_PRIO	0xd35c

enum telemetry_verb { TELEMETRY_HELP, TELEMETRY_ATTACH, TELEMETRY_DETACH,
		      TELEMETRY_SHOW };

/* One command line, parsed (cmd_telemetry.c) before any kernel access. */
struct telemetry_req {
	enum telemetry_verb verb;
	const char *dev;	/* NULL: show every device */
	int dir;		/* enum rt_dir */
};

/* Run @req in the current namespace; prints errors. Exit code (cmd.h). */
int telemetry_run(const struct telemetry_req *req);

#endif /* DMSC_TELEMETRY_H */
