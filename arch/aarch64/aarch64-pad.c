/*
 * aarch64-pad.c - the parts of an aarch64 jump pad: the register save
 * and restore, the in-process collector, and the displaced instruction.
 *
 * A pad is reached by a `B` (+-128 MiB) that replaces the probed
 * instruction at A, and runs, on the thread's own stack:
 *
 *   A:    b pad
 *
 *   pad:  save      frame of 34 words on the stack: x0-x30, sp, pc, nzcv
 *        [wants     ipa_site_wants(site, frame, 34): 0 -> b restore]
 *         collect   claim a record of the ring, copy the frame (and the
 *                   v registers, fpsr, fpcr),
 *                  [ipa_collect_site(site, record's frame, 34, blocks,
 *                   size)], publish;
 *                  [IPA_TRAP -> hand-off]
 *                   b restore                         (patched: *done)
 *         (full)    hand-off: claim a table entry by tid, copy the frame,
 *                   mark it ready, BRK; wait for PAD_DONE, free it
 *         restore   every register back from the frame
 *         insn      the displaced instruction, relocated (aarch64-relocate.c)
 *         b A+4
 *
 * AAPCS64 has no red zone (Linux's signal frames go right below sp), so
 * the save may use the stack below sp at once; sp is always 16-aligned
 * (an unaligned sp faults as a base register), and the frame, 272 bytes,
 * keeps it so:
 *
 *   before:                        after:
 *     sp -> | caller data |          orig sp -> | caller data |
 *                                               | nzcv        |  +264
 *                                               | pc  = A     |  +256
 *                                               | sp  = orig  |  +248
 *                                               | x30         |  +240
 *                                               | x0 .. x29   |  +0 .. +232
 *                                x0 = x19 = sp ->
 *
 * That is gdb's register order (x0-x30, sp, pc, then cpsr, which is 4
 * bytes in the `g` block and a word here: `mrs nzcv` gives the flags in
 * bits 28-31, the rest read as zero).  x19, callee-saved, keeps the
 * frame's address across the collector's system calls and whatever the
 * caller adds; the restore reloads it with the others.  The frame holds
 * the general registers only: the pad never touches the v registers,
 * fpsr and fpcr, so a thread stopped at the hand-off's BRK still has
 * them for the agent to read from the kernel; the collector, whose hit
 * nothing reads later, copies them into its record (the image).
 *
 * A thread the agent must take out of a pad is single-stepped, except
 * at an exclusive load or store (the claims of a record and of an
 * entry): a step's exception clears the exclusive monitor, so the
 * store-exclusive would fail for ever.  There the frame is complete and
 * nothing is claimed yet, and the thread goes back to the probe with the
 * frame's registers (aarch64_pad_step says ARCH_PAD_REWIND).
 * tests/arch/aarch64-table checks the words on every host,
 * tests/arch/aarch64-pad-exec.c runs a whole pad under qemu-aarch64.
 */
#include "config.h"

#include <errno.h>

#include "arch/aarch64/aarch64.h"

#define FRAME_BYTES (AARCH64_PAD_FRAME_WORDS * 8)
#define FP 19		/* x19: the frame's address */

static int finish(const struct aarch64_out *o)
{
	return o->overflow ? -ENOSPC : (int)o->len;
}

/*
 * The encodings used below (Rd/Rt bits 0-4, Rn 5-9, Rt2/imm 10-, Rm 16-20):
 *   stp  xt, xt2, [xn, #8*i]   1010 1001 00 imm7 Rt2 Rn Rt      a9000000
 *   stp  qt, qt2, [xn, #16*i]  1010 1101 00 imm7 Rt2 Rn Rt      ad000000
 *   ldp  xt, xt2, [xn, #8*i]   1010 1001 01 imm7 Rt2 Rn Rt      a9400000
 *   str  xt, [xn, #8*i]        1111 1001 00 imm12 Rn Rt         f9000000
 *   ldr  xt, [xn, #8*i]        1111 1001 01 imm12 Rn Rt         f9400000
 *   str  wt, [xn, #4*i]        1011 1001 00 imm12 Rn Rt         b9000000
 *   add  xd, xn|sp, #imm12     1001 0001 00 imm12 Rn Rd         91000000
 *   sub  xd, xn|sp, #imm12     1101 0001 00 imm12 Rn Rd         d1000000
 *   add  xd, xn, xm, lsl #s    1000 1011 000 Rm imm6 Rn Rd      8b000000
 *   and  xd, xn, xm            1000 1010 000 Rm 000000 Rn Rd    8a000000
 *   cmp  xn, xm                1110 1011 000 Rm 000000 Rn 11111 eb00001f
 *   mrs  xt, nzcv              d53b4200 | Rt
 *   msr  nzcv, xt              d51b4200 | Rt
 *   ldar xt, [xn]              c8dffc00     stlr xt, [xn]       c89ffc00
 *   ldaxr xt, [xn]             c85ffc00     stlxr ws, xt, [xn]  c800fc00 | Rs << 16
 *   ldar wt, [xn]              88dffc00     stlr wt, [xn]       889ffc00
 *   ldaxr wt, [xn]             885ffc00     stlxr ws, wt, [xn]  8800fc00 | Rs << 16
 *   mrs  xt, fpcr / fpsr       d53b4400 / d53b4420 | Rt
 *   str  wt, [xn, #4*i]        b9000000 (above)   movz wd, #imm16   52800000
 *   and  wd, wn, wm            0a000000 | Rm << 16   add wd, wn, #imm  11000000
 *   cmp  wn, #imm12            7100001f | imm << 10  brk #0            d4200000
 *   clrex                      d503305f     svc #0              d4000001
 *   b.cond                     0101 0100 imm19 0 cond           54000000
 *   cbnz wt                    0011 0101 imm19 Rt               35000000
 *   cbz  wt                    0011 0100 imm19 Rt               34000000
 *   mov  xd, xm  (orr xd, xzr, xm)                              aa0003e0 | Rm << 16
 *   mov  wd, wm  (orr wd, wzr, wm)                              2a0003e0 | Rm << 16
 *   blr  xn                    1101 0110 0011 1111 0000 00 Rn 00000  d63f0000
 */
