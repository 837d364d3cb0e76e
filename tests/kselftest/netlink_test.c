// SPDX-License-Identifier: GPL-2.0
/*
 * The flex generic netlink family, through libnl-genl-3 against the real
 * driver: the family and its group resolve; devices, regions, queues and
 * lookup-table entries read back as the ioctls made them (single gets,
 * dumps, the device and function filters, dumps spread over many skbs);
 * strict validation; and every event on the "events" group, with none on a
 * socket that did not join it.
 *
 * Events are multicast synchronously from the call that causes them, so
 * once that call returns the event is already queued on every member
 * socket: "nothing arrived" is checked with a zero poll timeout, not a
 * delay. Fault events are sent just after the faulting CB's fence
 * signals (never on the signalling path), and backing-cap events from a
 * work item: the tests wait for those.
 */
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <linux/flex_netlink.h>

#include "kselftest_harness.h"
#include "flex_test.h"

#define VF0		"/dev/flex0vf0"
#define FLEX_DEVMEM_PAGE 4096UL

/* ---- a reply or an event, flattened ---- */

#define NV 24
struct obj {
	int cmd;
	__u32 dev;		/* FLEX_A_DEVICE_INDEX */
	int has_dev;
	int kind;		/* FLEX_A_DEVICE, _REGION, _QUEUE, _ENTRY, _FILE or 0 */
	__u64 v[NV];		/* the nest's integer attributes */
	unsigned char has[NV];
	char s[NV][32];		/* its string attributes */
	int nfn;
	struct { __u64 v[NV]; char name[32]; } fn[1 + 16];
	int has_fault;
	__u64 fault[12];
	int has_num_vfs;
	__u32 num_vfs;
};

struct objs {
	struct obj *o;
	int n;
	int err;		/* the kernel's error, negative errno, or 0 */
	int datagrams;		/* recv() calls that returned data */
};

/* What each nest holds: strings, u8s, s32s and nests by attribute. */
static int is_str(int kind, int a)
{
	return (kind == FLEX_A_DEVICE && a == FLEX_DEV_A_NAME) ||
	       (kind == FLEX_A_REGION && a == FLEX_REGION_A_OWNER_COMM) ||
	       (kind == FLEX_A_QUEUE && a == FLEX_QUEUE_A_OWNER_COMM) ||
	       (kind == FLEX_A_ENTRY && a == FLEX_ENTRY_A_OWNER_COMM) ||
	       (kind == FLEX_A_FILE && a == FLEX_FILE_A_OWNER_COMM);
}

/* An integer attribute of whatever width the kernel sent; -1 if odd. */
static __u64 nla_int(struct nlattr *a)
{
	switch (nla_len(a)) {
	case 1: return nla_get_u8(a);
	case 2: return nla_get_u16(a);
	case 4: return nla_get_u32(a);
	case 8: return nla_get_u64(a);
	}
	return (__u64)-1;
}

static void parse_nest(struct obj *o, int kind, struct nlattr *nest)
{
	struct nlattr *a;
	int rem;

	o->kind = kind;
	nla_for_each_nested(a, nest, rem) {
		int t = nla_type(a);

		if (t >= NV)
			continue;
		if (kind == FLEX_A_DEVICE && t == FLEX_DEV_A_FN) {
			struct nlattr *f;
			int frem;

			if (o->nfn >= 17)
				continue;
			nla_for_each_nested(f, a, frem) {
				if (nla_type(f) == FLEX_FN_A_NAME)
					snprintf(o->fn[o->nfn].name, 32, "%s",
						 (char *)nla_data(f));
				else if (nla_type(f) < NV)
					o->fn[o->nfn].v[nla_type(f)] = nla_int(f);
			}
			o->nfn++;
		} else if (kind == FLEX_A_QUEUE && t == FLEX_QUEUE_A_FAULT) {
			struct nlattr *f;
			int frem;

			o->has_fault = 1;
			nla_for_each_nested(f, a, frem)
				if (nla_type(f) < 12)
					o->fault[nla_type(f)] = nla_int(f);
		} else if (is_str(kind, t)) {
			snprintf(o->s[t], 32, "%s", (char *)nla_data(a));
			o->has[t] = 1;
		} else {
			o->v[t] = nla_int(a);
			o->has[t] = 1;
		}
	}
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct objs *out = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct genlmsghdr *gh = nlmsg_data(nlh);
	struct nlattr *a;
	struct obj *o;
	int rem;

	out->o = realloc(out->o, (out->n + 1) * sizeof(*o));
	o = &out->o[out->n++];
	memset(o, 0, sizeof(*o));
	o->cmd = gh->cmd;
	nla_for_each_attr(a, genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0), rem) {
		switch (nla_type(a)) {
		case FLEX_A_DEVICE_INDEX:
			o->dev = nla_get_u32(a);
			o->has_dev = 1;
			break;
		case FLEX_A_NUM_VFS:
			o->num_vfs = nla_get_u32(a);
			o->has_num_vfs = 1;
			break;
		case FLEX_A_DEVICE:
		case FLEX_A_REGION:
		case FLEX_A_QUEUE:
		case FLEX_A_ENTRY:
		case FLEX_A_FILE:
			parse_nest(o, nla_type(a), a);
			break;
		}
	}
	return NL_OK;
}

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	(void)nla;
	((struct objs *)arg)->err = e->error;
	return NL_STOP;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	(void)msg;
	(void)arg;
	return NL_STOP;
}

/* A dump's NLMSG_DONE carries its error (0 when it went through). */
static int on_finish(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);

	if (nlmsg_datalen(nlh) >= (int)sizeof(int))
		((struct objs *)arg)->err = *(int *)nlmsg_data(nlh);
	return NL_STOP;
}

static struct objs *recv_target;

static int counting_recv(struct nl_sock *sk, struct sockaddr_nl *nla,
			 unsigned char **buf, struct ucred **creds)
{
	int n = nl_recv(sk, nla, buf, creds);

	if (n > 0 && recv_target)
		recv_target->datagrams++;
	return n;
}

/* ---- requests ---- */

struct nl {
	struct nl_sock *sk;
	int family;
	int grp;
};

/*
 * @bufsize: 0, or a fixed receive buffer (no MSG_PEEK), set before anything
 * is received: the kernel sizes dump skbs by the largest recvmsg() so far.
 */
static int nlc_open_buf(struct nl *c, size_t bufsize)
{
	c->sk = nl_socket_alloc();
	if (!c->sk)
		return -1;
	if (bufsize)
		nl_socket_set_msg_buf_size(c->sk, bufsize);
	if (genl_connect(c->sk))
		return -1;
	nl_socket_disable_auto_ack(c->sk);
	c->family = genl_ctrl_resolve(c->sk, FLEX_GENL_NAME);
	c->grp = genl_ctrl_resolve_grp(c->sk, FLEX_GENL_NAME, FLEX_GENL_MCGRP_EVENTS);
	return c->family > 0 && c->grp > 0 ? 0 : -1;
}

static int nlc_open(struct nl *c)
{
	return nlc_open_buf(c, 0);
}

static void nlc_close(struct nl *c)
{
	nl_socket_free(c->sk);
}

struct kv {
	int type;
	__u32 val;
};
#define END { 0, 0 }

/* Sends @msg and collects the replies (or the error) into @out. */
static int nl_xfer(struct nl *c, struct nl_msg *msg, struct objs *out)
{
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int err;

	memset(out, 0, sizeof(*out));
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, out);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, out);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_finish, out);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, out);
	nl_cb_overwrite_recv(cb, counting_recv);
	recv_target = out;
	err = nl_send_auto(c->sk, msg);
	nlmsg_free(msg);
	if (err >= 0)
		err = nl_recvmsgs(c->sk, cb);
	recv_target = NULL;
	nl_cb_put(cb);
	return err < 0 && !out->err ? -1000 + err : out->err;
}

static struct nl_msg *req(struct nl *c, int cmd, int dump, const struct kv *kv)
{
	struct nl_msg *msg = nlmsg_alloc();

	genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, c->family, 0,
		    dump ? NLM_F_DUMP : 0, cmd, FLEX_GENL_VERSION);
	for (; kv && kv->type; kv++)
		nla_put_u32(msg, kv->type, kv->val);
	return msg;
}

/* A request with u32 attributes; returns 0 or the negative errno. */
static int nl_do(struct nl *c, int cmd, int dump, const struct kv *kv, struct objs *out)
{
	return nl_xfer(c, req(c, cmd, dump, kv), out);
}

static void objs_free(struct objs *o)
{
	free(o->o);
	memset(o, 0, sizeof(*o));
}

