/*
 * thread-db.c - thread-local storage addresses through glibc's libthread_db.
 *
 * gdb 13 reads a TLS variable of a remote program by asking the stub
 * (qGetTLSAddr) for the address of offset O in the TLS block of the module
 * whose link_map is LM, in thread T.  Only the C library knows its own TLS
 * layout, so, like gdbserver, the agent asks glibc's libthread_db, which
 * calls back into the agent (proc_service: memory, registers, symbols).
 *
 * libthread_db is loaded with dlopen so that `monitor set
 * libthread-db-search-path` can point elsewhere, and works without a
 * libthread_db at all (every TLS request then fails, as gdb expects).  The
 * symbols it asks for (`nptl_version`, `_thread_db_*`) are found in the
 * dynamic symbol tables of the program's loaded objects with libelf, so
 * the agent does not need gdb's symbol tables.
 */
#define LOG_DOMAIN "agent"
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <proc_service.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <thread_db.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/log.h"

/* proc_service leaves this type to us. */
struct ps_prochandle {
	struct process *proc;
};

struct thread_db_lib {
	void *handle;
	td_err_e (*td_init)(void);
	td_err_e (*td_ta_new)(struct ps_prochandle *, td_thragent_t **);
	td_err_e (*td_ta_delete)(td_thragent_t *);
	td_err_e (*td_ta_map_lwp2thr)(const td_thragent_t *, lwpid_t, td_thrhandle_t *);
	td_err_e (*td_thr_tls_get_addr)(const td_thrhandle_t *, psaddr_t, size_t,
					psaddr_t *);
	td_err_e (*td_thr_tlsbase)(const td_thrhandle_t *, unsigned long,
				   psaddr_t *);
};

static struct thread_db_lib lib;
static bool lib_tried;
static char *search_path;		/* NULL: the system's libthread_db */

/* One agent per traced process, made when first needed. */
static struct {
	struct ps_prochandle ph;
	td_thragent_t *ta;
	pid_t pid;
} db;

static void thread_db_drop(void)
{
	if (db.ta && lib.td_ta_delete)
		lib.td_ta_delete(db.ta);
	db.ta = NULL;
	db.pid = 0;
}

static bool lib_load_from(const char *path)
{
	void *h = dlopen(path, RTLD_NOW);

	if (!h) {
		debug("thread_db: %s", dlerror());
		return false;
	}
	lib.handle = h;
	lib.td_init = dlsym(h, "td_init");
	lib.td_ta_new = dlsym(h, "td_ta_new");
	lib.td_ta_delete = dlsym(h, "td_ta_delete");
	lib.td_ta_map_lwp2thr = dlsym(h, "td_ta_map_lwp2thr");
	lib.td_thr_tls_get_addr = dlsym(h, "td_thr_tls_get_addr");
	lib.td_thr_tlsbase = dlsym(h, "td_thr_tlsbase");	/* optional */
	if (!lib.td_init || !lib.td_ta_new || !lib.td_ta_map_lwp2thr ||
	    !lib.td_thr_tls_get_addr || lib.td_init() != TD_OK) {
		dlclose(h);
		memset(&lib, 0, sizeof(lib));
		return false;
	}
	debug("thread_db: loaded %s", path);
	return true;
}

static bool lib_load(void)
{
	if (lib_tried)
		return lib.handle != NULL;
	lib_tried = true;
	if (!search_path)
		return lib_load_from("libthread_db.so.1");
	/* A colon-separated list of directories; $sdir is the system's. */
	char *copy = strdup(search_path), *save = NULL;
	bool ok = false;
	for (char *dir = strtok_r(copy, ":", &save); dir && !ok;
	     dir = strtok_r(NULL, ":", &save)) {
		char path[4096];
		if (strcmp(dir, "$sdir") == 0) {
			ok = lib_load_from("libthread_db.so.1");
			continue;
		}
		snprintf(path, sizeof(path), "%s/libthread_db.so.1", dir);
		if (access(path, R_OK) == 0)
			ok = lib_load_from(path);
	}
	free(copy);
	return ok;
}

