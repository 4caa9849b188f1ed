/*
 * retprobe.c - return probes: tracepoints that collect when their function
 * returns, with the return value and the time spent inside.
 *
 * `monitor return-probe N` marks tracepoint N.  N must sit at a function's
 * first instruction, where the return address is the word at [sp]
 * (x86-64) or the link register (aarch64 x30): ptrace_arch_ops.ret_addr
 * says which.  Its probe then collects nothing on entry: the hit swaps the
 * return address for the address of the process's return trampoline (one
 * breakpoint instruction in an XOL slot) and pushes the real one on the
 * hitting thread's shadow stack, keyed by sp at the entry.  The displaced
 * instruction at the entry still runs by the probe's strategy (on aarch64
 * often `stp x29, x30, [sp, #-N]!`, which saves the trampoline's address).
 * When the function returns, the thread traps on the trampoline; its pc
 * becomes the real return address and the tracepoint's condition and
 * actions run with the registers of the return (rax / x0 = return value).
 *
 *   x86-64 entry:   sp -> [ret]              sp -> [tramp]    push {sp, ret, t0, f}
 *          return:  pc = tramp+1, sp = slot+8   ->  pc = ret  pop; collect; run on
 *   aarch64 entry:  x30 = ret                x30 = tramp      push {sp, ret, t0, f}
 *          return:  pc = tramp, sp = entry sp   ->  pc = x30 = ret  (as `ret` leaves them)
 *
 * Invariants (the stack layout; the link register's follow):
 * - A stack slot holds the trampoline address only while an entry of its
 *   thread's shadow stack names that slot.  Whatever ends the agent's care
 *   of a thread's stack (tstop, a pass count, detach, a fork child the
 *   agent lets go, the unwinder) first writes the real addresses back, so
 *   the program never returns into a trampoline that is not there.
 *   Threads running when a run stops keep their entries: their returns
 *   still trap, and the trampoline then only sets the pc.
 * - Entries are LIFO per thread.  longjmp and exceptions leave entries of
 *   frames that are gone.  An entry is stale when its slot lies below the
 *   stack pointer *and* no longer holds the trampoline address; the second
 *   test keeps the entries of frames on another stack (a signal handler
 *   on a sigaltstack above the thread's stack).
 * - A tail call from one probed function into another (`jmp`, so [sp] is
 *   already the trampoline) chains: the new entry shares the slot and the
 *   real address, and the single return records both, innermost first.
 * - The C++ unwinder reads return addresses to find the frames' unwind
 *   tables; it knows nothing of the trampoline.  Internal probes on its
 *   entry points (_Unwind_RaiseException and siblings, in libgcc_s) put
 *   back every real address of the throwing thread first: the program
 *   behaves exactly as without the agent, and those returns are not
 *   recorded.
 * - While gdb looks at a stopped thread (a breakpoint or a signal during a
 *   run), its stack holds the real addresses, so backtrace, up and finish
 *   work; the trampoline goes back in when the thread resumes, for the
 *   frames still there (gdb's `return` may have popped some).
 *
 * The link register (aarch64).  The agent puts the trampoline in x30; the
 * function keeps it there (a leaf) or saves it somewhere in its frame, and
 * nothing says where.  So:
 * - Staleness is by stack pointers alone, the kernel's uretprobe rule: at
 *   an entry, entries whose sp is at or below the new sp are gone (below
 *   only, when x30 already holds the trampoline: a tail call chains on the
 *   entry of the same sp); at a return, newer entries below the returning
 *   one's sp are gone.  A frame on a sigaltstack above the thread's stack
 *   that enters a probed function therefore drops the interrupted frames'
 *   entries: their returns then stop at the trampoline, reported to gdb.
 * - The return sets x30 as well as the pc to the real address, as `ret`
 *   leaves them: x30 holds the trampoline only inside the newest entry's
 *   function, before that function overwrites it.
 * - Every copy of the trampoline's address is somewhere in the frame that
 *   saved it: a word at address a in [sp, top of the entries) belongs to
 *   the entry of the smallest sp above a.  Showing gdb the real addresses,
 *   putting them back for good, and the unwinder's probes rewrite each
 *   such word, and x30 when it holds the trampoline; a resume writes the
 *   trampoline back only at the words and in the register it changed.  A
 *   copy in another register (a function that moves x30 elsewhere) is
 *   not seen.
 *
 * Returns with no stop (x86-64 and aarch64, pads).  Where the probe is a
 * jump pad at a function symbol's first instruction and the return probes
 * there need only registers and variables (trace-install.c: ret_pad_ok),
 * the pad does the entry's work itself and the return never traps
 * (pad-ret.c pad_ret_get, arch emit_ret_entry / emit_ret_exit, struct
 * arch_ret_pad):
 *
 *   entry pad:   push {slot = sp, ret = [sp], TSC, func|run} on the
 *                thread's stack in p->ret_area (keyed by the fs base),
 *                [sp] = p->ret_itramp; (ordinary tracepoints there: the
 *                pad's collector, or its hand-off, as before)
 *     aarch64:   push {sp, ret = x30, CNTVCT_EL0, func|run} (keyed by
 *                TPIDR_EL0), the frame's x30 = p->ret_itramp, after the
 *                entry's own record if the pad takes one (emit_ret_stamp;
 *                a record handed off: ret_pushed_in_pad writes x30)
 *   trampoline:  pop newer entries below the slot (longjmp), then every
 *                entry of the slot (a tail call's chain, innermost
 *                first): a ring record each, pc field = the trampoline,
 *                the real address in its descriptor; jmp *real
 *                (aarch64: x30 = real; ret)
 *   drain:       pad-drain.c take_return -> trace_drain_return -> run_site,
 *                as do_return -> trace_return does for a trapped return
 *
 * On aarch64 the in-process entries follow the link register's rules
 * above: staleness by sp alone (in the pad's code as in the agent), and
 * gdb's view, the resume and the putting back rewrite x30 and the words
 * of the frames that hold p->ret_itramp (ilink_show, ilink_resume,
 * ilink_restore), with the same helpers as the agent's entries.  A
 * thread the agent sends back to the trampoline's first word (it stood
 * in the exclusive pair of its record's claim) is returned by hand,
 * unrecorded (ilink_on_tramp).
 *
 * The same invariants hold for those entries, with the process as their
 * keeper: the agent's shadow stack and the in-process one are two sets of
 * entries of one thread (a pad that cannot push sends the hit to the
 * agent, which pushes here: both kinds can be in one stack, each slot
 * holding its own trampoline's address).  Whatever puts real addresses
 * back here puts back theirs too (irestore: restore_thread), gdb's view
 * shows theirs (ishow / iresume), a thread that ends clears its slot's
 * tid (iforget).  Where the agent stops caring without reaching a thread (it
 * runs at tstop; the agent dies), nothing is owed: the trampoline needs
 * no agent, and its page is never unmapped.  Fork: the area is private,
 * so the child's copy of its stack has its copy of the entries; a child
 * the agent lets go gets its real addresses back like the parent's.
 * What differs from the trap path: staleness at a return is by the slot
 * alone (newer entries below it go, without the holds-the-trampoline
 * test), and an entry that finds [sp] already the trampoline but the
 * newest entry not that slot's, or no room, goes to the agent.
 */
