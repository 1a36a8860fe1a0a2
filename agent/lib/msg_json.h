/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A strict JSON reader for messages between agents: RFC 8259 text into
 * json-c objects, refusing what json-c's own tokener lets through or
 * hides. json-c keeps the last of two equal keys and reads NaN and
 * Infinity; a message from another node must not be read two ways, so
 * here a repeated key, a number that is not finite or does not fit 64
 * bits, a string with NUL, a control character or bad UTF-8, nesting
 * deeper than MSG_JSON_MAX_DEPTH and anything after the value are errors
 * that name the place ("qps[3].bytes: given twice").
 */
#ifndef DMSC_MSG_JSON_H
#define DMSC_MSG_JSON_H

#include <stddef.h>
#include <json-c/json.h>

#define MSG_JSON_MAX_DEPTH	16
#define MSG_JSON_MAX_STRING	1024	/* bytes, after unescaping */

/*
 * Parse @len bytes of @text (no NUL needed). Integers become int64 (if
 * negative) or uint64 json-c objects, numbers with a fraction or an
 * exponent doubles. Returns the value, or NULL with the error in @err.
 */
struct json_object *msg_json_parse(const char *text, size_t len, char *err,
				   size_t errlen);

#endif /* DMSC_MSG_JSON_H */
