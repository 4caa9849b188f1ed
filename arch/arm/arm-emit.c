/*
 * arm-emit.c - the fixed A32 and Thumb encodings probes are built from.
 *
 * Direct jumps: A32 B (+-32 MiB, from the B's address + 8) and Thumb
 * B.W (encoding T4, +-16 MiB, from its address + 4).  Neither changes
 * the instruction set, so a jump to the other set, or beyond reach, loads
 * the pc from a literal instead, which interworks on bit 0 and clobbers
 * no register:
 *
 *   A32:    ldr   pc, [pc, #-4]      e51ff004    pc = the word after it
 *           .word to
 *   Thumb:  (nop                     bf00        when not 4-aligned)
 *           ldr.w pc, [pc, #0]       f8df f000   Align(pc, 4) = the word
 *           .word to                             after it
 *
 * A jump pad's site beyond those reaches holds such a load too
 * (arm_emit_jump_far), its literal in the site's own bytes.
 *
 * Instructions are little-endian: an A32 word as one 32-bit value, a T32
 * instruction as its two halfwords in order.
 */
#include "config.h"

#include <errno.h>

#include "arch/arm/arm.h"

void arm_put16(struct arm_out *o, uint16_t h)
{
	if (o->len + 2 > o->size) {
		o->overflow = true;
	} else {
		o->buf[o->len] = (uint8_t)h;
		o->buf[o->len + 1] = (uint8_t)(h >> 8);
	}
	o->len += 2;
}

void arm_put32(struct arm_out *o, uint32_t w)
{
	arm_put16(o, (uint16_t)w);
	arm_put16(o, (uint16_t)(w >> 16));
}

void arm_put_t32(struct arm_out *o, uint32_t w)
{
	arm_put16(o, (uint16_t)(w >> 16));
	arm_put16(o, (uint16_t)w);
}

static int64_t delta(uint64_t from, uint64_t to)
{
	return (int64_t)(int32_t)(uint32_t)(to - from);
}

bool arm_in_b_reach(uint64_t from, uint64_t to)
{
	int64_t d = delta(from + 8, to);

	return !(d & 3) && d >= -(1ll << 25) && d < (1ll << 25);
}

bool arm_in_bw_reach(uint64_t from, uint64_t to)
{
	int64_t d = delta(from + 4, to);

	return !(d & 1) && d >= -(1ll << 24) && d < (1ll << 24);
}

/* cond 101 0 imm24 */
uint32_t arm_enc_b(uint64_t from, uint64_t to, unsigned int cond)
{
	return (uint32_t)cond << 28 | 0x0a000000u |
	       ((uint32_t)(delta(from + 8, to) >> 2) & 0xffffffu);
}

/* 11110 S imm10 | 10 J1 1 J2 imm11, I1 = !(J1 ^ S), I2 = !(J2 ^ S) */
uint32_t arm_enc_bw(uint64_t from, uint64_t to)
{
	uint32_t off = (uint32_t)delta(from + 4, to);
	uint32_t s = (off >> 24) & 1, i1 = (off >> 23) & 1, i2 = (off >> 22) & 1;
	uint32_t j1 = !(i1 ^ s), j2 = !(i2 ^ s);

	return (0xf000u | s << 10 | ((off >> 12) & 0x3ff)) << 16 |
	       0x9000u | j1 << 13 | j2 << 11 | ((off >> 1) & 0x7ff);
}

void arm_emit_jump_from(struct arm_out *o, bool thumb, uint64_t to)
{
	uint64_t here = o->at + o->len;

	if (!thumb) {
		if (!(to & 1) && arm_in_b_reach(here, to)) {
			arm_put32(o, arm_enc_b(here, to, 14));
			return;
		}
		arm_put32(o, 0xe51ff004u);		/* ldr pc, [pc, #-4] */
		arm_put32(o, (uint32_t)to);
		return;
	}
	if ((to & 1) && arm_in_bw_reach(here, to & ~1ull)) {
		arm_put_t32(o, arm_enc_bw(here, to & ~1ull));
		return;
	}
	if (here & 2)
		arm_put16(o, 0xbf00);			/* nop */
	arm_put_t32(o, 0xf8dff000u);			/* ldr.w pc, [pc, #0] */
	arm_put32(o, (uint32_t)to);
}

/* A jump at `from` (bit 0: a Thumb site) to `to` (bit 0: a Thumb target),
 * direct only. */
int arm_emit_jump(uint8_t *out, size_t size, uint64_t from, uint64_t to)
{
	struct arm_out o = { out, size, 0, from & ~1ull, false };

	if ((from & 1) != (to & 1))
		return -ERANGE;		/* B and B.W do not change the set */
	if (from & 1) {
		if (!arm_in_bw_reach(from & ~1ull, to & ~1ull))
			return -ERANGE;
		arm_put_t32(&o, arm_enc_bw(from & ~1ull, to & ~1ull));
	} else {
		if (!arm_in_b_reach(from, to))
			return -ERANGE;
		arm_put32(&o, arm_enc_b(from, to, 14));
	}
	return o.overflow ? -ENOSPC : (int)o.len;
}

/* From A32 code: ldr pc, [pc, #-4]; .word to (bit 0 of `to` interworks). */
int arm_emit_jump_abs(uint8_t *out, size_t size, uint64_t to)
{
	struct arm_out o = { out, size, 0, 0, false };

	arm_put32(&o, 0xe51ff004u);
	arm_put32(&o, (uint32_t)to);
	return o.overflow ? -ENOSPC : (int)o.len;
}

/*
 * A pad's far site: a jump at `from` (bit 0: a Thumb site) to `to`
 * anywhere in the address space (bit 0: the target's set, which the
 * load interworks on), through a literal inside the site's own bytes:
 *
 *   A32:              ldr   pc, [pc, #-4]    e51ff004   8 bytes
 *                     .word to
 *   Thumb, 0 mod 4:   ldr.w pc, [pc, #0]     f8df f000  8 bytes
 *                     .word to                          (Align(A+4, 4) = A+4)
 *   Thumb, 2 mod 4:   ldr.w pc, [pc, #4]     f8df f004  10 bytes
 *                     udf   #1               de01       never run
 *                     .word to                          (Align(A+4, 4) + 4 = A+6)
 *
 * At 2 mod 4 the literal cannot follow the load at A+4: a load into the
 * pc from an address that is not 4-aligned is UNPREDICTABLE.  The load
 * stays the site's first instruction (a `nop` before it would do as
 * well, but the jump then would not start at the probe), and the gap
 * gets a breakpoint: nothing branches there, and what lands there traps
 * rather than runs half a word.
 */
int arm_emit_jump_far(uint8_t *out, size_t size, uint64_t from, uint64_t to)
{
	struct arm_out o = { out, size, 0, from & ~1ull, false };

	if (!(from & 1)) {
		if (from & 3)
			return -EINVAL;
		arm_put32(&o, 0xe51ff004u);		/* ldr pc, [pc, #-4] */
	} else if (from & 2) {
		arm_put_t32(&o, 0xf8dff004u);		/* ldr.w pc, [pc, #4] */
		arm_put16(&o, ARM_BKPT_T16);		/* udf #1 */
	} else {
		arm_put_t32(&o, 0xf8dff000u);		/* ldr.w pc, [pc, #0] */
	}
	arm_put32(&o, (uint32_t)to);
	return o.overflow ? -ENOSPC : (int)o.len;
}