#define LOG_DOMAIN "tp"
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/agent.h"
#include "agent/keeper.h"
#include "agent/log.h"
#include "agent/ret-stack.h"
#include "agent/tp-marks.h"

/* Deeper than any sane recursion; beyond it the run stops with an error. */
#define RET_MAX_DEPTH 65536
/* Bytes of stack searched for the trampoline's copies (link register). */
#define RET_SCAN_MAX (1u << 20)

static struct tp_marks marks;	/* monitor return-probe's */

/* --- marks (monitor return-probe) -------------------------------------- */

int ret_mark(uint32_t number, bool on)
{
	return tp_marks_set(&marks, number, on);
}

void ret_marks_clear(void)
{
	tp_marks_clear(&marks);
}

bool ret_is_marked(uint32_t number)
{
	return tp_marks_has(&marks, number);
}

void ret_marks_text(char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (uint32_t n = 1; n <= TP_MARK_MAX; n++) {
		if (!ret_is_marked(n))
			continue;
		if (len + 16 >= size) {
			/* Room was kept for this: the list says it is cut. */
			snprintf(buf + len, size - len, ", ...");
			return;
		}
		len += (size_t)snprintf(buf + len, size - len, "%s%u", len ? ", " : "", n);
	}
}

/* --- helpers ---------------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The wall clock of trace frames' timestamps, in microseconds. */
static uint64_t wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000;
}

/* Bytes of a return address on the stack: the program's word. */
#define WORD ((size_t)agent.ptrace->word_size)

static bool read_word(struct process *p, uint64_t addr, uint64_t *v)
{
	*v = 0;		/* little-endian: a 4-byte word fills the low half */
	return mem_read(p, addr, v, WORD) == (ssize_t)WORD;
}

static bool write_word(struct process *p, uint64_t addr, const uint64_t *v)
{
	return mem_write(p, addr, v, WORD) == (ssize_t)WORD;
}

/* The return address is in a link register (aarch64), not at [sp]. */
static bool in_link(void)
{
	return agent.ptrace->ret_addr == PTRACE_RET_LINK;
}

/* sp after a return, minus sp at the function's entry. */
static uint64_t ret_pops(void)
{
	return in_link() ? 0 : WORD;
}

static bool holds_tramp(struct process *p, uint64_t slot)
{
	uint64_t v;

	return read_word(p, slot, &v) && v == p->ret_tramp;
}

/* holds_tramp as ret-stack.c asks it (arg: the process). */
static bool slot_holds_tramp(uint64_t slot, void *arg)
{
	return holds_tramp(arg, slot);
}

/* The keeper's copy of t's entries (keeper.c), after every change. */
static void mirror(struct thread *t)
{
	struct ret_stack *rs = t->ret;
	size_t n = rs ? rs->n : 0;
	uint64_t slots[64], rets[64];
	size_t from = n > 64 ? n - 64 : 0;

	if (!keeper_active())
		return;
	for (size_t i = from; i < n; i++) {
		slots[i - from] = rs->e[i].slot;
		rets[i - from] = rs->e[i].ret;
	}
	keeper_ret_set(t->proc->pid, t->tid, n - from, slots, rets);
}

static void drop(struct ret_stack *rs, size_t i)
{
	ret_stack_drop(rs, i);
}

static int find_slot(const struct ret_stack *rs, uint64_t slot)
{
	return ret_stack_find(rs, slot);
}

/* --- the in-process shadow stacks (pad-ret.c, struct arch_ret_pad) ----------- */

/*
 * Where the jump pads take returns with no stop, a thread's entries live
 * in the process, in its slot of p->ret_area, found by its thread pointer
 * (fs base, TPIDR_EL0) as the pad finds it.  The agent reads and writes them only
 * while the thread is stopped (or gone): the thread itself is their
 * only other writer.  What ends the agent's care of a stack or shows
 * gdb the real addresses does the same to those entries as to its own
 * (restore_thread, ret_show, ret_resume).
 */
struct ientry {
	uint64_t slot, ret, tsc, func_run;
};

/* The link register's versions (aarch64), with the trap path's helpers
 * further down. */
static void ilink_restore(struct thread *t, uint64_t at, const struct ientry *e, int n,
			  uint64_t sp);
static bool ilink_show(struct thread *t, const struct ientry *e, int n, uint64_t sp);
static void ilink_resume(struct thread *t, uint64_t at, uint64_t sp);
static void ilink_fix_pc(struct thread *t);

/* The address of t's slot in the area, 0 if it has none. */
static uint64_t islot_of(struct thread *t)
{
	struct process *p = t->proc;
	uint64_t key, k;

	if (!p->ret_area || !(key = thread_key(t)))
		return 0;
	unsigned int i = (unsigned int)((key * RET_PAD_HASH) >> RET_PAD_HASH_SHIFT);
	for (unsigned int tries = 0; tries < RET_PAD_SLOTS; tries++) {
		uint64_t at = p->ret_area + 4096 + (uint64_t)i * RET_PAD_SLOT_SIZE;
		if (!read_word(p, at, &k) || !k)
			return 0;
		if (k == key)
			return at;
		i = (i + 1) & (RET_PAD_SLOTS - 1);
	}
	return 0;
}

/* The entries of the slot at `at`: how many (at most RET_PAD_DEPTH), -1
 * when unreadable. */
static int iread(struct process *p, uint64_t at, struct ientry *e)
{
	uint32_t n;

	if (mem_read(p, at + 12, &n, 4) != 4)
		return -1;
	if (n > RET_PAD_DEPTH)
		n = RET_PAD_DEPTH;
	if (n && mem_read(p, at + 64, e, n * sizeof(*e)) != (ssize_t)(n * sizeof(*e)))
		return -1;
	return (int)n;
}

