/*
 * arm-retpad.c - return probes with no stop on 32-bit ARM: the entry
 * pad's push onto the thread's shadow stack in the process, and the
 * return trampoline (struct arch_ret_pad, arch.h; retprobe.c's essay).
 *
 * As on aarch64 the return address is in a link register at the
 * function's first instruction: lr, whose bit 0 says the caller's
 * instruction set (set: Thumb).  The entry pad, A32 like every pad body
 * (arm-pad.c), right after the register save pushes { sp at entry, lr,
 * CNTVCT, func | run } and writes the trampoline's address into the
 * frame's lr, which the restore loads; the prologue that follows
 * (`push {..., lr}`, often the displaced instruction itself) spills the
 * trampoline's address.  The trampoline is A32 and 4-aligned: its
 * address with bit 0 clear, so that `bx lr`, `pop {..., pc}` and
 * `ldr pc, [sp], #4` (all interworking on ARMv7) enter it in A32 from a
 * Thumb function as from an A32 one.  (A Thumb `mov pc, lr` does not
 * interwork; compilers do not return that way.)
 *
 *   entry:   lr = ret                      lr = tramp        push {sp, ret, t0, f}
 *   return:  pc = tramp, lr = tramp,   ->  pc = lr = ret     pop; record; bx lr
 *            sp = sp at entry
 *
 * The entries keep arch.h's layout of 64-bit words (the high halves of
 * the slot and the real address zero), which the agent reads as on the
 * 64-bit arches; the real address keeps its Thumb bit, and `bx lr`
 * interworks back to the caller's set.
 *
 * A thread's stack is found by its thread pointer (TPIDRURO, `mrc p15,
 * 0, rX, c13, c0, 3`: distinct per live thread, readable in user mode,
 * no system call), hashed as the agent hashes it (the 64-bit golden
 * multiply's top 8 bits, here from umull and mla).  The time is the
 * generic timer's virtual counter CNTVCT (`mrrc p15, 1, rX, rY, c14`,
 * 64 bits), which Linux lets user mode read where the vDSO uses it (the
 * armmp kernel on qemu's cortex-a15 does); its rate is CNTFRQ.  The
 * agent checks both are readable before it builds these pads
 * (arm-ptrace.c), else returns trap.
 *
 * Staleness is the link register's, as aarch64-retpad.c says.
 *
 * Registers: everything but r4 (the frame) is the program's, saved in
 * the frame and reloaded by the restore.  The pushed entry (0: none) and
 * the trampoline wait for emit_ret_stamp in the high halves of the
 * frame's r5 and r6 words, which every reader of the frame drops (the
 * restore loads the low halves; the agent takes 32 bits of each word):
 * the collector between uses every register.  The trampoline keeps the
 * return's time and the record's position in the slot's bytes 16-31,
 * which only the owning thread touches.
 */
#include "config.h"

#include <errno.h>

#include "arch/arm/arm.h"
#include "arch/retpad-common.h"

#define FP 4			/* r4: the frame */
#define FRAME_SP (ARM_SP * 8)
#define FRAME_LR (ARM_LR * 8)
#define STASH_ENTRY (5 * 8 + 4)	/* high half of the frame's r5 */
#define STASH_TRAMP (6 * 8 + 4)	/* high half of the frame's r6 */
#define SLOT_P 16		/* the slot's scratch: the record's position */
#define SLOT_NOW 24		/* the return's counter (64 bits) */

#define A32_DMB 0xf57ff05bu
#define A32_CLREX 0xf57ff01fu
#define A32_SVC 0xef000000u
#define A32_BX_LR 0xe12fff1eu
enum { C_EQ = 0, C_NE = 1, C_HS = 2, C_HI = 8, C_AL = 14 };

static const uint32_t golden_lo = (uint32_t)RET_PAD_HASH,
		      golden_hi = (uint32_t)(RET_PAD_HASH >> 32);

/*
 * Encodings used here (A32, cond AL unless said), beyond arm-pad.c's:
 *   mrc   p15, 0, rt, c13, c0, 3  (TPIDRURO)   ee1d 0f70 | Rt << 12
 *   mrrc  p15, 1, rt, rt2, c14    (CNTVCT)     ec50 0f1e | Rt2 << 16 | Rt << 12
 *   umull rdlo, rdhi, rn, rm      e080 0090 | RdHi << 16 | RdLo << 12 | Rm << 8 | Rn
 *   mla   rd, rn, rm, ra          e020 0090 | Rd << 16 | Ra << 12 | Rm << 8 | Rn
 *   mov   rd, rm, lsr #24         e1a0 0c20 | Rd << 12 | Rm
 *   add   rd, rn, rm, lsl #s      e080 0000 | Rn << 16 | Rd << 12 | s << 7 | Rm
 *   and   rd, rn, #255            e200 00ff | Rn << 16 | Rd << 12
 *   subs  rd, rn, #1              e250 0001      sub rd, rn, #1   e240 0001
 *   subs  rd, rn, rm              e050 0000      sbc rd, rn, rm   e0c0 0000
 *   mvn   rd, #0                  e3e0 0000
 *   cmp   rn, #imm8 / rn, rm      e350 0000 / e150 0000
 *   bx    lr                      e12f ff1e
 * and for the histograms (put_hist):
 *   umlal rdlo, rdhi, rn, rm      e0a0 0090 | RdHi << 16 | RdLo << 12 | Rm << 8 | Rn
 *   ldrexd rt, rt+1, [rn]         e1b0 0f9f | Rn << 16 | Rt << 12   (rt even)
 *   strexd rd, rt, rt+1, [rn]     e1a0 0f90 | Rn << 16 | Rd << 12 | Rt
 *   clz   rd, rm                  e16f 0f10 | Rd << 12 | Rm
 *   rsb   rd, rn, #imm8           e260 0000 | Rn << 16 | Rd << 12 | imm
 *   adds / adc rd, rn, rm         e090 0000 / e0a0 0000
 *   sbcs  rd, rn, rm              e0d0 0000
 */