static void put_pair(struct aarch64_out *o, bool load, unsigned int t,
		     unsigned int t2, unsigned int n, unsigned int off)
{
	aarch64_put32(o, (load ? 0xa9400000u : 0xa9000000u) | (off / 8) << 15 |
			 t2 << 10 | n << 5 | t);
}

static void put_ldst(struct aarch64_out *o, bool load, unsigned int t,
		     unsigned int n, unsigned int off)
{
	aarch64_put32(o, (load ? 0xf9400000u : 0xf9000000u) | (off / 8) << 10 |
			 n << 5 | t);
}

/* A branch from offset `from` to offset `to` of the same code. */
static uint32_t enc_bcond(size_t from, size_t to, unsigned int cond)
{
	return 0x54000000u | ((uint32_t)((int64_t)(to - from) >> 2) & 0x7ffff) << 5 | cond;
}

static uint32_t enc_cbnz_w(size_t from, size_t to, unsigned int t)
{
	return 0x35000000u | ((uint32_t)((int64_t)(to - from) >> 2) & 0x7ffff) << 5 | t;
}

static uint32_t enc_cbz_w(size_t from, size_t to, unsigned int t)
{
	return 0x34000000u | ((uint32_t)((int64_t)(to - from) >> 2) & 0x7ffff) << 5 | t;
}

static uint32_t enc_b_off(size_t from, size_t to)
{
	return 0x14000000u | ((uint32_t)((int64_t)(to - from) >> 2) & 0x3ffffff);
}

/*
 *   sub  sp, sp, #272
 *   stp  x0, x1, [sp] .. stp x28, x29, [sp, #224]
 *   str  x30, [sp, #240]
 *   add  x0, sp, #272 ; str x0, [sp, #248]       the program's sp
 *   movz/movk x0, #pc ; str x0, [sp, #256]
 *   mrs  x0, nzcv     ; str x0, [sp, #264]
 *   mov  x19, sp ; mov x0, sp                      (add xd, sp, #0)
 */
int aarch64_emit_save_regs(uint8_t *out, size_t size, uint64_t pc)
{
	struct aarch64_out o = { out, size, 0, 0, false };

	aarch64_put32(&o, 0xd1000000u | FRAME_BYTES << 10 | 31 << 5 | 31);
	for (unsigned int r = 0; r < 30; r += 2)
		put_pair(&o, false, r, r + 1, 31, r * 8);
	put_ldst(&o, false, 30, 31, 240);
	aarch64_put32(&o, 0x91000000u | FRAME_BYTES << 10 | 31 << 5 | 0);
	put_ldst(&o, false, 0, 31, 248);
	aarch64_emit_mov_imm(&o, 0, pc);
	put_ldst(&o, false, 0, 31, 256);
	aarch64_put32(&o, 0xd53b4200u | 0);
	put_ldst(&o, false, 0, 31, 264);
	aarch64_put32(&o, 0x91000000u | 31 << 5 | FP);
	aarch64_put32(&o, 0x91000000u | 31 << 5 | 0);
	return finish(&o);
}

/*
 *   mov  sp, x19                  (add sp, x19, #0: the frame, wherever
 *                                  the code between left sp)
 *   ldr  x0, [sp, #264] ; msr nzcv, x0
 *   ldp  x0, x1, [sp] .. ldp x28, x29, [sp, #224]
 *   ldr  x30, [sp, #240]
 *   add  sp, sp, #272
 */
int aarch64_emit_restore_regs(uint8_t *out, size_t size)
{
	struct aarch64_out o = { out, size, 0, 0, false };

	aarch64_put32(&o, 0x91000000u | FP << 5 | 31);
	put_ldst(&o, true, 0, 31, 264);
	aarch64_put32(&o, 0xd51b4200u | 0);
	for (unsigned int r = 0; r < 30; r += 2)
		put_pair(&o, true, r, r + 1, 31, r * 8);
	put_ldst(&o, true, 30, 31, 240);
	aarch64_put32(&o, 0x91000000u | FRAME_BYTES << 10 | 31 << 5 | 31);
	return finish(&o);
}

static bool part_fits(unsigned int off, unsigned int len, unsigned int rec)
{
	return off < rec && len <= rec - off;
}

static bool apart(unsigned int a, unsigned int alen, unsigned int b,
		  unsigned int blen)
{
	return a + alen <= b || b + blen <= a;
}

/* A word written over one the code left at `at` (a forward branch). */
static void put_at(struct aarch64_out *o, size_t at, uint32_t w)
{
	if (o->overflow || at + 4 > o->len)
		return;
	for (int k = 0; k < 4; k++)
		o->buf[at + k] = (uint8_t)(w >> (8 * k));
}

/*
 * The claim of a ring record (struct arch_pad_ring), the part the pad's
 * collection and the return exit (aarch64-retpad.c) share: x1 = &head,
 * x2 = the position p claimed, x3 = its record, x4 = &record's seq;
 * x5-x8 and the registers `mask` (nrecords - 1) and `tmp` (offsets past
 * 12 bits) are scratch.
 *
 *         movz/movk x1, #ring ; movz/movk xMASK, #nrecords-1
 *   retry:
 *         ldar  x2, [x1] ; and x3, x2, xMASK ; add x3, x1, x3, lsl #shift
 *         add   x3, x3, #off_records ; add x4, x3, #off_seq
 *         ldar  x5, [x4] ; cmp x5, x2 ; b.ne notfree
 *         ldaxr x6, [x1] ; cmp x6, x2 ; b.ne lost
 *         add   x7, x2, #1 ; stlxr w8, x7, [x1] ; cbnz w8, retry
 *                                          claimed: on
 *
 * The two forward branches are left as words for
 * aarch64_emit_ring_unclaimed, which emits their targets.
 */
