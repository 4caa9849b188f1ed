/*
 * pad-drain.c - the ring's records to their owner: a recording pad's
 * hits and the return trampoline's returns (pad_drain), each loaded into
 * a register block and handed over as a register source (regsrc.h) with
 * no thread behind it, and records a gone agent left in an old table
 * salvaged by a new one (pad_salvage).  The ring's order and holes are
 * pad-ring.c's.
 */
#define LOG_DOMAIN "pad"
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/ipa/ipa-abi.h"
#include "agent/log.h"
#include "agent/pad-int.h"
#include "agent/regblock.h"

/* A block the records of a ring are loaded into (every register of the
 * arch's largest set); NULL when there is no memory for it. */
static uint8_t *record_block(void)
{
	return calloc(1, regs_cache_size());
}

/* Record `rec`'s registers into `blk` and `src` (its image left out
 * where `image` is false), with the hitting thread's id `tid`. */
static int load_record(struct process *p, uint8_t *blk, const uint8_t *rec,
		       bool image, unsigned int image_form, pid_t tid, struct regsrc *src)
{
	const struct arch_pad_layout *l = layout();
	/* Without tp_read a record without the image has no bases (the
	 * pads would need two system calls): no tracepoint of its site
	 * reads a register beyond the frame. */
	bool bases = image || (p->pads && p->pads->tp_read);
	int err = regs_load_record(p, blk, (const uint64_t *)(rec + l->off_frame),
				   image ? rec : NULL, image_form,
				   bases ? (const uint64_t *)(rec + l->off_bases) : NULL);

	if (err < 0)
		return err;
	regsrc_record(src, agent.arch, p->features, p, blk, tid);
	return 0;
}

/* Whether record `rec` holds the image of the registers its frame leaves
 * out: its flags word says, where the arch has one; else `image`, what
 * the pad of its probe was built to store. */
static bool record_has_image(const uint8_t *rec, bool image)
{
	uint32_t flags;

	if (!layout()->off_flags)
		return image;
	memcpy(&flags, rec + layout()->off_flags, 4);
	return (flags & PAD_REC_IMAGE) != 0;
}

/* The hit's time a recording pad stored in record `rec`, in us: a
 * CLOCK_REALTIME timespec, or the TSC (its tv_nsec PAD_TIME_TSC). */
static uint64_t record_time_us(const uint8_t *rec)
{
	int64_t ts[2];

	memcpy(ts, rec + layout()->off_time, 16);
	if (ts[1] == PAD_TIME_TSC) {
		pad_tsc_calibrate();	/* done already, but for a salvage */
		return pad_tsc_real_us((uint64_t)ts[0]);
	}
	return (uint64_t)ts[0] * 1000000 + (uint64_t)ts[1] / 1000;
}

/*
 * A record the return trampoline wrote: the registers as the return
 * left them (pc: the real return address) and the descriptor (struct
 * arch_ret_pad) go to tracepoint.c as a trapped return's would, with
 * the latency and time from the counter (the TSC, CNTVCT_EL0); x30 too
 * is the real address where the call leaves it there (aarch64).  The
 * x87/SSE/AVX registers are the initial state's where the trampoline
 * left the image out (its magic RET_REC_MAGIC_BARE: no return probe of
 * the process reads them, pad_ret_image; aarch64's trampoline always
 * stores its v registers).  `take`: there is a taker (not a
 * salvage).  False: no room for it yet, the record stays.
 */
