/*
 * x86_64-pad-exec-copy.c - the jump pad test's native copy cases: a
 * collecting pad that does the in-process collector's work itself
 * (arch_pad_ring.copy_fn: one tracepoint, no condition, no pass count,
 * ranges only), checked against the collector.
 *
 * The collector's image is the agent's own (agent/ipa-blob.o), placed in
 * this process by the agent's loader (agent/ipa-image.c), and a SIGSEGV
 * / SIGBUS handler plays the agent's part in a fault of ipa_copy: the PC
 * between ipa_copy_fault_begin and _end goes on at ipa_copy_fault_exit.
 *
 * The case: 40 calls of the lea function through a pad that collects
 * five ranges (64 bytes at rdi, 11 at rsi + 8, 16 at a constant address,
 * 8 at rcx - 16, 24 at rdx + 2^32: the offsets short, negative and
 * long), with rdi, rsi, rcx and rdx pointing at per-call data, except that call 13's rdi
 * points into a page that is not readable, call 21's rdi 20 bytes before
 * such a page and call 30's rsi 5 bytes before it.  Each record's block
 * area must be byte for byte what ipa_collect_site writes for the
 * record's frame (called here on it, into memory poisoned the same
 * way); the avail of each block must be what the pointers allow (64, 0,
 * 20; 11, 5) and the bytes the program's; the registers, flags, vector
 * registers and red zone must come back as without the pad; and the
 * faults fixed up must be exactly those of the unreadable calls.  The
 * same case runs with the collector's call (no copy_fn), so both paths
 * pass the same checks.  Also what emit_pad_collect refuses of a native
 * copy.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "agent/ipa-image.h"
#include "agent/ipa/ipa-abi.h"
#include "x86_64-pad-exec.h"

#define COPY_SHIFT 11		/* 2 KiB records, as the agent's */
#define COPY_RECORDS 16
#define COPY_BLOCKS 1024	/* the block area: its second KiB */
#define COPY_BLOCKS_SIZE 1024
#define COPY_TP 7
#define COPY_CALLS 40

static struct ipa_image img;
static uint8_t *ipa_base;	/* the image, placed here */
static uint8_t *ipa_data;	/* the site, the program, the counters */
static volatile unsigned long faults;	/* ipa_copy's, fixed up */

static void on_fault(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];

	(void)si;
	if (ipa_base && pc >= A(ipa_base) &&
	    ipa_image_fault_fixable(&img, pc - A(ipa_base))) {
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(A(ipa_base) + img.fault_exit);
		faults++;
		return;
	}
	signal(sig, SIG_DFL);	/* not the collector's: die of it */
}

/* The image placed, the fault handler set: 0, or -1 (said why). */
static int ipa_setup(void)
{
	struct sigaction sa;

	if (ipa_base)
		return 0;
	if (ipa_image_open(&img) < 0) {
		printf("ERROR: %s\n", img.error);
		return -1;
	}
	if (!img.copy_native) {
		printf("ERROR: the x86-64 image exports no ipa_copy_native\n");
		return -1;
	}
	ipa_base = mmap(NULL, img.size, PROT_READ | PROT_WRITE | PROT_EXEC,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ipa_data = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ipa_base == MAP_FAILED || ipa_data == MAP_FAILED) {
		printf("ERROR: mmap of the collector\n");
		return -1;
	}
	if (ipa_image_place(&img, A(ipa_base), ipa_base, img.size) < 0) {
		printf("ERROR: %s\n", img.error);
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL) || sigaction(SIGBUS, &sa, NULL)) {
		printf("ERROR: sigaction\n");
		return -1;
	}
	return 0;
}

/* The site of one tracepoint collecting `n` ranges, as the agent writes
 * it in the collector's data; its address. */
static uint64_t site_make(const struct arch_pad_copy *c, unsigned int n)
{
	struct ipa_site *s = (struct ipa_site *)ipa_data;
	struct ipa_program *p = (struct ipa_program *)(ipa_data + 256);

	memset(ipa_data, 0, 4 * PAGE);
	s->version = IPA_ABI_VERSION;
	s->nprogs = 1;
	s->base = A(ipa_data);
	s->prog_off[0] = 256;
	p->version = IPA_ABI_VERSION;
	p->size = (uint32_t)(sizeof(*p) + n * sizeof(struct ipa_action));
	p->tp_number = COPY_TP;
	p->flags = IPA_PROG_REGS;
	p->nactions = n;
	p->counters_off = 2048;
	for (unsigned int i = 0; i < n; i++) {
		p->actions[i].kind = IPA_ACT_MEM;
		p->actions[i].basereg = c[i].basereg == ARCH_PAD_NO_REG ?
					IPA_NO_REG : (uint16_t)c[i].basereg;
		p->actions[i].len = c[i].len;
		p->actions[i].offset = c[i].offset;
	}
	return A(s);
}

