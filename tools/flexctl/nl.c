// SPDX-License-Identifier: GPL-2.0
/*
 * flexctl devices, regions, queues, table and monitor: the "flex" generic
 * netlink family (uapi/linux/flex_netlink.h, Documentation/flex/netlink.rst)
 * through libnl-genl-3. The family and its event group are resolved by name
 * (genl_ctrl_resolve, genl_ctrl_resolve_grp); every reply is parsed against
 * a policy (genlmsg_parse, nla_parse_nested), and attributes this flexctl
 * does not know are ignored, as the family's rules ask of readers.
 *
 * Each object becomes a json-c object; the commands print those as tables
 * or JSON (output.c).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <linux/flex.h>
#include <linux/flex_netlink.h>

#include "flexctl.h"

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

/* "pf" or "vfM" for a function number. */
static void fn_name(uint32_t fn, char *buf, size_t len)
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
	fn_name(nla_get_u32(a), name, sizeof(name));
	tool_jset_str(o, "function", name);
	tool_jset_int(o, "fn", nla_get_u32(a));
}

/* Parse "pf" / "vfM" into a function number; -EINVAL otherwise. */
static int parse_fn(const char *s, uint32_t *fn)
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

/*
 * A reply or event message as one json object: "device" plus the fields of
 * its object nest, or NULL if it is malformed or has no object.
 */
static struct json_object *parse_msg(struct nl_msg *msg, uint8_t *cmd)
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

/* ---- the connection ---- */

struct nl_conn {
	struct nl_sock *sk;
	int family;
	/* What the last request's error message said. */
	int error;		/* negative errno from the kernel, or 0 */
	char ext_msg[256];	/* its extended ACK message, or "" */
	bool done;
	struct json_object *rows;	/* replies collected */
};

static void nl_conn_close(struct nl_conn *n)
{
	if (n->sk)
		nl_socket_free(n->sk);
	n->sk = NULL;
}

/* Open a socket and resolve the family. -errno with a message in @err. */
static int nl_conn_open(struct flexctl *c, struct nl_conn *n, char *err, size_t errlen)
{
	int one = 1, ret;

	memset(n, 0, sizeof(*n));
	n->sk = nl_socket_alloc();
	if (!n->sk) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = genl_connect(n->sk);
	if (ret < 0) {
		snprintf(err, errlen, "cannot open a generic netlink socket: %s", nl_geterror(ret));
		nl_conn_close(n);
		return -EIO;
	}
	/* The kernel's extended ACK says which attribute it refused and why. */
	setsockopt(nl_socket_get_fd(n->sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	n->family = genl_ctrl_resolve(n->sk, FLEX_GENL_NAME);
	if (n->family < 0) {
		if (!flex_module_loaded(c))
			snprintf(err, errlen, "the flex module is not loaded (load it with "
				 "`flexctl load`, see `flexctl status`)");
		else
			snprintf(err, errlen, "the loaded flex module has no \"%s\" generic netlink "
				 "family (%s): is it an older module?", FLEX_GENL_NAME,
				 nl_geterror(n->family));
		nl_conn_close(n);
		return -ENOENT;
	}
	return 0;
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct nl_conn *n = arg;
	struct json_object *o;
	uint8_t cmd;

	o = parse_msg(msg, &cmd);
	if (o)
		json_object_array_add(n->rows, o);
	return NL_OK;
}

static int on_finish(struct nl_msg *msg, void *arg)
{
	((struct nl_conn *)arg)->done = true;
	return NL_STOP;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	((struct nl_conn *)arg)->done = true;
	return NL_STOP;
}

/* Record the kernel's errno and its extended ACK message (NLMSGERR_ATTR_MSG). */
static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct nl_conn *n = arg;
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	size_t off = sizeof(*e);

	n->error = e->error;
	n->done = true;
	n->ext_msg[0] = '\0';
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
			off += e->msg.nlmsg_len - NLMSG_HDRLEN;
		off = NLMSG_ALIGN(off);
		if (NLMSG_HDRLEN + off < nlh->nlmsg_len &&
		    nla_parse(tb, NLMSGERR_ATTR_MAX, (struct nlattr *)((char *)e + off),
			      nlh->nlmsg_len - NLMSG_HDRLEN - off, NULL) == 0 &&
		    tb[NLMSGERR_ATTR_MSG])
			snprintf(n->ext_msg, sizeof(n->ext_msg), "%s",
				 nla_get_string(tb[NLMSGERR_ATTR_MSG]));
	}
	return NL_STOP;
}

