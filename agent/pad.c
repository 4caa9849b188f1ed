/*
 * pad.c - jump pads: probe hits that cost the agent no register access,
 * and where the tracepoints need nothing but the registers, no stop.
 *
 * A probe whose code has room for a jump (x86-64: 5 bytes, the probed
 * instruction or, when the function's symbol shows that no branch lands
 * inside them, the instructions that cover 5 bytes; aarch64: the one
 * instruction a 4-byte B replaces) gets, on top of its breakpoint, a pad
 * in its XOL area, within the jump's reach, and that code is replaced by
 * a jump:
 *
 *   site:  jmp pad                      (the rest of the window: breakpoints)
 *   pad:   [a native condition: false -> the displaced code (emit_pad_cond)]
 *          save the registers           (arch emit_save_regs)
 *          [take a record of the ring, copy the registers and the
 *           state the frame leaves out (x87/SSE/AVX, aarch64's v
 *           registers) there, go to the restore (emit_pad_collect);
 *           a full ring falls through]
 *          claim an entry of the table, copy the same there, trap
 *                                       (arch emit_pad_handoff)
 *          restore the registers        (arch emit_restore_regs)
 *          the displaced code, relocated, and a jump back
 *
 * The table and the ring are memory the process and the agent share (a
 * memfd the process creates and maps, by system calls the agent makes it
 * run; the agent maps the same file through /proc/PID/fd).
 *
 * A recording pad (the tracepoints there want registers only) never stops
 * the thread: the agent reads the records later (pad_drain).  It stores
 * what its tracepoints read and no more: the image of the x87/SSE/AVX (v)
 * registers only where one reads them (trace_site_needs_image), the
 * hit's thread and time only where one traces them, the time from the
 * process's vDSO clock_gettime where there is one (vdso_clock).  Otherwise
 * the thread traps in its pad; the agent finds its entry by the tid and
 * has everything the hit needs without PTRACE_GETREGS, GETREGSET or a PC
 * write, and the thread simply continues and frees its entry on its way
 * out: two system calls a hit instead of five.  That pad runs gettid in
 * the process.  Where the trap leaves the pc on itself (aarch64's BRK),
 * the thread cannot just continue: it gets the frame's registers with
 * its pc at the pad's copy of the displaced code, in one register write,
 * and the agent frees its entry.
 *
 * A pad whose tracepoints need memory, conditions that read it, or pass
 * counts (PAD_IPA) calls the in-process collector (agent/ipa/, placed in
 * the process by ipa_get) twice: ipa_site_wants on the saved frame before
 * it claims a record (every condition false: straight to the restore),
 * then ipa_collect_site on the filled record, which writes the blocks
 * into the record's second half; IPA_TRAP sends the hit on to the
 * hand-off.  The drain hands the blocks to the owner with the registers.
 * A load of the collector that faults is resumed at its exit
 * (pad_fault): the program sees no signal.  Where the site's one
 * tracepoint only collects ranges, with no condition and no pass count,
 * an x86-64 pad writes those blocks itself instead of calling the
 * collector, with the collector's ipa_copy (native_copy).
 *
 * A site whose one tracepoint has a condition of the simplest shape (one
 * register or memory word compared with a constant: ax_simple_cond)
 * starts with that compare in native code (arch emit_pad_cond), before
 * the register save: a false condition counts itself as skipped and
 * goes straight to the displaced code, a few instructions in all.  A
 * true one goes on as above (the collector evaluates the condition again,
 * as the reference).  A fault of the native load is resumed on the true
 * path, where the interpreter meets the same fault and says so.
 *
 * A pad at a function's entry whose return probes need no more than the
 * registers (pr->pad_ret) first pushes the return on the thread's shadow
 * stack in the process and points [sp] (aarch64: x30) at the return
 * trampoline (pad_ret_get, retprobe.c's essay); the trampoline writes the
 * return's record into the same ring, the drain knows it by its pc (the
 * trampoline) and hands it to tracepoint.c as a return.  Its latency and
 * time come from the CPU's counter (tsc_*: the TSC, CNTVCT_EL0): the
 * entry and the return read it with no system call.
 *
 * The breakpoint comes first and stays the probe's: the jump is a patch
 * over it (bp_patch), written tail first, so a thread arriving while it
 * is written traps and is handled the ordinary way, and gdb's reads see
 * the original bytes.  Whenever a thread must leave a pad other than by
 * running on (gdb is told of its stop, while-stepping, detach, removal),
 * the agent puts the saved registers back with the PC at the probe, or
 * steps it out, so gdb never sees a pad address (pad_settle).  What a step
 * cannot do there the arch says (arch_ops.pad_step): x86-64's pushfq and
 * popfq are done by hand; an exclusive pair (aarch64's claims) never
 * succeeds stepped, and the thread goes back to the probe with its frame
 * instead, before anything of the hit is published.
 *
 * Pads are refused where the shared memory cannot be set up (no memfd,
 * no /proc/PID/fd), or the arch has none (its arch_ops and ptrace ops
 * say): the probe stays a breakpoint.  The layout of the shared memory
 * is the arch's (struct arch_pad_layout).
 *
 * This file places pads: the shared memory, the collector's memory and
 * sites, a probe's pad and the code over its site, detach and teardown.
 * Threads in pads are pad-step.c's, the ring's drain and salvage
 * pad-drain.c's, returns in the process pad-ret.c's; pad-int.h holds
 * what they share.
 */
#define LOG_DOMAIN "pad"
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>

#include "agent/agent.h"
#include "agent/ipa-image.h"
#include "agent/ipa/ipa-abi.h"
#include "agent/keeper.h"
#include "agent/log.h"
#include "agent/pad-int.h"
#include "agent/pad-ring.h"
#include "protocol/ax-simple.h"

/*
 * The entry thread `tid` owns in state `ready` (PAD_READY, PAD_DONE),
 * searched as the pad claims: from tid mod entries on.  A thread owns two
 * when a signal handler ran into a pad while it was in one; if both are
 * ready (the signal came between the ready mark and the trap), the one
 * the trapped pad uses is in its entry register (arch_ops.pad_entry_regnum:
 * x86-64 r14, aarch64 x20), read then.
 */
uint8_t *pad_owned_entry(struct pad_table *pt, pid_t tid, uint32_t ready)
{
	uint8_t *found = NULL;

	for (unsigned int k = 0; k < PAD_ENTRIES; k++) {
		uint8_t *e = entry_at(pt, ((unsigned int)tid + k) & (PAD_ENTRIES - 1));
		if (*word(e, layout()->off_owner) != (uint32_t)tid ||
		    __atomic_load_n(word(e, layout()->off_ready), __ATOMIC_ACQUIRE) != ready)
			continue;
		if (!found) {
			found = e;
			continue;
		}
		uint64_t reg;
		if (agent.ptrace->peek_gpr(tid, (unsigned int)agent.arch->pad_entry_regnum,
					   &reg) < 0)
			return found;
		uint64_t at = pt->remote + (uint64_t)(found - pt->local);
		if (reg == at)
			return found;
		found = e;	/* the first was not it; one more would be */
	}
	return found;
}

int pad_remote_call(struct thread *t, long nr, long a0, long a1, long a2,
		       long a3, long a4, long a5, long *ret)
{
	long args[6] = { a0, a1, a2, a3, a4, a5 };
	int err = inferior_syscall(t, nr, args, ret);

	if (err < 0)
		return err;
	return *ret < 0 && *ret > -4096 ? (int)*ret : 0;
}

/*
 * Makes the process create and map `size` bytes of a memfd named `name`,
 * read-write, and maps them here too: *remote and *local.  The name
 * memfd_create wants is written below the stopped thread's stack pointer,
 * under its red zone, where nothing lives.  Both mappings are populated
 * (MAP_POPULATE) at once: the agent writes every record's sequence word
 * anyway, so no page is spared by waiting, and otherwise the ring's first
 * round would cost the hitting threads a page fault every 16 pages (a
 * fault maps those around it; 8 MiB of ring: some 130 faults of several
 * us, about 20 ns a hit over 50000 hits, bench/README.md) and the agent
 * one a page.
 */
