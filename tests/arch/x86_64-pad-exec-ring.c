/*
 * x86_64-pad-exec-ring.c - the jump pad test's in-process collector
 * cases: emit_pad_collect between the save and the hand-off writes
 * records into a ring that the cases consume as the agent does (see
 * x86_64-pad-exec.c for the whole test).
 */
#include "config.h"

#include <asm/prctl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "x86_64-pad-exec.h"

/* ---- The in-process collector: a ring of records, no stop. ---- */

static uint8_t *record_at(uint64_t pos)
{
	return ring_mem + OFF_RECORDS +
	       ((size_t)(pos & (cfg.r.nrecords - 1)) << ENTRY_SHIFT);
}

static uint64_t *seq_of(uint8_t *rec)
{
	return (uint64_t *)(rec + OFF_SEQ);
}

static uint64_t ring_head(void)
{
	return __atomic_load_n((uint64_t *)ring_mem, __ATOMIC_ACQUIRE);
}

/* A record's data poisoned as reset_table poisons an entry; seq untouched. */
static void poison_record(uint8_t *e)
{
	memset(e, 0xee, IMAGE_SIZE);
	*(uint64_t *)(e + IMG_XSTATE_BV) = 0;
	((uint64_t *)(e + OFF_BASES))[0] = BASES_UNTOUCHED;
	((uint64_t *)(e + OFF_BASES))[1] = BASES_UNTOUCHED;
	memset(e + OFF_FRAME, 0, 8 * NFRAME);
}

/* An empty ring of `n` records: head 0, record i free for position i. */
static void reset_ring(unsigned int n)
{
	memset(ring_mem, 0, OFF_RECORDS + ((size_t)RING_MAX_RECORDS << ENTRY_SHIFT));
	for (unsigned int i = 0; i < n; i++) {
		uint8_t *e = ring_mem + OFF_RECORDS + ((size_t)i << ENTRY_SHIFT);

		poison_record(e);
		*seq_of(e) = i;
	}
}

static struct arch_pad_ring ring_of(unsigned int nrecords, bool xsave)
{
	struct arch_pad_ring r = {
		.ring = A(ring_mem), .off_records = OFF_RECORDS,
		.record_shift = ENTRY_SHIFT, .nrecords = nrecords,
		.off_seq = OFF_SEQ, .off_bases = OFF_BASES,
		.off_frame = OFF_FRAME, .image_form = image_form_of(xsave, false),
		.tp_read = cpu.fsgsbase,
		.image = true,
	};

	return r;
}

/*
 * The agent's side of the ring: the record of position `pos`, if it is
 * published (seq == pos + 1), copied into *h (fs and gs: what the
 * producing thread had), poisoned and handed back (seq = pos + nrecords).
 */
static bool ring_take(uint64_t pos, struct hit *h, uint64_t fs, uint64_t gs)
{
	uint8_t *e = record_at(pos);

	if (__atomic_load_n(seq_of(e), __ATOMIC_ACQUIRE) != pos + 1)
		return false;
	memset(h, 0, sizeof(*h));
	memcpy(h->frame, e + OFF_FRAME, sizeof(h->frame));
	memcpy(h->image, e, IMAGE_SIZE);
	memcpy(h->bases, e + OFF_BASES, sizeof(h->bases));
	h->from_ring = true;
	h->fs = fs;
	h->gs = gs;
	poison_record(e);
	__atomic_store_n(seq_of(e), pos + cfg.r.nrecords, __ATOMIC_RELEASE);
	return true;
}

/* Consumes `n` records from *pos on, checked against st[0 .. n). */
static void ring_consume(const struct fn_desc *f, const struct call_state *st,
			 unsigned int n, uint64_t *pos, uint64_t fs, uint64_t gs,
			 const char *name)
{
	for (unsigned int k = 0; k < n; k++, (*pos)++) {
		struct hit hit;

		if (check(ring_take(*pos, &hit, fs, gs),
			  "record published (seq = pos + 1)", name))
			check_hit(f, &st[k], &hit, name);
	}
	check(*seq_of(record_at(*pos)) == *pos,
	      "the next record still free (seq = pos)", name);
}

/* A gs base worth comparing in this thread; returns the old one. */
static uint64_t set_gs(uint64_t gs)
{
	uint64_t old = 0;

	syscall(SYS_arch_prctl, ARCH_GET_GS, &old);
	syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)gs);
	return old;
}

static uint64_t get_fs(void)
{
	uint64_t fs = 0;

	syscall(SYS_arch_prctl, ARCH_GET_FS, &fs);
	return fs;
}

#define COLLECT_RECORDS 16
#define COLLECT_CALLS 12

/*
 * Collect + hand-off for one function: 2 rounds of 12 calls into a
 * 16-record ring (the second wraps around), each round with no SIGTRAP,
 * then consumed and checked.
 */
