/*
 * xol.c - execute-out-of-line areas in the traced process.
 *
 * A probed instruction is displaced by a breakpoint.  To run it without
 * taking the breakpoint out (which would let other threads slip past the
 * probe), the agent runs a copy of it elsewhere: in a slot of an XOL area,
 * a page the agent maps into the process by making one of its threads call
 * mmap.  Each area lies wholly within the arch's reach of the code it
 * serves (arch_ops.xol_reach: a rel32 jump's ±2 GiB on x86-64, a B's
 * ±128 MiB on aarch64), so relocated PC-relative operands and the jump
 * back need no scratch register and no single step; a slot beyond it is
 * never handed out.
 *
 * Slots are handed out once and never reused while the process is traced:
 * a thread can be inside a slot (interrupted by a signal, its handler's
 * return address pointing there) long after the probe's hit.  On detach the
 * threads inside a slot are moved back to the original code and the areas
 * are unmapped.
 */
#define LOG_DOMAIN "xol"
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "agent/agent.h"
#include "agent/keeper.h"
#include "agent/log.h"
#include "agent/xol-place.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define XOL_AREA_SIZE 4096
#define XOL_SLOT_SIZE 64
#define XOL_SLOTS (XOL_AREA_SIZE / XOL_SLOT_SIZE)

struct xol_area {
	struct xol_area *next;
	uint64_t base;
	unsigned int used;		/* slots handed out, in order */
};

/* Whether every slot of an area at `base` is in reach of `near`. */
static bool area_in_reach(uint64_t base, uint64_t near)
{
	return arch_xol_in_reach(agent.arch, near, base, XOL_AREA_SIZE);
}

/* Where an area may go: within the arch's reach of the code it serves,
 * or (a far pad's, xol_span_alloc_far) anywhere, or only beyond reach. */
enum xol_where { XOL_NEAR, XOL_ANYWHERE, XOL_BEYOND };

/*
 * The free address nearest to `near` where an area fits, as `where`
 * says (xol_place, xol_place_far), from /proc/PID/maps.  0 when there is
 * none.
 */
static uint64_t find_gap(pid_t pid, uint64_t near, enum xol_where where)
{
	struct xol_map_range *maps = NULL;
	size_t n = 0, cap = 0;
	char path[64], line[512];
	uint64_t best;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end;

		if (sscanf(line, "%llx-%llx", &start, &end) != 2)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			maps = realloc(maps, cap * sizeof(*maps));
			if (!maps)
				abort();
		}
		maps[n++] = (struct xol_map_range){ start, end };
	}
	fclose(f);
	best = where == XOL_NEAR ? xol_place(maps, n, near, XOL_AREA_SIZE, agent.arch)
				 : xol_place_far(maps, n, near, XOL_AREA_SIZE,
						 where == XOL_BEYOND, agent.arch);
	free(maps);
	return best;
}

/* A thread of `p` that can run an injected system call now: stopped,
 * and not a zombie leader. */
struct thread *process_stopped_thread(struct process *p)
{
	for (struct thread *t = p->threads; t; t = t->next)
		if (t->state == THREAD_STOPPED && !t->zombie)
			return t;
	return NULL;
}

static struct xol_area *xol_map(struct process *p, uint64_t near, enum xol_where place)
{
	struct thread *t = process_stopped_thread(p);
	uint64_t where = find_gap(p->pid, near, place), got = 0;
	int err;

	if (!t || !where) {
		debug("no %s for an XOL area near %#llx",
		      t ? "free address" : "stopped thread", (unsigned long long)near);
		return NULL;
	}
	/* The arch's mmap (mmap2 on 32-bit ARM) through the ptrace ops. */
	err = inferior_mmap(t, where, XOL_AREA_SIZE, PROT_READ | PROT_EXEC,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			    -1, 0, &got);
	if (err < 0 || got != where) {
		debug("mmap at %#llx in %d failed: %s", (unsigned long long)where,
		      p->pid, err < 0 ? strerror(-err) : "another address");
		return NULL;
	}
	struct xol_area *a = calloc(1, sizeof(*a));
	if (!a)
		abort();
	a->base = where;
	a->next = p->xol_areas;
	p->xol_areas = a;
	debug("area at %#llx in %d (for %#llx)", (unsigned long long)where, p->pid,
	      (unsigned long long)near);
	if (keeper_install(p) < 0)
		debug("no keeper handler in %d", p->pid);
	return a;
}

