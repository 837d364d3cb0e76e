/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * flex: the userspace API of the flex accelerator memory and execution device.
 *
 * Every device node (/dev/flexN for a physical function, /dev/flexNvfM for a
 * virtual function) accepts the ioctls below. The rules, which the driver
 * enforces on every call:
 *
 *  - Structures are fixed-size, built of __u32/__u64 with explicit padding.
 *    Padding and every flag bit not defined here must be zero (-EINVAL).
 *  - The structure size is encoded in the ioctl number. The driver accepts a
 *    smaller structure from older userspace (missing fields read as zero) and
 *    a larger one from newer userspace as long as the bytes it does not know
 *    are zero (-E2BIG otherwise), like copy_struct_from_user() does.
 *  - "out" fields are ignored on input and written on success.
 *  - User pointers are passed as __u64.
 *  - An ioctl number the driver does not know gets -ENOTTY.
 *
 * Each structure below has a kernel-doc comment: its fields, what the call
 * does and its errors. Documentation/flex/uapi.rst includes them and adds
 * the rest (mmap, poll, fdinfo, quotas, accounting).
 */
#ifndef _UAPI_LINUX_FLEX_H
#define _UAPI_LINUX_FLEX_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define FLEX_UAPI_MAJOR		1	/* incompatible changes */
#define FLEX_UAPI_MINOR		3	/* compatible additions */

#define FLEX_IOCTL_BASE		0xF7

/* Function modes, as reported by FLEX_IOCTL_QUERY. */
#define FLEX_MODE_PF		0	/* region_id is a physical address */
#define FLEX_MODE_VF		1	/* region_id is a lookup-table index */

/* Capability bits reported by FLEX_IOCTL_QUERY. */
#define FLEX_CAP_SPARSE_MEMORY	(1ULL << 0)	/* backing allocated on touch */
#define FLEX_CAP_MMAP		(1ULL << 1)	/* regions can be mmap()ed */
#define FLEX_CAP_SRIOV		(1ULL << 2)	/* the device has VFs to enable */
#define FLEX_CAP_QUEUES		(1ULL << 3)	/* queues, DMA and compute CBs */

/* lut_index of a region that no lookup table maps (PF regions). */
#define FLEX_NO_LUT_INDEX	0xffffffffU

/**
 * struct flex_query - FLEX_IOCTL_QUERY: what this device node is
 * @flags: in, must be 0.
 * @uapi_major: out, FLEX_UAPI_MAJOR of the driver.
 * @uapi_minor: out, FLEX_UAPI_MINOR of the driver.
 * @mode: out, FLEX_MODE_PF or FLEX_MODE_VF.
 * @device_index: out, N of /dev/flexN.
 * @vf_index: out, M of /dev/flexNvfM (0 on a PF).
 * @table_entries: out, lookup-table entries of this function: the most
 *	regions it can hold at once (on a PF, the per-PF region cap).
 * @table_used: out, entries in use now (by every opener of this function).
 * @capabilities: out, FLEX_CAP_* bits.
 * @capacity: out, bytes of device memory on the device.
 * @free: out, bytes of device memory held by no region.
 * @largest_free: out, largest contiguous free range, in bytes; a region
 *	larger than this fails with -ENOMEM.
 * @region_align: out, region sizes must be multiples of this (a power of 2).
 * @total_vfs: out, VFs the device supports (sriov_totalvfs).
 * @num_vfs: out, VFs enabled now (sriov_numvfs).
 *
 * Errors: -EINVAL @flags not 0.
 */
struct flex_query {
	__u32 flags;
	__u32 uapi_major;
	__u32 uapi_minor;
	__u32 mode;
	__u32 device_index;
	__u32 vf_index;
	__u32 table_entries;
	__u32 table_used;
	__u64 capabilities;
	__u64 capacity;
	__u64 free;
	__u64 largest_free;
	__u64 region_align;
	__u32 total_vfs;
	__u32 num_vfs;
};

