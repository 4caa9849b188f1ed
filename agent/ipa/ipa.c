/*
 * ipa.c - the in-process collector: one tracepoint hit, run by the thread
 * that hit it (see ipa-abi.h for the contract).
 *
 * ipa_collect() is the only entry.  It counts the hit, evaluates the
 * condition with the agent expression interpreter (protocol/ax.c, built
 * into this image too), takes a pass-count ticket, then runs the actions
 * into the record's block area.  Memory is read by ipa_copy() only, so an
 * unreadable address costs the agent one fixed-up fault and the record
 * says which bytes it could not read.
 *
 * What the collector cannot do the way the agent would (a condition or an
 * action that fails to evaluate, where the agent stops the run with the
 * interpreter's message; a record bigger than the block area, which the
 * agent collects whole) it leaves to the agent: IPA_TRAP, with nothing
 * counted as taken.  The pad then hands the hit over as it does when its
 * ring is full.
 *
 * Built twice: into the image (IPA_IMAGE, freestanding) and into the unit
 * tests, where ipa_copy is a plain copy.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/ipa/ipa-abi.h"
#include "agent/ipa/ipa.h"
#include "protocol/ax.h"

#define IPA_HIT_TSVS 8

struct ipa_run {
	struct ax_ctx ax;	/* first: the callbacks get it back */
	struct ipa_hit *hit;
	int overflow;		/* the block area ran out */
	/* Variables this hit set: its own values from then on. */
	uint32_t nset;
	struct {
		uint32_t num;
		int64_t value;
	} set[IPA_HIT_TSVS];
};

#define ALIGN8(n) (((n) + 7u) & ~(uint32_t)7u)

static int run_read_reg(const struct ax_ctx *ctx, unsigned regnum,
			uint64_t *value)
{
	const struct ipa_run *run = (const struct ipa_run *)ctx;

	if (regnum >= run->hit->nregs)
		return -EINVAL;
	*value = run->hit->regs[regnum];
	return 0;
}

/*
 * Copies what it can of [addr, addr + len) (ipa_copy).  With 32-bit
 * pointers (ARM) the expressions still compute in 64 bits: an address
 * above 4 GiB is no byte of the process (its low half would be some
 * other one), so none of it is read, and a range is cut at 4 GiB.  A
 * copy that comes back short met a load that faulted: the thread stopped
 * for it and the agent resumed the copy at its exit, which the hit's
 * counters keep (faulted).
 */
static size_t copy_in(const struct ipa_run *run, void *dst, uint64_t addr, uint64_t len)
{
#if UINTPTR_MAX < UINT64_MAX
	if (addr > UINTPTR_MAX)
		return 0;
	if (len > (uint64_t)UINTPTR_MAX - addr + 1)
		len = (uint64_t)UINTPTR_MAX - addr + 1;
#endif
	size_t n = ipa_copy(dst, (const void *)(uintptr_t)addr, (size_t)len);
	if (n < len && run->hit->counters)
		__atomic_fetch_add(&run->hit->counters->faulted, 1, __ATOMIC_RELAXED);
	return n;
}

static long run_read_mem(const struct ax_ctx *ctx, uint64_t addr, void *buf,
			 size_t len)
{
	size_t n = copy_in((const struct ipa_run *)ctx, buf, addr, len);
	return n ? (long)n : -EFAULT;
}

/* The shared entry of variable `num`, or NULL; *kind its kind. */
static int64_t *tsv_slot(struct ipa_hit *hit, unsigned num, uint32_t *kind)
{
	struct ipa_tsvs *t = hit->tsvs;

	if (!t)
		return NULL;
	uint32_t n = __atomic_load_n(&t->count, __ATOMIC_ACQUIRE);
	if (n > IPA_TSVS)
		n = IPA_TSVS;
	for (uint32_t i = 0; i < n; i++)
		if (t->v[i].number == num) {
			*kind = t->v[i].kind;
			return &t->v[i].value;
		}
	return NULL;
}

