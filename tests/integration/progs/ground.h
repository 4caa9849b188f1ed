/* ground.h - how a target program states its own ground truth.
 *
 * Every line a target program wants a test to check is written by ground()
 * as "ground: <text>\n" with one write(2) on a file opened O_APPEND, so a
 * line is never lost when the program is killed or crashes right after, and
 * never mixed with gdb's or the stub's output.  The file is named by the
 * environment variable ITEST_GROUND (the runner sets it; the stub passes its
 * environment on to the program); without it the lines go to stdout. */
#ifndef ITEST_GROUND_H
#define ITEST_GROUND_H

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void ground(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));

static void ground(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n, fd;
	const char *path = getenv("ITEST_GROUND");

	n = snprintf(buf, sizeof(buf), "ground: ");
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	fd = path ? open(path, O_WRONLY | O_APPEND | O_CREAT, 0644) : 1;
	if (fd < 0)
		return;
	if (write(fd, buf, n) < 0) {
		/* nothing useful to do: the test will see the line missing */
	}
	if (fd != 1)
		close(fd);
}

#endif
