/*
 * arm-keeper-handler.h - the keeper's SIGTRAP handler for 32-bit ARM, as
 * machine code: agent/arm-ptrace.c gives it to the keeper
 * (ptrace_keeper_ops), and tests/keeper/arm-keeper-handler.c runs it on
 * the CPU (qemu-arm-static on other hosts).  Plain data: no agent types.
 */
#ifndef PROBE_AGENT_ARM_KEEPER_HANDLER_H
#define PROBE_AGENT_ARM_KEEPER_HANDLER_H

#include <stdint.h>

/*
 * The keeper's SIGTRAP handler (ptrace_keeper_ops), position-independent
 * A32 code at the start of its page (the record table at
 * KEEPER_PAGE_TABLE, a zeroed sigaction at KEEPER_PAGE_DFL).  The
 * kernel enters a handler whose address has bit 0 clear in ARM state,
 * with cpsr.T and ITSTATE cleared, whatever the thread ran: r0 = signal,
 * r1 = siginfo, r2 = ucontext, lr = the restorer (SA_RESTORER, A32).
 * Every register but sp and lr may be clobbered (rt_sigreturn reloads
 * them all from the ucontext), and a system call changes only r0.  The
 * ucontext's uc_mcontext is the kernel's struct sigcontext (trap_no,
 * error_code, oldmask, r0..r10, fp, ip, sp, lr, pc, cpsr) at offset 20:
 * r0 at 32, pc at 92, cpsr at 96 (asserted in arm-ptrace.c).  siginfo (32-bit):
 * si_code at 8, si_pid at 12, si_value at 20.  The record's words are
 * read as their low halves (little-endian): the table's u64 expected pc,
 * new pc, register offset, value and only_if, and the magic, of which
 * the kick's 32-bit si_value carries the low half too.
 *
 * A record's new pc with bit 0 set turns cpsr.T on, the way `bx` takes
 * an address: the return trampoline (an A32 udf) hands a Thumb caller's
 * real return address over with it.  Bit 0 clear leaves the thread's
 * instruction set as it is: a Thumb probe's slot runs in Thumb, and the
 * thread goes back to the probe in Thumb.  ITSTATE is never touched: no
 * slot copy, trampoline or restored site is inside an IT block (doc/arm.md).
 *
 * A udf breakpoint leaves the pc at it (TRAP_BRKPT), so a thread that
 * trapped on a site the keeper restored just returns and runs the
 * program's instruction; one still on a Linux breakpoint encoding of the
 * set cpsr.T names (A32 udf #16, T16 udf #1, T32 udf.w) trapped on the
 * program's own and gets the default action.  There is no hardware
 * single step to disarm: a software step's temporary breakpoints are
 * sites, restored like the probes'.  Assembled with arm-linux-gnueabihf-as
 * -march=armv7-a, words checked with arm-linux-gnueabihf-objdump.
 */
