/*
 * syscall.c - system calls a stopped program makes for the agent.
 *
 * The agent needs memory in the traced process (XOL slots, jump pads,
 * their shared table), which only the process itself can map.  So a
 * stopped thread is made to run the call: the arch's system call
 * instruction goes over the bytes at the program's entry point (the
 * site, below), the thread's PC and registers get the call as the arch's
 * ABI wants it (agent.ptrace->syscall), the thread takes one
 * single-step, and then its registers and the bytes go back.  What the
 * thread was doing is untouched, with one exception made on purpose: a
 * system call it was stopped in is not restarted by the kernel in the
 * middle of ours (the ABI's restart register), and its own number goes
 * back with the rest of the registers afterwards.
 *
 * The site is the entry point, not the thread's own PC, because the
 * other threads of the process may be running meanwhile (a probe's
 * first hit maps the XOL area while they run on): one reaching the
 * patched PC would run the system call instruction itself, with its own
 * registers, and go on past the instruction that was there with an
 * error number in its result register.  The thread that hit a probe
 * stands exactly where the others are heading.  The entry point runs
 * once, before any thread exists.  (On aarch64 the thread's own PC also
 * made a call injected at an interrupted system call's restart point
 * run as restart_syscall.)
 *
 * Signals that arrive meanwhile are kept for the thread (pending_signal)
 * rather than lost.  Nothing here knows a register or an instruction.
 */
#define LOG_DOMAIN "syscall"
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "agent/agent.h"
#include "agent/keeper.h"
#include "agent/log.h"
#include "agent/regblock.h"

/* A register's value as the signed result of a system call. */
static long signed_value(unsigned int regnum, uint64_t v)
{
	unsigned int bits = agent.arch->regs[regnum].bitsize;

	if (bits < 64 && (v & (1ull << (bits - 1))))
		v |= ~0ull << bits;
	return (long)(int64_t)v;
}

/* Stops a step over the injected instruction may take before it is given
 * up: each is a signal that came before the instruction ran, kept for
 * later (a few at most), or the step's own trap. */
#define STEP_OVER_STOPS 64

/* t's pc as the kernel has it now, for a message (0 if unknown). */
static unsigned long long pc_now(struct thread *t)
{
	uint64_t pc = 0;

	regs_invalidate(t);
	regs_get(t, agent.arch->pc_regnum, &pc);
	return (unsigned long long)pc;
}

/* PROBE_AGENT_TEST_KILL: the agent dies here, as a SIGKILL would take it. */
static void test_kill(struct thread *t, const char *what, const char *state)
{
	log_always("PROBE_AGENT_TEST_KILL: the agent kills itself while thread %d %s %s",
		   t->tid, state, what);
	raise(SIGKILL);
}

/* Single-steps `t` (step) or runs it on until a trap, keeping other
 * signals.  A fault of the injected code itself (SIGSEGV, SIGBUS, SIGILL
 * or SIGFPE that the kernel raised, si_code > 0) ends it with -EFAULT,
 * not kept for the program, which never ran that code: run again it
 * would fault again, for ever.  `what` names the code for a message. */
static int run_to_trap(struct thread *t, bool step, const char *what)
{
	int status, err;

	for (int round = 0; round < STEP_OVER_STOPS; round++) {
		if (step)
			err = thread_step(t, 0);
		else if ((err = ptrace(PTRACE_CONT, t->tid, NULL, NULL) < 0 ? -errno : 0) == 0)
			keeper_stepping(t->tid, false);
		if (err < 0)
			return err;
		if (!step && agent.opt.test_kill == TEST_KILL_RUN)
			test_kill(t, what, "runs");
		if (waitpid(t->tid, &status, __WALL) < 0)
			return -errno;
		/* A software step's breakpoints go (step.c). */
		if (t->sstep_n) {
			if (WIFSTOPPED(status))
				regs_invalidate(t);
			thread_step_stopped(t, status);
		}
		if (!WIFSTOPPED(status))
			return -ESRCH;	/* killed meanwhile */
		int sig = WSTOPSIG(status);
		if (sig == SIGTRAP && (status >> 16) == 0)
			return 0;
		siginfo_t si;
		if ((sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE) &&
		    (status >> 16) == 0 && ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si) == 0 &&
		    si.si_code > 0) {
			log_always("thread %d: %s faulted (signal %d, code %d) at %#llx",
				   t->tid, what, sig, si.si_code, pc_now(t));
			return -EFAULT;
		}
		/* A signal before the instruction ran: keep it for later. */
		if (sig != SIGSTOP && sig != SIGTRAP && sig != (SIGTRAP | 0x80))
			t->pending_signal = sig;
		else if (sig == SIGSTOP && t->stop_expected)
			t->stop_expected = false;
		if (round == STEP_OVER_STOPS - 1)
			log_always("thread %d: %s stopped %d times without running "
				   "(last status %#x at %#llx): given up",
				   t->tid, what, STEP_OVER_STOPS, status, pc_now(t));
	}
	return -EIO;
}

