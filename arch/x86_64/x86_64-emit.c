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
 * (so a collector may edit it), rsp and rip excepted.  The flags come
 * back without popfq, which costs 7-15 ns here (a microcoded
 * instruction) where the rest of a pad's hit costs 20-40: DF by std when
 * the frame has it (the pad cleared it), OF by an add that overflows
 * exactly when the frame's OF is set, and SF ZF AF PF CF by sahf.  No
 * other flag is changed by a pad.  Nothing after sahf writes a flag.
 *
 *   48 89 dc                mov %rbx,%rsp
 *   f6 84 24 89 00 00 00 04 testb $4,137(%rsp)    DF in the saved rflags
 *   74 01                   jz 1f
 *   fd                      std
 *   8a 84 24 89 00 00 00    1: mov 137(%rsp),%al  rflags bits 8..15
 *   c0 e8 03 24 01          shr $3,%al; and $1,%al    OF
 *   04 7f                   add $127,%al          OF = the saved OF
 *   8a a4 24 88 00 00 00    mov 136(%rsp),%ah
 *   9e                      sahf                  SF ZF AF PF CF
 *   58 5b 59 5a 5e 5f 5d    pop %rax %rbx %rcx %rdx %rsi %rdi %rbp
 *   48 8d 64 24 08          lea 8(%rsp),%rsp      skip the saved rsp
 *   41 58 .. 41 5f          pop %r8 .. pop %r15
 *   48 8d 64 24 10          lea 16(%rsp),%rsp     skip rip and rflags
 *   48 8d a4 24 80 00 00 00 lea 128(%rsp),%rsp    back above the red zone
 */
int x86_64_emit_restore_regs(uint8_t *out, size_t size)
{
	static const uint8_t flags[] = {
		0x48, 0x89, 0xdc,
		0xf6, 0x84, 0x24, 0x89, 0x00, 0x00, 0x00, 0x04,
		0x74, 0x01, 0xfd,
		0x8a, 0x84, 0x24, 0x89, 0x00, 0x00, 0x00,
		0xc0, 0xe8, 0x03, 0x24, 0x01, 0x04, 0x7f,
		0x8a, 0xa4, 0x24, 0x88, 0x00, 0x00, 0x00, 0x9e,
	};
	static const uint8_t low[] = { 0x58, 0x5b, 0x59, 0x5a, 0x5e, 0x5f, 0x5d };
	static const uint8_t skip[] = { 0x48, 0x8d, 0x64, 0x24, 0x08 };
	static const uint8_t tail[] = { 0x48, 0x8d, 0x64, 0x24, 0x10,
					0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00 };
	struct x86_64_out o = { out, size, 0, 0, false };

	x86_64_put(&o, flags, sizeof(flags));
	x86_64_put(&o, low, sizeof(low));
	x86_64_put(&o, skip, sizeof(skip));
	for (int r = 8; r <= 15; r++) {
		x86_64_put8(&o, 0x41);
		x86_64_put8(&o, 0x58 + (r - 8));
	}
	x86_64_put(&o, tail, sizeof(tail));
	return finish(&o);
}

/*
 * What a pad stores for a hit, the record or entry in %r14 and the frame
 * at %rbx: the frame (18 words, by rax and rcx; DF cleared), the
 * x87/SSE(/AVX) image at offset 0 (rax, rdx go), and with fsgsbase the
 * two bases at off_bases.
 *
 *   fc                      cld
 *   48 8b 43 00 48 8b 4b 08 ...   the frame, see put_frame_copy
 *   b8 07 00 00 00 31 d2    mov $7,%eax; xor %edx,%edx
 *   49 0f ae 26             xsave64 (%r14)        (or 49 0f ae 06 fxsave64)
 *     (X86_64_IMAGE_XSAVE_BY_FXSAVE: fxsave64, 16 vextractf128 of the
 *      upper halves, movq $7,512(%r14): see put_hit_state)
 *   f3 48 0f ae c0          rdfsbase %rax
 *   49 89 86 <bases>        mov %rax,bases(%r14)
 *   f3 48 0f ae c8          rdgsbase %rax
 *   49 89 86 <bases+8>      mov %rax,bases+8(%r14)
 */
enum bases_how { BASES_NONE, BASES_FSGSBASE, BASES_SYSCALL, BASES_TABLE };

/*
 * Without fsgsbase the collector still needs the bases (nothing stops to
 * read them later): two arch_prctl calls, which clobber rax, rcx, r11,
 * rdi and rsi, all saved in the frame by now.
 *
 *   bf 03 10 00 00          mov $ARCH_GET_FS,%edi
 *   49 8d b6 <bases>        lea bases(%r14),%rsi
 *   b8 9e 00 00 00 0f 05    mov $SYS_arch_prctl,%eax; syscall
 *   bf 04 10 00 00          mov $ARCH_GET_GS,%edi
 *   49 8d b6 <bases+8>      lea bases+8(%r14),%rsi
 *   b8 9e 00 00 00 0f 05    mov $SYS_arch_prctl,%eax; syscall
 */
static void put_base_call(struct x86_64_out *o, unsigned int off_bases, unsigned int i)
{
	static const uint8_t lea_rsi[] = { 0x49, 0x8d, 0xb6 };
	static const uint8_t call[] = { 0xb8, 0x9e, 0, 0, 0, 0x0f, 0x05 };

	x86_64_put8(o, 0xbf);
	x86_64_put32(o, 0x1003 + i);	/* ARCH_GET_FS, ARCH_GET_GS */
	x86_64_put(o, lea_rsi, sizeof(lea_rsi));
	x86_64_put32(o, off_bases + 8 * i);
	x86_64_put(o, call, sizeof(call));
}

static void put_bases_syscall(struct x86_64_out *o, unsigned int off_bases)
{
	for (unsigned int i = 0; i < 2; i++)
		put_base_call(o, off_bases, i);
}

/*
 * Without fsgsbase, with the agent's thread id table at `table`: the fs
 * base is the TCB's first word (%fs:0, the thread pointer by the x86-64
 * TLS ABI) unless a thread without TLS is about (PAD_TID_NOTLS), the gs
 * base the agent's word while every thread it entered has that one
 * (PAD_TID_GS_OK); each asked of the kernel otherwise.  A fault of the
 * %fs:0 load (a thread that lost its TLS) goes on at the call, *fault.
 * Clobbers rax, rcx, rdi, rsi, r11, all in the frame.
 *
 *   48 b9 <table>           movabs $table,%rcx
 *   83 b9 <NOTLS> 00        cmpl $0,NOTLS(%rcx)
 *   75 <1f>                 jne 1f
 *   64 48 8b 04 25 00 00 00 00   mov %fs:0,%rax
 *   49 89 86 <bases>        mov %rax,bases(%r14)
 *   eb <2f>                 jmp 2f
 * 1:<put_base_call ARCH_GET_FS>
 * 2:48 b9 <table>           movabs $table,%rcx
 *   83 b9 <GS_OK> 00        cmpl $0,GS_OK(%rcx)
 *   74 <3f>                 je 3f
 *   48 8b 81 <GS>           mov GS(%rcx),%rax
 *   49 89 86 <bases+8>      mov %rax,bases+8(%r14)
 *   eb <4f>                 jmp 4f
 * 3:<put_base_call ARCH_GET_GS>
 * 4:
 */
static void put_bases_table(struct x86_64_out *o, unsigned int off_bases, uint64_t table,
			    struct arch_pad_fault *fault)
{
	static const uint8_t fs0[] = { 0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0 };
	static const uint8_t mov_r14[] = { 0x49, 0x89, 0x86 };
	static const uint8_t ld_gs[] = { 0x48, 0x8b, 0x81 };
	size_t j1, j2, j3, j4, load;

	for (unsigned int i = 0; i < 2; i++) {
		x86_64_put8(o, 0x48);
		x86_64_put8(o, 0xb9);
		x86_64_put64(o, table);
		x86_64_put8(o, 0x83);
		x86_64_put8(o, 0xb9);
		x86_64_put32(o, (uint32_t)(i ? PAD_TID_GS_OK : PAD_TID_NOTLS));
		x86_64_put8(o, 0);
		x86_64_put8(o, i ? 0x74 : 0x75);
		j1 = o->len;
		x86_64_put8(o, 0);
		load = o->len;
		if (i) {
			x86_64_put(o, ld_gs, sizeof(ld_gs));
			x86_64_put32(o, (uint32_t)PAD_TID_GS);
		} else {
			x86_64_put(o, fs0, sizeof(fs0));
		}
		x86_64_put(o, mov_r14, sizeof(mov_r14));
		x86_64_put32(o, off_bases + 8 * i);
		x86_64_put8(o, 0xeb);
		j2 = o->len;
		x86_64_put8(o, 0);
		j3 = o->len;
		put_base_call(o, off_bases, i);
		j4 = o->len;
		if (o->overflow)
			continue;
		o->buf[j1] = (uint8_t)(j3 - (j1 + 1));
		o->buf[j2] = (uint8_t)(j4 - (j2 + 1));
		if (!i && fault)
			*fault = (struct arch_pad_fault){ load, j3, sizeof(fs0) };
	}
}

/*
 * The frame (18 words at %rbx) to off_frame(%r14), through rax and rcx,
 * two words at a time: `rep movsq` costs a start-up of
 * some 8 ns on the CPUs of bench/README.md, more than its 18 stores.
 * DF is cleared for what the pad calls next (the collector, the vDSO's
 * clock: the ABI's; rflags are in the frame).
 *
 *   fc                      cld
 *   48 8b 43 <8i>           mov 8i(%rbx),%rax     (i = 0, 2, .. 16;
 *   48 8b 4b <8i+8>         mov 8i+8(%rbx),%rcx    from 128 on: 48 8b 83 /
 *                                                  48 8b 8b <disp32>)
 *   49 89 86 <frame+8i>     mov %rax,frame+8i(%r14)
 *   49 89 8e <frame+8i+8>   mov %rcx,frame+8i+8(%r14)
 */
static void put_frame_copy(struct x86_64_out *o, unsigned int off_frame)
{
	static const uint8_t load[2][3] = { { 0x48, 0x8b, 0x43 }, { 0x48, 0x8b, 0x4b } };
	static const uint8_t store[2][3] = { { 0x49, 0x89, 0x86 }, { 0x49, 0x89, 0x8e } };

	x86_64_put8(o, 0xfc);
	for (unsigned int i = 0; i < 18; i += 2) {
		for (unsigned int k = 0; k < 2; k++) {
			unsigned int at = 8 * (i + k);
			x86_64_put8(o, load[k][0]);
			x86_64_put8(o, load[k][1]);
			if (at < 128) {		/* disp8 is signed */
				x86_64_put8(o, load[k][2]);
				x86_64_put8(o, (uint8_t)at);
			} else {		/* mod 10: disp32 */
				x86_64_put8(o, (uint8_t)(load[k][2] + 0x40));
				x86_64_put32(o, at);
			}
		}
		for (unsigned int k = 0; k < 2; k++) {
			x86_64_put(o, store[k], 3);
			x86_64_put32(o, off_frame + 8 * (i + k));
		}
	}
}

