// SPDX-License-Identifier: GPL-2.0
/*
 * flex ISA programs: the device's validation rules, a builder, program
 * files, and the standard correction-driven tile kernels. See
 * flex/program.h and Documentation/flex/isa.rst.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <flex/program.h>

#include "log.h"

_Static_assert(sizeof(struct flex_prog_header) == FLEX_PROG_HEADER_SIZE, "header size");
_Static_assert(sizeof(struct flex_insn) == FLEX_PROG_INSN_SIZE, "insn size");

/* Per opcode: operands used, dtypes (bit per FLEX_DT_*) and flags allowed. */
struct op_desc {
	const char *name;
	unsigned int n_args;
	unsigned int dtypes;
	unsigned int flags;
};

#define DT(x) (1U << FLEX_DT_##x)
/* The floating-point types, since the driver's UAPI minor 3. */
#define DT_FLOAT (DT(F32) | DT(BF16) | DT(F16))

static const struct op_desc ops[] = {
	[FLEX_OP_END] = { "END", 0, DT(I32), 0 },
	[FLEX_OP_COPY] = { "COPY", 3, DT(I32), 0 },
	[FLEX_OP_FILL] = { "FILL", 3, DT(I32) | DT(I8) | DT_FLOAT, 0 },
	[FLEX_OP_ADD] = { "ADD", 8, DT(I32) | DT_FLOAT, 0 },
	[FLEX_OP_MUL] = { "MUL", 8, DT(I32) | DT_FLOAT, 0 },
	[FLEX_OP_RELU] = { "RELU", 6, DT(I32) | DT_FLOAT, 0 },
	/* arg[9]: accumulate (the contract's ISA addition). */
	[FLEX_OP_MATMUL] = { "MATMUL", 10, DT(I32) | DT(I8) | DT_FLOAT, FLEX_INSN_ACCUMULATE },
};

#define N_OPS (sizeof(ops) / sizeof(ops[0]))

FLEX_EXPORT const char *flex_op_name(unsigned int op)
{
	return op < N_OPS ? ops[op].name : NULL;
}


/*
 * Rules 6..12 for one instruction (already in host byte order). @last:
 * whether it is the last one. @n_slots: the header's. Raises *@used to the
 * highest slot referenced plus one.
 */
static int check_insn(const struct flex_insn *in, uint32_t i, int last, uint32_t n_slots,
		      uint32_t *used)
{
	const struct op_desc *od;

	if (in->op >= N_OPS)
		return flex_error_set(-ENOEXEC, "insn %u: unknown opcode %u", i, in->op);
	od = &ops[in->op];
	if ((in->op == FLEX_OP_END) != !!last)
		return flex_error_set(-ENOEXEC,
				     last ? "insn %u (%s): the last instruction must be END" :
				   "insn %u (%s): END before the last instruction",
				     i, od->name);
	if (in->dtype >= 32 || !(od->dtypes & (1U << in->dtype)))
		return flex_error_set(-ENOEXEC, "insn %u (%s): dtype %u not allowed", i,
				     od->name, in->dtype);
	if (in->flags & ~od->flags)
		return flex_error_set(-ENOEXEC, "insn %u (%s): flags 0x%x not allowed", i,
				     od->name, in->flags);
	if (in->reserved)
		return flex_error_set(-ENOEXEC, "insn %u (%s): reserved is 0x%x, must be 0", i,
				     od->name, in->reserved);
	for (unsigned int a = 0; a < FLEX_INSN_ARGS; a++) {
		uint64_t v = in->arg[a];

		if (a >= od->n_args) {
			if (v)
				return flex_error_set(-ENOEXEC,
						     "insn %u (%s): arg[%u] is 0x%llx but unused operands must be 0",
						     i, od->name, a, (unsigned long long)v);
			continue;
		}
		if (!(v & FLEX_ARG_SLOT_BIT))
			continue;
		if (v & ~(FLEX_ARG_SLOT_BIT | 0xffffffffULL))
			return flex_error_set(-ENOEXEC,
					     "insn %u (%s): arg[%u] 0x%llx: a slot reference with bits 32..62 set",
					     i, od->name, a, (unsigned long long)v);
		if ((uint32_t)v >= n_slots)
			return flex_error_set(-ENOEXEC,
					     "insn %u (%s): arg[%u] reads slot %u, the program declares %u",
					     i, od->name, a, (uint32_t)v, n_slots);
		if ((uint32_t)v + 1 > *used)
			*used = (uint32_t)v + 1;
	}
	return 0;
}

