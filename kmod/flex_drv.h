/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flex: a virtual accelerator memory device.
 *
 * Object model (lifetimes in brackets):
 *
 *   flex_device [module]        one card: device memory, the PF, its VFs
 *     flex_mem                  capacity placed by gen_pool, backed sparsely
 *     flex_fn [struct device]   a PF or VF: a device node and a lookup table
 *       flex_file [open file]   the owner of regions; all are freed at close
 *         flex_region [kobject] a contiguous range of device memory, mapped
 *                               by the function's table; the kobject is its
 *                               sysfs directory and its reference count
 *
 * Locking, outermost first:
 *
 *   flex_device.sriov_lock     VF enable/disable
 *   flex_device.lock           tables, regions, file region lists, open
 *                              counts, the list of open files; held
 *                              around allocations, never
 *                              while waiting for an engine or touching
 *                              user memory; no sysfs node is removed under it
 *   flex_region.back_lock      page faults and submissions backing pages
 *                              against the region's death
 *   flex_region.lock (read)    engines accessing the region's memory
 *   flex_device.sched_lock     the scheduler and every queue's state
 *   a fence's lock
 *
 * The engines run on the fence-signalling path (flex_sched.c): from picking
 * a CB to signalling its fence they take only flex_region.lock for reading,
 * sched_lock and fence locks, which are never held around an allocation
 * that may reclaim, and they allocate only with FLEX_GFP_ENGINE.
 */
#ifndef _FLEX_DRV_H
#define _FLEX_DRV_H

#include <linux/bits.h>
#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/dma-fence.h>
#include <linux/kobject.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/maple_tree.h>
#include <linux/memcontrol.h>
#include <linux/llist.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include <linux/flex.h>
#include <linux/flex_isa.h>

#define FLEX_DRV_NAME		"flex"

/* Regions are placed at this granularity (the gen_pool order). */
#define FLEX_REGION_ALIGN_SHIFT	21
#define FLEX_REGION_ALIGN	BIT_ULL(FLEX_REGION_ALIGN_SHIFT)

/*
 * Device physical addresses start above 0, so a PF region_id (a physical
 * address) is never 0 and gen_pool's "0 means failure" is unambiguous.
 */
#define FLEX_DEVMEM_BASE	BIT_ULL(32)

/*
 * A region's mmap offset is its place in device memory plus this bias: live
 * regions never overlap, offset 0 names nothing, and every offset stays
 * below 2^44, within reach of a 32-bit process's mmap2() (page offsets).
 */
#define FLEX_MAX_CAPACITY	BIT_ULL(40)
#define FLEX_MMAP_BIAS		FLEX_MAX_CAPACITY
#define FLEX_MIN_CAPACITY	(64ULL << 20)
#define FLEX_MAX_HANDLE		((1U << 22) - 1)

#define FLEX_MAX_DEVICES	8
#define FLEX_MAX_VFS		16
#define FLEX_MAX_LUT_ENTRIES	64
#define FLEX_MAX_PF_REGIONS	1024
#define FLEX_MINORS_PER_DEVICE	(1 + FLEX_MAX_VFS)
#define FLEX_CB_TIMEOUT_MIN_MS	10
#define FLEX_CB_TIMEOUT_MAX_MS	3600000
#define FLEX_ENGINE_POLL_MAX_US	10000

/* Module parameters, fixed at load (flex_main.c). */
struct flex_params {
	unsigned int num_devices;
	u64 capacity;
	u64 backing_cap;
	unsigned int lut_entries;
	unsigned int total_vfs;
	unsigned int pf_max_regions;
	unsigned int cb_timeout_ms;	/* writable: a running CB's time limit */
	unsigned int engine_poll_us;	/* writable: an idle engine's poll */
	bool test_hooks;		/* debugfs test controls, for the VM lane */
};

extern struct flex_params flex_params;

/* Device memory: placement by gen_pool, host backing allocated on touch. */
struct flex_mem {
	struct gen_pool *pool;
	u64 base;
	u64 capacity;
	struct xarray pages;		/* device pfn -> struct page * */
	atomic64_t resident_pages;
	u64 backing_cap_pages;
	atomic64_t used;		/* bytes held by regions */
	/* Bit 0: the backing cap was hit and announced; cleared on a free. */
	unsigned long backing_cap_hit;
	struct work_struct backing_cap_work;	/* sends that announcement */
};

/*
 * Engines back device pages on the fence-signalling path: no reclaim, no
 * warning (a failure faults the CB with FLEX_FAULT_HOST), and charged to
 * the memory cgroup of the file that submitted the CB (set_active_memcg()).
 */
