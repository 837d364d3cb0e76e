// SPDX-License-Identifier: GPL-2.0
/*
 * flexctl: the flex family's messages (uapi/linux/flex_netlink.h) as json-c
 * objects. Each attribute set is one table of fields: the attribute, its
 * JSON key and what it holds. One walker reads every set from its table,
 * and the parse policy (what each attribute must look like) comes from the
 * same table, so the two cannot disagree. Attributes this flexctl does not
 * know are ignored, as the family's rules ask of readers; an attribute too
 * short for its type (libnl checks minimum lengths) makes its set unreadable.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <netlink/genl/genl.h>

#include <linux/flex.h>
#include <linux/flex_netlink.h>

#include "flexnl.h"

enum field_kind {
	F_U32,		/* u32 */
	F_U64,		/* u64 */
	F_S32,		/* s32, carried as a u32 */
	F_STR,		/* NUL-terminated string */
	F_BOOL,		/* u8, as true or false; absent: no key */
	F_FLAG,		/* u8, as true or false; absent: false */
	F_FN,		/* u32 function number: "function" ("pf", "vfM") and "fn" */
	F_LUT,		/* u32 lookup-table index; FLEX_NO_LUT_INDEX or absent: null */
	F_ENUM,		/* u32, and its name (or "unknown") under .name_key */
	F_NEST,		/* one nested set (.nest), as an object */
	F_NESTS,	/* a nested set that repeats (.nest), as an array of objects */
};

struct attr_set;

struct field {
	uint16_t attr;
	enum field_kind kind;
	const char *key;
	const char *name_key;			/* F_ENUM */
	const char *const *names;		/* F_ENUM, indexed by value */
	unsigned int n_names;
	const struct attr_set *nest;		/* F_NEST, F_NESTS */
};

struct attr_set {
	unsigned int maxattr;
	const struct field *fields;
	unsigned int n_fields;
};

/* Every set's maxattr is below this (checked at build time, below). */
#define MAXATTR 32

#define FIELD(a, k, jk)	{ .attr = (a), .kind = (k), .key = (jk) }
#define NEST(a, k, jk, set) { .attr = (a), .kind = (k), .key = (jk), .nest = (set) }
#define SET(max, f) { .maxattr = (max), .fields = (f), .n_fields = sizeof(f) / sizeof((f)[0]) }
#define ENUM(a, jk, nk, n) { .attr = (a), .kind = F_ENUM, .key = (jk), .name_key = (nk), \
			     .names = (n), .n_names = sizeof(n) / sizeof((n)[0]) }

_Static_assert(FLEX_A_MAX < MAXATTR && FLEX_DEV_A_MAX < MAXATTR && FLEX_FN_A_MAX < MAXATTR &&
	       FLEX_REGION_A_MAX < MAXATTR && FLEX_QUEUE_A_MAX < MAXATTR &&
	       FLEX_FAULT_A_MAX < MAXATTR && FLEX_ENTRY_A_MAX < MAXATTR &&
	       FLEX_FILE_A_MAX < MAXATTR,
	       "an attribute set outgrew MAXATTR");

static const char *const prio_names[] = { "low", "normal", "high" };
static const char *const fault_names[] = {
	"none", "unmapped", "out_of_bounds", "bad_program", "backing", "host", "dependency",
	"limit",
};

