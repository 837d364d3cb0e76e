// SPDX-License-Identifier: GPL-2.0
/*
 * Device copies and fills (libflex/src/devop.c): the programs FlexStream
 * loads for flex_stream_copy_device() and flex_stream_fill(), checked as
 * the device checks them and run by an interpreter of COPY and FILL over
 * host buffers, with small instruction sizes so that every split (pieces,
 * CBs, doubling, tails, overlap backwards) happens on a few hundred bytes.
 * With the device's sizes: the instruction limits hold for a 1 TiB op.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/flex_isa.h>
#include <flex/program.h>

#include "devop.h"
#include "unit_util.h"

/* Segment 0, 1 and 7 as host buffers. */
struct mem {
	unsigned char *seg[8];
	size_t len[8];
};

static unsigned char *at(struct mem *m, uint64_t addr, uint64_t n)
{
	unsigned int seg = (unsigned int)(addr >> FLEX_ADDR_SEG_SHIFT);
	uint64_t off = addr & FLEX_ADDR_OFFSET_MASK;

	ck_assert_msg(seg < 8 && m->seg[seg], "segment %u is not in the CB", seg);
	ck_assert_msg(off <= m->len[seg] && n <= m->len[seg] - off,
		      "segment %u: bytes %llu .. %llu leave its %zu", seg,
		      (unsigned long long)off, (unsigned long long)(off + n), m->len[seg]);
	return m->seg[seg] + off;
}

/* Validate @prog as the device does, then run it. */
static void run(struct mem *m, const unsigned char *prog, size_t len)
{
	struct flex_prog_header h;

	memcpy(&h, prog, sizeof(h));
	ck_assert_uint_le(sizeof(h) + 128 * (size_t)h.n_insns, len);
	ck_assert_msg(flex_program_validate(prog, sizeof(h) + 128 * (size_t)h.n_insns, NULL) == 0, "%s", flex_last_error());
	ck_assert_uint_eq(h.n_slots, 0);
	for (uint32_t i = 0; i < h.n_insns; i++) {
		struct flex_insn in;

		memcpy(&in, prog + sizeof(h) + 128 * (size_t)i, sizeof(in));
		for (int a = 0; a < 3; a++)
			ck_assert_msg(!(in.arg[a] & FLEX_ARG_SLOT_BIT), "insn %u: a slot", i);
		if (in.op == FLEX_OP_COPY) {
			ck_assert_uint_le(in.arg[2], 4ULL * FLEX_ISA_MAX_ELEMENTS);
			memmove(at(m, in.arg[0], in.arg[2]), at(m, in.arg[1], in.arg[2]), in.arg[2]);
		} else if (in.op == FLEX_OP_FILL) {
			unsigned char *d = at(m, in.arg[0], 4 * in.arg[1]);
			uint32_t v = (uint32_t)in.arg[2];

			ck_assert_uint_le(in.arg[1], FLEX_ISA_MAX_ELEMENTS);
			ck_assert_uint_lt(in.arg[2], 1ULL << 32);
			for (uint64_t k = 0; k < in.arg[1]; k++)
				memcpy(d + 4 * k, &v, 4);
		} else {
			ck_assert_int_eq(in.op, FLEX_OP_END);
		}
	}
}

/* Run every CB of @op in order, each program loaded into segment 7. */
static void run_op(const struct devop *op, unsigned char *dst, size_t dst_len,
		   unsigned char *src, size_t src_len)
{
	size_t max = flex_devop_program_max(op);
	unsigned char *prog = malloc(max);
	struct mem m = { 0 };

	ck_assert_ptr_nonnull(prog);
	m.seg[0] = dst;
	m.len[0] = dst_len;
	m.seg[1] = src;
	m.len[1] = src_len;
	m.seg[7] = prog;
	m.len[7] = max;
	for (uint32_t k = 0; k < flex_devop_n_cbs(op); k++) {
		size_t len = flex_devop_program(op, k, prog);

		ck_assert_uint_le(len, max);
		run(&m, prog, len);
	}
	free(prog);
}

static struct devop small_op(uint64_t insn_bytes, uint32_t per_cb)
{
	struct devop op;

