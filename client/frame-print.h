/*
 * frame-print.h - a frame as `probe-trace dump` prints it, shared by dump
 * and `record --live` so both print a frame the same way.
 */
#ifndef PROBE_CLIENT_FRAME_PRINT_H
#define PROBE_CLIENT_FRAME_PRINT_H

#include <stdio.h>

#include "client/tfile-read.h"

/* "#N probe(typed values)  thread TID (NAME)  HH:MM:SS.us  values...",
 * then the registers and the memory blocks nobody hid. */
void frame_print_text(FILE *out, const struct tfile_reader *t,
		      const struct frame_view *v);
/* One JSON object and a newline. */
void frame_print_json(FILE *out, const struct tfile_reader *t,
		      const struct frame_view *v);

#endif