static int case_collect(const void *arg)
{
	const struct mode *m = arg;
	struct arch_pad_handoff h = handoff(16, m->xsave, cpu.fsgsbase);
	struct arch_pad_ring r = ring_of(COLLECT_RECORDS, m->xsave);
	static struct call_state st[COLLECT_CALLS];
	uint64_t gs = A(&print_budget), old_gs, fs = get_fs(), pos = 0;
	char name[96];

	h.image_form = r.image_form = image_form_of(m->xsave, m->fxsave_ymm);
	snprintf(name, sizeof(name), "%s collect %s @%p", m->f->name,
		 m->fxsave_ymm ? "fxsave+vextractf128" : m->xsave ? "xsave" : "fxsave",
		 (void *)m->pages);
	code_page = m->pages;
	pad_page = m->pages + PAGE;
	reset_table(16);
	reset_ring(COLLECT_RECORDS);
	if (build_pad(m->f, &h, &r, name))
		return 0;
	old_gs = set_gs(gs);
	for (uint64_t round = 0; round < 2; round++) {
		for (unsigned int k = 0; k < COLLECT_CALLS; k++) {
			prepare(&st[k], m->f, round * COLLECT_CALLS + k + 1);
			pad_call(&st[k]);
			check_return(m->f, &st[k], name);
		}
		check(thread_hits == 0, "no SIGTRAP while the ring has room", name);
		check(ring_head() == pos + COLLECT_CALLS, "head = the calls so far", name);
		ring_consume(m->f, st, COLLECT_CALLS, &pos, fs, gs, name);
	}
	check_table(16, 0, name);
	set_gs(old_gs);
	if (m->fxsave_ymm)
		printf("  %lu of %u records with the upper halves cleared by vzeroupper "
		       "before the call\n", fxsave_ymm_avx_initial, 2 * COLLECT_CALLS);
	fflush(stdout);		/* the case's child ends in _exit */
	return 0;
}

/*
 * A 4-record ring, 10 calls and nobody consuming: 4 records, then 6
 * hand-offs (one SIGTRAP each, the ring untouched); consumed; then 4
 * calls go to the ring again.
 */
static int case_ring_full(const void *arg)
{
	const struct fn_desc *f = &fns[FN_LEA];
	struct arch_pad_handoff h = handoff(16, default_xsave(), cpu.fsgsbase);
	struct arch_pad_ring r = ring_of(4, default_xsave());
	static struct call_state st[14];
	const char *name = "4 records, 10 calls";
	uint64_t gs = A(&print_budget), old_gs, fs = get_fs(), pos = 0;

	reset_table(16);
	reset_ring(4);
	if (build_pad(f, &h, &r, name))
		return 0;
	old_gs = set_gs(gs);
	for (unsigned int k = 0; k < 14; k++) {
		unsigned long before = thread_hits;

		if (k == 10) {
			check(ring_head() == 4, "head stays at 4 while the ring is full",
			      name);
			ring_consume(f, st, 4, &pos, fs, gs, name);
			name = "4 records, 4 calls after consuming";
		}
		memset(&last_hit, 0, sizeof(last_hit));
		prepare(&st[k], f, k + 1);
		pad_call(&st[k]);
		check_return(f, &st[k], name);
		if (k < 4 || k >= 10)
			check(thread_hits == before, "no SIGTRAP while the ring has room",
			      name);
		else if (check(thread_hits == before + 1,
			       "ring full: one SIGTRAP (the hand-off)", name))
			check_hit(f, &st[k], &last_hit, name);
		check_table(16, 0, name);
	}
	check(ring_head() == 8, "head = 8 records in all", name);
	ring_consume(f, st + 10, 4, &pos, fs, gs, name);
	check(thread_hits == 6, "6 SIGTRAPs in all", name);
	set_gs(old_gs);
	return 0;
}

#define THREAD_RECORDS 8

/* The 4-producer, 1-consumer case; thread t is 1 .. THREADS. */
static struct {
	uint64_t fs[THREADS + 1], gs[THREADS + 1];
	uint64_t call_rsp[THREADS + 1];		/* by the producer */
	uint64_t rsp_seen[THREADS + 1];		/* in its records */
	unsigned long traps[THREADS + 1];
	uint8_t seen[THREADS + 1][THREAD_CALLS];	/* records + hand-offs */
	int done;
	uint64_t records;
} mt;

static uint64_t mt_seed(unsigned int t, unsigned int i)
{
	return (uint64_t)t * 1000003u + i;
}

static uint64_t mt_arg(unsigned int t, unsigned int i)
{
	return (uint64_t)t << 32 | i;
}

static void *ring_producer(void *p)
{
	const struct fn_desc *f = &fns[FN_LEA];
	unsigned int t = (unsigned int)(uintptr_t)p;
	struct call_state st;
	char name[48];

	snprintf(name, sizeof(name), "ring producer [%u]", t);
	/* before the first record: the consumer reads them after its seq */
	set_gs(A(&mt.seen[t][0]));
	__atomic_store_n(&mt.gs[t], A(&mt.seen[t][0]), __ATOMIC_RELEASE);
	__atomic_store_n(&mt.fs[t], get_fs(), __ATOMIC_RELEASE);
	for (unsigned int i = 0; i < THREAD_CALLS; i++) {
		unsigned long before = thread_hits;

		prepare(&st, f, mt_seed(t, i));
		st.in[R_RDI] = mt_arg(t, i);
		pad_call(&st);
		check_return(f, &st, name);
		if (i == 0)
			mt.call_rsp[t] = st.call_rsp;
		else
			check(st.call_rsp == mt.call_rsp[t], "the same rsp every call", name);
		if (thread_hits == before + 1) {	/* the ring was full */
			check_hit(f, &st, &last_hit, name);
			__atomic_fetch_add(&mt.seen[t][i], 1, __ATOMIC_RELAXED);
		} else {
			check(thread_hits == before, "at most one SIGTRAP per call", name);
		}
	}
	mt.traps[t] = thread_hits;
	__atomic_fetch_add(&stress_checks, t_checks, __ATOMIC_RELAXED);
	__atomic_fetch_add(&stress_failures, t_failures, __ATOMIC_RELAXED);
	return NULL;
}

/*
 * Drains the ring in order while the producers run, each record checked
 * against the call its %rdi names; stops when the producers are done
 * and the ring is empty.
 */
