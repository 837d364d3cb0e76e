// SPDX-License-Identifier: GPL-2.0
/*
 * flexctl's reading of the flex family's messages (tools/flexctl/nlattrs.c),
 * without a kernel: messages are built with libnl as the driver fills them
 * and parsed with flexctl_nl_parse_msg(). Every attribute of every set
 * comes out under its JSON key, in table order, "device" first (the exact
 * JSON that `flexctl --json` prints is compared); function numbers are
 * named, a region outside any lookup table has a null lut_index, enums out
 * of range are "unknown", a fault's errno is signed; attributes flexctl
 * does not know are skipped; an attribute shorter than its type, or a
 * message with no object, is refused.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/genl/genl.h>

#include <linux/flex.h>
#include <linux/flex_netlink.h>

#include "unit_util.h"
#include "flexnl.h"

/* An attribute number past every set's last, as a newer driver might send. */
#define NEWER_ATTR	29

static struct nl_msg *msg_new(uint8_t cmd)
{
	struct nl_msg *m = nlmsg_alloc();

	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_nonnull(genlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, 0x1a, 0, 0, cmd,
					  FLEX_GENL_VERSION));
	return m;
}

/* @m parsed; the JSON flexctl prints (plain), or "NULL"; frees @m. */
static char *parsed(struct nl_msg *m, uint8_t want_cmd)
{
	struct json_object *o;
	uint8_t cmd = 0xff;
	char *s;

	o = flexctl_nl_parse_msg(m, &cmd);
	nlmsg_free(m);
	if (!o)
		return strdup("NULL");
	ck_assert_msg(cmd == want_cmd, "command: expected %u, got %u", want_cmd, cmd);
	s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return s;
}

#define expect_json(m, cmd, want)							\
	do {										\
		char *got_ = parsed((m), (cmd));					\
		ck_assert_msg(!strcmp(got_, (want)), "expected %s\n          got %s",	\
			      (want), got_);						\
		free(got_);								\
	} while (0)

static void put_fn(struct nl_msg *m, uint32_t fn, const char *name, uint32_t size, uint32_t used)
{
	struct nlattr *f = nla_nest_start(m, FLEX_DEV_A_FN);

	nla_put_u32(m, FLEX_FN_A_FN, fn);
	nla_put_string(m, FLEX_FN_A_NAME, name);
	nla_put_u32(m, FLEX_FN_A_TABLE_SIZE, size);
	nla_put_u32(m, FLEX_FN_A_TABLE_USED, used);
	nla_put_u32(m, FLEX_FN_A_OPEN_COUNT, 1);
	nla_put_u32(m, NEWER_ATTR, 5);
	nla_nest_end(m, f);
}

START_TEST(device)
{
	struct nl_msg *m = msg_new(FLEX_CMD_DEVICE_GET);
	struct nlattr *d;

	nla_put_u32(m, FLEX_A_DEVICE_INDEX, 2);
	d = nla_nest_start(m, FLEX_A_DEVICE);
	nla_put_u32(m, FLEX_DEV_A_INDEX, 2);
	nla_put_string(m, FLEX_DEV_A_NAME, "flex2");
	nla_put_u64(m, FLEX_DEV_A_CAPACITY, 128ULL << 30);
	nla_put_u64(m, FLEX_DEV_A_USED, 6 << 20);
	nla_put_u64(m, FLEX_DEV_A_FREE, (128ULL << 30) - (6 << 20));
	nla_put_u64(m, FLEX_DEV_A_LARGEST_FREE, 100ULL << 30);
	nla_put_u64(m, FLEX_DEV_A_RESIDENT, 4096);
	nla_put_u64(m, FLEX_DEV_A_BACKING_CAP, 128 << 20);
	nla_put_u64(m, FLEX_DEV_A_REGION_ALIGN, 2 << 20);
	nla_put_u32(m, FLEX_DEV_A_TOTAL_VFS, 16);
	nla_put_u32(m, FLEX_DEV_A_NUM_VFS, 1);
	nla_put_u32(m, FLEX_DEV_A_PF_TABLE_SIZE, 64);
	nla_put_u32(m, FLEX_DEV_A_VF_TABLE_SIZE, 8);
	put_fn(m, FLEX_NL_FN_PF, "flex2", 64, 2);
	nla_put_u64(m, NEWER_ATTR, 1);
	put_fn(m, FLEX_NL_FN_VF(0), "flex2vf0", 8, 0);
	nla_nest_end(m, d);
	expect_json(m, FLEX_CMD_DEVICE_GET,
		    "{\"device\":2,\"name\":\"flex2\",\"capacity\":137438953472,"
		    "\"used\":6291456,\"free\":137432662016,\"largest_free\":107374182400,"
		    "\"resident\":4096,\"backing_cap\":134217728,\"region_align\":2097152,"
		    "\"total_vfs\":16,\"num_vfs\":1,\"pf_table_size\":64,\"vf_table_size\":8,"
		    "\"functions\":["
		    "{\"name\":\"flex2\",\"function\":\"pf\",\"fn\":0,\"table_size\":64,"
		    "\"table_used\":2,\"open_count\":1},"
		    "{\"name\":\"flex2vf0\",\"function\":\"vf0\",\"fn\":1,\"table_size\":8,"
		    "\"table_used\":0,\"open_count\":1}]}");

	/* No function nest: no "functions" key. */
	m = msg_new(FLEX_CMD_DEVICE_GET);
	d = nla_nest_start(m, FLEX_A_DEVICE);
	nla_put_u32(m, FLEX_DEV_A_INDEX, 0);
	nla_nest_end(m, d);
	expect_json(m, FLEX_CMD_DEVICE_GET, "{\"device\":0}");
}
END_TEST

