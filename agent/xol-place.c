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

/* Whether [cand, cand + size) keeps XOL_FAR_MIN from `near`. */
static bool far_enough(uint64_t cand, uint64_t size, uint64_t near)
{
	return cand >= near + XOL_FAR_MIN || cand + size + XOL_FAR_MIN <= near;
}

uint64_t xol_place_far(const struct xol_map_range *maps, size_t n, uint64_t near,
		       uint64_t size, bool beyond, const struct arch_ops *ops)
{
	uint64_t top = ops->ptr_size == 4 ? XOL_PLACE_TOP32 : XOL_PLACE_TOP;
	uint64_t prev_end = XOL_PLACE_FLOOR, best = 0;

	for (size_t i = 0; i <= n; i++) {
		uint64_t start = i < n && maps[i].start < top ? maps[i].start : top;

		if (start > prev_end && start - prev_end >= size) {
			uint64_t lo = prev_end, hi = start - size;
			/* The nearest point of the gap, and (beyond) the
			 * nearest far enough on either side of `near`. */
			uint64_t want[3] = { near, near + XOL_FAR_MIN,
					     near > XOL_FAR_MIN + size ?
					     near - XOL_FAR_MIN - size : 0 };
			for (int k = beyond ? 1 : 0; k < 3; k++) {
				uint64_t cand = want[k] < lo ? lo : want[k] > hi ? hi : want[k];

				cand &= ~(size - 1);
				if (cand < lo || (beyond && k == 1 && !far_enough(cand, size, near)))
					cand += size;	/* aligned up instead */
				if (cand < lo || cand > hi || (beyond && !far_enough(cand, size, near)))
					continue;
				if (!best || distance(cand, near) < distance(best, near))
					best = cand;
			}
		}
		if (start >= top)
			break;
		if (i < n && maps[i].end > prev_end)
			prev_end = maps[i].end;
	}
	return best;
}