/**
 * struct flex_region_acquire - FLEX_IOCTL_REGION_ACQUIRE: take a contiguous
 *	region of device memory for the calling open file
 * @size: in, bytes; a non-zero multiple of flex_query.region_align.
 * @flags: in, must be 0.
 * @pad: must be 0.
 * @region_id: out, the region's id in VirtualAddresses: on a VF the index
 *	of the lookup-table entry that maps it, on a PF its physical
 *	address (never 0).
 * @mmap_offset: out, the mmap() offset of the region's first byte: its
 *	place in device memory plus 2^40, always below 2^44 (so a 32-bit
 *	process's mmap2() reaches it).
 * @handle: out, device-wide region number, the name of its directory in
 *	/sys/class/flex/flexN/regions/.
 * @lut_index: out, lookup-table index, or FLEX_NO_LUT_INDEX on a PF.
 * @pad2: must be 0.
 *
 * The region counts against the function's quota_capacity (sysfs).
 *
 * Errors: -EINVAL bad size, flags or padding; -E2BIG size larger than the
 * device's capacity; -ENOSPC lookup table (or PF region cap) full;
 * -EDQUOT the function's quota_capacity would be exceeded; -ENOMEM no
 * contiguous free range of that size.
 */
struct flex_region_acquire {
	__u64 size;
	__u32 flags;
	__u32 pad;
	__u64 region_id;
	__u64 mmap_offset;
	__u64 handle;
	__u32 lut_index;
	__u32 pad2;
};

/**
 * struct flex_region_release - FLEX_IOCTL_REGION_RELEASE: give a region back
 * @region_id: in, as returned by FLEX_IOCTL_REGION_ACQUIRE.
 * @flags: in, must be 0.
 * @pad: must be 0.
 *
 * Mappings of the region are torn down (a later access gets SIGBUS) and its
 * memory reads as zeros to whoever acquires it next. The release waits only
 * for a chunk an engine is copying or computing on; a DMA or compute CB
 * still using the region faults with FLEX_FAULT_UNMAPPED at its next chunk.
 *
 * Errors: -EINVAL flags or padding; -ENOENT no region of that id belongs to
 * this open file.
 */
struct flex_region_release {
	__u64 region_id;
	__u32 flags;
	__u32 pad;
};

/**
 * struct flex_region_info - FLEX_IOCTL_REGION_INFO: describe one of the
 *	calling file's regions
 * @region_id: in.
 * @flags: in, must be 0.
 * @pad: must be 0.
 * @size: out, as at acquisition.
 * @mmap_offset: out, as at acquisition.
 * @handle: out, as at acquisition.
 * @lut_index: out, as at acquisition.
 * @pad2: must be 0.
 * @resident: out, bytes of the region backed by host memory now.
 *
 * Errors: as FLEX_IOCTL_REGION_RELEASE.
 */
struct flex_region_info {
	__u64 region_id;
	__u32 flags;
	__u32 pad;
	__u64 size;
	__u64 mmap_offset;
	__u64 handle;
	__u32 lut_index;
	__u32 pad2;
	__u64 resident;
};

/*
 * Queues and control blocks.
 *
 * A queue is one FIFO of control blocks (CBs) on the device. CBs of one
 * queue run in submission order, one at a time; queues are independent, and
 * the device's DMA engine and compute engine each run a CB of a different
 * queue at the same time (NOPs, WAITs and DMAs of at most 64 KiB run on
 * either engine, larger DMAs on the DMA engine, computes on the compute
 * engine). Every CB gets the next sequence number of its
 * queue (the first is 1); completion is "every CB up to seqno has run".
 * A CB that runs longer than the module parameter cb_timeout_ms faults
 * with FLEX_FAULT_TIMEOUT.
 *
 * Errors are sticky, as in CUDA: when a CB faults, its queue records the
 * fault (FLEX_IOCTL_QUEUE_STATUS), every later CB on it is cancelled without
 * running, submission is refused with -EIO, and waits for the faulted CB or
 * any later one return the fault's errno, until FLEX_IOCTL_QUEUE_RESET.
 * The CBs a fault failed stay failed after the reset. Other queues are
 * unaffected.
 */

