/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Error messages and log lines.
 *
 * A failing call leaves its message in a per-thread buffer that
 * flex_alloc_last_error() returns, the way dlerror() does: no lock, no
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

void msgbuf_printf(struct msgbuf *m, const char *fmt, ...) FLEX_PRINTF(2, 3);

/* The calling thread's error buffer, emptied, to build a message in. */
struct msgbuf error_begin(void);
/* Set the calling thread's error message; returns @err for tail calls. */
int error_set(int err, const char *fmt, ...) FLEX_PRINTF(2, 3);

/*
 * Format a message into a caller's buffer (@err may be NULL or @errlen 0:
 * nothing is written) and return @ret, for the pure functions that report
 * errors through an err/errlen pair instead of the per-thread buffer.
 */
int errbuf_printf(char *err, size_t errlen, int ret, const char *fmt, ...) FLEX_PRINTF(4, 5);

/* Format and send a line to @fn (or stderr when NULL). */
void log_emit(flex_alloc_log_fn fn, void *user, int priority, const char *fmt, ...)
	FLEX_PRINTF(4, 5);

/* "12.0 GiB" style, into @buf (at least 16 bytes). */
const char *human_bytes(char *buf, size_t size, unsigned long long bytes);

#endif /* FLEX_LOG_H */
