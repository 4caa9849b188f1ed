/*
 * pad-step.c - threads in jump pads: a hand-off trap found by its entry
 * (pad_trap), the thread run on through its pad (pad_continue), or taken
 * out of it with the pc back at the probe, by its saved frame or by
 * steps, whenever it must stop where gdb can see it (pad_leave,
 * pad_settle).  gdb never sees a pad address (pad.c's essay).
 */
#define LOG_DOMAIN "pad"
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "agent/agent.h"
#include "agent/log.h"
#include "agent/pad-int.h"

static int load(struct thread *t, struct pad_table *pt, uint8_t *e)
{
	return regs_load_pad(t, (const uint64_t *)(e + layout()->off_frame), e, pt->image_form,
			     pt->tp_read ? (const uint64_t *)(e + layout()->off_bases) : NULL);
}

/*
 * Where the trap leaves the pc on itself (aarch64's BRK:
 * bp_pc_after_trap 0), a thread resumed as it is would trap again.
 */
static bool trap_stays(void)
{
	return agent.arch->bp_pc_after_trap < agent.arch->bp_len;
}

/* Thread t, stopped at a pad's trap with its entry marked done, runs on
 * through the pad from the instruction after the trap. */
static void run_on(struct thread *t)
{
	const struct arch_ops *arch = agent.arch;
	uint64_t pc;

	regs_invalidate(t);
	if (!trap_stays())
		return;
	pc = regs_get_pc(t);
	if (!pc || regs_set(t, (unsigned int)arch->pc_regnum,
			    pc - arch->bp_pc_after_trap + arch->bp_len) < 0)
		debug("thread %d: cannot move past its pad's trap", t->tid);
}

static void release(uint8_t *e)
{
	__atomic_store_n(word(e, layout()->off_ready), PAD_FREE, __ATOMIC_RELAXED);
	__atomic_store_n(word(e, layout()->off_owner), 0, __ATOMIC_RELEASE);
}

/*
 * A SIGTRAP of `t`: whether it is a pad's.  PAD_TRAP_HIT: the registers
 * of the hit are in t's cache and *pr is the probe; the caller handles
 * the hit, then pad_continue (the thread runs on in the pad) or
 * pad_leave.  PAD_TRAP_RESUME: a pad whose probe is gone (the thread
 * runs on through it).  PAD_TRAP_NONE: not a pad's.
 */
enum pad_trap pad_trap(struct thread *t, struct probe **pr)
{
	struct pad_table *pt = t->proc->pads;
	uint8_t *e = pt && pt->local ? pad_owned_entry(pt, t->tid, PAD_READY) : NULL;

	if (!e) {
		/* A vfork child runs its parent's pads, in shared memory. */
		for (struct process *o = agent.processes; o; o = o->next) {
			if (o == t->proc || !o->pads || !o->pads->local)
				continue;
			if ((e = pad_owned_entry(o->pads, t->tid, PAD_READY))) {
				debug("thread %d ran a pad of process %d", t->tid, o->pid);
				__atomic_store_n(word(e, layout()->off_ready), PAD_DONE,
						 __ATOMIC_RELEASE);
				run_on(t);
				return PAD_TRAP_RESUME;
			}
		}
		return PAD_TRAP_NONE;
	}
	*pr = probe_at(t->proc, frame_pc(e));
	if (!*pr || !(*pr)->pad || load(t, pt, e) < 0) {
		__atomic_store_n(word(e, layout()->off_ready), PAD_DONE, __ATOMIC_RELEASE);
		run_on(t);
		return PAD_TRAP_RESUME;
	}
	t->pad_entry = e;	/* pad_continue or pad_leave frees it */
	return PAD_TRAP_HIT;
}

/*
 * After a hit: the thread runs on in its pad.  Where the trap stays on
 * itself, the thread instead takes the frame's registers (its cache
 * since the hit) with its pc at the pad's copy of the displaced code,
 * which jumps back: one register write instead of a read and a write to
 * move the pc past the trap, and the entry is freed here.
 */