/* `len` bytes of consecutive slots (a jump pad) within reach of `near`. */
int xol_span_alloc(struct process *p, uint64_t near, size_t len, uint64_t *at)
{
	unsigned int n = (len + XOL_SLOT_SIZE - 1) / XOL_SLOT_SIZE;
	struct xol_area *a;

	if (n == 0 || n > XOL_SLOTS)
		return -EINVAL;
	for (a = p->xol_areas; a; a = a->next)
		if (a->used + n <= XOL_SLOTS && area_in_reach(a->base, near))
			break;
	if (!a)
		a = xol_map(p, near, XOL_NEAR);
	if (!a)
		return -ENOMEM;
	*at = a->base + (uint64_t)a->used * XOL_SLOT_SIZE;
	/* Both choices above keep to the reach; a slot out of it would be
	 * stepped or refused by xol_prepare, never boosted. */
	if (!arch_xol_in_reach(agent.arch, near, *at, len))
		return -ERANGE;
	a->used += n;
	return 0;
}

/*
 * `len` bytes of consecutive slots for a far jump pad (one the site
 * reaches by arch_ops.emit_jump_far): the free area nearest to `near`,
 * in reach or not, or with `beyond` (PROBE_AGENT_FAR_PADS) only an area
 * every byte of which is XOL_FAR_MIN away.  Slots (xol_slot_alloc) never
 * come from an area out of reach.
 */
int xol_span_alloc_far(struct process *p, uint64_t near, size_t len, bool beyond,
		       uint64_t *at)
{
	unsigned int n = (len + XOL_SLOT_SIZE - 1) / XOL_SLOT_SIZE;
	struct xol_area *a;

	if (n == 0 || n > XOL_SLOTS)
		return -EINVAL;
	for (a = p->xol_areas; a; a = a->next)
		if (a->used + n <= XOL_SLOTS &&
		    (!beyond || a->base >= near + XOL_FAR_MIN ||
		     a->base + XOL_AREA_SIZE + XOL_FAR_MIN <= near))
			break;
	if (!a)
		a = xol_map(p, near, beyond ? XOL_BEYOND : XOL_ANYWHERE);
	if (!a)
		return -ENOMEM;
	*at = a->base + (uint64_t)a->used * XOL_SLOT_SIZE;
	a->used += n;
	return 0;
}

int xol_slot_alloc(struct process *p, uint64_t near, uint64_t *slot)
{
	return xol_span_alloc(p, near, XOL_SLOT_SIZE, slot);
}

/* Slots of removed probes, by the address they served.  Reused only for
 * that address: a thread still in the slot runs the same code. */
struct xol_free {
	struct xol_free *next;
	uint64_t addr, slot;
};

void xol_slot_release(struct process *p, uint64_t addr, uint64_t slot)
{
	struct xol_free *f = malloc(sizeof(*f));

	if (!f)
		return;	/* the slot just stays unused */
	*f = (struct xol_free){ p->xol_free, addr, slot };
	p->xol_free = f;
}

bool xol_slot_reuse(struct process *p, uint64_t addr, uint64_t *slot)
{
	for (struct xol_free **pp = &p->xol_free; *pp; pp = &(*pp)->next) {
		struct xol_free *f = *pp;
		if (f->addr == addr && xol_contains(p, f->slot)) {
			*slot = f->slot;
			*pp = f->next;
			free(f);
			return true;
		}
	}
	return false;
}

static void forget_free_slots(struct process *p)
{
	while (p->xol_free) {
		struct xol_free *f = p->xol_free;
		p->xol_free = f->next;
		free(f);
	}
}

size_t xol_slot_size(void)
{
	return XOL_SLOT_SIZE;
}

bool xol_contains(const struct process *p, uint64_t addr)
{
	for (const struct xol_area *a = p->xol_areas; a; a = a->next)
		if (addr >= a->base && addr < a->base + XOL_AREA_SIZE)
			return true;
	return false;
}

/* Unmaps every area; threads must have been moved out of them. */
void xol_unmap_all(struct process *p)
{
	struct thread *t = process_stopped_thread(p);

	forget_free_slots(p);
	while (p->xol_areas) {
		struct xol_area *a = p->xol_areas;
		long ret, args[6] = { (long)a->base, XOL_AREA_SIZE };

		p->xol_areas = a->next;
		if (t && inferior_syscall(t, SYS_munmap, args, &ret) == 0 && ret == 0)
			debug("area at %#llx unmapped", (unsigned long long)a->base);
		free(a);
	}
}

void xol_forget_all(struct process *p)
{
	forget_free_slots(p);
	while (p->xol_areas) {
		struct xol_area *a = p->xol_areas;
		p->xol_areas = a->next;
		free(a);
	}
}
