/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * flex_netlink.h: the "flex" generic netlink family.
 *
 * A read-only view of every flex device for monitoring tools (flexctl, genl,
 * anything built on libnl-genl-3): devices and their functions, regions,
 * queues and lookup-table entries, plus a multicast group of events. Nothing
 * changes through this family; the device nodes' ioctls (linux/flex.h) do
 * that. Any user may get devices (FLEX_CMD_DEVICE_GET). Regions, queues,
 * lookup-table entries and open files carry per-tenant detail (pids,
 * command names, addresses, fault user data, usage): getting them and
 * joining the events group need CAP_NET_ADMIN (-EPERM otherwise). A process sees its own usage in
 * the fdinfo of its open flex file.
 *
 * The family lives in the initial network namespace only: flex devices are
 * global, not per namespace.
 *
 * Messages. A request carries selectors in top-level FLEX_A_* attributes; a
 * reply or an event carries FLEX_A_DEVICE_INDEX and one object nest
 * (FLEX_A_DEVICE, FLEX_A_REGION, FLEX_A_QUEUE, FLEX_A_ENTRY or FLEX_A_FILE). Every
 * command's attributes are validated strictly: an attribute the command does
 * not take, an unknown one, or one of the wrong type or size is refused with
 * -EINVAL (and an extended ACK naming it). New attributes are only ever added
 * at the end of their set, so a reader must ignore attributes it does not
 * know. u64 attributes are 64-bit aligned with a *_PAD attribute.
 *
 * Function numbers (FLEX_A_FN, FLEX_*_A_FN): the PF is 0 and VF n is n + 1,
 * as PCI numbers the functions of a device.
 *
 * Documentation/flex/netlink.rst describes each command with an example;
 * Documentation/netlink/specs/flex.yaml is the machine-readable spec.
 */
#ifndef _UAPI_LINUX_FLEX_NETLINK_H
#define _UAPI_LINUX_FLEX_NETLINK_H

#define FLEX_GENL_NAME		"flex"
#define FLEX_GENL_VERSION	1
#define FLEX_GENL_MCGRP_EVENTS	"events"

/* Function numbers (FLEX_A_FN and the *_A_FN attributes). */
#define FLEX_NL_FN_PF		0
#define FLEX_NL_FN_VF(n)	((n) + 1)

