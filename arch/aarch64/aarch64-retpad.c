/*
 * aarch64-retpad.c - return probes with no stop on aarch64: the entry
 * pad's push onto the thread's shadow stack in the process, and the
 * return trampoline (struct arch_ret_pad, arch.h; retprobe.c's essay).
 *
 * At a function's first instruction the return address is in x30, not
 * on the stack: the entry pad, right after the register save, pushes
 * { sp at entry, x30, CNTVCT_EL0, func | run } and writes the
 * trampoline's address into the frame's x30, which the restore loads.
 * The prologue that follows (often `stp x29, x30, [sp, #-N]!`, the
 * displaced instruction itself) therefore spills the trampoline's
 * address, as x86-64's stack slot holds it; `ret` brings the thread to
 * the trampoline with sp as at the entry:
 *
 *   entry:   x30 = ret                     x30 = tramp       push {sp, ret, t0, f}
 *   return:  pc = tramp, x30 = tramp,  ->  pc = x30 = ret    pop; record; ret
 *            sp = sp at entry
 *
 * A thread's stack is found by its thread pointer (TPIDR_EL0: distinct
 * per live thread, readable at EL0, no system call), hashed into the
 * area's open-addressed slots as on x86-64.  The time is the virtual
 * counter CNTVCT_EL0 (readable at EL0 on Linux; one rate on every CPU,
 * CNTFRQ_EL0), which the agent converts as it converts the TSC.
 *
 * Staleness is the link register's (the kernel's uretprobe rule), as the
 * trap path keeps it: at an entry, entries whose sp is at or below the
 * new sp are gone (strictly below when x30 already holds the trampoline:
 * a tail call chains on the entry of the same sp); at a return, newer
 * entries below the returning one's sp are gone (longjmp).
 *
 * Registers: everything but x19 (the frame) is the program's, saved in
 * the frame and reloaded by the restore.  x27 keeps the pushed entry (0:
 * none) and x28 the trampoline across the collector, for emit_ret_stamp.
 */
#include "config.h"

#include <errno.h>

#include "arch/aarch64/aarch64.h"
#include "arch/retpad-common.h"

#define FP 19
#define FRAME_X30 240
#define FRAME_SP 248
#define ENTRY 27		/* the pushed entry, for the stamp */
#define TRAMP_REG 28		/* the trampoline, for the stamp */

/*
 * Encodings used here beyond aarch64-pad.c's list:
 *   mrs  xt, tpidr_el0         d53bd040 | Rt
 *   mrs  xt, cntvct_el0        d53be040 | Rt
 *   madd xd, xn, xm, xzr       9b007c00 | Rm << 16 | Rn << 5 | Rd   (mul)
 *   lsr  xd, xn, #56           d378fc00 | Rn << 5 | Rd   (ubfm #56, #63)
 *   add  xd, xn, xm, lsl #s    8b000000 | Rm << 16 | s << 10 | Rn << 5 | Rd
 *   add  xd, xn, #1, lsl #12   91400400 | Rn << 5 | Rd
 *   sub  xd, xn, xm            cb000000 | Rm << 16 | Rn << 5 | Rd
 *   ldr  wt, [xn, #4*i]        b9400000 | i << 10 | Rn << 5 | Rt
 *   subs wd, wn, #1            71000400 | Rn << 5 | Rd
 *   sub  wd, wn, #1            51000400 | Rn << 5 | Rd
 *   cmp  wn, #imm12            7100001f | imm << 10 | Rn << 5
 *   cbz / cbnz xt              b4000000 / b5000000 | imm19 << 5 | Rt
 *   cbz / cbnz wt              34000000 / 35000000
 *   movn xd, #0  (mov xd, #-1) 92800000 | Rd
 *   mov  xd, xn  (orr)         aa0003e0 | Rm << 16 | Rd
 *   ret                        d65f03c0
 */
enum { C_EQ = 0, C_NE = 1, C_HS = 2, C_HI = 8 };

static void put_ldst(struct aarch64_out *o, bool load, unsigned int t,
		     unsigned int n, unsigned int off)
{
	aarch64_put32(o, (load ? 0xf9400000u : 0xf9000000u) | (off / 8) << 10 |
			 n << 5 | t);
}

static void put_ldst_w(struct aarch64_out *o, bool load, unsigned int t,
		       unsigned int n, unsigned int off)
{
	aarch64_put32(o, (load ? 0xb9400000u : 0xb9000000u) | (off / 4) << 10 |
			 n << 5 | t);
}

static void put_pair(struct aarch64_out *o, bool load, unsigned int t,
		     unsigned int t2, unsigned int n, unsigned int off)
{
	aarch64_put32(o, (load ? 0xa9400000u : 0xa9000000u) | (off / 8) << 15 |
			 t2 << 10 | n << 5 | t);
}

