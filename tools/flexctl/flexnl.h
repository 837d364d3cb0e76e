/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flexctl and the "flex" generic netlink family: declarations shared by
 * nlconn.c (the connection and one request), nlattrs.c (messages into
 * json-c objects), lists.c (devices, regions, queues, table) and monitor.c
 * (events). Everything here is flexctl's own and carries its prefix;
 * nl_* and nla_* are libnl's.
 */
#ifndef FLEXCTL_FLEXNL_H
#define FLEXCTL_FLEXNL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <netlink/netlink.h>

#include "flexctl.h"

/* A socket with the family resolved, and what the last request brought. */
struct flexctl_nl {
	struct nl_sock *sk;
	int family;
	int error;		/* the kernel's negative errno for the request, or 0 */
	char ext_msg[256];	/* its extended ACK message, or "" */
	bool done;
	struct json_object *rows;	/* replies, one object each (requests only) */
};

/* A request's selectors; -1 = not given. */
struct flexctl_nl_sel {
	int64_t device, fn, region_handle, queue_handle, table_index;
};

#define FLEXCTL_NL_SEL_NONE { -1, -1, -1, -1, -1 }

/*
 * Open a socket, ask for extended ACKs and resolve the family. -errno with
 * a message in @err: -ENOENT says whether the module is loaded at all.
 */
int flexctl_nl_open(struct flexctl *c, struct flexctl_nl *n, char *err, size_t errlen);
void flexctl_nl_close(struct flexctl_nl *n);

/*
 * Send @cmd (a dump when @dump) with the selectors in @sel and append the
 * replies to n->rows. Returns 0, or -errno with a message in @err: the
 * kernel's extended ACK when it sent one, else the errno's text.
 */
int flexctl_nl_request(struct flexctl_nl *n, uint8_t cmd, bool dump,
		       const struct flexctl_nl_sel *sel, char *err, size_t errlen);

/*
 * A reply or event as one json-c object: "device" first, then the fields
 * of its object nest (or "num_vfs" for VF events); its command in @cmd.
 * NULL when the message is malformed or carries nothing flexctl knows.
 */
struct json_object *flexctl_nl_parse_msg(struct nl_msg *msg, uint8_t *cmd);

/*
 * The replies of one request (@cmd, a dump when @dump, device @dev or -1
 * for all) as an array in @out. -errno with a message in @err.
 */
int flexctl_nl_list(struct flexctl *c, uint8_t cmd, bool dump, int dev, struct json_object **out,
		    char *err, size_t errlen);

/* "pf" or "vfM" for a function number. */
void flexctl_fn_name(uint32_t fn, char *buf, size_t len);
/* "pf" or "vfM" into a function number; -EINVAL otherwise. */
int flexctl_parse_fn(const char *s, uint32_t *fn);

#endif /* FLEXCTL_FLEXNL_H */
