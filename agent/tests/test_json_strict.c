// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the strict JSON reader (lib/json_strict.c) for what its
 * two rule sets do differently: depth, string length, null and how the
 * place is named; the typing of numbers; the unknown-key check. The
 * grammar's refusals are tested through its users: tests/test_msg.c
 * (messages) and mpte/tests/test_mpte.c (files).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json_strict.h"
#include "tests/ktap.h"

static char err[512];

/* The error for @text under @rules, "" if it parses. */
static const char *error_of(const char *text, const struct json_strict_rules *rules)
{
	struct json_object *o;

	err[0] = '\0';
	o = json_strict_parse(text, strlen(text), rules, err, sizeof(err));
	json_object_put(o);
	return err;
}

static const char *file_error(const char *text)
{
	return error_of(text, &JSON_STRICT_FILE("T.json"));
}

static const char *wire_error(const char *text)
{
	return error_of(text, &JSON_STRICT_WIRE);
}

/* @n arrays, one in the other. */
static char *nested(int n)
{
	char *s = malloc(2 * n + 1);

	memset(s, '[', n);
	memset(s + n, ']', n);
	s[2 * n] = '\0';
	return s;
}

/* {"s":"xxx...x"} with @n x. */
static char *long_string(size_t n)
{
	char *s = malloc(n + 9);

	strcpy(s, "{\"s\":\"");
	memset(s + 6, 'x', n);
	strcpy(s + 6 + n, "\"}");
	return s;
}

static void limits(void)
{
	char *t;

	t = nested(JSON_STRICT_FILE_DEPTH);
	ktap_check(!strcmp(file_error(t), ""), "file: 64 arrays deep read");
	free(t);
	t = nested(JSON_STRICT_FILE_DEPTH + 1);
	ktap_check(strstr(file_error(t), "]: nested deeper than 64") &&
		   !strncmp(err, "T.json:1: [0][0]", 16), "file: 65 deep refused, named");
	free(t);
	t = nested(JSON_STRICT_WIRE_DEPTH);
	ktap_check(!strcmp(wire_error(t), ""), "message: 16 arrays deep read");
	free(t);

	t = long_string(JSON_STRICT_WIRE_STRING);
	ktap_check(!strcmp(wire_error(t), ""), "message: a string of 1024 bytes read");
	free(t);
	t = long_string(JSON_STRICT_WIRE_STRING + 1);
	ktap_check(!strcmp(wire_error(t), "s: string longer than 1024 bytes (at byte 1031)"),
		   "message: 1025 bytes refused");
	free(t);
	t = long_string(100000);
	ktap_check(!strcmp(file_error(t), ""), "file: a string of 100000 bytes read");
	free(t);

	ktap_check(!strcmp(wire_error("{\"a\":null}"),
			   "a: null is not a value any message has (at byte 5)"),
		   "message: null refused");
	ktap_check(!strcmp(file_error("{\"a\":null}"), ""), "file: null read");
	ktap_check(!strcmp(file_error(" null "), "T.json:1: null where a document was expected"),
		   "file: a document that is null refused");
}

static void places(void)
{
	ktap_check(!strcmp(file_error("{\"a\":1,\n \"b\":[\n  1,\n  01]}"),
			   "T.json:4: b[1]: bad number"), "file: line and path");
	ktap_check(!strcmp(wire_error("{\"a\":1, \"b\":[1, 01]}"),
			   "b[1]: bad number (at byte 16)"), "message: path and byte");
	ktap_check(!strcmp(file_error("{\"a\":\"x\\u0000\"}"), "T.json:1: a: NUL in a string"),
		   "file: NUL refused as in a message");
	ktap_check(!strcmp(file_error("{\"a\":\"\xc3\x28\"}"), "T.json:1: a: invalid UTF-8"),
		   "file: bad UTF-8 refused as in a message");
}

/* The integer at the top of @text, as json-c holds it. */
static int int_is(const char *text, json_type type, int64_t i64, uint64_t u64)
{
	struct json_object *o = json_strict_parse(text, strlen(text),
						  &JSON_STRICT_WIRE, err,
						  sizeof(err));
	int ok = o && json_object_get_type(o) == type &&
		 json_object_get_int64(o) == i64 &&
		 json_object_get_uint64(o) == u64;

	json_object_put(o);
	return ok;
}

static void numbers(void)
{
	struct json_object *o;

	ktap_check(int_is("-9223372036854775808", json_type_int, INT64_MIN, 0) &&
		   int_is("9223372036854775807", json_type_int, INT64_MAX, INT64_MAX) &&
		   int_is("18446744073709551615", json_type_int, INT64_MAX, UINT64_MAX),
		   "integers: int64 and uint64 to their ends");
	ktap_check(!strcmp(wire_error("18446744073709551616"),
			   "integer out of range: 18446744073709551616 (at byte 0)") &&
		   !strcmp(file_error("[-9223372036854775809]"),
			   "T.json:1: [0]: integer out of range: -9223372036854775809"),
		   "integers beyond 64 bits refused");
	o = json_strict_parse("[0.10,1e2]", 10, &JSON_STRICT_FILE("T.json"),
			      err, sizeof(err));
	ktap_check(o && !strcmp(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
				"[0.10,1e2]") &&
		   json_object_get_double(json_object_array_get_idx(o, 1)) == 100,
		   "a double keeps its text, as json-c's tokener keeps it");
	json_object_put(o);
	{
		char text[160] = "[0.";

		memset(text + 3, '0', 120);
		strcpy(text + 123, "1e121]");
		o = json_strict_parse(text, strlen(text), &JSON_STRICT_FILE("T.json"),
				      err, sizeof(err));
		ktap_check(o && json_object_get_double(json_object_array_get_idx(o, 0)) == 1,
			   "a number of 126 characters read");
		json_object_put(o);
	}
}

static void unknown_keys(void)
{
	static const char *const keys[] = { "a", "b", NULL };
	static const char *const more[] = { "c", NULL };
	struct json_object *o = json_tokener_parse("{\"a\":1,\"c\":2,\"d\":3}");
	const char *k = json_strict_unknown_key(o, keys, more);

	ktap_check(k && !strcmp(k, "d"), "the unknown key is found");
	json_object_object_del(o, "d");
	ktap_check(!json_strict_unknown_key(o, keys, more), "keys of both lists are known");
	ktap_check(json_strict_unknown_key(o, keys, NULL) &&
		   !strcmp(json_strict_unknown_key(o, keys, NULL), "c"),
		   "without the second list, its key is unknown");
	json_object_put(o);
}

static void load(void)
{
	char path[] = "/tmp/test_json_strict.XXXXXX";
	int fd = mkstemp(path);
	const char text[] = "{\"nodes\":[\n{\"a\":1,\n\"a\":2}]}\n";
	struct json_object *o;
	char want[512];

	if (fd < 0 || write(fd, text, sizeof(text) - 1) != sizeof(text) - 1)
		abort();
	close(fd);
	o = json_strict_load(path, err, sizeof(err));
	snprintf(want, sizeof(want), "%s:2: nodes[0]: duplicate key \"a\"", path);
	ktap_check(!o && !strcmp(err, want), "a file's error names it, its line and the field");
	unlink(path);
	o = json_strict_load(path, err, sizeof(err));
	snprintf(want, sizeof(want), "%s: No such file or directory", path);
	ktap_check(!o && !strcmp(err, want), "a missing file named");
}

int main(void)
{
	ktap_plan(22);
	limits();
	places();
	numbers();
	unknown_keys();
	load();
	return ktap_finish();
}
