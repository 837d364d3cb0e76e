// SPDX-License-Identifier: GPL-2.0
/*
 * flexctl: the connection to the "flex" generic netlink family
 * (uapi/linux/flex_netlink.h, Documentation/flex/netlink.rst) through
 * libnl-genl-3, and one request on it. The family is resolved by name
 * (genl_ctrl_resolve); the kernel's extended ACK, when it sends one, is the
 * error message, since it names the attribute it refused and why. Replies
 * become json-c objects (nlattrs.c).
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>

#include <linux/flex_netlink.h>

#include "flexnl.h"

void flexctl_nl_close(struct flexctl_nl *n)
{
	if (n->sk)
		nl_socket_free(n->sk);
	n->sk = NULL;
}

int flexctl_nl_open(struct flexctl *c, struct flexctl_nl *n, char *err, size_t errlen)
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
		flexctl_nl_close(n);
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
		flexctl_nl_close(n);
		return -ENOENT;
	}
	return 0;
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct flexctl_nl *n = arg;
	struct json_object *o;
	uint8_t cmd;

	o = flexctl_nl_parse_msg(msg, &cmd);
	if (o)
		json_object_array_add(n->rows, o);
	return NL_OK;
}

static int on_finish(struct nl_msg *msg, void *arg)
{
	((struct flexctl_nl *)arg)->done = true;
	return NL_STOP;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	((struct flexctl_nl *)arg)->done = true;
	return NL_STOP;
}

/* Record the kernel's errno and its extended ACK message (NLMSGERR_ATTR_MSG). */
static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct flexctl_nl *n = arg;
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

int flexctl_nl_request(struct flexctl_nl *n, uint8_t cmd, bool dump,
		       const struct flexctl_nl_sel *sel, char *err, size_t errlen)
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
