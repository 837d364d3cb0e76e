// SPDX-License-Identifier: GPL-2.0
/*
 * flex_fuzz: the "flex" generic netlink family (uapi/linux/flex_netlink.h)
 * through libnl-genl-3: every get command (devices, regions, queues, table
 * entries, open files), as a single get and a dump, with
 * valid selectors and filters and with garbage (attributes the command does
 * not take, wrong sizes and flags, unknown commands, bad headers, random
 * bytes); and the "events" multicast group, joined, drained, left.
 *
 * libnl builds the messages and resolves the family; they are sent and the
 * answers read with send()/recv() on the socket, so that a garbage request
 * cannot confuse libnl's state and a missing answer times out (2 s) instead
 * of hanging. Every answer is checked: an error must be one the family
 * documents (or netlink's own for garbage), a reply must carry
 * FLEX_A_DEVICE_INDEX and the object nest of its command.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <linux/flex_netlink.h>

#include "fuzz.h"

#define NL_BUF	(64 * 1024)

static __thread unsigned char *nlbuf;

int nl_proc_init(struct proc *p)
{
	struct nl_sock *sk = nl_socket_alloc();

	p->family = p->mcgrp = -1;
	if (!sk)
		return -1;
	if (!genl_connect(sk)) {
		p->family = genl_ctrl_resolve(sk, FLEX_GENL_NAME);
		p->mcgrp = genl_ctrl_resolve_grp(sk, FLEX_GENL_NAME, FLEX_GENL_MCGRP_EVENTS);
	}
	nl_socket_free(sk);
	return p->family > 0 ? 0 : -1;
}

static struct nl_sock *nl_open(void)
{
	struct timeval tv = { .tv_sec = 2 };
	struct nl_sock *sk = nl_socket_alloc();

	if (!sk)
		return NULL;
	if (genl_connect(sk)) {
		nl_socket_free(sk);
		return NULL;
	}
	setsockopt(nl_socket_get_fd(sk), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return sk;
}

void nl_thread_fini(struct tctx *t)
{
	if (t->nl)
		nl_socket_free(t->nl);
	if (t->ev)
		nl_socket_free(t->ev);
	t->nl = t->ev = NULL;
	free(nlbuf);
	nlbuf = NULL;
}

/* The nest a reply or event of @cmd carries, 0 for none. */
static int nest_of(int cmd)
{
	switch (cmd) {
	case FLEX_CMD_DEVICE_GET:
	case FLEX_CMD_BACKING_CAP_NTF:
		return FLEX_A_DEVICE;
	case FLEX_CMD_REGION_GET:
	case FLEX_CMD_REGION_ACQUIRED_NTF:
	case FLEX_CMD_REGION_RELEASED_NTF:
		return FLEX_A_REGION;
	case FLEX_CMD_QUEUE_GET:
	case FLEX_CMD_QUEUE_FAULT_NTF:
		return FLEX_A_QUEUE;
	case FLEX_CMD_TABLE_GET:
		return FLEX_A_ENTRY;
	case FLEX_CMD_FILE_GET:
		return FLEX_A_FILE;
	case FLEX_CMD_VFS_ENABLED_NTF:
	case FLEX_CMD_VFS_DISABLED_NTF:
		return FLEX_A_NUM_VFS;
	}
	return -1;
}

/* A message of the family: NULL if well-formed, else what is wrong. */
static const char *check_msg(struct nlmsghdr *nlh, int want_cmd)
{
	struct nlattr *tb[FLEX_A_MAX + 1];
	struct genlmsghdr *gh;
	int nest;

	if (nlh->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
		return "shorter than a genetlink header";
	gh = nlmsg_data(nlh);
	if (want_cmd && gh->cmd != want_cmd)
		return "a reply of another command";
	nest = nest_of(gh->cmd);
	if (nest < 0)
		return "an unknown command";
	if (nla_parse(tb, FLEX_A_MAX, genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0), NULL))
		return "malformed attributes";
	if (!tb[FLEX_A_DEVICE_INDEX])
		return "no FLEX_A_DEVICE_INDEX";
	if (!tb[nest])
		return "without its object nest";
	return NULL;
}