void aarch64_emit_ring_claim(struct aarch64_out *o, const struct arch_pad_ring *g,
			     unsigned int mask, unsigned int tmp,
			     struct aarch64_ring_claim *c)
{
	aarch64_emit_mov_imm(o, 1, g->ring);
	aarch64_emit_mov_imm(o, mask, g->nrecords - 1);
	c->retry = o->len;
	aarch64_put32(o, 0xc8dffc00u | 1 << 5 | 2);		/* ldar x2, [x1] */
	aarch64_put32(o, 0x8a000000u | mask << 16 | 2 << 5 | 3);	/* and x3, x2, xMASK */
	aarch64_put32(o, 0x8b000000u | 3 << 16 | g->record_shift << 10 | 1 << 5 | 3);
	aarch64_emit_add_imm(o, 3, 3, g->off_records, tmp);
	aarch64_emit_add_imm(o, 4, 3, g->off_seq, tmp);
	aarch64_put32(o, 0xc8dffc00u | 4 << 5 | 5);		/* ldar x5, [x4] */
	aarch64_put32(o, 0xeb00001fu | 2 << 16 | 5 << 5);	/* cmp x5, x2 */
	c->to_notfree = o->len;
	aarch64_put32(o, 0);					/* b.ne notfree */
	aarch64_put32(o, 0xc85ffc00u | 1 << 5 | 6);		/* ldaxr x6, [x1] */
	aarch64_put32(o, 0xeb00001fu | 2 << 16 | 6 << 5);	/* cmp x6, x2 */
	c->to_lost = o->len;
	aarch64_put32(o, 0);					/* b.ne lost */
	aarch64_put32(o, 0x91000000u | 1 << 10 | 2 << 5 | 7);	/* add x7, x2, #1 */
	aarch64_put32(o, 0xc800fc00u | 8 << 16 | 1 << 5 | 7);	/* stlxr w8, x7, [x1] */
	aarch64_put32(o, enc_cbnz_w(o->len, c->retry, 8));
}

/*
 * The ways a claim (aarch64_emit_ring_claim) did not succeed, where the
 * code does not run on from the claim:
 *
 *   lost: clrex ; b retry                  another thread won the pair
 *   notfree:
 *         ldar  x6, [x1] ; cmp x6, x2
 *         b.ne  retry                      another thread took p: again
 *                                          else the ring is full: on
 */
void aarch64_emit_ring_unclaimed(struct aarch64_out *o,
				 const struct aarch64_ring_claim *c)
{
	put_at(o, c->to_lost, enc_bcond(c->to_lost, o->len, 1));	/* ne */
	aarch64_put32(o, 0xd503305fu);				/* clrex */
	aarch64_put32(o, enc_b_off(o->len, c->retry));
	put_at(o, c->to_notfree, enc_bcond(c->to_notfree, o->len, 1));
	aarch64_put32(o, 0xc8dffc00u | 1 << 5 | 6);		/* notfree: ldar x6, [x1] */
	aarch64_put32(o, 0xeb00001fu | 2 << 16 | 6 << 5);	/* cmp x6, x2 */
	aarch64_put32(o, enc_bcond(o->len, c->retry, 1));	/* b.ne retry */
}

#define FRAME_WORDS AARCH64_PAD_FRAME_WORDS
#define VERDICT_TRAP 3		/* the in-process collector's IPA_TRAP */

/*
 * A call of the in-process collector (AAPCS64): arguments in x0-x4, the
 * function's address in x16 (IP0, the linker's scratch), `blr`.  The
 * callee keeps x19-x28, x29 and sp; it may change x0-x18 and x30, which
 * the restore reloads from the frame.  sp is the frame's address (x19),
 * 16-aligned, and the callee's stack (IPA_STACK_USE at most) grows below
 * it: nothing of the program's lies there (no red zone).  The collector
 * is built with general registers only (configure.ac), so the v
 * registers, which neither the frame nor the restore hold, stay the
 * program's.
 *
 * ipa_site_wants, first, on the frame on the stack:
 *
 *         add   sp, x19, #0                sp = the frame
 *         movz/movk x0, #site
 *         mov   x1, x19
 *         movz  x2, #34                    frame words
 *         movz/movk x16, #wants
 *         blr   x16
 *         cbz   w0, out                    every condition false (patched)
 *
 * Returns the offset of the cbz.
 */
static size_t put_ipa_wants(struct aarch64_out *o, const struct arch_pad_ring *r)
{
	size_t at;

	aarch64_put32(o, 0x91000000u | FP << 5 | 31);		/* add sp, x19, #0 */
	aarch64_emit_mov_imm(o, 0, r->ipa_site);
	aarch64_put32(o, 0xaa0003e0u | FP << 16 | 1);		/* mov x1, x19 */
	aarch64_emit_mov_imm(o, 2, FRAME_WORDS);
	aarch64_emit_mov_imm(o, 16, r->ipa_wants);
	aarch64_put32(o, 0xd63f0000u | 16 << 5);		/* blr x16 */
	at = o->len;
	aarch64_put32(o, 0);					/* cbz w0, out */
	return at;
}

/*
 * ipa_collect_site on the filled record (x2 p, x3 the record), before
 * it is published; p and the record wait in x20 and x21, the verdict
 * in w22 (callee-saved):
 *
 *         mov   x20, x2 ; mov x21, x3
 *         add   sp, x19, #0
 *         movz/movk x0, #site
 *         add   x1, x3, #off_frame         the record's frame
 *         movz  x2, #34
 *         add   x3, x3, #off_blocks        its block area
 *         movz  x4, #blocks_size
 *         movz/movk x16, #call
 *         blr   x16
 *         mov   w22, w0                    the verdict
 *         mov   x2, x20 ; mov x3, x21
 */
