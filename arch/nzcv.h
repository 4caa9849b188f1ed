/*
 * nzcv.h - the condition codes the two Arm instruction sets share: A32
 * and Thumb-2 (arch/arm) and A64 (arch/aarch64) test the same fourteen
 * conditions on the N, Z, C and V flags, which CPSR and PSTATE both keep
 * in bits 31 to 28.  Only arch/ files use it.
 */
#ifndef PROBE_ARCH_NZCV_H
#define PROBE_ARCH_NZCV_H

#include <stdbool.h>
#include <stdint.h>

#define NZCV_N (1u << 31)
#define NZCV_Z (1u << 30)
#define NZCV_C (1u << 29)
#define NZCV_V (1u << 28)

/* Whether condition `cond` (its low 4 bits; AL and 1111 always hold)
 * holds for the flags in bits 31-28 of `flags`. */
bool nzcv_cond_holds(unsigned int cond, uint64_t flags);

/* The condition's suffix ("eq" ... "al"); 1111 is `nv`, which A64 writes
 * and A32 has no name for (the caller decides). */
const char *nzcv_cond_name(unsigned int cond);

#endif
