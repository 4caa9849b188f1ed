/*
 * test-ipa.c - the in-process collector's image, placed and run natively.
 *
 * The image the agent carries (ipa-blob.S) is placed by ipa-image.c in
 * executable memory of this test, at an address of the test's choosing,
 * and called as a pad calls it.  What the agent does for a fault in
 * ipa_copy (move the PC to the fault exit, drop the signal) a SIGSEGV
 * handler does here, so the image's side of that contract is checked:
 * the count it returns, and that the rest of the hit carries on.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/ipa-image.h"
#include "agent/ipa/ipa-abi.h"

static struct ipa_image img;
static uint8_t *base;
static int (*collect)(struct ipa_hit *);
static volatile sig_atomic_t fixups;

static void on_segv(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	(void)si;
#if defined(__x86_64__)
	uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	uint64_t pc = uc->uc_mcontext.pc;
#endif
	uint64_t off = pc - (uint64_t)(uintptr_t)base;
	if (!ipa_image_fault_fixable(&img, off)) {
		signal(sig, SIG_DFL);	/* a real crash: let it be one */
		return;
	}
	fixups++;
#if defined(__x86_64__)
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)(base + img.fault_exit);
#elif defined(__aarch64__)
	uc->uc_mcontext.pc = (uint64_t)(uintptr_t)(base + img.fault_exit);
#endif
}

static int setup(void **state)
{
	(void)state;
	if (ipa_image_open(&img) < 0) {
		fprintf(stderr, "%s\n", img.error);
		return -1;
	}
	base = mmap(NULL, img.size, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return -1;
	if (ipa_image_place(&img, (uint64_t)(uintptr_t)base, base, img.size) < 0) {
		fprintf(stderr, "%s\n", img.error);
		return -1;
	}
	if (mprotect(base, img.size, PROT_READ | PROT_EXEC) < 0)
		return -1;
	collect = (int (*)(struct ipa_hit *))(uintptr_t)(base + img.collect);
	return 0;
}

/* cmocka puts its own handlers in for every test: ours go in after. */
static void arm_fixup(void)
{
	struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO };
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	fixups = 0;
}

/* --- building programs ----------------------------------------------- */

struct prog {
	union {
		struct ipa_program p;
		uint8_t bytes[4096];
	} u;
	size_t code_end;	/* where the next bytecode goes */
};

static struct ipa_program *prog_init(struct prog *b, unsigned nactions)
{
	memset(b, 0, sizeof(*b));
	b->u.p.version = IPA_ABI_VERSION;
	b->u.p.nactions = nactions;
	b->code_end = sizeof(struct ipa_program) +
		      nactions * sizeof(struct ipa_action);
	b->u.p.size = (uint32_t)b->code_end;
	return &b->u.p;
}

static uint32_t prog_code(struct prog *b, const uint8_t *code, size_t len)
{
	uint32_t off = (uint32_t)b->code_end;
	memcpy(b->u.bytes + off, code, len);
	b->code_end += len;
	b->u.p.size = (uint32_t)b->code_end;
	return off;
}

static void prog_cond(struct prog *b, const uint8_t *code, size_t len)
{
	b->u.p.cond_len = (uint32_t)len;
	b->u.p.cond_off = prog_code(b, code, len);
}

/* Agent expression bytes (ax.h's opcodes). */
#define REG(n) 0x26, 0, (n)
#define CONST8(v) 0x22, (v)
#define EQUAL 0x13
#define ADD 0x02
#define REF64 0x1a
#define TRACE_QUICK(n) 0x0d, (n)
#define TRACENZ 0x2f
#define GETV(n) 0x2c, 0, (n)
#define SETV(n) 0x2d, 0, (n)
#define POP 0x29
#define END 0x27
#define DIV_SIGNED 0x05

struct hit_env {
	struct ipa_counters counters;
	struct ipa_tsvs tsvs;
	uint64_t regs[34];
	uint8_t out[1024] __attribute__((aligned(8)));
	struct ipa_hit hit;
};

static void env_init(struct hit_env *e, const struct ipa_program *p)
{
	memset(e, 0, sizeof(*e));
	e->hit.prog = p;
	e->hit.counters = &e->counters;
	e->hit.tsvs = &e->tsvs;
	e->hit.regs = e->regs;
	e->hit.nregs = 34;
	e->hit.out = e->out;
	e->hit.out_size = sizeof(e->out);
}

