/*
 * keeper.c - a process that outlives the agent and puts the traced
 * programs back as they were.
 *
 * The agent changes the programs it traces: breakpoints and jump pads in
 * their text, threads moved into XOL slots and pads, return addresses
 * swapped for a trampoline.  If the agent dies without undoing that (a
 * SIGKILL, the OOM killer, a crash, sshd killing it), the programs die of
 * a SIGTRAP or run into code that is no longer right.  The keeper is forked
 * at start-up (twice, so it is not the agent's child and the agent's
 * waits never see it) and PTRACE_SEIZEs the agent with PTRACE_O_TRACEEXIT.
 * However the agent dies, the keeper then gets its exit stop, and that stop
 * comes before the kernel lets the agent's tracees go: while the keeper
 * holds it, every thread of the programs that is in a ptrace stop stays
 * there, and one that traps on a breakpoint stops too.
 *
 * In that window the keeper (see keeper_take_over):
 *   1. makes the threads that run stop (a SIGTRAP it queues, marked with
 *      a magic value: a traced thread stops for it, it is not delivered);
 *   2. writes the program's bytes back over every patched site, turns each
 *      pad's trap into a plain store (threads in a pad run through it),
 *      and puts every hijacked return address back from the shadow stacks;
 *   3. for each stopped thread whose registers are mid-hit (after a trap,
 *      in a stepped slot, at the trampoline), writes a fix-up record: "if
 *      thread T's pc is X, set it to Y" (and the scratch register);
 *   4. cancels the agent's own SIGSTOPs with a SIGCONT;
 *   5. where the kernel keeps a single step armed after its tracer died
 *      (arm64), stops each thread the agent may have left stepping with
 *      a SIGSTOP, to disarm it once the agent is gone (disarm_steps);
 *   6. lets the agent go.
 * Registers of a thread traced by another cannot be written from outside,
 * and a thread released from a trap's stop that the agent never waited for
 * gets its SIGTRAP delivered.  So the agent installs, with the first XOL
 * area of a program whose SIGTRAP disposition is the default, a SIGTRAP
 * handler of ours (keeper_install).  While the agent lives it never runs
 * (the agent takes every SIGTRAP); after the release it applies the
 * fix-up records from inside the thread, through the signal's ucontext,
 * ignores the magic kick, re-runs a trap on a restored site (no longer a
 * breakpoint there) and, for any other SIGTRAP, restores the default
 * action and raises it again: the program's own int3, BRK or udf still
 * kills it as before.  The handler's code, the ucontext offsets and the pads'
 * fix-ups are the arch's (ptrace_arch_ops.keeper); where the trap leaves
 * the pc (after the breakpoint on x86-64, at it on aarch64 and 32-bit
 * ARM) comes from
 * arch_ops.bp_pc_after_trap.
 *
 * What the keeper knows comes from memory it shares with the agent (an
 * anonymous shared mapping made before the fork), written by the agent's
 * hooks (keeper.h) before each change reaches the program, so it always
 * knows a superset of what is there; a site is restored only where the
 * memory still holds our bytes or the program's (never over an exec's new
 * image).
 */
#define LOG_DOMAIN "keeper"
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/ptrace.h>

#include "agent/agent.h"
#include "agent/keeper.h"
#include "agent/log.h"

#define KP_PROCS 64
#define KP_SITES 4096
#define KP_CODES 4096
#define KP_THREADS 1024
#define KP_RET 64		/* return addresses mirrored per thread */

/* The handler page in the program: the arch's handler code at 0 (its
 * ptrace_keeper_ops), the rest laid out as ptrace-arch.h says. */
#define KH_SIZE 16384
#define KH_ACT 512		/* the sigaction passed at install */
#define KH_TABLE KEEPER_PAGE_TABLE	/* u32 nrec, u32 0, u64 magic, records */
#define KH_REC 64
#define KH_MAX_RECS ((KH_SIZE - KH_TABLE - 16) / KH_REC)
_Static_assert(KEEPER_PAGE_DFL + 32 <= KH_TABLE && KH_ACT + 32 <= KEEPER_PAGE_DFL,
	       "the handler page's parts must not overlap");

struct kp_site {
	pid_t pid;		/* 0: free */
	uint32_t len;
	uint64_t addr;
	uint8_t saved[16], patch[16];
	uint8_t trap[4];	/* the site's breakpoint (in its set) */
	uint32_t trap_len;
};

struct kp_proc {
	pid_t pid;		/* 0: free */
	uint64_t handler;	/* the handler page, 0 if none */
	uint64_t magic;		/* the kick value its table holds */
	bool tried;		/* keeper_install looked already */
	struct kp_site inject;	/* an injected system call's bytes */
	uint64_t tramp;
};

struct kp_code {
	pid_t pid;
	uint8_t kind, insn_len, xol_len;
	int8_t scratch;
	uint32_t aux;
	uint64_t at, addr;
};

struct kp_thread {
	pid_t tid;		/* 0: free, -1: deleted */
	pid_t pid;		/* for the return addresses (0: unknown) */
	bool set_valid;
	uint64_t set_pc, set_sp;
	uint64_t scratch_saved;
	bool stepping;		/* resumed with a single step, not since
				 * with a continue: the step may be armed */
	uint32_t nret;
	uint64_t ret_slot[KP_RET], ret_addr[KP_RET];
};

struct kp_shm {
	uint64_t magic;
	struct kp_proc procs[KP_PROCS];
	struct kp_site sites[KP_SITES];
	struct kp_code codes[KP_CODES];
	struct kp_thread threads[KP_THREADS];
};

static struct kp_shm *shm;
static pid_t keeper_pid;

/* --- the agent's side: the tables ------------------------------------ */

bool keeper_active(void)
{
	return shm != NULL;
}

long keeper_exitkill(void)
{
	return shm ? 0 : PTRACE_O_EXITKILL;
}

static struct kp_proc *proc_of(pid_t pid, bool add)
{
	struct kp_proc *free_one = NULL;

	for (int i = 0; i < KP_PROCS; i++) {
		if (shm->procs[i].pid == pid)
			return &shm->procs[i];
		if (!shm->procs[i].pid && !free_one)
			free_one = &shm->procs[i];
	}
	if (add && free_one) {
		memset(free_one, 0, sizeof(*free_one));
		free_one->pid = pid;
		return free_one;
	}
	return NULL;
}

void keeper_process_add(pid_t pid)
{
	if (shm && !proc_of(pid, true))
		log_user("keeper: more than %d processes: process %d is not covered",
			 KP_PROCS, pid);
}

