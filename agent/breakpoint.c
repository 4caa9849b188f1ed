/*
 * breakpoint.c - software breakpoints and hardware break/watchpoints.
 *
 * Software breakpoints are reference counted per address: gdb inserts its
 * own breakpoints and internal ones (the dynamic linker's) at the same
 * place, and a second Z0 must not save the breakpoint instruction as the
 * "original" bytes.  The original bytes are kept so that memory reads show
 * them (mem.c) and removal restores them.
 *
 * Hardware points: gdb's Z1-Z4 ranges are split into naturally aligned
 * pieces of 1, 2, 4 ... up to the arch's max_len bytes, one debug-register
 * slot each; identical pieces share a slot.  The slots are per process,
 * laid out as the arch's hw_caps say; each thread gets them (hw_sync)
 * before it next runs.
 */
#define LOG_DOMAIN "break"
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/hw-slots.h"
#include "agent/keeper.h"
#include "agent/log.h"
#include "protocol/ax.h"

static void conds_free(struct sw_breakpoint *b)
{
	for (size_t i = 0; i < b->nconds; i++)
		free(b->conds[i].code);
	free(b->conds);
	b->conds = NULL;
	b->nconds = 0;
}

struct sw_breakpoint *bp_find(struct process *p, uint64_t addr)
{
	for (struct sw_breakpoint *b = p->breakpoints; b; b = b->next)
		if (b->addr == addr)
			return b;
	return NULL;
}

/*
 * The breakpoint instruction for gdb's Z0 `kind`: the arch's only one
 * (bp_insn, whatever the kind), or where it has several (32-bit ARM) the
 * one the kind names; NULL for a kind it does not know.
 */
const uint8_t *bp_insn_of_kind(unsigned int kind, size_t *len)
{
	const struct arch_ops *arch = agent.arch;

	if (arch->bp_insn_for_kind)
		return arch->bp_insn_for_kind(kind, len);
	*len = arch->bp_len;
	return arch->bp_insn;
}

/* Whether memory at `addr` holds one of the arch's breakpoint
 * instructions. */
bool bp_insn_here(struct process *p, uint64_t addr)
{
	const struct arch_ops *arch = agent.arch;
	uint8_t buf[16];
	ssize_t n = mem_read_raw(p, addr, buf, arch->max_insn_len > arch->bp_len ?
				 arch->max_insn_len : arch->bp_len);

	if (n >= (ssize_t)arch->bp_len && memcmp(buf, arch->bp_insn, arch->bp_len) == 0)
		return true;
	if (!arch->bp_insn_for_kind)
		return false;
	for (unsigned int kind = 0; kind <= 16; kind++) {
		size_t len;
		const uint8_t *insn = arch->bp_insn_for_kind(kind, &len);
		if (insn && n >= (ssize_t)len && memcmp(buf, insn, len) == 0)
			return true;
	}
	return false;
}

int bp_insert(struct process *p, uint64_t addr, unsigned int kind)
{
	struct sw_breakpoint *b = bp_find(p, addr);
	size_t ilen;
	const uint8_t *insn = bp_insn_of_kind(kind, &ilen);
	ssize_t n;

	if (!insn)
		return -EINVAL;
	if (b && b->unmapped) {
		/* Kept by gdb's reference while its library was away: the
		 * mapping there now is new, its bytes are read afresh. */
		if (mem_read_raw(p, addr, b->saved, b->insn_len) != (ssize_t)b->insn_len ||
		    mem_write_raw(p, addr, b->insn, b->insn_len) != (ssize_t)b->insn_len)
			return -EIO;
		keeper_site_set(p->pid, addr, b->saved, b->insn, b->insn_len, b->insn,
				b->insn_len);
		b->unmapped = b->patched = false;
		b->len = b->insn_len;
	}
	if (b) {
		b->refs++;
		return 0;
	}
	/* Inside the bytes of a jump pad's jump: the probe there goes back to
	 * its breakpoint (pad.c), or this one would cut the jump. */
	for (struct sw_breakpoint *o = p->breakpoints; o; o = o->next)
		if (o->patched && addr > o->addr && addr < o->addr + o->len) {
			debug("breakpoint at %#llx: the pad at %#llx goes",
			      (unsigned long long)addr, (unsigned long long)o->addr);
			bp_unpatch(p, o->addr);
		}
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->addr = addr;
	b->insn = insn;
	b->insn_len = ilen;
	b->len = ilen;
	b->refs = 1;
	n = mem_read_raw(p, addr, b->saved, b->len);
	if (n != (ssize_t)b->len) {
		free(b);
		return n < 0 ? (int)n : -EIO;
	}
	keeper_site_set(p->pid, addr, b->saved, b->insn, b->len, b->insn, b->insn_len);
	n = mem_write_raw(p, addr, b->insn, b->len);
	if (n != (ssize_t)b->len) {
		keeper_site_clear(p->pid, addr);
		free(b);
		return n < 0 ? (int)n : -EIO;
	}
	b->next = p->breakpoints;
	p->breakpoints = b;
	debug("breakpoint at %#llx in %d", (unsigned long long)addr, p->pid);
	return 0;
}