static void put_hit_state(struct x86_64_out *o, unsigned int off_frame,
			  bool xsave, bool fxsave_ymm, bool image, enum bases_how bases,
			  unsigned int off_bases, uint64_t table, struct arch_pad_fault *fault)
{
	/* Without the image, an XSAVE-layout reader still finds its
	 * header's XSTATE_BV: 0, every component in its initial state.
	 *   49 c7 86 00 02 00 00 00 00 00 00    movq $0,512(%r14)
	 */
	static const uint8_t no_bv[] = { 0x49, 0xc7, 0x86, 0x00, 0x02, 0, 0,
					 0, 0, 0, 0 };
	static const uint8_t xsave64[] = { 0xb8, 7, 0, 0, 0, 0x31, 0xd2,
					   0x49, 0x0f, 0xae, 0x26 };
	/* 49 c7 86 00 02 00 00 07 00 00 00   movq $7,512(%r14)  XSTATE_BV */
	static const uint8_t all_bv[] = { 0x49, 0xc7, 0x86, 0x00, 0x02, 0, 0,
					  7, 0, 0, 0 };
	static const uint8_t fxsave64[] = { 0x49, 0x0f, 0xae, 0x06 };
	static const uint8_t rdfs[] = { 0xf3, 0x48, 0x0f, 0xae, 0xc0 };
	static const uint8_t rdgs[] = { 0xf3, 0x48, 0x0f, 0xae, 0xc8 };
	static const uint8_t mov_r14[] = { 0x49, 0x89, 0x86 };

	put_frame_copy(o, off_frame);
	if (!image) {
		if (xsave)
			x86_64_put(o, no_bv, sizeof(no_bv));
	} else if (xsave && fxsave_ymm) {
		/* The XSAVE image without XSAVE: the legacy area, then
		 *   c4 R1 0 00011  7d 19 <80|n<<3|6> <576+16n> 01
		 *   vextractf128 $1,%ymm<n>,576+16n(%r14)   (n = 0..15)
		 * and XSTATE_BV = x87|SSE|AVX, each as stored. */
		x86_64_put(o, fxsave64, sizeof(fxsave64));
		for (unsigned int n = 0; n < 16; n++) {
			x86_64_put8(o, 0xc4);
			x86_64_put8(o, (uint8_t)((n < 8 ? 0x80 : 0) | 0x40 | 0x03));
			x86_64_put8(o, 0x7d);
			x86_64_put8(o, 0x19);
			x86_64_put8(o, (uint8_t)(0x80 | (n & 7) << 3 | 6));
			x86_64_put32(o, 576 + 16 * n);
			x86_64_put8(o, 1);
		}
		x86_64_put(o, all_bv, sizeof(all_bv));
	} else if (xsave) {
		x86_64_put(o, xsave64, sizeof(xsave64));
	} else {
		x86_64_put(o, fxsave64, sizeof(fxsave64));
	}
	if (bases == BASES_SYSCALL)
		put_bases_syscall(o, off_bases);
	if (bases == BASES_TABLE)
		put_bases_table(o, off_bases, table, fault);
	if (bases == BASES_FSGSBASE) {
		x86_64_put(o, rdfs, sizeof(rdfs));
		x86_64_put(o, mov_r14, sizeof(mov_r14));
		x86_64_put32(o, off_bases);
		x86_64_put(o, rdgs, sizeof(rdgs));
		x86_64_put(o, mov_r14, sizeof(mov_r14));
		x86_64_put32(o, off_bases + 8);
	}
}

/*
 * The hand-off from a jump pad to the agent, after the register save
 * (frame at %rbx, stack aligned).  Clobbers only registers the frame
 * holds; DF is cleared for the copy and comes back with popfq.
 *
 *   b8 ba 00 00 00          mov $SYS_gettid,%eax
 *   0f 05                   syscall               rcx, r11 saved already
 *   41 89 c4                mov %eax,%r12d        r12 = tid
 *   89 c2                   mov %eax,%edx
 *   81 e2 <n-1>             and $(n-1),%edx       first entry to try
 *   49 bd <table>           movabs $table,%r13
 * 1:89 d6                   mov %edx,%esi
 *   48 c1 e6 <shift>        shl $shift,%rsi
 *   4c 01 ee                add %r13,%rsi         rsi = entry
 *   31 c0                   xor %eax,%eax
 *   f0 44 0f b1 a6 <owner>  lock cmpxchg %r12d,owner(%rsi)
 *   74 0c                   je 2f                 free: ours now
 *   ff c2                   inc %edx
 *   81 e2 <n-1>             and $(n-1),%edx
 *   f3 90                   pause
 *   eb <1b>                 jmp 1b
 * 2:49 89 f6                mov %rsi,%r14         r14 = entry
 *   fc                      cld
 *   48 8b 43 00 ...         the frame, 18 words (put_frame_copy)
 *   b8 07 00 00 00 31 d2    mov $7,%eax; xor %edx,%edx
 *   49 0f ae 26             xsave64 (%r14)        x87, SSE, AVX
 *     (or 49 0f ae 06       fxsave64 (%r14))
 *   f3 48 0f ae c0          rdfsbase %rax         (fsgsbase only)
 *   49 89 86 <bases>        mov %rax,bases(%r14)
 *   f3 48 0f ae c8          rdgsbase %rax
 *   49 89 86 <bases+8>      mov %rax,bases+8(%r14)
 *   41 c7 86 <ready> 1      movl $PAD_READY,ready(%r14)
 * 3:cc                      int3                  the agent's one stop
 *   41 83 be <ready> 2      cmpl $PAD_DONE,ready(%r14)
 *   75 <3b>                 jne 3b                not handled: trap again
 *   41 c7 86 <ready> 0      movl $PAD_FREE,ready(%r14)
 *   41 c7 86 <owner> 0      movl $0,owner(%r14)   the entry is free
 */
int x86_64_emit_pad_handoff(uint8_t *out, size_t size,
			    const struct arch_pad_handoff *h, size_t *trap_off)
{
	static const uint8_t gettid[] = { 0xb8, 0xba, 0, 0, 0, 0x0f, 0x05,
					  0x41, 0x89, 0xc4, 0x89, 0xc2 };
	static const uint8_t movl_r14[] = { 0x41, 0xc7, 0x86 };
	struct x86_64_out o = { out, size, 0, 0, false };
	size_t retry, trap;

	unsigned int image = x86_64_image_bytes(h->image_form);

	/* XSAVE64 and FXSAVE64 fault on a misaligned image. */
	if (!h->nentries || (h->nentries & (h->nentries - 1)) ||
	    h->entry_shift < 6 || h->entry_shift > 20 || (h->table & 63) ||
	    h->off_owner < image || h->off_ready < image ||
	    h->off_frame < image || (h->tp_read && h->off_bases < image) ||
	    h->off_frame + 18 * 8 > (1u << h->entry_shift))
		return -EINVAL;
	x86_64_put(&o, gettid, sizeof(gettid));
	x86_64_put8(&o, 0x81);
	x86_64_put8(&o, 0xe2);
	x86_64_put32(&o, h->nentries - 1);
	x86_64_put8(&o, 0x49);
	x86_64_put8(&o, 0xbd);
	x86_64_put64(&o, h->table);
	retry = o.len;
	static const uint8_t entry[] = { 0x89, 0xd6, 0x48, 0xc1, 0xe6 };
	static const uint8_t add_cas[] = { 0x4c, 0x01, 0xee, 0x31, 0xc0, 0xf0,
					   0x44, 0x0f, 0xb1, 0xa6 };
	x86_64_put(&o, entry, sizeof(entry));
	x86_64_put8(&o, h->entry_shift);
	x86_64_put(&o, add_cas, sizeof(add_cas));
	x86_64_put32(&o, h->off_owner);
	x86_64_put8(&o, 0x74);
	x86_64_put8(&o, 12);		/* over the 12 bytes below */
	x86_64_put8(&o, 0xff);
	x86_64_put8(&o, 0xc2);
	x86_64_put8(&o, 0x81);
	x86_64_put8(&o, 0xe2);
	x86_64_put32(&o, h->nentries - 1);
	x86_64_put8(&o, 0xf3);
	x86_64_put8(&o, 0x90);
	x86_64_put8(&o, 0xeb);
	x86_64_put8(&o, (uint8_t)(retry - (o.len + 1)));
	static const uint8_t claimed[] = { 0x49, 0x89, 0xf6 };
	x86_64_put(&o, claimed, sizeof(claimed));
	put_hit_state(&o, h->off_frame, x86_64_image_is_xsave(h->image_form),
		      h->image_form == X86_64_IMAGE_XSAVE_BY_FXSAVE, true,
		      h->tp_read ? BASES_FSGSBASE : BASES_NONE, h->off_bases, 0, NULL);
	x86_64_put(&o, movl_r14, sizeof(movl_r14));
	x86_64_put32(&o, h->off_ready);
	x86_64_put32(&o, PAD_READY);
	trap = o.len;
	x86_64_put8(&o, 0xcc);
	static const uint8_t cmp[] = { 0x41, 0x83, 0xbe };
	x86_64_put(&o, cmp, sizeof(cmp));
	x86_64_put32(&o, h->off_ready);
	x86_64_put8(&o, PAD_DONE);
	x86_64_put8(&o, 0x75);
	x86_64_put8(&o, (uint8_t)(trap - (o.len + 1)));
	x86_64_put(&o, movl_r14, sizeof(movl_r14));
	x86_64_put32(&o, h->off_ready);
	x86_64_put32(&o, PAD_FREE);
	x86_64_put(&o, movl_r14, sizeof(movl_r14));
	x86_64_put32(&o, h->off_owner);
	x86_64_put32(&o, 0);
	*trap_off = trap;
	return finish(&o);
}

/*
 * The jump pad's in-process collector (a bounded multi-producer ring,
 * each record with its own sequence word), after the register save
 * (frame at %rbx):
 *
 *   49 bd <ring>            movabs $ring,%r13
 * 1:49 8b 45 00             mov (%r13),%rax        pos = head
 *   89 c2                   mov %eax,%edx
 *   81 e2 <n-1>             and $(n-1),%edx
 *   48 c1 e2 <shift>        shl $shift,%rdx
 *   49 8d b4 15 <records>   lea records(%r13,%rdx),%rsi   record of pos
 *   48 8b 8e <seq>          mov seq(%rsi),%rcx
 *   48 29 c1                sub %rax,%rcx          seq - pos
 *   0f 8c <full>            jl full (rel32)        not read yet: full
 *   7f <1b>                 jg 1b                  taken meanwhile
 *   48 8d 50 01             lea 1(%rax),%rdx
 *   f0 49 0f b1 55 00       lock cmpxchg %rdx,(%r13)   head = pos + 1
 *   75 <1b>                 jne 1b
 *   49 89 c4                mov %rax,%r12          pos
 *   49 89 f6                mov %rsi,%r14          record
 *   fc 48 8b 43 00 ...      the frame, as in the hand-off
 *   xsave64 / fxsave64, rdfsbase / rdgsbase    as in the hand-off
 *     (without r->image no xsave64 / fxsave64; without r->off_flags
 *      then movq $0,512(%r14), the XSTATE_BV of an XSAVE-layout
 *      image)
 *     (without fsgsbase: arch_prctl ARCH_GET_FS / ARCH_GET_GS)
 *   41 c7 86 <flags> <0|1>  movl $PAD_REC_IMAGE or 0,flags(%r14)
 *                           (with r->off_flags)
 *   49 8d 44 24 01          lea 1(%r12),%rax
 *   49 89 86 <seq>          mov %rax,seq(%r14)     published
 *   e9 <done>               jmp done               (the restore)
 *     (with ipa_call: the call below before the publish, and
 *      jne done after it, on the collector's verdict; with copy_fn
 *      too, the collector's blocks written by the pad instead
 *      (emit_native_copy), and jmp done)
 * full:                     (falls through: the hand-off)
 */
/*
 * The parts of a collector's record lie after the state image, inside
 * the record, aligned, and apart: the seq word (its store publishes the
 * record), the bases (always: nothing stops to read them later), the
 * frame, and with time_tid the tid and the timespec.
 */
static bool record_parts_fit(const struct arch_pad_ring *r, unsigned int image)
{
	const struct { unsigned int off, len, align; bool used; } part[] = {
		{ r->off_seq, 8, 8, true },
		{ r->off_bases, 16, 8, true },
		{ r->off_frame, 18 * 8, 8, true },
		{ r->off_tid, 4, 4, r->time_tid },
		{ r->off_time, 16, 8, r->time_tid },
		{ r->off_blocks, r->blocks_size, 8, r->ipa_call != 0 },
		{ r->off_flags, 4, 4, r->off_flags != 0 },
	};
	uint64_t rec = 1ull << r->record_shift;

	for (size_t i = 0; i < sizeof(part) / sizeof(part[0]); i++) {
		if (!part[i].used)
			continue;
		if (part[i].off < image || part[i].off % part[i].align ||
		    (uint64_t)part[i].off + part[i].len > rec)
			return false;
		for (size_t j = 0; j < i; j++)
			if (part[j].used && part[i].off < part[j].off + part[j].len &&
			    part[j].off < part[i].off + part[i].len)
				return false;
	}
	return true;
}

/*
 * The in-process collector's question, before anything else:
 *
 *   fc                      cld             the ABI's (rflags saved)
 *   48 bf <site>            movabs $site,%rdi
 *   48 89 de                mov %rbx,%rsi   the frame, on the stack
 *   ba 12 00 00 00          mov $18,%edx
 *   48 b8 <wants>           movabs $wants,%rax
 *   ff d0                   call *%rax
 *   85 c0                   test %eax,%eax
 *   0f 84 <skip>            je skip         no record at all
 *
 * Returns where skip's rel32 is, to be patched.
 */