static void *ring_consumer(void *p)
{
	const struct fn_desc *f = &fns[FN_LEA];
	const char *name = "ring consumer";
	uint64_t pos = 0;

	(void)p;
	for (;;) {
		/* read first: done then means every record is published */
		bool done = __atomic_load_n(&mt.done, __ATOMIC_ACQUIRE);
		struct call_state st;
		struct hit hit;
		unsigned int t, i;

		if (!ring_take(pos, &hit, 0, 0)) {
			if (done) {
				check(ring_head() == pos,
				      "every position taken was published", name);
				break;
			}
			/* no sched_yield: the 4 producers would starve
			 * the consumer, and a full ring proves little */
			__builtin_ia32_pause();
			continue;
		}
		pos++;
		t = (unsigned int)(hit.frame[R_RDI] >> 32);
		i = (uint32_t)hit.frame[R_RDI];
		if (!check(t >= 1 && t <= THREADS && i < THREAD_CALLS,
			   "record rdi = a (thread, call) passed", name))
			continue;
		__atomic_fetch_add(&mt.seen[t][i], 1, __ATOMIC_RELAXED);
		hit.fs = __atomic_load_n(&mt.fs[t], __ATOMIC_ACQUIRE);
		hit.gs = __atomic_load_n(&mt.gs[t], __ATOMIC_ACQUIRE);
		prepare(&st, f, mt_seed(t, i));
		st.in[R_RDI] = mt_arg(t, i);
		/* the producer's rsp is compared once it is joined */
		if (!mt.rsp_seen[t])
			mt.rsp_seen[t] = hit.frame[R_RSP];
		st.call_rsp = mt.rsp_seen[t] + 8;
		check_hit(f, &st, &hit, name);
	}
	mt.records = pos;
	__atomic_fetch_add(&stress_checks, t_checks, __ATOMIC_RELAXED);
	__atomic_fetch_add(&stress_failures, t_failures, __ATOMIC_RELAXED);
	return NULL;
}

