/* lldbprog.c - the program of lldb.itest: two threads wait on a pipe while
 * the main thread calls usleep() from work(), in libc, three times.  It
 * states where libc and usleep are, its pid and every thread's tid, and
 * the argument of each usleep call before making it, and where the kernel
 * put the dynamic linker and the vDSO (the auxiliary vector). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include "ground.h"

static int gate[2];
static pthread_barrier_t started;

static void *waiter(void *arg)
{
	char c;

	ground("thread=%d tid=%ld", (int)(long)arg, (long)syscall(SYS_gettid));
	pthread_barrier_wait(&started);
	if (read(gate[0], &c, 1) < 0)
		return NULL;
	return NULL;
}

void work(unsigned int n);
void work(unsigned int n)
{
	ground("call=%u useconds=%u", n, 1000 * n);
	usleep(1000 * n);
}

int main(void)
{
	pthread_t t[2];
	Dl_info info;
	void *fn = dlsym(RTLD_DEFAULT, "usleep");

	if (!fn || !dladdr(fn, &info))
		return 2;
	ground("pid=%d usleep=%p libc_base=%p libc=%s work=%p", (int)getpid(),
	       fn, info.dli_fbase, info.dli_fname, (void *)work);
	ground("interp=%#lx vdso=%#lx", getauxval(AT_BASE),
	       getauxval(AT_SYSINFO_EHDR));
	if (pipe(gate) < 0)
		return 2;
	pthread_barrier_init(&started, NULL, 3);
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, waiter, (void *)(i + 1));
	pthread_barrier_wait(&started);
	for (unsigned int n = 1; n <= 3; n++)
		work(n);
	if (write(gate[1], "xx", 2) != 2)
		return 2;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	ground("done");
	return 0;
}
