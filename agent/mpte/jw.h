/* SPDX-License-Identifier: GPL-2.0 */
/*
 * jw.h - a streaming JSON writer for the solver's result.
 *
 * Why not json-c: building a json-c tree for 10,000 demands and printing
 * it took 1.9 s of fat-tree k=32's 3.3 s run (malloc, a hash table per
 * object, printf("%.17g") per number).  This writes straight into a
 * stdio stream and formats numbers itself, byte for byte as json-c 0.16
 * prints them with JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
 * so the output did not change (tests/test_jw checks the number format
 * against snprintf and the document against a stored one).
 *
 * Commas are the writer's job: a value or key after another at the same
 * depth gets one.  The caller nests at most JW_DEPTH levels.
 */
#ifndef MPTE_JW_H
#define MPTE_JW_H

#include <stdint.h>
#include <stdio.h>

#define JW_DEPTH 32

struct jw {
	FILE *f;
	int depth;
	int after_key;			/* the next value follows "key": */
	unsigned char more[JW_DEPTH];	/* depth has a value: comma next */
};

void jw_init(struct jw *w, FILE *f);
void jw_obj(struct jw *w);
void jw_end_obj(struct jw *w);
void jw_arr(struct jw *w);
void jw_end_arr(struct jw *w);
/* k is written as it is: the solver's keys are plain ASCII */
void jw_key(struct jw *w, const char *k);
void jw_str(struct jw *w, const char *s);	/* NULL: null */
void jw_dbl(struct jw *w, double v);
void jw_int(struct jw *w, int64_t v);
void jw_bool(struct jw *w, int v);
void jw_null(struct jw *w);

/*
 * v as json-c prints a double: "%.17g", then ".0" if that has neither a
 * point nor an exponent.  buf holds at least JW_DBL_LEN bytes; returns the
 * length.  Exposed for the test.
 */
#define JW_DBL_LEN 32
int jw_format_double(char *buf, double v);

#endif