/* Where the system call instruction goes: the program's entry point
 * (see above), or `pc` when auxv does not say where that is or the entry
 * cannot hold the instruction (misaligned for it). */
static uint64_t syscall_site(struct process *p, uint64_t pc)
{
	const struct ptrace_syscall_abi *abi = &agent.ptrace->syscall;
	uint64_t entry = 0;

	if (process_auxv(p, AT_ENTRY, &entry) && abi->flags_clear)
		entry = (entry + abi->insn_len - 1) / abi->insn_len * abi->insn_len;
	if (!entry || entry % abi->insn_len) {
		debug("process %d: no entry point in auxv: the call runs at the thread's pc",
		      p->pid);
		return pc;
	}
	return entry;
}

/* A copy (malloc'd, `size` bytes) of `t`'s registers as the kernel has
 * them, written first where the agent changed them; *blk is the cache's
 * block.  NULL with *err set. */
static uint8_t *regs_saved(struct thread *t, size_t size, uint8_t **blk, int *err)
{
	uint8_t *saved;

	if (t->regs_dirty && (*err = regs_flush(t)) < 0)
		return NULL;
	/* The kernel's registers: the cache may hold a jump pad's view. */
	regs_invalidate(t);
	if (!(*blk = regs_block_gpr(t))) {
		*err = -ESRCH;
		return NULL;
	}
	if (!(saved = malloc(size))) {
		*err = -ENOMEM;
		return NULL;
	}
	memcpy(saved, *blk, size);
	return saved;
}

/* `t`'s registers back as `saved` (`size` bytes) has them: `err`, or
 * the write's error where `err` is 0. */
static int regs_put_back(struct thread *t, const uint8_t *saved, size_t size, int err)
{
	uint8_t *blk;

	regs_invalidate(t);
	if ((blk = regs_block_gpr(t))) {
		memcpy(blk, saved, size);
		t->regs_dirty = true;
		int ferr = regs_flush(t);
		if (ferr < 0 && !err)
			err = ferr;
	} else if (!err) {
		err = -ESRCH;
	}
	regs_invalidate(t);
	return err;
}

int inferior_syscall(struct thread *t, long nr, const long args[6], long *ret)
{
	const struct arch_ops *arch = agent.arch;
	const struct ptrace_syscall_abi *abi = &agent.ptrace->syscall;
	size_t size = regs_block_size(t->proc);
	uint8_t code[PTRACE_SYSCALL_INSN_MAX], *blk, *saved = NULL;
	uint64_t pc, site;
	bool patched = false;
	int err;

	if (!(saved = regs_saved(t, size, &blk, &err)))
		return err;
	pc = regblock_get(arch, blk, arch->pc_regnum);
	site = syscall_site(t->proc, pc);
	if (mem_read_raw(t->proc, site, code, abi->insn_len) != (ssize_t)abi->insn_len) {
		err = -EFAULT;
		goto out;
	}
	/* The keeper puts the bytes back if the agent dies meanwhile. */
	keeper_inject(t->proc->pid, site, code, abi->insn, abi->insn_len);
	if (mem_write_raw(t->proc, site, abi->insn, abi->insn_len) != (ssize_t)abi->insn_len) {
		keeper_inject(t->proc->pid, 0, NULL, NULL, 0);
		err = -EFAULT;
		goto out;
	}
	patched = true;
	/* Twice at most: see below. */
	for (int round = 0;; round++) {
		regblock_set(arch, blk, arch->pc_regnum, site);
		regblock_set(arch, blk, abi->nr_regnum, (uint64_t)nr);
		for (int i = 0; i < 6; i++)
			regblock_set(arch, blk, abi->arg_regnum[i], (uint64_t)args[i]);
		if (abi->restart_regnum >= 0)
			regblock_set(arch, blk, abi->restart_regnum, (uint64_t)-1);
		if (abi->flags_clear)
			regblock_set(arch, blk, arch->flags_regnum,
				     regblock_get(arch, blk, arch->flags_regnum) &
				     ~abi->flags_clear);
		t->regs_dirty = true;
		if ((err = regs_flush(t)) < 0 ||
		    (err = run_to_trap(t, true, "the injected system call")) < 0)
			goto out;
		regs_invalidate(t);
		if (!(blk = regs_block_gpr(t))) {
			err = -ESRCH;
			goto out;
		}
		if (regblock_get(arch, blk, arch->pc_regnum) != site || round > 0)
			break;
		/*
		 * The step ran no instruction: the thread was stopped inside
		 * a system call of its own (a fork, clone or exec event stop),
		 * which the kernel finished first, writing its result over
		 * the registers we had set, and it reported the step on the
		 * way out, before any user instruction.  That result is the
		 * thread's: it goes back with the rest, or the program's own
		 * call would seem to fail (a parent's clone3 returning
		 * -ENOSYS, retried as clone on the same stack).
		 */
		uint64_t own = regblock_get(arch, blk, abi->ret_regnum);
		regblock_set(arch, saved, abi->ret_regnum, own);
		debug("thread %d was inside a system call (result %#llx): stepped out first",
		      t->tid, (unsigned long long)own);
	}
	if (regblock_get(arch, blk, arch->pc_regnum) == site) {
		err = -EAGAIN;	/* still not run: leave the thread as it was */
		goto out;
	}
	*ret = signed_value(abi->ret_regnum, regblock_get(arch, blk, abi->ret_regnum));
out:
	if (patched) {
		mem_write_raw(t->proc, site, code, abi->insn_len);
		keeper_inject(t->proc->pid, 0, NULL, NULL, 0);
	}
	/* The thread's registers as they were, the number of a system call
	 * it was stopped in included. */
	err = regs_put_back(t, saved, size, err);
	free(saved);
	return err;
}