static void forget_code(pid_t pid)
{
	for (int i = 0; i < KP_SITES; i++)
		if (shm->sites[i].pid == pid)
			shm->sites[i].pid = 0;
	for (int i = 0; i < KP_CODES; i++)
		if (shm->codes[i].pid == pid)
			shm->codes[i].pid = 0;
	for (int i = 0; i < KP_THREADS; i++)
		if (shm->threads[i].pid == pid)
			shm->threads[i].nret = 0;
}

void keeper_process_gone(pid_t pid)
{
	struct kp_proc *kp;

	if (!shm || !(kp = proc_of(pid, false)))
		return;
	forget_code(pid);
	kp->pid = 0;
}

void keeper_process_exec(pid_t pid)
{
	struct kp_proc *kp;

	if (!shm || !(kp = proc_of(pid, false)))
		return;
	forget_code(pid);
	kp->handler = 0;	/* an exec resets caught signals */
	kp->tried = false;
	kp->tramp = 0;
}

static struct kp_site *site_of(pid_t pid, uint64_t addr, bool add)
{
	struct kp_site *free_one = NULL;

	for (int i = 0; i < KP_SITES; i++) {
		struct kp_site *s = &shm->sites[i];
		if (s->pid == pid && s->addr == addr)
			return s;
		if (!s->pid && !free_one)
			free_one = s;
	}
	return add ? free_one : NULL;
}

void keeper_site_set(pid_t pid, uint64_t addr, const uint8_t *saved,
		     const uint8_t *patch, size_t len, const uint8_t *trap,
		     size_t trap_len)
{
	struct kp_site *s;

	if (!shm || len > sizeof(s->saved) || trap_len > sizeof(s->trap))
		return;
	if (!(s = site_of(pid, addr, true))) {
		log_user("keeper: more than %d patched sites: 0x%llx is not covered",
			 KP_SITES, (unsigned long long)addr);
		return;
	}
	/* Filled before the pid makes it visible. */
	s->pid = 0;
	s->addr = addr;
	s->len = (uint32_t)len;
	memcpy(s->saved, saved, len);
	memcpy(s->patch, patch, len);
	memcpy(s->trap, trap, trap_len);
	s->trap_len = (uint32_t)trap_len;
	s->pid = pid;
}

void keeper_inject(pid_t pid, uint64_t addr, const uint8_t *saved,
		   const uint8_t *patch, size_t len)
{
	struct kp_proc *kp;

	if (!shm || !(kp = proc_of(pid, false)) || len > sizeof(kp->inject.saved))
		return;
	kp->inject.pid = 0;
	if (!len)
		return;
	kp->inject.addr = addr;
	kp->inject.len = (uint32_t)len;
	memcpy(kp->inject.saved, saved, len);
	memcpy(kp->inject.patch, patch, len);
	kp->inject.pid = pid;
}

void keeper_site_clear(pid_t pid, uint64_t addr)
{
	struct kp_site *s;

	if (shm && (s = site_of(pid, addr, false)))
		s->pid = 0;
}

void keeper_code(pid_t pid, enum keeper_code_kind kind, uint64_t at,
		 uint64_t addr, unsigned int insn_len, unsigned int xol_len,
		 int scratch, unsigned int aux)
{
	struct kp_proc *kp;

	if (!shm || !(kp = proc_of(pid, false)))
		return;
	if (kind == KEEPER_TRAMP) {
		kp->tramp = at;
		return;
	}
	for (int i = 0; i < KP_CODES; i++) {
		struct kp_code *c = &shm->codes[i];
		if (c->pid == pid && c->at == at) {
			c->pid = 0;	/* a slot reused for the same site */
		}
		if (c->pid)
			continue;
		*c = (struct kp_code){ 0, (uint8_t)kind, (uint8_t)insn_len,
				       (uint8_t)xol_len, (int8_t)scratch, aux, at, addr };
		c->pid = pid;
		return;
	}
	log_user("keeper: more than %d slots: 0x%llx is not covered", KP_CODES,
		 (unsigned long long)at);
}

static struct kp_thread *thread_rec(pid_t tid, bool add)
{
	unsigned int h = (unsigned int)tid % KP_THREADS;
	struct kp_thread *free_one = NULL;

	for (unsigned int k = 0; k < KP_THREADS; k++) {
		struct kp_thread *r = &shm->threads[(h + k) % KP_THREADS];
		if (r->tid == tid)
			return r;
		if (r->tid <= 0 && !free_one)
			free_one = r;
		if (r->tid == 0)
			break;
	}
	if (!add || !free_one)
		return NULL;
	memset(free_one, 0, sizeof(*free_one));
	free_one->tid = tid;
	return free_one;
}

void keeper_regs_set(pid_t tid, uint64_t pc, uint64_t sp)
{
	struct kp_thread *r;

	if (!shm || !(r = thread_rec(tid, true)))
		return;
	r->set_valid = false;
	r->set_pc = pc;
	r->set_sp = sp;
	r->set_valid = true;
}

void keeper_step(pid_t tid, uint64_t scratch_saved)
{
	struct kp_thread *r;

	if (shm && (r = thread_rec(tid, true)))
		r->scratch_saved = scratch_saved;
}

void keeper_stepping(pid_t tid, bool on)
{
	struct kp_thread *r;

	if (shm && (r = thread_rec(tid, on)))
		r->stepping = on;
}

void keeper_thread_gone(pid_t tid)
{
	struct kp_thread *r;

	if (shm && (r = thread_rec(tid, false)))
		r->tid = -1;
}

void keeper_ret_push(pid_t pid, pid_t tid, uint64_t slot, uint64_t ret)
{
	struct kp_thread *r;

	if (!shm || !(r = thread_rec(tid, true)) || r->nret >= KP_RET)
		return;
	r->pid = pid;
	r->ret_slot[r->nret] = slot;
	r->ret_addr[r->nret] = ret;
	r->nret++;
}

void keeper_ret_set(pid_t pid, pid_t tid, size_t n, const uint64_t *slots,
		    const uint64_t *rets)
{
	struct kp_thread *r;

	if (!shm || !(r = thread_rec(tid, n > 0)))
		return;
	/* The innermost frames matter most: a deeper stack keeps its
	 * newest KP_RET entries. */
	size_t from = n > KP_RET ? n - KP_RET : 0;
	r->pid = pid;
	r->nret = 0;
	for (size_t i = from; i < n; i++) {
		r->ret_slot[i - from] = slots[i];
		r->ret_addr[i - from] = rets[i];
	}
	r->nret = (uint32_t)(n - from);
}

