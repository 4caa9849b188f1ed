/*
 * pad-ring.c - draining a jump pad ring (pad-ring.h).
 */
#include "config.h"

#include "agent/pad-ring.h"

uint8_t *pad_ring_record(const struct pad_ring *r, uint64_t pos)
{
	return r->records + ((size_t)(pos & (r->nrecords - 1)) << r->record_shift);
}

/* Whether the record of pos is published (written, not taken). */
static bool published(const struct pad_ring *r, uint64_t pos)
{
	const volatile uint64_t *seq =
		(const volatile uint64_t *)(pad_ring_record(r, pos) + r->off_seq);

	return __atomic_load_n(seq, __ATOMIC_ACQUIRE) == pos + 1;
}

/* How many records ahead of the one taken the next ones are fetched:
 * enough to cover a wait for memory with a take's work (~100 ns). */
#define PREFETCH_AHEAD 4

/* Takes the holes written since last looked at.  False: the take
 * refused one (it stays a hole). */
static bool take_holes(const struct pad_ring *r, struct pad_ring_reader *rd,
		       pad_ring_take_fn *take, void *arg, int *n)
{
	for (size_t i = 0; i < rd->nholes;) {
		uint64_t pos = rd->holes[i];
		if (published(r, pos)) {
			if (!take(pos, pad_ring_record(r, pos), arg))
				return false;
			rd->holes[i] = rd->holes[--rd->nholes];
			(*n)++;
		} else {
			i++;
		}
	}
	return true;
}

int pad_ring_drain(const struct pad_ring *r, struct pad_ring_reader *rd,
		   pad_ring_take_fn *take, void *arg)
{
	int n = 0;

	if (!take_holes(r, rd, take, arg, &n))
		return n;
	uint64_t head = __atomic_load_n(r->head, __ATOMIC_ACQUIRE);
	while (rd->tail < head) {
		uint64_t pos = rd->tail;
		if (r->hot_len && pos + PREFETCH_AHEAD < head) {
			const uint8_t *ahead = pad_ring_record(r, pos + PREFETCH_AHEAD) + r->hot_off;
			for (unsigned int o = 0; o < r->hot_len; o += 64)
				__builtin_prefetch(ahead + o, 0, 0);
		}
		if (published(r, pos)) {
			/* A hole's writer may have published it, and then
			 * this record, since the drain passed it: seen
			 * published after this one (the acquire above), it
			 * goes first, so that a thread's records stay in the
			 * order it wrote them. */
			if (rd->nholes && !take_holes(r, rd, take, arg, &n))
				break;
			if (!take(pos, pad_ring_record(r, pos), arg))
				break;
			n++;
		} else if (rd->nholes < PAD_RING_HOLES) {
			rd->holes[rd->nholes++] = pos;
		} else {
			break;
		}
		rd->tail++;
	}
	return n;
}
