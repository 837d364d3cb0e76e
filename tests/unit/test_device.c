// SPDX-License-Identifier: GPL-2.0
/*
 * Device wrappers on the host, where no flex driver runs: opening what is
 * not a flex device fails with the right errno and leaks nothing. The
 * ioctls themselves are tested in the VM (tests/kselftest).
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <flex/device.h>

#include "unit_util.h"

static void expect_open(const char *path, int want)
{
	struct flex_device *dev = (struct flex_device *)0x1;
	int err = flex_device_open(path, &dev);

	ck_assert_msg(err == want, "flex_device_open(%s): expected %d, got %d", path ? path : "NULL",
		      want, err);
	ck_assert_msg(dev == (struct flex_device *)0x1, "flex_device_open(%s) failed but set *out",
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
	expect_open(NULL, -EINVAL);
	ck_assert_int_eq(flex_device_open("/dev/null", NULL), -EINVAL);
	expect_open("/", -EISDIR);
	flex_device_close(NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("device");
	TCase *tc = tcase_create("host");

	tcase_add_test(tc, open_missing_node);
	tcase_add_test(tc, open_not_a_flex_device);
	tcase_add_test(tc, open_bad_arguments);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
