/* fork-spin.c - threads that fork and reap children in a loop for about
 * three seconds while main calls spin_started(), then the program reports
 * "done".  A
 * child left stopped by a debugger that let the program go keeps its
 * parent thread in waitpid() for ever, and "done" never comes. */
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>
#include "ground.h"

#define NTHREADS 4

static time_t deadline;

/* The breakpointed function: the threads fork meanwhile. */
void spin_started(void);
void spin_started(void)
{
	__asm__ volatile("" ::: "memory");
}

static void *forker(void *arg)
{
	while (time(NULL) < deadline) {
		pid_t pid = fork();
		int status;

		if (pid == 0)
			_exit(7);
		if (pid < 0 || waitpid(pid, &status, 0) != pid ||
		    !WIFEXITED(status) || WEXITSTATUS(status) != 7) {
			ground("bad child");
			exit(1);
		}
	}
	return arg;
}

int main(void)
{
	pthread_t th[NTHREADS];
	int i;

	ground("pid=%d", (int)getpid());
	deadline = time(NULL) + 3;
	for (i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, forker, NULL);
	spin_started();
	for (i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	ground("done");
	return 0;
}
