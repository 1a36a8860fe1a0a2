// SPDX-License-Identifier: GPL-2.0
/* See agent_proc.h. */
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "agent_proc.h"

const char *agent_bin;
const char *agents_dir;

int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

int free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	getsockname(fd, (struct sockaddr *)&sa, &l);
	close(fd);
	return ntohs(sa.sin_port);
}

void write_config(const char *node, const char *fmt, ...)
{
	char p[256];
	va_list ap;
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s.json", agents_dir, node);
	f = fopen(p, "w");
	if (!f) {
		printf("# %s: %m\n", p);
		return;
	}
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

pid_t spawn(const char *node)
{
	char cfg[256], log[256];
	pid_t pid = fork();
	int fd;

	if (pid)
		return pid;
	snprintf(cfg, sizeof(cfg), "%s/%s.json", agents_dir, node);
	snprintf(log, sizeof(log), "%s/%s.log", agents_dir, node);
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
	dup2(fd, 1);
	dup2(fd, 2);
	execl(agent_bin, agent_bin, "-c", cfg, (char *)NULL);
	_exit(127);
}

void stop(pid_t *p)
{
	if (*p > 0) {
		kill(*p, SIGKILL);
		waitpid(*p, NULL, 0);
	}
	*p = 0;
}

void stop_clean(pid_t *p)
{
	if (*p > 0) {
		kill(*p, SIGTERM);
		if (!WAIT(5000, waitpid(*p, NULL, WNOHANG) == *p)) {
			kill(*p, SIGKILL);
			waitpid(*p, NULL, 0);
		}
	}
	*p = 0;
}

struct json_object *ask_raw(const char *node, const char *req)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap), *more;
	struct json_object *r;
	ssize_t n;
	int fd;

	snprintf(un.sun_path, sizeof(un.sun_path), "%s/%s.sock", agents_dir, node);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (!buf || connect(fd, (struct sockaddr *)&un, sizeof(un)) ||
	    write(fd, req, strlen(req)) < 0 || write(fd, "\n", 1) < 0) {
		close(fd);
		free(buf);
		return NULL;
	}
	/* the answer is read to its end: a show of a registry at scale is MiBs */
	while ((n = read(fd, buf + len, cap - 1 - len)) > 0) {
		len += (size_t)n;
		if (len == cap - 1) {
			more = realloc(buf, cap * 2);
			if (!more)
				break;
			buf = more;
			cap *= 2;
		}
	}
	close(fd);
	buf[len] = '\0';
	r = json_tokener_parse(buf);
	free(buf);
	return r;
}

struct json_object *ask(const char *node, const char *req)
{
	struct json_object *r = ask_raw(node, req), *v, *d = NULL;

	if (r && json_object_object_get_ex(r, "data", &v))
		d = json_object_get(v);
	else
		printf("# %s: %.200s -> %.300s\n", node, req,
		       r ? json_object_to_json_string(r) : "(no answer)");
	json_object_put(r);
	return d;
}

struct json_object *path_get(struct json_object *o, const char *a,
			     const char *b)
{
	struct json_object *x = NULL, *y = NULL;

	if (o && json_object_object_get_ex(o, a, &x) && b)
		json_object_object_get_ex(x, b, &y);
	return b ? y : x;
}
