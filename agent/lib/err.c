// SPDX-License-Identifier: GPL-2.0
/* The context in front of every error message; see err.h. */
#include <stdarg.h>
#include <stdio.h>

#include "err.h"

static const char *where, *object, *verb;
static unsigned int count;

void err_set_where(const char *w)
{
	where = w;
}

void err_set_command(const char *o, const char *v)
{
	object = o;
	verb = v;
}

const char *err_object(void)
{
	return object;
}

void errorf(const char *fmt, ...)
{
	va_list ap;

	fputs("dmsc: ", stderr);
	if (where)
		fprintf(stderr, "%s: ", where);
	if (object)
		fprintf(stderr, "%s%s%s: ", object, verb ? " " : "",
			verb ? verb : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	count++;
}

unsigned int err_count(void)
{
	return count;
}
