/*
 * tfile-sample.h - one realistic x86-64 trace, shared by test-tfile (which
 * reads the file back itself) and tfile-gen (which writes it for gdb).
 *
 * Two tracepoints numbered densely 1 and 2 (gdb's tfile reader needs local
 * numbers = target numbers), the agent's own target.xml and register block
 * (arch_host()), frames with R, M and V blocks, one memory collection over
 * 65535 bytes, and a status as after `tstop`.
 */
#ifndef PROBE_TFILE_SAMPLE_H
#define PROBE_TFILE_SAMPLE_H

#include <stdint.h>

#include "protocol/tbuf.h"
#include "protocol/tp-status.h"
#include "protocol/tracepoint.h"

#define SAMPLE_TP1_ADDR 0x401000u
#define SAMPLE_TP2_ADDR 0x401020u
#define SAMPLE_MEM_ADDR 0x404000u
#define SAMPLE_BIG_ADDR 0x500000u
#define SAMPLE_BIG_LEN 70000u
#define SAMPLE_FRAMES 5

struct tfile_sample {
	struct tp_store store;
	struct tbuf tb;
	struct tp_status status;
	char xml[16384];
	size_t regsize;
	size_t pc_offset;
};

/* Builds the sample; 0 or -errno. */
int tfile_sample_build(struct tfile_sample *s);
void tfile_sample_free(struct tfile_sample *s);
/* The value frame i collected: rip, the 4 bytes at SAMPLE_MEM_ADDR and the
 * $hits TSV (2). */
uint64_t tfile_sample_pc(unsigned i);
uint32_t tfile_sample_word(unsigned i);
int64_t tfile_sample_hits(unsigned i);

#endif
