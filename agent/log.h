/*
 * log.h - the agent's diagnostics.
 *
 * Each file defines LOG_DOMAIN before including this header; `--debug=a,b`
 * turns domains on at run time ("all" for every one).  Messages go to
 * stderr, which is never the RSP channel (stdio transport uses stdout for
 * packets and stdin for gdb's input).
 */
#ifndef PROBE_AGENT_LOG_H
#define PROBE_AGENT_LOG_H

#include <stdbool.h>

#ifndef LOG_DOMAIN
#define LOG_DOMAIN "agent"
#endif

/* Parses a comma-separated list of domains; returns -EINVAL for an
 * unknown one. */
int log_enable(const char *list);
void log_disable_all(void);
bool log_enabled(const char *domain);
void log_msg(const char *domain, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A message for the user, always shown. */
/* Progress messages on stderr (gdbserver's), unless --quiet. */
extern bool log_quiet;
void log_user(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same, even with --quiet: what a caller waits for ("Listening on
 * port N" tells which port was chosen). */
void log_always(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Start-up failure: prints and exits 1. */
void die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

#define debug(...)                                                             \
	do {                                                                   \
		if (log_enabled(LOG_DOMAIN))                                   \
			log_msg(LOG_DOMAIN, __VA_ARGS__);                      \
	} while (0)

#endif