/* Whether SIGTRAP is neither caught nor ignored in process `pid`. */
static bool sigtrap_default(pid_t pid)
{
	char path[64], line[256];
	bool dfl = true;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (!(f = fopen(path, "re")))
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long mask;
		if ((sscanf(line, "SigCgt: %llx", &mask) == 1 ||
		     sscanf(line, "SigIgn: %llx", &mask) == 1) &&
		    (mask & (1ull << (SIGTRAP - 1))))
			dfl = false;
	}
	fclose(f);
	return dfl;
}

/*
 * The kernel's struct sigaction in the program: handler, flags,
 * restorer, each a word of the program's size (8, or 4 on 32-bit ARM),
 * then the 8-byte mask.
 */
static uint64_t sigaction_word(const uint8_t *act, int i)
{
	unsigned int w = agent.ptrace->word_size;
	uint64_t v = 0;

	memcpy(&v, act + (size_t)i * w, w);	/* little-endian */
	return v;
}

static void sigaction_set(uint8_t *act, int i, uint64_t v)
{
	unsigned int w = agent.ptrace->word_size;

	memcpy(act + (size_t)i * w, &v, w);
}

/*
 * A handler left by an earlier agent's keeper (the program was traced,
 * its agent died, and it is traced again): taken over, its records
 * cleared.  The program's current SIGTRAP action is read into memory
 * below the stack pointer of stopped thread `t`, under the red zone.
 */
static int reuse_handler(struct process *p, struct thread *t, struct kp_proc *kp)
{
	const struct ptrace_keeper_ops *ko = &agent.ptrace->keeper;
	uint8_t act[32], code[KEEPER_PAGE_DFL];
	uint64_t sp, page;
	long ret, args[6];

	if (regs_get(t, (unsigned int)agent.arch->sp_regnum, &sp) < 0)
		return -ESRCH;
	uint64_t at = (sp - 2048) & ~(uint64_t)15;
	args[0] = SIGTRAP;
	args[1] = 0;
	args[2] = (long)at;
	args[3] = 8;
	if (inferior_syscall(t, SYS_rt_sigaction, args, &ret) < 0 || ret != 0 ||
	    mem_read_raw(p, at, act, sizeof(act)) != (ssize_t)sizeof(act))
		return -EIO;
	page = sigaction_word(act, 0);
	if (ko->handler_len > sizeof(code) ||
	    mem_read_raw(p, page, code, ko->handler_len) != (ssize_t)ko->handler_len ||
	    memcmp(code, ko->handler, ko->handler_len) != 0)
		return -ENOENT;
	/*
	 * The table stays as the earlier keeper left it: its fix-ups may
	 * not all have run yet (a thread stopped by this agent's attach
	 * on its way into the handler, a kick still queued), and cleared
	 * records or a new magic would turn them into the program's own
	 * SIGTRAP, which kills it.  This keeper kicks with that magic and
	 * writes its own records over the old ones when it takes over.
	 */
	if (mem_read_raw(p, page + KH_TABLE + 8, &kp->magic, 8) != 8)
		return -EIO;
	kp->handler = page;
	debug("handler of an earlier keeper at %#llx in %d", (unsigned long long)page,
	      p->pid);
	return 0;
}

int keeper_install(struct process *p)
{
	const struct ptrace_keeper_ops *ko = &agent.ptrace->keeper;
	struct kp_proc *kp;
	struct thread *t;
	long ret, args[6];
	uint8_t act[32] = { 0 };

	if (!shm || !ko->handler || !(kp = proc_of(p->pid, false)) || kp->handler || kp->tried)
		return 0;
	if (!(t = process_stopped_thread(p)))
		return -ESRCH;
	if (!sigtrap_default(p->pid)) {
		kp->tried = true;
		if (reuse_handler(p, t, kp) == 0)
			return 0;
		debug("process %d handles SIGTRAP itself: no handler of ours", p->pid);
		return 0;
	}
	/* inferior_mmap: the arch's mmap (32-bit ARM's is mmap2). */
	uint64_t page;
	int err = inferior_mmap(t, 0, KH_SIZE, PROT_READ | PROT_EXEC,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0, &page);
	if (err < 0) {
		debug("no handler page in %d: %s", p->pid, strerror(-err));
		return -ENOMEM;
	}
	/* struct kernel_sigaction: handler, flags, restorer, mask.  An A32
	 * handler and restorer on 32-bit ARM: bit 0 of each is clear. */
	sigaction_set(act, 0, page);
	sigaction_set(act, 1, SA_SIGINFO | SA_RESTART | 0x04000000 /* SA_RESTORER */);
	sigaction_set(act, 2, page + ko->restorer);
	uint8_t table[16] = { 0 };
	memcpy(table + 8, &shm->magic, 8);
	kp->magic = shm->magic;
	if (mem_write_raw(p, page, ko->handler, ko->handler_len) != (ssize_t)ko->handler_len ||
	    mem_write_raw(p, page + KH_ACT, act, sizeof(act)) != (ssize_t)sizeof(act) ||
	    mem_write_raw(p, page + KH_TABLE, table, sizeof(table)) != (ssize_t)sizeof(table))
		return -EIO;
	args[0] = SIGTRAP;
	args[1] = (long)(page + KH_ACT);
	args[2] = 0;
	args[3] = 8;
	if (inferior_syscall(t, SYS_rt_sigaction, args, &ret) < 0 || ret != 0) {
		debug("rt_sigaction in %d: %ld", p->pid, ret);
		return -EIO;
	}
	kp->handler = page;
	kp->tried = true;
	debug("handler at %#llx in %d", (unsigned long long)page, p->pid);
	return 0;
}

/* --- the keeper's side ------------------------------------------------- */

struct kt {
	pid_t tid;
	pid_t pid;		/* steps[]: its process */
	char state;
	int exit_code;
	bool have_regs;
	uint64_t sp, pc;
	bool kicked;
};

#define KT_MAX 4096

/* Threads left stepping, for disarm_steps. */
static struct kt steps[KT_MAX];
static int nsteps;

static int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

/* State letter and exit_code (field 52) of a task, 0 when it is gone. */
static char task_state(pid_t pid, pid_t tid, int *exit_code)
{
	char path[64], buf[2048];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	char *p = strrchr(buf, ')');
	if (!p || !p[1] || !p[2])
		return 0;
	char st = p[2];
	if (exit_code) {
		int field = 3;
		char *q = p + 2;
		while (*q && field < 52) {
			if (*q == ' ')
				field++;
			q++;
		}
		*exit_code = field == 52 ? atoi(q) : 0;
	}
	return st;
}