/* The object of @kind whose attribute @attr is @val, or NULL. */
static struct obj *find(struct objs *o, int attr, __u64 val)
{
	int i;

	for (i = 0; i < o->n; i++)
		if (o->o[i].has[attr] && o->o[i].v[attr] == val)
			return &o->o[i];
	return NULL;
}

/* ---- events ---- */

static int ev_open(struct nl *c, int join)
{
	if (nlc_open(c))
		return -1;
	nl_socket_disable_seq_check(c->sk);
	nl_socket_set_nonblocking(c->sk);
	return join ? nl_socket_add_membership(c->sk, c->grp) : 0;
}

/* Every event queued on the socket now (none waited for). */
static void ev_drain(struct nl *c, struct objs *out)
{
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	struct pollfd p = { .fd = nl_socket_get_fd(c->sk), .events = POLLIN };

	memset(out, 0, sizeof(*out));
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, out);
	while (poll(&p, 1, 0) == 1)
		if (nl_recvmsgs(c->sk, cb) < 0)
			break;
	nl_cb_put(cb);
}

static int ev_count(struct objs *ev, int cmd);

/*
 * Every event queued now and those that arrive until @want events @cmd are
 * in, or @ms pass. For events sent from the device's engines (a queue
 * fault): they are asynchronous to the ioctls, and a waiter for the CB may
 * see it complete before the engine has sent the event.
 */
static void ev_wait(struct nl *c, struct objs *out, int cmd, int want, int ms)
{
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	struct pollfd p = { .fd = nl_socket_get_fd(c->sk), .events = POLLIN };
	__s64 end = now_ns() + ms * 1000000LL;
	int left;

	memset(out, 0, sizeof(*out));
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, out);
	while (ev_count(out, cmd) < want) {
		left = (int)((end - now_ns()) / 1000000);
		if (poll(&p, 1, left > 0 ? left : 0) != 1)
			break;
		if (nl_recvmsgs(c->sk, cb) < 0)
			break;
	}
	nl_cb_put(cb);
}

/* The first queued event @cmd (whose nest attribute @attr is @val, if attr). */
static int ev_find(struct objs *ev, int cmd, int attr, __u64 val)
{
	int i;

	for (i = 0; i < ev->n; i++)
		if (ev->o[i].cmd == cmd && (!attr || (ev->o[i].has[attr] &&
						      ev->o[i].v[attr] == val)))
			return i;
	return -1;
}

static int ev_count(struct objs *ev, int cmd)
{
	int i, n = 0;

	for (i = 0; i < ev->n; i++)
		n += ev->o[i].cmd == cmd;
	return n;
}

/* ---- extended ACKs ---- */

struct ack {
	int err;		/* the kernel's error, negative errno, or 0 */
	char msg[64];		/* NLMSGERR_ATTR_MSG, or "" */
	int offs_type;		/* type of the attribute at NLMSGERR_ATTR_OFFS, or -1 */
	int miss_type;		/* NLMSGERR_ATTR_MISS_TYPE, or -1 */
};

/*
 * The error and its extended ACK: the TLVs follow the echoed request (the
 * socket does not cap it), and NLMSGERR_ATTR_OFFS is an offset into that
 * request, from its nlmsghdr.
 */
static int on_error_ack(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	size_t off = sizeof(*e) + e->msg.nlmsg_len - NLMSG_HDRLEN;
	struct ack *ack = arg;
	struct nlattr *a;
	int rem;

	(void)nla;
	ack->err = e->error;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS) || (nlh->nlmsg_flags & NLM_F_CAPPED))
		return NL_STOP;
	off = NLMSG_ALIGN(off);
	rem = nlmsg_datalen(nlh) - (int)off;
	for (a = (struct nlattr *)((char *)e + off); rem > 0 && nla_ok(a, rem);
	     a = nla_next(a, &rem)) {
		switch (nla_type(a)) {
		case NLMSGERR_ATTR_MSG:
			snprintf(ack->msg, sizeof(ack->msg), "%s", (char *)nla_data(a));
			break;
		case NLMSGERR_ATTR_OFFS: {
			__u32 o = nla_get_u32(a);

			if (o + sizeof(struct nlattr) <= e->msg.nlmsg_len)
				ack->offs_type = nla_type((struct nlattr *)((char *)&e->msg + o));
			break;
		}
		case NLMSGERR_ATTR_MISS_TYPE:
			ack->miss_type = nla_get_u32(a);
			break;
		}
	}
	return NL_STOP;
}

/* A doit request with u32 attributes; its answer and extended ACK in @ack. */
static int nl_do_ack(struct nl *c, int cmd, const struct kv *kv, struct ack *ack)
{
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	struct nl_msg *msg = req(c, cmd, 0, kv);
	int one = 1, err;
	struct objs o;

	memset(ack, 0, sizeof(*ack));
	ack->offs_type = ack->miss_type = -1;
	memset(&o, 0, sizeof(o));
	setsockopt(nl_socket_get_fd(c->sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, &o);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, NULL);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error_ack, ack);
	err = nl_send_auto(c->sk, msg);
	nlmsg_free(msg);
	if (err >= 0)
		err = nl_recvmsgs(c->sk, cb);
	nl_cb_put(cb);
	objs_free(&o);
	return err < 0 && !ack->err ? -1000 + err : ack->err;
}

/* ---- the tests ---- */

FIXTURE(nl) {
	struct nl c;
	int fd;
};