static int run_tsv_get(const struct ax_ctx *ctx, unsigned num, int64_t *value)
{
	const struct ipa_run *run = (const struct ipa_run *)ctx;
	uint32_t kind = IPA_TSV_PLAIN;

	for (uint32_t i = run->nset; i-- > 0;)
		if (run->set[i].num == num) {
			*value = run->set[i].value;
			return 0;
		}
	int64_t *slot = tsv_slot(run->hit, num, &kind);
	if (!slot)
		return -ENOENT;
	/* A live one: the agent lets only code that drops the value read
	 * it (gdb's collect of $v pushes it). */
	*value = kind == IPA_TSV_PLAIN ? __atomic_load_n(slot, __ATOMIC_RELAXED) : 0;
	return 0;
}

static int run_tsv_set(const struct ax_ctx *ctx, unsigned num, int64_t value)
{
	struct ipa_run *run = (struct ipa_run *)ctx;
	uint32_t kind = IPA_TSV_PLAIN;
	int64_t *slot = tsv_slot(run->hit, num, &kind);
	uint32_t i;

	if (!slot || kind != IPA_TSV_PLAIN)
		return -ENOENT;
	for (i = 0; i < run->nset && run->set[i].num != num; i++)
		;
	if (i == IPA_HIT_TSVS)
		return -ENOSPC;
	if (i == run->nset)
		run->nset++;
	run->set[i].num = num;
	run->set[i].value = value;
	__atomic_store_n(slot, value, __ATOMIC_RELAXED);
	return 0;
}

/* Room for `size` more bytes of blocks, or NULL (and the record is
 * marked truncated). */
static void *take(struct ipa_run *run, uint32_t size)
{
	struct ipa_hit *hit = run->hit;

	if (size > hit->out_size - hit->out_len) {
		run->overflow = 1;
		return NULL;
	}
	void *p = hit->out + hit->out_len;
	hit->out_len += size;
	return p;
}

/* A memory block of [addr, addr+len), its readable prefix copied. */
static int mem_block(struct ipa_run *run, uint64_t addr, uint64_t len)
{
	struct ipa_hit *hit = run->hit;
	uint32_t room = hit->out_size - hit->out_len;
	uint32_t hdr = (uint32_t)sizeof(struct ipa_mem_block);

	if (len == 0)
		return 0;
	/* What does not fit is cut, and the record says so. */
	if (room < hdr + 8) {
		run->overflow = 1;
		return 0;
	}
	if (len > room - hdr) {
		len = (room - hdr) & ~(uint64_t)7;
		run->overflow = 1;
	}
	struct ipa_mem_block *b = take(run, ALIGN8(hdr + (uint32_t)len));
	b->h.kind = IPA_BLK_MEM;
	b->h.reserved = 0;
	b->h.size = ALIGN8(hdr + (uint32_t)len);
	b->addr = addr;
	b->len = (uint32_t)len;
	b->avail = (uint32_t)copy_in(run, b->bytes, addr, len);
	return 0;
}

static int run_trace_mem(const struct ax_ctx *ctx, uint64_t addr, uint64_t len)
{
	return mem_block((struct ipa_run *)ctx, addr, len);
}

static int run_trace_tsv(const struct ax_ctx *ctx, unsigned num)
{
	struct ipa_run *run = (struct ipa_run *)ctx;
	uint32_t live = IPA_TSV_PLAIN;
	int64_t value = 0;

	if (!tsv_slot(run->hit, num, &live) || run_tsv_get(ctx, num, &value) < 0)
		return -ENOENT;
	if (live != IPA_TSV_PLAIN)
		value = 0;	/* the agent's to fill in */
	struct ipa_tsv_block *b = take(run, sizeof(*b));
	if (!b)
		return 0;
	b->h.kind = IPA_BLK_TSV;
	b->h.reserved = 0;
	b->h.size = sizeof(*b);
	b->number = num;
	b->live = live;
	b->value = value;
	return 0;
}

static const uint8_t *code_of(const struct ipa_program *p, uint32_t off)
{
	return (const uint8_t *)p + off;
}