void thread_db_set_search_path(const char *path)
{
	thread_db_drop();
	if (lib.handle)
		dlclose(lib.handle);
	memset(&lib, 0, sizeof(lib));
	lib_tried = false;
	free(search_path);
	search_path = path && *path ? strdup(path) : NULL;
}

void thread_db_forget(pid_t pid)
{
	if (db.pid == pid)
		thread_db_drop();
}

int thread_db_tls_address(struct thread *t, uint64_t lm, uint64_t offset,
			  uint64_t *addr)
{
	td_thrhandle_t th;
	psaddr_t a;
	td_err_e err;

	if (!lib_load())
		return -ENOSYS;
	if (db.ta && db.pid != t->proc->pid)
		thread_db_drop();
	if (!db.ta) {
		db.ph.proc = t->proc;
		err = lib.td_ta_new(&db.ph, &db.ta);
		if (err != TD_OK) {
			debug("thread_db: td_ta_new: error %d", err);
			db.ta = NULL;
			return -ENOENT;
		}
		db.pid = t->proc->pid;
	}
	err = lib.td_ta_map_lwp2thr(db.ta, t->tid, &th);
	if (err != TD_OK)
		return -ESRCH;
	if (lm == 0) {
		/* A static program has no link_map: gdb sends 0, and the only
		 * TLS block is the program's, module 1 (as gdbserver does). */
		if (!lib.td_thr_tlsbase)
			return -ENOSYS;
		err = lib.td_thr_tlsbase(&th, 1, &a);
		if (err != TD_OK) {
			debug("thread_db: td_thr_tlsbase: error %d", err);
			return -EFAULT;
		}
		*addr = (uint64_t)(uintptr_t)a + offset;
		return 0;
	}
	err = lib.td_thr_tls_get_addr(&th, (psaddr_t)(uintptr_t)lm, offset, &a);
	if (err != TD_OK) {
		debug("thread_db: td_thr_tls_get_addr: error %d", err);
		return -EFAULT;
	}
	*addr = (uint64_t)(uintptr_t)a;
	return 0;
}

/* --- symbols: the dynamic symbol tables of the loaded objects ----------------- */

/*
 * Calls `match` for every defined symbol of the symbol tables of `elf`
 * until it returns true.  Returns whether one did.
 */
static bool each_symbol(Elf *elf, bool (*match)(Elf *elf, size_t strtab,
						 const GElf_Sym *sym, void *arg),
			void *arg)
{
	Elf_Scn *scn = NULL;

	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB))
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; data && i < n; i++) {
			GElf_Sym sym;
			if (gelf_getsym(data, i, &sym) && sym.st_shndx != SHN_UNDEF &&
			    match(elf, sh.sh_link, &sym, arg))
				return true;
		}
	}
	return false;
}

struct by_name {
	const char *name;
	uint64_t value;
};

static bool named(Elf *elf, size_t strtab, const GElf_Sym *sym, void *arg)
{
	struct by_name *q = arg;
	const char *s = elf_strptr(elf, strtab, sym->st_name);

	if (!s || strcmp(s, q->name) != 0)
		return false;
	q->value = sym->st_value;
	return true;
}

static bool elf_lookup(const char *file, const char *name, uint64_t *value)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	struct by_name q = { name, 0 };
	bool found;

	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	found = each_symbol(elf, named, &q);
	if (found)
		*value = q.value;
	if (elf)
		elf_end(elf);
	close(fd);
	return found;
}

struct by_addr {
	uint64_t vaddr, start, size;
};

static bool around(Elf *elf, size_t strtab, const GElf_Sym *sym, void *arg)
{
	struct by_addr *q = arg;
	/* 32-bit ARM: bit 0 of a Thumb function's value is its set, not
	 * part of its address. */
	uint64_t v = sym->st_value & ~(agent.ptrace->flags_isa_bit ? 1ull : 0ull);

	if (GELF_ST_TYPE(sym->st_info) != STT_FUNC || !sym->st_size ||
	    q->vaddr < v || q->vaddr >= v + sym->st_size)
		return false;
	q->start = v;
	q->size = sym->st_size;
	return true;
}