FIXTURE_SETUP(nl)
{
	ASSERT_EQ(0, nlc_open(&self->c)) TH_LOG("family \"flex\" or group \"events\" not found");
	self->fd = flex_open(FLEX_PF);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(nl)
{
	engines_pause(0);
	close(self->fd);
	set_numvfs(0);
	nlc_close(&self->c);
}

TEST_F(nl, device_get_and_dump)
{
	struct kv k[] = { { FLEX_A_DEVICE_INDEX, 0 }, END };
	struct kv bad[] = { { FLEX_A_DEVICE_INDEX, 7 }, END };
	struct flex_region_acquire a;
	struct flex_query q;
	struct objs o;
	struct obj *d;

	ASSERT_EQ(0, flex_acquire(self->fd, 4 * MiB, &a));
	q = flex_query(self->fd);
	ASSERT_EQ(0, nl_do(&self->c, FLEX_CMD_DEVICE_GET, 0, k, &o));
	ASSERT_EQ(1, o.n);
	d = &o.o[0];
	EXPECT_EQ(FLEX_CMD_DEVICE_GET, d->cmd);
	EXPECT_EQ(0, d->dev);
	EXPECT_EQ(FLEX_A_DEVICE, d->kind);
	EXPECT_STREQ("flex0", d->s[FLEX_DEV_A_NAME]);
	EXPECT_EQ(q.capacity, d->v[FLEX_DEV_A_CAPACITY]);
	EXPECT_EQ(q.capacity - q.free, d->v[FLEX_DEV_A_USED]);
	EXPECT_LE(4 * MiB, d->v[FLEX_DEV_A_USED]);
	EXPECT_EQ(q.free, d->v[FLEX_DEV_A_FREE]);
	EXPECT_EQ(q.largest_free, d->v[FLEX_DEV_A_LARGEST_FREE]);
	EXPECT_EQ(q.region_align, d->v[FLEX_DEV_A_REGION_ALIGN]);
	EXPECT_EQ(sysfs_num(FLEX_SYSFS "/backing_cap"), d->v[FLEX_DEV_A_BACKING_CAP]);
	EXPECT_TRUE(d->has[FLEX_DEV_A_RESIDENT]);
	EXPECT_EQ(q.total_vfs, d->v[FLEX_DEV_A_TOTAL_VFS]);
	EXPECT_EQ(0, d->v[FLEX_DEV_A_NUM_VFS]);
	EXPECT_EQ(q.table_entries, d->v[FLEX_DEV_A_PF_TABLE_SIZE]);
	EXPECT_TRUE(d->has[FLEX_DEV_A_VF_TABLE_SIZE]);
	ASSERT_EQ(1, d->nfn);
	EXPECT_EQ(FLEX_NL_FN_PF, d->fn[0].v[FLEX_FN_A_FN]);
	EXPECT_STREQ("flex0", d->fn[0].name);
	EXPECT_EQ(q.table_entries, d->fn[0].v[FLEX_FN_A_TABLE_SIZE]);
	EXPECT_EQ(q.table_used, d->fn[0].v[FLEX_FN_A_TABLE_USED]);
	EXPECT_LE(1, d->fn[0].v[FLEX_FN_A_OPEN_COUNT]);
	objs_free(&o);

	/* With VFs, a function nest per VF after the PF's. */
	ASSERT_EQ(0, set_numvfs(2));
	ASSERT_EQ(0, nl_do(&self->c, FLEX_CMD_DEVICE_GET, 0, k, &o));
	ASSERT_EQ(1, o.n);
	EXPECT_EQ(2, o.o[0].v[FLEX_DEV_A_NUM_VFS]);
	ASSERT_EQ(3, o.o[0].nfn);
	EXPECT_EQ(FLEX_NL_FN_VF(1), o.o[0].fn[2].v[FLEX_FN_A_FN]);
	EXPECT_STREQ("flex0vf1", o.o[0].fn[2].name);
	EXPECT_EQ(o.o[0].v[FLEX_DEV_A_VF_TABLE_SIZE], o.o[0].fn[2].v[FLEX_FN_A_TABLE_SIZE]);
	EXPECT_EQ(0, o.o[0].fn[2].v[FLEX_FN_A_OPEN_COUNT]);
	objs_free(&o);
	ASSERT_EQ(0, set_numvfs(0));

	/* A dump: every device (the VM has one), in index order. */
	ASSERT_EQ(0, nl_do(&self->c, FLEX_CMD_DEVICE_GET, 1, NULL, &o));
	ASSERT_EQ(1, o.n);
	EXPECT_EQ(0, o.o[0].v[FLEX_DEV_A_INDEX]);
	objs_free(&o);

	EXPECT_EQ(-ENODEV, nl_do(&self->c, FLEX_CMD_DEVICE_GET, 0, bad, &o));
	objs_free(&o);
}

/* FILE_GET by client id (a u64, which struct kv cannot carry). */
static int file_get(struct nl *c, __u64 client_id, struct objs *o)
{
	const struct kv dev0[] = { { FLEX_A_DEVICE_INDEX, 0 }, END };
	struct nl_msg *msg = req(c, FLEX_CMD_FILE_GET, 0, dev0);

	nla_put_u64(msg, FLEX_A_CLIENT_ID, client_id);
	return nl_xfer(c, msg, o);
}

TEST_F(nl, files_get_dump_and_function_usage)
{
	const struct kv k[] = { { FLEX_A_DEVICE_INDEX, 0 }, END };
	const struct kv vf[] = { { FLEX_A_DEVICE_INDEX, 0 }, { FLEX_A_FN, FLEX_NL_FN_VF(0) }, END };
	static __u32 buf[16384];
	struct flex_region_acquire a;
	long long id, id2;
	struct objs o;
	struct obj *f, *d;
	int q, fd2, i;

	ASSERT_EQ(0, flex_acquire(self->fd, 4 * MiB, &a));
	q = queue_create(self->fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, q);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, run_cb(self->fd, q, cb_dma(1, buf, a.region_id, 0, sizeof(buf))));
	ASSERT_EQ(0, run_fill(self->fd, q, a.region_id, 65536));
	fd2 = flex_open(FLEX_PF);
	ASSERT_LE(0, fd2);
	id = fdinfo_num(self->fd, "flex-client-id");
	id2 = fdinfo_num(fd2, "flex-client-id");
	ASSERT_LT(0, id);

	ASSERT_EQ(0, nl_do(&self->c, FLEX_CMD_FILE_GET, 1, k, &o));
	f = find(&o, FLEX_FILE_A_CLIENT_ID, id);
	ASSERT_NE(NULL, f) TH_LOG("file dump: client %lld (this file) not listed among %d", id, o.n);
	EXPECT_EQ(FLEX_CMD_FILE_GET, f->cmd);
	EXPECT_EQ(FLEX_A_FILE, f->kind);
	EXPECT_EQ(FLEX_NL_FN_PF, f->v[FLEX_FILE_A_FN]);
	EXPECT_EQ(getpid(), f->v[FLEX_FILE_A_OWNER_PID]);
	EXPECT_TRUE(f->has[FLEX_FILE_A_OWNER_COMM]);
	EXPECT_EQ(1, f->v[FLEX_FILE_A_REGIONS]);
	EXPECT_EQ(4 * MiB, f->v[FLEX_FILE_A_BYTES]);
	EXPECT_EQ(fdinfo_num(self->fd, "flex-memory-resident") * 1024, f->v[FLEX_FILE_A_RESIDENT]);
	EXPECT_EQ(1, f->v[FLEX_FILE_A_QUEUES]);
	EXPECT_EQ(0, f->v[FLEX_FILE_A_PENDING]);
	/* 3 DMA CBs, the program's upload and the compute CB. */
	EXPECT_EQ(5, f->v[FLEX_FILE_A_SUBMITTED]);
	EXPECT_EQ(5, f->v[FLEX_FILE_A_COMPLETED]);
	EXPECT_EQ(0, f->v[FLEX_FILE_A_FAULTS]);
	EXPECT_EQ(4, f->v[FLEX_FILE_A_ENGINE_DMA_CBS]);
	EXPECT_EQ(1, f->v[FLEX_FILE_A_ENGINE_COMPUTE_CBS]);
	EXPECT_EQ(fdinfo_num(self->fd, "flex-engine-dma"), f->v[FLEX_FILE_A_ENGINE_DMA_NS]);
	EXPECT_EQ(fdinfo_num(self->fd, "flex-engine-compute"),
		  f->v[FLEX_FILE_A_ENGINE_COMPUTE_NS]);
	/* One CB may count 0 ns (start and end read on two CPUs), so no > 0. */
	f = find(&o, FLEX_FILE_A_CLIENT_ID, id2);
	ASSERT_NE(NULL, f) TH_LOG("file dump: client %lld (second file) not listed", id2);
	EXPECT_EQ(0, f->v[FLEX_FILE_A_REGIONS]);
	EXPECT_EQ(0, f->v[FLEX_FILE_A_ENGINE_DMA_NS]);
	/* In client id order. */
	for (i = 1; i < o.n; i++)
		EXPECT_LT(o.o[i - 1].v[FLEX_FILE_A_CLIENT_ID], o.o[i].v[FLEX_FILE_A_CLIENT_ID]);
	objs_free(&o);

	/* One file by client id; a closed one is gone. */
	ASSERT_EQ(0, file_get(&self->c, id2, &o));
	ASSERT_EQ(1, o.n);
	EXPECT_EQ(id2, o.o[0].v[FLEX_FILE_A_CLIENT_ID]);
	objs_free(&o);
	close(fd2);
	EXPECT_EQ(-ENOENT, file_get(&self->c, id2, &o));
	objs_free(&o);
	EXPECT_EQ(-EINVAL, nl_do(&self->c, FLEX_CMD_FILE_GET, 0, k, &o)) TH_LOG("no client id");
	objs_free(&o);

	/* The function's usage, for everyone: memory, quotas, queues, engines. */
	ASSERT_EQ(0, nl_do(&self->c, FLEX_CMD_DEVICE_GET, 0, k, &o));
	ASSERT_EQ(1, o.n);
	d = &o.o[0];
	EXPECT_EQ(sysfs_num(FLEX_SYSFS "/memory_used"), d->fn[0].v[FLEX_FN_A_USED]);
	EXPECT_LE(4 * MiB, d->fn[0].v[FLEX_FN_A_USED]);
	EXPECT_EQ(sysfs_num(FLEX_SYSFS "/backing_used"), d->fn[0].v[FLEX_FN_A_RESIDENT]);
	EXPECT_EQ(sysfs_num(FLEX_SYSFS "/quota_capacity"), d->fn[0].v[FLEX_FN_A_QUOTA_CAPACITY]);
	EXPECT_EQ(sysfs_num(FLEX_SYSFS "/quota_backing"), d->fn[0].v[FLEX_FN_A_QUOTA_BACKING]);
	EXPECT_LE(1, d->fn[0].v[FLEX_FN_A_QUEUES]);
	EXPECT_EQ(0, d->fn[0].v[FLEX_FN_A_PENDING]);
	EXPECT_LE(4, d->fn[0].v[FLEX_FN_A_ENGINE_DMA_CBS]);
	EXPECT_LE(1, d->fn[0].v[FLEX_FN_A_ENGINE_COMPUTE_CBS]);
	EXPECT_LE(fdinfo_num(self->fd, "flex-engine-dma"), d->fn[0].v[FLEX_FN_A_ENGINE_DMA_NS]);
	EXPECT_LE(fdinfo_num(self->fd, "flex-engine-compute"),
		  d->fn[0].v[FLEX_FN_A_ENGINE_COMPUTE_NS]);
	objs_free(&o);

	/* A VF's file, by the function filter. */
	ASSERT_EQ(0, set_numvfs(1));
	fd2 = flex_open(VF0);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, nl_do(&self->c, FLEX_CMD_FILE_GET, 1, vf, &o));
	ASSERT_EQ(1, o.n) TH_LOG("files of vf0: expected 1, got %d", o.n);
	EXPECT_EQ(fdinfo_num(fd2, "flex-client-id"), o.o[0].v[FLEX_FILE_A_CLIENT_ID]);
	EXPECT_EQ(FLEX_NL_FN_VF(0), o.o[0].v[FLEX_FILE_A_FN]);
	objs_free(&o);
	close(fd2);
}

