// SPDX-License-Identifier: GPL-2.0
/*
 * flex compute engine and device ISA (uapi/linux/flex_isa.h): matmul and
 * element-wise results against a CPU reference, in int32, int8 and the
 * floating-point types (bit for bit, or within a stated bound for float
 * matmul sums), rounding, copy and fill, program
 * correction (one binary, many launches and tiles), a fault with the right
 * code, instruction and address for every out-of-bounds case, every
 * validation rule, the device limits, and isolation of two VFs by program
 * operands.
 *
 * Programs and tensors go to device memory through mmap()ed regions; one
 * test reads its result back by DMA instead.
 */
#include <math.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "flex_test.h"

#define SZ	(2 * MiB)	/* every region of these tests */

/* Tensor places in the data region D (segment 0). */
#define OFF_A	0
#define OFF_B	(512 * 1024)
#define OFF_C	(1024 * 1024)
#define OFF_X	(1536 * 1024)

#define HDR	sizeof(struct flex_prog_header)
#define INSN	sizeof(struct flex_insn)

/* Instruction emitters with typed operands (prog_emit() reads __u64s). */
static void emit_end(struct prog *p)
{
	prog_emit(p, FLEX_OP_END, FLEX_DT_I32, 0, 0);
}

static void emit_copy(struct prog *p, __u64 dst, __u64 src, __u64 bytes)
{
	prog_emit(p, FLEX_OP_COPY, FLEX_DT_I32, 0, 3, dst, src, bytes);
}

static void emit_fill(struct prog *p, __u64 dst, __u64 count, __u64 value)
{
	prog_emit(p, FLEX_OP_FILL, FLEX_DT_I32, 0, 3, dst, count, value);
}

static void emit_binary(struct prog *p, __u8 op, __u64 dst, __u64 a, __u64 b,
			__u64 rows, __u64 cols, __u64 ldd, __u64 lda, __u64 ldb)
{
	prog_emit(p, op, FLEX_DT_I32, 0, 8, dst, a, b, rows, cols, ldd, lda, ldb);
}

static void emit_relu(struct prog *p, __u64 dst, __u64 src, __u64 rows,
		      __u64 cols, __u64 ldd, __u64 lds)
{
	prog_emit(p, FLEX_OP_RELU, FLEX_DT_I32, 0, 6, dst, src, rows, cols, ldd, lds);
}

static void emit_matmul(struct prog *p, __u8 dtype, __u16 flags, __u64 c,
			__u64 a, __u64 b, __u64 m, __u64 n, __u64 k,
			__u64 ldc, __u64 lda, __u64 ldb)
{
	prog_emit(p, FLEX_OP_MATMUL, dtype, flags, 9, c, a, b, m, n, k, ldc, lda, ldb);
}

/* A compute CB for the program at (region, offset), with no segments. */
static struct flex_cb cb_compute(__u64 region_id, __u64 offset)
{
	struct flex_cb cb = { .opcode = FLEX_CB_COMPUTE };

	cb.compute.program = (struct flex_va){ region_id, offset };
	return cb;
}

static void cb_segment(struct flex_cb *cb, unsigned int seg, __u64 region_id,
		       __u64 offset)
{
	cb->compute.segment_mask |= 1U << seg;
	cb->compute.segments[seg] = (struct flex_va){ region_id, offset };
}

/* Acquires a region of SZ bytes on fd and maps all of it. */
static unsigned char *acquire_mapped(struct __test_metadata *_metadata, int fd,
				     struct flex_region_acquire *a)
{
	void *p;

	ASSERT_EQ(0, flex_acquire(fd, SZ, a));
	p = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_SHARED, fd, a->mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	return p;
}

/* xorshift32: reproducible pseudo-random tensors. */
static __u32 next_rand(__u32 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void randomize(void *p, size_t n, __u32 seed)
{
	unsigned char *b = p;
	__u32 s = seed * 2654435761u + 1;
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = next_rand(&s) >> 24;
}

static __u32 *words(unsigned char *base, size_t off)
{
	return (__u32 *)(base + off);
}

/*
 * Compares n int32 of a matrix with row stride ld against the reference,
 * naming the first element that differs.
 */
static void expect_matrix(struct __test_metadata *_metadata, const char *name,
			  const __u32 *want, const __u32 *got, size_t n, size_t ld)
{
	size_t at;

	for (at = 0; at < n && want[at] == got[at]; at++)
		;
	EXPECT_EQ(n, at) TH_LOG("%s: [%zu][%zu] expected %d, got %d", name,
				at / ld, at % ld, (__s32)want[at], (__s32)got[at]);
}

/* Expected fault of a CB, as FLEX_IOCTL_WAIT and QUEUE_STATUS report it. */
struct want {
	int err;
	__u32 code;
	__u32 insn;
	__u64 region_id;
	__u64 offset;
};

/* Waits for CB seq, which must have faulted as w says, then resets the queue. */
static void check_fault(struct __test_metadata *_metadata, int fd, int q,
			__u64 seq, const char *name, struct want w)
{
	struct flex_queue_status st;
	int err = wait_seq(fd, q, seq, 10000);

	EXPECT_EQ(w.err, err) TH_LOG("%s: wait errno", name);
	st = queue_status(fd, q);
	if (!err) {
		/* It did not fault at all: the fields below would only repeat that. */
		ASSERT_EQ(0, queue_reset(fd, q)) TH_LOG("%s: reset", name);
		return;
	}
	EXPECT_EQ(w.code, st.fault_code) TH_LOG("%s: fault_code", name);
	EXPECT_EQ(w.err, st.fault_errno) TH_LOG("%s: fault_errno", name);
	EXPECT_EQ(seq, st.fault_seqno) TH_LOG("%s: fault_seqno", name);
	EXPECT_EQ(FLEX_CB_COMPUTE, st.fault_opcode) TH_LOG("%s: fault_opcode", name);
	EXPECT_EQ(0xc0de, st.fault_user_data) TH_LOG("%s: fault_user_data", name);
	EXPECT_EQ(w.insn, st.fault_insn) TH_LOG("%s: fault_insn", name);
	EXPECT_EQ(w.region_id, st.fault_addr.region_id)
		TH_LOG("%s: fault_addr.region_id", name);
	EXPECT_EQ(w.offset, st.fault_addr.offset)
		TH_LOG("%s: fault_addr.offset 0x%llx", name,
		       (unsigned long long)st.fault_addr.offset);
	ASSERT_EQ(0, queue_reset(fd, q)) TH_LOG("%s: reset", name);
}

/* Runs cb, which must fault as w says, then resets the queue. */
static void expect_fault(struct __test_metadata *_metadata, int fd, int q,
			 struct flex_cb cb, const char *name, struct want w)
{
	__u64 seq;

	cb.user_data = 0xc0de;
	ASSERT_EQ(0, submit(fd, q, &cb, 1, 0, &seq)) TH_LOG("%s: submit", name);
	check_fault(_metadata, fd, q, seq, name, w);
}

/*
 * One PF file with a queue and three mapped regions: P holds programs,
 * D tensors (segment 0), K correction tensors (segment 7).
 */
FIXTURE(c) {
	int fd;
	int q;
	struct flex_region_acquire P, D, K;
	unsigned char *p, *d, *k;
};

FIXTURE_SETUP(c)
{
	self->fd = flex_open(FLEX_PF);
	ASSERT_LE(0, self->fd);
	self->p = acquire_mapped(_metadata, self->fd, &self->P);
	self->d = acquire_mapped(_metadata, self->fd, &self->D);
	self->k = acquire_mapped(_metadata, self->fd, &self->K);
	self->q = queue_create(self->fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, self->q);
}

FIXTURE_TEARDOWN(c)
{
	engines_pause(0);
	munmap(self->p, SZ);
	munmap(self->d, SZ);
	munmap(self->k, SZ);
	close(self->fd);
}

/* The usual launch: program at P+0, segment 0 = D, segment 7 = K. */
static struct flex_cb launch(FIXTURE_DATA(c) *self)
{
	struct flex_cb cb = cb_compute(self->P.region_id, 0);

	cb_segment(&cb, 0, self->D.region_id, 0);
	cb_segment(&cb, FLEX_SEGMENT_CORRECTION, self->K.region_id, 0);
	return cb;
}

/* Stores a program at P+0 (the whole builder, so header lies stay in P). */
static void load(FIXTURE_DATA(c) *self, const struct prog *pr)
{
	memcpy(self->p, pr, sizeof(*pr));
}

static int run_prog(FIXTURE_DATA(c) *self, const struct prog *pr)
{
	load(self, pr);
	return run_cb(self->fd, self->q, launch(self));
}

static void prog_fault(struct __test_metadata *_metadata, FIXTURE_DATA(c) *self,
		       const struct prog *pr, struct flex_cb cb, const char *name,
		       struct want w)
{
	load(self, pr);
	expect_fault(_metadata, self->fd, self->q, cb, name, w);
}

/* Matrix multiply. */

struct mm_case {
	__u32 m, n, k, lda, ldb, ldc;
};

static const struct mm_case mm_shapes[] = {
	{ 1, 1, 1, 1, 1, 1 },
	{ 2, 2, 2, 2, 2, 2 },
	{ 3, 5, 7, 7, 5, 5 },		/* non-square */
	{ 7, 3, 1, 1, 3, 3 },		/* K = 1: an outer product */
	{ 1, 9, 4, 4, 9, 9 },		/* one row */
	{ 6, 1, 5, 5, 1, 1 },		/* one column */
	{ 9, 13, 11, 16, 20, 15 },	/* lda > K, ldb > N, ldc > N */
	{ 33, 17, 1, 3, 19, 18 },	/* K = 1 with strides */
	{ 16, 16, 16, 16, 16, 16 },
	{ 40, 64, 48, 50, 70, 67 },
	{ 64, 64, 64, 64, 64, 64 },
};

static __u32 elem(const void *base, size_t i, int i8)
{
	return i8 ? (__u32)(__s32)((const __s8 *)base)[i] : ((const __u32 *)base)[i];
}

/* C (+)= A.B in wrapping int32, touching only the M x N elements of C. */
static void ref_matmul(__u32 *c, const void *a, const void *b, int i8, int acc,
		       const struct mm_case *s)
{
	__u32 i, j, kk, sum;

	for (i = 0; i < s->m; i++) {
		for (j = 0; j < s->n; j++) {
			sum = acc ? c[i * s->ldc + j] : 0;
			for (kk = 0; kk < s->k; kk++)
				sum += elem(a, i * s->lda + kk, i8) * elem(b, kk * s->ldb + j, i8);
			c[i * s->ldc + j] = sum;
		}
	}
}

/*
 * Random A, B and C (padding included, so a stride bug reads or clobbers
 * something visible), one MATMUL, and all of C's rows compared.
 */
static void check_matmul(struct __test_metadata *_metadata, FIXTURE_DATA(c) *self,
			 const struct mm_case *s, __u8 dtype, int acc, __u32 seed)
{
	int i8 = dtype == FLEX_DT_I8;
	size_t es = i8 ? 1 : 4, cn = (size_t)s->m * s->ldc;
	__u32 *want = malloc(cn * 4), *got = words(self->d, OFF_C);
	struct prog pr;
	char name[96];

	ASSERT_NE(NULL, want);
	snprintf(name, sizeof(name), "%s %ux%ux%u lda %u ldb %u ldc %u%s",
		 i8 ? "int8" : "int32", s->m, s->n, s->k, s->lda, s->ldb, s->ldc,
		 acc ? " accumulate" : "");
	randomize(self->d + OFF_A, (size_t)s->m * s->lda * es, seed);
	randomize(self->d + OFF_B, (size_t)s->k * s->ldb * es, seed + 1000);
	randomize(got, cn * 4, seed + 2000);
	memcpy(want, got, cn * 4);
	ref_matmul(want, self->d + OFF_A, self->d + OFF_B, i8, acc, s);

	prog_init(&pr, 0);
	emit_matmul(&pr, dtype, acc ? FLEX_INSN_ACCUMULATE : 0, FLEX_ADDR(0, OFF_C),
		    FLEX_ADDR(0, OFF_A), FLEX_ADDR(0, OFF_B), s->m, s->n, s->k,
		    s->ldc, s->lda, s->ldb);
	emit_end(&pr);
	ASSERT_EQ(0, run_prog(self, &pr)) TH_LOG("%s", name);
	expect_matrix(_metadata, name, want, got, cn, s->ldc);
	free(want);
}

TEST_F(c, matmul_int32_matches_the_cpu_reference)
{
	size_t i;

	for (i = 0; i < sizeof(mm_shapes) / sizeof(mm_shapes[0]); i++)
		check_matmul(_metadata, self, &mm_shapes[i], FLEX_DT_I32, 0, i + 1);
}

TEST_F(c, matmul_int8_to_int32_matches_the_cpu_reference)
{
	size_t i;

	for (i = 0; i < sizeof(mm_shapes) / sizeof(mm_shapes[0]); i++)
		check_matmul(_metadata, self, &mm_shapes[i], FLEX_DT_I8, 0, i + 101);
}

TEST_F(c, matmul_accumulates_into_existing_c)
{
	size_t i;

	for (i = 0; i < sizeof(mm_shapes) / sizeof(mm_shapes[0]); i += 2) {
		check_matmul(_metadata, self, &mm_shapes[i], FLEX_DT_I32, 1, i + 201);
		check_matmul(_metadata, self, &mm_shapes[i], FLEX_DT_I8, 1, i + 301);
	}
}

/*
 * MATMUL's acc operand (arg[9]): 0 overwrites C, non-zero accumulates,
 * from an immediate or a correction slot, so one binary does both the
 * first step of a reduction and the later ones. The flag still works.
 */
TEST_F(c, matmul_acc_operand_from_an_immediate_or_a_slot)
{
	static const struct mm_case s = { 5, 7, 3, 3, 7, 7 };
	static const struct { __u16 flags; __u64 acc, slot; int want_acc; const char *what; } runs[] = {
		{ 0, 0, 0, 0, "acc immediate 0" },
		{ 0, 1, 0, 1, "acc immediate 1" },
		{ 0, 12345, 0, 1, "acc immediate 12345" },
		{ 0, FLEX_SLOT(0), 0, 0, "acc from slot = 0" },
		{ 0, FLEX_SLOT(0), 1, 1, "acc from slot = 1" },
		{ FLEX_INSN_ACCUMULATE, 0, 0, 1, "flag with acc 0" },
		{ FLEX_INSN_ACCUMULATE, FLEX_SLOT(0), 0, 1, "flag with acc slot 0" },
	};
	size_t cn = (size_t)s.m * s.ldc, i;
	__u32 *want = malloc(cn * 4), *got = words(self->d, OFF_C);
	struct prog pr;

	ASSERT_NE(NULL, want);
	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		randomize(self->d + OFF_A, (size_t)s.m * s.lda * 4, i + 401);
		randomize(self->d + OFF_B, (size_t)s.k * s.ldb * 4, i + 501);
		randomize(got, cn * 4, i + 601);
		memcpy(want, got, cn * 4);
		ref_matmul(want, self->d + OFF_A, self->d + OFF_B, 0, runs[i].want_acc, &s);
		((__u64 *)self->k)[0] = runs[i].slot;
		prog_init(&pr, 1);
		prog_emit(&pr, FLEX_OP_MATMUL, FLEX_DT_I32, runs[i].flags, 10,
			  FLEX_ADDR(0, OFF_C), FLEX_ADDR(0, OFF_A), FLEX_ADDR(0, OFF_B),
			  (__u64)s.m, (__u64)s.n, (__u64)s.k, (__u64)s.ldc, (__u64)s.lda,
			  (__u64)s.ldb, runs[i].acc);
		emit_end(&pr);
		ASSERT_EQ(0, run_prog(self, &pr)) TH_LOG("%s", runs[i].what);
		expect_matrix(_metadata, runs[i].what, want, got, cn, s.ldc);
	}
	free(want);

	/* Like every scalar, acc must be below 2^32. */
	((__u64 *)self->k)[0] = 1ULL << 32;
	prog_init(&pr, 1);
	prog_emit(&pr, FLEX_OP_MATMUL, FLEX_DT_I32, 0, 10, FLEX_ADDR(0, OFF_C),
		  FLEX_ADDR(0, OFF_A), FLEX_ADDR(0, OFF_B), 1ULL, 1ULL, 1ULL, 1ULL, 1ULL,
		  1ULL, FLEX_SLOT(0));
	emit_end(&pr);
	prog_fault(_metadata, self, &pr, launch(self), "acc 2^32 from a slot",
		   (struct want){ -E2BIG, FLEX_FAULT_LIMIT, 0, 0, 0 });
}