static void iwrite(struct process *p, uint64_t at, const struct ientry *e, uint32_t n)
{
	if ((n && mem_write(p, at + 64, e, n * sizeof(*e)) != (ssize_t)(n * sizeof(*e))) ||
	    mem_write(p, at + 12, &n, 4) != 4)
		log_user("process %d: cannot write a thread's shadow stack at 0x%" PRIx64,
			 p->pid, at);
}

static bool in_itramp(struct process *p, uint64_t pc)
{
	return p->ret_itramp && pc >= p->ret_itramp && pc < p->ret_itramp + 4096;
}

/* `fix`: where the link register holds the return address and the pad
 * pushed but had not stamped it yet, stamp it (the thread returns through
 * the trampoline). */
static bool pushed_in_pad(struct thread *t, uint64_t func, bool fix)
{
	struct process *p = t->proc;
	uint64_t sp, v;

	if (in_link()) {
		unsigned int lr = (unsigned int)agent.ptrace->ret_link_regnum;
		struct ientry e;
		uint64_t at;
		uint32_t n;
		if (!p->ret_itramp || regs_get(t, lr, &v) < 0)
			return false;
		if (v == p->ret_itramp)
			return true;
		/* The pad pushed, and its collector's full ring sent the hit
		 * here before the stamp wrote x30: the agent does. */
		if (!(at = islot_of(t)) || mem_read(p, at + 12, &n, 4) != 4 || !n ||
		    n > RET_PAD_DEPTH ||
		    mem_read(p, at + 64 + (uint64_t)(n - 1) * sizeof(e), &e, sizeof(e)) !=
			    (ssize_t)sizeof(e) ||
		    regs_get(t, (unsigned int)agent.arch->sp_regnum, &sp) < 0 ||
		    e.slot != sp || e.ret != v ||
		    (e.func_run & ((1ull << 48) - 1)) != func)
			return false;
		if (fix)
			regs_set(t, lr, p->ret_itramp);
		return true;
	}
	return p->ret_itramp &&
	       regs_get(t, (unsigned int)agent.arch->sp_regnum, &sp) == 0 &&
	       read_word(p, sp, &v) && v == p->ret_itramp;
}

bool ret_pushed_in_pad(struct thread *t, uint64_t func)
{
	return pushed_in_pad(t, func, true);
}

bool ret_pushed_in_pad_peek(struct thread *t, uint64_t func)
{
	return pushed_in_pad(t, func, false);
}

/*
 * Stopped thread `t`'s in-process entries: real addresses back in every
 * slot that holds the trampoline, and none left.  A thread inside the
 * trampoline first runs out of it (to its real address).
 */
static void irestore(struct thread *t)
{
	struct process *p = t->proc;
	static struct ientry e[RET_PAD_DEPTH];
	uint64_t at, sp, v;
	int n;

	if (!p->ret_area)
		return;
	if (in_itramp(p, regs_get_pc(t)))
		pad_settle(t);
	if (!(at = islot_of(t)) || (n = iread(p, at, e)) <= 0 ||
	    regs_get(t, (unsigned int)agent.arch->sp_regnum, &sp) < 0)
		return;
	if (in_link()) {
		ilink_restore(t, at, e, n, sp);
		return;
	}
	for (int i = n; i-- > 0;) {
		/* Below sp but in the red zone: a popped slot, not a frame. */
		if (e[i].slot < sp && e[i].slot >= sp - agent.arch->red_zone)
			continue;
		if (read_word(p, e[i].slot, &v) && v == p->ret_itramp &&
		    mem_write(p, e[i].slot, &e[i].ret, 8) != 8)
			log_user("thread %d: cannot put the return address back at 0x%" PRIx64,
				 t->tid, e[i].slot);
	}
	iwrite(p, at, e, 0);
	debug("thread %d: %d return addresses of its in-process stack put back",
	      t->tid, n);
}

/* gdb looks at `t`: the real addresses in its frames (at or above sp). */
static bool ishow(struct thread *t, uint64_t sp)
{
	struct process *p = t->proc;
	static struct ientry e[RET_PAD_DEPTH];
	uint64_t at, v;
	bool shown = false;
	int n;

	if (!(at = islot_of(t)) || (n = iread(p, at, e)) <= 0)
		return false;
	if (in_link())
		return ilink_show(t, e, n, sp);
	for (int i = n; i-- > 0;)
		if (e[i].slot >= sp && read_word(p, e[i].slot, &v) && v == p->ret_itramp &&
		    mem_write(p, e[i].slot, &e[i].ret, 8) == 8)
			shown = true;
	return shown;
}

/* ... and goes on: the trampoline back where ishow took it out; entries
 * whose frames gdb took away (`return`, a jump) go. */
static void iresume(struct thread *t, uint64_t sp)
{
	struct process *p = t->proc;
	static struct ientry e[RET_PAD_DEPTH];
	uint64_t at, v;
	int n, k = 0;

	if (!(at = islot_of(t)) || (n = iread(p, at, e)) <= 0)
		return;
	if (in_link()) {
		ilink_resume(t, at, sp);
		return;
	}
	for (int i = 0; i < n; i++) {
		if (!read_word(p, e[i].slot, &v))
			continue;
		if (v != p->ret_itramp) {
			if (e[i].slot < sp || v != e[i].ret)
				continue;	/* the frame is gone */
			if (mem_write(p, e[i].slot, &p->ret_itramp, 8) != 8) {
				log_user("thread %d: cannot put the return trampoline back at "
					 "0x%" PRIx64 ": that return is not recorded",
					 t->tid, e[i].slot);
				continue;
			}
		}
		e[k++] = e[i];
	}
	if (k != n)
		iwrite(p, at, e, (uint32_t)k);
}

/*
 * A thread is gone: its slot's tid is cleared, so that the next thread
 * with the same TCB address (glibc reuses a joined thread's stack) reads
 * its own at its next entry.  The entries stay: that next thread may be
 * running on the slot already (its exit reached the agent late), and
 * those of a thread that ended inside probed functions go by the
 * staleness rules.
 */
static void iforget(struct thread *t)
{
	struct process *p = t->proc;
	uint32_t w[2];

	if (!p->ret_area || p->exited)
		return;
	for (unsigned int i = 0; i < RET_PAD_SLOTS; i++) {
		uint64_t at = p->ret_area + 4096 + (uint64_t)i * RET_PAD_SLOT_SIZE, k;
		if (!read_word(p, at, &k))
			return;
		if (!k || mem_read(p, at + 8, w, 8) != 8 || w[0] != (uint32_t)t->tid)
			continue;
		w[0] = 0;
		mem_write(p, at + 8, w, 4);
		return;
	}
}