static int shm_map(struct process *p, const char *name, size_t size,
		   uint64_t *remote, uint8_t **local, char *why, size_t whylen)
{
	struct thread *t = process_stopped_thread(p);
	uint64_t sp, name_at, addr = 0;
	long fd = -1, ret;
	int err, lfd;
	char path[64];

	if (!t || regs_get(t, (unsigned int)agent.arch->sp_regnum, &sp) < 0) {
		snprintf(why, whylen, "no stopped thread to set up the pads' memory");
		return -ESRCH;
	}
	name_at = (sp - 1024) & ~(uint64_t)15;
	if (mem_write_raw(p, name_at, name, strlen(name) + 1) != (ssize_t)strlen(name) + 1) {
		snprintf(why, whylen, "cannot write below the stack of thread %d", t->tid);
		return -EFAULT;
	}
	err = pad_remote_call(t, SYS_memfd_create, (long)name_at, MFD_CLOEXEC, 0, 0, 0, 0, &fd);
	if (err == 0)
		err = pad_remote_call(t, SYS_ftruncate, fd, (long)size, 0, 0, 0, 0, &ret);
	if (err == 0)
		err = inferior_mmap(t, 0, size, PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_POPULATE, (int)fd, 0, &addr);
	if (err < 0) {
		snprintf(why, whylen, "process %d cannot create shared memory %s: %s",
			 p->pid, name, strerror(-err));
		goto close_remote;
	}
	snprintf(path, sizeof(path), "/proc/%d/fd/%ld", p->pid, fd);
	lfd = open(path, O_RDWR | O_CLOEXEC);
	if (lfd < 0) {
		err = -errno;
		snprintf(why, whylen, "cannot open %s: %s", path, strerror(errno));
		pad_remote_call(t, SYS_munmap, (long)addr, (long)size, 0, 0, 0, 0, &ret);
		goto close_remote;
	}
	*local = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, lfd, 0);
	close(lfd);
	if (*local == MAP_FAILED) {
		err = -errno;
		*local = NULL;
		snprintf(why, whylen, "cannot map %s: %s", name, strerror(errno));
		pad_remote_call(t, SYS_munmap, (long)addr, (long)size, 0, 0, 0, 0, &ret);
		goto close_remote;
	}
	*remote = addr;
	err = 0;
close_remote:
	if (fd >= 0)
		pad_remote_call(t, SYS_close, fd, 0, 0, 0, 0, 0, &ret);
	return err;
}

/*
 * The process stores once into each page of the shared memory, in a
 * stopped thread of it (arch_ops.emit_touch, inferior_run), before any
 * pad runs.  Where a process's first store into a page costs
 * microseconds even though MAP_POPULATE mapped it (shadow page tables
 * under some hypervisors: 2048 pages of ring took 12 ms of the hits'
 * time on the machine of bench/README.md), the hits of the ring's first
 * round no longer pay them.  The agent's own first stores were the seq
 * words it wrote.  Without it (no emit_touch, PROBE_PAD_TOUCH=0, or it
 * failed: said why) the pads work as well, the first round slower.
 */