TEST_F(c, int8_extremes_sign_extend_and_int32_wraps)
{
	static const struct mm_case s = { 2, 2, 64, 64, 2, 2 };
	__u32 *a = words(self->d, OFF_A), *b = words(self->d, OFF_B);
	__u32 *c = words(self->d, OFF_C);
	struct prog pr;

	/* int8: every A is -128, B column 0 is -128 and column 1 is 127. */
	memset(self->d + OFF_A, 0x80, 2 * 64);
	memset(self->d + OFF_B, 0x80, 64 * 2);
	for (int i = 0; i < 64; i++)
		self->d[OFF_B + i * 2 + 1] = 127;
	prog_init(&pr, 0);
	emit_matmul(&pr, FLEX_DT_I8, 0, FLEX_ADDR(0, OFF_C), FLEX_ADDR(0, OFF_A),
		    FLEX_ADDR(0, OFF_B), s.m, s.n, s.k, s.ldc, s.lda, s.ldb);
	emit_end(&pr);
	ASSERT_EQ(0, run_prog(self, &pr));
	EXPECT_EQ(64 * 128 * 128, (__s32)c[0]);
	EXPECT_EQ(-64 * 128 * 127, (__s32)c[1]);
	EXPECT_EQ(64 * 128 * 128, (__s32)c[2]);

	/* int32: 0x10000 * 0x10000 wraps to 0; 0x7fffffff + 1 to INT32_MIN. */
	a[0] = 0x10000;
	a[1] = 1;
	b[0] = 0x10000;
	b[1] = 0x7fffffff;
	prog_init(&pr, 0);
	emit_matmul(&pr, FLEX_DT_I32, 0, FLEX_ADDR(0, OFF_C), FLEX_ADDR(0, OFF_A),
		    FLEX_ADDR(0, OFF_B), 1, 1, 1, 1, 1, 1);
	emit_binary(&pr, FLEX_OP_ADD, FLEX_ADDR(0, OFF_C + 4), FLEX_ADDR(0, OFF_B + 4),
		    FLEX_ADDR(0, OFF_A + 4), 1, 1, 1, 1, 1);
	emit_end(&pr);
	ASSERT_EQ(0, run_prog(self, &pr));
	EXPECT_EQ(0, c[0]);
	EXPECT_EQ(0x80000000u, c[1]);
}

/* Element-wise ADD, MUL, RELU. */

struct ew_case {
	__u32 rows, cols, ldd, lda, ldb;
	int in_place;	/* dst is a (ldd == lda) */
};

static __u32 ew_ref(__u8 op, __u32 a, __u32 b)
{
	if (op == FLEX_OP_ADD)
		return a + b;
	if (op == FLEX_OP_MUL)
		return a * b;
	return (__s32)a > 0 ? a : 0;
}

static void check_elementwise(struct __test_metadata *_metadata,
			      FIXTURE_DATA(c) *self, __u8 op,
			      const struct ew_case *s, __u32 seed)
{
	static const char *const names[] = { [FLEX_OP_ADD] = "ADD",
		[FLEX_OP_MUL] = "MUL", [FLEX_OP_RELU] = "RELU" };
	size_t doff = s->in_place ? OFF_A : OFF_C, dn = (size_t)s->rows * s->ldd;
	__u32 *a = words(self->d, OFF_A), *b = words(self->d, OFF_B);
	__u32 *d = words(self->d, doff), *want = malloc(dn * 4);
	__u32 *a0 = malloc((size_t)s->rows * s->lda * 4), i, j;
	struct prog pr;
	char name[96];

	ASSERT_NE(NULL, want);
	ASSERT_NE(NULL, a0);
	snprintf(name, sizeof(name), "%s %ux%u ldd %u lda %u ldb %u%s", names[op],
		 s->rows, s->cols, s->ldd, s->lda, s->ldb, s->in_place ? " in place" : "");
	randomize(a, (size_t)s->rows * s->lda * 4, seed);
	randomize(b, (size_t)s->rows * s->ldb * 4, seed + 1);
	if (!s->in_place)
		randomize(d, dn * 4, seed + 2);
	memcpy(a0, a, (size_t)s->rows * s->lda * 4);
	memcpy(want, d, dn * 4);
	for (i = 0; i < s->rows; i++)
		for (j = 0; j < s->cols; j++)
			want[i * s->ldd + j] = ew_ref(op, a0[i * s->lda + j], b[i * s->ldb + j]);

	prog_init(&pr, 0);
	if (op == FLEX_OP_RELU)
		emit_relu(&pr, FLEX_ADDR(0, doff), FLEX_ADDR(0, OFF_A), s->rows, s->cols,
			  s->ldd, s->lda);
	else
		emit_binary(&pr, op, FLEX_ADDR(0, doff), FLEX_ADDR(0, OFF_A),
			    FLEX_ADDR(0, OFF_B), s->rows, s->cols, s->ldd, s->lda, s->ldb);
	emit_end(&pr);
	ASSERT_EQ(0, run_prog(self, &pr)) TH_LOG("%s", name);
	expect_matrix(_metadata, name, want, d, dn, s->ldd);
	free(a0);
	free(want);
}

TEST_F(c, elementwise_add_mul_relu_with_strides)
{
	static const struct ew_case cases[] = {
		{ 1, 1, 1, 1, 1, 0 },
		{ 4, 7, 7, 7, 7, 0 },
		{ 5, 6, 9, 8, 10, 0 },		/* every stride past the row */
		{ 17, 3, 4, 3, 5, 0 },
		{ 1, 33, 33, 40, 50, 0 },
		{ 64, 64, 64, 64, 64, 0 },
		{ 6, 5, 7, 7, 5, 1 },		/* dst is the first input */
	};
	static const __u8 ops[] = { FLEX_OP_ADD, FLEX_OP_MUL, FLEX_OP_RELU };
	size_t i, o;

	for (o = 0; o < 3; o++)
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			check_elementwise(_metadata, self, ops[o], &cases[i], o * 100 + i);
}

/*
 * Floating point (UAPI minor 3). The references are independent of the
 * driver's conversion code: binary16 through the compiler's _Float16,
 * bfloat16 by choosing the nearer of the two candidates in double. The
 * test is built with -ffp-contract=off semantics by writing each product
 * and sum as its own statement.
 */

