/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flexctl: look into and operate the flex driver. Shared declarations of
 * the command files (one concern each: main.c the command table and help,
 * output.c tables and JSON, kmodctl.c the module through libkmod, sysfs.c
 * and vf.c the sysfs ABI, memmap.c the memory-map picture; the flex generic
 * netlink family in nlconn.c (the connection), nlattrs.c (messages into
 * JSON), lists.c (the list commands), usage.c (ps and top) and monitor.c
 * (events), which share flexnl.h). Helpers every flex tool uses are in tools/shared/tool.h.
 *
 * Every command builds its result as json-c objects; output.c prints them
 * either as a table for people or, with --json, as JSON for scripts, so the
 * two outputs always carry the same facts.
 */
#ifndef FLEXCTL_H
#define FLEXCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json.h>

#include "tool.h"

/* Exit statuses. */
#define FLEXCTL_EXIT_OK		0
#define FLEXCTL_EXIT_FAIL	1	/* the operation failed */
#define FLEXCTL_EXIT_USAGE	2	/* bad command line */

/* State of one flexctl run, passed to every command (no global state). */
struct flexctl {
	const char *prog;	/* argv[0] for messages */
	bool json;		/* --json: machine-readable output */
	bool bytes;		/* --bytes: exact byte counts in tables */
	FILE *out;		/* where results go (stdout) */
	FILE *err;		/* where messages go (stderr) */
	const char *sysfs_root;	/* "/sys", overridable (FLEXCTL_SYSFS) for tests */
	const struct flexctl_cmd *cmd;	/* the command running */
};

/* A command: its name, handler and help. */
struct flexctl_cmd {
	const char *name;
	int (*run)(struct flexctl *c, int argc, char **argv);
	const char *summary;	/* one line, for `flexctl --help` */
	const char *usage;	/* the full help of `flexctl CMD --help` */
};

/* Print "flexctl: <message>\n" to c->err; returns FLEXCTL_EXIT_FAIL. */
int ctl_error(struct flexctl *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Usage error: message, then "try: flexctl CMD --help"; returns FLEXCTL_EXIT_USAGE. */
int ctl_usage_error(struct flexctl *c, const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Print a command's full help to @f. */
void ctl_print_cmd_help(FILE *f, const struct flexctl_cmd *cmd);
const struct flexctl_cmd *ctl_find_cmd(const char *name);

/*
 * Options every command takes: --json, --bytes, --help. Returns 1 when
 * @opt was one of them (handled), 0 otherwise. Commands list
 * CTL_COMMON_LONGOPTS in their getopt_long table.
 */
#define CTL_OPT_JSON	'j'
#define CTL_OPT_BYTES	1001
#define CTL_OPT_HELP	'h'
#define CTL_COMMON_LONGOPTS \
	{ "json", no_argument, NULL, CTL_OPT_JSON }, \
	{ "bytes", no_argument, NULL, CTL_OPT_BYTES }, \
	{ "help", no_argument, NULL, CTL_OPT_HELP }
int ctl_common_opt(struct flexctl *c, int opt);

/* Parse an unsigned number with an optional K/M/G/T suffix. -EINVAL if malformed. */
int ctl_parse_u64(const char *s, uint64_t *out);

/* ---- output.c ---- */

enum col_fmt {
	COL_STR,	/* string (or "-" when absent) */
	COL_INT,	/* integer */
	COL_SIZE,	/* bytes: human units in tables unless --bytes */
	COL_HEX,	/* integer shown as 0x... */
	COL_BOOL,	/* yes/no */
	COL_RATIO,	/* a fraction shown with 3 decimals */
	COL_RATE,	/* a rate or percentage shown with 1 decimal */
};

struct column {
	const char *key;	/* JSON key in each row */
	const char *header;	/* table header */
	enum col_fmt fmt;
};

/* Format one value of a row as the table shows it. */
void out_cell(const struct flexctl *c, struct json_object *row, const struct column *col,
	      char *buf, size_t len);
/* @rows (an array of objects) as an aligned table with a header line. */
void out_table(const struct flexctl *c, struct json_object *rows, const struct column *cols,
	       size_t ncols);
/* @obj as "Header: value" lines, one per column. */
void out_fields(const struct flexctl *c, struct json_object *obj, const struct column *cols,
		size_t ncols);
/* @obj as pretty JSON and a newline. */
void out_json(const struct flexctl *c, struct json_object *obj);

/* ---- sysfs.c ---- */

/* Read a sysfs file (relative to c->sysfs_root) into @buf, newline stripped. -errno. */
int sysfs_read_str(const struct flexctl *c, char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Read a number; -errno. */
int sysfs_read_u64(const struct flexctl *c, uint64_t *out, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Write a string to a sysfs file; -errno. */
int sysfs_write_str(const struct flexctl *c, const char *val, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* 1 if the path exists. */
bool sysfs_exists(const struct flexctl *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* True if the flex module is loaded (/sys/module/flex exists). */
bool flex_module_loaded(const struct flexctl *c);
/*
 * Explain why a flex operation could not start: the module is not loaded,
 * or the device does not exist. Returns FLEXCTL_EXIT_FAIL after printing,
 * or 0 when the device is there.
 */
int ctl_need_device(struct flexctl *c, unsigned int dev);

/* ---- commands ---- */

int cmd_status(struct flexctl *c, int argc, char **argv);	/* kmodctl.c */
int cmd_load(struct flexctl *c, int argc, char **argv);		/* kmodctl.c */
int cmd_unload(struct flexctl *c, int argc, char **argv);	/* kmodctl.c */
int cmd_vf(struct flexctl *c, int argc, char **argv);		/* vf.c */
int cmd_memmap(struct flexctl *c, int argc, char **argv);	/* memmap_cmd.c */
int cmd_devices(struct flexctl *c, int argc, char **argv);	/* lists.c */
int cmd_regions(struct flexctl *c, int argc, char **argv);	/* lists.c */
int cmd_queues(struct flexctl *c, int argc, char **argv);	/* lists.c */
int cmd_table(struct flexctl *c, int argc, char **argv);	/* lists.c */
int cmd_monitor(struct flexctl *c, int argc, char **argv);	/* monitor.c */
int cmd_ps(struct flexctl *c, int argc, char **argv);		/* usage.c */
int cmd_top(struct flexctl *c, int argc, char **argv);		/* usage.c */

/*
 * The live region list of device @dev (every function), as
 * `flexctl regions --json` prints it, for the memory map. -errno with a
 * message in @err.
 */
int flexctl_nl_region_list(struct flexctl *c, int dev, struct json_object **out, char *err,
			   size_t errlen);

#endif /* FLEXCTL_H */