/* A request's selectors; -1 (or NULL) = not given. */
struct nl_sel {
	int64_t device, fn, region_handle, queue_handle, table_index;
};

#define NL_SEL_NONE { -1, -1, -1, -1, -1 }

/*
 * Send @cmd (a dump when @dump) with the selectors in @sel and collect the
 * replies in n->rows. Returns 0, or -errno with a message in @err.
 */
static int nl_request(struct nl_conn *n, uint8_t cmd, bool dump, const struct nl_sel *sel,
		      char *err, size_t errlen)
{
	struct nl_msg *msg = nlmsg_alloc();
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int ret = -ENOMEM;

	if (!msg || !cb)
		goto out;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, n->family, 0, dump ? NLM_F_DUMP : 0,
			 cmd, FLEX_GENL_VERSION))
		goto out;
	if ((sel->device >= 0 && nla_put_u32(msg, FLEX_A_DEVICE_INDEX, sel->device) < 0) ||
	    (sel->fn >= 0 && nla_put_u32(msg, FLEX_A_FN, sel->fn) < 0) ||
	    (sel->region_handle >= 0 &&
	     nla_put_u32(msg, FLEX_A_REGION_HANDLE, sel->region_handle) < 0) ||
	    (sel->queue_handle >= 0 &&
	     nla_put_u32(msg, FLEX_A_QUEUE_HANDLE, sel->queue_handle) < 0) ||
	    (sel->table_index >= 0 && nla_put_u32(msg, FLEX_A_TABLE_INDEX, sel->table_index) < 0))
		goto out;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, n);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_finish, n);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, n);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, n);
	n->error = 0;
	n->done = false;
	ret = nl_send_auto(n->sk, msg);
	if (ret < 0) {
		snprintf(err, errlen, "sending the request: %s", nl_geterror(ret));
		ret = -EIO;
		goto out_noerr;
	}
	ret = 0;
	while (!n->done) {
		int r = nl_recvmsgs(n->sk, cb);

		if (r < 0 && !n->error) {
			snprintf(err, errlen, "receiving the reply: %s", nl_geterror(r));
			ret = -EIO;
			goto out_noerr;
		}
	}
	if (n->error) {
		ret = n->error;
		/* The kernel's own words when it gave some, else the errno's. */
		snprintf(err, errlen, "%s", n->ext_msg[0] ? n->ext_msg : strerror(-ret));
	}
	goto out_noerr;
out:
	snprintf(err, errlen, "out of memory building the request");
out_noerr:
	nlmsg_free(msg);
	nl_cb_put(cb);
	return ret;
}

/*
 * Run one request for a command, printing the error: -ENODEV and -ENOENT
 * get messages naming what does not exist, -EPERM/-EACCES a permission
 * message. Returns 0 or FLEXCTL_EXIT_FAIL; n->rows holds the replies.
 */
static int run_request(struct flexctl *c, struct nl_conn *n, uint8_t cmd, bool dump,
		       const struct nl_sel *sel, const char *what)
{
	char err[512];
	int ret;

	ret = nl_conn_open(c, n, err, sizeof(err));
	if (ret)
		return ctl_error(c, "%s", err);
	n->rows = json_object_new_array();
	ret = nl_request(n, cmd, dump, sel, err, sizeof(err));
	if (!ret)
		return 0;
	if (ret == -ENODEV) {
		char fname[16] = "";

		if (sel->fn >= 0)
			fn_name(sel->fn, fname, sizeof(fname));
		ctl_error(c, "no such flex device or function: device %" PRId64 "%s%s (%s)",
			  sel->device, sel->fn >= 0 ? ", function " : "", fname, err);
	} else if (ret == -ENOENT) {
		if (sel->region_handle >= 0 || sel->queue_handle >= 0)
			ctl_error(c, "no such %s: handle %" PRId64 " on device %" PRId64 " (%s)", what,
				  sel->region_handle >= 0 ? sel->region_handle : sel->queue_handle,
				  sel->device, err);
		else
			ctl_error(c, "no such %s: index %" PRId64 " on device %" PRId64 " (%s)", what,
				  sel->table_index, sel->device, err);
	} else if (ret == -EPERM || ret == -EACCES) {
		ctl_error(c, "permission denied asking the flex driver for %ss: %s", what, err);
	} else {
		ctl_error(c, "asking the flex driver for %ss: %s", what, err);
	}
	return FLEXCTL_EXIT_FAIL;
}

