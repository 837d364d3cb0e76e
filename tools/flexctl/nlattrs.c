// SPDX-License-Identifier: GPL-2.0
/*
 * flexctl: the flex family's messages (uapi/linux/flex_netlink.h) as json-c
 * objects. Every reply is parsed against a policy (genlmsg_parse,
 * nla_parse_nested), and attributes this flexctl does not know are
 * ignored, as the family's rules ask of readers.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <netlink/genl/genl.h>

#include <linux/flex.h>
#include <linux/flex_netlink.h>

#include "flexnl.h"

/* ---- policies: what each attribute must look like ---- */

static struct nla_policy top_policy[FLEX_A_MAX + 1] = {
	[FLEX_A_DEVICE_INDEX] = { .type = NLA_U32 },
	[FLEX_A_FN] = { .type = NLA_U32 },
	[FLEX_A_REGION_HANDLE] = { .type = NLA_U32 },
	[FLEX_A_QUEUE_HANDLE] = { .type = NLA_U32 },
	[FLEX_A_TABLE_INDEX] = { .type = NLA_U32 },
	[FLEX_A_DEVICE] = { .type = NLA_NESTED },
	[FLEX_A_REGION] = { .type = NLA_NESTED },
	[FLEX_A_QUEUE] = { .type = NLA_NESTED },
	[FLEX_A_ENTRY] = { .type = NLA_NESTED },
	[FLEX_A_NUM_VFS] = { .type = NLA_U32 },
};

static struct nla_policy dev_policy[FLEX_DEV_A_MAX + 1] = {
	[FLEX_DEV_A_INDEX] = { .type = NLA_U32 },
	[FLEX_DEV_A_NAME] = { .type = NLA_STRING },
	[FLEX_DEV_A_CAPACITY] = { .type = NLA_U64 },
	[FLEX_DEV_A_USED] = { .type = NLA_U64 },
	[FLEX_DEV_A_FREE] = { .type = NLA_U64 },
	[FLEX_DEV_A_LARGEST_FREE] = { .type = NLA_U64 },
	[FLEX_DEV_A_RESIDENT] = { .type = NLA_U64 },
	[FLEX_DEV_A_BACKING_CAP] = { .type = NLA_U64 },
	[FLEX_DEV_A_REGION_ALIGN] = { .type = NLA_U64 },
	[FLEX_DEV_A_TOTAL_VFS] = { .type = NLA_U32 },
	[FLEX_DEV_A_NUM_VFS] = { .type = NLA_U32 },
	[FLEX_DEV_A_PF_TABLE_SIZE] = { .type = NLA_U32 },
	[FLEX_DEV_A_VF_TABLE_SIZE] = { .type = NLA_U32 },
	[FLEX_DEV_A_FN] = { .type = NLA_NESTED },
};

static struct nla_policy fn_policy[FLEX_FN_A_MAX + 1] = {
	[FLEX_FN_A_FN] = { .type = NLA_U32 },
	[FLEX_FN_A_NAME] = { .type = NLA_STRING },
	[FLEX_FN_A_TABLE_SIZE] = { .type = NLA_U32 },
	[FLEX_FN_A_TABLE_USED] = { .type = NLA_U32 },
	[FLEX_FN_A_OPEN_COUNT] = { .type = NLA_U32 },
};

static struct nla_policy region_policy[FLEX_REGION_A_MAX + 1] = {
	[FLEX_REGION_A_HANDLE] = { .type = NLA_U32 },
	[FLEX_REGION_A_FN] = { .type = NLA_U32 },
	[FLEX_REGION_A_REGION_ID] = { .type = NLA_U64 },
	[FLEX_REGION_A_PHYS] = { .type = NLA_U64 },
	[FLEX_REGION_A_SIZE] = { .type = NLA_U64 },
	[FLEX_REGION_A_RESIDENT] = { .type = NLA_U64 },
	[FLEX_REGION_A_LUT_INDEX] = { .type = NLA_U32 },
	[FLEX_REGION_A_MMAP_OFFSET] = { .type = NLA_U64 },
	[FLEX_REGION_A_OWNER_PID] = { .type = NLA_U32 },
	[FLEX_REGION_A_OWNER_COMM] = { .type = NLA_STRING },
};