static void run_init(struct ipa_run *run, struct ipa_hit *hit)
{
	/* Field by field: the whole struct's zeroing (set[] included,
	 * which nset guards) was a memset of every hit. */
	run->ax = (struct ax_ctx){ 0 };
	run->hit = hit;
	run->overflow = 0;
	run->nset = 0;
	run->ax.read_reg = run_read_reg;
	run->ax.read_mem = run_read_mem;
	run->ax.tsv_get = run_tsv_get;
	run->ax.tsv_set = run_tsv_set;
	run->ax.trace_mem = run_trace_mem;
	run->ax.trace_tsv = run_trace_tsv;
	run->ax.step_budget = hit->prog->step_budget;
	run->ax.big_endian = hit->big_endian != 0;
}

int ipa_collect(struct ipa_hit *hit)
{
	const struct ipa_program *p = hit->prog;
	struct ipa_counters *c = hit->counters;
	struct ipa_run run;
	struct ax_result res;

	run_init(&run, hit);
	hit->out_len = 0;

	__atomic_fetch_add(&c->hits, 1, __ATOMIC_RELAXED);
	if (p->cond_len) {
		if (ax_eval_cond(code_of(p, p->cond_off), p->cond_len, &run.ax,
				 &res) < 0)
			return IPA_TRAP;
		if (!res.value) {
			__atomic_fetch_add(&c->skipped_cond, 1, __ATOMIC_RELAXED);
			return IPA_SKIP;
		}
	}

	/* A ticket: exactly pass_count hits record, however many threads
	 * race for the last ones. */
	uint64_t ticket = __atomic_add_fetch(&c->taken, 1, __ATOMIC_RELAXED);
	if (p->pass_count && ticket > p->pass_count) {
		__atomic_fetch_sub(&c->taken, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&c->over_pass, 1, __ATOMIC_RELAXED);
		return IPA_SKIP;
	}

	for (uint32_t i = 0; i < p->nactions; i++) {
		const struct ipa_action *a = &p->actions[i];
		switch (a->kind) {
		case IPA_ACT_MEM: {
			uint64_t base = 0;
			if (a->basereg != IPA_NO_REG &&
			    run_read_reg(&run.ax, a->basereg, &base) < 0)
				continue;	/* as the agent: left out */
			mem_block(&run, base + a->offset, a->len);
			break;
		}
		case IPA_ACT_EXPR:
			if (ax_eval(code_of(p, (uint32_t)a->offset), a->len,
				    &run.ax, &res) < 0 &&
			    res.error != AX_ERR_COLLECT) {
				/* Counted again by the agent's own run. */
				__atomic_fetch_sub(&c->taken, 1, __ATOMIC_RELAXED);
				hit->out_len = 0;
				return IPA_TRAP;
			}
			break;
		case IPA_ACT_TSV:
			run_trace_tsv(&run.ax, (unsigned)a->offset);
			break;
		}
	}
	if (run.overflow) {
		/* A cut record would differ from what the agent collects:
		 * the agent takes this hit whole instead. */
		__atomic_fetch_add(&c->truncated, 1, __ATOMIC_RELAXED);
		__atomic_fetch_sub(&c->taken, 1, __ATOMIC_RELAXED);
		hit->out_len = 0;
		return IPA_TRAP;
	}
	return p->pass_count && ticket == p->pass_count ? IPA_RECORD_STOP
							 : IPA_RECORD;
}

