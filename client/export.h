/*
 * export.h - trace files as other tools read them: the Trace Event JSON
 * of Perfetto and chrome://tracing (chrome.c) and CTF 1.8 for babeltrace2
 * and Trace Compass (ctf.c).  `probe-trace dump --format=chrome|ctf`.
 */
#ifndef PROBE_CLIENT_EXPORT_H
#define PROBE_CLIENT_EXPORT_H

#include <stdbool.h>
#include <stdint.h>

struct tfile_reader;
struct frame_filter;

struct export_opts {
	const char *output;		/* file or directory; NULL: stdout */
	bool force;			/* replace an existing output */
	uint64_t limit;			/* frames that pass the filter */
	const struct frame_filter *filter;
	const char *who;		/* messages' prefix */
};

/* Each reads the open file's frames and returns an exit status
 * (PT_EXIT_*), having said what went wrong on stderr. */
int export_chrome(struct tfile_reader *t, const struct export_opts *o);
int export_ctf(struct tfile_reader *t, const struct export_opts *o);

/* A name TSDL and JSON users can take as an identifier: letters, digits
 * and '_' only, not starting with a digit; written into buf. */
const char *export_ident(const char *name, char *buf, size_t size);

#endif
