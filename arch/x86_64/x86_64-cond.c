/*
 * x86_64-cond.c - a jump pad's native condition check (arch_ops
 * .emit_pad_cond): a false condition leaves the pad after a load and a
 * compare, before the register save.
 *
 *   48 8d 64 24 80          lea -128(%rsp),%rsp     over the red zone
 *   9c                      pushfq                  the compare's flags
 *   50                      push %rax
 *   <the value into %rax>   one of:
 *     48 8b 04 24             mov (%rsp),%rax         rax (pushed)
 *     48 8d 84 24 90 00 00 00 lea 144(%rsp),%rax      rsp at the probe
 *     48 8b 44 24 08          mov 8(%rsp),%rax        eflags (pushed)
 *     48 b8 <pc>              movabs $pc,%rax         rip
 *     4x 89 xx                mov %reg,%rax           any other
 *     48 b8 <addr>            movabs $addr,%rax       memory, then
 *     0f b6 00 | 0f b7 00 | 8b 00 | 48 8b 00   movz[bw]l / mov (%rax)   <- load
 *   <conversions>           48 0f be c0 | 48 0f bf c0 | 48 63 c0   ext 8/16/32
 *                           0f b6 c0 | 0f b7 c0 | 89 c0            zero_ext
 *   48 3d <imm32>           cmp $imm,%rax
 *   7x <take>               jcc take               true
 *   48 b8 <counter>         movabs $counter,%rax    false: counted,
 *   f0 48 ff 00             lock incq (%rax)
 *   58 9d                   pop %rax; popfq
 *   48 8d a4 24 80 00 00 00 lea 128(%rsp),%rsp
 *   e9 <skip>               jmp the relocated code  (patch_branch)
 * take:
 *   58 9d                   pop %rax; popfq
 *   48 8d a4 24 80 00 00 00 lea 128(%rsp),%rsp      then the register save
 */
#include <errno.h>

#include "arch/arch.h"
#include "arch/x86_64/x86_64.h"

/* gdb's register order (rax rbx rcx rdx rsi rdi rbp rsp r8..r15) to the
 * encoding's. */
static const uint8_t hw_of[16] = { 0, 3, 1, 2, 6, 7, 5, 4,
				   8, 9, 10, 11, 12, 13, 14, 15 };

/* jcc's low nibble per compare: taken when the condition is true. */
static const uint8_t cc_of[] = {
	[ARCH_CMP_EQ] = 0x4, [ARCH_CMP_NE] = 0x5,
	[ARCH_CMP_LT_S] = 0xc, [ARCH_CMP_GE_S] = 0xd,
	[ARCH_CMP_GT_S] = 0xf, [ARCH_CMP_LE_S] = 0xe,
	[ARCH_CMP_LT_U] = 0x2, [ARCH_CMP_GE_U] = 0x3,
	[ARCH_CMP_GT_U] = 0x7, [ARCH_CMP_LE_U] = 0x6,
};

static const uint8_t leave[] = { 0x58, 0x9d, 0x48, 0x8d, 0xa4, 0x24,
				 0x80, 0x00, 0x00, 0x00 };

