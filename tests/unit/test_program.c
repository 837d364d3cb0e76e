// SPDX-License-Identifier: GPL-2.0
/*
 * flex ISA programs (flex/program.h): the builder, the device's validation
 * rules one by one, program files, and the standard kernels' binaries,
 * signatures and correction slots.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <flex/program.h>

#include "unit_util.h"

/* A valid program: FILL then MATMUL reading slot 2, then END. */
static void sample(void **buf, size_t *len)
{
	struct flex_program *p;
	uint64_t fill[3] = { FLEX_ADDR(0, 0x100), 16, 7 };
	uint64_t mm[10] = { FLEX_ADDR(0, 0), FLEX_ADDR(1, 0), FLEX_SLOT(2), 2, 2, 2, 2, 2, 2, 0 };

	ck_assert_int_eq(flex_program_new(&p), 0);
	ck_assert_int_eq(flex_program_emit(p, FLEX_OP_FILL, FLEX_DT_I32, 0, fill, 3), 0);
	ck_assert_int_eq(flex_program_emit(p, FLEX_OP_MATMUL, FLEX_DT_I8, FLEX_INSN_ACCUMULATE,
					   mm, 10), 0);
	ck_assert_int_eq(flex_program_finish(p, buf, len), 0);
	flex_program_destroy(p);
}

static struct flex_insn *insn(void *buf, unsigned int i)
{
	return (struct flex_insn *)((char *)buf + FLEX_PROG_HEADER_SIZE + i * FLEX_PROG_INSN_SIZE);
}

static struct flex_prog_header *hdr(void *buf)
{
	return buf;
}

/* Corrupt a copy of the sample with @mutate; expect -ENOEXEC and @needle. */
#define EXPECT_BAD(what, mutate, needle)                                                   \
	do {                                                                               \
		void *b;                                                                   \
		size_t l;                                                                  \
		int r;                                                                     \
		sample(&b, &l);                                                            \
		mutate;                                                                    \
		r = flex_program_validate(b, l, NULL);                   \
		ck_assert_msg(r == -ENOEXEC, "%s: expected -ENOEXEC, got %d (%s)", what, r, \
			      flex_last_error());                                          \
		ck_assert_msg(strstr(flex_last_error(), needle), "%s: message \"%s\" lacks \"%s\"", what, \
			      flex_last_error(), needle);                                  \
		free(b);                                                                   \
	} while (0)

START_TEST(builder_output)
{
	struct flex_program_info info;
	void *buf;
	size_t len;

	sample(&buf, &len);
	ck_assert_uint_eq(len, 32 + 3 * 128);
	ck_assert_uint_eq(hdr(buf)->magic, FLEX_PROG_MAGIC);
	ck_assert_uint_eq(hdr(buf)->version, FLEX_PROG_VERSION);
	ck_assert_uint_eq(hdr(buf)->n_insns, 3);
	ck_assert_uint_eq(hdr(buf)->n_slots, 3);	/* slot 2 referenced */
	ck_assert_uint_eq(insn(buf, 1)->op, FLEX_OP_MATMUL);
	ck_assert_uint_eq(insn(buf, 1)->dtype, FLEX_DT_I8);
	ck_assert_uint_eq(insn(buf, 1)->arg[2], FLEX_SLOT(2));
	ck_assert_uint_eq(insn(buf, 2)->op, FLEX_OP_END);
	ck_assert_int_eq(flex_program_validate(buf, len, &info), 0);
	ck_assert_uint_eq(info.n_insns, 3);
	ck_assert_uint_eq(info.n_slots, 3);
	ck_assert_uint_eq(info.slots_used, 3);
	ck_assert_uint_eq(info.size, len);
	free(buf);
}
END_TEST