/* sp and pc of a blocked task (in a ptrace stop, or sleeping). */
static bool task_regs(pid_t pid, pid_t tid, uint64_t *sp, uint64_t *pc)
{
	char path[64], buf[256];
	unsigned long long v[9];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return false;
	/*
	 * "-1 sp pc" outside a system call, "nr a0..a5 sp pc" in one.  On
	 * 32-bit ARM the number may be the thread's last call's even at a
	 * breakpoint's trap (syscall_get_nr reads thread_info.abi_syscall,
	 * which nothing resets): nine values there too.  sp and pc are the
	 * last two of either form.
	 */
	int n = sscanf(buf, "%lld %llx %llx %llx %llx %llx %llx %llx %llx",
		       (long long *)&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7],
		       &v[8]);
	if (n == 3) {		/* -1 sp pc: not in a system call */
		*sp = v[1];
		*pc = v[2];
		return true;
	}
	if (n == 9) {
		*sp = v[n - 2];
		*pc = v[n - 1];
		return true;
	}
	return false;
}

static int list_tasks(pid_t pid, struct kt *kt, int max)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	if (!(d = opendir(path)))
		return 0;
	while ((de = readdir(d)) && n < max) {
		pid_t tid = atoi(de->d_name);
		if (tid > 0)
			kt[n++] = (struct kt){ .tid = tid };
	}
	closedir(d);
	return n;
}

/* Whether a SIGSTOP waits in the queue of thread `tid` or its process. */
static bool sigstop_queued(pid_t pid, pid_t tid)
{
	char path[64], line[256];
	bool queued = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	if (!(f = fopen(path, "re")))
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long mask;
		if ((sscanf(line, "SigPnd: %llx", &mask) == 1 ||
		     sscanf(line, "ShdPnd: %llx", &mask) == 1) &&
		    (mask & (1ull << (SIGSTOP - 1))))
			queued = true;
	}
	fclose(f);
	return queued;
}

static void kick(pid_t pid, pid_t tid)
{
	struct kp_proc *kp = proc_of(pid, false);
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_signo = SIGTRAP;
	si.si_code = SI_QUEUE;
	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value.sival_ptr = (void *)(uintptr_t)(kp && kp->magic ? kp->magic : shm->magic);
	syscall(SYS_rt_tgsigqueueinfo, pid, tid, SIGTRAP, &si);
}

static bool mem_rw(int fd, uint64_t addr, void *buf, size_t len, bool write)
{
	ssize_t n = write ? pwrite(fd, buf, len, (off_t)addr)
			  : pread(fd, buf, len, (off_t)addr);
	return n == (ssize_t)len;
}

/* Puts the program's bytes back at site `s`, where the memory holds ours
 * (or the program's, or a mix while a jump was being written). */
static int restore_site(int fd, const struct kp_site *s)
{
	/* The site's own breakpoint: on 32-bit ARM a Thumb site's (T16 or
	 * T32 udf), not the A32 one, which Thumb code would run as two
	 * other instructions. */
	const uint8_t *bp = s->trap_len ? s->trap : agent.arch->bp_insn;
	size_t bl = s->trap_len ? s->trap_len : agent.arch->bp_len;
	uint8_t now[16];

	if (!mem_rw(fd, s->addr, now, s->len, false))
		return -EFAULT;
	if (!memcmp(now, s->saved, s->len))
		return 0;
	for (uint32_t i = 0; i < s->len; i++)
		if (now[i] != s->saved[i] && now[i] != s->patch[i] &&
		    !(i < bl && now[i] == bp[i])) {
			debug("site %#llx of %d holds other bytes: left alone",
			      (unsigned long long)s->addr, s->pid);
			return -ESTALE;
		}
	/* As the agent does: a breakpoint first, then the tail, then the
	 * head, so a thread arriving meanwhile traps rather than running
	 * half a jump.  A far jump pad's site (32-bit ARM, 8 or 10 bytes:
	 * a literal load into the pc and its word) goes the same way: the
	 * load is the head, so nothing reads the literal once the tail is
	 * the program's again. */
	if (s->len > bl && (!mem_rw(fd, s->addr, (void *)bp, bl, true) ||
			    !mem_rw(fd, s->addr + bl, (void *)(s->saved + bl), s->len - bl, true)))
		return -EIO;
	if (!mem_rw(fd, s->addr, (void *)s->saved, s->len < bl ? s->len : bl, true))
		return -EIO;
	return 1;
}

struct fix {
	pid_t tid;
	uint32_t zero;
	uint64_t expect, new_pc, scratch_off, scratch_val;
	uint64_t only_if;	/* the register only where it holds this */
	uint64_t pad[2];
};

static const struct kp_site *trap_site_at(pid_t pid, uint64_t addr)
{
	for (int i = 0; i < KP_SITES; i++) {
		const struct kp_site *s = &shm->sites[i];
		if (s->pid == pid && s->addr == addr)
			return s;
	}
	return NULL;
}

/*
 * Whether a thread stopped at `pc` == site + 1 (x86-64's int3 leaves the
 * pc after it) stands after the site's trap (the instruction has not run:
 * back to the site) rather than after the agent ran the instruction (a
 * one-byte instruction emulated or boosted: leave it).  Where the trap
 * leaves the pc at the breakpoint (aarch64's BRK, 32-bit ARM's udf), a
 * thread at a site is right as it is: it runs the restored instruction.
 */
static bool after_trap(const struct kt *t)
{
	if ((t->exit_code & 0xffff) == SIGTRAP && !t->kicked)
		return true;	/* a trap the agent never took */
	if (t->exit_code && !t->kicked)
		return false;	/* some other stop the agent never took: the
				 * thread ran here, resumed by the agent */
	/*
	 * A stop the agent took, or one for our kick (a trap's SIGTRAP may
	 * have merged with it).  The agent's record of what it waited for
	 * cannot tell: it may die after the kernel handed it a status and
	 * before it wrote that down.  What tells is the registers the agent
	 * wrote last: a thread it resumed after running the instruction
	 * stands at exactly that pc and sp; one after a trap has the sp it
	 * had before the instruction.  Only a one-byte instruction that
	 * leaves sp alone is ambiguous (see doc/keeper.md).
	 */
	struct kp_thread *r = thread_rec(t->tid, false);
	if (r && r->set_valid && r->set_pc == t->pc && r->set_sp == t->sp)
		return false;
	return true;
}

