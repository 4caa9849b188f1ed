/*
 * recdlopen.c - a program that loads its library late, twice.
 *
 *   recdlopen GROUND LIB N M
 *
 * After 1 s it dlopens LIB, calls late_mix N times, dlcloses LIB, maps
 * anonymous memory where late_mix was (when the kernel lets it: the
 * library is gone) and says whether that memory is all zeros (a probe's
 * breakpoint written after the unmap would show there), unmaps it, opens
 * LIB again and calls late_mix M times.  GROUND gets one line per call,
 * "late_mix A B", and the load lines; stdout gets the results, the same
 * with or without a recorder.
 *
 * With RECDLOPEN_GATE=DIR in the environment it waits for DIR/go1 instead
 * of sleeping, and after the second load for DIR/go2 (a recorder attached
 * meanwhile has detached by then); then it checks that the dynamic
 * linker's hook (r_debug.r_brk) and late_mix hold no breakpoint, and
 * loads and calls the library a third time, untraced: a breakpoint left
 * behind would kill it with SIGTRAP.
 *
 * With RECDLOPEN_CHURN=1 a second thread opens and closes libm.so.6 over
 * and over while the calls of the first load are made (a library event
 * every few microseconds, none of them the probed library's); it says
 * how many times in the ground file ("churn K").  Half way through those
 * calls the main thread waits until the other has done a round since
 * the first call, so that at least one falls among them however fast
 * the calls and however slow the other thread's start.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

typedef int64_t (*mix_fn)(int64_t, int64_t);

static volatile int churn_stop;
static bool churning;
static long churned;	/* rounds done, atomic */

static void *churn(void *arg)
{
	(void)arg;
	while (!churn_stop) {
		void *h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "recdlopen: %s\n", dlerror());
			exit(2);
		}
		dlclose(h);
		__atomic_fetch_add(&churned, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static int64_t calls(FILE *g, const char *lib, int n, int first, uintptr_t *where)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	int64_t sum = 0;

	if (!h) {
		fprintf(stderr, "recdlopen: %s\n", dlerror());
		exit(2);
	}
	mix_fn mix = (mix_fn)dlsym(h, "late_mix");
	if (!mix) {
		fprintf(stderr, "recdlopen: %s\n", dlerror());
		exit(2);
	}
	*where = (uintptr_t)mix;
	fprintf(g, "load %#lx\n", (unsigned long)*where);
	long churn0 = __atomic_load_n(&churned, __ATOMIC_ACQUIRE);
	for (int i = 0; i < n; i++) {
		int64_t a = first + i, b = 7 * (first + i) + 1;
		if (churning && i == n / 2)
			while (__atomic_load_n(&churned, __ATOMIC_ACQUIRE) == churn0)
				usleep(100);
		fprintf(g, "late_mix %lld %lld\n", (long long)a, (long long)b);
		fflush(g);
		sum += mix(a, b);
	}
	dlclose(h);
	return sum;
}

/* The page late_mix was on, now that its library is unmapped: mapped
 * afresh (anonymous, zero-filled), no byte may be other than zero. */
static const char *reuse_check(uintptr_t fn)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t at = fn & ~(uintptr_t)(page - 1);
	unsigned char *m = mmap((void *)at, page, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	const char *what = "clean";

	if (m == MAP_FAILED || (uintptr_t)m != at)
		return "still-mapped";	/* the library stayed: nothing to see */
	for (long i = 0; i < page; i++)
		if (m[i])
			what = "DIRTY";
	munmap(m, page);
	return what;
}

static void gate(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	while (access(path, F_OK) != 0)
		usleep(10000);
}

/* Whether the first byte of the code at `fn` is x86's int3 or aarch64's
 * brk (the breakpoint instructions the agent writes). */
static bool breakpoint_at(uintptr_t fn)
{
	uint32_t insn;

	memcpy(&insn, (const void *)fn, sizeof(insn));
#if defined(__x86_64__)
	return (insn & 0xff) == 0xcc;
#elif defined(__aarch64__)
	return (insn & 0xffe0001f) == 0xd4200000;
#else
	return false;
#endif
}

int main(int argc, char **argv)
{
	const char *gate_dir = getenv("RECDLOPEN_GATE");
	uintptr_t where = 0;

	if (argc != 5) {
		fprintf(stderr, "usage: recdlopen GROUND LIB N M\n");
		return 2;
	}
	FILE *g = fopen(argv[1], "w");
	if (!g) {
		perror(argv[1]);
		return 2;
	}
	int n = atoi(argv[3]), m = atoi(argv[4]);
	if (gate_dir)
		gate(gate_dir, "go1");
	else
		sleep(1);
	pthread_t churner;
	churning = getenv("RECDLOPEN_CHURN") != NULL;
	if (churning && pthread_create(&churner, NULL, churn, NULL) != 0) {
		perror("pthread_create");
		return 2;
	}
	int64_t s1 = calls(g, argv[2], n, 1, &where);
	if (churning) {
		churn_stop = 1;
		pthread_join(churner, NULL);
		fprintf(g, "churn %ld\n", churned);
		churning = false;
	}
	const char *reuse = reuse_check(where);
	fprintf(g, "reuse %s\n", reuse);
	int64_t s2 = calls(g, argv[2], m, 1000, &where);
	printf("first %d calls: %lld\nsecond %d calls: %lld\nreuse %s\n", n,
	       (long long)s1, m, (long long)s2, reuse);
	if (gate_dir) {
		fprintf(g, "second done\n");
		fflush(g);
		gate(gate_dir, "go2");
		uintptr_t brk = (uintptr_t)_r_debug.r_brk;
		printf("r_brk %s\n", brk && breakpoint_at(brk) ? "BREAKPOINT" : "clean");
		void *h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
		mix_fn mix = h ? (mix_fn)dlsym(h, "late_mix") : NULL;
		if (!mix) {
			fprintf(stderr, "recdlopen: %s\n", dlerror());
			return 2;
		}
		printf("late_mix %s\n", breakpoint_at((uintptr_t)mix) ? "BREAKPOINT" : "clean");
		printf("third call: %lld\n", (long long)mix(5, 6));
		dlclose(h);
	}
	fprintf(g, "done\n");
	fclose(g);
	return 0;
}