static const struct field fn_fields[] = {
	FIELD(FLEX_FN_A_NAME, F_STR, "name"),
	FIELD(FLEX_FN_A_FN, F_FN, NULL),
	FIELD(FLEX_FN_A_TABLE_SIZE, F_U32, "table_size"),
	FIELD(FLEX_FN_A_TABLE_USED, F_U32, "table_used"),
	FIELD(FLEX_FN_A_OPEN_COUNT, F_U32, "open_count"),
	FIELD(FLEX_FN_A_USED, F_U64, "used"),
	FIELD(FLEX_FN_A_RESIDENT, F_U64, "resident"),
	FIELD(FLEX_FN_A_QUOTA_CAPACITY, F_U64, "quota_capacity"),
	FIELD(FLEX_FN_A_QUOTA_BACKING, F_U64, "quota_backing"),
	FIELD(FLEX_FN_A_QUEUES, F_U32, "queues"),
	FIELD(FLEX_FN_A_PENDING, F_U32, "pending"),
	FIELD(FLEX_FN_A_ENGINE_DMA_NS, F_U64, "engine_dma_ns"),
	FIELD(FLEX_FN_A_ENGINE_COMPUTE_NS, F_U64, "engine_compute_ns"),
	FIELD(FLEX_FN_A_ENGINE_DMA_CBS, F_U64, "engine_dma_cbs"),
	FIELD(FLEX_FN_A_ENGINE_COMPUTE_CBS, F_U64, "engine_compute_cbs"),
};
static const struct attr_set fn_set = SET(FLEX_FN_A_MAX, fn_fields);

static const struct field dev_fields[] = {
	FIELD(FLEX_DEV_A_INDEX, F_U32, "device"),
	FIELD(FLEX_DEV_A_NAME, F_STR, "name"),
	FIELD(FLEX_DEV_A_CAPACITY, F_U64, "capacity"),
	FIELD(FLEX_DEV_A_USED, F_U64, "used"),
	FIELD(FLEX_DEV_A_FREE, F_U64, "free"),
	FIELD(FLEX_DEV_A_LARGEST_FREE, F_U64, "largest_free"),
	FIELD(FLEX_DEV_A_RESIDENT, F_U64, "resident"),
	FIELD(FLEX_DEV_A_BACKING_CAP, F_U64, "backing_cap"),
	FIELD(FLEX_DEV_A_REGION_ALIGN, F_U64, "region_align"),
	FIELD(FLEX_DEV_A_TOTAL_VFS, F_U32, "total_vfs"),
	FIELD(FLEX_DEV_A_NUM_VFS, F_U32, "num_vfs"),
	FIELD(FLEX_DEV_A_PF_TABLE_SIZE, F_U32, "pf_table_size"),
	FIELD(FLEX_DEV_A_VF_TABLE_SIZE, F_U32, "vf_table_size"),
	NEST(FLEX_DEV_A_FN, F_NESTS, "functions", &fn_set),
	FIELD(FLEX_DEV_A_MEM_BASE, F_U64, "mem_base"),
};
static const struct attr_set dev_set = SET(FLEX_DEV_A_MAX, dev_fields);

static const struct field region_fields[] = {
	FIELD(FLEX_REGION_A_FN, F_FN, NULL),
	FIELD(FLEX_REGION_A_HANDLE, F_U32, "handle"),
	FIELD(FLEX_REGION_A_REGION_ID, F_U64, "region_id"),
	FIELD(FLEX_REGION_A_PHYS, F_U64, "phys_addr"),
	FIELD(FLEX_REGION_A_SIZE, F_U64, "size"),
	FIELD(FLEX_REGION_A_RESIDENT, F_U64, "resident"),
	FIELD(FLEX_REGION_A_LUT_INDEX, F_LUT, "lut_index"),
	FIELD(FLEX_REGION_A_MMAP_OFFSET, F_U64, "mmap_offset"),
	FIELD(FLEX_REGION_A_OWNER_PID, F_U32, "owner_pid"),
	FIELD(FLEX_REGION_A_OWNER_COMM, F_STR, "owner_comm"),
};
static const struct attr_set region_set = SET(FLEX_REGION_A_MAX, region_fields);

static const struct field fault_fields[] = {
	ENUM(FLEX_FAULT_A_CODE, "code", "code_name", fault_names),
	FIELD(FLEX_FAULT_A_ERRNO, F_S32, "errno"),
	FIELD(FLEX_FAULT_A_SEQNO, F_U64, "seqno"),
	FIELD(FLEX_FAULT_A_USER_DATA, F_U64, "user_data"),
	FIELD(FLEX_FAULT_A_OPCODE, F_U32, "opcode"),
	FIELD(FLEX_FAULT_A_INSN, F_U32, "insn"),
	FIELD(FLEX_FAULT_A_REGION_ID, F_U64, "region_id"),
	FIELD(FLEX_FAULT_A_OFFSET, F_U64, "offset"),
	FIELD(FLEX_FAULT_A_ADDR_VALID, F_BOOL, "addr_valid"),
};
static const struct attr_set fault_set = SET(FLEX_FAULT_A_MAX, fault_fields);

