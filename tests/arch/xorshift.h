/*
 * xorshift.h - the random numbers of the differential tests: xorshift64*,
 * the same sequence on every host for a seed.  The test defines SEED
 * before it includes this.
 */
#ifndef PROBE_TESTS_XORSHIFT_H
#define PROBE_TESTS_XORSHIFT_H

#include <stdint.h>

static uint64_t rng = SEED;

/* The next 64-bit number. */
static inline uint64_t xorshift_next(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ull;
}

/* A 64-bit register value: often one that makes a test go the rarer way
 * (0, a single bit, the W part zero, the W part alone, all ones). */
static inline uint64_t xorshift_value(void)
{
	switch (xorshift_next() % 8) {
	case 0: return 0;
	case 1: return 1ull << (xorshift_next() % 64);
	case 2: return xorshift_next() << 32;
	case 3: return xorshift_next() & 0xffffffffull;
	case 4: return ~0ull;
	default: return xorshift_next();
	}
}

#endif
