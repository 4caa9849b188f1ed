/*
 * retpad-exec.h - the harness the native return probe tests share
 * (x86_64-retpad-exec.c, aarch64-retpad-exec.c, arm-retpad-exec.c): the
 * area, ring and code
 * mappings with the trampoline (emit_ret_exit), entry pads, the ring's
 * consumer as the agent's drain takes records, the calling thread's
 * depth, a case run in its own child, the deep and full-ring cases and
 * the threads case's producers.
 *
 * Included once, after the test defines: OFF_SEQ, OFF_BASES, OFF_FRAME,
 * OFF_BLOCKS, RECORD_SHIFT, RING_OFF (the agent's record layout), NT and
 * PER (the threads case: threads, calls each), ARCH_OPS (its arch_ops),
 * struct rec (a record as the test reads it) and the hooks
 *   static void trap_past(void *ctx);    on past the trampoline's trap
 *                                        in a SIGTRAP's context
 *   static void child_init(void);        in each case's child, first
 *   static const char *run_note(void);   said after each case's name
 * struct rec has at least tag, ticks, ret (uint64_t), tid and magic
 * (uint32_t) and pc.  Optional: PAD_ADDR(at, fn), the address to call a
 * pad at built at `at` for `fn` (32-bit ARM: with fn's Thumb bit; else
 * `at`); REC_MAGIC, the descriptor's magic the records hold (else
 * RET_REC_MAGIC_VALUE); RING_PREFETCH, the records ahead the trampoline
 * prefetches (arch_pad_ring.prefetch, else 0).  After the inclusion the test defines
 * take_arch() (a record's registers into its struct rec), check_rec(),
 * rec_arg() and rec_value() (the argument of f's call a record is the
 * return of, and what it returned) and setup() (ring_map, then its
 * pads).  Addresses go through uintptr_t: the harness builds for 32-bit
 * ARM too.
 */
#ifndef PROBE_TESTS_RETPAD_EXEC_H
#define PROBE_TESTS_RETPAD_EXEC_H

#ifndef PAD_ADDR
#define PAD_ADDR(at, fn) (at)
#endif
#ifndef REC_MAGIC
#define REC_MAGIC RET_REC_MAGIC_VALUE
#endif
#ifndef RING_PREFETCH
#define RING_PREFETCH 0
#endif

static const struct arch_ops *ops = ARCH_OPS;
static int failures;

static uint8_t *area, *ring, *code;
static uint8_t *hist;	/* the trampoline's histograms (ops->ret_hist), none in use */
static unsigned int nrecords;
static uint64_t tramp, ring_pos;
static uint64_t trap_at;	/* the trampoline's wait for room (ring full) */
static size_t tramp_len;	/* the trampoline's bytes at `code` */
static volatile long traps;

typedef long (*fn_t)(long);
/* The entry pads of f(i) = 3i + 1, of r (recursion) and j (longjmp). */
static fn_t pf, pr, pj;
static const uint64_t f_tag = 0x1111, r_tag = 0x2222, j_tag = 0x3333;

static void take_arch(struct rec *out, const uint8_t *rec);
static void check_rec(const char *c, const struct rec *x, uint64_t tag, uint64_t ret);
static uint64_t rec_arg(const struct rec *x);
static uint64_t rec_value(const struct rec *x);

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("FAIL: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	failures++;
}