static const char *dt_name(__u8 dt)
{
	return dt == FLEX_DT_F32 ? "f32" : dt == FLEX_DT_BF16 ? "bf16" : "f16";
}

static size_t dt_bytes(__u8 dt)
{
	return dt == FLEX_DT_F32 ? 4 : 2;
}

static float f_of(__u32 bits)
{
	float f;

	memcpy(&f, &bits, 4);
	return f;
}

static __u32 bits_of(float f)
{
	__u32 b;

	memcpy(&b, &f, 4);
	return b;
}

/* binary32 -> bfloat16, to nearest, ties to even, by comparing candidates. */
static __u16 ref_to_bf16(float f)
{
	__u32 b = bits_of(f), lo = b & 0xffff0000u, hi = lo + 0x10000u;
	double dlo, dhi, d = f;

	if (f != f)
		return (b >> 16) | 0x40;
	if ((b & 0xffff) == 0)
		return b >> 16;
	dlo = f_of(lo);
	dhi = (hi & 0x7f800000u) == 0x7f800000u ? (d > 0 ? INFINITY : -INFINITY) : f_of(hi);
	if ((b & 0x7fffffffu) >= 0x7f7f8000u)	/* rounds past the largest bf16 */
		return (b >> 16 & 0x8000) | 0x7f80;
	if (fabs(d - dlo) < fabs(dhi - d))
		return lo >> 16;
	if (fabs(d - dlo) > fabs(dhi - d))
		return hi >> 16;
	return ((lo >> 16) & 1) ? hi >> 16 : lo >> 16;
}

static __u16 ref_to_f16(float f)
{
	_Float16 h = (_Float16)f;
	__u16 b;

	memcpy(&b, &h, 2);
	return b;
}

static float ref_from_f16(__u16 b)
{
	_Float16 h;

	memcpy(&h, &b, 2);
	return (float)h;
}

/* The value of element i of an array of type dt, as binary32. */
static float fget(const void *base, size_t i, __u8 dt)
{
	if (dt == FLEX_DT_F32)
		return ((const float *)base)[i];
	if (dt == FLEX_DT_BF16)
		return f_of((__u32)((const __u16 *)base)[i] << 16);
	return ref_from_f16(((const __u16 *)base)[i]);
}

/* Stores binary32 v, rounded to dt, as element i. */
static void fput(void *base, size_t i, __u8 dt, float v)
{
	if (dt == FLEX_DT_F32)
		((float *)base)[i] = v;
	else if (dt == FLEX_DT_BF16)
		((__u16 *)base)[i] = ref_to_bf16(v);
	else
		((__u16 *)base)[i] = ref_to_f16(v);
}

static __u32 raw(const void *base, size_t i, __u8 dt)
{
	return dt == FLEX_DT_F32 ? ((const __u32 *)base)[i] : ((const __u16 *)base)[i];
}

/* n random elements of dt in [-2, 2), exactly representable (seeded). */
static void frandom(void *base, size_t n, __u8 dt, __u32 seed)
{
	__u32 s = seed * 2654435761u + 7;
	size_t i;

	for (i = 0; i < n; i++)
		fput(base, i, dt, (float)((int)(next_rand(&s) >> 8) - (1 << 23)) / (1 << 22));
}

/* Unit roundoff of each type: half its epsilon. */
static double unit_roundoff(__u8 dt)
{
	return dt == FLEX_DT_F32 ? 0x1p-24 : dt == FLEX_DT_BF16 ? 0x1p-8 : 0x1p-11;
}

/*
 * A float MATMUL against a double-precision reference, with the standard
 * bound for a sum of K products in binary32 plus the output's rounding:
 * |got - exact| <= (K + 2) u32 sum |a||b| + u_t |exact| + the smallest
 * subnormal of the type.
 */
static void check_fmatmul(struct __test_metadata *_metadata, FIXTURE_DATA(c) *self,
			  const struct mm_case *s, __u8 dt, int acc, __u32 seed)
{
	size_t es = dt_bytes(dt), cn = (size_t)s->m * s->ldc, i, j, kk, bad = 0;
	void *c0 = malloc(cn * es), *got = self->d + OFF_C;
	const void *a = self->d + OFF_A, *b = self->d + OFF_B;
	double worst = 0;
	struct prog pr;
	char name[96];

	ASSERT_NE(NULL, c0);
	snprintf(name, sizeof(name), "%s %ux%ux%u lda %u ldb %u ldc %u%s", dt_name(dt),
		 s->m, s->n, s->k, s->lda, s->ldb, s->ldc, acc ? " accumulate" : "");
	frandom(self->d + OFF_A, (size_t)s->m * s->lda, dt, seed);
	frandom(self->d + OFF_B, (size_t)s->k * s->ldb, dt, seed + 1000);
	frandom(got, cn, dt, seed + 2000);
	memcpy(c0, got, cn * es);

	prog_init(&pr, 0);
	emit_matmul(&pr, dt, acc ? FLEX_INSN_ACCUMULATE : 0, FLEX_ADDR(0, OFF_C),
		    FLEX_ADDR(0, OFF_A), FLEX_ADDR(0, OFF_B), s->m, s->n, s->k,
		    s->ldc, s->lda, s->ldb);
	emit_end(&pr);
	ASSERT_EQ(0, run_prog(self, &pr)) TH_LOG("%s", name);

	for (i = 0; i < s->m; i++) {
		for (j = 0; j < s->ldc; j++) {
			size_t at = i * s->ldc + j;
			double exact = acc ? fget(c0, at, dt) : 0, mag = fabs(exact), err, bound;

			if (j >= s->n) {	/* between rows: untouched */
				if (raw(got, at, dt) != raw(c0, at, dt) && !bad++)
					TH_LOG("%s: padding [%zu][%zu] changed", name, i, j);
				continue;
			}
			for (kk = 0; kk < s->k; kk++) {
				double p = (double)fget(a, i * s->lda + kk, dt) *
					   fget(b, kk * s->ldb + j, dt);

				exact += p;
				mag += fabs(p);
			}
			err = fabs(fget(got, at, dt) - exact);
			bound = (s->k + 2) * 0x1p-24 * mag + unit_roundoff(dt) * fabs(exact) +
				(dt == FLEX_DT_F16 ? 0x1p-24 : 0x1p-133);
			if (err > worst)
				worst = err;
			if (!(err <= bound) && !bad++)
				TH_LOG("%s: [%zu][%zu] expected %.9g within %.3g, got %.9g", name,
				       i, j, exact, bound, fget(got, at, dt));
		}
	}
	EXPECT_EQ(0, bad) TH_LOG("%s: %zu elements outside the bound", name, bad);
	free(c0);
}

TEST_F(c, float_matmul_matches_the_cpu_reference_within_the_bound)
{
	static const struct mm_case shapes[] = {
		{ 1, 1, 1, 1, 1, 1 },
		{ 3, 5, 7, 7, 5, 5 },
		{ 9, 13, 11, 16, 20, 15 },	/* lda > K, ldb > N, ldc > N */
		{ 70, 260, 300, 300, 261, 262 },	/* past one 64 x 256 x 256 block */
	};
	static const __u8 types[] = { FLEX_DT_F32, FLEX_DT_BF16, FLEX_DT_F16 };
	size_t i, t;

	for (t = 0; t < 3; t++) {
		for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
			check_fmatmul(_metadata, self, &shapes[i], types[t], 0, t * 10 + i + 1);
		check_fmatmul(_metadata, self, &shapes[2], types[t], 1, t * 10 + 9);
	}
}

/* Elementwise results are one rounding each: they match bit for bit. */
static void check_felementwise(struct __test_metadata *_metadata, FIXTURE_DATA(c) *self,
			       __u8 op, __u8 dt, const struct ew_case *s, __u32 seed)
{
	static const char *const names[] = { [FLEX_OP_ADD] = "ADD",
		[FLEX_OP_MUL] = "MUL", [FLEX_OP_RELU] = "RELU" };
	size_t es = dt_bytes(dt), doff = s->in_place ? OFF_A : OFF_C;
	size_t dn = (size_t)s->rows * s->ldd, an = (size_t)s->rows * s->lda, i, j;
	void *a = self->d + OFF_A, *b = self->d + OFF_B, *d = self->d + doff;
	void *want = malloc(dn * es), *a0 = malloc(an * es);
	struct prog pr;
	char name[96];

	ASSERT_NE(NULL, want);
	ASSERT_NE(NULL, a0);
	snprintf(name, sizeof(name), "%s %s %ux%u ldd %u lda %u ldb %u%s", names[op],
		 dt_name(dt), s->rows, s->cols, s->ldd, s->lda, s->ldb,
		 s->in_place ? " in place" : "");
	frandom(a, an, dt, seed);
	frandom(b, (size_t)s->rows * s->ldb, dt, seed + 1);
	if (!s->in_place)
		frandom(d, dn, dt, seed + 2);
	memcpy(a0, a, an * es);
	memcpy(want, d, dn * es);
	for (i = 0; i < s->rows; i++) {
		for (j = 0; j < s->cols; j++) {
			float x = fget(a0, i * s->lda + j, dt), y = fget(b, i * s->ldb + j, dt), r;

			if (op == FLEX_OP_ADD)
				r = x + y;
			else if (op == FLEX_OP_MUL)
				r = x * y;
			else
				r = x > 0 ? x : 0;
			fput(want, i * s->ldd + j, dt, r);
		}
	}

	prog_init(&pr, 0);
	if (op == FLEX_OP_RELU)
		prog_emit(&pr, op, dt, 0, 6, FLEX_ADDR(0, doff), FLEX_ADDR(0, OFF_A),
			  (__u64)s->rows, (__u64)s->cols, (__u64)s->ldd, (__u64)s->lda);
	else
		prog_emit(&pr, op, dt, 0, 8, FLEX_ADDR(0, doff), FLEX_ADDR(0, OFF_A),
			  FLEX_ADDR(0, OFF_B), (__u64)s->rows, (__u64)s->cols, (__u64)s->ldd,
			  (__u64)s->lda, (__u64)s->ldb);
	emit_end(&pr);
	ASSERT_EQ(0, run_prog(self, &pr)) TH_LOG("%s", name);
	for (i = 0; i < dn && raw(want, i, dt) == raw(d, i, dt); i++)
		;
	EXPECT_EQ(dn, i) TH_LOG("%s: [%zu][%zu] expected 0x%x, got 0x%x", name, i / s->ldd,
				i % s->ldd, raw(want, i, dt), raw(d, i, dt));
	free(a0);
	free(want);
}

TEST_F(c, float_elementwise_rounds_like_the_cpu)
{
	static const struct ew_case cases[] = {
		{ 1, 1, 1, 1, 1, 0 },
		{ 5, 6, 9, 8, 10, 0 },		/* every stride past the row */
		{ 3, 20000, 20001, 20000, 20002, 0 },	/* rows past one chunk */
		{ 6, 5, 7, 7, 5, 1 },		/* dst is the first input */
	};
	static const __u8 ops[] = { FLEX_OP_ADD, FLEX_OP_MUL, FLEX_OP_RELU };
	static const __u8 types[] = { FLEX_DT_F32, FLEX_DT_BF16, FLEX_DT_F16 };
	size_t i, o, t;

	for (t = 0; t < 3; t++)
		for (o = 0; o < 3; o++)
			for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
				check_felementwise(_metadata, self, ops[o], types[t], &cases[i],
						   t * 100 + o * 10 + i);
}