/* 4 threads x 20000 calls, an 8-record ring drained meanwhile. */
static int case_ring_threads(const void *arg)
{
	struct arch_pad_handoff h = handoff(4, default_xsave(), cpu.fsgsbase);
	struct arch_pad_ring r = ring_of(THREAD_RECORDS, default_xsave());
	const char *name = "ring: 4 threads x 20000, 8 records, 1 consumer";
	pthread_t t[THREADS], c;
	unsigned long lost = 0, twice = 0, traps = 0;

	reset_table(4);
	reset_ring(THREAD_RECORDS);
	if (build_pad(&fns[FN_LEA], &h, &r, name))
		return 0;
	if (pthread_create(&c, NULL, ring_consumer, NULL)) {
		printf("ERROR: pthread_create\n");
		return 99;
	}
	for (uintptr_t i = 0; i < THREADS; i++) {
		if (pthread_create(&t[i], NULL, ring_producer, (void *)(i + 1))) {
			printf("ERROR: pthread_create\n");
			return 99;
		}
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	__atomic_store_n(&mt.done, 1, __ATOMIC_RELEASE);
	pthread_join(c, NULL);
	t_checks += stress_checks;
	t_failures += stress_failures;

	for (unsigned int k = 1; k <= THREADS; k++) {
		traps += mt.traps[k];
		for (unsigned int i = 0; i < THREAD_CALLS; i++) {
			lost += mt.seen[k][i] == 0;
			twice += mt.seen[k][i] > 1;
		}
		if (mt.rsp_seen[k])
			check(mt.rsp_seen[k] == mt.call_rsp[k] - 8,
			      "record rsp = the producer's return slot", name);
	}
	check(traps == total_hits, "hand-offs = SIGTRAPs", name);
	check(mt.records + traps == THREADS * THREAD_CALLS,
	      "records + hand-offs = calls", name);
	check(lost == 0, "no call lost", name);
	check(twice == 0, "no call seen twice", name);
	check(mt.records >= THREAD_RECORDS, "the ring took at least its size", name);
	check(*(uint64_t *)ring_mem == mt.records, "head = the records consumed", name);
	check_table(4, 0, name);
	printf("  %lu records, %lu hand-offs (ring full), %lu lost, %lu twice\n",
	       (unsigned long)mt.records, traps, lost, twice);
	return 0;
}

/* The thread and time parts of a record (the agent's x86-64 layout). */
#define OFF_TID 1000
#define OFF_FLAGS 1004
#define OFF_TIME 1008

/* The agent's thread id table (PAD_TID_*), in this process, and the word
 * after its entries (PAD_TID_NOTLS). */
static struct { uint64_t key; uint32_t tid, unused; } tids[PAD_TID_ENTRIES + 1]
	__attribute__((aligned(64)));
#define NOTLS_WORD ((uint32_t *)((uint8_t *)tids + PAD_TID_NOTLS))

static uint64_t tsc_now(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

/*
 * A record's thread from the table by the thread pointer, or from the
 * kernel where the table does not name the thread; its time from the
 * TSC.  One call per table state:
 *   empty: gettid;  the thread pointer -> FAKE_OWNER: FAKE_OWNER (the
 *   table is what the pad read);  -> 0 (shared): gettid;  the entry one
 *   further on, past another key: FAKE_OWNER;  the key PAD_TID_PROBES
 *   entries on: gettid (out of the search).
 * Each with prefetch 0 and 2 (the code differs, the record must not),
 * the key read by rdfsbase (where the CPU lets us) and as %fs:0, glibc's
 * TCB self pointer (the load the pad reports in tp_fault, as the agent
 * needs it to resume a fault there).
 */
static void collect_tid(unsigned int ahead, bool fsgsbase);

/*
 * A load of %fs:0 the collector build_pad placed reported in *f: `mov
 * %fs:0,%rax` (9 bytes) at f->load, and at f->take, where a fault there
 * goes on, the bytes `take` (offsets from the collector, which build_pad
 * puts right after the register save).
 */
static void check_fs0_fault(const struct arch_pad_fault *f, const uint8_t *take,
			    size_t take_len, const char *what, const char *name)
{
	static const uint8_t fs0[] = { 0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0 };
	uint8_t save[512];
	int at = ops->emit_save_regs(save, sizeof(save), cfg.fn);
	const uint8_t *code = pad_page + (at > 0 ? at : 0);

	if (!check(at > 0 && f->load && f->len == sizeof(fs0) &&
		   !memcmp(code + f->load, fs0, sizeof(fs0)) &&
		   !memcmp(code + f->take, take, take_len), what, name))
		printf("  %s: load %zu take %zu len %zu\n", what, f->load, f->take, f->len);
}


static int case_collect_tid(const void *arg)
{
	unsigned int ahead = *(const unsigned int *)arg;

	for (int fg = 0; fg <= (int)cpu.fsgsbase; fg++)
		collect_tid(ahead, fg);
	return 0;
}

static void collect_tid(unsigned int ahead, bool fsgsbase)
{
	const struct fn_desc *f = &fns[FN_LEA];
	struct arch_pad_handoff h = handoff(16, default_xsave(), cpu.fsgsbase);
	struct arch_pad_ring r = ring_of(4, default_xsave());
	struct arch_pad_fault fault = { 0, 0, 0 };
	struct call_state st;
	uint64_t fs = get_fs(), pos = 0;
	uint32_t me = (uint32_t)syscall(SYS_gettid);
	char name[64];
	static const struct { int at; uint32_t tid; bool fake, notls; const char *what; } states[] = {
		{ -1, 0, false, false, "no entry: gettid" },
		{ 0, FAKE_OWNER, true, false, "its entry: the table's tid" },
		{ 0, 0, false, false, "its entry, tid 0: gettid" },
		{ 1, FAKE_OWNER, true, false, "one entry on: the table's tid" },
		{ PAD_TID_PROBES, FAKE_OWNER, false, false, "past the search: gettid" },
		/* a thread without TLS in the process: %fs:0 is not read */
		{ 0, FAKE_OWNER, false, true, "its entry, NOTLS set: gettid (%fs:0 only)" },
	};

	snprintf(name, sizeof(name), "tid table, prefetch %u, %s", ahead,
		 fsgsbase ? "rdfsbase" : "%fs:0");
	r.tp_read = fsgsbase;
	r.tp_fault = &fault;
	r.time_tid = true;
	r.off_tid = OFF_TID;
	r.off_time = OFF_TIME;
	r.tid_table = A(tids);
	r.tsc_time = true;
	r.prefetch = ahead;
	reset_table(16);
	uint64_t gs = A(&print_budget), old_gs = set_gs(gs);
	unsigned int first = (unsigned int)((fs * PAD_TID_HASH) >> (64 - PAD_TID_BITS));
	for (size_t k = 0; k < sizeof(states) / sizeof(states[0]); k++) {
		reset_ring(4);
		pos = 0;
		memset(tids, 0, sizeof(tids));
		*NOTLS_WORD = states[k].notls;
		if (states[k].at >= 0) {
			for (int j = 0; j < states[k].at; j++)
				tids[first + j].key = fs + 4096 * (j + 1);	/* others */
			tids[first + states[k].at].key = fs;
			tids[first + states[k].at].tid = states[k].tid;
		}
		if (build_pad(f, &h, &r, name))
			break;
		if (!fsgsbase) {
			/* a fault there goes on at the system call */
			static const uint8_t gettid[] = { 0xb8, 0xba, 0, 0, 0, 0x0f, 0x05 };
			check_fs0_fault(&fault, gettid, sizeof(gettid),
					"tp_fault: the %fs:0 load and the system call", name);
		} else {
			check(!fault.load, "tp_fault: none with rdfsbase", name);
		}
		prepare(&st, f, k + 1);
		uint64_t t0 = tsc_now();
		pad_call(&st);
		uint64_t t1 = tsc_now();
		check_return(f, &st, name);
		uint8_t *e = record_at(pos);
		uint32_t tid;
		int64_t ts[2];
		memcpy(&tid, e + OFF_TID, 4);
		memcpy(ts, e + OFF_TIME, 16);
		uint32_t want = states[k].fake || (states[k].notls && fsgsbase) ? FAKE_OWNER : me;
		if (!check(*seq_of(e) == pos + 1, "record published", name) ||
		    !check(tid == want, states[k].what, name))
			printf("  %s: tid %u, expected %u\n", states[k].what, tid, want);
		if (!check(ts[1] == PAD_TIME_TSC && (uint64_t)ts[0] >= t0 &&
			   (uint64_t)ts[0] <= t1, "the time: the TSC during the call", name))
			printf("  time %lld %lld, the call between TSC %llu and %llu\n",
			       (long long)ts[0], (long long)ts[1],
			       (unsigned long long)t0, (unsigned long long)t1);
		struct hit hit;
		if (check(ring_take(pos, &hit, fs, gs), "record taken", name))
			check_hit(f, &st, &hit, name);
	}
	*NOTLS_WORD = 0;
	set_gs(old_gs);
}

/*
 * The record as the agent's pads write it (the thread and the TSC, the
 * flags word), with the image and without: the flags word says which,
 * and a record without it leaves the image's 832 bytes as they were,
 * the XSAVE header's XSTATE_BV too (the record is its last three lines).
 * Without fsgsbase such a record has no bases either (no system call):
 * their words stay as they were.
 */
static int case_collect_flags(const void *arg)
{
	const struct fn_desc *f = &fns[FN_LEA];
	struct arch_pad_handoff h = handoff(16, default_xsave(), cpu.fsgsbase);
	struct arch_pad_ring r = ring_of(4, default_xsave());
	struct call_state st;
	uint64_t fs = get_fs();
	const char *name = "record flags";

	(void)arg;
	h.image_form = r.image_form = image_form_of(default_xsave(), cpu.fxsave_ymm);
	r.time_tid = true;
	r.off_tid = OFF_TID;
	r.off_time = OFF_TIME;
	r.off_flags = OFF_FLAGS;
	r.tid_table = A(tids);
	r.tsc_time = true;
	r.prefetch = 2;
	memset(tids, 0, sizeof(tids));
	reset_table(16);
	uint64_t gs = A(&print_budget), old_gs = set_gs(gs);
	for (int image = 0; image <= 1; image++) {
		r.image = image;
		reset_ring(4);
		uint8_t *e = record_at(0);
		memset(e, 0xee, IMAGE_SIZE);	/* the XSAVE header too */
		memset(e + OFF_FLAGS, 0xee, 4);
		memset(e + OFF_BASES, 0xee, 16);
		if (build_pad(f, &h, &r, name))
			break;
		prepare(&st, f, 7 + image);
		pad_call(&st);
		check_return(f, &st, name);
		uint32_t flags, tid;
		memcpy(&flags, e + OFF_FLAGS, 4);
		memcpy(&tid, e + OFF_TID, 4);
		check(*seq_of(e) == 1, "record published", name);
		check(tid == (uint32_t)syscall(SYS_gettid), "the record's thread", name);
		if (!image) {
			check(flags == 0, "flags 0: no image", name);
			size_t k = 0;
			while (k < IMAGE_SIZE && e[k] == 0xee)
				k++;
			if (!check(k == IMAGE_SIZE, "no image: its bytes untouched", name))
				printf("  byte %zu of the image written: %#x\n", k, e[k]);
			const uint64_t *fr = (const uint64_t *)(e + OFF_FRAME);
			bool same = true;
			for (int i = 0; i < 16; i++)
				if (i != R_RSP && fr[i] != st.in[i])
					same = false;
			check(same, "no image: the frame's GPRs", name);
			check(fr[R_RIP] == cfg.fn && fr[R_FLAGS] == st.in[R_FLAGS],
			      "no image: frame rip and eflags", name);
			uint64_t poison;
			memset(&poison, 0xee, 8);
			if (cpu.fsgsbase)
				check(((const uint64_t *)(e + OFF_BASES))[0] == fs &&
				      ((const uint64_t *)(e + OFF_BASES))[1] == gs,
				      "no image: the bases", name);
			else
				check(((const uint64_t *)(e + OFF_BASES))[0] == poison &&
				      ((const uint64_t *)(e + OFF_BASES))[1] == poison,
				      "no image, no fsgsbase: no bases (no system call)", name);
		} else {
			struct hit hit;
			check(flags == PAD_REC_IMAGE, "flags PAD_REC_IMAGE: the image", name);
			if (check(ring_take(0, &hit, fs, gs), "record taken", name))
				check_hit(f, &st, &hit, name);
		}
	}
	set_gs(old_gs);
	return 0;
}

/*
 * A record with the image where the pad cannot read the bases itself (no
 * fsgsbase, forced here on any CPU), with the agent's table: the fs base
 * from %fs:0 unless PAD_TID_NOTLS says a thread has no TLS (then the
 * kernel's), the gs base from PAD_TID_GS while PAD_TID_GS_OK is set (a
 * made-up value shows it came from there; else the kernel's).  The %fs:0
 * load is reported with where a fault there goes on: the system call.
 */
static int case_collect_bases(const void *arg)
{
	const struct fn_desc *f = &fns[FN_LEA];
	struct arch_pad_handoff h = handoff(16, default_xsave(), cpu.fsgsbase);
	struct arch_pad_ring r = ring_of(4, default_xsave());
	struct arch_pad_fault fault = { 0, 0, 0 };
	struct call_state st;
	uint64_t fs = get_fs();
	const char *name = "bases from the table";
	const uint64_t fake_gs = 0x5a5a5a5a00001000ull;
	uint32_t *gs_ok = (uint32_t *)((uint8_t *)tids + PAD_TID_GS_OK);
	uint64_t *gs_word = (uint64_t *)((uint8_t *)tids + PAD_TID_GS);

	(void)arg;
	h.image_form = r.image_form = image_form_of(default_xsave(), cpu.fxsave_ymm);
	r.tp_read = false;
	r.off_flags = OFF_FLAGS;
	r.tid_table = A(tids);
	r.bases_fault = &fault;
	memset(tids, 0, sizeof(tids));
	reset_table(16);
	uint64_t gs = A(&print_budget), old_gs = set_gs(gs);
	for (int k = 0; k < 4; k++) {
		bool notls = k & 1, ok = k & 2;
		*NOTLS_WORD = notls;
		*gs_ok = ok;
		*gs_word = fake_gs;
		reset_ring(4);
		if (build_pad(f, &h, &r, name))
			break;
		static const uint8_t get_fs_call[] = { 0xbf, 0x03, 0x10, 0, 0 };
		check_fs0_fault(&fault, get_fs_call, sizeof(get_fs_call),
				"bases_fault: the %fs:0 load and ARCH_GET_FS", name);
		prepare(&st, f, 11 + (unsigned int)k);
		pad_call(&st);
		check_return(f, &st, name);
		struct hit hit;
		if (check(ring_take(0, &hit, fs, ok ? fake_gs : gs), "record taken", name))
			check_hit(f, &st, &hit, name);
	}
	*NOTLS_WORD = 0;
	*gs_ok = 0;
	*gs_word = 0;
	set_gs(old_gs);
	return 0;
}

/* What emit_pad_collect must refuse (nothing runs). */
static int case_collect_args(const void *arg)
{
	const char *name = "emit_pad_collect arguments";
	struct arch_pad_ring r = ring_of(8, true), bad;
	static const unsigned int not_pow2[] = { 0, 3, 6, 12, 4097 };
	uint8_t buf[1024];
	size_t done = 0;
	int n;

	if (!check(ops->emit_pad_collect != NULL, "x86-64 has a collector", name))
		return 0;
	for (int xs = 0; xs <= 1; xs++) {
		r.image_form = image_form_of(xs, false);
		n = ops->emit_pad_collect(buf, sizeof(buf), &r, &done);
		check(n > 0 && done + 4 <= (size_t)n, "a valid ring is accepted", name);
		for (unsigned int a = 1; a < 64; a <<= 1) {
			bad = r;
			bad.ring += a;
			check(ops->emit_pad_collect(buf, sizeof(buf), &bad, &done) == -EINVAL,
			      "-EINVAL: ring not 64-byte aligned", name);
			bad = r;
			bad.off_records += a;
			check(ops->emit_pad_collect(buf, sizeof(buf), &bad, &done) == -EINVAL,
			      "-EINVAL: records not 64-byte aligned", name);
		}
		for (size_t k = 0; k < sizeof(not_pow2) / sizeof(not_pow2[0]); k++) {
			bad = r;
			bad.nrecords = not_pow2[k];
			check(ops->emit_pad_collect(buf, sizeof(buf), &bad, &done) == -EINVAL,
			      "-EINVAL: nrecords not a power of two", name);
		}
		/* Parts of the record that overlap or leave it. */
		static const struct { unsigned int seq, bases, frame; const char *what; } parts[] = {
			{ 1020, 840, 856, "seq past the record" },
			{ 836, 840, 856, "seq not 8-aligned" },
			{ 864, 840, 856, "seq inside the frame" },
			{ 832, 1020, 856, "bases past the record" },
			{ 832, 840, 848, "bases inside the frame" },
			{ 0x80000000u, 840, 856, "seq offset negative as disp32" },
			{ 832, 840, 900, "frame past the record" },
		};
		for (size_t k = 0; k < sizeof(parts) / sizeof(parts[0]); k++) {
			bad = r;
			bad.off_seq = parts[k].seq;
			bad.off_bases = parts[k].bases;
			bad.off_frame = parts[k].frame;
			check(ops->emit_pad_collect(buf, sizeof(buf), &bad, &done) == -EINVAL,
			      parts[k].what, name);
		}
		/* Without fsgsbase the bases come from arch_prctl: longer code. */
		bad = r;
		bad.tp_read = true;
		int with = ops->emit_pad_collect(buf, sizeof(buf), &bad, &done);
		bad.tp_read = false;
		int without = ops->emit_pad_collect(buf, sizeof(buf), &bad, &done);
		check(with > 0 && without > with,
		      "no fsgsbase: accepted, the bases read by system calls", name);
		check(ops->emit_pad_collect(buf, 16, &r, &done) == -ENOSPC,
		      "-ENOSPC: 16 bytes", name);
	}
	return 0;
}

/* Runs the collector cases; low: the pages below 2 GiB, or NULL. */
void run_collector_cases(uint8_t *pages, uint8_t *low)
{
	char title[128];

	run_case("emit_pad_collect: misaligned ring, nrecords not a power of two",
		 case_collect_args, NULL);
	if (!cpu.fsgsbase)
		printf("collector cases read the bases by arch_prctl: "
		       "HWCAP2_FSGSBASE not set\n");
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		for (int xs = cpu.avx ? 1 : 0; xs >= 0; xs--) {
			struct mode m = { &fns[i], xs, true, pages, false };

			snprintf(title, sizeof(title),
				 "%s: collect + hand-off, %s, 2 x 12 calls, 16 records",
				 fns[i].name, xs ? "xsave" : "fxsave");
			run_case(title, case_collect, &m);
		}
		if (cpu.fxsave_ymm) {
			struct mode m = { &fns[i], true, true, pages, true };

			snprintf(title, sizeof(title),
				 "%s: collect + hand-off, fxsave + vextractf128, 2 x 12 calls, "
				 "16 records",
				 fns[i].name);
			run_case(title, case_collect, &m);
		}
	}
	if (!cpu.fxsave_ymm)
		printf("skip the fxsave + vextractf128 collector cases: "
		       "AVX not enabled by the OS\n");
	for (int xs = cpu.avx ? 1 : 0; low && xs >= 0; xs--) {
		for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
			struct mode m = { &fns[i], xs, true, low, false };

			snprintf(title, sizeof(title),
				 "%s: collect + hand-off below 2 GiB, %s, 2 x 12 calls",
				 fns[i].name, xs ? "xsave" : "fxsave");
			run_case(title, case_collect, &m);
		}
	}
	run_case("collect: 4 records, 10 calls (6 hand-offs), consumed, 4 more",
		 case_ring_full, NULL);
	run_case("collect: 4 threads x 20000 calls, 8 records, a consumer thread",
		 case_ring_threads, NULL);
	run_case("collect: the record's flags word, with the image and without",
		 case_collect_flags, NULL);
	run_case("collect: without fsgsbase, the bases from the agent's table",
		 case_collect_bases, NULL);
	static const unsigned int ahead[] = { 0, 2 };
	for (size_t i = 0; i < 2; i++) {
		snprintf(title, sizeof(title),
			 "collect: the thread from the tid table, the time from the TSC, "
			 "prefetch %u", ahead[i]);
		run_case(title, case_collect_tid, &ahead[i]);
	}
}

