/*
 * pad-ret.c - return probes with no stop: the in-process shadow stacks
 * and the return trampoline a function's entry pad sends returns to
 * (pad_ret_get; retprobe.c's essay tells the scheme), their counters,
 * and the CPU's counter (the TSC, CNTVCT_EL0) measured against the
 * clocks, which gives a return record its latency and time (pad-drain.c
 * reads them).
 */
#define LOG_DOMAIN "pad"
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

#include "agent/agent.h"
#include "agent/keeper.h"
#include "agent/log.h"
#include "agent/pad-int.h"

/* --- return probes with no stop ------------------------------------------- */

/*
 * The counter the entry pad and the trampoline read with no system call
 * (ptrace_arch_ops.counter_read: x86-64's TSC, aarch64's CNTVCT_EL0;
 * "tsc" in the names below means whichever), against the clocks: the
 * latency in nanoseconds, the return's time in CLOCK_REALTIME
 * microseconds as a pad's record holds it.  The rate is the CPU's word
 * where it says it (counter_hz: CNTFRQ_EL0), else a short measure when
 * the first area is made, refined at every drain over the whole time
 * since (constant_tsc: one rate on every CPU of the machine).  A record's
 * time counts from an anchor, a reading of both clocks that every drain
 * moves up to the present, so that the rate's error shows only over the
 * record's age, microseconds at most.  The anchor follows the clocks
 * through a filter: a drain moves it by a quarter of what its reading
 * says the mapping is off, since one reading may be off by a microsecond
 * (the pair's width) and an entry and its return, converted at two
 * drains, must agree on when the call began (the return's time minus its
 * latency) to well under the microsecond the records keep; a clock that
 * jumped (settimeofday) is followed at once.
 */
static struct {
	uint64_t tsc0, mono0;		/* the first reading */
	uint64_t tsc1, real1;		/* the anchor */
	double ticks_per_ns;
	bool fixed;			/* the rate is the CPU's: not measured */
} tscal;

static uint64_t tsc_read(void)
{
	return agent.ptrace->counter_read ? agent.ptrace->counter_read() : 0;
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The counter and CLOCK_MONOTONIC (and CLOCK_REALTIME, *r) taken
 * together: the narrowest of a few tries (the clock readings around the
 * counter's closest), and tried on until they lie within 2 us (no
 * preemption in between: the machine may be shared). */
static void tsc_pair(uint64_t *t, uint64_t *m, uint64_t *r)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 1000 && (i < 4 || best >= 2000); i++) {
		uint64_t m1 = clock_ns(CLOCK_MONOTONIC);
		uint64_t r1 = clock_ns(CLOCK_REALTIME);
		uint64_t tn = tsc_read();
		uint64_t m2 = clock_ns(CLOCK_MONOTONIC);

		if (m2 - m1 < best) {
			best = m2 - m1;
			*t = tn;
			*m = m1 + (m2 - m1) / 2;
			*r = r1 + (m2 - m1) / 2;
		}
		if (best < 200)
			return;
	}
}

void pad_tsc_calibrate(void)
{
	struct timespec gap = { 0, 20000000 };	/* 20 ms */
	uint64_t t, m, r;
	uint64_t hz = agent.ptrace->counter_hz ? agent.ptrace->counter_hz() : 0;

	if (tscal.ticks_per_ns > 0)
		return;
	tsc_pair(&tscal.tsc0, &tscal.mono0, &r);
	if (hz) {
		tscal.ticks_per_ns = (double)hz / 1e9;
		tscal.fixed = true;
		tscal.tsc1 = tscal.tsc0;
		tscal.real1 = r;
		debug("counter: %llu Hz", (unsigned long long)hz);
		return;
	}
	nanosleep(&gap, NULL);
	tsc_pair(&t, &m, &r);
	tscal.ticks_per_ns = (double)(t - tscal.tsc0) / (double)(m - tscal.mono0);
	tscal.tsc1 = t;
	tscal.real1 = r;
	debug("TSC: %.4f ticks per ns", tscal.ticks_per_ns);
}

/* The anchor moved to a new reading (t, r): where the mapping puts t,
 * corrected by a quarter of its error, or r itself when the error is
 * more than the readings' noise can explain (50 us: the clock was set). */
static uint64_t anchor_real(uint64_t t, uint64_t r)
{
	double at = (double)tscal.real1 + ((double)t - (double)tscal.tsc1) / tscal.ticks_per_ns;
	double err = (double)r - at;

	if (err > 50000 || err < -50000)
		return r;
	return (uint64_t)(at + err / 4);
}