/* One ADD or MUL of two scalars of dt (bit patterns), its result's bits. */
static __u32 fscalar(struct __test_metadata *_metadata, FIXTURE_DATA(c) *self,
		     __u8 op, __u8 dt, __u32 x, __u32 y)
{
	struct prog pr;

	memcpy(self->d + OFF_A, &x, dt_bytes(dt));
	memcpy(self->d + OFF_B, &y, dt_bytes(dt));
	prog_init(&pr, 0);
	if (op == FLEX_OP_RELU)
		prog_emit(&pr, op, dt, 0, 6, FLEX_ADDR(0, OFF_C), FLEX_ADDR(0, OFF_A),
			  1ULL, 1ULL, 1ULL, 1ULL);
	else
		prog_emit(&pr, op, dt, 0, 8, FLEX_ADDR(0, OFF_C), FLEX_ADDR(0, OFF_A),
			  FLEX_ADDR(0, OFF_B), 1ULL, 1ULL, 1ULL, 1ULL, 1ULL);
	emit_end(&pr);
	EXPECT_EQ(0, run_prog(self, &pr));
	return raw(self->d + OFF_C, 0, dt);
}

TEST_F(c, float_rounding_ties_to_even_overflow_subnormals_and_nan)
{
	static const struct {
		__u8 op, dt;
		__u32 x, y, want;
		const char *what;
	} cases[] = {
		{ FLEX_OP_ADD, FLEX_DT_BF16, 0x3f80, 0x3b80, 0x3f80, "1 + 2^-8: tie, to even (down)" },
		{ FLEX_OP_ADD, FLEX_DT_BF16, 0x3f81, 0x3b80, 0x3f82, "(1 + 2^-7) + 2^-8: tie, to even (up)" },
		{ FLEX_OP_ADD, FLEX_DT_BF16, 0x7f7f, 0x7f7f, 0x7f80, "max + max: inf" },
		{ FLEX_OP_ADD, FLEX_DT_F16, 0x3c00, 0x1000, 0x3c00, "1 + 2^-11: tie, to even (down)" },
		{ FLEX_OP_ADD, FLEX_DT_F16, 0x3c01, 0x1000, 0x3c02, "(1 + 2^-10) + 2^-11: tie, up" },
		{ FLEX_OP_ADD, FLEX_DT_F16, 0x7b53, 0x7b53, 0x7c00, "60000 + 60000: inf" },
		{ FLEX_OP_MUL, FLEX_DT_F16, 0x0001, 0x3800, 0x0000, "2^-24 * 0.5: tie to 0" },
		{ FLEX_OP_MUL, FLEX_DT_F16, 0x0001, 0x3e00, 0x0002, "2^-24 * 1.5: tie to 2^-23" },
		{ FLEX_OP_MUL, FLEX_DT_F16, 0x0400, 0x3800, 0x0200, "2^-14 * 0.5: a subnormal" },
		{ FLEX_OP_MUL, FLEX_DT_F32, 0x00800000, 0x3f000000, 0x00400000,
		  "2^-126 * 0.5: a subnormal, not flushed" },
		{ FLEX_OP_ADD, FLEX_DT_F32, 0x7f800000, 0xff800000, 0x7fc00000, "inf - inf: NaN" },
		{ FLEX_OP_RELU, FLEX_DT_F32, 0xbf800000, 0, 0x00000000, "relu(-1) = 0" },
		{ FLEX_OP_RELU, FLEX_DT_F32, 0x7fc00001, 0, 0x7fc00001, "relu(NaN) = NaN" },
		{ FLEX_OP_RELU, FLEX_DT_BF16, 0x4049, 0, 0x4049, "relu(3.14) = 3.14" },
	};
	size_t i;
	__u32 got;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		got = fscalar(_metadata, self, cases[i].op, cases[i].dt, cases[i].x, cases[i].y);
		if (cases[i].want == 0x7fc00000) {	/* any NaN */
			EXPECT_TRUE((got & 0x7f800000) == 0x7f800000 && (got & 0x7fffff))
				TH_LOG("%s: expected a NaN, got 0x%x", cases[i].what, got);
		} else {
			EXPECT_EQ(cases[i].want, got) TH_LOG("%s (%s)", cases[i].what,
							     dt_name(cases[i].dt));
		}
	}
}

TEST_F(c, fill_stores_the_pattern_of_its_type)
{
	static const struct {
		__u8 dt;
		size_t es;
		__u64 value;
	} cases[] = {
		{ FLEX_DT_F32, 4, 0x3f800000 },
		{ FLEX_DT_BF16, 2, 0x3f80 },
		{ FLEX_DT_F16, 2, 0x3c00 },
		{ FLEX_DT_I8, 1, 0xff },
	};
	unsigned char *x = self->d + OFF_X;
	struct prog pr;
	size_t i, j, n = 37;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(x, 0x5a, 4096);
		prog_init(&pr, 0);
		prog_emit(&pr, FLEX_OP_FILL, cases[i].dt, 0, 3, FLEX_ADDR(0, OFF_X + 1),
			  (__u64)n, cases[i].value);
		emit_end(&pr);
		ASSERT_EQ(0, run_prog(self, &pr)) TH_LOG("dtype %u", cases[i].dt);
		EXPECT_EQ(0x5a, x[0]) TH_LOG("dtype %u: the byte before was written", cases[i].dt);
		for (j = 0; j < n; j++) {
			__u64 v = 0;

			memcpy(&v, x + 1 + j * cases[i].es, cases[i].es);
			if (v != cases[i].value) {
				EXPECT_EQ(cases[i].value, v) TH_LOG("dtype %u: element %zu",
								    cases[i].dt, j);
				break;
			}
		}
		EXPECT_EQ(0x5a, x[1 + n * cases[i].es])
			TH_LOG("dtype %u: the byte after was written", cases[i].dt);
	}
}

TEST_F(c, a_fill_value_wider_than_its_element_faults_limit)
{
	static const struct {
		__u8 dt;
		__u64 value;
	} cases[] = {
		{ FLEX_DT_BF16, 0x10000 }, { FLEX_DT_F16, 0x13c00 }, { FLEX_DT_I8, 0x100 },
	};
	struct prog pr;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(self->d + OFF_X, 0x5a, 64);
		prog_init(&pr, 0);
		prog_emit(&pr, FLEX_OP_FILL, cases[i].dt, 0, 3, FLEX_ADDR(0, OFF_X), 4ULL,
			  cases[i].value);
		emit_end(&pr);
		prog_fault(_metadata, self, &pr, launch(self), "wide FILL value",
			   (struct want){ -E2BIG, FLEX_FAULT_LIMIT, 0, 0, 0 });
		EXPECT_EQ(0x5a, self->d[OFF_X]) TH_LOG("dtype %u: written before the fault",
						       cases[i].dt);
	}
}

TEST_F(c, float_types_only_where_the_opcode_allows_them)
{
	static const struct {
		__u8 op, dt;
		int nargs;
	} bad[] = {
		{ FLEX_OP_COPY, FLEX_DT_F32, 3 },
		{ FLEX_OP_ADD, FLEX_DT_I8, 8 },
		{ FLEX_OP_RELU, FLEX_DT_I8, 6 },
		{ FLEX_OP_MATMUL, FLEX_DT_F16 + 1, 9 },
		{ FLEX_OP_FILL, 0xff, 3 },
	};
	struct prog pr;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		prog_init(&pr, 0);
		/* Operands that would be fine: only the type is wrong. */
		prog_emit(&pr, bad[i].op, bad[i].dt, 0, bad[i].nargs, FLEX_ADDR(0, OFF_C),
			  FLEX_ADDR(0, OFF_A), FLEX_ADDR(0, OFF_B), 1ULL, 1ULL, 1ULL, 1ULL,
			  1ULL, 1ULL);
		emit_end(&pr);
		prog_fault(_metadata, self, &pr, launch(self), "type not allowed",
			   (struct want){ -ENOEXEC, FLEX_FAULT_BAD_PROGRAM, 0, self->P.region_id,
					  HDR });
	}
	/* END must stay all zeros. */
	prog_init(&pr, 0);
	prog_emit(&pr, FLEX_OP_END, FLEX_DT_F32, 0, 0);
	prog_fault(_metadata, self, &pr, launch(self), "END with a float type",
		   (struct want){ -ENOEXEC, FLEX_FAULT_BAD_PROGRAM, 0, self->P.region_id, HDR });
}

TEST_F(c, copy_moves_bytes_even_when_ranges_overlap)
{
	static const struct { __u32 dst, src, n; const char *what; } cases[] = {
		{ 8192, 0, 4096, "disjoint, aligned" },
		{ 4097 + 3, 1, 1000, "disjoint, odd offsets and size" },
		{ 100, 97, 1, "one byte" },
		{ 503, 500, 2000, "overlap, dst after src" },
		{ 600, 605, 3001, "overlap, dst before src" },
		{ 7000, 7000, 512, "dst is src" },
		{ 12000, 300, 4096 + 1, "crosses pages" },
	};
	enum { AREA = 16384 };
	unsigned char *area = self->d + OFF_A, *want = malloc(AREA);
	struct prog pr;
	size_t i, at;

	ASSERT_NE(NULL, want);
	randomize(area, AREA, 7);
	memcpy(want, area, AREA);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memmove(want + cases[i].dst, want + cases[i].src, cases[i].n);
		prog_init(&pr, 0);
		emit_copy(&pr, FLEX_ADDR(0, OFF_A + cases[i].dst),
			  FLEX_ADDR(0, OFF_A + cases[i].src), cases[i].n);
		emit_end(&pr);
		ASSERT_EQ(0, run_prog(self, &pr)) TH_LOG("copy %s", cases[i].what);
		for (at = 0; at < AREA && want[at] == area[at]; at++)
			;
		EXPECT_EQ(AREA, at) TH_LOG("copy %s (%u bytes %u -> %u): byte %zu expected 0x%02x, got 0x%02x",
					   cases[i].what, cases[i].n, cases[i].src, cases[i].dst,
					   at, want[at], area[at]);
	}

	/* Between two regions, through two segments. */
	randomize(self->k + 64, 300, 8);
	memcpy(want, self->k + 64, 300);
	prog_init(&pr, 0);
	emit_copy(&pr, FLEX_ADDR(0, OFF_B + 2), FLEX_ADDR(7, 64), 300);
	emit_end(&pr);
	ASSERT_EQ(0, run_prog(self, &pr));
	EXPECT_EQ(0, memcmp(want, self->d + OFF_B + 2, 300));
	free(want);
}

TEST_F(c, fill_writes_count_int32_and_nothing_else)
{
	static const struct { __u32 off, count, value; } cases[] = {
		{ 0, 1, 7 },
		{ 4096 - 4, 3, 0xffffffff },	/* -1, across a page */
		{ 6, 5, 0x80000000 },		/* unaligned destination */
		{ 8192, 1000, 0x01020304 },
	};
	enum { AREA = 16384 };
	unsigned char *area = self->d + OFF_A, *want = malloc(AREA);
	struct prog pr;
	size_t i, j, at;

	ASSERT_NE(NULL, want);
	randomize(area, AREA, 9);
	memcpy(want, area, AREA);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (j = 0; j < cases[i].count; j++)
			memcpy(want + cases[i].off + j * 4, &cases[i].value, 4);
		prog_init(&pr, 0);
		emit_fill(&pr, FLEX_ADDR(0, OFF_A + cases[i].off), cases[i].count,
			  cases[i].value);
		emit_end(&pr);
		ASSERT_EQ(0, run_prog(self, &pr)) TH_LOG("fill case %zu", i);
		for (at = 0; at < AREA && want[at] == area[at]; at++)
			;
		EXPECT_EQ(AREA, at) TH_LOG("fill %u x 0x%x at %u: byte %zu expected 0x%02x, got 0x%02x",
					   cases[i].count, cases[i].value, cases[i].off, at,
					   want[at], area[at]);
	}
	free(want);
}