static const struct ipa_counters *site_counters(void)
{
	return (const struct ipa_counters *)(ipa_data + 2048);
}

/* A ring of 2 KiB records at `ring` whose pad collects ranges `c` at a
 * site of the collector: by the pad itself with `native`, else by the
 * collector's call. */
static struct arch_pad_ring copy_ring(uint8_t *ring, unsigned int nrecords,
				      unsigned int shift, const struct arch_pad_copy *c,
				      unsigned int n, bool native)
{
	struct arch_pad_ring r = {
		.ring = A(ring), .off_records = OFF_RECORDS,
		.record_shift = shift, .nrecords = nrecords,
		.off_seq = OFF_SEQ, .off_bases = OFF_BASES,
		.off_frame = OFF_FRAME, .image_form = image_form_of(default_xsave(), false),
		.tp_read = cpu.fsgsbase, .image = false,
		.ipa_call = A(ipa_base) + img.collect_site,
		.ipa_site = site_make(c, n),
		.off_blocks = COPY_BLOCKS, .blocks_size = COPY_BLOCKS_SIZE,
	};

	if (native) {
		r.copy_fn = A(ipa_base) + img.copy_native;
		r.copy_tp = COPY_TP;
		r.copy_flags = IPA_PROG_REGS;
		r.ncopies = n;
		memcpy(r.copies, c, n * sizeof(*c));
	}
	return r;
}

/* Ring `r` (the bench's) made to collect 64 bytes at rdi, by the pad
 * itself with `native`, else by the collector's call: 0, or -1. */
int copy_bench_ring(struct arch_pad_ring *r, bool native)
{
	const struct arch_pad_copy c = { R_RDI, 64, 0 };
	struct arch_pad_ring k;

	if (ipa_setup() < 0)
		return -1;
	k = copy_ring((uint8_t *)(uintptr_t)r->ring, r->nrecords, r->record_shift, &c, 1,
		      native);
	r->ipa_call = k.ipa_call;
	r->ipa_site = k.ipa_site;
	r->off_blocks = k.off_blocks;
	r->blocks_size = k.blocks_size;
	r->copy_fn = k.copy_fn;
	r->copy_tp = k.copy_tp;
	r->copy_flags = k.copy_flags;
	r->ncopies = k.ncopies;
	memcpy(r->copies, k.copies, sizeof(r->copies));
	return 0;
}

static uint8_t *copy_ring_mem;
static uint8_t *data;		/* 3 pages: readable, none, readable */
static uint8_t absolute[16] = "absolute-range!";

static uint8_t *copy_record(uint64_t pos)
{
	return copy_ring_mem + OFF_RECORDS +
	       ((size_t)(pos & (COPY_RECORDS - 1)) << COPY_SHIFT);
}

static void copy_ring_reset(void)
{
	memset(copy_ring_mem, 0, OFF_RECORDS + ((size_t)COPY_RECORDS << COPY_SHIFT));
	for (unsigned int i = 0; i < COPY_RECORDS; i++) {
		uint8_t *e = copy_record(i);

		memset(e + COPY_BLOCKS, 0xee, COPY_BLOCKS_SIZE);
		*(uint64_t *)(e + OFF_SEQ) = i;
	}
}

/* Per call k: rdi at 64 bytes of its own, rsi at 8 + 11, rcx 16 past
 * 8, rdx - 2^32 at 24; a few calls at the unreadable page. */
static void call_pointers(unsigned int k, uint64_t *rdi, uint64_t *rsi, uint64_t *rcx,
			  uint64_t *rdx)
{
	uint8_t *slot = data + (k % 16) * 128;	/* in the first page */

	for (unsigned int b = 0; b < 128; b++)
		slot[b] = (uint8_t)(k * 31 + b);
	*rdi = A(slot);
	*rsi = A(slot + 64);
	*rdx = A(slot + 90) - (1ull << 32);
	*rcx = A(slot + 144);	/* the next slot's first 8: 0 or stale */
	if (k == 13)
		*rdi = A(data + PAGE + 64);
	if (k == 21)
		*rdi = A(data + PAGE - 20);
	if (k == 30)
		*rsi = A(data + PAGE - 8 - 5);
}