static void put_ipa_call(struct aarch64_out *o, const struct arch_pad_ring *r)
{
	aarch64_put32(o, 0xaa0003e0u | 2 << 16 | 20);		/* mov x20, x2 */
	aarch64_put32(o, 0xaa0003e0u | 3 << 16 | 21);		/* mov x21, x3 */
	aarch64_put32(o, 0x91000000u | FP << 5 | 31);		/* add sp, x19, #0 */
	aarch64_emit_mov_imm(o, 0, r->ipa_site);
	aarch64_emit_add_imm(o, 1, 3, r->off_frame, 10);
	aarch64_emit_mov_imm(o, 2, FRAME_WORDS);
	aarch64_emit_add_imm(o, 3, 3, r->off_blocks, 10);
	aarch64_emit_mov_imm(o, 4, r->blocks_size);
	aarch64_emit_mov_imm(o, 16, r->ipa_call);
	aarch64_put32(o, 0xd63f0000u | 16 << 5);		/* blr x16 */
	aarch64_put32(o, 0x2a0003e0u | 0 << 16 | 22);		/* mov w22, w0 */
	aarch64_put32(o, 0xaa0003e0u | 20 << 16 | 2);		/* mov x2, x20 */
	aarch64_put32(o, 0xaa0003e0u | 21 << 16 | 3);		/* mov x3, x21 */
}

/*
 * The hitting thread's id into w0 (x5-x9 change).  With the agent's
 * table (tid_table: PAD_TID_* in arch/arch.h) it is looked up by
 * TPIDR_EL0, and only a thread the table does not name (no entry, or
 * tid 0: more than one thread has that pointer) asks the kernel:
 *
 *         mrs   x5, tpidr_el0
 *         movz/movk x6, #PAD_TID_HASH
 *         mul   x6, x5, x6
 *         lsr   x6, x6, #(64 - PAD_TID_BITS)
 *         movz/movk x7, #tid_table
 *         add   x7, x7, x6, lsl #4          the key's first entry
 *         movz  x8, #PAD_TID_PROBES
 *   next: ldr   x9, [x7]
 *         cmp   x9, x5
 *         b.eq  found
 *         cbz   x9, ask                    a free entry ends the search
 *         add   x7, x7, #16
 *         subs  x8, x8, #1
 *         b.ne  next
 *   ask:  mov   x8, #178 ; svc #0          gettid
 *         b     have
 *   found: ldr  w0, [x7, #8]
 *         cbz   w0, ask
 *   have:
 *
 * A thread pointer of 0 finds a free entry's key and its tid 0: it asks.
 * Without the table, only the system call.
 */
static void put_tid(struct aarch64_out *o, const struct arch_pad_ring *r)
{
	size_t next, to_found, to_ask1, to_ask2, to_have, ask;

	if (!r->tid_table) {
		aarch64_emit_mov_imm(o, 8, 178);		/* gettid */
		aarch64_put32(o, 0xd4000001u);			/* svc #0 */
		return;
	}
	aarch64_put32(o, 0xd53bd040u | 5);			/* mrs x5, tpidr_el0 */
	aarch64_emit_mov_imm(o, 6, PAD_TID_HASH);
	aarch64_put32(o, 0x9b007c00u | 6 << 16 | 5 << 5 | 6);	/* mul x6, x5, x6 */
	aarch64_put32(o, 0xd340fc00u | (64 - PAD_TID_BITS) << 16 | 6 << 5 | 6);
								/* lsr x6, x6, #54 */
	aarch64_emit_mov_imm(o, 7, r->tid_table);
	aarch64_put32(o, 0x8b000000u | 6 << 16 | 4 << 10 | 7 << 5 | 7);
								/* add x7, x7, x6, lsl #4 */
	aarch64_emit_mov_imm(o, 8, PAD_TID_PROBES);
	next = o->len;
	aarch64_put32(o, 0xf9400000u | 7 << 5 | 9);		/* ldr x9, [x7] */
	aarch64_put32(o, 0xeb00001fu | 5 << 16 | 9 << 5);	/* cmp x9, x5 */
	to_found = o->len;
	aarch64_put32(o, 0);					/* b.eq found */
	to_ask1 = o->len;
	aarch64_put32(o, 0);					/* cbz x9, ask */
	aarch64_put32(o, 0x91000000u | 16 << 10 | 7 << 5 | 7);	/* add x7, x7, #16 */
	aarch64_put32(o, 0xf1000000u | 1 << 10 | 8 << 5 | 8);	/* subs x8, x8, #1 */
	aarch64_put32(o, enc_bcond(o->len, next, 1));		/* b.ne next */
	ask = o->len;
	aarch64_emit_mov_imm(o, 8, 178);			/* gettid */
	aarch64_put32(o, 0xd4000001u);				/* svc #0 */
	to_have = o->len;
	aarch64_put32(o, 0);					/* b have */
	put_at(o, to_found, enc_bcond(to_found, o->len, 0));	/* found: (eq) */
	aarch64_put32(o, 0xb9400000u | (8 / 4) << 10 | 7 << 5 | 0);	/* ldr w0, [x7, #8] */
	to_ask2 = o->len;
	aarch64_put32(o, enc_cbz_w(to_ask2, ask, 0));		/* cbz w0, ask */
	put_at(o, to_ask1, 0xb4000000u | ((uint32_t)((int64_t)(ask - to_ask1) >> 2) & 0x7ffff) << 5 | 9);
								/* cbz x9, ask */
	put_at(o, to_have, enc_b_off(to_have, o->len));		/* have: */
}