static void touch_pages(struct process *p, const struct pad_table *pt)
{
	const struct arch_ops *arch = agent.arch;
	struct thread *t = process_stopped_thread(p);
	long page = sysconf(_SC_PAGESIZE);
	uint8_t code[128];
	uint64_t resume, at;
	size_t trap_off;
	struct timespec t0, t1;
	int n, err;

	if (!arch->emit_touch || agent.opt.pad_no_touch || !t)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((err = inferior_resume_pc(t, &resume)) < 0 ||
	    (err = xol_span_alloc_far(p, resume, sizeof(code), false, &at)) < 0 ||
	    (err = n = arch->emit_touch(code, sizeof(code), at, pt->remote,
					shm_size() / (uint64_t)page, (uint32_t)page,
					resume, &trap_off)) < 0)
		goto out;
	if (mem_write_raw(p, at, code, (size_t)n) != n) {
		err = -EIO;
		goto out;
	}
	keeper_code(p->pid, KEEPER_PASS, at + trap_off, 0, 0, 0, -1, 0);
	err = inferior_run(t, at, at + trap_off + arch->bp_pc_after_trap,
			   "the store into the shared pages");
out:
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (err < 0 && err != -ESRCH)
		log_always("process %d: thread %d could not store into the pads' %zu "
			   "shared pages (%s); the pads work, but the hits of the "
			   "ring's first round pay for each page's first store",
			   p->pid, t->tid, shm_size() / (size_t)page, strerror(-err));
	else if (err == 0)
		debug("process %d: thread %d stored into the pads' %zu shared pages "
		      "in %.1f ms", p->pid, t->tid, shm_size() / (size_t)page,
		      (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
		      (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
}

/* Makes the process create and map the table, and maps it here too. */
static int table_map(struct process *p, struct pad_table *pt, char *why,
		     size_t whylen)
{
	int err = shm_map(p, "probe-agent-pads", shm_size(), &pt->remote,
			  &pt->local, why, whylen);

	if (err < 0)
		return err;
	/* Record i is free for position i. */
	for (unsigned int i = 0; i < RING_RECORDS; i++)
		*seq_of(record_at(pt, i)) = i;
	touch_pages(p, pt);
	return 0;
}

/* Room for `size` bytes of the collector's data, 64-aligned: the offset
 * from its base, or 0 when it is full. */
static size_t ipa_alloc(struct pad_table *pt, size_t size)
{
	size_t at = (pt->ipa_used + 63) & ~(size_t)63;

	if (at + size > pt->ipa_size)
		return 0;
	pt->ipa_used = at + size;
	return at;
}

/*
 * The in-process collector's memory in `p`: its image placed for where
 * the process maps it, then made read and execute there.  0, or -errno
 * with the reason in `why` (and never again for this process).
 */
static int ipa_get(struct process *p, struct pad_table *pt, char *why,
		   size_t whylen)
{
	struct thread *t;
	size_t image;
	long ret;
	int err;

	if (pt->ipa_local)
		return 0;
	if (pt->ipa_failed) {
		snprintf(why, whylen, "no in-process collector in process %d", p->pid);
		return -ENOMEM;
	}
	pt->ipa_failed = true;
	if ((err = ipa_image_open(&pt->img)) < 0) {
		snprintf(why, whylen, "%s", pt->img.error);
		return err;
	}
	image = (pt->img.size + 4095) & ~(size_t)4095;
	pt->ipa_size = image + IPA_DATA_SIZE;
	err = shm_map(p, "probe-agent-ipa", pt->ipa_size, &pt->ipa_remote,
		      &pt->ipa_local, why, whylen);
	if (err < 0)
		return err;
	err = ipa_image_place(&pt->img, pt->ipa_remote, pt->ipa_local, image);
	if (err < 0)
		snprintf(why, whylen, "%s", pt->img.error);
	else if (!(t = process_stopped_thread(p)))
		err = -ESRCH;
	else if ((err = pad_remote_call(t, SYS_mprotect, (long)pt->ipa_remote, (long)image,
				    PROT_READ | PROT_EXEC, 0, 0, 0, &ret)) < 0)
		snprintf(why, whylen, "process %d cannot make the collector executable: %s",
			 p->pid, strerror(-err));
	if (err < 0) {
		if ((t = process_stopped_thread(p)))
			pad_remote_call(t, SYS_munmap, (long)pt->ipa_remote, (long)pt->ipa_size,
				    0, 0, 0, 0, &ret);
		munmap(pt->ipa_local, pt->ipa_size);
		pt->ipa_local = NULL;
		return err;
	}
	pt->ipa_used = image;
	pt->ipa_tsvs_off = ipa_alloc(pt, sizeof(struct ipa_tsvs));
	memset(pt->ipa_local + pt->ipa_tsvs_off, 0, sizeof(struct ipa_tsvs));
	pt->ipa_failed = false;
	/* Should the agent die, the keeper makes the loads jump to their
	 * exit: no SIGSEGV the agent is not there to fix up. */
	keeper_code(p->pid, KEEPER_LOAD, pt->ipa_remote + pt->img.fault_begin,
		    pt->ipa_remote + pt->img.fault_exit,
		    (unsigned int)(pt->img.fault_end - pt->img.fault_begin), 0, -1, 0);
	debug("in-process collector at %#llx in %d (%zu bytes of image)",
	      (unsigned long long)pt->ipa_remote, p->pid, pt->img.size);
	return 0;
}

/*
 * The site of the tracepoints at `addr` for the collector: their programs
 * and counters (all zero) in its data, and the struct ipa_site naming
 * them, whose address in the process goes to *site.  0 or -errno (why).
 */
static int ipa_site_make(struct process *p, struct pad_table *pt, uint64_t addr,
			 uint64_t *site, bool *live, char *why, size_t whylen)
{
	static uint8_t progs[IPA_PROGS_MAX];
	uint32_t offs[IPA_SITE_PROGS];
	int n, err;

	if ((err = ipa_get(p, pt, why, whylen)) < 0)
		return err;
	n = trace_ipa_programs(addr, progs, sizeof(progs), offs, IPA_SITE_PROGS,
			       why, whylen);
	if (n < 0)
		return n;
	size_t need = sizeof(struct ipa_site) + 64;
	for (int i = 0; i < n; i++)
		need += sizeof(struct ipa_counters) + 64 +
			((const struct ipa_program *)(progs + offs[i]))->size + 64;
	size_t so = ipa_alloc(pt, sizeof(struct ipa_site));
	if (!so || pt->ipa_used + need > pt->ipa_size) {
		snprintf(why, whylen, "the in-process collector's memory is full "
			 "(%u KiB of sites and programs)", IPA_DATA_SIZE >> 10);
		return -ENOSPC;
	}
	struct ipa_site *s = (struct ipa_site *)(pt->ipa_local + so);
	memset(s, 0, sizeof(*s));
	s->version = IPA_ABI_VERSION;
	s->base = pt->ipa_remote;
	s->tsvs_off = (uint32_t)pt->ipa_tsvs_off;
	trace_ipa_tsvs((struct ipa_tsvs *)(pt->ipa_local + pt->ipa_tsvs_off));
	*live = false;
	for (int i = 0; i < n; i++) {
		const struct ipa_program *src = (const struct ipa_program *)(progs + offs[i]);
		size_t co = ipa_alloc(pt, sizeof(struct ipa_counters));
		size_t po = ipa_alloc(pt, src->size);
		memset(pt->ipa_local + co, 0, sizeof(struct ipa_counters));
		memcpy(pt->ipa_local + po, src, src->size);
		if (src->flags & IPA_PROG_LIVE)
			*live = true;
		((struct ipa_program *)(pt->ipa_local + po))->counters_off = (uint32_t)co;
		s->prog_off[i] = (uint32_t)po;
	}
	s->nprogs = (uint32_t)n;
	*site = pt->ipa_remote + so;
	return 0;
}

/*
 * A thread of a traced process stopped with `sig`: if it is SIGSEGV or
 * SIGBUS at one of a pad's loads that may fault (struct pad_code's
 * faults: a native condition's, the thread pointer's) or of the
 * collector's (ipa_copy), it goes on where the code does without what
 * could not be read (for ipa_copy the loads' fault exit, which returns
 * what was read), and the signal is not the program's.  True when so
 * (the caller resumes it without a signal).
 */
bool pad_fault(struct thread *t, int sig)
{
	struct pad_table *pt = t->proc->pads;

	if ((sig != SIGSEGV && sig != SIGBUS) || !pt)
		return false;
	uint64_t pc = regs_get_pc(t), to = 0;
	const struct pad_code *c = pad_code_at(t->proc, pc);
	int i;
	for (i = 0; c && i < PAD_FAULTS; i++)
		if (c->faults[i].load && pc == c->faults[i].load) {
			to = c->faults[i].take;
			break;
		}
	if (!to && pt->ipa_local && pc >= pt->ipa_remote &&
	    ipa_image_fault_fixable(&pt->img, pc - pt->ipa_remote))
		to = pt->ipa_remote + pt->img.fault_exit;
	if (!to)
		return false;
	if (regs_set(t, (unsigned int)agent.arch->pc_regnum, to) < 0 ||
	    regs_flush(t) < 0)
		return false;
	struct probe *pr = c ? probe_at(t->proc, c->site) : NULL;
	if (pr)
		pr->hits_faulted++;
	if (c && (i == PAD_FAULT_TID || i == PAD_FAULT_BASES)) {
		pt->tp_faults++;
		debug("thread %d: no self-pointing TCB at its thread pointer (pad at %#llx): "
		      "the pad asks the kernel", t->tid, (unsigned long long)c->addr);
	} else if (c && i == PAD_FAULT_RET) {
		pt->tp_faults++;
		debug("thread %d: no self-pointing TCB at its thread pointer (pad at %#llx): "
		      "the return goes to the agent", t->tid, (unsigned long long)c->addr);
	} else {
		pt->ipa_faults++;
		debug("thread %d: collector's load at %#llx faulted, resumed at its exit",
		      t->tid, (unsigned long long)pc);
	}
	return true;
}

/* The sum, over the tracepoints of `pr`'s pad's collector site, of the
 * counter at `off` in their struct ipa_counters (each read atomically:
 * the collector may be counting); 0 for a pad without a collector. */
static uint64_t ipa_site_sum(const struct probe *pr, size_t off)
{
	const struct pad_table *pt = pr->proc->pads;
	uint64_t n = 0;

	if (pr->pad_collect != PAD_IPA || !pt || !pt->ipa_local ||
	    pr->pad_ipa_site < pt->ipa_remote ||
	    pr->pad_ipa_site + sizeof(struct ipa_site) > pt->ipa_remote + pt->ipa_size)
		return 0;
	const struct ipa_site *s = (const struct ipa_site *)
		(pt->ipa_local + (pr->pad_ipa_site - pt->ipa_remote));
	for (uint32_t i = 0; i < s->nprogs && i < IPA_SITE_PROGS; i++) {
		const struct ipa_program *p = (const struct ipa_program *)
			(pt->ipa_local + s->prog_off[i]);
		const uint64_t *c = (const uint64_t *)(pt->ipa_local + p->counters_off + off);
		n += __atomic_load_n(c, __ATOMIC_RELAXED);
	}
	return n;
}

/* Hits the collector of `pr`'s pad recorded nothing for: conditions
 * false, or past the pass count. */
uint64_t pad_ipa_skipped(const struct probe *pr)
{
	return ipa_site_sum(pr, offsetof(struct ipa_counters, skipped_cond)) +
	       ipa_site_sum(pr, offsetof(struct ipa_counters, over_pass));
}

/* Loads of the collector of `pr`'s pad that faulted (a stop each, the
 * copy cut there). */
uint64_t pad_ipa_faulted(const struct probe *pr)
{
	return ipa_site_sum(pr, offsetof(struct ipa_counters, faulted));
}

/* The stops of `pr`'s hits for loads in its pad that faulted: the pad's
 * own (the thread pointer's word) and its collector's. */
uint64_t probe_fault_stops(const struct probe *pr)
{
	return pr->hits_faulted + pad_ipa_faulted(pr);
}

/* The collector's faulting loads fixed up in `p` so far. */
uint64_t pad_ipa_faults(const struct process *p)
{
	return p->pads ? p->pads->ipa_faults : 0;
}

/* Pad hits of threads with no self-pointing TCB at their thread pointer
 * so far (a stop each). */
uint64_t pad_tp_faults(const struct process *p)
{
	return p->pads ? p->pads->tp_faults : 0;
}

/*
 * A write into the in-process collector's code, which /proc/PID/mem
 * refuses (a shared mapping, read and execute only in the program): a
 * step breakpoint where the arch steps in software (32-bit ARM) while a
 * thread leaves the collector.  Done through the agent's own mapping of
 * the same pages, and the caches made coherent for the code (a
 * core whose instruction cache is indexed by the physical address, as
 * ARMv7's A-profile cores with a PIPT or non-aliasing one, sees it at
 * the program's address too).  `len` bytes written, or -EIO when
 * [addr, addr + len) is not wholly in the collector's image.
 */
ssize_t pad_ipa_code_write(struct process *p, uint64_t addr, const void *buf, size_t len)
{
	struct pad_table *pt = p->pads;

	if (!pt || !pt->ipa_local || addr < pt->ipa_remote ||
	    addr + len > pt->ipa_remote + pt->img.size || addr + len < addr)
		return -EIO;
	uint8_t *at = pt->ipa_local + (addr - pt->ipa_remote);
	memcpy(at, buf, len);
	__builtin___clear_cache((char *)at, (char *)at + len);
	return (ssize_t)len;
}

static struct pad_table *table_get(struct process *p, char *why, size_t whylen)
{
	struct pad_table *pt = p->pads;

	if (pt && pt->failed) {
		snprintf(why, whylen, "no shared memory for pads in process %d", p->pid);
		return NULL;
	}
	if (pt)
		return pt;
	pt = calloc(1, sizeof(*pt));
	if (!pt)
		abort();
	p->pads = pt;
	if (table_map(p, pt, why, whylen) < 0) {
		pt->failed = true;
		return NULL;
	}
	agent.ptrace->pad_options(p, &pt->image_form, &pt->tp_read);
	pad_tid_reset(p);	/* entered when they next run */
	debug("table at %#llx in %d (image form %u, tp_read %d)",
	      (unsigned long long)pt->remote, p->pid, pt->image_form, pt->tp_read);
	return pt;
}

/*
 * Gives probe `pr` (already a breakpoint probe) a jump pad.  Returns 0,
 * or -errno with the reason in `why`; the probe stays as it was then.
 */
static bool all_stopped(struct process *p);
static int read_function(struct probe *pr, uint8_t **buf, uint64_t *func_addr,
			 uint64_t *func_size, char *why, size_t whylen);
static int attach(struct probe *pr, enum pad_collect collect, const uint8_t *func,
		  uint64_t func_size, uint64_t func_addr, char *why, size_t whylen);

/* Bit 0 of the probe's code address where the arch has two instruction
 * sets (32-bit ARM: 1 in Thumb code), else 0. */
static uint64_t isa(const struct probe *pr)
{
	return pr->code_addr & ~pr->addr & 1;
}

/*
 * With `collect` the pad records hits in the ring and goes on without a
 * stop; only when the ring is full does it hand off and trap.
 */
int pad_attach(struct probe *pr, enum pad_collect collect, char *why, size_t whylen)
{
	const struct arch_ops *arch = agent.arch;
	struct process *p = pr->proc;
	int err;

	/* Both halves must have them: the arch's emitters and the ptrace
	 * side's reading of a hit's registers. */
	if (!arch->emit_pad_handoff || !arch->pad_layout || !arch->pad_step ||
	    !agent.ptrace->load_pad || !agent.ptrace->pad_options) {
		snprintf(why, whylen, "no jump pads on %s", arch->name);
		return -ENOTSUP;
	}
	/* The code the jump replaces: the instruction, or (when it is
	 * shorter than the jump) the whole function, whose every branch
	 * is checked to stay out of the window. */
	const uint8_t *func = pr->insn.bytes;
	uint64_t func_addr = pr->addr, func_size = pr->insn.len;
	uint8_t *fbuf = NULL;
	/* A 4-byte jump off a word (Thumb at 2 mod 4) is two writes: a
	 * thread running there meanwhile would see half of it. */
	if (arch->pad_jump_len == 4 && (pr->addr & 3) && !all_stopped(p)) {
		snprintf(why, whylen, "the jump would not be one aligned word, and threads run");
		return -EBUSY;
	}
	if (pr->insn.len < arch->pad_jump_len) {
		if (!all_stopped(p)) {
			snprintf(why, whylen, "the instruction is %u bytes, and threads run",
				 pr->insn.len);
			return -EBUSY;
		}
		if ((err = read_function(pr, &fbuf, &func_addr, &func_size, why, whylen)) < 0)
			return err;
		func = fbuf;
	}
	err = attach(pr, collect, func, func_size, func_addr, why, whylen);
	free(fbuf);
	return err;
}

/* The bytes of the function around the probe (its symbol's bounds), in a
 * buffer *buf the caller frees; -errno with the reason in `why`. */
static int read_function(struct probe *pr, uint8_t **buf, uint64_t *func_addr,
			 uint64_t *func_size, char *why, size_t whylen)
{
	struct process *p = pr->proc;

	if (!process_function_at(p, pr->addr, func_addr, func_size) ||
	    *func_size > PAD_FUNC_MAX) {
		snprintf(why, whylen, "the jump covers more than the %u-byte instruction, "
			 "and no function symbol bounds the code around it", pr->insn.len);
		return -ENOSPC;
	}
	if (!(*buf = malloc(*func_size)))
		return -ENOMEM;
	if (mem_read(p, *func_addr, *buf, *func_size) != (ssize_t)*func_size) {
		free(*buf);
		*buf = NULL;
		snprintf(why, whylen, "cannot read the function at 0x%llx",
			 (unsigned long long)*func_addr);
		return -EFAULT;
	}
	return 0;
}

/* Whether every thread of `p` is stopped (none can be inside a window). */
static bool all_stopped(struct process *p)
{
	for (struct thread *t = p->threads; t; t = t->next)
		if (t->state != THREAD_STOPPED)
			return false;
	return true;
}

/*
 * clock_gettime in the vDSO of `p` (its ELF image, which the kernel maps
 * at AT_SYSINFO_EHDR): a pad that stores the hit's time calls it, in the
 * process, instead of making the system call.  Looked up once per
 * process; 0 when there is none (no vDSO, no such symbol: the pads make
 * the system call, as before).
 */
static uint64_t vdso_clock(struct process *p, struct pad_table *pt)
{
	char path[64];
	uint64_t auxv[2], base = 0;
	uint8_t *img = NULL;
	size_t size = 0;
	Elf *e = NULL;
	int fd;

	if (pt->vdso_looked)
		return pt->vdso_clock;
	pt->vdso_looked = true;
	snprintf(path, sizeof(path), "/proc/%d/auxv", p->pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	while (read(fd, auxv, sizeof(auxv)) == (ssize_t)sizeof(auxv) && auxv[0] != AT_NULL)
		if (auxv[0] == AT_SYSINFO_EHDR)
			base = auxv[1];
	close(fd);
	FILE *maps;
	char line[256];
	snprintf(path, sizeof(path), "/proc/%d/maps", p->pid);
	if (!base || !(maps = fopen(path, "re")))
		return 0;
	while (fgets(line, sizeof(line), maps)) {
		unsigned long long lo, hi;
		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && lo == base &&
		    strstr(line, "[vdso]"))
			size = hi - lo;
	}
	fclose(maps);
	if (!size || size > (1u << 20) || !(img = malloc(size)) ||
	    mem_read_raw(p, base, img, size) != (ssize_t)size)
		goto out;
	elf_version(EV_CURRENT);
	if (!(e = elf_memory((char *)img, size)))
		goto out;
	/* The image is linked at its first PT_LOAD's address. */
	size_t nph;
	uint64_t link = UINT64_MAX;
	if (elf_getphdrnum(e, &nph) < 0)
		goto out;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_vaddr < link)
			link = ph.p_vaddr;
	}
	Elf_Scn *scn = NULL;
	while (link != UINT64_MAX && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM ||
		    !(d = elf_getdata(scn, NULL)) || !sh.sh_entsize)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;
			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !(name = elf_strptr(e, sh.sh_link, sym.st_name)))
				continue;
			if (strcmp(name, "__vdso_clock_gettime") == 0 &&
			    sym.st_value >= link && sym.st_value - link < size) {
				pt->vdso_clock = base + (sym.st_value - link);
				pt->vdso_lo = base;
				pt->vdso_hi = base + size;
				break;
			}
		}
	}