static size_t emit_ipa_wants(struct x86_64_out *o, const struct arch_pad_ring *r)
{
	static const uint8_t frame_arg[] = { 0x48, 0x89, 0xde, 0xba, 18, 0, 0, 0 };
	static const uint8_t test_je[] = { 0xff, 0xd0, 0x85, 0xc0, 0x0f, 0x84 };
	size_t skip_at;

	x86_64_put8(o, 0xfc);
	x86_64_put8(o, 0x48);
	x86_64_put8(o, 0xbf);
	x86_64_put64(o, r->ipa_site);
	x86_64_put(o, frame_arg, sizeof(frame_arg));
	x86_64_put8(o, 0x48);
	x86_64_put8(o, 0xb8);
	x86_64_put64(o, r->ipa_wants);
	x86_64_put(o, test_je, sizeof(test_je));
	skip_at = o->len;
	x86_64_put32(o, 0);		/* patched by the caller */
	return skip_at;
}

/* The ring's claim, from `movabs $ring,%r13` to `mov %rsi,%r14` (see
 * above).  Returns where the `jl full` is, whose rel32 is patched once
 * the code is complete. */
static size_t emit_claim_record(struct x86_64_out *o,
				const struct arch_pad_ring *r)
{
	static const uint8_t load_head[] = { 0x49, 0x8b, 0x45, 0x00, 0x89, 0xc2,
					     0x81, 0xe2 };
	static const uint8_t cas[] = { 0x48, 0x8d, 0x50, 0x01, 0xf0, 0x49, 0x0f,
				       0xb1, 0x55, 0x00 };
	static const uint8_t take[] = { 0x49, 0x89, 0xc4, 0x49, 0x89, 0xf6 };
	size_t retry, jl_at;

	x86_64_put8(o, 0x49);
	x86_64_put8(o, 0xbd);
	x86_64_put64(o, r->ring);
	retry = o->len;
	x86_64_put(o, load_head, sizeof(load_head));
	x86_64_put32(o, r->nrecords - 1);
	x86_64_put8(o, 0x48);
	x86_64_put8(o, 0xc1);
	x86_64_put8(o, 0xe2);
	x86_64_put8(o, r->record_shift);
	x86_64_put8(o, 0x49);
	x86_64_put8(o, 0x8d);
	x86_64_put8(o, 0xb4);
	x86_64_put8(o, 0x15);
	x86_64_put32(o, r->off_records);
	x86_64_put8(o, 0x48);
	x86_64_put8(o, 0x8b);
	x86_64_put8(o, 0x8e);
	x86_64_put32(o, r->off_seq);
	x86_64_put8(o, 0x48);
	x86_64_put8(o, 0x29);
	x86_64_put8(o, 0xc1);
	/* Near: the state stores (the bases by system call, the time and
	 * the tid) can take the record's code past a short jump's reach. */
	jl_at = o->len;
	x86_64_put8(o, 0x0f);
	x86_64_put8(o, 0x8c);
	x86_64_put32(o, 0);		/* patched by the caller */
	x86_64_put8(o, 0x7f);
	x86_64_put8(o, (uint8_t)(retry - (o->len + 1)));
	x86_64_put(o, cas, sizeof(cas));
	x86_64_put8(o, 0x75);
	x86_64_put8(o, (uint8_t)(retry - (o->len + 1)));
	x86_64_put(o, take, sizeof(take));
	return jl_at;
}

/*
 * The record's thread: from the agent's table by the thread pointer
 * (r->tid_table), or by the system call where the table does not name
 * the thread (see PAD_TID_* in arch.h):
 *
 *   f3 48 0f ae c0          rdfsbase %rax          the key
 *     (without fsgsbase
 *      48 b9 <table>        movabs $table,%rcx
 *      83 b9 <NOTLS> 00     cmpl $0,NOTLS(%rcx)    a thread without TLS:
 *      75 <3f>              jne 3f                 the load would fault
 *      64 48 8b 04 25 00 00 00 00   mov %fs:0,%rax: the TCB's first
 *      word, the thread pointer by the x86-64 TLS ABI, which the agent
 *      checks before it enters a thread; a fault there (a thread that
 *      lost its TLS since) goes on at 3:, r->tp_fault)
 *   48 89 c2                mov %rax,%rdx
 *   48 b9 <PAD_TID_HASH>    movabs $hash,%rcx
 *   48 0f af d1             imul %rcx,%rdx
 *   48 c1 ea <64-bits>      shr $(64-bits),%rdx    first entry to look at
 *   48 c1 e2 04             shl $4,%rdx
 *   48 b9 <table>           movabs $table,%rcx
 *   48 01 ca                add %rcx,%rdx
 *   b9 <probes>             mov $PAD_TID_PROBES,%ecx
 * 1:48 39 02                cmp %rax,(%rdx)
 *   74 0a                   je 2f
 *   48 83 c2 10             add $16,%rdx
 *   ff c9 75 f3             dec %ecx; jnz 1b
 *   eb 07                   jmp 3f                 not there
 * 2:8b 42 08                mov 8(%rdx),%eax
 *   85 c0 75 07             test %eax,%eax; jnz 4f  0: shared thread pointer
 * 3:b8 ba 00 00 00 0f 05    gettid
 * 4:41 89 86 <tid>          mov %eax,tid(%r14)
 *
 * Without the table only the last two.  Clobbers rax, rcx, rdx (and the
 * system call's rcx, r11), all in the frame by now.
 */
static void emit_tid(struct x86_64_out *o, const struct arch_pad_ring *r)
{
	static const uint8_t key[] = { 0xf3, 0x48, 0x0f, 0xae, 0xc0, 0x48, 0x89, 0xc2,
				       0x48, 0xb9 };
	static const uint8_t hash[] = { 0x48, 0x0f, 0xaf, 0xd1, 0x48, 0xc1, 0xea };
	static const uint8_t scale[] = { 0x48, 0xc1, 0xe2, 0x04, 0x48, 0xb9 };
	static const uint8_t search[] = { 0x48, 0x01, 0xca, 0xb9, PAD_TID_PROBES, 0, 0, 0,
					  0x48, 0x39, 0x02, 0x74, 0x0a,
					  0x48, 0x83, 0xc2, 0x10, 0xff, 0xc9, 0x75, 0xf3,
					  0xeb, 0x07,
					  0x8b, 0x42, 0x08, 0x85, 0xc0, 0x75, 0x07 };
	static const uint8_t key_tcb[] = { 0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0,
					   0x48, 0x89, 0xc2, 0x48, 0xb9 };
	static const uint8_t gettid[] = { 0xb8, 0xba, 0, 0, 0, 0x0f, 0x05,
					  0x41, 0x89, 0x86 };
	static const uint8_t notls[] = { 0x83, 0xb9 };
	size_t load = 0, j_notls = 0;

	if (r->tid_table) {
		if (r->tp_read) {
			x86_64_put(o, key, sizeof(key));
		} else {
			x86_64_put8(o, 0x48);
			x86_64_put8(o, 0xb9);
			x86_64_put64(o, r->tid_table);
			x86_64_put(o, notls, sizeof(notls));
			x86_64_put32(o, (uint32_t)PAD_TID_NOTLS);
			x86_64_put8(o, 0);
			x86_64_put8(o, 0x75);
			j_notls = o->len;
			x86_64_put8(o, 0);
			load = o->len;
			x86_64_put(o, key_tcb, sizeof(key_tcb));
		}
		x86_64_put64(o, PAD_TID_HASH);
		x86_64_put(o, hash, sizeof(hash));
		x86_64_put8(o, 64 - PAD_TID_BITS);
		x86_64_put(o, scale, sizeof(scale));
		x86_64_put64(o, r->tid_table);
		x86_64_put(o, search, sizeof(search));
		if (!r->tp_read) {
			/* to 3: (the gettid call), 74 bytes on: rel8 */
			if (!o->overflow)
				o->buf[j_notls] = (uint8_t)(o->len - (j_notls + 1));
			if (r->tp_fault)
				*r->tp_fault = (struct arch_pad_fault){ load, o->len,
									sizeof(key_tcb) - 5 };
		}
	}
	x86_64_put(o, gettid, sizeof(gettid));
	x86_64_put32(o, r->off_tid);
}

/*
 * The record's time.  With r->tsc_time the TSC, which the agent turns
 * into the clock (no call at all):
 *
 *   0f 31                   rdtsc
 *   48 c1 e2 20 48 09 d0    shl $32,%rdx; or %rdx,%rax
 *   49 89 86 <time>         mov %rax,time(%r14)
 *   (with stamp_entry: the pushed return's time is the same, and the
 *    stamp before the restore has nothing left to do)
 *   4d 85 ff 74 07          test %r15,%r15; jz 1f
 *   49 89 47 10             mov %rax,16(%r15)
 *   45 31 ff                xor %r15d,%r15d
 * 1:
 *   49 c7 86 <time+8> ff ff ff ff   movq $PAD_TIME_TSC,time+8(%r14)
 *
 * Otherwise a CLOCK_REALTIME timespec:
 *
 *   31 ff                   xor %edi,%edi          CLOCK_REALTIME
 *   49 8d b6 <time>         lea time(%r14),%rsi
 *   b8 e4 00 00 00 0f 05    clock_gettime          (r12, r14 kept)
 *     (with r->clock_call: movabs $vdso,%rax; call *%rax instead)
 */
static void emit_time_tid(struct x86_64_out *o, const struct arch_pad_ring *r)
{
	static const uint8_t tsc[] = { 0x0f, 0x31, 0x48, 0xc1, 0xe2, 0x20, 0x48, 0x09,
				       0xd0, 0x49, 0x89, 0x86 };
	static const uint8_t tsc_mark[] = { 0x49, 0xc7, 0x86 };
	static const uint8_t clock_arg[] = { 0x31, 0xff, 0x49, 0x8d, 0xb6 };
	static const uint8_t clock_call[] = { 0xb8, 0xe4, 0, 0, 0, 0x0f, 0x05 };

	/* test %r15,%r15; jz 1f; mov %rax,16(%r15); xor %r15d,%r15d; 1: */
	static const uint8_t stamp[] = { 0x4d, 0x85, 0xff, 0x74, 0x07,
					 0x49, 0x89, 0x47, 0x10, 0x45, 0x31, 0xff };

	emit_tid(o, r);
	if (r->tsc_time) {
		x86_64_put(o, tsc, sizeof(tsc));
		x86_64_put32(o, r->off_time);
		if (r->stamp_entry && !r->ipa_call)
			x86_64_put(o, stamp, sizeof(stamp));
		x86_64_put(o, tsc_mark, sizeof(tsc_mark));
		x86_64_put32(o, r->off_time + 8);
		x86_64_put32(o, (uint32_t)PAD_TIME_TSC);
		return;
	}
	x86_64_put(o, clock_arg, sizeof(clock_arg));
	x86_64_put32(o, r->off_time);
	if (r->clock_call) {
		/*
		 *   48 b8 <vdso>    movabs $clock_gettime,%rax
		 *   ff d0           call *%rax   (vDSO: no system call;
		 *                   rsp 16-aligned, DF clear; r12, r14 kept)
		 */
		x86_64_put8(o, 0x48);
		x86_64_put8(o, 0xb8);
		x86_64_put64(o, r->clock_call);
		x86_64_put8(o, 0xff);
		x86_64_put8(o, 0xd0);
	} else {
		x86_64_put(o, clock_call, sizeof(clock_call));
	}
}

/*
 * The in-process collector's call on the claimed record:
 *
 *   48 bf <site>            movabs $site,%rdi
 *   49 8d b6 <frame>        lea frame(%r14),%rsi
 *   ba 12 00 00 00          mov $18,%edx
 *   49 8d 8e <blocks>       lea blocks(%r14),%rcx
 *   41 b8 <size>            mov $size,%r8d
 *   48 b8 <call>            movabs $call,%rax
 *   ff d0                   call *%rax     (rsp 16-aligned by the save)
 *   41 89 c5                mov %eax,%r13d  the verdict
 *
 * The callee keeps rbx, r12 and r14; the rest are reloaded from the
 * frame.  It uses general registers only (the image is built so), as
 * the restore does not reload SSE/AVX.
 */
