/*
 * test-pad-ring.c - the agent draining a jump pad ring (agent/pad-ring.c)
 * in plain memory: writers claim positions (the head) and publish them
 * (seq = pos + 1) in any order, as threads of the traced program do; the
 * drain must take every published record exactly once, in the order the
 * positions were claimed but for those it passed over while they were
 * being written (taken when written, at a later drain), stop where the
 * owner refuses one, and never take a record of an earlier round of the
 * ring.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "agent/pad-ring.h"

#define SHIFT 6			/* 64-byte records */
#define OFF_SEQ 8
#define OFF_VALUE 16
#define MAX_TAKEN 512

struct fake {
	uint8_t mem[256 << SHIFT];
	uint64_t head;
	struct pad_ring ring;
	struct pad_ring_reader rd;
	uint64_t taken[MAX_TAKEN];
	size_t ntaken;
	uint64_t refuse;	/* the take refuses this position (0: none) */
	/* As the take of position `writer_at` runs, a writer publishes
	 * these positions (0 ends the list): a thread of the program going
	 * on while the agent drains. */
	uint64_t writer_at, writer_publishes[4];
};

static void fake_init(struct fake *f, unsigned int nrecords)
{
	memset(f, 0, sizeof(*f));
	/* Prefetching on: it must change nothing taken. */
	f->ring = (struct pad_ring){ f->mem, &f->head, SHIFT, nrecords, OFF_SEQ, 0, 64 };
	/* Free records of round 0: seq = pos, what the agent writes at
	 * set-up; never pos + 1 of any position. */
	for (unsigned int i = 0; i < nrecords; i++)
		memcpy(f->mem + ((size_t)i << SHIFT) + OFF_SEQ, &(uint64_t){ i }, 8);
}

static uint64_t claim(struct fake *f)
{
	return f->head++;
}

static void publish(struct fake *f, uint64_t pos)
{
	uint8_t *rec = pad_ring_record(&f->ring, pos);
	uint64_t value = pos * 10 + 7, seq = pos + 1;

	memcpy(rec + OFF_VALUE, &value, 8);
	memcpy(rec + OFF_SEQ, &seq, 8);
}

static bool take(uint64_t pos, uint8_t *rec, void *arg)
{
	struct fake *f = arg;
	uint64_t value, seq;

	if (f->refuse && pos == f->refuse)
		return false;
	/* the record handed over is the one of pos, with pos's contents */
	assert_ptr_equal(rec, pad_ring_record(&f->ring, pos));
	memcpy(&value, rec + OFF_VALUE, 8);
	assert_int_equal(value, pos * 10 + 7);
	assert_true(f->ntaken < MAX_TAKEN);
	f->taken[f->ntaken++] = pos;
	seq = pos + f->ring.nrecords;	/* free for the next round */
	memcpy(rec + OFF_SEQ, &seq, 8);
	if (f->writer_at && pos == f->writer_at)
		for (int i = 0; i < 4 && f->writer_publishes[i]; i++)
			publish(f, f->writer_publishes[i]);
	return true;
}

static int drain(struct fake *f)
{
	return pad_ring_drain(&f->ring, &f->rd, take, f);
}

