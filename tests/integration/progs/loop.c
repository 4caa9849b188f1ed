/* loop.c - runs until killed, for attach and detach.  Reports its pid, then
 * calls heartbeat() every 20 ms; every 10th beat is a ground line, so a test
 * can see the process is alive and still making progress after a detach. */
#include <time.h>
#include "ground.h"

volatile int beats;

void heartbeat(int n);
void heartbeat(int n)
{
	beats = n;		/* MARK:heartbeat */
	if (n % 10 == 0)
		ground("beat %d", n);
}

int main(void)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	int n = 0;

	ground("pid=%d", (int)getpid());
	for (;;) {
		heartbeat(++n);
		nanosleep(&ts, NULL);
	}
}