void pad_continue(struct thread *t)
{
	uint8_t *e = t->pad_entry ? t->pad_entry
				  : pad_owned_entry(t->proc->pads, t->tid, PAD_READY);

	t->pad_entry = NULL;
	if (e && trap_stays() && t->regs_pad) {
		struct probe *pr = probe_at(t->proc, regs_get_pc(t));
		if (pr && pr->pad &&
		    regs_set(t, (unsigned int)agent.arch->pc_regnum, pr->pad_resume) == 0 &&
		    regs_flush(t) == 0) {
			release(e);
			return;
		}
	}
	if (e)
		__atomic_store_n(word(e, layout()->off_ready), PAD_DONE, __ATOMIC_RELEASE);
	run_on(t);
}

/*
 * After a hit, or on the way out of a pad at its trap: the thread gets
 * the registers it had at the probe (its cache, loaded from the entry),
 * PC included, and the entry is freed.  The displaced instruction has
 * not run.
 */
int pad_leave(struct thread *t)
{
	struct pad_table *pt = t->proc->pads;
	uint8_t *e = t->pad_entry;
	int err;

	t->pad_entry = NULL;
	if (!e)
		e = pad_owned_entry(pt, t->tid, PAD_READY);
	if (!e)
		e = pad_owned_entry(pt, t->tid, PAD_DONE);
	if (!e || !t->regs_pad)
		return -ENOENT;
	t->regs_dirty = true;
	err = regs_flush(t);
	if (err < 0) {
		debug("thread %d: cannot leave its pad: %s", t->tid, strerror(-err));
		return err;
	}
	release(e);
	return 0;
}

static int mem_cb_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return mem_read_raw(ctx, addr, buf, len) == (ssize_t)len ? 0 : -EFAULT;
}

static int mem_cb_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	return mem_write_raw(ctx, addr, buf, len) == (ssize_t)len ? 0 : -EFAULT;
}

/*
 * A thread stopped in pad code `c` where a step makes no progress (the
 * arch's pad_step said so): back at the probe with the registers of the
 * frame at `frame_at`, the hit not taken (it comes again when the thread
 * runs on).  Nothing of the hit is published yet there.
 */
static int rewind_to_probe(struct thread *t, const struct pad_code *c,
			   uint64_t frame_at)
{
	static const uint8_t no_image[1024];
	const struct arch_pad_layout *l = layout();
	uint64_t frame[FRAME_WORDS_MAX];
	size_t n = (size_t)l->frame_words * 8;
	int err;

	if (l->frame_words > FRAME_WORDS_MAX || l->image_bytes > sizeof(no_image))
		return -E2BIG;
	if (mem_read_raw(t->proc, frame_at, frame, n) != (ssize_t)n)
		return -EFAULT;
	if (frame[l->frame_pc] != c->site)
		return -EINVAL;
	if ((err = regs_load_pad(t, frame, no_image, false, NULL)) < 0)
		return err;
	t->regs_dirty = true;
	return regs_flush(t);
}

/*
 * A stopped thread inside a pad goes back to the original code: gdb is
 * told of its stop, or the pad goes.  At the trap, with its entry still
 * its own, it takes the registers of the entry at the probe (a hit not
 * yet handled is handled first); anywhere else it is single-stepped to
 * the trap or out, or, where the arch says a step cannot go on (an
 * exclusive pair before the hit is published), put back at the probe
 * with its frame.  Signals that come meanwhile are queued again.
 * Returns true if it moved.
 */
/*
 * Whether `pc` lies in code a pad calls: the vDSO (a pad that stores the
 * hit's time calls its clock_gettime) or the in-process collector's
 * image.  A thread stopped there is inside a pad all the same: its
 * return address is in the pad.
 */
static bool in_pad_callee(const struct pad_table *pt, uint64_t pc)
{
	if (!pt)
		return false;
	if (pt->vdso_clock && pc >= pt->vdso_lo && pc < pt->vdso_hi)
		return true;
	return pt->ipa_local && pc >= pt->ipa_remote &&
	       pc < pt->ipa_remote + pt->img.size;
}

/*
 * How far above sp a pad's return address may lie while the thread runs
 * the vDSO's clock_gettime the pad called: more than that function's
 * frames take.
 */
#define VDSO_FRAMES_MAX 1024