void pad_tsc_refine(void)
{
	uint64_t m, t, r;

	if (tscal.ticks_per_ns <= 0)
		return;
	tsc_pair(&t, &m, &r);
	if (!tscal.fixed && m - tscal.mono0 > 100000000u)
		tscal.ticks_per_ns = (double)(t - tscal.tsc0) / (double)(m - tscal.mono0);
	tscal.real1 = anchor_real(t, r);
	tscal.tsc1 = t;
}

uint64_t pad_tsc_ns(uint64_t ticks)
{
	/* A difference the pad took across CPUs whose counters disagree
	 * by more than the interval is "negative": no time, not 2^64
	 * ticks. */
	if ((int64_t)ticks < 0 || tscal.ticks_per_ns <= 0)
		return 0;
	return (uint64_t)((double)ticks / tscal.ticks_per_ns);
}

uint64_t pad_ret_latency_ns(uint64_t t0)
{
	uint64_t now = tsc_read();

	pad_tsc_calibrate();
	return now > t0 ? pad_tsc_ns(now - t0) : 0;
}

uint64_t pad_tsc_real_us(uint64_t t)
{
	/* Multiplications: the drain asks this for every record. */
	static double rate, us_per_tick;
	if (tscal.ticks_per_ns != rate) {
		rate = tscal.ticks_per_ns;
		us_per_tick = rate > 0 ? 1e-3 / rate : 0;
	}
	double d = ((double)t - (double)tscal.tsc1) * us_per_tick;

	return (uint64_t)((double)tscal.real1 * 1e-3 + d);
}

/*
 * The in-process shadow stacks of `p` and their trampoline (struct
 * arch_ret_pad): one private anonymous mapping the process makes, whose
 * first page holds the trampoline (read and execute) and the rest the
 * stacks.  Private, not the pads' shared memory: a fork child gets a
 * copy as it gets a copy of its stack, and its returns find their real
 * addresses there.  Never unmapped while the process lives.  0, or
 * -errno with the reason in `why` (and no second try).
 */
int pad_ret_get(struct process *p, struct pad_table *pt, char *why, size_t whylen)
{
	const struct arch_ops *arch = agent.arch;
	struct thread *t;
	uint64_t base = 0, on = 1;
	uint8_t code[4096];
	size_t trap_off = 0;
	long ret;
	int n, err;

	if (p->ret_area)
		return 0;
	if (pt->ret_failed) {
		snprintf(why, whylen, "no in-process shadow stacks in process %d", p->pid);
		return -ENOMEM;
	}
	if (!arch->emit_ret_entry || !arch->emit_ret_exit || !arch->emit_ret_stamp ||
	    !arch->emit_pad_collect || !agent.ptrace->counter_read) {
		snprintf(why, whylen, "returns trap on %s", arch->name);
		return -ENOTSUP;
	}
	if (agent.ptrace->counter_usable && !agent.ptrace->counter_usable()) {
		snprintf(why, whylen, "returns trap: the CPU's counter is not readable "
			 "in user mode on this machine");
		return -ENOTSUP;
	}
	pt->ret_failed = true;
	if (!(t = process_stopped_thread(p))) {
		snprintf(why, whylen, "no stopped thread to set up the shadow stacks");
		return -ESRCH;
	}
	err = inferior_mmap(t, 0, 4096 + RET_PAD_AREA_SIZE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0, &base);
	if (err < 0) {
		snprintf(why, whylen, "process %d cannot map its shadow stacks: %s",
			 p->pid, strerror(-err));
		return err;
	}
	const struct arch_pad_layout *l = layout();
	struct arch_pad_fault bf = { 0, 0, 0 };
	struct arch_ret_pad r = {
		.area = base + 4096, .tramp = base, .tp_read = pt->tp_read,
		.hist = arch->ret_hist ? pt->remote + hist_off() : 0,
		.ring = {
			.ring = pt->remote + ring_off(), .off_records = RING_RECORDS_OFF,
			.record_shift = record_shift(), .nrecords = RING_RECORDS,
			.off_seq = l->off_seq, .off_bases = l->off_bases,
			.off_frame = l->off_frame, .image_form = pt->image_form,
			.tp_read = pt->tp_read, .off_blocks = blocks_off(),
			.blocks_size = blocks_size(),
			.prefetch = agent.opt.pad_prefetch,
			/* a record with the image: its bases from the table's
			 * words where the pads cannot read them (x86-64) */
			.tid_table = pad_tid_usable(pt) ? pt->remote + tids_off() : 0,
			.bases_fault = &bf,
		},
	};
	n = arch->emit_ret_exit(code, sizeof(code), &r, &trap_off);
	if (n < 0) {
		snprintf(why, whylen, "cannot build the return trampoline: %s", strerror(-n));
		err = n;
	} else if (mem_write_raw(p, base, code, (size_t)n) != n ||
		   mem_write_raw(p, r.area + RET_PAD_ON, &on, 8) != 8) {
		snprintf(why, whylen, "cannot write the return trampoline at 0x%llx",
			 (unsigned long long)base);
		err = -EIO;
	} else if ((err = pad_remote_call(t, SYS_mprotect, (long)base, 4096,
				      PROT_READ | PROT_EXEC, 0, 0, 0, &ret)) < 0) {
		snprintf(why, whylen, "process %d cannot make the return trampoline "
			 "executable: %s", p->pid, strerror(-err));
	}
	if (err < 0) {
		pad_remote_call(t, SYS_munmap, (long)base, 4096 + RET_PAD_AREA_SIZE, 0, 0, 0, 0,
			    &ret);
		return err;
	}
	/* A thread stopped inside it is stepped out like one in a pad: its
	 * wait for room is the code's trap (where a trap leaves the pc on
	 * itself, aarch64, the settle moves past it), and a thread that
	 * must not be stepped (an exclusive pair: aarch64) goes back to the
	 * trampoline's start with the frame's registers, the return's. */
	struct pad_code *c = calloc(1, sizeof(*c));
	if (!c)
		abort();
	*c = (struct pad_code){ pt->codes, base, base + trap_off, base, (size_t)n, {
		[PAD_FAULT_BASES] = { bf.load ? base + bf.load : 0, base + bf.take },
	} };
	if (bf.load)
		keeper_code(p->pid, KEEPER_LOAD, base + bf.load, base + bf.take,
			    (unsigned int)bf.len, 0, -1, 0);
	pt->codes = c;
	p->ret_area = r.area;
	p->ret_itramp = base;
	p->ret_itrap = base + trap_off;
	/* Should the agent die, the keeper turns the records off: nobody
	 * drains the ring then, and a full one must not trap. */
	keeper_code(p->pid, KEEPER_RET_ON, r.area + RET_PAD_ON, p->ret_itrap, 0, 0, -1, 0);
	pt->ret_failed = false;
	pad_tsc_calibrate();
	debug("return trampoline at %#llx, shadow stacks at %#llx in %d",
	      (unsigned long long)base, (unsigned long long)r.area, p->pid);
	return 0;
}