static void put_mov(struct aarch64_out *o, unsigned int d, unsigned int m)
{
	aarch64_put32(o, 0xaa0003e0u | m << 16 | d);
}

static void put_cmp(struct aarch64_out *o, unsigned int n, unsigned int m)
{
	aarch64_put32(o, 0xeb00001fu | m << 16 | n << 5);
}

/*
 * Branches whose targets come later (struct retpad_fix): how = kind |
 * arg << 8 | wide << 16.  kind: 'b' (B), 'c' (B.cond, arg the
 * condition), 'z' / 'n' (CBZ / CBNZ on register arg, 64-bit with wide,
 * else 32-bit).
 */
#define HOW(kind, arg, wide) ((uint32_t)(kind) | (arg) << 8 | (uint32_t)(wide) << 16)

static uint32_t enc_branch(const struct retpad_fix *f, size_t to)
{
	int64_t d = ((int64_t)to - (int64_t)f->at) >> 2;
	char kind = (char)(f->how & 0xff);
	uint32_t arg = f->how >> 8 & 0xff;
	bool wide = f->how >> 16 & 1;

	switch (kind) {
	case 'b':
		return 0x14000000u | ((uint32_t)d & 0x3ffffff);
	case 'c':
		return 0x54000000u | ((uint32_t)d & 0x7ffff) << 5 | arg;
	case 'z':
	case 'n':
		return (kind == 'z' ? 0x34000000u : 0x35000000u) |
		       (wide ? 0x80000000u : 0) | ((uint32_t)d & 0x7ffff) << 5 | arg;
	}
	return 0;
}

static struct retpad_fix put_fwd(struct aarch64_out *o, char kind, unsigned int arg,
				 bool wide)
{
	struct retpad_fix f = { o->len, HOW(kind, arg, wide) };

	aarch64_put32(o, 0);
	return f;
}

static void fix_to(struct aarch64_out *o, const struct retpad_fix *f, size_t to)
{
	retpad_fix_to(o->buf, o->size, o->overflow, f, to, enc_branch);
}

static void put_back(struct aarch64_out *o, char kind, unsigned int arg, bool wide,
		     size_t to)
{
	struct retpad_fix f = put_fwd(o, kind, arg, wide);

	fix_to(o, &f, to);
}

/*
 * The thread's slot into x13 (its key, the thread pointer, in x10; the
 * area in x9), or on to the branch returned (no slot: none free, or
 * with claim false none of this thread).  x11 hash index, x12 tries,
 * x14, x15 scratch; x0 and x8 with a claim (gettid).
 *
 *         movz/movk x9, #area
 *         mrs   x10, tpidr_el0
 *         movz/movk x12, #golden
 *         mul   x11, x10, x12
 *         lsr   x11, x11, #56             the hash's top 8 bits
 *         movz  x12, #slots
 *   loop: add   x13, x9, x11, lsl #12
 *         add   x13, x13, #1, lsl #12     slot i at area + 4096 + i * 4096
 *         ldr   x14, [x13]
 *         cmp   x14, x10
 *         b.eq  found
 *       [ cbnz  x14, next                 another thread's
 *         ldaxr x14, [x13]                free: claim it
 *         cbnz  x14, lost
 *         stlxr w15, x10, [x13]
 *         cbnz  w15, loop
 *         mov x8, #178 ; svc #0           gettid, once in a thread's life
 *         str   w0, [x13, #8]
 *         str   wzr, [x13, #12]           n = 0
 *         b     found
 *   lost: clrex
 *         b     loop ]
 *       ( cbz   x14, none )               trampoline: no slot, no entry
 *   next: add   x11, x11, #1
 *         and   x11, x11, #slots-1        (and x11, x11, x14 = slots-1)
 *         subs  w12, w12, #1
 *         b.ne  loop
 *         b     none
 *   found:
 */