static struct nl_msg *region_msg(uint8_t cmd, int lut)
{
	struct nl_msg *m = msg_new(cmd);
	struct nlattr *r;

	nla_put_u32(m, FLEX_A_DEVICE_INDEX, 0);
	r = nla_nest_start(m, FLEX_A_REGION);
	nla_put_u32(m, FLEX_REGION_A_HANDLE, 7);
	nla_put_u32(m, FLEX_REGION_A_FN, FLEX_NL_FN_VF(3));
	nla_put_u64(m, FLEX_REGION_A_REGION_ID, 2);
	nla_put_u64(m, FLEX_REGION_A_PHYS, 0x100200000ULL);
	nla_put_u64(m, FLEX_REGION_A_SIZE, 4 << 20);
	nla_put_u64(m, FLEX_REGION_A_RESIDENT, 8192);
	if (lut >= 0)
		nla_put_u32(m, FLEX_REGION_A_LUT_INDEX, (uint32_t)lut);
	nla_put_u64(m, FLEX_REGION_A_MMAP_OFFSET, 0x10100200000ULL);
	nla_put_u32(m, FLEX_REGION_A_OWNER_PID, 4242);
	nla_put_string(m, FLEX_REGION_A_OWNER_COMM, "flex-run");
	nla_nest_end(m, r);
	return m;
}

START_TEST(region)
{
	const char *fmt = "{\"device\":0,\"function\":\"vf3\",\"fn\":4,\"handle\":7,\"region_id\":2,"
			  "\"phys_addr\":4297064448,\"size\":4194304,\"resident\":8192,"
			  "\"lut_index\":%s,\"mmap_offset\":1103808692224,\"owner_pid\":4242,"
			  "\"owner_comm\":\"flex-run\"}";
	char want[512];

	snprintf(want, sizeof(want), fmt, "2");
	expect_json(region_msg(FLEX_CMD_REGION_ACQUIRED_NTF, 2), FLEX_CMD_REGION_ACQUIRED_NTF,
		    want);
	/* In no lookup table, or no index sent: null. */
	snprintf(want, sizeof(want), fmt, "null");
	expect_json(region_msg(FLEX_CMD_REGION_GET, FLEX_NO_LUT_INDEX), FLEX_CMD_REGION_GET, want);
	expect_json(region_msg(FLEX_CMD_REGION_GET, -1), FLEX_CMD_REGION_GET, want);
}
END_TEST

static struct nl_msg *queue_msg(uint32_t prio, int fault_code)
{
	struct nl_msg *m = msg_new(FLEX_CMD_QUEUE_FAULT_NTF);
	struct nlattr *q, *f;