static void insn_from_le(struct flex_insn *dst, const void *src)
{
	memcpy(dst, src, sizeof(*dst));
	dst->flags = le16toh(dst->flags);
	dst->reserved = le32toh(dst->reserved);
	for (unsigned int a = 0; a < FLEX_INSN_ARGS; a++)
		dst->arg[a] = le64toh(dst->arg[a]);
}

static void insn_to_le(void *dst, const struct flex_insn *src)
{
	struct flex_insn t = *src;

	t.flags = htole16(t.flags);
	t.reserved = htole32(t.reserved);
	for (unsigned int a = 0; a < FLEX_INSN_ARGS; a++)
		t.arg[a] = htole64(t.arg[a]);
	memcpy(dst, &t, sizeof(t));
}

FLEX_EXPORT int flex_program_validate(const void *buf, size_t len,
				      struct flex_program_info *info)
{
	struct flex_prog_header h;
	uint32_t used = 0;
	uint64_t size;
	int ret;

	if (!buf)
		return flex_error_set(-EINVAL, "no program");
	if (len < FLEX_PROG_HEADER_SIZE)
		return flex_error_set(-ENOEXEC, "%zu bytes, shorter than the %u-byte header",
				     len, FLEX_PROG_HEADER_SIZE);
	memcpy(&h, buf, sizeof(h));
	h.magic = le32toh(h.magic);
	h.version = le16toh(h.version);
	h.flags = le16toh(h.flags);
	h.n_insns = le32toh(h.n_insns);
	h.n_slots = le32toh(h.n_slots);
	if (h.magic != FLEX_PROG_MAGIC)
		return flex_error_set(-ENOEXEC, "header: magic 0x%08x, expected 0x%08x (FLXP)",
				     h.magic, FLEX_PROG_MAGIC);
	if (h.version != FLEX_PROG_VERSION)
		return flex_error_set(-ENOEXEC, "header: version %u, expected %u", h.version,
				     FLEX_PROG_VERSION);
	if (h.flags || h.reserved[0] || h.reserved[1])
		return flex_error_set(-ENOEXEC, "header: flags and reserved must be 0");
	if (h.n_insns < 1 || h.n_insns > FLEX_PROG_MAX_INSNS)
		return flex_error_set(-ENOEXEC, "header: n_insns %u not in 1..%u", h.n_insns,
				     FLEX_PROG_MAX_INSNS);
	if (h.n_slots > FLEX_PROG_MAX_SLOTS)
		return flex_error_set(-ENOEXEC, "header: n_slots %u above %u", h.n_slots,
				     FLEX_PROG_MAX_SLOTS);
	size = FLEX_PROG_HEADER_SIZE + (uint64_t)FLEX_PROG_INSN_SIZE * h.n_insns;
	if (len < size)
		return flex_error_set(-ENOEXEC,
				     "%zu bytes, but %u instructions need %llu (truncated)", len,
				     h.n_insns, (unsigned long long)size);
	if (len > size)
		return flex_error_set(-ENOEXEC,
				     "%zu bytes, but %u instructions need only %llu (trailing bytes)", len,
				     h.n_insns, (unsigned long long)size);
	for (uint32_t i = 0; i < h.n_insns; i++) {
		struct flex_insn in;

		insn_from_le(&in, (const char *)buf + FLEX_PROG_HEADER_SIZE +
					  (size_t)i * FLEX_PROG_INSN_SIZE);
		ret = check_insn(&in, i, i + 1 == h.n_insns, h.n_slots, &used);
		if (ret)
			return ret;
	}
	if (info) {
		info->n_insns = h.n_insns;
		info->n_slots = h.n_slots;
		info->slots_used = used;
		info->size = size;
	}
	return 0;
}