static struct nla_policy queue_policy[FLEX_QUEUE_A_MAX + 1] = {
	[FLEX_QUEUE_A_HANDLE] = { .type = NLA_U32 },
	[FLEX_QUEUE_A_ID] = { .type = NLA_U32 },
	[FLEX_QUEUE_A_FN] = { .type = NLA_U32 },
	[FLEX_QUEUE_A_OWNER_PID] = { .type = NLA_U32 },
	[FLEX_QUEUE_A_OWNER_COMM] = { .type = NLA_STRING },
	[FLEX_QUEUE_A_PRIORITY] = { .type = NLA_U32 },
	[FLEX_QUEUE_A_DEPTH] = { .type = NLA_U32 },
	[FLEX_QUEUE_A_PENDING] = { .type = NLA_U32 },
	[FLEX_QUEUE_A_SUBMITTED] = { .type = NLA_U64 },
	[FLEX_QUEUE_A_COMPLETED] = { .type = NLA_U64 },
	[FLEX_QUEUE_A_FAULTS] = { .type = NLA_U64 },
	[FLEX_QUEUE_A_FAULTED] = { .type = NLA_U8 },
	[FLEX_QUEUE_A_FAULT] = { .type = NLA_NESTED },
};

static struct nla_policy fault_policy[FLEX_FAULT_A_MAX + 1] = {
	[FLEX_FAULT_A_CODE] = { .type = NLA_U32 },
	[FLEX_FAULT_A_ERRNO] = { .type = NLA_U32 },	/* s32 */
	[FLEX_FAULT_A_SEQNO] = { .type = NLA_U64 },
	[FLEX_FAULT_A_USER_DATA] = { .type = NLA_U64 },
	[FLEX_FAULT_A_OPCODE] = { .type = NLA_U32 },
	[FLEX_FAULT_A_INSN] = { .type = NLA_U32 },
	[FLEX_FAULT_A_REGION_ID] = { .type = NLA_U64 },
	[FLEX_FAULT_A_OFFSET] = { .type = NLA_U64 },
	[FLEX_FAULT_A_ADDR_VALID] = { .type = NLA_U8 },
};

static struct nla_policy entry_policy[FLEX_ENTRY_A_MAX + 1] = {
	[FLEX_ENTRY_A_FN] = { .type = NLA_U32 },
	[FLEX_ENTRY_A_INDEX] = { .type = NLA_U32 },
	[FLEX_ENTRY_A_REGION_ID] = { .type = NLA_U64 },
	[FLEX_ENTRY_A_PHYS] = { .type = NLA_U64 },
	[FLEX_ENTRY_A_SIZE] = { .type = NLA_U64 },
	[FLEX_ENTRY_A_HANDLE] = { .type = NLA_U32 },
	[FLEX_ENTRY_A_OWNER_PID] = { .type = NLA_U32 },
	[FLEX_ENTRY_A_OWNER_COMM] = { .type = NLA_STRING },
};

/* ---- attribute -> json helpers ---- */

static void put_u32(struct json_object *o, const char *key, struct nlattr *a)
{
	if (a)
		tool_jset_int(o, key, nla_get_u32(a));
}

static void put_u64(struct json_object *o, const char *key, struct nlattr *a)
{
	if (a)
		tool_jset_int(o, key, (int64_t)nla_get_u64(a));
}

static void put_str(struct json_object *o, const char *key, struct nlattr *a)
{
	if (a)
		tool_jset_str(o, key, nla_get_string(a));
}

