/*
 * procfs.c - what /proc says about a thread that ptrace does not: its
 * state letter (a zombie leader waits for its group without any wait
 * status), the CPU it last ran on, and its name.
 */
#define LOG_DOMAIN "inferior"
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/inferior.h"

/* Thread `tid`'s state letter in /proc (R, S, t, Z, X...); 'X' when it is
 * gone already. */
char thread_proc_state(pid_t pid, pid_t tid)
{
	char path[64], buf[512];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 'X';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 'X';
	buf[n] = '\0';
	/* The state follows the command name's closing parenthesis. */
	const char *s = strrchr(buf, ')');
	return s && s[1] == ' ' ? s[2] : '?';
}

bool thread_is_zombie(pid_t pid, pid_t tid)
{
	char state = thread_proc_state(pid, tid);

	return state == 'Z' || state == 'X';
}

unsigned int thread_core(pid_t tid)
{
	char path[64], buf[1024];
	int fd;
	ssize_t n;
	unsigned int core = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* Field 39 is the CPU; count fields after the command's ')'. */
	char *s = strrchr(buf, ')');
	if (!s)
		return 0;
	int field = 2;
	for (s++; *s && field < 39; s++)
		if (*s == ' ')
			field++;
	if (field == 39)
		core = strtoul(s, NULL, 10);
	return core;
}

const char *thread_name(pid_t pid, pid_t tid, char *buf, size_t size)
{
	char path[64];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}