static struct retpad_fix put_find_slot(struct aarch64_out *o, const struct arch_ret_pad *r,
				bool claim, struct retpad_fix *none2)
{
	struct retpad_fix f_found, f_next, f_lost, f_found2, f_none;
	size_t loop, next;

	aarch64_emit_mov_imm(o, 9, r->area);
	aarch64_put32(o, 0xd53bd040u | 10);			/* mrs x10, tpidr_el0 */
	aarch64_emit_mov_imm(o, 12, RET_PAD_HASH);
	aarch64_put32(o, 0x9b007c00u | 12 << 16 | 10 << 5 | 11);	/* mul x11, x10, x12 */
	aarch64_put32(o, 0xd378fc00u | 11 << 5 | 11);		/* lsr x11, x11, #56 */
	aarch64_emit_mov_imm(o, 12, RET_PAD_SLOTS);
	loop = o->len;
	aarch64_put32(o, 0x8b000000u | 11 << 16 | 12 << 10 | 9 << 5 | 13);
	aarch64_put32(o, 0x91400400u | 13 << 5 | 13);
	put_ldst(o, true, 14, 13, RET_SLOT_KEY);
	put_cmp(o, 14, 10);
	f_found = put_fwd(o, 'c', C_EQ, false);
	if (claim) {
		f_next = put_fwd(o, 'n', 14, true);
		aarch64_put32(o, 0xc85ffc00u | 13 << 5 | 14);	/* ldaxr x14, [x13] */
		f_lost = put_fwd(o, 'n', 14, true);
		aarch64_put32(o, 0xc800fc00u | 15 << 16 | 13 << 5 | 10);	/* stlxr w15, x10 */
		put_back(o, 'n', 15, false, loop);
		aarch64_emit_mov_imm(o, 8, 178);
		aarch64_put32(o, 0xd4000001u);			/* svc #0: gettid */
		put_ldst_w(o, false, 0, 13, RET_SLOT_TID);
		put_ldst_w(o, false, 31, 13, RET_SLOT_DEPTH);
		f_found2 = put_fwd(o, 'b', 0, false);
		fix_to(o, &f_lost, o->len);
		aarch64_put32(o, 0xd503305fu);			/* clrex */
		put_back(o, 'b', 0, false, loop);
	} else {
		*none2 = put_fwd(o, 'z', 14, true);
	}
	next = o->len;
	if (claim)
		fix_to(o, &f_next, next);
	aarch64_put32(o, 0x91000400u | 11 << 5 | 11);		/* add x11, x11, #1 */
	aarch64_emit_mov_imm(o, 14, RET_PAD_SLOTS - 1);
	aarch64_put32(o, 0x8a000000u | 14 << 16 | 11 << 5 | 11);	/* and x11, x11, x14 */
	aarch64_put32(o, 0x71000400u | 12 << 5 | 12);		/* subs w12, w12, #1 */
	put_back(o, 'c', C_NE, false, loop);
	f_none = put_fwd(o, 'b', 0, false);
	fix_to(o, &f_found, o->len);
	if (claim)
		fix_to(o, &f_found2, o->len);
	return f_none;
}

/* x22 = the address of entry n-1 (n in x15, the slot in x13):
 *   add x22, x13, x15, lsl #5 ; add x22, x22, #32 */
static void put_top(struct aarch64_out *o)
{
	aarch64_put32(o, 0x8b000000u | 15 << 16 | RET_PAD_ENTRY_SHIFT << 10 | 13 << 5 | 22);
	aarch64_put32(o, 0x91000000u | (RET_SLOT_ENTRIES - RET_PAD_ENTRY_SIZE) << 10 |
			 22 << 5 | 22);
}

/* A header counter of the area (x9) counted up:
 *   add x23, x9, #off
 *   1: ldaxr x24, [x23] ; add x24, x24, #1 ; stlxr w25, x24, [x23] ; cbnz w25, 1b */
static void put_count(struct aarch64_out *o, unsigned int off)
{
	size_t again;

	aarch64_put32(o, 0x91000000u | off << 10 | 9 << 5 | 23);
	again = o->len;
	aarch64_put32(o, 0xc85ffc00u | 23 << 5 | 24);
	aarch64_put32(o, 0x91000400u | 24 << 5 | 24);
	aarch64_put32(o, 0xc800fc00u | 25 << 16 | 23 << 5 | 24);
	put_back(o, 'n', 25, false, again);
}