static void emit_ipa_call(struct x86_64_out *o, const struct arch_pad_ring *r)
{
	static const uint8_t frame_arg[] = { 0x49, 0x8d, 0xb6 };
	static const uint8_t blocks_arg[] = { 0x49, 0x8d, 0x8e };
	static const uint8_t call[] = { 0xff, 0xd0, 0x41, 0x89, 0xc5 };

	x86_64_put8(o, 0x48);
	x86_64_put8(o, 0xbf);
	x86_64_put64(o, r->ipa_site);
	x86_64_put(o, frame_arg, sizeof(frame_arg));
	x86_64_put32(o, r->off_frame);
	x86_64_put8(o, 0xba);
	x86_64_put32(o, 18);
	x86_64_put(o, blocks_arg, sizeof(blocks_arg));
	x86_64_put32(o, r->off_blocks);
	x86_64_put8(o, 0x41);
	x86_64_put8(o, 0xb8);
	x86_64_put32(o, r->blocks_size);
	x86_64_put8(o, 0x48);
	x86_64_put8(o, 0xb8);
	x86_64_put64(o, r->ipa_call);
	x86_64_put(o, call, sizeof(call));
}

/*
 * The collector's work done by the pad itself (arch_pad_ring.copy_fn:
 * one tracepoint, no condition, no pass count, ranges only).  What the
 * call costs beyond the copies (the site, program and counters read from
 * shared memory, two `lock` adds whose stores wait for the cold record's
 * lines, the interpretation of the actions) is known when the pad is
 * built, so the pad writes the same bytes ipa_collect_site would with
 * immediates, and reads memory only through copy_fn, ipa_copy itself: an
 * unreadable byte is the agent's fixed-up fault, and the block's avail.
 * With the record at %r14 and the frame at %rbx:
 *
 *   49 c7 86 <blocks> <1>         movq $IPA_RECORD|1<<32,blocks(%r14)  (site:
 *   49 c7 86 <blocks+8> <len>     movq $len,blocks+8(%r14)   verdict, groups, len)
 *   48 b8 <tp|1<<32>              movabs $tp|IPA_RECORD<<32,%rax     (the group)
 *   49 89 86 <blocks+16>          mov %rax,blocks+16(%r14)
 *   48 b8 <glen|flags<<32> / 49 89 86 <blocks+24>   its len and flags
 * per range, its block at b:
 *   49 c7 86 <b> / 48 b8 .. 49 89 86 <b>   kind IPA_BLK_MEM, size
 *   48 8b b3 <8*basereg>          mov 8*basereg(%rbx),%rsi   the frame's
 *     (or 48 be <offset>          movabs $offset,%rsi)
 *   48 81 c6 <offset>             add $offset,%rsi (or via %rax: 48 b8 ..
 *                                 48 01 c6; none when 0)
 *   49 89 b6 <b+8>                mov %rsi,b+8(%r14)          addr
 *   41 c7 86 <b+16> <len>         movl $len,b+16(%r14)
 *   49 8d be <b+24>               lea b+24(%r14),%rdi          bytes
 *   ba <len>                      mov $len,%edx
 *   48 b8 <copy_fn> ff d0         call copy_fn   (rsp 16-aligned; it
 *                                 clobbers rax, rcx, rdi, rsi; DF clear)
 *   41 89 86 <b+20>               mov %eax,b+20(%r14)          avail
 */
#define NATIVE_HDR 32u		/* struct ipa_site_out + struct ipa_group */
#define NATIVE_BLK 24u		/* struct ipa_mem_block's header */

static uint32_t native_block_size(uint32_t len)
{
	return (NATIVE_BLK + len + 7u) & ~7u;
}

/* The bytes the native copy writes at off_blocks, or 0 when it cannot
 * (no range, too many, a zero length, a register the frame has not,
 * more than blocks_size). */
static uint64_t native_copy_len(const struct arch_pad_ring *r)
{
	uint64_t n = NATIVE_HDR;

	if (!r->ncopies || r->ncopies > ARCH_PAD_COPIES)
		return 0;
	for (unsigned int i = 0; i < r->ncopies; i++) {
		const struct arch_pad_copy *c = &r->copies[i];
		if (!c->len || c->len > (1u << 20) ||
		    (c->basereg != ARCH_PAD_NO_REG && c->basereg >= 18))
			return 0;
		n += native_block_size(c->len);
	}
	return n <= r->blocks_size ? n : 0;
}

/* Stores the 64-bit `v` at disp(%r14): an imm32 when it sign-extends
 * to v, else through %rax. */
static void put_store_q(struct x86_64_out *o, uint64_t v, uint32_t disp)
{
	static const uint8_t movq_imm[] = { 0x49, 0xc7, 0x86 };
	static const uint8_t mov_rax[] = { 0x49, 0x89, 0x86 };

	if ((uint64_t)(int64_t)(int32_t)v == v) {
		x86_64_put(o, movq_imm, sizeof(movq_imm));
		x86_64_put32(o, disp);
		x86_64_put32(o, (uint32_t)v);
		return;
	}
	x86_64_put8(o, 0x48);
	x86_64_put8(o, 0xb8);
	x86_64_put64(o, v);
	x86_64_put(o, mov_rax, sizeof(mov_rax));
	x86_64_put32(o, disp);
}

static void emit_native_copy(struct x86_64_out *o, const struct arch_pad_ring *r,
			     uint32_t total)
{
	static const uint8_t load_frame[] = { 0x48, 0x8b, 0xb3 };
	static const uint8_t add_imm[] = { 0x48, 0x81, 0xc6 };
	static const uint8_t add_rax[] = { 0x48, 0x01, 0xc6 };
	static const uint8_t store_rsi[] = { 0x49, 0x89, 0xb6 };
	static const uint8_t movl_imm[] = { 0x41, 0xc7, 0x86 };
	static const uint8_t lea_rdi[] = { 0x49, 0x8d, 0xbe };
	static const uint8_t call_rax[] = { 0xff, 0xd0 };
	static const uint8_t store_eax[] = { 0x41, 0x89, 0x86 };
	uint32_t b = r->off_blocks;
	const uint64_t record = 1;	/* IPA_RECORD */

	/* ipa_site_out: verdict, ngroups = 1; len (after it), reserved. */
	put_store_q(o, record | 1ull << 32, b);
	put_store_q(o, total - 16, b + 8);
	/* ipa_group: tp_number, verdict; len (its blocks), flags. */
	put_store_q(o, r->copy_tp | record << 32, b + 16);
	put_store_q(o, (total - NATIVE_HDR) | (uint64_t)r->copy_flags << 32, b + 24);
	b += NATIVE_HDR;
	for (unsigned int i = 0; i < r->ncopies; i++) {
		const struct arch_pad_copy *c = &r->copies[i];
		uint32_t size = native_block_size(c->len);

		/* ipa_block: kind IPA_BLK_MEM (1), reserved, size. */
		put_store_q(o, 1 | (uint64_t)size << 32, b);
		if (c->basereg == ARCH_PAD_NO_REG) {
			x86_64_put8(o, 0x48);
			x86_64_put8(o, 0xbe);
			x86_64_put64(o, c->offset);
		} else {
			x86_64_put(o, load_frame, sizeof(load_frame));
			x86_64_put32(o, 8 * c->basereg);
			if (c->offset && (uint64_t)(int64_t)(int32_t)c->offset == c->offset) {
				x86_64_put(o, add_imm, sizeof(add_imm));
				x86_64_put32(o, (uint32_t)c->offset);
			} else if (c->offset) {
				x86_64_put8(o, 0x48);
				x86_64_put8(o, 0xb8);
				x86_64_put64(o, c->offset);
				x86_64_put(o, add_rax, sizeof(add_rax));
			}
		}
		x86_64_put(o, store_rsi, sizeof(store_rsi));
		x86_64_put32(o, b + 8);
		x86_64_put(o, movl_imm, sizeof(movl_imm));
		x86_64_put32(o, b + 16);
		x86_64_put32(o, c->len);
		x86_64_put(o, lea_rdi, sizeof(lea_rdi));
		x86_64_put32(o, b + NATIVE_BLK);
		x86_64_put8(o, 0xba);
		x86_64_put32(o, c->len);
		x86_64_put8(o, 0x48);
		x86_64_put8(o, 0xb8);
		x86_64_put64(o, r->copy_fn);
		x86_64_put(o, call_rax, sizeof(call_rax));
		x86_64_put(o, store_eax, sizeof(store_eax));
		x86_64_put32(o, b + 20);
		b += size;
	}
}

/*
 * After the publish, with the in-process collector: skip lands here, and
 * the verdict picks the restore or the hand-off.
 *
 *   eb 03                   jmp 1f
 * skip:
 *   45 31 ed                xor %r13d,%r13d  (IPA_SKIP)
 * 1:41 83 fd 03             cmp $IPA_TRAP,%r13d
 *   0f 85 <done>            jne done      else: the hand-off
 *
 * (`skip_at`: where the skip's rel32 is, 0 when there is none.)
 */
static void emit_ipa_verdict(struct x86_64_out *o, size_t skip_at)
{
	static const uint8_t over[] = { 0xeb, 0x03 };
	static const uint8_t skip[] = { 0x45, 0x31, 0xed };
	static const uint8_t cmp_trap[] = { 0x41, 0x83, 0xfd, 0x03, 0x0f, 0x85 };

	x86_64_put(o, over, sizeof(over));
	if (skip_at && !o->overflow) {
		uint32_t d = (uint32_t)(o->len - (skip_at + 4));
		for (int i = 0; i < 4; i++)
			o->buf[skip_at + i] = (uint8_t)(d >> (8 * i));
	}
	x86_64_put(o, skip, sizeof(skip));
	x86_64_put(o, cmp_trap, sizeof(cmp_trap));
}

/* prefetchw of the lines of [lo, hi) in the record `at` bytes on. */
static void put_prefetch_span(struct x86_64_out *o, uint32_t at, unsigned int lo,
			      unsigned int hi)
{
	static const uint8_t prefetchw[] = { 0x41, 0x0f, 0x0d, 0x8e };

	for (unsigned int l = lo & ~63u; l < hi; l += 64) {
		x86_64_put(o, prefetchw, sizeof(prefetchw));
		x86_64_put32(o, at + l);
	}
}

/* The span [*lo, *hi) the parts {offset, length} of a record cover
 * (a length of 0: a part not written), with the sequence word. */
static void parts_span(const struct arch_pad_ring *r, const unsigned int (*parts)[2],
		       size_t n, unsigned int *lo, unsigned int *hi)
{
	*lo = r->off_seq;
	*hi = r->off_seq + 8;
	for (size_t i = 0; i < n; i++) {
		if (!parts[i][1])
			continue;
		if (parts[i][0] < *lo)
			*lo = parts[i][0];
		if (parts[i][0] + parts[i][1] > *hi)
			*hi = parts[i][0] + parts[i][1];
	}
}

/*
 * The lines the next record's hit will write, asked for now with the
 * intent to write (a record is written once per round of the ring,
 * megabytes apart: its lines are long out of the caches, and each store
 * to one would wait for it), `ahead` records on from this one:
 *
 *   41 0f 0d 8e <disp32>    prefetchw disp(%r14)
 *
 * The image's lines (the XSAVE header's alone without it), the parts
 * after it, and the first two of the block area with the collector.
 * Past the ring's end (its last records) it names other memory of the
 * table or none: a prefetch does not fault.
 */
static void emit_prefetch(struct x86_64_out *o, const struct arch_pad_ring *r,
			  unsigned int image, unsigned int ahead)
{
	uint32_t at = (uint32_t)ahead << r->record_shift;
	unsigned int lo, hi;

	/* The parts past the image: seq, bases, frame, tid, time, flags. */
	const unsigned int parts[][2] = {
		{ r->off_bases, 16 }, { r->off_frame, 18 * 8 }, { r->off_flags, r->off_flags ? 4 : 0 },
		{ r->off_tid, r->time_tid ? 4 : 0 }, { r->off_time, r->time_tid ? 16 : 0 },
	};
	parts_span(r, parts, sizeof(parts) / sizeof(parts[0]), &lo, &hi);
	/* XSAVE always writes the legacy area and the header (576 bytes);
	 * the AVX halves only when they are in use. */
	bool xsave = x86_64_image_is_xsave(r->image_form);
	unsigned int img_hi = !r->image ? 0 : xsave ? 576 : 512;
	put_prefetch_span(o, at, 0, img_hi < image ? img_hi : image);
	if (!r->image && xsave && !r->off_flags)	/* XSTATE_BV */
		put_prefetch_span(o, at, 512, 513);
	put_prefetch_span(o, at, lo, hi);
	if (r->ipa_call)
		put_prefetch_span(o, at, r->off_blocks, r->off_blocks + 128);
}

