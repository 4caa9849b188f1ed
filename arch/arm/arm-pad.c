/*
 * arm-pad.c - the parts of a 32-bit ARM jump pad: the register save and
 * restore, the in-process collector, the hand-off to the agent and the
 * displaced instruction(s).
 *
 * The site's instruction is replaced by a direct branch to the pad: A32
 * `B` (+-32 MiB) at an A32 site, `B.W` (+-16 MiB) at a Thumb one.
 * Neither changes the instruction set, and a Thumb branch that did
 * (BLX) would write lr, so the pad of a Thumb site starts in Thumb and
 * switches to A32 at once with `bx pc` (which reads the pc as the
 * address + 4, bit 0 clear: A32 from the next word, no register
 * written); the body is A32 whatever the site's set, and a Thumb pad
 * switches back to run its window with `ldr pc, [pc, #-4]`, whose literal
 * has bit 0 set (an A32 load to the pc interworks on ARMv7):
 *
 *   A:     b pad  (A32)  |  b.w pad  (Thumb, the pad 4-aligned)
 *
 *   pad:   [bx pc ; nop]                  Thumb site: into A32
 *          save      frame of 17 64-bit words on the stack: r0-r12, sp,
 *                    lr, pc (A, bit 0 clear), cpsr (APSR, with T for a
 *                    Thumb site); r0 = r4 = frame
 *          collect   [ask the in-process collector whether it wants the
 *                    hit: no -> b restore] claim a record of the ring
 *                    (ldrex/strex), copy the frame (and d0-d31, fpscr),
 *                    [the collector's blocks], publish; b restore (the
 *                    collector's IPA_TRAP: on to the hand-off)
 *          (full)    hand-off: claim a table entry by tid, copy the frame,
 *                    mark it ready, udf #16; wait for PAD_DONE, free it
 *          restore   every register back from the frame
 *   win:   [ldr pc, [pc, #-4] ; .word win+8|1]   Thumb: back into Thumb
 *          the displaced instruction(s), copied (the boost class), a
 *          direct branch as loads of lr and the pc from literals, a
 *          literal load or ADR from the pad's literal of its address
 *          b A+len / b.w A+len|1 (or ldr pc, = beyond reach)
 *
 * The frame keeps the agent's layout of 64-bit words (the high halves
 * zero), so the drain and the hand-off read it as on the 64-bit arches:
 *
 *   before:                        after:
 *     sp -> | caller data |          orig sp -> | caller data |
 *                                               | cpsr, 0     |  +128
 *                                               | pc = A, 0   |  +120
 *                                               | lr, 0       |  +112
 *                                               | sp = orig, 0|  +104
 *                                               | r0..r12     |  +0 .. +96
 *                                r0 = r4 = sp ->
 *
 * The AAPCS has no red zone (signal frames go right below sp), so the
 * save may use the stack below sp at once.  cpsr is what `mrs` shows in
 * user mode (N, Z, C, V, Q, GE; the execution-state bits read as zero),
 * plus T for a Thumb site: the thread's state at the probe.  r4,
 * callee-saved, keeps the frame's address across the collector's system
 * calls; the restore reloads it with the others.  The frame holds the
 * general registers only: the pad never touches d0-d31 or fpscr, so a
 * thread stopped at the hand-off's udf still has them for the agent to
 * read from the kernel; the collector, whose hit nothing reads later,
 * copies them into its record (the image: d0-d31 at 0, fpscr at 256,
 * which needs the 32 d registers of VFPv3-D32 / NEON).
 *
 * ARMv7 has no load-acquire: an acquiring load is `ldr; dmb ish`, a
 * releasing store `dmb ish; str`.  The ring's head and a record's
 * sequence word are 64-bit in the shared memory; the pad reads and
 * writes their low halves (little-endian), so positions wrap after 2^32
 * hits of a process.
 *
 * A thread the agent must take out of a pad is stepped in software, by
 * breakpoints at the next pcs: a breakpoint's trap clears the exclusive
 * monitor as a step would, so at an `ldrex` or `strex` of the claims the
 * thread goes back to the probe with the frame's registers
 * (arm_pad_step: ARCH_PAD_REWIND; the frame is complete and nothing is
 * claimed yet there).  tests/arch/arm-table checks the words on every
 * host, tests/arch/arm-pad-exec.c runs whole pads under qemu-arm-static.
 */
#include "config.h"

#include <errno.h>

#include "arch/arm/arm.h"

#define FRAME_BYTES (ARM_PAD_FRAME_WORDS * 8)
#define FP 4		/* r4: the frame's address */
#define ENTRY 5		/* r5: the hand-off's entry */

/*
 * The A32 encodings used below (cond AL; Rn bits 19-16, Rd/Rt 15-12,
 * Rm 3-0, imm12 11-0, modified immediates as rot:imm8):
 *   str   rt, [rn, #imm12]       e580 0000      ldr  rt, [rn, #imm12]  e590 0000
 *   add   rd, rn, #mimm          e280 0000      sub  rd, rn, #mimm     e240 0000
 *   add   rd, rn, rm, lsl #s     e080 0000 | s << 7
 *   and   rd, rn, rm             e000 0000      orr  rd, rn, #mimm     e380 0000
 *   mov   rd, rm                 e1a0 0000      mov  rd, #mimm         e3a0 0000
 *   movw  rd, #imm16             e300 0000      movt rd, #imm16        e340 0000
 *   cmp   rn, rm                 e150 0000      cmp  rn, #mimm         e350 0000
 *   mrs   rd, apsr               e10f 0000      msr  apsr_nzcvqg, rn   e12c f000
 *   ldrex rt, [rn]               e190 0f9f      strex rd, rt, [rn]     e180 0f90
 *   ldmia rn!, {list}            e8b0 0000      stmia rn!, {list}      e8a0 0000
 *   vstmia rn, {d0-d15}          ec80 0b20      vstmia rn, {d16-d31}   ecc0 0b20
 *   vmrs  rt, fpscr              eef1 0a10      svc  #0                ef00 0000
 *   dmb   ish                    f57f f05b      clrex                  f57f f01f
 *   udf   #16                    e7f0 01f0      b<c>                   c 1010 imm24
 *   bic   rd, rn, #mimm          e3c0 0000      blx  rm                e12f ff30
 *   Thumb: bx pc 4778, nop bf00
 */
#define A32_DMB 0xf57ff05bu
#define A32_CLREX 0xf57ff01fu
#define A32_SVC 0xef000000u
#define A32_BLX_R12 0xe12fff3cu		/* blx r12 */
#define COND_EQ 0u
#define COND_NE 1u
#define COND_AL 14u
#define IPA_TRAP_VERDICT 3u		/* enum ipa_verdict's IPA_TRAP */

static int finish(const struct arm_out *o)
{
	return o->overflow ? -ENOSPC : (int)o->len;
}

static void put_ldst(struct arm_out *o, bool load, unsigned int t,
		     unsigned int n, unsigned int off)
{
	arm_put32(o, (load ? 0xe5900000u : 0xe5800000u) | n << 16 | t << 12 | off);
}

/* The rot:imm8 form of `v`, or -1 when it has none. */
static int mod_imm(uint32_t v)
{
	for (unsigned int rot = 0; rot < 16; rot++) {
		uint32_t r = rot ? (v << (2 * rot)) | (v >> (32 - 2 * rot)) : v;
		if (r < 256)
			return (int)(rot << 8 | r);
	}
	return -1;
}

static void put_movw(struct arm_out *o, unsigned int d, uint32_t v)
{
	arm_put32(o, 0xe3000000u | (v >> 12 & 0xf) << 16 | d << 12 | (v & 0xfff));
}

static void put_mov32(struct arm_out *o, unsigned int d, uint32_t v)
{
	put_movw(o, d, v & 0xffff);
	if (v >> 16)
		arm_put32(o, 0xe3400000u | (v >> 28) << 16 | d << 12 | (v >> 16 & 0xfff));
}

/* rd = rn + imm, through rtmp when imm has no modified-immediate form. */
static void put_add_imm(struct arm_out *o, unsigned int d, unsigned int n,
			uint32_t imm, unsigned int tmp)
{
	int m = mod_imm(imm);

	if (m >= 0) {
		arm_put32(o, 0xe2800000u | n << 16 | d << 12 | (uint32_t)m);
	} else {
		put_mov32(o, tmp, imm);
		arm_put32(o, 0xe0800000u | n << 16 | d << 12 | tmp);
	}
}

