/*
 * arm-keeper-handler.c - the keeper's 32-bit ARM SIGTRAP handler
 * (agent/arm-keeper-handler.h) run by the CPU: an armhf program, built
 * statically and run under qemu-arm-static (natively on an ARM host), maps
 * the handler page as keeper_install lays it out, installs the handler
 * with the kernel's sigaction (SA_RESTORER: its own restorer) and makes
 * threads take SIGTRAPs the way a takeover delivers them:
 *
 *   - a record for the thread whose expected pc is the pc after its
 *     tgkill moves it there: into Thumb code when the new pc has bit 0
 *     (the return trampoline's case), with a register set, or only where
 *     it holds only_if's value; a record for another tid, or another pc,
 *     is not applied (the thread then dies of its SIGTRAP);
 *   - the keeper's kick (SI_QUEUE, the magic's low word) returns; with
 *     another value the thread dies of SIGTRAP;
 *   - TRAP_BRKPT on an instruction that is no longer a breakpoint (a
 *     restored site) returns, in A32 and in Thumb; on A32 udf #16, T16
 *     udf #1 or T32 udf.w (the program's own) the thread dies of SIGTRAP;
 *   - the program's own tgkill (SI_TKILL) kills it with SIGTRAP.
 * A death is checked in a forked child: WTERMSIG must be SIGTRAP.  A
 * TRAP_BRKPT is sent by the thread to itself (rt_tgsigqueueinfo allows
 * any si_code within the process), with the pc after the system call
 * standing where a trap would have left it.
 *
 * Exit 0 when every case passes, 1 otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/arm-keeper-handler.h"

#define PAGE_DFL 992		/* ptrace-arch.h: KEEPER_PAGE_DFL */
#define PAGE_TABLE 1024		/* KEEPER_PAGE_TABLE */
#define SA_RESTORER_FLAG 0x04000000

/*
 * The code the signals interrupt.  Each `trap_*` function takes r4's
 * value in r0 and a mode in r1 (0: tgkill, SI_TKILL; 1: SI_QUEUE with
 * value r2; 2: TRAP_BRKPT), signals its own thread with svc, and
 * returns 1 when the handler let it go on after the svc.  `*_after`
 * labels the instruction after the svc (the pc in the ucontext);
 * `moved_thumb` is a Thumb target that returns r4, `moved_arm` an A32
 * one that returns r4 + 1000.
 */