#define FLEX_GFP_ENGINE		(GFP_NOWAIT | __GFP_NOWARN | __GFP_ACCOUNT)

/* page->private of a page backing device memory ("FLEXDEVP"). */
#define FLEX_PAGE_MAGIC		0x464c455844455650UL

struct flex_fn;
struct flex_device;
struct flex_scratch;

/*
 * The device's two engines. NOP and WAIT CBs, and DMAs of at most
 * FLEX_DMA_INLINE_MAX bytes, run on whichever is free.
 */
#define FLEX_DMA_INLINE_MAX	(64 * 1024)

enum flex_engine_id {
	FLEX_ENGINE_DMA,
	FLEX_ENGINE_COMPUTE,
	FLEX_NR_ENGINES,
};

struct flex_engine {
	struct work_struct work;
	struct flex_device *fdev;
	enum flex_engine_id id;
	bool polling;		/* watching kicks: a kick need not queue work */
};

#define FLEX_NR_PRIORITIES	(FLEX_QUEUE_PRIO_HIGH + 1)

struct flex_device {
	unsigned int index;
	struct flex_mem mem;
	/*
	 * Protects the lookup tables, the regions, by_offset and every
	 * file's region list, the functions' open counts, used and gone,
	 * and the VF array.
	 */
	struct mutex lock;
	/* Protects num_vfs changes: serialises sriov_numvfs writers. */
	struct mutex sriov_lock;
	struct flex_fn *pf;
	struct flex_fn *vfs[FLEX_MAX_VFS];
	unsigned int num_vfs;
	unsigned int total_vfs;
	struct xarray regions;		/* handle -> flex_region, all functions */
	/* mmap offset range -> flex_region, for mmap() */
	struct maple_tree by_offset;
	u32 next_handle;		/* cursor of xa_alloc_cyclic */
	struct kobject *regions_kobj;	/* /sys/class/flex/flexN/regions */
	struct inode *inode;		/* shared mapping of every open file */
	dev_t devt;			/* first minor of this device */
	struct dentry *debugfs;

	/*
	 * Protects the scheduler's lists (ready_fns, blocked, the functions'
	 * and queues' ready lists), every queue's jobs, counters, fault and
	 * history, the functions' vtime, vclock and engines_paused.
	 */
	spinlock_t sched_lock;
	/*
	 * The scheduler's view (see pick_job()): by engine and priority, the
	 * functions that have a queue whose head CB is ready for that engine
	 * (flex_fn.ready_link); the queues whose head CB is a WAIT for a
	 * fence that has not signalled (flex_queue.blocked_link); and whether
	 * such a fence signalled since blocked was last looked at. An idle
	 * queue is on no list, so picking a CB costs O(functions), however
	 * many queues the files hold.
	 */
	struct list_head ready_fns[FLEX_NR_ENGINES][FLEX_NR_PRIORITIES];
	struct list_head blocked;
	atomic_t deps_signalled;
	atomic_t kicks;			/* every kick bumps it, for polling engines */
	struct flex_engine engines[FLEX_NR_ENGINES];
	struct workqueue_struct *wq;
	struct flex_scratch *scratch;	/* the compute engine's scratchpad */
	bool engines_paused;		/* debugfs: hold CBs queued, for tests */
	u64 vclock;			/* fair-share clock, see pick_job() */
	atomic64_t pinned_pages;	/* host pages pinned by queued DMA */
	/* Every queue of every file by device-wide handle, for netlink. */
	struct xarray queues;
	u32 next_queue_handle;		/* cursor of xa_alloc_cyclic */
	/* Its open files (flex_file.link), by client id; lock. For netlink. */
	struct list_head files;
};