START_TEST(builder_refuses)
{
	struct flex_program *p;
	uint64_t a[10] = { 0 };
	void *buf;
	size_t len;

	ck_assert_int_eq(flex_program_new(&p), 0);
	ck_assert_int_eq(flex_program_emit(p, FLEX_OP_END, 0, 0, NULL, 0), -EINVAL);
	ck_assert_int_eq(flex_program_emit(p, 42, 0, 0, NULL, 0), -EINVAL);
	ck_assert_int_eq(flex_program_emit(p, FLEX_OP_ADD, FLEX_DT_I8, 0, a, 8), -EINVAL);
	ck_assert_int_eq(flex_program_emit(p, FLEX_OP_ADD, 0, FLEX_INSN_ACCUMULATE, a, 8), -EINVAL);
	ck_assert_int_eq(flex_program_emit(p, FLEX_OP_RELU, 0, 0, a, 7), -EINVAL);
	a[0] = FLEX_ARG_SLOT_BIT | (1ULL << 40);
	ck_assert_int_eq(flex_program_emit(p, FLEX_OP_COPY, 0, 0, a, 3), -EINVAL);
	a[0] = FLEX_SLOT(FLEX_PROG_MAX_SLOTS);
	ck_assert_int_eq(flex_program_emit(p, FLEX_OP_COPY, 0, 0, a, 3), -EINVAL);
	a[0] = FLEX_SLOT(4);
	ck_assert_int_eq(flex_program_emit(p, FLEX_OP_COPY, 0, 0, a, 3), 0);
	ck_assert_int_eq(flex_program_set_slots(p, 4), -EINVAL);
	ck_assert_int_eq(flex_program_set_slots(p, FLEX_PROG_MAX_SLOTS + 1), -EINVAL);
	ck_assert_int_eq(flex_program_set_slots(p, 9), 0);
	ck_assert_int_eq(flex_program_finish(p, &buf, &len), 0);
	ck_assert_uint_eq(hdr(buf)->n_slots, 9);
	ck_assert_uint_eq(hdr(buf)->n_insns, 2);
	free(buf);
	/* Fill up to the limit: the last place is END's. */
	a[0] = 0;
	for (unsigned int i = 1; i < FLEX_PROG_MAX_INSNS - 1; i++)
		ck_assert_int_eq(flex_program_emit(p, FLEX_OP_COPY, 0, 0, a, 3), 0);
	ck_assert_int_eq(flex_program_emit(p, FLEX_OP_COPY, 0, 0, a, 3), -E2BIG);
	ck_assert_int_eq(flex_program_finish(p, &buf, &len), 0);
	ck_assert_uint_eq(len, FLEX_PROG_MAX_BYTES);
	ck_assert_int_eq(flex_program_validate(buf, len, NULL), 0);
	free(buf);
	flex_program_destroy(p);
}
END_TEST

START_TEST(validation_rules)
{
	char msg[128];

	ck_assert_int_eq(flex_program_validate(NULL, 0, NULL), -EINVAL);
	ck_assert_int_eq(flex_program_validate(msg, 10, NULL), -ENOEXEC);
	EXPECT_BAD("magic", hdr(b)->magic ^= 1, "magic");
	EXPECT_BAD("version", hdr(b)->version = 2, "version 2");
	EXPECT_BAD("flags", hdr(b)->flags = 1, "flags");
	EXPECT_BAD("reserved", hdr(b)->reserved[1] = 1, "reserved");
	EXPECT_BAD("n_insns 0", hdr(b)->n_insns = 0, "n_insns 0");
	EXPECT_BAD("n_insns big", hdr(b)->n_insns = FLEX_PROG_MAX_INSNS + 1, "n_insns 1025");
	EXPECT_BAD("n_slots", hdr(b)->n_slots = FLEX_PROG_MAX_SLOTS + 1, "n_slots 1025");
	EXPECT_BAD("truncated", l -= 1, "truncated");
	EXPECT_BAD("trailing", hdr(b)->n_insns = 2, "trailing");
	EXPECT_BAD("opcode", insn(b, 0)->op = 9, "insn 0: unknown opcode 9");
	EXPECT_BAD("no END", insn(b, 2)->op = FLEX_OP_COPY, "insn 2 (COPY): the last");
	EXPECT_BAD("early END", memset(insn(b, 1), 0, 128), "insn 1 (END): END before");
	EXPECT_BAD("dtype", insn(b, 0)->dtype = FLEX_DT_F16 + 1, "insn 0 (FILL): dtype 5");
	EXPECT_BAD("float COPY", insn(b, 0)->op = FLEX_OP_COPY; insn(b, 0)->dtype = FLEX_DT_F32,
		   "insn 0 (COPY): dtype 2");
	EXPECT_BAD("flags", insn(b, 0)->flags = FLEX_INSN_ACCUMULATE, "insn 0 (FILL): flags");
	EXPECT_BAD("insn reserved", insn(b, 1)->reserved = 3, "insn 1 (MATMUL): reserved");
	EXPECT_BAD("unused arg", insn(b, 1)->arg[10] = 5, "arg[10] is 0x5");
	EXPECT_BAD("END arg", insn(b, 2)->arg[0] = 1, "insn 2 (END): arg[0]");
	EXPECT_BAD("slot bits", insn(b, 1)->arg[2] |= 1ULL << 40, "bits 32..62");
	EXPECT_BAD("slot beyond", hdr(b)->n_slots = 2, "reads slot 2, the program declares 2");
}
END_TEST

