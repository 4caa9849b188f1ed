/*
 * xol-place.c - the address of a new XOL area: the free place nearest to
 * the probed instruction, and never one beyond the arch's reach of it
 * (arch_ops.xol_reach: a B back on aarch64 goes +-128 MiB, a rel32 jmp
 * on x86-64 +-2 GiB).
 *
 * In each gap between mappings the place nearest to `near` is `near`
 * itself clamped to the gap (aligned down, or up when that leaves the
 * gap); if that one is out of reach, so is the rest of the gap.  The
 * nearest of those over all gaps wins.
 */
#include "config.h"

#include "agent/xol-place.h"

static uint64_t distance(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

uint64_t xol_place(const struct xol_map_range *maps, size_t n, uint64_t near,
		   uint64_t size, const struct arch_ops *ops)
{
	uint64_t prev_end = XOL_PLACE_FLOOR, best = 0;

	for (size_t i = 0; i <= n; i++) {
		uint64_t start = i < n ? maps[i].start : XOL_PLACE_TOP;

		if (start > prev_end && start - prev_end >= size) {
			uint64_t lo = prev_end, hi = start - size;
			uint64_t cand = near < lo ? lo : near > hi ? hi : near;

			cand &= ~(size - 1);
			if (cand < lo)
				cand += size;
			if (cand >= lo && cand <= hi &&
			    arch_xol_in_reach(ops, near, cand, size) &&
			    (!best || distance(cand, near) < distance(best, near)))
				best = cand;
		}
		if (i < n && maps[i].end > prev_end)
			prev_end = maps[i].end;
	}
	return best;
}