FLEX_EXPORT int flex_program_read_file(const char *path, void **buf, size_t *len)
{
	struct stat st;
	size_t got = 0;
	char *data;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		return flex_error_set(ret, "%s: %s", path, strerror(-ret));
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		close(fd);
		return flex_error_set(ret, "%s: %s", path, strerror(-ret));
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return flex_error_set(-EISDIR, "%s: is a directory", path);
	}
	if (st.st_size > (off_t)FLEX_PROG_MAX_BYTES) {
		close(fd);
		return flex_error_set(-EFBIG, "%s: %lld bytes, larger than any program (%u)",
				     path, (long long)st.st_size, FLEX_PROG_MAX_BYTES);
	}
	data = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!data) {
		close(fd);
		return flex_error_set(-ENOMEM, "%s: out of memory", path);
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, data + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			free(data);
			close(fd);
			return flex_error_set(ret, "%s: read: %s", path,
					     n < 0 ? strerror(-ret) : "file shrank while reading");
		}
		got += (size_t)n;
	}
	close(fd);
	ret = flex_program_validate(data, got, NULL);
	if (ret) {
		free(data);
		return flex_error_set(ret, "%s: not a valid flex program: %s", path,
				      flex_last_error());
	}
	*buf = data;
	*len = got;
	return 0;
}

FLEX_EXPORT int flex_program_write_file(const char *path, const void *buf, size_t len)
{
	size_t plen = strlen(path), done = 0;
	char *tmp;
	int fd, ret;

	ret = flex_program_validate(buf, len, NULL);
	if (ret)
		return ret;
	tmp = malloc(plen + 16);
	if (!tmp)
		return -ENOMEM;
	snprintf(tmp, plen + 16, "%s.tmpXXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		ret = -errno;
		free(tmp);
		return ret;
	}
	while (done < len) {
		ssize_t n = write(fd, (const char *)buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			goto out_unlink;
		}
		done += (size_t)n;
	}
	/* mkstemp makes it 0600; a program file is as readable as any output. */
	if (fchmod(fd, 0644) || fsync(fd)) {
		ret = -errno;
		goto out_unlink;
	}
	if (close(fd)) {
		fd = -1;
		ret = -errno;
		goto out_unlink;
	}
	fd = -1;
	if (rename(tmp, path)) {
		ret = -errno;
		goto out_unlink;
	}
	free(tmp);
	return 0;

out_unlink:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	free(tmp);
	return ret;
}

/* ---- builder ---- */

struct flex_program {
	struct flex_insn *insns;	/* host byte order, without END */
	uint32_t n, cap;
	uint32_t n_slots;		/* declared, or 0 */
	uint32_t slots_used;		/* highest referenced + 1 */
};

FLEX_EXPORT int flex_program_new(struct flex_program **out)
{
	struct flex_program *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	*out = p;
	return 0;
}

FLEX_EXPORT void flex_program_destroy(struct flex_program *p)
{
	if (!p)
		return;
	free(p->insns);
	free(p);
}

