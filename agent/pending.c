/*
 * pending.c - tracepoint locations in libraries that are not loaded yet.
 *
 * A recorder probing a library the program loads later (dlopen) defines
 * the tracepoint as usual (QTDP, at an address of its choosing: the `key`)
 * and then says where the location really is (Qprobe.pending): in the
 * library named `lib`, at symbol `sym` plus `offset`, or, with no symbol,
 * at `offset` from the library's link-time address 0.  The agent places
 * the location itself, with no client in the loop, each time the library
 * appears in the dynamic linker's list (solib.c), and takes it out when
 * the library leaves it:
 *
 *   dlopen  -> RT_CONSISTENT: mapped, relocated, no code run yet
 *              -> probe at l_addr + (symbol) + offset      "placed"
 *   dlclose -> RT_CONSISTENT: unmapped and out of the list
 *              -> probe dropped, nothing written there      "removed"
 *
 * Nothing is written where an unloaded library was: another mapping may
 * be there already (breakpoint.c, bp_unmapped).  Hits of a placed
 * location run its tracepoint as if it were at the key (trace-run.c maps
 * the probe's address back), so frames, conditions and counts are those
 * of the tracepoint gdb or the recorder defined.
 *
 * What happens is kept as events the recorder reads (qprobe.libevents):
 * placed, removed with the frames of that load, still placed when the
 * run ended, or an error (no such symbol in the library): the program is
 * never harmed by a location that cannot be placed.
 */
#define LOG_DOMAIN "tp"
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/log.h"
#include "agent/pending.h"

/* Events waiting for qprobe.libevents; past this the oldest are kept and
 * the loss is said (a client that never asks). */
#define EVENTS_MAX (256u << 10)

static struct pending *pendings;
/* Changes whenever a location is defined, placed or taken out. */
static uint64_t generation;
static struct rsp_buf events;
static bool events_init, events_overflow;

static void event(const struct rsp_libevent *e)
{
	size_t before;

	if (!events_init) {
		rsp_buf_init(&events);
		events_init = true;
	}
	before = events.len;
	rsp_libevent_put(&events, e);
	if (events.len > EVENTS_MAX) {
		events.len = before;	/* the oldest are kept */
		events.data[before] = '\0';
		events_overflow = true;
	}
}