static void bp_unlink(struct process *p, struct sw_breakpoint *b)
{
	for (struct sw_breakpoint **pp = &p->breakpoints; *pp; pp = &(*pp)->next)
		if (*pp == b) {
			*pp = b->next;
			return;
		}
}

int bp_remove(struct process *p, uint64_t addr)
{
	struct sw_breakpoint *b = bp_find(p, addr);

	if (!b)
		return -ENOENT;
	if (--b->refs > 0)
		return 0;
	bp_unlink(p, b);
	ssize_t n = b->unmapped ? 0 : mem_write_raw(p, addr, b->saved, b->len);
	keeper_site_clear(p->pid, addr);
	conds_free(b);
	free(b);
	debug("breakpoint at %#llx removed", (unsigned long long)addr);
	return n < 0 ? (int)n : 0;
}

/*
 * A jump pad's site (pad.c): the breakpoint at `addr` (taken by the
 * probe first) becomes the `len` bytes of `code`, a jump.  The bytes
 * after the breakpoint go first, the breakpoint's last: a thread
 * arriving meanwhile traps on the breakpoint and the probe handles it
 * the slow way.  Where the jump is no longer than the breakpoint
 * (aarch64: a B over the BRK, one aligned word), the one write replaces
 * it.  The saved bytes grow to the whole window, so reads (mem_read), a
 * fork child's copy and the removal all see and restore the original
 * code.
 */
int bp_patch(struct process *p, uint64_t addr, const uint8_t *code, size_t len)
{
	struct sw_breakpoint *b = bp_find(p, addr);
	size_t bl = b ? b->insn_len : 0;

	if (!b || b->patched || len < bl || len > sizeof(b->saved))
		return -EINVAL;
	if (len > bl &&
	    mem_read_raw(p, addr + bl, b->saved + bl, len - bl) != (ssize_t)(len - bl))
		return -EIO;
	keeper_site_set(p->pid, addr, b->saved, code, len, b->insn, bl);
	if (len > bl &&
	    mem_write_raw(p, addr + bl, code + bl, len - bl) != (ssize_t)(len - bl))
		return -EIO;
	if (mem_write_raw(p, addr, code, bl) != (ssize_t)bl) {
		if (len > bl)
			mem_write_raw(p, addr + bl, b->saved + bl, len - bl);
		keeper_site_set(p->pid, addr, b->saved, b->insn, bl, b->insn, bl);
		return -EIO;
	}
	memcpy(b->patch, code, len);
	b->len = len;
	b->patched = true;
	return 0;
}

/* Back from a jump to the breakpoint instruction, in the reverse order. */
int bp_unpatch(struct process *p, uint64_t addr)
{
	struct sw_breakpoint *b = bp_find(p, addr);
	size_t bl = b ? b->insn_len : 0;

	if (!b || !b->patched)
		return -EINVAL;
	if (b->unmapped) {
		b->len = bl;
		b->patched = false;
		return 0;
	}
	if (mem_write_raw(p, addr, b->insn, bl) != (ssize_t)bl ||
	    (b->len > bl &&
	     mem_write_raw(p, addr + bl, b->saved + bl, b->len - bl) != (ssize_t)(b->len - bl)))
		return -EIO;
	b->len = bl;
	b->patched = false;
	keeper_site_set(p->pid, addr, b->saved, b->insn, bl, b->insn, bl);
	return 0;
}

/*
 * Its library was unmapped (dlclose): from now on nothing is written at
 * `addr`, where another mapping may come (the original bytes would
 * corrupt it), and the keeper forgets the site for the same reason.
 */