static bool take_return(struct process *p, struct pad_table *pt, uint64_t pos,
			bool take)
{
	uint8_t *rec = record_at(pt, pos);
	const uint8_t *d = rec + blocks_off();
	uint64_t func_run, ticks, tsc, real;
	uint32_t tid, magic;
	struct regsrc src;
	bool taken = true;

	memcpy(&func_run, d + RET_REC_FUNC, 8);
	memcpy(&ticks, d + RET_REC_TICKS, 8);
	memcpy(&tsc, d + RET_REC_TSC, 8);
	memcpy(&tid, d + RET_REC_TID, 4);
	memcpy(&magic, d + RET_REC_MAGIC, 4);
	memcpy(&real, d + RET_REC_RET, 8);
	if (take && (magic == RET_REC_MAGIC_VALUE || magic == RET_REC_MAGIC_BARE) &&
	    load_record(p, pt->rec_regs, rec, magic == RET_REC_MAGIC_VALUE, pt->image_form,
			(pid_t)tid, &src) == 0) {
		/* Two registers set in place (a round trip through
		 * struct arch_gpregs cost more than the rest of the load). */
		regblock_set(agent.arch, src.blk, (unsigned int)agent.arch->pc_regnum, real);
		if (agent.ptrace->ret_addr == PTRACE_RET_LINK)
			/* as `ret` leaves it (the record has the trampoline) */
			regblock_set(agent.arch, src.blk,
				     (unsigned int)agent.ptrace->ret_link_regnum, real);
		taken = trace_drain_return(&src, func_run & ((1ull << 48) - 1),
					   (uint32_t)(func_run >> 48),
					   pad_tsc_ns(ticks), pad_tsc_real_us(tsc));
	}
	if (taken) {
		__atomic_store_n(seq_of(rec), pos + RING_RECORDS, __ATOMIC_RELEASE);
		pt->ret_recorded++;
	}
	return taken;
}

/* One published record: to `fn`, then free for its next round. */
static bool take_record(struct process *p, struct pad_table *pt, uint64_t pos,
			bool (*fn)(struct probe *, struct regsrc *, uint64_t,
				   const void *, void *),
			void *arg)
{
	uint8_t *rec = record_at(pt, pos);
	const struct arch_pad_layout *l = layout();
	uint64_t site = frame_pc(rec);
	if (p->ret_itramp && site == p->ret_itramp)
		return take_return(p, pt, pos, fn != NULL);
	struct probe *pr = probe_at(p, site);
	uint64_t time_us = 0;
	pid_t tid = 0;

	if (pr && (pr->pad_collect == PAD_REGS_TIME_TID ||
		   (pr->pad_collect == PAD_IPA && pr->pad_ipa_live))) {
		uint32_t rec_tid;
		memcpy(&rec_tid, rec + l->off_tid, 4);
		tid = (pid_t)rec_tid;
		time_us = record_time_us(rec);
	}
	/* The collector's verdict: nothing to record (a false condition,
	 * past the pass count), or the hit went on to the hand-off. */
	const struct ipa_site_out *so = NULL;
	if (pr && pr->pad_collect == PAD_IPA) {
		so = (const struct ipa_site_out *)(rec + blocks_off());
		if (so->verdict == IPA_SKIP || so->verdict == IPA_TRAP ||
		    so->len > blocks_size() - sizeof(*so)) {
			/* Counted by the collector (pad_ipa_skipped), or as
			 * the stop it became. */
			__atomic_store_n(seq_of(rec), pos + RING_RECORDS, __ATOMIC_RELEASE);
			return true;
		}
	}
	bool taken = true;
	struct regsrc src;
	if (pr && fn &&
	    load_record(p, pt->rec_regs, rec, record_has_image(rec, !pr->pad_no_image),
			pt->image_form, tid, &src) == 0)
		taken = fn(pr, &src, time_us, so, arg);
	if (taken) {
		__atomic_store_n(seq_of(rec), pos + RING_RECORDS, __ATOMIC_RELEASE);
		if (pr)
			pr->hits_recorded++;
	}
	return taken;
}

/* pad_drain's owner callback, for pad_ring_drain. */
struct drain {
	struct process *p;
	struct pad_table *pt;
	bool (*fn)(struct probe *, struct regsrc *, uint64_t, const void *,
		   void *);
	void *arg;
};

static bool drain_take(uint64_t pos, uint8_t *rec, void *arg)
{
	struct drain *d = arg;

	(void)rec;	/* take_record finds it again by pos */
	return take_record(d->p, d->pt, pos, d->fn, d->arg);
}

