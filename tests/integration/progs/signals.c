/* signals.c - raises SIGUSR1 and SIGALRM itself; gdb may deliver SIGUSR2 at
 * rest().  Each handler counts; the counts are the ground truth. */
#include <signal.h>
#include <string.h>
#include "ground.h"

static volatile sig_atomic_t usr1_count, usr2_count, alrm_count, last_sig;

static void handler(int sig)
{
	last_sig = sig;
	if (sig == SIGUSR1)
		usr1_count++;
	else if (sig == SIGUSR2)
		usr2_count++;
	else if (sig == SIGALRM)
		alrm_count++;
}

/* Tests stop here to send a signal with `signal SIGUSR2`. */
void rest(void);
void rest(void)
{
	ground("rest");	/* MARK:rest-body */
}

int main(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);

	raise(SIGUSR1);		/* MARK:raise-usr1 */
	ground("after usr1: usr1_count=%d", (int)usr1_count);
	raise(SIGALRM);
	ground("after alrm: alrm_count=%d", (int)alrm_count);
	rest();
	ground("after rest: usr2_count=%d last_sig=%d", (int)usr2_count, (int)last_sig);
	ground("final usr1=%d usr2=%d alrm=%d", (int)usr1_count, (int)usr2_count, (int)alrm_count);
	return 0;
}