int x86_64_emit_pad_collect(uint8_t *out, size_t size,
			    const struct arch_pad_ring *r, size_t *done)
{
	static const uint8_t mov_r14[] = { 0x49, 0x89, 0x86 };
	static const uint8_t publish[] = { 0x49, 0x8d, 0x44, 0x24, 0x01 };
	static const uint8_t movl_r14[] = { 0x41, 0xc7, 0x86 };
	struct x86_64_out o = { out, size, 0, 0, false };
	unsigned int image = x86_64_image_bytes(r->image_form);
	bool xsave = x86_64_image_is_xsave(r->image_form);
	size_t jl_at, skip_at = 0;

	/* The collector's work in the pad (emit_native_copy): what it
	 * writes known now, no condition to ask about. */
	bool native = r->ipa_call && r->copy_fn;
	uint64_t native_len = native ? native_copy_len(r) : 0;

	if (!r->nrecords || (r->nrecords & (r->nrecords - 1)) ||
	    r->record_shift < 6 || r->record_shift > 20 || (r->ring & 63) ||
	    (r->off_records & 63) || r->off_records < 8 ||
	    r->off_records > (1u << 30) || !record_parts_fit(r, image) ||
	    (native && (!native_len || r->ipa_wants)))
		return -EINVAL;
	if (r->ipa_call && r->ipa_wants)
		skip_at = emit_ipa_wants(&o, r);
	jl_at = emit_claim_record(&o, r);
	if (r->prefetch)
		emit_prefetch(&o, r, image, r->prefetch);
	/* Without the image but with the flags word, not even the XSAVE
	 * header's XSTATE_BV: its line would be a fourth for the record
	 * (put_hit_state writes it only for an XSAVE layout). */
	/* Without fsgsbase no bases in a record without the image: it is
	 * one only where no tracepoint of the site reads a register beyond
	 * the frame, and the bases are beyond it (the agent loads such a
	 * record without them).  With it, from the agent's table where
	 * there is one (put_bases_table), else from the kernel. */
	enum bases_how bases = r->tp_read ? BASES_FSGSBASE : !r->image ? BASES_NONE :
			       r->tid_table ? BASES_TABLE : BASES_SYSCALL;
	put_hit_state(&o, r->off_frame, xsave && (r->image || !r->off_flags),
		      r->image_form == X86_64_IMAGE_XSAVE_BY_FXSAVE, r->image, bases,
		      r->off_bases, r->tid_table, r->bases_fault);
	if (r->off_flags) {
		/* 41 c7 86 <flags> <imm32>   movl $what,flags(%r14) */
		x86_64_put(&o, movl_r14, sizeof(movl_r14));
		x86_64_put32(&o, r->off_flags);
		x86_64_put32(&o, r->image ? PAD_REC_IMAGE : 0);
	}
	if (r->time_tid)
		emit_time_tid(&o, r);
	if (native)
		emit_native_copy(&o, r, (uint32_t)native_len);
	else if (r->ipa_call)
		emit_ipa_call(&o, r);
	x86_64_put(&o, publish, sizeof(publish));
	x86_64_put(&o, mov_r14, sizeof(mov_r14));
	x86_64_put32(&o, r->off_seq);
	if (r->ipa_call && !native)
		emit_ipa_verdict(&o, skip_at);
	else
		x86_64_put8(&o, 0xe9);
	*done = o.len;			/* its rel32: x86_64_patch_branch */
	x86_64_put32(&o, 0);
	if (o.overflow)
		return -ENOSPC;
	uint32_t d = (uint32_t)(o.len - (jl_at + 6));
	for (int i = 0; i < 4; i++)	/* little-endian on every host */
		out[jl_at + 2 + i] = (uint8_t)(d >> (8 * i));
	return (int)o.len;
}

/* The collector's `jmp done`: its rel32 at `at`, counted from its end. */
int x86_64_patch_branch(uint8_t *code, size_t at, size_t to)
{
	int64_t rel = (int64_t)to - (int64_t)(at + 4);
	uint32_t v;

	if (rel < INT32_MIN || rel > INT32_MAX)
		return -ERANGE;
	v = (uint32_t)rel;
	for (int i = 0; i < 4; i++)
		code[at + i] = (uint8_t)(v >> (8 * i));
	return 0;
}

/* --- return probes with no stop (struct arch_ret_pad) ---------------------- */

/* A jcc / jmp rel32 whose target is patched later: the rel32's offset. */
static size_t put_jcc32(struct x86_64_out *o, uint8_t cc)
{
	if (cc == 0xe9) {
		x86_64_put8(o, 0xe9);
	} else {
		x86_64_put8(o, 0x0f);
		x86_64_put8(o, cc);
	}
	x86_64_put32(o, 0);
	return o->len - 4;
}

/* Points the rel32 at `at` to offset `to` (forward or back). */
static void fix32(struct x86_64_out *o, size_t at, size_t to)
{
	if (!o->overflow)
		x86_64_patch_branch(o->buf, at, to);
}

/* A jcc / jmp rel32 back to offset `to`. */
static void put_jcc32_to(struct x86_64_out *o, uint8_t cc, size_t to)
{
	fix32(o, put_jcc32(o, cc), to);
}

enum { JE = 0x84, JNE = 0x85, JAE = 0x83, JA = 0x87, JL = 0x8c, JMP = 0xe9 };

/*
 * The thread's key into %r15 and the first slot to try into %edx, the
 * area in %r13, the tries left in %r12d:
 *
 *   49 bd <area>            movabs $area,%r13
 *   f3 49 0f ae c7          rdfsbase %r15
 *     (or, without fsgsbase, at the entry with r->tp_notls:
 *      48 b8 <notls>        movabs $notls,%rax
 *      83 38 00             cmpl $0,(%rax)        a thread without TLS:
 *      0f 85 <*notls_at>    jne (the caller's)    the load would fault
 *      and then
 *      64 4c 8b 3c 25 00 00 00 00   mov %fs:0,%r15)
 *   4c 89 fa                mov %r15,%rdx
 *   48 b9 <golden>          movabs $0x9e3779b97f4a7c15,%rcx
 *   48 0f af d1             imul %rcx,%rdx
 *   48 c1 ea 38             shr $56,%rdx          the hash's top 8 bits
 *   41 bc <slots>           mov $slots,%r12d
 * The key is the TCB address: distinct per live thread, and thread
 * stacks (which hold the TCB) are megabytes apart, so the low bits are
 * useless and a multiplicative hash spreads them.
 */
static void put_key(struct x86_64_out *o, const struct arch_ret_pad *r, size_t *notls_at,
		    size_t *load_at)
{
	static const uint8_t cmp_notls[] = { 0x83, 0x38, 0x00 };
	static const uint8_t rdfs_r15[] = { 0xf3, 0x49, 0x0f, 0xae, 0xc7 };
	static const uint8_t fs0_r15[] = { 0x64, 0x4c, 0x8b, 0x3c, 0x25, 0, 0, 0, 0 };
	static const uint8_t hash[] = { 0x4c, 0x89, 0xfa, 0x48, 0xb9,
					0x15, 0x7c, 0x4a, 0x7f, 0xb9, 0x79, 0x37, 0x9e,
					0x48, 0x0f, 0xaf, 0xd1, 0x48, 0xc1, 0xea, 0x38,
					0x41, 0xbc };

	x86_64_put8(o, 0x49);
	x86_64_put8(o, 0xbd);
	x86_64_put64(o, r->area);
	if (notls_at)
		*notls_at = 0;
	if (!r->tp_read && notls_at && r->tp_notls) {
		x86_64_put8(o, 0x48);
		x86_64_put8(o, 0xb8);
		x86_64_put64(o, r->tp_notls);
		x86_64_put(o, cmp_notls, sizeof(cmp_notls));
		*notls_at = put_jcc32(o, JNE);
	}
	if (load_at)
		*load_at = o->len;
	if (r->tp_read)
		x86_64_put(o, rdfs_r15, sizeof(rdfs_r15));
	else
		x86_64_put(o, fs0_r15, sizeof(fs0_r15));
	x86_64_put(o, hash, sizeof(hash));
	x86_64_put32(o, RET_PAD_SLOTS);
}

/*
 * Slot %edx of the area into %rsi, its key into %rax:
 *
 *   48 89 d6                mov %rdx,%rsi
 *   48 c1 e6 0c             shl $12,%rsi
 *   49 8d b4 35 00 10 00 00 lea 4096(%r13,%rsi),%rsi
 *   48 8b 06                mov (%rsi),%rax
 */
static void put_slot(struct x86_64_out *o)
{
	static const uint8_t slot[] = { 0x48, 0x89, 0xd6, 0x48, 0xc1, 0xe6, 0x0c,
					0x49, 0x8d, 0xb4, 0x35, 0x00, 0x10, 0x00, 0x00,
					0x48, 0x8b, 0x06 };

	x86_64_put(o, slot, sizeof(slot));
}

/*
 * The next slot to try, or on to `none` when all were:
 *
 *   ff c2                   inc %edx
 *   81 e2 <slots-1>         and $(slots-1),%edx
 *   41 ff cc                dec %r12d
 *   0f 85 <loop>            jnz loop
 *   e9 <none>               jmp none
 */
static size_t put_next_slot(struct x86_64_out *o, size_t loop)
{
	static const uint8_t next[] = { 0xff, 0xc2, 0x81, 0xe2 };
	static const uint8_t dec[] = { 0x41, 0xff, 0xcc };

	x86_64_put(o, next, sizeof(next));
	x86_64_put32(o, RET_PAD_SLOTS - 1);
	x86_64_put(o, dec, sizeof(dec));
	put_jcc32_to(o, JNE, loop);
	return put_jcc32(o, JMP);
}

/*
 * %rdx = the address of entry n-1 (n in %ecx, the slot in %rsi):
 *
 *   8d 51 ff                lea -1(%rcx),%edx
 *   48 c1 e2 05             shl $5,%rdx
 *   48 8d 54 16 40          lea 64(%rsi,%rdx),%rdx
 */
static void put_top(struct x86_64_out *o)
{
	static const uint8_t top[] = { 0x8d, 0x51, 0xff, 0x48, 0xc1, 0xe2, 0x05,
				       0x48, 0x8d, 0x54, 0x16, 0x40 };

	x86_64_put(o, top, sizeof(top));
}

/* lock incq off(%r13): one of the header's counters. */
static void put_count(struct x86_64_out *o, unsigned int off)
{
	x86_64_put8(o, 0xf0);
	x86_64_put8(o, 0x49);
	x86_64_put8(o, 0xff);
	x86_64_put8(o, 0x45);
	x86_64_put8(o, (uint8_t)off);
}