/*
 * Queue priorities. An engine picks from the highest priority that has a
 * ready CB; within a priority, the function (PF or VF) that has had the
 * least engine time goes first, and its queues take turns.
 * FLEX_QUEUE_PRIO_HIGH needs CAP_SYS_NICE.
 */
#define FLEX_QUEUE_PRIO_LOW	0
#define FLEX_QUEUE_PRIO_NORMAL	1
#define FLEX_QUEUE_PRIO_HIGH	2

#define FLEX_QUEUE_MAX_DEPTH	1024	/* CBs queued and running, at most */
#define FLEX_QUEUE_DEFAULT_DEPTH 256
#define FLEX_MAX_QUEUES		64	/* per open file */
#define FLEX_SUBMIT_MAX_CBS	256	/* per FLEX_IOCTL_SUBMIT */
#define FLEX_DMA_MAX_SIZE	(256ULL << 20)	/* per DMA CB */

/**
 * struct flex_va - the RFC's VirtualAddress: a region and an offset in it
 * @region_id: the region: on a VF its lookup-table index, on a PF its
 *	physical address (flex_region_acquire.region_id).
 * @offset: bytes from the region's first byte.
 */
struct flex_va {
	__u64 region_id;
	__u64 offset;
};

/* CB opcodes. */
#define FLEX_CB_NOP		0	/* completes at once (fences, tests) */
#define FLEX_CB_DMA_TO_DEVICE	1	/* host memory -> device memory */
#define FLEX_CB_DMA_FROM_DEVICE	2	/* device memory -> host memory */
#define FLEX_CB_COMPUTE		3	/* run a program (flex_isa.h) */
#define FLEX_CB_WAIT		4	/* wait for a CB of another queue */

/**
 * struct flex_cb_dma - a DMA CB: copy between user memory and device memory
 * @host_ptr: user pointer to @size bytes of the calling process's memory,
 *	not inside a mapping of a flex device.
 * @dev: the device address of the first byte.
 * @size: bytes, 1 .. FLEX_DMA_MAX_SIZE; the range must stay in its region.
 *
 * The user pages are pinned at submission, long-term (FOLL_LONGTERM) and
 * counted in the process's pinned_vm against RLIMIT_MEMLOCK, and unpinned
 * when the CB completes or is cancelled; the copy happens in the DMA
 * engine. For FLEX_CB_DMA_TO_DEVICE the device pages are backed at
 * submission where possible. A range that leaves its region is refused at
 * submission (-ERANGE); a @host_ptr inside a flex mapping (device memory)
 * cannot be pinned (-EFAULT).
 */
struct flex_cb_dma {
	__u64 host_ptr;
	struct flex_va dev;
	__u64 size;
};

/**
 * struct flex_cb_wait - a WAIT CB: wait for a CB of another queue
 * @queue_id: the other queue, of the same open file.
 * @pad: must be 0.
 * @seqno: the CB of that queue to wait for, already submitted.
 *
 * The CB completes once CB @seqno of queue @queue_id has completed. If that
 * CB failed (it faulted, or a fault or teardown cancelled it), the WAIT CB
 * faults with FLEX_FAULT_DEPENDENCY.
 */
struct flex_cb_wait {
	__u32 queue_id;
	__u32 pad;
	__u64 seqno;
};

#define FLEX_NUM_SEGMENTS	8
#define FLEX_SEGMENT_CORRECTION	7	/* holds the correction tensor at 0 */