TEST_F(nl, regions_get_dump_and_filters)
{
	struct flex_region_acquire a, b, v;
	struct kv pf[] = { { FLEX_A_DEVICE_INDEX, 0 }, { FLEX_A_FN, FLEX_NL_FN_PF }, END };
	struct kv vf[] = { { FLEX_A_FN, FLEX_NL_FN_VF(0) }, END };
	struct kv nodev[] = { { FLEX_A_DEVICE_INDEX, 3 }, END };
	struct objs o;
	struct obj *r;
	int vfd;

	ASSERT_EQ(0, flex_acquire(self->fd, 2 * MiB, &a));
	ASSERT_EQ(0, flex_acquire(self->fd, 6 * MiB, &b));
	ASSERT_EQ(0, set_numvfs(1));
	vfd = flex_open(VF0);
	ASSERT_LE(0, vfd);
	ASSERT_EQ(0, flex_acquire(vfd, 4 * MiB, &v));

	/* Single get by handle. */
	do {
		struct kv k[] = { { FLEX_A_DEVICE_INDEX, 0 }, { FLEX_A_REGION_HANDLE, b.handle }, END };

		ASSERT_EQ(0, nl_do(&self->c, FLEX_CMD_REGION_GET, 0, k, &o));
		ASSERT_EQ(1, o.n);
		r = &o.o[0];
		EXPECT_EQ(FLEX_A_REGION, r->kind);
		EXPECT_EQ(b.handle, r->v[FLEX_REGION_A_HANDLE]);
		EXPECT_EQ(FLEX_NL_FN_PF, r->v[FLEX_REGION_A_FN]);
		EXPECT_EQ(6 * MiB, r->v[FLEX_REGION_A_SIZE]);
		EXPECT_EQ(b.region_id, r->v[FLEX_REGION_A_REGION_ID]);
		EXPECT_EQ(b.region_id, r->v[FLEX_REGION_A_PHYS]);	/* PF: id == phys */
		EXPECT_EQ(FLEX_NO_LUT_INDEX, r->v[FLEX_REGION_A_LUT_INDEX]);
		EXPECT_EQ(b.mmap_offset, r->v[FLEX_REGION_A_MMAP_OFFSET]);
		EXPECT_EQ(0, r->v[FLEX_REGION_A_RESIDENT]);
		EXPECT_EQ(getpid(), r->v[FLEX_REGION_A_OWNER_PID]);
		EXPECT_STREQ("netlink_test", r->s[FLEX_REGION_A_OWNER_COMM]);
		objs_free(&o);
	} while (0);

	/* Dump, PF only: a and b, not the VF's. */
	ASSERT_EQ(0, nl_do(&self->c, FLEX_CMD_REGION_GET, 1, pf, &o));
	EXPECT_NE(NULL, find(&o, FLEX_REGION_A_HANDLE, a.handle));
	EXPECT_NE(NULL, find(&o, FLEX_REGION_A_HANDLE, b.handle));
	EXPECT_EQ(NULL, find(&o, FLEX_REGION_A_HANDLE, v.handle));
	EXPECT_EQ(NULL, find(&o, FLEX_REGION_A_FN, FLEX_NL_FN_VF(0)));
	objs_free(&o);

	/* VF 0 only (any device): just v, its region_id the lut index. */
	ASSERT_EQ(0, nl_do(&self->c, FLEX_CMD_REGION_GET, 1, vf, &o));
	ASSERT_EQ(1, o.n);
	r = &o.o[0];
	EXPECT_EQ(v.handle, r->v[FLEX_REGION_A_HANDLE]);
	EXPECT_EQ(FLEX_NL_FN_VF(0), r->v[FLEX_REGION_A_FN]);
	EXPECT_EQ(v.lut_index, r->v[FLEX_REGION_A_LUT_INDEX]);
	EXPECT_EQ(v.region_id, r->v[FLEX_REGION_A_REGION_ID]);
	EXPECT_EQ(4 * MiB, r->v[FLEX_REGION_A_SIZE]);
	objs_free(&o);

	/* No filter: all three. */
	ASSERT_EQ(0, nl_do(&self->c, FLEX_CMD_REGION_GET, 1, NULL, &o));
	EXPECT_NE(NULL, find(&o, FLEX_REGION_A_HANDLE, a.handle));
	EXPECT_NE(NULL, find(&o, FLEX_REGION_A_HANDLE, v.handle));
	objs_free(&o);

	/* Released: gone from get and dump. */
	ASSERT_EQ(0, flex_release(self->fd, a.region_id));
	do {
		struct kv k[] = { { FLEX_A_DEVICE_INDEX, 0 }, { FLEX_A_REGION_HANDLE, a.handle }, END };

		EXPECT_EQ(-ENOENT, nl_do(&self->c, FLEX_CMD_REGION_GET, 0, k, &o));
		objs_free(&o);
	} while (0);
	ASSERT_EQ(0, nl_do(&self->c, FLEX_CMD_REGION_GET, 1, pf, &o));
	EXPECT_EQ(NULL, find(&o, FLEX_REGION_A_HANDLE, a.handle));
	objs_free(&o);

	EXPECT_EQ(-ENODEV, nl_do(&self->c, FLEX_CMD_REGION_GET, 1, nodev, &o));
	objs_free(&o);
	close(vfd);
}

/* A dump larger than one skb resumes where it stopped: every region once. */
TEST_F(nl, region_dump_spans_many_skbs)
{
	struct kv pf[] = { { FLEX_A_DEVICE_INDEX, 0 }, { FLEX_A_FN, FLEX_NL_FN_PF }, END };
	struct flex_query q = flex_query(self->fd);
	__u64 handles[1024];
	unsigned int i, n = q.table_entries - q.table_used;
	struct objs o;
	struct nl small;
	__u64 last = 0;

	ASSERT_LE(32, n) TH_LOG("need room for 32 PF regions, have %u", n);
	for (i = 0; i < n; i++) {
		struct flex_region_acquire a;

		ASSERT_EQ(0, flex_acquire(self->fd, 2 * MiB, &a));
		handles[i] = a.handle;
	}
	/* A small receive buffer makes the kernel fill small dump skbs. */
	ASSERT_EQ(0, nlc_open_buf(&small, 4096));
	ASSERT_EQ(0, nl_do(&small, FLEX_CMD_REGION_GET, 1, pf, &o));
	nlc_close(&small);
	EXPECT_LE(3, o.datagrams) TH_LOG("%d regions came in %d datagrams", o.n, o.datagrams);
	EXPECT_EQ(q.table_used + n, o.n);
	for (i = 0; i < n; i++)
		EXPECT_NE(NULL, find(&o, FLEX_REGION_A_HANDLE, handles[i]))
			TH_LOG("region %llu missing", (unsigned long long)handles[i]);
	for (i = 0; i < (unsigned int)o.n; i++) {
		EXPECT_LT(last, o.o[i].v[FLEX_REGION_A_HANDLE]) TH_LOG("out of order at %u", i);
		last = o.o[i].v[FLEX_REGION_A_HANDLE];
	}
	objs_free(&o);
}