START_TEST(file_round_trip)
{
	char dir[] = "/tmp/flex-prog-XXXXXX", path[128];
	void *buf, *back;
	size_t len, blen;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/p.bin", dir);
	sample(&buf, &len);
	ck_assert_int_eq(flex_program_write_file(path, buf, len), 0);
	ck_assert_int_eq(flex_program_read_file(path, &back, &blen), 0);
	ck_assert_uint_eq(blen, len);
	ck_assert_msg(!memcmp(buf, back, len), "read back differs from what was written");
	free(back);

	/* An invalid program is not written. */
	hdr(buf)->version = 3;
	ck_assert_int_eq(flex_program_write_file(path, buf, len), -ENOEXEC);
	/* ... and not read. */
	f = fopen(path, "wb");
	fwrite(buf, 1, len, f);
	fclose(f);
	ck_assert_int_eq(flex_program_read_file(path, &back, &blen), -ENOEXEC);
	ck_assert_msg(strstr(flex_last_error(), path) && strstr(flex_last_error(), "version 3"), "message: %s", flex_last_error());
	/* Too large. */
	f = fopen(path, "wb");
	ck_assert_int_eq(fseek(f, FLEX_PROG_MAX_BYTES, SEEK_SET), 0);
	fputc(0, f);
	fclose(f);
	ck_assert_int_eq(flex_program_read_file(path, &back, &blen), -EFBIG);
	unlink(path);
	ck_assert_int_eq(flex_program_read_file(path, &back, &blen), -ENOENT);
	ck_assert_msg(strstr(flex_last_error(), path), "message lacks the path: %s", flex_last_error());
	ck_assert_int_eq(flex_program_read_file(dir, &back, &blen), -EISDIR);
	rmdir(dir);
	free(buf);
}
END_TEST

static void check_slot(const struct flex_kernel *k, unsigned int i, enum flex_corr_kind kind,
		       uint32_t arg, uint32_t dim)
{
	ck_assert_msg(k->corr[i].kind == kind && k->corr[i].arg == arg && k->corr[i].dim == dim,
		      "%s slot %u: expected kind %d arg %u dim %u, got %d %u %u", k->name, i, kind,
		      arg, dim, k->corr[i].kind, k->corr[i].arg, k->corr[i].dim);
}