/**
 * struct flex_cb_compute - a compute CB: run a program (flex_isa.h)
 * @program: the device address of the program (header and instructions).
 * @segment_mask: bit i set when segment i exists; an operand naming a
 *	missing segment faults with FLEX_FAULT_UNMAPPED.
 * @pad: must be 0.
 * @segments: the segment table: segment i starts at device address
 *	segments[i] and ends where its region ends. An entry whose bit is
 *	clear in @segment_mask must be all zero. Segment 7 holds the
 *	correction tensor at offset 0.
 */
struct flex_cb_compute {
	struct flex_va program;
	__u32 segment_mask;
	__u32 pad;
	struct flex_va segments[FLEX_NUM_SEGMENTS];
};

/**
 * struct flex_cb - one control block
 * @opcode: FLEX_CB_*.
 * @flags: must be 0.
 * @user_data: opaque to the driver; reported with a fault, so a runtime can
 *	name the job and step that failed.
 * @dma: FLEX_CB_DMA_TO_DEVICE and FLEX_CB_DMA_FROM_DEVICE.
 * @wait: FLEX_CB_WAIT.
 * @compute: FLEX_CB_COMPUTE.
 * @raw: the whole union; the bytes the opcode's structure does not use
 *	must be 0 (all of them for FLEX_CB_NOP).
 */
struct flex_cb {
	__u32 opcode;
	__u32 flags;
	__u64 user_data;
	union {
		struct flex_cb_dma dma;
		struct flex_cb_wait wait;
		struct flex_cb_compute compute;
		__u64 raw[19];
	};
};

/* Fault codes (flex_queue_status.fault_code) and the errno each gives. */
#define FLEX_FAULT_NONE		0
#define FLEX_FAULT_UNMAPPED	1	/* -ENXIO: region gone or not in table */
#define FLEX_FAULT_OUT_OF_BOUNDS 2	/* -ERANGE: access leaves its region/segment */
#define FLEX_FAULT_BAD_PROGRAM	3	/* -ENOEXEC: malformed program */
#define FLEX_FAULT_BACKING	4	/* -ENOSPC: backing cap or quota reached */
#define FLEX_FAULT_HOST		5	/* -ENOMEM: host memory for the engine */
#define FLEX_FAULT_DEPENDENCY	6	/* -EPIPE: a waited-for CB failed */
#define FLEX_FAULT_LIMIT	7	/* -E2BIG: operation beyond device limits */
#define FLEX_FAULT_TIMEOUT	8	/* -ETIMEDOUT: ran past the CB time limit */

/**
 * struct flex_queue_create - FLEX_IOCTL_QUEUE_CREATE: create a queue
 * @priority: in, FLEX_QUEUE_PRIO_*; FLEX_QUEUE_PRIO_HIGH needs
 *	CAP_SYS_NICE.
 * @depth: in, CBs the queue holds (queued and running); 0 for
 *	FLEX_QUEUE_DEFAULT_DEPTH, at most FLEX_QUEUE_MAX_DEPTH.
 * @flags: in, must be 0.
 * @queue_id: out, the queue's id in this open file.
 *
 * Errors: -EINVAL priority, depth or flags; -EACCES FLEX_QUEUE_PRIO_HIGH
 * without CAP_SYS_NICE; -ENOSPC FLEX_MAX_QUEUES reached.
 */
struct flex_queue_create {
	__u32 priority;
	__u32 depth;
	__u32 flags;
	__u32 queue_id;
};

/**
 * struct flex_queue_op - FLEX_IOCTL_QUEUE_DESTROY and FLEX_IOCTL_QUEUE_RESET
 * @queue_id: in.
 * @flags: in, must be 0.
 *
 * Destroy stops the running CB at its next check (its fence signals
 * -ECANCELED), then cancels the queued CBs (unpinning their memory), in
 * seqno order, and frees the queue. Closing the file, also when the process
 * dies, does the same for every queue of the file. Reset clears a sticky
 * fault; the queue must be idle (-EBUSY otherwise).
 *
 * Errors: -EINVAL flags; -ENOENT no such queue; -EBUSY (reset) CBs are
 * still queued or running.
 */