static const struct arch_pad_copy copy_ranges[] = {
	{ R_RDI, 64, 0 },
	{ R_RSI, 11, 8 },
	{ ARCH_PAD_NO_REG, 16, 0 },	/* offset: &absolute, set at run time */
	{ R_RCX, 8, (uint64_t)-16 },
	{ R_RDX, 24, 1ull << 32 },
};
#define NRANGES (sizeof(copy_ranges) / sizeof(copy_ranges[0]))

static int case_copy(const void *arg)
{
	bool native = *(const bool *)arg;
	const struct fn_desc *f = &fns[FN_LEA];
	struct arch_pad_handoff h = handoff(16, default_xsave(), cpu.fsgsbase);
	struct arch_pad_copy c[NRANGES];
	static struct call_state st;
	static uint8_t want[COPY_BLOCKS_SIZE];
	const char *name = native ? "native copy" : "collector's call";
	uint64_t pos = 0;

	if (ipa_setup() < 0)
		return 99;
	memcpy(c, copy_ranges, sizeof(c));
	c[2].offset = A(absolute);
	struct arch_pad_ring r = copy_ring(copy_ring_mem, COPY_RECORDS, COPY_SHIFT, c,
					   NRANGES, native);
	copy_ring_reset();
	reset_table(16);
	if (build_pad(f, &h, &r, name))
		return 0;
	for (unsigned int k = 0; k < COPY_CALLS; k++, pos++) {
		uint64_t rdi, rsi, rcx, rdx;
		unsigned long before = faults, calls_before = thread_hits;
		char what[96];

		prepare(&st, f, k + 1);
		call_pointers(k, &rdi, &rsi, &rcx, &rdx);
		st.in[R_RDI] = rdi;
		st.in[R_RCX] = rcx;
		st.in[R_RSI] = rsi;
		st.in[R_RDX] = rdx;
		pad_call(&st);
		check_return(f, &st, name);
		unsigned long pad_faults = faults - before;
		check(thread_hits == calls_before, "no SIGTRAP: the record taken", name);

		uint8_t *e = copy_record(pos);
		if (!check(*(uint64_t *)(e + OFF_SEQ) == pos + 1, "record published", name))
			continue;
		const uint64_t *frame = (const uint64_t *)(e + OFF_FRAME);
		check(frame[R_RDI] == rdi && frame[R_RSI] == rsi && frame[R_RDX] == rdx,
		      "the frame's pointers", name);

		/* The collector on the same frame, into the same poison. */
		int (*collect_site)(const struct ipa_site *, const uint64_t *, uint32_t,
				    uint8_t *, uint32_t) =
			(int (*)(const struct ipa_site *, const uint64_t *, uint32_t,
				 uint8_t *, uint32_t))(uintptr_t)(A(ipa_base) + img.collect_site);
		memset(want, 0xee, sizeof(want));
		before = faults;
		int v = collect_site((const struct ipa_site *)(uintptr_t)r.ipa_site, frame,
				     NFRAME, want, sizeof(want));
		check(v == IPA_RECORD, "the collector's verdict on the frame: record", name);
		const struct ipa_site_out *so = (const struct ipa_site_out *)want;
		snprintf(what, sizeof(what), "call %u: blocks as the collector writes them", k);
		check(so->len + sizeof(*so) <= sizeof(want) &&
		      memcmp(e + COPY_BLOCKS, want, so->len + sizeof(*so)) == 0, what, name);
		check(faults - before == pad_faults,
		      "the pad's faults are the collector's", name);

		/* And what they hold, block by block. */
		const uint8_t *b = e + COPY_BLOCKS + sizeof(struct ipa_site_out);
		const struct ipa_group *g = (const struct ipa_group *)b;
		check(so->verdict == IPA_RECORD && so->ngroups == 1 &&
		      g->tp_number == COPY_TP && g->verdict == IPA_RECORD &&
		      g->flags == IPA_PROG_REGS, "site and group headers", name);
		b += sizeof(*g);
		unsigned long want_faults = 0;
		for (unsigned int i = 0; i < NRANGES; i++) {
			const struct ipa_mem_block *m = (const struct ipa_mem_block *)b;
			uint64_t at = (c[i].basereg == ARCH_PAD_NO_REG ? 0 : frame[c[i].basereg]) +
				      c[i].offset;
			uint32_t avail = c[i].len;

			if (i == 0 && k == 13)
				avail = 0;
			if (i == 0 && k == 21)
				avail = 20;
			if (i == 1 && k == 30)
				avail = 5;
			want_faults += avail != c[i].len;
			snprintf(what, sizeof(what), "call %u range %u: addr, len, avail %u, bytes",
				 k, i, avail);
			check(m->h.kind == IPA_BLK_MEM && m->addr == at && m->len == c[i].len &&
			      m->avail == avail &&
			      memcmp(m->bytes, (const void *)(uintptr_t)at, avail) == 0 &&
			      m->h.size == ((24 + c[i].len + 7) & ~7u), what, name);
			b += m->h.size;
		}
		snprintf(what, sizeof(what), "call %u: %lu faults fixed up in the pad", k,
			 want_faults);
		check(pad_faults == want_faults, what, name);
		*(uint64_t *)(e + OFF_SEQ) = pos + COPY_RECORDS;
		memset(e + COPY_BLOCKS, 0xee, COPY_BLOCKS_SIZE);
	}
	/* The collector counted only its own calls here: the native pad
	 * counts nothing (the agent counts the records). */
	check(site_counters()->hits == (native ? COPY_CALLS : 2 * COPY_CALLS),
	      "the collector's hits: its calls only", name);
	return 0;
}