/*
 * The trampoline of `p` stores the x87/SSE/AVX image in its records from
 * now on: a return probe reads a register outside the frame (the
 * trampoline tests RET_PAD_IMAGE at every return; records written before
 * say by their magic that they have none).  Until then its records are
 * the frame, the bases and the descriptor: most return probes want the
 * return value and the latency, and the image is the larger part of a
 * record (XSAVE's 832 bytes, written and read back cold).  Stays on for
 * the process's life.  0, or -EIO.
 */
int pad_ret_image(struct process *p)
{
	uint64_t one = 1;

	if (p->ret_image)
		return 0;
	if (!p->ret_area || mem_write_raw(p, p->ret_area + RET_PAD_IMAGE, &one, 8) != 8)
		return -EIO;
	p->ret_image = true;
	debug("return records of %d store the registers' image", p->pid);
	return 0;
}

/*
 * The page of latency histograms the return trampoline of `p` keeps
 * itself (RET_HIST_*, in the pads' shared memory: the agent reads it in
 * place, and it outlives the process until the pads are freed); NULL
 * where there is none (no pads, an arch without arch_ops.ret_hist).
 * `placing`: the trampoline must be there too (in-process returns), and
 * the page's tick rate is set.
 */
uint8_t *pad_ret_hist(struct process *p, bool placing)
{
	struct pad_table *pt = p->pads;

	if (!pt || !pt->local || !agent.arch->ret_hist || (placing && !p->ret_area))
		return NULL;
	if (!placing)
		return pt->local + hist_off();
	pad_tsc_calibrate();
	if (tscal.ticks_per_ns <= 0)
		return NULL;
	uint8_t *page = pt->local + hist_off();
	uint64_t mult = (uint64_t)(4294967296.0 / tscal.ticks_per_ns);
	__atomic_store_n((uint64_t *)(page + RET_HIST_MULT), mult, __ATOMIC_RELAXED);
	return page;
}

/* A counter of the in-process shadow stacks' header (RET_PAD_*). */
uint64_t pad_ret_count(const struct process *p, unsigned int off)
{
	uint64_t v = 0;

	if (!p->ret_area || mem_read_raw((struct process *)p, p->ret_area + off, &v, 8) != 8)
		return 0;
	return v;
}

/* Returns the trampoline recorded and the drain took. */
uint64_t pad_ret_recorded(const struct process *p)
{
	return p->pads ? p->pads->ret_recorded : 0;
}

