/*
 * fuzz-elfsym.c - libFuzzer target for ELF symbol reading
 * (client/elfsym.c).
 *
 * Every probe-trace subcommand that names code by symbol opens the
 * program or library with elfsym_open(): a truncated download, a file
 * damaged on a board, or one crafted to mislead must give an error
 * message or a symbol list, never a crash.  The input is the whole file,
 * in a memfd opened by its /proc/self/fd/N path as the client opens any
 * path.  Properties:
 *
 *   1. elfsym_open returns 0 or a negative errno, with a message when it
 *      fails;
 *   2. the symbols are sorted by address, one per address, each with a
 *      name, and the bytes of each one (when the file has them) lie inside
 *      the file's image and are `size` long, which the reads below check
 *      under ASan;
 *   3. every symbol is found again by its own names (elfsym_matches),
 *      and elfsym_code_at agrees with the code pointer;
 *   4. elfsym_close frees everything (LeakSanitizer).
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "client/elfsym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok)
{
	if (!ok)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int memfd = -1;
	static char path[64];
	struct elfsym_file f;
	char err[256];
	unsigned sum = 0;
	int r;

	if (memfd < 0) {
		memfd = memfd_create("fuzz-elfsym", MFD_CLOEXEC);
		check(memfd >= 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	}
	check(ftruncate(memfd, 0) == 0);
	check(pwrite(memfd, data, size, 0) == (ssize_t)size);

	err[0] = '\0';
	r = elfsym_open(&f, path, err, sizeof(err));
	check(r <= 0);
	if (r < 0) {
		check(err[0] != '\0' && memchr(err, '\0', sizeof(err)));
		check(f.nsyms == 0 && f.syms == NULL && f.fd == -1);
		return 0;
	}
	check(f.nsyms > 0);
	for (size_t i = 0; i < f.nsyms; i++) {
		const struct elfsym *s = &f.syms[i];
		size_t avail = 0;
		const uint8_t *at;

		check(s->name && s->name[0]);
		check(s->size > 0);
		if (i)
			check(f.syms[i - 1].addr < s->addr);
		check(elfsym_matches(s, s->name));
		for (size_t k = 0; k < s->naliases; k++)
			check(s->aliases[k] && elfsym_matches(s, s->aliases[k]));
		if (s->demangled)
			check(elfsym_matches(s, s->demangled));
		check(elfsym_display(s) != NULL);
		at = elfsym_code_at(f.elf, s->addr, &avail);
		if (s->code) {
			check(at == s->code && avail >= s->size);
			/* touch every byte: ASan checks they are mapped */
			for (uint64_t k = 0; k < s->size; k++)
				sum += s->code[k];
		}
		if (at && avail)
			sum += at[avail - 1];
	}
	/* keep the reads */
	if (sum == 0xdeadbeef)
		fprintf(stderr, "%u\n", sum);
	elfsym_close(&f);
	check(f.fd == -1 && f.syms == NULL);
	return 0;
}
