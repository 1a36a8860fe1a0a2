/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one strict JSON reader of agent/, into json-c objects. Its users:
 * the messages between agents (lib/msg.c), service access tokens
 * (lib/token.c), the MPTE solver's topology, demands and result files
 * (mpte/json_io.c, mpte/batch.c) and the planner's model, sites and
 * limits (plan/input.c). Not yet: the agent's configuration (lib/config.c)
 * and etcd's answers (srd/), read by json-c's tokener.
 *
 * json-c's own tokener (0.16, even with JSON_TOKENER_STRICT) reads NaN,
 * Infinity and 'single quotes', turns 1e999 into infinity and keeps the
 * last of two equal keys without a word. Input from an operator or from
 * another node must not be read two ways, so this reader takes RFC 8259
 * and nothing else, and every error names its place: the field's path
 * ("links[3].capacity", "qps[0].dst") and the line of a file or the byte
 * of a message.
 *
 * Always refused:
 *   - a key given twice in one object ("duplicate key \"sid\"", named at
 *     the object; keys compare decoded, "ab" and "a\u0062" are equal);
 *   - NaN, Infinity, a number that is not finite as a double (1e999), an
 *     integer outside int64/uint64, leading zeros, a trailing comma;
 *   - in a string: a control character, NUL (C strings end there: a name
 *     with one would read two ways), bad UTF-8, a lone surrogate;
 *   - anything after the value.
 * The limits and the one rule that differ between files and messages:
 *
 *                        depth  string bytes  null     place
 *   JSON_STRICT_FILE      64     no limit     a value  NAME:LINE: path: ...
 *   JSON_STRICT_WIRE      16     1024         refused  path: ... (at byte N)
 *
 * Depth counts nested objects and arrays. A message has no optional
 * value spelt null; a file may (json-c then gives a NULL object).
 *
 * Unknown fields: refused, by every reader above this one, with the
 * field's path: a typo in a key must not be ignored in silence. This
 * reader cannot know a schema; json_strict_unknown_key() is the check the
 * decoders share, each naming the field in its own error.
 *
 * Numbers are typed as json-c's tokener types them: an integer that fits
 * int64 is int64, a larger one uint64; a fraction or exponent makes a
 * double that prints as it was written.
 */
#ifndef DMSC_JSON_STRICT_H
#define DMSC_JSON_STRICT_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

struct json_strict_rules {
	const char *name;	/* a file's name: errors begin "NAME:LINE: ";
				 * NULL: they end " (at byte N)" */
	int max_depth;		/* objects and arrays nested */
	size_t max_string;	/* bytes after unescaping; 0: no limit */
	bool allow_null;
};

#define JSON_STRICT_FILE_DEPTH	64
#define JSON_STRICT_WIRE_DEPTH	16
#define JSON_STRICT_WIRE_STRING	1024

#define JSON_STRICT_FILE(file_name) ((struct json_strict_rules){	\
	.name = (file_name), .max_depth = JSON_STRICT_FILE_DEPTH,	\
	.max_string = 0, .allow_null = true })
#define JSON_STRICT_WIRE ((struct json_strict_rules){			\
	.name = NULL, .max_depth = JSON_STRICT_WIRE_DEPTH,		\
	.max_string = JSON_STRICT_WIRE_STRING, .allow_null = false })

/*
 * Parse @len bytes of @text (no NUL needed) under @rules. Returns the
 * value (the caller puts it), or NULL with the error in @err.
 */
struct json_object *json_strict_parse(const char *text, size_t len,
				      const struct json_strict_rules *rules,
				      char *err, size_t errlen);

/*
 * Read the file at @path ("-": stdin, named "stdin") and parse it under
 * JSON_STRICT_FILE. Returns the value, or NULL and "PATH: reason" in @err.
 */
struct json_object *json_strict_load(const char *path, char *err,
				     size_t errlen);

/*
 * The first key of object @obj that is in neither NULL-terminated list
 * (@more may be NULL), or NULL if all are known.
 */
const char *json_strict_unknown_key(struct json_object *obj,
				    const char *const *keys,
				    const char *const *more);

#endif /* DMSC_JSON_STRICT_H */
