/* SPDX-License-Identifier: MIT */
/**
 * @file ctypes.h
 * Scalar type layouts shared by several target tables (internal to targets/).
 * Measured with each Debian cross compiler (sizeof and offsetof in a {char; T} struct).
 */
#ifndef COREQ_TARGETS_CTYPES_H
#define COREQ_TARGETS_CTYPES_H

#include "target.h"

/* LP64 with 128-bit long double aligned to 16 (x86_64, aarch64, ppc64, riscv64). */
#define CQ_CTYPES_LP64_LD16 { \
	[CQ_CTYPE_CHAR] = {1, 1}, [CQ_CTYPE_SHORT] = {2, 2}, [CQ_CTYPE_INT] = {4, 4}, \
	[CQ_CTYPE_LONG] = {8, 8}, [CQ_CTYPE_LONG_LONG] = {8, 8}, [CQ_CTYPE_POINTER] = {8, 8}, \
	[CQ_CTYPE_SIZE_T] = {8, 8}, [CQ_CTYPE_BOOL] = {1, 1}, [CQ_CTYPE_FLOAT] = {4, 4}, \
	[CQ_CTYPE_DOUBLE] = {8, 8}, [CQ_CTYPE_LONG_DOUBLE] = {16, 16} }

/* ILP32 with 64-bit types aligned to 8 and long double of size @p ld. */
#define CQ_CTYPES_ILP32_A8(ld) { \
	[CQ_CTYPE_CHAR] = {1, 1}, [CQ_CTYPE_SHORT] = {2, 2}, [CQ_CTYPE_INT] = {4, 4}, \
	[CQ_CTYPE_LONG] = {4, 4}, [CQ_CTYPE_LONG_LONG] = {8, 8}, [CQ_CTYPE_POINTER] = {4, 4}, \
	[CQ_CTYPE_SIZE_T] = {4, 4}, [CQ_CTYPE_BOOL] = {1, 1}, [CQ_CTYPE_FLOAT] = {4, 4}, \
	[CQ_CTYPE_DOUBLE] = {8, 8}, [CQ_CTYPE_LONG_DOUBLE] = {ld, ld} }

#endif
