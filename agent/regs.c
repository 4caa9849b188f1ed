/*
 * regs.c - a stopped thread's registers, cached.
 *
 * Each thread has a register cache (agent.ptrace->regcache_size bytes)
 * whose first bytes are the gdb register block.  It is filled lazily and
 * in two classes, because a probe hit needs the general registers only
 * and the kernel gives those in one call: gpr_valid says the general
 * registers are current, regs_valid that all are.  Writes go to the
 * block and mark it dirty; the thread gets them back (regs_flush) before
 * it runs, or at once for the PC, which a detach or kill must not lose.
 * A resume invalidates everything: the kernel's view is the truth again.
 * A probe hit reads the cache through a register source (regsrc.c,
 * regsrc_thread), as the collection of a jump pad's record reads the
 * block that record was loaded into (regs_load_record).
 *
 * How the kernel's views become the block is per arch (ptrace-arch.h);
 * which register is where, and how wide, is the arch's table (arch.h).
 * Nothing here knows a register by name.
 */
#define LOG_DOMAIN "regs"
#include "config.h"

#include <errno.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/log.h"
#include "agent/regblock.h"
#include "agent/regsrc.h"

unsigned int regs_detect_features(pid_t tid)
{
	return agent.ptrace->detect_features(tid);
}

size_t regs_block_size(const struct process *p)
{
	return agent.arch->regblock_size_for(p->features);
}

size_t regs_cache_size(void)
{
	return agent.ptrace->regcache_size;
}

void regs_invalidate(struct thread *t)
{
	t->regs_valid = false;
	t->gpr_valid = false;
	t->regs_dirty = false;
	t->regs_pad = false;
}

int regs_fetch_gpr(struct thread *t)
{
	int err;

	if (t->regs_valid || t->gpr_valid)
		return 0;
	if ((err = agent.ptrace->fetch_gpr(t)) < 0)
		return err;
	t->gpr_valid = true;
	return 0;
}

int regs_fetch(struct thread *t)
{
	int err;

	if (t->regs_valid)
		return 0;
	if ((err = regs_fetch_gpr(t)) < 0)
		return err;
	if ((err = agent.ptrace->fetch_rest(t)) < 0)
		return err;
	t->regs_valid = true;
	return 0;
}

int regs_flush(struct thread *t)
{
	int err;

	if (!t->regs_dirty || !(t->regs_valid || t->gpr_valid))
		return 0;
	if ((err = agent.ptrace->flush(t)) < 0)
		return err;
	t->regs_dirty = false;
	return 0;
}

bool regs_is_general(unsigned int regnum)
{
	return agent.ptrace->is_general(regnum);
}

uint8_t *regs_block_gpr(struct thread *t)
{
	if (regs_fetch_gpr(t) < 0)
		return NULL;
	return t->regcache;
}

uint8_t *regs_block(struct thread *t)
{
	if (regs_fetch(t) < 0)
		return NULL;
	return t->regcache;
}

int regs_read_gdb(struct thread *t, unsigned int regnum, uint64_t *value)
{
	const struct arch_ops *arch = agent.arch;
	uint8_t *blk;

	if (regnum >= arch->nregs_for(t->proc->features) ||
	    arch->regs[regnum].bitsize > 64)
		return -EINVAL;
	blk = regs_is_general(regnum) ? regs_block_gpr(t) : regs_block(t);
	if (!blk)
		return -ESRCH;
	*value = regblock_get(arch, blk, regnum);
	return 0;
}

int regs_get(struct thread *t, unsigned int regnum, uint64_t *value)
{
	return regs_read_gdb(t, regnum, value);
}

int regs_set(struct thread *t, unsigned int regnum, uint64_t value)
{
	const struct arch_ops *arch = agent.arch;
	uint8_t *blk;

	if (regnum >= arch->nregs_for(t->proc->features) ||
	    arch->regs[regnum].bitsize > 64)
		return -EINVAL;
	blk = regs_is_general(regnum) ? regs_block_gpr(t) : regs_block(t);
	if (!blk)
		return -ESRCH;
	regblock_set(arch, blk, regnum, value);
	t->regs_dirty = true;
	return 0;
}

uint64_t regs_get_pc(struct thread *t)
{
	uint8_t *blk = regs_block_gpr(t);

	return blk ? regblock_get(agent.arch, blk, agent.arch->pc_regnum) : 0;
}

int regs_set_pc(struct thread *t, uint64_t pc)
{
	int err = regs_set(t, agent.arch->pc_regnum, pc);

	if (err < 0)
		return err;
	/* Written at once: a detach or kill must not lose it. */
	return regs_flush(t);
}

int regs_load_pad(struct thread *t, const uint64_t *frame, const uint8_t *image,
		  unsigned int image_form, const uint64_t *bases)
{
	if (!agent.ptrace->load_pad)
		return -ENOSYS;
	return agent.ptrace->load_pad(t, frame, image, image_form, bases);
}

int regs_load_record(const struct process *p, uint8_t *blk, const uint64_t *frame,
		     const uint8_t *image, unsigned int image_form, const uint64_t *bases)
{
	if (!agent.ptrace->load_record)
		return -ENOSYS;
	return agent.ptrace->load_record(blk, p->features, frame, image, image_form, bases);
}

/* A thread source's fetch (regsrc.h): the rest of t's cache. */
static int thread_fetch_rest(struct regsrc *s)
{
	return regs_fetch(s->t);
}

int regsrc_thread(struct regsrc *s, struct thread *t)
{
	int err;

	if ((err = regs_fetch_gpr(t)) < 0)
		return err;
	*s = (struct regsrc){
		.arch = agent.arch,
		.features = t->proc->features,
		.proc = t->proc,
		.t = t,
		.tid = t->tid,
		.blk = t->regcache,
		.complete = false,
		.is_general = agent.ptrace->is_general,
		.fetch_rest = thread_fetch_rest,
	};
	return 0;
}

void regs_to_gpregs(const uint8_t *blk, struct arch_gpregs *g)
{
	regblock_to_gpregs(agent.arch, blk, g);
}

void regs_from_gpregs(uint8_t *blk, const struct arch_gpregs *g)
{
	regblock_from_gpregs(agent.arch, blk, g);
}