TEST_F(nl, queues_get_dump_counters_and_fault)
{
	struct kv pf[] = { { FLEX_A_DEVICE_INDEX, 0 }, { FLEX_A_FN, FLEX_NL_FN_PF }, END };
	struct kv vf[] = { { FLEX_A_DEVICE_INDEX, 0 }, { FLEX_A_FN, FLEX_NL_FN_VF(0) }, END };
	struct flex_region_acquire r, gone;
	struct flex_cb cbs[2], nop = { .opcode = FLEX_CB_NOP };
	struct objs o;
	struct obj *q;
	int q1, q2, vq, vfd;
	__u32 val = 7;
	__u64 seq, h1;

	ASSERT_EQ(0, flex_acquire(self->fd, 2 * MiB, &r));
	ASSERT_EQ(0, flex_acquire(self->fd, 2 * MiB, &gone));
	q1 = queue_create(self->fd, FLEX_QUEUE_PRIO_HIGH, 16);
	q2 = queue_create(self->fd, FLEX_QUEUE_PRIO_LOW, 0);
	ASSERT_LT(0, q1);
	ASSERT_LT(0, q2);
	ASSERT_EQ(0, set_numvfs(1));
	vfd = flex_open(VF0);
	ASSERT_LE(0, vfd);
	vq = queue_create(vfd, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, vq);
	ASSERT_EQ(0, run_cb(self->fd, q1, nop));
	ASSERT_EQ(0, run_cb(self->fd, q1, nop));

	/* PF queues only, with their counters. */
	ASSERT_EQ(0, nl_do(&self->c, FLEX_CMD_QUEUE_GET, 1, pf, &o));
	ASSERT_EQ(2, o.n);
	q = find(&o, FLEX_QUEUE_A_ID, q1);
	ASSERT_NE(NULL, q);
	EXPECT_EQ(FLEX_A_QUEUE, q->kind);
	EXPECT_EQ(FLEX_NL_FN_PF, q->v[FLEX_QUEUE_A_FN]);
	EXPECT_EQ(FLEX_QUEUE_PRIO_HIGH, q->v[FLEX_QUEUE_A_PRIORITY]);
	EXPECT_EQ(16, q->v[FLEX_QUEUE_A_DEPTH]);
	EXPECT_EQ(2, q->v[FLEX_QUEUE_A_SUBMITTED]);
	EXPECT_EQ(2, q->v[FLEX_QUEUE_A_COMPLETED]);
	EXPECT_EQ(0, q->v[FLEX_QUEUE_A_PENDING]);
	EXPECT_EQ(0, q->v[FLEX_QUEUE_A_FAULTS]);
	EXPECT_EQ(0, q->v[FLEX_QUEUE_A_FAULTED]);
	EXPECT_FALSE(q->has_fault);
	EXPECT_EQ(getpid(), q->v[FLEX_QUEUE_A_OWNER_PID]);
	EXPECT_STREQ("netlink_test", q->s[FLEX_QUEUE_A_OWNER_COMM]);
	EXPECT_LT(0, q->v[FLEX_QUEUE_A_HANDLE]);
	h1 = q->v[FLEX_QUEUE_A_HANDLE];
	q = find(&o, FLEX_QUEUE_A_ID, q2);
	ASSERT_NE(NULL, q);
	EXPECT_EQ(FLEX_QUEUE_DEFAULT_DEPTH, q->v[FLEX_QUEUE_A_DEPTH]);
	EXPECT_EQ(0, q->v[FLEX_QUEUE_A_SUBMITTED]);
	EXPECT_NE(h1, q->v[FLEX_QUEUE_A_HANDLE]);
	objs_free(&o);

	/* The VF's only. */
	ASSERT_EQ(0, nl_do(&self->c, FLEX_CMD_QUEUE_GET, 1, vf, &o));
	ASSERT_EQ(1, o.n);
	EXPECT_EQ(vq, o.o[0].v[FLEX_QUEUE_A_ID]);
	EXPECT_EQ(FLEX_NL_FN_VF(0), o.o[0].v[FLEX_QUEUE_A_FN]);
	objs_free(&o);

	/* A fault: a DMA to a region released while it waited. */
	ASSERT_EQ(0, engines_pause(1));
	cbs[0] = cb_dma(1, &val, gone.region_id, 24, 4);
	cbs[0].user_data = 0xbeef;
	cbs[1] = nop;
	ASSERT_EQ(0, submit(self->fd, q1, cbs, 2, 0, &seq));
	ASSERT_EQ(0, flex_release(self->fd, gone.region_id));
	ASSERT_EQ(0, engines_pause(0));
	EXPECT_EQ(-ENXIO, wait_seq(self->fd, q1, seq, 10000));
	do {
		struct kv k[] = { { FLEX_A_DEVICE_INDEX, 0 }, { FLEX_A_QUEUE_HANDLE, h1 }, END };

		ASSERT_EQ(0, nl_do(&self->c, FLEX_CMD_QUEUE_GET, 0, k, &o));
		ASSERT_EQ(1, o.n);
		q = &o.o[0];
		EXPECT_EQ(q1, q->v[FLEX_QUEUE_A_ID]);
		EXPECT_EQ(4, q->v[FLEX_QUEUE_A_SUBMITTED]);
		EXPECT_EQ(4, q->v[FLEX_QUEUE_A_COMPLETED]);
		EXPECT_EQ(1, q->v[FLEX_QUEUE_A_FAULTS]);
		EXPECT_EQ(1, q->v[FLEX_QUEUE_A_FAULTED]);
		ASSERT_TRUE(q->has_fault);
		EXPECT_EQ(FLEX_FAULT_UNMAPPED, q->fault[FLEX_FAULT_A_CODE]);
		EXPECT_EQ(-ENXIO, (__s32)q->fault[FLEX_FAULT_A_ERRNO]);
		EXPECT_EQ(seq - 1, q->fault[FLEX_FAULT_A_SEQNO]);
		EXPECT_EQ(0xbeef, q->fault[FLEX_FAULT_A_USER_DATA]);
		EXPECT_EQ(FLEX_CB_DMA_TO_DEVICE, q->fault[FLEX_FAULT_A_OPCODE]);
		EXPECT_EQ(gone.region_id, q->fault[FLEX_FAULT_A_REGION_ID]);
		EXPECT_EQ(24, q->fault[FLEX_FAULT_A_OFFSET]);
		EXPECT_EQ(1, q->fault[FLEX_FAULT_A_ADDR_VALID]);
		objs_free(&o);

		/* Reset: no fault any more, the count stays. */
		ASSERT_EQ(0, queue_reset(self->fd, q1));
		ASSERT_EQ(0, nl_do(&self->c, FLEX_CMD_QUEUE_GET, 0, k, &o));
		ASSERT_EQ(1, o.n);
		EXPECT_EQ(0, o.o[0].v[FLEX_QUEUE_A_FAULTED]);
		EXPECT_FALSE(o.o[0].has_fault);
		EXPECT_EQ(1, o.o[0].v[FLEX_QUEUE_A_FAULTS]);
		objs_free(&o);

		/* Destroyed: gone. */
		ASSERT_EQ(0, queue_destroy(self->fd, q1));
		EXPECT_EQ(-ENOENT, nl_do(&self->c, FLEX_CMD_QUEUE_GET, 0, k, &o));
		objs_free(&o);
	} while (0);
	close(vfd);
}