void flexctl_fn_name(uint32_t fn, char *buf, size_t len)
{
	if (fn == FLEX_NL_FN_PF)
		snprintf(buf, len, "pf");
	else
		snprintf(buf, len, "vf%u", fn - 1);
}

static void put_fn(struct json_object *o, struct nlattr *a)
{
	char name[16];

	if (!a)
		return;
	flexctl_fn_name(nla_get_u32(a), name, sizeof(name));
	tool_jset_str(o, "function", name);
	tool_jset_int(o, "fn", nla_get_u32(a));
}

int flexctl_parse_fn(const char *s, uint32_t *fn)
{
	unsigned int vf;
	char tail;

	if (!strcmp(s, "pf")) {
		*fn = FLEX_NL_FN_PF;
		return 0;
	}
	if (sscanf(s, "vf%u%c", &vf, &tail) == 1 && vf < 1000) {
		*fn = FLEX_NL_FN_VF(vf);
		return 0;
	}
	return -EINVAL;
}

static struct json_object *parse_device(struct nlattr *nest)
{
	struct nlattr *tb[FLEX_DEV_A_MAX + 1], *a;
	struct json_object *o, *fns;
	int rem;

	if (nla_parse_nested(tb, FLEX_DEV_A_MAX, nest, dev_policy) < 0)
		return NULL;
	o = json_object_new_object();
	put_u32(o, "device", tb[FLEX_DEV_A_INDEX]);
	put_str(o, "name", tb[FLEX_DEV_A_NAME]);
	put_u64(o, "capacity", tb[FLEX_DEV_A_CAPACITY]);
	put_u64(o, "used", tb[FLEX_DEV_A_USED]);
	put_u64(o, "free", tb[FLEX_DEV_A_FREE]);
	put_u64(o, "largest_free", tb[FLEX_DEV_A_LARGEST_FREE]);
	put_u64(o, "resident", tb[FLEX_DEV_A_RESIDENT]);
	put_u64(o, "backing_cap", tb[FLEX_DEV_A_BACKING_CAP]);
	put_u64(o, "region_align", tb[FLEX_DEV_A_REGION_ALIGN]);
	put_u32(o, "total_vfs", tb[FLEX_DEV_A_TOTAL_VFS]);
	put_u32(o, "num_vfs", tb[FLEX_DEV_A_NUM_VFS]);
	put_u32(o, "pf_table_size", tb[FLEX_DEV_A_PF_TABLE_SIZE]);
	put_u32(o, "vf_table_size", tb[FLEX_DEV_A_VF_TABLE_SIZE]);
	if (!tb[FLEX_DEV_A_FN])
		return o;
	/* FLEX_DEV_A_FN repeats: walk the nest's siblings of that type. */
	fns = json_object_new_array();
	nla_for_each_nested(a, nest, rem) {
		struct nlattr *ft[FLEX_FN_A_MAX + 1];
		struct json_object *f;

		if (nla_type(a) != FLEX_DEV_A_FN ||
		    nla_parse_nested(ft, FLEX_FN_A_MAX, a, fn_policy) < 0)
			continue;
		f = json_object_new_object();
		put_str(f, "name", ft[FLEX_FN_A_NAME]);
		put_fn(f, ft[FLEX_FN_A_FN]);
		put_u32(f, "table_size", ft[FLEX_FN_A_TABLE_SIZE]);
		put_u32(f, "table_used", ft[FLEX_FN_A_TABLE_USED]);
		put_u32(f, "open_count", ft[FLEX_FN_A_OPEN_COUNT]);
		json_object_array_add(fns, f);
	}
	json_object_object_add(o, "functions", fns);
	return o;
}

static struct json_object *parse_region(struct nlattr *nest)
{
	struct nlattr *tb[FLEX_REGION_A_MAX + 1];
	struct json_object *o;