/**
 * enum flex_cmd - commands of the flex family.
 * @FLEX_CMD_UNSPEC: never used.
 * @FLEX_CMD_DEVICE_GET: get one device (request: FLEX_A_DEVICE_INDEX) or,
 *	with NLM_F_DUMP, every device. Reply: FLEX_A_DEVICE_INDEX and
 *	FLEX_A_DEVICE. Errors: -ENODEV no such device.
 * @FLEX_CMD_REGION_GET: get one region (request: FLEX_A_DEVICE_INDEX and
 *	FLEX_A_REGION_HANDLE) or, with NLM_F_DUMP, every region, optionally
 *	only those of FLEX_A_DEVICE_INDEX and/or of function FLEX_A_FN.
 *	Reply: FLEX_A_DEVICE_INDEX and FLEX_A_REGION. Needs CAP_NET_ADMIN.
 *	Errors: -EPERM without it; -ENODEV no such device; -ENOENT no such
 *	region.
 * @FLEX_CMD_QUEUE_GET: get one queue (request: FLEX_A_DEVICE_INDEX and
 *	FLEX_A_QUEUE_HANDLE) or, with NLM_F_DUMP, every queue, filtered as
 *	regions are. Reply: FLEX_A_DEVICE_INDEX and FLEX_A_QUEUE. Needs
 *	CAP_NET_ADMIN. Errors: -EPERM without it; -ENODEV no such device;
 *	-ENOENT no such queue.
 * @FLEX_CMD_TABLE_GET: get one lookup-table entry (request:
 *	FLEX_A_DEVICE_INDEX, FLEX_A_FN and FLEX_A_TABLE_INDEX) or, with
 *	NLM_F_DUMP, every live entry of every table, filtered as regions are,
 *	in table order. Reply: FLEX_A_DEVICE_INDEX and FLEX_A_ENTRY. Needs
 *	CAP_NET_ADMIN. Errors: -EPERM without it; -ENODEV no such device or
 *	function; -ENOENT no entry at that index.
 * @FLEX_CMD_REGION_ACQUIRED_NTF: event: a region was acquired.
 *	FLEX_A_DEVICE_INDEX and FLEX_A_REGION.
 * @FLEX_CMD_REGION_RELEASED_NTF: event: a region was released, by
 *	FLEX_IOCTL_REGION_RELEASE or because its file was closed.
 *	FLEX_A_DEVICE_INDEX and FLEX_A_REGION (as it was just before).
 * @FLEX_CMD_QUEUE_FAULT_NTF: event: a CB faulted and its queue holds the
 *	sticky fault. FLEX_A_DEVICE_INDEX and FLEX_A_QUEUE (with
 *	FLEX_QUEUE_A_FAULT). Sent by the engine just after the faulting CB's
 *	fence has signalled, so a FLEX_IOCTL_WAIT for the CB may return
 *	before the event arrives: a listener waits for it rather than
 *	expecting it queued.
 * @FLEX_CMD_VFS_ENABLED_NTF: event: VFs were enabled (sriov_numvfs).
 *	FLEX_A_DEVICE_INDEX and FLEX_A_NUM_VFS (how many).
 * @FLEX_CMD_VFS_DISABLED_NTF: event: the VFs were disabled.
 *	FLEX_A_DEVICE_INDEX and FLEX_A_NUM_VFS (how many were enabled).
 * @FLEX_CMD_BACKING_CAP_NTF: event: device memory could not be backed
 *	because the device's host memory backing cap was reached (the access,
 *	a page fault of a mapping or an engine's, failed). Sent once when the
 *	cap is reached and again only after backing was freed below the cap,
 *	from a work item: it may arrive after the failed access returned.
 *	FLEX_A_DEVICE_INDEX and FLEX_A_DEVICE with FLEX_DEV_A_INDEX,
 *	FLEX_DEV_A_RESIDENT and FLEX_DEV_A_BACKING_CAP only.
 * @FLEX_CMD_FILE_GET: get one open file of a device node (request:
 *	FLEX_A_DEVICE_INDEX and FLEX_A_CLIENT_ID) or, with NLM_F_DUMP, every
 *	open file, filtered as regions are, in client id order. Reply:
 *	FLEX_A_DEVICE_INDEX and FLEX_A_FILE: its usage, what its owner reads
 *	in the file's fdinfo. Needs CAP_NET_ADMIN. Errors: -EPERM without
 *	it; -ENODEV no such device; -ENOENT no open file with that client
 *	id on that device.
 * @__FLEX_CMD_MAX: the number of commands.
 * @FLEX_CMD_MAX: the highest command.
 */
enum flex_cmd {
	FLEX_CMD_UNSPEC,
	FLEX_CMD_DEVICE_GET,
	FLEX_CMD_REGION_GET,
	FLEX_CMD_QUEUE_GET,
	FLEX_CMD_TABLE_GET,
	FLEX_CMD_REGION_ACQUIRED_NTF,
	FLEX_CMD_REGION_RELEASED_NTF,
	FLEX_CMD_QUEUE_FAULT_NTF,
	FLEX_CMD_VFS_ENABLED_NTF,
	FLEX_CMD_VFS_DISABLED_NTF,
	FLEX_CMD_BACKING_CAP_NTF,
	FLEX_CMD_FILE_GET,

	__FLEX_CMD_MAX,
	FLEX_CMD_MAX = __FLEX_CMD_MAX - 1
};