static const struct field queue_fields[] = {
	FIELD(FLEX_QUEUE_A_FN, F_FN, NULL),
	FIELD(FLEX_QUEUE_A_HANDLE, F_U32, "handle"),
	FIELD(FLEX_QUEUE_A_ID, F_U32, "queue_id"),
	FIELD(FLEX_QUEUE_A_OWNER_PID, F_U32, "owner_pid"),
	FIELD(FLEX_QUEUE_A_OWNER_COMM, F_STR, "owner_comm"),
	ENUM(FLEX_QUEUE_A_PRIORITY, "priority", "priority_name", prio_names),
	FIELD(FLEX_QUEUE_A_DEPTH, F_U32, "depth"),
	FIELD(FLEX_QUEUE_A_PENDING, F_U32, "pending"),
	FIELD(FLEX_QUEUE_A_SUBMITTED, F_U64, "submitted"),
	FIELD(FLEX_QUEUE_A_COMPLETED, F_U64, "completed"),
	FIELD(FLEX_QUEUE_A_FAULTS, F_U64, "faults"),
	FIELD(FLEX_QUEUE_A_FAULTED, F_FLAG, "faulted"),
	NEST(FLEX_QUEUE_A_FAULT, F_NEST, "fault", &fault_set),
};
static const struct attr_set queue_set = SET(FLEX_QUEUE_A_MAX, queue_fields);

static const struct field entry_fields[] = {
	FIELD(FLEX_ENTRY_A_FN, F_FN, NULL),
	FIELD(FLEX_ENTRY_A_INDEX, F_U32, "index"),
	FIELD(FLEX_ENTRY_A_REGION_ID, F_U64, "region_id"),
	FIELD(FLEX_ENTRY_A_PHYS, F_U64, "phys_addr"),
	FIELD(FLEX_ENTRY_A_SIZE, F_U64, "size"),
	FIELD(FLEX_ENTRY_A_HANDLE, F_U32, "handle"),
	FIELD(FLEX_ENTRY_A_OWNER_PID, F_U32, "owner_pid"),
	FIELD(FLEX_ENTRY_A_OWNER_COMM, F_STR, "owner_comm"),
};
static const struct attr_set entry_set = SET(FLEX_ENTRY_A_MAX, entry_fields);

static const struct field file_fields[] = {
	FIELD(FLEX_FILE_A_CLIENT_ID, F_U64, "client_id"),
	FIELD(FLEX_FILE_A_FN, F_FN, NULL),
	FIELD(FLEX_FILE_A_OWNER_PID, F_U32, "pid"),
	FIELD(FLEX_FILE_A_OWNER_COMM, F_STR, "comm"),
	FIELD(FLEX_FILE_A_REGIONS, F_U32, "regions"),
	FIELD(FLEX_FILE_A_BYTES, F_U64, "bytes"),
	FIELD(FLEX_FILE_A_RESIDENT, F_U64, "resident"),
	FIELD(FLEX_FILE_A_QUEUES, F_U32, "queues"),
	FIELD(FLEX_FILE_A_PENDING, F_U32, "pending"),
	FIELD(FLEX_FILE_A_SUBMITTED, F_U64, "cbs_submitted"),
	FIELD(FLEX_FILE_A_COMPLETED, F_U64, "cbs_completed"),
	FIELD(FLEX_FILE_A_FAULTS, F_U64, "faults"),
	FIELD(FLEX_FILE_A_PINNED, F_U64, "pinned"),
	FIELD(FLEX_FILE_A_ENGINE_DMA_NS, F_U64, "engine_dma_ns"),
	FIELD(FLEX_FILE_A_ENGINE_COMPUTE_NS, F_U64, "engine_compute_ns"),
	FIELD(FLEX_FILE_A_ENGINE_DMA_CBS, F_U64, "engine_dma_cbs"),
	FIELD(FLEX_FILE_A_ENGINE_COMPUTE_CBS, F_U64, "engine_compute_cbs"),
};
static const struct attr_set file_set = SET(FLEX_FILE_A_MAX, file_fields);