static void put_ldst(struct arm_out *o, bool load, unsigned int t, unsigned int n,
		     unsigned int off)
{
	arm_put32(o, (load ? 0xe5900000u : 0xe5800000u) | n << 16 | t << 12 | off);
}

static void put_mov32(struct arm_out *o, unsigned int d, uint32_t v)
{
	arm_put32(o, 0xe3000000u | (v >> 12 & 0xf) << 16 | d << 12 | (v & 0xfff));
	if (v >> 16)
		arm_put32(o, 0xe3400000u | (v >> 28) << 16 | d << 12 | (v >> 16 & 0xfff));
}

/* rd = rn + imm (imm < 4096 and 8-aligned, or through rtmp). */
static void put_add_imm(struct arm_out *o, unsigned int d, unsigned int n, uint32_t imm,
			unsigned int tmp)
{
	for (unsigned int rot = 0; rot < 16; rot++) {
		uint32_t r = rot ? (imm << (2 * rot)) | (imm >> (32 - 2 * rot)) : imm;
		if (r < 256) {
			arm_put32(o, 0xe2800000u | n << 16 | d << 12 | rot << 8 | r);
			return;
		}
	}
	put_mov32(o, tmp, imm);
	arm_put32(o, 0xe0800000u | n << 16 | d << 12 | tmp);
}

static void put_cmp(struct arm_out *o, unsigned int n, unsigned int m)
{
	arm_put32(o, 0xe1500000u | n << 16 | m);
}

static void put_cmp_imm(struct arm_out *o, unsigned int n, unsigned int imm8)
{
	arm_put32(o, 0xe3500000u | n << 16 | imm8);
}

static void put_mov(struct arm_out *o, unsigned int d, unsigned int m)
{
	arm_put32(o, 0xe1a00000u | d << 12 | m);
}

static void put_counter(struct arm_out *o, unsigned int lo, unsigned int hi)
{
	arm_put32(o, 0xec500f1eu | hi << 16 | lo << 12);
}

/* Branches whose targets come later (struct retpad_fix): B<cond>, how
 * the condition. */
static uint32_t enc_branch(const struct retpad_fix *f, size_t to)
{
	return arm_enc_b(f->at, to, f->how);
}

static struct retpad_fix put_fwd(struct arm_out *o, unsigned int cond)
{
	struct retpad_fix f = { o->len, cond };

	arm_put32(o, 0);
	return f;
}

static void fix_to(struct arm_out *o, const struct retpad_fix *f, size_t to)
{
	retpad_fix_to(o->buf, o->size, o->overflow, f, to, enc_branch);
}

static void put_back(struct arm_out *o, unsigned int cond, size_t to)
{
	arm_put32(o, arm_enc_b(o->len, to, cond));
}

/*
 * The thread's slot into r8 (the area in r9, the key in r10), or on to
 * the branch returned (no slot: none free, or with claim false none of
 * this thread).  r11 the index, r12 tries; r1-r3 scratch; r0 and r7
 * with a claim (gettid).
 *
 *         movw/movt r9, #area
 *         mrc   p15, 0, r10, c13, c0, 3   TPIDRURO
 *         movw/movt r12, #golden_lo
 *         umull r2, r3, r10, r12
 *         movw/movt r12, #golden_hi
 *         mla   r3, r10, r12, r3          the product's high word
 *         mov   r11, r3, lsr #24          its top 8 bits, as the agent's
 *         movw  r12, #slots
 *   loop: add   r8, r9, r11, lsl #12
 *         add   r8, r8, #4096             slot i at area + 4096 + i * 4096
 *         ldr   r1, [r8]
 *         cmp   r1, r10
 *         beq   found
 *       [ cmp   r1, #0
 *         bne   next                      another thread's
 *         ldrex r1, [r8]                  free: claim it
 *         cmp   r1, #0
 *         bne   lost
 *         strex r2, r10, [r8]
 *         cmp   r2, #0
 *         bne   loop
 *         dmb
 *         mov r7, #224 ; svc #0           gettid, once in a thread's life
 *         str   r0, [r8, #8]
 *         mov   r1, #0 ; str r1, [r8, #12]   n = 0
 *         b     found
 *   lost: clrex
 *         b     loop ]
 *       ( cmp   r1, #0 ; beq none )       trampoline: no slot, no entry
 *   next: add   r11, r11, #1
 *         and   r11, r11, #255
 *         subs  r12, r12, #1
 *         bne   loop
 *         b     none
 *   found:
 */
static struct retpad_fix put_find_slot(struct arm_out *o, const struct arch_ret_pad *r, bool claim,
				struct retpad_fix *none2)
{
	struct retpad_fix f_found, f_next = { 0, 0 }, f_lost = { 0, 0 }, f_found2 = { 0, 0 }, f_none;
	size_t loop;