struct answer {
	int err;		/* the kernel's errno (positive), or 0 */
	int replies;
	int timeout;
	const char *bad;	/* a malformed reply */
};

/*
 * Sends the message and reads its answer: the error or ACK, a dump's DONE,
 * or the single reply of a get without NLM_F_ACK.
 */
static void transact(struct nl_sock *sk, int family, struct nlmsghdr *nlh, int cmd,
		     struct answer *ans)
{
	int fd = nl_socket_get_fd(sk), ack = nlh->nlmsg_flags & NLM_F_ACK;
	__u32 seq = nlh->nlmsg_seq;
	ssize_t n;

	memset(ans, 0, sizeof(*ans));
	if (send(fd, nlh, nlh->nlmsg_len, 0) < 0) {
		ans->err = errno;
		return;
	}
	count(&sh->netlink, 1);
	for (;;) {
		struct nlmsghdr *m;

		n = recv(fd, nlbuf, NL_BUF, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			ans->timeout = 1;
			return;
		}
		if (n < 0) {
			ans->err = errno;
			return;
		}
		for (m = (struct nlmsghdr *)nlbuf; NLMSG_OK(m, n); m = NLMSG_NEXT(m, n)) {
			if (m->nlmsg_seq != seq)
				continue;	/* a late answer to an earlier request */
			if (m->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = nlmsg_data(m);

				ans->err = -e->error;
				return;
			}
			if (m->nlmsg_type == NLMSG_DONE) {
				if (m->nlmsg_len >= NLMSG_LENGTH(sizeof(int)))
					ans->err = -*(int *)nlmsg_data(m);
				return;
			}
			if (m->nlmsg_type != family) {
				ans->bad = "a message of another type";
				return;
			}
			ans->replies++;
			if (!ans->bad)
				ans->bad = check_msg(m, cmd);
			if (!(m->nlmsg_flags & NLM_F_MULTI) && !ack)
				return;
		}
	}
}

/* Handles of regions this process holds, for REGION_GET. */
static __u32 some_handle(struct tctx *t, __u64 *region_id, int *node)
{
	struct snap s;
	struct region *r;

	if (take_snap(t, rnd(&t->r, NR_SLOTS), &s) || !(r = pick_region(t, &s)))
		return 1 + rnd(&t->r, 64);
	*region_id = r->id;
	*node = s.node;
	return r->handle;
}