/* --- the trampoline and the unwinder's entry points -------------------- */

/* libgcc_s's entry points that walk the stack by return addresses. */
static const char *const unwinders[] = {
	"_Unwind_RaiseException",	/* throw */
	"_Unwind_Resume_or_Rethrow",	/* throw; */
	"_Unwind_Resume",		/* on from a cleanup landing pad */
	"_Unwind_ForcedUnwind",		/* pthread_cancel, pthread_exit */
	"_Unwind_Backtrace",		/* backtrace(3) */
};

static void restore_thread(struct thread *t);

static int unwind_hit(struct probe *pr, struct thread *t, void *arg)
{
	(void)pr;
	(void)arg;
	if (t->ret && t->ret->n)
		debug("thread %d enters the unwinder: %zu return addresses put back",
		      t->tid, t->ret->n);
	restore_thread(t);
	return 0;
}

/* Probes the unwinder's entry points found in the loaded objects.
 * Returns how many are probed (0: no libgcc_s yet) or -errno. */
static int probe_unwinders(struct process *p, char *why, size_t whylen)
{
	int found = 0;

	for (size_t i = 0; i < sizeof(unwinders) / sizeof(unwinders[0]); i++) {
		uint64_t addr;
		struct probe *pr;
		if (!process_symbol_lookup(p, unwinders[i], &addr))
			continue;
		found++;
		if (probe_at(p, addr))
			continue;
		int err = probe_insert(p, addr, unwind_hit, NULL, &pr, why, whylen);
		if (err < 0)
			return err;
		pr->owner = PROBE_OWNER_RETURN;
		debug("unwinder entry %s at %#" PRIx64 " probed", unwinders[i], addr);
	}
	if (found)
		p->ret_unwind = true;
	return found;
}

/*
 * A library came or went (solib.c: every dlopen passes there, twice).
 * Until libgcc_s is in, look for it each time, so an exception thrown by
 * a library loaded during the run is covered too.
 */
void ret_libraries_changed(struct process *p)
{
	char why[200];

	if (!p->ret_tramp || p->ret_unwind)
		return;
	if (probe_unwinders(p, why, sizeof(why)) < 0)
		log_user("return probes: cannot probe the unwinder of the library "
			 "just loaded: %s; a C++ exception through a return probe's "
			 "function would end the program", why);
}

int ret_prepare(struct process *p, uint64_t near, char *why, size_t whylen)
{
	int err;

	if (agent.ptrace->ret_addr == PTRACE_RET_NONE) {
		/* Nothing says where this arch's calls leave the return
		 * address. */
		snprintf(why, whylen, "no return probes on %s yet", agent.arch->name);
		return -ENOTSUP;
	}
	if (!p->ret_tramp) {
		uint64_t slot;
		err = xol_slot_alloc(p, near, &slot);
		if (err < 0) {
			if (err == -ENOMEM)
				snprintf(why, whylen, "no room for the return trampoline: no XOL area within %llu MiB",
					 (unsigned long long)(agent.arch->xol_reach >> 20));
			else
				snprintf(why, whylen, "no room for the return trampoline: %s",
					 strerror(-err));
			return err;
		}
		if (mem_write_raw(p, slot, agent.arch->bp_insn, agent.arch->bp_len) !=
		    (ssize_t)agent.arch->bp_len) {
			snprintf(why, whylen, "cannot write the return trampoline at 0x%" PRIx64,
				 slot);
			return -EIO;
		}
		p->ret_tramp = slot;
		keeper_code(p->pid, KEEPER_TRAMP, slot, 0, 0, 0, -1, 0);
		debug("return trampoline at %#" PRIx64 " in %d", slot, p->pid);
	}
	if (!p->ret_unwind) {
		err = probe_unwinders(p, why, whylen);
		if (err < 0)
			return err;
	}
	if (!p->ret_unwind) {
		/* No libgcc_s yet: watch the libraries come.  A program the
		 * dynamic linker has not set up yet has none to watch. */
		char wwhy[200];
		if (solib_watch(p, wwhy, sizeof(wwhy)) < 0)
			debug("return probes: %s", wwhy);
	}
	return 0;
}

/* --- entry ------------------------------------------------------------- */

static struct ret_stack *stack_of(struct thread *t)
{
	if (!t->ret) {
		t->ret = calloc(1, sizeof(*t->ret));
		if (!t->ret)
			abort();
	}
	return t->ret;
}

/*
 * Entries whose frame is gone, seen from an entry at `sp`.  Stack: slot
 * at or below sp, trampoline gone.  Link register: sp at entry at or
 * below sp, strictly below for a tail call (`chained`: x30 is already
 * the trampoline, and the entry of this very sp is the caller's).
 */
static void drop_stale(struct thread *t, struct ret_stack *rs, uint64_t sp,
		       bool chained)
{
	ret_stack_drop_stale_entry(rs, sp, in_link(), chained, slot_holds_tramp,
				   t->proc);
}