	put_mov32(o, 9, (uint32_t)r->area);
	arm_put32(o, 0xee1d0f70u | 10 << 12);			/* mrc TPIDRURO */
	put_mov32(o, 12, golden_lo);
	arm_put32(o, 0xe0800090u | 3 << 16 | 2 << 12 | 12 << 8 | 10);	/* umull r2, r3, r10, r12 */
	put_mov32(o, 12, golden_hi);
	arm_put32(o, 0xe0200090u | 3 << 16 | 3 << 12 | 12 << 8 | 10);	/* mla r3, r10, r12, r3 */
	arm_put32(o, 0xe1a00c20u | 11 << 12 | 3);		/* mov r11, r3, lsr #24 */
	put_mov32(o, 12, RET_PAD_SLOTS);
	loop = o->len;
	arm_put32(o, 0xe0800000u | 9 << 16 | 8 << 12 | 12 << 7 | 11);	/* add r8, r9, r11, lsl #12 */
	arm_put32(o, 0xe2800a01u | 8 << 16 | 8 << 12);		/* add r8, r8, #4096 */
	put_ldst(o, true, 1, 8, RET_SLOT_KEY);
	put_cmp(o, 1, 10);
	f_found = put_fwd(o, C_EQ);
	if (claim) {
		put_cmp_imm(o, 1, 0);
		f_next = put_fwd(o, C_NE);
		arm_put32(o, 0xe1900f9fu | 8 << 16 | 1 << 12);	/* ldrex r1, [r8] */
		put_cmp_imm(o, 1, 0);
		f_lost = put_fwd(o, C_NE);
		arm_put32(o, 0xe1800f90u | 8 << 16 | 2 << 12 | 10);	/* strex r2, r10, [r8] */
		put_cmp_imm(o, 2, 0);
		put_back(o, C_NE, loop);
		arm_put32(o, A32_DMB);
		arm_put32(o, 0xe3a07000u | 224);		/* mov r7, #224: gettid */
		arm_put32(o, A32_SVC);
		put_ldst(o, false, 0, 8, RET_SLOT_TID);
		arm_put32(o, 0xe3a01000u);			/* mov r1, #0 */
		put_ldst(o, false, 1, 8, RET_SLOT_DEPTH);
		f_found2 = put_fwd(o, C_AL);
		fix_to(o, &f_lost, o->len);
		arm_put32(o, A32_CLREX);
		put_back(o, C_AL, loop);
	} else {
		put_cmp_imm(o, 1, 0);
		*none2 = put_fwd(o, C_EQ);
	}
	if (claim)
		fix_to(o, &f_next, o->len);
	arm_put32(o, 0xe2800001u | 11 << 16 | 11 << 12);	/* add r11, r11, #1 */
	arm_put32(o, 0xe20000ffu | 11 << 16 | 11 << 12);	/* and r11, r11, #255 */
	arm_put32(o, 0xe2500001u | 12 << 16 | 12 << 12);	/* subs r12, r12, #1 */
	put_back(o, C_NE, loop);
	f_none = put_fwd(o, C_AL);
	fix_to(o, &f_found, o->len);
	if (claim)
		fix_to(o, &f_found2, o->len);
	return f_none;
}

/* r12 = the address of entry n-1 (n in r6, the slot in r8):
 *   add r12, r8, r6, lsl #5 ; add r12, r12, #32 */
static void put_top(struct arm_out *o)
{
	arm_put32(o, 0xe0800000u | 8 << 16 | 12 << 12 | RET_PAD_ENTRY_SHIFT << 7 | 6);
	arm_put32(o, 0xe2800000u | 12 << 16 | 12 << 12 |
		     (RET_SLOT_ENTRIES - RET_PAD_ENTRY_SIZE));
}

/* The low half of a header counter of the area (r9) counted up:
 *   add r1, r9, #off
 *   1: ldrex r2, [r1] ; add r2, r2, #1 ; strex r3, r2, [r1] ; cmp r3, #0 ; bne 1b */
static void put_count(struct arm_out *o, unsigned int off)
{
	size_t again;

	arm_put32(o, 0xe2800000u | 9 << 16 | 1 << 12 | off);
	again = o->len;
	arm_put32(o, 0xe1900f9fu | 1 << 16 | 2 << 12);		/* ldrex r2, [r1] */
	arm_put32(o, 0xe2800001u | 2 << 16 | 2 << 12);		/* add r2, r2, #1 */
	arm_put32(o, 0xe1800f90u | 1 << 16 | 3 << 12 | 2);	/* strex r3, r2, [r1] */
	put_cmp_imm(o, 3, 0);
	put_back(o, C_NE, again);
}

/* retpad_area_ok, and within the 32-bit address space. */
static bool args_ok(const struct arch_ret_pad *r)
{
	return retpad_area_ok(r) && r->area + RET_PAD_AREA_SIZE - 1 <= UINT32_MAX &&
	       r->tramp <= UINT32_MAX;
}

/*
 * The entry, after emit_save_regs (r4 = frame):
 *
 *         <put_find_slot, claim: none -> fallback>
 *         ldr   r1, [r8, #8]
 *         cmp   r1, #0 ; bne 1f           the agent clears the tid of a
 *         mov r7, #224 ; svc #0           thread that exited: the next
 *         str   r0, [r8, #8]              thread of that TCB reads its own
 *   1:    ldr   r6, [r8, #12]             n
 *         ldr   r2, [r4, #104]            sp at the entry: the slot
 *         ldr   r3, [r4, #112]            lr: the return address
 *         movw/movt r5, #tramp
 *   stale:                                entries of frames gone: sp at
 *         cmp   r6, #0 ; beq fresh        or below this one (strictly
 *         <put_top>                       below for a chain)
 *         ldr   r1, [r12]
 *         cmp   r1, r2
 *         bhi   fresh                     above: alive
 *         bne   drop
 *         cmp   r3, r5
 *         beq   fresh                     the same sp, lr the trampoline:
 *   drop: sub   r6, r6, #1                the caller's, a chain's
 *         b     stale
 *   fresh:
 *         cmp   r3, r5
 *         bne   push
 *         cmp   r6, #0 ; beq fallback     a tail call: lr is the
 *         <put_top>                       trampoline already, and the
 *         ldr   r1, [r12]                 newest entry must be that sp's
 *         cmp   r1, r2 ; bne fallback
 *         ldr   r0, [r12, #24] ; movw/movt r1, #func_run lo
 *         cmp   r0, r1 ; bne other
 *         ldr   r0, [r12, #28] ; movw/movt r1, #func_run hi
 *         cmp   r0, r1 ; bne other
 *         str   r12, [r4, #STASH_ENTRY]   this very hit again (the thread
 *         b     end                       went back to the probe): once
 *   other:
 *         ldr   r3, [r12, #8]             its real address
 *   push:
 *         cmp   r6, #depth ; bhs fallback
 *         add   r12, r8, r6, lsl #5
 *         add   r12, r12, #64             entry n
 *         mvn   r1, #0 ; mov r0, #0
 *         str   r1, [r12] ; str r0, [r12, #4]      slot: above all (alive)
 *         add   r1, r6, #1 ; str r1, [r8, #12]     n + 1
 *         str   r3, [r12, #8] ; str r0, [r12, #12] the real address
 *         mrrc  p15, 1, r0, r1, c14
 *         str   r0, [r12, #16] ; str r1, [r12, #20]   the entry's time
 *         movw/movt r0, #func_run lo ; str r0, [r12, #24]
 *         movw/movt r0, #func_run hi ; str r0, [r12, #28]
 *         str   r2, [r12]                 the slot: complete
 *         str   r5, [r4, #112]            with done_at (nothing recorded
 *                                         at the entry): lr = trampoline,
 *                                         at the restore;
 *      (  str   r5, [r4, #STASH_TRAMP] )  else the stamp writes it, after
 *                                         the entry's record
 *         str   r12, [r4, #STASH_ENTRY]   the entry, for the stamp
 *         b     end                       (or *done_at)
 *   fallback:
 *         <put_count FALLBACKS>
 *         mov   r0, #0 ; str r0, [r4, #STASH_ENTRY]   no entry: no stamp
 *         b     (*fallback_at)
 *   end:
 */