static int put_value(struct x86_64_out *o, const struct arch_pad_cond *c,
		     size_t *load)
{
	static const uint8_t ref[4][3] = {
		{ 0x0f, 0xb6, 0x00 }, { 0x0f, 0xb7, 0x00 },
		{ 0x8b, 0x00 }, { 0x48, 0x8b, 0x00 } };
	static const uint8_t ref_len[4] = { 3, 3, 2, 3 };
	static const uint8_t rax[] = { 0x48, 0x8b, 0x04, 0x24 };
	static const uint8_t rsp[] = { 0x48, 0x8d, 0x84, 0x24, 0x90, 0, 0, 0 };
	static const uint8_t flags[] = { 0x48, 0x8b, 0x44, 0x24, 0x08 };

	*load = 0;
	if (c->mem) {
		int k = c->size == 1 ? 0 : c->size == 2 ? 1 :
			c->size == 4 ? 2 : c->size == 8 ? 3 : -1;
		if (k < 0)
			return -EINVAL;
		x86_64_put8(o, 0x48);
		x86_64_put8(o, 0xb8);
		x86_64_put64(o, c->addr);
		*load = o->len;
		x86_64_put(o, ref[k], ref_len[k]);
		return 0;
	}
	if (c->regnum == 0) {
		x86_64_put(o, rax, sizeof(rax));
	} else if (c->regnum == 7) {
		x86_64_put(o, rsp, sizeof(rsp));
	} else if (c->regnum < 16) {
		uint8_t hw = hw_of[c->regnum];
		x86_64_put8(o, 0x48 | (hw >= 8 ? 0x04 : 0));
		x86_64_put8(o, 0x89);
		x86_64_put8(o, (uint8_t)(0xc0 | (hw & 7) << 3));
	} else if (c->regnum == 16) {
		x86_64_put8(o, 0x48);
		x86_64_put8(o, 0xb8);
		x86_64_put64(o, c->pc);
	} else if (c->regnum == 17) {
		x86_64_put(o, flags, sizeof(flags));
	} else {
		return -EINVAL;		/* vector and segment registers */
	}
	return 0;
}

static int put_conv(struct x86_64_out *o, bool sign, unsigned int bits)
{
	static const uint8_t ext8[] = { 0x48, 0x0f, 0xbe, 0xc0 };
	static const uint8_t ext16[] = { 0x48, 0x0f, 0xbf, 0xc0 };
	static const uint8_t ext32[] = { 0x48, 0x63, 0xc0 };
	static const uint8_t zext8[] = { 0x0f, 0xb6, 0xc0 };
	static const uint8_t zext16[] = { 0x0f, 0xb7, 0xc0 };
	static const uint8_t zext32[] = { 0x89, 0xc0 };

	switch (bits) {
	case 8:
		sign ? x86_64_put(o, ext8, sizeof(ext8)) : x86_64_put(o, zext8, sizeof(zext8));
		return 0;
	case 16:
		sign ? x86_64_put(o, ext16, sizeof(ext16)) : x86_64_put(o, zext16, sizeof(zext16));
		return 0;
	case 32:
		sign ? x86_64_put(o, ext32, sizeof(ext32)) : x86_64_put(o, zext32, sizeof(zext32));
		return 0;
	}
	return -EINVAL;
}

int x86_64_emit_pad_cond(uint8_t *out, size_t size, const struct arch_pad_cond *c,
			 size_t *skip, size_t *load, size_t *take)
{
	static const uint8_t head[] = { 0x48, 0x8d, 0x64, 0x24, 0x80, 0x9c, 0x50 };
	static const uint8_t inc[] = { 0xf0, 0x48, 0xff, 0x00 };
	struct x86_64_out o = { out, size, 0, 0, false };
	int err;

	if (c->nconv > 4 || (unsigned int)c->cmp >= sizeof(cc_of) || !c->skip_counter)
		return -EINVAL;
	x86_64_put(&o, head, sizeof(head));
	if ((err = put_value(&o, c, load)) < 0)
		return err;
	for (unsigned int i = 0; i < c->nconv; i++)
		if ((err = put_conv(&o, c->conv[i].sign, c->conv[i].bits)) < 0)
			return err;
	x86_64_put8(&o, 0x48);
	x86_64_put8(&o, 0x3d);
	x86_64_put32(&o, (uint32_t)c->imm);
	x86_64_put8(&o, (uint8_t)(0x70 | cc_of[c->cmp]));
	size_t jcc = o.len;
	x86_64_put8(&o, 0);
	x86_64_put8(&o, 0x48);
	x86_64_put8(&o, 0xb8);
	x86_64_put64(&o, c->skip_counter);
	x86_64_put(&o, inc, sizeof(inc));
	x86_64_put(&o, leave, sizeof(leave));
	x86_64_put8(&o, 0xe9);
	*skip = o.len;
	x86_64_put32(&o, 0);		/* patch_branch */
	*take = o.len;
	x86_64_put(&o, leave, sizeof(leave));
	if (o.overflow)
		return -ENOSPC;
	out[jcc] = (uint8_t)(*take - (jcc + 1));
	return (int)o.len;
}
