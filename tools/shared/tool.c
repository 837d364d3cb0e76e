// SPDX-License-Identifier: GPL-2.0
/*
 * The tools' shared helpers: tool.h says what each is for.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "tool.h"

const char *tool_size(char *buf, size_t len, uint64_t bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	unsigned int u = 0;
	double v = (double)bytes;
	char num[TOOL_SIZE_LEN], *end;

	while (v >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024.0;
		u++;
	}
	if (u == 0) {
		snprintf(buf, len, "%" PRIu64 " B", bytes);
		return buf;
	}
	snprintf(num, sizeof(num), "%.2f", v);
	/* 1.50 -> 1.5, 2.00 -> 2; 1023.996 KiB rounds to "1024.00" -> "1024". */
	end = num + strlen(num);
	while (end[-1] == '0')
		*--end = '\0';
	if (end[-1] == '.')
		end[-1] = '\0';
	snprintf(buf, len, "%s %s", num, units[u]);
	return buf;
}

static const char *name = "flex";

void tool_set_name(const char *n)
{
	const char *slash = n ? strrchr(n, '/') : NULL;

	if (n && *n)
		name = slash && slash[1] ? slash + 1 : n;
}

const char *tool_name(void)
{
	return name;
}

int tool_vmsg(FILE *f, const char *fmt, va_list ap)
{
	fprintf(f, "%s: ", name);
	vfprintf(f, fmt, ap);
	fputc('\n', f);
	return -1;
}

int tool_msg(FILE *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tool_vmsg(f, fmt, ap);
	va_end(ap);
	return -1;
}

int tool_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tool_vmsg(stderr, fmt, ap);
	va_end(ap);
	return -1;
}

int tool_fail(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

/* The member @key of @o, or NULL (no object, no member, or JSON null). */
static struct json_object *member(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

bool tool_jhas(struct json_object *o, const char *key)
{
	return member(o, key) != NULL;
}

int64_t tool_jint(struct json_object *o, const char *key, int64_t dflt)
{
	struct json_object *v = member(o, key);

	return v ? json_object_get_int64(v) : dflt;
}

uint64_t tool_ju64(struct json_object *o, const char *key, uint64_t dflt)
{
	struct json_object *v = member(o, key);

	if (!v)
		return dflt;
	if (json_object_is_type(v, json_type_string))
		return strtoull(json_object_get_string(v), NULL, 0);
	return (uint64_t)json_object_get_int64(v);
}

double tool_jdouble(struct json_object *o, const char *key, double dflt)
{
	struct json_object *v = member(o, key);

	return v ? json_object_get_double(v) : dflt;
}

const char *tool_jstr(struct json_object *o, const char *key, const char *dflt)
{
	struct json_object *v = member(o, key);

	return v ? json_object_get_string(v) : dflt;
}

void tool_jset_int(struct json_object *o, const char *key, int64_t v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

void tool_jset_str(struct json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, v ? json_object_new_string(v) : NULL);
}