static void error_event(struct pending *pl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void error_event(struct pending *pl, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	event(&(struct rsp_libevent){ .kind = RSP_LIBEV_FAILED, .tp = pl->number,
				      .key = pl->key, .text = msg });
	debug("tracepoint %u: %s", pl->number, msg);
}

struct pending *pending_find(uint32_t number, uint64_t key)
{
	for (struct pending *pl = pendings; pl; pl = pl->next)
		if (pl->number == number && pl->key == key)
			return pl;
	return NULL;
}

uint64_t pending_gen(void)
{
	return generation;
}

bool pending_any(void)
{
	return pendings != NULL;
}

struct pending *pending_next_at(uint64_t addr, const struct pending *prev)
{
	for (struct pending *pl = prev ? prev->next : pendings; pl; pl = pl->next)
		if (pl->placed && pl->addr == addr)
			return pl;
	return NULL;
}

int pending_define(uint32_t number, uint64_t key, uint64_t offset,
		   const char *sym, const char *lib, char *why, size_t whylen)
{
	struct pending *pl = pending_find(number, key);

	if (!lib[0]) {
		snprintf(why, whylen, "pending tracepoint %u: no library named", number);
		return -EINVAL;
	}
	if (!pl) {
		pl = calloc(1, sizeof(*pl));
		if (!pl)
			return -ENOMEM;
		pl->number = number;
		pl->key = key;
		pl->next = pendings;
		pendings = pl;
	}
	free(pl->sym);
	free(pl->lib);
	pl->sym = strdup(sym);
	pl->lib = strdup(lib);
	pl->offset = offset;
	generation++;
	if (!pl->sym || !pl->lib)
		return -ENOMEM;
	return 0;
}

void pending_clear(void)
{
	generation++;
	while (pendings) {
		struct pending *pl = pendings;
		pendings = pl->next;
		free(pl->sym);
		free(pl->lib);
		free(pl);
	}
	if (events_init)
		rsp_buf_reset(&events);
	events_overflow = false;
}

void pending_start_run(void)
{
	for (struct pending *pl = pendings; pl; pl = pl->next) {
		pl->placed = false;
		generation++;
		pl->loads = 0;
		pl->failed_lm = 0;
	}
	if (events_init)
		rsp_buf_reset(&events);
	events_overflow = false;
}

/*
 * Whether loaded object `path` is the library a spec names: its path, its
 * file name, or the file name's start before a dot or a dash ("libc",
 * "libc.so.6", "_json" for _json.cpython-311-x86_64-linux-gnu.so), as
 * probe-trace names libraries.
 */
static bool names_library(const char *lib, const char *path)
{
	const char *base = strrchr(path, '/');
	size_t n = strlen(lib);

	base = base ? base + 1 : path;
	if (strcmp(path, lib) == 0)
		return true;
	if (strchr(lib, '/')) {
		/* A path: the same file by another name (/lib and /usr/lib
		 * of a merged /usr, a symbolic link). */
		char a[PATH_MAX], b[PATH_MAX];
		return strcmp(strrchr(lib, '/') + 1, base) == 0 &&
		       realpath(lib, a) && realpath(path, b) && strcmp(a, b) == 0;
	}
	return strcmp(base, lib) == 0 ||
	       (strncmp(base, lib, n) == 0 && (base[n] == '.' || base[n] == '-'));
}

/* --- the symbol, from the library's file ------------------------------- */

/* Symbol `name` of the ELF file at `path`: its link-time value and size,
 * from .symtab if the file has one, else .dynsym. */
static int file_symbol(const char *path, const char *name, uint64_t *value,
		       uint64_t *size, bool *stripped)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf_Scn *scn = NULL;
	int err = -ENOENT;

	*stripped = true;
	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf) {
		close(fd);
		return -ENOEXEC;
	}
	while (err == -ENOENT && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			*stripped = false;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; d && i < n; i++) {
			GElf_Sym sym;
			const char *s;
			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    (GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
			     GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC))
				continue;
			s = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (s && strcmp(s, name) == 0) {
				*value = sym.st_value;
				*size = sym.st_size;
				err = 0;
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return err;
}

/* --- placing and removing ---------------------------------------------- */

/* The address of `pl` in library `lib`, or -errno with the event said. */
static int resolve(struct process *p, struct pending *pl, const struct solib *lib,
		   uint64_t *addr)
{
	uint64_t value = 0, size = 0;
	bool stripped = true;
	char file[PATH_MAX + 64];

	if (!pl->sym[0]) {
		*addr = lib->l_addr + pl->offset;
		return 0;
	}
	/* A name dlopen was given with a slash but not from the root is
	 * the program's, relative to its own directory. */
	if (lib->name[0] == '/')
		snprintf(file, sizeof(file), "%s", lib->name);
	else
		snprintf(file, sizeof(file), "/proc/%d/cwd/%s", p->pid, lib->name);
	int err = file_symbol(file, pl->sym, &value, &size, &stripped);
	if (err == -ENOENT) {
		error_event(pl, "no function '%s' in %s%s", pl->sym, lib->name,
			    stripped ? " (the file is stripped: only its exported "
				       "functions are known)" : "");
		return err;
	}
	if (err < 0) {
		error_event(pl, "cannot read the symbols of %s: %s", lib->name,
			    strerror(-err));
		return err;
	}
	if (size && pl->offset >= size) {
		error_event(pl, "%s+%" PRIu64 " is beyond the end of %s (%" PRIu64
			    " bytes) in %s", pl->sym, pl->offset, pl->sym, size,
			    lib->name);
		return -ERANGE;
	}
	*addr = lib->l_addr + value + pl->offset;
	return 0;
}

