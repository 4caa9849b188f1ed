/*
 * pad-ring.h - the agent's reading side of a jump pad ring (pad-drain.c).
 *
 * The pads of a process are writers of one ring in memory shared with
 * the agent: a writer claims position `pos` by moving the head on
 * (compare-and-swap), fills record pos % nrecords, and publishes it by
 * storing pos + 1 in the record's sequence word.  The agent, the only
 * reader, takes records in the order they were claimed and frees each by
 * storing pos + nrecords (the writer of the next round waits for that).
 *
 * A record still being written is passed over, remembered as a hole, and
 * taken once written, before any record found written after it (so that
 * a thread's records stay in the order it wrote them): its writer may be
 * stopped, or gone for good (a signal handler that never returned),
 * which must not hold up the rest.
 * When the take callback refuses a record (no room for it yet), the drain
 * ends there and the next one starts from it.
 *
 * Pure: no process, no ptrace; tests/unit/test-pad-ring.c drains rings in
 * plain memory.
 */
#ifndef AGENT_PAD_RING_H
#define AGENT_PAD_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PAD_RING_HOLES 64

/* Where the ring is, as the agent maps it. */
struct pad_ring {
	uint8_t *records;		/* record 0 */
	const volatile uint64_t *head;	/* the writers' next position */
	unsigned int record_shift;	/* a record is 1 << record_shift bytes */
	unsigned int nrecords;		/* a power of two */
	unsigned int off_seq;		/* the sequence word in a record */
	/* The part of a record every take reads (sequence, registers,
	 * thread, time): fetched into the cache a few records ahead.  The
	 * ring is megabytes and the pads wrote it long before, so without
	 * this every record is a wait for memory.  0: none. */
	unsigned int hot_off, hot_len;
};

/* How far the agent read. */
struct pad_ring_reader {
	uint64_t tail;			/* the next position to read */
	/* Positions before tail still being written when last looked at. */
	uint64_t holes[PAD_RING_HOLES];
	size_t nholes;
};

/* The record of position pos. */
uint8_t *pad_ring_record(const struct pad_ring *r, uint64_t pos);

/* Takes published record `rec` of position `pos`, and frees it (stores
 * pos + nrecords in its sequence word) when it returns true.  False: not
 * now; the drain stops there. */
typedef bool pad_ring_take_fn(uint64_t pos, uint8_t *rec, void *arg);

/* Takes the published records: holes first, then from the tail up to the
 * head.  Returns how many were taken. */
int pad_ring_drain(const struct pad_ring *r, struct pad_ring_reader *rd,
		   pad_ring_take_fn *take, void *arg);

#endif