/*
 * The ELF file mapped at `addr` in the process (/proc/PID/maps), opened,
 * and the address in it (its p_vaddr space) that `addr` is.  Returns
 * the Elf (the caller ends it and closes *fd) or NULL.
 */
static Elf *mapped_elf(struct process *p, uint64_t addr, int *fd, uint64_t *vaddr)
{
	char path[64], line[4352], file[4096];
	unsigned long long lo, hi, off;
	bool have = false;
	FILE *f;

	*vaddr = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", p->pid);
	if (!(f = fopen(path, "re")))
		return NULL;
	while (!have && fgets(line, sizeof(line), f)) {
		int n = 0;
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &lo, &hi, &off, &n) < 3 ||
		    addr < lo || addr >= hi || !n || line[n] != '/')
			continue;
		snprintf(file, sizeof(file), "%s", line + n);
		file[strcspn(file, "\n")] = '\0';
		have = true;
	}
	fclose(f);
	if (!have)
		return NULL;
	if ((*fd = open(file, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(*fd, ELF_C_READ, NULL);
	size_t nph = 0;
	uint64_t fo = addr - lo + off;
	if (elf && elf_getphdrnum(elf, &nph) == 0) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    fo >= ph.p_offset && fo < ph.p_offset + ph.p_filesz) {
				*vaddr = ph.p_vaddr + (fo - ph.p_offset);
				break;
			}
		}
	}
	if (!elf)
		close(*fd);
	return elf;
}

/*
 * The function around `addr` in the process: from the ELF symbol tables
 * of the file mapped there (/proc/PID/maps), so a stripped object has
 * none.  Returns true and its start and size in the process.
 */
bool process_function_at(struct process *p, uint64_t addr, uint64_t *start,
			 uint64_t *size)
{
	uint64_t vaddr;
	bool found = false;
	int fd;
	Elf *elf = mapped_elf(p, addr, &fd, &vaddr);

	if (!elf)
		return false;
	struct by_addr q = { vaddr, 0, 0 };
	if (vaddr && each_symbol(elf, around, &q)) {
		*start = addr - (vaddr - q.start);
		*size = q.size;
		found = true;
	}
	elf_end(elf);
	close(fd);
	return found;
}

/*
 * 32-bit ARM: which instruction set the code at `vaddr` is, from the
 * mapping symbols ($a, $t, $d: the nearest at or below it) or else from
 * the function symbol around it (bit 0 of a Thumb function's value).
 */
struct by_isa {
	uint64_t vaddr;
	uint64_t map_at;	/* the nearest mapping symbol's value so far */
	int map;		/* its set: 0 A32, 1 Thumb, -1 data / none */
	bool have_map;
	int func;		/* the function's: 0, 1, or -1 none */
};

static bool isa_sym(Elf *elf, size_t strtab, const GElf_Sym *sym, void *arg)
{
	struct by_isa *q = arg;
	const char *s = elf_strptr(elf, strtab, sym->st_name);
	uint64_t v = sym->st_value & ~1ull;

	if (GELF_ST_TYPE(sym->st_info) == STT_NOTYPE && s && s[0] == '$' &&
	    (s[1] == 'a' || s[1] == 't' || s[1] == 'd') && (!s[2] || s[2] == '.')) {
		if (v <= q->vaddr && (!q->have_map || v >= q->map_at)) {
			q->have_map = true;
			q->map_at = v;
			q->map = s[1] == 't' ? 1 : s[1] == 'a' ? 0 : -1;
		}
	} else if (GELF_ST_TYPE(sym->st_info) == STT_FUNC && q->func < 0 &&
		   q->vaddr >= v && q->vaddr < v + (sym->st_size ? sym->st_size : 1)) {
		q->func = (int)(sym->st_value & 1);
	}
	return false;
}

int process_isa_at(struct process *p, uint64_t addr)
{
	uint64_t vaddr;
	int fd;
	Elf *elf = mapped_elf(p, addr, &fd, &vaddr);
	struct by_isa q = { vaddr, 0, -1, false, -1 };

	if (!elf)
		return -1;
	if (vaddr)
		each_symbol(elf, isa_sym, &q);
	elf_end(elf);
	close(fd);
	if (q.have_map && q.map >= 0)
		return q.map;
	return q.func;
}