static void finish(struct nl_conn *n)
{
	json_object_put(n->rows);
	n->rows = NULL;
	nl_conn_close(n);
}

/* Keep only the rows whose owner_pid is @pid. */
static void filter_pid(struct json_object *rows, int64_t pid)
{
	if (pid < 0)
		return;
	for (size_t i = json_object_array_length(rows); i-- > 0;)
		if (tool_jint(json_object_array_get_idx(rows, i), "owner_pid", -1) != pid)
			json_object_array_del_idx(rows, i, 1);
}

/* Common selector options of the list commands. */
struct list_opts {
	struct nl_sel sel;
	int64_t pid;
	int64_t handle;		/* --handle: one object (a non-dump GET) */
	int64_t index;		/* --index (table) */
};

static int parse_list_opts(struct flexctl *c, const char *cmdname, int argc, char **argv,
			   struct list_opts *lo, bool takes_fn, bool takes_handle, bool takes_index)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "function", required_argument, NULL, 'f' },
		{ "pid", required_argument, NULL, 'p' },
		{ "handle", required_argument, NULL, 'H' },
		{ "index", required_argument, NULL, 'i' },
		CTL_COMMON_LONGOPTS,
		{ 0 }
	};
	struct nl_sel none = NL_SEL_NONE;
	uint64_t v;
	uint32_t fn;
	int opt;

	lo->sel = none;
	lo->pid = -1;
	lo->handle = -1;
	lo->index = -1;
	while ((opt = getopt_long(argc, argv, "d:f:p:H:i:hj", opts, NULL)) != -1) {
		if (ctl_common_opt(c, opt))
			continue;
		switch (opt) {
		case 'd':
			if (ctl_parse_u64(optarg, &v) || v > UINT32_MAX)
				return ctl_usage_error(c, cmdname, "bad device number '%s'", optarg);
			lo->sel.device = v;
			break;
		case 'f':
			if (!takes_fn)
				return ctl_usage_error(c, cmdname, "--function is not an option here");
			if (parse_fn(optarg, &fn))
				return ctl_usage_error(c, cmdname, "bad function '%s' (pf or vfM)",
						       optarg);
			lo->sel.fn = fn;
			break;
		case 'p':
			if (!takes_fn || ctl_parse_u64(optarg, &v) || v > INT32_MAX)
				return ctl_usage_error(c, cmdname, "bad --pid '%s'", optarg);
			lo->pid = v;
			break;
		case 'H':
			if (!takes_handle || ctl_parse_u64(optarg, &v) || v > UINT32_MAX)
				return ctl_usage_error(c, cmdname, "bad --handle '%s'", optarg);
			lo->handle = v;
			break;
		case 'i':
			if (!takes_index || ctl_parse_u64(optarg, &v) || v > UINT32_MAX)
				return ctl_usage_error(c, cmdname, "bad --index '%s'", optarg);
			lo->index = v;
			break;
		default:
			return ctl_usage_error(c, cmdname, "unknown option");
		}
	}
	if (optind != argc)
		return ctl_usage_error(c, cmdname, "unexpected argument '%s'", argv[optind]);
	return 0;
}

/* ---- devices ---- */

static const struct column dev_cols[] = {
	{ "name", "DEVICE", COL_STR },
	{ "capacity", "CAPACITY", COL_SIZE },
	{ "used", "USED", COL_SIZE },
	{ "free", "FREE", COL_SIZE },
	{ "largest_free", "LARGEST_FREE", COL_SIZE },
	{ "resident", "RESIDENT", COL_SIZE },
	{ "backing_cap", "BACKING_CAP", COL_SIZE },
	{ "num_vfs", "VFS", COL_INT },
	{ "total_vfs", "MAX_VFS", COL_INT },
};