/*
 * The top level of a reply or event. The selectors are request-only, but
 * typed here too: a reply carrying one of the wrong type is malformed.
 * flexctl_nl_parse_msg() places "device" and the object nest itself.
 */
static const struct field top_fields[] = {
	FIELD(FLEX_A_DEVICE_INDEX, F_U32, "device"),
	FIELD(FLEX_A_FN, F_U32, NULL),
	FIELD(FLEX_A_REGION_HANDLE, F_U32, NULL),
	FIELD(FLEX_A_QUEUE_HANDLE, F_U32, NULL),
	FIELD(FLEX_A_TABLE_INDEX, F_U32, NULL),
	NEST(FLEX_A_DEVICE, F_NEST, NULL, &dev_set),
	NEST(FLEX_A_REGION, F_NEST, NULL, &region_set),
	NEST(FLEX_A_QUEUE, F_NEST, NULL, &queue_set),
	NEST(FLEX_A_ENTRY, F_NEST, NULL, &entry_set),
	FIELD(FLEX_A_NUM_VFS, F_U32, "num_vfs"),
	FIELD(FLEX_A_CLIENT_ID, F_U64, NULL),
	NEST(FLEX_A_FILE, F_NEST, NULL, &file_set),
};
static const struct attr_set top_set = SET(FLEX_A_MAX, top_fields);

/* A message carries at most one of these objects. */
static const uint16_t object_attrs[] = {
	FLEX_A_DEVICE, FLEX_A_REGION, FLEX_A_QUEUE, FLEX_A_ENTRY, FLEX_A_FILE,
};

