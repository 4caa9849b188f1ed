/*
 * hw-slots.h - packing gdb's hardware breakpoints and watchpoints (Z1-Z4)
 * into the debug register slots the arch has (struct ptrace_hw_caps).
 *
 * A watched range is cut into aligned pieces no longer than a slot covers
 * (max_len, a power of two); each piece takes a slot of its kind, or
 * shares one that watches exactly that piece the same way (a reference
 * count).  Breakpoints take slots 0..n_break-1; watchpoints the n_watch
 * slots after them, unless the arch has one pool for both (`shared`: x86
 * DR0-3).  Pure: breakpoint.c writes the slots to the threads; the unit
 * test (tests/unit/test-hw-slots.c) packs them without a process.
 */
#ifndef AGENT_HW_SLOTS_H
#define AGENT_HW_SLOTS_H

#include <stdint.h>

#include "agent/agent.h"

/* Takes the slots [addr, addr+len) needs for a point of `kind`: all of
 * them, or none (-ENOSPC, the slots as they were).  len 0 counts as 1. */
int hw_slots_take(struct hw_slot *slots, const struct ptrace_hw_caps *c,
		  enum hw_kind kind, uint64_t addr, unsigned int len);

/* Gives back what hw_slots_take took for the same point. */
void hw_slots_drop(struct hw_slot *slots, const struct ptrace_hw_caps *c,
		   enum hw_kind kind, uint64_t addr, unsigned int len);

/*
 * The armed slot a hardware trap names by the address it reports (where
 * the arch has separate pools, !c->shared): a breakpoint slot whose
 * instruction word holds `addr`, else a watch slot whose `gran`-byte
 * granule (a power of two: what one slot's address register aligns to)
 * holds it, else the watch slot nearest above `addr` (an access that
 * starts below the watched bytes, a 16-byte store over an 8-byte
 * watch).  The slot's index, or -ENOENT.
 */
int hw_slots_hit(const struct hw_slot *slots, const struct ptrace_hw_caps *c,
		 uint64_t addr, unsigned int gran);

#endif
