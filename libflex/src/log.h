/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Error messages and log lines.
 *
 * A failing call leaves its message in a per-thread buffer that
 * flex_last_error() returns, the way dlerror() does: no lock, no
 * allocator-wide state, and a thread never sees another thread's failure.
 */
#ifndef FLEX_LOG_H
#define FLEX_LOG_H

#include <stdarg.h>
#include <stddef.h>

#include <flex/allocator.h>

#define FLEX_EXPORT	__attribute__((visibility("default")))
#define FLEX_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* Big enough for an out-of-memory message listing FLEX_ALLOC_REGIONS_LIMIT regions. */
#define FLEX_ERRMSG_MAX	8192

/* A buffer being filled piece by piece; never overflows, always terminated. */
struct msgbuf {
	char *buf;
	size_t size;
	size_t len;
};

void flex_msgbuf_printf(struct msgbuf *m, const char *fmt, ...) FLEX_PRINTF(2, 3);

/* The calling thread's error buffer, emptied, to build a message in. */
struct msgbuf flex_error_begin(void);
/*
 * Set the calling thread's error message; returns @err for tail calls. The
 * arguments may quote flex_last_error() (an inner call's message).
 */
int flex_error_set(int err, const char *fmt, ...) FLEX_PRINTF(2, 3);

/* Format and send a line to @fn (or stderr when NULL). */
void flex_log_emit(flex_alloc_log_fn fn, void *user, int priority, const char *fmt, ...)
	FLEX_PRINTF(4, 5);

/* "12.0 GiB" style, into @buf (at least 16 bytes). */
const char *flex_human_bytes(char *buf, size_t size, unsigned long long bytes);

#endif /* FLEX_LOG_H */