int inferior_mmap(struct thread *t, uint64_t addr, uint64_t len, int prot,
		  int flags, int fd, uint64_t offset, uint64_t *out)
{
	const struct ptrace_syscall_abi *abi = &agent.ptrace->syscall;
	uint64_t unit = 1ull << abi->mmap_offset_shift;
	long args[6] = { (long)addr, (long)len, prot, flags, fd,
			 (long)(offset >> abi->mmap_offset_shift) };
	long ret;
	int err;

	if (offset & (unit - 1))
		return -EINVAL;
	if ((err = inferior_syscall(t, abi->nr_mmap, args, &ret)) < 0)
		return err;
	if (ret < 0 && ret > -4096)
		return (int)ret;
	*out = (uint64_t)(unsigned long)ret;
	return 0;
}

/*
 * A system call the thread was stopped in that the kernel restarts when
 * the thread resumes, decided after the stop (x86-64: the restart
 * register holds the call's number, the result register one of the
 * kernel's restart codes): `blk` gets what the kernel would do, the pc
 * back on the call's instruction, the number (or restart_syscall's) in
 * the result register, and no restart left for the kernel.  Elsewhere
 * the kernel rewinds before the stop, and the pc is already there.
 */
#define ERESTARTSYS_ 512	/* the kernel's own codes, in no uapi header */
#define ERESTARTNOINTR_ 513
#define ERESTARTNOHAND_ 514
#define ERESTART_RESTARTBLOCK_ 516

static void restart_rewind(uint8_t *blk)
{
	const struct arch_ops *arch = agent.arch;
	const struct ptrace_syscall_abi *abi = &agent.ptrace->syscall;

	if (abi->restart_regnum < 0)
		return;
	uint64_t nr = regblock_get(arch, blk, (unsigned int)abi->restart_regnum);
	long r = signed_value((unsigned int)abi->ret_regnum,
			      regblock_get(arch, blk, (unsigned int)abi->ret_regnum));
	if (signed_value((unsigned int)abi->restart_regnum, nr) < 0)
		return;
	if (r == -ERESTARTSYS_ || r == -ERESTARTNOINTR_ || r == -ERESTARTNOHAND_)
		regblock_set(arch, blk, (unsigned int)abi->ret_regnum, nr);
	else if (r == -ERESTART_RESTARTBLOCK_)
		regblock_set(arch, blk, (unsigned int)abi->ret_regnum,
			     (uint64_t)abi->nr_restart_syscall);
	else
		return;
	regblock_set(arch, blk, arch->pc_regnum,
		     regblock_get(arch, blk, arch->pc_regnum) - abi->insn_len);
	regblock_set(arch, blk, (unsigned int)abi->restart_regnum, (uint64_t)-1);
}

int inferior_resume_pc(struct thread *t, uint64_t *pc)
{
	const struct arch_ops *arch = agent.arch;
	size_t size = regs_block_size(t->proc);
	uint8_t *blk, *copy;
	int err;

	if (!(copy = regs_saved(t, size, &blk, &err)))
		return err;
	restart_rewind(copy);
	*pc = regblock_get(arch, copy, arch->pc_regnum);
	free(copy);
	return 0;
}

int inferior_run(struct thread *t, uint64_t at, uint64_t trap_pc, const char *what)
{
	const struct arch_ops *arch = agent.arch;
	size_t size = regs_block_size(t->proc);
	uint8_t *blk, *saved;
	int err;

	if (!(saved = regs_saved(t, size, &blk, &err)))
		return err;
	/* The registers the code keeps are those it must go on with should
	 * the agent die: the restart done already. */
	restart_rewind(blk);
	regblock_set(arch, blk, arch->pc_regnum, at);
	t->regs_dirty = true;
	if ((err = regs_flush(t)) == 0 && (err = run_to_trap(t, false, what)) == 0 &&
	    agent.opt.test_kill == TEST_KILL_RUN_TRAP)
		test_kill(t, what, "stopped at the end of");
	if (err == 0 && pc_now(t) != trap_pc) {
		log_always("thread %d: %s stopped at %#llx, not at its end %#llx", t->tid,
			   what, pc_now(t), (unsigned long long)trap_pc);
		err = -EIO;
	}
	/* Its registers as they were, a system call to restart included. */
	err = regs_put_back(t, saved, size, err);
	free(saved);
	return err;
}