void flexctl_fn_name(uint32_t fn, char *buf, size_t len)
{
	if (fn == FLEX_NL_FN_PF)
		snprintf(buf, len, "pf");
	else
		snprintf(buf, len, "vf%u", fn - 1);
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

/* The libnl policy of @set, from its table. */
static void set_policy(const struct attr_set *set, struct nla_policy *pol)
{
	static const uint16_t type[] = {
		[F_U32] = NLA_U32, [F_U64] = NLA_U64, [F_S32] = NLA_U32, [F_STR] = NLA_STRING,
		[F_BOOL] = NLA_U8, [F_FLAG] = NLA_U8, [F_FN] = NLA_U32, [F_LUT] = NLA_U32,
		[F_ENUM] = NLA_U32, [F_NEST] = NLA_NESTED, [F_NESTS] = NLA_NESTED,
	};

	memset(pol, 0, (set->maxattr + 1) * sizeof(*pol));
	for (unsigned int i = 0; i < set->n_fields; i++)
		pol[set->fields[i].attr].type = type[set->fields[i].kind];
}

/* @tb[0..set->maxattr] from the attributes of @nest. */
static int parse_set(const struct attr_set *set, struct nlattr *nest, struct nlattr **tb)
{
	struct nla_policy pol[MAXATTR + 1];

	set_policy(set, pol);
	return nla_parse_nested(tb, (int)set->maxattr, nest, pol);
}

static struct json_object *set_json(const struct attr_set *set, struct nlattr *nest);

/* One field of @set into @o; @nest is the set's own attribute (for F_NESTS). */
static void put_field(struct json_object *o, const struct field *f, struct nlattr *a,
		      struct nlattr *nest)
{
	struct json_object *child;
	struct nlattr *pos;
	char name[16];
	uint32_t v;
	int rem;

	if (!a && f->kind != F_FLAG && f->kind != F_LUT)
		return;
	switch (f->kind) {
	case F_U32:
		tool_jset_int(o, f->key, nla_get_u32(a));
		break;
	case F_U64:
		tool_jset_int(o, f->key, (int64_t)nla_get_u64(a));
		break;
	case F_S32:
		tool_jset_int(o, f->key, (int32_t)nla_get_u32(a));
		break;
	case F_STR:
		tool_jset_str(o, f->key, nla_get_string(a));
		break;
	case F_BOOL:
	case F_FLAG:
		json_object_object_add(o, f->key, json_object_new_boolean(a && nla_get_u8(a)));
		break;
	case F_FN:
		flexctl_fn_name(nla_get_u32(a), name, sizeof(name));
		tool_jset_str(o, "function", name);
		tool_jset_int(o, "fn", nla_get_u32(a));
		break;
	case F_LUT:
		if (a && nla_get_u32(a) != FLEX_NO_LUT_INDEX)
			tool_jset_int(o, f->key, nla_get_u32(a));
		else
			json_object_object_add(o, f->key, NULL);
		break;
	case F_ENUM:
		v = nla_get_u32(a);
		tool_jset_int(o, f->key, v);
		tool_jset_str(o, f->name_key, v < f->n_names ? f->names[v] : "unknown");
		break;
	case F_NEST:
		child = set_json(f->nest, a);
		if (child)
			json_object_object_add(o, f->key, child);
		break;
	case F_NESTS:
		child = json_object_new_array();
		nla_for_each_nested(pos, nest, rem) {
			struct json_object *one;

			if (nla_type(pos) != f->attr)
				continue;
			one = set_json(f->nest, pos);
			if (one)
				json_object_array_add(child, one);
		}
		json_object_object_add(o, f->key, child);
		break;
	}
}

/* The attributes of @nest as an object, in @set's order; NULL if malformed. */
static struct json_object *set_json(const struct attr_set *set, struct nlattr *nest)
{
	struct nlattr *tb[MAXATTR + 1];
	struct json_object *o;

	if (parse_set(set, nest, tb) < 0)
		return NULL;
	o = json_object_new_object();
	for (unsigned int i = 0; i < set->n_fields; i++)
		put_field(o, &set->fields[i], tb[set->fields[i].attr], nest);
	return o;
}

struct json_object *flexctl_nl_parse_msg(struct nl_msg *msg, uint8_t *cmd)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct nlattr *tb[MAXATTR + 1];
	struct nla_policy pol[MAXATTR + 1];
	struct json_object *o, *obj = NULL;

	set_policy(&top_set, pol);
	if (genlmsg_parse(nlh, 0, tb, FLEX_A_MAX, pol) < 0)
		return NULL;
	*cmd = genlmsg_hdr(nlh)->cmd;
	for (unsigned int i = 0; i < sizeof(object_attrs) / sizeof(object_attrs[0]); i++) {
		const struct field *f = NULL;

		if (!tb[object_attrs[i]])
			continue;
		for (unsigned int j = 0; j < top_set.n_fields; j++)
			if (top_fields[j].attr == object_attrs[i])
				f = &top_fields[j];
		obj = set_json(f->nest, tb[object_attrs[i]]);
		if (!obj)
			return NULL;
		break;
	}
	if (!obj && !tb[FLEX_A_NUM_VFS] && !tb[FLEX_A_DEVICE_INDEX])
		return NULL;

	/* "device" first in every object, for people reading the JSON. */
	o = json_object_new_object();
	if (tb[FLEX_A_DEVICE_INDEX])
		tool_jset_int(o, "device", nla_get_u32(tb[FLEX_A_DEVICE_INDEX]));
	if (obj) {
		json_object_object_foreach(obj, k, v)
			if (strcmp(k, "device") || !tb[FLEX_A_DEVICE_INDEX])
				json_object_object_add(o, k, json_object_get(v));
		json_object_put(obj);
	}
	if (tb[FLEX_A_NUM_VFS])
		tool_jset_int(o, "num_vfs", nla_get_u32(tb[FLEX_A_NUM_VFS]));
	return o;
}