	nla_put_u32(m, FLEX_A_DEVICE_INDEX, 0);
	q = nla_nest_start(m, FLEX_A_QUEUE);
	nla_put_u32(m, FLEX_QUEUE_A_HANDLE, 3);
	nla_put_u32(m, FLEX_QUEUE_A_ID, 1);
	nla_put_u32(m, FLEX_QUEUE_A_FN, FLEX_NL_FN_PF);
	nla_put_u32(m, FLEX_QUEUE_A_OWNER_PID, 99);
	nla_put_string(m, FLEX_QUEUE_A_OWNER_COMM, "demo");
	nla_put_u32(m, FLEX_QUEUE_A_PRIORITY, prio);
	nla_put_u32(m, FLEX_QUEUE_A_DEPTH, 64);
	nla_put_u32(m, FLEX_QUEUE_A_PENDING, 2);
	nla_put_u64(m, FLEX_QUEUE_A_SUBMITTED, 10);
	nla_put_u64(m, FLEX_QUEUE_A_COMPLETED, 8);
	nla_put_u64(m, FLEX_QUEUE_A_FAULTS, fault_code >= 0);
	if (fault_code >= 0) {
		nla_put_u8(m, FLEX_QUEUE_A_FAULTED, 1);
		f = nla_nest_start(m, FLEX_QUEUE_A_FAULT);
		nla_put_u32(m, FLEX_FAULT_A_CODE, (uint32_t)fault_code);
		nla_put_u32(m, FLEX_FAULT_A_ERRNO, (uint32_t)-ENXIO);
		nla_put_u64(m, FLEX_FAULT_A_SEQNO, 9);
		nla_put_u64(m, FLEX_FAULT_A_USER_DATA, 0xbeef);
		nla_put_u32(m, FLEX_FAULT_A_OPCODE, 1);
		nla_put_u32(m, FLEX_FAULT_A_INSN, 0);
		nla_put_u64(m, FLEX_FAULT_A_REGION_ID, 5);
		nla_put_u64(m, FLEX_FAULT_A_OFFSET, 24);
		nla_put_u8(m, FLEX_FAULT_A_ADDR_VALID, 1);
		nla_nest_end(m, f);
	}
	nla_nest_end(m, q);
	return m;
}

START_TEST(queue)
{
	static const char head[] = "{\"device\":0,\"function\":\"pf\",\"fn\":0,\"handle\":3,"
				   "\"queue_id\":1,\"owner_pid\":99,\"owner_comm\":\"demo\",";
	static const char counts[] = "\"depth\":64,\"pending\":2,\"submitted\":10,"
				     "\"completed\":8,";
	char want[1024];

	snprintf(want, sizeof(want), "%s\"priority\":2,\"priority_name\":\"high\",%s"
		 "\"faults\":1,\"faulted\":true,\"fault\":{\"code\":1,\"code_name\":\"unmapped\","
		 "\"errno\":-6,\"seqno\":9,\"user_data\":48879,\"opcode\":1,\"insn\":0,"
		 "\"region_id\":5,\"offset\":24,\"addr_valid\":true}}", head, counts);
	expect_json(queue_msg(FLEX_QUEUE_PRIO_HIGH, FLEX_FAULT_UNMAPPED),
		    FLEX_CMD_QUEUE_FAULT_NTF, want);

	/* Values past the names flexctl knows; FAULTED absent is false. */
	snprintf(want, sizeof(want), "%s\"priority\":7,\"priority_name\":\"unknown\",%s"
		 "\"faults\":0,\"faulted\":false}", head, counts);
	expect_json(queue_msg(7, -1), FLEX_CMD_QUEUE_FAULT_NTF, want);
	snprintf(want, sizeof(want), "%s\"priority\":0,\"priority_name\":\"low\",%s"
		 "\"faults\":1,\"faulted\":true,\"fault\":{\"code\":99,\"code_name\":\"unknown\","
		 "\"errno\":-6,\"seqno\":9,\"user_data\":48879,\"opcode\":1,\"insn\":0,"
		 "\"region_id\":5,\"offset\":24,\"addr_valid\":true}}", head, counts);
	expect_json(queue_msg(FLEX_QUEUE_PRIO_LOW, 99), FLEX_CMD_QUEUE_FAULT_NTF, want);
}
END_TEST

