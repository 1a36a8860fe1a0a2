/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the tests that run dmsc-agent as processes share (test_roles.c,
 * test_aam.c, test_mg.c): a directory holding each node's config
 * (NODE.json), log (NODE.log) and control socket (NODE.sock); starting and
 * stopping an agent on it; one request to its control socket; a wait for
 * a condition. The test sets agent_bin and agents_dir before the first
 * use.
 */
#ifndef DMSC_TESTS_AGENT_PROC_H
#define DMSC_TESTS_AGENT_PROC_H

#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>
#include <json-c/json.h>

extern const char *agent_bin;	/* the dmsc-agent to run */
extern const char *agents_dir;	/* where the nodes' files are */

int64_t mono_ms(void);

/* Wait up to @ms for @cond, looking every 20 ms; true if it held. */
#define WAIT(ms, cond) ({						\
	int64_t _t = mono_ms() + (ms);					\
	int _ok;							\
	while (!(_ok = (cond)) && mono_ms() < _t)			\
		usleep(20000);						\
	_ok; })

/* system() of a command made by printf. */
int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A TCP port of loopback free now, for an agent to listen on. */
int free_port(void);

/* agents_dir/@node.json, its text made by printf. */
void write_config(const char *node, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* dmsc-agent -c agents_dir/@node.json, its output appended to @node.log. */
pid_t spawn(const char *node);
/* SIGKILL: an agent that dies, as on a crash; *@p is 0 after. */
void stop(pid_t *p);
/*
 * SIGTERM, SIGKILL if it has not stopped within 5 s: an agent stopped
 * cleanly, so that ASan has its say in the log.
 */
void stop_clean(pid_t *p);

/*
 * One request to @node's control socket. ask_raw(): the whole answer;
 * ask(): its "data" (NULL, with the answer as a KTAP diagnostic, if it
 * has none, as for a refusal). Put either with json_object_put().
 */
struct json_object *ask_raw(const char *node, const char *req);
struct json_object *ask(const char *node, const char *req);

/* @o.@a, or @o.@a.@b if @b is given; NULL where a member is missing. */
struct json_object *path_get(struct json_object *o, const char *a,
			     const char *b);

#endif /* DMSC_TESTS_AGENT_PROC_H */