/* The fix-up of a stopped thread's pc, false when it needs none. */
static bool thread_fix_pc(pid_t pid, const struct kp_proc *kp, const struct kt *t,
			  struct fix *f)
{
	const struct ptrace_keeper_ops *ko = &agent.ptrace->keeper;
	uint64_t after = agent.arch->bp_pc_after_trap;
	const struct kp_site *s;
	struct kp_thread *r = thread_rec(t->tid, false);

	*f = (struct fix){ .tid = t->tid, .expect = t->pc };
	if (after && t->pc >= after && (s = trap_site_at(pid, t->pc - after)) &&
	    after_trap(t)) {
		f->new_pc = s->addr;
		return true;
	}
	/* Return probes that swap the word at sp (PTRACE_RET_STACK). */
	if (kp->tramp && agent.ptrace->ret_addr == PTRACE_RET_STACK &&
	    (t->pc == kp->tramp || t->pc == kp->tramp + after)) {
		/* After the `ret`: sp is one past the slot it came from. */
		uint64_t slot = t->sp - agent.ptrace->word_size;
		for (uint32_t i = r ? r->nret : 0; i-- > 0;)
			if (r->ret_slot[i] == slot) {
				f->new_pc = r->ret_addr[i];
				return true;
			}
		log_always("keeper: thread %d is at the return trampoline with no "
			 "return address for slot 0x%llx", t->tid,
			 (unsigned long long)slot);
		return false;
	}
	/* Through the link register (PTRACE_RET_LINK): a thread on the
	 * trampoline has returned to it with the sp of its entry; pc and the
	 * link register get the real address, as `ret` leaves them. */
	if (kp->tramp && agent.ptrace->ret_addr == PTRACE_RET_LINK && t->pc == kp->tramp) {
		int off = ko->uc_gpr_offset ? ko->uc_gpr_offset(agent.ptrace->ret_link_regnum) : -1;
		for (uint32_t i = r ? r->nret : 0; i-- > 0;)
			if (r->ret_slot[i] == t->sp && off >= 0) {
				f->new_pc = r->ret_addr[i];
				f->scratch_off = (uint64_t)off;
				f->scratch_val = r->ret_addr[i];
				return true;
			}
		log_always("keeper: thread %d is at the return trampoline with no "
			   "return address for sp 0x%llx", t->tid, (unsigned long long)t->sp);
		return false;
	}
	for (int i = 0; i < KP_CODES; i++) {
		const struct kp_code *c = &shm->codes[i];
		if (c->pid != pid)
			continue;
		if (c->kind == KEEPER_PAD) {
			/* The trap became a store (open_pad). */
			if (!ko->pad_fix || !ko->pad_fix(c->at, t->pc, &f->new_pc))
				continue;
			return true;
		}
		if (c->kind == KEEPER_PASS) {
			if (t->pc == c->at + after) {
				f->new_pc = t->pc;
				return true;
			}
			continue;
		}
		if (c->kind == KEEPER_RET_ON) {
			/* Stopped by the in-process trampoline's wait for
			 * room: on from there (its trap's signal is not the
			 * program's). */
			if (c->addr && t->pc == c->addr + after) {
				f->new_pc = t->pc;
				return true;
			}
			continue;
		}
		if (c->kind != KEEPER_STEP || t->pc < c->at || t->pc > c->at + c->xol_len)
			continue;
		if (t->pc == c->at || (ko->slot_rewind && t->pc < c->at + c->xol_len))
			f->new_pc = c->addr;
		else if (t->pc == c->at + c->xol_len)
			f->new_pc = c->addr + c->insn_len;
		else
			continue;
		int off = ko->uc_gpr_offset ? ko->uc_gpr_offset(c->scratch) : -1;
		if (c->scratch >= 0 && off >= 0 && r) {
			f->scratch_off = (uint64_t)off;
			f->scratch_val = r->scratch_saved;
		}
		return true;
	}
	return false;
}

/*
 * The fix-up for a stopped thread, false when it needs none.  Through
 * the link register (PTRACE_RET_LINK), a thread with return-probe
 * entries may still hold the trampoline's address in it, inside the
 * newest entry's function before that saves it: where the handler can
 * test a register (reg_only_if), the record gives it the real address
 * only if it holds the trampoline's.  K cannot read it itself.
 */
static bool thread_fix(pid_t pid, const struct kp_proc *kp, const struct kt *t,
		       struct fix *f)
{
	const struct ptrace_keeper_ops *ko = &agent.ptrace->keeper;
	bool fixed = thread_fix_pc(pid, kp, t, f);
	struct kp_thread *r = thread_rec(t->tid, false);
	int off;

	if (!kp->tramp || agent.ptrace->ret_addr != PTRACE_RET_LINK || !ko->reg_only_if ||
	    !r || !r->nret || r->pid != pid || f->scratch_off ||
	    !ko->uc_gpr_offset || (off = ko->uc_gpr_offset(agent.ptrace->ret_link_regnum)) < 0)
		return fixed;
	if (!fixed)
		f->new_pc = t->pc;
	f->scratch_off = (uint64_t)off;
	f->scratch_val = r->ret_addr[r->nret - 1];
	f->only_if = kp->tramp;
	return true;
}

/* The pad's trap and check become a store of PAD_DONE (the arch's
 * pad_open): a thread in the pad runs on through it. */
static void open_pad(int fd, const struct kp_code *c)
{
	const struct ptrace_keeper_ops *ko = &agent.ptrace->keeper;
	uint8_t code[32];
	int n;

	if (ko->pad_open && (n = ko->pad_open(code, sizeof(code), c->aux)) > 0)
		mem_rw(fd, c->at, code, (size_t)n, true);
}

/* Loads that may fault jump where a fault goes on from now on
 * (load_open). */