START_TEST(entry_and_vf_events)
{
	struct nl_msg *m = msg_new(FLEX_CMD_TABLE_GET);
	struct nlattr *e;

	nla_put_u32(m, FLEX_A_DEVICE_INDEX, 1);
	e = nla_nest_start(m, FLEX_A_ENTRY);
	nla_put_u32(m, FLEX_ENTRY_A_FN, FLEX_NL_FN_VF(1));
	nla_put_u32(m, FLEX_ENTRY_A_INDEX, 3);
	nla_put_u64(m, FLEX_ENTRY_A_REGION_ID, 3);
	nla_put_u64(m, FLEX_ENTRY_A_PHYS, 0x100000000ULL);
	nla_put_u64(m, FLEX_ENTRY_A_SIZE, 2 << 20);
	nla_put_u32(m, FLEX_ENTRY_A_HANDLE, 11);
	nla_put_u32(m, FLEX_ENTRY_A_OWNER_PID, 5);
	nla_put_string(m, FLEX_ENTRY_A_OWNER_COMM, "t");
	nla_nest_end(m, e);
	expect_json(m, FLEX_CMD_TABLE_GET,
		    "{\"device\":1,\"function\":\"vf1\",\"fn\":2,\"index\":3,\"region_id\":3,"
		    "\"phys_addr\":4294967296,\"size\":2097152,\"handle\":11,\"owner_pid\":5,"
		    "\"owner_comm\":\"t\"}");

	m = msg_new(FLEX_CMD_VFS_ENABLED_NTF);
	nla_put_u32(m, FLEX_A_DEVICE_INDEX, 0);
	nla_put_u32(m, FLEX_A_NUM_VFS, 4);
	expect_json(m, FLEX_CMD_VFS_ENABLED_NTF, "{\"device\":0,\"num_vfs\":4}");
}
END_TEST

START_TEST(refused)
{
	struct nl_msg *m;
	struct nlattr *n;

	/* Nothing flexctl knows. */
	m = msg_new(FLEX_CMD_DEVICE_GET);
	nla_put_u32(m, NEWER_ATTR, 1);
	expect_json(m, FLEX_CMD_DEVICE_GET, "NULL");

	/* Shorter than its type (libnl checks the minimum), at the top and in a nest. */
	m = msg_new(FLEX_CMD_DEVICE_GET);
	nla_put_u16(m, FLEX_A_DEVICE_INDEX, 0);
	nla_put_u32(m, FLEX_A_NUM_VFS, 1);
	expect_json(m, FLEX_CMD_DEVICE_GET, "NULL");
	m = msg_new(FLEX_CMD_REGION_GET);
	nla_put_u32(m, FLEX_A_DEVICE_INDEX, 0);
	n = nla_nest_start(m, FLEX_A_REGION);
	nla_put_u8(m, FLEX_REGION_A_HANDLE, 1);
	nla_nest_end(m, n);
	expect_json(m, FLEX_CMD_REGION_GET, "NULL");

	/* A malformed fault leaves the queue without its "fault". */
	m = msg_new(FLEX_CMD_QUEUE_GET);
	n = nla_nest_start(m, FLEX_A_QUEUE);
	nla_put_u32(m, FLEX_QUEUE_A_ID, 1);
	{
		struct nlattr *f = nla_nest_start(m, FLEX_QUEUE_A_FAULT);

		nla_put_u8(m, FLEX_FAULT_A_SEQNO, 1);
		nla_nest_end(m, f);
	}
	nla_nest_end(m, n);
	expect_json(m, FLEX_CMD_QUEUE_GET, "{\"queue_id\":1,\"faulted\":false}");
}
END_TEST

START_TEST(function_names)
{
	char name[16];
	uint32_t fn;

	flexctl_fn_name(FLEX_NL_FN_PF, name, sizeof(name));
	ck_assert_str_eq(name, "pf");
	flexctl_fn_name(FLEX_NL_FN_VF(15), name, sizeof(name));
	ck_assert_str_eq(name, "vf15");
	ck_assert_int_eq(flexctl_parse_fn("pf", &fn), 0);
	ck_assert_uint_eq(fn, FLEX_NL_FN_PF);
	ck_assert_int_eq(flexctl_parse_fn("vf0", &fn), 0);
	ck_assert_uint_eq(fn, FLEX_NL_FN_VF(0));
	ck_assert_int_eq(flexctl_parse_fn("vf999", &fn), 0);
	ck_assert_uint_eq(fn, FLEX_NL_FN_VF(999));
	ck_assert_int_eq(flexctl_parse_fn("vf1000", &fn), -EINVAL);
	ck_assert_int_eq(flexctl_parse_fn("vf1x", &fn), -EINVAL);
	ck_assert_int_eq(flexctl_parse_fn("vf", &fn), -EINVAL);
	ck_assert_int_eq(flexctl_parse_fn("PF", &fn), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("nlattrs");
	TCase *tc = tcase_create("nlattrs");

	tcase_add_test(tc, device);
	tcase_add_test(tc, region);
	tcase_add_test(tc, queue);
	tcase_add_test(tc, entry_and_vf_events);
	tcase_add_test(tc, refused);
	tcase_add_test(tc, function_names);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
