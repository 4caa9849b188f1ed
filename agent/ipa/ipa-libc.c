/*
 * ipa-libc.c - the four C library functions the image's code calls (the
 * compiler emits memset and memcpy for structure copies; the interpreter
 * uses memchr and strlen).  The image links no libc.
 *
 * memset and memcpy run on every hit (the interpreter clears its result
 * and each decoded instruction), so they move eight bytes a store: a
 * byte loop made them most of a false condition's cost.  Both arches
 * the image is built for allow unaligned 64-bit accesses to ordinary
 * memory, and the may_alias type keeps the compiler from assuming the
 * bytes are only ever seen as words.
 */
#include <stddef.h>
#include <stdint.h>

#include "agent/ipa/ipa.h"

typedef uint64_t __attribute__((may_alias, aligned(1))) ipa_word;

void *memset(void *s, int c, size_t n)
{
	unsigned char *p = s;
	uint64_t w = 0x0101010101010101ull * (unsigned char)c;

	for (; n >= 8; n -= 8, p += 8)
		*(ipa_word *)p = w;
	while (n--)
		*p++ = (unsigned char)c;
	return s;
}

void *memcpy(void *restrict d, const void *restrict s, size_t n)
{
	unsigned char *dp = d;
	const unsigned char *sp = s;

	for (; n >= 8; n -= 8, dp += 8, sp += 8)
		*(ipa_word *)dp = *(const ipa_word *)sp;
	while (n--)
		*dp++ = *sp++;
	return d;
}

void *memchr(const void *s, int c, size_t n)
{
	const unsigned char *p = s;
	for (; n; n--, p++)
		if (*p == (unsigned char)c)
			return (void *)p;
	return NULL;
}

size_t strlen(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}