int arm_emit_ret_entry(uint8_t *out, size_t size, const struct arch_ret_pad *r,
		       size_t *fallback_at, size_t *done_at)
{
	struct arm_out o = { out, size, 0, 0, false };
	struct retpad_fix f_none, f_tid, f_fresh[3], f_drop, f_push, f_fb[3], f_other[2], f_same,
			  f_end;
	uint32_t fr_lo = (uint32_t)r->func_run, fr_hi = (uint32_t)(r->func_run >> 32);
	size_t stale, fresh;

	if (!args_ok(r))
		return -EINVAL;
	f_none = put_find_slot(&o, r, true, NULL);
	put_ldst(&o, true, 1, 8, RET_SLOT_TID);
	put_cmp_imm(&o, 1, 0);
	f_tid = put_fwd(&o, C_NE);
	arm_put32(&o, 0xe3a07000u | 224);			/* mov r7, #224: gettid */
	arm_put32(&o, A32_SVC);
	put_ldst(&o, false, 0, 8, RET_SLOT_TID);
	fix_to(&o, &f_tid, o.len);
	put_ldst(&o, true, 6, 8, RET_SLOT_DEPTH);
	put_ldst(&o, true, 2, FP, FRAME_SP);
	put_ldst(&o, true, 3, FP, FRAME_LR);
	put_mov32(&o, 5, (uint32_t)r->tramp);
	stale = o.len;
	put_cmp_imm(&o, 6, 0);
	f_fresh[0] = put_fwd(&o, C_EQ);
	put_top(&o);
	put_ldst(&o, true, 1, 12, RET_ENTRY_SLOT);
	put_cmp(&o, 1, 2);
	f_fresh[1] = put_fwd(&o, C_HI);
	f_drop = put_fwd(&o, C_NE);
	put_cmp(&o, 3, 5);
	f_fresh[2] = put_fwd(&o, C_EQ);
	fix_to(&o, &f_drop, o.len);
	arm_put32(&o, 0xe2400001u | 6 << 16 | 6 << 12);	/* sub r6, r6, #1 */
	put_back(&o, C_AL, stale);
	fresh = o.len;
	for (int i = 0; i < 3; i++)
		fix_to(&o, &f_fresh[i], fresh);
	put_cmp(&o, 3, 5);
	f_push = put_fwd(&o, C_NE);
	put_cmp_imm(&o, 6, 0);
	f_fb[0] = put_fwd(&o, C_EQ);
	put_top(&o);
	put_ldst(&o, true, 1, 12, RET_ENTRY_SLOT);
	put_cmp(&o, 1, 2);
	f_fb[1] = put_fwd(&o, C_NE);
	put_ldst(&o, true, 0, 12, RET_ENTRY_FUNC);
	put_mov32(&o, 1, fr_lo);
	put_cmp(&o, 0, 1);
	f_other[0] = put_fwd(&o, C_NE);
	put_ldst(&o, true, 0, 12, RET_ENTRY_FUNC + 4);
	put_mov32(&o, 1, fr_hi);
	put_cmp(&o, 0, 1);
	f_other[1] = put_fwd(&o, C_NE);
	put_ldst(&o, false, 12, FP, STASH_ENTRY);
	f_same = put_fwd(&o, C_AL);
	fix_to(&o, &f_other[0], o.len);
	fix_to(&o, &f_other[1], o.len);
	put_ldst(&o, true, 3, 12, RET_ENTRY_RET);
	fix_to(&o, &f_push, o.len);
	put_cmp_imm(&o, 6, RET_PAD_DEPTH);
	f_fb[2] = put_fwd(&o, C_HS);
	arm_put32(&o, 0xe0800000u | 8 << 16 | 12 << 12 | RET_PAD_ENTRY_SHIFT << 7 |
		      6);						/* add r12, r8, r6, lsl #5 */
	arm_put32(&o, 0xe2800000u | 12 << 16 | 12 << 12 | RET_SLOT_ENTRIES);	/* add r12, r12, #64 */
	arm_put32(&o, 0xe3e01000u);				/* mvn r1, #0 */
	arm_put32(&o, 0xe3a00000u);				/* mov r0, #0 */
	put_ldst(&o, false, 1, 12, RET_ENTRY_SLOT);
	put_ldst(&o, false, 0, 12, RET_ENTRY_SLOT + 4);
	arm_put32(&o, 0xe2800001u | 6 << 16 | 1 << 12);		/* add r1, r6, #1 */
	put_ldst(&o, false, 1, 8, RET_SLOT_DEPTH);
	put_ldst(&o, false, 3, 12, RET_ENTRY_RET);
	put_ldst(&o, false, 0, 12, RET_ENTRY_RET + 4);
	put_counter(&o, 0, 1);
	put_ldst(&o, false, 0, 12, RET_ENTRY_TIME);
	put_ldst(&o, false, 1, 12, RET_ENTRY_TIME + 4);
	put_mov32(&o, 0, fr_lo);
	put_ldst(&o, false, 0, 12, RET_ENTRY_FUNC);
	put_mov32(&o, 0, fr_hi);
	put_ldst(&o, false, 0, 12, RET_ENTRY_FUNC + 4);
	put_ldst(&o, false, 2, 12, RET_ENTRY_SLOT);
	put_ldst(&o, false, 5, FP, done_at ? FRAME_LR : STASH_TRAMP);
	put_ldst(&o, false, 12, FP, STASH_ENTRY);
	f_end = put_fwd(&o, C_AL);
	fix_to(&o, &f_same, f_end.at);
	fix_to(&o, &f_none, o.len);
	for (int i = 0; i < 3; i++)
		fix_to(&o, &f_fb[i], o.len);
	put_count(&o, RET_PAD_FALLBACKS);
	arm_put32(&o, 0xe3a00000u);				/* mov r0, #0 */
	put_ldst(&o, false, 0, FP, STASH_ENTRY);
	*fallback_at = o.len;
	arm_put32(&o, arm_enc_b(0, 0, C_AL));			/* b (patched) */
	if (done_at) {
		*done_at = f_end.at;
		fix_to(&o, &f_end, f_end.at);	/* b . until the caller's patch */
	} else {
		fix_to(&o, &f_end, o.len);
	}
	return retpad_finish(o.overflow, o.len);
}