struct flex_fn {
	struct device dev;		/* its release frees the flex_fn */
	struct cdev cdev;
	struct flex_device *fdev;
	bool is_vf;
	unsigned int vf_index;
	char name[16];			/* "pf" or "vfN" */
	/*
	 * The lookup table. On a VF the key is the region_id (the table
	 * index); on the PF it is the region's offset in device memory in
	 * FLEX_REGION_ALIGN units, and the region_id is its physical address.
	 */
	struct xarray table;
	unsigned int table_size;
	unsigned int nr_regions;
	unsigned int open_count;
	bool gone;			/* VF being disabled: no new opens */
	/*
	 * Quotas set by the PF's administrator in sysfs: device memory its
	 * regions may hold (checked under fdev->lock against used) and host
	 * memory backing them (against resident_pages).
	 */
	u64 quota_capacity;
	u64 quota_backing;
	u64 used;			/* bytes held by its regions; fdev->lock */
	atomic64_t resident_pages;
	/* Engine time its CBs have had, in ns; sched_lock. See pick_job(). */
	u64 vtime;
	/*
	 * Usage statistics, by engine, kept by flex_file_account_engine();
	 * sched_lock. Unlike vtime (a fairness clock that pick_job() moves
	 * forward), the real time its CBs ran, in ns, and how many ran.
	 */
	u64 engine_ns[FLEX_NR_ENGINES];
	u64 engine_cbs[FLEX_NR_ENGINES];
	/* Its queues ready for an engine (flex_queue.ready_link); sched_lock. */
	struct list_head ready[FLEX_NR_ENGINES][FLEX_NR_PRIORITIES];
	/* On flex_device.ready_fns while ready[][] is not empty. */
	struct list_head ready_link[FLEX_NR_ENGINES][FLEX_NR_PRIORITIES];
	struct dentry *debugfs;
};

struct flex_file {
	struct flex_fn *fn;
	struct mem_cgroup *memcg;	/* the opener's: charged for backing */
	struct list_head regions;	/* flex_region.file_link */
	struct xarray queues;		/* queue_id -> flex_queue */
	wait_queue_head_t poll_wq;	/* woken on every completion */
	atomic64_t pinned_pages;	/* host pages pinned by queued DMA */
	/*
	 * Who it is, for fdinfo and netlink: a number unique among every
	 * file ever opened (DRM's client id), and the process that opened
	 * it. Fixed at open.
	 */
	u64 client_id;
	pid_t owner_tgid;
	char owner_comm[TASK_COMM_LEN];
	struct list_head link;		/* flex_device.files; fdev->lock */
	/* Engine time its CBs had, in ns, and how many ran; sched_lock. */
	u64 engine_ns[FLEX_NR_ENGINES];
	u64 engine_cbs[FLEX_NR_ENGINES];
};

/* An open file's usage, as fdinfo and netlink report it. */
struct flex_file_usage {
	u32 regions;
	u32 queues;
	u32 pending;			/* CBs queued or running */
	u64 bytes;			/* its regions' size */
	u64 resident;			/* of that, bytes backed now */
	u64 submitted;
	u64 completed;
	u64 faults;
	u64 pinned;			/* bytes pinned for queued DMA */
	u64 engine_ns[FLEX_NR_ENGINES];
	u64 engine_cbs[FLEX_NR_ENGINES];
};

/*
 * One ioctl call, as the dispatcher (flex_file.c) sees it: the size the
 * caller's structure has, and a file a handler wants installed as @fd once
 * its result has reached the caller.
 */
struct flex_call {
	size_t usize;
	struct file *file;
	int fd;
};

/* A CB's fault, as FLEX_IOCTL_QUEUE_STATUS reports it. */
struct flex_fault {
	u32 code;			/* FLEX_FAULT_* */
	u32 insn;
	struct flex_va addr;
	bool addr_valid;		/* addr names a region */
};

/* flex_job_fault()'s region_id for a fault at no device address. */
#define FLEX_NO_REGION		U64_MAX

/*
 * CBs a fault failed: the one that faulted (@lo) and those cancelled
 * behind it, up to @hi. A queue remembers its last few, across resets, so
 * a wait on one of them fails however late it comes.
 */
struct flex_fault_range {
	u64 lo, hi;
	int err;
};

#define FLEX_FAULT_HISTORY	8

struct flex_job;

/*
 * A queue. Its job list, counters and fault are guarded by
 * flex_device.sched_lock; the kref is held by the file's table and by
 * ioctls using the queue.
 */
struct flex_queue {
	struct kref ref;
	struct flex_file *ff;
	struct flex_device *fdev;
	u32 id;
	u32 priority;
	u32 depth;
	u64 fence_context;
	/* On its function's ready lists, or on the device's blocked list. */
	struct list_head ready_link[FLEX_NR_ENGINES];
	struct list_head blocked_link;
	struct list_head pending;	/* flex_job.link, not started */
	struct flex_job *running;
	u32 nr_jobs;			/* pending + running */
	u64 submitted;
	u64 completed;
	u64 poll_mark;			/* completed, as last reported */
	bool dying;
	bool faulted;
	struct flex_fault fault;
	int fault_errno;
	u64 fault_seqno;
	u64 fault_user_data;
	u32 fault_opcode;
	struct flex_fault_range history[FLEX_FAULT_HISTORY];
	u32 nr_history;			/* ranges recorded, ever */
	/*
	 * The newest range that fell out of history: waits at or below its
	 * end are failed with its errno (conservative: history is gone).
	 */
	u64 lost_hi;
	int lost_err;
	wait_queue_head_t wq;		/* completions, room, idle */
	/* Statistics. */
	u64 stat_faults;
	/* For netlink: its handle in fdev->queues, and who created it. */
	u32 handle;
	pid_t owner_tgid;
	char owner_comm[TASK_COMM_LEN];
};