START_TEST(matmul_kernel)
{
	struct flex_program_info info;
	struct flex_kernel *k;
	const struct flex_insn *in;

	ck_assert_int_eq(flex_kernel_new_matmul(FLEX_DTYPE_INT8, 32, 16, 8, &k), 0);
	ck_assert_str_eq(k->name, "matmul_i8");
	ck_assert_int_eq(flex_program_validate(k->binary, k->binary_size, &info), 0);
	ck_assert_uint_eq(info.n_slots, 7);
	ck_assert_uint_eq(info.slots_used, 7);
	ck_assert_uint_eq(k->n_corr, 7);
	check_slot(k, 0, FLEX_CORR_ADDRESS, 0, 0);
	check_slot(k, 1, FLEX_CORR_ADDRESS, 1, 0);
	check_slot(k, 2, FLEX_CORR_ADDRESS, 2, 0);
	check_slot(k, 3, FLEX_CORR_STRIDE, 2, 0);
	check_slot(k, 4, FLEX_CORR_STRIDE, 0, 0);
	check_slot(k, 5, FLEX_CORR_STRIDE, 1, 0);
	ck_assert_int_eq(k->corr[6].kind, FLEX_CORR_ACCUMULATE);
	in = (const struct flex_insn *)((const char *)k->binary + 32);
	ck_assert_uint_eq(in->op, FLEX_OP_MATMUL);
	ck_assert_uint_eq(in->dtype, FLEX_DT_I8);
	ck_assert_uint_eq(in->flags, 0);
	ck_assert_uint_eq(in->arg[0], FLEX_SLOT(2));
	ck_assert_uint_eq(in->arg[1], FLEX_SLOT(0));
	ck_assert_uint_eq(in->arg[2], FLEX_SLOT(1));
	ck_assert_uint_eq(in->arg[3], 32);
	ck_assert_uint_eq(in->arg[4], 16);
	ck_assert_uint_eq(in->arg[5], 8);
	ck_assert_uint_eq(in->arg[6], FLEX_SLOT(3));
	ck_assert_uint_eq(in->arg[9], FLEX_SLOT(6));
	/* The signature is valid and describes the tile. */
	ck_assert_int_eq(flex_sig_validate(&k->sig), 0);
	ck_assert_uint_eq(k->sig.n_args, 3);
	ck_assert_uint_eq(k->sig.args[0].shape[0], 32);
	ck_assert_uint_eq(k->sig.args[0].shape[1], 8);
	ck_assert_int_eq(k->sig.args[0].dtype, FLEX_DTYPE_INT8);
	ck_assert_int_eq(k->sig.args[2].dtype, FLEX_DTYPE_INT32);
	ck_assert_uint_eq(k->sig.args[2].is_output, 1);
	ck_assert_uint_eq(k->sig.axis_is_reduction[2], 1);
	flex_kernel_destroy(k);

	ck_assert_int_eq(flex_kernel_new_matmul(FLEX_DTYPE_INT32, 0, 4, 4, &k),
			 -EINVAL);
	ck_assert_msg(strstr(flex_last_error(), "M = 0"), "message: %s", flex_last_error());
	ck_assert_int_eq(flex_kernel_new_matmul(FLEX_DTYPE_INT32, 8192, 4096, 1, &k),
			 -E2BIG);
	ck_assert_int_eq(flex_kernel_new_matmul(FLEX_DTYPE_INT32, 1024, 1024, 512, &k), -E2BIG);
	ck_assert_int_eq(flex_kernel_new_matmul(FLEX_DTYPE_FLOAT64, 4, 4, 4, &k), -EINVAL);
	ck_assert_msg(strstr(flex_last_error(), "computes no float64 matmul"), "message: %s",
		      flex_last_error());
	ck_assert_int_eq(flex_kernel_new_matmul(FLEX_DTYPE_INT32, 4, 4, 4, NULL), -EINVAL);
}
END_TEST

