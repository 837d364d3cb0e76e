// SPDX-License-Identifier: GPL-2.0
/*
 * The free-block B+tree's scanning operations built for AVX2 (btree_impl.h):
 * eight numbers per compare instead of SSE2's four. btree.c hands this
 * variant out when the CPU has AVX2.
 */
#include "btree.h"

#if BT_HAVE_AVX2
#pragma GCC target("avx2")

#define BT_OPS_NAME	"avx2"
#define BT_OPS		flex_bt_ops_avx2
#include "btree_impl.h"
#else
/* No AVX2 build here (ISO C wants a declaration in every file). */
typedef int btree_avx2_unused;
#endif
