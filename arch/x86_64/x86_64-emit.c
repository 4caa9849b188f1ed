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

/*
 * What a pad stores for a hit, the record or entry in %r14 and the frame
 * at %rbx: the frame (18 words, rep movsq: rsi, rdi, rcx and DF go), the
 * x87/SSE(/AVX) image at offset 0 (rax, rdx go), and with fsgsbase the
 * two bases at off_bases.
 *
 *   48 8d be <frame>        lea frame(%rsi),%rdi   (%rsi = %r14 here)
 *   48 89 de                mov %rbx,%rsi
 *   b9 12 00 00 00          mov $18,%ecx
 *   fc f3 48 a5             cld; rep movsq
 *   b8 07 00 00 00 31 d2    mov $7,%eax; xor %edx,%edx
 *   49 0f ae 26             xsave64 (%r14)        (or 49 0f ae 06 fxsave64)
 *   f3 48 0f ae c0          rdfsbase %rax
 *   49 89 86 <bases>        mov %rax,bases(%r14)
 *   f3 48 0f ae c8          rdgsbase %rax
 *   49 89 86 <bases+8>      mov %rax,bases+8(%r14)
 */
enum bases_how { BASES_NONE, BASES_FSGSBASE, BASES_SYSCALL };

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
static void put_bases_syscall(struct x86_64_out *o, unsigned int off_bases)
{
	static const uint8_t lea_rsi[] = { 0x49, 0x8d, 0xb6 };
	static const uint8_t call[] = { 0xb8, 0x9e, 0, 0, 0, 0x0f, 0x05 };

	for (unsigned int i = 0; i < 2; i++) {
		x86_64_put8(o, 0xbf);
		x86_64_put32(o, 0x1003 + i);	/* ARCH_GET_FS, ARCH_GET_GS */
		x86_64_put(o, lea_rsi, sizeof(lea_rsi));
		x86_64_put32(o, off_bases + 8 * i);
		x86_64_put(o, call, sizeof(call));
	}
}

