// SPDX-License-Identifier: GPL-2.0
/*
 * Three etcd members on loopback, for the tests of the etcd store and the
 * SMO election: data under a temporary directory, ports picked from the
 * process id and retried if taken, logs (warnings only) beside the data.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../etcd.h"
#include "etcd_cluster.h"

char cluster_endpoints[256];
pid_t cluster_member[3];
static char dir[] = "/tmp/dmsc-etcd.XXXXXX";
static int base;

int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return t.tv_sec * 1000ll + t.tv_nsec / 1000000;
}

void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&t, NULL);
}

static void start_member(int k)
{
	char name[16], data[128], client[64], peer[64], cluster[256], logf[128];

	snprintf(name, sizeof(name), "m%d", k);
	snprintf(data, sizeof(data), "%s/%s", dir, name);
	snprintf(logf, sizeof(logf), "%s/%s.log", dir, name);
	snprintf(client, sizeof(client), "http://127.0.0.1:%d", base + k);
	snprintf(peer, sizeof(peer), "http://127.0.0.1:%d", base + 10 + k);
	snprintf(cluster, sizeof(cluster),
		 "m0=http://127.0.0.1:%d,m1=http://127.0.0.1:%d,m2=http://127.0.0.1:%d",
		 base + 10, base + 11, base + 12);
	fflush(stdout);	/* or the child's freopen() writes our buffer */
	cluster_member[k] = fork();
	if (cluster_member[k] == 0) {
		if (!freopen(logf, "w", stderr) || !freopen("/dev/null", "w", stdout))
			_exit(127);
		execlp("etcd", "etcd", "--name", name, "--data-dir", data,
		       "--listen-client-urls", client, "--advertise-client-urls", client,
		       "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		       "--initial-cluster", cluster, "--initial-cluster-state", "new",
		       "--initial-cluster-token", dir, "--log-level", "warn",
		       (char *)NULL);
		_exit(127);
	}
}

void cluster_kill(int k)
{
	if (cluster_member[k] > 0) {
		kill(cluster_member[k], SIGKILL);
		waitpid(cluster_member[k], NULL, 0);
		cluster_member[k] = 0;
	}
}

static void stop_all(void)
{
	int k;

	for (k = 0; k < 3; k++)
		cluster_kill(k);
}

int cluster_up(char *err, size_t errlen)
{
	struct etcd *e;
	struct json_object *req, *resp;
	int tries, k, t;

	if (!mkdtemp(dir)) {
		snprintf(err, errlen, "mkdtemp failed");
		return -1;
	}
	for (tries = 0; tries < 5; tries++) {
		base = 20000 + (getpid() * 37 + tries * 1009) % 30000;
		snprintf(cluster_endpoints, sizeof(cluster_endpoints),
			 "http://127.0.0.1:%d,http://127.0.0.1:%d,http://127.0.0.1:%d",
			 base, base + 1, base + 2);
		for (k = 0; k < 3; k++)
			start_member(k);
		e = etcd_open(cluster_endpoints, err, errlen);
		for (t = 0; e && t < 100; t++) {
			req = json_object_new_object();
			json_object_object_add(req, "key", etcd_b64("/up", 3));
			json_object_object_add(req, "value", etcd_b64("1", 1));
			k = etcd_call(e, "/v3/kv/put", req, &resp, err, errlen);
			json_object_put(req);
			if (!k) {
				json_object_put(resp);
				etcd_close(e);
				return 0;
			}
			sleep_ms(200);
		}
		etcd_close(e);
		stop_all();
	}
	return -1;
}

void cluster_down(void)
{
	char cmd[64];

	stop_all();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
}