/*
 * The entry, after emit_save_regs (frame at %rbx, its saved rsp at +56):
 *
 *   <put_key>
 * loop:
 *   <put_slot>
 *   4c 39 f8                cmp %r15,%rax
 *   0f 84 <found>           je found              the thread's slot
 *   48 85 c0                test %rax,%rax
 *   0f 85 <next>            jnz next              another thread's
 *   f0 4c 0f b1 3e          lock cmpxchg %r15,(%rsi)   free: claim it
 *   0f 85 <loop>            jne loop              taken meanwhile: again
 *   b8 ba 00 00 00 0f 05    gettid                once in a thread's life
 *   89 46 08                mov %eax,8(%rsi)
 *   c7 46 0c 00 00 00 00    movl $0,12(%rsi)      n = 0
 *   e9 <found>              jmp found
 * next:
 *   <put_next_slot: on to fallback>
 * found:
 *   83 7e 08 00 75 0a       cmpl $0,8(%rsi); jne 1f   the agent clears the
 *   b8 ba 00 00 00 0f 05    gettid                tid of a thread that
 *   89 46 08                mov %eax,8(%rsi)      exited: the next thread
 *                                                 of that TCB reads its own
 * 1:8b 4e 0c                mov 12(%rsi),%ecx     n
 *   48 8b 7b 38             mov 56(%rbx),%rdi     sp at the entry: the slot
 *   48 8b 07                mov (%rdi),%rax       the return address
 *   49 b9 <tramp>           movabs $tramp,%r9
 * stale:                    entries of frames gone (longjmp): at or below
 *   85 c9                   test %ecx,%ecx        sp, and no trampoline
 *   0f 84 <fresh>           jz fresh              in their slot any more
 *   <put_top>
 *   4c 8b 02                mov (%rdx),%r8
 *   49 39 f8                cmp %rdi,%r8
 *   0f 87 <fresh>           ja fresh              above sp: alive
 *   4d 39 08                cmp %r9,(%r8)
 *   0f 84 <fresh>           je fresh              another stack's
 *   ff c9                   dec %ecx
 *   e9 <stale>              jmp stale
 * fresh:
 *   4c 39 c8                cmp %r9,%rax
 *   0f 85 <push>            jne push
 *   85 c9 0f 84 <fallback>  test %ecx,%ecx; jz fallback
 *   <put_top>               a tail call: [sp] is the trampoline already,
 *   48 39 3a                cmp %rdi,(%rdx)       and the newest entry
 *   0f 85 <fallback>        jne fallback          must be that slot's
 *   49 b8 <func_run>        movabs $func_run,%r8
 *   4c 39 42 18             cmp %r8,24(%rdx)
 *   0f 85 <other>           jne other
 *   49 89 d7                mov %rdx,%r15         the same tracepoint's entry
 *   e9 <end's jmp>          jmp                   of the same slot: this hit
 *                                                 again (the thread was sent
 *                                                 back to the probe), pushed
 *                                                 once; a function that
 *                                                 tail-calls itself too
 * other:
 *   48 8b 42 08             mov 8(%rdx),%rax      its real address
 * push:
 *   81 f9 <depth>           cmp $depth,%ecx
 *   0f 83 <fallback>        jae fallback
 *   89 ca 48 c1 e2 05       mov %ecx,%edx; shl $5,%rdx
 *   48 8d 54 16 40          lea 64(%rsi,%rdx),%rdx   entry n
 *   48 c7 02 ff ff ff ff    movq $-1,(%rdx)       slot: above all (alive)
 *   44 8d 41 01             lea 1(%rcx),%r8d
 *   44 89 46 0c             mov %r8d,12(%rsi)     n + 1: a signal handler
 *                                                 entering a probe now
 *                                                 pushes above it
 *   48 89 42 08             mov %rax,8(%rdx)      the real address
 *   49 89 d0                mov %rdx,%r8
 *   0f 31 48 c1 e2 20 48 09 d0   rdtsc; shl $32,%rdx; or %rdx,%rax
 *   49 89 40 10             mov %rax,16(%r8)      the entry's time
 *   48 b8 <func_run>        movabs $func_run,%rax
 *   49 89 40 18             mov %rax,24(%r8)
 *   49 89 38                mov %rdi,(%r8)        the slot: complete
 *   4c 89 0f                mov %r9,(%rdi)        [sp] = trampoline
 *   4d 89 c7                mov %r8,%r15          the entry, for the stamp
 *   e9 <end>                jmp end               (over the fallback, or
 *                                                 to *done_at)
 * fallback:                 (also where a fault of put_key's %fs:0 goes
 *                           on: r->tp_fault)
 *   f0 49 ff 45 10          lock incq FALLBACKS(%r13)
 *   45 31 ff                xor %r15d,%r15d       no entry: no stamp
 *   e9 <*fallback_at>       jmp (patched by the caller: the hand-off)
 * end:
 */
int x86_64_emit_ret_entry(uint8_t *out, size_t size, const struct arch_ret_pad *r,
			  size_t *fallback_at, size_t *done_at)
{
	static const uint8_t cmp_key[] = { 0x4c, 0x39, 0xf8 };
	static const uint8_t test_rax[] = { 0x48, 0x85, 0xc0 };
	static const uint8_t claim[] = { 0xf0, 0x4c, 0x0f, 0xb1, 0x3e };
	static const uint8_t tid[] = { 0xb8, 0xba, 0, 0, 0, 0x0f, 0x05,
				       0x89, 0x46, 0x08,
				       0xc7, 0x46, 0x0c, 0, 0, 0, 0 };
	static const uint8_t found_regs[] = { 0x83, 0x7e, 0x08, 0x00, 0x75, 0x0a,
					      0xb8, 0xba, 0, 0, 0, 0x0f, 0x05,
					      0x89, 0x46, 0x08,
					      0x8b, 0x4e, 0x0c, 0x48, 0x8b, 0x7b, 0x38,
					      0x48, 0x8b, 0x07, 0x49, 0xb9 };
	static const uint8_t test_n[] = { 0x85, 0xc9 };
	static const uint8_t cmp_slot_sp[] = { 0x4c, 0x8b, 0x02, 0x49, 0x39, 0xf8 };
	static const uint8_t cmp_tramp[] = { 0x4d, 0x39, 0x08 };
	static const uint8_t dec_n[] = { 0xff, 0xc9 };
	static const uint8_t cmp_ret[] = { 0x4c, 0x39, 0xc8 };
	static const uint8_t chain[] = { 0x48, 0x39, 0x3a };
	static const uint8_t chain_ret[] = { 0x48, 0x8b, 0x42, 0x08 };
	static const uint8_t same_cmp[] = { 0x4c, 0x39, 0x42, 0x18 };
	static const uint8_t same_entry[] = { 0x49, 0x89, 0xd7 };
	static const uint8_t entry_n[] = { 0x89, 0xca, 0x48, 0xc1, 0xe2, 0x05,
					   0x48, 0x8d, 0x54, 0x16, 0x40,
					   0x48, 0xc7, 0x02, 0xff, 0xff, 0xff, 0xff,
					   0x44, 0x8d, 0x41, 0x01, 0x44, 0x89, 0x46, 0x0c,
					   0x48, 0x89, 0x42, 0x08, 0x49, 0x89, 0xd0,
					   0x0f, 0x31, 0x48, 0xc1, 0xe2, 0x20, 0x48, 0x09, 0xd0,
					   0x49, 0x89, 0x40, 0x10, 0x48, 0xb8 };
	static const uint8_t entry_end[] = { 0x49, 0x89, 0x40, 0x18, 0x49, 0x89, 0x38,
					     0x4c, 0x89, 0x0f, 0x4d, 0x89, 0xc7 };
	static const uint8_t no_entry[] = { 0x45, 0x31, 0xff };
	struct x86_64_out o = { out, size, 0, 0, false };
	size_t loop, j_found1, j_next, j_retry, j_found2, j_none, found, stale;
	size_t j_fresh[3], fresh, j_push, j_fb[3], push, j_end, fb, j_other, j_same, end_jmp;

	if (!r->area || (r->area & 4095) || !r->tramp)
		return -EINVAL;
	size_t key_load, j_notls;
	put_key(&o, r, &j_notls, &key_load);
	loop = o.len;
	put_slot(&o);
	x86_64_put(&o, cmp_key, sizeof(cmp_key));
	j_found1 = put_jcc32(&o, JE);
	x86_64_put(&o, test_rax, sizeof(test_rax));
	j_next = put_jcc32(&o, JNE);
	x86_64_put(&o, claim, sizeof(claim));
	j_retry = put_jcc32(&o, JNE);
	fix32(&o, j_retry, loop);
	x86_64_put(&o, tid, sizeof(tid));
	j_found2 = put_jcc32(&o, JMP);
	fix32(&o, j_next, o.len);
	j_none = put_next_slot(&o, loop);
	found = o.len;
	fix32(&o, j_found1, found);
	fix32(&o, j_found2, found);
	x86_64_put(&o, found_regs, sizeof(found_regs));
	x86_64_put64(&o, r->tramp);
	stale = o.len;
	x86_64_put(&o, test_n, sizeof(test_n));
	j_fresh[0] = put_jcc32(&o, JE);
	put_top(&o);
	x86_64_put(&o, cmp_slot_sp, sizeof(cmp_slot_sp));
	j_fresh[1] = put_jcc32(&o, JA);
	x86_64_put(&o, cmp_tramp, sizeof(cmp_tramp));
	j_fresh[2] = put_jcc32(&o, JE);
	x86_64_put(&o, dec_n, sizeof(dec_n));
	put_jcc32_to(&o, JMP, stale);
	fresh = o.len;
	for (int i = 0; i < 3; i++)
		fix32(&o, j_fresh[i], fresh);
	x86_64_put(&o, cmp_ret, sizeof(cmp_ret));
	j_push = put_jcc32(&o, JNE);
	x86_64_put(&o, test_n, sizeof(test_n));
	j_fb[0] = put_jcc32(&o, JE);
	put_top(&o);
	x86_64_put(&o, chain, sizeof(chain));
	j_fb[1] = put_jcc32(&o, JNE);
	x86_64_put8(&o, 0x49);
	x86_64_put8(&o, 0xb8);
	x86_64_put64(&o, r->func_run);
	x86_64_put(&o, same_cmp, sizeof(same_cmp));
	j_other = put_jcc32(&o, JNE);
	x86_64_put(&o, same_entry, sizeof(same_entry));
	j_same = put_jcc32(&o, JMP);
	fix32(&o, j_other, o.len);
	x86_64_put(&o, chain_ret, sizeof(chain_ret));
	push = o.len;
	fix32(&o, j_push, push);
	x86_64_put8(&o, 0x81);
	x86_64_put8(&o, 0xf9);
	x86_64_put32(&o, RET_PAD_DEPTH);
	j_fb[2] = put_jcc32(&o, JAE);
	x86_64_put(&o, entry_n, sizeof(entry_n));
	x86_64_put64(&o, r->func_run);
	x86_64_put(&o, entry_end, sizeof(entry_end));
	end_jmp = o.len;
	j_end = put_jcc32(&o, JMP);
	fix32(&o, j_same, end_jmp);
	fb = o.len;
	if (!r->tp_read && r->tp_fault)
		*r->tp_fault = (struct arch_pad_fault){ key_load, fb, 9 };
	if (j_notls)
		fix32(&o, j_notls, fb);
	fix32(&o, j_none, fb);
	for (int i = 0; i < 3; i++)
		fix32(&o, j_fb[i], fb);
	put_count(&o, RET_PAD_FALLBACKS);
	x86_64_put(&o, no_entry, sizeof(no_entry));
	*fallback_at = put_jcc32(&o, JMP);
	if (done_at)
		*done_at = j_end;
	else
		fix32(&o, j_end, o.len);
	return finish(&o);
}

/*
 * The entry's time again, right before the register restore of a pad
 * whose entry also records (or hands off): the entry's own frame takes
 * its time after the push, and the latency must start no earlier than
 * that frame's time.  %r15 is the entry emit_ret_entry pushed (kept by
 * the collector and its calls: callee-saved), 0 when it pushed none.
 *
 *   4d 85 ff 74 0d          test %r15,%r15; jz 1f
 *   0f 31 48 c1 e2 20 48 09 d0   rdtsc; shl $32,%rdx; or %rdx,%rax
 *   49 89 47 10             mov %rax,16(%r15)
 * 1:
 */
int x86_64_emit_ret_stamp(uint8_t *out, size_t size)
{
	static const uint8_t stamp[] = { 0x4d, 0x85, 0xff, 0x74, 0x0d,
					 0x0f, 0x31, 0x48, 0xc1, 0xe2, 0x20, 0x48, 0x09, 0xd0,
					 0x49, 0x89, 0x47, 0x10 };
	struct x86_64_out o = { out, size, 0, 0, false };

	x86_64_put(&o, stamp, sizeof(stamp));
	return finish(&o);
}

/*
 * arch_ops.emit_touch:
 *
 *   48 8d 64 24 80          lea -128(%rsp),%rsp     past the red zone
 *   50 51 9c                push %rax; push %rcx; pushfq
 *   48 b8 <start>           movabs $start,%rax
 *   48 b9 <pages>           movabs $pages,%rcx
 * 1:80 08 00                orb $0,(%rax)           the byte, stored again
 *   48 05 <page>            add $page,%rax
 *   48 ff c9 75 <1b>        dec %rcx; jnz 1b
 *   9d 59 58                popfq; pop %rcx; pop %rax
 *   48 8d a4 24 80 00 00 00 lea 128(%rsp),%rsp
 *   cc                      int3                    *trap_off
 *   <jmp resume>            rel32, or the absolute form
 */
int x86_64_emit_touch(uint8_t *out, size_t size, uint64_t at, uint64_t start,
		      uint64_t pages, uint32_t page, uint64_t resume, size_t *trap_off)
{
	static const uint8_t enter[] = { 0x48, 0x8d, 0x64, 0x24, 0x80, 0x50, 0x51, 0x9c };
	static const uint8_t leave[] = { 0x9d, 0x59, 0x58,
					 0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00 };
	static const uint8_t store[] = { 0x80, 0x08, 0x00 };
	static const uint8_t dec_rcx[] = { 0x48, 0xff, 0xc9 };
	struct x86_64_out o = { out, size, 0, at, false };

	if (!pages || !page || page > INT32_MAX)
		return -EINVAL;
	x86_64_put(&o, enter, sizeof(enter));
	x86_64_put8(&o, 0x48);
	x86_64_put8(&o, 0xb8);
	x86_64_put64(&o, start);
	x86_64_put8(&o, 0x48);
	x86_64_put8(&o, 0xb9);
	x86_64_put64(&o, pages);
	size_t loop = o.len;
	x86_64_put(&o, store, sizeof(store));
	x86_64_put8(&o, 0x48);
	x86_64_put8(&o, 0x05);
	x86_64_put32(&o, page);
	x86_64_put(&o, dec_rcx, sizeof(dec_rcx));
	x86_64_put8(&o, 0x75);
	x86_64_put8(&o, (uint8_t)(int8_t)((int)loop - (int)(o.len + 1)));
	x86_64_put(&o, leave, sizeof(leave));
	*trap_off = o.len;
	x86_64_put8(&o, 0xcc);
	x86_64_jmp(&o, resume);
	return finish(&o);
}