/* A B<c> from offset `from` to offset `to` of the same code. */
static uint32_t enc_b_off(size_t from, size_t to, unsigned int cond)
{
	return arm_enc_b(from, to, cond);
}

static void put_b_to(struct arm_out *o, size_t to, unsigned int cond)
{
	arm_put32(o, enc_b_off(o->len, to, cond));
}

static void patch32(uint8_t *code, size_t at, uint32_t w)
{
	for (int k = 0; k < 4; k++)
		code[at + k] = (uint8_t)(w >> (8 * k));
}

/*
 * Copies `words` 32-bit words from [src] to [dst] with LDMIA/STMIA
 * (both written back), through the registers of `list` (a mask of
 * r0-r12 that holds neither pointer).
 */
static void put_copy(struct arm_out *o, unsigned int src, unsigned int dst,
		     unsigned int words, uint16_t list)
{
	unsigned int n = 0;

	for (uint16_t l = list; l; l &= (uint16_t)(l - 1))
		n++;
	while (words) {
		unsigned int k = words < n ? words : n;
		uint16_t chunk = 0, l = list;
		for (unsigned int i = 0; i < k; i++) {
			uint16_t low = (uint16_t)(l & -l);
			chunk |= low;
			l &= (uint16_t)~low;
		}
		arm_put32(o, 0xe8b00000u | src << 16 | chunk);
		arm_put32(o, 0xe8a00000u | dst << 16 | chunk);
		words -= k;
	}
}

/*
 *   [bx pc ; nop]                 Thumb site (the pad 4-aligned)
 *   sub  sp, sp, #136
 *   str  r0, [sp] .. str r12, [sp, #96]
 *   mov  r0, #0 ; str r0, [sp, #8*i+4]      the high halves, i = 0..16
 *   add  r0, sp, #136 ; str r0, [sp, #104]  the program's sp
 *   str  lr, [sp, #112]
 *   movw/movt r0, #A ; str r0, [sp, #120]
 *   mrs  r0, apsr ; [orr r0, r0, #T] ; str r0, [sp, #128]
 *   mov  r4, sp ; mov r0, sp
 *
 * `pc`: the probe's address, bit 0 set for a Thumb site.
 */
int arm_emit_save_regs(uint8_t *out, size_t size, uint64_t pc)
{
	struct arm_out o = { out, size, 0, 0, false };
	bool thumb = pc & 1;

	if (thumb) {
		arm_put16(&o, 0x4778);				/* bx pc */
		arm_put16(&o, 0xbf00);				/* nop */
	}
	arm_put32(&o, 0xe24dd000u | FRAME_BYTES);		/* sub sp, sp, #136 */
	for (unsigned int r = 0; r <= 12; r++)
		put_ldst(&o, false, r, ARM_SP, r * 8);
	arm_put32(&o, 0xe3a00000u);				/* mov r0, #0 */
	for (unsigned int i = 0; i < ARM_PAD_FRAME_WORDS; i++)
		put_ldst(&o, false, 0, ARM_SP, i * 8 + 4);
	arm_put32(&o, 0xe28d0000u | FRAME_BYTES);		/* add r0, sp, #136 */
	put_ldst(&o, false, 0, ARM_SP, ARM_SP * 8);
	put_ldst(&o, false, ARM_LR, ARM_SP, ARM_LR * 8);
	put_mov32(&o, 0, (uint32_t)pc & ~1u);
	put_ldst(&o, false, 0, ARM_SP, ARM_PC * 8);
	arm_put32(&o, 0xe10f0000u);				/* mrs r0, apsr */
	if (thumb)
		arm_put32(&o, 0xe3800000u | ARM_PSR_T);		/* orr r0, r0, #T */
	put_ldst(&o, false, 0, ARM_SP, ARM_CPSR * 8);
	arm_put32(&o, 0xe1a0000du | FP << 12);			/* mov r4, sp */
	arm_put32(&o, 0xe1a0000du);				/* mov r0, sp */
	return finish(&o);
}

/*
 *   mov  sp, r4                   (the frame, wherever the code between
 *                                  left sp)
 *   ldr  r0, [sp, #128] ; msr apsr_nzcvqg, r0
 *   ldr  r0, [sp] .. ldr r12, [sp, #96]
 *   ldr  lr, [sp, #112]
 *   add  sp, sp, #136
 */