	memset(&op, 0, sizeof(op));
	op.insn_bytes = insn_bytes;
	op.insns_per_cb = per_cb;
	return op;
}

/* Fills of every pattern size, at every small offset and size, over many CBs. */
START_TEST(fills_of_every_pattern_size)
{
	static const uint64_t pats[] = { 0xa5, 0xbeef, 0xdeadbeef, 0x0123456789abcdefULL,
					 0x1122334411223344ULL };
	static const uint32_t psz[] = { 1, 2, 4, 8, 8 };
	unsigned char buf[400], want[400];

	for (int p = 0; p < 5; p++)
		for (uint64_t off = 0; off < 9; off++)
			for (uint64_t size = 0; size < 300; size += 1 + size / 7) {
				struct devop op = small_op(24, 3);

				op.fill = 1;
				op.dst = off;
				op.size = size;
				op.pattern = pats[p];
				op.psize = psz[p];
				memset(buf, 0x5a, sizeof(buf));
				memcpy(want, buf, sizeof(want));
				for (uint64_t i = 0; i < size; i++)
					want[off + i] = (unsigned char)(pats[p] >> (8 * (i % psz[p])));
				run_op(&op, buf, sizeof(buf), NULL, 0);
				ck_assert_msg(!memcmp(buf, want, sizeof(buf)),
					      "pattern %d (%u bytes) at %llu, %llu bytes: wrong", p,
					      psz[p], (unsigned long long)off,
					      (unsigned long long)size);
			}
}
END_TEST

/* Copies between buffers and within one, overlapping both ways: as memmove. */
START_TEST(copies_as_memmove)
{
	unsigned char buf[600], want[600], other[600];

	for (int i = 0; i < 600; i++)
		other[i] = (unsigned char)(i * 7 + 3);
	for (uint64_t size = 0; size < 260; size += 1 + size / 5)
		for (int64_t shift = -70; shift <= 70; shift += 7) {
			struct devop op = small_op(16, 2);
			uint64_t src = 150, dst = (uint64_t)(150 + shift);

			for (int i = 0; i < 600; i++)
				buf[i] = (unsigned char)(i * 13 + 1);
			memcpy(want, buf, sizeof(want));
			memmove(want + dst, want + src, size);
			op.dst = dst;
			op.src = src;
			op.size = size;
			op.backward = dst > src && dst < src + size;
			run_op(&op, buf, sizeof(buf), buf, sizeof(buf));
			ck_assert_msg(!memcmp(buf, want, sizeof(buf)),
				      "%llu bytes from %llu to %llu in one buffer: not as memmove",
				      (unsigned long long)size, (unsigned long long)src,
				      (unsigned long long)dst);
		}
	/* Between two buffers, odd offsets. */
	{
		struct devop op = small_op(16, 2);

		memset(buf, 0, sizeof(buf));
		op.dst = 3;
		op.src = 5;
		op.size = 101;
		run_op(&op, buf, sizeof(buf), other, sizeof(other));
		ck_assert_int_eq(memcmp(buf + 3, other + 5, 101), 0);
		ck_assert_int_eq(buf[2], 0);
		ck_assert_int_eq(buf[104], 0);
	}
}
END_TEST