/*
 * The ring's next record for the trampoline, into %r14 (its position in
 * %r12), the ring in %r13; a full ring jumps to the offset the returned
 * rel32 is patched with.  As in x86_64_emit_pad_collect:
 *
 *   49 bd <ring>            movabs $ring,%r13
 * 1:49 8b 45 00 89 c2       mov (%r13),%rax; mov %eax,%edx
 *   81 e2 <n-1>             and $(n-1),%edx
 *   48 c1 e2 <shift>        shl $shift,%rdx
 *   49 8d b4 15 <records>   lea records(%r13,%rdx),%rsi
 *   48 8b 8e <seq>          mov seq(%rsi),%rcx
 *   48 29 c1                sub %rax,%rcx
 *   0f 8c <full>            jl full
 *   0f 8f <1b>              jg 1b
 *   48 8d 50 01             lea 1(%rax),%rdx
 *   f0 49 0f b1 55 00       lock cmpxchg %rdx,(%r13)
 *   0f 85 <1b>              jne 1b
 *   49 89 c4 49 89 f6       mov %rax,%r12; mov %rsi,%r14
 */
static size_t put_ring_claim(struct x86_64_out *o, const struct arch_pad_ring *r)
{
	static const uint8_t load_head[] = { 0x49, 0x8b, 0x45, 0x00, 0x89, 0xc2,
					     0x81, 0xe2 };
	static const uint8_t cas[] = { 0x48, 0x8d, 0x50, 0x01, 0xf0, 0x49, 0x0f,
				       0xb1, 0x55, 0x00 };
	static const uint8_t take[] = { 0x49, 0x89, 0xc4, 0x49, 0x89, 0xf6 };
	static const uint8_t sub[] = { 0x48, 0x29, 0xc1 };
	size_t retry, full;

	x86_64_put8(o, 0x49);
	x86_64_put8(o, 0xbd);
	x86_64_put64(o, r->ring);
	retry = o->len;
	x86_64_put(o, load_head, sizeof(load_head));
	x86_64_put32(o, r->nrecords - 1);
	x86_64_put8(o, 0x48);
	x86_64_put8(o, 0xc1);
	x86_64_put8(o, 0xe2);
	x86_64_put8(o, (uint8_t)r->record_shift);
	x86_64_put8(o, 0x49);
	x86_64_put8(o, 0x8d);
	x86_64_put8(o, 0xb4);
	x86_64_put8(o, 0x15);
	x86_64_put32(o, r->off_records);
	x86_64_put8(o, 0x48);
	x86_64_put8(o, 0x8b);
	x86_64_put8(o, 0x8e);
	x86_64_put32(o, r->off_seq);
	x86_64_put(o, sub, sizeof(sub));
	full = put_jcc32(o, JL);
	put_jcc32_to(o, 0x8f, retry);
	x86_64_put(o, cas, sizeof(cas));
	put_jcc32_to(o, JNE, retry);
	x86_64_put(o, take, sizeof(take));
	return full;
}

/*
 * The lines the return's record `ahead` positions on will take, asked
 * for now as emit_prefetch asks for an entry's (a thread that returns
 * into the trampoline at every call writes every other record, and
 * where another CPU drains the ring, each of them is a wait for a line
 * of the drain's otherwise): sequence word, bases, frame and the
 * descriptor.  The image's, which only a return probe reading the
 * x87/SSE/AVX registers makes it store, are left to the stores.
 */
static void put_ret_prefetch(struct x86_64_out *o, const struct arch_pad_ring *g)
{
	uint32_t at = (uint32_t)g->prefetch << g->record_shift;
	const unsigned int parts[][2] = { { g->off_bases, 16 }, { g->off_frame, 18 * 8 } };
	unsigned int lo, hi;

	parts_span(g, parts, sizeof(parts) / sizeof(parts[0]), &lo, &hi);
	/* The descriptor right after them (x86-64's layout): one span. */
	if (g->off_blocks >= lo && g->off_blocks <= (hi + 63) / 64 * 64) {
		hi = g->off_blocks + RET_REC_SIZE > hi ? g->off_blocks + RET_REC_SIZE : hi;
		put_prefetch_span(o, at, lo, hi);
	} else {
		put_prefetch_span(o, at, lo, hi);
		put_prefetch_span(o, at, g->off_blocks, g->off_blocks + RET_REC_SIZE);
	}
}

/* mov %rax,off(%r14) / mov %eax,off(%r14) */
static void put_store_r14(struct x86_64_out *o, bool wide, unsigned int off)
{
	x86_64_put8(o, wide ? 0x49 : 0x41);
	x86_64_put8(o, 0x89);
	x86_64_put8(o, 0x86);
	x86_64_put32(o, off);
}

/* movl $magic,RET_REC_MAGIC+blocks(%r14): the return's descriptor says
 * whether the record holds the image. */
static void put_magic(struct x86_64_out *o, unsigned int off_blocks, uint32_t magic)
{
	x86_64_put8(o, 0x41);
	x86_64_put8(o, 0xc7);
	x86_64_put8(o, 0x86);
	x86_64_put32(o, off_blocks + RET_REC_MAGIC);
	x86_64_put32(o, magic);
}

/*
 * A return counted in its histogram instead of a record, when r->hist
 * holds one for its entry (the top one of slot %rsi, n in %ecx; %r10
 * now): on to `popped` if so, to the record if not:
 *
 *   49 b9 <hist>            movabs $hist,%r9
 *   45 8b 01 45 85 c0       mov (%r9),%r8d; test %r8d,%r8d
 *   0f 84 <record>          jz record             none in use
 *   <put_top>               the entry, into %rdx
 *   48 8b 42 18             mov 24(%rdx),%rax     its func_run
 *   49 83 c1 40             add $FIRST,%r9
 * 1:49 3b 01 0f 84 <2f>     cmp (%r9),%rax; je 2f
 *   49 81 c1 <SIZE>         add $SIZE,%r9
 *   41 ff c8 0f 85 <1b>     dec %r8d; jnz 1b
 *   e9 <record>             jmp record
 * 2:4c 89 d0 48 2b 42 10    mov %r10,%rax; sub 16(%rdx),%rax   ticks
 *   79 02 31 c0             jns 3f; xor %eax,%eax  the counter went back
 * 3:49 89 d3                mov %rdx,%r11
 *   49 b8 <hist> 49 f7 60 08  movabs $hist,%r8; mulq MULT(%r8)
 *   48 0f ac d0 20          shrd $32,%rdx,%rax    ns
 *   4c 89 da                mov %r11,%rdx
 *   f0 49 01 41 08          lock add %rax,SUM(%r9)
 *   48 85 c0 74 <4f>        test %rax,%rax; jz 4f
 *   4c 0f bd c0             bsr %rax,%r8
 *   41 83 f8 <max> 76 06    cmp $(BUCKETS-1),%r8d; jbe 5f
 *   41 b8 <max>             mov $(BUCKETS-1),%r8d
 * 5:f0 4b ff 44 c1 <B>      lock incq B(%r9,%r8,8)
 *   e9 <popped>
 * 4:f0 49 ff 41 <ZERO>      lock incq ZERO(%r9)
 *   e9 <popped>
 *
 * The entry stays where it is: `popped` takes it off the stack.
 */
static void put_hist(struct x86_64_out *o, uint64_t hist, size_t *j_done)
{
	static const uint8_t ld_n[] = { 0x45, 0x8b, 0x01, 0x45, 0x85, 0xc0 };
	static const uint8_t ld_func[] = { 0x48, 0x8b, 0x42, 0x18,
					   0x49, 0x83, 0xc1, RET_HIST_FIRST };
	static const uint8_t cmp[] = { 0x49, 0x3b, 0x01 };
	static const uint8_t add_size[] = { 0x49, 0x81, 0xc1 };
	static const uint8_t dec[] = { 0x41, 0xff, 0xc8 };
	static const uint8_t ticks[] = { 0x4c, 0x89, 0xd0, 0x48, 0x2b, 0x42, 0x10,
					 0x79, 0x02, 0x31, 0xc0, 0x49, 0x89, 0xd3,
					 0x49, 0xb8 };
	static const uint8_t ns[] = { 0x49, 0xf7, 0x60, RET_HIST_MULT,
				      0x48, 0x0f, 0xac, 0xd0, 0x20,
				      0x4c, 0x89, 0xda,
				      0xf0, 0x49, 0x01, 0x41, RET_HIST_SUM,
				      0x48, 0x85, 0xc0, 0x74, 0x1b,
				      0x4c, 0x0f, 0xbd, 0xc0,
				      0x41, 0x83, 0xf8, RET_HIST_BUCKETS - 1, 0x76, 0x06,
				      0x41, 0xb8, RET_HIST_BUCKETS - 1, 0, 0, 0,
				      0xf0, 0x4b, 0xff, 0x44, 0xc1, RET_HIST_B };
	static const uint8_t zero[] = { 0xf0, 0x49, 0xff, 0x41, RET_HIST_ZERO };
	size_t j_none, j_rec, j_hit, loop;

	x86_64_put8(o, 0x49);
	x86_64_put8(o, 0xb9);
	x86_64_put64(o, hist);
	x86_64_put(o, ld_n, sizeof(ld_n));
	j_none = put_jcc32(o, JE);
	put_top(o);
	x86_64_put(o, ld_func, sizeof(ld_func));
	loop = o->len;
	x86_64_put(o, cmp, sizeof(cmp));
	j_hit = put_jcc32(o, JE);
	x86_64_put(o, add_size, sizeof(add_size));
	x86_64_put32(o, RET_HIST_SIZE);
	x86_64_put(o, dec, sizeof(dec));
	put_jcc32_to(o, JNE, loop);
	j_rec = put_jcc32(o, JMP);
	fix32(o, j_hit, o->len);
	x86_64_put(o, ticks, sizeof(ticks));
	x86_64_put64(o, hist);
	x86_64_put(o, ns, sizeof(ns));
	j_done[0] = put_jcc32(o, JMP);
	x86_64_put(o, zero, sizeof(zero));
	j_done[1] = put_jcc32(o, JMP);
	fix32(o, j_none, o->len);
	fix32(o, j_rec, o->len);
}