__asm__(
	"	.syntax unified\n"
	"	.text\n"
	/* signal_self: r1 mode, r2 value; clobbers r0-r3, r5-r7, r8 */
	"	.arm\n"
	"	.type signal_self, %function\n"
	"signal_self:\n"
	"	mov r8, r1\n"
	"	mov r5, r2\n"
	"	mov r7, #20\n"			/* getpid */
	"	svc #0\n"
	"	mov r6, r0\n"
	"	mov r7, #224\n"			/* gettid */
	"	svc #0\n"
	"	mov r1, r0\n"			/* tid */
	"	mov r0, r6\n"			/* tgid */
	"	mov r2, #5\n"			/* SIGTRAP */
	"	cmp r8, #0\n"
	"	movweq r7, #268\n"		/* tgkill(tgid, tid, SIGTRAP) */
	"	bxeq lr\n"
	/* rt_tgsigqueueinfo(tgid, tid, SIGTRAP, info) with info on the
	 * stack: signo, errno, code, then pid, uid, value (or addr). */
	"	sub sp, sp, #128\n"
	"	mov r3, #0\n"
	"	mov r7, #0\n"
	"1:	str r3, [sp, r7]\n"
	"	add r7, r7, #4\n"
	"	cmp r7, #128\n"
	"	bne 1b\n"
	"	str r2, [sp]\n"
	"	cmp r8, #1\n"
	"	mvneq r3, #0\n"			/* SI_QUEUE = -1 */
	"	movne r3, #1\n"			/* TRAP_BRKPT */
	"	str r3, [sp, #8]\n"
	"	str r6, [sp, #12]\n"		/* si_pid */
	"	str r5, [sp, #20]\n"		/* si_value */
	"	mov r3, sp\n"
	"	movw r7, #363\n"		/* rt_tgsigqueueinfo */
	/* Below sp from here: the caller's svc reads it first, and no
	 * other signal comes in between. */
	"	add sp, sp, #128\n"
	"	bx lr\n"
	"	.size signal_self, .-signal_self\n"

	/* trap_arm: A32, the svc followed by a plain instruction */
	"	.global trap_arm, trap_arm_after, moved_arm\n"
	"	.type trap_arm, %function\n"
	"trap_arm:\n"
	"	push {r4-r8, lr}\n"
	"	mov r4, r0\n"
	"	bl signal_self\n"
	"	svc #0\n"
	"trap_arm_after:\n"
	"	mov r0, #1\n"
	"	pop {r4-r8, pc}\n"
	"moved_arm:\n"
	"	add r0, r4, #1000\n"
	"	pop {r4-r8, pc}\n"
	"	.size trap_arm, .-trap_arm\n"

	/* trap_arm_udf: A32, the svc followed by udf #16 */
	"	.global trap_arm_udf\n"
	"	.type trap_arm_udf, %function\n"
	"trap_arm_udf:\n"
	"	push {r4-r8, lr}\n"
	"	mov r4, r0\n"
	"	bl signal_self\n"
	"	svc #0\n"
	"	.word 0xe7f001f0\n"
	"	mov r0, #1\n"
	"	pop {r4-r8, pc}\n"
	"	.size trap_arm_udf, .-trap_arm_udf\n"

	/* Thumb: the svc followed by a plain instruction, by udf #1, by
	 * udf.w; moved_thumb returns r4 */
	"	.thumb\n"
	"	.global trap_thumb, trap_thumb_udf16, trap_thumb_udf32, moved_thumb\n"
	"	.thumb_func\n"
	"	.type trap_thumb, %function\n"
	"trap_thumb:\n"
	"	push {r4-r8, lr}\n"
	"	mov r4, r0\n"
	"	blx signal_self\n"
	"	svc #0\n"
	"	movs r0, #1\n"
	"	pop {r4-r8, pc}\n"
	"	.thumb_func\n"
	"moved_thumb:\n"
	"	mov r0, r4\n"
	"	pop {r4-r8, pc}\n"
	"	.size trap_thumb, .-trap_thumb\n"
	"	.thumb_func\n"
	"	.type trap_thumb_udf16, %function\n"
	"trap_thumb_udf16:\n"
	"	push {r4-r8, lr}\n"
	"	mov r4, r0\n"
	"	blx signal_self\n"
	"	svc #0\n"
	"	.hword 0xde01\n"
	"	movs r0, #1\n"
	"	pop {r4-r8, pc}\n"
	"	.size trap_thumb_udf16, .-trap_thumb_udf16\n"
	"	.thumb_func\n"
	"	.type trap_thumb_udf32, %function\n"
	"trap_thumb_udf32:\n"
	"	push {r4-r8, lr}\n"
	"	mov r4, r0\n"
	"	blx signal_self\n"
	"	svc #0\n"
	"	.hword 0xf7f0, 0xa000\n"
	"	movs r0, #1\n"
	"	pop {r4-r8, pc}\n"
	"	.size trap_thumb_udf32, .-trap_thumb_udf32\n"
	"	.arm\n");

long trap_arm(long r4, int mode, uint32_t value);
long trap_arm_udf(long r4, int mode, uint32_t value);
long trap_thumb(long r4, int mode, uint32_t value);
long trap_thumb_udf16(long r4, int mode, uint32_t value);
long trap_thumb_udf32(long r4, int mode, uint32_t value);
extern char trap_arm_after[], moved_arm[], moved_thumb[];

static uint8_t *page;
static const uint64_t magic = 0x1122334455667788ull;
static int failures;

struct rec {			/* a fix-up record (ptrace-arch.h) */
	uint32_t tid, zero;
	uint64_t expect, new_pc, reg_off, reg_val, only_if, pad[2];
};

static void set_records(const struct rec *r, uint32_t n)
{
	mprotect(page, 16384, PROT_READ | PROT_WRITE);
	memcpy(page + PAGE_TABLE + 16, r, n * sizeof(*r));
	memcpy(page + PAGE_TABLE, &n, 4);
	mprotect(page, 16384, PROT_READ | PROT_EXEC);
}

static void install(void)
{
	struct { uint32_t handler, flags, restorer; uint32_t mask[2]; } act = {
		(uint32_t)(uintptr_t)page, SA_SIGINFO | SA_RESTART | SA_RESTORER_FLAG,
		(uint32_t)(uintptr_t)page + ARM_KEEPER_RESTORER, { 0, 0 },
	};

	if (syscall(SYS_rt_sigaction, SIGTRAP, &act, NULL, 8) != 0) {
		perror("rt_sigaction");
		exit(99);
	}
}

static void check(const char *what, long got, long want)
{
	if (got == want) {
		printf("ok - %s: %ld\n", what, got);
	} else {
		printf("not ok - %s: %ld, want %ld\n", what, got, want);
		failures++;
	}
}