int ret_entry(struct thread *t, uint64_t func, uint32_t run, char *why,
	      size_t whylen)
{
	const struct arch_ops *arch = agent.arch;
	struct process *p = t->proc;
	uint8_t *blk = regs_block_gpr(t);
	struct arch_gpregs g;
	uint64_t sp, ret;
	uint8_t before[16];

	if (!blk)
		return -ESRCH;
	if (!p->ret_tramp) {
		snprintf(why, whylen, "no return trampoline in process %d", p->pid);
		return -ENOENT;
	}
	regs_to_gpregs(blk, &g);
	sp = g.gpr[arch->sp_regnum];
	if (in_link()) {
		ret = g.gpr[agent.ptrace->ret_link_regnum];
	} else if (!read_word(p, sp, &ret)) {
		snprintf(why, whylen, "cannot read the return address at sp 0x%" PRIx64, sp);
		return -EFAULT;
	}
	struct ret_stack *rs = stack_of(t);
	drop_stale(t, rs, sp, ret == p->ret_tramp);
	if (rs->n >= RET_MAX_DEPTH) {
		snprintf(why, whylen, "thread %d is %d calls deep in return probes",
			 t->tid, RET_MAX_DEPTH);
		return -ENOSPC;
	}
	if (ret == p->ret_tramp) {
		/* A tail call (jmp) from a probed function: chain. */
		int i = find_slot(rs, sp);
		if (i < 0) {
			snprintf(why, whylen, "%s at sp 0x%" PRIx64 " is the trampoline "
				 "but thread %d has no entry for it",
				 in_link() ? "the link register" : "[sp]", sp, t->tid);
			return -ENOENT;
		}
		ret = rs->e[i].ret;
	} else {
		/* The call's bytes end at the return address without its
		 * instruction-set bit (32-bit ARM's Thumb bit). */
		uint64_t ret_code = ret & ~(agent.ptrace->flags_isa_bit ? 1ull : 0ull);
		if (mem_read(p, ret_code - sizeof(before), before, sizeof(before)) !=
			    (ssize_t)sizeof(before) ||
		    !arch->follows_call(before, sizeof(before))) {
			snprintf(why, whylen, "0x%" PRIx64 " is not a function's entry: "
				 "%s = 0x%" PRIx64 " is not a return address", func,
				 in_link() ? agent.arch->regs[agent.ptrace->ret_link_regnum].name
					   : "[sp]", ret);
			return -EINVAL;
		}
		/* The keeper knows the real address before the stack
		 * holds the trampoline's. */
		keeper_ret_push(p->pid, t->tid, sp, ret);
		if (in_link()) {
			/* In the cache: written back before the entry's
			 * instruction runs (and, say, saves it). */
			regs_set(t, (unsigned int)agent.ptrace->ret_link_regnum,
				 p->ret_tramp);
		} else if (!write_word(p, sp, &p->ret_tramp)) {
			snprintf(why, whylen, "cannot write the stack at 0x%" PRIx64, sp);
			return -EFAULT;
		}
	}
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 16;
		struct ret_entry *e = realloc(rs->e, cap * sizeof(*e));
		if (!e)
			abort();
		rs->e = e;
		rs->cap = cap;
	}
	rs->e[rs->n++] = (struct ret_entry){ sp, ret, now_ns(), func, run };
	mirror(t);
	return 0;
}

/* --- return -------------------------------------------------------------- */

/*
 * Thread `t` executed `ret` into the trampoline: sp is one past the slot
 * (x86-64), or sp at the entry (link register).
 * Its pc becomes the real return address; with `record`, every entry of
 * that slot (a chain of tail calls: innermost first) goes to trace-run.c.
 * Returns 0, or -ENOENT when no entry names the slot (cannot happen while
 * the invariants hold: the thread is then left where it is).
 */
static int do_return(struct thread *t, bool record)
{
	const struct arch_ops *arch = agent.arch;
	struct process *p = t->proc;
	uint8_t *blk = regs_block_gpr(t);
	struct ret_stack *rs = t->ret;
	struct arch_gpregs g;

	if (!blk)
		return -ESRCH;
	regs_to_gpregs(blk, &g);
	uint64_t slot = g.gpr[arch->sp_regnum] - ret_pops();
	int i = rs ? find_slot(rs, slot) : -1;
	if (i < 0) {
		log_user("return trampoline hit by thread %d with no return address "
			 "for stack slot 0x%" PRIx64, t->tid, slot);
		return -ENOENT;
	}
	/* Newer entries below the slot whose trampoline is gone: longjmp'd.
	 * Link register: every newer one below it. */
	ret_stack_drop_stale_return(rs, (size_t)i, slot, in_link(),
				    slot_holds_tramp, p);
	g.pc = rs->e[i].ret;
	if (in_link())	/* as `ret` leaves it, untraced */
		g.gpr[agent.ptrace->ret_link_regnum] = g.pc;
	if (agent.ptrace->flags_isa_bit) {
		/* 32-bit ARM: the trampoline runs in ARM state whatever the
		 * caller's; bit 0 of the real address is the caller's set,
		 * as `bx lr` would have taken it. */
		uint64_t isa = agent.ptrace->flags_isa_bit;
		g.flags = (g.pc & 1) ? g.flags | isa : g.flags & ~isa;
		g.pc &= ~1ull;
	}
	regs_from_gpregs(blk, &g);
	t->regs_dirty = true;
	/* The return's time, both clocks at once: the latency ends and the
	 * frame's timestamp is taken here, not when its collection gets to
	 * `$trace_timestamp` (later by a varying delay), so that an entry
	 * timestamp + latency drawn as a slice ends where the return did. */
	uint64_t now = now_ns(), when = wall_us();
	/* The chain sharing this slot, newest first. */
	for (int j = (int)rs->n - 1; j >= 0; j--) {
		if (rs->e[j].slot != slot)
			continue;
		struct ret_entry e = rs->e[j];
		drop(rs, (size_t)j);
		if (record)
			trace_return(t, e.func, e.run, now - e.entry_ns, when);
	}
	/* The keeper's copy keeps the entries until the next change: the
	 * new pc is not written yet, and a thread that stays on the
	 * trampoline must still find its return address there. */
	if (record)
		trace_after_hit();
	return 0;
}

bool ret_trap(struct thread *t, enum wait_outcome *o)
{
	uint64_t tramp = t->proc->ret_tramp;
	uint64_t pc = regs_get_pc(t);
	size_t after = agent.arch->bp_pc_after_trap;
	/* Where the trap leaves the pc at the breakpoint itself (aarch64),
	 * a step that executed the `ret` ends at the same pc: a thread that
	 * was stepping stopped there before the trampoline's breakpoint. */
	bool stepped = t->stepping || t->step_probe || t->ws_left;

	if (pc == tramp + after && (after || !stepped)) {
		/* The trampoline's breakpoint. */
		t->proc->ret_stopped++;
		if (do_return(t, true) < 0) {
			regs_set_pc(t, tramp);
			*o = WAIT_REPORT;
		} else {
			*o = t->user_stepping ? WAIT_REPORT : WAIT_RESUME;
		}
		return true;
	}
	if (pc == tramp) {
		/* A single step executed the `ret`: the return happened; the
		 * step ends at the real address, as the caller classifies.
		 * (The breakpoint never runs: a thread standing here is
		 * always moved first.) */
		do_return(t, true);
	}
	return false;
}

/* --- the link register: the trampoline's copies --------------------------- */

/* The newest entry whose frame is still there at `sp`, -1 if none. */
static int newest_alive(const struct ret_stack *rs, uint64_t sp)
{
	for (size_t i = rs->n; i-- > 0;)
		if (rs->e[i].slot >= sp)
			return (int)i;
	return -1;
}

