/* tpdl.c - target of return-dlopen.tp: a C program, without libgcc_s at
 * start, that loads a C++ library (libtpplug.so) during the trace run.
 * The library's exceptions propagate through c_wrapper(), a return probe
 * in this program (built with -fexceptions, so it has unwind tables), and
 * are caught in the library. */
#include <dlfcn.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "tpground.h"

int c_wrapper(int (*fn)(int), int k)
{
	return fn(k) + 1;
}

/* gdb starts the run here: the library is not loaded yet. */
void before_load(void)
{
	ground("before load");
}

int main(void)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);

	if (n <= 0)
		return 1;
	path[n] = '\0';
	strcpy(strrchr(path, '/') + 1, "libtpplug.so");
	before_load();
	ground("c_wrapper direct value=%d", c_wrapper(abs, -41));
	void *h = dlopen(path, RTLD_NOW);
	if (!h) {
		ground("dlopen failed: %s", dlerror());
		return 1;
	}
	void (*run)(int (*)(int (*)(int), int)) =
		(void (*)(int (*)(int (*)(int), int)))dlsym(h, "plugin_run");
	if (!run)
		return 1;
	run(c_wrapper);
	ground("done");	/* MARK:dl-done */
	return 0;
}