static void place(struct process *p, struct pending *pl, const struct solib *lib)
{
	char why[300];
	uint64_t addr;

	if (pl->failed_lm == lib->lm)
		return;		/* said for this load already */
	if (resolve(p, pl, lib, &addr) < 0) {
		pl->failed_lm = lib->lm;
		return;
	}
	int err = trace_place(p, pl->number, pl->key, addr, why, sizeof(why));
	if (err == -ECANCELED)
		return;		/* disabled (QTDisable): not now */
	if (err < 0) {
		pl->failed_lm = lib->lm;
		error_event(pl, "cannot probe 0x%" PRIx64 " in %s: %s", addr,
			    lib->name, why);
		return;
	}
	pl->placed = true;
	generation++;
	pl->addr = addr;
	pl->lm = lib->lm;
	pl->l_addr = lib->l_addr;
	pl->loads++;
	pl->hits_at = trace_frames_of(pl->number, pl->key);
	event(&(struct rsp_libevent){ .kind = RSP_LIBEV_PLACED, .tp = pl->number,
				      .key = pl->key, .addr = addr, .load = pl->loads,
				      .text = lib->name });
	debug("tracepoint %u placed at %#" PRIx64 " in %s (load %u)", pl->number,
	      addr, lib->name, pl->loads);
}

/* Says the end of a placement: `how` is 'r' (its library went) or 's'
 * (the run or the process ended with it in). */
static void unplace(struct pending *pl, char how)
{
	uint64_t frames = trace_frames_of(pl->number, pl->key) - pl->hits_at;

	event(&(struct rsp_libevent){ .kind = (enum rsp_libevent_kind)how,
				      .tp = pl->number, .key = pl->key,
				      .addr = pl->addr, .load = pl->loads,
				      .frames = frames });
	pl->placed = false;
	generation++;
}

struct scan {
	struct pending *pl;
	bool still;		/* pl's library is in the list as it was */
	const struct solib *match;
	struct solib found;
};

static bool same_load(const struct solib *lib, void *arg)
{
	struct scan *s = arg;

	if (lib->lm == s->pl->lm && lib->l_addr == s->pl->l_addr &&
	    names_library(s->pl->lib, lib->name)) {
		s->still = true;
		return true;
	}
	return false;
}

static bool first_match(const struct solib *lib, void *arg)
{
	struct scan *s = arg;

	if (!names_library(s->pl->lib, lib->name))
		return false;
	s->found = *lib;
	s->match = &s->found;
	return true;
}

void pending_update(struct process *p)
{
	bool gone = false;

	if (!pendings)
		return;
	/* Removals first: a library closed and opened again between two
	 * looks at the list is a new load. */
	for (struct pending *pl = pendings; pl; pl = pl->next) {
		struct scan s = { .pl = pl };
		if (!pl->placed)
			continue;
		solib_each(p, same_load, &s);
		if (!s.still) {
			if (!gone)
				trace_drain(false);	/* the pads' records first */
			gone = true;
			unplace(pl, 'r');
			trace_unplace(p, pl->addr);
		}
	}
	for (struct pending *pl = pendings; pl; pl = pl->next) {
		struct scan s = { .pl = pl };
		if (pl->placed)
			continue;
		solib_each(p, first_match, &s);
		if (s.match)
			place(p, pl, s.match);
	}
}

void pending_run_ended(void)
{
	for (struct pending *pl = pendings; pl; pl = pl->next)
		if (pl->placed)
			unplace(pl, 's');
}

/*
 * qprobe.libevents: `P` then `;event` for each event since the last
 * query, as many as fit in one reply (the client asks until `P` alone):
 *   p<tp>,<key>,<addr>,<load>,<hex path>   placed, load-th time
 *   r<tp>,<key>,<addr>,<load>,<frames>     removed: its library went
 *   s<tp>,<key>,<addr>,<load>,<frames>     still placed when the run or
 *                                          the process ended
 *   x<tp>,<key>,<hex message>              could not be placed
 *   o                                      events were lost (not asked)
 * Numbers in hex; frames are those of that load.
 */
void pending_events_reply(struct rsp_buf *reply)
{
	size_t max = RSP_MAX_PAYLOAD / 2, cut = 0;
	bool lost;

	if (!events_init) {
		rsp_reply_libevents(reply, "", 0, false);
		return;
	}
	while (cut < events.len) {
		const char *next = memchr(events.data + cut + 1, ';', events.len - cut - 1);
		size_t end = next ? (size_t)(next - events.data) : events.len;
		if (end > max && cut > 0)
			break;
		cut = end;
	}
	lost = events.len == cut && events_overflow;
	rsp_reply_libevents(reply, events.data, cut, lost);
	memmove(events.data, events.data + cut, events.len - cut);
	events.len -= cut;
	if (lost)
		events_overflow = false;
}
