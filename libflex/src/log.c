// SPDX-License-Identifier: GPL-2.0
/* Error messages and log lines: see log.h. */
#include <stdio.h>
#include <string.h>

#include "log.h"

static __thread char last_error[FLEX_ERRMSG_MAX];

static void msgbuf_vprintf(struct msgbuf *m, const char *fmt, va_list ap)
{
	int n;

	if (m->len + 1 >= m->size)
		return;
	n = vsnprintf(m->buf + m->len, m->size - m->len, fmt, ap);
	if (n < 0)
		return;
	m->len += (size_t)n;
	if (m->len >= m->size)
		m->len = m->size - 1;
}

void flex_msgbuf_printf(struct msgbuf *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	msgbuf_vprintf(m, fmt, ap);
	va_end(ap);
}

struct msgbuf flex_error_begin(void)
{
	last_error[0] = '\0';
	return (struct msgbuf){ .buf = last_error, .size = sizeof(last_error) };
}

int flex_error_set(int err, const char *fmt, ...)
{
	char msg[FLEX_ERRMSG_MAX];
	va_list ap;

	/* Formatted aside first: the arguments may quote flex_last_error(). */
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	memcpy(last_error, msg, strlen(msg) + 1);
	return err;
}

FLEX_EXPORT const char *flex_last_error(void)
{
	return last_error;
}

void flex_log_emit(flex_alloc_log_fn fn, void *user, int priority, const char *fmt, ...)
{
	char line[FLEX_ERRMSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (fn)
		fn(user, priority, line);
	else
		fprintf(stderr, "%s\n", line);
}

const char *flex_human_bytes(char *buf, size_t size, unsigned long long bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	unsigned int u = 0;

	while (v >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(buf, size, "%llu B", bytes);
	else
		snprintf(buf, size, "%.1f %s", v, units[u]);
	return buf;
}