FLEX_EXPORT int flex_program_emit(struct flex_program *p, uint8_t op, uint8_t dtype,
				  uint16_t flags, const uint64_t *args, unsigned int n_args)
{
	struct flex_insn in;
	uint32_t used = p->slots_used;
	int ret;

	if (op == FLEX_OP_END || op >= N_OPS || n_args > ops[op].n_args || (n_args && !args))
		return -EINVAL;
	/* END is added by finish: leave room for it. */
	if (p->n + 1 >= FLEX_PROG_MAX_INSNS)
		return -E2BIG;
	memset(&in, 0, sizeof(in));
	in.op = op;
	in.dtype = dtype;
	in.flags = flags;
	for (unsigned int a = 0; a < n_args; a++)
		in.arg[a] = args[a];
	/* Validate as the device would, with every slot declared. */
	ret = check_insn(&in, p->n, 0, FLEX_PROG_MAX_SLOTS, &used);
	if (ret)
		return -EINVAL;
	if (p->n == p->cap) {
		uint32_t cap = p->cap ? p->cap * 2 : 4;
		struct flex_insn *n = realloc(p->insns, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->insns = n;
		p->cap = cap;
	}
	p->insns[p->n++] = in;
	p->slots_used = used;
	return 0;
}

FLEX_EXPORT int flex_program_set_slots(struct flex_program *p, uint32_t n_slots)
{
	if (n_slots > FLEX_PROG_MAX_SLOTS || n_slots < p->slots_used)
		return -EINVAL;
	p->n_slots = n_slots;
	return 0;
}

FLEX_EXPORT int flex_program_finish(struct flex_program *p, void **buf, size_t *len)
{
	struct flex_prog_header h;
	struct flex_insn end;
	size_t size;
	char *out;

	if (p->n + 1 > FLEX_PROG_MAX_INSNS)
		return -E2BIG;
	size = FLEX_PROG_HEADER_SIZE + (size_t)FLEX_PROG_INSN_SIZE * (p->n + 1);
	out = malloc(size);
	if (!out)
		return -ENOMEM;
	memset(&h, 0, sizeof(h));
	h.magic = htole32(FLEX_PROG_MAGIC);
	h.version = htole16(FLEX_PROG_VERSION);
	h.n_insns = htole32(p->n + 1);
	h.n_slots = htole32(p->n_slots > p->slots_used ? p->n_slots : p->slots_used);
	memcpy(out, &h, sizeof(h));
	for (uint32_t i = 0; i < p->n; i++)
		insn_to_le(out + FLEX_PROG_HEADER_SIZE + (size_t)i * FLEX_PROG_INSN_SIZE,
			   &p->insns[i]);
	memset(&end, 0, sizeof(end));
	memcpy(out + FLEX_PROG_HEADER_SIZE + (size_t)p->n * FLEX_PROG_INSN_SIZE, &end,
	       sizeof(end));
	*buf = out;
	*len = size;
	return 0;
}

/* ---- the standard kernels ---- */

static void set_arg(struct flex_kernel_arg *a, const char *name, enum flex_dtype dt,
		    uint64_t d0, uint64_t d1, int ax0, int ax1, int is_output)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->name, sizeof(a->name), "%s", name);
	a->dtype = dt;
	a->ndim = 2;
	a->shape[0] = d0;
	a->shape[1] = d1;
	memset(a->axis, -1, sizeof(a->axis));
	a->axis[0] = (int8_t)ax0;
	a->axis[1] = (int8_t)ax1;
	a->is_output = (uint32_t)is_output;
}

static void add_slot(struct flex_kernel *k, enum flex_corr_kind kind, uint32_t arg,
		     uint32_t dim)
{
	struct flex_corr_slot *s = &k->corr[k->n_corr++];

	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->arg = arg;
	s->dim = dim;
}

/* Slots 0..5 of a C = f(A, B) kernel: the three addresses, then ldc, lda, ldb. */
static void add_c_a_b_slots(struct flex_kernel *k)
{
	add_slot(k, FLEX_CORR_ADDRESS, 0, 0);
	add_slot(k, FLEX_CORR_ADDRESS, 1, 0);
	add_slot(k, FLEX_CORR_ADDRESS, 2, 0);
	add_slot(k, FLEX_CORR_STRIDE, 2, 0);
	add_slot(k, FLEX_CORR_STRIDE, 0, 0);
	add_slot(k, FLEX_CORR_STRIDE, 1, 0);
}

static int check_dim(const char *kname, const char *what, uint64_t v)
{
	if (!v || v > UINT32_MAX)
		return flex_error_set(-EINVAL, "%s: %s = %llu: a tile dimension is 1 .. 2^32-1",
				      kname, what, (unsigned long long)v);
	return 0;
}

/*
 * The device's type for tensors of @dt, or -1 when it computes none on them;
 * *@suffix names it in a kernel's name ("matmul_bf16").
 */
static int device_dtype(enum flex_dtype dt, int matmul, const char **suffix)
{
	switch (dt) {
	case FLEX_DTYPE_INT32:
		*suffix = "i32";
		return FLEX_DT_I32;
	case FLEX_DTYPE_INT8:
		*suffix = "i8";
		return matmul ? FLEX_DT_I8 : -1;
	case FLEX_DTYPE_FLOAT32:
		*suffix = "f32";
		return FLEX_DT_F32;
	case FLEX_DTYPE_BFLOAT16:
		*suffix = "bf16";
		return FLEX_DT_BF16;
	case FLEX_DTYPE_FLOAT16:
		*suffix = "f16";
		return FLEX_DT_F16;
	default:
		return -1;
	}
}

