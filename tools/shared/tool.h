/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the flex tools (flexctl, flex-run, flex-demo, flex-plan-gen) share:
 * byte counts for people, messages in one form, and reading json-c
 * objects. Built once into $(BUILD)/tool-shared.a (tools/shared/shared.mk)
 * and linked into each; tests/unit/test_tool.c tests it.
 *
 * Messages. A tool names itself once (tool_set_name()); its messages are
 * then "NAME: text" lines. A function that reports to its caller rather
 * than to the user formats into the caller's buffer (tool_fail()), and the
 * caller prints it with its own context.
 */
#ifndef FLEX_TOOL_H
#define FLEX_TOOL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct json_object;

/* Large enough for any tool_size() result. */
#define TOOL_SIZE_LEN	32

/*
 * @bytes in binary units for people: "512 B", "4 KiB", "1.5 GiB", "1.25 MiB"
 * (at most two decimals, trailing zeros dropped; B to EiB). Returns @buf.
 */
const char *tool_size(char *buf, size_t len, uint64_t bytes);

/* The name messages start with (argv[0]'s base name, or a fixed one). */
void tool_set_name(const char *name);
const char *tool_name(void);

/* "NAME: <fmt>\n" on @f. Returns -1, for `return tool_msg(...)` in main paths. */
int tool_msg(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int tool_vmsg(FILE *f, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* tool_msg() on stderr. */
int tool_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * A failure reported to the caller: <fmt> into @err (when @err and @errlen),
 * and @ret returned, for `return tool_fail(err, errlen, -EINVAL, ...)`.
 */
int tool_fail(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * Members of a json-c object, @dflt when @o is NULL or has no such member
 * (or it is JSON null). tool_ju64() also reads numbers written as strings
 * ("0x10000", as reports write addresses that JSON numbers cannot hold).
 */
bool tool_jhas(struct json_object *o, const char *key);
int64_t tool_jint(struct json_object *o, const char *key, int64_t dflt);
uint64_t tool_ju64(struct json_object *o, const char *key, uint64_t dflt);
double tool_jdouble(struct json_object *o, const char *key, double dflt);
const char *tool_jstr(struct json_object *o, const char *key, const char *dflt);
/* Set a member; tool_jset_str() with NULL sets JSON null. */
void tool_jset_int(struct json_object *o, const char *key, int64_t v);
void tool_jset_str(struct json_object *o, const char *key, const char *v);

#endif /* FLEX_TOOL_H */