out:
	if (e)
		elf_end(e);
	free(img);
	debug("process %d: vDSO clock_gettime %s%#llx", p->pid,
	      pt->vdso_clock ? "at " : "not found, ", (unsigned long long)pt->vdso_clock);
	return pt->vdso_clock;
}

/*
 * The native check of the one condition at IPA site `site` (probe at
 * `pc`), written at `code` when the arch has one and the condition is a
 * compare it can emit (ax_simple_cond): its length, with the offsets
 * emit_pad_cond gives; 0 (nothing written) otherwise, and the collector
 * evaluates the condition as before.  With more tracepoints at the site
 * the collector decides: a hit wants all their conditions.
 */
static int native_cond(struct pad_table *pt, uint64_t site, uint64_t pc,
		       uint8_t *code, size_t size, size_t *skip, size_t *load,
		       size_t *take)
{
	const struct arch_ops *arch = agent.arch;
	struct ax_simple_cond sc;

	if (!arch->emit_pad_cond || !arch->patch_branch || site < pt->ipa_remote ||
	    site + sizeof(struct ipa_site) > pt->ipa_remote + pt->ipa_size)
		return 0;
	const struct ipa_site *s = (const struct ipa_site *)
		(pt->ipa_local + (site - pt->ipa_remote));
	if (s->nprogs != 1)
		return 0;
	const struct ipa_program *pg = (const struct ipa_program *)
		(pt->ipa_local + s->prog_off[0]);
	if (!pg->cond_len || ax_simple_cond((const uint8_t *)pg + pg->cond_off,
					    pg->cond_len, &sc) < 0)
		return 0;
	struct arch_pad_cond c = {
		.mem = sc.mem != 0, .regnum = sc.regnum, .addr = sc.addr,
		.size = sc.size, .nconv = sc.nconv,
		.cmp = (enum arch_cond_cmp)sc.op, .imm = (int32_t)sc.imm, .pc = pc,
		.skip_counter = pt->ipa_remote + pg->counters_off +
				offsetof(struct ipa_counters, skipped_cond),
	};
	for (unsigned int i = 0; i < sc.nconv; i++) {
		c.conv[i].sign = sc.conv[i].sign != 0;
		c.conv[i].bits = sc.conv[i].bits;
	}
	int n = arch->emit_pad_cond(code, size, &c, skip, load, take);
	if (n < 0) {
		debug("probe at %#llx: its condition stays the collector's: %s",
		      (unsigned long long)pc, strerror(-n));
		return 0;
	}
	debug("probe at %#llx: native condition, %d bytes", (unsigned long long)pc, n);
	return n;
}