/* ---- --bench: what a hit of a collecting pad costs the thread ---- */

/*
 * The agent's ring as the agent sizes it (4096 records of 2 KiB: the
 * record's lines are long out of the caches when a hit writes them),
 * drained between batches outside the timing as the agent would (seq,
 * then the frame read).  Each configuration: the median and the best of
 * BENCH_ROUNDS batches of BENCH_BATCH calls of the lea function through
 * its pad, less the same loop calling it unpatched.
 */
#define BENCH_SHIFT 11
#define BENCH_RECORDS 4096u
#define BENCH_BATCH 2000
#define BENCH_ROUNDS 41

struct bench_cfg {
	const char *what;
	bool ring, image, fxsave_ymm, time_tid, ymm_in_use;
	unsigned int prefetch;
	/* collect *b: 64 bytes at rdi (a pointer to them), by the
	 * collector's call, or by the pad itself (x86_64-pad-exec-copy.c) */
	enum { NO_COPY, COPY_CALL, COPY_NATIVE } copy;
};

static double bench_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The pad of one configuration: save, [collect], restore, the window
 * (no hand-off: the ring is drained before it can fill). */
static int bench_build(const struct bench_cfg *c, uint8_t *ring)
{
	const struct fn_desc *f = &fns[FN_LEA];
	struct arch_pad_handoff h = handoff(16, cpu.avx, cpu.fsgsbase);
	size_t off, done = 0, inlen;
	uint64_t fn;
	uint8_t jmp[16];
	int n;

	/* build_pad copies the functions and jumps to the pad page; the pad
	 * is then rewritten with this configuration's parts. */
	if (build_pad(f, &h, NULL, "bench"))
		return -1;
	fn = cfg.fn;
	memset(pad_page, 0xcc, PAGE);
	n = ops->emit_save_regs(pad_page, PAGE, fn);
	if (n <= 0)
		return -1;
	off = (size_t)n;
	if (c->ring) {
		struct arch_pad_ring r = {
			.ring = A(ring), .off_records = OFF_RECORDS,
			.record_shift = BENCH_SHIFT, .nrecords = BENCH_RECORDS,
			.off_seq = OFF_SEQ, .off_bases = OFF_BASES,
			.off_frame = OFF_FRAME,
			.image_form = image_form_of(cpu.avx, c->fxsave_ymm),
			.tp_read = cpu.fsgsbase,
			.image = c->image, .prefetch = c->prefetch,
			.time_tid = c->time_tid, .off_tid = OFF_TID,
			.off_time = OFF_TIME, .off_flags = OFF_FLAGS, .tid_table = A(tids),
			.tsc_time = true,
		};
		if (c->copy != NO_COPY && copy_bench_ring(&r, c->copy == COPY_NATIVE) < 0)
			return -1;
		n = ops->emit_pad_collect(pad_page + off, PAGE - off, &r, &done);
		if (n <= 0)
			return -1;
		done += off;
		off += (size_t)n;
		if (ops->patch_branch(pad_page, done, off))
			return -1;
	}
	n = ops->emit_restore_regs(pad_page + off, PAGE - off);
	if (n <= 0)
		return -1;
	off += (size_t)n;
	n = ops->relocate_window(f->src, (size_t)(f->src_end - f->src), fn, fn,
				 ops->pad_jump_len, A(pad_page) + off,
				 pad_page + off, PAGE - off, &inlen);
	if (n <= 0)
		return -1;
	n = ops->emit_jump(jmp, sizeof(jmp), fn, A(pad_page));
	if (n != 5)
		return -1;
	memcpy((void *)(uintptr_t)fn, jmp, 5);
	__builtin___clear_cache((char *)code_page, (char *)code_page + 2 * PAGE);
	return 0;
}

