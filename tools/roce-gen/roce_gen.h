/* SPDX-License-Identifier: GPL-2.0 */
/* What the two modes and main.c share. */
#ifndef ROCE_GEN_H
#define ROCE_GEN_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

int send_main(int argc, char **argv);
int sink_main(int argc, char **argv);
void send_usage(void);
void sink_usage(void);

static inline uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * True when we run in a namespace made by "ip netns add" (one bind-mounted
 * under /run/netns): the sender's guard against sending into a real network.
 */
bool in_named_netns(void);
/* Write @o pretty-printed to @path, or stdout when @path is NULL or "-". */
int json_write(struct json_object *o, const char *path);
/* Print "roce-gen: MODE: error" style messages. */
void die_usage(void (*usage)(void), const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

#endif