/* The entry whose frame holds the stack word at `a`: the one with the
 * smallest sp at entry above it; -1 if none. */
static int owner_of(const struct ret_stack *rs, uint64_t a)
{
	int best = -1;

	for (size_t i = 0; i < rs->n; i++)
		if (rs->e[i].slot > a && (best < 0 || rs->e[i].slot < rs->e[best].slot))
			best = (int)i;
	return best;
}

static void note_shown(struct ret_stack *rs, uint64_t at, uint64_t val)
{
	if (rs->nshown == rs->shown_cap) {
		size_t cap = rs->shown_cap ? rs->shown_cap * 2 : 16;
		uint64_t *a = realloc(rs->shown_at, cap * sizeof(*a));
		uint64_t *v = a ? realloc(rs->shown_val, cap * sizeof(*v)) : NULL;
		if (!a || !v)
			abort();
		rs->shown_at = a;
		rs->shown_val = v;
		rs->shown_cap = cap;
	}
	rs->shown_at[rs->nshown] = at;
	rs->shown_val[rs->nshown++] = val;
}

/*
 * Every word of t's stack from `sp` up to the oldest live entry's sp (of
 * `rs`) that holds `tramp` gets the real address of the entry whose
 * frame it is in; with `note`, each one is remembered in rs for
 * link_resume.
 */
static void link_unswap_stack(struct thread *t, struct ret_stack *rs, uint64_t tramp,
			      uint64_t sp, bool note)
{
	struct process *p = t->proc;
	uint64_t top = 0, buf[512];

	for (size_t i = 0; i < rs->n; i++)
		if (rs->e[i].slot > top)
			top = rs->e[i].slot;
	if (top <= sp)
		return;
	if (top - sp > RET_SCAN_MAX) {
		log_user("thread %d: return addresses more than %u bytes up its stack "
			 "are left as the trampoline", t->tid, RET_SCAN_MAX);
		top = sp + RET_SCAN_MAX;
	}
	for (uint64_t at = sp & ~(uint64_t)(WORD - 1); at < top; at += sizeof(buf)) {
		size_t len = top - at < sizeof(buf) ? (size_t)(top - at) : sizeof(buf);
		ssize_t got = mem_read(p, at, buf, len);
		if (got <= 0)
			break;
		for (size_t k = 0; k < (size_t)got / WORD; k++) {
			uint64_t w = 0;
			memcpy(&w, (uint8_t *)buf + k * WORD, WORD);
			if (w != tramp)
				continue;
			uint64_t a = at + k * WORD;
			int i = owner_of(rs, a);
			if (i < 0 || !write_word(p, a, &rs->e[i].ret))
				continue;
			if (note)
				note_shown(rs, a, rs->e[i].ret);
		}
		if ((size_t)got < len)
			break;
	}
}

/* x30 holds `tramp`: the newest live entry's (of rs) real address goes
 * there.  Returns that address, 0 if x30 was left as it is. */
static uint64_t link_unswap_reg(struct thread *t, struct ret_stack *rs, uint64_t tramp,
				uint64_t sp)
{
	unsigned int lr = (unsigned int)agent.ptrace->ret_link_regnum;
	uint64_t v;
	int i;

	if (regs_get(t, lr, &v) < 0 || v != tramp || (i = newest_alive(rs, sp)) < 0)
		return 0;
	regs_set(t, lr, rs->e[i].ret);
	return rs->e[i].ret;
}

static void link_show(struct thread *t, uint64_t sp)
{
	struct ret_stack *rs = t->ret;

	rs->nshown = 0;
	rs->lr_shown = link_unswap_reg(t, rs, t->proc->ret_tramp, sp);
	link_unswap_stack(t, rs, t->proc->ret_tramp, sp, true);
}

/*
 * `tramp` back where link_show took it out, in the words that still hold
 * what it wrote, at or above sp; entries of rs whose frame gdb took away
 * (sp above theirs: `return`; or the thread now at the real return
 * address of the newest) go.
 */
static void link_resume(struct thread *t, struct ret_stack *rs, uint64_t tramp,
			uint64_t sp, uint64_t pc)
{
	struct process *p = t->proc;
	unsigned int lr = (unsigned int)agent.ptrace->ret_link_regnum;
	uint64_t v;
	int i;

	for (size_t j = rs->n; j-- > 0;)
		if (rs->e[j].slot < sp)
			drop(rs, j);
	for (size_t k = 0; k < rs->nshown; k++) {
		uint64_t a = rs->shown_at[k];
		if (a >= sp && (i = owner_of(rs, a)) >= 0 &&
		    rs->e[i].ret == rs->shown_val[k] && read_word(p, a, &v) &&
		    v == rs->shown_val[k] && !write_word(p, a, &tramp))
			log_user("thread %d: cannot put the return trampoline back at "
				 "0x%" PRIx64 ": that return is not recorded", t->tid, a);
	}
	rs->nshown = 0;
	i = newest_alive(rs, sp);
	if (rs->lr_shown && i >= 0 && rs->e[i].ret == rs->lr_shown) {
		if (pc == rs->lr_shown)	/* gdb returned from that frame */
			drop(rs, (size_t)i);
		else if (regs_get(t, lr, &v) == 0 && v == rs->lr_shown)
			regs_set(t, lr, tramp);
	}
	rs->lr_shown = 0;
}

/* --- the link register, returns taken in the process ----------------------- */

/*
 * The same as for the agent's own entries, on the in-process ones (the
 * trampoline: p->ret_itramp): loaded from the thread's slot into a
 * struct ret_stack (entry_ns: the counter at the entry, func: the
 * descriptor's func | run << 48) and written back after.
 */
static void iview_load(struct ret_stack *v, const struct ientry *e, int n)
{
	if (v->cap < (size_t)n) {
		struct ret_entry *ne = realloc(v->e, (size_t)n * sizeof(*ne));
		if (!ne)
			abort();
		v->e = ne;
		v->cap = (size_t)n;
	}
	for (int i = 0; i < n; i++)
		v->e[i] = (struct ret_entry){ e[i].slot, e[i].ret, e[i].tsc, e[i].func_run, 0 };
	v->n = (size_t)n;
}

static void iview_store(struct process *p, uint64_t at, const struct ret_stack *v)
{
	static struct ientry e[RET_PAD_DEPTH];
	size_t n = v->n < RET_PAD_DEPTH ? v->n : RET_PAD_DEPTH;

	for (size_t i = 0; i < n; i++)
		e[i] = (struct ientry){ v->e[i].slot, v->e[i].ret, v->e[i].entry_ns,
					v->e[i].func };
	iwrite(p, at, e, (uint32_t)n);
}