/*
 * The hit's time at off_time: with tsc_time the counter (CNTVCT_EL0, the
 * same on every CPU and counting in sleep) and PAD_TIME_TSC where a
 * timespec's tv_nsec would be, which the agent turns into the time
 * (x0, x1 change):
 *
 *         isb ; mrs x0, cntvct_el0
 *         movn  x1, #0                     PAD_TIME_TSC (-1)
 *         add   x8, x3, #off_time ; stp x0, x1, [x8]
 *
 * else clock_gettime(CLOCK_REALTIME, record + off_time) by svc.
 */
static void put_time(struct aarch64_out *o, const struct arch_pad_ring *r)
{
	if (r->tsc_time) {
		aarch64_put32(o, 0xd5033fdfu);			/* isb */
		aarch64_put32(o, 0xd53be040u | 0);		/* mrs x0, cntvct_el0 */
		aarch64_put32(o, 0x92800000u | 1);		/* movn x1, #0 */
		aarch64_emit_add_imm(o, 8, 3, r->off_time, 10);
		aarch64_put32(o, 0xa9000000u | 1 << 10 | 8 << 5 | 0);	/* stp x0, x1, [x8] */
		return;
	}
	aarch64_emit_mov_imm(o, 0, 0);				/* CLOCK_REALTIME */
	aarch64_emit_add_imm(o, 1, 3, r->off_time, 10);
	aarch64_emit_mov_imm(o, 8, 113);			/* clock_gettime */
	aarch64_put32(o, 0xd4000001u);
}

/*
 * The collector, after the save (x19 = frame).  Registers it uses are
 * the program's, saved in the frame: x1 head, x2 p, x3 record, x4-x10
 * (with ipa_call also x16, x20-x22 and whatever the callee changes).
 *
 *       [ ipa_site_wants (put_ipa_wants): 0 -> out ]
 *         movz/movk x1, #ring              &head
 *         movz/movk x9, #nrecords-1
 *   retry:
 *         ldar  x2, [x1]                   p = head
 *         and   x3, x2, x9
 *         add   x3, x1, x3, lsl #shift
 *         add   x3, x3, #off_records       record of p
 *         add   x4, x3, #off_seq
 *         ldar  x5, [x4]
 *         cmp   x5, x2
 *         b.ne  notfree                    seq != p: full, or p is old
 *         ldaxr x6, [x1]
 *         cmp   x6, x2
 *         b.ne  lost
 *         add   x7, x2, #1
 *         stlxr w8, x7, [x1]               head = p + 1, if still p
 *         cbnz  w8, retry
 *       [ mov x8, #178 ; svc #0            gettid
 *         add x4, x3, #off_tid ; str w0, [x4]
 *         mov x0, #0 ; add x1, x3, #off_time
 *         mov x8, #113 ; svc #0 ]          clock_gettime(CLOCK_REALTIME)
 *         add   x4, x3, #off_frame
 *         ldp   x5, x6, [x19, #16*i] ; stp x5, x6, [x4, #16*i]   i = 0..16
 *       [ stp q0, q1, [x3] .. stp q30, q31, [x3, #480]   (image)
 *         mrs x5, fpsr ; str w5, [x3, #512]
 *         mrs x6, fpcr ; str w6, [x3, #516] ]
 *       [ ipa_collect_site (put_ipa_call): w22 = verdict ]
 *         add   x7, x2, #1
 *         add   x4, x3, #off_seq
 *         stlr  x7, [x4]                   seq = p + 1: the record is full
 *       [ cmp   w22, #IPA_TRAP
 *         b.eq  end                        the hand-off, after the record
 *   out: ]
 *         b     done                       (*done: patch_branch)
 *   lost: clrex
 *         b     retry
 *   notfree:
 *         ldar  x6, [x1]
 *         cmp   x6, x2
 *         b.ne  retry                      another thread took p: again
 *                                          else the ring is full: on
 *   end:
 *
 * The exclusive pair holds nothing but a compare between, so that it
 * makes progress on every implementation.  The system calls (time_tid)
 * change x0 only (the kernel keeps the rest); the flags are in the frame.
 * A record the collector says IPA_TRAP of is published all the same (the
 * drain skips it: its verdict says so) and the hit goes on to the
 * hand-off, where the agent handles it; so does a full ring, where the
 * collector never ran.
 */