static const uint32_t arm_keeper_handler[] = {
	0xe24fc008,	/*   0: h: sub r12, pc, #8           r12 = h */
	0xe1a04001,	/*   4: mov r4, r1                   siginfo */
	0xe1a05002,	/*   8: mov r5, r2                   ucontext */
	0xe3a070e0,	/*   c: mov r7, #224                 SYS_gettid */
	0xef000000,	/*  10: svc #0 */
	0xe1a06000,	/*  14: mov r6, r0                   tid */
	0xe28c8b01,	/*  18: add r8, r12, #1024           the table */
	0xe5989000,	/*  1c: ldr r9, [r8]                 records */
	0xe288a010,	/*  20: add r10, r8, #16 */
	0xe3590000,	/*  24: 1: cmp r9, #0 */
	0x0a00001c,	/*  28: beq none */
	0xe59ab000,	/*  2c: ldr r11, [r10]               rec.tid */
	0xe15b0006,	/*  30: cmp r11, r6 */
	0x1a000016,	/*  34: bne next */
	0xe59ab008,	/*  38: ldr r11, [r10, #8]           rec.expect */
	0xe595305c,	/*  3c: ldr r3, [r5, #92]            uc pc */
	0xe15b0003,	/*  40: cmp r11, r3 */
	0x1a000012,	/*  44: bne next */
	0xe59ab010,	/*  48: ldr r11, [r10, #16]          rec.new */
	0xe31b0001,	/*  4c: tst r11, #1 */
	0x15953060,	/*  50: ldrne r3, [r5, #96] */
	0x13833020,	/*  54: orrne r3, r3, #0x20 */
	0x15853060,	/*  58: strne r3, [r5, #96]          bit 0: cpsr.T on */
	0xe3cbb001,	/*  5c: bic r11, r11, #1 */
	0xe585b05c,	/*  60: str r11, [r5, #92]           pc = rec.new */
	0xe59ab018,	/*  64: ldr r11, [r10, #24]          register offset */
	0xe35b0000,	/*  68: cmp r11, #0 */
	0x0a000007,	/*  6c: beq 2f */
	0xe59a3028,	/*  70: ldr r3, [r10, #40]           rec.only_if */
	0xe3530000,	/*  74: cmp r3, #0 */
	0x0a000002,	/*  78: beq 3f */
	0xe795200b,	/*  7c: ldr r2, [r5, r11] */
	0xe1530002,	/*  80: cmp r3, r2 */
	0x1a000001,	/*  84: bne 2f                       it holds something else */
	0xe59a3020,	/*  88: 3: ldr r3, [r10, #32] */
	0xe785300b,	/*  8c: str r3, [r5, r11]            the register's value */
	0xe12fff1e,	/*  90: 2: bx lr */
	0xe28aa040,	/*  94: next: add r10, r10, #64 */
	0xe2499001,	/*  98: sub r9, r9, #1 */
	0xeaffffe0,	/*  9c: b 1b */
	0xe594b008,	/*  a0: none: ldr r11, [r4, #8]      si_code */
	0xe37b0001,	/*  a4: cmn r11, #1                  SI_QUEUE */
	0x1a000003,	/*  a8: bne 1f */
	0xe5983008,	/*  ac: ldr r3, [r8, #8]             magic (low word) */
	0xe5942014,	/*  b0: ldr r2, [r4, #20]            si_value */
	0xe1530002,	/*  b4: cmp r3, r2 */
	0x012fff1e,	/*  b8: bxeq lr                      the keeper's kick */
	0xe35b0001,	/*  bc: 1: cmp r11, #1               TRAP_BRKPT */
	0x1a000013,	/*  c0: bne dfl */
	0xe595305c,	/*  c4: ldr r3, [r5, #92]            pc */
	0xe5952060,	/*  c8: ldr r2, [r5, #96]            cpsr */
	0xe3120020,	/*  cc: tst r2, #0x20 */
	0x1a000005,	/*  d0: bne thumb */
	0xe5932000,	/*  d4: ldr r2, [r3]                 the A32 word at pc */
	0xe30011f0,	/*  d8: movw r1, #0x01f0 */
	0xe34e17f0,	/*  dc: movt r1, #0xe7f0 */
	0xe1520001,	/*  e0: cmp r2, r1 */
	0x0a00000a,	/*  e4: beq dfl                      udf #16: the program's own */
	0xe12fff1e,	/*  e8: bx lr                        a restored site: run it */
	0xe1d320b0,	/*  ec: thumb: ldrh r2, [r3]         the halfword at pc */
	0xe30d1e01,	/*  f0: movw r1, #0xde01 */
	0xe1520001,	/*  f4: cmp r2, r1 */
	0x0a000005,	/*  f8: beq dfl                      udf #1 */
	0xe30f17f0,	/*  fc: movw r1, #0xf7f0 */
	0xe1520001,	/* 100: cmp r2, r1 */
	0x112fff1e,	/* 104: bxne lr                      a restored site: run it */
	0xe1d320b2,	/* 108: ldrh r2, [r3, #2] */
	0xe3520a0a,	/* 10c: cmp r2, #0xa000 */
	0x112fff1e,	/* 110: bxne lr                      not udf.w f7f0 a000 */
	0xe3a00005,	/* 114: dfl: mov r0, #5              SIGTRAP */
	0xe28c1e3e,	/* 118: add r1, r12, #992            zeroes: SIG_DFL */
	0xe3a02000,	/* 11c: mov r2, #0 */
	0xe3a03008,	/* 120: mov r3, #8 */
	0xe3a070ae,	/* 124: mov r7, #174                 SYS_rt_sigaction */
	0xef000000,	/* 128: svc #0 */
	0xe3a07014,	/* 12c: mov r7, #20                  SYS_getpid */
	0xef000000,	/* 130: svc #0 */
	0xe1a01006,	/* 134: mov r1, r6 */
	0xe3a02005,	/* 138: mov r2, #5 */
	0xe300710c,	/* 13c: movw r7, #268                SYS_tgkill */
	0xef000000,	/* 140: svc #0                       pending until sigreturn */
	0xe12fff1e,	/* 144: bx lr */
	0xe3a070ad,	/* 148: restorer: mov r7, #173       SYS_rt_sigreturn */
	0xef000000,	/* 14c: svc #0 */
};

/* The rt_sigreturn restorer: the handler's last two words. */
#define ARM_KEEPER_RESTORER 0x148
/* In the handler's ucontext: r0 (r1..r14 follow), pc, cpsr. */
#define ARM_KEEPER_UC_R0 32
#define ARM_KEEPER_UC_PC 92
#define ARM_KEEPER_UC_CPSR 96

#endif