static void open_load(int fd, const struct kp_code *c)
{
	const struct ptrace_keeper_ops *ko = &agent.ptrace->keeper;
	uint8_t code[16];
	int n;

	if (ko->load_open &&
	    (n = ko->load_open(code, sizeof(code), c->at, c->addr, c->insn_len)) > 0)
		mem_rw(fd, c->at, code, (size_t)n, true);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

/*
 * Return probes through the link register (PTRACE_RET_LINK): each
 * function saved the trampoline's address wherever it liked in its
 * frame.  As in retprobe.c, a word at address a between the thread's sp
 * and its oldest entry's sp that holds it belongs to the entry with the
 * smallest sp above a: it gets that entry's real address.  A thread
 * whose sp cannot be read (still running) is left alone.
 */
#define LINK_SCAN_MAX (1u << 20)

static void restore_link_copies(int fd, pid_t pid, const struct kp_proc *kp,
				const struct kp_thread *r)
{
	static uint8_t words[LINK_SCAN_MAX];
	const unsigned int w = agent.ptrace->word_size;	/* 8, or 4 (32-bit ARM) */
	uint64_t sp, pc, top = 0;
	int fixed = 0;

	if (!task_regs(pid, r->tid, &sp, &pc))
		return;
	sp &= ~(uint64_t)(w - 1);
	for (uint32_t k = 0; k < r->nret; k++)
		if (r->ret_slot[k] > top)
			top = r->ret_slot[k];
	if (top <= sp)
		return;
	size_t n = (top - sp) / w < LINK_SCAN_MAX / w ? (top - sp) / w : LINK_SCAN_MAX / w;
	if (!mem_rw(fd, sp, words, n * w, false))
		return;
	for (size_t i = 0; i < n; i++) {
		uint64_t a = sp + w * i, best = 0, ret = 0, word = 0;
		memcpy(&word, words + w * i, w);	/* little-endian */
		if (word != kp->tramp)
			continue;
		for (uint32_t k = 0; k < r->nret; k++)
			if (r->ret_slot[k] > a && (!best || r->ret_slot[k] < best)) {
				best = r->ret_slot[k];
				ret = r->ret_addr[k];
			}
		if (best && mem_rw(fd, a, &ret, w, true))
			fixed++;
	}
	debug("thread %d: %d copies of the trampoline's address restored", r->tid, fixed);
}

/* The window: the agent is held in its exit stop. */
static void take_over_process(struct kp_proc *kp)
{
	static struct kt kt[KT_MAX];
	pid_t pid = kp->pid;
	char path[64];
	int fd, n = 0, restored = 0;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	if ((fd = open(path, O_RDWR | O_CLOEXEC)) < 0) {
		debug("process %d: %s", pid, strerror(errno));
		return;
	}
	bool handler = kp->handler && sigtrap_default(pid) == false;
	/* 1. Threads that run stop for our kick (at most about 2 s). */
	for (int round = 0; handler && round < 2000; round++) {
		bool running = false;
		static struct kt now[KT_MAX];
		int m = list_tasks(pid, now, KT_MAX);
		for (int i = 0; i < m; i++) {
			char st = task_state(pid, now[i].tid, NULL);
			if (st != 'R')
				continue;
			running = true;
			bool done = false;
			for (int j = 0; j < n; j++)
				if (kt[j].tid == now[i].tid)
					done = true;
			if (!done && n < KT_MAX) {
				kick(pid, now[i].tid);
				kt[n++] = (struct kt){ .tid = now[i].tid, .kicked = true };
			}
		}
		if (!running)
			break;
		sleep_ms(1);
	}
	/* 2. The text, the pads, the return addresses.  An injected system
	 * call's bytes first: what it saved may be a site's patch. */
	if (kp->inject.pid == pid && restore_site(fd, &kp->inject) > 0)
		log_always("keeper: process %d: the agent died while a thread ran "
			   "an injected system call at 0x%llx: its registers are lost",
			   pid, (unsigned long long)kp->inject.addr);
	for (int i = 0; i < KP_SITES; i++)
		if (shm->sites[i].pid == pid && restore_site(fd, &shm->sites[i]) > 0)
			restored++;
	for (int i = 0; i < KP_CODES; i++)
		if (shm->codes[i].pid == pid && shm->codes[i].kind == KEEPER_PAD)
			open_pad(fd, &shm->codes[i]);
		else if (shm->codes[i].pid == pid && shm->codes[i].kind == KEEPER_LOAD)
			open_load(fd, &shm->codes[i]);
		else if (shm->codes[i].pid == pid && shm->codes[i].kind == KEEPER_PASS &&
			 agent.arch->nop_insn)
			mem_rw(fd, shm->codes[i].at, (void *)agent.arch->nop_insn,
			       agent.arch->bp_len, true);
		else if (shm->codes[i].pid == pid && shm->codes[i].kind == KEEPER_RET_ON) {
			/* Nobody drains the ring any more: the in-process
			 * trampoline records nothing, and never waits. */
			const struct arch_ops *arch = agent.arch;
			uint64_t off = 0;
			mem_rw(fd, shm->codes[i].at, &off, 8, true);
			if (shm->codes[i].addr && arch->nop_insn)
				mem_rw(fd, shm->codes[i].addr, (void *)arch->nop_insn,
				       arch->bp_len, true);
		}
	for (int i = 0; kp->tramp && agent.ptrace->ret_addr == PTRACE_RET_STACK &&
			i < KP_THREADS; i++) {
		struct kp_thread *r = &shm->threads[i];
		if (r->tid <= 0 || r->pid != pid)
			continue;
		/* Newest first: an older entry for a reused slot is stale. */
		for (uint32_t k = r->nret; k-- > 0;) {
			uint64_t v;
			if (mem_rw(fd, r->ret_slot[k], &v, 8, false) && v == kp->tramp)
				mem_rw(fd, r->ret_slot[k], &r->ret_addr[k], 8, true);
		}
	}
	for (int i = 0; kp->tramp && agent.ptrace->ret_addr == PTRACE_RET_LINK &&
			i < KP_THREADS; i++) {
		struct kp_thread *r = &shm->threads[i];
		if (r->tid > 0 && r->pid == pid && r->nret)
			restore_link_copies(fd, pid, kp, r);
	}
	/* 3. Fix-ups for the stopped threads, applied by the handler. */
	static struct kt all[KT_MAX];
	int m = list_tasks(pid, all, KT_MAX);
	int nfix = 0;
	bool cont = false;
	uint8_t recs[KH_MAX_RECS * KH_REC];
	for (int i = 0; i < m; i++) {
		struct kt *t = &all[i];
		t->state = task_state(pid, t->tid, &t->exit_code);
		for (int j = 0; j < n; j++)
			if (kt[j].tid == t->tid)
				t->kicked = true;
		if ((t->exit_code & 0x7f) == SIGSTOP || sigstop_queued(pid, t->tid))
			cont = true;
		if (t->state != 't' || !task_regs(pid, t->tid, &t->sp, &t->pc))
			continue;
		struct fix f;
		if (!thread_fix(pid, kp, t, &f))
			continue;
		if (!handler || nfix >= KH_MAX_RECS) {
			log_always("keeper: thread %d of process %d stopped at 0x%llx "
				 "cannot be moved to 0x%llx (no handler)", t->tid, pid,
				 (unsigned long long)f.expect, (unsigned long long)f.new_pc);
			continue;
		}
		memcpy(recs + (size_t)nfix * KH_REC, &f, sizeof(f));
		nfix++;
		debug("thread %d: 0x%llx -> 0x%llx (stop %#x)", t->tid,
		      (unsigned long long)f.expect, (unsigned long long)f.new_pc,
		      t->exit_code);
		/* A trap the agent never took is delivered on release; any
		 * other stop needs a kick for the handler to run. */
		if ((t->exit_code & 0xffff) != SIGTRAP)
			kick(pid, t->tid);
	}
	if (nfix) {
		uint32_t count = (uint32_t)nfix;
		mem_rw(fd, kp->handler + KH_TABLE + 16, recs, (size_t)nfix * KH_REC, true);
		mem_rw(fd, kp->handler + KH_TABLE, &count, 4, true);
	}
	/* 4. The agent's SIGSTOPs (taken or queued) would stop the program
	 * for good: a SIGCONT now cancels them. */
	if (cont)
		kill(pid, SIGCONT);
	/* 5. Where a single step outlives the tracer (step_sticks), each
	 * thread the agent may have left stepping gets a SIGSTOP, queued
	 * after that SIGCONT: released, it takes the SIGSTOP before it
	 * returns to user space (a waited stop resumes into the signal
	 * loop; an unwaited trap's handler frame is built first), and the
	 * whole process stops until disarm_steps. */
	for (int i = 0; agent.ptrace->keeper.step_sticks && i < m; i++) {
		struct kp_thread *r = thread_rec(all[i].tid, false);
		if (!r || !r->stepping || nsteps >= KT_MAX)
			continue;
		syscall(SYS_tgkill, pid, all[i].tid, SIGSTOP);
		steps[nsteps++] = (struct kt){ .tid = all[i].tid, .pid = pid };
		debug("thread %d of %d may be left stepping: stopped", all[i].tid, pid);
	}
	close(fd);
	log_always("keeper: process %d: %d sites restored, %d threads moved", pid,
		 restored, nfix);
}

/*
 * After the release: the processes of the threads left stepping (step 5
 * of take_over_process) stop; each such thread is seized and detached,
 * which disarms its step (ptrace_disable), and the process continues.
 * Needs the right to trace the program (the same user and Yama's
 * ptrace_scope 0, or CAP_SYS_PTRACE); without it the thread dies of the
 * next step trap, as it would without the keeper.
 */
static void disarm_steps(void)
{
	for (int i = 0; i < nsteps; i++) {
		struct kt *t = &steps[i];
		int status = 0, round;
		char st = 0;

		/* The agent is going: its tracees stop once released. */
		for (round = 0; round < 2000; round++) {
			st = task_state(t->pid, t->tid, NULL);
			if (st != 't' && st != 'R' && st != 'S' && st != 'D')
				break;
			sleep_ms(1);
		}
		if (st != 'T') {
			log_always("keeper: thread %d of process %d left stepping is "
				   "in state %c, not stopped: not disarmed", t->tid,
				   t->pid, st ? st : '-');
			continue;
		}
		if (ptrace(PTRACE_SEIZE, t->tid, NULL, NULL) < 0) {
			log_always("keeper: thread %d of process %d left stepping "
				   "cannot be disarmed: %s", t->tid, t->pid,
				   strerror(errno));
			continue;
		}
		ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL);
		for (round = 0; round < 2000; round++) {
			if (waitpid(t->tid, &status, __WALL | WNOHANG) == t->tid)
				break;
			sleep_ms(1);
		}
		if (ptrace(PTRACE_DETACH, t->tid, NULL, NULL) < 0)
			log_always("keeper: thread %d of process %d: detach: %s",
				   t->tid, t->pid, strerror(errno));
		else
			t->kicked = true;	/* here: disarmed */
	}
	for (int i = 0; i < nsteps; i++) {
		int disarmed = 0, left = 0;
		bool first = true;
		for (int j = 0; j < i; j++)
			if (steps[j].pid == steps[i].pid)
				first = false;
		if (!first)
			continue;
		for (int j = i; j < nsteps; j++)
			if (steps[j].pid == steps[i].pid && steps[j].kicked)
				disarmed++;
			else if (steps[j].pid == steps[i].pid)
				left++;
		kill(steps[i].pid, SIGCONT);
		log_always("keeper: process %d: %d single steps disarmed%s", steps[i].pid,
			   disarmed, left ? ", some not (above)" : "");
	}
}