static struct ret_stack *iview_of(struct thread *t)
{
	struct ret_stack *rs = stack_of(t);

	if (!rs->iview && !(rs->iview = calloc(1, sizeof(*rs->iview))))
		abort();
	return rs->iview;
}

/*
 * A thread standing on the trampoline's first word (a single step of its
 * `ret`, or sent back there from the exclusive pair of its record's
 * claim): the return happened, and the agent takes it by hand, as `ret`
 * would leave it, pc = x30 = the real address; with `record` (and a run
 * on) each entry of that sp is recorded as the trampoline would, newest
 * first, after the ring's records (which are older).  Its entries and the
 * newer ones go (from v: the caller writes v back).
 */
static void ilink_on_tramp(struct thread *t, struct ret_stack *v, uint64_t sp,
			   bool record)
{
	uint64_t real, when;
	int i;

	if (regs_get_pc(t) != t->proc->ret_itramp || (i = find_slot(v, sp)) < 0)
		return;
	real = v->e[i].ret;
	/* As `ret` / `bx lr` leaves it: the link register the real address;
	 * on 32-bit ARM the trampoline is A32 whatever the caller's set, so
	 * bit 0 of the address picks the set (cpsr.T) and leaves the pc. */
	regs_set(t, (unsigned int)agent.ptrace->ret_link_regnum, real);
	if (agent.ptrace->flags_isa_bit) {
		unsigned int fr = (unsigned int)agent.arch->flags_regnum;
		uint64_t isa = agent.ptrace->flags_isa_bit, flags;

		if (regs_get(t, fr, &flags) == 0)
			regs_set(t, fr, (real & 1) ? flags | isa : flags & ~isa);
		real &= ~1ull;
	}
	regs_set_pc(t, real);
	record = record && trace_running();
	if (record)
		trace_drain(false);
	when = wall_us();
	for (size_t j = v->n; j-- > (size_t)i;) {
		struct ret_entry e = v->e[j];
		if (e.slot > sp)
			continue;
		drop(v, j);
		if (!record || e.slot != sp)
			continue;
		uint32_t run16 = (uint32_t)(e.func >> 48);
		if (run16 == (trace_run_id() & 0xffff))
			trace_return(t, e.func & ((1ull << 48) - 1), trace_run_id(),
				     pad_ret_latency_ns(e.entry_ns), when);
	}
	if (record)
		trace_after_hit();
	else
		log_user("thread %d: a return through the in-process trampoline, "
			 "stopped in it, is not recorded", t->tid);
}

/*
 * A stopped thread inside the in-process trampoline (stepped into it by
 * a single step of its `ret`, or stopped there by gdb): out of it, to the
 * real address, its return recorded (the trampoline's own code where it
 * can be stepped through, else by hand).
 */
static void ilink_fix_pc(struct thread *t)
{
	struct process *p = t->proc;
	static struct ientry e[RET_PAD_DEPTH];
	uint64_t at, sp;
	int n;

	if (!in_itramp(p, regs_get_pc(t)))
		return;
	if (regs_get_pc(t) != p->ret_itramp)
		pad_settle(t);
	if (regs_get_pc(t) != p->ret_itramp || !(at = islot_of(t)) ||
	    (n = iread(p, at, e)) <= 0 ||
	    regs_get(t, (unsigned int)agent.arch->sp_regnum, &sp) < 0)
		return;
	struct ret_stack *v = iview_of(t);
	iview_load(v, e, n);
	ilink_on_tramp(t, v, sp, true);
	iview_store(p, at, v);
	v->n = 0;
}

/*
 * Stopped thread `t`'s in-process entries (`n` of them, `e`, its slot at
 * `at`) put back for good: a thread standing on the trampoline's first
 * word (it was sent back there from an exclusive pair, or stopped right
 * after its `ret`) returns by hand, unrecorded; x30 and the stack words
 * that hold the trampoline get their real addresses; no entry is left.
 */
static void ilink_restore(struct thread *t, uint64_t at, const struct ientry *e, int n,
			  uint64_t sp)
{
	struct process *p = t->proc;
	struct ret_stack *v = iview_of(t);

	iview_load(v, e, n);
	ilink_on_tramp(t, v, sp, false);
	link_unswap_reg(t, v, p->ret_itramp, sp);
	link_unswap_stack(t, v, p->ret_itramp, sp, false);
	v->n = 0;
	v->nshown = 0;
	v->lr_shown = 0;
	iwrite(p, at, e, 0);
	debug("thread %d: %d return addresses of its in-process stack put back",
	      t->tid, n);
}

/* gdb looks at `t`: the real addresses in x30 and its frames. */
static bool ilink_show(struct thread *t, const struct ientry *e, int n, uint64_t sp)
{
	struct ret_stack *v = iview_of(t);

	iview_load(v, e, n);
	v->nshown = 0;
	v->lr_shown = 0;
	if (regs_get_pc(t) == t->proc->ret_itramp) {
		uint64_t at = islot_of(t);
		ilink_on_tramp(t, v, sp, true);
		if (at)
			iview_store(t->proc, at, v);
	}
	v->lr_shown = link_unswap_reg(t, v, t->proc->ret_itramp, sp);
	link_unswap_stack(t, v, t->proc->ret_itramp, sp, true);
	return v->lr_shown || v->nshown;
}

/* ... and goes on: the trampoline back where ilink_show took it out;
 * entries whose frames gdb took away go. */
static void ilink_resume(struct thread *t, uint64_t at, uint64_t sp)
{
	struct ret_stack *v = t->ret ? t->ret->iview : NULL;

	if (!v || (!v->nshown && !v->lr_shown))
		return;
	link_resume(t, v, t->proc->ret_itramp, sp, regs_get_pc(t));
	iview_store(t->proc, at, v);
	v->n = 0;
}

/* --- gdb's view of a stopped thread --------------------------------------- */