/*
 * Whether `t`, stopped at `pc` in code a pad calls, is there on a pad's
 * behalf.  The collector: always (only pads call it).  The vDSO: the
 * program may call clock_gettime itself, and such a thread is not in a
 * pad at all; a pad's call has left its return address, pad code, on
 * the stack just above the vDSO's frames (or the collector's address,
 * where the collector made the call).  A stale word of the program's
 * that happens to point there only costs steps: the thread is stepped
 * back to its caller as if a pad had called.  Where the stack cannot
 * be read, the thread is taken for a pad's too.
 */
static bool callee_for_pad(struct thread *t, struct pad_table *pt, uint64_t pc)
{
	struct process *p = t->proc;
	unsigned int w = agent.arch->ptr_size;
	uint8_t buf[VDSO_FRAMES_MAX];
	uint64_t sp;

	if (!(pt->vdso_clock && pc >= pt->vdso_lo && pc < pt->vdso_hi))
		return true;
	if (regs_get(t, (unsigned int)agent.arch->sp_regnum, &sp) < 0)
		return true;
	ssize_t n = mem_read_raw(p, sp, buf, sizeof(buf));
	if (n < (ssize_t)w)
		return true;
	for (size_t i = 0; i + w <= (size_t)n; i += w) {
		uint64_t v = 0;
		memcpy(&v, buf + i, w);	/* little-endian targets */
		if (pad_code_at(p, v) ||
		    (pt->ipa_local && v >= pt->ipa_remote &&
		     v < pt->ipa_remote + pt->img.size))
			return true;
	}
	return false;
}

/*
 * One instruction of `t`, and its stop taken.  A signal that comes
 * meanwhile is kept in `kept` (up to 4) to be queued again.  <0: the
 * thread cannot be stepped, or ended.
 */
static int step_wait(struct thread *t, siginfo_t kept[4], int *nkept)
{
	int status;

	if (thread_step(t, 0) < 0)
		return -1;
	regs_invalidate(t);
	/* Looked at first: an exit stays for the main loop to reap. */
	siginfo_t si = { 0 };
	if (waitid(P_PID, t->tid, &si, WEXITED | WSTOPPED | __WALL | WNOWAIT) < 0)
		return -1;
	if (si.si_code != CLD_TRAPPED && si.si_code != CLD_STOPPED) {
		debug("thread %d ended while leaving a pad", t->tid);
		t->state = THREAD_RUNNING;
		return -1;
	}
	if (waitpid(t->tid, &status, __WALL) != t->tid)
		return -1;
	/* A software step (no hw_step): its breakpoints come out at
	 * whatever stop this is. */
	if (!agent.ptrace->hw_step)
		thread_step_stopped(t, status);
	int sig = WSTOPSIG(status);
	if (sig == SIGTRAP || (status >> 16))
		return 0;
	if (sig == SIGSTOP && t->stop_expected) {
		t->stop_expected = false;
		return 0;
	}
	/* The collector's load of an unreadable address: on at its exit. */
	if (pad_fault(t, sig))
		return 0;
	if (*nkept < 4 && ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &kept[*nkept]) == 0)
		(*nkept)++;
	return 0;
}

/*
 * An instruction of the collector that a step would not get past (the
 * arch's callee_step: aarch64's exclusive loads and stores), done on the
 * registers instead.  ARCH_PAD_DONE, ARCH_PAD_STEP (step it), or <0.
 */
static int callee_by_hand(struct thread *t, struct pad_table *pt, uint64_t pc)
{
	const struct arch_ops *arch = agent.arch;
	uint8_t insn[ARCH_INSN_MAX];
	size_t len;

	if (!arch->callee_step || !pt->ipa_local || pc < pt->ipa_remote ||
	    pc >= pt->ipa_remote + pt->img.size)
		return ARCH_PAD_STEP;
	len = pt->ipa_remote + pt->img.size - pc;
	if (len > arch->max_insn_len)
		len = arch->max_insn_len;
	if (len > sizeof(insn))
		len = sizeof(insn);
	uint8_t *blk = regs_block_gpr(t);
	if (!blk || mem_read_raw(t->proc, pc, insn, len) != (ssize_t)len)
		return -EFAULT;
	struct arch_gpregs g;
	struct arch_mem mem = { t->proc, mem_cb_read, mem_cb_write };
	regs_to_gpregs(blk, &g);
	int how = arch->callee_step(insn, len, &g, &mem);
	if (how != ARCH_PAD_DONE)
		return how;
	regs_from_gpregs(blk, &g);
	t->regs_dirty = true;
	return regs_flush(t) < 0 ? -EIO : how;
}