/* The n-th block of the record, or NULL. */
static const struct ipa_block *block(const struct hit_env *e, unsigned n)
{
	uint32_t off = 0;
	while (off < e->hit.out_len) {
		const struct ipa_block *b = (const void *)(e->out + off);
		assert_true(b->size >= sizeof(*b) && b->size % 8 == 0);
		if (n-- == 0)
			return b;
		off += b->size;
	}
	return NULL;
}

/* --- tests ------------------------------------------------------------ */

static void test_image_symbols(void **state)
{
	(void)state;
	assert_true(img.size > 0 && img.size <= IPA_IMAGE_MAX);
	assert_true(img.fault_begin < img.fault_end);
	/* One load between the labels, nothing else that may fault. */
	assert_true(img.fault_end - img.fault_begin <= 4);
	assert_true(img.fault_exit != img.fault_begin);
}

static void test_place_refuses_small_room(void **state)
{
	(void)state;
	struct ipa_image copy = img;
	uint8_t small[16];
	assert_int_equal(ipa_image_place(&copy, 0x1000, small, sizeof(small)),
			 -ENOSPC);
	assert_non_null(strstr(copy.error, "no room"));
}

static void test_open_refuses_garbage(void **state)
{
	(void)state;
	struct ipa_image bad;
	static const char junk[64] = "\177ELF but not really";
	assert_true(ipa_image_open_file(&bad, junk, sizeof(junk)) < 0);
	assert_non_null(strstr(bad.error, "in-process collector image"));
}

static void test_condition(void **state)
{
	(void)state;
	struct prog b;
	struct hit_env e;
	static const uint8_t cond[] = { REG(5), CONST8(42), EQUAL, END };
	struct ipa_program *p = prog_init(&b, 0);

	prog_cond(&b, cond, sizeof(cond));
	env_init(&e, p);
	e.regs[5] = 41;
	assert_int_equal(collect(&e.hit), IPA_SKIP);
	e.regs[5] = 42;
	assert_int_equal(collect(&e.hit), IPA_RECORD);
	assert_int_equal(e.counters.hits, 2);
	assert_int_equal(e.counters.skipped_cond, 1);
	assert_int_equal(e.counters.taken, 1);
}

static void test_condition_error_traps(void **state)
{
	(void)state;
	struct prog b;
	struct hit_env e;
	/* 1 / reg5 with reg5 = 0: the agent must give gdb its message. */
	static const uint8_t cond[] = { CONST8(1), REG(5), DIV_SIGNED, END };
	struct ipa_program *p = prog_init(&b, 0);

	prog_cond(&b, cond, sizeof(cond));
	env_init(&e, p);
	assert_int_equal(collect(&e.hit), IPA_TRAP);
	assert_int_equal(e.counters.taken, 0);
}

static void test_memory_by_register(void **state)
{
	(void)state;
	struct prog b;
	struct hit_env e;
	static const char word[] = "in-process collector";
	struct ipa_program *p = prog_init(&b, 2);

	p->actions[0] = (struct ipa_action){ .kind = IPA_ACT_MEM, .basereg = 7,
					     .offset = 3, .len = 8 };
	p->actions[1] = (struct ipa_action){ .kind = IPA_ACT_MEM,
					     .basereg = IPA_NO_REG,
					     .offset = (uintptr_t)word,
					     .len = sizeof(word) };
	env_init(&e, p);
	e.regs[7] = (uintptr_t)word;
	assert_int_equal(collect(&e.hit), IPA_RECORD);
	const struct ipa_mem_block *m = (const void *)block(&e, 0);
	assert_non_null(m);
	assert_int_equal(m->h.kind, IPA_BLK_MEM);
	assert_int_equal(m->addr, (uintptr_t)word + 3);
	assert_int_equal(m->len, 8);
	assert_int_equal(m->avail, 8);
	assert_memory_equal(m->bytes, "process ", 8);
	m = (const void *)block(&e, 1);
	assert_non_null(m);
	assert_int_equal(m->avail, sizeof(word));
	assert_string_equal((const char *)m->bytes, word);
	assert_null(block(&e, 2));
}

