// SPDX-License-Identifier: GPL-2.0
/*
 * The tools' shared helpers (tools/shared/tool.c): byte counts for people
 * at every unit boundary and rounding case, messages in the "NAME: text"
 * form with the name taken from a path, failures formatted into the
 * caller's buffer (or not, without one) with the given return value, and
 * the json-c getters on missing members, JSON null, wrong objects and
 * numbers written as strings.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "unit_util.h"
#include "tool.h"

START_TEST(sizes)
{
	static const struct {
		uint64_t bytes;
		const char *want;
	} cases[] = {
		{ 0, "0 B" },
		{ 1, "1 B" },
		{ 1023, "1023 B" },
		{ 1024, "1 KiB" },
		{ 1536, "1.5 KiB" },
		{ 1280, "1.25 KiB" },
		{ 1100, "1.07 KiB" },			/* 1.0742 */
		{ 1048575, "1024 KiB" },		/* 1023.999 rounds up, in KiB */
		{ 1048576, "1 MiB" },
		{ 6 * MiB, "6 MiB" },
		{ 128 * GiB, "128 GiB" },
		{ 3 * GiB / 2, "1.5 GiB" },
		{ 1ULL << 40, "1 TiB" },
		{ 1ULL << 50, "1 PiB" },
		{ 1ULL << 60, "1 EiB" },
		{ UINT64_MAX, "16 EiB" },		/* no unit past EiB */
	};
	char buf[TOOL_SIZE_LEN];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = tool_size(buf, sizeof(buf), cases[i].bytes);

		ck_assert_msg(got == buf, "tool_size(%llu) returns its buffer",
			      (unsigned long long)cases[i].bytes);
		ck_assert_msg(!strcmp(got, cases[i].want), "tool_size(%llu): expected \"%s\", got \"%s\"",
			      (unsigned long long)cases[i].bytes, cases[i].want, got);
	}
	/* A short buffer is truncated, never overrun. */
	memset(buf, 'x', sizeof(buf));
	tool_size(buf, 4, 1536);
	ck_assert_msg(!strcmp(buf, "1.5") && buf[4] == 'x', "tool_size into 4 bytes: got \"%s\"", buf);
}
END_TEST

/* What tool_msg() wrote to a memory stream. */
static char *captured(void (*write)(FILE *f))
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	write(f);
	fclose(f);
	return text;
}

static void write_two(FILE *f)
{
	ck_assert_int_eq(tool_msg(f, "tensor %s: %d bytes", "A", 12), -1);
	ck_assert_int_eq(tool_msg(f, "second"), -1);
}

START_TEST(messages)
{
	char *text;

	tool_set_name("/usr/local/bin/flex-run");
	ck_assert_str_eq(tool_name(), "flex-run");
	text = captured(write_two);
	ck_assert_msg(!strcmp(text, "flex-run: tensor A: 12 bytes\nflex-run: second\n"),
		      "expected two \"flex-run: \" lines, got \"%s\"", text);
	free(text);

	tool_set_name("flexctl");
	ck_assert_str_eq(tool_name(), "flexctl");
	/* Neither NULL, "" nor a trailing slash leaves the name empty. */
	tool_set_name(NULL);
	tool_set_name("");
	ck_assert_str_eq(tool_name(), "flexctl");
	tool_set_name("dir/");
	ck_assert_str_eq(tool_name(), "dir/");
}
END_TEST

START_TEST(failures)
{
	char err[16];

	memset(err, 'x', sizeof(err));
	ck_assert_int_eq(tool_fail(err, sizeof(err), -EINVAL, "%s: line %d", "plan.json", 7),
			 -EINVAL);
	ck_assert_msg(!strcmp(err, "plan.json: line"), "truncated to 15 bytes and a NUL: got \"%s\"", err);
	/* No buffer: the return value alone. */
	ck_assert_int_eq(tool_fail(NULL, 0, -ENOENT, "%s", "ignored"), -ENOENT);
	memset(err, 'x', sizeof(err));
	ck_assert_int_eq(tool_fail(err, 0, -EIO, "%s", "ignored"), -EIO);
	ck_assert_msg(err[0] == 'x', "a zero length writes nothing");
}
END_TEST

START_TEST(json_getters)
{
	struct json_object *o = json_tokener_parse(
		"{ \"n\": -5, \"big\": 9007199254740993, \"hex\": \"0x200000\", \"dec\": \"42\","
		"  \"d\": 0.25, \"s\": \"pf\", \"null\": null, \"b\": true }");

	ck_assert_ptr_nonnull(o);
	ck_assert(tool_jhas(o, "n"));
	ck_assert(!tool_jhas(o, "null"));
	ck_assert(!tool_jhas(o, "absent"));
	ck_assert(!tool_jhas(NULL, "n"));

	ck_assert_int_eq(tool_jint(o, "n", 7), -5);
	ck_assert_int_eq(tool_jint(o, "absent", 7), 7);
	ck_assert_int_eq(tool_jint(o, "null", 7), 7);
	ck_assert_int_eq(tool_jint(NULL, "n", 7), 7);
	ck_assert_msg(tool_jint(o, "big", 0) == 9007199254740993LL,
		      "64-bit integers are read exactly");

	ck_assert_uint_eq(tool_ju64(o, "hex", 1), 0x200000);
	ck_assert_uint_eq(tool_ju64(o, "dec", 1), 42);
	ck_assert_uint_eq(tool_ju64(o, "big", 1), 9007199254740993ULL);
	ck_assert_uint_eq(tool_ju64(o, "null", 1), 1);

	ck_assert_msg(tool_jdouble(o, "d", 1.0) == 0.25, "jdouble reads 0.25");
	ck_assert_msg(tool_jdouble(o, "absent", 1.5) == 1.5, "jdouble default");

	ck_assert_str_eq(tool_jstr(o, "s", "?"), "pf");
	ck_assert_str_eq(tool_jstr(o, "null", "?"), "?");
	ck_assert_str_eq(tool_jstr(o, "absent", "?"), "?");

	tool_jset_int(o, "n", 1LL << 40);
	ck_assert_int_eq(tool_jint(o, "n", 0), 1LL << 40);
	tool_jset_str(o, "s", "vf3");
	ck_assert_str_eq(tool_jstr(o, "s", "?"), "vf3");
	tool_jset_str(o, "s", NULL);
	ck_assert_msg(json_object_object_get_ex(o, "s", NULL) && !tool_jhas(o, "s"),
		      "jset_str(NULL) keeps the member, as JSON null");
	json_object_put(o);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tool");
	TCase *tc = tcase_create("tool");

	tcase_add_test(tc, sizes);
	tcase_add_test(tc, messages);
	tcase_add_test(tc, failures);
	tcase_add_test(tc, json_getters);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