	if (nla_parse_nested(tb, FLEX_REGION_A_MAX, nest, region_policy) < 0)
		return NULL;
	o = json_object_new_object();
	put_fn(o, tb[FLEX_REGION_A_FN]);
	put_u32(o, "handle", tb[FLEX_REGION_A_HANDLE]);
	put_u64(o, "region_id", tb[FLEX_REGION_A_REGION_ID]);
	put_u64(o, "phys_addr", tb[FLEX_REGION_A_PHYS]);
	put_u64(o, "size", tb[FLEX_REGION_A_SIZE]);
	put_u64(o, "resident", tb[FLEX_REGION_A_RESIDENT]);
	if (tb[FLEX_REGION_A_LUT_INDEX] &&
	    nla_get_u32(tb[FLEX_REGION_A_LUT_INDEX]) != FLEX_NO_LUT_INDEX)
		put_u32(o, "lut_index", tb[FLEX_REGION_A_LUT_INDEX]);
	else
		json_object_object_add(o, "lut_index", NULL);
	put_u64(o, "mmap_offset", tb[FLEX_REGION_A_MMAP_OFFSET]);
	put_u32(o, "owner_pid", tb[FLEX_REGION_A_OWNER_PID]);
	put_str(o, "owner_comm", tb[FLEX_REGION_A_OWNER_COMM]);
	return o;
}

static const char *const prio_names[] = { "low", "normal", "high" };
static const char *const fault_names[] = {
	"none", "unmapped", "out_of_bounds", "bad_program", "backing", "host", "dependency",
	"limit",
};

static struct json_object *parse_queue(struct nlattr *nest)
{
	struct nlattr *tb[FLEX_QUEUE_A_MAX + 1];
	struct json_object *o;

	if (nla_parse_nested(tb, FLEX_QUEUE_A_MAX, nest, queue_policy) < 0)
		return NULL;
	o = json_object_new_object();
	put_fn(o, tb[FLEX_QUEUE_A_FN]);
	put_u32(o, "handle", tb[FLEX_QUEUE_A_HANDLE]);
	put_u32(o, "queue_id", tb[FLEX_QUEUE_A_ID]);
	put_u32(o, "owner_pid", tb[FLEX_QUEUE_A_OWNER_PID]);
	put_str(o, "owner_comm", tb[FLEX_QUEUE_A_OWNER_COMM]);
	if (tb[FLEX_QUEUE_A_PRIORITY]) {
		uint32_t p = nla_get_u32(tb[FLEX_QUEUE_A_PRIORITY]);

		tool_jset_int(o, "priority", p);
		tool_jset_str(o, "priority_name", p < 3 ? prio_names[p] : "unknown");
	}
	put_u32(o, "depth", tb[FLEX_QUEUE_A_DEPTH]);
	put_u32(o, "pending", tb[FLEX_QUEUE_A_PENDING]);
	put_u64(o, "submitted", tb[FLEX_QUEUE_A_SUBMITTED]);
	put_u64(o, "completed", tb[FLEX_QUEUE_A_COMPLETED]);
	put_u64(o, "faults", tb[FLEX_QUEUE_A_FAULTS]);
	json_object_object_add(o, "faulted", json_object_new_boolean(
		tb[FLEX_QUEUE_A_FAULTED] && nla_get_u8(tb[FLEX_QUEUE_A_FAULTED])));
	if (tb[FLEX_QUEUE_A_FAULT]) {
		struct nlattr *ft[FLEX_FAULT_A_MAX + 1];
		struct json_object *f;

		if (nla_parse_nested(ft, FLEX_FAULT_A_MAX, tb[FLEX_QUEUE_A_FAULT],
				     fault_policy) == 0) {
			f = json_object_new_object();
			if (ft[FLEX_FAULT_A_CODE]) {
				uint32_t code = nla_get_u32(ft[FLEX_FAULT_A_CODE]);

				tool_jset_int(f, "code", code);
				tool_jset_str(f, "code_name", code < sizeof(fault_names) /
					 sizeof(fault_names[0]) ? fault_names[code] : "unknown");
			}
			if (ft[FLEX_FAULT_A_ERRNO])
				tool_jset_int(f, "errno", (int32_t)nla_get_u32(ft[FLEX_FAULT_A_ERRNO]));
			put_u64(f, "seqno", ft[FLEX_FAULT_A_SEQNO]);
			put_u64(f, "user_data", ft[FLEX_FAULT_A_USER_DATA]);
			put_u32(f, "opcode", ft[FLEX_FAULT_A_OPCODE]);
			put_u32(f, "insn", ft[FLEX_FAULT_A_INSN]);
			put_u64(f, "region_id", ft[FLEX_FAULT_A_REGION_ID]);
			put_u64(f, "offset", ft[FLEX_FAULT_A_OFFSET]);
			if (ft[FLEX_FAULT_A_ADDR_VALID])
				json_object_object_add(f, "addr_valid", json_object_new_boolean(
					nla_get_u8(ft[FLEX_FAULT_A_ADDR_VALID])));
			json_object_object_add(o, "fault", f);
		}
	}
	return o;
}