/*
 * What the pad of `pr` can do of what `collect` asks: it stops at every
 * hit where the arch has no collector, where gdb has a breakpoint of its
 * own there (always-inserted), or where the in-process collector cannot
 * be set up (*ipa_site, *ipa_live: its site, for PAD_IPA).
 */
static enum pad_collect pad_mode(struct probe *pr, struct pad_table *pt,
				 enum pad_collect collect, uint64_t *ipa_site,
				 bool *ipa_live)
{
	struct process *p = pr->proc;

	if (!agent.arch->emit_pad_collect)
		collect = PAD_STOPS;
	/* gdb's breakpoint there already (always-inserted): hits must stop. */
	struct sw_breakpoint *gb = bp_find(p, pr->addr);
	if (gb && gb->gdb_refs)
		collect = PAD_STOPS;
	if (collect == PAD_IPA) {
		char iwhy[200];
		if (ipa_site_make(p, pt, pr->addr, ipa_site, ipa_live, iwhy,
				  sizeof(iwhy)) < 0) {
			debug("probe at %#llx: no collecting in the process, the pad stops: %s",
			      (unsigned long long)pr->addr, iwhy);
			collect = PAD_STOPS;
		}
	}
	return collect;
}

/* Nothing else may sit in the `inlen` bytes the jump covers: no other
 * breakpoint, no stopped thread (-EBUSY, said in why). */
static int window_free(struct probe *pr, size_t inlen, char *why, size_t whylen)
{
	struct process *p = pr->proc;

	for (struct sw_breakpoint *b = p->breakpoints; b; b = b->next)
		if (b->addr > pr->addr && b->addr < pr->addr + inlen) {
			snprintf(why, whylen, "a breakpoint at 0x%llx is inside the jump's bytes",
				 (unsigned long long)b->addr);
			return -EBUSY;
		}
	for (struct thread *t = p->threads; t; t = t->next) {
		uint64_t pc;
		if (inlen == pr->insn.len || t->state != THREAD_STOPPED)
			continue;
		pc = regs_get_pc(t);
		if (pc > pr->addr && pc < pr->addr + inlen) {
			snprintf(why, whylen, "thread %d is inside the jump's bytes", t->tid);
			return -EBUSY;
		}
	}
	return 0;
}

/* The bytes that replace the window at the probe: the jump to the pad at
 * `at`, then breakpoints (a thread that lands there after all traps
 * rather than runs half an instruction). */
static int site_code(struct probe *pr, uint64_t at, bool far, uint8_t *site, size_t size,
		     size_t inlen, char *why, size_t whylen)
{
	const struct arch_ops *arch = agent.arch;
	int m = far ? arch->emit_jump_far(site, size, pr->code_addr, at | isa(pr))
		    : arch->emit_jump(site, size, pr->code_addr, at | isa(pr));
	const uint8_t *fill = arch->bp_insn;
	size_t flen = arch->bp_len;

	if (m < 0) {
		snprintf(why, whylen, "the pad is out of a jump's reach");
		return m;
	}
	/* The rest in the site's set (32-bit ARM Thumb: 16-bit udfs). */
	if (arch->bp_kind_at && arch->bp_insn_for_kind) {
		static const uint8_t t16[2];
		const uint8_t *k = arch->bp_insn_for_kind(
			arch->bp_kind_at(pr->code_addr, t16, sizeof(t16)), &flen);
		if (k)
			fill = k;
		else
			flen = arch->bp_len;
	}
	if ((inlen - (size_t)m) % flen) {
		snprintf(why, whylen, "the jump leaves %zu bytes, no whole breakpoint",
			 inlen - (size_t)m);
		return -EINVAL;
	}
	for (size_t i = (size_t)m; i < inlen; i += flen)
		memcpy(site + i, fill, flen);
	return 0;
}

/*
 * A pad being built by attach: its code so far and where its parts
 * start (offsets in `code`), what it was built for, and the branches
 * still to link.
 */
struct pad_build {
	struct probe *pr;
	struct pad_table *pt;
	enum pad_collect collect;
	uint64_t ipa_site;
	bool ipa_live, no_image;
	unsigned int copies;		/* ranges the pad copies (native_copy) */
	bool ret, ret_only;		/* the return pushed; nothing else */
	uint8_t code[PAD_CODE_MAX];
	size_t n;			/* the code's length so far */
	size_t cond_skip, cond_load, cond_take;	/* native condition */
	/* the loads of the TCB's word at the thread pointer: the tid
	 * lookup's, the return push's, the bases' */
	struct arch_pad_fault tid_fault, ret_fault, bases_fault;
	size_t ret_fallback, ret_done;	/* the return push's branches */
	size_t done;			/* the collector's branch */
	size_t trap_off, win_off;
	size_t inlen;			/* the window's length at the site */
	uint64_t at;			/* where the pad goes */
	bool far;			/* beyond emit_jump's reach: the site
					 * gets emit_jump_far */
};

/* b's code grew by `m` bytes, or failed to (-errno): says why. */
static int grown(struct pad_build *b, int m, const char *what, char *why, size_t whylen)
{
	if (m < 0) {
		snprintf(why, whylen, "cannot build the pad's %s: %s", what, strerror(-m));
		return m;
	}
	b->n += (size_t)m;
	return 0;
}

/* Links the branch at `from` in b's code to `to`, or says why not. */
static int linked(struct pad_build *b, size_t from, size_t to, const char *what,
		  char *why, size_t whylen)
{
	int m = agent.arch->patch_branch(b->code, from, to);

	if (m < 0) {
		snprintf(why, whylen, "cannot link the pad's %s: %s", what, strerror(-m));
		return m;
	}
	return 0;
}

/* The pad's start: a condition simple enough, natively (a false one
 * leaves before the register save; not where the pad also pushes
 * returns, which every call needs), then the register save. */
static int build_entry(struct pad_build *b, char *why, size_t whylen)
{
	if (b->collect == PAD_IPA && !b->pr->pad_ret_want)
		b->n = (size_t)native_cond(b->pt, b->ipa_site, b->pr->addr, b->code,
					   sizeof(b->code), &b->cond_skip,
					   &b->cond_load, &b->cond_take);
	return grown(b, agent.arch->emit_save_regs(b->code + b->n, sizeof(b->code) - b->n,
						   b->pr->code_addr),
		     "register save", why, whylen);
}

/*
 * The return taken in the pad: the push comes first, right after the
 * save; it falls through to the collector (or branches to the restore
 * when there is nothing to record at the entry), and sends what it
 * cannot push to the hand-off.  Not where gdb has its breakpoint (hits
 * must stop there), nor where the process has no shadow stacks.
 */
