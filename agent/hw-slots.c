/*
 * hw-slots.c - hardware points packed into debug register slots
 * (hw-slots.h).  No process, no ptrace.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "agent/hw-slots.h"

typedef int piece_fn(struct hw_slot *slots, const struct ptrace_hw_caps *c,
		     uint64_t addr, unsigned int size, enum hw_kind kind);

/* Calls fn for each aligned piece of [addr, addr+len), none longer than
 * the arch's max_len. */
static int for_each_piece(uint64_t addr, unsigned int len, piece_fn *fn,
			  struct hw_slot *slots, const struct ptrace_hw_caps *c,
			  enum hw_kind kind)
{
	unsigned int max = c->max_len ? c->max_len : 1;

	if (len == 0)
		len = 1;
	while (len) {
		unsigned int size = max;
		while (size > 1 && ((addr & (size - 1)) || size > len))
			size /= 2;
		int err = fn(slots, c, addr, size, kind);
		if (err < 0)
			return err;
		addr += size;
		len -= size;
	}
	return 0;
}

/* The slots a point of `kind` may take: breakpoints first, watchpoints
 * after them unless the arch has one pool for both (x86 DR0-3). */
static void slot_range(const struct ptrace_hw_caps *c, enum hw_kind kind,
		       unsigned int *from, unsigned int *to)
{
	*from = 0;
	*to = c->n_break;
	if (!c->shared && kind != HW_EXEC) {
		*from = c->n_break;
		*to = c->n_break + c->n_watch;
	}
}

static int take_piece(struct hw_slot *slots, const struct ptrace_hw_caps *c,
		      uint64_t addr, unsigned int size, enum hw_kind kind)
{
	unsigned int from, to;
	int free_slot = -1;

	slot_range(c, kind, &from, &to);
	for (unsigned int i = from; i < to; i++) {
		struct hw_slot *s = &slots[i];
		if (s->refs && s->addr == addr && s->len == size && s->kind == kind) {
			s->refs++;
			return 0;
		}
		if (!s->refs && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0)
		return -ENOSPC;
	slots[free_slot] = (struct hw_slot){ addr, size, kind, 1 };
	return 0;
}

static int drop_piece(struct hw_slot *slots, const struct ptrace_hw_caps *c,
		      uint64_t addr, unsigned int size, enum hw_kind kind)
{
	(void)c;
	for (int i = 0; i < MAX_HW_SLOTS; i++) {
		struct hw_slot *s = &slots[i];
		if (s->refs && s->addr == addr && s->len == size && s->kind == kind) {
			s->refs--;
			return 0;
		}
	}
	return 0;
}

int hw_slots_take(struct hw_slot *slots, const struct ptrace_hw_caps *c,
		  enum hw_kind kind, uint64_t addr, unsigned int len)
{
	/* All or nothing: a range that does not fit leaves the slots as
	 * they were. */
	struct hw_slot before[MAX_HW_SLOTS];
	int err;

	memcpy(before, slots, sizeof(before));
	err = for_each_piece(addr, len, take_piece, slots, c, kind);
	if (err < 0)
		memcpy(slots, before, sizeof(before));
	return err;
}

void hw_slots_drop(struct hw_slot *slots, const struct ptrace_hw_caps *c,
		   enum hw_kind kind, uint64_t addr, unsigned int len)
{
	for_each_piece(addr, len, drop_piece, slots, c, kind);
}

int hw_slots_hit(const struct hw_slot *slots, const struct ptrace_hw_caps *c,
		 uint64_t addr, unsigned int gran)
{
	uint64_t mask = ~(uint64_t)(gran - 1);
	uint64_t best_dist = ~0ull;
	int best = -ENOENT;

	for (unsigned int i = 0; i < c->n_break; i++)
		if (slots[i].refs && (slots[i].addr & ~3ull) == (addr & ~3ull))
			return (int)i;
	for (unsigned int i = c->n_break; i < c->n_break + c->n_watch; i++) {
		const struct hw_slot *s = &slots[i];
		if (!s->refs)
			continue;
		if ((s->addr & mask) == (addr & mask))
			return (int)i;
		if (s->addr >= addr && s->addr - addr < best_dist) {
			best_dist = s->addr - addr;
			best = (int)i;
		}
	}
	return best;
}