bool pad_in_callee(struct process *p, uint64_t pc)
{
	return in_pad_callee(p->pads, pc);
}

bool pad_settle(struct thread *t)
{
	const struct arch_ops *arch = agent.arch;
	struct process *p = t->proc;
	struct pad_table *pt = p->pads;
	siginfo_t kept[4];
	int nkept = 0;
	bool moved = false, for_pad = false;

	if (!pt || !pt->local)
		return false;
	for (int steps = 0; steps < 100000; steps++) {
		uint64_t pc = regs_get_pc(t);
		struct pad_code *c = pad_code_at(p, pc);

		if (!c && in_pad_callee(pt, pc)) {
			/* In code a pad calls (the vDSO's clock_gettime, the
			 * collector) on a pad's behalf: stepped until it
			 * returns into the pad, then settled as any.  The
			 * program's own call of clock_gettime is left be. */
			if (!for_pad && !(for_pad = callee_for_pad(t, pt, pc)))
				break;
			moved = true;
			int how = callee_by_hand(t, pt, pc);
			if (how < 0 || (how == ARCH_PAD_STEP && step_wait(t, kept, &nkept) < 0))
				break;
			continue;
		}
		if (!c)
			break;
		moved = true;
		if (p->ret_itrap && pc == p->ret_itrap + arch->bp_pc_after_trap)
			trace_drain(false);	/* the trampoline waits for room */
		if (pc == c->trap + arch->bp_pc_after_trap) {
			uint8_t *e = pad_owned_entry(pt, t->tid, PAD_READY);
			struct probe *pr = probe_at(p, c->site);

			/* A hit that must wait is not taken: the thread
			 * hits the probe again once out. */
			bool taken = true;
			if (e && pr && pr->pad && load(t, pt, e) == 0 && pr->on_hit &&
			    t->probe_skip != c->site)
				taken = pr->on_hit(pr, t, pr->arg) != PROBE_HIT_WAIT;
			if (!e)
				e = pad_owned_entry(pt, t->tid, PAD_DONE);
			if (e && (t->regs_pad || load(t, pt, e) == 0)) {
				if (pad_leave(t) == 0) {
					if (taken)
						t->probe_skip = c->site;
					break;
				}
			}
			regs_invalidate(t);
			if (trap_stays()) {
				/* Stepped, the trap would only trap again. */
				run_on(t);
				if (regs_flush(t) < 0)
					break;
				continue;
			}
		}
		/* What a step cannot do there, the arch does or says. */
		uint8_t insn[ARCH_INSN_MAX];
		size_t len = c->addr + c->len - pc;
		if (len > arch->max_insn_len)
			len = arch->max_insn_len;
		if (len > sizeof(insn))
			len = sizeof(insn);
		uint8_t *blk = regs_block_gpr(t);
		if (!blk || mem_read_raw(p, pc, insn, len) != (ssize_t)len)
			break;
		struct arch_gpregs g;
		struct arch_mem mem = { p, mem_cb_read, mem_cb_write };
		regs_to_gpregs(blk, &g);
		int how = arch->pad_step(insn, len, &g, &mem);
		if (how == ARCH_PAD_DONE) {
			regs_from_gpregs(blk, &g);
			t->regs_dirty = true;
			if (regs_flush(t) < 0)
				break;
			continue;
		}
		if (how == ARCH_PAD_REWIND) {
			int err = rewind_to_probe(t, c, g.gpr[arch->pad_frame_regnum]);
			if (err < 0) {
				debug("thread %d: cannot go back from its pad at %#llx: %s",
				      t->tid, (unsigned long long)pc, strerror(-err));
				regs_invalidate(t);
			} else {
				debug("thread %d: back from its pad at %#llx to the probe",
				      t->tid, (unsigned long long)pc);
			}
			break;
		}
		if (how < 0 || step_wait(t, kept, &nkept) < 0)
			break;
	}
	for (int i = 0; i < nkept; i++)
		syscall(SYS_rt_tgsigqueueinfo, p->pid, t->tid, kept[i].si_signo, &kept[i]);
	if (moved)
		debug("thread %d left a pad at %#llx", t->tid,
		      (unsigned long long)regs_get_pc(t));
	return moved;
}