/*
 * The entry's time again, before the restore of a pad that also records
 * (the frame's stash: the pushed entry, 0 for none, and the trampoline),
 * and only now the trampoline into the frame's lr: the entry's own
 * record, which the collector copied from the frame, holds lr as the
 * program called with it, as a trap's would.
 *
 *         ldr   r0, [r4, #STASH_ENTRY]
 *         cmp   r0, #0
 *         beq   1f
 *         mrrc  p15, 1, r1, r2, c14
 *         str   r1, [r0, #16] ; str r2, [r0, #20]
 *         ldr   r1, [r4, #STASH_TRAMP]
 *         str   r1, [r4, #112]            lr = trampoline, at the restore
 *   1:
 *
 * A hit the collector hands off (a full ring) never comes here: the
 * agent resumes it with the entry's registers at the displaced code, and
 * puts the trampoline in lr itself (retprobe.c ret_pushed_in_pad).
 */
int arm_emit_ret_stamp(uint8_t *out, size_t size)
{
	struct arm_out o = { out, size, 0, 0, false };

	put_ldst(&o, true, 0, FP, STASH_ENTRY);
	put_cmp_imm(&o, 0, 0);
	arm_put32(&o, 0x0a000004u);				/* beq +6 words */
	put_counter(&o, 1, 2);
	put_ldst(&o, false, 1, 0, RET_ENTRY_TIME);
	put_ldst(&o, false, 2, 0, RET_ENTRY_TIME + 4);
	put_ldst(&o, true, 1, FP, STASH_TRAMP);
	put_ldst(&o, false, 1, FP, FRAME_LR);
	return retpad_finish(o.overflow, o.len);
}

/* A 64-bit word at rn counted up by the pair r5:r7 (low, high), or by
 * 1 with one false; r0, r1 and r3 scratch:
 *   1: ldrexd r0, r1, [rn] ; adds r0, r0, r5 ; adc r1, r1, r7
 *      (adds r0, r0, #1 ; adc r1, r1, #0)
 *      strexd r3, r0, r1, [rn] ; cmp r3, #0 ; bne 1b */
static void put_add64(struct arm_out *o, unsigned int n, bool one)
{
	size_t again = o->len;

	arm_put32(o, 0xe1b00f9fu | n << 16 | 0 << 12);		/* ldrexd r0, r1, [rn] */
	if (one) {
		arm_put32(o, 0xe2900001u);			/* adds r0, r0, #1 */
		arm_put32(o, 0xe2a11000u);			/* adc r1, r1, #0 */
	} else {
		arm_put32(o, 0xe0900005u);			/* adds r0, r0, r5 */
		arm_put32(o, 0xe0a11007u);			/* adc r1, r1, r7 */
	}
	arm_put32(o, 0xe1a00f90u | n << 16 | 3 << 12 | 0);	/* strexd r3, r0, r1, [rn] */
	put_cmp_imm(o, 3, 0);
	put_back(o, C_NE, again);
}

/*
 * A return counted in its histogram instead of a record, when the page
 * at r->hist has one in use for the entry (r12; the return's counter in
 * the slot's scratch): on to `popped` by *done, to the record (the code
 * after this) if not.  The words are 64-bit, the arithmetic in pairs of
 * registers (low, high); r0-r3, r5, r7 and r10 are free here.
 *
 *         movw/movt r10, #hist
 *         ldr   r2, [r10, #N]
 *         cmp   r2, #0 ; beq record
 *         ldr   r0, [r12, #24] ; ldr r1, [r12, #28]   the entry's func_run
 *         add   r10, r10, #FIRST
 *   1:    ldr   r3, [r10] ; cmp r3, r0
 *         ldreq r3, [r10, #4] ; cmpeq r3, r1
 *         beq   2f
 *         add   r10, r10, #SIZE
 *         subs  r2, r2, #1 ; bne 1b
 *         b     record
 *   2:    ldr   r0, [r8, #SLOT_NOW] ; ldr r1, [r8, #SLOT_NOW+4]
 *         ldr   r2, [r12, #16] ; ldr r3, [r12, #20]
 *         subs  r0, r0, r2 ; sbcs r1, r1, r3        ticks
 *         movmi r0, #0 ; movmi r1, #0               0 if the counter went back
 *         movw/movt r3, #hist
 *         ldr   r2, [r3, #MULT] ; ldr r3, [r3, #MULT+4]
 *         umull r7, r5, r0, r2                      ns = ticks * MULT >> 32, bits
 *         mov   r7, #0                              32..95 of the product: the
 *         umlal r5, r7, r0, r3                      low words' high word, the
 *         umlal r5, r7, r1, r2                      cross products, the high
 *         mla   r7, r1, r3, r7                      words' low word << 32
 *         add   r2, r10, #SUM
 *         <put_add64 [r2] += r5:r7>
 *         clz   r0, r7 ; cmp r7, #0                 the 64-bit clz
 *         clzeq r0, r5 ; addeq r0, r0, #32
 *         rsb   r0, r0, #63                         k = floor(log2 ns), -1 for 0
 *         cmp   r0, #BUCKETS-1 ; movgt r0, #BUCKETS-1
 *         add   r2, r10, r0, lsl #3
 *         add   r2, r2, #B                          B + 8k: ZERO for k = -1
 *         <put_add64 [r2] += 1>
 *         b     popped
 *   record:
 */