static void take_over(void)
{
	for (int i = 0; i < KP_PROCS; i++)
		if (shm->procs[i].pid)
			take_over_process(&shm->procs[i]);
}

/*
 * What became of the stop K waited for, just before K resumes the agent
 * from it.  A SIGKILL that comes while K holds the agent in a
 * signal-delivery stop (the hot wait's SIGIO and SIGALRM make those
 * frequent) wakes it from that stop, and it runs on into its exit stop:
 * K's PTRACE_CONT, meant for the signal, would resume it from the exit
 * stop, the agent would exit, and its threads' traps would go to the
 * program.  PTRACE_GETSIGINFO tells: the exit event's own code in the
 * exit stop; ESRCH while the agent runs, which only a SIGKILL does to a
 * tracee held in a stop (K then waits again, for the exit stop); EINVAL in
 * a group stop.
 */
enum agent_stop { AGENT_HELD, AGENT_EXITING, AGENT_RUNNING };

static enum agent_stop agent_stop_now(pid_t agent_pid)
{
	siginfo_t si;

	if (ptrace(PTRACE_GETSIGINFO, agent_pid, NULL, &si) < 0)
		return errno == ESRCH ? AGENT_RUNNING : AGENT_HELD;
	if (si.si_signo == SIGTRAP && si.si_code == (SIGTRAP | (PTRACE_EVENT_EXIT << 8)))
		return AGENT_EXITING;
	return AGENT_HELD;
}

/*
 * Says how the agent is ending, from its exit stop: the wait status the
 * kernel will report (PTRACE_GETEVENTMSG), and for a fatal signal the pc
 * it died at and the mapping that holds it, so a crash is not taken for
 * a clean exit.  A clean exit and SIGKILL (someone ended it) say nothing
 * more than before.
 */
