/*
 * x86_64-decode.c - the x86-64 instruction decoder.
 *
 * It answers two questions about the bytes at an address: how long is the
 * instruction, and where are the parts a classifier or a relocator needs
 * (opcode, ModRM fields, a RIP-relative displacement and its offset, the
 * immediates, a relative branch target).  It does not name instructions.
 *
 * An instruction in 64-bit mode is
 *
 *   [legacy prefixes] [REX | VEX | EVEX | XOP] opcode [ModRM [SIB] [disp]] [imm]
 *
 * and its length follows from the opcode map and opcode alone, plus the
 * 66 / 67 / REX.W prefixes for the few opcodes whose immediate or offset
 * size depends on them.  The shape of every opcode is one character in
 * the tables below (16 per row, the layout of the Intel SDM opcode maps),
 * so a wrong entry is visible by eye.
 *
 * Invariants:
 *  - never reads past buf[size - 1]; -ENODATA means "give me more bytes";
 *  - never returns a length above 15 (-EILSEQ instead, as the CPU #UDs);
 *  - a RIP-relative operand is always ModRM mod=00 rm=101 without SIB,
 *    with a disp32 that is relative to the END of the instruction, so
 *    the immediate must be decoded before the address is known;
 *  - opcodes that do not exist in 64-bit mode (push es, daa, les, ...)
 *    return -EILSEQ; unassigned opcodes inside a valid map decode with the
 *    generic shape of their map (the classifier rejects what it does not
 *    know).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "arch/x86_64/x86_64.h"

/*
 * Opcode shapes.
 *   .  no ModRM, no immediate         m  ModRM
 *   b  imm8                           B  ModRM + imm8
 *   z  imm16/32 (operand size)        Z  ModRM + imm16/32
 *   w  imm16                          e  imm16 + imm8 (enter)
 *   v  imm16/32/64 (mov r, imm)       a  moffs: 4 or 8 bytes (address size)
 *   j  rel8 branch                    J  rel16/32 branch
 *   g  ModRM, imm8/immz only for /0 and /1 (test in grp3)
 *   x  invalid in 64-bit mode         p  prefix (consumed before)
 *   c  ModRM, register-only forms (mov cr/dr: no SIB, no disp)
 *   k  ModRM; with 66 or f2: + imm8 + imm8 (extrq / insertq)
 *   X  ModRM; xbegin (c7 f8) carries a rel32 instead of the immz
 *   V  VEX / EVEX / XOP escape        E  escape to another map
 */
static const char x86_64_shape_1byte[256 + 1] =
	/*0123456789abcdef */
	"mmmmbzxxmmmmbzxE"	/* 0x: add, or, 0f escape */
	"mmmmbzxxmmmmbzxx"	/* 1x: adc, sbb */
	"mmmmbzpxmmmmbzpx"	/* 2x: and, sub, es/cs prefixes */
	"mmmmbzpxmmmmbzpx"	/* 3x: xor, cmp, ss/ds prefixes */
	"pppppppppppppppp"	/* 4x: REX */
	"................"	/* 5x: push / pop r64 */
	"xxVmppppzZbB...."	/* 6x: 62 EVEX, movsxd, fs gs 66 67, push imm, imul */
	"jjjjjjjjjjjjjjjj"	/* 7x: jcc rel8 */
	"BZxBmmmmmmmmmmmV"	/* 8x: grp1, test, xchg, mov, lea, pop/XOP */
	"..........x....."	/* 9x: nop/xchg, cbw, cwd, (callf), fwait, pushf */
	"aaaa....bz......"	/* ax: mov moffs, string ops, test imm */
	"bbbbbbbbvvvvvvvv"	/* bx: mov r8, imm8 / mov r, imm */
	"BBw.VVBXe.w..bx."	/* cx: grp2, ret iw, ret, VEX, mov grp11, enter */
	"mmmmxxx.mmmmmmmm"	/* dx: grp2, xlat, x87 */
	"jjjjbbbbJJxj...."	/* ex: loop, jrcxz, in/out, call, jmp */
	"p.pp..gg......mm";	/* fx: lock, rep, hlt, grp3, grp4, grp5 */