static void put_hist(struct arm_out *o, uint32_t hist, struct retpad_fix *done)
{
	struct retpad_fix none, miss, hit;
	size_t loop;

	put_mov32(o, 10, hist);
	put_ldst(o, true, 2, 10, RET_HIST_N);
	put_cmp_imm(o, 2, 0);
	none = put_fwd(o, C_EQ);
	put_ldst(o, true, 0, 12, RET_ENTRY_FUNC);
	put_ldst(o, true, 1, 12, RET_ENTRY_FUNC + 4);
	put_add_imm(o, 10, 10, RET_HIST_FIRST, 3);
	loop = o->len;
	put_ldst(o, true, 3, 10, RET_HIST_FUNC);
	put_cmp(o, 3, 0);
	arm_put32(o, 0x05900000u | 10 << 16 | 3 << 12 | (RET_HIST_FUNC + 4));	/* ldreq */
	arm_put32(o, 0x01500000u | 3 << 16 | 1);		/* cmpeq r3, r1 */
	hit = put_fwd(o, C_EQ);
	put_add_imm(o, 10, 10, RET_HIST_SIZE, 3);
	arm_put32(o, 0xe2500001u | 2 << 16 | 2 << 12);		/* subs r2, r2, #1 */
	put_back(o, C_NE, loop);
	miss = put_fwd(o, C_AL);
	fix_to(o, &hit, o->len);
	put_ldst(o, true, 0, 8, SLOT_NOW);
	put_ldst(o, true, 1, 8, SLOT_NOW + 4);
	put_ldst(o, true, 2, 12, RET_ENTRY_TIME);
	put_ldst(o, true, 3, 12, RET_ENTRY_TIME + 4);
	arm_put32(o, 0xe0500002u);				/* subs r0, r0, r2 */
	arm_put32(o, 0xe0d11003u);				/* sbcs r1, r1, r3 */
	arm_put32(o, 0x43a00000u);				/* movmi r0, #0 */
	arm_put32(o, 0x43a01000u);				/* movmi r1, #0 */
	put_mov32(o, 3, hist);
	put_ldst(o, true, 2, 3, RET_HIST_MULT);
	put_ldst(o, true, 3, 3, RET_HIST_MULT + 4);
	arm_put32(o, 0xe0800090u | 5 << 16 | 7 << 12 | 2 << 8 | 0);	/* umull r7, r5, r0, r2 */
	arm_put32(o, 0xe3a07000u);				/* mov r7, #0 */
	arm_put32(o, 0xe0a00090u | 7 << 16 | 5 << 12 | 3 << 8 | 0);	/* umlal r5, r7, r0, r3 */
	arm_put32(o, 0xe0a00090u | 7 << 16 | 5 << 12 | 2 << 8 | 1);	/* umlal r5, r7, r1, r2 */
	arm_put32(o, 0xe0200090u | 7 << 16 | 7 << 12 | 3 << 8 | 1);	/* mla r7, r1, r3, r7 */
	put_add_imm(o, 2, 10, RET_HIST_SUM, 3);
	put_add64(o, 2, false);
	arm_put32(o, 0xe16f0f10u | 0 << 12 | 7);		/* clz r0, r7 */
	put_cmp_imm(o, 7, 0);
	arm_put32(o, 0x016f0f10u | 0 << 12 | 5);		/* clzeq r0, r5 */
	arm_put32(o, 0x02800020u);				/* addeq r0, r0, #32 */
	arm_put32(o, 0xe2600000u | 63);				/* rsb r0, r0, #63 */
	put_cmp_imm(o, 0, RET_HIST_BUCKETS - 1);
	arm_put32(o, 0xc3a00000u | (RET_HIST_BUCKETS - 1));	/* movgt r0, #BUCKETS-1 */
	arm_put32(o, 0xe0800180u | 10 << 16 | 2 << 12);		/* add r2, r10, r0, lsl #3 */
	put_add_imm(o, 2, 2, RET_HIST_B, 3);
	put_add64(o, 2, true);
	*done = put_fwd(o, C_AL);
	fix_to(o, &none, o->len);
	fix_to(o, &miss, o->len);
}