/**
 * enum flex_a - top-level attributes: selectors and filters of requests,
 *	and the object nest of replies and events.
 * @FLEX_A_UNSPEC: never used.
 * @FLEX_A_DEVICE_INDEX: u32, N of /dev/flexN. Requests: the device to get,
 *	or the device a dump is limited to. Every reply and event carries it.
 * @FLEX_A_FN: u32, a function number (FLEX_NL_FN_PF, FLEX_NL_FN_VF(n)).
 *	REGION_GET, QUEUE_GET, TABLE_GET dumps: only that function's objects;
 *	TABLE_GET: the table the entry is in.
 * @FLEX_A_REGION_HANDLE: u32, REGION_GET: the region, by its device-wide
 *	handle (FLEX_REGION_A_HANDLE, flex_region_acquire.handle).
 * @FLEX_A_QUEUE_HANDLE: u32, QUEUE_GET: the queue, by its device-wide
 *	handle (FLEX_QUEUE_A_HANDLE).
 * @FLEX_A_TABLE_INDEX: u32, TABLE_GET: the entry's index in the table
 *	(FLEX_ENTRY_A_INDEX).
 * @FLEX_A_DEVICE: nest, enum flex_dev_a: a device (DEVICE_GET,
 *	BACKING_CAP_NTF).
 * @FLEX_A_REGION: nest, enum flex_region_a: a region (REGION_GET,
 *	REGION_ACQUIRED_NTF, REGION_RELEASED_NTF).
 * @FLEX_A_QUEUE: nest, enum flex_queue_a: a queue (QUEUE_GET,
 *	QUEUE_FAULT_NTF).
 * @FLEX_A_ENTRY: nest, enum flex_entry_a: a lookup-table entry (TABLE_GET).
 * @FLEX_A_NUM_VFS: u32, VFS_ENABLED_NTF: VFs enabled; VFS_DISABLED_NTF: VFs
 *	that were enabled until now.
 * @FLEX_A_CLIENT_ID: u64, FILE_GET: the open file, by its client id
 *	(FLEX_FILE_A_CLIENT_ID, flex-client-id in its fdinfo).
 * @FLEX_A_FILE: nest, enum flex_file_a: an open file (FILE_GET).
 * @__FLEX_A_MAX: the number of attributes.
 * @FLEX_A_MAX: the highest attribute.
 */
enum flex_a {
	FLEX_A_UNSPEC,
	FLEX_A_DEVICE_INDEX,
	FLEX_A_FN,
	FLEX_A_REGION_HANDLE,
	FLEX_A_QUEUE_HANDLE,
	FLEX_A_TABLE_INDEX,
	FLEX_A_DEVICE,
	FLEX_A_REGION,
	FLEX_A_QUEUE,
	FLEX_A_ENTRY,
	FLEX_A_NUM_VFS,
	FLEX_A_CLIENT_ID,
	FLEX_A_FILE,

	__FLEX_A_MAX,
	FLEX_A_MAX = __FLEX_A_MAX - 1
};

/**
 * enum flex_dev_a - a device (in FLEX_A_DEVICE). Sizes are in bytes.
 * @FLEX_DEV_A_UNSPEC: never used.
 * @FLEX_DEV_A_PAD: alignment padding of u64 attributes.
 * @FLEX_DEV_A_INDEX: u32, N of /dev/flexN.
 * @FLEX_DEV_A_NAME: string, the device's name ("flexN").
 * @FLEX_DEV_A_CAPACITY: u64, device memory.
 * @FLEX_DEV_A_USED: u64, device memory held by regions.
 * @FLEX_DEV_A_FREE: u64, device memory held by no region.
 * @FLEX_DEV_A_LARGEST_FREE: u64, the largest region that could be acquired
 *	now (largest contiguous free range).
 * @FLEX_DEV_A_RESIDENT: u64, device memory backed by host memory now.
 * @FLEX_DEV_A_BACKING_CAP: u64, the most host memory that may back device
 *	memory (module parameter backing_cap).
 * @FLEX_DEV_A_REGION_ALIGN: u64, region sizes are multiples of this.
 * @FLEX_DEV_A_TOTAL_VFS: u32, VFs the device supports (sriov_totalvfs).
 * @FLEX_DEV_A_NUM_VFS: u32, VFs enabled now (sriov_numvfs).
 * @FLEX_DEV_A_PF_TABLE_SIZE: u32, the most regions the PF holds at once.
 * @FLEX_DEV_A_VF_TABLE_SIZE: u32, lookup-table entries of each VF.
 * @FLEX_DEV_A_FN: nest, enum flex_fn_a, one per function (the PF first,
 *	then each enabled VF); repeated (a multi-attribute).
 * @FLEX_DEV_A_MEM_BASE: u64, the physical address of the first byte of
 *	device memory: regions (FLEX_REGION_A_PHYS) lie in [MEM_BASE,
 *	MEM_BASE + CAPACITY).
 * @__FLEX_DEV_A_MAX: the number of attributes.
 * @FLEX_DEV_A_MAX: the highest attribute.
 */