static const char x86_64_shape_0f[256 + 1] =
	/*0123456789abcdef */
	"mmmmx.....x.xm.E"	/* 0x: grp6, grp7, lar, lsl, syscall, ud2, 3DNow */
	"mmmmmmmmmmmmmmmm"	/* 1x: SSE moves, hint nops, endbr */
	"ccccxxxxmmmmmmmm"	/* 2x: mov cr/dr, SSE */
	"......x.ExExxxxx"	/* 3x: wrmsr .. sysexit, 38 / 3a escapes */
	"mmmmmmmmmmmmmmmm"	/* 4x: cmovcc */
	"mmmmmmmmmmmmmmmm"	/* 5x: SSE arithmetic */
	"mmmmmmmmmmmmmmmm"	/* 6x: MMX / SSE2 */
	"BBBBmmm.kmxxmmmm"	/* 7x: pshuf, grp12-14, emms, vmread/extrq */
	"JJJJJJJJJJJJJJJJ"	/* 8x: jcc rel32 */
	"mmmmmmmmmmmmmmmm"	/* 9x: setcc */
	"...mBmxx...mBmmm"	/* ax: push/pop fs gs, cpuid, bt, shld, shrd, grp15 */
	"mmmmmmmmmmBmmmmm"	/* bx: cmpxchg, btr, movzx, popcnt, grp8, bsf */
	"mmBmBBBm........"	/* cx: xadd, cmpps, pinsrw, shufps, grp9, bswap */
	"mmmmmmmmmmmmmmmm"	/* dx: SSE2 */
	"mmmmmmmmmmmmmmmm"	/* ex: SSE2 */
	"mmmmmmmmmmmmmmmm";	/* fx: SSE2, ud0 */

/* Shape of every opcode of the maps that have one shape throughout. */
static char x86_64_map_shape(enum x86_64_map map, uint8_t op)
{
	switch (map) {
	case X86_64_MAP_1BYTE:
		return x86_64_shape_1byte[op];
	case X86_64_MAP_0F:
		return x86_64_shape_0f[op];
	case X86_64_MAP_0F38:
		return 'm';
	case X86_64_MAP_0F3A:
		return 'B';
	case X86_64_MAP_EVEX5:
	case X86_64_MAP_EVEX6:
	case X86_64_MAP_XOP9:
		return 'm';
	case X86_64_MAP_XOP8:
		return 'B';
	case X86_64_MAP_XOPA:
		return 'Z';	/* imm32, never 16: fixed below */
	case X86_64_MAP_3DNOW:
		return 'B';
	}
	return 'x';
}

struct cursor {
	const uint8_t *buf;
	size_t size, pos;
};

static int take(struct cursor *c, uint8_t *b)
{
	if (c->pos >= X86_64_MAX_INSN)
		return -EILSEQ;
	if (c->pos >= c->size)
		return -ENODATA;
	*b = c->buf[c->pos++];
	return 0;
}

static int take_n(struct cursor *c, size_t n, int64_t *val)
{
	uint64_t v = 0;

	if (c->pos + n > X86_64_MAX_INSN)
		return -EILSEQ;
	if (c->pos + n > c->size)
		return -ENODATA;
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)c->buf[c->pos + i] << (8 * i);
	c->pos += n;
	/* sign-extend from n bytes */
	if (n < 8 && (v >> (8 * n - 1)) & 1)
		v |= ~0ull << (8 * n);
	*val = (int64_t)v;
	return 0;
}

static unsigned int legacy_prefix(uint8_t b)
{
	switch (b) {
	case 0xf0: return X86_64_PFX_LOCK;
	case 0xf2: return X86_64_PFX_REPNE;
	case 0xf3: return X86_64_PFX_REP;
	case 0x66: return X86_64_PFX_OPSIZE;
	case 0x67: return X86_64_PFX_ADSIZE;
	case 0x2e: return X86_64_PFX_CS;
	case 0x36: return X86_64_PFX_SS;
	case 0x3e: return X86_64_PFX_DS;
	case 0x26: return X86_64_PFX_ES;
	case 0x64: return X86_64_PFX_FS;
	case 0x65: return X86_64_PFX_GS;
	}
	return 0;
}

