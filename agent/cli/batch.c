// SPDX-License-Identifier: GPL-2.0
/*
 * dmsc -batch FILE, as ip -batch: one command line per line (without
 * "dmsc" and without options), "-" for stdin, "#" starts a comment, blank
 * lines are skipped, a line ending in "\" goes on on the next. Lines run
 * in order on one netlink socket; the first that fails stops the batch,
 * unless -force. Errors name FILE:LINE.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "err.h"

#define BATCH_MAX_WORDS 512

int batch_split(char *line, char **argv, int max)
{
	char *in = line, *out = line;
	int argc = 0;

	for (;;) {
		char quote = 0;

		while (*in == ' ' || *in == '\t' || *in == '\n' || *in == '\r')
			in++;
		if (!*in || *in == '#')
			break;
		if (argc == max) {
			errorf("too many words (at most %d)", max);
			return -1;
		}
		/* A word is copied down over its quotes, in place. */
		argv[argc++] = out;
		for (; *in; in++) {
			if (quote) {
				if (*in == quote)
					quote = 0;
				else
					*out++ = *in;
			} else if (*in == '"' || *in == '\'') {
				quote = *in;
			} else if (*in == ' ' || *in == '\t' || *in == '\n' ||
				   *in == '\r') {
				break;
			} else {
				*out++ = *in;
			}
		}
		if (quote) {
			errorf("unterminated %c quote", quote);
			return -1;
		}
		/* The separator read here is past everything written. */
		if (*in)
			in++;
		*out++ = '\0';
	}
	return argc;
}

/*
 * Does @s end in a "\" that continues it? Not one inside a comment: a
 * commented-out line must not swallow the next, as in ip -batch.
 */
static bool continues(const char *s, size_t len)
{
	bool word_start = true;
	char quote = 0;
	size_t i;

	if (!len || s[len - 1] != '\\')
		return false;
	for (i = 0; i < len; i++) {
		if (quote) {
			quote = s[i] == quote ? 0 : quote;
		} else if (s[i] == '"' || s[i] == '\'') {
			quote = s[i];
		} else if (s[i] == '#' && word_start) {
			return false;
		}
		word_start = !quote && (s[i] == ' ' || s[i] == '\t');
	}
	return true;
}

/*
 * Read one command, joining lines that end in "\". @lineno advances by
 * the lines read; @first is the line the command started on.
 */
static ssize_t read_command(FILE *f, char **buf, size_t *cap,
			    unsigned int *lineno, unsigned int *first)
{
	char *part = NULL;
	size_t part_cap = 0, len = 0;
	ssize_t n;

	*first = *lineno + 1;
	for (;;) {
		n = getline(&part, &part_cap, f);
		if (n < 0)
			break;
		(*lineno)++;
		if (n && part[n - 1] == '\n')
			part[--n] = '\0';
		if (len + n + 1 > *cap) {
			char *p = realloc(*buf, len + n + 1);

			if (!p) {
				free(part);
				return -1;
			}
			*buf = p;
			*cap = len + n + 1;
		}
		memcpy(*buf + len, part, n + 1);
		len += n;
		if (!continues(*buf, len))
			break;
		(*buf)[--len] = ' ';
	}
	free(part);
	return n < 0 && !len ? -1 : (ssize_t)len;
}

int cli_batch(struct cli *cli, const char *path, bool force)
{
	bool is_stdin = !strcmp(path, "-");
	unsigned int lineno = 0, first;
	const char *name = is_stdin ? "stdin" : path;
	char *line = NULL, *argv[BATCH_MAX_WORDS], where[4096 + 16];
	size_t cap = 0;
	int ret = EXIT_OK, argc, r;
	FILE *f;

	f = is_stdin ? stdin : fopen(path, "r");
	if (!f) {
		errorf("-batch \"%s\": %s", path, strerror(errno));
		return EXIT_FAIL;
	}
	while (read_command(f, &line, &cap, &lineno, &first) >= 0) {
		unsigned int errs = err_count();

		snprintf(where, sizeof(where), "%s:%u", name, first);
		err_set_where(where);
		err_set_command(NULL, NULL);
		argc = batch_split(line, argv, BATCH_MAX_WORDS);
		if (argc == 0)
			continue;
		r = argc < 0 ? EXIT_USAGE : cli_run(cli, argc, argv);
		if (!r)
			continue;
		/* A command that printed its own error without FILE:LINE. */
		if (err_count() == errs) {
			err_set_command(NULL, NULL);
			errorf("command failed");
		}
		if (ret == EXIT_OK)
			ret = r;
		if (!force)
			break;
	}
	err_set_where(NULL);
	free(line);
	if (!is_stdin)
		fclose(f);
	return ret;
}