/*
 * A submitted CB. The job lives as long as its fence (flex_fence_release()
 * frees it with the last reference); everything else the job holds
 * (region references, pinned pages, its dependency) is released when it
 * completes or is cancelled.
 */
struct flex_job {
	struct dma_fence fence;
	spinlock_t lock;		/* Protects the fence (its lock) */
	struct flex_queue *q;		/* first field cleared by job_alloc() */
	struct list_head link;
	struct flex_cb cb;
	enum flex_engine_id engine;	/* FLEX_NR_ENGINES: either */
	struct flex_region *regions[1 + FLEX_NUM_SEGMENTS];
	struct page **pages;		/* DMA: pinned user pages */
	unsigned int npages;
	unsigned int page_off;		/* host_ptr's offset in pages[0] */
	struct dma_fence *dep;		/* WAIT: the CB waited for */
	struct dma_fence_cb dep_cb;
	bool dep_armed;
	bool dep_failed;
	struct file *holder;		/* exported: holds the module */
	struct llist_node pool_node;	/* in the pool of free jobs */
	struct flex_fault fault;	/* set by the engine */
	unsigned long deadline;		/* jiffies: FLEX_FAULT_TIMEOUT after */
	u64 started;			/* ns, when an engine picked it */
	struct mm_struct *mm;		/* DMA: whose pinned_vm the pages count in */
};

struct flex_region {
	struct kobject kobj;
	struct flex_device *fdev;
	struct flex_fn *fn;
	struct flex_file *owner;
	struct list_head file_link;
	u64 phys;
	u64 size;
	u64 region_id;
	u32 lut_index;
	u32 handle;
	pid_t owner_tgid;
	char owner_comm[TASK_COMM_LEN];
	/* Protects the memory from release while an engine accesses it. */
	struct rw_semaphore lock;
	/* Protects dead against page faults and submissions backing pages. */
	struct mutex back_lock;
	bool dead;
};

static inline struct flex_fn *to_flex_fn(struct device *dev)
{
	return container_of(dev, struct flex_fn, dev);
}

static inline u64 flex_region_mmap_offset(const struct flex_region *r)
{
	return FLEX_MMAP_BIAS + (r->phys - r->fdev->mem.base);
}

/* flex_mem.c */
int flex_mem_init(struct flex_mem *mem, u64 capacity, u64 backing_cap);
void flex_mem_fini(struct flex_mem *mem);
u64 flex_mem_place(struct flex_mem *mem, u64 size);
void flex_mem_unplace(struct flex_mem *mem, struct flex_fn *fn, u64 phys, u64 size);
u64 flex_mem_free_bytes(struct flex_mem *mem);
void flex_mem_free_info(struct flex_mem *mem, u64 *free, u64 *largest);
struct page *flex_mem_page(struct flex_mem *mem, struct flex_fn *fn, u64 phys,
			   gfp_t gfp);
int flex_mem_back(struct flex_mem *mem, struct flex_fn *fn, u64 phys, u64 len,
		  gfp_t gfp);
bool flex_mem_any_device_page(struct page **pages, unsigned long n);
u64 flex_mem_resident(struct flex_mem *mem, u64 phys, u64 size);

int flex_mem_read(struct flex_mem *mem, u64 phys, void *buf, size_t len);
int flex_mem_write(struct flex_mem *mem, struct flex_fn *fn, u64 phys,
		   const void *buf, size_t len);

/* flex_region.c */
int flex_region_acquire_ioctl(struct flex_file *ff, void *data, struct flex_call *call);
int flex_region_release_ioctl(struct flex_file *ff, void *data, struct flex_call *call);
int flex_region_info_ioctl(struct flex_file *ff, void *data, struct flex_call *call);
void flex_file_release_regions(struct flex_file *ff);
struct flex_region *flex_fn_lookup(struct flex_fn *fn, u64 region_id);
struct flex_region *flex_region_by_mmap_offset(struct flex_device *fdev, u64 offset);
struct flex_region *flex_file_region_get(struct flex_file *ff, u64 region_id);
void flex_region_put(struct flex_region *r);
int flex_region_read(struct flex_region *r, u64 offset, void *buf, size_t len);
int flex_region_write(struct flex_region *r, u64 offset, const void *buf, size_t len);
int flex_region_back(struct flex_region *r, u64 offset, u64 len, bool engine);

