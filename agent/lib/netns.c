// SPDX-License-Identifier: GPL-2.0
/* dmsc -n NETNS: enter a namespace ip netns created; see netns.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "netns.h"

/* The rules of iproute2's is_valid_netns_name(): one path component. */
int netns_check_name(const char *name)
{
	size_t len = strlen(name);

	if (!len || len >= NAME_MAX || strchr(name, '/') ||
	    !strcmp(name, ".") || !strcmp(name, "..")) {
		errorf("netns \"%s\": not a valid namespace name", name);
		return -1;
	}
	return 0;
}

int netns_enter(const char *name)
{
	char path[sizeof(NETNS_RUN_DIR) + NAME_MAX + 1];
	int fd;

	if (netns_check_name(name))
		return -1;
	snprintf(path, sizeof(path), "%s/%s", NETNS_RUN_DIR, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			errorf("netns \"%s\": no such namespace (%s does not exist; see ip netns list)",
			       name, path);
		else
			errorf("netns \"%s\": %s: %s", name, path,
			       strerror(errno));
		return -1;
	}
	if (setns(fd, CLONE_NEWNET)) {
		/* A plain file at the path is not a namespace: EINVAL. */
		errorf("netns \"%s\": cannot enter it: %s", name,
		       strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}