/* The device's sizes: CB counts, and every instruction within its limits. */
START_TEST(device_limits_hold)
{
	struct devop op = small_op(DEVOP_INSN_BYTES, DEVOP_INSNS_PER_CB);
	unsigned char *prog;
	struct flex_prog_header h;

	ck_assert_uint_eq(DEVOP_INSN_BYTES, 64ULL << 20);
	op.size = 0;
	ck_assert_uint_eq(flex_devop_n_cbs(&op), 0);
	op.size = 256ULL << 20;
	ck_assert_uint_eq(flex_devop_n_cbs(&op), 1);
	op.size = (256ULL << 20) + 1;
	ck_assert_uint_eq(flex_devop_n_cbs(&op), 2);
	op.size = 1ULL << 40;
	op.fill = 1;
	op.psize = 8;
	op.pattern = 0x0123456789abcdefULL;	/* doubling: the longest first program */
	ck_assert_uint_le(flex_devop_program_max(&op), 4096);
	prog = malloc(flex_devop_program_max(&op));
	ck_assert_ptr_nonnull(prog);
	for (uint32_t k = 0; k < flex_devop_n_cbs(&op); k += flex_devop_n_cbs(&op) - 1) {
		size_t len = flex_devop_program(&op, k, prog);

		memcpy(&h, prog, sizeof(h));
		ck_assert_uint_le(sizeof(h) + 128 * (size_t)h.n_insns + 8, len);
		ck_assert_msg(flex_program_validate(prog, sizeof(h) + 128 * (size_t)h.n_insns,
						    NULL) == 0, "%s", flex_last_error());
		for (uint32_t i = 0; i + 1 < h.n_insns; i++) {
			struct flex_insn in;

			memcpy(&in, prog + sizeof(h) + 128 * (size_t)i, sizeof(in));
			ck_assert_int_eq(in.op, FLEX_OP_COPY);
			ck_assert_uint_le(in.arg[2], DEVOP_INSN_BYTES);
			ck_assert_uint_gt(in.arg[2], 0);
		}
	}
	free(prog);
}
END_TEST

/* 2-D copies: every row where its pitch puts it, nothing else touched, over many CBs. */
START_TEST(copies_2d_rows_at_their_pitches)
{
	unsigned char src[2000], dst[2000], want[2000];

	for (int i = 0; i < 2000; i++)
		src[i] = (unsigned char)(i * 7 + 3);
	for (uint64_t width = 1; width <= 24; width += 5)
		for (uint64_t rows = 2; rows < 40; rows += 3)
			for (uint64_t extra = 0; extra < 9; extra += 4) {
				struct devop op = small_op(24, 3);
				uint64_t dpitch = width + extra, spitch = width + 2 * extra + 1;

				op.dst = 5;
				op.src = 3;
				op.size = width;
				op.rows = rows;
				op.dpitch = dpitch;
				op.spitch = spitch;
				memset(dst, 0x5a, sizeof(dst));
				memcpy(want, dst, sizeof(want));
				for (uint64_t r = 0; r < rows; r++)
					memcpy(want + 5 + r * dpitch, src + 3 + r * spitch, width);
				ck_assert_uint_eq(flex_devop_n_cbs(&op),
						  (rows + 72 / width - 1) / (72 / width));
				run_op(&op, dst, sizeof(dst), src, sizeof(src));
				ck_assert_msg(!memcmp(dst, want, sizeof(dst)),
					      "%llu rows of %llu bytes at pitches %llu/%llu: wrong",
					      (unsigned long long)rows, (unsigned long long)width,
					      (unsigned long long)dpitch, (unsigned long long)spitch);
			}
}
END_TEST

/* With the device's sizes, a 2-D copy's programs stay within DEVOP_ROWS_PER_CB rows. */
START_TEST(copies_2d_row_limit)
{
	struct devop op = small_op(DEVOP_INSN_BYTES, DEVOP_INSNS_PER_CB);

	op.size = 4;
	op.rows = 1000;
	op.dpitch = op.spitch = 64;
	ck_assert_uint_eq(flex_devop_n_cbs(&op), (1000 + DEVOP_ROWS_PER_CB - 1) / DEVOP_ROWS_PER_CB);
	ck_assert_uint_eq(flex_devop_program_max(&op),
			  sizeof(struct flex_prog_header) + 128 * (DEVOP_ROWS_PER_CB + 1));
	op.size = DEVOP_INSN_BYTES;
	op.dpitch = op.spitch = DEVOP_INSN_BYTES;
	ck_assert_uint_eq(flex_devop_n_cbs(&op), 1000 / DEVOP_INSNS_PER_CB);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("devop");
	TCase *tc = tcase_create("programs");

	tcase_add_test(tc, fills_of_every_pattern_size);
	tcase_add_test(tc, copies_as_memmove);
	tcase_add_test(tc, device_limits_hold);
	tcase_add_test(tc, copies_2d_rows_at_their_pitches);
	tcase_add_test(tc, copies_2d_row_limit);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