/*
 * The trampoline: `ret` brought the thread here with rsp one past the
 * slot.  Sketch (the key and slot search as in the entry, without the
 * claim; frame at %rbx after the save, its saved rsp at +56, rip at +128):
 *
 *   <emit_save_regs, pc = tramp>
 *   <put_key>
 * loop:
 *   <put_slot>
 *   4c 39 f8 0f 84 <found>  cmp %r15,%rax; je found
 *   48 85 c0 0f 84 <orphan> test %rax,%rax; jz orphan   no slot: no entry
 *   <put_next_slot: on to orphan>
 * found:
 *   8b 4e 0c                mov 12(%rsi),%ecx
 *   48 8b 7b 38 48 83 ef 08 mov 56(%rbx),%rdi; sub $8,%rdi   the slot
 * pop:                      newer entries below it: frames longjmp'd over
 *   85 c9 0f 84 <orphan>    test %ecx,%ecx; jz orphan
 *   <put_top>
 *   48 39 3a                cmp %rdi,(%rdx)
 *   0f 83 <mine>            jae mine
 *   ff c9 89 4e 0c          dec %ecx; mov %ecx,12(%rsi)
 *   e9 <pop>                jmp pop
 * mine:
 *   0f 85 <orphan>          jne orphan            above it: not this one's
 *   4c 8b 62 08             mov 8(%rdx),%r12      the real address
 *   0f 31 48 c1 e2 20 48 09 d0 49 89 c2   rdtsc ...; mov %rax,%r10   now
 * chain:                    each entry of the slot, innermost first
 *   49 83 7d 08 00          cmpq $0,ON(%r13)
 *   0f 84 <popped>          je popped             nobody takes records
 *   <put_hist, with r->hist: a histogram's return on to popped>
 *   56 57 51 41 52 41 55 41 54   push rsi rdi rcx r10 r13 r12
 *   <put_ring_claim: full -> full>
 *   <the frame and (with fsgsbase) the bases, as a pad's record
 *    without the image (no XSTATE_BV: the magic below says whether
 *    the image is there)>
 *   48 8b 44 24 08          mov 8(%rsp),%rax      the area (r13 pushed)
 *   48 83 78 <IMAGE> 00     cmpq $0,IMAGE(%rax)   a return probe reads
 *   0f 84 <bare>            je bare               beyond the frame?
 *   <xsave64 (mov $7,%eax; xor %edx,%edx) or fxsave64 (%r14)>
 *   <without fsgsbase: the bases by put_bases_table (with the ring's
 *    tid_table, r->ring.bases_fault) or put_bases_syscall, only here:
 *    a record without the image is read without them>
 *   41 c7 86 <MAGIC> "RETN" movl                  with the image
 *   e9 <1f>
 * bare:
 *   41 c7 86 <MAGIC> "RETB" movl                  without
 * 1:
 *   48 8b 74 24 28          mov 40(%rsp),%rsi
 *   8b 4c 24 18             mov 24(%rsp),%ecx
 *   <put_top>
 *   48 8b 42 18 <store FUNC>   mov 24(%rdx),%rax
 *   48 8b 44 24 10 <store TSC> mov 16(%rsp),%rax
 *   48 2b 42 10 <store TICKS>  sub 16(%rdx),%rax
 *   8b 46 08 <store TID>       mov 8(%rsi),%eax
 *   48 8b 04 24 <store RET>    mov (%rsp),%rax       the real address
 *   49 8d 44 24 01 <store seq> lea 1(%r12),%rax: published
 *   41 5c 41 5d 41 5a 59 5f 5e pop r12 r13 r10 rcx rdi rsi
 *   e9 <popped>
 * full:
 *   41 5c 41 5d 41 5a 59 5f 5e pop ...
 *   f0 49 ff 45 18          lock incq LOST(%r13)  (a count of waits)
 *   cc                      int3 (*trap_off)      the agent drains the ring
 *   e9 <chain>              jmp chain             and the record is tried
 *                                                 again: none is lost
 * popped:
 *   ff c9 89 4e 0c          dec %ecx; mov %ecx,12(%rsi)
 *   85 c9 0f 84 <out>       test %ecx,%ecx; jz out
 *   <put_top>
 *   48 39 3a 0f 84 <chain>  cmp %rdi,(%rdx); je chain   a tail call's too
 * out:
 *   48 8b 7b 38             mov 56(%rbx),%rdi
 *   4c 89 67 f8             mov %r12,-8(%rdi)     the real address, in
 *                                                 the red zone below the
 *                                                 return's rsp
 *   <emit_restore_regs>     every register as the return left it
 *   ff 64 24 f8             jmp *-8(%rsp)         no `ret`: the return
 *                                                 stack buffer stays
 *                                                 balanced
 * orphan:                   cannot happen while the invariants hold
 *   f0 49 ff 45 20          lock incq ORPHANS(%r13)
 *   <emit_restore_regs>
 *   cc                      int3: the agent reports the thread stopped
 *
 * A signal's frame goes below the red zone, so -8(%rsp) survives one
 * arriving before the jmp.
 */
int x86_64_emit_ret_exit(uint8_t *out, size_t size, const struct arch_ret_pad *r,
			 size_t *trap_off)
{
	static const uint8_t cmp_key[] = { 0x4c, 0x39, 0xf8 };
	static const uint8_t test_rax[] = { 0x48, 0x85, 0xc0 };
	static const uint8_t found_regs[] = { 0x8b, 0x4e, 0x0c, 0x48, 0x8b, 0x7b, 0x38,
					      0x48, 0x83, 0xef, 0x08 };
	static const uint8_t test_n[] = { 0x85, 0xc9 };
	static const uint8_t cmp_slot[] = { 0x48, 0x39, 0x3a };
	static const uint8_t drop[] = { 0xff, 0xc9, 0x89, 0x4e, 0x0c };
	static const uint8_t mine[] = { 0x4c, 0x8b, 0x62, 0x08,
					0x0f, 0x31, 0x48, 0xc1, 0xe2, 0x20, 0x48, 0x09, 0xd0,
					0x49, 0x89, 0xc2 };
	static const uint8_t is_on[] = { 0x49, 0x83, 0x7d, RET_PAD_ON, 0x00 };
	static const uint8_t save[] = { 0x56, 0x57, 0x51, 0x41, 0x52, 0x41, 0x55,
					0x41, 0x54 };
	static const uint8_t reload[] = { 0x48, 0x8b, 0x74, 0x24, 0x28,
					  0x8b, 0x4c, 0x24, 0x18 };
	static const uint8_t ld_func[] = { 0x48, 0x8b, 0x42, 0x18 };
	static const uint8_t ld_now[] = { 0x48, 0x8b, 0x44, 0x24, 0x10 };
	static const uint8_t sub_t0[] = { 0x48, 0x2b, 0x42, 0x10 };
	static const uint8_t ld_tid[] = { 0x8b, 0x46, 0x08 };
	static const uint8_t ld_ret[] = { 0x48, 0x8b, 0x04, 0x24 };
	static const uint8_t publish[] = { 0x49, 0x8d, 0x44, 0x24, 0x01 };
	static const uint8_t unsave[] = { 0x41, 0x5c, 0x41, 0x5d, 0x41, 0x5a,
					  0x59, 0x5f, 0x5e };
	static const uint8_t out_regs[] = { 0x48, 0x8b, 0x7b, 0x38, 0x4c, 0x89, 0x67, 0xf8 };
	static const uint8_t jmp_real[] = { 0xff, 0x64, 0x24, 0xf8 };
	static const uint8_t ld_area[] = { 0x48, 0x8b, 0x44, 0x24, 0x08,
					   0x48, 0x83, 0x78, RET_PAD_IMAGE, 0x00 };
	static const uint8_t xsave64[] = { 0xb8, 7, 0, 0, 0, 0x31, 0xd2,
					   0x49, 0x0f, 0xae, 0x26 };
	static const uint8_t fxsave64[] = { 0x49, 0x0f, 0xae, 0x06 };
	struct x86_64_out o = { out, size, 0, r->tramp, false };
	const struct arch_pad_ring *g = &r->ring;
	unsigned int image = x86_64_image_bytes(g->image_form);
	bool xsave = x86_64_image_is_xsave(g->image_form);
	size_t loop, j_found, j_orph[4], found, pop, j_mine, j_popped[4], chain;
	size_t j_full, full, popped, j_out, out_at, j_bare, j_magic;
	int m;

	if (!r->area || (r->area & 4095) || !r->tramp || !g->nrecords ||
	    (g->nrecords & (g->nrecords - 1)) || g->record_shift < 6 ||
	    g->record_shift > 20 || (g->ring & 63) || (g->off_records & 63) ||
	    g->off_seq < image || g->off_frame < image || g->off_bases < image ||
	    g->off_blocks < image || g->off_blocks + 40 > (1u << g->record_shift))
		return -EINVAL;
	if ((m = x86_64_emit_save_regs(out, size, r->tramp)) < 0)
		return m;
	o.len = (size_t)m;
	put_key(&o, r, NULL, NULL);
	loop = o.len;
	put_slot(&o);
	x86_64_put(&o, cmp_key, sizeof(cmp_key));
	j_found = put_jcc32(&o, JE);
	x86_64_put(&o, test_rax, sizeof(test_rax));
	j_orph[0] = put_jcc32(&o, JE);
	j_orph[1] = put_next_slot(&o, loop);
	found = o.len;
	fix32(&o, j_found, found);
	x86_64_put(&o, found_regs, sizeof(found_regs));
	pop = o.len;
	x86_64_put(&o, test_n, sizeof(test_n));
	j_orph[2] = put_jcc32(&o, JE);
	put_top(&o);
	x86_64_put(&o, cmp_slot, sizeof(cmp_slot));
	j_mine = put_jcc32(&o, JAE);
	x86_64_put(&o, drop, sizeof(drop));
	put_jcc32_to(&o, JMP, pop);
	fix32(&o, j_mine, o.len);
	j_orph[3] = put_jcc32(&o, JNE);
	x86_64_put(&o, mine, sizeof(mine));
	chain = o.len;
	x86_64_put(&o, is_on, sizeof(is_on));
	j_popped[0] = put_jcc32(&o, JE);
	if (r->hist)
		put_hist(&o, r->hist, &j_popped[2]);
	x86_64_put(&o, save, sizeof(save));
	j_full = put_ring_claim(&o, g);
	if (g->prefetch)
		put_ret_prefetch(&o, g);
	/* No XSTATE_BV for a record without the image: its magic says so
	 * (the drain loads no image for RETB), and the header's line would
	 * be a fifth for the record; XSAVE writes the whole header for
	 * RETN. */
	put_hit_state(&o, g->off_frame, false, false, false,
		      g->tp_read ? BASES_FSGSBASE : BASES_NONE, g->off_bases, 0, NULL);
	x86_64_put(&o, ld_area, sizeof(ld_area));
	j_bare = put_jcc32(&o, JE);
	x86_64_put(&o, xsave ? xsave64 : fxsave64, xsave ? sizeof(xsave64) : sizeof(fxsave64));
	if (!g->tp_read && g->tid_table)
		put_bases_table(&o, g->off_bases, g->tid_table, g->bases_fault);
	else if (!g->tp_read)
		put_bases_syscall(&o, g->off_bases);
	put_magic(&o, g->off_blocks, RET_REC_MAGIC_VALUE);
	j_magic = put_jcc32(&o, JMP);
	fix32(&o, j_bare, o.len);
	put_magic(&o, g->off_blocks, RET_REC_MAGIC_BARE);
	fix32(&o, j_magic, o.len);
	x86_64_put(&o, reload, sizeof(reload));
	put_top(&o);
	x86_64_put(&o, ld_func, sizeof(ld_func));
	put_store_r14(&o, true, g->off_blocks + RET_REC_FUNC);
	x86_64_put(&o, ld_now, sizeof(ld_now));
	put_store_r14(&o, true, g->off_blocks + RET_REC_TSC);
	x86_64_put(&o, sub_t0, sizeof(sub_t0));
	put_store_r14(&o, true, g->off_blocks + RET_REC_TICKS);
	x86_64_put(&o, ld_tid, sizeof(ld_tid));
	put_store_r14(&o, false, g->off_blocks + RET_REC_TID);
	x86_64_put(&o, ld_ret, sizeof(ld_ret));
	put_store_r14(&o, true, g->off_blocks + RET_REC_RET);
	x86_64_put(&o, publish, sizeof(publish));
	put_store_r14(&o, true, g->off_seq);
	x86_64_put(&o, unsave, sizeof(unsave));
	j_popped[1] = put_jcc32(&o, JMP);
	full = o.len;
	fix32(&o, j_full, full);
	x86_64_put(&o, unsave, sizeof(unsave));
	put_count(&o, RET_PAD_LOST);
	*trap_off = o.len;
	x86_64_put8(&o, 0xcc);
	put_jcc32_to(&o, JMP, chain);
	popped = o.len;
	for (int i = 0; i < (r->hist ? 4 : 2); i++)
		fix32(&o, j_popped[i], popped);
	x86_64_put(&o, drop, sizeof(drop));
	x86_64_put(&o, test_n, sizeof(test_n));
	j_out = put_jcc32(&o, JE);
	put_top(&o);
	x86_64_put(&o, cmp_slot, sizeof(cmp_slot));
	put_jcc32_to(&o, JE, chain);
	out_at = o.len;
	fix32(&o, j_out, out_at);
	x86_64_put(&o, out_regs, sizeof(out_regs));
	m = x86_64_emit_restore_regs(o.len < size ? out + o.len : out, o.len < size ? size - o.len : 0);
	if (m < 0)
		return m;
	o.len += (size_t)m;
	x86_64_put(&o, jmp_real, sizeof(jmp_real));
	size_t orphan = o.len;
	for (int i = 0; i < 4; i++)
		fix32(&o, j_orph[i], orphan);
	put_count(&o, RET_PAD_ORPHANS);
	m = x86_64_emit_restore_regs(o.len < size ? out + o.len : out, o.len < size ? size - o.len : 0);
	if (m < 0)
		return m;
	o.len += (size_t)m;
	x86_64_put8(&o, 0xcc);
	return finish(&o);
}
