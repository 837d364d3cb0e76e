// SPDX-License-Identifier: GPL-2.0
/*
 * flexctl: look into and operate flex devices, in the manner of ip,
 * devlink and nvidia-smi: `flexctl [--json] COMMAND [ARGS]`. This file is
 * the command table, the help texts and the options every command shares.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "flexctl.h"

#define FLEXCTL_VERSION "1.0"

static const struct flexctl_cmd commands[] = {
	{ "status", cmd_status, "is the flex module loaded; its version and parameters",
	  "usage: flexctl status [--module PATH] [--json]\n"
	  "\n"
	  "Whether the flex module is loaded (its libkmod init state: live, coming,\n"
	  "going, or not loaded), its version and source version, reference count,\n"
	  "size, the devices present and the value of every module parameter\n"
	  "(/sys/module/flex/parameters), with each parameter's description when the\n"
	  "module file is known (installed in the module directory, or --module PATH).\n"
	  "Exits 0 whether or not the module is loaded: read \"loaded\" in --json.\n"
	  "\n"
	  "  -m, --module PATH   take the module file (modinfo) from PATH\n" },
	{ "load", cmd_load, "load the flex module, with parameters",
	  "usage: flexctl load [--module PATH] [NAME=VALUE...]\n"
	  "\n"
	  "Load the flex module through libkmod: by name from the module directory\n"
	  "(/lib/modules/$(uname -r), as modprobe does), or the file PATH with\n"
	  "--module. Parameters are checked against the module's own list first (the\n"
	  "kernel would ignore an unknown one); see `flexctl status` for them. Sizes\n"
	  "accept K, M, G and T suffixes, e.g. `flexctl load capacity=1G total_vfs=4`.\n"
	  "Needs root (CAP_SYS_MODULE). Fails if the module is already loaded.\n"
	  "\n"
	  "  -m, --module PATH   load the module file PATH (e.g. kmod/flex.ko)\n" },
	{ "unload", cmd_unload, "unload the flex module",
	  "usage: flexctl unload\n"
	  "\n"
	  "Unload the flex module through libkmod (as rmmod). Refused while any\n"
	  "/dev/flex* file is open: the message says so. Needs root (CAP_SYS_MODULE).\n" },
	{ "devices", cmd_devices, "list the flex devices and functions",
	  "usage: flexctl devices [--device N]\n"
	  "\n"
	  "One row per function (the PF flexN and its enabled VFs flexNvfM), from the\n"
	  "flex generic netlink family: mode, capacity, free memory and the largest\n"
	  "free range of the device, lookup-table size and use, VFs enabled of\n"
	  "supported, backing memory cap and resident memory.\n"
	  "\n"
	  "  -d, --device N      only device N\n" },
	{ "regions", cmd_regions, "list the live regions of the devices",
	  "usage: flexctl regions [--device N] [--function pf|vfM] [--pid PID]\n"
	  "       flexctl regions [--device N] --handle H\n"
	  "\n"
	  "One row per live region, from the flex generic netlink family: the device\n"
	  "and function holding it, its handle (the name of its sysfs directory), its\n"
	  "region_id (physical address on a PF, lookup-table index on a VF), physical\n"
	  "address, size, resident bytes and the owning process (pid and command).\n"
	  "\n"
	  "  -d, --device N      only device N\n"
	  "  -f, --function F    only function F: pf, or vfM for VF M\n"
	  "  -p, --pid PID       only regions owned by process PID\n"
	  "  -H, --handle H      only the region with handle H (its sysfs name)\n" },
	{ "queues", cmd_queues, "list the queues and their progress",
	  "usage: flexctl queues [--device N] [--function pf|vfM] [--pid PID]\n"
	  "       flexctl queues [--device N] --handle H\n"
	  "\n"
	  "One row per queue, from the flex generic netlink family: device, function,\n"
	  "owning process, queue id, priority, depth, the last sequence numbers\n"
	  "submitted and completed, and the sticky fault if the queue has one.\n"
	  "\n"
	  "  -d, --device N      only device N\n"
	  "  -f, --function F    only function F: pf, or vfM for VF M\n"
	  "  -p, --pid PID       only queues of process PID\n"
	  "  -H, --handle H      only the queue with device-wide handle H\n" },
	{ "table", cmd_table, "list the lookup-table entries of the functions",
	  "usage: flexctl table [--device N] [--function pf|vfM [--index I]] [--pid PID]\n"
	  "\n"
	  "One row per live lookup-table entry, in table order, from the flex generic\n"
	  "netlink family: the function whose table it is, the entry's index (on a VF\n"
	  "the region_id; on the PF the region's offset in units of region_align),\n"
	  "and the region it maps: region_id, physical address, size, handle, owner.\n"
	  "\n"
	  "  -d, --device N      only device N\n"
	  "  -f, --function F    only the table of function F: pf, or vfM for VF M\n"
	  "  -i, --index I       only entry I (needs --function)\n"
	  "  -p, --pid PID       only entries of regions owned by process PID\n" },
	{ "monitor", cmd_monitor, "print flex events as they happen",
	  "usage: flexctl monitor [--count N]\n"
	  "\n"
	  "Join the flex generic netlink family's \"events\" group and print every\n"
	  "event as it happens, one line each with a UTC timestamp (one JSON object\n"
	  "per line with --json: \"event\", \"time\", \"device\" and the object's\n"
	  "fields), until interrupted (Ctrl-C, SIGTERM) or N events were seen.\n"
	  "Events: region_acquired, region_released (with the region and its owner),\n"
	  "queue_fault (the queue and its sticky fault), vfs_enabled, vfs_disabled\n"
	  "(how many), backing_cap_reached (resident memory and the cap). A line on\n"
	  "standard error says when it is listening.\n"
	  "\n"
	  "  -n, --count N       stop after N events\n" },
	{ "ps", cmd_ps, "list the processes using the devices, with their usage",
	  "usage: flexctl ps [--device N]\n"
	  "\n"
	  "One row per open file of a flex device node (a client: an fd shared by fork()\n"
	  "or dup() is listed once): its client id, the process (pid and command),\n"
	  "the function (flexN or flexNvfM), regions held and their size and resident\n"
	  "memory, queues, CBs pending and completed, faults, and the time each engine\n"
	  "(DMA, compute) spent on its CBs. An admin (CAP_NET_ADMIN) sees every open\n"
	  "file, from the flex generic netlink family (the process that opened it);\n"
	  "anyone else the files of the processes they may read, from\n"
	  "/proc/PID/fdinfo (the lowest pid holding it, all in \"pids\" with --json).\n"
	  "The first line (\"source\" with --json: \"netlink\" or \"fdinfo\") says which.\n"
	  "\n"
	  "  -d, --device N      only device N\n" },
	{ "top", cmd_top, "show the devices' use, refreshed every second",
	  "usage: flexctl top [--device N] [--interval SEC] [--count N]\n"
	  "\n"
	  "Every interval, until interrupted (Ctrl-C, SIGTERM) or N refreshes, each\n"
	  "device and function from the flex generic netlink family (any user): device\n"
	  "memory used against the function's quota, host memory backing it against\n"
	  "its backing quota, queues and CBs pending, each engine's busy share over the\n"
	  "interval (DMA%, COMPUTE%: the engine time its CBs had, counted as each CB\n"
	  "completes, so a long CB counts in the interval it ends in; capped at 100)\n"
	  "and CBs completed per second. A terminal is redrawn in place. With --json,\n"
	  "one JSON object per refresh, one line each: \"time\", \"interval\" (s) and\n"
	  "\"devices\", each with its \"functions\" and their counters.\n"
	  "\n"
	  "  -d, --device N      only device N\n"
	  "  -i, --interval SEC  seconds between refreshes (default 1, 0.1 to 3600)\n"
	  "  -n, --count N       stop after N refreshes\n" },
	{ "vf", cmd_vf, "show, enable or disable virtual functions (SR-IOV)",
	  "usage: flexctl vf [--device N] [show | enable COUNT | disable]\n"
	  "\n"
	  "SR-IOV virtual functions of a device, through its sriov_numvfs attribute\n"
	  "(as for PCI devices). show (the default) lists the enabled VFs and their\n"
	  "lookup tables; enable COUNT creates flexNvf0..flexNvf(COUNT-1); disable\n"
	  "removes them (refused while a VF device node is open). The count only\n"
	  "changes through 0: disable first. Changing VFs needs root.\n"
	  "\n"
	  "  -d, --device N      device N (default 0)\n" },
	{ "memmap", cmd_memmap, "draw a device's memory or a libflex memory report as SVG",
	  "usage: flexctl memmap [options] REPORT.json\n"
	  "       flexctl memmap --device N [--output FILE] [--width PX] [--title TEXT]\n"
	  "\n"
	  "With --device and no report: the device's memory from the flex generic\n"
	  "netlink family (the region list needs CAP_NET_ADMIN), by physical address:\n"
	  "a bar of the whole device and one zoomed on the span its regions occupy,\n"
	  "every region coloured by its function (legend: regions and bytes per\n"
	  "function) with a tooltip, and a line per region: handle, function, owner\n"
	  "pid and command, address, size and resident bytes.\n"
	  "\n"
	  "With a report:\n"
	  "\n"
	  "Draw the memory report a libflex allocator wrote (FLEX_ALLOC_REPORT=\n"
	  "path.json at exit, or flex_alloc_report(..., FLEX_ALLOC_REPORT_JSON)) as\n"
	  "an SVG picture: one band per region with every block to scale, tensors\n"
	  "and programs in their colours, free space hatched, the largest free block\n"
	  "outlined, totals and fragmentation per region, and a tooltip per block.\n"
	  "Each region is labelled with its owner from the live region list when\n"
	  "the module is loaded (or from --regions FILE). Open the SVG in a browser,\n"
	  "or make a PNG with `rsvg-convert -o map.png map.svg`.\n"
	  "\n"
	  "  -o, --output FILE   write the SVG to FILE (default: standard output)\n"
	  "  -n, --report N      the N-th report in the file (default: the last)\n"
	  "  -r, --regions FILE  live region list saved by `flexctl regions --json`\n"
	  "      --no-live       do not ask the driver for the live region list\n"
	  "  -d, --device N      without a report: draw device N; with one: match the\n"
	  "                      live regions of device N (default: any)\n"
	  "  -f, --function F    the allocator ran on function F (pf or vfM): VF\n"
	  "                      region ids are table indexes, the same on every VF\n"
	  "  -w, --width PX      picture width (default 1200)\n"
	  "  -t, --title TEXT    heading (default \"flex memory map\")\n" },
	{ NULL, NULL, NULL, NULL }
};

static const char main_usage[] =
	"usage: flexctl [--json] [--bytes] COMMAND [ARGS...]\n"
	"       flexctl COMMAND --help\n"
	"\n"
	"Look into and operate the flex driver: its module, devices, regions,\n"
	"queues, virtual functions, events and who uses them, and draw memory maps.\n"
	"\n"
	"Options (before or after the command):\n"
	"  -j, --json      machine-readable JSON output instead of tables\n"
	"      --bytes     exact byte counts in tables instead of KiB/MiB/GiB\n"
	"  -h, --help      this help; `flexctl COMMAND --help` for a command's\n"
	"  -V, --version   flexctl's version\n"
	"\n"
	"Commands:\n";

static const char main_epilog[] =
	"\n"
	"Exit status: 0 success, 1 the operation failed (the message says why),\n"
	"2 bad command line. Messages go to standard error, results to standard\n"
	"output. See flexctl(8).\n";

const struct flexctl_cmd *ctl_find_cmd(const char *name)
{
	for (const struct flexctl_cmd *cmd = commands; cmd->name; cmd++)
		if (!strcmp(cmd->name, name))
			return cmd;
	return NULL;
}

void ctl_print_cmd_help(FILE *f, const struct flexctl_cmd *cmd)
{
	fprintf(f, "%s", cmd->usage);
	fprintf(f, "  -j, --json          JSON output\n"
		"      --bytes         exact byte counts in tables\n"
		"  -h, --help          this help\n");
}

static void print_main_help(FILE *f)
{
	fputs(main_usage, f);
	for (const struct flexctl_cmd *cmd = commands; cmd->name; cmd++)
		fprintf(f, "  %-9s %s\n", cmd->name, cmd->summary);
	fputs(main_epilog, f);
}

int ctl_error(struct flexctl *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tool_vmsg(c->err, fmt, ap);
	va_end(ap);
	return FLEXCTL_EXIT_FAIL;
}

int ctl_usage_error(struct flexctl *c, const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(c->err, "flexctl %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(c->err, fmt, ap);
	va_end(ap);
	fprintf(c->err, "\ntry: flexctl %s --help\n", cmd);
	return FLEXCTL_EXIT_USAGE;
}

/*
 * The command's own --help prints its help and exits 0 here, so that every
 * command's option loop stays a plain getopt_long loop.
 */
