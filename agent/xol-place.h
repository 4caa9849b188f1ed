/*
 * xol-place.h - where an XOL area goes (pure: xol.c feeds it the
 * process's mappings; tests/unit/test-xol-place.c checks it per arch).
 */
#ifndef PROBE_AGENT_XOL_PLACE_H
#define PROBE_AGENT_XOL_PLACE_H

#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"

/* One mapping, [start, end), as /proc/PID/maps lists it. */
struct xol_map_range {
	uint64_t start, end;
};

/* The lowest address an area may take (mmap_min_addr's usual value). */
#define XOL_PLACE_FLOOR 0x10000ull
/* Where the last gap ends when nothing is mapped above: the top of an
 * x86-64 process's 47-bit space (an aarch64 stack sits higher, so there
 * the last gap is the one below it). */
#define XOL_PLACE_TOP 0x7ffffffff000ull

/*
 * The free, `size`-aligned address nearest to `near` where `size` bytes
 * fit between the `n` mappings (sorted by start, possibly overlapping),
 * every byte of it within arch_xol_in_reach(ops, near, ...).  Returns 0
 * when no gap has such a place: the agent then refuses the probe rather
 * than hand out a slot the arch would have to step or could not branch
 * back from.
 */
uint64_t xol_place(const struct xol_map_range *maps, size_t n, uint64_t near,
		   uint64_t size, const struct arch_ops *ops);

/*
 * A far pad's area (an arch with arch_ops.emit_jump_far): the free,
 * `size`-aligned address nearest to `near`, anywhere when `beyond` is
 * false, and when it is true only where every byte lies at least
 * XOL_FAR_MIN from `near` (the test knob that forces far pads:
 * beyond A32 B's 32 MiB and Thumb B.W's 16).  A 4-byte-pointer arch's
 * places stay below XOL_PLACE_TOP32, the usual 3 GiB user space.  0
 * when there is none.
 */
#define XOL_FAR_MIN (64ull << 20)
#define XOL_PLACE_TOP32 0xbf000000ull
uint64_t xol_place_far(const struct xol_map_range *maps, size_t n, uint64_t near,
		       uint64_t size, bool beyond, const struct arch_ops *ops);

#endif
