/* recstrip.c - a program the record tests strip, as every distribution
 * binary is: probes on the library it calls must still work, and a probe
 * on its own function must say what to do instead.  Built without PIE so
 * that the address nm gives for own_step() in the unstripped build is its
 * address in the running process (the `*ADDR` probe).
 *
 * Usage: recstrip calls OUT N   lib_mix(i, 3i+1) and own_step(i) for
 *                               i < N; lines "lib_mix A B R" and
 *                               "own_step I" in OUT
 *        recstrip loop OUT      lib_mix(i, 5) until OUT.stop exists
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int lib_mix(int a, int b);

static FILE *out;

__attribute__((noinline)) void own_step(long i)
{
	fprintf(out, "own_step %ld\n", i);
}

static void mix(int a, int b)
{
	int r = lib_mix(a, b);

	fprintf(out, "lib_mix %d %d %d\n", a, b, r);
	fflush(out);
}

int main(int argc, char **argv)
{
	if (argc < 3 || !(out = fopen(argv[2], "w"))) {
		fprintf(stderr, "usage: recstrip calls|loop OUT [N]\n");
		return 2;
	}
	if (strcmp(argv[1], "calls") == 0 && argc == 4) {
		for (int i = 0; i < atoi(argv[3]); i++) {
			mix(i, 3 * i + 1);
			own_step(i);
		}
	} else if (strcmp(argv[1], "loop") == 0) {
		char stop[4096];
		struct timespec ts = { 0, 2 * 1000 * 1000 };

		snprintf(stop, sizeof(stop), "%s.stop", argv[2]);
		for (int i = 0; access(stop, F_OK) != 0; i++) {
			mix(i, 5);
			nanosleep(&ts, NULL);
		}
	} else {
		fprintf(stderr, "usage: recstrip calls|loop OUT [N]\n");
		return 2;
	}
	fprintf(out, "done\n");
	fclose(out);
	return 0;
}