TEST_F(nl, lookup_tables_of_a_vf_and_the_pf)
{
	struct kv vf[] = { { FLEX_A_DEVICE_INDEX, 0 }, { FLEX_A_FN, FLEX_NL_FN_VF(1) }, END };
	struct kv pf[] = { { FLEX_A_DEVICE_INDEX, 0 }, { FLEX_A_FN, FLEX_NL_FN_PF }, END };
	struct flex_region_acquire r[3], p;
	struct objs o;
	struct obj *e;
	int vfd, i;

	ASSERT_EQ(0, set_numvfs(2));
	vfd = flex_open("/dev/flex0vf1");
	ASSERT_LE(0, vfd);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, flex_acquire(vfd, (i + 1) * 2 * MiB, &r[i]));
	ASSERT_EQ(0, flex_release(vfd, r[1].region_id));
	ASSERT_EQ(0, flex_acquire(self->fd, 2 * MiB, &p));

	/* Table order: entries 0 and 2 live, 1 freed. */
	ASSERT_EQ(0, nl_do(&self->c, FLEX_CMD_TABLE_GET, 1, vf, &o));
	ASSERT_EQ(2, o.n);
	for (i = 0; i < 2; i++) {
		struct flex_region_acquire *x = &r[i * 2];

		e = &o.o[i];
		EXPECT_EQ(FLEX_A_ENTRY, e->kind);
		EXPECT_EQ(FLEX_NL_FN_VF(1), e->v[FLEX_ENTRY_A_FN]);
		EXPECT_EQ(x->lut_index, e->v[FLEX_ENTRY_A_INDEX]);
		EXPECT_EQ(x->region_id, e->v[FLEX_ENTRY_A_REGION_ID]);
		EXPECT_EQ(x->handle, e->v[FLEX_ENTRY_A_HANDLE]);
		EXPECT_EQ((__u64)(i * 2 + 1) * 2 * MiB, e->v[FLEX_ENTRY_A_SIZE]);
		EXPECT_EQ(getpid(), e->v[FLEX_ENTRY_A_OWNER_PID]);
		EXPECT_STREQ("netlink_test", e->s[FLEX_ENTRY_A_OWNER_COMM]);
	}
	objs_free(&o);

	/* Single entries. */
	do {
		struct kv k2[] = { { FLEX_A_DEVICE_INDEX, 0 }, { FLEX_A_FN, FLEX_NL_FN_VF(1) },
				   { FLEX_A_TABLE_INDEX, r[2].lut_index }, END };
		struct kv k1[] = { { FLEX_A_DEVICE_INDEX, 0 }, { FLEX_A_FN, FLEX_NL_FN_VF(1) },
				   { FLEX_A_TABLE_INDEX, r[1].lut_index }, END };
		struct kv nofn[] = { { FLEX_A_DEVICE_INDEX, 0 }, { FLEX_A_FN, FLEX_NL_FN_VF(2) },
				     { FLEX_A_TABLE_INDEX, 0 }, END };

		ASSERT_EQ(0, nl_do(&self->c, FLEX_CMD_TABLE_GET, 0, k2, &o));
		ASSERT_EQ(1, o.n);
		EXPECT_EQ(r[2].handle, o.o[0].v[FLEX_ENTRY_A_HANDLE]);
		objs_free(&o);
		EXPECT_EQ(-ENOENT, nl_do(&self->c, FLEX_CMD_TABLE_GET, 0, k1, &o));
		objs_free(&o);
		EXPECT_EQ(-ENODEV, nl_do(&self->c, FLEX_CMD_TABLE_GET, 0, nofn, &o));
		objs_free(&o);
	} while (0);

	/* The PF's table holds p; its entry reads back by its index. */
	ASSERT_EQ(0, nl_do(&self->c, FLEX_CMD_TABLE_GET, 1, pf, &o));
	e = find(&o, FLEX_ENTRY_A_HANDLE, p.handle);
	ASSERT_NE(NULL, e);
	EXPECT_EQ(p.region_id, e->v[FLEX_ENTRY_A_PHYS]);
	EXPECT_EQ(p.region_id, e->v[FLEX_ENTRY_A_REGION_ID]);
	EXPECT_EQ(NULL, find(&o, FLEX_ENTRY_A_FN, FLEX_NL_FN_VF(1)));
	do {
		struct kv k[] = { { FLEX_A_DEVICE_INDEX, 0 }, { FLEX_A_FN, FLEX_NL_FN_PF },
				  { FLEX_A_TABLE_INDEX, e->v[FLEX_ENTRY_A_INDEX] }, END };
		struct objs one;

		ASSERT_EQ(0, nl_do(&self->c, FLEX_CMD_TABLE_GET, 0, k, &one));
		ASSERT_EQ(1, one.n);
		EXPECT_EQ(p.handle, one.o[0].v[FLEX_ENTRY_A_HANDLE]);
		objs_free(&one);
	} while (0);
	objs_free(&o);

	/* Unfiltered: both functions' entries. */
	ASSERT_EQ(0, nl_do(&self->c, FLEX_CMD_TABLE_GET, 1, NULL, &o));
	EXPECT_NE(NULL, find(&o, FLEX_ENTRY_A_HANDLE, p.handle));
	EXPECT_NE(NULL, find(&o, FLEX_ENTRY_A_HANDLE, r[2].handle));
	objs_free(&o);
	close(vfd);
}

/*
 * Sends @cmd with FLEX_A_DEVICE_INDEX 0 and attribute @type of @width bytes
 * (0: a string); returns the kernel's answer.
 */
static int send_odd(struct nl *c, int cmd, int dump, int type, int width)
{
	struct nl_msg *msg = nlmsg_alloc();
	struct objs o;
	int err;

	genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, c->family, 0,
		    dump ? NLM_F_DUMP : 0, cmd, FLEX_GENL_VERSION);
	if (type != FLEX_A_DEVICE_INDEX)
		nla_put_u32(msg, FLEX_A_DEVICE_INDEX, 0);
	switch (width) {
	case 1: nla_put_u8(msg, type, 0); break;
	case 4: nla_put_u32(msg, type, 0); break;
	case 8: nla_put_u64(msg, type, 0); break;
	default: nla_put_string(msg, type, "0"); break;
	}
	err = nl_xfer(c, msg, &o);
	objs_free(&o);
	return err;
}

TEST_F(nl, strict_validation)
{
	struct nl_msg *msg;
	struct genlmsghdr *gh;
	struct objs o;

	/* The baseline succeeds. */
	EXPECT_EQ(0, send_odd(&self->c, FLEX_CMD_DEVICE_GET, 0, FLEX_A_DEVICE_INDEX, 4));
	/* Wrong widths or types. */
	EXPECT_EQ(-EINVAL, send_odd(&self->c, FLEX_CMD_DEVICE_GET, 0, FLEX_A_DEVICE_INDEX, 8));
	EXPECT_EQ(-EINVAL, send_odd(&self->c, FLEX_CMD_DEVICE_GET, 0, FLEX_A_DEVICE_INDEX, 1));
	EXPECT_EQ(-EINVAL, send_odd(&self->c, FLEX_CMD_DEVICE_GET, 0, FLEX_A_DEVICE_INDEX, 0));
	EXPECT_EQ(-EINVAL, send_odd(&self->c, FLEX_CMD_REGION_GET, 1, FLEX_A_FN, 8));
	/* Unknown attributes, and attributes the command does not take. */
	EXPECT_EQ(-EINVAL, send_odd(&self->c, FLEX_CMD_DEVICE_GET, 0, FLEX_A_MAX + 1, 4));
	EXPECT_EQ(-EINVAL, send_odd(&self->c, FLEX_CMD_DEVICE_GET, 1, FLEX_A_FN, 4));
	EXPECT_EQ(-EINVAL, send_odd(&self->c, FLEX_CMD_QUEUE_GET, 1, FLEX_A_REGION_HANDLE, 4));
	EXPECT_EQ(-EINVAL, send_odd(&self->c, FLEX_CMD_TABLE_GET, 1, FLEX_A_QUEUE_HANDLE, 4));
	EXPECT_EQ(-EINVAL, send_odd(&self->c, FLEX_CMD_REGION_GET, 1, FLEX_A_REGION, 4));
	/* A missing selector. */
	EXPECT_EQ(-EINVAL, nl_do(&self->c, FLEX_CMD_DEVICE_GET, 0, NULL, &o));
	objs_free(&o);
	do {
		struct kv k[] = { { FLEX_A_DEVICE_INDEX, 0 }, END };

		EXPECT_EQ(-EINVAL, nl_do(&self->c, FLEX_CMD_REGION_GET, 0, k, &o));
		objs_free(&o);
	} while (0);
	/* Events are not requests; nor is an unknown command. */
	EXPECT_EQ(-EOPNOTSUPP, nl_do(&self->c, FLEX_CMD_REGION_ACQUIRED_NTF, 0, NULL, &o));
	objs_free(&o);
	EXPECT_EQ(-EOPNOTSUPP, nl_do(&self->c, FLEX_CMD_MAX + 1, 0, NULL, &o));
	objs_free(&o);
	/* A non-zero reserved header field. */
	msg = nlmsg_alloc();
	genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, self->c.family, 0, 0,
		    FLEX_CMD_DEVICE_GET, FLEX_GENL_VERSION);
	gh = nlmsg_data(nlmsg_hdr(msg));
	gh->reserved = 1;
	nla_put_u32(msg, FLEX_A_DEVICE_INDEX, 0);
	EXPECT_EQ(-EINVAL, nl_xfer(&self->c, msg, &o));
	objs_free(&o);
}

/*
 * Every doit resolves its device the same way (the family's pre_doit): a
 * missing FLEX_A_DEVICE_INDEX is -EINVAL and reported missing, an unknown
 * one -ENODEV with "no such device" at that attribute. Each refusal, and
 * each doit that fails after the lookup, leaves the family usable: the
 * lock taken by pre_doit is dropped (a leak would hang the next request).
 */
