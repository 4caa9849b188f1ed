/*
 * regsrc.c - a hit's registers, wherever they were taken.
 *
 * A probe hit is collected (trace-run.c: a tracepoint's condition, its
 * agent expressions, the `R` block of its frame) from a register source,
 * and from nothing else that knows where the registers came from:
 *
 *   - a stopped thread (regsrc_thread, regs.c): its register cache, the
 *     general registers fetched for the hit, the others fetched from the
 *     kernel when first asked for;
 *   - a jump pad's record in the ring (pad-drain.c, regsrc_record): every
 *     register loaded into a block of the drain's by the arch
 *     (ptrace_arch_ops.load_record).  The thread that made it went on
 *     long ago; there is nothing to fetch, no thread to touch, and the
 *     only name it has is the tid the pad stored.
 *
 * Reading a register is the same for both: the arch's table says where
 * it is in the block.  No system calls here (a thread's fetch is its
 * source's own callback): tests/unit collects a record with it.
 */
#include "config.h"

#include <errno.h>

#include "agent/regblock.h"
#include "agent/regsrc.h"

void regsrc_record(struct regsrc *s, const struct arch_ops *arch,
		   unsigned int features, struct process *p, uint8_t *blk,
		   pid_t tid)
{
	*s = (struct regsrc){
		.arch = arch,
		.features = features,
		.proc = p,
		.tid = tid,
		.blk = blk,
		.complete = true,
	};
}

int regsrc_read(struct regsrc *s, unsigned int regnum, uint64_t *value)
{
	const struct arch_ops *arch = s->arch;
	int err;

	if (regnum >= arch->nregs_for(s->features) || arch->regs[regnum].bitsize > 64)
		return -EINVAL;
	if (!s->complete && !s->is_general(regnum) && (err = s->fetch_rest(s)) < 0)
		return err;
	*value = regblock_get(arch, s->blk, regnum);
	return 0;
}

const uint8_t *regsrc_block(struct regsrc *s)
{
	if (!s->complete && s->fetch_rest(s) < 0)
		return NULL;
	return s->blk;
}