/* The span of a record every take reads: sequence word, registers,
 * bases, thread and time (struct pad_ring's hot_off, hot_len). */
static void hot_part(struct pad_ring *r)
{
	const struct arch_pad_layout *l = layout();
	unsigned int lo = l->off_seq, hi = l->off_seq + 8;
	const unsigned int at[][2] = {
		{ l->off_frame, 8 * l->frame_words }, { l->off_tid, 4 }, { l->off_time, 16 },
		{ l->off_bases, 16 },
	};

	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		if (at[i][0] < lo)
			lo = at[i][0];
		if (at[i][0] + at[i][1] > hi)
			hi = at[i][0] + at[i][1];
	}
	r->hot_off = lo & ~63u;
	r->hot_len = hi - r->hot_off;
}

/*
 * The hits the pads of `p` collected in the process, in the order they
 * took their records: `fn` gets the probe and the hit's registers, a
 * register source with no thread behind it (the hitting thread went on
 * long ago; its id is the source's tid where the pad stored one), valid
 * for the call.  A record still being written is passed over and
 * taken by a later call: its writer may be stopped, or even gone for good
 * (a signal handler that never returned), which must not hold up the
 * rest.  Such a record's place in the ring stays taken, and once the ring
 * comes round to it the pads stop at every hit instead, losing none.
 * When `fn` refuses a record (no room for it yet), it stays in the ring
 * and the drain ends: the next call starts from it.
 * Returns the number of records taken.
 */
int pad_drain(struct process *p,
	      bool (*fn)(struct probe *pr, struct regsrc *src, uint64_t time_us,
			 const void *blocks, void *arg), void *arg)
{
	struct pad_table *pt = p->pads;

	if (!pt || !pt->local)
		return 0;
	if (!pt->rec_regs && !(pt->rec_regs = record_block()))
		abort();
	if (p->ret_area || pt->tsc_time)
		pad_tsc_refine();
	struct pad_ring ring = {
		.records = pt->local + ring_off() + RING_RECORDS_OFF,
		.head = (const volatile uint64_t *)(pt->local + ring_off()),
		.record_shift = record_shift(),
		.nrecords = RING_RECORDS,
		.off_seq = layout()->off_seq,
	};
	hot_part(&ring);
	struct drain d = { p, pt, fn, arg };
	return pad_ring_drain(&ring, &pt->reader, drain_take, &d);
}

/*
 * The shared tables an earlier agent left in `p` (it died: the keeper put
 * the program back and left the table mapped, with the records its ring
 * still held), found by the memfd's name in the process's mappings; the
 * table of this agent's own pads is not one of them.  Fills `starts`
 * with their addresses; returns how many, or -errno.
 */
static int old_tables(struct process *p, uint64_t *starts, int max)
{
	char path[64], line[512];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", p->pid);
	if (!(f = fopen(path, "re")))
		return -errno;
	while (n < max && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;
		if (!strstr(line, "/memfd:probe-agent-pads") ||
		    sscanf(line, "%llx-%llx", &lo, &hi) != 2 || hi - lo != shm_size() ||
		    (p->pads && p->pads->remote == lo))
			continue;
		starts[n++] = lo;
	}
	fclose(f);
	return n;
}

/*
 * Salvage: the records an earlier agent's recording pads published in
 * `p` and that agent never took, oldest first, each to `fn` with its site
 * and the hit's registers, a register source with no thread behind it and
 * tid 0 (the record's tid and time come apart, valid where the pad stored
 * them; x86-64 pads always
 * store the bases, by rdfsbase or arch_prctl).  The ring is read
 * through the process's memory (this agent has no mapping of it), and
 * every record handed over is marked taken there, so that a second
 * salvage does not see it again.  Records still claimed but unwritten
 * (a writer stopped or gone) are left.  The x87/SSE/AVX registers are
 * the initial state's where the record's flags word says its pad left
 * the image out (an arch with no such word: the image as it is).  Returns the records handed over,
 * or -errno.
 */