int aarch64_emit_pad_collect(uint8_t *out, size_t size,
			     const struct arch_pad_ring *r, size_t *done)
{
	struct aarch64_out o = { out, size, 0, 0, false };
	unsigned int rec;
	struct aarch64_ring_claim claim;
	size_t to_out = 0, to_end = 0;

	if (!r->nrecords || (r->nrecords & (r->nrecords - 1)) ||
	    r->record_shift < 4 || r->record_shift > 24)
		return -EINVAL;
	rec = 1u << r->record_shift;
	if (!part_fits(r->off_seq, 8, rec) || (r->off_seq & 7) ||
	    !part_fits(r->off_frame, FRAME_BYTES, rec) || (r->off_frame & 7) ||
	    !apart(r->off_seq, 8, r->off_frame, FRAME_BYTES) ||
	    (r->off_records & 7))
		return -EINVAL;
	if (r->image &&
	    (!part_fits(0, AARCH64_PAD_IMAGE_BYTES, rec) ||
	     !apart(0, AARCH64_PAD_IMAGE_BYTES, r->off_seq, 8) ||
	     !apart(0, AARCH64_PAD_IMAGE_BYTES, r->off_frame, FRAME_BYTES) ||
	     (r->time_tid && (!apart(0, AARCH64_PAD_IMAGE_BYTES, r->off_tid, 4) ||
			      !apart(0, AARCH64_PAD_IMAGE_BYTES, r->off_time, 16)))))
		return -EINVAL;
	/* The collector's block area: apart from every other part. */
	if (r->ipa_call &&
	    (!r->blocks_size || !part_fits(r->off_blocks, r->blocks_size, rec) ||
	     (r->off_blocks & 7) ||
	     !apart(r->off_blocks, r->blocks_size, r->off_seq, 8) ||
	     !apart(r->off_blocks, r->blocks_size, r->off_frame, FRAME_BYTES) ||
	     (r->image && !apart(r->off_blocks, r->blocks_size, 0,
				 AARCH64_PAD_IMAGE_BYTES)) ||
	     (r->time_tid && (!apart(r->off_blocks, r->blocks_size, r->off_tid, 4) ||
			      !apart(r->off_blocks, r->blocks_size, r->off_time, 16)))))
		return -EINVAL;
	if (r->time_tid &&
	    (!part_fits(r->off_tid, 4, rec) || (r->off_tid & 3) ||
	     !part_fits(r->off_time, 16, rec) || (r->off_time & 7) ||
	     !apart(r->off_tid, 4, r->off_time, 16) ||
	     !apart(r->off_tid, 4, r->off_frame, FRAME_BYTES) ||
	     !apart(r->off_tid, 4, r->off_seq, 8) ||
	     !apart(r->off_time, 16, r->off_frame, FRAME_BYTES) ||
	     !apart(r->off_time, 16, r->off_seq, 8)))
		return -EINVAL;

	if (r->ipa_call && r->ipa_wants)
		to_out = put_ipa_wants(&o, r);
	aarch64_emit_ring_claim(&o, r, 9, 10, &claim);
	if (r->time_tid) {
		put_tid(&o, r);
		aarch64_emit_add_imm(&o, 4, 3, r->off_tid, 10);
		aarch64_put32(&o, 0xb9000000u | 4 << 5 | 0);	/* str w0, [x4] */
		put_time(&o, r);
	}
	aarch64_emit_add_imm(&o, 4, 3, r->off_frame, 10);
	for (unsigned int i = 0; i < FRAME_BYTES; i += 16) {
		put_pair(&o, true, 5, 6, FP, i);
		put_pair(&o, false, 5, 6, 4, i);
	}
	if (r->image) {
		/* The record's first 520 bytes: v0-v31, fpsr, fpcr. */
		for (unsigned int v = 0; v < 32; v += 2)
			aarch64_put32(&o, 0xad000000u | v << 15 | (v + 1) << 10 |
					 3 << 5 | v);	/* stp qv, qv+1, [x3, #16*v] */
		aarch64_put32(&o, 0xd53b4420u | 5);		/* mrs x5, fpsr */
		aarch64_put32(&o, 0xb9000000u | (512 / 4) << 10 | 3 << 5 | 5);
		aarch64_put32(&o, 0xd53b4400u | 6);		/* mrs x6, fpcr */
		aarch64_put32(&o, 0xb9000000u | (516 / 4) << 10 | 3 << 5 | 6);
	}
	if (r->ipa_call)
		put_ipa_call(&o, r);
	aarch64_put32(&o, 0x91000000u | 1 << 10 | 2 << 5 | 7);	/* add x7, x2, #1 */
	aarch64_emit_add_imm(&o, 4, 3, r->off_seq, 10);
	aarch64_put32(&o, 0xc89ffc00u | 4 << 5 | 7);		/* stlr x7, [x4] */
	if (r->ipa_call) {
		aarch64_put32(&o, 0x7100001fu | VERDICT_TRAP << 10 | 22 << 5);
		to_end = o.len;
		aarch64_put32(&o, 0);				/* b.eq end */
		if (to_out)					/* out: */
			put_at(&o, to_out, enc_cbz_w(to_out, o.len, 0));
	}
	*done = o.len;
	aarch64_put32(&o, enc_b_off(0, 0));			/* b done */
	aarch64_emit_ring_unclaimed(&o, &claim);
	if (to_end)						/* end: */
		put_at(&o, to_end, enc_bcond(to_end, o.len, 0));	/* eq */
	return finish(&o);
}

int aarch64_patch_branch(uint8_t *code, size_t at, size_t to)
{
	int64_t d = (int64_t)to - (int64_t)at;
	uint32_t w;

	if ((d & 3) || d < -(1ll << 27) || d >= (1ll << 27))
		return -ERANGE;
	w = enc_b_off(at, to);
	for (int k = 0; k < 4; k++)
		code[at + k] = (uint8_t)(w >> (8 * k));
	return 0;
}

/*
 * The window is the probed instruction alone (the B that replaces it is
 * 4 bytes, like every instruction), so no branch can land inside it
 * after its first byte.  It runs at `to` as aarch64-relocate.c rewrites
 * it for a slot, then B back to from + 4; what a slot would single-step
 * (the B back out of reach, a v-register literal beyond +-1 MiB, which
 * borrows x16) or simulate only cannot be in a pad: -EILSEQ.
 */
int aarch64_relocate_window(const uint8_t *func, size_t func_size,
			    uint64_t func_addr, uint64_t from, size_t min_len,
			    uint64_t to, uint8_t *out, size_t size, size_t *inlen)
{
	struct aarch64_out o = { out, size, 0, to, false };
	struct aarch64_insn in;
	struct aarch64_step st = { false, -1, 0 };
	const char *reason;
	bool ends = false;
	int err;

	if (min_len > 4 || from < func_addr || (from & 3) ||
	    from - func_addr > func_size || func_size - (from - func_addr) < 4)
		return -ERANGE;
	const uint8_t *at = func + (from - func_addr);
	if (aarch64_decode(&in, aarch64_word(at), from) < 0)
		return -EILSEQ;
	err = aarch64_classify(&in, at + 4, func_size - (from - func_addr) - 4, &reason);
	if (err < 0 || err == ARCH_REJECT)
		return -EILSEQ;
	err = aarch64_relocate(&in, &o, &st, &ends);
	if (err == -ENOSPC)
		return -ENOSPC;
	if (err < 0 || st.step || st.scratch >= 0)
		return -EILSEQ;
	if (!ends) {
		if (!aarch64_in_b_reach(aarch64_here(&o), from + 4))
			return -ERANGE;
		aarch64_emit_b(&o, from + 4);
	}
	*inlen = 4;
	return finish(&o);
}