enum flex_dev_a {
	FLEX_DEV_A_UNSPEC,
	FLEX_DEV_A_PAD,
	FLEX_DEV_A_INDEX,
	FLEX_DEV_A_NAME,
	FLEX_DEV_A_CAPACITY,
	FLEX_DEV_A_USED,
	FLEX_DEV_A_FREE,
	FLEX_DEV_A_LARGEST_FREE,
	FLEX_DEV_A_RESIDENT,
	FLEX_DEV_A_BACKING_CAP,
	FLEX_DEV_A_REGION_ALIGN,
	FLEX_DEV_A_TOTAL_VFS,
	FLEX_DEV_A_NUM_VFS,
	FLEX_DEV_A_PF_TABLE_SIZE,
	FLEX_DEV_A_VF_TABLE_SIZE,
	FLEX_DEV_A_FN,
	FLEX_DEV_A_MEM_BASE,

	__FLEX_DEV_A_MAX,
	FLEX_DEV_A_MAX = __FLEX_DEV_A_MAX - 1
};

/**
 * enum flex_fn_a - a function of a device (in FLEX_DEV_A_FN).
 * @FLEX_FN_A_UNSPEC: never used.
 * @FLEX_FN_A_FN: u32, its function number (FLEX_NL_FN_PF, FLEX_NL_FN_VF(n)).
 * @FLEX_FN_A_NAME: string, its device name ("flexN" or "flexNvfM").
 * @FLEX_FN_A_TABLE_SIZE: u32, entries of its lookup table: the most regions
 *	it holds at once.
 * @FLEX_FN_A_TABLE_USED: u32, entries in use (regions it holds).
 * @FLEX_FN_A_OPEN_COUNT: u32, open files of its device node.
 * @FLEX_FN_A_PAD: alignment padding of u64 attributes.
 * @FLEX_FN_A_USED: u64, bytes of device memory its regions hold (sysfs
 *	memory_used).
 * @FLEX_FN_A_RESIDENT: u64, bytes of host memory backing them (sysfs
 *	backing_used).
 * @FLEX_FN_A_QUOTA_CAPACITY: u64, the most device memory its regions may
 *	hold (sysfs quota_capacity).
 * @FLEX_FN_A_QUOTA_BACKING: u64, the most host memory that may back them
 *	(sysfs quota_backing).
 * @FLEX_FN_A_QUEUES: u32, queues of its open files.
 * @FLEX_FN_A_PENDING: u32, CBs queued or running on those queues.
 * @FLEX_FN_A_ENGINE_DMA_NS: u64, time the DMA engine spent running its
 *	CBs since the function was created, in ns. Busy time over an
 *	interval is the difference of two readings.
 * @FLEX_FN_A_ENGINE_COMPUTE_NS: u64, the same for the compute engine.
 * @FLEX_FN_A_ENGINE_DMA_CBS: u64, CBs of it the DMA engine ran (done or
 *	faulted; not those cancelled before they started).
 * @FLEX_FN_A_ENGINE_COMPUTE_CBS: u64, the same for the compute engine.
 * @__FLEX_FN_A_MAX: the number of attributes.
 * @FLEX_FN_A_MAX: the highest attribute.
 */
enum flex_fn_a {
	FLEX_FN_A_UNSPEC,
	FLEX_FN_A_FN,
	FLEX_FN_A_NAME,
	FLEX_FN_A_TABLE_SIZE,
	FLEX_FN_A_TABLE_USED,
	FLEX_FN_A_OPEN_COUNT,
	FLEX_FN_A_PAD,
	FLEX_FN_A_USED,
	FLEX_FN_A_RESIDENT,
	FLEX_FN_A_QUOTA_CAPACITY,
	FLEX_FN_A_QUOTA_BACKING,
	FLEX_FN_A_QUEUES,
	FLEX_FN_A_PENDING,
	FLEX_FN_A_ENGINE_DMA_NS,
	FLEX_FN_A_ENGINE_COMPUTE_NS,
	FLEX_FN_A_ENGINE_DMA_CBS,
	FLEX_FN_A_ENGINE_COMPUTE_CBS,

	__FLEX_FN_A_MAX,
	FLEX_FN_A_MAX = __FLEX_FN_A_MAX - 1
};