/*
 * The entry, after emit_save_regs (x19 = frame):
 *
 *         <put_find_slot, claim: none -> fallback>
 *         ldr   w14, [x13, #8]
 *         cbnz  w14, 1f                   the agent clears the tid of a
 *         mov x8, #178 ; svc #0           thread that exited: the next
 *         str   w0, [x13, #8]             thread of that TCB reads its own
 *   1:    ldr   w15, [x13, #12]           n
 *         ldr   x16, [x19, #248]          sp at the entry: the slot
 *         ldr   x17, [x19, #240]          x30: the return address
 *         movz/movk x21, #tramp
 *   stale:                                entries of frames gone: sp at
 *         cbz   w15, fresh                or below this one (strictly
 *         <put_top>                       below for a chain)
 *         ldr   x23, [x22]
 *         cmp   x23, x16
 *         b.hi  fresh                     above: alive
 *         b.ne  drop
 *         cmp   x17, x21
 *         b.eq  fresh                     the same sp, and x30 the
 *   drop: sub   w15, w15, #1              trampoline: the caller's, a
 *         b     stale                     chain's
 *   fresh:
 *         cmp   x17, x21
 *         b.ne  push
 *         cbz   w15, fallback             a tail call: x30 is the
 *         <put_top>                       trampoline already, and the
 *         ldr   x23, [x22]                newest entry must be that sp's
 *         cmp   x23, x16
 *         b.ne  fallback
 *         movz/movk x24, #func_run
 *         ldr   x25, [x22, #24]
 *         cmp   x25, x24
 *         b.ne  other
 *         mov   x27, x22                  this very hit again (the thread
 *         b     end                       went back to the probe): once
 *   other:
 *         ldr   x17, [x22, #8]            its real address
 *   push:
 *         cmp   w15, #depth
 *         b.hs  fallback
 *         add   x22, x13, x15, lsl #5
 *         add   x22, x22, #64             entry n
 *         mov   x23, #-1
 *         str   x23, [x22]                slot: above all (alive)
 *         add   w24, w15, #1
 *         str   w24, [x13, #12]           n + 1
 *         str   x17, [x22, #8]            the real address
 *         mrs   x23, cntvct_el0
 *         str   x23, [x22, #16]           the entry's time
 *         movz/movk x24, #func_run
 *         str   x24, [x22, #24]
 *         str   x16, [x22]                the slot: complete
 *         str   x21, [x19, #240]          with done_at (nothing recorded
 *                                         at the entry): x30 = trampoline,
 *                                         at the restore;
 *      (  mov   x28, x21 )                else the stamp writes it, after
 *                                         the entry's record
 *         mov   x27, x22                  the entry, for the stamp
 *         b     end                       (or *done_at)
 *   fallback:
 *         <put_count FALLBACKS>
 *         mov   x27, xzr                  no entry: no stamp
 *         b     (*fallback_at)
 *   end:
 */
