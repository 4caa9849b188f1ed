/* tpfork ROUNDS: forks ROUNDS children one after another.  Each child
 * calls mix() 1000 times and exits with a status computed from the
 * results; the parent calls mix() once per round and checks the child's
 * status against its own computation:
 *
 *   ground: round=R child=ok|bad status=S
 *   ground: done rounds=ROUNDS bad=B parent_calls=ROUNDS*1001
 *
 * The parent's calls: one per round plus the 1000 of its own check.
 * A child runs the probed code after the fork: whatever the agent
 * patched there must be gone from its memory, or it crashes.
 */
#include <sys/wait.h>
#include <unistd.h>
#include "tpground.h"

__attribute__((noinline)) long mix(long x)
{
	long y = x * 2654435761L; /* MARK:mix-body */
	return (y ^ (y >> 13)) & 0xffff;
}

static int child_status(int round)
{
	long acc = round;

	for (int i = 0; i < 1000; i++)
		acc = (acc + mix(acc + i)) & 0xffff;
	return (int)(acc & 0x7f);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 10, bad = 0;

	for (int r = 0; r < rounds; r++) {
		int status = 0;
		pid_t pid;

		mix(r);
		fflush(NULL);
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0)
			_exit(child_status(r));
		if (waitpid(pid, &status, 0) != pid)
			return 1;
		int ok = WIFEXITED(status) && WEXITSTATUS(status) == child_status(r);
		bad += !ok;
		ground("round=%d child=%s status=%#x", r, ok ? "ok" : "bad", status);
	}
	ground("done rounds=%d bad=%d parent_calls=%d", rounds, bad, rounds * 1001); /* MARK:done */
	return 0;
}