/* ModRM, SIB and displacement.  `regonly`: mov cr/dr ignore mod. */
static int decode_modrm(struct x86_64_insn *in, struct cursor *c, bool regonly)
{
	uint8_t rex_r = (in->rex >> 2) & 1, rex_x = (in->rex >> 1) & 1,
		rex_b = in->rex & 1;
	int64_t d;
	int err;

	in->has_modrm = true;
	in->modrm_off = c->pos;
	if ((err = take(c, &in->modrm)))
		return err;
	in->mod = in->modrm >> 6;
	in->reg = ((in->modrm >> 3) & 7) | rex_r << 3;
	in->rm = (in->modrm & 7) | rex_b << 3;
	in->base = in->index = -1;
	in->scale = 1;
	if (regonly) {
		in->mod = 3;
		return 0;
	}
	if (in->mod == 3)
		return 0;

	if ((in->modrm & 7) == 4) {
		in->has_sib = true;
		if ((err = take(c, &in->sib)))
			return err;
		in->scale = 1u << (in->sib >> 6);
		in->index = ((in->sib >> 3) & 7) | rex_x << 3;
		if (in->index == 4)		/* rsp cannot be an index */
			in->index = -1;
		in->base = (in->sib & 7) | rex_b << 3;
		in->rm = in->base;
		if ((in->sib & 7) == 5 && in->mod == 0) {
			in->base = -1;		/* disp32, no base */
			in->disp_size = 4;
		}
	} else if ((in->modrm & 7) == 5 && in->mod == 0) {
		in->rip_relative = true;	/* disp32 off the next insn */
		in->disp_size = 4;
	} else {
		in->base = in->rm;
	}
	if (in->mod == 1)
		in->disp_size = 1;
	else if (in->mod == 2)
		in->disp_size = 4;
	if (in->disp_size) {
		in->disp_off = c->pos;
		if ((err = take_n(c, in->disp_size, &d)))
			return err;
		in->disp = (int32_t)d;
	}
	return 0;
}

static int decode_imm(struct x86_64_insn *in, struct cursor *c, size_t n,
		      bool second)
{
	int64_t v;
	int err;

	if (second) {
		in->imm2_off = c->pos;
		in->imm2_size = n;
	} else {
		in->imm_off = c->pos;
		in->imm_size = n;
	}
	if ((err = take_n(c, n, &v)))
		return err;
	if (second)
		in->imm2 = v;
	else
		in->imm = v;
	return 0;
}

/*
 * VEX (c4 / c5), EVEX (62) and XOP (8f) payloads.  In 64-bit mode c4, c5
 * and 62 are always these prefixes (their legacy meanings, les / lds /
 * bound, are gone); 8f is XOP only when the next byte's map field is 8 or
 * more, otherwise it is pop r/m.  The inverted R/X/B bits are folded into
 * in->rex so ModRM decoding is shared.
 */