void op_netlink(struct tctx *t)
{
	static const int u32_attr_lens[] = { 0, 1, 2, 3, 5, 8, 12, 16 };
	static const int gets[] = { FLEX_CMD_DEVICE_GET, FLEX_CMD_REGION_GET, FLEX_CMD_QUEUE_GET,
				    FLEX_CMD_TABLE_GET, FLEX_CMD_FILE_GET };
	struct rng *r = &t->r;
	struct nl_msg *msg;
	struct nlmsghdr *nlh;
	struct genlmsghdr *gh;
	struct answer ans;
	int cmd, dump, flags, garbage, i, node = 0, nvfs = sh->nr_vfs;
	__u64 region_id = 0;
	__u32 v;
	char why[80];

	if (t->p->family <= 0)
		return;
	if (!t->nl && !(t->nl = nl_open()))
		return;
	if (!nlbuf && !(nlbuf = malloc(NL_BUF)))
		return;
	msg = nlmsg_alloc_size(16384);
	if (!msg)
		return;

	cmd = gets[rnd(r, sizeof(gets) / sizeof(gets[0]))];
	dump = chance(r, 45);
	garbage = chance(r, 35) ? (int)rnd(r, 9) : -1;
	flags = NLM_F_REQUEST | (dump ? NLM_F_DUMP : 0) | (chance(r, 30) ? NLM_F_ACK : 0);
	if (garbage == 2)
		cmd = rnd(r, 2) ? rnd(r, 256) : FLEX_CMD_REGION_ACQUIRED_NTF + rnd(r, 6);
	genlmsg_put(msg, NL_AUTO_PORT, ++t->nl_seq, t->p->family, 0, flags, cmd,
		    garbage == 4 && chance(r, 50) ? rnd(r, 256) : FLEX_GENL_VERSION);

	/* Selectors and filters, as the command takes them. */
	if (!dump || chance(r, 50))
		nla_put_u32(msg, FLEX_A_DEVICE_INDEX, chance(r, 92) ? 0 : (__u32)rnd_interesting(r));
	switch (cmd) {
	case FLEX_CMD_REGION_GET:
		if (!dump)
			nla_put_u32(msg, FLEX_A_REGION_HANDLE, some_handle(t, &region_id, &node));
		else if (chance(r, 40))
			nla_put_u32(msg, FLEX_A_FN, rnd(r, nvfs + 2));
		break;
	case FLEX_CMD_QUEUE_GET:
		if (!dump)
			nla_put_u32(msg, FLEX_A_QUEUE_HANDLE, 1 + rnd(r, 256));
		else if (chance(r, 40))
			nla_put_u32(msg, FLEX_A_FN, rnd(r, nvfs + 2));
		break;
	case FLEX_CMD_TABLE_GET:
		if (!dump) {
			some_handle(t, &region_id, &node);
			nla_put_u32(msg, FLEX_A_FN, chance(r, 90) ? (__u32)node : rnd(r, 64));
			nla_put_u32(msg, FLEX_A_TABLE_INDEX, node == 0 ? region_id >> 21 :
				    (chance(r, 70) ? region_id : rnd(r, 10)));
		} else if (chance(r, 40)) {
			nla_put_u32(msg, FLEX_A_FN, rnd(r, nvfs + 2));
		}
		break;
	case FLEX_CMD_FILE_GET:
		/* Client ids count up from 1, one per open. */
		if (!dump)
			nla_put_u64(msg, FLEX_A_CLIENT_ID, chance(r, 80) ? 1 + rnd(r, 4096) :
				    rnd64(r));
		else if (chance(r, 40))
			nla_put_u32(msg, FLEX_A_FN, rnd(r, nvfs + 2));
		break;
	}

	switch (garbage) {
	case 0:	/* an attribute the command does not take, or unknown */
		v = (__u32)rnd64(r);
		nla_put(msg, chance(r, 50) ? FLEX_A_DEVICE + rnd(r, 5) : rnd(r, 64), 4, &v);
		break;
	case 1:	/* a u32 of the wrong size */
		memset(why, 0x41, sizeof(why));
		nla_put(msg, FLEX_A_DEVICE_INDEX + rnd(r, 5),
			u32_attr_lens[rnd(r, sizeof(u32_attr_lens) / sizeof(int))], why);
		break;
	case 3:	/* raw bytes where attributes go */
		for (i = 0; i < (int)sizeof(why); i++)
			why[i] = rnd(r, 256);
		nlmsg_append(msg, why, 1 + rnd(r, sizeof(why)), chance(r, 50) ? 1 : NLMSG_ALIGNTO);
		break;
	case 4:	/* the genetlink header's reserved field */
		gh = nlmsg_data(nlmsg_hdr(msg));
		gh->reserved = 1 + rnd(r, 0xfffe);
		break;
	case 5:	/* cut inside the genetlink header or an attribute */
		nlh = nlmsg_hdr(msg);
		nlh->nlmsg_len = chance(r, 50) ? NLMSG_HDRLEN + rnd(r, GENL_HDRLEN) :
						 nlh->nlmsg_len - 1 - rnd(r, 4);
		if (nlh->nlmsg_len < NLMSG_HDRLEN)
			nlh->nlmsg_len = NLMSG_HDRLEN;
		break;
	case 6:	/* type flags on a u32 */
		v = 0;
		nla_put(msg, FLEX_A_DEVICE_INDEX | (chance(r, 50) ? NLA_F_NESTED :
						    NLA_F_NET_BYTEORDER), 4, &v);
		break;
	case 7:	/* a selector twice */
		nla_put_u32(msg, FLEX_A_DEVICE_INDEX, 0);
		break;
	case 8:	/* many attributes */
		for (i = 0; i < 200; i++)
			nla_put_u32(msg, FLEX_A_DEVICE_INDEX + rnd(r, 5), (__u32)rnd64(r));
		break;
	}

	nlh = nlmsg_hdr(msg);
	transact(t->nl, t->p->family, nlh, cmd, &ans);
	nlmsg_free(msg);
	count(&sh->nl_replies, ans.replies);
	if (ans.err)
		count(&sh->nl_errors, 1);
	snprintf(why, sizeof(why), "netlink %s cmd %d%s", dump ? "dump" : "get", cmd,
		 garbage >= 0 ? " (garbage)" : "");
	if (ans.timeout) {
		violation(t, &sh->bad_netlink, "%s, garbage kind %d: no answer within 2 s", why,
			  garbage);
		/* The socket may hold its late answer: start afresh. */
		nl_socket_free(t->nl);
		t->nl = NULL;
	} else if (ans.bad) {
		violation(t, &sh->bad_netlink, "%s: a reply %s", why, ans.bad);
	} else if (ans.err && ans.err != ENODEV && ans.err != ENOENT && ans.err != EINVAL &&
		   (garbage < 0 || (ans.err != EOPNOTSUPP && ans.err != ERANGE &&
				    ans.err != EMSGSIZE && ans.err != ENOMEM))) {
		violation(t, &sh->bad_netlink, "%s, garbage kind %d: errno %s, expected 0, "
			  "ENODEV, ENOENT or EINVAL%s", why, garbage, errname(ans.err),
			  garbage >= 0 ? ", EOPNOTSUPP, ERANGE, EMSGSIZE or ENOMEM" : "");
	}
}