static const struct column fn_cols[] = {
	{ "name", "FUNCTION", COL_STR },
	{ "device", "DEV", COL_INT },
	{ "function", "FN", COL_STR },
	{ "table_size", "TABLE", COL_INT },
	{ "table_used", "USED", COL_INT },
	{ "open_count", "OPEN", COL_INT },
};

int cmd_devices(struct flexctl *c, int argc, char **argv)
{
	struct list_opts lo;
	struct nl_conn n;
	int ret;

	ret = parse_list_opts(c, "devices", argc, argv, &lo, false, false, false);
	if (ret)
		return ret;
	/* One device: the non-dump GET (-ENODEV names a missing one). */
	ret = run_request(c, &n, FLEX_CMD_DEVICE_GET, lo.sel.device < 0, &lo.sel, "device");
	if (ret) {
		finish(&n);
		return ret;
	}
	if (c->json) {
		out_json(c, n.rows);
	} else {
		struct json_object *fns = json_object_new_array();

		for (size_t i = 0; i < json_object_array_length(n.rows); i++) {
			struct json_object *d = json_object_array_get_idx(n.rows, i);
			struct json_object *f = json_object_object_get(d, "functions");

			for (size_t j = 0; f && j < json_object_array_length(f); j++) {
				struct json_object *row = json_object_get(json_object_array_get_idx(f, j));

				tool_jset_int(row, "device", tool_jint(d, "device", 0));
				json_object_array_add(fns, row);
			}
		}
		out_table(c, n.rows, dev_cols, sizeof(dev_cols) / sizeof(dev_cols[0]));
		fputc('\n', c->out);
		out_table(c, fns, fn_cols, sizeof(fn_cols) / sizeof(fn_cols[0]));
		json_object_put(fns);
	}
	finish(&n);
	return 0;
}

/* ---- regions ---- */

static const struct column region_cols[] = {
	{ "device", "DEV", COL_INT },
	{ "function", "FN", COL_STR },
	{ "handle", "HANDLE", COL_INT },
	{ "region_id", "REGION_ID", COL_HEX },
	{ "phys_addr", "PHYS", COL_HEX },
	{ "size", "SIZE", COL_SIZE },
	{ "resident", "RESIDENT", COL_SIZE },
	{ "lut_index", "LUT", COL_INT },
	{ "owner_pid", "PID", COL_INT },
	{ "owner_comm", "COMMAND", COL_STR },
};

int nl_region_list(struct flexctl *c, int dev, struct json_object **out, char *err,
		   size_t errlen)
{
	struct nl_sel sel = NL_SEL_NONE;
	struct nl_conn n;
	int ret;

	sel.device = dev;
	ret = nl_conn_open(c, &n, err, errlen);
	if (ret)
		return ret;
	n.rows = json_object_new_array();
	ret = nl_request(&n, FLEX_CMD_REGION_GET, true, &sel, err, errlen);
	if (ret) {
		finish(&n);
		return ret;
	}
	*out = n.rows;
	nl_conn_close(&n);
	return 0;
}

int cmd_regions(struct flexctl *c, int argc, char **argv)
{
	struct list_opts lo;
	struct nl_conn n;
	bool one;
	int ret;

	ret = parse_list_opts(c, "regions", argc, argv, &lo, true, true, false);
	if (ret)
		return ret;
	one = lo.handle >= 0;
	if (one && lo.sel.device < 0)
		lo.sel.device = 0;
	lo.sel.region_handle = lo.handle;
	if (one && lo.sel.fn >= 0)
		return ctl_usage_error(c, "regions", "--handle names one region: no --function");
	ret = run_request(c, &n, FLEX_CMD_REGION_GET, !one, &lo.sel, "region");
	if (ret) {
		finish(&n);
		return ret;
	}
	filter_pid(n.rows, lo.pid);
	if (c->json)
		out_json(c, one && json_object_array_length(n.rows) == 1 ?
			 json_object_array_get_idx(n.rows, 0) : n.rows);
	else
		out_table(c, n.rows, region_cols, sizeof(region_cols) / sizeof(region_cols[0]));
	finish(&n);
	return 0;
}

/* ---- queues ---- */