/* Every type the device computes gets a kernel whose program says that type. */
START_TEST(kernels_of_every_device_type)
{
	static const struct {
		enum flex_dtype dt;
		uint8_t ddt;
		const char *suffix;
	} types[] = {
		{ FLEX_DTYPE_INT32, FLEX_DT_I32, "i32" },
		{ FLEX_DTYPE_FLOAT32, FLEX_DT_F32, "f32" },
		{ FLEX_DTYPE_BFLOAT16, FLEX_DT_BF16, "bf16" },
		{ FLEX_DTYPE_FLOAT16, FLEX_DT_F16, "f16" },
	};
	static const struct {
		const char *name;
		uint8_t op;
		int (*make)(enum flex_dtype, uint64_t, uint64_t, struct flex_kernel **);
	} ew[] = {
		{ "add", FLEX_OP_ADD, flex_kernel_new_add },
		{ "mul", FLEX_OP_MUL, flex_kernel_new_mul },
		{ "relu", FLEX_OP_RELU, flex_kernel_new_relu },
	};
	struct flex_program_info info;
	const struct flex_insn *in;
	struct flex_kernel *k;
	char name[32];

	for (unsigned int t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		ck_assert_int_eq(flex_kernel_new_matmul(types[t].dt, 8, 8, 8, &k), 0);
		snprintf(name, sizeof(name), "matmul_%s", types[t].suffix);
		ck_assert_str_eq(k->name, name);
		ck_assert_int_eq(flex_program_validate(k->binary, k->binary_size, &info), 0);
		in = (const struct flex_insn *)((const char *)k->binary + 32);
		ck_assert_msg(in->dtype == types[t].ddt, "%s: device dtype %u, expected %u", name,
			      in->dtype, types[t].ddt);
		/* A float matmul writes C in its own type; only integer inputs sum to int32. */
		ck_assert_int_eq(k->sig.args[2].dtype, types[t].dt);
		flex_kernel_destroy(k);
		for (unsigned int e = 0; e < sizeof(ew) / sizeof(ew[0]); e++) {
			ck_assert_int_eq(ew[e].make(types[t].dt, 4, 16, &k), 0);
			snprintf(name, sizeof(name), "%s_%s", ew[e].name, types[t].suffix);
			ck_assert_str_eq(k->name, name);
			ck_assert_int_eq(flex_program_validate(k->binary, k->binary_size, &info), 0);
			in = (const struct flex_insn *)((const char *)k->binary + 32);
			ck_assert_msg(in->op == ew[e].op && in->dtype == types[t].ddt,
				      "%s: op %u dtype %u, expected %u %u", name, in->op, in->dtype,
				      ew[e].op, types[t].ddt);
			for (uint32_t a = 0; a < k->sig.n_args; a++)
				ck_assert_int_eq(k->sig.args[a].dtype, types[t].dt);
			flex_kernel_destroy(k);
		}
	}
	/* int8 exists for matmul only: the device has no int8 ADD, MUL or RELU. */
	ck_assert_int_eq(flex_kernel_new_add(FLEX_DTYPE_INT8, 4, 4, &k), -EINVAL);
	ck_assert_msg(strstr(flex_last_error(), "computes no int8 add"), "message: %s",
		      flex_last_error());
	ck_assert_int_eq(flex_kernel_new_mul(FLEX_DTYPE_INT64, 4, 4, &k), -EINVAL);
	flex_kernel_destroy(NULL);
}
END_TEST

START_TEST(elementwise_kernels)
{
	struct flex_program_info info;
	struct flex_kernel *k;
	const struct flex_insn *in;

	ck_assert_int_eq(flex_kernel_new_add(FLEX_DTYPE_INT32,8, 16, &k), 0);
	ck_assert_int_eq(flex_program_validate(k->binary, k->binary_size, &info), 0);
	ck_assert_uint_eq(info.n_slots, k->n_corr);
	in = (const struct flex_insn *)((const char *)k->binary + 32);
	ck_assert_uint_eq(in->op, FLEX_OP_ADD);
	ck_assert_uint_eq(in->arg[3], 8);
	ck_assert_uint_eq(in->arg[4], 16);
	ck_assert_uint_eq(k->sig.n_args, 3);
	check_slot(k, 3, FLEX_CORR_STRIDE, 2, 0);
	flex_kernel_destroy(k);

	ck_assert_int_eq(flex_kernel_new_relu(FLEX_DTYPE_INT32,4, 4, &k), 0);
	ck_assert_int_eq(flex_program_validate(k->binary, k->binary_size, &info), 0);
	ck_assert_uint_eq(info.n_slots, 4);
	ck_assert_uint_eq(k->sig.n_args, 2);
	ck_assert_uint_eq(k->sig.args[1].is_output, 1);
	check_slot(k, 1, FLEX_CORR_ADDRESS, 1, 0);
	flex_kernel_destroy(k);

	ck_assert_int_eq(flex_kernel_new_relu(FLEX_DTYPE_INT32,1 << 13, 1 << 12, &k), -E2BIG);
	ck_assert_int_eq(flex_kernel_new_add(FLEX_DTYPE_INT32,1, 1ULL << 32, &k), -EINVAL);
	ck_assert_msg(strstr(flex_last_error(), "cols"), "message: %s", flex_last_error());
	ck_assert_str_eq(flex_op_name(FLEX_OP_RELU), "RELU");
	ck_assert_ptr_null(flex_op_name(200));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("program");
	TCase *tc = tcase_create("program");

	tcase_add_test(tc, builder_output);
	tcase_add_test(tc, builder_refuses);
	tcase_add_test(tc, validation_rules);
	tcase_add_test(tc, file_round_trip);
	suite_add_tcase(s, tc);

	tc = tcase_create("kernels");
	tcase_add_test(tc, matmul_kernel);
	tcase_add_test(tc, elementwise_kernels);
	tcase_add_test(tc, kernels_of_every_device_type);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