/*
 * The hand-off to the agent, after the save (x19 = frame) and, in a
 * recording pad, the collector's full-ring fall-through.  x20 holds the
 * entry from its claim on (arch_ops.pad_entry_regnum: the agent reads it
 * when a thread owns two ready entries); every register it uses is the
 * program's, saved in the frame.
 *
 *         mov   x8, #178 ; svc #0          gettid
 *         mov   w21, w0                    tid
 *         movz/movk x22, #table
 *         movz  x9, #nentries-1
 *         and   w23, w0, w9                k = tid mod nentries
 *   retry:
 *         add   x20, x22, x23, lsl #shift  entry k
 *         add   x24, x20, #off_owner
 *         ldaxr w25, [x24]
 *         cbnz  w25, next                  someone's
 *         stlxr w26, w21, [x24]            owner = tid, if still free
 *         cbnz  w26, retry
 *         b     claimed
 *   next: clrex
 *         add   w23, w23, #1
 *         and   w23, w23, w9
 *         b     retry
 *   claimed:
 *         add   x4, x20, #off_frame
 *         ldp   x5, x6, [x19, #16*i] ; stp x5, x6, [x4, #16*i]   i = 0..16
 *         add   x24, x20, #off_ready
 *         movz  w5, #PAD_READY
 *         stlr  w5, [x24]
 *   trap: brk   #0                         the agent's one stop
 *         ldar  w5, [x24]
 *         cmp   w5, #PAD_DONE
 *         b.ne  trap                       not handled: trap again
 *         str   wzr, [x24]                 ready = PAD_FREE
 *         add   x24, x20, #off_owner
 *         stlr  wzr, [x24]                 the entry is free
 *
 * The BRK leaves the pc on itself: the agent resumes a handled thread
 * past it, or (pad.c) at the pad's copy of the displaced code with the
 * frame's registers, freeing the entry itself.  The keeper's pad_open
 * replaces the four words from the trap on (agent/aarch64-ptrace.c).
 */
int aarch64_emit_pad_handoff(uint8_t *out, size_t size,
			     const struct arch_pad_handoff *h, size_t *trap_off)
{
	struct aarch64_out o = { out, size, 0, 0, false };
	unsigned int ent;
	size_t retry, to_next, to_claimed, next, trap;

	if (!h->nentries || (h->nentries & (h->nentries - 1)) ||
	    h->entry_shift < 6 || h->entry_shift > 20 || (h->table & 63))
		return -EINVAL;
	ent = 1u << h->entry_shift;
	if (!part_fits(h->off_owner, 4, ent) || (h->off_owner & 3) ||
	    !part_fits(h->off_ready, 4, ent) || (h->off_ready & 3) ||
	    !part_fits(h->off_frame, FRAME_BYTES, ent) || (h->off_frame & 7) ||
	    !apart(h->off_owner, 4, h->off_ready, 4) ||
	    !apart(h->off_owner, 4, h->off_frame, FRAME_BYTES) ||
	    !apart(h->off_ready, 4, h->off_frame, FRAME_BYTES) ||
	    h->off_owner >= 4096 || h->off_ready >= 4096 || h->off_frame >= 4096)
		return -EINVAL;

	aarch64_emit_mov_imm(&o, 8, 178);			/* gettid */
	aarch64_put32(&o, 0xd4000001u);				/* svc #0 */
	aarch64_put32(&o, 0x2a0003e0u | 0 << 16 | 21);		/* mov w21, w0 */
	aarch64_emit_mov_imm(&o, 22, h->table);
	aarch64_emit_mov_imm(&o, 9, h->nentries - 1);
	aarch64_put32(&o, 0x0a000000u | 9 << 16 | 0 << 5 | 23);	/* and w23, w0, w9 */
	retry = o.len;
	aarch64_put32(&o, 0x8b000000u | 23 << 16 | h->entry_shift << 10 | 22 << 5 | 20);
	aarch64_emit_add_imm(&o, 24, 20, h->off_owner, 10);
	aarch64_put32(&o, 0x885ffc00u | 24 << 5 | 25);		/* ldaxr w25, [x24] */
	to_next = o.len;
	aarch64_put32(&o, 0);					/* cbnz w25, next */
	aarch64_put32(&o, 0x8800fc00u | 26 << 16 | 24 << 5 | 21); /* stlxr w26, w21, [x24] */
	aarch64_put32(&o, enc_cbnz_w(o.len, retry, 26));
	to_claimed = o.len;
	aarch64_put32(&o, 0);					/* b claimed */
	next = o.len;
	aarch64_put32(&o, 0xd503305fu);				/* clrex */
	aarch64_put32(&o, 0x11000000u | 1 << 10 | 23 << 5 | 23);	/* add w23, w23, #1 */
	aarch64_put32(&o, 0x0a000000u | 9 << 16 | 23 << 5 | 23);	/* and w23, w23, w9 */
	aarch64_put32(&o, enc_b_off(o.len, retry));
	if (!o.overflow) {
		uint32_t w = enc_cbnz_w(to_next, next, 25);
		for (int k = 0; k < 4; k++)
			out[to_next + k] = (uint8_t)(w >> (8 * k));
		w = enc_b_off(to_claimed, o.len);
		for (int k = 0; k < 4; k++)
			out[to_claimed + k] = (uint8_t)(w >> (8 * k));
	}
	aarch64_emit_add_imm(&o, 4, 20, h->off_frame, 10);
	for (unsigned int i = 0; i < FRAME_BYTES; i += 16) {
		put_pair(&o, true, 5, 6, FP, i);
		put_pair(&o, false, 5, 6, 4, i);
	}
	aarch64_emit_add_imm(&o, 24, 20, h->off_ready, 10);
	aarch64_put32(&o, 0x52800000u | PAD_READY << 5 | 5);	/* movz w5, #READY */
	aarch64_put32(&o, 0x889ffc00u | 24 << 5 | 5);		/* stlr w5, [x24] */
	trap = o.len;
	aarch64_put32(&o, 0xd4200000u);				/* brk #0 */
	aarch64_put32(&o, 0x88dffc00u | 24 << 5 | 5);		/* ldar w5, [x24] */
	aarch64_put32(&o, 0x7100001fu | PAD_DONE << 10 | 5 << 5);	/* cmp w5, #DONE */
	aarch64_put32(&o, enc_bcond(o.len, trap, 1));		/* b.ne trap */
	aarch64_put32(&o, 0xb9000000u | 24 << 5 | 31);		/* str wzr, [x24] */
	aarch64_emit_add_imm(&o, 24, 20, h->off_owner, 10);
	aarch64_put32(&o, 0x889ffc00u | 24 << 5 | 31);		/* stlr wzr, [x24] */
	*trap_off = trap;
	return finish(&o);
}