int aarch64_emit_ret_entry(uint8_t *out, size_t size, const struct arch_ret_pad *r,
			   size_t *fallback_at, size_t *done_at)
{
	struct aarch64_out o = { out, size, 0, 0, false };
	struct retpad_fix f_none, f_tid, f_fresh[3], f_drop, f_push, f_fb[3], f_other, f_same, f_end;
	size_t stale, fresh;

	if (!retpad_area_ok(r))
		return -EINVAL;
	f_none = put_find_slot(&o, r, true, NULL);
	put_ldst_w(&o, true, 14, 13, RET_SLOT_TID);
	f_tid = put_fwd(&o, 'n', 14, false);
	aarch64_emit_mov_imm(&o, 8, 178);
	aarch64_put32(&o, 0xd4000001u);
	put_ldst_w(&o, false, 0, 13, RET_SLOT_TID);
	fix_to(&o, &f_tid, o.len);
	put_ldst_w(&o, true, 15, 13, RET_SLOT_DEPTH);
	put_ldst(&o, true, 16, FP, FRAME_SP);
	put_ldst(&o, true, 17, FP, FRAME_X30);
	aarch64_emit_mov_imm(&o, 21, r->tramp);
	stale = o.len;
	f_fresh[0] = put_fwd(&o, 'z', 15, false);
	put_top(&o);
	put_ldst(&o, true, 23, 22, RET_ENTRY_SLOT);
	put_cmp(&o, 23, 16);
	f_fresh[1] = put_fwd(&o, 'c', C_HI, false);
	f_drop = put_fwd(&o, 'c', C_NE, false);
	put_cmp(&o, 17, 21);
	f_fresh[2] = put_fwd(&o, 'c', C_EQ, false);
	fix_to(&o, &f_drop, o.len);
	aarch64_put32(&o, 0x51000400u | 15 << 5 | 15);		/* sub w15, w15, #1 */
	put_back(&o, 'b', 0, false, stale);
	fresh = o.len;
	for (int i = 0; i < 3; i++)
		fix_to(&o, &f_fresh[i], fresh);
	put_cmp(&o, 17, 21);
	f_push = put_fwd(&o, 'c', C_NE, false);
	f_fb[0] = put_fwd(&o, 'z', 15, false);
	put_top(&o);
	put_ldst(&o, true, 23, 22, RET_ENTRY_SLOT);
	put_cmp(&o, 23, 16);
	f_fb[1] = put_fwd(&o, 'c', C_NE, false);
	aarch64_emit_mov_imm(&o, 24, r->func_run);
	put_ldst(&o, true, 25, 22, RET_ENTRY_FUNC);
	put_cmp(&o, 25, 24);
	f_other = put_fwd(&o, 'c', C_NE, false);
	put_mov(&o, ENTRY, 22);
	f_same = put_fwd(&o, 'b', 0, false);
	fix_to(&o, &f_other, o.len);
	put_ldst(&o, true, 17, 22, RET_ENTRY_RET);
	fix_to(&o, &f_push, o.len);
	aarch64_put32(&o, 0x7100001fu | RET_PAD_DEPTH << 10 | 15 << 5);	/* cmp w15, #depth */
	f_fb[2] = put_fwd(&o, 'c', C_HS, false);
	aarch64_put32(&o, 0x8b000000u | 15 << 16 | RET_PAD_ENTRY_SHIFT << 10 | 13 << 5 | 22);
	aarch64_put32(&o, 0x91000000u | RET_SLOT_ENTRIES << 10 | 22 << 5 | 22);
	aarch64_put32(&o, 0x92800000u | 23);			/* mov x23, #-1 */
	put_ldst(&o, false, 23, 22, RET_ENTRY_SLOT);
	aarch64_put32(&o, 0x11000400u | 15 << 5 | 24);		/* add w24, w15, #1 */
	put_ldst_w(&o, false, 24, 13, RET_SLOT_DEPTH);
	put_ldst(&o, false, 17, 22, RET_ENTRY_RET);
	aarch64_put32(&o, 0xd53be040u | 23);			/* mrs x23, cntvct_el0 */
	put_ldst(&o, false, 23, 22, RET_ENTRY_TIME);
	aarch64_emit_mov_imm(&o, 24, r->func_run);
	put_ldst(&o, false, 24, 22, RET_ENTRY_FUNC);
	put_ldst(&o, false, 16, 22, RET_ENTRY_SLOT);
	if (done_at)
		put_ldst(&o, false, 21, FP, FRAME_X30);
	else
		put_mov(&o, TRAMP_REG, 21);
	put_mov(&o, ENTRY, 22);
	f_end = put_fwd(&o, 'b', 0, false);
	fix_to(&o, &f_same, f_end.at);
	fix_to(&o, &f_none, o.len);
	for (int i = 0; i < 3; i++)
		fix_to(&o, &f_fb[i], o.len);
	put_count(&o, RET_PAD_FALLBACKS);
	put_mov(&o, ENTRY, 31);					/* mov x27, xzr */
	*fallback_at = o.len;
	aarch64_put32(&o, 0x14000000u);				/* b (patched) */
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
 * (x27: the pushed entry, 0 for none; x28: the trampoline), and only now
 * the trampoline into the frame's x30: the entry's own record, which the
 * collector copied from the frame, holds x30 as the program called with
 * it, as a trap's would.
 *
 *         cbz   x27, 1f
 *         mrs   x26, cntvct_el0
 *         str   x26, [x27, #16]
 *         str   x28, [x19, #240]       x30 = trampoline, at the restore
 *   1:
 *
 * A hit the collector hands off (a full ring) never comes here: the
 * agent resumes it with the entry's registers at the displaced code, and
 * puts the trampoline in x30 itself (retprobe.c ret_pushed_in_pad).
 */
int aarch64_emit_ret_stamp(uint8_t *out, size_t size)
{
	struct aarch64_out o = { out, size, 0, 0, false };

	aarch64_put32(&o, 0xb4000000u | 4 << 5 | ENTRY);	/* cbz x27, +16 */
	aarch64_put32(&o, 0xd53be040u | 26);
	put_ldst(&o, false, 26, ENTRY, RET_ENTRY_TIME);
	put_ldst(&o, false, TRAMP_REG, FP, FRAME_X30);
	return retpad_finish(o.overflow, o.len);
}

/*
 * A return counted in its histogram instead of a record, when the page
 * at r->hist has one in use for the entry (x22; x26 now): on to
 * `popped` by *done, to the record (the code after this) if not.
 *
 *         movz/movk x1, #hist
 *         ldr   w2, [x1, #N]
 *         cbz   w2, record
 *         ldr   x5, [x22, #24]           the entry's func_run
 *         add   x3, x1, #FIRST
 *   1:    ldr   x4, [x3]
 *         cmp   x4, x5
 *         b.eq  2f
 *         add   x3, x3, #SIZE
 *         subs  w2, w2, #1
 *         b.ne  1b
 *         b     record
 *   2:    ldr   x4, [x22, #16]
 *         subs  x4, x26, x4              ticks
 *         csel  x4, x4, xzr, pl          0 if the counter went back
 *         ldr   x5, [x1, #MULT]
 *         umulh x6, x4, x5 ; mul x7, x4, x5
 *         extr  x4, x6, x7, #32          ns = ticks * MULT >> 32
 *         add   x8, x3, #SUM
 *   3:    ldaxr x6, [x8] ; add x6, x6, x4 ; stlxr w7, x6, [x8] ; cbnz w7, 3b
 *         clz   x6, x4
 *         mov   x7, #63 ; sub x6, x7, x6  k = floor(log2 ns), -1 for 0
 *         mov   x7, #(BUCKETS-1) ; cmp x6, x7 ; csel x6, x7, x6, gt
 *         add   x8, x3, x6, lsl #3
 *         add   x8, x8, #B               B + 8k: ZERO for k = -1
 *   4:    ldaxr x6, [x8] ; add x6, x6, #1 ; stlxr w7, x6, [x8] ; cbnz w7, 4b
 *         b     popped
 *   record:
 */
static void put_hist(struct aarch64_out *o, uint64_t hist, struct retpad_fix *done)
{
	struct retpad_fix none, miss, hit;
	size_t loop, sum, inc;

	aarch64_emit_mov_imm(o, 1, hist);
	put_ldst_w(o, true, 2, 1, RET_HIST_N);
	none = put_fwd(o, 'z', 2, false);
	put_ldst(o, true, 5, 22, RET_ENTRY_FUNC);
	aarch64_put32(o, 0x91000000u | RET_HIST_FIRST << 10 | 1 << 5 | 3);
	loop = o->len;
	put_ldst(o, true, 4, 3, 0);
	put_cmp(o, 4, 5);
	hit = put_fwd(o, 'c', C_EQ, false);
	aarch64_put32(o, 0x91000000u | RET_HIST_SIZE << 10 | 3 << 5 | 3);
	aarch64_put32(o, 0x71000400u | 2 << 5 | 2);		/* subs w2, w2, #1 */
	put_back(o, 'c', C_NE, false, loop);
	miss = put_fwd(o, 'b', 0, false);
	fix_to(o, &hit, o->len);
	put_ldst(o, true, 4, 22, RET_ENTRY_TIME);
	aarch64_put32(o, 0xeb000000u | 4 << 16 | 26 << 5 | 4);	/* subs x4, x26, x4 */
	aarch64_put32(o, 0x9a800000u | 31 << 16 | 5 << 12 | 4 << 5 | 4);	/* csel pl */
	put_ldst(o, true, 5, 1, RET_HIST_MULT);
	aarch64_put32(o, 0x9bc07c00u | 5 << 16 | 4 << 5 | 6);	/* umulh x6, x4, x5 */
	aarch64_put32(o, 0x9b007c00u | 5 << 16 | 4 << 5 | 7);	/* mul x7, x4, x5 */
	aarch64_put32(o, 0x93c00000u | 7 << 16 | 32 << 10 | 6 << 5 | 4);	/* extr */
	aarch64_put32(o, 0x91000000u | RET_HIST_SUM << 10 | 3 << 5 | 8);
	sum = o->len;
	aarch64_put32(o, 0xc85ffc00u | 8 << 5 | 6);		/* ldaxr x6, [x8] */
	aarch64_put32(o, 0x8b000000u | 4 << 16 | 6 << 5 | 6);	/* add x6, x6, x4 */
	aarch64_put32(o, 0xc800fc00u | 7 << 16 | 8 << 5 | 6);	/* stlxr w7, x6, [x8] */
	put_back(o, 'n', 7, false, sum);
	aarch64_put32(o, 0xdac01000u | 4 << 5 | 6);		/* clz x6, x4 */
	aarch64_put32(o, 0xd2800000u | 63 << 5 | 7);		/* mov x7, #63 */
	aarch64_put32(o, 0xcb000000u | 6 << 16 | 7 << 5 | 6);	/* sub x6, x7, x6 */
	aarch64_put32(o, 0xd2800000u | (RET_HIST_BUCKETS - 1) << 5 | 7);
	put_cmp(o, 6, 7);
	aarch64_put32(o, 0x9a800000u | 6 << 16 | 12 << 12 | 7 << 5 | 6);	/* csel gt */
	aarch64_put32(o, 0x8b000000u | 6 << 16 | 3 << 10 | 3 << 5 | 8);	/* add, lsl #3 */
	aarch64_put32(o, 0x91000000u | RET_HIST_B << 10 | 8 << 5 | 8);
	inc = o->len;
	aarch64_put32(o, 0xc85ffc00u | 8 << 5 | 6);
	aarch64_put32(o, 0x91000400u | 6 << 5 | 6);		/* add x6, x6, #1 */
	aarch64_put32(o, 0xc800fc00u | 7 << 16 | 8 << 5 | 6);
	put_back(o, 'n', 7, false, inc);
	*done = put_fwd(o, 'b', 0, false);
	fix_to(o, &none, o->len);
	fix_to(o, &miss, o->len);
}

/*
 * The trampoline, at r->tramp: `ret` brought the thread here with x30 =
 * the trampoline and sp as at the entry.
 *
 *         <emit_save_regs, pc = tramp>        x19 = frame
 *         <put_find_slot, no claim: none -> orphan>
 *         ldr   w15, [x13, #12]           n
 *         ldr   x16, [x19, #248]          sp: the entry's
 *   pop:  cbz   w15, orphan               newer entries below it: frames
 *         <put_top>                       longjmp'd over
 *         ldr   x23, [x22]
 *         cmp   x23, x16
 *         b.hs  mine
 *         sub   w15, w15, #1 ; str w15, [x13, #12]
 *         b     pop
 *   mine: b.ne  orphan                    above it: not this one's
 *         ldr   x20, [x22, #8]            the real address
 *         mrs   x26, cntvct_el0           now
 *   chain:                                each entry of the sp, innermost
 *         ldr   x23, [x9, #ON]            first
 *         cbz   x23, popped               nobody takes records
 *         <put_hist, with r->hist: a histogram's return on to popped>
 *         movz/movk x1, #ring ; movz/movk x10, #nrecords-1
 *   retry:                                the record: as the collector
 *                                         (aarch64_emit_ring_claim)
 *         ldar x2, [x1] ; and x3, x2, x10 ; add x3, x1, x3, lsl #shift
 *         add x3, x3, #off_records ; add x4, x3, #off_seq ; ldar x5, [x4]
 *         cmp x5, x2 ; b.ne notfree
 *         ldaxr x6, [x1] ; cmp x6, x2 ; b.ne lost
 *         add x7, x2, #1 ; stlxr w8, x7, [x1] ; cbnz w8, retry
 *         b claimed
 *   lost: clrex ; b retry
 *   notfree:
 *         ldar x6, [x1] ; cmp x6, x2 ; b.ne retry
 *         b full
 *   claimed:
 *         the frame (x19, 34 words) at off_frame, v0-v31, fpsr, fpcr at 0
 *         add x4, x3, #off_blocks
 *         ldr x5, [x22, #24] ; str x5, [x4, #FUNC]
 *         str x26, [x4, #TSC]
 *         ldr x5, [x22, #16] ; sub x5, x26, x5 ; str x5, [x4, #TICKS]
 *         ldr w5, [x13, #8] ; str w5, [x4, #TID]
 *         str x20, [x4, #RET]
 *         movz/movk w5, #MAGIC ; str w5, [x4, #MAGIC]
 *         add x7, x2, #1 ; add x4, x3, #off_seq ; stlr x7, [x4]   published
 *         b popped
 *   full: <put_count LOST>
 *         brk #0 (*trap_off)              the agent drains the ring and
 *         b chain                         resumes past it: tried again
 *   popped:
 *         sub w15, w15, #1 ; str w15, [x13, #12]
 *         cbz w15, out
 *         <put_top> ; ldr x23, [x22] ; cmp x23, x16
 *         b.eq chain                      a tail call's too
 *   out:  str x20, [x19, #240]            x30 = the real address
 *         <emit_restore_regs>             every register as the return
 *         ret                             left them, x30 as `ret` would
 *   orphan:                               cannot happen while the
 *         <put_count ORPHANS>             invariants hold
 *         <emit_restore_regs>
 *         brk #0                          the agent reports the thread
 */
int aarch64_emit_ret_exit(uint8_t *out, size_t size, const struct arch_ret_pad *r,
			  size_t *trap_off)
{
	struct aarch64_out o = { out, size, 0, r->tramp, false };
	const struct arch_pad_ring *g = &r->ring;
	struct retpad_fix f_none, f_none2, f_orph[2], f_mine, f_popped[3];
	struct retpad_fix f_claimed, f_full, f_out;
	struct aarch64_ring_claim claim;
	size_t pop, chain, popped;
	int m;

	/* The descriptor's stores are `str xt, [x4, #off]` from its start,
	 * which is off_blocks from the record (aarch64_emit_add_imm). */
	if (!retpad_area_ok(r) ||
	    !retpad_ring_ok(g, AARCH64_PAD_IMAGE_BYTES, AARCH64_PAD_FRAME_WORDS * 8) ||
	    g->off_blocks + RET_REC_SIZE > 4096)
		return -EINVAL;
	if ((m = aarch64_emit_save_regs(out, size, r->tramp)) < 0)
		return m;
	o.len = (size_t)m;
	f_none = put_find_slot(&o, r, false, &f_none2);
	put_ldst_w(&o, true, 15, 13, RET_SLOT_DEPTH);
	put_ldst(&o, true, 16, FP, FRAME_SP);
	pop = o.len;
	f_orph[0] = put_fwd(&o, 'z', 15, false);
	put_top(&o);
	put_ldst(&o, true, 23, 22, RET_ENTRY_SLOT);
	put_cmp(&o, 23, 16);
	f_mine = put_fwd(&o, 'c', C_HS, false);
	aarch64_put32(&o, 0x51000400u | 15 << 5 | 15);		/* sub w15, w15, #1 */
	put_ldst_w(&o, false, 15, 13, RET_SLOT_DEPTH);
	put_back(&o, 'b', 0, false, pop);
	fix_to(&o, &f_mine, o.len);
	f_orph[1] = put_fwd(&o, 'c', C_NE, false);
	put_ldst(&o, true, 20, 22, RET_ENTRY_RET);
	aarch64_put32(&o, 0xd53be040u | 26);			/* mrs x26, cntvct_el0 */
	chain = o.len;
	put_ldst(&o, true, 23, 9, RET_PAD_ON);
	f_popped[0] = put_fwd(&o, 'z', 23, true);
	if (r->hist)
		put_hist(&o, r->hist, &f_popped[2]);
	aarch64_emit_ring_claim(&o, g, 10, 11, &claim);
	f_claimed = put_fwd(&o, 'b', 0, false);
	aarch64_emit_ring_unclaimed(&o, &claim);
	f_full = put_fwd(&o, 'b', 0, false);
	fix_to(&o, &f_claimed, o.len);
	aarch64_emit_add_imm(&o, 4, 3, g->off_frame, 11);
	for (unsigned int i = 0; i < AARCH64_PAD_FRAME_WORDS * 8; i += 16) {
		put_pair(&o, true, 5, 6, FP, i);
		put_pair(&o, false, 5, 6, 4, i);
	}
	for (unsigned int v = 0; v < 32; v += 2)
		aarch64_put32(&o, 0xad000000u | v << 15 | (v + 1) << 10 | 3 << 5 | v);
	aarch64_put32(&o, 0xd53b4420u | 5);			/* mrs x5, fpsr */
	put_ldst_w(&o, false, 5, 3, 512);
	aarch64_put32(&o, 0xd53b4400u | 6);			/* mrs x6, fpcr */
	put_ldst_w(&o, false, 6, 3, 516);
	aarch64_emit_add_imm(&o, 4, 3, g->off_blocks, 11);
	put_ldst(&o, true, 5, 22, RET_ENTRY_FUNC);
	put_ldst(&o, false, 5, 4, RET_REC_FUNC);
	put_ldst(&o, false, 26, 4, RET_REC_TSC);
	put_ldst(&o, true, 5, 22, RET_ENTRY_TIME);
	aarch64_put32(&o, 0xcb000000u | 5 << 16 | 26 << 5 | 5);	/* sub x5, x26, x5 */
	put_ldst(&o, false, 5, 4, RET_REC_TICKS);
	put_ldst_w(&o, true, 5, 13, RET_SLOT_TID);
	put_ldst_w(&o, false, 5, 4, RET_REC_TID);
	put_ldst(&o, false, 20, 4, RET_REC_RET);
	aarch64_emit_mov_imm(&o, 5, RET_REC_MAGIC_VALUE);
	put_ldst_w(&o, false, 5, 4, RET_REC_MAGIC);
	aarch64_put32(&o, 0x91000400u | 2 << 5 | 7);		/* add x7, x2, #1 */
	aarch64_emit_add_imm(&o, 4, 3, g->off_seq, 11);
	aarch64_put32(&o, 0xc89ffc00u | 4 << 5 | 7);		/* stlr x7, [x4] */
	f_popped[1] = put_fwd(&o, 'b', 0, false);
	fix_to(&o, &f_full, o.len);
	put_count(&o, RET_PAD_LOST);
	*trap_off = o.len;
	aarch64_put32(&o, AARCH64_BRK0);
	put_back(&o, 'b', 0, false, chain);
	popped = o.len;
	fix_to(&o, &f_popped[0], popped);
	fix_to(&o, &f_popped[1], popped);
	if (r->hist)
		fix_to(&o, &f_popped[2], popped);
	aarch64_put32(&o, 0x51000400u | 15 << 5 | 15);		/* sub w15, w15, #1 */
	put_ldst_w(&o, false, 15, 13, RET_SLOT_DEPTH);
	f_out = put_fwd(&o, 'z', 15, false);
	put_top(&o);
	put_ldst(&o, true, 23, 22, RET_ENTRY_SLOT);
	put_cmp(&o, 23, 16);
	put_back(&o, 'c', C_EQ, false, chain);
	fix_to(&o, &f_out, o.len);
	put_ldst(&o, false, 20, FP, FRAME_X30);
	if ((m = retpad_append(out, size, &o.len, aarch64_emit_restore_regs)) < 0)
		return m;
	aarch64_put32(&o, 0xd65f03c0u);				/* ret */
	fix_to(&o, &f_none, o.len);
	fix_to(&o, &f_none2, o.len);
	fix_to(&o, &f_orph[0], o.len);
	fix_to(&o, &f_orph[1], o.len);
	put_count(&o, RET_PAD_ORPHANS);
	if ((m = retpad_append(out, size, &o.len, aarch64_emit_restore_regs)) < 0)
		return m;
	aarch64_put32(&o, AARCH64_BRK0);
	return retpad_finish(o.overflow, o.len);
}
