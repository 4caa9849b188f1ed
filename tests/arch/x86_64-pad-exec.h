/*
 * x86_64-pad-exec.h - what the jump pad test (x86_64-pad-exec.c: the pad,
 * the "agent" and the hand-off cases) shares with its collector cases
 * (x86_64-pad-exec-ring.c).
 */
#ifndef TESTS_ARCH_X86_64_PAD_EXEC_H
#define TESTS_ARCH_X86_64_PAD_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"
#include "arch/x86_64/x86_64.h"

#define PAGE 0x1000

/* The agent's table layout: 1 KiB entries, image at 0. */
#define ENTRY_SHIFT 10
#define OFF_OWNER 832
#define OFF_READY 836
#define OFF_BASES 840
#define OFF_FRAME 856
#define IMAGE_SIZE 832		/* XSAVE, rfbm 7: legacy 512, header 64, AVX 256 */

/* Image offsets (FXSAVE layout = XSAVE legacy area). */
#define IMG_FCW 0
#define IMG_MXCSR 24
#define IMG_XMM 160
#define IMG_XSTATE_BV 512
#define IMG_YMM_HI 576

/* The agent's ring: head at 0, records of the entries' layout from 4096. */
#define OFF_SEQ 832
#define OFF_RECORDS 4096
#define RING_MAX_RECORDS 16

#define BASES_UNTOUCHED 0xb5b5b5b5b5b5b5b5ull
#define FAKE_OWNER 0x7fffffffu	/* above any pid_max: never a real tid */

#define THREADS 4
#define THREAD_CALLS 20000

/* gdb order of the frame and of call_state.in / .out */
enum { R_RAX, R_RBX, R_RCX, R_RDX, R_RSI, R_RDI, R_RBP, R_RSP,
       R_R8, R_R9, R_R10, R_R11, R_R12, R_R13, R_R14, R_R15,
       R_RIP, R_FLAGS, NFRAME };

/*
 * What pad_call reads and writes; the offsets are spelled out in the
 * assembly below and checked here.
 */
struct call_state {
	uint64_t in[NFRAME];	/*    0: GPRs to load (rsp, rip unused), rflags */
	uint64_t out[NFRAME];	/*  144: GPRs after the return, rsp, rflags */
	uint64_t target;	/*  288: the function to call */
	uint64_t call_rsp;	/*  296: %rsp at the call instruction */
	uint64_t avx;		/*  304: load / store ymm (else xmm); 2: then
				 * vzeroupper before the call (the upper
				 * halves zero, in their initial state) */
	uint64_t unused;	/*  312 */
	uint8_t vin[16][32];	/*  320: ymm0-15 (xmm: the low 16 bytes) */
	uint8_t vout[16][32];	/*  832 */
	uint64_t redzone[16];	/* 1344: [call_rsp - 136, call_rsp - 8) after */
};

_Static_assert(offsetof(struct call_state, out) == 144, "out");
_Static_assert(offsetof(struct call_state, target) == 288, "target");
_Static_assert(offsetof(struct call_state, call_rsp) == 296, "call_rsp");
_Static_assert(offsetof(struct call_state, avx) == 304, "avx");
_Static_assert(offsetof(struct call_state, vin) == 320, "vin");
_Static_assert(offsetof(struct call_state, vout) == 832, "vout");
_Static_assert(offsetof(struct call_state, redzone) == 1344, "redzone");

/* Red-zone pattern: the qword at call_rsp - 8 - 8 * (k + 1) holds RZ + k. */
#define RZ 0x5a5a0000a5a50000ull

void pad_call(struct call_state *st);

enum fn_kind { FN_LEA, FN_RIP, FN_FRAME };

struct fn_desc {
	const char *name;
	enum fn_kind kind;
	const uint8_t *src, *src_end;	/* pristine bytes in .rodata */
	size_t window;			/* bytes the 5-byte window covers */
};

