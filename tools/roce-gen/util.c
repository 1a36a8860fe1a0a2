// SPDX-License-Identifier: GPL-2.0
/* Small helpers both modes use: netns guard, JSON output, usage errors. */
#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "roce_gen.h"

bool in_named_netns(void)
{
	static const char *const dirs[] = { "/run/netns", "/var/run/netns" };
	struct stat self, st;
	char path[PATH_MAX];
	struct dirent *d;

	if (stat("/proc/self/ns/net", &self))
		return false;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		DIR *dir = opendir(dirs[i]);

		if (!dir)
			continue;
		while ((d = readdir(dir))) {
			if (d->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dirs[i], d->d_name);
			/* An "ip netns add" name is a bind mount of the nsfs inode. */
			if (!stat(path, &st) && st.st_ino == self.st_ino &&
			    st.st_dev == self.st_dev) {
				closedir(dir);
				return true;
			}
		}
		closedir(dir);
	}
	return false;
}

int json_write(struct json_object *o, const char *path)
{
	const char *s = json_object_to_json_string_ext(o,
			JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED);
	FILE *f = stdout;

	if (path && strcmp(path, "-")) {
		f = fopen(path, "w");
		if (!f) {
			perror(path);
			return -1;
		}
	}
	fprintf(f, "%s\n", s);
	if (f != stdout)
		return fclose(f) ? -1 : 0;
	return fflush(f) ? -1 : 0;
}

void die_usage(void (*usage)(void), const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "roce-gen: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	if (usage)
		usage();
	exit(2);
}