static int build_ret_push(struct pad_build *b, char *why, size_t whylen)
{
	struct probe *pr = b->pr;
	struct process *p = pr->proc;
	struct sw_breakpoint *gb = bp_find(p, pr->addr);

	b->ret = pr->pad_ret_want && !(gb && gb->gdb_refs);
	if (b->ret) {
		char rwhy[200];
		if (pad_ret_get(p, b->pt, rwhy, sizeof(rwhy)) < 0) {
			debug("probe at %#llx: its returns trap: %s",
			      (unsigned long long)pr->addr, rwhy);
			b->ret = false;
		}
	}
	if (b->ret && trace_returns_need_image(pr->addr) && pad_ret_image(p) < 0) {
		debug("probe at %#llx: its returns trap: cannot turn the return "
		      "records' image on", (unsigned long long)pr->addr);
		b->ret = false;
	}
	if (!b->ret)
		return 0;
	/* Nothing else at the entry: a push that succeeds goes straight
	 * to the restore. */
	b->ret_only = b->collect == PAD_STOPS && pr->pad_ret_only;
	struct arch_ret_pad rp = {
		.area = p->ret_area, .tramp = p->ret_itramp,
		.func_run = pr->addr | (uint64_t)(trace_run_id() & 0xffff) << 48,
		.tp_read = b->pt->tp_read, .tp_fault = &b->ret_fault,
		.tp_notls = pad_tid_usable(b->pt) ?
			    b->pt->remote + tids_off() + PAD_TID_NOTLS : 0,
	};
	size_t at = b->n;
	int err = grown(b, agent.arch->emit_ret_entry(b->code + b->n, sizeof(b->code) - b->n,
						      &rp, &b->ret_fallback,
						      b->ret_only ? &b->ret_done : NULL),
			"return push", why, whylen);
	b->ret_fallback += at;
	if (b->ret_only)
		b->ret_done += at;
	if (b->ret_fault.load) {
		b->ret_fault.load += at;
		b->ret_fault.take += at;
	}
	return err;
}

/* Whether a tracepoint of IPA site `site` has a condition: only then
 * does its pad ask ipa_site_wants before it takes a record (without
 * one every hit is recorded, and the question is a call for nothing). */
static bool site_has_cond(struct pad_table *pt, uint64_t site)
{
	if (!site || site < pt->ipa_remote ||
	    site + sizeof(struct ipa_site) > pt->ipa_remote + pt->ipa_size)
		return site != 0;
	const struct ipa_site *s = (const struct ipa_site *)
		(pt->ipa_local + (site - pt->ipa_remote));
	for (uint32_t i = 0; i < s->nprogs && i < IPA_SITE_PROGS; i++)
		if (((const struct ipa_program *)(pt->ipa_local + s->prog_off[i]))->cond_len)
			return true;
	return false;
}

/*
 * The collector's work done by the pad itself (arch_pad_ring.copy_fn),
 * where the arch's image exports a copy for it: the site's one
 * tracepoint has no condition, no pass count and nothing but ranges to
 * collect (`collect *p`, `collect buf`: ax_simple_trace made them
 * IPA_ACT_MEM), each at a frame register plus a constant or at a
 * constant, at most ARCH_PAD_COPIES, and what they write fits the block
 * area (the collector would trap otherwise).  Then the pad writes the
 * same record the collector would, with no call into it, no program or
 * counter read and no `lock` add (its `hits` and `taken` stay 0: nothing
 * reads them, the agent counts hits from the records, and without a
 * pass count nothing needs a ticket).  PROBE_PAD_NATIVE_COPY=0 keeps the
 * collector's call, to measure the difference.
 */
static void native_copy(struct pad_table *pt, struct arch_pad_ring *r)
{
	if (!r->ipa_call || !pt->img.copy_native || r->ipa_wants ||
	    agent.opt.pad_collector_copy ||
	    r->ipa_site < pt->ipa_remote ||
	    r->ipa_site + sizeof(struct ipa_site) > pt->ipa_remote + pt->ipa_size)
		return;
	const struct ipa_site *s = (const struct ipa_site *)
		(pt->ipa_local + (r->ipa_site - pt->ipa_remote));
	if (s->nprogs != 1)
		return;
	const struct ipa_program *pg = (const struct ipa_program *)
		(pt->ipa_local + s->prog_off[0]);
	uint64_t need = sizeof(struct ipa_site_out) + sizeof(struct ipa_group);
	if (pg->cond_len || pg->pass_count || (pg->flags & IPA_PROG_LIVE) ||
	    !pg->nactions || pg->nactions > ARCH_PAD_COPIES)
		return;
	for (uint32_t i = 0; i < pg->nactions; i++) {
		const struct ipa_action *a = &pg->actions[i];
		if (a->kind != IPA_ACT_MEM || !a->len ||
		    (a->basereg != IPA_NO_REG && a->basereg >= layout()->frame_words))
			return;
		need += (sizeof(struct ipa_mem_block) + a->len + 7) & ~(uint64_t)7;
	}
	if (need > r->blocks_size)
		return;
	for (uint32_t i = 0; i < pg->nactions; i++) {
		const struct ipa_action *a = &pg->actions[i];
		r->copies[i].basereg = a->basereg == IPA_NO_REG ? ARCH_PAD_NO_REG : a->basereg;
		r->copies[i].len = a->len;
		r->copies[i].offset = a->offset;
	}
	r->ncopies = pg->nactions;
	r->copy_tp = pg->tp_number;
	r->copy_flags = pg->flags;
	r->copy_fn = pt->ipa_remote + pt->img.copy_native;
}

/* A recording pad's (or a collector's) record of the hit in the ring;
 * a full ring falls through to the hand-off. */
static int build_collect(struct pad_build *b, char *why, size_t whylen)
{
	struct pad_table *pt = b->pt;
	const struct arch_pad_layout *l = layout();

	if (b->collect == PAD_STOPS)
		return 0;
	bool time_tid = b->collect == PAD_REGS_TIME_TID || b->ipa_live;
	if (time_tid && !pt->time_said) {
		pt->time_said = true;
		debug("process %d: recording pads stamp hits %s", b->pr->proc->pid,
		      pad_tsc_usable() ? "with the CPU's counter" :
		      "by clock_gettime (no counter they may read, or PROBE_PAD_CLOCK=vdso)");
	}
	if (time_tid && pad_tsc_usable()) {
		pad_tsc_calibrate();
		pt->tsc_time = true;
	}
	struct arch_pad_ring r = {
		.ring = pt->remote + ring_off(), .off_records = RING_RECORDS_OFF,
		.record_shift = record_shift(), .nrecords = RING_RECORDS,
		.off_seq = l->off_seq, .off_bases = l->off_bases,
		.off_frame = l->off_frame, .image_form = pt->image_form,
		.tp_read = pt->tp_read,
		.time_tid = time_tid,
		.clock_call = time_tid && !pt->tsc_time ? vdso_clock(b->pr->proc, pt) : 0,
		.tid_table = pad_tid_usable(pt) ? pt->remote + tids_off() : 0,
		.tsc_time = time_tid && pt->tsc_time,
		.stamp_entry = b->ret && !b->ret_only,
		.prefetch = agent.opt.pad_prefetch,
		.off_tid = l->off_tid, .off_time = l->off_time,
		.off_flags = l->off_flags,
		.image = !b->no_image,
		.ipa_call = b->ipa_site ? pt->ipa_remote + pt->img.collect_site : 0,
		.ipa_site = b->ipa_site,
		.ipa_wants = site_has_cond(pt, b->ipa_site) ?
			     pt->ipa_remote + pt->img.site_wants : 0,
		.off_blocks = blocks_off(), .blocks_size = blocks_size(),
		.tp_fault = &b->tid_fault, .bases_fault = &b->bases_fault,
	};
	native_copy(pt, &r);
	size_t at = b->n;
	int m = agent.arch->emit_pad_collect(b->code + b->n, sizeof(b->code) - b->n, &r,
					     &b->done);
	if (m < 0 && r.copy_fn) {
		/* What the arch would not copy itself, its collector does. */
		debug("probe at %#llx: the pad calls the collector: its copy of the "
		      "ranges failed: %s", (unsigned long long)b->pr->addr, strerror(-m));
		r.copy_fn = 0;
		r.ncopies = 0;
		b->tid_fault = b->bases_fault = (struct arch_pad_fault){ 0, 0, 0 };
		m = agent.arch->emit_pad_collect(b->code + b->n, sizeof(b->code) - b->n, &r,
						 &b->done);
	}
	b->copies = m >= 0 && r.copy_fn ? r.ncopies : 0;
	if (b->copies)
		debug("probe at %#llx: the pad copies its %u range(s) itself",
		      (unsigned long long)b->pr->addr, b->copies);
	int err = grown(b, m, "collector", why, whylen);
	b->done += at;
	struct arch_pad_fault *f[] = { &b->tid_fault, &b->bases_fault };
	for (size_t i = 0; i < 2; i++)
		if (f[i]->load) {
			f[i]->load += at;
			f[i]->take += at;
		}
	return err;
}

