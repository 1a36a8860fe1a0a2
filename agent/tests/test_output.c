// SPDX-License-Identifier: GPL-2.0
/* The text/JSON printer: JSON documents are well formed and complete. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "output.h"
#include "tests/ktap.h"

/* Run @fn with stdout captured into @buf. */
static void capture(void (*fn)(void), char *buf, size_t len)
{
	FILE *tmp = tmpfile();
	int saved = dup(1);
	size_t n;

	fflush(stdout);
	dup2(fileno(tmp), 1);
	fn();
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	rewind(tmp);
	n = fread(buf, 1, len - 1, tmp);
	buf[n] = '\0';
	fclose(tmp);
}

static void tunnel_like(void)
{
	out_open_array(NULL);
	out_open_object(NULL);
	out_uint("id", "tunnel %llu", 7);
	out_string("mode", " mode %s", "encap");
	out_text("\n");
	out_open_array("paths");
	out_open_object(NULL);
	out_uint("weight", "\tweight %llu\n", 3);
	out_close_object();
	out_close_array();
	out_close_object();
	out_close_array();
	out_flush();
}

static void numbers(void)
{
	out_open_array(NULL);
	out_double(NULL, "%s ", 0.3);
	out_double(NULL, "%s ", 0.1 + 0.2);
	out_double(NULL, "%s ", 1.0 / 3);
	out_double(NULL, "%s ", 7);
	out_double(NULL, "%s ", -0.0);
	out_double(NULL, "%s ", 2.5e-20);
	out_double(NULL, "%s\n", NAN);
	out_close_array();
	out_flush();
}

/* format_number(@v) is @want. */
static int number_is(double v, const char *want)
{
	char buf[NUMBER_STRLEN];

	format_number(v, buf, sizeof(buf));
	if (strcmp(buf, want))
		printf("# %.17g printed as %s, not %s\n", v, buf, want);
	return !strcmp(buf, want);
}

int main(void)
{
	struct json_object *doc, *t, *v;
	char buf[1024];

	ktap_plan(7);
	out_init(true, false);
	capture(tunnel_like, buf, sizeof(buf));
	doc = json_tokener_parse(buf);
	ktap_check(doc && json_object_is_type(doc, json_type_array) &&
		   json_object_array_length(doc) == 1, "json array of one");
	t = doc ? json_object_array_get_idx(doc, 0) : NULL;
	ktap_check(t && json_object_object_get_ex(t, "id", &v) &&
		   json_object_get_int(v) == 7 &&
		   json_object_object_get_ex(t, "paths", &v) &&
		   json_object_array_length(v) == 1, "nested values kept");
	json_object_put(doc);

	out_init(false, false);
	capture(tunnel_like, buf, sizeof(buf));
	ktap_check(!strcmp(buf, "tunnel 7 mode encap\n\tweight 3\n"),
		   "text form");

	ktap_check(number_is(0.3, "0.3") && number_is(0.1 + 0.2, "0.3") &&
		   number_is(0.7, "0.7") && number_is(65535, "65535") &&
		   number_is(-0.0, "0") && number_is(1e300, "1e+300") &&
		   number_is(INFINITY, "inf") && number_is(NAN, "nan"),
		   "numbers without float noise");
	out_init(false, false);
	capture(numbers, buf, sizeof(buf));
	ktap_check(!strcmp(buf, "0.3 0.3 0.333333333333333 7 0 2.5e-20 nan\n"),
		   "out_double text");
	out_init(true, false);
	capture(numbers, buf, sizeof(buf));
	ktap_check(!strcmp(buf, "[0.3,0.3,0.333333333333333,7,0,2.5e-20,null]\n"),
		   "out_double JSON: no noise, NaN is null");
	if (strncmp(buf, "[0.3,", 5))
		printf("# JSON: %s", buf);
	doc = json_tokener_parse(buf);
	ktap_check(doc && json_object_array_length(doc) == 7 &&
		   json_object_get_double(json_object_array_get_idx(doc, 0)) == 0.3,
		   "out_double JSON parses back to the same double");
	json_object_put(doc);
	return ktap_finish();
}