/**
 * enum flex_region_a - a region (in FLEX_A_REGION).
 * @FLEX_REGION_A_UNSPEC: never used.
 * @FLEX_REGION_A_PAD: alignment padding of u64 attributes.
 * @FLEX_REGION_A_HANDLE: u32, device-wide region number (the name of its
 *	directory in /sys/class/flex/flexN/regions/).
 * @FLEX_REGION_A_FN: u32, the function it was acquired on.
 * @FLEX_REGION_A_REGION_ID: u64, its region_id: on a VF its lookup-table
 *	index, on the PF its physical address.
 * @FLEX_REGION_A_PHYS: u64, its physical address in device memory.
 * @FLEX_REGION_A_SIZE: u64, bytes.
 * @FLEX_REGION_A_RESIDENT: u64, bytes of it backed by host memory.
 * @FLEX_REGION_A_LUT_INDEX: u32, its lookup-table index, or
 *	FLEX_NO_LUT_INDEX on the PF.
 * @FLEX_REGION_A_MMAP_OFFSET: u64, the mmap() offset of its first byte (in
 *	its owner's file).
 * @FLEX_REGION_A_OWNER_PID: u32, the process (thread group id, in the
 *	initial pid namespace) that acquired it.
 * @FLEX_REGION_A_OWNER_COMM: string, that process's command name.
 * @__FLEX_REGION_A_MAX: the number of attributes.
 * @FLEX_REGION_A_MAX: the highest attribute.
 */
enum flex_region_a {
	FLEX_REGION_A_UNSPEC,
	FLEX_REGION_A_PAD,
	FLEX_REGION_A_HANDLE,
	FLEX_REGION_A_FN,
	FLEX_REGION_A_REGION_ID,
	FLEX_REGION_A_PHYS,
	FLEX_REGION_A_SIZE,
	FLEX_REGION_A_RESIDENT,
	FLEX_REGION_A_LUT_INDEX,
	FLEX_REGION_A_MMAP_OFFSET,
	FLEX_REGION_A_OWNER_PID,
	FLEX_REGION_A_OWNER_COMM,

	__FLEX_REGION_A_MAX,
	FLEX_REGION_A_MAX = __FLEX_REGION_A_MAX - 1
};

/**
 * enum flex_queue_a - a queue (in FLEX_A_QUEUE). Counters are sequence
 * numbers, as in struct flex_queue_status.
 * @FLEX_QUEUE_A_UNSPEC: never used.
 * @FLEX_QUEUE_A_PAD: alignment padding of u64 attributes.
 * @FLEX_QUEUE_A_HANDLE: u32, device-wide queue number.
 * @FLEX_QUEUE_A_ID: u32, its queue_id in the open file that created it.
 * @FLEX_QUEUE_A_FN: u32, the function it was created on.
 * @FLEX_QUEUE_A_OWNER_PID: u32, the process (thread group id, in the
 *	initial pid namespace) that created it.
 * @FLEX_QUEUE_A_OWNER_COMM: string, that process's command name.
 * @FLEX_QUEUE_A_PRIORITY: u32, FLEX_QUEUE_PRIO_*.
 * @FLEX_QUEUE_A_DEPTH: u32, CBs it holds at most (queued and running).
 * @FLEX_QUEUE_A_PENDING: u32, CBs queued or running now.
 * @FLEX_QUEUE_A_SUBMITTED: u64, the last seqno submitted.
 * @FLEX_QUEUE_A_COMPLETED: u64, the last seqno completed (or cancelled).
 * @FLEX_QUEUE_A_FAULTS: u64, CBs that faulted since its creation.
 * @FLEX_QUEUE_A_FAULTED: u8, 1 while it holds a sticky fault, else 0.
 * @FLEX_QUEUE_A_FAULT: nest, enum flex_fault_a: the sticky fault; present
 *	only while FLEX_QUEUE_A_FAULTED is 1.
 * @__FLEX_QUEUE_A_MAX: the number of attributes.
 * @FLEX_QUEUE_A_MAX: the highest attribute.
 */
