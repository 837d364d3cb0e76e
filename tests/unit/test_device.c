// SPDX-License-Identifier: GPL-2.0
/*
 * Device wrappers on the host, where no flex driver runs: opening what is
 * not a flex device fails with the right errno and leaks nothing;
 * FLEX_DEVICE picks the node when none is given; enumeration reads a fake
 * sysfs tree. The ioctls and the real sysfs are tested in the VM
 * (tests/kselftest).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <flex/device.h>

#include "device_internal.h"
#include "unit_util.h"

static void expect_open(const char *path, int want)
{
	struct flex_device *dev = (struct flex_device *)0x1;
	int err = flex_device_new(path, &dev);

	ck_assert_msg(err == want, "flex_device_new(%s): expected %d, got %d", path ? path : "NULL",
		      want, err);
	ck_assert_msg(dev == (struct flex_device *)0x1, "flex_device_new(%s) failed but set *out",
		      path ? path : "NULL");
}

START_TEST(open_missing_node)
{
	expect_open("/nonexistent", -ENOENT);
	expect_open("/dev/flex-does-not-exist", -ENOENT);
}
END_TEST

START_TEST(open_not_a_flex_device)
{
	char path[] = "/tmp/flex-notdev-XXXXXX";
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	/* The query ioctl is not understood: not a flex device. */
	expect_open("/dev/null", -ENOTTY);
	expect_open(path, -ENOTTY);
	unlink(path);
}
END_TEST

START_TEST(open_bad_arguments)
{
	ck_assert_int_eq(flex_device_new("/dev/null", NULL), -EINVAL);
	expect_open("/", -EISDIR);
	flex_device_unref(NULL);
}
END_TEST

/* No node given: FLEX_DEVICE picks it (a path or a node name), else /dev/flex0. */
START_TEST(flex_device_selects_the_node)
{
	char node[64];

	unsetenv("FLEX_DEVICE");
	ck_assert_int_eq(flex_device_default_node(node, sizeof(node)), 0);
	ck_assert_str_eq(node, "/dev/flex0");
	expect_open(NULL, access("/dev/flex0", F_OK) ? -ENOENT : 0);

	setenv("FLEX_DEVICE", "/dev/null", 1);
	ck_assert_int_eq(flex_device_default_node(node, sizeof(node)), 0);
	ck_assert_str_eq(node, "/dev/null");
	expect_open(NULL, -ENOTTY);	/* opened, and not a flex device */

	setenv("FLEX_DEVICE", "flex7vf3", 1);
	ck_assert_int_eq(flex_device_default_node(node, sizeof(node)), 0);
	ck_assert_str_eq(node, "/dev/flex7vf3");
	expect_open(NULL, -ENOENT);
	ck_assert_int_eq(flex_device_default_node(node, 8), -ENAMETOOLONG);
	unsetenv("FLEX_DEVICE");
}
END_TEST

static void put(const char *dir, const char *name, const char *attr, const char *value)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	mkdir(path, 0755);
	if (!attr)
		return;
	snprintf(path, sizeof(path), "%s/%s/%s", dir, name, attr);
	f = fopen(path, "w");
	ck_assert_msg(f != NULL, "cannot write %s", path);
	fprintf(f, "%s\n", value);
	fclose(f);
}

/* A fake /sys/class/flex: two devices, two VFs of the first, and noise. */
START_TEST(enumerate_from_sysfs)
{
	char dir[] = "/tmp/flex-sysfs-XXXXXX", cmd[64];
	struct flex_device_info d[8];
	unsigned int n = 99;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	put(dir, "flex0", "capacity", "137438953472");
	put(dir, "flex0", "table_size", "64");
	put(dir, "flex0", "quota_capacity", "137438953472");
	put(dir, "flex0vf1", "table_size", "8");
	put(dir, "flex0vf1", "quota_capacity", "17179869184");
	put(dir, "flex0vf0", "table_size", "8");
	put(dir, "flex0vf0", "quota_capacity", "137438953472");
	put(dir, "flex1", "capacity", "1073741824");
	put(dir, "flex1", "table_size", "64");
	put(dir, "flexfoo", NULL, NULL);
	put(dir, "flex0vf", NULL, NULL);
	put(dir, "other0", NULL, NULL);

	ck_assert_int_eq(flex_device_enumerate_at(dir, d, 8, &n), 0);
	ck_assert_msg(n == 4, "expected 4 functions (flex0, its two VFs, flex1), got %u", n);
	ck_assert_msg(!strcmp(d[0].name, "flex0") && d[0].mode == FLEX_MODE_PF &&
		      d[0].table_size == 64 && d[0].capacity == 128 * GiB &&
		      !strcmp(d[0].node, "/dev/flex0"),
		      "first: expected the PF flex0 (64 entries, 128 GiB, /dev/flex0), got %s mode %u, %u entries, %llu bytes, %s",
		      d[0].name, d[0].mode, d[0].table_size, (unsigned long long)d[0].capacity,
		      d[0].node);
	ck_assert_msg(!strcmp(d[1].name, "flex0vf0") && d[1].mode == FLEX_MODE_VF &&
		      d[1].vf_index == 0 && d[1].table_size == 8 && d[1].capacity == 128 * GiB,
		      "second: expected VF 0 of flex0 with the device's capacity, got %s", d[1].name);
	ck_assert_msg(!strcmp(d[2].name, "flex0vf1") && d[2].vf_index == 1 &&
		      d[2].quota_capacity == 16 * GiB && !strcmp(d[2].node, "/dev/flex0vf1"),
		      "third: expected VF 1 with a 16 GiB quota, got %s (%llu)", d[2].name,
		      (unsigned long long)d[2].quota_capacity);
	ck_assert_msg(!strcmp(d[3].name, "flex1") && d[3].device_index == 1 &&
		      d[3].capacity == 1 * GiB,
		      "fourth: expected flex1, got %s", d[3].name);

	/* Less room than functions: the count says how many there are. */
	memset(d, 0, sizeof(d));
	ck_assert_int_eq(flex_device_enumerate_at(dir, d, 2, &n), 0);
	ck_assert_msg(n == 4 && !strcmp(d[1].name, "flex0vf0") && !d[2].name[0],
		      "max 2: expected a count of 4 and only 2 filled");
	ck_assert_int_eq(flex_device_enumerate_at(dir, NULL, 0, &n), 0);
	ck_assert_uint_eq(n, 4);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(flex_device_enumerate_at(dir, d, 8, &n), 0);
	ck_assert_msg(n == 0, "no class directory: expected no function, got %u", n);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("device");
	TCase *tc = tcase_create("host");

	tcase_add_test(tc, open_missing_node);
	tcase_add_test(tc, open_not_a_flex_device);
	tcase_add_test(tc, open_bad_arguments);
	tcase_add_test(tc, flex_device_selects_the_node);
	tcase_add_test(tc, enumerate_from_sysfs);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
