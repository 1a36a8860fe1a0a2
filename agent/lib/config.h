/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dmsc-agent configuration (JSON). Roles are those of DMSC-LMT
 * (draft-yang-dmsc-distributed-model): a node runs any mix of them.
 */
#ifndef DMSC_CONFIG_H
#define DMSC_CONFIG_H

#include <stdbool.h>

enum agent_role {
	ROLE_SR  = 1 << 0,	/* service router: programs this node's kernel */
	ROLE_SRD = 1 << 1,	/* service registry and discovery */
	ROLE_SMO = 1 << 2,	/* service mesh orchestrator: runs MPTE */
	ROLE_AAM = 1 << 3,	/* authentication and authorisation */
};

#define CONFIG_TM_MAX_DEVS	64
#define CONFIG_TM_PORT		9791	/* dmsc telemetry serve's too */
#define CONFIG_TM_INTERVAL_MS	1000

/* sr: the RoCEv2 telemetry the agent attaches, serves and reports. */
struct telemetry_config {
	bool enabled;			/* the section is there */
	size_t ndevs;
	struct {
		char dev[16];		/* IF_NAMESIZE */
		int dir;		/* enum rt_dir: 0 ingress, 1 egress */
	} devs[CONFIG_TM_MAX_DEVS];
	bool prometheus;		/* serve /metrics (default) */
	char address[64];		/* IPv4 or IPv6 literal */
	unsigned int port;
	unsigned int report_interval_ms;
	char report_to[108];		/* Unix socket path; "" = no reports */
};

struct agent_config {
	char node[64];		/* this node's name */
	unsigned int roles;	/* enum agent_role bits */
	char controller[128];	/* host:port of the SRD/SMO; "" = none */
	char listen[128];	/* host:port to serve on; "" = none */
	struct telemetry_config telemetry;
};

/*
 * Parse @text into @cfg. On error returns -1 with a message naming the
 * field ("roles[1]: unknown role \"foo\"") in @err.
 */
int config_parse(const char *text, struct agent_config *cfg, char *err,
		 int errlen);
int config_load(const char *path, struct agent_config *cfg, char *err,
		int errlen);
const char *config_role_name(enum agent_role role);

#endif /* DMSC_CONFIG_H */