/* The hand-off (claim an entry, trap), the return's stamp, the register
 * restore, and the branches of the parts before linked to them. */
static int build_tail(struct pad_build *b, char *why, size_t whylen)
{
	const struct arch_ops *arch = agent.arch;
	const struct arch_pad_layout *l = layout();
	struct arch_pad_handoff h = {
		.table = b->pt->remote, .entry_shift = l->entry_shift,
		.nentries = PAD_ENTRIES, .off_owner = l->off_owner,
		.off_ready = l->off_ready, .off_bases = l->off_bases,
		.off_frame = l->off_frame, .image_form = b->pt->image_form,
		.tp_read = b->pt->tp_read,
	};
	size_t at;
	int err;

	if (b->ret && (err = linked(b, b->ret_fallback, b->n, "return push",
				    why, whylen)) < 0)
		return err;
	at = b->n;
	if ((err = grown(b, arch->emit_pad_handoff(b->code + b->n, sizeof(b->code) - b->n,
						   &h, &b->trap_off),
			 "hand-off", why, whylen)) < 0)
		return err;
	b->trap_off += at;
	if (b->collect != PAD_STOPS &&
	    (err = linked(b, b->done, b->n, "collector", why, whylen)) < 0)
		return err;
	if (b->ret_only &&
	    (err = linked(b, b->ret_done, b->n, "return push", why, whylen)) < 0)
		return err;
	/* The collector and the hand-off come here too: the entry's time
	 * after the entry frame's. */
	if (b->ret && !b->ret_only &&
	    (err = grown(b, arch->emit_ret_stamp(b->code + b->n, sizeof(b->code) - b->n),
			 "return stamp", why, whylen)) < 0)
		return err;
	return grown(b, arch->emit_restore_regs(b->code + b->n, sizeof(b->code) - b->n),
		     "register restore", why, whylen);
}

/*
 * A far pad's place (no room within the near jump's reach, or
 * PROBE_AGENT_FAR_PADS), and its jump's length, the window's least.  The
 * far jump is several writes, and covers more than the probed
 * instruction: only with every thread stopped (as a jump over several
 * instructions, pad_attach), and with the function read whole (*fbuf),
 * so that no branch of it lands inside the window.
 */
static int far_place(struct pad_build *b, const uint8_t **func, uint64_t *func_size,
		     uint64_t *func_addr, uint8_t **fbuf, size_t *min_len,
		     char *why, size_t whylen)
{
	const struct arch_ops *arch = agent.arch;
	struct probe *pr = b->pr;
	uint8_t jump[PAD_SITE_MAX];
	int m, err;

	if (!arch->emit_jump_far) {
		snprintf(why, whylen, "no room for a pad within reach");
		return -ENOMEM;
	}
	/* Its length at this site (the pad's address does not change it). */
	m = arch->emit_jump_far(jump, sizeof(jump), pr->code_addr, pr->addr | isa(pr));
	if (m < 0) {
		snprintf(why, whylen, "no far jump at 0x%llx: %s",
			 (unsigned long long)pr->addr, strerror(-m));
		return m;
	}
	if (!all_stopped(pr->proc)) {
		snprintf(why, whylen, "the pad is beyond a jump's reach, and the %d-byte "
			 "far jump is not one write while threads run", m);
		return -EBUSY;
	}
	if ((size_t)m > pr->insn.len && *func == pr->insn.bytes) {
		if ((err = read_function(pr, fbuf, func_addr, func_size, why, whylen)) < 0)
			return err;
		*func = *fbuf;
	}
	err = xol_span_alloc_far(pr->proc, pr->addr, b->n + arch->pad_window_max,
				 agent.opt.far_pads, &b->at);
	if (err < 0) {
		snprintf(why, whylen, "no room for a pad%s",
			 agent.opt.far_pads ? " beyond a jump's reach (PROBE_AGENT_FAR_PADS)" : "");
		return err;
	}
	b->far = true;
	*min_len = (size_t)m;
	return 0;
}

/* The pad's place within the jump's reach (or far, far_place), and the
 * window (the code the jump covers), relocated there, plus the jump
 * back. */
static int build_window(struct pad_build *b, const uint8_t *func, uint64_t func_size,
			uint64_t func_addr, char *why, size_t whylen)
{
	const struct arch_ops *arch = agent.arch;
	struct probe *pr = b->pr;
	size_t min_len = arch->pad_jump_len;
	uint8_t *fbuf = NULL;
	int m, err;

	err = arch->emit_jump_far && agent.opt.far_pads ? -ERANGE :
	      xol_span_alloc(pr->proc, pr->addr, b->n + arch->pad_window_max, &b->at);
	if (err < 0) {
		debug("probe at %#llx: no pad within reach, a far one", (unsigned long long)pr->addr);
		if ((err = far_place(b, &func, &func_size, &func_addr, &fbuf, &min_len,
				     why, whylen)) < 0) {
			free(fbuf);
			return err;
		}
	}
	b->win_off = b->n;
	m = arch->relocate_window(func, func_size, func_addr | isa(pr), pr->code_addr,
				  min_len, b->at + b->n, b->code + b->n,
				  sizeof(b->code) - b->n, &b->inlen);
	free(fbuf);
	if (m < 0 || b->inlen > PAD_SITE_MAX) {
		snprintf(why, whylen, "the code at the probe cannot run in a%s pad: %s",
			 b->far ? " far" : "",
			 m == -EXDEV ? "a branch lands inside the jump's bytes" :
			 m == -ERANGE ? "the function ends first" :
			 m == -EILSEQ ? "an instruction cannot move (or a call is not last)" :
			 m < 0 ? strerror(-m) : "the window is too long");
		return m < 0 ? m : -E2BIG;
	}
	b->n += (size_t)m;
	if (b->cond_skip &&
	    (err = linked(b, b->cond_skip, b->win_off, "condition", why, whylen)) < 0)
		return err;
	return 0;
}

/* The pad written, the jump over the site, and the probe told of it. */
static int install(struct pad_build *b, char *why, size_t whylen)
{
	struct probe *pr = b->pr;
	struct process *p = pr->proc;
	struct pad_table *pt = b->pt;
	uint8_t site[PAD_SITE_MAX];
	int err;

	if ((err = window_free(pr, b->inlen, why, whylen)) < 0)
		return err;
	if (mem_write_raw(p, b->at, b->code, b->n) != (ssize_t)b->n) {
		snprintf(why, whylen, "cannot write the pad at 0x%llx",
			 (unsigned long long)b->at);
		return -EIO;
	}
	if ((err = site_code(pr, b->at, b->far, site, sizeof(site), b->inlen, why,
			     whylen)) < 0)
		return err;
	keeper_code(p->pid, KEEPER_PAD, b->at + b->trap_off, pr->addr, 0, 0, -1,
		    layout()->off_ready);
	/* Should the agent die, the thread pointer's loads jump where a
	 * fault there would have gone (KEEPER_LOAD). */
	const struct arch_pad_fault *tf[] = { &b->tid_fault, &b->ret_fault, &b->bases_fault };
	for (size_t i = 0; i < 3; i++)
		if (tf[i]->load)
			keeper_code(p->pid, KEEPER_LOAD, b->at + tf[i]->load,
				    b->at + tf[i]->take, (unsigned int)tf[i]->len, 0, -1, 0);
	err = bp_patch(p, pr->addr, site, b->inlen);
	if (err < 0) {
		snprintf(why, whylen, "cannot write the jump at 0x%llx: %s",
			 (unsigned long long)pr->addr, strerror(-err));
		return err;
	}
	struct pad_code *c = calloc(1, sizeof(*c));
	if (!c)
		abort();
	*c = (struct pad_code){ pt->codes, b->at, b->at + b->trap_off, pr->addr, b->n, {
		[PAD_FAULT_COND] = { b->cond_load ? b->at + b->cond_load : 0,
				     b->cond_skip ? b->at + b->cond_take : 0 },
		[PAD_FAULT_TID] = { b->tid_fault.load ? b->at + b->tid_fault.load : 0,
				    b->at + b->tid_fault.take },
		[PAD_FAULT_RET] = { b->ret_fault.load ? b->at + b->ret_fault.load : 0,
				    b->at + b->ret_fault.take },
		[PAD_FAULT_BASES] = { b->bases_fault.load ? b->at + b->bases_fault.load : 0,
				      b->at + b->bases_fault.take },
	} };
	pt->codes = c;
	pr->pad = b->at;
	pr->pad_len = b->n;
	pr->pad_window = b->inlen;
	pr->pad_far = b->far;
	pr->pad_resume = b->at + b->win_off + (isa(pr) ? agent.arch->pad_window_isa_switch : 0);
	pr->pad_collect = b->collect;
	pr->pad_ipa_site = b->ipa_site;
	pr->pad_ipa_live = b->ipa_live;
	pr->pad_copies = b->copies;
	pr->pad_no_image = b->no_image;
	pr->pad_ret = b->ret;
	debug("%spad for %#llx at %#llx, %zu bytes%s", b->far ? "far " : "",
	      (unsigned long long)pr->addr, (unsigned long long)b->at, b->n,
	      b->no_image ? ", records without the image" : "");
	return 0;
}