static int decode_vex(struct x86_64_insn *in, struct cursor *c, uint8_t esc)
{
	uint8_t p0, p1, p2, map;
	int err;

	if (in->rex)
		return -EILSEQ;		/* REX before VEX #UDs */
	if ((err = take(c, &p0)))
		return err;
	if (esc == 0xc5) {
		in->enc = X86_64_ENC_VEX;
		in->rex = 0x40 | (!(p0 & 0x80)) << 2;
		in->vex_vvvv = (~p0 >> 3) & 15;
		in->vex_l = (p0 >> 2) & 1;
		in->vex_pp = p0 & 3;
		in->map = X86_64_MAP_0F;
		return 0;
	}
	if ((err = take(c, &p1)))
		return err;
	in->rex = 0x40 | (!(p0 & 0x80)) << 2 | (!(p0 & 0x40)) << 1 |
		  !(p0 & 0x20);
	in->vex_w = p1 >> 7;
	in->vex_vvvv = (~p1 >> 3) & 15;
	in->rex |= in->vex_w << 3;
	in->vex_pp = p1 & 3;
	map = p0 & 0x1f;
	if (esc == 0x8f) {
		in->enc = X86_64_ENC_XOP;
		in->vex_l = (p1 >> 2) & 1;
		if (map < 8 || map > 10)
			return -EILSEQ;
		in->map = (enum x86_64_map)map;
		return 0;
	}
	if (esc == 0xc4) {
		in->enc = X86_64_ENC_VEX;
		in->vex_l = (p1 >> 2) & 1;
		if (map < 1 || map > 3)
			return -EILSEQ;
		in->map = (enum x86_64_map)map;
		return 0;
	}
	/* EVEX: 62 P0 P1 P2, P0 = R X B R' 0 m m m, P1 = W vvvv 1 pp */
	in->enc = X86_64_ENC_EVEX;
	if ((err = take(c, &p2)))
		return err;
	if (!(p1 & 0x04))
		return -EILSEQ;
	map = p0 & 7;
	if (map == 0 || map == 4 || map == 7)
		return -EILSEQ;
	in->vex_l = (p2 >> 5) & 3;
	in->map = (enum x86_64_map)map;
	return 0;
}

/* Legacy prefixes, then at most one REX which must come last; *b: the
 * first byte after them. */
static int decode_prefixes(struct x86_64_insn *in, struct cursor *c,
			   uint8_t *b)
{
	unsigned int pfx;
	int err;

	for (;;) {
		if ((err = take(c, b)))
			return err;
		if ((pfx = legacy_prefix(*b))) {
			in->prefixes |= pfx;
			in->rex = 0;	/* a REX followed by a prefix is ignored */
			continue;
		}
		if ((*b & 0xf0) == 0x40) {
			in->rex = *b;
			in->rex_off = c->pos - 1;
			continue;
		}
		return 0;
	}
}

/*
 * The opcode, whose first byte b follows the prefixes: its map (one
 * byte, 0f, 0f38, 0f3a, 3DNow!, VEX/XOP/EVEX's), its byte, and *shape,
 * the letter of the opcode tables saying what follows it.
 */
static int decode_opcode(struct x86_64_insn *in, struct cursor *c, uint8_t b,
			 char *shape)
{
	int err;

	in->map = X86_64_MAP_1BYTE;
	in->opcode = b;
	in->opcode_off = c->pos - 1;
	*shape = x86_64_shape_1byte[b];

	if (*shape == 'V') {
		/* 8f is pop r/m unless the next byte says XOP map 8..10 */
		if (b == 0x8f) {
			if (c->pos >= c->size)
				return -ENODATA;
			if ((c->buf[c->pos] & 0x1f) < 8)
				goto have_opcode;
		}
		in->vex_off = c->pos - 1;
		if ((err = decode_vex(in, c, b)))
			return err;
		if ((err = take(c, &in->opcode)))
			return err;
		in->opcode_off = c->pos - 1;
		*shape = x86_64_map_shape(in->map, in->opcode);
		/* VEX-family opcodes take a ModRM, plus an imm8 where
		 * the legacy form has one; vzeroupper / vzeroall alone
		 * have neither. */
		if (in->map == X86_64_MAP_0F && in->opcode == 0x77)
			*shape = '.';
		else if (*shape != 'B' && *shape != 'Z')
			*shape = 'm';
		return 0;
	}
	if (*shape == 'E') {
		if ((err = take(c, &b)))
			return err;
		in->map = X86_64_MAP_0F;
		in->opcode = b;
		in->opcode_off = c->pos - 1;
		*shape = x86_64_shape_0f[b];
		if (*shape == 'E') {
			if (b == 0x0f) {
				/* 3DNow!: ModRM, then the real opcode as imm8 */
				in->map = X86_64_MAP_3DNOW;
				*shape = 'B';
			} else {
				in->map = b == 0x38 ? X86_64_MAP_0F38 :
						      X86_64_MAP_0F3A;
				if ((err = take(c, &in->opcode)))
					return err;
				in->opcode_off = c->pos - 1;
				*shape = x86_64_map_shape(in->map,
							  in->opcode);
			}
		}
	}
have_opcode:
	if (in->map == X86_64_MAP_1BYTE)
		*shape = in->opcode == 0x8f ? 'm' : x86_64_shape_1byte[in->opcode];
	return 0;
}