/*
 * A thread stepped out of a pad: every instruction of the pad steps,
 * except an exclusive load or store (LDXR, LDAXR, STXR, STLXR and their
 * pairs: bits 29-24 = 001000, o2 (bit 23) = 0), which the step's
 * exception defeats.  The pads and the return trampoline have them:
 *
 *  - in their claims (x1: a record, x24: a hand-off entry, x13: a
 *    thread's slot), where the frame is complete (x19) and nothing is
 *    claimed yet: the thread goes back (ARCH_PAD_REWIND);
 *  - in the native condition's count of a false condition (x16), before
 *    the save: no frame to go back with;
 *  - in the trampoline's histogram count (x8, aarch64-retpad.c put_hist):
 *    after the sum's add, going back would add the latency twice;
 *  - in the header's counters (x23, put_count: fallbacks, waits,
 *    orphans), which going back would count twice.
 *
 * The last three are done by hand as in the collector
 * (aarch64_callee_step): the agent steps a thread out only with every
 * thread of the process stopped.
 */
int aarch64_pad_step(const uint8_t *insn, size_t len, struct arch_gpregs *regs,
		     const struct arch_mem *mem)
{
	if (len < 4 || (aarch64_word(insn) & 0x3f800000u) != 0x08000000u)
		return ARCH_PAD_STEP;
	unsigned int rn = (aarch64_word(insn) >> 5) & 31;
	if ((rn == 16 || rn == 8 || rn == 23) && regs && mem)
		return aarch64_callee_step(insn, len, regs, mem);
	return ARCH_PAD_REWIND;
}

/*
 * A thread stepped out of the in-process collector a pad called: its
 * atomic counters are exclusive loops (ldxr; add; stxr; cbnz: ARMv8.0
 * has no single-instruction atomics), which never succeed stepped, and
 * the collector runs after the record's claim, so the thread cannot go
 * back either.  The exclusive load is done here as a plain load, the
 * store as a plain store that succeeds (status 0): the thread's
 * sequence completes, atomically as long as no other thread of the
 * process runs meanwhile (all-stop: the agent stops them all first).
 * Byte to doubleword, acquire and release alike; pairs step.
 *
 *   size 001000 o2=0 L o1=0 Rs o0 Rt2 Rn Rt   (bits 31-30, 29-24, 23, 22, 21, 20-16, 15, 14-10, 9-5, 4-0)
 */
int aarch64_callee_step(const uint8_t *insn, size_t len, struct arch_gpregs *regs,
			const struct arch_mem *mem)
{
	uint32_t w;
	unsigned int size, rt, rn, rs;
	uint64_t addr, v = 0;
	int err;

	if (len < 4)
		return ARCH_PAD_STEP;
	w = aarch64_word(insn);
	if ((w & 0x3fa00000u) != 0x08000000u)	/* not LDXR/LDAXR/STXR/STLXR */
		return ARCH_PAD_STEP;
	size = 1u << (w >> 30);
	rt = w & 31;
	rn = (w >> 5) & 31;
	rs = (w >> 16) & 31;
	addr = regs->gpr[rn];			/* Rn 31: sp, gpr[31] */
	if (w & (1u << 22)) {
		if ((err = mem->read(mem->ctx, addr, &v, size)) < 0)
			return err;
		if (rt != 31)
			regs->gpr[rt] = v;	/* little-endian, zero-extended */
	} else {
		v = rt == 31 ? 0 : regs->gpr[rt];
		if ((err = mem->write(mem->ctx, addr, &v, size)) < 0)
			return err;
		if (rs != 31)
			regs->gpr[rs] = 0;	/* the store succeeded */
	}
	regs->pc += 4;
	return ARCH_PAD_DONE;
}

/*
 * The shared memory's entries and records: 1 KiB.  The image (v0-v31,
 * fpsr, fpcr: a record's only) at 0, the frame of 34 words at 528, the
 * owner and ready words (a record's sequence word) at 800, the bases'
 * place at 808 (unused: TPIDR_EL0 is not in gdb's register set here),
 * a record's tid at 824 and time at 832, to 848.
 */
const struct arch_pad_layout aarch64_pad_layout = {
	.entry_shift = 10, .image_bytes = AARCH64_PAD_IMAGE_BYTES,
	.off_owner = 800, .off_ready = 804, .off_seq = 800,
	.off_bases = 808, .off_frame = 528, .off_tid = 824, .off_time = 832,
	.frame_words = AARCH64_PAD_FRAME_WORDS, .frame_pc = 32,
};