static void bench_drain(uint8_t *ring, uint64_t *pos)
{
	uint64_t head = __atomic_load_n((uint64_t *)ring, __ATOMIC_ACQUIRE);
	static uint64_t frame[NFRAME];

	for (; *pos < head; (*pos)++) {
		uint8_t *e = ring + OFF_RECORDS +
			     ((size_t)(*pos & (BENCH_RECORDS - 1)) << BENCH_SHIFT);
		uint64_t *seq = (uint64_t *)(e + OFF_SEQ);

		while (__atomic_load_n(seq, __ATOMIC_ACQUIRE) != *pos + 1)
			;
		memcpy(frame, e + OFF_FRAME, sizeof(frame));
		__atomic_store_n(seq, *pos + BENCH_RECORDS, __ATOMIC_RELEASE);
	}
}

/* ns per call of `fn` over one batch; the ymm upper halves in use or not
 * as the configuration says, set right before the loop (the loop itself
 * runs no AVX code).  The argument: `arg`, or the call's number when 0. */
static double bench_batch(uint64_t fn, bool ymm_in_use, long arg)
{
	long (*volatile call)(long) = (long (*)(long))(uintptr_t)fn;
	volatile long sink = 0;

	if (ymm_in_use)
		__asm__ volatile("vpcmpeqb %%ymm1,%%ymm1,%%ymm1" ::: "xmm1");
	else if (cpu.avx)
		__asm__ volatile("vzeroupper" ::: "xmm1");
	double a = bench_now();
	for (long i = 0; i < BENCH_BATCH; i++)
		sink += call(arg ? arg : i);
	double b = bench_now();
	(void)sink;
	return (b - a) / BENCH_BATCH;
}

