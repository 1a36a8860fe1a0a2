/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One printing path for text and JSON, in the manner of iproute2's
 * print_*(PRINT_ANY, ...): each value is given once with its JSON key and
 * its text format; which one is used depends on -j.
 */
#ifndef DMSC_OUTPUT_H
#define DMSC_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void out_init(bool json, bool pretty);
bool out_is_json(void);

/* Objects and arrays nest; key is NULL inside an array. */
void out_open_object(const char *key);
void out_close_object(void);
void out_open_array(const char *key);
void out_close_array(void);

/* fmt is the text form (printf, one conversion); NULL = JSON only. */
void out_uint(const char *key, const char *fmt, uint64_t v);
void out_string(const char *key, const char *fmt, const char *v);
void out_bool(const char *key, const char *fmt, bool v);
/*
 * A real number, in the form format_number() gives, in text (fmt takes
 * a string) and in JSON alike; NaN and infinities are JSON null.
 */
void out_double(const char *key, const char *fmt, double v);
/* Text only. */
void out_text(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * @v in at most 15 significant digits, the most a double holds exactly:
 * 0.3 prints as "0.3", not "0.29999999999999999" (json-c's default),
 * and 0.1 + 0.2 as "0.3". "nan", "inf", "-inf" for the non-finite.
 */
#define NUMBER_STRLEN 32
const char *format_number(double v, char *buf, size_t len);

/* Print what JSON has been built (a no-op for text). */
void out_flush(void);

#endif /* DMSC_OUTPUT_H */
