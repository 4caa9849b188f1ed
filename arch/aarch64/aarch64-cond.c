/*
 * aarch64-cond.c - a jump pad's native condition check (arch_ops
 * .emit_pad_cond): a false condition leaves the pad after a load and a
 * compare, before the register save.
 *
 * It runs on the program's registers: x15, x16, x17 and the flags are
 * kept below sp (AAPCS64 has no red zone, so sp moves first: a signal
 * meanwhile lands below them), and put back on either way out.
 *
 *   sub  sp, sp, #32
 *   stp  x16, x17, [sp]
 *   mrs  x17, nzcv
 *   stp  x17, x15, [sp, #16]
 *   <the value into x16>        one of:
 *     (x16 itself: nothing)
 *     ldr  x16, [sp, #8]          x17 (saved)
 *     ldr  x16, [sp, #24]         x15 (saved: the same, x15 is untouched)
 *     mov  x16, xN                any other of x0-x30
 *     add  x16, sp, #32           sp at the probe
 *     movz/movk x16, #pc          pc
 *     mov  x16, x17               cpsr (nzcv, bits 28-31)
 *     movz/movk x16, #addr ; ldrb w16 | ldrh w16 | ldr w16 | ldr x16, [x16]   <- load
 *   <conversions>               sxtb | sxth | sxtw x16 ; uxtb | uxth w16 | mov w16, w16
 *   movz/movk | movn/movk x17, #imm   (sign-extended to 64 bits)
 *   cmp  x16, x17
 *   b.cc take                   true
 *   movz/movk x16, #counter     false: counted
 * 1:ldxr x17, [x16] ; add x17, x17, #1 ; stxr w15, x17, [x16] ; cbnz w15, 1b
 *   ldp  x17, x15, [sp, #16] ; msr nzcv, x17
 *   ldp  x16, x17, [sp] ; add sp, sp, #32
 *   b    the relocated code     (*skip: patch_branch)
 * take:
 *   ldp  x17, x15, [sp, #16] ; msr nzcv, x17
 *   ldp  x16, x17, [sp] ; add sp, sp, #32     then the register save
 *
 * The count's exclusive pair is the only one of a pad on x16 (the
 * claims use x1 and x24): aarch64_pad_step does it by hand, as the
 * frame the others rewind to does not exist yet here.  A load that
 * faults is resumed at take (pad_ipa_fault): nothing it changed needs
 * undoing.
 */
#include "config.h"

#include <errno.h>

#include "arch/aarch64/aarch64.h"

/* b.cond's condition per compare: taken when the condition is true. */
static const uint8_t cc_of[] = {
	[ARCH_CMP_EQ] = 0x0, [ARCH_CMP_NE] = 0x1,
	[ARCH_CMP_LT_S] = 0xb, [ARCH_CMP_GE_S] = 0xa,
	[ARCH_CMP_GT_S] = 0xc, [ARCH_CMP_LE_S] = 0xd,
	[ARCH_CMP_LT_U] = 0x3, [ARCH_CMP_GE_U] = 0x2,
	[ARCH_CMP_GT_U] = 0x8, [ARCH_CMP_LE_U] = 0x9,
};

#define V 16		/* the value */

/* Both ways out: the flags, x15, x16, x17 back, sp up. */
static void put_leave(struct aarch64_out *o)
{
	aarch64_put32(o, 0xa9413ff1u);		/* ldp x17, x15, [sp, #16] */
	aarch64_put32(o, 0xd51b4200u | 17);	/* msr nzcv, x17 */
	aarch64_put32(o, 0xa94047f0u);		/* ldp x16, x17, [sp] */
	aarch64_put32(o, 0x910083ffu);		/* add sp, sp, #32 */
}

static int put_value(struct aarch64_out *o, const struct arch_pad_cond *c,
		     size_t *load)
{
	/* ldrb w16 / ldrh w16 / ldr w16 / ldr x16, [x16] */
	static const uint32_t ld[4] = { 0x39400210u, 0x79400210u,
					0xb9400210u, 0xf9400210u };

	*load = 0;
	if (c->mem) {
		int k = c->size == 1 ? 0 : c->size == 2 ? 1 :
			c->size == 4 ? 2 : c->size == 8 ? 3 : -1;
		if (k < 0)
			return -EINVAL;
		aarch64_emit_mov_imm(o, V, c->addr);
		*load = o->len;
		aarch64_put32(o, ld[k]);
		return 0;
	}
	if (c->regnum == 16)
		return 0;
	if (c->regnum == 17)
		aarch64_put32(o, 0xf94007f0u);		/* ldr x16, [sp, #8] */
	else if (c->regnum == 15)
		aarch64_put32(o, 0xf9400ff0u);		/* ldr x16, [sp, #24] */
	else if (c->regnum <= 30)
		aarch64_put32(o, 0xaa0003e0u | c->regnum << 16 | V);	/* mov x16, xN */
	else if (c->regnum == 31)
		aarch64_put32(o, 0x910083f0u);		/* add x16, sp, #32 */
	else if (c->regnum == 32)
		aarch64_emit_mov_imm(o, V, c->pc);
	else if (c->regnum == 33)
		aarch64_put32(o, 0xaa1103f0u);		/* mov x16, x17 (nzcv) */
	else
		return -EINVAL;		/* the v registers, fpsr, fpcr */
	return 0;
}