TEST_F(c, a_program_runs_its_instructions_in_order)
{
	/* out = relu(A.B + bias), with out zeroed and accumulated into. */
	static const struct mm_case s = { 8, 12, 16, 16, 12, 12 };
	__u32 *out = words(self->d, OFF_C), *bias = words(self->d, OFF_X);
	__u32 want[8 * 12];
	struct prog pr;
	size_t i;

	randomize(self->d + OFF_A, 8 * 16, 11);
	randomize(self->d + OFF_B, 16 * 12, 12);
	randomize(bias, sizeof(want), 13);
	for (i = 0; i < 8 * 12; i++)
		bias[i] = (__s32)bias[i] % 20000;	/* some sums stay positive */
	randomize(out, sizeof(want), 14);
	memset(want, 0, sizeof(want));
	ref_matmul(want, self->d + OFF_A, self->d + OFF_B, 1, 1, &s);
	for (i = 0; i < 8 * 12; i++)
		want[i] = ew_ref(FLEX_OP_RELU, want[i] + bias[i], 0);

	prog_init(&pr, 0);
	emit_fill(&pr, FLEX_ADDR(0, OFF_C), 8 * 12, 0);
	emit_matmul(&pr, FLEX_DT_I8, FLEX_INSN_ACCUMULATE, FLEX_ADDR(0, OFF_C),
		    FLEX_ADDR(0, OFF_A), FLEX_ADDR(0, OFF_B), 8, 12, 16, 12, 16, 12);
	emit_binary(&pr, FLEX_OP_ADD, FLEX_ADDR(0, OFF_C), FLEX_ADDR(0, OFF_C),
		    FLEX_ADDR(0, OFF_X), 8, 12, 12, 12, 12);
	emit_relu(&pr, FLEX_ADDR(0, OFF_C), FLEX_ADDR(0, OFF_C), 8, 12, 12, 12);
	emit_end(&pr);
	ASSERT_EQ(0, run_prog(self, &pr));
	expect_matrix(_metadata, "relu(A.B + bias)", want, out, 8 * 12, 12);
}

/* Stores the n low bytes of v, little-endian, at bin + off. */
static void put_le(unsigned char *bin, size_t off, __u64 v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		bin[off + i] = v >> (8 * i);
}

TEST_F(c, the_documented_2x2_example_runs)
{
	/* Documentation/flex/isa.rst, "Worked example", byte by byte. */
	static const __s32 a[4] = { 1, 2, 3, 4 }, b[4] = { 5, 6, 7, 8 };
	static const __s32 want[4] = { 19, 22, 43, 50 };
	__s32 *c = (__s32 *)(self->d + 0x20);
	struct flex_cb cb = launch(self);
	unsigned char bin[0x120];
	int i;

	ASSERT_EQ(HDR + 2 * INSN, sizeof(bin));
	memset(bin, 0, sizeof(bin));
	memcpy(bin, "FLXP", 4);
	put_le(bin, 0x04, 1, 2);
	put_le(bin, 0x08, 2, 4);
	bin[0x20] = 6;
	put_le(bin, 0x28, 0x20, 8);
	put_le(bin, 0x38, 0x1000000000000040ULL, 8);
	for (i = 0; i < 6; i++)
		put_le(bin, 0x40 + 8 * i, 2, 8);
	memcpy(self->p, bin, sizeof(bin));
	memcpy(self->d, a, sizeof(a));
	memcpy(self->k + 0x40, b, sizeof(b));
	cb_segment(&cb, 1, self->K.region_id, 0);
	ASSERT_EQ(0, run_cb(self->fd, self->q, cb));
	for (i = 0; i < 4; i++)
		EXPECT_EQ(want[i], c[i]) TH_LOG("C[%d][%d]", i / 2, i % 2);

	/* The corrected variant: n_slots 1, every shape and stride is slot 0. */
	bin[0x0c] = 1;
	for (i = 0; i < 6; i++)
		put_le(bin, 0x40 + 8 * i, 0x8000000000000000ULL, 8);
	memcpy(self->p, bin, sizeof(bin));
	memset(c, 0, 16);
	*(__u64 *)self->k = 1;
	ASSERT_EQ(0, run_cb(self->fd, self->q, cb));
	EXPECT_EQ(5, c[0]) TH_LOG("1x1 launch");
	EXPECT_EQ(0, c[1]) TH_LOG("1x1 launch wrote C[0][1]");
	*(__u64 *)self->k = 2;
	ASSERT_EQ(0, run_cb(self->fd, self->q, cb));
	for (i = 0; i < 4; i++)
		EXPECT_EQ(want[i], c[i]) TH_LOG("2x2 launch: C[%d][%d]", i / 2, i % 2);
}

/* Program correction. */

TEST_F(c, one_program_serves_many_tiles_by_correction)
{
	/* C[20x14] = A[20x12].B[12x14], by 8x8 tiles: 6 launches, one binary. */
	enum { M = 20, N = 14, K = 12, T = 8 };
	static const struct mm_case whole = { M, N, K, K, N, N };
	__u32 want[M * N], got[M * N];
	struct flex_cb cbs[6];
	struct prog pr;
	__u64 seq, *slots;
	int ti, tj, t = 0;

	randomize(self->d + OFF_A, M * K * 4, 21);
	randomize(self->d + OFF_B, K * N * 4, 22);
	memset(self->d + OFF_C, 0xee, M * N * 4);
	ref_matmul(want, self->d + OFF_A, self->d + OFF_B, 0, 0, &whole);

	/* Every operand is a slot: C, A, B, M, N, K, ldc, lda, ldb. */
	prog_init(&pr, 9);
	emit_matmul(&pr, FLEX_DT_I32, 0, FLEX_SLOT(0), FLEX_SLOT(1), FLEX_SLOT(2),
		    FLEX_SLOT(3), FLEX_SLOT(4), FLEX_SLOT(5), FLEX_SLOT(6),
		    FLEX_SLOT(7), FLEX_SLOT(8));
	emit_end(&pr);
	load(self, &pr);

	/* Each launch has its correction tensor at its own place in K. */
	for (ti = 0; ti < M; ti += T) {
		for (tj = 0; tj < N; tj += T, t++) {
			slots = (__u64 *)(self->k + t * 4096);
			slots[0] = FLEX_ADDR(0, OFF_C + (ti * N + tj) * 4);
			slots[1] = FLEX_ADDR(0, OFF_A + ti * K * 4);
			slots[2] = FLEX_ADDR(0, OFF_B + tj * 4);
			slots[3] = M - ti < T ? M - ti : T;
			slots[4] = N - tj < T ? N - tj : T;
			slots[5] = K;
			slots[6] = N;
			slots[7] = K;
			slots[8] = N;
			cbs[t] = launch(self);
			cbs[t].compute.segments[FLEX_SEGMENT_CORRECTION].offset = t * 4096;
		}
	}
	ASSERT_EQ(6, t);
	ASSERT_EQ(0, submit(self->fd, self->q, cbs, t, 0, &seq));
	ASSERT_EQ(0, wait_seq(self->fd, self->q, seq, 10000));
	/* Read back by DMA this time. */
	memset(got, 0, sizeof(got));
	ASSERT_EQ(0, run_cb(self->fd, self->q,
			    cb_dma(0, got, self->D.region_id, OFF_C, sizeof(got))));
	expect_matrix(_metadata, "C by tiles of 8x8", want, got, M * N, N);
	/* The binary itself was never patched. */
	EXPECT_EQ(0, memcmp(self->p, &pr, prog_size(&pr)));
}

TEST_F(c, rewritten_correction_slots_change_the_next_launch)
{
	/* FILL slot0 with slot1 elements of slot2, then ADD over a shape from slots. */
	static const struct { __u32 off, count, value, rows, cols, ld; } runs[] = {
		{ 0, 3, 5, 1, 3, 3 },
		{ 4096, 20, 0xfffffff0, 4, 5, 5 },
		{ 64, 1, 42, 1, 1, 1 },
	};
	__u64 *slots = (__u64 *)self->k;
	__u32 *dw = words(self->d, 0), want[2048];
	struct prog pr;
	size_t i, j;
	char name[64];

	prog_init(&pr, 7);
	emit_fill(&pr, FLEX_SLOT(0), FLEX_SLOT(1), FLEX_SLOT(2));
	/* dst = dst + dst over rows x cols with stride ld: doubles the fill. */
	emit_binary(&pr, FLEX_OP_ADD, FLEX_SLOT(0), FLEX_SLOT(0), FLEX_SLOT(0),
		    FLEX_SLOT(3), FLEX_SLOT(4), FLEX_SLOT(5), FLEX_SLOT(5), FLEX_SLOT(6));
	emit_end(&pr);
	load(self, &pr);
	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		memset(dw, 0, sizeof(want));
		memset(want, 0, sizeof(want));
		for (j = 0; j < runs[i].count; j++)
			want[runs[i].off / 4 + j] = runs[i].value * 2;
		slots[0] = FLEX_ADDR(0, runs[i].off);
		slots[1] = runs[i].count;
		slots[2] = runs[i].value;
		slots[3] = runs[i].rows;
		slots[4] = runs[i].cols;
		slots[5] = runs[i].ld;
		slots[6] = runs[i].ld;
		ASSERT_EQ(0, run_cb(self->fd, self->q, launch(self))) TH_LOG("launch %zu", i);
		snprintf(name, sizeof(name), "launch %zu (as rows of 1024 words)", i);
		expect_matrix(_metadata, name, want, dw, 2048, 1024);
	}
}

/* Faults. */