TEST_F(nl, every_doit_resolves_its_device_once)
{
	static const struct {
		const char *name;
		int cmd;
		int sel[2];	/* its other selectors */
	} cmds[] = {
		{ "DEVICE_GET", FLEX_CMD_DEVICE_GET, { 0, 0 } },
		{ "REGION_GET", FLEX_CMD_REGION_GET, { FLEX_A_REGION_HANDLE, 0 } },
		{ "QUEUE_GET", FLEX_CMD_QUEUE_GET, { FLEX_A_QUEUE_HANDLE, 0 } },
		{ "TABLE_GET", FLEX_CMD_TABLE_GET, { FLEX_A_FN, FLEX_A_TABLE_INDEX } },
	};
	/* Past the devices loaded, the driver's last index (7), past it, far past. */
	long long ndev = sysfs_num("/sys/module/flex/parameters/num_devices");
	const __u32 unknown[] = { ndev, 7, 8, 1000 };
	struct kv pf[] = { { FLEX_A_DEVICE_INDEX, 0 }, { FLEX_A_FN, FLEX_NL_FN_PF }, END };
	struct flex_region_acquire r;
	struct ack ack;
	struct objs o;
	struct obj *e;
	__u32 qhandle, tindex;
	unsigned int i, j;
	int q;

	ASSERT_LT(0, ndev);
	ASSERT_GT(7, ndev) TH_LOG("index 7 must name no device here");
	ASSERT_EQ(0, flex_acquire(self->fd, 2 * MiB, &r));
	q = queue_create(self->fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, q);
	ASSERT_EQ(0, nl_do(&self->c, FLEX_CMD_QUEUE_GET, 1, pf, &o));
	ASSERT_EQ(1, o.n);
	qhandle = o.o[0].v[FLEX_QUEUE_A_HANDLE];
	objs_free(&o);
	/* A PF entry's index is its place in device memory, not a LUT slot. */
	ASSERT_EQ(0, nl_do(&self->c, FLEX_CMD_TABLE_GET, 1, pf, &o));
	e = find(&o, FLEX_ENTRY_A_HANDLE, r.handle);
	ASSERT_NE(NULL, e);
	tindex = e->v[FLEX_ENTRY_A_INDEX];
	objs_free(&o);

	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		__u32 good[2] = { 0, 0 };
		struct kv k[4];
		int n;

		/* The selectors of an object that exists. */
		for (j = 0; j < 2; j++)
			good[j] = cmds[i].sel[j] == FLEX_A_REGION_HANDLE ? r.handle :
				  cmds[i].sel[j] == FLEX_A_QUEUE_HANDLE ? qhandle :
				  cmds[i].sel[j] == FLEX_A_TABLE_INDEX ? tindex :
				  FLEX_NL_FN_PF;

		/* No device index: -EINVAL, the attribute reported missing. */
		for (n = 0, j = 0; j < 2; j++)
			if (cmds[i].sel[j])
				k[n++] = (struct kv){ cmds[i].sel[j], good[j] };
		k[n] = (struct kv)END;
		EXPECT_EQ(-EINVAL, nl_do_ack(&self->c, cmds[i].cmd, k, &ack))
			TH_LOG("%s without FLEX_A_DEVICE_INDEX", cmds[i].name);
		EXPECT_EQ(FLEX_A_DEVICE_INDEX, ack.miss_type)
			TH_LOG("%s: missing attribute reported", cmds[i].name);

		/* Unknown devices: -ENODEV, at the device attribute. */
		for (j = 0; j < ARRAY_SIZE(unknown); j++) {
			k[n] = (struct kv){ FLEX_A_DEVICE_INDEX, unknown[j] };
			k[n + 1] = (struct kv)END;
			EXPECT_EQ(-ENODEV, nl_do_ack(&self->c, cmds[i].cmd, k, &ack))
				TH_LOG("%s on device %u", cmds[i].name, unknown[j]);
			EXPECT_STREQ("no such device", ack.msg)
				TH_LOG("%s on device %u: extack message", cmds[i].name, unknown[j]);
			EXPECT_EQ(FLEX_A_DEVICE_INDEX, ack.offs_type)
				TH_LOG("%s on device %u: extack attribute", cmds[i].name, unknown[j]);
		}

		/* Device 0 and the object: the reply. */
		k[n] = (struct kv){ FLEX_A_DEVICE_INDEX, 0 };
		k[n + 1] = (struct kv)END;
		ASSERT_EQ(0, nl_do(&self->c, cmds[i].cmd, 0, k, &o))
			TH_LOG("%s on device 0 after the refusals", cmds[i].name);
		EXPECT_EQ(1, o.n) TH_LOG("%s: replies", cmds[i].name);
		objs_free(&o);

		/* A doit failing after the lookup (no such object), then one more. */
		if (cmds[i].sel[0]) {
			k[cmds[i].sel[1] ? 1 : 0].val = 0xfffff;
			EXPECT_EQ(-ENOENT, nl_do(&self->c, cmds[i].cmd, 0, k, &o))
				TH_LOG("%s on an object that does not exist", cmds[i].name);
			objs_free(&o);
		}
		ASSERT_EQ(0, nl_do(&self->c, FLEX_CMD_DEVICE_GET, 0, k + n, &o))
			TH_LOG("DEVICE_GET after %s", cmds[i].name);
		objs_free(&o);
	}
	ASSERT_EQ(0, queue_destroy(self->fd, q));
	ASSERT_EQ(0, flex_release(self->fd, r.region_id));
}

TEST_F(nl, region_events_and_none_without_joining)
{
	struct nl ev, deaf;
	struct flex_region_acquire a, b;
	struct objs e;
	int i, fd2;

	ASSERT_EQ(0, ev_open(&ev, 1));
	ASSERT_EQ(0, ev_open(&deaf, 0));

	ASSERT_EQ(0, flex_acquire(self->fd, 4 * MiB, &a));
	ev_drain(&ev, &e);
	i = ev_find(&e, FLEX_CMD_REGION_ACQUIRED_NTF, FLEX_REGION_A_HANDLE, a.handle);
	ASSERT_LE(0, i) TH_LOG("no REGION_ACQUIRED event for handle %llu (%d events)",
			       (unsigned long long)a.handle, e.n);
	EXPECT_EQ(0, e.o[i].dev);
	EXPECT_EQ(FLEX_A_REGION, e.o[i].kind);
	EXPECT_EQ(4 * MiB, e.o[i].v[FLEX_REGION_A_SIZE]);
	EXPECT_EQ(a.region_id, e.o[i].v[FLEX_REGION_A_REGION_ID]);
	EXPECT_EQ(getpid(), e.o[i].v[FLEX_REGION_A_OWNER_PID]);
	EXPECT_STREQ("netlink_test", e.o[i].s[FLEX_REGION_A_OWNER_COMM]);
	objs_free(&e);

	ASSERT_EQ(0, flex_release(self->fd, a.region_id));
	ev_drain(&ev, &e);
	i = ev_find(&e, FLEX_CMD_REGION_RELEASED_NTF, FLEX_REGION_A_HANDLE, a.handle);
	ASSERT_LE(0, i) TH_LOG("no REGION_RELEASED event for handle %llu", (unsigned long long)a.handle);
	EXPECT_EQ(4 * MiB, e.o[i].v[FLEX_REGION_A_SIZE]);
	objs_free(&e);

	/* Released by close. */
	fd2 = flex_open(FLEX_PF);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, flex_acquire(fd2, 2 * MiB, &b));
	close(fd2);
	ev_drain(&ev, &e);
	EXPECT_LE(0, ev_find(&e, FLEX_CMD_REGION_ACQUIRED_NTF, FLEX_REGION_A_HANDLE, b.handle));
	EXPECT_LE(0, ev_find(&e, FLEX_CMD_REGION_RELEASED_NTF, FLEX_REGION_A_HANDLE, b.handle))
		TH_LOG("no REGION_RELEASED at close for handle %llu", (unsigned long long)b.handle);
	objs_free(&e);

	/* The socket that never joined got none of it. */
	ev_drain(&deaf, &e);
	EXPECT_EQ(0, e.n);
	objs_free(&e);

	/* After leaving the group, nothing either. */
	ASSERT_EQ(0, nl_socket_drop_membership(ev.sk, ev.grp));
	ASSERT_EQ(0, flex_acquire(self->fd, 2 * MiB, &a));
	ev_drain(&ev, &e);
	EXPECT_EQ(0, e.n);
	objs_free(&e);
	nlc_close(&ev);
	nlc_close(&deaf);
}