/*
 * The pad of `pr`, built in steps: its entry (native condition, register
 * save), the return push, the record in the ring, the hand-off and the
 * restore, the relocated window; then written, and the site patched.
 */
static int attach(struct probe *pr, enum pad_collect collect, const uint8_t *func,
		  uint64_t func_size, uint64_t func_addr, char *why, size_t whylen)
{
	struct pad_build build = { .pr = pr }, *b = &build;
	int err;

	if (!(b->pt = table_get(pr->proc, why, whylen)))
		return -ENOMEM;
	b->collect = pad_mode(pr, b->pt, collect, &b->ipa_site, &b->ipa_live);
	/* A record needs the image of the registers outside the frame only
	 * for tracepoints that read them (recording pads are tracepoints'
	 * only); the hand-off always stores it. */
	b->no_image = b->collect != PAD_STOPS && !trace_site_needs_image(pr->addr);
	if ((err = build_entry(b, why, whylen)) < 0 ||
	    (err = build_ret_push(b, why, whylen)) < 0 ||
	    (err = build_collect(b, why, whylen)) < 0 ||
	    (err = build_tail(b, why, whylen)) < 0 ||
	    (err = build_window(b, func, func_size, func_addr, why, whylen)) < 0)
		return err;
	return install(b, why, whylen);
}

/*
 * A thread at the probe must single-step its instruction out of line
 * (gdb steps it, or while-stepping): it would stop inside the window
 * when the jump covers more than that instruction, where the original
 * code no longer is.  Such a probe goes back to its breakpoint for good.
 */
void pad_before_step(struct probe *pr)
{
	if (!pr->pad || pr->pad_window <= pr->insn.len)
		return;
	debug("probe at %#llx: a thread steps it, no pad any more",
	      (unsigned long long)pr->addr);
	pad_detach(pr);
}

/*
 * gdb put a breakpoint at a pad's site: a pad that collects in the
 * process never stops there, so it is rebuilt as one that stops (or the
 * breakpoint alone serves, when no pad can be rebuilt now).
 */
void pad_breakpoint_added(struct process *p, uint64_t addr)
{
	struct probe *pr = probe_at(p, addr);
	char why[160];

	if (!pr || !pr->pad_collect)
		return;
	trace_drain(false);
	pad_detach(pr);
	if (pad_attach(pr, PAD_STOPS, why, sizeof(why)) < 0)
		debug("probe at %#llx: a breakpoint of gdb's there, no pad: %s",
		      (unsigned long long)addr, why);
}

/*
 * A thread resumes at a probe whose hit it already had (t->probe_skip):
 * a pad that collects in the process would record it again on the way
 * through, so the thread goes straight to the pad's copy of the
 * displaced code, which jumps back after it.
 */
void pad_resume_skip(struct thread *t)
{
	struct probe *pr = probe_at(t->proc, t->probe_skip);

	if (!pr || !pr->pad_collect || regs_get_pc(t) != pr->addr)
		return;
	if (regs_set(t, (unsigned int)agent.arch->pc_regnum, pr->pad_resume) < 0)
		return;
	t->probe_skip = 0;
}

/* The site is a breakpoint again (threads in the pad were settled). */
void pad_detach(struct probe *pr)
{
	if (!pr->pad)
		return;
	if (bp_unpatch(pr->proc, pr->addr) < 0)
		debug("cannot put the breakpoint back at %#llx", (unsigned long long)pr->addr);
	pr->pad = 0;
	pr->pad_far = false;
	pr->pad_collect = PAD_STOPS;
	pr->pad_no_image = false;
	pr->pad_ipa_site = 0;
	pr->pad_ipa_live = false;
	pr->pad_copies = 0;
	pr->pad_ret = false;
}

struct pad_code *pad_code_at(struct process *p, uint64_t pc)
{
	if (!p->pads)
		return NULL;
	for (struct pad_code *c = p->pads->codes; c; c = c->next)
		if (pc >= c->addr && pc < c->addr + c->len)
			return c;
	return NULL;
}

bool pad_contains(struct process *p, uint64_t pc)
{
	return pad_code_at(p, pc) != NULL;
}

/* The probe whose pad starts at `pc`: a thread single-stepped its jump. */
struct probe *pad_entered(struct process *p, uint64_t pc)
{
	for (struct probe *pr = p->probes; pr; pr = pr->next)
		if (pr->pad && pr->pad == pc)
			return pr;
	return NULL;
}

/* A fork child's copy of the sites: breakpoints again (its memory). */
void pad_fork_child(struct process *c)
{
	for (struct sw_breakpoint *b = c->breakpoints; b; b = b->next)
		if (b->patched && bp_unpatch(c, b->addr) < 0)
			debug("fork child %d: site %#llx not restored", c->pid,
			      (unsigned long long)b->addr);
}

static void table_free(struct process *p)
{
	struct pad_table *pt = p->pads;

	if (!pt)
		return;
	while (pt->codes) {
		struct pad_code *c = pt->codes;
		pt->codes = c->next;
		free(c);
	}
	if (pt->local)
		munmap(pt->local, shm_size());
	if (pt->ipa_local)
		munmap(pt->ipa_local, pt->ipa_size);
	free(pt->rec_regs);
	free(pt);
	p->pads = NULL;
	pad_tid_reset(p);
}

/* Detach: the process unmaps the table (its threads are out of pads). */
void pad_unmap(struct process *p)
{
	struct thread *t = process_stopped_thread(p);
	long ret;

	bool keep_ring = false;

	if (p->ret_area) {
		/* The trampoline stays (a return may still come through it,
		 * agent or not) and records nothing more, and never waits for
		 * room: nobody drains the ring now.  The ring stays mapped
		 * too: a thread stopped between the trampoline's look at
		 * RET_PAD_ON and its record writes that record when it runs
		 * on, after the agent is gone. */
		const struct arch_ops *arch = agent.arch;
		uint64_t off = 0;
		if (mem_write_raw(p, p->ret_area + RET_PAD_ON, &off, 8) != 8)
			debug("process %d: cannot stop the return trampoline's records",
			      p->pid);
		if (p->ret_itrap && arch->nop_insn &&
		    mem_write_raw(p, p->ret_itrap, arch->nop_insn, arch->bp_len) !=
		    (ssize_t)arch->bp_len)
			debug("process %d: cannot take out the trampoline's wait", p->pid);
		keep_ring = true;
	}
	if (p->pads && p->pads->remote && t && !keep_ring)
		pad_remote_call(t, SYS_munmap, (long)p->pads->remote, (long)shm_size(),
			    0, 0, 0, 0, &ret);
	if (p->pads && p->pads->ipa_local && t)
		pad_remote_call(t, SYS_munmap, (long)p->pads->ipa_remote,
			    (long)p->pads->ipa_size, 0, 0, 0, 0, &ret);
	table_free(p);
}

/* The address space is gone (exit, exec). */
void pad_forget(struct process *p)
{
	table_free(p);
}
