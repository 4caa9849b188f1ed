/*
 * retpad-table.h - what the word tests of the link-register arches'
 * return probes share (aarch64-retpad-table.c, arm-retpad-table.c, cmocka,
 * on any host): reading the code's 32-bit little-endian words, finding
 * words and sequences of them, every branch inside the code, gettid the
 * only system call, and the bad ring layouts every trampoline refuses.
 *
 * Included once, after cmocka.h and the test's defines:
 *   RT_SVC              the system call's word
 *   RT_GETTID           the word before each: the gettid number's load
 *   RT_IMAGE_BYTES      the register image at a record's start
 * and before its own target_of (declared here): where the direct branch
 * at an offset goes (an offset of the same code), -1 for no branch.
 */
#ifndef PROBE_TESTS_RETPAD_TABLE_H
#define PROBE_TESTS_RETPAD_TABLE_H

static long target_of(const uint8_t *b, size_t off);

static uint32_t word_at(const uint8_t *b, size_t off)
{
	return (uint32_t)b[off] | (uint32_t)b[off + 1] << 8 | (uint32_t)b[off + 2] << 16 |
	       (uint32_t)b[off + 3] << 24;
}

/* Every branch of the `n` bytes lands in [0, n]; returns how many. */
static int branches_inside(const uint8_t *b, size_t n)
{
	int count = 0;

	for (size_t off = 0; off < n; off += 4) {
		long t = target_of(b, off);
		if (t < 0)
			continue;
		count++;
		if (t > (long)n)
			fail_msg("branch at %zu goes to %ld, outside 0..%zu", off, t, n);
	}
	return count;
}

/* The offset of the first `w` at or after `from`, -1 if none. */
static long find(const uint8_t *b, size_t n, size_t from, uint32_t w)
{
	for (size_t off = from; off + 4 <= n; off += 4)
		if (word_at(b, off) == w)
			return (long)off;
	return -1;
}

/* The words must all be there, in this order. */
static void in_order(const uint8_t *b, size_t n, const uint32_t *w, size_t nw)
{
	long at = 0;

	for (size_t i = 0; i < nw; i++) {
		long f = find(b, n, (size_t)at, w[i]);
		if (f < 0)
			fail_msg("word %zu (%08x) missing after offset %ld", i, w[i], at);
		at = f + 4;
	}
}

/* The system calls: each is gettid (RT_GETTID right before). */
static int svcs(const uint8_t *b, size_t n)
{
	int count = 0;

	for (size_t off = 4; off < n; off += 4)
		if (word_at(b, off) == RT_SVC) {
			assert_int_equal(word_at(b, off - 4), RT_GETTID);
			count++;
		}
	return count;
}

typedef int (*ret_exit_fn)(uint8_t *out, size_t size, const struct arch_ret_pad *r,
			   size_t *trap_off);

/*
 * The layouts every trampoline refuses, from the good one `rp`: no area,
 * a trampoline off its word, a ring that is not a power of two of
 * records, records too small for the image, the frame over the image,
 * the return's descriptor inside the frame or past the record's end.
 * And the good one does not fit in 64 bytes.
 */
static void exit_refuses_bad_layouts(ret_exit_fn emit_exit, const struct arch_ret_pad *rp)
{
	uint8_t b[4096];
	size_t trap;
	struct arch_ret_pad bad;

	assert_true(emit_exit(b, sizeof(b), rp, &trap) > 0);
	bad = *rp;
	bad.area = 0;
	assert_int_equal(emit_exit(b, sizeof(b), &bad, &trap), -EINVAL);
	bad = *rp;
	bad.tramp += 2;
	assert_int_equal(emit_exit(b, sizeof(b), &bad, &trap), -EINVAL);
	bad = *rp;
	bad.ring.nrecords = 100;
	assert_int_equal(emit_exit(b, sizeof(b), &bad, &trap), -EINVAL);
	bad = *rp;
	bad.ring.record_shift = 9;
	assert_int_equal(emit_exit(b, sizeof(b), &bad, &trap), -EINVAL);
	bad = *rp;
	bad.ring.off_frame = RT_IMAGE_BYTES - 8;
	assert_int_equal(emit_exit(b, sizeof(b), &bad, &trap), -EINVAL);
	bad = *rp;
	bad.ring.off_blocks = rp->ring.off_frame + 8;
	assert_int_equal(emit_exit(b, sizeof(b), &bad, &trap), -EINVAL);
	bad = *rp;
	bad.ring.off_blocks = (1u << rp->ring.record_shift) - 8;
	assert_int_equal(emit_exit(b, sizeof(b), &bad, &trap), -EINVAL);
	assert_int_equal(emit_exit(b, 64, rp, &trap), -ENOSPC);
}

#endif