void bp_unmapped(struct process *p, uint64_t addr)
{
	struct sw_breakpoint *b = bp_find(p, addr);

	if (!b)
		return;
	b->unmapped = true;
	keeper_site_clear(p->pid, addr);
}

/*
 * gdb's conditions for the breakpoint: "X<len>,<hex bytecode>" items
 * separated by ';', possibly followed by ";cmds:..." (agent commands,
 * not supported: ignored).  Each is verified before it can run.
 */
static int parse_conds(struct sw_breakpoint *b, const char *tail, char *why,
		       size_t whylen)
{
	const char *s = tail;

	conds_free(b);
	while (s && *s == 'X') {
		char *end;
		unsigned long len = strtoul(s + 1, &end, 16);
		struct ax_info info;
		char err[128];

		if (*end != ',' || len == 0 || len > AX_MAX_LEN) {
			snprintf(why, whylen, "malformed breakpoint condition");
			return -EINVAL;
		}
		s = end + 1;
		uint8_t *code = malloc(len);
		if (!code)
			return -ENOMEM;
		for (unsigned long i = 0; i < len; i++) {
			int hi = rsp_hex_digit((unsigned char)s[2 * i]);
			int lo = hi < 0 ? -1 : rsp_hex_digit((unsigned char)s[2 * i + 1]);
			if (lo < 0) {
				free(code);
				snprintf(why, whylen, "malformed breakpoint condition bytecode");
				return -EINVAL;
			}
			code[i] = hi << 4 | lo;
		}
		s += 2 * len;
		if (ax_verify(code, len, &info, err, sizeof(err)) < 0) {
			free(code);
			snprintf(why, whylen, "breakpoint condition: %s", err);
			return -EINVAL;
		}
		struct bp_cond *c = realloc(b->conds, (b->nconds + 1) * sizeof(*c));
		if (!c) {
			free(code);
			return -ENOMEM;
		}
		b->conds = c;
		b->conds[b->nconds++] = (struct bp_cond){ code, len };
		if (*s == ';')
			s++;
	}
	return 0;
}

/*
 * gdb has one breakpoint per address: a Z0 where it already has one
 * replaces its conditions (gdb re-sends it when they change), and one z0
 * takes it out.  Probes at the address hold references of their own.
 */
int bp_insert_gdb(struct process *p, uint64_t addr, unsigned int kind,
		  const char *conds, char *why, size_t whylen)
{
	struct sw_breakpoint *b = bp_find(p, addr);
	bool added = false;
	int err;

	if (!b || !b->gdb_refs) {
		size_t len;
		if (!bp_insn_of_kind(kind, &len)) {
			snprintf(why, whylen, "no software breakpoint of kind %u on %s",
				 kind, agent.arch->name);
			return -EINVAL;
		}
		err = bp_insert(p, addr, kind);
		if (err < 0) {
			snprintf(why, whylen, "%s", strerror(-err));
			return err;
		}
		b = bp_find(p, addr);
		added = true;
	}
	err = parse_conds(b, conds, why, whylen);
	if (err < 0) {
		if (added)
			bp_remove(p, addr);
		return err;
	}
	b->gdb_refs = 1;
	if (b->patched)
		pad_breakpoint_added(p, addr);	/* its hits must stop now */
	return 0;
}

int bp_remove_gdb(struct process *p, uint64_t addr)
{
	struct sw_breakpoint *b = bp_find(p, addr);
	struct probe *cp = NULL;

	if (!b || !b->gdb_refs)
		return -ENOENT;
	b->gdb_refs = 0;
	conds_free(b);
	cp = b->cond_probe;
	b->cond_probe = NULL;
	/* The probe's own reference keeps b alive past this call. */
	int err = bp_remove(p, addr);
	if (cp)
		probe_remove(cp);
	return err;
}

static int cond_read_reg(const struct ax_ctx *ctx, unsigned regnum, uint64_t *v)
{
	return regs_read_gdb(ctx->opaque, regnum, v);
}

static long cond_read_mem(const struct ax_ctx *ctx, uint64_t addr, void *buf,
			  size_t len)
{
	struct thread *t = ctx->opaque;

	return mem_read(t->proc, addr, buf, len);
}