static const struct column queue_cols[] = {
	{ "device", "DEV", COL_INT },
	{ "function", "FN", COL_STR },
	{ "handle", "HANDLE", COL_INT },
	{ "queue_id", "QUEUE", COL_INT },
	{ "priority_name", "PRIO", COL_STR },
	{ "depth", "DEPTH", COL_INT },
	{ "pending", "PENDING", COL_INT },
	{ "submitted", "SUBMITTED", COL_INT },
	{ "completed", "COMPLETED", COL_INT },
	{ "faults", "FAULTS", COL_INT },
	{ "fault_text", "STATE", COL_STR },
	{ "owner_pid", "PID", COL_INT },
	{ "owner_comm", "COMMAND", COL_STR },
};

int cmd_queues(struct flexctl *c, int argc, char **argv)
{
	struct list_opts lo;
	struct nl_conn n;
	bool one;
	int ret;

	ret = parse_list_opts(c, "queues", argc, argv, &lo, true, true, false);
	if (ret)
		return ret;
	one = lo.handle >= 0;
	if (one && lo.sel.device < 0)
		lo.sel.device = 0;
	if (one && lo.sel.fn >= 0)
		return ctl_usage_error(c, "queues", "--handle names one queue: no --function");
	lo.sel.queue_handle = lo.handle;
	ret = run_request(c, &n, FLEX_CMD_QUEUE_GET, !one, &lo.sel, "queue");
	if (ret) {
		finish(&n);
		return ret;
	}
	filter_pid(n.rows, lo.pid);
	if (c->json) {
		out_json(c, one && json_object_array_length(n.rows) == 1 ?
			 json_object_array_get_idx(n.rows, 0) : n.rows);
	} else {
		/* The table's STATE column: "ok" or the sticky fault. */
		for (size_t i = 0; i < json_object_array_length(n.rows); i++) {
			struct json_object *q = json_object_array_get_idx(n.rows, i);
			struct json_object *f = json_object_object_get(q, "fault");
			char text[96];

			if (f)
				snprintf(text, sizeof(text), "fault %s at seqno %" PRId64,
					 tool_jstr(f, "code_name", "?"), tool_jint(f, "seqno", 0));
			else
				snprintf(text, sizeof(text), "ok");
			tool_jset_str(q, "fault_text", text);
		}
		out_table(c, n.rows, queue_cols, sizeof(queue_cols) / sizeof(queue_cols[0]));
	}
	finish(&n);
	return 0;
}

/* ---- table ---- */

static const struct column entry_cols[] = {
	{ "device", "DEV", COL_INT },
	{ "function", "FN", COL_STR },
	{ "index", "INDEX", COL_INT },
	{ "region_id", "REGION_ID", COL_HEX },
	{ "phys_addr", "PHYS", COL_HEX },
	{ "size", "SIZE", COL_SIZE },
	{ "handle", "HANDLE", COL_INT },
	{ "owner_pid", "PID", COL_INT },
	{ "owner_comm", "COMMAND", COL_STR },
};

int cmd_table(struct flexctl *c, int argc, char **argv)
{
	struct list_opts lo;
	struct nl_conn n;
	bool one;
	int ret;

	ret = parse_list_opts(c, "table", argc, argv, &lo, true, false, true);
	if (ret)
		return ret;
	one = lo.index >= 0;
	if (one) {
		if (lo.sel.fn < 0)
			return ctl_usage_error(c, "table", "--index needs --function (whose table)");
		if (lo.sel.device < 0)
			lo.sel.device = 0;
	}
	lo.sel.table_index = lo.index;
	ret = run_request(c, &n, FLEX_CMD_TABLE_GET, !one, &lo.sel, "table entry");
	if (ret) {
		finish(&n);
		return ret;
	}
	filter_pid(n.rows, lo.pid);
	if (c->json)
		out_json(c, one && json_object_array_length(n.rows) == 1 ?
			 json_object_array_get_idx(n.rows, 0) : n.rows);
	else
		out_table(c, n.rows, entry_cols, sizeof(entry_cols) / sizeof(entry_cols[0]));
	finish(&n);
	return 0;
}

/* ---- monitor ---- */

struct monitor {
	struct flexctl *c;
	uint64_t seen, count;
};

/* Events carry no sequence number of ours. */
static int no_seq_check(struct nl_msg *msg, void *arg)
{
	return NL_OK;
}