int ipa_collect_site(const struct ipa_site *site, const uint64_t *regs,
		     uint32_t nregs, uint8_t *out, uint32_t out_size)
{
	struct ipa_site_out *so = (struct ipa_site_out *)out;
	const uint8_t *base = (const uint8_t *)(uintptr_t)site->base;
	uint32_t used = sizeof(*so);
	int verdict = IPA_SKIP;

	if (out_size < sizeof(*so))
		return IPA_TRAP;
	so->ngroups = 0;
	so->reserved = 0;
	for (uint32_t i = 0; i < site->nprogs && i < IPA_SITE_PROGS; i++) {
		const struct ipa_program *p =
			(const struct ipa_program *)(base + site->prog_off[i]);
		struct ipa_group *g = (struct ipa_group *)(out + used);
		struct ipa_hit hit = {
			.prog = p,
			.counters = (struct ipa_counters *)(uintptr_t)
				(base + p->counters_off),
			.tsvs = site->tsvs_off ? (struct ipa_tsvs *)(uintptr_t)
				(base + site->tsvs_off) : NULL,
			.regs = regs,
			.nregs = nregs,
			.big_endian = 0,
		};

		if (out_size - used < sizeof(*g)) {
			verdict = IPA_TRAP;	/* no room even for a header */
			break;
		}
		hit.out = out + used + sizeof(*g);
		hit.out_size = out_size - used - (uint32_t)sizeof(*g);
		int v = ipa_collect(&hit);
		if (v == IPA_TRAP) {
			/* The agent takes the whole hit: the tickets of those
			 * that recorded go back, as their groups do. */
			const struct ipa_group *gg = (const struct ipa_group *)
				(out + sizeof(*so));
			for (uint32_t k = 0; k < so->ngroups; k++) {
				for (uint32_t j = 0; j < i; j++) {
					const struct ipa_program *q =
						(const struct ipa_program *)
						(base + site->prog_off[j]);
					if (q->tp_number != gg->tp_number)
						continue;
					__atomic_fetch_sub(&((struct ipa_counters *)
						(uintptr_t)(base + q->counters_off))->taken,
						1, __ATOMIC_RELAXED);
					break;
				}
				gg = (const struct ipa_group *)
					((const uint8_t *)(gg + 1) + gg->len);
			}
			verdict = IPA_TRAP;
			break;
		}
		if (v == IPA_SKIP)
			continue;
		g->tp_number = p->tp_number;
		g->verdict = (uint32_t)v;
		g->len = ALIGN8(hit.out_len);
		g->flags = p->flags;
		used += (uint32_t)sizeof(*g) + g->len;
		so->ngroups++;
		if (v > verdict)
			verdict = v;
	}
	if (verdict == IPA_TRAP)
		so->ngroups = 0;
	so->verdict = (uint32_t)verdict;
	so->len = used - (uint32_t)sizeof(*so);
	return verdict;
}

/*
 * Before a pad claims a record: whether any tracepoint of the site may
 * want this hit.  0 only when every one has a condition and each is
 * false (counted as ipa_collect would); an error says 1, and
 * ipa_collect_site decides.  Conditions read no trace state variable
 * the collector could change, so evaluating one twice is harmless.
 */
int ipa_site_wants(const struct ipa_site *site, const uint64_t *regs,
		   uint32_t nregs)
{
	const uint8_t *base = (const uint8_t *)(uintptr_t)site->base;
	uint32_t n = site->nprogs < IPA_SITE_PROGS ? site->nprogs : IPA_SITE_PROGS;

	for (uint32_t i = 0; i < n; i++) {
		const struct ipa_program *p =
			(const struct ipa_program *)(base + site->prog_off[i]);
		struct ipa_hit hit = {
			.prog = p,
			.counters = (struct ipa_counters *)(uintptr_t)
				(base + p->counters_off),
			.tsvs = site->tsvs_off ? (struct ipa_tsvs *)(uintptr_t)
				(base + site->tsvs_off) : NULL,
			.regs = regs,
			.nregs = nregs,
		};
		struct ipa_run run;
		struct ax_result res;

		if (!p->cond_len)
			return 1;
		run_init(&run, &hit);
		if (ax_eval_cond(code_of(p, p->cond_off), p->cond_len, &run.ax,
				 &res) < 0 || res.value)
			return 1;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct ipa_program *p =
			(const struct ipa_program *)(base + site->prog_off[i]);
		struct ipa_counters *c = (struct ipa_counters *)(uintptr_t)
			(base + p->counters_off);
		__atomic_fetch_add(&c->hits, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&c->skipped_cond, 1, __ATOMIC_RELAXED);
	}
	return 0;
}
