// SPDX-License-Identifier: GPL-2.0
/*
 * flex-demo: the main job, run inside the VM by `make demo`.
 *
 * For the PF and for a VF: query the function, acquire regions of the RFC's
 * fallback sizes (12, 8, 4 GiB) from a 128 GiB sparse device, write a
 * pattern through one mapping and read it back through another, then show
 * the driver's sysfs view and give everything back.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <flex/device.h>

#define SYSFS	"/sys/class/flex/flex0"
#define GiB	(1ULL << 30)
#define MiB	(1ULL << 20)
#define PATTERN_BYTES (16 * MiB)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void read_attr(const char *dir, const char *name, char *buf, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f || !fgets(buf, (int)len, f))
		snprintf(buf, len, "?");
	if (f)
		fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

static int write_attr(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");
	int err = 0;

	if (!f)
		return -errno;
	if (fputs(val, f) < 0)
		err = -errno;
	if (fclose(f))
		err = -errno;
	return err;
}

static void show_sysfs(void)
{
	static const char *const attrs[] = { "size", "function", "region_id",
					     "lut_index", "phys_addr", "resident",
					     "owner_comm" };
	char v[64], dir[300];
	struct dirent *de;
	DIR *d;
	size_t i;

	printf("  sysfs %s:", SYSFS);
	for (i = 0; i < 4; i++) {
		static const char *const dev_attrs[] = { "capacity", "used",
							 "resident", "sriov_numvfs" };

		read_attr(SYSFS, dev_attrs[i], v, sizeof(v));
		printf(" %s=%s", dev_attrs[i], v);
	}
	printf("\n");
	d = opendir(SYSFS "/regions");
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(dir, sizeof(dir), SYSFS "/regions/%s", de->d_name);
		printf("    regions/%-4s", de->d_name);
		for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
			read_attr(dir, attrs[i], v, sizeof(v));
			printf(" %s=%s", attrs[i], v);
		}
		printf("\n");
	}
	closedir(d);
}

/* Writes a pattern through one mapping and checks it through a second one. */
static int roundtrip(struct flex_device *dev, uint64_t region_id)
{
	void *w = NULL, *r = NULL;
	uint64_t wlen, rlen, i, n = PATTERN_BYTES / 8, bad = 0;
	double t0, t1, t2;
	int err;

	err = flex_device_region_mmap(dev, region_id, PROT_READ | PROT_WRITE, &w, &wlen);
	if (err)
		return err;
	err = flex_device_region_mmap(dev, region_id, PROT_READ, &r, &rlen);
	if (err) {
		munmap(w, wlen);
		return err;
	}
	t0 = now_s();
	for (i = 0; i < n; i++)
		((uint64_t *)w)[i] = region_id ^ (i * 0x9e3779b97f4a7c15ULL);
	t1 = now_s();
	for (i = 0; i < n; i++)
		bad += ((volatile uint64_t *)r)[i] != (region_id ^ (i * 0x9e3779b97f4a7c15ULL));
	t2 = now_s();
	printf("  mmap roundtrip on region 0x%" PRIx64 ": %llu MiB written at %.0f MiB/s "
	       "(first touch backs the pages), read back through a second mapping at %.0f MiB/s: %s\n",
	       region_id, PATTERN_BYTES / MiB, PATTERN_BYTES / MiB / (t1 - t0),
	       PATTERN_BYTES / MiB / (t2 - t1), bad ? "MISMATCH" : "all bytes match");
	munmap(w, wlen);
	munmap(r, rlen);
	return bad ? -EIO : 0;
}

static int run_function(const char *path)
{
	static const uint64_t sizes[] = { 12 * GiB, 8 * GiB, 4 * GiB };
	struct flex_region_acquire a[3];
	struct flex_device *dev;
	struct flex_query q;
	double t0;
	int err, i, n = 0;

	err = flex_device_open(path, &dev);
	if (err) {
		fprintf(stderr, "flex-demo: open %s: %s\n", path, strerror(-err));
		return err;
	}
	err = flex_device_query(dev, &q);
	if (err)
		goto out;
	printf("\n== %s: %s mode, uapi %u.%u, %llu GiB device memory, %llu GiB free, "
	       "%u table entries\n", path, q.mode == FLEX_MODE_VF ? "VF" : "PF",
	       q.uapi_major, q.uapi_minor, (unsigned long long)(q.capacity / GiB),
	       (unsigned long long)(q.free / GiB), q.table_entries);

	t0 = now_s();
	for (i = 0; i < 3; i++) {
		err = flex_device_region_acquire(dev, sizes[i], &a[i]);
		if (err) {
			fprintf(stderr, "flex-demo: acquire %llu GiB on %s: %s\n",
				(unsigned long long)(sizes[i] / GiB), path, strerror(-err));
			goto release;
		}
		n++;
		printf("  acquired %2llu GiB: region_id 0x%" PRIx64 " (%s), handle %llu\n",
		       (unsigned long long)(sizes[i] / GiB), (uint64_t)a[i].region_id,
		       q.mode == FLEX_MODE_VF ? "lookup-table index" : "physical address",
		       (unsigned long long)a[i].handle);
	}
	printf("  3 regions acquired in %.1f us\n", (now_s() - t0) * 1e6);

	for (i = 0; i < 3 && !err; i++)
		err = roundtrip(dev, a[i].region_id);
	show_sysfs();
release:
	while (n--) {
		int e = flex_device_region_release(dev, a[n].region_id);

		if (e && !err)
			err = e;
	}
	if (!err) {
		flex_device_query(dev, &q);
		printf("  released: %u table entries used, %llu GiB free\n", q.table_used,
		       (unsigned long long)(q.free / GiB));
	}
out:
	flex_device_close(dev);
	return err;
}

int main(void)
{
	int err, err2;

	printf("flex demo: regions on a sparse 128 GiB device, in PF and VF mode\n");
	err = run_function("/dev/flex0");
	if (!err) {
		err = write_attr(SYSFS "/sriov_numvfs", "1");
		if (err)
			fprintf(stderr, "flex-demo: enable a VF: %s\n", strerror(-err));
	}
	if (!err)
		err = run_function("/dev/flex0vf0");
	err2 = write_attr(SYSFS "/sriov_numvfs", "0");
	if (!err)
		err = err2;
	printf("\nflex demo: %s\n", err ? "FAILED" : "done");
	return err ? 1 : 0;
}
