/*
 * solib.c - the dynamic linker's library events, watched by the agent.
 *
 * glibc's dynamic linker calls an empty function, r_debug.r_brk
 * (_dl_debug_state), twice around every change to its list of loaded
 * objects: with r_state RT_ADD or RT_DELETE before it maps or unmaps
 * anything, and with RT_CONSISTENT once the list (r_map and its chain of
 * link_maps) is whole again.  After a dlopen the new object is mapped and
 * relocated at that second call and none of its code has run yet (its
 * constructors run after); after a dlclose the object is unmapped and out
 * of the list.
 *
 * gdb puts its shared-library breakpoint there.  The agent puts a probe of
 * its own there (PROBE_OWNER_SOLIB), so that it learns of every load and
 * unload with no debugger, and without waiting for one: the thread in
 * dlopen or dlclose runs on as soon as the agent has looked at the list.
 * Like every probe it shares its breakpoint with a gdb Z0 at the same
 * address (gdb hears of its own breakpoint's hits, memory reads show the
 * original byte: breakpoint.c), it is one of the keeper's sites (restored
 * if the agent dies), and it goes at detach with the other probes.
 *
 * r_debug is found through DT_DEBUG in the program's _DYNAMIC (xfer.c).
 * Its layout, in the program's words: int r_version (a word with its
 * padding), r_map, r_brk, int r_state (the low half of a word on the
 * little-endian targets), r_ldbase.  A program without DT_DEBUG (the
 * dynamic linker run as the program) is watched at _dl_debug_state.
 */
#define LOG_DOMAIN "solib"
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/elfmem.h"
#include "agent/log.h"

enum { R_DEBUG_BRK = 2, R_DEBUG_STATE = 3 };	/* words into r_debug */

static int mem_cb(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return mem_read(ctx, addr, buf, len) == (ssize_t)len ? 0 : -EFAULT;
}

static struct elfmem solib_mem(struct process *p)
{
	return (struct elfmem){ { p, mem_cb, NULL }, agent.ptrace->word_size };
}

static void read_name(struct process *p, uint64_t addr, char *buf, size_t size)
{
	ssize_t n = 0;

	buf[0] = '\0';
	/* A page at a time: the name may end just before an unmapped one. */
	for (size_t got = 0; got < size - 1; got += (size_t)n) {
		size_t want = size - 1 - got;
		uint64_t room = 4096 - ((addr + got) & 4095);
		if (want > room)
			want = room;
		n = mem_read(p, addr + got, buf + got, want);
		if (n <= 0) {
			buf[got] = '\0';
			return;
		}
		buf[got + n] = '\0';
		if (memchr(buf + got, '\0', (size_t)n))
			return;
	}
	buf[size - 1] = '\0';
}

/* r_debug's word `index`; false when there is no r_debug yet. */
static bool r_debug_word(struct process *p, unsigned int index, uint64_t *value)
{
	struct elfmem m = solib_mem(p);
	int64_t r = process_r_debug(p);

	return r > 0 && elfmem_read_word(&m, (uint64_t)r + index * m.word, value) == 0;
}

int solib_state(struct process *p)
{
	uint64_t v;

	if (!r_debug_word(p, R_DEBUG_STATE, &v))
		return -ENOENT;
	return (int)(uint32_t)v;
}

int solib_each(struct process *p,
	       bool (*fn)(const struct solib *lib, void *arg), void *arg)
{
	struct elfmem m = solib_mem(p);
	int64_t r = process_r_debug(p);
	uint64_t lm = 0;
	int n = 0;

	if (r <= 0 || elfmem_r_map(&m, (uint64_t)r, &lm) < 0)
		return r < 0 ? (int)r : 0;
	/* The first entry is the program. */
	for (bool first = true; lm && n < 4096; first = false) {
		struct elfmem_link_map l;
		struct solib lib;
		if (elfmem_link_map(&m, lm, &l) < 0)
			return -EFAULT;
		if (!first) {
			lib.lm = lm;
			lib.l_addr = l.addr;
			read_name(p, l.name, lib.name, sizeof(lib.name));
			n++;
			if (lib.name[0] && fn(&lib, arg))
				break;
		}
		lm = l.next;
	}
	return n;
}

static int solib_hit(struct probe *pr, struct thread *t, void *arg)
{
	struct process *p = t->proc;
	int state = solib_state(p);

	(void)pr;
	(void)arg;
	debug("library event in %d: r_state %d", p->pid, state);
	ret_libraries_changed(p);
	/* Between RT_ADD/RT_DELETE and RT_CONSISTENT the list is being
	 * changed: it is read once it is whole. */
	if (state == SOLIB_CONSISTENT || state < 0)
		trace_libraries_changed(p);
	return 0;
}

int solib_watch(struct process *p, char *why, size_t whylen)
{
	uint64_t brk = 0;
	struct probe *pr;
	int err;

	if (!r_debug_word(p, R_DEBUG_BRK, &brk) || !brk) {
		if (!process_symbol_lookup(p, "_dl_debug_state", &brk)) {
			snprintf(why, whylen, "cannot watch library loads: the dynamic "
				 "linker's r_debug is not set up (a static program, or "
				 "one stopped before its dynamic linker ran)");
			return -ENOENT;
		}
	}
	pr = probe_at(p, brk);
	if (pr && pr->owner == PROBE_OWNER_SOLIB)
		return 0;
	if (pr) {
		snprintf(why, whylen, "cannot watch library loads: a probe is already "
			 "at the dynamic linker's hook 0x%" PRIx64, brk);
		return -EEXIST;
	}
	err = probe_insert(p, brk, solib_hit, NULL, &pr, why, whylen);
	if (err < 0)
		return err;
	pr->owner = PROBE_OWNER_SOLIB;
	debug("library events of %d watched at %#" PRIx64, p->pid, brk);
	return 0;
}