static void test_unreadable_memory(void **state)
{
	(void)state;
	struct prog b;
	struct hit_env e;
	/* The last 5 bytes of a page, then a page that is not there. */
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *two = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(two != MAP_FAILED);
	memcpy(two + pg - 5, "edge!", 5);
	assert_int_equal(munmap(two + pg, pg), 0);

	struct ipa_program *p = prog_init(&b, 3);
	p->actions[0] = (struct ipa_action){ .kind = IPA_ACT_MEM, .basereg = 0,
					     .offset = 0, .len = 16 };
	p->actions[1] = (struct ipa_action){ .kind = IPA_ACT_MEM,
					     .basereg = IPA_NO_REG,
					     .offset = 8, .len = 8 };
	p->actions[2] = (struct ipa_action){ .kind = IPA_ACT_MEM, .basereg = 1,
					     .offset = 0, .len = 4 };
	env_init(&e, p);
	e.regs[0] = (uintptr_t)(two + pg - 5);
	e.regs[1] = (uintptr_t)"ok!";
	arm_fixup();
	assert_int_equal(collect(&e.hit), IPA_RECORD);
	assert_int_equal(fixups, 2);
	const struct ipa_mem_block *m = (const void *)block(&e, 0);
	assert_int_equal(m->len, 16);
	assert_int_equal(m->avail, 5);
	assert_memory_equal(m->bytes, "edge!", 5);
	m = (const void *)block(&e, 1);
	assert_int_equal(m->avail, 0);
	/* The hit went on past both faults. */
	m = (const void *)block(&e, 2);
	assert_int_equal(m->avail, 4);
	assert_string_equal((const char *)m->bytes, "ok!");
	munmap(two, pg);
}

static void test_expression_deref_and_string(void **state)
{
	(void)state;
	struct prog b;
	struct hit_env e;
	static const char name[] = "order-17";
	struct { uint64_t id; const char *name; } o = { 17, name };
	/* trace_quick 8 at reg3 (o->id), then tracenz of o->name (<= 64). */
	static const uint8_t expr[] = {
		REG(3), TRACE_QUICK(8), POP,
		REG(3), CONST8(8), ADD, REF64, CONST8(64), TRACENZ, END,
	};
	struct ipa_program *p = prog_init(&b, 1);
	p->actions[0] = (struct ipa_action){ .kind = IPA_ACT_EXPR,
					     .len = sizeof(expr) };
	p->actions[0].offset = prog_code(&b, expr, sizeof(expr));
	env_init(&e, p);
	e.regs[3] = (uintptr_t)&o;
	assert_int_equal(collect(&e.hit), IPA_RECORD);
	const struct ipa_mem_block *m = (const void *)block(&e, 0);
	assert_int_equal(m->addr, (uintptr_t)&o);
	assert_int_equal(m->avail, 8);
	assert_memory_equal(m->bytes, &o.id, 8);
	m = (const void *)block(&e, 1);
	assert_int_equal(m->addr, (uintptr_t)name);
	assert_int_equal(m->len, sizeof(name));	/* up to the NUL */
	assert_string_equal((const char *)m->bytes, name);
}

static void test_expression_bad_pointer_traps(void **state)
{
	(void)state;
	struct prog b;
	struct hit_env e;
	/* *(reg3): the deref itself fails, as the agent would stop on. */
	static const uint8_t expr[] = { REG(3), REF64, CONST8(8), TRACENZ, END };
	struct ipa_program *p = prog_init(&b, 1);
	p->actions[0] = (struct ipa_action){ .kind = IPA_ACT_EXPR,
					     .len = sizeof(expr) };
	p->actions[0].offset = prog_code(&b, expr, sizeof(expr));
	env_init(&e, p);
	e.regs[3] = 16;	/* the zero page */
	arm_fixup();
	assert_int_equal(collect(&e.hit), IPA_TRAP);
	assert_int_equal(fixups, 1);
	assert_int_equal(e.counters.taken, 0);
	assert_int_equal(e.hit.out_len, 0);
}