/* flex_queue.c */
struct flex_queue *flex_queue_get(struct flex_file *ff, u32 id);
void flex_queue_free(struct kref *ref);
void flex_file_init_queues(struct flex_file *ff);
void flex_file_release_queues(struct flex_file *ff);
int flex_queue_create_ioctl(struct flex_file *ff, void *data, struct flex_call *call);
int flex_queue_destroy_ioctl(struct flex_file *ff, void *data, struct flex_call *call);
int flex_queue_reset_ioctl(struct flex_file *ff, void *data, struct flex_call *call);
int flex_queue_status_ioctl(struct flex_file *ff, void *data, struct flex_call *call);
int flex_queue_wait_ioctl(struct flex_file *ff, void *data, struct flex_call *call);
int flex_fence_export_ioctl(struct flex_file *ff, void *data, struct flex_call *call);
__poll_t flex_queue_poll(struct flex_file *ff);

/* flex_submit.c */
int flex_submit_ioctl(struct flex_file *ff, void *data, struct flex_call *call);
void flex_job_release_resources(struct flex_job *job);
int flex_job_cache_init(void);
void flex_job_cache_fini(void);
extern const struct dma_fence_ops flex_fence_ops;

/* flex_sched.c */
int flex_sched_init(struct flex_device *fdev);
void flex_sched_fini(struct flex_device *fdev);
void flex_sched_kick(struct flex_device *fdev);
void flex_sched_kick_engine(struct flex_device *fdev, int id);
void flex_sched_pause(struct flex_device *fdev, bool pause);
struct file *flex_fence_holder_new(void);
void flex_sched_queue_update(struct flex_queue *q);
void flex_sched_queue_stop(struct flex_queue *q);
void flex_sched_cancel_pending(struct flex_queue *q);
int flex_job_check(struct flex_job *job);
void flex_queue_record_fault(struct flex_queue *q, u64 lo, u64 hi, int err);
int flex_queue_seqno_result(struct flex_queue *q, u64 seqno);
int flex_job_fault(struct flex_job *job, int err, u64 region_id, u64 offset);

/* flex_dma.c */
int flex_dma_run(struct flex_job *job);

/* flex_compute.c */
int flex_compute_run(struct flex_job *job);
struct flex_scratch *flex_scratch_alloc(void);
void flex_scratch_free(struct flex_scratch *s);

/* flex_device.c */
int flex_device_create(unsigned int index, dev_t devt, struct flex_device **out);
void flex_device_destroy(struct flex_device *fdev);
int flex_sriov_configure(struct flex_device *fdev, unsigned int num_vfs);
extern struct class *flex_class;

/* flex_file.c */
extern const struct file_operations flex_fops;
void flex_file_account_engine(struct flex_file *ff, enum flex_engine_id engine,
			      u64 ns);
void flex_file_get_usage(struct flex_file *ff, struct flex_file_usage *u);

/* flex_mmap.c */
int flex_mmap(struct file *filp, struct vm_area_struct *vma);
struct inode *flex_mapping_inode_new(void);
void flex_mapping_inode_put(struct inode *inode);

/* flex_sysfs.c */
extern const struct attribute_group *flex_pf_groups[];
extern const struct attribute_group *flex_vf_groups[];
extern const struct kobj_type flex_region_ktype;
int flex_sysfs_link_vf(struct flex_fn *vf);
void flex_sysfs_unlink_vf(struct flex_fn *vf);

/* flex_debugfs.c */
void flex_debugfs_init(void);
void flex_debugfs_fini(void);
void flex_debugfs_device_add(struct flex_device *fdev);
void flex_debugfs_device_remove(struct flex_device *fdev);
void flex_debugfs_fn_add(struct flex_fn *fn);
void flex_debugfs_fn_remove(struct flex_fn *fn);

/* flex_netlink.c */
int flex_nl_init(void);
void flex_nl_fini(void);
void flex_nl_device_add(struct flex_device *fdev);
void flex_nl_device_remove(struct flex_device *fdev);
void flex_nl_region_event(struct flex_region *r, bool acquired);
void flex_nl_queue_fault(struct flex_queue *q);
void flex_nl_vfs_event(struct flex_device *fdev, bool enabled,
		       unsigned int num_vfs);
void flex_nl_backing_cap(struct flex_mem *mem);

#endif /* _FLEX_DRV_H */