enum flex_queue_a {
	FLEX_QUEUE_A_UNSPEC,
	FLEX_QUEUE_A_PAD,
	FLEX_QUEUE_A_HANDLE,
	FLEX_QUEUE_A_ID,
	FLEX_QUEUE_A_FN,
	FLEX_QUEUE_A_OWNER_PID,
	FLEX_QUEUE_A_OWNER_COMM,
	FLEX_QUEUE_A_PRIORITY,
	FLEX_QUEUE_A_DEPTH,
	FLEX_QUEUE_A_PENDING,
	FLEX_QUEUE_A_SUBMITTED,
	FLEX_QUEUE_A_COMPLETED,
	FLEX_QUEUE_A_FAULTS,
	FLEX_QUEUE_A_FAULTED,
	FLEX_QUEUE_A_FAULT,

	__FLEX_QUEUE_A_MAX,
	FLEX_QUEUE_A_MAX = __FLEX_QUEUE_A_MAX - 1
};

/**
 * enum flex_fault_a - a queue's sticky fault (in FLEX_QUEUE_A_FAULT), as
 * FLEX_IOCTL_QUEUE_STATUS reports it.
 * @FLEX_FAULT_A_UNSPEC: never used.
 * @FLEX_FAULT_A_PAD: alignment padding of u64 attributes.
 * @FLEX_FAULT_A_CODE: u32, FLEX_FAULT_* (linux/flex.h).
 * @FLEX_FAULT_A_ERRNO: s32, the negative errno its waiters get.
 * @FLEX_FAULT_A_SEQNO: u64, the CB that faulted.
 * @FLEX_FAULT_A_USER_DATA: u64, that CB's user_data.
 * @FLEX_FAULT_A_OPCODE: u32, that CB's opcode (FLEX_CB_*).
 * @FLEX_FAULT_A_INSN: u32, the instruction index (compute CBs).
 * @FLEX_FAULT_A_REGION_ID: u64, region_id of the device address that
 *	faulted.
 * @FLEX_FAULT_A_OFFSET: u64, offset of that address in its region.
 * @FLEX_FAULT_A_ADDR_VALID: u8, 1 when region_id and offset name a device
 *	address (region_id 0 is a valid VF entry), 0 when the fault is at no
 *	address (offset may then hold the raw operand).
 * @__FLEX_FAULT_A_MAX: the number of attributes.
 * @FLEX_FAULT_A_MAX: the highest attribute.
 */
enum flex_fault_a {
	FLEX_FAULT_A_UNSPEC,
	FLEX_FAULT_A_PAD,
	FLEX_FAULT_A_CODE,
	FLEX_FAULT_A_ERRNO,
	FLEX_FAULT_A_SEQNO,
	FLEX_FAULT_A_USER_DATA,
	FLEX_FAULT_A_OPCODE,
	FLEX_FAULT_A_INSN,
	FLEX_FAULT_A_REGION_ID,
	FLEX_FAULT_A_OFFSET,
	FLEX_FAULT_A_ADDR_VALID,

	__FLEX_FAULT_A_MAX,
	FLEX_FAULT_A_MAX = __FLEX_FAULT_A_MAX - 1
};

/**
 * enum flex_entry_a - a live lookup-table entry (in FLEX_A_ENTRY): the
 * region it maps.
 * @FLEX_ENTRY_A_UNSPEC: never used.
 * @FLEX_ENTRY_A_PAD: alignment padding of u64 attributes.
 * @FLEX_ENTRY_A_FN: u32, the function whose table it is in.
 * @FLEX_ENTRY_A_INDEX: u32, its index: on a VF the lookup-table index (the
 *	region_id); on the PF the region's offset in device memory in units
 *	of FLEX_DEV_A_REGION_ALIGN.
 * @FLEX_ENTRY_A_REGION_ID: u64, the region_id of the region it maps.
 * @FLEX_ENTRY_A_PHYS: u64, that region's physical address.
 * @FLEX_ENTRY_A_SIZE: u64, that region's size in bytes.
 * @FLEX_ENTRY_A_HANDLE: u32, that region's handle (FLEX_REGION_A_HANDLE).
 * @FLEX_ENTRY_A_OWNER_PID: u32, as FLEX_REGION_A_OWNER_PID.
 * @FLEX_ENTRY_A_OWNER_COMM: string, as FLEX_REGION_A_OWNER_COMM.
 * @__FLEX_ENTRY_A_MAX: the number of attributes.
 * @FLEX_ENTRY_A_MAX: the highest attribute.
 */