/* The immediates (and branch displacements) that shape says follow the
 * opcode and ModRM. */
static int decode_immediates(struct x86_64_insn *in, struct cursor *c,
			     char shape)
{
	int err = 0;

	switch (shape) {
	case 'b': case 'B':
		err = decode_imm(in, c, 1, false);
		break;
	case 'j':
		err = decode_imm(in, c, 1, false);
		in->is_rel_branch = true;
		break;
	case 'z': case 'Z':
		if (in->map == X86_64_MAP_XOPA)
			err = decode_imm(in, c, 4, false);
		else
			err = decode_imm(in, c, in->opsize == 2 ? 2 : 4, false);
		break;
	case 'X':
		err = decode_imm(in, c, in->opsize == 2 ? 2 : 4, false);
		in->is_rel_branch = in->modrm == 0xf8;	/* xbegin */
		break;
	case 'J':
		/* 66 makes a near branch rel16 on AMD (objdump's model) */
		err = decode_imm(in, c, in->opsize == 2 ? 2 : 4, false);
		in->is_rel_branch = true;
		break;
	case 'w':
		err = decode_imm(in, c, 2, false);
		break;
	case 'e':
		if (!(err = decode_imm(in, c, 2, false)))
			err = decode_imm(in, c, 1, true);
		break;
	case 'v':
		err = decode_imm(in, c, in->opsize, false);
		break;
	case 'a':
		err = decode_imm(in, c, in->adsize, false);
		break;
	case 'g':
		if (((in->modrm >> 3) & 7) < 2)
			err = decode_imm(in, c, in->opcode == 0xf6 ? 1 :
					 in->opsize == 2 ? 2 : 4, false);
		break;
	case 'k':
		if (in->prefixes & (X86_64_PFX_OPSIZE | X86_64_PFX_REPNE)) {
			if (!(err = decode_imm(in, c, 1, false)))
				err = decode_imm(in, c, 1, true);
		}
		break;
	}
	return err;
}

int x86_64_decode(struct x86_64_insn *in, const uint8_t *buf, size_t size,
		  uint64_t addr)
{
	struct cursor c = { buf, size, 0 };
	uint8_t b;
	char shape;
	int err;

	memset(in, 0, sizeof(*in));
	in->addr = addr;
	in->base = in->index = -1;

	if ((err = decode_prefixes(in, &c, &b)))
		return err;
	if ((err = decode_opcode(in, &c, b, &shape)))
		return err;
	if (shape == 'x' || shape == 'p')
		return -EILSEQ;

	/* Operand and address size. */
	in->adsize = (in->prefixes & X86_64_PFX_ADSIZE) ? 4 : 8;
	if (in->rex & 8)
		in->opsize = 8;
	else if (in->prefixes & X86_64_PFX_OPSIZE)
		in->opsize = 2;
	else
		in->opsize = 4;

	switch (shape) {
	case 'm': case 'B': case 'Z': case 'g': case 'X': case 'k':
		if ((err = decode_modrm(in, &c, false)))
			return err;
		break;
	case 'c':
		if ((err = decode_modrm(in, &c, true)))
			return err;
		break;
	}
	if ((err = decode_immediates(in, &c, shape)))
		return err;

	in->len = c.pos;
	memcpy(in->bytes, buf, in->len);
	if (in->is_rel_branch) {
		uint64_t next = addr + in->len;

		in->target = next + (uint64_t)in->imm;
		if (in->opsize == 2 && shape == 'J')
			in->target = (next & ~0xffffull) |
				     ((next + (uint64_t)in->imm) & 0xffff);
	}
	return 0;
}

/* Address a RIP-relative operand designates. */
uint64_t x86_64_rip_target(const struct x86_64_insn *in)
{
	return in->addr + in->len + (int64_t)in->disp;
}