static int kernel_start(const char *kname, enum flex_dtype dt, int matmul, struct flex_kernel **out,
			int *ddt)
{
	const char *name = flex_dtype_name(dt), *suffix = NULL;

	if (!out)
		return flex_error_set(-EINVAL, "%s: NULL out", kname);
	*ddt = device_dtype(dt, matmul, &suffix);
	if (*ddt < 0)
		return flex_error_set(-EINVAL, "%s: the device computes no %s %s (it has %s)", kname,
				      name ? name : "unknown dtype", kname,
				      matmul ? "int32, int8, float32, bfloat16 and float16" :
					       "int32, float32, bfloat16 and float16");
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return flex_error_set(-ENOMEM, "%s: out of host memory", kname);
	snprintf((*out)->name, sizeof((*out)->name), "%s_%s", kname, suffix);
	return 0;
}

/* Emit one instruction and finish the program into @k; frees @k on failure. */
static int kernel_finish(struct flex_kernel *k, uint8_t op, uint8_t ddt, const uint64_t *args,
			 unsigned int n_args)
{
	struct flex_program *p;
	int ret;

	ret = flex_program_new(&p);
	if (!ret) {
		ret = flex_program_emit(p, op, ddt, 0, args, n_args);
		if (!ret)
			ret = flex_program_set_slots(p, k->n_corr);
		if (!ret)
			ret = flex_program_finish(p, &k->binary, &k->binary_size);
		flex_program_destroy(p);
	}
	if (ret) {
		flex_error_set(ret, "%s: building the program: %s", k->name, strerror(-ret));
		flex_kernel_destroy(k);
	}
	return ret;
}

FLEX_EXPORT int flex_kernel_new_matmul(enum flex_dtype dt, uint64_t m, uint64_t n, uint64_t k,
				       struct flex_kernel **out)
{
	enum flex_dtype cdt = dt == FLEX_DTYPE_INT8 ? FLEX_DTYPE_INT32 : dt;
	struct flex_kernel *kr;
	struct flex_kernel_sig *sig;
	uint64_t args[10];
	int ret, ddt;

	ret = check_dim("matmul", "M", m) ?: check_dim("matmul", "N", n) ?:
	      check_dim("matmul", "K", k);
	if (ret)
		return ret;
	/* Each operand's span is its rows x cols when the tile is dense. */
	if (m * n > FLEX_ISA_MAX_ELEMENTS || m * k > FLEX_ISA_MAX_ELEMENTS ||
	    k * n > FLEX_ISA_MAX_ELEMENTS)
		return flex_error_set(-E2BIG,
				      "matmul %llux%llux%llu: an operand above %u elements (the device limit)",
				      (unsigned long long)m, (unsigned long long)n,
				      (unsigned long long)k, FLEX_ISA_MAX_ELEMENTS);
	if (m * n * k > FLEX_ISA_MAX_MACS)
		return flex_error_set(-E2BIG,
				      "matmul %llux%llux%llu: %llu multiply-accumulates, above the device limit %llu",
				      (unsigned long long)m, (unsigned long long)n,
				      (unsigned long long)k, (unsigned long long)(m * n * k),
				      (unsigned long long)FLEX_ISA_MAX_MACS);
	ret = kernel_start("matmul", dt, 1, out, &ddt);
	if (ret)
		return ret;
	kr = *out;
	sig = &kr->sig;
	sig->n_axes = 3;
	strcpy(sig->axis_name[0], "m");
	strcpy(sig->axis_name[1], "n");
	strcpy(sig->axis_name[2], "k");
	sig->axis_is_reduction[2] = 1;
	sig->n_args = 3;
	set_arg(&sig->args[0], "A", dt, m, k, 0, 2, 0);
	set_arg(&sig->args[1], "B", dt, k, n, 2, 1, 0);
	set_arg(&sig->args[2], "C", cdt, m, n, 0, 1, 1);

	add_c_a_b_slots(kr);
	add_slot(kr, FLEX_CORR_ACCUMULATE, 0, 0);