static void test_tsv(void **state)
{
	(void)state;
	struct prog b;
	struct hit_env e;
	/* $count = $count + 1, then a V block of it. */
	static const uint8_t expr[] = { GETV(3), CONST8(1), ADD, SETV(3), POP, END };
	struct ipa_program *p = prog_init(&b, 2);
	p->actions[0] = (struct ipa_action){ .kind = IPA_ACT_EXPR,
					     .len = sizeof(expr) };
	p->actions[0].offset = prog_code(&b, expr, sizeof(expr));
	p->actions[1] = (struct ipa_action){ .kind = IPA_ACT_TSV, .offset = 3 };
	env_init(&e, p);
	e.tsvs.count = 1;
	e.tsvs.v[0].number = 3;
	e.tsvs.v[0].value = 40;
	assert_int_equal(collect(&e.hit), IPA_RECORD);
	assert_int_equal(collect(&e.hit), IPA_RECORD);
	assert_int_equal(e.tsvs.v[0].value, 42);
	const struct ipa_tsv_block *v = (const void *)block(&e, 0);
	assert_int_equal(v->h.kind, IPA_BLK_TSV);
	assert_int_equal(v->number, 3);
	assert_int_equal(v->value, 42);
}

static void test_truncated_record(void **state)
{
	(void)state;
	struct prog b;
	struct hit_env e;
	static uint8_t big[4096];
	struct ipa_program *p = prog_init(&b, 1);
	p->actions[0] = (struct ipa_action){ .kind = IPA_ACT_MEM,
					     .basereg = IPA_NO_REG,
					     .offset = (uintptr_t)big,
					     .len = sizeof(big) };
	env_init(&e, p);
	/* Too big for the record: the agent takes the hit whole. */
	assert_int_equal(collect(&e.hit), IPA_TRAP);
	assert_int_equal(e.hit.out_len, 0);
	assert_int_equal(e.counters.truncated, 1);
	assert_int_equal(e.counters.taken, 0);
}

/*
 * A pad's site of two tracepoints (ipa_collect_site, ipa_site_wants, as
 * the pad calls them): tp 2 collects 8 bytes when reg 5 == 1, tp 3 the
 * registers when reg 5 == 2.  Neither: no record wanted, both counted
 * skipped; one: its group alone, with its blocks.
 */
static void test_site(void **state)
{
	(void)state;
	static uint64_t value = 0x1122334455667788ull;
	static struct {
		struct ipa_site site;
		struct ipa_counters c[2] __attribute__((aligned(64)));
		struct prog p[2];
	} area __attribute__((aligned(64)));
	const uint8_t cond2[] = { REG(5), CONST8(1), EQUAL, END };
	const uint8_t cond3[] = { REG(5), CONST8(2), EQUAL, END };
	uint64_t regs[34] = { 0 };
	uint8_t out[512] __attribute__((aligned(8)));
	int (*site_fn)(const struct ipa_site *, const uint64_t *, uint32_t, uint8_t *,
		       uint32_t) = (void *)(uintptr_t)(base + img.collect_site);
	int (*wants)(const struct ipa_site *, const uint64_t *, uint32_t) =
		(void *)(uintptr_t)(base + img.site_wants);

	memset(&area, 0, sizeof(area));
	struct ipa_program *a = prog_init(&area.p[0], 1);
	a->tp_number = 2;
	a->actions[0] = (struct ipa_action){ .kind = IPA_ACT_MEM, .basereg = IPA_NO_REG,
					     .offset = (uintptr_t)&value, .len = 8 };
	prog_cond(&area.p[0], cond2, sizeof(cond2));
	struct ipa_program *b = prog_init(&area.p[1], 0);
	b->tp_number = 3;
	b->flags = IPA_PROG_REGS;
	prog_cond(&area.p[1], cond3, sizeof(cond3));
	area.site.version = IPA_ABI_VERSION;
	area.site.nprogs = 2;
	area.site.base = (uintptr_t)&area;
	for (int i = 0; i < 2; i++) {
		area.site.prog_off[i] = (uint32_t)((uint8_t *)&area.p[i] - (uint8_t *)&area);
		area.p[i].u.p.counters_off = (uint32_t)((uint8_t *)&area.c[i] - (uint8_t *)&area);
	}

	assert_int_equal(wants(&area.site, regs, 34), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(area.c[i].hits, 1);
		assert_int_equal(area.c[i].skipped_cond, 1);
	}

	regs[5] = 1;
	assert_int_equal(wants(&area.site, regs, 34), 1);
	assert_int_equal(site_fn(&area.site, regs, 34, out, sizeof(out)), IPA_RECORD);
	const struct ipa_site_out *so = (const void *)out;
	assert_int_equal(so->verdict, IPA_RECORD);
	assert_int_equal(so->ngroups, 1);
	const struct ipa_group *g = (const void *)(so + 1);
	assert_int_equal(g->tp_number, 2);
	assert_int_equal(g->flags, 0);
	assert_int_equal(g->len, sizeof(struct ipa_mem_block) + 8);
	assert_int_equal(so->len, sizeof(*g) + g->len);
	const struct ipa_mem_block *m = (const void *)(g + 1);
	assert_int_equal(m->h.kind, IPA_BLK_MEM);
	assert_int_equal(m->addr, (uintptr_t)&value);
	assert_int_equal(m->avail, 8);
	assert_memory_equal(m->bytes, &value, 8);

	regs[5] = 2;
	assert_int_equal(site_fn(&area.site, regs, 34, out, sizeof(out)), IPA_RECORD);
	assert_int_equal(so->ngroups, 1);
	assert_int_equal(g->tp_number, 3);
	assert_int_equal(g->flags, IPA_PROG_REGS);
	assert_int_equal(g->len, 0);
	assert_int_equal(area.c[0].taken, 1);
	assert_int_equal(area.c[1].taken, 1);
}

