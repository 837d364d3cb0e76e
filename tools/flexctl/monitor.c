// SPDX-License-Identifier: GPL-2.0
/*
 * flexctl monitor: the flex family's "events" multicast group, one line
 * per event (or one JSON object per line with --json), until interrupted
 * or --count events have arrived.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>

#include <linux/flex_netlink.h>

#include "flexnl.h"

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

	o = flexctl_nl_parse_msg(msg, &cmd);
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
	struct flexctl_nl n;
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
	ret = flexctl_nl_open(c, &n, err, sizeof(err));
	if (ret)
		return ctl_error(c, "%s", err);
	grp = genl_ctrl_resolve_grp(n.sk, FLEX_GENL_NAME, FLEX_GENL_MCGRP_EVENTS);
	if (grp < 0) {
		flexctl_nl_close(&n);
		return ctl_error(c, "the flex netlink family has no \"%s\" group: %s",
				 FLEX_GENL_MCGRP_EVENTS, nl_geterror(grp));
	}
	ret = nl_socket_add_membership(n.sk, grp);
	if (ret < 0) {
		flexctl_nl_close(&n);
		return ctl_error(c, "joining the flex event group: %s%s", nl_geterror(ret),
				 ret == -NLE_PERM ? " (permission denied)" : "");
	}
	nl_socket_set_nonblocking(n.sk);
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb) {
		flexctl_nl_close(&n);
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
		flexctl_nl_close(&n);
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
	flexctl_nl_close(&n);
	return ret;
}
