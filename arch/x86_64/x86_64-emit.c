/*
 * x86_64-emit.c - the fixed code sequences probes are built from.
 *
 * Jumps (rel32 when the distance fits, else an absolute form that needs
 * no register and no stack), int3, a push of a 64-bit constant that does
 * not touch the flags, and the jump pad's register save and restore.
 *
 * Invariants:
 *  - nothing here changes rflags except the save sequence after it has
 *    saved them (and restore puts them back last but one);
 *  - nothing writes below the stack pointer the probed code had, within
 *    the 128-byte red zone of the SysV ABI: a leaf function may keep
 *    locals there without moving %rsp, and gdbserver's jump pads (and
 *    the kernel's first nop5 uprobe trampolines) corrupted them by
 *    pushing straight away.  The save sequence first moves %rsp down
 *    by 128, and restore moves it back last.
 */
#include "config.h"

#include <errno.h>

#include "arch/x86_64/x86_64.h"

bool x86_64_in_rel32(uint64_t from_next, uint64_t to)
{
	int64_t d = (int64_t)(to - from_next);

	return d >= INT32_MIN && d <= INT32_MAX;
}

/*
 * jmp to `to` from the current position:
 *
 *   e9 <rel32>                    when to - (here + 5) fits in 32 bits
 *   ff 25 00 00 00 00 <abs64>     jmp *0(%rip): reads the target from the
 *                                 8 bytes right after it
 */
void x86_64_jmp(struct x86_64_out *o, uint64_t to)
{
	uint64_t next = x86_64_here(o) + 5;

	if (x86_64_in_rel32(next, to)) {
		x86_64_put8(o, 0xe9);
		x86_64_put32(o, (uint32_t)(to - next));
	} else {
		x86_64_jmp_abs(o, to);
	}
}

void x86_64_jmp_abs(struct x86_64_out *o, uint64_t to)
{
	static const uint8_t jmp_rip[] = { 0xff, 0x25, 0, 0, 0, 0 };

	x86_64_put(o, jmp_rip, sizeof(jmp_rip));
	x86_64_put64(o, to);
}

/*
 * Push a 64-bit constant without touching flags or registers:
 *
 *   68 <imm32>                    push $v  (v fits sign-extended 32 bits)
 * or
 *   48 8d 64 24 f8                lea -8(%rsp),%rsp
 *   c7 04 24 <lo32>               movl $lo,(%rsp)
 *   c7 44 24 04 <hi32>            movl $hi,4(%rsp)
 */
void x86_64_push_imm64(struct x86_64_out *o, uint64_t v)
{
	static const uint8_t lea_m8[] = { 0x48, 0x8d, 0x64, 0x24, 0xf8 };
	static const uint8_t movl_0[] = { 0xc7, 0x04, 0x24 };
	static const uint8_t movl_4[] = { 0xc7, 0x44, 0x24, 0x04 };

	if ((int64_t)v == (int32_t)v) {
		x86_64_put8(o, 0x68);
		x86_64_put32(o, (uint32_t)v);
		return;
	}
	x86_64_put(o, lea_m8, sizeof(lea_m8));
	x86_64_put(o, movl_0, sizeof(movl_0));
	x86_64_put32(o, (uint32_t)v);
	x86_64_put(o, movl_4, sizeof(movl_4));
	x86_64_put32(o, (uint32_t)(v >> 32));
}

static int finish(struct x86_64_out *o)
{
	return o->overflow ? -ENOSPC : (int)o->len;
}

int x86_64_emit_jmp_rel32(uint8_t *out, size_t size, uint64_t from,
			  uint64_t to)
{
	struct x86_64_out o = { out, size, 0, from, false };

	if (!x86_64_in_rel32(from + 5, to))
		return -ERANGE;
	x86_64_jmp(&o, to);
	return finish(&o);
}

int x86_64_emit_jmp_abs(uint8_t *out, size_t size, uint64_t to)
{
	struct x86_64_out o = { out, size, 0, 0, false };

	x86_64_jmp_abs(&o, to);
	return finish(&o);
}

int x86_64_emit_int3(uint8_t *out, size_t size)
{
	struct x86_64_out o = { out, size, 0, 0, false };

	x86_64_put8(&o, 0xcc);
	return finish(&o);
}

/* Bytes of the frame below the red zone: 16 GPRs, rip, rflags. */
#define X86_64_FRAME 144
#define X86_64_RED_ZONE 128

