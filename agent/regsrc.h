/*
 * regsrc.h - a hit's registers, wherever they were taken (see regsrc.c).
 */
#ifndef PROBE_REGSRC_H
#define PROBE_REGSRC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch/arch.h"

struct process;
struct thread;

/*
 * Where a probe hit's registers are read from: a stopped thread's
 * register cache (regsrc_thread, regs.c) or a block a jump pad's record
 * was loaded into (regsrc_record).  Filled by whoever has the hit, read
 * by the collection alone (regsrc_read, regsrc_block).
 */
struct regsrc {
	const struct arch_ops *arch;	/* the register table */
	unsigned int features;		/* the process's regset (nregs_for) */
	struct process *proc;		/* whose memory the hit reads */
	struct thread *t;		/* the stopped thread; NULL: a record */
	pid_t tid;			/* the hitting thread; 0: unknown (the
					   record holds none) */
	uint8_t *blk;			/* the gdb register block */
	/* Every register of blk is current (a record); else the general
	 * ones alone (is_general), the rest coming from fetch_rest. */
	bool complete;
	bool (*is_general)(unsigned int regnum);
	/* Makes every register of blk current: 0 or -errno. */
	int (*fetch_rest)(struct regsrc *s);
};

/* A record's registers, every one of them in `blk` already, with the
 * hitting thread's id `tid` (0 when the pad stored none). */
void regsrc_record(struct regsrc *s, const struct arch_ops *arch,
		   unsigned int features, struct process *p, uint8_t *blk,
		   pid_t tid);
/* Register `regnum` (at most 64 bits, zero-extended) of the hit: 0,
 * -EINVAL for no such register, or the fetch's -errno. */
int regsrc_read(struct regsrc *s, unsigned int regnum, uint64_t *value);
/* The whole block, every register current; NULL when the rest cannot
 * be fetched (the thread is gone). */
const uint8_t *regsrc_block(struct regsrc *s);

#endif