/* The pad under test; written only while a single thread runs. */
struct pad_cfg {
	uint64_t fn;
	uint64_t trap_rip;	/* right after the int3 */
	struct arch_pad_handoff h;
	struct arch_pad_ring r;	/* the ring, when the pad collects */
};

/* One SIGTRAP, as the handler (the "agent") saw it. */
struct hit {
	uint64_t frame[NFRAME];
	uint8_t image[IMAGE_SIZE];
	uint64_t bases[2];
	unsigned int entry;
	uint64_t rip, rsp, rbx, r14;
	bool frame_matches_rbx;		/* entry frame == the stack frame */
	uint64_t fs, gs;		/* ARCH_GET_FS / _GS in the handler */
	bool from_ring;			/* a collector's record: no trap context */
};

/* CPU and kernel features the cases depend on. */
struct pad_cpu {
	bool avx;		/* AVX usable: OSXSAVE, AVX, XCR0 has SSE|AVX */
	bool fsgsbase;		/* HWCAP2_FSGSBASE: rdfsbase allowed */
	bool ymm_at_576;	/* CPUID.(0xd,2).ebx */
	bool fxsave_ymm;		/* the image by FXSAVE + vextractf128: avx */
	uint32_t mxcsr;
	uint16_t fcw;
};

struct mode {
	const struct fn_desc *f;
	bool xsave, fsgsbase;
	uint8_t *pages;		/* functions, then the pad */
	bool fxsave_ymm;		/* with xsave: FXSAVE + vextractf128 */
};

extern const struct fn_desc fns[3];
extern const struct arch_ops *ops;
extern uint8_t *code_page, *pad_page, *ring_mem;
extern struct pad_cfg cfg;
extern struct pad_cpu cpu;
extern __thread struct hit last_hit;
extern __thread unsigned long thread_hits;
extern unsigned long total_hits;
extern unsigned long fxsave_ymm_avx_initial;	/* such hits after vzeroupper */
extern __thread int t_checks, t_failures;
extern int print_budget;
extern int stress_checks, stress_failures;

uint64_t A(const void *p);
bool check(bool ok, const char *what, const char *name);
int build_pad(const struct fn_desc *f, const struct arch_pad_handoff *h,
	      const struct arch_pad_ring *r, const char *name);
void reset_table(unsigned int nentries);
struct arch_pad_handoff handoff(unsigned int nentries, bool xsave, bool fsgsbase);
void prepare(struct call_state *st, const struct fn_desc *f, uint64_t seed);
void check_return(const struct fn_desc *f, const struct call_state *st,
		  const char *name);
void check_hit(const struct fn_desc *f, const struct call_state *st,
	       const struct hit *h, const char *name);
void check_table(unsigned int nentries, unsigned int fake_mask, const char *name);
bool default_xsave(void);

/* The pads' image form (X86_64_IMAGE_*) of a case's choices: XSAVE's
 * layout or FXSAVE's, with xsave stored by FXSAVE + vextractf128. */
static inline unsigned int image_form_of(bool xsave, bool fxsave_ymm)
{
	return !xsave ? X86_64_IMAGE_FXSAVE :
	       fxsave_ymm ? X86_64_IMAGE_XSAVE_BY_FXSAVE : X86_64_IMAGE_XSAVE;
}
bool run_case(const char *title, int (*fn)(const void *), const void *arg);

/* The collector cases (x86_64-pad-exec-ring.c); low: below 2 GiB or NULL. */
void run_collector_cases(uint8_t *pages, uint8_t *low);
/* --bench: ns per call of collecting pads (x86_64-pad-exec-ring.c). */
void pad_bench(void);
/* The native copy cases (x86_64-pad-exec-copy.c), and the bench's ring
 * made to collect 64 bytes at rdi through the collector's image: by the
 * pad itself with `native`, else by the collector's call (0, or -1). */
void run_copy_cases(void);
int copy_bench_ring(struct arch_pad_ring *r, bool native);

#endif