static void assert_taken(const struct fake *f, const uint64_t *pos, size_t n)
{
	assert_int_equal(f->ntaken, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(f->taken[i], pos[i]);
}

static struct fake f;

/* In order: everything, once. */
static void test_in_order(void **state)
{
	static const uint64_t want[] = { 0, 1, 2, 3, 4 };

	(void)state;
	fake_init(&f, 8);
	for (int i = 0; i < 5; i++)
		publish(&f, claim(&f));
	assert_int_equal(drain(&f), 5);
	assert_taken(&f, want, 5);
	assert_int_equal(f.rd.tail, 5);
	assert_int_equal(drain(&f), 0);
	assert_int_equal(f.ntaken, 5);
}

/* A writer stopped in the middle of record 1: 0, 2, 3 now, 1 later. */
static void test_hole(void **state)
{
	static const uint64_t first[] = { 0, 2, 3 };
	static const uint64_t then[] = { 0, 2, 3, 1, 4 };

	(void)state;
	fake_init(&f, 8);
	for (int i = 0; i < 4; i++)
		claim(&f);
	publish(&f, 0);
	publish(&f, 2);
	publish(&f, 3);
	assert_int_equal(drain(&f), 3);
	assert_taken(&f, first, 3);
	assert_int_equal(f.rd.nholes, 1);
	assert_int_equal(f.rd.holes[0], 1);
	assert_int_equal(f.rd.tail, 4);
	assert_int_equal(drain(&f), 0);		/* still unwritten */
	publish(&f, 1);
	publish(&f, claim(&f));
	assert_int_equal(drain(&f), 2);
	assert_taken(&f, then, 5);
	assert_int_equal(f.rd.nholes, 0);
}

/*
 * Thread A is writing record 1 as the drain passes it; while the drain
 * takes thread B's record 2, A publishes 1 and then its next record, 3.
 * A's records must come in A's order: 1 before 3, in the same drain.
 */
static void test_hole_written_during_drain(void **state)
{
	static const uint64_t want[] = { 0, 2, 1, 3, 4 };

	(void)state;
	fake_init(&f, 8);
	for (int i = 0; i < 5; i++)
		claim(&f);
	publish(&f, 0);
	publish(&f, 2);
	publish(&f, 4);
	f.writer_at = 2;
	f.writer_publishes[0] = 1;
	f.writer_publishes[1] = 3;
	assert_int_equal(drain(&f), 5);
	assert_taken(&f, want, 5);
	assert_int_equal(f.rd.nholes, 0);
	assert_int_equal(f.rd.tail, 5);
}

/* The owner refuses record 2 (no room yet): the drain ends there, and the
 * next one starts from it. */
static void test_refused(void **state)
{
	static const uint64_t want[] = { 0, 1, 2, 3 };

	(void)state;
	fake_init(&f, 8);
	for (int i = 0; i < 4; i++)
		publish(&f, claim(&f));
	f.refuse = 2;
	assert_int_equal(drain(&f), 2);
	assert_int_equal(f.rd.tail, 2);
	assert_int_equal(drain(&f), 0);
	f.refuse = 0;
	assert_int_equal(drain(&f), 2);
	assert_taken(&f, want, 4);
	/* a refused hole stays a hole */
	claim(&f);			/* 4: unwritten */
	publish(&f, claim(&f));		/* 5 */
	assert_int_equal(drain(&f), 1);
	publish(&f, 4);
	f.refuse = 4;
	assert_int_equal(drain(&f), 0);
	assert_int_equal(f.rd.nholes, 1);
	f.refuse = 0;
	assert_int_equal(drain(&f), 1);
	assert_int_equal(f.rd.nholes, 0);
}

/* Round two of a 4-record ring: a record claimed but not yet written
 * still holds round one's freed sequence word, which is not taken. */
static void test_wrap(void **state)
{
	static const uint64_t want[] = { 0, 1, 2, 3, 5, 4 };

	(void)state;
	fake_init(&f, 4);
	for (int i = 0; i < 4; i++)
		publish(&f, claim(&f));
	assert_int_equal(drain(&f), 4);
	assert_int_equal(claim(&f), 4);	/* record 0 again, unwritten */
	publish(&f, claim(&f));		/* 5, record 1 */
	assert_int_equal(drain(&f), 1);
	assert_int_equal(f.rd.holes[0], 4);
	publish(&f, 4);
	assert_int_equal(drain(&f), 1);
	assert_taken(&f, want, 6);
}

/* More records being written than holes to remember them: the drain
 * stops at the first it cannot remember, and goes on from there. */
static void test_holes_full(void **state)
{
	(void)state;
	fake_init(&f, 256);
	for (int i = 0; i < PAD_RING_HOLES + 6; i++)
		claim(&f);
	publish(&f, PAD_RING_HOLES + 2);
	assert_int_equal(drain(&f), 0);
	assert_int_equal(f.rd.nholes, PAD_RING_HOLES);
	assert_int_equal(f.rd.tail, PAD_RING_HOLES);
	for (uint64_t pos = 0; pos < PAD_RING_HOLES + 6; pos++)
		if (pos != PAD_RING_HOLES + 2)
			publish(&f, pos);
	assert_int_equal(drain(&f), PAD_RING_HOLES + 6);
	assert_int_equal(f.rd.nholes, 0);
	assert_int_equal(f.rd.tail, PAD_RING_HOLES + 6);
	/* every position exactly once */
	for (uint64_t pos = 0; pos < PAD_RING_HOLES + 6; pos++) {
		int seen = 0;
		for (size_t i = 0; i < f.ntaken; i++)
			seen += f.taken[i] == pos;
		assert_int_equal(seen, 1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_order),
		cmocka_unit_test(test_hole),
		cmocka_unit_test(test_hole_written_during_drain),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_holes_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
