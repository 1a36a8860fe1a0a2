// SPDX-License-Identifier: GPL-2.0
/* dmsc-agent's log lines (log.h). */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "log.h"

void agent_log(const char *fmt, ...)
{
	char ts[32];
	time_t now = time(NULL);
	struct tm tm;
	va_list ap;

	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	printf("%s dmsc-agent: ", ts);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}