TEST_F(c, out_of_bounds_operands_fault_with_their_address)
{
	__u64 D = self->D.region_id;
	struct flex_cb cb = launch(self);
	__u32 k0 = *words(self->k, 0), last = 0x1a57;
	struct prog pr;

	/* Segment 1 starts in the middle of D; bounds are D's end. */
	cb_segment(&cb, 1, D, SZ / 2);
	*words(self->d, SZ - 4) = last;

	prog_init(&pr, 0);
	emit_fill(&pr, FLEX_ADDR(0, 0), 1, 5);
	emit_binary(&pr, FLEX_OP_ADD, FLEX_ADDR(0, 0), FLEX_ADDR(0, SZ - 8),
		    FLEX_ADDR(0, 0), 1, 4, 4, 4, 4);
	emit_end(&pr);
	prog_fault(_metadata, self, &pr, cb, "ADD reads a past the end",
		   (struct want){ -ERANGE, FLEX_FAULT_OUT_OF_BOUNDS, 1, D, SZ - 8 });

	prog_init(&pr, 0);
	emit_matmul(&pr, FLEX_DT_I8, 0, FLEX_ADDR(0, 0), FLEX_ADDR(0, 0),
		    FLEX_ADDR(1, SZ / 2 - 16), 2, 3, 4, 3, 4, 5);	/* B spans 18 bytes */
	emit_end(&pr);
	prog_fault(_metadata, self, &pr, cb, "MATMUL reads B past the end",
		   (struct want){ -ERANGE, FLEX_FAULT_OUT_OF_BOUNDS, 0, D, SZ - 16 });

	prog_init(&pr, 0);
	emit_fill(&pr, FLEX_ADDR(0, 0), 1, 5);
	emit_relu(&pr, FLEX_ADDR(0, 0), FLEX_ADDR(1, SZ / 2 - 4 * 9), 3, 3, 3, 4);
	emit_end(&pr);
	prog_fault(_metadata, self, &pr, cb, "RELU's strided source runs past the end",
		   (struct want){ -ERANGE, FLEX_FAULT_OUT_OF_BOUNDS, 1, D, SZ - 36 });

	prog_init(&pr, 0);
	emit_fill(&pr, FLEX_ADDR(0, 0), 1, 5);
	emit_fill(&pr, FLEX_ADDR(0, 4), 1, 5);
	emit_fill(&pr, FLEX_ADDR(1, SZ / 2 - 4), 2, 0xbad);
	emit_end(&pr);
	prog_fault(_metadata, self, &pr, cb, "FILL writes past the end",
		   (struct want){ -ERANGE, FLEX_FAULT_OUT_OF_BOUNDS, 2, D, SZ - 4 });
	EXPECT_EQ(last, *words(self->d, SZ - 4)) TH_LOG("a refused write changed D's last word");
	/* K follows D in device memory (first fit): it must be untouched. */
	EXPECT_EQ(k0, *words(self->k, 0)) TH_LOG("a write past D reached K");

	/* Row 2 of C (ldc 4, 2 columns) starts 4 bytes before the end. */
	prog_init(&pr, 0);
	emit_matmul(&pr, FLEX_DT_I32, 0, FLEX_ADDR(0, SZ - 36), FLEX_ADDR(0, 0),
		    FLEX_ADDR(0, 0), 3, 2, 1, 4, 1, 2);
	emit_end(&pr);
	prog_fault(_metadata, self, &pr, cb, "MATMUL writes row 2 of C past the end",
		   (struct want){ -ERANGE, FLEX_FAULT_OUT_OF_BOUNDS, 0, D, SZ - 4 });

	prog_init(&pr, 0);
	emit_copy(&pr, FLEX_ADDR(1, SZ / 2 - 1), FLEX_ADDR(0, 0), 2);
	emit_end(&pr);
	prog_fault(_metadata, self, &pr, cb, "COPY writes past the end",
		   (struct want){ -ERANGE, FLEX_FAULT_OUT_OF_BOUNDS, 0, D, SZ - 1 });

	prog_init(&pr, 0);
	emit_copy(&pr, FLEX_ADDR(0, 0), FLEX_ADDR(0, SZ + 4096), 4);
	emit_end(&pr);
	prog_fault(_metadata, self, &pr, cb, "COPY source offset past the end",
		   (struct want){ -ERANGE, FLEX_FAULT_OUT_OF_BOUNDS, 0, D, SZ + 4096 });

	prog_init(&pr, 0);
	emit_fill(&pr, FLEX_ADDR(0, SZ), 1, 0);
	emit_end(&pr);
	prog_fault(_metadata, self, &pr, cb, "FILL at exactly the end",
		   (struct want){ -ERANGE, FLEX_FAULT_OUT_OF_BOUNDS, 0, D, SZ });

	prog_init(&pr, 0);
	emit_fill(&pr, FLEX_ADDR(1, FLEX_ADDR_OFFSET_MASK), 1, 0);
	emit_end(&pr);
	prog_fault(_metadata, self, &pr, cb, "largest offset",
		   (struct want){ -ERANGE, FLEX_FAULT_OUT_OF_BOUNDS, 0, D,
				  SZ / 2 + FLEX_ADDR_OFFSET_MASK });

	/* A correction slot can hold an out-of-bounds address too. */
	*(__u64 *)self->k = FLEX_ADDR(0, SZ - 2);
	prog_init(&pr, 1);
	emit_fill(&pr, FLEX_SLOT(0), 1, 0);
	emit_end(&pr);
	prog_fault(_metadata, self, &pr, cb, "address from a slot past the end",
		   (struct want){ -ERANGE, FLEX_FAULT_OUT_OF_BOUNDS, 0, D, SZ - 2 });

	/* And the queue still works after each reset. */
	prog_init(&pr, 0);
	emit_fill(&pr, FLEX_ADDR(1, SZ / 2 - 4), 1, 0x600d);
	emit_end(&pr);
	load(self, &pr);
	EXPECT_EQ(0, run_cb(self->fd, self->q, cb));
	EXPECT_EQ(0x600d, *words(self->d, SZ - 4));
}

TEST_F(c, missing_segments_and_garbage_address_bits_fault)
{
	struct flex_cb cb = launch(self);
	struct prog pr;
	static const __u64 garbage[] = { 1ULL << 48, 1ULL << 52, 1ULL << 59,
					 0xfffULL << 48 };
	char name[64];
	size_t i;

	prog_init(&pr, 0);
	emit_fill(&pr, FLEX_ADDR(0, 0), 1, 5);
	emit_fill(&pr, FLEX_ADDR(3, 0), 1, 5);
	emit_end(&pr);
	prog_fault(_metadata, self, &pr, cb, "segment 3 not in the mask",
		   (struct want){ -ENXIO, FLEX_FAULT_UNMAPPED, 1, 0, FLEX_ADDR(3, 0) });

	prog_init(&pr, 0);
	emit_matmul(&pr, FLEX_DT_I32, 0, FLEX_ADDR(0, 0), FLEX_ADDR(0, 0),
		    FLEX_ADDR(6, 64), 1, 1, 1, 1, 1, 1);
	emit_end(&pr);
	prog_fault(_metadata, self, &pr, cb, "MATMUL B in segment 6, not in the mask",
		   (struct want){ -ENXIO, FLEX_FAULT_UNMAPPED, 0, 0, FLEX_ADDR(6, 64) });

	for (i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++) {
		prog_init(&pr, 0);
		emit_fill(&pr, FLEX_ADDR(0, 16) | garbage[i], 1, 5);
		emit_end(&pr);
		snprintf(name, sizeof(name), "address bits 0x%llx", (unsigned long long)garbage[i]);
		prog_fault(_metadata, self, &pr, cb, name,
			   (struct want){ -ERANGE, FLEX_FAULT_OUT_OF_BOUNDS, 0, 0,
					  FLEX_ADDR(0, 16) | garbage[i] });
	}

	/* A slot value is used as is: its bit 63 is no second indirection. */
	*(__u64 *)self->k = FLEX_SLOT(0);
	prog_init(&pr, 1);
	emit_copy(&pr, FLEX_ADDR(0, 0), FLEX_SLOT(0), 4);
	emit_end(&pr);
	prog_fault(_metadata, self, &pr, cb, "slot value with bit 63",
		   (struct want){ -ERANGE, FLEX_FAULT_OUT_OF_BOUNDS, 0, 0, FLEX_SLOT(0) });
	EXPECT_EQ(0, *words(self->d, 16)) TH_LOG("a faulting FILL wrote");
}

TEST_F(c, correction_slots_past_segment_7_fault)
{
	__u64 K = self->K.region_id;
	struct flex_cb cb = launch(self);
	struct prog pr;

	prog_init(&pr, 3);
	emit_fill(&pr, FLEX_ADDR(0, 0), 1, 5);
	emit_fill(&pr, FLEX_ADDR(0, 0), 1, FLEX_SLOT(2));
	emit_end(&pr);

	cb.compute.segments[FLEX_SEGMENT_CORRECTION].offset = SZ - 16;
	prog_fault(_metadata, self, &pr, cb, "3 slots, 2 left in K",
		   (struct want){ -ERANGE, FLEX_FAULT_OUT_OF_BOUNDS, 0, K, SZ - 16 });
	cb.compute.segments[FLEX_SEGMENT_CORRECTION].offset = SZ;
	prog_fault(_metadata, self, &pr, cb, "segment 7 at the end of K",
		   (struct want){ -ERANGE, FLEX_FAULT_OUT_OF_BOUNDS, 0, K, SZ });
	cb.compute.segment_mask &= ~(1U << FLEX_SEGMENT_CORRECTION);
	cb.compute.segments[FLEX_SEGMENT_CORRECTION] = (struct flex_va){ 0, 0 };
	prog_fault(_metadata, self, &pr, cb, "slots without segment 7",
		   (struct want){ -ENXIO, FLEX_FAULT_UNMAPPED, 0, 0,
				  FLEX_ADDR(FLEX_SEGMENT_CORRECTION, 0) });
	/* Nothing ran: the slots are read before the first instruction. */
	EXPECT_EQ(0, *words(self->d, 0));

	/* Exactly filling K's end is fine. */
	cb = launch(self);
	cb.compute.segments[FLEX_SEGMENT_CORRECTION].offset = SZ - 24;
	*(__u64 *)(self->k + SZ - 8) = 77;
	load(self, &pr);
	EXPECT_EQ(0, run_cb(self->fd, self->q, cb));
	EXPECT_EQ(77, *words(self->d, 0));
}

TEST_F(c, a_program_running_past_its_region_is_bad_program)
{
	__u64 at = SZ - HDR - INSN;
	struct flex_cb cb = launch(self);
	struct prog pr;

	prog_init(&pr, 0);
	emit_fill(&pr, FLEX_ADDR(0, 0), 1, 5);
	emit_end(&pr);
	/* Two instructions, room for one. */
	memcpy(self->p + at, &pr, HDR + INSN);
	cb.compute.program.offset = at;
	expect_fault(_metadata, self->fd, self->q, cb, "program past its region",
		     (struct want){ -ENOEXEC, FLEX_FAULT_BAD_PROGRAM, 0,
				    self->P.region_id, at });
	EXPECT_EQ(0, *words(self->d, 0));

	/* The same program one instruction earlier fits and runs. */
	at -= INSN;
	memcpy(self->p + at, &pr, prog_size(&pr));
	cb.compute.program.offset = at;
	EXPECT_EQ(0, run_cb(self->fd, self->q, cb));
	EXPECT_EQ(5, *words(self->d, 0));
}

/* Queues cb with the engines held, releases region g, then lets cb run. */
static void release_before_run(struct __test_metadata *_metadata,
			       FIXTURE_DATA(c) *self, struct flex_cb cb, __u64 g,
			       const char *name, struct want w)
{
	__u64 seq;

	cb.user_data = 0xc0de;
	ASSERT_EQ(0, engines_pause(1));
	ASSERT_EQ(0, submit(self->fd, self->q, &cb, 1, 0, &seq)) TH_LOG("%s: submit", name);
	ASSERT_EQ(0, flex_release(self->fd, g)) TH_LOG("%s: release", name);
	ASSERT_EQ(0, engines_pause(0));
	check_fault(_metadata, self->fd, self->q, seq, name, w);
}