/* What emit_pad_collect refuses of a native copy (nothing runs). */
static int case_copy_args(const void *arg)
{
	const char *name = "native copy arguments";
	struct arch_pad_copy c[ARCH_PAD_COPIES + 1];
	uint8_t buf[4096];
	size_t done;

	(void)arg;
	if (ipa_setup() < 0)
		return 99;
	for (unsigned int i = 0; i <= ARCH_PAD_COPIES; i++)
		c[i] = (struct arch_pad_copy){ R_RDI, 8, 8 * i };
	struct arch_pad_ring ok = copy_ring(copy_ring_mem, COPY_RECORDS, COPY_SHIFT, c,
					    ARCH_PAD_COPIES, true), bad;
	check(ops->emit_pad_collect(buf, sizeof(buf), &ok, &done) > 0,
	      "ARCH_PAD_COPIES ranges accepted", name);
	bad = ok;
	bad.ncopies = 0;
	check(ops->emit_pad_collect(buf, sizeof(buf), &bad, &done) == -EINVAL,
	      "-EINVAL: no range", name);
	bad = ok;
	bad.ncopies = ARCH_PAD_COPIES + 1;
	check(ops->emit_pad_collect(buf, sizeof(buf), &bad, &done) == -EINVAL,
	      "-EINVAL: too many ranges", name);
	bad = ok;
	bad.copies[1].len = 0;
	check(ops->emit_pad_collect(buf, sizeof(buf), &bad, &done) == -EINVAL,
	      "-EINVAL: a range of 0 bytes", name);
	bad = ok;
	bad.copies[2].basereg = NFRAME;
	check(ops->emit_pad_collect(buf, sizeof(buf), &bad, &done) == -EINVAL,
	      "-EINVAL: a register the frame has not", name);
	bad = ok;
	bad.copies[0].len = COPY_BLOCKS_SIZE - 32 - 24 + 1;
	bad.ncopies = 1;
	check(ops->emit_pad_collect(buf, sizeof(buf), &bad, &done) == -EINVAL,
	      "-EINVAL: more than the block area", name);
	bad.copies[0].len = COPY_BLOCKS_SIZE - 32 - 24;
	check(ops->emit_pad_collect(buf, sizeof(buf), &bad, &done) > 0,
	      "exactly the block area accepted", name);
	bad = ok;
	bad.ipa_wants = A(ipa_base) + img.site_wants;
	check(ops->emit_pad_collect(buf, sizeof(buf), &bad, &done) == -EINVAL,
	      "-EINVAL: a condition to ask about", name);
	return 0;
}

void run_copy_cases(void)
{
	static const bool modes[] = { true, false };

	copy_ring_mem = mmap(NULL, OFF_RECORDS + ((size_t)COPY_RECORDS << COPY_SHIFT),
			     PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	data = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	if (copy_ring_mem == MAP_FAILED || data == MAP_FAILED ||
	    mprotect(data + PAGE, PAGE, PROT_NONE)) {
		printf("ERROR: mmap of the native copy cases\n");
		exit(99);
	}
	run_case("native copy: what emit_pad_collect refuses", case_copy_args, NULL);
	run_case("native copy: 5 ranges x 40 calls, 3 unreadable, = the collector's blocks",
		 case_copy, &modes[0]);
	run_case("collector's call: the same 40 calls, the same checks",
		 case_copy, &modes[1]);
}