static void put_hit_state(struct x86_64_out *o, unsigned int off_frame,
			  bool xsave, enum bases_how bases, unsigned int off_bases)
{
	static const uint8_t lea_rdi[] = { 0x48, 0x8d, 0xbe };
	static const uint8_t copy[] = { 0x48, 0x89, 0xde, 0xb9, 18, 0, 0, 0,
					0xfc, 0xf3, 0x48, 0xa5 };
	static const uint8_t xsave64[] = { 0xb8, 7, 0, 0, 0, 0x31, 0xd2,
					   0x49, 0x0f, 0xae, 0x26 };
	static const uint8_t fxsave64[] = { 0x49, 0x0f, 0xae, 0x06 };
	static const uint8_t rdfs[] = { 0xf3, 0x48, 0x0f, 0xae, 0xc0 };
	static const uint8_t rdgs[] = { 0xf3, 0x48, 0x0f, 0xae, 0xc8 };
	static const uint8_t mov_r14[] = { 0x49, 0x89, 0x86 };

	x86_64_put(o, lea_rdi, sizeof(lea_rdi));
	x86_64_put32(o, off_frame);
	x86_64_put(o, copy, sizeof(copy));
	if (xsave)
		x86_64_put(o, xsave64, sizeof(xsave64));
	else
		x86_64_put(o, fxsave64, sizeof(fxsave64));
	if (bases == BASES_SYSCALL)
		put_bases_syscall(o, off_bases);
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
 *   48 8d be <frame>        lea frame(%rsi),%rdi
 *   48 89 de                mov %rbx,%rsi
 *   b9 12 00 00 00          mov $18,%ecx
 *   fc f3 48 a5             cld; rep movsq        the frame, 18 words
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

	unsigned int image = h->xsave ? 832 : 512;	/* up to AVX / FXSAVE */

	/* XSAVE64 and FXSAVE64 fault on a misaligned image. */
	if (!h->nentries || (h->nentries & (h->nentries - 1)) ||
	    h->entry_shift < 6 || h->entry_shift > 20 || (h->table & 63) ||
	    h->off_owner < image || h->off_ready < image ||
	    h->off_frame < image || (h->fsgsbase && h->off_bases < image) ||
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
	put_hit_state(&o, h->off_frame, h->xsave,
		      h->fsgsbase ? BASES_FSGSBASE : BASES_NONE, h->off_bases);
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
 *   48 8d be <frame>        lea frame(%rsi),%rdi
 *   48 89 de b9 12 00 00 00 fc f3 48 a5    the frame, as in the hand-off
 *   xsave64 / fxsave64, rdfsbase / rdgsbase    as in the hand-off
 *     (without fsgsbase: arch_prctl ARCH_GET_FS / ARCH_GET_GS)
 *   49 8d 44 24 01          lea 1(%r12),%rax
 *   49 89 86 <seq>          mov %rax,seq(%r14)     published
 *   e9 <done>               jmp done               (the restore)
 *     (with ipa_call: the call below before the publish, and
 *      jne done after it, on the collector's verdict)
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
 * The record's thread and time:
 *
 *   b8 ba 00 00 00 0f 05    gettid
 *   41 89 86 <tid>          mov %eax,tid(%r14)
 *   31 ff                   xor %edi,%edi          CLOCK_REALTIME
 *   49 8d b6 <time>         lea time(%r14),%rsi
 *   b8 e4 00 00 00 0f 05    clock_gettime          (r12, r14 kept)
 */
static void emit_time_tid(struct x86_64_out *o, const struct arch_pad_ring *r)
{
	static const uint8_t gettid_only[] = { 0xb8, 0xba, 0, 0, 0, 0x0f, 0x05,
					       0x41, 0x89, 0x86 };
	static const uint8_t clock_arg[] = { 0x31, 0xff, 0x49, 0x8d, 0xb6 };
	static const uint8_t clock_call[] = { 0xb8, 0xe4, 0, 0, 0, 0x0f, 0x05 };

	x86_64_put(o, gettid_only, sizeof(gettid_only));
	x86_64_put32(o, r->off_tid);
	x86_64_put(o, clock_arg, sizeof(clock_arg));
	x86_64_put32(o, r->off_time);
	x86_64_put(o, clock_call, sizeof(clock_call));
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

int x86_64_emit_pad_collect(uint8_t *out, size_t size,
			    const struct arch_pad_ring *r, size_t *done)
{
	static const uint8_t mov_r14[] = { 0x49, 0x89, 0x86 };
	static const uint8_t publish[] = { 0x49, 0x8d, 0x44, 0x24, 0x01 };
	struct x86_64_out o = { out, size, 0, 0, false };
	unsigned int image = r->xsave ? 832 : 512;
	size_t jl_at, skip_at = 0;

	if (!r->nrecords || (r->nrecords & (r->nrecords - 1)) ||
	    r->record_shift < 6 || r->record_shift > 20 || (r->ring & 63) ||
	    (r->off_records & 63) || r->off_records < 8 ||
	    r->off_records > (1u << 30) || !record_parts_fit(r, image))
		return -EINVAL;
	if (r->ipa_call && r->ipa_wants)
		skip_at = emit_ipa_wants(&o, r);
	jl_at = emit_claim_record(&o, r);
	put_hit_state(&o, r->off_frame, r->xsave,
		      r->fsgsbase ? BASES_FSGSBASE : BASES_SYSCALL, r->off_bases);
	if (r->time_tid)
		emit_time_tid(&o, r);
	if (r->ipa_call)
		emit_ipa_call(&o, r);
	x86_64_put(&o, publish, sizeof(publish));
	x86_64_put(&o, mov_r14, sizeof(mov_r14));
	x86_64_put32(&o, r->off_seq);
	if (r->ipa_call)
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