TEST_F(c, a_region_released_before_the_cb_runs_faults_unmapped)
{
	struct flex_region_acquire g;
	struct flex_cb cb;
	struct prog pr;

	ASSERT_EQ(0, flex_acquire(self->fd, SZ, &g));
	prog_init(&pr, 0);
	emit_fill(&pr, FLEX_ADDR(0, 0), 1, 5);
	emit_fill(&pr, FLEX_ADDR(1, 64), 1, 5);
	emit_end(&pr);
	load(self, &pr);
	cb = launch(self);
	cb_segment(&cb, 1, g.region_id, 0);
	release_before_run(_metadata, self, cb, g.region_id, "a data segment's region",
			   (struct want){ -ENXIO, FLEX_FAULT_UNMAPPED, 1, g.region_id, 64 });

	/* The program, stored by DMA this time. */
	ASSERT_EQ(0, flex_acquire(self->fd, SZ, &g));
	prog_init(&pr, 0);
	emit_fill(&pr, FLEX_ADDR(0, 8), 1, 5);
	emit_end(&pr);
	ASSERT_EQ(0, run_cb(self->fd, self->q, cb_dma(1, &pr, g.region_id, 4096, prog_size(&pr))));
	cb = launch(self);
	cb.compute.program = (struct flex_va){ g.region_id, 4096 };
	release_before_run(_metadata, self, cb, g.region_id, "the program's region",
			   (struct want){ -ENXIO, FLEX_FAULT_UNMAPPED, 0, g.region_id, 4096 });

	ASSERT_EQ(0, flex_acquire(self->fd, SZ, &g));
	prog_init(&pr, 1);
	emit_fill(&pr, FLEX_ADDR(0, 12), 1, FLEX_SLOT(0));
	emit_end(&pr);
	load(self, &pr);
	cb = launch(self);
	cb.compute.segments[FLEX_SEGMENT_CORRECTION] = (struct flex_va){ g.region_id, 128 };
	release_before_run(_metadata, self, cb, g.region_id, "the correction tensor's region",
			   (struct want){ -ENXIO, FLEX_FAULT_UNMAPPED, 0, g.region_id, 128 });

	/* Only the first data FILL ran. */
	EXPECT_EQ(5, *words(self->d, 0));
	EXPECT_EQ(0, *words(self->d, 8));
	EXPECT_EQ(0, *words(self->d, 12));
}

TEST_F(c, cbs_behind_a_faulting_program_do_not_run)
{
	struct flex_cb cbs[3];
	struct prog pr;
	__u64 seq;

	prog_init(&pr, 0);
	emit_fill(&pr, FLEX_ADDR(0, 0), 1, 1);
	emit_end(&pr);
	memcpy(self->p, &pr, prog_size(&pr));
	prog_init(&pr, 0);
	emit_fill(&pr, FLEX_ADDR(0, SZ), 1, 2);
	emit_end(&pr);
	memcpy(self->p + 8192, &pr, prog_size(&pr));
	prog_init(&pr, 0);
	emit_fill(&pr, FLEX_ADDR(0, 4), 1, 3);
	emit_end(&pr);
	memcpy(self->p + 16384, &pr, prog_size(&pr));
	cbs[0] = launch(self);
	cbs[1] = launch(self);
	cbs[1].compute.program.offset = 8192;
	cbs[2] = launch(self);
	cbs[2].compute.program.offset = 16384;
	ASSERT_EQ(0, submit(self->fd, self->q, cbs, 3, 0, &seq));
	EXPECT_EQ(0, wait_seq(self->fd, self->q, seq - 2, 10000));
	EXPECT_EQ(-ERANGE, wait_seq(self->fd, self->q, seq - 1, 10000));
	EXPECT_EQ(-ERANGE, wait_seq(self->fd, self->q, seq, 10000));
	EXPECT_EQ(seq - 1, queue_status(self->fd, self->q).fault_seqno);
	EXPECT_EQ(1, *words(self->d, 0));
	EXPECT_EQ(0, *words(self->d, 4));
	EXPECT_EQ(-EIO, submit(self->fd, self->q, cbs, 1, 0, NULL));
}

/*
 * The base of the malformed programs: valid, it stores slot 1 at D+0 and
 * runs a 1x1x1 matmul; every case below breaks one rule of it.
 */
static void base_program(struct prog *pr)
{
	prog_init(pr, 2);
	emit_fill(pr, FLEX_ADDR(0, 0), 1, FLEX_SLOT(1));
	emit_matmul(pr, FLEX_DT_I32, 0, FLEX_ADDR(0, 64), FLEX_ADDR(0, 0),
		    FLEX_ADDR(0, 0), 1, 1, 1, 1, 1, 1);
	emit_end(pr);
}

TEST_F(c, malformed_programs_fault_bad_program_at_the_right_insn)
{
	static const __u8 bad_dtypes[] = { 5, 6, 7, 8, 31, 32, 33, 63, 64, 65, 128, 129, 255 };
	struct flex_cb cb = launch(self);
	__u64 P = self->P.region_id;
	struct prog pr;
	char name[64];
	size_t i;

	/* The base runs, so each case fails by its one change. */
	((__u64 *)self->k)[1] = 0x1234;
	base_program(&pr);
	ASSERT_EQ(0, run_prog(self, &pr));
	ASSERT_EQ(0x1234, *words(self->d, 0));
	ASSERT_EQ(0x1234 * 0x1234, *words(self->d, 64));
	*words(self->d, 0) = 0;

#define BAD(insn_, what, ...) do {						\
		base_program(&pr);						\
		{ __VA_ARGS__; }						\
		prog_fault(_metadata, self, &pr, cb, what,			\
			   (struct want){ -ENOEXEC, FLEX_FAULT_BAD_PROGRAM,	\
					  (insn_) < 0 ? 0 : (insn_), P,		\
					  (insn_) < 0 ? 0 : HDR + (insn_) * INSN }); \
		/* Validated before running: the first FILL did not run. */	\
		EXPECT_EQ(0, *words(self->d, 0)) TH_LOG("%s: an instruction ran", what); \
		*words(self->d, 0) = 0;	/* one failure stays one */		\
	} while (0)
#define HEADER	-1

	BAD(HEADER, "bad magic", pr.h.magic ^= 1);
	BAD(HEADER, "version 0", pr.h.version = 0);
	BAD(HEADER, "version 2", pr.h.version = FLEX_PROG_VERSION + 1);
	BAD(HEADER, "header flags", pr.h.flags = 1);
	BAD(HEADER, "header flags bit 15", pr.h.flags = 0x8000);
	BAD(HEADER, "reserved[0]", pr.h.reserved[0] = 1);
	BAD(HEADER, "reserved[1]", pr.h.reserved[1] = 1ULL << 63);
	BAD(HEADER, "n_insns 0", pr.h.n_insns = 0);
	BAD(HEADER, "n_insns over the max", pr.h.n_insns = FLEX_PROG_MAX_INSNS + 1);
	BAD(HEADER, "n_insns huge", pr.h.n_insns = 0xffffffff);
	BAD(HEADER, "n_slots over the max", pr.h.n_slots = FLEX_PROG_MAX_SLOTS + 1);
	BAD(2, "missing END", pr.insn[2] = pr.insn[0]);
	BAD(2, "n_insns 4: END not last", pr.h.n_insns = 4);
	BAD(0, "END first", memset(&pr.insn[0], 0, INSN));
	BAD(1, "END in the middle", memset(&pr.insn[1], 0, INSN));
	BAD(1, "opcode 7", pr.insn[1].op = 7);
	BAD(1, "opcode 255", pr.insn[1].op = 255);
	BAD(2, "END with a float type", pr.insn[2].dtype = FLEX_DT_BF16);
	BAD(2, "END with int8", pr.insn[2].dtype = FLEX_DT_I8);
	for (i = 0; i < sizeof(bad_dtypes); i++) {
		snprintf(name, sizeof(name), "MATMUL dtype %u", bad_dtypes[i]);
		BAD(1, name, pr.insn[1].dtype = bad_dtypes[i]);
		snprintf(name, sizeof(name), "FILL dtype %u", bad_dtypes[i]);
		BAD(0, name, pr.insn[0].dtype = bad_dtypes[i]);
	}
	BAD(0, "FILL with ACCUMULATE", pr.insn[0].flags = FLEX_INSN_ACCUMULATE);
	BAD(1, "MATMUL flag 2", pr.insn[1].flags = 2);
	BAD(1, "MATMUL flag 0x8000", pr.insn[1].flags = 0x8000 | FLEX_INSN_ACCUMULATE);
	BAD(2, "END flags", pr.insn[2].flags = 1);
	BAD(1, "insn reserved", pr.insn[1].reserved = 1);
	BAD(2, "END reserved", pr.insn[2].reserved = 0x80000000);
	BAD(0, "FILL arg 3", pr.insn[0].arg[3] = 1);
	BAD(0, "FILL arg 14", pr.insn[0].arg[14] = 1ULL << 63);
	BAD(1, "MATMUL arg 10 (arg 9 is acc)", pr.insn[1].arg[10] = 1);
	BAD(2, "END arg 0", pr.insn[2].arg[0] = 1);
	BAD(0, "slot index == n_slots", pr.insn[0].arg[2] = FLEX_SLOT(2));
	BAD(0, "slot index huge", pr.insn[0].arg[2] = FLEX_SLOT(0xffffffff));
	BAD(0, "a slot with n_slots 0", pr.h.n_slots = 0);
	BAD(1, "MATMUL slot past n_slots", pr.insn[1].arg[5] = FLEX_SLOT(7));
	BAD(0, "slot with bit 32", pr.insn[0].arg[2] |= 1ULL << 32);
	BAD(0, "slot with bit 62", pr.insn[0].arg[2] |= 1ULL << 62);
	BAD(1, "address slot with high bits", pr.insn[1].arg[0] = FLEX_SLOT(0) | 0xff00000000ULL);
#undef BAD
#undef HEADER
	/* Nothing stuck: the base still runs. */
	base_program(&pr);
	EXPECT_EQ(0, run_prog(self, &pr));
	EXPECT_EQ(0x1234, *words(self->d, 0));
}

TEST_F(c, a_stride_shorter_than_its_row_is_bad_program_at_run_time)
{
	struct flex_cb cb = launch(self);
	struct prog pr;

	prog_init(&pr, 0);
	emit_fill(&pr, FLEX_ADDR(0, 0), 1, 5);
	emit_binary(&pr, FLEX_OP_ADD, FLEX_ADDR(0, 0), FLEX_ADDR(0, 0), FLEX_ADDR(0, 0),
		    2, 4, 4, 3, 4);
	emit_end(&pr);
	prog_fault(_metadata, self, &pr, cb, "ADD lda < cols",
		   (struct want){ -ENOEXEC, FLEX_FAULT_BAD_PROGRAM, 1, 0, 0 });

	prog_init(&pr, 0);
	emit_relu(&pr, FLEX_ADDR(0, 0), FLEX_ADDR(0, 0), 2, 4, 3, 4);
	emit_end(&pr);
	prog_fault(_metadata, self, &pr, cb, "RELU ld_dst < cols",
		   (struct want){ -ENOEXEC, FLEX_FAULT_BAD_PROGRAM, 0, 0, 0 });

	prog_init(&pr, 0);
	emit_matmul(&pr, FLEX_DT_I32, 0, FLEX_ADDR(0, 0), FLEX_ADDR(0, 0),
		    FLEX_ADDR(0, 0), 2, 3, 4, 3, 4, 2);
	emit_end(&pr);
	prog_fault(_metadata, self, &pr, cb, "MATMUL ldb < N",
		   (struct want){ -ENOEXEC, FLEX_FAULT_BAD_PROGRAM, 0, 0, 0 });
}