void ret_show(struct thread *t)
{
	const struct arch_ops *arch = agent.arch;
	struct process *p = t->proc;
	struct ret_stack *rs = t->ret;
	uint8_t *blk;

	if (rs && rs->shown)
		return;
	if (!trace_running()) {
		/* Left from a run that stopped while the thread ran: for
		 * good now. */
		restore_thread(t);
		return;
	}
	if (!(blk = regs_block_gpr(t)))
		return;
	struct arch_gpregs g;
	regs_to_gpregs(blk, &g);
	uint64_t sp = g.gpr[arch->sp_regnum];
	if (p->ret_area && ishow(t, sp))
		stack_of(t)->shown = true;
	if (!rs || !rs->n || !p->ret_tramp)
		return;
	if (in_link()) {
		link_show(t, sp);
		rs->shown = true;
		return;
	}
	/* Slots below sp belong to another stack (sigaltstack) or to no
	 * frame: left as they are. */
	for (size_t i = rs->n; i-- > 0;)
		if (rs->e[i].slot >= sp && holds_tramp(p, rs->e[i].slot))
			write_word(p, rs->e[i].slot, &rs->e[i].ret);
	rs->shown = true;
}

bool ret_shown(const struct thread *t)
{
	return t->ret && t->ret->shown;
}

void ret_resume(struct thread *t)
{
	const struct arch_ops *arch = agent.arch;
	struct process *p = t->proc;
	struct ret_stack *rs = t->ret;
	uint8_t *blk = regs_block_gpr(t);

	rs->shown = false;
	if (!blk)
		return;
	struct arch_gpregs g;
	regs_to_gpregs(blk, &g);
	uint64_t sp = g.gpr[arch->sp_regnum];
	if (p->ret_area)
		iresume(t, sp);
	if (!p->ret_tramp)
		return;
	if (in_link()) {
		link_resume(t, rs, p->ret_tramp, sp, g.pc);
		mirror(t);
		return;
	}
	for (size_t i = rs->n; i-- > 0;) {
		struct ret_entry *e = &rs->e[i];
		uint64_t v;
		if (!read_word(p, e->slot, &v) || v == p->ret_tramp)
			continue;	/* not shown (below sp), or a chain's slot */
		if (e->slot >= sp && v == e->ret) {
			if (write_word(p, e->slot, &p->ret_tramp))
				continue;
			log_user("thread %d: cannot put the return trampoline back at "
				 "0x%" PRIx64 ": that return is not recorded", t->tid, e->slot);
		}
		/* The frame is gone (gdb's return, jump): so is the entry. */
		drop(rs, i);
	}
	mirror(t);
}

/* --- putting real addresses back --------------------------------------- */

/* Stopped after its `ret`, before the trampoline's trap: the return
 * happened, and is recorded like a trap. */
void ret_fix_pc(struct thread *t)
{
	if (t->proc->ret_tramp && t->ret && t->ret->n &&
	    regs_get_pc(t) == t->proc->ret_tramp)
		do_return(t, true);
	else if (in_link() && t->proc->ret_itramp)
		ilink_fix_pc(t);
}

static void free_stack(struct thread *t)
{
	if (t->ret) {
		if (t->ret->iview) {
			free(t->ret->iview->e);
			free(t->ret->iview->shown_at);
			free(t->ret->iview->shown_val);
			free(t->ret->iview);
		}
		free(t->ret->e);
		free(t->ret->shown_at);
		free(t->ret->shown_val);
		free(t->ret);
		t->ret = NULL;
	}
}

/*
 * Every slot of stopped thread `t` that still holds the trampoline gets
 * its real return address back; the entries go.  A thread standing on
 * the trampoline (stopped after its `ret`) is moved to the real address.
 */
static void restore_thread(struct thread *t)
{
	const struct arch_ops *arch = agent.arch;
	struct process *p = t->proc;
	struct ret_stack *rs = t->ret;

	irestore(t);
	if (!rs || !rs->n || !p->ret_tramp)
		return;
	uint64_t pc = regs_get_pc(t);
	if (pc == p->ret_tramp)
		do_return(t, false);
	uint8_t *blk = regs_block_gpr(t);
	if (!blk)
		return;
	struct arch_gpregs g;
	regs_to_gpregs(blk, &g);
	uint64_t sp = g.gpr[arch->sp_regnum];
	if (in_link()) {
		link_unswap_reg(t, rs, p->ret_tramp, sp);
		link_unswap_stack(t, rs, p->ret_tramp, sp, false);
		rs->n = 0;
		rs->nshown = 0;		/* nothing to put back on resume */
		rs->lr_shown = 0;
		mirror(t);
		return;
	}
	for (size_t i = rs->n; i-- > 0;) {
		struct ret_entry *e = &rs->e[i];
		/* Below sp but in the red zone: a popped slot, not a frame. */
		if (e->slot < sp && e->slot >= sp - agent.arch->red_zone)
			continue;
		if (holds_tramp(p, e->slot) && !write_word(p, e->slot, &e->ret))
			log_user("thread %d: cannot put the return address back at 0x%" PRIx64,
				 t->tid, e->slot);
	}
	rs->n = 0;
	mirror(t);
}

void ret_restore_process(struct process *p)
{
	for (struct thread *t = p->threads; t; t = t->next) {
		if ((!t->ret || !t->ret->n) && !p->ret_area)
			continue;
		if (t->state == THREAD_STOPPED)
			restore_thread(t);
		else
			debug("thread %d runs: its return addresses are put back "
			      "when it returns", t->tid);
	}
}

/* The child of a fork has the forking thread's stack: and its entries. */
void ret_fork(struct thread *parent, struct process *child)
{
	struct thread *ct = child->threads;

	child->ret_tramp = parent->proc->ret_tramp;
	/* Its private copy of the in-process stacks, at the same place. */
	child->ret_area = parent->proc->ret_area;
	child->ret_itramp = parent->proc->ret_itramp;
	child->ret_itrap = parent->proc->ret_itrap;
	child->ret_image = parent->proc->ret_image;
	if (!parent->ret || !parent->ret->n || !ct)
		return;
	struct ret_stack *rs = stack_of(ct);
	rs->e = malloc(parent->ret->n * sizeof(rs->e[0]));
	if (!rs->e)
		abort();
	memcpy(rs->e, parent->ret->e, parent->ret->n * sizeof(rs->e[0]));
	rs->n = rs->cap = parent->ret->n;
}

void ret_thread_free(struct thread *t)
{
	iforget(t);
	free_stack(t);
}

void ret_process_forget(struct process *p)
{
	for (struct thread *t = p->threads; t; t = t->next)
		free_stack(t);
	p->ret_tramp = 0;
	p->ret_unwind = false;
	p->ret_area = 0;
	p->ret_itramp = 0;
	p->ret_itrap = 0;
	p->ret_image = false;
}