bool bp_condition_holds(struct sw_breakpoint *b, struct thread *t)
{
	struct ax_ctx ctx = {
		.read_reg = cond_read_reg, .read_mem = cond_read_mem, .opaque = t,
	};

	if (!b->nconds)
		return true;
	/* Non-stop: every hit goes to gdb, which checks the condition
	 * itself.  Continuing past false conditions here broke gdb's
	 * displaced stepping (gdb.threads/interrupt-while-step-over). */
	if (agent.non_stop)
		return true;
	for (size_t i = 0; i < b->nconds; i++) {
		struct ax_result res;
		/* An evaluation error stops: gdb then shows where. */
		if (ax_eval_cond(b->conds[i].code, b->conds[i].len, &ctx, &res) < 0 ||
		    res.value)
			return true;
	}
	return false;
}

/*
 * A fork child's memory holds the parent's breakpoint instructions: the
 * child gets breakpoints of its own with the same saved bytes, so that
 * removing them (detach) restores its memory.  Conditions are copied, never
 * shared: freeing the child's must leave the parent's intact.  The parent's
 * probes are not the child's.
 */
int bp_clone_all(struct process *from, struct process *to)
{
	for (struct sw_breakpoint *b = from->breakpoints; b; b = b->next) {
		struct sw_breakpoint *cb = malloc(sizeof(*cb));
		if (!cb)
			return -ENOMEM;
		*cb = *b;
		cb->cond_probe = NULL;
		cb->conds = NULL;
		cb->nconds = 0;
		if (b->step_refs) {
			/* A software step's breakpoints are the forking
			 * thread's, not the child's: the child's memory gets
			 * its bytes back where nothing else holds one. */
			cb->refs -= b->step_refs;
			cb->step_refs = 0;
			if (!cb->refs) {
				if (!b->unmapped)
					mem_write_raw(to, cb->addr, cb->saved, cb->len);
				free(cb);
				continue;
			}
		}
		keeper_site_set(to->pid, cb->addr, cb->saved,
				cb->patched ? cb->patch : cb->insn, cb->len, cb->insn,
				cb->insn_len);
		cb->next = to->breakpoints;
		to->breakpoints = cb;
		if (!b->nconds)
			continue;
		cb->conds = calloc(b->nconds, sizeof(*cb->conds));
		if (!cb->conds)
			return -ENOMEM;
		for (size_t i = 0; i < b->nconds; i++) {
			uint8_t *code = malloc(b->conds[i].len);
			if (!code)
				return -ENOMEM;
			memcpy(code, b->conds[i].code, b->conds[i].len);
			cb->conds[i] = (struct bp_cond){ code, b->conds[i].len };
			cb->nconds++;
		}
	}
	return 0;
}

void bp_remove_all(struct process *p)
{
	while (p->breakpoints) {
		struct sw_breakpoint *b = p->breakpoints;
		p->breakpoints = b->next;
		if (!b->unmapped)
			mem_write_raw(p, b->addr, b->saved, b->len);
		keeper_site_clear(p->pid, b->addr);
		conds_free(b);
		free(b);
	}
}

/* --- hardware points -------------------------------------------------------- */

/* The arch's debug registers, asked once per process (a thread of it is
 * stopped whenever gdb inserts a point). */
static const struct ptrace_hw_caps *caps(struct process *p)
{
	if (!p->hw_caps_known) {
		agent.ptrace->hw_caps(p->pid, &p->hw_caps);
		if (p->hw_caps.n_break > MAX_HW_SLOTS)
			p->hw_caps.n_break = MAX_HW_SLOTS;
		if (p->hw_caps.shared || p->hw_caps.n_watch > MAX_HW_SLOTS - p->hw_caps.n_break)
			p->hw_caps.n_watch = p->hw_caps.shared ? 0 : MAX_HW_SLOTS - p->hw_caps.n_break;
		p->hw_caps_known = true;
	}
	return &p->hw_caps;
}

bool hw_can_read_watch(struct process *p)
{
	return caps(p)->can_read_watch;
}

static enum hw_kind slot_kind(enum rsp_point_type type)
{
	switch (type) {
	case RSP_POINT_HW_BREAK:
		return HW_EXEC;
	case RSP_POINT_WRITE_WATCH:
		return HW_WRITE;
	case RSP_POINT_READ_WATCH:
		return HW_READ;
	default:
		return HW_ACCESS;
	}
}