/*
 * The trampoline, at r->tramp (A32): the return brought the thread here
 * with lr = the trampoline and sp as at the entry.
 *
 *         <emit_save_regs, pc = tramp>        r4 = frame
 *         <put_find_slot, no claim: none -> orphan>
 *         ldr   r6, [r8, #12]             n
 *         ldr   r11, [r4, #104]           sp: the entry's
 *   pop:  cmp   r6, #0 ; beq orphan       newer entries below it: frames
 *         <put_top>                       longjmp'd over
 *         ldr   r1, [r12]
 *         cmp   r1, r11
 *         bhs   mine
 *         sub   r6, r6, #1 ; str r6, [r8, #12]
 *         b     pop
 *   mine: bne   orphan                    above it: not this one's
 *         ldr   lr, [r12, #8]             the real address (Thumb bit kept)
 *         mrrc  p15, 1, r0, r1, c14       now, into the slot's scratch
 *         str   r0, [r8, #24] ; str r1, [r8, #28]
 *   chain:                                each entry of the sp, innermost
 *         ldr   r5, [r9, #ON]             first
 *         cmp   r5, #0 ; beq popped       nobody takes records
 *         <put_hist, with r->hist: a histogram's return on to popped>
 *         movw/movt r0, #ring             &head (its low half)
 *   retry:                                the record: as the collector
 *         ldr r1, [r0] ; dmb              p = head
 *         movw r3, #nrecords-1 ; and r3, r1, r3
 *         add r2, r0, r3, lsl #shift ; add r2, r2, #off_records
 *         ldr r3, [r2, #off_seq] ; dmb
 *         cmp r3, r1 ; bne notfree
 *         ldrex r5, [r0] ; cmp r5, r1 ; bne lost
 *         add r3, r1, #1 ; strex r5, r3, [r0] ; cmp r5, #0 ; bne retry
 *         dmb ; b claimed
 *   lost: clrex ; b retry
 *   notfree:
 *         ldr r5, [r0] ; dmb ; cmp r5, r1 ; bne retry
 *         b full
 *   claimed:
 *         str r1, [r8, #16]               p, for the publish
 *         mov r0, r4 ; add r3, r2, #off_frame
 *         ldmia r0!, {r1, r5, r7, r10} ; stmia r3!, {...}   the frame, 34 words
 *         vstmia r2, {d0-d15} ; add r0, r2, #128 ; vstmia r0, {d16-d31}
 *         vmrs r5, fpscr ; str r5, [r2, #256]     the image (d0: a float return)
 *         add r3, r2, #off_blocks
 *         ldr r5, [r12, #24] ; str r5, [r3, #FUNC]   (and its high half)
 *         ldr r0, [r8, #24] ; ldr r1, [r8, #28] ; str both at #TSC
 *         ldr r5, [r12, #16] ; subs r0, r0, r5
 *         ldr r5, [r12, #20] ; sbc r1, r1, r5 ; str both at #TICKS
 *         ldr r5, [r8, #8] ; str r5, [r3, #TID]
 *         str lr, [r3, #RET] ; mov r5, #0 ; str r5, [r3, #RET+4]
 *         movw/movt r5, #MAGIC ; str r5, [r3, #MAGIC]
 *         ldr r1, [r8, #16] ; add r5, r1, #1
 *         dmb ; str r5, [r2, #off_seq]    published
 *         b popped
 *   full: <put_count LOST>
 *         udf #16 (*trap_off)             the agent drains the ring and
 *         b chain                         resumes past it: tried again
 *   popped:
 *         sub r6, r6, #1 ; str r6, [r8, #12]
 *         cmp r6, #0 ; beq out
 *         <put_top> ; ldr r1, [r12] ; cmp r1, r11
 *         beq chain                       a tail call's too
 *   out:  str lr, [r4, #112]              lr = the real address
 *         <emit_restore_regs>             every register as the return
 *         bx lr                           left them, lr as `bx lr` would
 *   orphan:                               cannot happen while the
 *         <put_count ORPHANS>             invariants hold
 *         <emit_restore_regs>
 *         udf #16                         the agent reports the thread
 */
