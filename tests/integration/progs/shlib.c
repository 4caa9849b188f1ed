/* shlib.c - calls into libitest.so (found by an $ORIGIN rpath) and into
 * libc's getpid(), for breakpoints in both and `info sharedlibrary`. */
#include "ground.h"

int lib_mul(int a, int b);
extern int lib_calls;

int main(void)
{
	int pid, p;

	p = lib_mul(6, 7);
	pid = (int)getpid();	/* MARK:call-getpid */
	ground("pid=%d lib_mul=%d lib_calls=%d &lib_calls=%p lib_mul_addr=%p",
	       pid, p, lib_calls, (void *)&lib_calls, (void *)lib_mul);
	return 0;
}