static void say_how_agent_ends(pid_t agent_pid)
{
	unsigned long msg = 0;

	if (ptrace(PTRACE_GETEVENTMSG, agent_pid, NULL, &msg) < 0)
		return;
	int status = (int)msg;
	if (WIFEXITED(status)) {
		if (WEXITSTATUS(status))
			log_always("keeper: the agent exits with status %d", WEXITSTATUS(status));
		return;
	}
	if (!WIFSIGNALED(status) || WTERMSIG(status) == SIGKILL)
		return;
	uint64_t sp, pc;
	char where[320] = "";
	if (task_regs(agent_pid, agent_pid, &sp, &pc)) {
		char path[64], line[512];
		snprintf(path, sizeof(path), "/proc/%d/maps", agent_pid);
		FILE *f = fopen(path, "re");
		snprintf(where, sizeof(where), " at pc %#llx", (unsigned long long)pc);
		while (f && fgets(line, sizeof(line), f)) {
			unsigned long long lo, hi, off;
			int name = 0;
			if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &lo, &hi, &off, &name) < 3 ||
			    pc < lo || pc >= hi)
				continue;
			line[strcspn(line, "\n")] = 0;
			snprintf(where, sizeof(where), " at pc %#llx (%s+%#llx)",
				 (unsigned long long)pc, name ? line + name : "?",
				 (unsigned long long)(pc - lo + off));
			break;
		}
		if (f)
			fclose(f);
	}
	log_always("keeper: the agent dies of signal %d (%s)%s%s", WTERMSIG(status),
		   strsignal(WTERMSIG(status)), where, WCOREDUMP(status) ? ", core dumped" : "");
}

/* PROBE_AGENT_KEEPER_DELAY_US: K pauses this long after each stop of the
 * agent it waited for, before it looks at the stop again and resumes the
 * agent.  A test widens the window above with it; 0 otherwise. */
static long resume_delay_us;

static void keeper_main(pid_t agent_pid, int ready_fd)
{
	int status;

	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	/* Its own process group: the terminal's ^C is not for it. */
	setpgid(0, 0);
	if (ptrace(PTRACE_SEIZE, agent_pid, NULL, (void *)(long)PTRACE_O_TRACEEXIT) < 0) {
		char no = 0;
		if (write(ready_fd, &no, 1) < 0)
			_exit(1);
		_exit(1);
	}
	char yes = 1;
	if (write(ready_fd, &yes, 1) < 0)
		_exit(1);
	close(ready_fd);
	for (;;) {
		if (waitpid(agent_pid, &status, __WALL) < 0) {
			log_always("keeper: lost the agent: %s", strerror(errno));
			_exit(0);
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			log_always("keeper: the agent ended (status %#x) without its exit stop", status);
			_exit(0);
		}
		int event = status >> 16, sig = WSTOPSIG(status);
		if (event == PTRACE_EVENT_EXIT)
			break;
		if (resume_delay_us)
			usleep((useconds_t)resume_delay_us);
		enum agent_stop now = agent_stop_now(agent_pid);
		if (now == AGENT_EXITING)
			break;
		if (now == AGENT_RUNNING)
			continue;
		if (event == PTRACE_EVENT_STOP) {
			/* A group stop of the agent (^Z): it stays stopped. */
			if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
				ptrace(PTRACE_LISTEN, agent_pid, NULL, NULL);
			else
				ptrace(PTRACE_CONT, agent_pid, NULL, NULL);
			continue;
		}
		ptrace(PTRACE_CONT, agent_pid, NULL, (void *)(long)(event ? 0 : sig));
	}
	say_how_agent_ends(agent_pid);
	take_over();
	ptrace(PTRACE_DETACH, agent_pid, NULL, NULL);
	while (waitpid(agent_pid, &status, __WALL) > 0 &&
	       !WIFEXITED(status) && !WIFSIGNALED(status))
		ptrace(PTRACE_CONT, agent_pid, NULL, NULL);
	if (nsteps)
		disarm_steps();
	_exit(0);
}

int keeper_start(void)
{
	int pfd[2], kfd[2];
	pid_t mid, agent_pid = getpid();
	char ok = 0;
	int status;

	if (getenv("PROBE_AGENT_NO_KEEPER"))
		return 0;
	const char *delay = getenv("PROBE_AGENT_KEEPER_DELAY_US");
	if (delay)
		resume_delay_us = strtol(delay, NULL, 10) > 0 ? strtol(delay, NULL, 10) : 0;
	if (!agent.ptrace->keeper.handler) {
		/* No handler for this arch: the agent runs without a
		 * keeper, and a program it started dies with it
		 * (PTRACE_O_EXITKILL). */
		debug("no keeper on %s", agent.arch->name);
		return -ENOSYS;
	}
	struct kp_shm *m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -errno;
	if (getrandom(&m->magic, sizeof(m->magic), GRND_NONBLOCK) != sizeof(m->magic))
		m->magic = ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL) ^ 0x6b656570ull;
	if (pipe2(pfd, O_CLOEXEC) < 0 || pipe2(kfd, O_CLOEXEC) < 0)
		return -errno;
	fflush(NULL);
	mid = fork();
	if (mid < 0)
		return -errno;
	if (mid == 0) {
		pid_t k = fork();
		if (k == 0) {
			char go;
			close(pfd[0]);
			close(kfd[1]);
			/* Wait until the agent allows us (Yama). */
			if (read(kfd[0], &go, 1) != 1)
				_exit(1);
			close(kfd[0]);
			/* Nothing of the agent's stays open here: the
			 * connection must close when the agent dies. */
			int null = open("/dev/null", O_RDWR);
			if (null >= 0) {
				dup2(null, 0);
				dup2(null, 1);
			}
			for (int fd = 3; fd < 1024; fd++)
				if (fd != pfd[1])
					close(fd);
			shm = m;
			keeper_main(agent_pid, pfd[1]);
		}
		if (write(pfd[1], &k, sizeof(k)) < 0)
			_exit(1);
		_exit(0);
	}
	close(kfd[0]);
	close(pfd[1]);
	waitpid(mid, &status, 0);
	pid_t k = 0;
	if (read(pfd[0], &k, sizeof(k)) != sizeof(k) || k <= 0)
		goto fail;
	prctl(PR_SET_PTRACER, k, 0, 0, 0);
	if (write(kfd[1], "g", 1) != 1 || read(pfd[0], &ok, 1) != 1 || !ok)
		goto fail;
	close(kfd[1]);
	close(pfd[0]);
	shm = m;
	keeper_pid = k;
	debug("keeper %d watches agent %d", k, agent_pid);
	return 0;
fail:
	close(kfd[1]);
	close(pfd[0]);
	munmap(m, sizeof(*m));
	log_user("keeper: not started; the program will not survive the agent");
	return -ESRCH;
}