void pad_bench(void)
{
	static const struct bench_cfg cfgs[] = {
		{ "empty pad: save + restore only", false, false, false, false, false, 0, NO_COPY },
		{ "record, no image (registers only)", true, false, false, false, false, 2, NO_COPY },
		{ "record, no image, prefetch off", true, false, false, false, false, 0, NO_COPY },
		{ "record + thread + TSC (probe-trace args)", true, false, false, true, false, 2, NO_COPY },
		{ "collect $regs, XSAVE, ymm upper in use", true, true, false, false, true, 2, NO_COPY },
		{ "collect $regs, XSAVE, ymm upper initial", true, true, false, false, false, 2, NO_COPY },
		{ "collect $regs, FXSAVE+vextractf128, in use", true, true, true, false, true, 2, NO_COPY },
		{ "collect $regs, FXSAVE+vextractf128, initial", true, true, true, false, false, 2, NO_COPY },
		{ "collect *b (64 B), no image, collector call", true, false, false, false, false, 2,
		  COPY_CALL },
		{ "collect *b (64 B), no image, pad's own copy", true, false, false, false, false, 2,
		  COPY_NATIVE },
		/* As gdb sends `collect *b`: its register too (an R action),
		 * so the record holds the whole register set, image included. */
		{ "collect *b (64 B) + image, collector call", true, true, true, false, false, 2,
		  COPY_CALL },
		{ "collect *b (64 B) + image, pad's own copy", true, true, true, false, false, 2,
		  COPY_NATIVE },
	};
	static uint64_t blob[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	long blob_arg = (long)(uintptr_t)blob;
	size_t ring_len = OFF_RECORDS + ((size_t)BENCH_RECORDS << BENCH_SHIFT);
	uint8_t *ring = mmap(NULL, ring_len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	double plain[BENCH_ROUNDS], t[BENCH_ROUNDS];

	if (ring == MAP_FAILED) {
		printf("ERROR: mmap of the bench ring\n");
		exit(99);
	}
	/* The thread in the tid table, as the agent enters it. */
	uint64_t fs = get_fs();
	unsigned int first = (unsigned int)((fs * PAD_TID_HASH) >> (64 - PAD_TID_BITS));
	memset(tids, 0, sizeof(tids));
	tids[first].key = fs;
	tids[first].tid = (uint32_t)syscall(SYS_gettid);
	/* ... and its words after the entries: no thread without TLS, every
	 * thread with this gs base (what a record with the image reads
	 * without fsgsbase). */
	uint64_t gs = 0;
	syscall(SYS_arch_prctl, 0x1004 /* ARCH_GET_GS */, &gs);
	*NOTLS_WORD = 0;
	*(uint32_t *)((uint8_t *)tids + PAD_TID_GS_OK) = 1;
	*(uint64_t *)((uint8_t *)tids + PAD_TID_GS) = gs;

	printf("ns per call through the pad (lea function), %u calls a batch, "
	       "%d batches, ring %u x %u bytes; median (best), less the plain call\n",
	       BENCH_BATCH, BENCH_ROUNDS, BENCH_RECORDS, 1u << BENCH_SHIFT);
	for (size_t k = 0; k < sizeof(cfgs) / sizeof(cfgs[0]); k++) {
		const struct bench_cfg *c = &cfgs[k];
		uint64_t pos = 0;

		if ((c->image || c->ymm_in_use) && !cpu.avx) {
			printf("  %-44s not measured: no AVX\n", c->what);
			continue;
		}
		memset(ring, 0, ring_len);
		for (uint32_t i = 0; i < BENCH_RECORDS; i++)
			*(uint64_t *)(ring + OFF_RECORDS + ((size_t)i << BENCH_SHIFT) + OFF_SEQ) = i;
		if (bench_build(c, ring)) {
			printf("ERROR: cannot build the pad of '%s'\n", c->what);
			exit(99);
		}
		uint64_t fn = cfg.fn;
		for (int r = 0; r < BENCH_ROUNDS; r++) {
			t[r] = bench_batch(fn, c->ymm_in_use, c->copy ? blob_arg : 0);
			bench_drain(ring, &pos);
		}
		/* The same function unpatched, in the same state. */
		memcpy((void *)(uintptr_t)fn, fns[FN_LEA].src, fns[FN_LEA].window);
		__builtin___clear_cache((char *)code_page, (char *)code_page + PAGE);
		for (int r = 0; r < BENCH_ROUNDS; r++)
			plain[r] = bench_batch(fn, c->ymm_in_use, c->copy ? blob_arg : 0);
		if (c->ring && pos != (uint64_t)BENCH_ROUNDS * BENCH_BATCH) {
			printf("ERROR: '%s': %llu records, expected %d\n", c->what,
			       (unsigned long long)pos, BENCH_ROUNDS * BENCH_BATCH);
			exit(99);
		}
		qsort(t, BENCH_ROUNDS, sizeof(t[0]), cmp_double);
		qsort(plain, BENCH_ROUNDS, sizeof(plain[0]), cmp_double);
		printf("  %-44s %7.1f (%6.1f)\n", c->what,
		       t[BENCH_ROUNDS / 2] - plain[BENCH_ROUNDS / 2], t[0] - plain[0]);
	}
	munmap(ring, ring_len);
}
