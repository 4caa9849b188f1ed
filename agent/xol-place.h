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

#endif