TEST_F(nl, queue_fault_event)
{
	struct flex_region_acquire gone;
	struct flex_cb cb;
	struct nl ev;
	struct objs e, o;
	struct obj *q;
	__u32 val = 1;
	__u64 seq;
	int qid, i;
	struct kv pf[] = { { FLEX_A_DEVICE_INDEX, 0 }, { FLEX_A_FN, FLEX_NL_FN_PF }, END };

	ASSERT_EQ(0, ev_open(&ev, 1));
	qid = queue_create(self->fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, qid);
	ASSERT_EQ(0, flex_acquire(self->fd, 2 * MiB, &gone));
	ASSERT_EQ(0, engines_pause(1));
	cb = cb_dma(1, &val, gone.region_id, 100, 4);
	cb.user_data = 0x5a5a;
	ASSERT_EQ(0, submit(self->fd, qid, &cb, 1, 0, &seq));
	ASSERT_EQ(0, flex_release(self->fd, gone.region_id));
	ASSERT_EQ(0, engines_pause(0));
	ASSERT_EQ(-ENXIO, wait_seq(self->fd, qid, seq, 10000));

	/* The engine sends the event after recording the fault the wait saw. */
	ev_wait(&ev, &e, FLEX_CMD_QUEUE_FAULT_NTF, 1, 10000);
	EXPECT_EQ(1, ev_count(&e, FLEX_CMD_QUEUE_FAULT_NTF));
	i = ev_find(&e, FLEX_CMD_QUEUE_FAULT_NTF, FLEX_QUEUE_A_ID, qid);
	ASSERT_LE(0, i) TH_LOG("no QUEUE_FAULT event for queue %d (%d events)", qid, e.n);
	q = &e.o[i];
	EXPECT_EQ(0, q->dev);
	EXPECT_EQ(FLEX_NL_FN_PF, q->v[FLEX_QUEUE_A_FN]);
	EXPECT_EQ(1, q->v[FLEX_QUEUE_A_FAULTED]);
	EXPECT_EQ(1, q->v[FLEX_QUEUE_A_FAULTS]);
	ASSERT_TRUE(q->has_fault);
	EXPECT_EQ(FLEX_FAULT_UNMAPPED, q->fault[FLEX_FAULT_A_CODE]);
	EXPECT_EQ(-ENXIO, (__s32)q->fault[FLEX_FAULT_A_ERRNO]);
	EXPECT_EQ(seq, q->fault[FLEX_FAULT_A_SEQNO]);
	EXPECT_EQ(0x5a5a, q->fault[FLEX_FAULT_A_USER_DATA]);
	EXPECT_EQ(gone.region_id, q->fault[FLEX_FAULT_A_REGION_ID]);
	EXPECT_EQ(100, q->fault[FLEX_FAULT_A_OFFSET]);
	/* The event names the queue as a get does. */
	ASSERT_EQ(0, nl_do(&self->c, FLEX_CMD_QUEUE_GET, 1, pf, &o));
	EXPECT_NE(NULL, find(&o, FLEX_QUEUE_A_HANDLE, q->v[FLEX_QUEUE_A_HANDLE]));
	objs_free(&o);
	objs_free(&e);
	nlc_close(&ev);
}

TEST_F(nl, vf_events)
{
	struct nl ev;
	struct objs e;
	int i;

	ASSERT_EQ(0, ev_open(&ev, 1));
	ASSERT_EQ(0, set_numvfs(2));
	ev_drain(&ev, &e);
	ASSERT_EQ(1, ev_count(&e, FLEX_CMD_VFS_ENABLED_NTF));
	i = ev_find(&e, FLEX_CMD_VFS_ENABLED_NTF, 0, 0);
	EXPECT_EQ(0, e.o[i].dev);
	EXPECT_TRUE(e.o[i].has_num_vfs);
	EXPECT_EQ(2, e.o[i].num_vfs);
	objs_free(&e);

	/* No change, no event; a refused change, none either. */
	ASSERT_EQ(0, set_numvfs(2));
	ASSERT_EQ(-EBUSY, set_numvfs(1));
	ev_drain(&ev, &e);
	EXPECT_EQ(0, e.n);
	objs_free(&e);

	ASSERT_EQ(0, set_numvfs(0));
	ev_drain(&ev, &e);
	ASSERT_EQ(1, ev_count(&e, FLEX_CMD_VFS_DISABLED_NTF));
	i = ev_find(&e, FLEX_CMD_VFS_DISABLED_NTF, 0, 0);
	EXPECT_EQ(0, e.o[i].dev);
	EXPECT_EQ(2, e.o[i].num_vfs);
	objs_free(&e);
	nlc_close(&ev);
}

struct touch {
	char *p;
	size_t len;
};

static void touch_all(void *arg)
{
	struct touch *t = arg;
	size_t i;

	for (i = 0; i < t->len; i += FLEX_DEVMEM_PAGE)
		t->p[i] = 1;
}

TEST_F(nl, backing_cap_event_once_until_freed)
{
	long long cap = sysfs_num(FLEX_SYSFS "/backing_cap");
	struct flex_region_acquire a;
	struct touch t;
	struct nl ev;
	struct objs e;
	int status, i;
	pid_t pid;

	ASSERT_LT(0, cap);
	ASSERT_GE(256 * MiB, cap) TH_LOG("run with --param backing_cap=128M (have %lld)", cap);
	ASSERT_EQ(0, ev_open(&ev, 1));
	ASSERT_EQ(0, flex_acquire(self->fd, cap + 4 * MiB, &a));
	t.len = cap + 4 * MiB;
	t.p = mmap(NULL, t.len, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, a.mmap_offset);
	ASSERT_NE(MAP_FAILED, t.p);

	/* Two children run into the cap: one event, the cap is still hit. */
	for (i = 0; i < 2; i++) {
		pid = fork();
		if (pid == 0) {
			touch_all(&t);
			_exit(0);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS)
			TH_LOG("child %d: status %#x, expected SIGBUS", i, status);
	}
	/* Sent from a work item: wait for it. */
	ev_wait(&ev, &e, FLEX_CMD_BACKING_CAP_NTF, 1, 5000);
	EXPECT_EQ(1, ev_count(&e, FLEX_CMD_BACKING_CAP_NTF));
	i = ev_find(&e, FLEX_CMD_BACKING_CAP_NTF, 0, 0);
	ASSERT_LE(0, i);
	EXPECT_EQ(0, e.o[i].dev);
	EXPECT_EQ(FLEX_A_DEVICE, e.o[i].kind);
	EXPECT_EQ(cap, e.o[i].v[FLEX_DEV_A_BACKING_CAP]);
	EXPECT_EQ(cap, e.o[i].v[FLEX_DEV_A_RESIDENT]);
	objs_free(&e);

	/* Freed below the cap and hit again: a second event. */
	munmap(t.p, t.len);
	ASSERT_EQ(0, flex_release(self->fd, a.region_id));
	ASSERT_EQ(0, flex_acquire(self->fd, cap + 4 * MiB, &a));
	t.p = mmap(NULL, t.len, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, a.mmap_offset);
	ASSERT_NE(MAP_FAILED, t.p);
	pid = fork();
	if (pid == 0) {
		touch_all(&t);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS);
	ev_wait(&ev, &e, FLEX_CMD_BACKING_CAP_NTF, 1, 5000);
	EXPECT_EQ(1, ev_count(&e, FLEX_CMD_BACKING_CAP_NTF));
	objs_free(&e);
	munmap(t.p, t.len);
	nlc_close(&ev);
}

/*
 * Per-tenant detail is for admins: an unprivileged user (uid 65534, no
 * capabilities) reads devices but not regions, queues or tables, cannot
 * join the events group, and cannot read a region's owner in sysfs.
 */
TEST_F(nl, per_tenant_detail_is_for_admins_only)
{
	struct flex_region_acquire r;
	int status;
	pid_t pid;

	ASSERT_EQ(0, flex_acquire(self->fd, 2 * MiB, &r));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		static const int cmds[] = { FLEX_CMD_REGION_GET, FLEX_CMD_QUEUE_GET,
					    FLEX_CMD_TABLE_GET, FLEX_CMD_FILE_GET };
		const struct kv dev0[] = { { FLEX_A_DEVICE_INDEX, 0 }, END };
		char path[128], buf[64];
		struct objs o;
		struct nl c;
		unsigned int i;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(10);
		if (nlc_open(&c))
			_exit(11);
		if (nl_do(&c, FLEX_CMD_DEVICE_GET, 1, NULL, &o) || !o.n)
			_exit(12);	/* devices stay public */
		objs_free(&o);
		for (i = 0; i < ARRAY_SIZE(cmds); i++) {
			if (nl_do(&c, cmds[i], 1, dev0, &o) != -EPERM)
				_exit(20 + i);
			objs_free(&o);
		}
		if (nl_socket_add_membership(c.sk, c.grp) >= 0)
			_exit(30);
		snprintf(path, sizeof(path), FLEX_SYSFS "/regions/%llu/owner_pid",
			 (unsigned long long)r.handle);
		if (sysfs_read(path, buf, sizeof(buf)) != -EACCES)
			_exit(31);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("10-12: setup; 20-23: region/queue/table/file dump allowed; 30: joined "
		       "events; 31: read a region's owner");
}

TEST_HARNESS_MAIN