static void hw_mark_dirty(struct process *p)
{
	for (struct thread *t = p->threads; t; t = t->next)
		t->dregs_dirty = true;
}

int hw_insert(struct process *p, enum rsp_point_type type, uint64_t addr,
	      unsigned int len)
{
	struct hw_point *h;
	enum hw_kind kind = slot_kind(type);

	/* Points that would be accepted and never fire are refused. */
	if (hw_available() == -ENODEV)
		return -ENODEV;
	if (kind == HW_READ && !hw_can_read_watch(p))
		return -ENOTSUP;
	if (type == RSP_POINT_HW_BREAK)
		len = 1;
	if (len > 64)
		return -EINVAL;
	for (h = p->hw_points; h; h = h->next)
		if (h->type == type && h->addr == addr && h->len == len) {
			h->refs++;
			return 0;
		}
	/* All or nothing (hw-slots.c). */
	int err = hw_slots_take(p->slots, caps(p), kind, addr, len);
	if (err < 0)
		return err;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->type = type;
	h->addr = addr;
	h->len = len;
	h->refs = 1;
	h->next = p->hw_points;
	p->hw_points = h;
	hw_mark_dirty(p);
	return 0;
}

int hw_remove(struct process *p, enum rsp_point_type type, uint64_t addr,
	      unsigned int len)
{
	if (type == RSP_POINT_HW_BREAK)
		len = 1;
	for (struct hw_point **pp = &p->hw_points; *pp; pp = &(*pp)->next) {
		struct hw_point *h = *pp;
		if (h->type != type || h->addr != addr || h->len != len)
			continue;
		if (--h->refs == 0) {
			*pp = h->next;
			free(h);
		}
		hw_slots_drop(p->slots, caps(p), slot_kind(type), addr, len);
		hw_mark_dirty(p);
		return 0;
	}
	return -ENOENT;
}

void hw_remove_all(struct process *p)
{
	while (p->hw_points) {
		struct hw_point *h = p->hw_points;
		p->hw_points = h->next;
		free(h);
	}
	memset(p->slots, 0, sizeof(p->slots));
	hw_mark_dirty(p);
}

int hw_available(void)
{
	static int state = 1;	/* 1: not asked yet */

	if (state == 1) {
		state = agent.ptrace->hw_works ? agent.ptrace->hw_works() : 0;
		if (state == -ENODEV)
			log_user("hardware breakpoints and watchpoints refused: "
				 "this machine's debug registers do not fire "
				 "(a virtual machine without them?)");
		else if (state < 0)
			debug("debug register self-test failed: %s", strerror(-state));
	}
	return state;
}

int hw_sync_thread(struct thread *t)
{
	int err = agent.ptrace->hw_sync(t);

	if (err == 0)
		t->dregs_dirty = false;
	return err;
}

/* Which gdb point a fired slot belongs to: the one whose range holds it. */
static const struct hw_point *hw_point_for(struct process *p,
					   const struct hw_slot *s)
{
	for (const struct hw_point *h = p->hw_points; h; h = h->next) {
		if (slot_kind(h->type) != s->kind)
			continue;
		if (s->addr >= h->addr && s->addr < h->addr + (h->len ? h->len : 1))
			return h;
	}
	return NULL;
}

bool hw_stopped_by(struct thread *t, const siginfo_t *si,
		   enum stop_reason *reason, uint64_t *addr)
{
	struct process *p = t->proc;
	bool armed = false;

	/* Nothing armed, nothing to ask the kernel (a probe hit's hot path). */
	for (int i = 0; i < MAX_HW_SLOTS; i++)
		armed |= p->slots[i].refs > 0;
	if (!armed)
		return false;
	int slot = agent.ptrace->hw_fired(t, si);
	if (slot < 0 || slot >= MAX_HW_SLOTS || !p->slots[slot].refs)
		return false;
	const struct hw_point *h = hw_point_for(p, &p->slots[slot]);
	if (!h)
		return false;
	switch (h->type) {
	case RSP_POINT_HW_BREAK:
		*reason = REASON_HWBREAK;
		break;
	case RSP_POINT_WRITE_WATCH:
		*reason = REASON_WATCH;
		break;
	case RSP_POINT_READ_WATCH:
		*reason = REASON_RWATCH;
		break;
	default:
		*reason = REASON_AWATCH;
		break;
	}
	*addr = h->addr;
	return true;
}