struct flex_queue_op {
	__u32 queue_id;
	__u32 flags;
};

/**
 * struct flex_submit - FLEX_IOCTL_SUBMIT: queue @count CBs in one call
 * @cbs_ptr: in, user pointer to @count struct flex_cb.
 * @count: in, 1 .. FLEX_SUBMIT_MAX_CBS, and at most the queue's depth.
 * @queue_id: in.
 * @flags: in, FLEX_SUBMIT_BLOCK or 0.
 * @pad: must be 0.
 * @seqno: out, sequence number of the last CB.
 *
 * All or nothing: every CB is validated (and its memory pinned) before any
 * is queued.
 *
 * Errors: -EINVAL a CB's opcode, flags or padding, a zero or too large DMA,
 * a wait on its own queue or on a CB not submitted yet, @count; -ENOENT a
 * region_id or queue_id that does not exist, or a queue being destroyed;
 * -ERANGE a DMA leaving its region; -EFAULT bad pointers, or a DMA host
 * buffer that cannot be pinned (one inside a flex mapping); -ENOMEM more
 * than 512 MiB pinned by this open file, or the process's pinned_vm past
 * RLIMIT_MEMLOCK without CAP_IPC_LOCK; -EAGAIN the queue has no room for
 * @count more CBs (without FLEX_SUBMIT_BLOCK); -EIO the queue is faulted;
 * -EINTR interrupted while blocking.
 */
struct flex_submit {
	__u64 cbs_ptr;
	__u32 count;
	__u32 queue_id;
	__u32 flags;
	__u32 pad;
	__u64 seqno;
};
#define FLEX_SUBMIT_BLOCK	(1U << 0)	/* wait for room instead of -EAGAIN */

/**
 * struct flex_wait - FLEX_IOCTL_WAIT: wait for CB @seqno of a queue
 * @queue_id: in.
 * @flags: in, must be 0.
 * @seqno: in, the CB to wait for (every CB up to it).
 * @timeout_ns: in, absolute CLOCK_MONOTONIC deadline; 0 polls. A deadline
 *	already past, any negative one included, times out at once.
 *
 * Returns 0 when every CB up to @seqno completed without fault. A CB a
 * fault failed (the one that faulted, or one cancelled behind it) stays
 * failed after FLEX_IOCTL_QUEUE_RESET: a queue remembers the CB ranges of
 * its last 8 faults, and a wait at or below an older, forgotten range gets
 * that range's errno.
 *
 * Errors: -ETIMEDOUT the deadline passed; -EINTR interrupted (restartable:
 * the deadline is absolute); the fault's errno (see FLEX_FAULT_*) when CB
 * @seqno failed; -ECANCELED the queue is being destroyed; -EINVAL flags or
 * a @seqno of 0 or not submitted yet; -ENOENT no such queue.
 */
struct flex_wait {
	__u32 queue_id;
	__u32 flags;
	__u64 seqno;
	__s64 timeout_ns;
};

/**
 * struct flex_queue_status - FLEX_IOCTL_QUEUE_STATUS: a queue's progress
 *	and its sticky fault
 * @queue_id: in.
 * @flags: in, FLEX_STATUS_ACK or 0.
 * @submitted: out, last seqno submitted.
 * @completed: out, last seqno completed (or cancelled).
 * @priority: out, FLEX_QUEUE_PRIO_*.
 * @depth: out, CBs the queue holds at most.
 * @fault_code: out, FLEX_FAULT_* of the sticky fault (FLEX_FAULT_NONE
 *	when there is none).
 * @fault_errno: out, its negative errno (0 when there is no fault).
 * @fault_seqno: out, the CB that faulted.
 * @fault_user_data: out, that CB's user_data.
 * @fault_opcode: out, that CB's opcode.
 * @fault_insn: out, instruction index (compute).
 * @fault_addr: out, the device address that faulted, when @fault_flags
 *	has FLEX_FAULT_ADDR_VALID. Otherwise its region_id is 0 and its
 *	offset 0, or the raw operand that was no address.
 * @fault_flags: out, FLEX_FAULT_ADDR_VALID when @fault_addr names a
 *	region.
 * @pad: must be 0.
 *
 * Reading the status changes nothing. With FLEX_STATUS_ACK it also
 * acknowledges, for poll(), the completions it reports.
 *
 * Errors: -EINVAL flags or padding; -ENOENT no such queue.
 */
