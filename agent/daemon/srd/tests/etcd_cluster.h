/* SPDX-License-Identifier: GPL-2.0 */
/* A three-member etcd cluster on loopback for tests: Debian's etcd-server. */
#ifndef DMSC_TEST_ETCD_CLUSTER_H
#define DMSC_TEST_ETCD_CLUSTER_H

#include <stdint.h>
#include <sys/types.h>

extern char cluster_endpoints[256];
extern pid_t cluster_member[3];

/* Start the members on free ports and wait until a write succeeds. */
int cluster_up(char *err, size_t errlen);
/* SIGKILL member @k (0-2). */
void cluster_kill(int k);
/* Stop every member and remove their data. */
void cluster_down(void);

int64_t now_ms(void);
void sleep_ms(long ms);

#endif