int pad_salvage(struct process *p,
		void (*fn)(uint64_t site, struct regsrc *src, pid_t tid,
			   uint64_t time_us, void *arg), void *arg)
{
	uint8_t *blk;
	const struct arch_pad_layout *l = layout();
	size_t ring_bytes;
	uint64_t starts[8];
	unsigned int image_form = 0;
	bool tp_read = false;
	uint8_t *records;
	int ntables, taken = 0;

	if (!l || !agent.ptrace->pad_options)
		return 0;	/* no pads on this arch: none left either */
	ring_bytes = ring_records_bytes();
	agent.ptrace->pad_options(p, &image_form, &tp_read);
	ntables = old_tables(p, starts, 8);
	if (ntables <= 0)
		return ntables;
	if (!(records = malloc(ring_bytes)))
		return -ENOMEM;
	if (!(blk = record_block())) {
		free(records);
		return -ENOMEM;
	}
	for (int k = 0; k < ntables; k++) {
		uint64_t ring = starts[k] + ring_off(), head;
		uint64_t base = ring + RING_RECORDS_OFF;

		if (mem_read_raw(p, ring, &head, 8) != 8 ||
		    mem_read_raw(p, base, records, ring_bytes) != (ssize_t)ring_bytes) {
			debug("table at %#llx in %d: unreadable", (unsigned long long)starts[k],
			      p->pid);
			continue;
		}
		for (uint64_t pos = head > RING_RECORDS ? head - RING_RECORDS : 0;
		     pos < head; pos++) {
			size_t off = (size_t)(pos & (RING_RECORDS - 1)) << record_shift();
			uint8_t *rec = records + off;
			uint64_t seq, done = pos + RING_RECORDS;
			uint32_t tid;

			memcpy(&seq, rec + l->off_seq, 8);
			if (seq != pos + 1)
				continue;	/* taken, or never written */
			memcpy(&tid, rec + l->off_tid, 4);
			struct regsrc src;
			if (load_record(p, blk, rec, record_has_image(rec, true), image_form, 0,
					&src) == 0) {
				fn(frame_pc(rec), &src, (pid_t)tid, record_time_us(rec), arg);
				taken++;
			}
			mem_write_raw(p, base + off + l->off_seq, &done, 8);
		}
	}
	free(records);
	free(blk);
	return taken;
}


/*
 * Salvage of the latency histograms (trace-hist.c) a dead agent had
 * placed in the return trampoline's page of its shared tables: each in
 * use to `fn` with the tracepoint address it counts for and its words
 * (RET_HIST_SUM, RET_HIST_ZERO, RET_HIST_B...), then the page's
 * histograms marked out of use there, so that a second salvage does not
 * count them again.  Returns the histograms handed over, or -errno.
 */
int pad_salvage_hist(struct process *p,
		     void (*fn)(uint64_t addr, const uint64_t *words, void *arg), void *arg)
{
	uint64_t starts[8], page[RET_HIST_BYTES / 8];
	int ntables, taken = 0;

	if (!layout() || !agent.arch->ret_hist)
		return 0;	/* no trampoline that counts on this arch */
	ntables = old_tables(p, starts, 8);
	if (ntables <= 0)
		return ntables;
	for (int k = 0; k < ntables; k++) {
		uint64_t at = starts[k] + hist_off();
		uint32_t n, none = 0;

		if (mem_read_raw(p, at, page, sizeof(page)) != (ssize_t)sizeof(page))
			continue;
		memcpy(&n, (uint8_t *)page + RET_HIST_N, 4);
		if (n > RET_HIST_MAX)
			continue;	/* not a page the trampoline kept */
		for (uint32_t i = 0; i < n; i++) {
			const uint64_t *w = page + (RET_HIST_FIRST + i * RET_HIST_SIZE) / 8;
			fn(w[RET_HIST_FUNC / 8] & ((1ull << 48) - 1), w, arg);
			taken++;
		}
		if (n)
			mem_write_raw(p, at + RET_HIST_N, &none, 4);
	}
	return taken;
}