static const char *event_name(uint8_t cmd)
{
	switch (cmd) {
	case FLEX_CMD_REGION_ACQUIRED_NTF: return "region_acquired";
	case FLEX_CMD_REGION_RELEASED_NTF: return "region_released";
	case FLEX_CMD_QUEUE_FAULT_NTF: return "queue_fault";
	case FLEX_CMD_VFS_ENABLED_NTF: return "vfs_enabled";
	case FLEX_CMD_VFS_DISABLED_NTF: return "vfs_disabled";
	case FLEX_CMD_BACKING_CAP_NTF: return "backing_cap_reached";
	default: return NULL;
	}
}

static void event_text(struct flexctl *c, uint8_t cmd, struct json_object *o, char *buf,
		       size_t len)
{
	struct json_object *f = json_object_object_get(o, "fault");
	int64_t dev = tool_jint(o, "device", 0);
	char h1[32], h2[32];

	switch (cmd) {
	case FLEX_CMD_REGION_ACQUIRED_NTF:
	case FLEX_CMD_REGION_RELEASED_NTF:
		snprintf(buf, len, "flex%" PRId64 " %s: region %s: handle %" PRId64 ", region_id 0x%"
			 PRIx64 ", size %s, owner %s (pid %" PRId64 ")", dev,
			 tool_jstr(o, "function", "?"),
			 cmd == FLEX_CMD_REGION_ACQUIRED_NTF ? "acquired" : "released",
			 tool_jint(o, "handle", -1), (uint64_t)tool_jint(o, "region_id", 0),
			 tool_size(h1, sizeof(h1), tool_jint(o, "size", 0)),
			 tool_jstr(o, "owner_comm", "?"), tool_jint(o, "owner_pid", -1));
		break;
	case FLEX_CMD_QUEUE_FAULT_NTF:
		snprintf(buf, len, "flex%" PRId64 " %s: queue fault: queue %" PRId64 " (handle %"
			 PRId64 ") of %s (pid %" PRId64 "): %s (errno %" PRId64 ") at seqno %" PRId64
			 ", opcode %" PRId64 ", insn %" PRId64 ", address 0x%" PRIx64 "+0x%" PRIx64,
			 dev, tool_jstr(o, "function", "?"), tool_jint(o, "queue_id", -1),
			 tool_jint(o, "handle", -1), tool_jstr(o, "owner_comm", "?"),
			 tool_jint(o, "owner_pid", -1), tool_jstr(f, "code_name", "?"),
			 tool_jint(f, "errno", 0), tool_jint(f, "seqno", 0), tool_jint(f, "opcode", 0),
			 tool_jint(f, "insn", 0), (uint64_t)tool_jint(f, "region_id", 0),
			 (uint64_t)tool_jint(f, "offset", 0));
		break;
	case FLEX_CMD_VFS_ENABLED_NTF:
		snprintf(buf, len, "flex%" PRId64 ": %" PRId64 " VFs enabled", dev,
			 tool_jint(o, "num_vfs", 0));
		break;
	case FLEX_CMD_VFS_DISABLED_NTF:
		snprintf(buf, len, "flex%" PRId64 ": %" PRId64 " VFs disabled", dev,
			 tool_jint(o, "num_vfs", 0));
		break;
	case FLEX_CMD_BACKING_CAP_NTF:
		snprintf(buf, len, "flex%" PRId64 ": host backing cap reached: %s resident of %s",
			 dev, tool_size(h1, sizeof(h1), tool_jint(o, "resident", 0)),
			 tool_size(h2, sizeof(h2), tool_jint(o, "backing_cap", 0)));
		break;
	default:
		snprintf(buf, len, "flex%" PRId64 ": event %u", dev, cmd);
	}
}