static struct json_object *parse_entry(struct nlattr *nest)
{
	struct nlattr *tb[FLEX_ENTRY_A_MAX + 1];
	struct json_object *o;

	if (nla_parse_nested(tb, FLEX_ENTRY_A_MAX, nest, entry_policy) < 0)
		return NULL;
	o = json_object_new_object();
	put_fn(o, tb[FLEX_ENTRY_A_FN]);
	put_u32(o, "index", tb[FLEX_ENTRY_A_INDEX]);
	put_u64(o, "region_id", tb[FLEX_ENTRY_A_REGION_ID]);
	put_u64(o, "phys_addr", tb[FLEX_ENTRY_A_PHYS]);
	put_u64(o, "size", tb[FLEX_ENTRY_A_SIZE]);
	put_u32(o, "handle", tb[FLEX_ENTRY_A_HANDLE]);
	put_u32(o, "owner_pid", tb[FLEX_ENTRY_A_OWNER_PID]);
	put_str(o, "owner_comm", tb[FLEX_ENTRY_A_OWNER_COMM]);
	return o;
}

struct json_object *flexctl_nl_parse_msg(struct nl_msg *msg, uint8_t *cmd)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct genlmsghdr *gh = genlmsg_hdr(nlh);
	struct nlattr *tb[FLEX_A_MAX + 1];
	struct json_object *o = NULL, *dev;

	if (genlmsg_parse(nlh, 0, tb, FLEX_A_MAX, top_policy) < 0)
		return NULL;
	*cmd = gh->cmd;
	if (tb[FLEX_A_DEVICE])
		o = parse_device(tb[FLEX_A_DEVICE]);
	else if (tb[FLEX_A_REGION])
		o = parse_region(tb[FLEX_A_REGION]);
	else if (tb[FLEX_A_QUEUE])
		o = parse_queue(tb[FLEX_A_QUEUE]);
	else if (tb[FLEX_A_ENTRY])
		o = parse_entry(tb[FLEX_A_ENTRY]);
	else if (tb[FLEX_A_NUM_VFS] || tb[FLEX_A_DEVICE_INDEX])
		o = json_object_new_object();
	if (!o)
		return NULL;
	put_u32(o, "num_vfs", tb[FLEX_A_NUM_VFS]);
	/* "device" first in every object, for people reading the JSON. */
	if (tb[FLEX_A_DEVICE_INDEX]) {
		dev = json_object_new_object();
		tool_jset_int(dev, "device", nla_get_u32(tb[FLEX_A_DEVICE_INDEX]));
		json_object_object_foreach(o, k, v)
			if (strcmp(k, "device"))
				json_object_object_add(dev, k, json_object_get(v));
		json_object_put(o);
		o = dev;
	}
	return o;
}