static uint32_t tid_now(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

/* The agent's thread id table as the pads see it (x86-64 without
 * fsgsbase; others ignore it): no entries, but its words after them,
 * PAD_TID_NOTLS (nonzero: the entry pads push nothing) and the gs base
 * the trampoline's records with the image take (PAD_TID_GS_OK, _GS). */
static uint8_t tid_words[PAD_TID_GS + 8] __attribute__((aligned(64)));
#define notls_word (*(uint32_t *)(tid_words + PAD_TID_NOTLS))
#define TABLE_GS 0x5a5a5a5a00002000ull

/* One entry pad for `fn`, tagged `tag`, at `at`: its address. */
static fn_t make_pad(uint8_t *at, size_t size, const void *fn, uint64_t tag,
		     bool fsgsbase)
{
	size_t n = 0, fb = 0, done = 0;
	int m;
	struct arch_ret_pad rp = { .area = (uintptr_t)area, .tramp = tramp,
				   .func_run = tag, .tp_read = fsgsbase,
				   .tp_notls = (uintptr_t)&notls_word };

	if ((m = ops->emit_save_regs(at, size, (uintptr_t)fn)) < 0)
		exit(99);
	n = (size_t)m;
	if ((m = ops->emit_ret_entry(at + n, size - n, &rp, &fb, &done)) < 0)
		exit(99);
	fb += n;
	done += n;
	n += (size_t)m;
	if (ops->patch_branch(at, fb, n) < 0 || ops->patch_branch(at, done, n) < 0)
		exit(99);
	if ((m = ops->emit_restore_regs(at + n, size - n)) < 0)
		exit(99);
	n += (size_t)m;
	if ((m = ops->emit_jump_abs(at + n, size - n, (uintptr_t)fn)) < 0)
		exit(99);
	n += (size_t)m;
	__builtin___clear_cache((char *)at, (char *)at + n);
	return (fn_t)(void *)PAD_ADDR(at, fn);
}

/*
 * The area (return probes on, the records' image as `image` says), a
 * ring of `records` records, all free, and `code_size` bytes of RWX
 * code with the trampoline in its first 4 KiB (image_form, the arch's
 * form of the image, and fsgsbase: the x86-64 variants).  No RWX memory:
 * exit 77.
 */
static void ring_map(unsigned int records, size_t code_size, bool image,
		     unsigned int image_form, bool fsgsbase)
{
	size_t ring_size = RING_OFF + ((size_t)records << RECORD_SHIFT);
	size_t tr_off = 0;
	int m;

	nrecords = records;
	area = mmap(NULL, RET_PAD_AREA_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ring = mmap(NULL, ring_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	code = mmap(NULL, code_size, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	hist = mmap(NULL, RET_HIST_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	if (area == MAP_FAILED || ring == MAP_FAILED || hist == MAP_FAILED)
		exit(99);
	if (code == MAP_FAILED) {
		printf("SKIP: no RWX memory\n");
		exit(77);
	}
	*(uint64_t *)(area + RET_PAD_ON) = 1;
	*(uint64_t *)(area + RET_PAD_IMAGE) = image;
	memset(tid_words, 0, sizeof(tid_words));
	*(uint32_t *)(tid_words + PAD_TID_GS_OK) = 1;
	*(uint64_t *)(tid_words + PAD_TID_GS) = TABLE_GS;
	for (unsigned int i = 0; i < records; i++)
		*(uint64_t *)(ring + RING_OFF + ((size_t)i << RECORD_SHIFT) + OFF_SEQ) = i;
	tramp = (uintptr_t)code;
	struct arch_ret_pad rp = {
		.area = (uintptr_t)area, .tramp = tramp, .tp_read = fsgsbase,
		.hist = ops->ret_hist ? (uintptr_t)hist : 0,
		.ring = { .ring = (uintptr_t)ring, .off_records = RING_OFF,
			  .record_shift = RECORD_SHIFT, .nrecords = records,
			  .off_seq = OFF_SEQ, .off_bases = OFF_BASES, .off_frame = OFF_FRAME,
			  .image_form = image_form, .tp_read = fsgsbase,
			  .prefetch = RING_PREFETCH,
			  .tid_table = (uintptr_t)tid_words,
			  .off_blocks = OFF_BLOCKS, .blocks_size = 1024 },
	};
	if ((m = ops->emit_ret_exit(code, 4096, &rp, &tr_off)) < 0)
		exit(99);
	trap_at = tramp + tr_off;
	tramp_len = (size_t)m;
	__builtin___clear_cache((char *)code, (char *)code + m);
}

/* The next record, as the agent's drain takes it (then ring_done);
 * NULL: none yet. */
static const uint8_t *ring_next(void)
{
	uint8_t *rec = ring + RING_OFF + ((size_t)(ring_pos & (nrecords - 1)) << RECORD_SHIFT);
	uint64_t head = __atomic_load_n((uint64_t *)ring, __ATOMIC_ACQUIRE);

	if (ring_pos >= head ||
	    __atomic_load_n((uint64_t *)(rec + OFF_SEQ), __ATOMIC_ACQUIRE) != ring_pos + 1)
		return NULL;
	return rec;
}

/* ring_next's record is read: free for the producers again. */
static void ring_done(const uint8_t *rec)
{
	__atomic_store_n((uint64_t *)(rec + OFF_SEQ), ring_pos + nrecords, __ATOMIC_RELEASE);
	ring_pos++;
}

/* The next record, as the agent's drain takes it (its registers by
 * take_arch); false: none yet. */
static bool take(struct rec *out)
{
	const uint8_t *rec = ring_next();

	if (!rec)
		return false;
	const uint8_t *d = rec + OFF_BLOCKS;
	memcpy(&out->tag, d + RET_REC_FUNC, 8);
	memcpy(&out->ticks, d + RET_REC_TICKS, 8);
	memcpy(&out->tid, d + RET_REC_TID, 4);
	memcpy(&out->magic, d + RET_REC_MAGIC, 4);
	memcpy(&out->ret, d + RET_REC_RET, 8);
	take_arch(out, rec);
	ring_done(rec);
	return true;
}

/* The calling thread's depth in the area (its slot found by its tid). */
static uint32_t depth(void)
{
	for (unsigned int i = 0; i < RET_PAD_SLOTS; i++) {
		uint8_t *s = area + 4096 + (size_t)i * RET_PAD_SLOT_SIZE;
		if (*(uint64_t *)s && *(uint32_t *)(s + 8) == tid_now())
			return *(uint32_t *)(s + 12);
	}
	return 0;
}

/* r(n): n calls of itself through its pad; j(n): n of itself, then a
 * longjmp to env out of them all. */
__attribute__((noinline)) static long r(long n)
{
	return n ? pr(n - 1) + 1 : 0;
}

static jmp_buf env;

/* (unused where the test has no longjmp case) */
__attribute__((noinline, unused)) static long j(long n)
{
	if (!n)
		longjmp(env, 1);
	return pj(n - 1) + 1;
}

/* r(200): 126 entries pushed, 75 counted as fallbacks (the depth
 * limit), the 126 outermost returns recorded in order, no orphan. */
static void case_deep(void)
{
	struct rec x;
	long v = pr(200);
	uint64_t k = 75;

	if (v != 200)
		fail("deep: r(200) = %ld", v);
	while (take(&x)) {
		check_rec("deep", &x, r_tag, k);
		k++;
	}
	if (k != 201)
		fail("deep: records up to %llu, want 75..200", (unsigned long long)k - 1);
	uint64_t fb = *(uint64_t *)(area + RET_PAD_FALLBACKS);
	if (fb != 75)
		fail("deep: %llu fallbacks, want 75", (unsigned long long)fb);
	uint64_t orphans = *(uint64_t *)(area + RET_PAD_ORPHANS);
	if (orphans)
		fail("deep: %llu orphans", (unsigned long long)orphans);
}

/* --- full: the trampoline traps when the ring is full ------------------ */
static struct rec drained[64];
static int ndrained;

static void on_trap(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)si;
	traps++;
	while (ndrained < 64 && take(&drained[ndrained]))
		ndrained++;
	trap_past(ctx);
}

static void on_trap_wait(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)si;
	__atomic_add_fetch(&traps, 1, __ATOMIC_RELAXED);
	trap_past(ctx);
}

static void on_sigtrap(void (*fn)(int, siginfo_t *, void *))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGTRAP, &sa, NULL);
}

/* 40 calls into an 8-record ring nobody drains meanwhile: the
 * trampoline traps when it is full, the handler drains, every return
 * is recorded, and each wait is counted (RET_PAD_LOST). */
static void case_full(void)
{
	on_sigtrap(on_trap);
	for (long i = 0; i < 40; i++)
		if (pf(i) != 3 * i + 1)
			fail("full: f(%ld)", i);
	while (ndrained < 64 && take(&drained[ndrained]))
		ndrained++;
	if (ndrained != 40)
		fail("full: %d records, want 40", ndrained);
	for (int i = 0; i < ndrained; i++)
		check_rec("full", &drained[i], f_tag, 3 * (uint64_t)i + 1);
	if (!traps)
		fail("full: the trampoline never waited for room");
	uint64_t lost = *(uint64_t *)(area + RET_PAD_LOST);
	if (lost != (uint64_t)traps)
		fail("full: %llu waits counted, %ld traps", (unsigned long long)lost, traps);
	printf("  full: %ld waits for room\n", traps);
}

/* --- threads: NT producers of PER calls each --------------------------- */
static volatile int producers_left;
static uint32_t tids[NT];
static uint8_t *seen;

static void *producer(void *arg)
{
	int t = (int)(intptr_t)arg;

	tids[t] = tid_now();
	for (long i = 0; i < PER; i++)
		if (pf(t * PER + i) != 3 * (t * PER + i) + 1)
			fail("threads: a wrong return value");
	__atomic_sub_fetch(&producers_left, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Starts the producers (a full ring: the consumer drains it). */
static void producers_start(pthread_t th[NT])
{
	on_sigtrap(on_trap_wait);
	seen = calloc(NT * PER, 1);
	producers_left = NT;
	for (int t = 0; t < NT; t++)
		pthread_create(&th[t], NULL, producer, (void *)(intptr_t)t);
}

/* The threads case: the producers started, this thread drains the ring
 * until they are done; each record is one call's (thread, i) exactly
 * once, on its thread, of f's pad, whole. */
static void threads_drain(void)
{
	pthread_t th[NT];
	struct rec x;
	long n = 0;

	producers_start(th);
	for (;;) {
		bool last = !__atomic_load_n(&producers_left, __ATOMIC_ACQUIRE);
		bool any = false;
		while (take(&x)) {
			uint64_t v = rec_arg(&x);
			any = true;
			if (v >= NT * PER || rec_value(&x) != 3 * v + 1 || x.tag != f_tag ||
			    x.pc != tramp || x.magic != REC_MAGIC || x.tid != tids[v / PER] ||
			    seen[v]++)
				fail("threads: record of f(%llu) = %llu, tag %#llx, pc %#llx, "
				     "magic %#x, tid %u", (unsigned long long)v,
				     (unsigned long long)rec_value(&x), (unsigned long long)x.tag,
				     (unsigned long long)x.pc, x.magic, x.tid);
			n++;
		}
		if (last && !any)
			break;	/* every producer's records were published */
	}
	for (int t = 0; t < NT; t++)
		pthread_join(th[t], NULL);
	if (n != NT * PER)
		fail("threads: %ld records, want %d", n, NT * PER);
}

/* --- the trampoline's own histograms (arch_ops.ret_hist) -----------------
 * hist        r's in the second of two histograms in use, f's in none:
 *             r(10) adds 11 returns to it and writes no record, f(i)
 *             still records; the buckets agree with the sum (1 ns a
 *             tick); then with f's too and 0 ns a tick: 100 returns of
 *             f, all in ZERO
 * hist-threads  8 threads x 5000 calls of f, counted in f's histogram:
 *             exactly 40000, and no record
 * An arch lists them where its trampoline keeps histograms. */

/* Histogram `slot` of the page in use for `func`; n in use, `mult` ns
 * per tick (32.32). */
__attribute__((unused)) static uint64_t *hist_at(int slot)
{
	return (uint64_t *)(hist + RET_HIST_FIRST + (size_t)slot * RET_HIST_SIZE);
}

__attribute__((unused)) static void hist_use(int slot, uint64_t func)
{
	memset(hist_at(slot), 0, RET_HIST_SIZE);
	hist_at(slot)[RET_HIST_FUNC / 8] = func;
}

__attribute__((unused)) static void hist_on(uint32_t n, uint64_t mult)
{
	*(uint64_t *)(hist + RET_HIST_MULT) = mult;
	__atomic_store_n((uint32_t *)(hist + RET_HIST_N), n, __ATOMIC_RELEASE);
}

/* The histogram's count (ZERO and every bucket); checks that the sum
 * lies within what its buckets allow. */
__attribute__((unused)) static uint64_t hist_count(const char *c, int slot)
{
	const uint64_t *h = hist_at(slot);
	uint64_t n = h[RET_HIST_ZERO / 8], lo = 0, hi = 0, sum = h[RET_HIST_SUM / 8];

	for (int k = 0; k < RET_HIST_BUCKETS; k++) {
		uint64_t b = h[RET_HIST_B / 8 + k];
		n += b;
		lo += b << k;
		hi += (b << k) * 2 - b;		/* the bucket's largest: 2^(k+1) - 1 */
	}
	if (sum < lo || sum > hi)
		fail("%s: the sum %llu lies outside the buckets' [%llu, %llu]", c,
		     (unsigned long long)sum, (unsigned long long)lo, (unsigned long long)hi);
	return n;
}

__attribute__((unused)) static void case_hist(void)
{
	struct rec x;
	uint64_t n;

	hist_use(0, j_tag);
	hist_use(1, r_tag);
	hist_on(2, 1ull << 32);
	if (pr(10) != 10)
		fail("hist: r(10)");
	if (take(&x))
		fail("hist: a record of r, whose returns its histogram counts");
	if ((n = hist_count("hist", 1)) != 11)
		fail("hist: r's histogram holds %llu returns, want 11", (unsigned long long)n);
	if (hist_at(1)[RET_HIST_SUM / 8] == 0)
		fail("hist: r's returns took 0 ns together");
	if (hist_count("hist", 0) != 0)
		fail("hist: j's histogram counted r's returns");
	for (long i = 0; i < 10; i++) {
		if (pf(i) != 3 * i + 1)
			fail("hist: f(%ld)", i);
		if (!take(&x))
			fail("hist: no record of f(%ld), which no histogram has", i);
		else
			check_rec("hist", &x, f_tag, 3 * (uint64_t)i + 1);
	}
	if (depth() != 0)
		fail("hist: %u entries left on the thread's stack", depth());
	/* f's too, at 0 ns a tick: every return in ZERO. */
	hist_use(2, f_tag);
	hist_on(3, 0);
	for (long i = 0; i < 100; i++)
		if (pf(i) != 3 * i + 1)
			fail("hist: f(%ld) counted", i);
	if (take(&x))
		fail("hist: a record of f, whose returns its histogram counts");
	if (hist_at(2)[RET_HIST_ZERO / 8] != 100 || hist_count("hist", 2) != 100 ||
	    hist_at(2)[RET_HIST_SUM / 8] != 0)
		fail("hist: f's histogram: %llu in ZERO of %llu, sum %llu; want 100, 100, 0",
		     (unsigned long long)hist_at(2)[RET_HIST_ZERO / 8],
		     (unsigned long long)hist_count("hist", 2),
		     (unsigned long long)hist_at(2)[RET_HIST_SUM / 8]);
	/* Out of use: f records again. */
	hist_on(0, 1ull << 32);
	if (pf(1) != 4 || !take(&x))
		fail("hist: no record of f with no histogram in use");
}

__attribute__((unused)) static void *hist_producer(void *arg)
{
	int t = (int)(intptr_t)arg;

	for (long i = 0; i < PER; i++)
		if (pf(t * PER + i) != 3 * (t * PER + i) + 1)
			fail("hist-threads: a wrong return value");
	return NULL;
}

__attribute__((unused)) static void case_hist_threads(void)
{
	pthread_t th[NT];
	struct rec x;
	uint64_t n;

	hist_use(0, f_tag);
	hist_on(1, 1ull << 32);
	for (int t = 0; t < NT; t++)
		pthread_create(&th[t], NULL, hist_producer, (void *)(intptr_t)t);
	for (int t = 0; t < NT; t++)
		pthread_join(th[t], NULL);
	if ((n = hist_count("hist-threads", 0)) != NT * PER)
		fail("hist-threads: %llu returns counted, want %d", (unsigned long long)n,
		     NT * PER);
	if (take(&x))
		fail("hist-threads: a record of f, whose returns its histogram counts");
}

/* --- a case in its own child, under an alarm --------------------------- */
static void setup(unsigned int records);

static int run(const char *name, void (*fn)(void), unsigned int records)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		child_init();
		alarm(180);
		setup(records);
		fn();
		exit(failures ? 1 : 0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 99;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		return 77;
	bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
	printf("%s: %s%s", ok ? "ok" : "FAIL", name, run_note());
	if (WIFSIGNALED(st))
		printf(": killed by signal %d%s", WTERMSIG(st),
		       WTERMSIG(st) == SIGALRM ? " (timeout)" : "");
	printf("\n");
	return ok ? 0 : 1;
}

struct retpad_case {
	const char *name;
	void (*fn)(void);
	unsigned int records;	/* the ring's */
};

/* Runs the cases in order: 77 (no RWX memory) or 99 from one ends the
 * run with it; else 0 when all passed, 1. */
static int run_cases(const struct retpad_case *cases, size_t n)
{
	int bad = 0, r;

	for (size_t i = 0; i < n; i++) {
		r = run(cases[i].name, cases[i].fn, cases[i].records);
		if (r == 77 || r == 99)
			return r;
		bad |= r;
	}
	return bad;
}

#endif
