/* tpground.h - how the tracepoint test programs report their ground truth.
 *
 * Every program prints what it knows to be true ("ground: call=3 a=3 ...")
 * to the file named by $TP_GROUND, or to stdout when it is unset.  A file
 * keeps the truth apart from the stub's own output (over stdio the
 * inferior's stdout is the stub's), and line buffering keeps every line
 * written before a signal kills the program.
 *
 * MARK:name comments in the programs name source lines the tests put
 * tracepoints on; tptest.sh's mark helper turns them into line numbers.
 */
#ifndef TPGROUND_H
#define TPGROUND_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static FILE *ground_file;

static void ground(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void ground(const char *fmt, ...)
{
	va_list ap;

	if (!ground_file) {
		const char *path = getenv("TP_GROUND");

		ground_file = path && *path ? fopen(path, "a") : stdout;
		if (!ground_file)
			ground_file = stdout;
		setvbuf(ground_file, NULL, _IOLBF, 0);
	}
	/* One line at a time when threads report together. */
	flockfile(ground_file);
	fputs("ground: ", ground_file);
	va_start(ap, fmt);
	vfprintf(ground_file, fmt, ap);
	va_end(ap);
	fputc('\n', ground_file);
	funlockfile(ground_file);
}

#endif