/*
 * The jump pad's register save.  Before / after, stack growing down:
 *
 *   before:                          after:
 *     orig_rsp -> | caller data |     orig_rsp -> | caller data |
 *                 | red zone    |                 | red zone    |  untouched
 *                 |  128 bytes  |                 |  128 bytes  |
 *                                                 | rflags      |  +136
 *                                                 | rip = pc    |  +128
 *                                                 | r15 .. r8   |  +120 .. +64
 *                                                 | orig_rsp    |  +56
 *                                                 | rbp rdi rsi |  +48 .. +32
 *                                                 | rdx rcx rbx |  +24 .. +8
 *                                 rbx = rdi ->    | rax         |  +0
 *                                   rsp -> (frame rounded down to 16)
 *
 * The frame is the `g` block's first 18 slots (16 GPRs in gdb order,
 * rip, eflags widened to 8 bytes), so collecting registers is a copy.
 *
 *   48 8d 64 24 80          lea -128(%rsp),%rsp
 *   9c                      pushfq
 *   <push_imm64 pc>
 *   41 57 .. 41 50          push %r15 .. push %r8
 *   54                      push %rsp
 *   55 57 56 52 51 53 50    push %rbp %rdi %rsi %rdx %rcx %rbx %rax
 *   48 81 44 24 38 <208>    addq $208,56(%rsp)    the pushed rsp -> orig
 *   48 89 e3                mov %rsp,%rbx
 *   48 89 e7                mov %rsp,%rdi
 *   48 83 e4 f0             and $-16,%rsp
 */
int x86_64_emit_save_regs(uint8_t *out, size_t size, uint64_t pc)
{
	static const uint8_t head[] = { 0x48, 0x8d, 0x64, 0x24, 0x80, 0x9c };
	static const uint8_t low[] = { 0x54, 0x55, 0x57, 0x56, 0x52, 0x51,
				       0x53, 0x50 };
	static const uint8_t fix[] = { 0x48, 0x81, 0x44, 0x24, 0x38 };
	static const uint8_t tail[] = { 0x48, 0x89, 0xe3, 0x48, 0x89, 0xe7,
					0x48, 0x83, 0xe4, 0xf0 };
	struct x86_64_out o = { out, size, 0, 0, false };

	x86_64_put(&o, head, sizeof(head));
	x86_64_push_imm64(&o, pc);
	for (int r = 15; r >= 8; r--) {
		x86_64_put8(&o, 0x41);
		x86_64_put8(&o, 0x50 + (r - 8));
	}
	x86_64_put(&o, low, sizeof(low));
	x86_64_put(&o, fix, sizeof(fix));
	x86_64_put32(&o, X86_64_RED_ZONE + 8 + 8 + 8 * 8);
	x86_64_put(&o, tail, sizeof(tail));
	return finish(&o);
}

/*
 * Undoes x86_64_emit_save_regs, reloading every register from the frame
 * (so a collector may edit it), rsp and rip excepted:
 *
 *   48 89 dc                mov %rbx,%rsp
 *   58 5b 59 5a 5e 5f 5d    pop %rax %rbx %rcx %rdx %rsi %rdi %rbp
 *   48 8d 64 24 08          lea 8(%rsp),%rsp      skip the saved rsp
 *   41 58 .. 41 5f          pop %r8 .. pop %r15
 *   48 8d 64 24 08          lea 8(%rsp),%rsp      skip rip
 *   9d                      popfq
 *   48 8d a4 24 80 00 00 00 lea 128(%rsp),%rsp    back above the red zone
 */
int x86_64_emit_restore_regs(uint8_t *out, size_t size)
{
	static const uint8_t head[] = { 0x48, 0x89, 0xdc, 0x58, 0x5b, 0x59,
					0x5a, 0x5e, 0x5f, 0x5d };
	static const uint8_t skip[] = { 0x48, 0x8d, 0x64, 0x24, 0x08 };
	static const uint8_t tail[] = { 0x9d, 0x48, 0x8d, 0xa4, 0x24, 0x80,
					0x00, 0x00, 0x00 };
	struct x86_64_out o = { out, size, 0, 0, false };

	x86_64_put(&o, head, sizeof(head));
	x86_64_put(&o, skip, sizeof(skip));
	for (int r = 8; r <= 15; r++) {
		x86_64_put8(&o, 0x41);
		x86_64_put8(&o, 0x58 + (r - 8));
	}
	x86_64_put(&o, skip, sizeof(skip));
	x86_64_put(&o, tail, sizeof(tail));
	return finish(&o);
}