	args[0] = FLEX_SLOT(2);	/* C */
	args[1] = FLEX_SLOT(0);	/* A */
	args[2] = FLEX_SLOT(1);	/* B */
	args[3] = m;
	args[4] = n;
	args[5] = k;
	args[6] = FLEX_SLOT(3);	/* ldc */
	args[7] = FLEX_SLOT(4);	/* lda */
	args[8] = FLEX_SLOT(5);	/* ldb */
	args[9] = FLEX_SLOT(6);	/* accumulate */
	return kernel_finish(kr, FLEX_OP_MATMUL, (uint8_t)ddt, args, 10);
}

/* ADD and MUL: C = A op B, each [rows, cols]. */
static int kernel_binary(const char *kname, uint8_t op, enum flex_dtype dt, uint64_t rows,
			 uint64_t cols, struct flex_kernel **out)
{
	struct flex_kernel *k;
	uint64_t args[8];
	int ret, ddt;

	ret = check_dim(kname, "rows", rows) ?: check_dim(kname, "cols", cols);
	if (ret)
		return ret;
	if (rows * cols > FLEX_ISA_MAX_ELEMENTS)
		return flex_error_set(-E2BIG, "%s %llux%llu: above %u elements (the device limit)",
				      kname, (unsigned long long)rows, (unsigned long long)cols,
				      FLEX_ISA_MAX_ELEMENTS);
	ret = kernel_start(kname, dt, 0, out, &ddt);
	if (ret)
		return ret;
	k = *out;
	k->sig.n_axes = 2;
	strcpy(k->sig.axis_name[0], "m");
	strcpy(k->sig.axis_name[1], "n");
	if (op == FLEX_OP_RELU) {
		k->sig.n_args = 2;
		set_arg(&k->sig.args[0], "X", dt, rows, cols, 0, 1, 0);
		set_arg(&k->sig.args[1], "Y", dt, rows, cols, 0, 1, 1);
		add_slot(k, FLEX_CORR_ADDRESS, 0, 0);
		add_slot(k, FLEX_CORR_ADDRESS, 1, 0);
		add_slot(k, FLEX_CORR_STRIDE, 1, 0);
		add_slot(k, FLEX_CORR_STRIDE, 0, 0);
		args[0] = FLEX_SLOT(1);	/* dst = Y */
		args[1] = FLEX_SLOT(0);	/* src = X */
		args[2] = rows;
		args[3] = cols;
		args[4] = FLEX_SLOT(2);	/* ld_dst */
		args[5] = FLEX_SLOT(3);	/* ld_src */
		return kernel_finish(k, op, (uint8_t)ddt, args, 6);
	}
	k->sig.n_args = 3;
	set_arg(&k->sig.args[0], "A", dt, rows, cols, 0, 1, 0);
	set_arg(&k->sig.args[1], "B", dt, rows, cols, 0, 1, 0);
	set_arg(&k->sig.args[2], "C", dt, rows, cols, 0, 1, 1);
	add_c_a_b_slots(k);
	args[0] = FLEX_SLOT(2);	/* dst = C */
	args[1] = FLEX_SLOT(0);	/* a */
	args[2] = FLEX_SLOT(1);	/* b */
	args[3] = rows;
	args[4] = cols;
	args[5] = FLEX_SLOT(3);	/* ld_dst */
	args[6] = FLEX_SLOT(4);	/* ld_a */
	args[7] = FLEX_SLOT(5);	/* ld_b */
	return kernel_finish(k, op, (uint8_t)ddt, args, 8);
}

FLEX_EXPORT int flex_kernel_new_add(enum flex_dtype dt, uint64_t rows, uint64_t cols,
				    struct flex_kernel **out)
{
	return kernel_binary("add", FLEX_OP_ADD, dt, rows, cols, out);
}

FLEX_EXPORT int flex_kernel_new_mul(enum flex_dtype dt, uint64_t rows, uint64_t cols,
				    struct flex_kernel **out)
{
	return kernel_binary("mul", FLEX_OP_MUL, dt, rows, cols, out);
}

FLEX_EXPORT int flex_kernel_new_relu(enum flex_dtype dt, uint64_t rows, uint64_t cols,
				     struct flex_kernel **out)
{
	return kernel_binary("relu", FLEX_OP_RELU, dt, rows, cols, out);
}

FLEX_EXPORT void flex_kernel_destroy(struct flex_kernel *k)
{
	if (!k)
		return;
	free(k->binary);
	free(k);
}