static int put_conv(struct aarch64_out *o, bool sign, unsigned int bits)
{
	switch (bits) {
	case 8:
		aarch64_put32(o, sign ? 0x93401e10u : 0x53001e10u);	/* sxtb x16, w16 | uxtb w16, w16 */
		return 0;
	case 16:
		aarch64_put32(o, sign ? 0x93403e10u : 0x53003e10u);	/* sxth | uxth */
		return 0;
	case 32:
		aarch64_put32(o, sign ? 0x93407e10u : 0x2a1003f0u);	/* sxtw | mov w16, w16 */
		return 0;
	}
	return -EINVAL;
}

/* x17 = imm, sign-extended to 64 bits. */
static void put_imm(struct aarch64_out *o, int32_t imm)
{
	uint32_t n = ~(uint32_t)imm;

	if (imm >= 0) {
		aarch64_emit_mov_imm(o, 17, (uint64_t)imm);
		return;
	}
	aarch64_put32(o, 0x92800000u | (n & 0xffff) << 5 | 17);	/* movn x17, #n */
	if ((n >> 16) & 0xffff)						/* movk x17, #hi, lsl #16 */
		aarch64_put32(o, 0xf2a00000u | ((uint32_t)imm >> 16 & 0xffff) << 5 | 17);
}

int aarch64_emit_pad_cond(uint8_t *out, size_t size, const struct arch_pad_cond *c,
			  size_t *skip, size_t *load, size_t *take)
{
	struct aarch64_out o = { out, size, 0, 0, false };
	size_t bcc, retry;
	int err;

	if (c->nconv > 4 || (unsigned int)c->cmp >= sizeof(cc_of) || !c->skip_counter)
		return -EINVAL;
	aarch64_put32(&o, 0xd10083ffu);			/* sub sp, sp, #32 */
	aarch64_put32(&o, 0xa90047f0u);			/* stp x16, x17, [sp] */
	aarch64_put32(&o, 0xd53b4200u | 17);		/* mrs x17, nzcv */
	aarch64_put32(&o, 0xa9013ff1u);			/* stp x17, x15, [sp, #16] */
	if ((err = put_value(&o, c, load)) < 0)
		return err;
	for (unsigned int i = 0; i < c->nconv; i++)
		if ((err = put_conv(&o, c->conv[i].sign, c->conv[i].bits)) < 0)
			return err;
	put_imm(&o, c->imm);
	aarch64_put32(&o, 0xeb11021fu);			/* cmp x16, x17 */
	bcc = o.len;
	aarch64_put32(&o, 0);				/* b.cc take */
	aarch64_emit_mov_imm(&o, V, c->skip_counter);
	retry = o.len;
	aarch64_put32(&o, 0xc85f7e11u);			/* ldxr x17, [x16] */
	aarch64_put32(&o, 0x91000631u);			/* add x17, x17, #1 */
	aarch64_put32(&o, 0xc80f7e11u);			/* stxr w15, x17, [x16] */
	aarch64_put32(&o, 0x35000000u |			/* cbnz w15, retry */
			 ((uint32_t)((int64_t)(retry - o.len) >> 2) & 0x7ffff) << 5 | 15);
	put_leave(&o);
	*skip = o.len;
	aarch64_put32(&o, 0x14000000u);			/* b (patch_branch) */
	*take = o.len;
	put_leave(&o);
	if (o.overflow)
		return -ENOSPC;
	uint32_t w = 0x54000000u | ((uint32_t)((*take - bcc) >> 2) & 0x7ffff) << 5 |
		     cc_of[c->cmp];
	for (int k = 0; k < 4; k++)
		out[bcc + k] = (uint8_t)(w >> (8 * k));
	return (int)o.len;
}