/* Runs fn in a child, which must die of SIGTRAP. */
static void check_dies(const char *what, long (*fn)(long, int, uint32_t), int mode,
		       uint32_t value, const struct rec *r, uint32_t n)
{
	int st;
	pid_t pid;

	fflush(stdout);
	if ((pid = fork()) == 0) {
		struct rec mine[2];
		memcpy(mine, r, n * sizeof(*r));
		for (uint32_t i = 0; i < n; i++)
			if (mine[i].tid == 1)
				mine[i].tid = (uint32_t)syscall(SYS_gettid);
		set_records(mine, n);
		fn(0, mode, value);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGTRAP) {
		printf("ok - %s: killed by SIGTRAP\n", what);
	} else {
		printf("not ok - %s: %s %d, want killed by SIGTRAP\n", what,
		       WIFSIGNALED(st) ? "signal" : "exit status",
		       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		failures++;
	}
}

int main(void)
{
	uint32_t tid = (uint32_t)syscall(SYS_gettid);
	uint64_t after = (uint64_t)(uintptr_t)trap_arm_after;
	uint64_t thumb = (uint64_t)(uintptr_t)moved_thumb;	/* bit 0 set */
	uint64_t arm = (uint64_t)(uintptr_t)moved_arm;
	uint32_t lo = (uint32_t)magic;

	setvbuf(stdout, NULL, _IOLBF, 0);
	page = mmap(NULL, 16384, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 99;
	memcpy(page, arm_keeper_handler, sizeof(arm_keeper_handler));
	memcpy(page + PAGE_TABLE + 8, &magic, 8);
	mprotect(page, 16384, PROT_READ | PROT_EXEC);
	install();
	if (!(thumb & 1) || (arm & 1)) {
		printf("not ok - moved_thumb %#llx / moved_arm %#llx: the Thumb bit\n",
		       (unsigned long long)thumb, (unsigned long long)arm);
		return 1;
	}

	/* Records. */
	struct rec r[2] = { { .tid = tid, .expect = after, .new_pc = thumb,
			      .reg_off = ARM_KEEPER_UC_R0 + 4 * 4, .reg_val = 0x1234 } };
	set_records(r, 1);
	check("record: pc into Thumb code (bit 0), r4 set", trap_arm(7, 0, 0), 0x1234);
	r[0].new_pc = arm;
	r[0].reg_off = 0;
	set_records(r, 1);
	check("record: pc to A32 code, no register", trap_arm(7, 0, 0), 1007);
	r[0].new_pc = thumb;
	r[0].reg_off = ARM_KEEPER_UC_R0 + 4 * 4;
	r[0].only_if = 0x55;
	set_records(r, 1);
	check("record: only_if holds, r4 set", trap_arm(0x55, 0, 0), 0x1234);
	check("record: only_if does not hold, r4 kept", trap_arm(0x56, 0, 0), 0x56);
	r[0].only_if = 0;
	r[1] = r[0];
	r[0].tid = tid + 1;	/* another thread's first */
	r[0].reg_val = 0x9999;
	set_records(r, 2);
	check("record: the thread's own among two", trap_arm(7, 0, 0), 0x1234);

	struct rec other = { .tid = tid + 1, .expect = after, .new_pc = thumb };
	check_dies("record of another thread: not applied", trap_arm, 0, 0, &other, 1);
	struct rec wrong_pc = { .tid = 1, .expect = after + 4, .new_pc = thumb };
	check_dies("record for another pc: not applied", trap_arm, 0, 0, &wrong_pc, 1);
	set_records(NULL, 0);

	/* The kick, the restored sites, the program's own. */
	check("the keeper's kick (A32)", trap_arm(0, 1, lo), 1);
	check("the keeper's kick (Thumb)", trap_thumb(0, 1, lo), 1);
	check_dies("SI_QUEUE with another value", trap_arm, 1, lo ^ 1, NULL, 0);
	check("TRAP_BRKPT on a restored site (A32)", trap_arm(0, 2, 0), 1);
	check("TRAP_BRKPT on a restored site (Thumb)", trap_thumb(0, 2, 0), 1);
	check_dies("TRAP_BRKPT on udf #16 (A32)", trap_arm_udf, 2, 0, NULL, 0);
	check_dies("TRAP_BRKPT on udf #1 (T16)", trap_thumb_udf16, 2, 0, NULL, 0);
	check_dies("TRAP_BRKPT on udf.w (T32)", trap_thumb_udf32, 2, 0, NULL, 0);
	check_dies("the program's own tgkill", trap_thumb, 0, 0, NULL, 0);
	printf("%s: %d failed\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
