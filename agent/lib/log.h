/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dmsc-agent's log: one line on standard output per event, with a UTC
 * time stamp ("2026-11-24T00:00:00Z dmsc-agent: ..."), flushed at once so
 * that journald and a test reading the file see it in order.
 */
#ifndef DMSC_LOG_H
#define DMSC_LOG_H

void agent_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* DMSC_LOG_H */
