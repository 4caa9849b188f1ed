/*
 * log.c - per-domain debug output on stderr.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/log.h"

/* Every domain a file may use; --help lists them. */
static const char *const log_domains[] = {
	"agent", "rsp", "server", "inferior", "ptrace", "regs", "mem",
	"break", "xfer", "vfile", "tp", "xol", "pad", "arch", "hot", "keeper", "solib",
	"syscall", "step", NULL
};
static unsigned int log_mask;

static int log_domain_index(const char *name, size_t len)
{
	for (int i = 0; log_domains[i]; i++)
		if (strlen(log_domains[i]) == len &&
		    strncmp(log_domains[i], name, len) == 0)
			return i;
	return -1;
}

int log_enable(const char *list)
{
	const char *p = list;

	while (*p) {
		size_t len = strcspn(p, ",");
		if (len == 3 && strncmp(p, "all", 3) == 0) {
			log_mask = ~0u;
		} else {
			int i = log_domain_index(p, len);
			if (i < 0) {
				fprintf(stderr, "probe-agent: unknown debug domain '%.*s' (known:",
					(int)len, p);
				for (int j = 0; log_domains[j]; j++)
					fprintf(stderr, " %s", log_domains[j]);
				fprintf(stderr, ", all)\n");
				return -EINVAL;
			}
			log_mask |= 1u << i;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

void log_disable_all(void)
{
	log_mask = 0;
}

bool log_enabled(const char *domain)
{
	if (!log_mask)
		return false;
	int i = log_domain_index(domain, strlen(domain));
	return i >= 0 && (log_mask & (1u << i));
}

void log_msg(const char *domain, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "[%s] ", domain);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

bool log_quiet;

void log_always(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

void log_user(const char *fmt, ...)
{
	va_list ap;

	if (log_quiet)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

void die(const char *fmt, ...)
{
	va_list ap;

	fputs("probe-agent: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}