static int on_event(struct nl_msg *msg, void *arg)
{
	struct monitor *m = arg;
	struct flexctl *c = m->c;
	struct json_object *o, *ev;
	char when[64], text[512];
	struct timespec ts;
	struct tm tm;
	uint8_t cmd = 0;

	o = parse_msg(msg, &cmd);
	if (!o)
		return NL_OK;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(when + strlen(when), sizeof(when) - strlen(when), ".%03ldZ", ts.tv_nsec / 1000000);
	if (c->json) {
		ev = json_object_new_object();
		tool_jset_str(ev, "event", event_name(cmd) ? event_name(cmd) : "unknown");
		tool_jset_int(ev, "cmd", cmd);
		tool_jset_str(ev, "time", when);
		json_object_object_foreach(o, k, v)
			json_object_object_add(ev, k, json_object_get(v));
		fprintf(c->out, "%s\n", json_object_to_json_string_ext(ev, JSON_C_TO_STRING_PLAIN));
		json_object_put(ev);
	} else {
		event_text(c, cmd, o, text, sizeof(text));
		fprintf(c->out, "%s %s\n", when, text);
	}
	/* A monitor is read live, often through a pipe: no buffering. */
	fflush(c->out);
	json_object_put(o);
	m->seen++;
	return NL_OK;
}

int cmd_monitor(struct flexctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'n' },
		CTL_COMMON_LONGOPTS,
		{ 0 }
	};
	struct monitor m = { .c = c };
	struct nl_conn n;
	struct nl_cb *cb;
	sigset_t sigs;
	char err[512];
	int opt, grp, sfd, ret;
	uint64_t v;

	while ((opt = getopt_long(argc, argv, "n:hj", opts, NULL)) != -1) {
		if (ctl_common_opt(c, opt))
			continue;
		if (opt == 'n' && !ctl_parse_u64(optarg, &v) && v > 0)
			m.count = v;
		else
			return ctl_usage_error(c, "monitor", opt == 'n' ? "bad --count '%s'" :
					       "unknown option%s", opt == 'n' ? optarg : "");
	}
	if (optind != argc)
		return ctl_usage_error(c, "monitor", "unexpected argument '%s'", argv[optind]);
	ret = nl_conn_open(c, &n, err, sizeof(err));
	if (ret)
		return ctl_error(c, "%s", err);
	grp = genl_ctrl_resolve_grp(n.sk, FLEX_GENL_NAME, FLEX_GENL_MCGRP_EVENTS);
	if (grp < 0) {
		nl_conn_close(&n);
		return ctl_error(c, "the flex netlink family has no \"%s\" group: %s",
				 FLEX_GENL_MCGRP_EVENTS, nl_geterror(grp));
	}
	ret = nl_socket_add_membership(n.sk, grp);
	if (ret < 0) {
		nl_conn_close(&n);
		return ctl_error(c, "joining the flex event group: %s%s", nl_geterror(ret),
				 ret == -NLE_PERM ? " (permission denied)" : "");
	}
	nl_socket_set_nonblocking(n.sk);
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb) {
		nl_conn_close(&n);
		return ctl_error(c, "out of memory");
	}
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_event, &m);
	nl_cb_set(cb, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, no_seq_check, NULL);

	/*
	 * libnl retries a recvmsg() interrupted by a signal, so SIGINT and
	 * SIGTERM come through a signalfd polled next to the socket: the
	 * monitor ends cleanly, its output flushed.
	 */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	if (sfd < 0) {
		nl_cb_put(cb);
		nl_conn_close(&n);
		return ctl_error(c, "signalfd: %s", strerror(errno));
	}
	/* Subscribed: from here on no event is missed. Tests wait for this line. */
	fprintf(c->err, "flexctl: monitoring flex events (Ctrl-C to stop)\n");
	fflush(c->err);
	ret = 0;
	while (!m.count || m.seen < m.count) {
		struct pollfd p[2] = {
			{ .fd = nl_socket_get_fd(n.sk), .events = POLLIN },
			{ .fd = sfd, .events = POLLIN },
		};

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			ret = ctl_error(c, "poll: %s", strerror(errno));
			break;
		}
		if (p[1].revents)
			break;
		if (p[0].revents) {
			int r = nl_recvmsgs(n.sk, cb);

			if (r < 0 && r != -NLE_AGAIN) {
				/* Overrun: the kernel dropped events for us; say so, go on. */
				if (r == -NLE_NOMEM || r == -NLE_MSG_OVERFLOW)
					fprintf(c->err, "flexctl: warning: events were lost (%s)\n",
						nl_geterror(r));
				else if (r != -NLE_INTR) {
					ret = ctl_error(c, "receiving events: %s", nl_geterror(r));
					break;
				}
			}
		}
	}
	close(sfd);
	nl_cb_put(cb);
	nl_conn_close(&n);
	return ret;
}
