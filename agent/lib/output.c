// SPDX-License-Identifier: GPL-2.0
/* Text or JSON output through one set of calls; JSON is built with json-c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <inttypes.h>
#include <math.h>
#include <json-c/json.h>

#include "output.h"

#define OUT_DEPTH 16

static bool json_mode, json_pretty;
static struct json_object *stack[OUT_DEPTH];
static int depth;	/* stack[depth - 1] is the open container */

void out_init(bool json, bool pretty)
{
	json_mode = json;
	json_pretty = pretty;
	depth = 0;
}

bool out_is_json(void)
{
	return json_mode;
}

/* Attach @o to the open container under @key (or append it). */
static void attach(const char *key, struct json_object *o)
{
	struct json_object *top;

	if (!depth) {
		/* A bare value at top level: keep it as the document. */
		stack[depth++] = o;
		return;
	}
	top = stack[depth - 1];
	if (json_object_is_type(top, json_type_array))
		json_object_array_add(top, o);
	else
		json_object_object_add(top, key ? key : "", o);
}

static void push(const char *key, struct json_object *o)
{
	if (depth >= OUT_DEPTH) {
		fprintf(stderr, "dmsc: output nested too deep\n");
		abort();
	}
	if (depth)
		attach(key, json_object_get(o));
	stack[depth++] = o;
}

static void pop(void)
{
	if (depth > 1) {
		json_object_put(stack[--depth]);
		return;
	}
	/* Closing the document prints it. */
	out_flush();
}

void out_open_object(const char *key)
{
	if (json_mode)
		push(key, json_object_new_object());
}

void out_close_object(void)
{
	if (json_mode)
		pop();
}

void out_open_array(const char *key)
{
	if (json_mode)
		push(key, json_object_new_array());
}

void out_close_array(void)
{
	if (json_mode)
		pop();
}

void out_uint(const char *key, const char *fmt, uint64_t v)
{
	if (json_mode)
		attach(key, json_object_new_uint64(v));
	else if (fmt)
		printf(fmt, v);
}

void out_string(const char *key, const char *fmt, const char *v)
{
	if (json_mode)
		attach(key, json_object_new_string(v));
	else if (fmt)
		printf(fmt, v);
}

void out_bool(const char *key, const char *fmt, bool v)
{
	if (json_mode)
		attach(key, json_object_new_boolean(v));
	else if (fmt)
		printf(fmt, v ? "true" : "false");
}

const char *format_number(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "nan");
	else if (isinf(v))
		snprintf(buf, len, v < 0 ? "-inf" : "inf");
	else
		/* + 0.0 turns -0 into 0. */
		snprintf(buf, len, "%.15g", v + 0.0);
	return buf;
}

void out_double(const char *key, const char *fmt, double v)
{
	char buf[NUMBER_STRLEN];

	format_number(v, buf, sizeof(buf));
	if (json_mode)
		/* json-c prints the text given with the value as it is. */
		attach(key, isfinite(v) ? json_object_new_double_s(v, buf) :
					  NULL);
	else if (fmt)
		printf(fmt, buf);
}

void out_text(const char *fmt, ...)
{
	va_list ap;

	if (json_mode)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

void out_flush(void)
{
	int flags = json_pretty ? JSON_C_TO_STRING_PRETTY :
				  JSON_C_TO_STRING_PLAIN;

	if (!json_mode || !depth)
		return;
	puts(json_object_to_json_string_ext(stack[0], flags |
					    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(stack[0]);
	depth = 0;
	fflush(stdout);
}