/* The events group: join, drain (checking each event), leave, rejoin. */
void op_nl_events(struct tctx *t)
{
	struct rng *r = &t->r;
	int fd, i;
	ssize_t n;

	if (t->p->family <= 0 || t->p->mcgrp <= 0)
		return;
	if (!nlbuf && !(nlbuf = malloc(NL_BUF)))
		return;
	if (!t->ev) {
		t->ev = nl_open();
		if (!t->ev)
			return;
		if (nl_socket_add_membership(t->ev, t->p->mcgrp))
			violation(t, &sh->bad_netlink, "joining the events group failed");
		return;
	}
	if (chance(r, 10)) {
		nl_socket_drop_membership(t->ev, t->p->mcgrp);
		if (chance(r, 50)) {
			nl_socket_free(t->ev);	/* with events queued */
			t->ev = NULL;
		} else {
			nl_socket_add_membership(t->ev, t->p->mcgrp);
		}
		return;
	}
	fd = nl_socket_get_fd(t->ev);
	for (i = 0; i < 32; i++) {
		struct nlmsghdr *m;
		const char *bad;

		n = recv(fd, nlbuf, NL_BUF, MSG_DONTWAIT);
		if (n < 0) {
			/* ENOBUFS: the group outran us; events were dropped. */
			if (errno != EAGAIN && errno != EINTR && errno != ENOBUFS)
				violation(t, &sh->bad_netlink, "reading events: errno %s",
					  errname(errno));
			return;
		}
		for (m = (struct nlmsghdr *)nlbuf; NLMSG_OK(m, n); m = NLMSG_NEXT(m, n)) {
			if (m->nlmsg_type != t->p->family)
				continue;
			count(&sh->nl_events, 1);
			bad = check_msg(m, 0);
			if (bad)
				violation(t, &sh->bad_netlink, "an event (cmd %d) %s",
					  ((struct genlmsghdr *)nlmsg_data(m))->cmd, bad);
		}
	}
}

/* For the supervisor: objects a dump of @cmd returns; *err its errno. */
int nl_count_objects(int cmd, int *err)
{
	struct proc p;
	struct nl_sock *sk;
	struct nl_msg *msg;
	struct answer ans;

	*err = 0;
	if (nl_proc_init(&p) || !(sk = nl_open())) {
		*err = ENOENT;
		return -1;
	}
	if (!nlbuf)
		nlbuf = malloc(NL_BUF);
	msg = nlmsg_alloc();
	genlmsg_put(msg, NL_AUTO_PORT, 1, p.family, 0, NLM_F_REQUEST | NLM_F_DUMP, cmd,
		    FLEX_GENL_VERSION);
	transact(sk, p.family, nlmsg_hdr(msg), cmd, &ans);
	nlmsg_free(msg);
	nl_socket_free(sk);
	*err = ans.timeout ? ETIMEDOUT : ans.err;
	return ans.replies;
}