int arm_emit_restore_regs(uint8_t *out, size_t size)
{
	struct arm_out o = { out, size, 0, 0, false };

	arm_put32(&o, 0xe1a0d000u | FP);			/* mov sp, r4 */
	put_ldst(&o, true, 0, ARM_SP, ARM_CPSR * 8);
	arm_put32(&o, 0xe12cf000u);				/* msr apsr_nzcvqg, r0 */
	for (unsigned int r = 0; r <= 12; r++)
		put_ldst(&o, true, r, ARM_SP, r * 8);
	put_ldst(&o, true, ARM_LR, ARM_SP, ARM_LR * 8);
	arm_put32(&o, 0xe28dd000u | FRAME_BYTES);		/* add sp, sp, #136 */
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

/*
 * The in-process collector's calls (arch.h, struct arch_pad_ring): AAPCS,
 * arguments in r0-r3 and the fifth at [sp], sp 8-byte aligned at the
 * call (16 here, as the other arches'), r0-r3, r12, lr and the flags
 * the callee's, r4-r11 and sp kept.  Every register the pad needs after
 * a call is callee-saved (r4 the frame; the record's address and
 * position in r10 and r11), and the rest are reloaded from the frame by
 * the restore, which also puts sp back (mov sp, r4).  The stack below
 * the frame is free (no red zone, see the top).  `blx r12` interworks:
 * the image may be A32 or Thumb (its symbols' bit 0), the pad stays A32.
 *
 * ipa_site_wants(site, frame, 17), before the claim:
 *
 *         movw/movt r0, #site
 *         mov   r1, r4                     the frame, on the stack
 *         mov   r2, #17
 *         bic   r12, r4, #15 ; mov sp, r12 sp 16-aligned, below the frame
 *         movw/movt r12, #wants
 *         blx   r12
 *         cmp   r0, #0
 *         beq   skip                       (*skip: the collector's b done)
 */
static void put_ipa_wants(struct arm_out *o, const struct arch_pad_ring *r,
			  size_t *skip)
{
	put_mov32(o, 0, (uint32_t)r->ipa_site);
	arm_put32(o, 0xe1a00000u | 1 << 12 | FP);		/* mov r1, r4 */
	arm_put32(o, 0xe3a02000u | ARM_PAD_FRAME_WORDS);	/* mov r2, #17 */
	arm_put32(o, 0xe3c0000fu | FP << 16 | 12 << 12);	/* bic r12, r4, #15 */
	arm_put32(o, 0xe1a0d00cu);				/* mov sp, r12 */
	put_mov32(o, 12, (uint32_t)r->ipa_wants);
	arm_put32(o, A32_BLX_R12);
	arm_put32(o, 0xe3500000u);				/* cmp r0, #0 */
	*skip = o->len;
	arm_put32(o, 0);					/* beq skip */
}

/*
 * ipa_collect_site(site, record's frame, 17, record's blocks, size) on the
 * claimed, filled record (r2 its position, r3 its address), then the
 * publish whatever it says:
 *
 *         mov   r10, r3 ; mov r11, r2
 *         movw/movt r0, #site
 *         add   r1, r3, #off_frame
 *         mov   r2, #17
 *         add   r3, r3, #off_blocks
 *         bic   r12, r4, #15 ; sub sp, r12, #16
 *         movw/movt r12, #blocks_size ; str r12, [sp]   the fifth argument
 *         movw/movt r12, #call
 *         blx   r12                        r0: the verdict
 *         mov   r3, r10 ; mov r2, r11
 *
 * (the adds through r12 when an offset has no immediate form).
 */
static void put_ipa_call(struct arm_out *o, const struct arch_pad_ring *r)
{
	arm_put32(o, 0xe1a0a003u);				/* mov r10, r3 */
	arm_put32(o, 0xe1a0b002u);				/* mov r11, r2 */
	put_mov32(o, 0, (uint32_t)r->ipa_site);
	put_add_imm(o, 1, 3, r->off_frame, 12);
	arm_put32(o, 0xe3a02000u | ARM_PAD_FRAME_WORDS);	/* mov r2, #17 */
	put_add_imm(o, 3, 3, r->off_blocks, 12);
	arm_put32(o, 0xe3c0000fu | FP << 16 | 12 << 12);	/* bic r12, r4, #15 */
	arm_put32(o, 0xe24cd010u);				/* sub sp, r12, #16 */
	put_mov32(o, 12, r->blocks_size);
	put_ldst(o, false, 12, ARM_SP, 0);			/* str r12, [sp] */
	put_mov32(o, 12, (uint32_t)r->ipa_call);
	arm_put32(o, A32_BLX_R12);
	arm_put32(o, 0xe1a0300au);				/* mov r3, r10 */
	arm_put32(o, 0xe1a0200bu);				/* mov r2, r11 */
}

/*
 * The hitting thread's id into r0 (r5-r10 change).  With the agent's
 * table (tid_table: PAD_TID_* in arch/arch.h, 64-bit keys: TPIDRURO, the
 * high word 0) it is looked up by the thread pointer, and only a thread
 * the table does not name (no entry, or tid 0: more than one thread has
 * that pointer) asks the kernel.  The hash's index is the top
 * PAD_TID_BITS bits of the 64-bit key * PAD_TID_HASH, whose high word is
 * hi(k * lo(HASH)) + k * hi(HASH):
 *
 *         mrc   p15, 0, r5, c13, c0, 3    TPIDRURO
 *         movw/movt r6, #lo(HASH) ; movw/movt r10, #hi(HASH)
 *         umull r8, r9, r5, r6
 *         mla   r9, r5, r10, r9
 *         lsr   r9, r9, #(32 - PAD_TID_BITS)
 *         movw/movt r7, #tid_table
 *         add   r7, r7, r9, lsl #4         the key's first entry
 *         mov   r8, #PAD_TID_PROBES
 *   next: ldr   r9, [r7] ; ldr r10, [r7, #4]
 *         cmp   r9, r5 ; cmpeq r10, #0
 *         beq   found
 *         orrs  r9, r9, r10
 *         beq   ask                        a free entry ends the search
 *         add   r7, r7, #16
 *         subs  r8, r8, #1
 *         bne   next
 *   ask:  mov   r7, #224 ; svc #0          gettid
 *         b     have
 *   found: ldr  r0, [r7, #8]
 *         cmp   r0, #0
 *         beq   ask
 *   have:
 *
 * A thread pointer of 0 finds a free entry's key and its tid 0: it asks.
 * Without the table, only the system call.
 */
static void put_tid(struct arm_out *o, const struct arch_pad_ring *r)
{
	size_t next, ask, to_found, to_have;

	if (!r->tid_table) {
		arm_put32(o, 0xe3a07000u | 224);		/* mov r7, #224: gettid */
		arm_put32(o, A32_SVC);
		return;
	}
	arm_put32(o, 0xee1d0f70u | 5 << 12);			/* mrc p15, 0, r5, c13, c0, 3 */
	put_mov32(o, 6, (uint32_t)PAD_TID_HASH);
	put_mov32(o, 10, (uint32_t)(PAD_TID_HASH >> 32));
	arm_put32(o, 0xe0800090u | 9 << 16 | 8 << 12 | 6 << 8 | 5);	/* umull r8, r9, r5, r6 */
	arm_put32(o, 0xe0200090u | 9 << 16 | 9 << 12 | 10 << 8 | 5);	/* mla r9, r5, r10, r9 */
	arm_put32(o, 0xe1a00020u | 9 << 12 | (32 - PAD_TID_BITS) << 7 | 9);
								/* lsr r9, r9, #22 */
	put_mov32(o, 7, (uint32_t)r->tid_table);
	arm_put32(o, 0xe0800000u | 7 << 16 | 7 << 12 | 4 << 7 | 9);	/* add r7, r7, r9, lsl #4 */
	arm_put32(o, 0xe3a08000u | PAD_TID_PROBES);		/* mov r8, #PROBES */
	next = o->len;
	put_ldst(o, true, 9, 7, 0);				/* ldr r9, [r7] */
	put_ldst(o, true, 10, 7, 4);				/* ldr r10, [r7, #4] */
	arm_put32(o, 0xe1500000u | 9 << 16 | 5);		/* cmp r9, r5 */
	arm_put32(o, 0x03500000u | 10 << 16);			/* cmpeq r10, #0 */
	to_found = o->len;
	arm_put32(o, 0);					/* beq found */
	arm_put32(o, 0xe1900000u | 9 << 16 | 9 << 12 | 10);	/* orrs r9, r9, r10 */
	size_t to_ask = o->len;
	arm_put32(o, 0);					/* beq ask */
	arm_put32(o, 0xe2800010u | 7 << 16 | 7 << 12);		/* add r7, r7, #16 */
	arm_put32(o, 0xe2500001u | 8 << 16 | 8 << 12);		/* subs r8, r8, #1 */
	put_b_to(o, next, COND_NE);
	ask = o->len;
	if (!o->overflow)
		patch32(o->buf, to_ask, enc_b_off(to_ask, ask, COND_EQ));
	arm_put32(o, 0xe3a07000u | 224);			/* mov r7, #224: gettid */
	arm_put32(o, A32_SVC);
	to_have = o->len;
	arm_put32(o, 0);					/* b have */
	if (!o->overflow)					/* found: */
		patch32(o->buf, to_found, enc_b_off(to_found, o->len, COND_EQ));
	put_ldst(o, true, 0, 7, 8);				/* ldr r0, [r7, #8] */
	arm_put32(o, 0xe3500000u);				/* cmp r0, #0 */
	put_b_to(o, ask, COND_EQ);
	if (!o->overflow)					/* have: */
		patch32(o->buf, to_have, enc_b_off(to_have, o->len, COND_AL));
}

/*
 * The hit's time at off_time (r0, r1 and r7 change).  With tsc_time the
 * generic timer's virtual counter (CNTVCT, the same on every CPU and
 * counting in sleep; the agent asks for it only where the kernel lets
 * user mode read it) and PAD_TIME_TSC where a timespec's tv_nsec would
 * be, which the agent converts with the counter's rate (CNTFRQ):
 *
 *         isb
 *         mrrc  p15, 1, r0, r1, c14        CNTVCT
 *         str   r0, [r3, #off_time] ; str r1, [r3, #off_time + 4]
 *         mvn   r0, #0                     PAD_TIME_TSC (-1)
 *         str   r0, [r3, #off_time + 8] ; str r0, [r3, #off_time + 12]
 *
 * Else the kernel's CLOCK_REALTIME, by clock_gettime64 into the record.
 */
static void put_time(struct arm_out *o, const struct arch_pad_ring *r)
{
	if (r->tsc_time) {
		arm_put32(o, 0xf57ff06fu);			/* isb */
		arm_put32(o, 0xec510f1eu);			/* mrrc p15, 1, r0, r1, c14 */
		put_ldst(o, false, 0, 3, r->off_time);
		put_ldst(o, false, 1, 3, r->off_time + 4);
		arm_put32(o, 0xe3e00000u);			/* mvn r0, #0 */
		put_ldst(o, false, 0, 3, r->off_time + 8);
		put_ldst(o, false, 0, 3, r->off_time + 12);
		return;
	}
	arm_put32(o, 0xe3a00000u);				/* CLOCK_REALTIME */
	put_add_imm(o, 1, 3, r->off_time, 10);
	put_movw(o, 7, 403);					/* clock_gettime64 */
	arm_put32(o, A32_SVC);
}

/*
 * The collector, after the save (r4 = frame).  Registers it uses are
 * the program's, saved in the frame: r1 head, r2 p, r3 record, r5-r12.
 *
 *       [ ipa_site_wants: put_ipa_wants ]  (with ipa_call and ipa_wants)
 *         movw/movt r1, #ring              &head (its low half)
 *         movw  r9, #nrecords-1
 *   retry:
 *         ldr   r2, [r1] ; dmb             p = head
 *         and   r3, r2, r9
 *         add   r3, r1, r3, lsl #shift
 *         add   r3, r3, #off_records       record of p
 *         ldr   r5, [r3, #off_seq] ; dmb
 *         cmp   r5, r2
 *         bne   notfree                    seq != p: full, or p is old
 *         ldrex r6, [r1]
 *         cmp   r6, r2
 *         bne   lost
 *         add   r7, r2, #1
 *         strex r8, r7, [r1]               head = p + 1, if still p
 *         cmp   r8, #0
 *         bne   retry
 *         dmb
 *       [ the thread's id (put_tid)
 *         str r0, [r3, #off_tid]
 *         the time (put_time) ]            with time_tid
 *         mov   r0, r4 ; add r1, r3, #off_frame
 *         ldmia r0!, {r5-r12} ; stmia r1!, {r5-r12} ...   34 words
 *       [ vstmia r3, {d0-d15} ; add r0, r3, #128 ; vstmia r0, {d16-d31}
 *         vmrs r5, fpscr ; str r5, [r3, #256] ]            (image)
 *       [ ipa_collect_site: put_ipa_call ] (with ipa_call)
 *         add   r7, r2, #1
 *         dmb ; str r7, [r3, #off_seq]     seq = p + 1: the record is full
 *       [ cmp r0, #IPA_TRAP
 *         beq   full ]                     the collector's verdict: the
 *                                          hand-off (after the code)
 *   skip: b     done                       (*done: patch_branch)
 *   lost: clrex
 *         b     retry
 *   notfree:
 *         ldr   r6, [r1] ; dmb
 *         cmp   r6, r2
 *         bne   retry                      another thread took p: again
 *                                          else the ring is full: on
 *   full:
 *
 * The exclusive pair holds nothing but a compare between.  The system
 * calls change r0 only (the kernel keeps the rest); the flags are in the
 * frame.  clock_gettime64 writes the 16-byte timespec the record holds.
 */
int arm_emit_pad_collect(uint8_t *out, size_t size, const struct arch_pad_ring *r,
			 size_t *done)
{
	struct arm_out o = { out, size, 0, 0, false };
	unsigned int rec;
	size_t retry, to_notfree, to_lost, lost, to_skip = 0, to_full = 0;

	if (!r->nrecords || (r->nrecords & (r->nrecords - 1)) || r->nrecords > 65536 ||
	    r->record_shift < 4 || r->record_shift > 24 || (r->ring & 7) ||
	    r->ring > UINT32_MAX)
		return -EINVAL;
	rec = 1u << r->record_shift;
	if (!part_fits(r->off_seq, 8, rec) || (r->off_seq & 7) || r->off_seq >= 4096 ||
	    !part_fits(r->off_frame, FRAME_BYTES, rec) || (r->off_frame & 7) ||
	    !apart(r->off_seq, 8, r->off_frame, FRAME_BYTES) ||
	    (r->off_records & 7))
		return -EINVAL;
	if (r->image &&
	    (!part_fits(0, ARM_PAD_IMAGE_BYTES, rec) ||
	     !apart(0, ARM_PAD_IMAGE_BYTES, r->off_seq, 8) ||
	     !apart(0, ARM_PAD_IMAGE_BYTES, r->off_frame, FRAME_BYTES) ||
	     (r->time_tid && (!apart(0, ARM_PAD_IMAGE_BYTES, r->off_tid, 4) ||
			      !apart(0, ARM_PAD_IMAGE_BYTES, r->off_time, 16)))))
		return -EINVAL;
	if (r->time_tid &&
	    (!part_fits(r->off_tid, 4, rec) || (r->off_tid & 3) || r->off_tid >= 4096 ||
	     !part_fits(r->off_time, 16, rec) || (r->off_time & 7) ||
	     (r->tsc_time && r->off_time + 12 >= 4096) ||
	     !apart(r->off_tid, 4, r->off_time, 16) ||
	     !apart(r->off_tid, 4, r->off_frame, FRAME_BYTES) ||
	     !apart(r->off_tid, 4, r->off_seq, 8) ||
	     !apart(r->off_time, 16, r->off_frame, FRAME_BYTES) ||
	     !apart(r->off_time, 16, r->off_seq, 8)))
		return -EINVAL;
	/* The collector's block area: apart from every other part. */
	if (r->ipa_call &&
	    (r->ipa_call > UINT32_MAX || r->ipa_site > UINT32_MAX ||
	     r->ipa_wants > UINT32_MAX || !r->blocks_size ||
	     !part_fits(r->off_blocks, r->blocks_size, rec) || (r->off_blocks & 7) ||
	     !apart(r->off_blocks, r->blocks_size, r->off_seq, 8) ||
	     !apart(r->off_blocks, r->blocks_size, r->off_frame, FRAME_BYTES) ||
	     (r->image && !apart(r->off_blocks, r->blocks_size, 0, ARM_PAD_IMAGE_BYTES)) ||
	     (r->time_tid && (!apart(r->off_blocks, r->blocks_size, r->off_tid, 4) ||
			      !apart(r->off_blocks, r->blocks_size, r->off_time, 16)))))
		return -EINVAL;

	if (r->ipa_call && r->ipa_wants)
		put_ipa_wants(&o, r, &to_skip);
	put_mov32(&o, 1, (uint32_t)r->ring);
	put_movw(&o, 9, r->nrecords - 1);
	retry = o.len;
	put_ldst(&o, true, 2, 1, 0);				/* ldr r2, [r1] */
	arm_put32(&o, A32_DMB);
	arm_put32(&o, 0xe0000000u | 2 << 16 | 3 << 12 | 9);	/* and r3, r2, r9 */
	arm_put32(&o, 0xe0800000u | 1 << 16 | 3 << 12 | r->record_shift << 7 | 3);
	put_add_imm(&o, 3, 3, r->off_records, 10);
	put_ldst(&o, true, 5, 3, r->off_seq);			/* ldr r5, [r3, #seq] */
	arm_put32(&o, A32_DMB);
	arm_put32(&o, 0xe1500000u | 5 << 16 | 2);		/* cmp r5, r2 */
	to_notfree = o.len;
	arm_put32(&o, 0);					/* bne notfree */
	arm_put32(&o, 0xe1900f9fu | 1 << 16 | 6 << 12);		/* ldrex r6, [r1] */
	arm_put32(&o, 0xe1500000u | 6 << 16 | 2);		/* cmp r6, r2 */
	to_lost = o.len;
	arm_put32(&o, 0);					/* bne lost */
	arm_put32(&o, 0xe2800001u | 2 << 16 | 7 << 12);		/* add r7, r2, #1 */
	arm_put32(&o, 0xe1800f90u | 1 << 16 | 8 << 12 | 7);	/* strex r8, r7, [r1] */
	arm_put32(&o, 0xe3500000u | 8 << 16);			/* cmp r8, #0 */
	put_b_to(&o, retry, COND_NE);
	arm_put32(&o, A32_DMB);
	if (r->time_tid) {
		put_tid(&o, r);
		put_ldst(&o, false, 0, 3, r->off_tid);
		put_time(&o, r);
	}
	arm_put32(&o, 0xe1a00000u | FP);			/* mov r0, r4 */
	put_add_imm(&o, 1, 3, r->off_frame, 10);
	put_copy(&o, 0, 1, FRAME_BYTES / 4, 0x1fe0);		/* r5-r12 */
	if (r->image) {
		arm_put32(&o, 0xec800b20u | 3 << 16);		/* vstmia r3, {d0-d15} */
		arm_put32(&o, 0xe2800080u | 3 << 16);		/* add r0, r3, #128 */
		arm_put32(&o, 0xecc00b20u);			/* vstmia r0, {d16-d31} */
		arm_put32(&o, 0xeef10a10u | 5 << 12);		/* vmrs r5, fpscr */
		put_ldst(&o, false, 5, 3, 256);
	}
	if (r->ipa_call)
		put_ipa_call(&o, r);
	arm_put32(&o, 0xe2800001u | 2 << 16 | 7 << 12);		/* add r7, r2, #1 */
	arm_put32(&o, A32_DMB);
	put_ldst(&o, false, 7, 3, r->off_seq);			/* seq = p + 1 */
	if (r->ipa_call) {
		arm_put32(&o, 0xe3500000u | IPA_TRAP_VERDICT);	/* cmp r0, #IPA_TRAP */
		to_full = o.len;
		arm_put32(&o, 0);				/* beq full */
	}
	*done = o.len;
	arm_put32(&o, enc_b_off(0, 0, COND_AL));		/* b done */
	if (to_skip && !o.overflow)
		patch32(out, to_skip, enc_b_off(to_skip, *done, COND_EQ));
	lost = o.len;
	arm_put32(&o, A32_CLREX);
	put_b_to(&o, retry, COND_AL);
	if (!o.overflow) {
		/* The forward branches, now that their targets are known. */
		patch32(out, to_lost, enc_b_off(to_lost, lost, COND_NE));
		patch32(out, to_notfree, enc_b_off(to_notfree, o.len, COND_NE));
	}
	put_ldst(&o, true, 6, 1, 0);				/* notfree: ldr r6, [r1] */
	arm_put32(&o, A32_DMB);
	arm_put32(&o, 0xe1500000u | 6 << 16 | 2);		/* cmp r6, r2 */
	put_b_to(&o, retry, COND_NE);
	if (to_full && !o.overflow)				/* full: */
		patch32(out, to_full, enc_b_off(to_full, o.len, COND_EQ));
	return finish(&o);
}

/* The B at offset `at` of `code` to offset `to` (A32: +-32 MiB). */
int arm_patch_branch(uint8_t *code, size_t at, size_t to)
{
	int64_t d = (int64_t)to - (int64_t)at - 8;

	if ((d & 3) || d < -(1ll << 25) || d >= (1ll << 25))
		return -ERANGE;
	patch32(code, at, enc_b_off(at, to, COND_AL));
	return 0;
}

/*
 * The hand-off to the agent, after the save (r4 = frame) and, in a
 * recording pad, the collector's full-ring fall-through.  r5 holds the
 * entry from its claim on (arch_ops.pad_entry_regnum); every register it
 * uses is the program's, saved in the frame.
 *
 *         mov   r7, #224 ; svc #0          gettid
 *         mov   r6, r0                     tid
 *         movw/movt r8, #table
 *         movw  r9, #nentries-1
 *         and   r10, r0, r9                k = tid mod nentries
 *   retry:
 *         add   r5, r8, r10, lsl #shift    entry k
 *         add   r11, r5, #off_owner
 *         ldrex r7, [r11]
 *         cmp   r7, #0
 *         bne   next                       someone's
 *         strex r7, r6, [r11]              owner = tid, if still free
 *         cmp   r7, #0
 *         bne   retry
 *         dmb
 *         b     claimed
 *   next: clrex
 *         add   r10, r10, #1
 *         and   r10, r10, r9
 *         b     retry
 *   claimed:
 *         mov   r0, r4 ; add r1, r5, #off_frame
 *         ldmia r0!, {r2, r3, r6-r12} ; stmia r1!, {...}   34 words
 *         add   r11, r5, #off_ready
 *         mov   r7, #PAD_READY
 *         dmb ; str r7, [r11]
 *   trap: udf   #16                        the agent's one stop
 *         ldr   r7, [r11] ; dmb
 *         cmp   r7, #PAD_DONE
 *         bne   trap                       not handled: trap again
 *         mov   r7, #0 ; str r7, [r11]     ready = PAD_FREE
 *         add   r11, r5, #off_owner
 *         dmb ; str r7, [r11]              the entry is free
 *
 * The udf leaves the pc on itself: the agent resumes a handled thread at
 * the pad's copy of the displaced code with the frame's registers,
 * freeing the entry itself (pad.c).
 */
int arm_emit_pad_handoff(uint8_t *out, size_t size, const struct arch_pad_handoff *h,
			 size_t *trap_off)
{
	struct arm_out o = { out, size, 0, 0, false };
	size_t retry, to_next, to_claimed, next, trap;
	unsigned int ent;

	if (!h->nentries || (h->nentries & (h->nentries - 1)) || h->nentries > 65536 ||
	    h->entry_shift < 6 || h->entry_shift > 20 || (h->table & 63) ||
	    h->table > UINT32_MAX)
		return -EINVAL;
	ent = 1u << h->entry_shift;
	if (!part_fits(h->off_owner, 4, ent) || (h->off_owner & 3) ||
	    !part_fits(h->off_ready, 4, ent) || (h->off_ready & 3) ||
	    !part_fits(h->off_frame, FRAME_BYTES, ent) || (h->off_frame & 7) ||
	    !apart(h->off_owner, 4, h->off_ready, 4) ||
	    !apart(h->off_owner, 4, h->off_frame, FRAME_BYTES) ||
	    !apart(h->off_ready, 4, h->off_frame, FRAME_BYTES))
		return -EINVAL;

	arm_put32(&o, 0xe3a07000u | 224);			/* mov r7, #224: gettid */
	arm_put32(&o, A32_SVC);
	arm_put32(&o, 0xe1a00000u | 6 << 12 | 0);		/* mov r6, r0 */
	put_mov32(&o, 8, (uint32_t)h->table);
	put_movw(&o, 9, h->nentries - 1);
	arm_put32(&o, 0xe0000000u | 0 << 16 | 10 << 12 | 9);	/* and r10, r0, r9 */
	retry = o.len;
	arm_put32(&o, 0xe0800000u | 8 << 16 | ENTRY << 12 | h->entry_shift << 7 | 10);
	put_add_imm(&o, 11, ENTRY, h->off_owner, 12);
	arm_put32(&o, 0xe1900f9fu | 11 << 16 | 7 << 12);	/* ldrex r7, [r11] */
	arm_put32(&o, 0xe3500000u | 7 << 16);			/* cmp r7, #0 */
	to_next = o.len;
	arm_put32(&o, 0);					/* bne next */
	arm_put32(&o, 0xe1800f90u | 11 << 16 | 7 << 12 | 6);	/* strex r7, r6, [r11] */
	arm_put32(&o, 0xe3500000u | 7 << 16);			/* cmp r7, #0 */
	put_b_to(&o, retry, COND_NE);
	arm_put32(&o, A32_DMB);
	to_claimed = o.len;
	arm_put32(&o, 0);					/* b claimed */
	next = o.len;
	arm_put32(&o, A32_CLREX);
	arm_put32(&o, 0xe2800001u | 10 << 16 | 10 << 12);	/* add r10, r10, #1 */
	arm_put32(&o, 0xe0000000u | 10 << 16 | 10 << 12 | 9);	/* and r10, r10, r9 */
	put_b_to(&o, retry, COND_AL);
	if (!o.overflow) {
		patch32(out, to_next, enc_b_off(to_next, next, COND_NE));
		patch32(out, to_claimed, enc_b_off(to_claimed, o.len, COND_AL));
	}
	arm_put32(&o, 0xe1a00000u | FP);			/* mov r0, r4 */
	put_add_imm(&o, 1, ENTRY, h->off_frame, 12);
	put_copy(&o, 0, 1, FRAME_BYTES / 4, 0x1fcc);		/* r2, r3, r6-r12 */
	put_add_imm(&o, 11, ENTRY, h->off_ready, 12);
	arm_put32(&o, 0xe3a07000u | PAD_READY);			/* mov r7, #READY */
	arm_put32(&o, A32_DMB);
	put_ldst(&o, false, 7, 11, 0);				/* str r7, [r11] */
	trap = o.len;
	arm_put32(&o, ARM_BKPT_A32);				/* udf #16 */
	put_ldst(&o, true, 7, 11, 0);				/* ldr r7, [r11] */
	arm_put32(&o, A32_DMB);
	arm_put32(&o, 0xe3500000u | 7 << 16 | PAD_DONE);	/* cmp r7, #DONE */
	put_b_to(&o, trap, COND_NE);
	arm_put32(&o, 0xe3a07000u);				/* mov r7, #0 */
	put_ldst(&o, false, 7, 11, 0);				/* ready = FREE */
	put_add_imm(&o, 11, ENTRY, h->off_owner, 12);
	arm_put32(&o, A32_DMB);
	put_ldst(&o, false, 7, 11, 0);				/* owner = 0 */
	*trap_off = trap;
	return finish(&o);
}

/* Whether the Thumb instruction at `at` lies inside an IT block, from
 * the function's start (as arm_op_insn_decode_in walks it). */
static bool thumb_in_it(const uint8_t *func, size_t func_size, uint64_t start,
			uint64_t at)
{
	unsigned int it = 0;

	for (size_t off = 0; off < at - start && off + 2 <= func_size;) {
		uint16_t hw = (uint16_t)(func[off] | func[off + 1] << 8);

		if ((hw & 0xff00) == 0xbf00 && (hw & 0xf))
			it = hw & 0xff;
		else
			it = arm_in_it(it) ? arm_it_advance(it) : 0;
		off += arm_thumb_len(hw);
	}
	return arm_in_it(it);
}

/* How the window runs an instruction of the site. */
enum window_kind {
	W_COPY,		/* unchanged: the boost class */
	W_BRANCH,	/* a direct branch: lr and pc from literals (put_branch) */
	W_LITERAL,	/* a literal load or ADR: the address (the value) from a
			 * literal of the pad (put_literal) */
	W_NOTHING,	/* a NOP or a literal PLD / PLI (a hint): nothing */
	W_PC_ADD,	/* the PIC add of the pc to a register: the pc's value
			 * added by immediates (put_pc_add) */
};

/*
 * The PIC add: T16 `add rd, pc` (rd += A+4), A32 `add rd, pc, rm` or
 * `add rd, rm, pc` (rd = rm + A+8), no S, no shift, neither rd nor the
 * other operand the pc or sp.  *src: the other operand.
 */
static bool pc_add_form(const struct arm_insn *in, unsigned int *src)
{
	if (in->dp != ARM_DP_ADD || in->setflags || in->writes_pc || in->rd >= 13)
		return false;
	if (in->isa == ARM_ISA_T16) {
		*src = in->rn;
		return in->rm == 15;
	}
	if (in->isa != ARM_ISA_A32 || in->imm_form || in->shift_type != ARM_LSL ||
	    in->shift_n)
		return false;
	*src = in->rn == 15 ? in->rm : in->rn;
	return (in->rn == 15) != (in->rm == 15) && *src < 13;
}

/*
 * The instruction at `at` (Thumb when `thumb`) of the function, if a
 * pad can run it: copied as it is (the boost class), a direct branch it
 * rewrites (B and BL with any A32 condition, BLX label, and Thumb's
 * unconditional B, B.W, BL and BLX), or a literal load to a register
 * other than the pc (LDR, LDRB, LDRH, LDRSB, LDRSH, LDRD) or an ADR,
 * rewritten, none of the last two kinds inside an IT block.  -EILSEQ for
 * the rest.
 */
static int window_insn(const uint8_t *func, size_t func_size, uint64_t func_addr,
		       uint64_t at, bool thumb, struct arch_insn *ai,
		       enum window_kind *kind)
{
	int err = arm_op_insn_decode_in(func, func_size, func_addr | (thumb ? 1 : 0),
					at | (thumb ? 1 : 0), ai);
	const struct arm_insn *in = arm_priv(ai);

	*kind = W_COPY;
	if (err < 0)
		return err == -EILSEQ || err == -EINVAL ? -EILSEQ : err;
	if (ai->strategy == ARCH_BOOST && in->op == ARM_OP_OTHER)
		return 0;
	if (ai->strategy != ARCH_EMULATE)
		return -EILSEQ;
	switch (in->op) {
	case ARM_OP_B:
		if (thumb && in->cond != COND_AL)
			return -EILSEQ;
		*kind = W_BRANCH;
		break;
	case ARM_OP_BL:
	case ARM_OP_BLX_IMM:
		*kind = W_BRANCH;
		break;
	case ARM_OP_LDR_LIT:
		if (in->rt == 15 || (in->size == 8 && in->rt2 == 15))
			return -EILSEQ;
		*kind = W_LITERAL;
		break;
	case ARM_OP_ADR:
		if (in->rd == 15)
			return -EILSEQ;
		*kind = W_LITERAL;
		break;
	case ARM_OP_NOP:
	case ARM_OP_PLD_LIT:
		*kind = W_NOTHING;
		return 0;
	case ARM_OP_DP: {
		unsigned int src;
		if (!pc_add_form(in, &src))
			return -EILSEQ;
		*kind = W_PC_ADD;
		break;
	}
	default:
		return -EILSEQ;
	}
	if (thumb && thumb_in_it(func, func_size, func_addr & ~1ull, at))
		return -EILSEQ;
	return 0;
}

/* A literal of the window, placed after its code: the load at `ins`
 * reads it. */
struct pending_lit {
	size_t ins;
	uint32_t value;
};

/*
 * A literal load or ADR at the pad: its register loaded with the
 * literal's address (ADR: the value) from a literal of the pad, then,
 * for a load, the load from that register (no other register written;
 * an A32 condition on both):
 *
 *   A32:    ldr<c>  rt, =addr           Thumb:  ldr.w  rt, =addr
 *           ldr<c>{b,h,sb,sh,d} rt, [rt]        ldr{b,h,sb,sh,d}.w rt, [rt]
 */
static void put_literal(struct arm_out *o, const struct arm_insn *in, bool thumb,
			struct pending_lit *lit)
{
	bool adr = in->op == ARM_OP_ADR;
	unsigned int rt = adr ? in->rd : in->rt, c = thumb ? COND_AL : in->cond;
	uint32_t a32, t32;

	lit->ins = o->len;
	lit->value = in->target;
	if (thumb)
		arm_put_t32(o, 0xf8df0000u | rt << 12);		/* ldr.w rt, [pc, #x] */
	else
		arm_put32(o, c << 28 | 0x059f0000u | rt << 12);	/* ldr<c> rt, [pc, #x] */
	if (adr)
		return;
	switch (in->size) {
	case 1:
		a32 = in->sign ? 0x01d000d0u : 0x05d00000u;
		t32 = in->sign ? 0xf9900000u : 0xf8900000u;
		break;
	case 2:
		a32 = in->sign ? 0x01d000f0u : 0x01d000b0u;
		t32 = in->sign ? 0xf9b00000u : 0xf8b00000u;
		break;
	case 8:
		a32 = 0x01c000d0u;			/* ldrd rt, rt+1, [rt] */
		t32 = 0xe9d00000u | (uint32_t)in->rt2 << 8;
		break;
	default:
		a32 = 0x05900000u;
		t32 = 0xf8d00000u;
		break;
	}
	if (thumb)
		arm_put_t32(o, t32 | rt << 16 | rt << 12);
	else
		arm_put32(o, c << 28 | a32 | rt << 16 | rt << 12);
}

/*
 * The PIC add at the pad: the pc's value at the site (A32 A+8, Thumb
 * A+4) added to the other operand by immediates, no register but rd
 * written, no flags (an A32 condition on each):
 *
 *   A32:    add<c> rd, rm, #c0        Thumb:  addw  rd, rn, #(v & 0xfff)
 *           add<c> rd, rd, #c1 ...            add.w rd, rd, #c1 ...
 *
 * A32 chunks are 8 bits at an even position (rotated immediates), four
 * at most; Thumb's are the low 12 bits (ADDW) and 8 bits from each
 * highest set bit (ThumbExpandImm's rotated `1bcdefgh`), three at most.
 */
static void put_pc_add(struct arm_out *o, const struct arm_insn *in, bool thumb)
{
	unsigned int src = 0, rd = in->rd;
	uint32_t v = arm_pc_value(in);

	pc_add_form(in, &src);
	if (!thumb) {
		while (v) {
			unsigned int lo = (unsigned int)__builtin_ctz(v) & ~1u;
			uint32_t chunk = v & (0xffu << lo);
			v &= ~chunk;
			arm_put32(o, (uint32_t)in->cond << 28 | 0x02800000u | src << 16 |
				  rd << 12 | ((32 - lo) & 31) / 2 << 8 | chunk >> lo);
			src = rd;
		}
		return;
	}
	uint32_t imm12 = v & 0xfff;
	if (imm12 || src != rd) {
		arm_put_t32(o, (0xf200u | (imm12 >> 11) << 10 | src) << 16 |
			       ((imm12 >> 8) & 7) << 12 | rd << 8 | (imm12 & 0xff));
		src = rd;
	}
	for (v &= ~0xfffu; v;) {
		unsigned int s = 31 - (unsigned int)__builtin_clz(v) - 7;
		uint32_t chunk = v & (0xffu << s);
		v &= ~chunk;
		imm12 = (32 - s) << 7 | ((chunk >> s) & 0x7f);
		arm_put_t32(o, (0xf100u | (imm12 >> 11) << 10 | rd) << 16 |
			       ((imm12 >> 8) & 7) << 12 | rd << 8 | (imm12 & 0xff));
	}
}

/* The pending literals after the window's code (4-aligned), and the
 * loads' offsets to them (A32: from the load's address + 8; Thumb: from
 * Align(its address + 4, 4)). */
static void put_pending(struct arm_out *o, bool thumb, const struct pending_lit *lit,
			unsigned int n)
{
	if (!n)
		return;
	if ((o->at + o->len) & 2)
		arm_put16(o, 0xbf00);
	for (unsigned int i = 0; i < n; i++) {
		size_t at = o->len;
		uint64_t base = thumb ? ((o->at + lit[i].ins + 4) & ~3ull)
				      : o->at + lit[i].ins + 8;
		uint32_t off = (uint32_t)(o->at + at - base);

		arm_put32(o, lit[i].value);
		if (o->overflow || off > 0xfff)
			continue;
		if (thumb) {
			o->buf[lit[i].ins + 2] = (uint8_t)(o->buf[lit[i].ins + 2] | off);
			o->buf[lit[i].ins + 3] = (uint8_t)(o->buf[lit[i].ins + 3] | off >> 8);
		} else {
			o->buf[lit[i].ins] = (uint8_t)off;
			o->buf[lit[i].ins + 1] = (uint8_t)(o->buf[lit[i].ins + 1] | off >> 8);
		}
	}
}

/*
 * A direct branch of the window, at the pad: lr (BL, BLX) and the pc
 * loaded from literals, which interworks on bit 0 of the target and
 * writes no other register (A32 keeps the instruction's condition: a
 * failing one goes on to the branch back):
 *
 *   A32:    ldr<c> lr, =A+4         Thumb:  ldr.w lr, =(A+len)|1
 *           ldr<c> pc, =target              ldr.w pc, =target
 *           [b A+4]                         [nop]   the literals 4-aligned
 *           .word A+4, target               .word (A+len)|1, target
 */
static void put_branch(struct arm_out *o, const struct arm_insn *in, bool thumb,
		       uint64_t ret)
{
	bool link = in->op != ARM_OP_B;
	uint32_t cond = thumb ? COND_AL : in->cond;
	size_t at_lr = o->len, at_pc, lits;

	if (link) {
		if (thumb)
			arm_put_t32(o, 0xf8dfe000u);		/* ldr.w lr, [pc, #x] */
		else
			arm_put32(o, cond << 28 | 0x059fe000u);	/* ldr<c> lr, [pc, #x] */
	}
	at_pc = o->len;
	if (thumb)
		arm_put_t32(o, 0xf8dff000u);			/* ldr.w pc, [pc, #x] */
	else
		arm_put32(o, cond << 28 | 0x059ff000u);		/* ldr<c> pc, [pc, #x] */
	if (cond != COND_AL)
		arm_emit_jump_from(o, false, ret);
	if ((o->at + o->len) & 2)
		arm_put16(o, 0xbf00);
	lits = o->len;
	if (link)
		arm_put32(o, (uint32_t)ret | (thumb ? 1 : 0));
	arm_put32(o, in->target);
	if (o->overflow)
		return;
	/* The literals' offsets: from the pc each load reads (A32: its
	 * address + 8; Thumb: Align(address + 4, 4)). */
	for (int k = link ? 0 : 1; k < 2; k++) {
		size_t ins = k ? at_pc : at_lr;
		uint64_t base = thumb ? ((o->at + ins + 4) & ~3ull) : o->at + ins + 8;
		uint32_t off = (uint32_t)(o->at + lits + (link && k ? 4 : 0) - base);
		if (thumb) {
			o->buf[ins + 2] = (uint8_t)(o->buf[ins + 2] | off);
			o->buf[ins + 3] = (uint8_t)(o->buf[ins + 3] | off >> 8);
		} else {
			o->buf[ins] = (uint8_t)off;
			o->buf[ins + 1] = (uint8_t)(o->buf[ins + 1] | off >> 8);
		}
	}
}

/*
 * Whether the function (A32 words, or Thumb) may reach `inside` other
 * than by running into it: a direct branch of it (B, BL, BLX label,
 * CBZ, CBNZ) lands there, or it holds a table branch whose targets no
 * decode shows (TBB / TBH, a load of the pc with a pc base and a
 * register offset: a non-PIC jump table).  The PIC A32 jump table
 * (`addls pc, pc, rm, lsl #2` and a row of B) is a row of direct
 * branches.  Literal data decoded as code can only refuse a window that
 * would have been fine.
 */
static bool branch_to(const uint8_t *func, size_t func_size, uint64_t start,
		      uint64_t inside, bool thumb)
{
	for (size_t off = 0; off + (thumb ? 2 : 4) <= func_size;) {
		struct arm_insn in;
		unsigned int len = thumb ? arm_thumb_len((uint16_t)(func[off] |
							  func[off + 1] << 8)) : 4;

		if (arm_decode(&in, func + off, func_size - off, start + off, thumb) == 0) {
			switch (in.op) {
			case ARM_OP_B: case ARM_OP_BL: case ARM_OP_BLX_IMM:
			case ARM_OP_CBZ: case ARM_OP_CBNZ:
				if ((in.target & ~1u) == (uint32_t)inside)
					return true;
				break;
			case ARM_OP_TBB: case ARM_OP_TBH:
				return true;
			case ARM_OP_LDR_PC:
				if (in.rn == 15 && !in.imm_form)
					return true;
				break;
			default:
				break;
			}
		}
		off += len;
	}
	return false;
}

/*
 * The window: the instructions the site's jump covers, `min_len` bytes
 * at least.  A near jump (B, B.W) is 4 bytes: at an A32 site the probed
 * instruction alone, at a Thumb one a 32-bit instruction or a 16-bit one
 * and the one after it.  A far one (arm_emit_jump_far) is 8 bytes, or 10
 * at a Thumb site 2 mod 4: two A32 instructions, or up to five Thumb
 * ones (the last may reach 2 bytes past, which get a 16-bit udf at the
 * site).  No instruction of the window but the first may be reachable
 * from elsewhere in the function (branch_to: -EXDEV).  Each instruction
 * of the window runs from the pad unchanged (the boost class), or
 * rewritten: a direct branch (B, BL, BLX label), as loads of lr and the
 * pc (put_branch), which must be the window's last instruction; a
 * literal load or ADR, as a load of its register from the pad's own
 * literal (put_literal); the PIC add of the pc to a register, as adds
 * of immediates (put_pc_add); a NOP (a USDT site) or a literal PLD is
 * left out.  What a slot would step with a scratch register, the other
 * simulated forms and what is rejected anyway cannot be in a pad
 * (-EILSEQ).  The copy is followed by the jump back to the end of the
 * window (`b`, `b.w`, or a literal load from a far pad); a Thumb window
 * is entered from the pad's A32 by an interworking `ldr pc`, so `to`
 * must be 4-aligned there.
 */
int arm_relocate_window(const uint8_t *func, size_t func_size, uint64_t func_addr,
			uint64_t from, size_t min_len, uint64_t to, uint8_t *out,
			size_t size, size_t *inlen)
{
	struct arm_out o = { out, size, 0, to, false };
	bool thumb = from & 1, branch = false;
	uint64_t at = from & ~1ull, start = func_addr & ~1ull;
	struct arch_insn ai;
	struct arm_slot slot;
	struct pending_lit lit[ARM_PAD_FAR_JUMP_MAX / 2];
	unsigned int nlit = 0;
	enum window_kind kind;
	size_t len = 0;
	int err;

	if (min_len < 4 || min_len > ARM_PAD_FAR_JUMP_MAX || (!thumb && (min_len & 3)) ||
	    at < start || at - start > func_size ||
	    func_size - (at - start) < (thumb ? 2 : 4) || (!thumb && (at & 3)))
		return -ERANGE;
	if (thumb) {
		if (to & 3)
			return -EINVAL;
		arm_put32(&o, 0xe51ff004u);			/* ldr pc, [pc, #-4] */
		arm_put32(&o, (uint32_t)(to + 8) | 1);
	}
	while (len < min_len) {
		if ((err = window_insn(func, func_size, func_addr, at + len, thumb, &ai,
				       &kind)) < 0)
			return err;
		if (len && branch_to(func, func_size, start, at + len, thumb))
			return -EXDEV;
		if (kind == W_BRANCH) {
			/* It leaves: nothing after it can be in the window. */
			if (len + ai.len < min_len)
				return -EILSEQ;
			len += ai.len;
			put_branch(&o, arm_priv(&ai), thumb, at + len);
			branch = true;
			break;
		}
		if (kind == W_LITERAL)
			put_literal(&o, arm_priv(&ai), thumb, &lit[nlit++]);
		else if (kind == W_PC_ADD)
			put_pc_add(&o, arm_priv(&ai), thumb);
		else if (kind == W_NOTHING)
			;
		else if ((err = arm_relocate(arm_priv(&ai), &o, &slot)) < 0 || slot.step)
			return -EILSEQ;
		len += ai.len;
		if (len < min_len && at + len - start + (thumb ? 2 : 4) > func_size)
			return -ERANGE;
	}
	if (!branch)
		arm_emit_jump_from(&o, thumb, (at + len) | (thumb ? 1 : 0));
	put_pending(&o, thumb, lit, nlit);
	*inlen = len;
	return finish(&o);
}

/*
 * A thread stepped out of a pad: every instruction of the pad steps,
 * except an exclusive load or store of the claims (a step's breakpoint
 * trap clears the monitor: the thread goes back to the probe with its
 * frame), the return trampoline's histogram counts (ldrexd / strexd,
 * arm-retpad.c put_hist: after the sum's add the thread cannot go back
 * without adding it twice), done by hand as in the collector
 * (arm_callee_step), and the Thumb entry's `bx pc`, done here (into A32
 * at the next word).
 */
int arm_pad_step(const uint8_t *insn, size_t len, struct arch_gpregs *regs,
		 const struct arch_mem *mem)
{
	if (len >= 2 && (regs->flags & ARM_PSR_T)) {
		if ((insn[0] | insn[1] << 8) == 0x4778 && !(regs->pc & 3)) {
			regs->pc += 4;
			regs->flags &= ~(uint64_t)ARM_PSR_T;
			return ARCH_PAD_DONE;
		}
		return ARCH_PAD_STEP;
	}
	if (len < 4)
		return ARCH_PAD_STEP;
	uint32_t w = (uint32_t)insn[0] | (uint32_t)insn[1] << 8 |
		     (uint32_t)insn[2] << 16 | (uint32_t)insn[3] << 24;
	if ((w & 0x0ff00fffu) == 0x01900f9fu ||		/* ldrex */
	    (w & 0x0ff00ff0u) == 0x01800f90u)		/* strex */
		return ARCH_PAD_REWIND;
	if (((w & 0x0ff00fffu) == 0x01b00f9fu ||		/* ldrexd */
	     (w & 0x0ff00ff0u) == 0x01a00f90u) && mem)	/* strexd */
		return arm_callee_step(insn, len, regs, mem);
	return ARCH_PAD_STEP;
}

/*
 * A thread stepped out of the in-process collector a pad called: its
 * 64-bit counters are exclusive loops (ldrexd; adds; adc; strexd; cmp;
 * bne), which a software step's breakpoint defeats for ever (the trap
 * clears the monitor), and the collector runs after the record's claim,
 * so the thread cannot go back either.  The exclusive load is done here
 * as a plain load, the store as a plain store that succeeds (status 0):
 * the thread's sequence completes, atomically as long as no other
 * thread of the process runs meanwhile (all-stop: the agent stops them
 * all first).  LDREX, LDREXB, LDREXH, LDREXD and the stores, T32 and
 * unconditional A32; anything else steps.
 *
 *   T32  1110 1000 0101 Rn | Rt 1111 imm8          ldrex  [Rn, #imm8*4]
 *        1110 1000 0100 Rn | Rt Rd imm8            strex
 *        1110 1000 1101 Rn | Rt Rt2 01sz 1111      ldrex{b,h,d} (sz 00 b, 01 h, 11 d)
 *        1110 1000 1100 Rn | Rt Rt2 01sz Rd        strex{b,h,d}
 *   A32  1110 0001 1 sz L Rn | Rt/Rd 1111 1001 1111/Rt  (sz 00 word, 01 d, 10 b, 11 h)
 */
int arm_callee_step(const uint8_t *insn, size_t len, struct arch_gpregs *regs,
		    const struct arch_mem *mem)
{
	unsigned int rn, rt, rt2, rd = 16, size, off = 0;
	bool load;

	if (len < 4)
		return ARCH_PAD_STEP;
	if (regs->flags & ARM_PSR_T) {
		unsigned int h1 = insn[0] | insn[1] << 8, h2 = insn[2] | insn[3] << 8;
		unsigned int op = (h2 >> 4) & 15;

		rn = h1 & 15;
		rt = h2 >> 12;
		rt2 = (h2 >> 8) & 15;
		if ((h1 & 0xffe0) == 0xe840) {			/* ldrex, strex */
			load = h1 & 0x10;
			size = 4;
			off = (h2 & 0xff) * 4;
			if (load ? rt2 != 15 : false)
				return ARCH_PAD_STEP;
			if (!load)
				rd = rt2;
		} else if ((h1 & 0xffe0) == 0xe8c0 && (op == 4 || op == 5 || op == 7)) {
			load = h1 & 0x10;
			size = op == 4 ? 1 : op == 5 ? 2 : 8;
			if (load && (h2 & 15) != 15)
				return ARCH_PAD_STEP;
			if (!load)
				rd = h2 & 15;
		} else {
			return ARCH_PAD_STEP;
		}
	} else {
		uint32_t w = (uint32_t)insn[0] | (uint32_t)insn[1] << 8 |
			     (uint32_t)insn[2] << 16 | (uint32_t)insn[3] << 24;
		static const unsigned int sizes[4] = { 4, 8, 1, 2 };

		if ((w & 0xff800ff0u) != 0xe1800f90u)
			return ARCH_PAD_STEP;
		load = w & (1u << 20);
		if (load && (w & 15) != 15)
			return ARCH_PAD_STEP;
		size = sizes[(w >> 21) & 3];
		rn = (w >> 16) & 15;
		if (load) {
			rt = (w >> 12) & 15;
		} else {
			rd = (w >> 12) & 15;
			rt = w & 15;
		}
		rt2 = rt + 1;
	}
	if (rn == 15 || rt == 15 || (size == 8 && rt2 == 15) || rd == 15)
		return ARCH_PAD_STEP;			/* UNPREDICTABLE: leave it be */
	uint64_t addr = (uint32_t)(regs->gpr[rn] + off);
	uint32_t v[2] = { 0, 0 };
	int err;

	if (load) {
		if ((err = mem->read(mem->ctx, addr, v, size)) < 0)
			return err;
		regs->gpr[rt] = v[0];		/* little-endian, zero-extended */
		if (size == 8)
			regs->gpr[rt2] = v[1];
	} else {
		v[0] = (uint32_t)regs->gpr[rt];
		if (size == 8)
			v[1] = (uint32_t)regs->gpr[rt2];
		if ((err = mem->write(mem->ctx, addr, v, size)) < 0)
			return err;
		regs->gpr[rd] = 0;		/* the store succeeded */
	}
	regs->pc = (uint32_t)(regs->pc + 4);
	return ARCH_PAD_DONE;
}

/*
 * The shared memory's entries and records: 1 KiB.  The image (d0-d31,
 * fpscr: a record's only) at 0, the frame of 17 words at 264, the owner
 * and ready words (a record's sequence word) at 400, the bases' place at
 * 408 (unused), a record's tid at 424 and time at 432, to 448.
 */
const struct arch_pad_layout arm_pad_layout = {
	.entry_shift = 10, .image_bytes = ARM_PAD_IMAGE_BYTES,
	.off_owner = 400, .off_ready = 404, .off_seq = 400,
	.off_bases = 408, .off_frame = 264, .off_tid = 424, .off_time = 432,
	.frame_words = ARM_PAD_FRAME_WORDS, .frame_pc = ARM_PC,
};
