/*
 * retpad-common.h - what the return pad builders of the two link-register
 * arches (aarch64-retpad.c, arm-retpad.c) share beside their encodings:
 * the checks of the area and of the ring the trampoline writes, and the
 * bookkeeping of the branches whose targets come later.  The layout they
 * write (area, slots, entries, the return's descriptor) is arch.h's
 * RET_PAD_*, RET_SLOT_*, RET_ENTRY_* and RET_REC_*, which the agent reads
 * too.  Only arch/ files use it.
 */
#ifndef PROBE_ARCH_RETPAD_COMMON_H
#define PROBE_ARCH_RETPAD_COMMON_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"

/* Whether the area and the trampoline of `r` are where the builders can
 * take them: the area page-aligned, the trampoline word-aligned, neither
 * 0 (32-bit ARM adds its own address limit). */
bool retpad_area_ok(const struct arch_ret_pad *r);

/*
 * Whether the trampoline can write records into the ring `g` (arch_pad_
 * ring): a power of two of records of 2^10 to 2^24 bytes, the ring and
 * the records 8-aligned, and in each record the sequence word (8 bytes),
 * the frame (`frame_bytes`) and the return's descriptor (RET_REC_SIZE)
 * 8-aligned, past the register image (`image_bytes`, at the record's
 * start), inside the record and apart.  An arch adds what its encodings
 * cannot reach.
 */
bool retpad_ring_ok(const struct arch_pad_ring *g, unsigned int image_bytes,
		    unsigned int frame_bytes);

/*
 * A branch whose target comes later: the builder writes a placeholder
 * word at `at` and keeps this; once the target is known, retpad_fix_to
 * writes the branch over it.  `how` is the arch's (its kind, condition
 * and register, packed as its encoder reads them).
 */
struct retpad_fix {
	size_t at;
	uint32_t how;
};

/* The arch's word for the branch `f` to offset `to` of the same code. */
typedef uint32_t retpad_enc_fn(const struct retpad_fix *f, size_t to);

/* Writes `f`'s branch to `to` into the code at buf (size bytes, 32-bit
 * little-endian words), unless the code overflowed (then the builder
 * fails with -ENOSPC and the bytes do not matter) or the word lies past
 * the end. */
void retpad_fix_to(uint8_t *buf, size_t size, bool overflow, const struct retpad_fix *f,
		   size_t to, retpad_enc_fn *enc);

/* Appends the code another emitter writes (the register restore) after
 * the `*len` bytes of the code at buf: its error, else 0 with *len past
 * it.  After an overflow it gets no room, and fails as it does then. */
int retpad_append(uint8_t *buf, size_t size, size_t *len,
		  int (*emit)(uint8_t *out, size_t size));

/* What a builder returns: the code's length, or -ENOSPC when it did not
 * fit. */
static inline int retpad_finish(bool overflow, size_t len)
{
	return overflow ? -ENOSPC : (int)len;
}

#endif