/* Walks the program's link_map chain (see xfer.c): file name and load
 * bias of every object, the program itself first. */
bool process_symbol_lookup(struct process *p, const char *name, uint64_t *addr)
{
	struct rsp_buf list;
	bool found = false;

	rsp_buf_init(&list);
	svr4_library_list(p, &list);
	/* The program: its bias is what the list's main entry says, which
	 * the XML does not carry; take it from /proc/PID/exe and auxv. */
	char exe[64];
	uint64_t value;
	snprintf(exe, sizeof(exe), "/proc/%d/exe", p->pid);
	if (elf_lookup(exe, name, &value)) {
		*addr = value + program_load_bias(p);
		found = true;
	}
	for (char *s = list.data; !found && s && (s = strstr(s, "<library name=\""));) {
		char file[4096];
		unsigned long long l_addr = 0;
		s += strlen("<library name=\"");
		char *q = strchr(s, '"');
		if (!q || (size_t)(q - s) >= sizeof(file))
			break;
		memcpy(file, s, q - s);
		file[q - s] = '\0';
		char *la = strstr(q, "l_addr=\"");
		if (la)
			l_addr = strtoull(la + 8, NULL, 16);
		if (file[0] && elf_lookup(file, name, &value)) {
			*addr = value + l_addr;
			found = true;
		}
		s = q;
	}
	rsp_buf_free(&list);
	return found;
}

ps_err_e ps_pglobal_lookup(struct ps_prochandle *ph, const char *obj,
			   const char *name, psaddr_t *addr)
{
	uint64_t a;

	(void)obj;	/* glibc 2.34+ keeps its thread symbols in libc */
	if (process_symbol_lookup(ph->proc, name, &a)) {
		*addr = (psaddr_t)(uintptr_t)a;
		return PS_OK;
	}
	debug("thread_db: symbol %s not found", name);
	return PS_NOSYM;
}

ps_err_e ps_pdread(struct ps_prochandle *ph, psaddr_t addr, void *buf,
		   size_t size)
{
	return mem_read(ph->proc, (uint64_t)(uintptr_t)addr, buf, size) ==
			       (ssize_t)size
		       ? PS_OK
		       : PS_ERR;
}

ps_err_e ps_pdwrite(struct ps_prochandle *ph, psaddr_t addr, const void *buf,
		    size_t size)
{
	return mem_write(ph->proc, (uint64_t)(uintptr_t)addr, buf, size) ==
			       (ssize_t)size
		       ? PS_OK
		       : PS_ERR;
}

/* The registers in the kernel's core-file layouts (prgregset_t,
 * prfpregset_t), which the arch knows how to get. */
ps_err_e ps_lgetregs(struct ps_prochandle *ph, lwpid_t lwp, prgregset_t regs)
{
	return agent.ptrace->ps_getregs(lwp, regs, false) == 0 ? PS_OK : PS_ERR;
}

ps_err_e ps_lsetregs(struct ps_prochandle *ph, lwpid_t lwp,
		     const prgregset_t regs)
{
	return agent.ptrace->ps_setregs(lwp, regs, false) == 0 ? PS_OK : PS_ERR;
}

ps_err_e ps_lgetfpregs(struct ps_prochandle *ph, lwpid_t lwp,
		       prfpregset_t *regs)
{
	return agent.ptrace->ps_getregs(lwp, regs, true) == 0 ? PS_OK : PS_ERR;
}

ps_err_e ps_lsetfpregs(struct ps_prochandle *ph, lwpid_t lwp,
		       const prfpregset_t *regs)
{
	return agent.ptrace->ps_setregs(lwp, regs, true) == 0 ? PS_OK : PS_ERR;
}

pid_t ps_getpid(struct ps_prochandle *ph)
{
	return ph->proc->pid;
}

ps_err_e ps_get_thread_area(struct ps_prochandle *ph, lwpid_t lwp, int idx,
			    void **base)
{
	uint64_t v;

	if (agent.ptrace->thread_area(lwp, idx, &v) < 0)
		return PS_ERR;
	*base = (void *)(uintptr_t)v;
	return PS_OK;
}
