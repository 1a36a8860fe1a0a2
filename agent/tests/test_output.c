// SPDX-License-Identifier: GPL-2.0
/* The text/JSON printer: JSON documents are well formed and complete. */
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

int main(void)
{
	struct json_object *doc, *t, *v;
	char buf[1024];

	ktap_plan(3);
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
	return ktap_finish();
}