/* Pass count: exactly N hits record under 8 racing threads, one of them
 * told that the count is reached. */
#define PASS_THREADS 8
#define PASS_HITS 20000
#define PASS_COUNT 50000

static struct prog pass_prog;
static struct ipa_counters pass_counters;
static uint64_t pass_recorded[PASS_THREADS], pass_stops[PASS_THREADS];

static void *pass_worker(void *arg)
{
	long t = (long)arg;
	uint64_t regs[34] = { 0 };
	uint8_t out[256] __attribute__((aligned(8)));
	struct ipa_hit hit = { .prog = &pass_prog.u.p, .counters = &pass_counters,
			       .regs = regs, .nregs = 34, .out = out,
			       .out_size = sizeof(out) };
	for (int i = 0; i < PASS_HITS; i++) {
		int v = collect(&hit);
		if (v == IPA_RECORD || v == IPA_RECORD_STOP)
			pass_recorded[t]++;
		if (v == IPA_RECORD_STOP)
			pass_stops[t]++;
	}
	return NULL;
}

static void test_pass_count_threads(void **state)
{
	(void)state;
	pthread_t th[PASS_THREADS];
	uint64_t rec = 0, stops = 0;

	prog_init(&pass_prog, 0)->pass_count = PASS_COUNT;
	for (long t = 0; t < PASS_THREADS; t++)
		assert_int_equal(pthread_create(&th[t], NULL, pass_worker, (void *)t), 0);
	for (int t = 0; t < PASS_THREADS; t++) {
		pthread_join(th[t], NULL);
		rec += pass_recorded[t];
		stops += pass_stops[t];
	}
	assert_int_equal(rec, PASS_COUNT);
	assert_int_equal(stops, 1);
	assert_int_equal(pass_counters.hits, PASS_THREADS * PASS_HITS);
	assert_int_equal(pass_counters.over_pass, PASS_THREADS * PASS_HITS - PASS_COUNT);
	assert_int_equal(pass_counters.taken, PASS_COUNT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_image_symbols),
		cmocka_unit_test(test_place_refuses_small_room),
		cmocka_unit_test(test_open_refuses_garbage),
		cmocka_unit_test(test_condition),
		cmocka_unit_test(test_condition_error_traps),
		cmocka_unit_test(test_memory_by_register),
		cmocka_unit_test(test_unreadable_memory),
		cmocka_unit_test(test_expression_deref_and_string),
		cmocka_unit_test(test_expression_bad_pointer_traps),
		cmocka_unit_test(test_tsv),
		cmocka_unit_test(test_truncated_record),
		cmocka_unit_test(test_site),
		cmocka_unit_test(test_pass_count_threads),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