enum flex_entry_a {
	FLEX_ENTRY_A_UNSPEC,
	FLEX_ENTRY_A_PAD,
	FLEX_ENTRY_A_FN,
	FLEX_ENTRY_A_INDEX,
	FLEX_ENTRY_A_REGION_ID,
	FLEX_ENTRY_A_PHYS,
	FLEX_ENTRY_A_SIZE,
	FLEX_ENTRY_A_HANDLE,
	FLEX_ENTRY_A_OWNER_PID,
	FLEX_ENTRY_A_OWNER_COMM,

	__FLEX_ENTRY_A_MAX,
	FLEX_ENTRY_A_MAX = __FLEX_ENTRY_A_MAX - 1
};

/**
 * enum flex_file_a - an open file of a device node (in FLEX_A_FILE): what
 * its fdinfo shows its owner (Documentation/flex/uapi.rst), for an admin.
 * Queue counters cover the queues the file has now.
 * @FLEX_FILE_A_UNSPEC: never used.
 * @FLEX_FILE_A_PAD: alignment padding of u64 attributes.
 * @FLEX_FILE_A_CLIENT_ID: u64, unique among all files opened since the
 *	module was loaded (flex-client-id): a file shared by fork() or
 *	dup() is one client.
 * @FLEX_FILE_A_FN: u32, the function whose device node it is.
 * @FLEX_FILE_A_OWNER_PID: u32, the process (thread group id, in the
 *	initial pid namespace) that opened it.
 * @FLEX_FILE_A_OWNER_COMM: string, that process's command name then.
 * @FLEX_FILE_A_REGIONS: u32, regions it holds.
 * @FLEX_FILE_A_BYTES: u64, their size in bytes.
 * @FLEX_FILE_A_RESIDENT: u64, bytes of them backed by host memory.
 * @FLEX_FILE_A_QUEUES: u32, its queues.
 * @FLEX_FILE_A_PENDING: u32, CBs queued or running on them.
 * @FLEX_FILE_A_SUBMITTED: u64, CBs submitted to them (the sum of their
 *	last seqnos).
 * @FLEX_FILE_A_COMPLETED: u64, CBs of them completed or cancelled.
 * @FLEX_FILE_A_FAULTS: u64, CBs of them that faulted.
 * @FLEX_FILE_A_PINNED: u64, bytes of host memory pinned for its queued DMA.
 * @FLEX_FILE_A_ENGINE_DMA_NS: u64, time the DMA engine spent running its
 *	CBs since it was opened, in ns (flex-engine-dma).
 * @FLEX_FILE_A_ENGINE_COMPUTE_NS: u64, the same for the compute engine
 *	(flex-engine-compute).
 * @FLEX_FILE_A_ENGINE_DMA_CBS: u64, CBs of it the DMA engine ran.
 * @FLEX_FILE_A_ENGINE_COMPUTE_CBS: u64, CBs of it the compute engine ran.
 * @__FLEX_FILE_A_MAX: the number of attributes.
 * @FLEX_FILE_A_MAX: the highest attribute.
 */
enum flex_file_a {
	FLEX_FILE_A_UNSPEC,
	FLEX_FILE_A_PAD,
	FLEX_FILE_A_CLIENT_ID,
	FLEX_FILE_A_FN,
	FLEX_FILE_A_OWNER_PID,
	FLEX_FILE_A_OWNER_COMM,
	FLEX_FILE_A_REGIONS,
	FLEX_FILE_A_BYTES,
	FLEX_FILE_A_RESIDENT,
	FLEX_FILE_A_QUEUES,
	FLEX_FILE_A_PENDING,
	FLEX_FILE_A_SUBMITTED,
	FLEX_FILE_A_COMPLETED,
	FLEX_FILE_A_FAULTS,
	FLEX_FILE_A_PINNED,
	FLEX_FILE_A_ENGINE_DMA_NS,
	FLEX_FILE_A_ENGINE_COMPUTE_NS,
	FLEX_FILE_A_ENGINE_DMA_CBS,
	FLEX_FILE_A_ENGINE_COMPUTE_CBS,

	__FLEX_FILE_A_MAX,
	FLEX_FILE_A_MAX = __FLEX_FILE_A_MAX - 1
};

#endif /* _UAPI_LINUX_FLEX_NETLINK_H */