int arm_emit_ret_exit(uint8_t *out, size_t size, const struct arch_ret_pad *r,
		      size_t *trap_off)
{
	struct arm_out o = { out, size, 0, 0, false };
	const struct arch_pad_ring *g = &r->ring;
	struct retpad_fix f_none, f_none2, f_orph[2], f_mine, f_popped[3], f_notfree, f_lost;
	struct retpad_fix f_claimed, f_full, f_out;
	size_t pop, chain, retry, popped;
	const unsigned int fb = ARM_PAD_FRAME_WORDS * 8;
	int m;

	/* The ring's head is a 32-bit address (movw/movt), nrecords - 1 a
	 * movw, and the sequence word an ldr / str offset (12 bits); the
	 * histograms' page 32-bit too, its words 8-aligned (ldrexd). */
	if (!args_ok(r) || !retpad_ring_ok(g, ARM_PAD_IMAGE_BYTES, fb) ||
	    g->nrecords > 65536 || g->ring > UINT32_MAX || g->off_seq >= 4096 ||
	    r->hist + RET_HIST_BYTES - 1 > UINT32_MAX || (r->hist & 7))
		return -EINVAL;
	if ((m = arm_emit_save_regs(out, size, r->tramp)) < 0)
		return m;
	o.len = (size_t)m;
	f_none = put_find_slot(&o, r, false, &f_none2);
	put_ldst(&o, true, 6, 8, RET_SLOT_DEPTH);
	put_ldst(&o, true, 11, FP, FRAME_SP);
	pop = o.len;
	put_cmp_imm(&o, 6, 0);
	f_orph[0] = put_fwd(&o, C_EQ);
	put_top(&o);
	put_ldst(&o, true, 1, 12, RET_ENTRY_SLOT);
	put_cmp(&o, 1, 11);
	f_mine = put_fwd(&o, C_HS);
	arm_put32(&o, 0xe2400001u | 6 << 16 | 6 << 12);	/* sub r6, r6, #1 */
	put_ldst(&o, false, 6, 8, RET_SLOT_DEPTH);
	put_back(&o, C_AL, pop);
	fix_to(&o, &f_mine, o.len);
	f_orph[1] = put_fwd(&o, C_NE);
	put_ldst(&o, true, ARM_LR, 12, RET_ENTRY_RET);
	put_counter(&o, 0, 1);
	put_ldst(&o, false, 0, 8, SLOT_NOW);
	put_ldst(&o, false, 1, 8, SLOT_NOW + 4);
	chain = o.len;
	put_ldst(&o, true, 5, 9, RET_PAD_ON);
	put_cmp_imm(&o, 5, 0);
	f_popped[0] = put_fwd(&o, C_EQ);
	if (r->hist)
		put_hist(&o, (uint32_t)r->hist, &f_popped[2]);
	put_mov32(&o, 0, (uint32_t)g->ring);
	retry = o.len;
	put_ldst(&o, true, 1, 0, 0);
	arm_put32(&o, A32_DMB);
	put_mov32(&o, 3, g->nrecords - 1);
	arm_put32(&o, 0xe0000000u | 1 << 16 | 3 << 12 | 3);	/* and r3, r1, r3 */
	arm_put32(&o, 0xe0800000u | 0 << 16 | 2 << 12 | g->record_shift << 7 | 3);
	put_add_imm(&o, 2, 2, g->off_records, 3);
	put_ldst(&o, true, 3, 2, g->off_seq);
	arm_put32(&o, A32_DMB);
	put_cmp(&o, 3, 1);
	f_notfree = put_fwd(&o, C_NE);
	arm_put32(&o, 0xe1900f9fu | 0 << 16 | 5 << 12);		/* ldrex r5, [r0] */
	put_cmp(&o, 5, 1);
	f_lost = put_fwd(&o, C_NE);
	arm_put32(&o, 0xe2800001u | 1 << 16 | 3 << 12);		/* add r3, r1, #1 */
	arm_put32(&o, 0xe1800f90u | 0 << 16 | 5 << 12 | 3);	/* strex r5, r3, [r0] */
	put_cmp_imm(&o, 5, 0);
	put_back(&o, C_NE, retry);
	arm_put32(&o, A32_DMB);
	f_claimed = put_fwd(&o, C_AL);
	fix_to(&o, &f_lost, o.len);
	arm_put32(&o, A32_CLREX);
	put_back(&o, C_AL, retry);
	fix_to(&o, &f_notfree, o.len);
	put_ldst(&o, true, 5, 0, 0);
	arm_put32(&o, A32_DMB);
	put_cmp(&o, 5, 1);
	put_back(&o, C_NE, retry);
	f_full = put_fwd(&o, C_AL);
	fix_to(&o, &f_claimed, o.len);
	put_ldst(&o, false, 1, 8, SLOT_P);
	put_mov(&o, 0, FP);
	put_add_imm(&o, 3, 2, g->off_frame, 5);
	for (unsigned int w = 0; w < fb / 4; w += 4) {
		uint16_t list = 1u << 1 | 1u << 5 | 1u << 7 | 1u << 10;
		if (fb / 4 - w < 4)
			list = fb / 4 - w == 2 ? (1u << 1 | 1u << 5) : list;
		arm_put32(&o, 0xe8b00000u | 0 << 16 | list);	/* ldmia r0!, {list} */
		arm_put32(&o, 0xe8a00000u | 3 << 16 | list);	/* stmia r3!, {list} */
	}
	arm_put32(&o, 0xec800b20u | 2 << 16);			/* vstmia r2, {d0-d15} */
	arm_put32(&o, 0xe2800080u | 2 << 16);			/* add r0, r2, #128 */
	arm_put32(&o, 0xecc00b20u);				/* vstmia r0, {d16-d31} */
	arm_put32(&o, 0xeef10a10u | 5 << 12);			/* vmrs r5, fpscr */
	put_ldst(&o, false, 5, 2, 256);
	put_add_imm(&o, 3, 2, g->off_blocks, 5);
	put_ldst(&o, true, 5, 12, RET_ENTRY_FUNC);
	put_ldst(&o, false, 5, 3, RET_REC_FUNC);
	put_ldst(&o, true, 5, 12, RET_ENTRY_FUNC + 4);
	put_ldst(&o, false, 5, 3, RET_REC_FUNC + 4);
	put_ldst(&o, true, 0, 8, SLOT_NOW);
	put_ldst(&o, true, 1, 8, SLOT_NOW + 4);
	put_ldst(&o, false, 0, 3, RET_REC_TSC);
	put_ldst(&o, false, 1, 3, RET_REC_TSC + 4);
	put_ldst(&o, true, 5, 12, RET_ENTRY_TIME);
	arm_put32(&o, 0xe0500000u | 0 << 16 | 0 << 12 | 5);	/* subs r0, r0, r5 */
	put_ldst(&o, true, 5, 12, RET_ENTRY_TIME + 4);
	arm_put32(&o, 0xe0c00000u | 1 << 16 | 1 << 12 | 5);	/* sbc r1, r1, r5 */
	put_ldst(&o, false, 0, 3, RET_REC_TICKS);
	put_ldst(&o, false, 1, 3, RET_REC_TICKS + 4);
	put_ldst(&o, true, 5, 8, RET_SLOT_TID);
	put_ldst(&o, false, 5, 3, RET_REC_TID);
	put_ldst(&o, false, ARM_LR, 3, RET_REC_RET);
	arm_put32(&o, 0xe3a05000u);				/* mov r5, #0 */
	put_ldst(&o, false, 5, 3, RET_REC_RET + 4);
	put_mov32(&o, 5, RET_REC_MAGIC_VALUE);
	put_ldst(&o, false, 5, 3, RET_REC_MAGIC);
	put_ldst(&o, true, 1, 8, SLOT_P);
	arm_put32(&o, 0xe2800001u | 1 << 16 | 5 << 12);		/* add r5, r1, #1 */
	arm_put32(&o, A32_DMB);
	put_ldst(&o, false, 5, 2, g->off_seq);
	f_popped[1] = put_fwd(&o, C_AL);
	fix_to(&o, &f_full, o.len);
	put_count(&o, RET_PAD_LOST);
	*trap_off = o.len;
	arm_put32(&o, ARM_BKPT_A32);
	put_back(&o, C_AL, chain);
	popped = o.len;
	fix_to(&o, &f_popped[0], popped);
	fix_to(&o, &f_popped[1], popped);
	if (r->hist)
		fix_to(&o, &f_popped[2], popped);
	arm_put32(&o, 0xe2400001u | 6 << 16 | 6 << 12);	/* sub r6, r6, #1 */
	put_ldst(&o, false, 6, 8, RET_SLOT_DEPTH);
	put_cmp_imm(&o, 6, 0);
	f_out = put_fwd(&o, C_EQ);
	put_top(&o);
	put_ldst(&o, true, 1, 12, RET_ENTRY_SLOT);
	put_cmp(&o, 1, 11);
	put_back(&o, C_EQ, chain);
	fix_to(&o, &f_out, o.len);
	put_ldst(&o, false, ARM_LR, FP, FRAME_LR);
	if ((m = retpad_append(out, size, &o.len, arm_emit_restore_regs)) < 0)
		return m;
	arm_put32(&o, A32_BX_LR);
	fix_to(&o, &f_none, o.len);
	fix_to(&o, &f_none2, o.len);
	fix_to(&o, &f_orph[0], o.len);
	fix_to(&o, &f_orph[1], o.len);
	put_count(&o, RET_PAD_ORPHANS);
	if ((m = retpad_append(out, size, &o.len, arm_emit_restore_regs)) < 0)
		return m;
	arm_put32(&o, ARM_BKPT_A32);
	return retpad_finish(o.overflow, o.len);
}