TEST_F(c, device_limits_fault_e2big)
{
	const __u64 E = FLEX_ISA_MAX_ELEMENTS;
	struct flex_cb cb = launch(self);
	struct prog pr;

#define LIMIT(insn_, what, ...) do {						\
		prog_init(&pr, 2);						\
		emit_fill(&pr, FLEX_ADDR(0, 0), 1, 5);				\
		{ __VA_ARGS__; }						\
		emit_end(&pr);							\
		prog_fault(_metadata, self, &pr, cb, what,			\
			   (struct want){ -E2BIG, FLEX_FAULT_LIMIT, insn_, 0, 0 }); \
	} while (0)

	LIMIT(1, "FILL count over max elements", emit_fill(&pr, FLEX_ADDR(0, 0), E + 1, 0));
	LIMIT(1, "COPY over max elements * 4 bytes",
	      emit_copy(&pr, FLEX_ADDR(0, 0), FLEX_ADDR(0, 0), E * 4 + 1));
	LIMIT(1, "ADD rows * cols over max",
	      emit_binary(&pr, FLEX_OP_ADD, FLEX_ADDR(0, 0), FLEX_ADDR(0, 0),
			  FLEX_ADDR(0, 0), 4097, 4096, 4096, 4096, 4096));
	LIMIT(1, "RELU one row over max",
	      emit_relu(&pr, FLEX_ADDR(0, 0), FLEX_ADDR(0, 0), 1, E + 1, E + 1, E + 1));
	LIMIT(1, "MUL destination span over max",
	      emit_binary(&pr, FLEX_OP_MUL, FLEX_ADDR(0, 0), FLEX_ADDR(0, 0),
			  FLEX_ADDR(0, 0), 2, 1, E, 1, 1));
	LIMIT(1, "ADD source span over max",
	      emit_binary(&pr, FLEX_OP_ADD, FLEX_ADDR(0, 0), FLEX_ADDR(0, 0),
			  FLEX_ADDR(0, 0), 2, 1, 1, 1, E));
	LIMIT(1, "MATMUL M * N over max elements",
	      emit_matmul(&pr, FLEX_DT_I32, 0, FLEX_ADDR(0, 0), FLEX_ADDR(0, 0),
			  FLEX_ADDR(0, 0), 4097, 4096, 1, 4096, 1, 4096));
	LIMIT(1, "MATMUL MACs over max",
	      emit_matmul(&pr, FLEX_DT_I8, 0, FLEX_ADDR(0, 0), FLEX_ADDR(0, 0),
			  FLEX_ADDR(0, 0), 4096, 4096, 17, 4096, 17, 4096));
	LIMIT(1, "MATMUL A span over max",
	      emit_matmul(&pr, FLEX_DT_I8, 0, FLEX_ADDR(0, 0), FLEX_ADDR(0, 0),
			  FLEX_ADDR(0, 0), 1, 1, E + 1, 1, E + 1, 1));
	LIMIT(1, "FILL value 2^32", emit_fill(&pr, FLEX_ADDR(0, 0), 1, 1ULL << 32));
	LIMIT(1, "ADD rows 2^32",
	      emit_binary(&pr, FLEX_OP_ADD, FLEX_ADDR(0, 0), FLEX_ADDR(0, 0),
			  FLEX_ADDR(0, 0), 1ULL << 32, 1, 1, 1, 1));
	LIMIT(1, "COPY bytes 2^63 - 1",
	      emit_copy(&pr, FLEX_ADDR(0, 0), FLEX_ADDR(0, 0), ~0ULL >> 1));
	((__u64 *)self->k)[0] = 1ULL << 40;
	((__u64 *)self->k)[1] = 1ULL << 63;
	LIMIT(1, "MATMUL ldb 2^40 from a slot",
	      emit_matmul(&pr, FLEX_DT_I32, 0, FLEX_ADDR(0, 0), FLEX_ADDR(0, 0),
			  FLEX_ADDR(0, 0), 1, 1, 1, 1, 1, FLEX_SLOT(0)));
	LIMIT(1, "FILL count with bit 63 from a slot",
	      emit_fill(&pr, FLEX_ADDR(0, 0), FLEX_SLOT(1), 0));
#undef LIMIT

	/* At the limit it is no LIMIT fault: the 64 MiB source leaves D. */
	prog_init(&pr, 0);
	emit_copy(&pr, FLEX_ADDR(0, 0), FLEX_ADDR(0, 0), E * 4);
	emit_end(&pr);
	prog_fault(_metadata, self, &pr, cb, "COPY of exactly the limit",
		   (struct want){ -ERANGE, FLEX_FAULT_OUT_OF_BOUNDS, 0,
				  self->D.region_id, 0 });
}

TEST_F(c, compute_cbs_are_checked_at_submission)
{
	struct flex_cb cb;

#define SUBMIT(errno_, ...) do {						\
		cb = launch(self);						\
		{ __VA_ARGS__; }						\
		EXPECT_EQ(errno_, submit(self->fd, self->q, &cb, 1, 0, NULL))	\
			TH_LOG("%s", #__VA_ARGS__);				\
	} while (0)
	SUBMIT(-ENOENT, cb.compute.program.region_id = 12345);
	SUBMIT(-ENOENT, cb_segment(&cb, 2, 12345, 0));
	SUBMIT(-ERANGE, cb.compute.program.offset = SZ - HDR + 1);
	SUBMIT(-ERANGE, cb.compute.program.offset = SZ + 4096);
	SUBMIT(-ERANGE, cb_segment(&cb, 3, self->D.region_id, SZ + 1));
	SUBMIT(-EINVAL, cb.compute.segment_mask = 1 << FLEX_NUM_SEGMENTS);
	SUBMIT(-EINVAL, cb.compute.segment_mask &= ~1U);	/* segment 0 set, bit clear */
	SUBMIT(-EINVAL, cb.compute.pad = 1);
	SUBMIT(-EINVAL, cb.flags = 1);
#undef SUBMIT
	EXPECT_EQ(0, queue_status(self->fd, self->q).submitted);
}

/* Two VFs and program operands. */

FIXTURE(vfs) {
	int vf0, vf1;
	struct flex_region_acquire a0, s0, b1;
	unsigned char *pa0, *ps0, *pb1;
};

FIXTURE_SETUP(vfs)
{
	ASSERT_EQ(0, set_numvfs(2));
	self->vf0 = flex_open("/dev/flex0vf0");
	self->vf1 = flex_open("/dev/flex0vf1");
	ASSERT_LE(0, self->vf0);
	ASSERT_LE(0, self->vf1);
	self->pa0 = acquire_mapped(_metadata, self->vf0, &self->a0);
	self->ps0 = acquire_mapped(_metadata, self->vf0, &self->s0);
	self->pb1 = acquire_mapped(_metadata, self->vf1, &self->b1);
}

FIXTURE_TEARDOWN(vfs)
{
	munmap(self->pa0, SZ);
	munmap(self->ps0, SZ);
	munmap(self->pb1, SZ);
	close(self->vf0);
	close(self->vf1);
	EXPECT_EQ(0, set_numvfs(0));
}

TEST_F(vfs, two_vfs_cannot_reach_each_others_memory_by_program_operands)
{
	int q0 = queue_create(self->vf0, FLEX_QUEUE_PRIO_NORMAL, 0);
	int q1 = queue_create(self->vf1, FLEX_QUEUE_PRIO_NORMAL, 0);
	__u64 id1 = self->s0.region_id;		/* only vf0 has it */
	struct flex_cb cb;
	struct prog pr;
	size_t i, leaked = 0, clobbered = 0;
	int pf, qp;

	ASSERT_LT(0, q0);
	ASSERT_LT(0, q1);
	ASSERT_EQ(self->a0.region_id, self->b1.region_id);	/* both id 0 */
	ASSERT_NE(self->a0.region_id, id1);

	/* vf0: secrets in both its regions, copied by its own program. */
	for (i = 0; i < 4096; i++) {
		self->pa0[0x10000 + i] = 0xa0 ^ i;
		self->ps0[i] = 0x5e ^ i;
	}
	prog_init(&pr, 0);
	emit_copy(&pr, FLEX_ADDR(0, 0x20000), FLEX_ADDR(1, 0), 4096);
	emit_end(&pr);
	memcpy(self->pa0, &pr, prog_size(&pr));
	cb = cb_compute(self->a0.region_id, 0);
	cb_segment(&cb, 0, self->a0.region_id, 0);
	cb_segment(&cb, 1, id1, 0);
	ASSERT_EQ(0, run_cb(self->vf0, q0, cb));
	ASSERT_EQ(0, memcmp(self->ps0, self->pa0 + 0x20000, 4096));

	/* vf1 cannot name vf0's id 1 anywhere in a compute CB. */
	EXPECT_EQ(-ENOENT, submit(self->vf1, q1, &cb, 1, 0, NULL));
	cb = cb_compute(id1, 0);
	EXPECT_EQ(-ENOENT, submit(self->vf1, q1, &cb, 1, 0, NULL));
	cb = cb_compute(self->b1.region_id, 0);
	cb_segment(&cb, FLEX_SEGMENT_CORRECTION, id1, 0);
	EXPECT_EQ(-ENOENT, submit(self->vf1, q1, &cb, 1, 0, NULL));

	/* vf1's id 0 is its own region: none of vf0's data, and vf0's stays. */
	prog_init(&pr, 0);
	emit_copy(&pr, FLEX_ADDR(0, 0x30000), FLEX_ADDR(0, 0x10000), 4096);
	emit_fill(&pr, FLEX_ADDR(0, 0x20000), 1024, 0x77777777);
	emit_end(&pr);
	memcpy(self->pb1, &pr, prog_size(&pr));
	memset(self->pb1 + 0x30000, 0xff, 4096);
	cb = cb_compute(self->b1.region_id, 0);
	cb_segment(&cb, 0, self->b1.region_id, 0);
	ASSERT_EQ(0, run_cb(self->vf1, q1, cb));
	for (i = 0; i < 4096; i++) {
		leaked += self->pb1[0x30000 + i] != 0;
		clobbered += self->pa0[0x20000 + i] != (unsigned char)(0x5e ^ i);
	}
	EXPECT_EQ(0, leaked) TH_LOG("vf1 read vf0's bytes through its own id 0");
	EXPECT_EQ(0, clobbered) TH_LOG("vf1's FILL reached vf0's region");
	EXPECT_EQ(0x77777777, *(__u32 *)(self->pb1 + 0x20000));

	/* Past its own region's end is a fault, not the neighbour's memory. */
	prog_init(&pr, 0);
	emit_copy(&pr, FLEX_ADDR(0, 0x30000), FLEX_ADDR(0, SZ), 4096);
	emit_end(&pr);
	memcpy(self->pb1, &pr, prog_size(&pr));
	expect_fault(_metadata, self->vf1, q1, cb, "vf1 reads past its region",
		     (struct want){ -ERANGE, FLEX_FAULT_OUT_OF_BOUNDS, 0,
				    self->b1.region_id, SZ });

	/* Nor does the PF reach a VF region by its physical address. */
	pf = flex_open(FLEX_PF);
	ASSERT_LE(0, pf);
	qp = queue_create(pf, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, qp);
	cb = cb_compute(sysfs_num(FLEX_SYSFS "/regions/%llu/phys_addr",
				  (unsigned long long)self->s0.handle), 0);
	EXPECT_EQ(-ENOENT, submit(pf, qp, &cb, 1, 0, NULL));
	close(pf);
}

TEST_HARNESS_MAIN
