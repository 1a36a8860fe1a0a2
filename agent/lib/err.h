/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Error messages of the dmsc tools, in one form:
 *   dmsc: [FILE:LINE: ]OBJECT[ VERB]: what is wrong
 * The location is set while a -batch file runs, the command once the
 * object and verb are known, so a parser deep down need only say what is
 * wrong with its field ("weight \"x\": not a number").
 */
#ifndef DMSC_ERR_H
#define DMSC_ERR_H

/* Both strings must outlive their use; NULL clears. */
void err_set_where(const char *where);
void err_set_command(const char *object, const char *verb);
const char *err_object(void);

/* Print one error line with the context in front. */
void errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* How many errors errorf() printed so far. */
unsigned int err_count(void);

#endif /* DMSC_ERR_H */
