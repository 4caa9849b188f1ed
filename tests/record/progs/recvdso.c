/*
 * recvdso.c - a thread that spends its time in the vDSO's clock_gettime,
 * beside one that calls a probed function, for record-vdso.test.
 *
 *   recvdso GROUND SECONDS
 *
 * GROUND gets "pid P" and "spinner T" (the spinning thread's id) once
 * both threads run, then, after SECONDS, "hot N" (the calls of hot) and
 * "spins K" (the spinner's clock_gettime calls).  The main thread calls
 * hot(i) every 100 us; the spinner calls clock_gettime(CLOCK_REALTIME)
 * back to back, so that a stop of the process most likely finds it
 * inside the vDSO by its own call, not a pad's.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;
static volatile pid_t spinner_tid;
static long spins;

__attribute__((noinline)) long hot(long i)
{
	return i * 3 + 1;
}

static void *spin(void *arg)
{
	struct timespec ts;

	(void)arg;
	spinner_tid = gettid();
	while (!stop) {
		clock_gettime(CLOCK_REALTIME, &ts);
		spins++;
	}
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	pthread_t th;
	long n = 0, sum = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: recvdso GROUND SECONDS\n");
		return 2;
	}
	FILE *g = fopen(argv[1], "w");
	if (!g) {
		perror(argv[1]);
		return 2;
	}
	double secs = atof(argv[2]);
	if (pthread_create(&th, NULL, spin, NULL) != 0) {
		perror("pthread_create");
		return 2;
	}
	while (!spinner_tid)
		usleep(1000);
	fprintf(g, "pid %d\nspinner %d\n", (int)getpid(), (int)spinner_tid);
	fflush(g);
	double end = now() + secs;
	while (now() < end) {
		sum += hot(n++);
		usleep(100);
	}
	stop = 1;
	pthread_join(th, NULL);
	fprintf(g, "hot %ld\nspins %ld\n", n, spins);
	fclose(g);
	return sum == 0;
}