int ctl_common_opt(struct flexctl *c, int opt)
{
	switch (opt) {
	case CTL_OPT_JSON:
		c->json = true;
		return 1;
	case CTL_OPT_BYTES:
		c->bytes = true;
		return 1;
	case CTL_OPT_HELP:
		ctl_print_cmd_help(c->out, c->cmd);
		exit(FLEXCTL_EXIT_OK);
	}
	return 0;
}

int ctl_parse_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "bytes", no_argument, NULL, CTL_OPT_BYTES },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	struct flexctl c = {
		.prog = argv[0], .out = stdout, .err = stderr,
		.sysfs_root = getenv("FLEXCTL_SYSFS") ? getenv("FLEXCTL_SYSFS") : "/sys",
	};
	const struct flexctl_cmd *cmd;
	int opt, ret;

	tool_set_name("flexctl");
	/* '+': stop at the command; its options are its own. */
	while ((opt = getopt_long(argc, argv, "+jhV", opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			c.json = true;
			break;
		case CTL_OPT_BYTES:
			c.bytes = true;
			break;
		case 'h':
			print_main_help(stdout);
			return FLEXCTL_EXIT_OK;
		case 'V':
			printf("flexctl %s\n", FLEXCTL_VERSION);
			return FLEXCTL_EXIT_OK;
		default:
			fprintf(stderr, "try: flexctl --help\n");
			return FLEXCTL_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		print_main_help(stderr);
		return FLEXCTL_EXIT_USAGE;
	}
	if (!strcmp(argv[optind], "help")) {
		if (optind + 1 < argc && (cmd = ctl_find_cmd(argv[optind + 1]))) {
			ctl_print_cmd_help(stdout, cmd);
		} else {
			print_main_help(stdout);
		}
		return FLEXCTL_EXIT_OK;
	}
	cmd = ctl_find_cmd(argv[optind]);
	if (!cmd) {
		fprintf(stderr, "flexctl: unknown command '%s'\ntry: flexctl --help\n", argv[optind]);
		return FLEXCTL_EXIT_USAGE;
	}
	c.cmd = cmd;
	argc -= optind;
	argv += optind;
	optind = 0;	/* a full re-initialisation of getopt for the command */
	ret = cmd->run(&c, argc, argv);
	if (fflush(stdout) && !ret)
		ret = ctl_error(&c, "writing the output failed");
	return ret;
}
