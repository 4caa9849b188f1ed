/* argv.c - states the arguments it received, in a form no byte of them
 * can disguise: each as its length and its bytes in hex, one line each.
 * The tests pass arguments with spaces, quotes, `$`, globs, backslashes,
 * newlines, empty ones and leading dashes, and compare these lines with
 * what they meant to pass.
 *
 * Usage: argv [ARGS...]   lines "ground: argc=N", then per argument
 *                         "ground: argI len=L hex=H", then "ground: done";
 *                         see ground.h for where they go.
 *
 * show_arg() is a function of its own so that probe-trace can probe it
 * (its arguments: the index, the string, the length). */
#include <string.h>
#include "ground.h"

__attribute__((noinline)) void show_arg(int i, const char *arg, unsigned long len)
{
	char hex[1024];
	size_t n = 0;

	for (unsigned long k = 0; k < len && n + 3 < sizeof(hex); k++)
		n += snprintf(hex + n, sizeof(hex) - n, "%02x", (unsigned char)arg[k]);
	hex[n] = '\0';
	ground("arg%d len=%lu hex=%s", i, len, hex);
}

int main(int argc, char **argv)
{
	ground("argc=%d", argc);
	for (int i = 1; i < argc; i++)
		show_arg(i, argv[i], strlen(argv[i]));
	ground("done");
	return 0;
}