struct flex_queue_status {
	__u32 queue_id;
	__u32 flags;
	__u64 submitted;
	__u64 completed;
	__u32 priority;
	__u32 depth;
	__u32 fault_code;
	__s32 fault_errno;
	__u64 fault_seqno;
	__u64 fault_user_data;
	__u32 fault_opcode;
	__u32 fault_insn;
	struct flex_va fault_addr;
	__u32 fault_flags;
	__u32 pad;
};
#define FLEX_STATUS_ACK		(1U << 0)	/* acknowledge completions for poll() */
/*
 * fault_addr names a region. Needed because region_id 0 is a valid VF
 * entry: without the flag fault_addr is no device address.
 */
#define FLEX_FAULT_ADDR_VALID	(1U << 0)

/**
 * struct flex_fence_export - FLEX_IOCTL_FENCE_EXPORT: a sync_file fd that
 *	signals when CB @seqno of the queue completes
 * @queue_id: in.
 * @flags: in, must be 0.
 * @seqno: in, the CB.
 * @fd: out, the sync_file (O_CLOEXEC): poll() it, or hand it to anything
 *	that takes sync_files.
 * @pad: must be 0.
 *
 * The fd is installed only once the result has reached the caller: a
 * call that fails, -EFAULT writing the result included, leaves no fd.
 * A fence exported after its CB completed is signalled already and
 * carries that CB's result (an error status in the sync_file when the CB
 * failed).
 *
 * Errors: as FLEX_IOCTL_WAIT for the arguments; -EINVAL the caller's
 * structure is too short to receive @fd; -EMFILE, -ENFILE no fd left;
 * -ENOMEM.
 */
struct flex_fence_export {
	__u32 queue_id;
	__u32 flags;
	__u64 seqno;
	__s32 fd;
	__u32 pad;
};

#define FLEX_IOCTL_QUERY	  _IOWR(FLEX_IOCTL_BASE, 0x00, struct flex_query)
#define FLEX_IOCTL_REGION_ACQUIRE _IOWR(FLEX_IOCTL_BASE, 0x01, struct flex_region_acquire)
#define FLEX_IOCTL_REGION_RELEASE _IOW(FLEX_IOCTL_BASE, 0x02, struct flex_region_release)
#define FLEX_IOCTL_REGION_INFO	  _IOWR(FLEX_IOCTL_BASE, 0x03, struct flex_region_info)
#define FLEX_IOCTL_QUEUE_CREATE	  _IOWR(FLEX_IOCTL_BASE, 0x10, struct flex_queue_create)
#define FLEX_IOCTL_QUEUE_DESTROY  _IOW(FLEX_IOCTL_BASE, 0x11, struct flex_queue_op)
#define FLEX_IOCTL_QUEUE_RESET	  _IOW(FLEX_IOCTL_BASE, 0x12, struct flex_queue_op)
#define FLEX_IOCTL_QUEUE_STATUS	  _IOWR(FLEX_IOCTL_BASE, 0x13, struct flex_queue_status)
#define FLEX_IOCTL_SUBMIT	  _IOWR(FLEX_IOCTL_BASE, 0x14, struct flex_submit)
#define FLEX_IOCTL_WAIT		  _IOW(FLEX_IOCTL_BASE, 0x15, struct flex_wait)
#define FLEX_IOCTL_FENCE_EXPORT	  _IOWR(FLEX_IOCTL_BASE, 0x16, struct flex_fence_export)

#endif /* _UAPI_LINUX_FLEX_H */
