/*
 * elfsym.c - function symbols and their bytes, read with libelf.
 *
 * Every later client subcommand that names code by symbol goes through
 * here, so the rules live in one place: .symtab first; for a stripped
 * file, the .symtab of its separate debug file, found by libdwfl the way
 * gdb and perf find it (by build-id under /usr/lib/debug/.build-id, by
 * .gnu_debuglink beside the file, in its .debug/ folder and under
 * /usr/lib/debug, through debuginfod when DEBUGINFOD_URLS is set);
 * .dynsym when there is none.  Aliases at one address collapse to the
 * first name the table lists; code comes from the file's own section
 * that holds the address (SHT_NOBITS or out-of-file symbols get no
 * bytes; a debug file has none of its own).
 */
#include "config.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libiberty/demangle.h>
#include <time.h>
#ifdef HAVE_LIBDEBUGINFOD
#include <elfutils/debuginfod.h>
#endif

#include "client/elfsym.h"

static int fail(char *err, size_t errsize, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errsize, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errsize, fmt, ap);
	va_end(ap);
	return code;
}

static int by_addr(const void *a, const void *b)
{
	const struct elfsym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return 0;
}

const uint8_t *elfsym_code_at(void *elf, uint64_t addr, size_t *avail)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		if (addr < sh.sh_addr || addr >= sh.sh_addr + sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < sh.sh_size)
			return NULL;
		*avail = sh.sh_addr + sh.sh_size - addr;
		return (const uint8_t *)d->d_buf + (addr - sh.sh_addr);
	}
	return NULL;
}

/* The bytes at [addr, addr + size) from an executable section. */
static const uint8_t *code_at(Elf *elf, uint64_t addr, uint64_t size)
{
	size_t avail;
	const uint8_t *p = elfsym_code_at(elf, addr, &avail);

	return p && size <= avail ? p : NULL;
}

static int by_map_addr(const void *a, const void *b)
{
	const struct elfsym_map *x = a, *y = b;

	return x->addr == y->addr ? 0 : x->addr < y->addr ? -1 : 1;
}

/*
 * An ARM mapping symbol ($a, $t, $d, or one of them followed by '.'
 * and anything) of an executable section: kept in f->maps.  The others
 * (data sections, plain untyped symbols) are not ours.
 */
static int add_map(struct elfsym_file *f, Elf *elf, const GElf_Sym *s,
		   const GElf_Shdr *symsh)
{
	const char *name = elf_strptr(elf, symsh->sh_link, s->st_name);
	Elf_Scn *scn;
	GElf_Shdr sh;
	struct elfsym_map *m;

	if (!name || name[0] != '$' || !name[1] || !strchr("atd", name[1]) ||
	    (name[2] != '\0' && name[2] != '.'))
		return 0;
	if (s->st_shndx == SHN_UNDEF || s->st_shndx >= SHN_LORESERVE ||
	    !(scn = elf_getscn(elf, s->st_shndx)) || !gelf_getshdr(scn, &sh) ||
	    !(sh.sh_flags & SHF_EXECINSTR))
		return 0;
	m = realloc(f->maps, (f->nmaps + 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	f->maps = m;
	f->maps[f->nmaps++] = (struct elfsym_map){ s->st_value, name[1] };
	return 0;
}

char elfsym_map_at(const struct elfsym_file *f, uint64_t addr, uint64_t *end)
{
	size_t lo = 0, hi = f->nmaps;

	/* the last map at or below addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->maps[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (end)
		*end = lo < f->nmaps ? f->maps[lo].addr : UINT64_MAX;
	return lo ? f->maps[lo - 1].kind : 0;
}

static int load_table(struct elfsym_file *f, Elf *elf, Elf_Scn *scn,
		      GElf_Shdr *sh)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	/* A second table adds to the first: its array is at least nsyms. */
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0, cap = f->nsyms;

	if (!d)
		return -EIO;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym s;
		const char *name;
		bool thumb;
		int type;

		if (!gelf_getsym(d, i, &s))
			continue;
		type = GELF_ST_TYPE(s.st_info);
		if (f->machine == EM_ARM && type == STT_NOTYPE) {
			int err = add_map(f, elf, &s, sh);

			if (err)
				return err;
			continue;
		}
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
		    s.st_shndx == SHN_UNDEF || s.st_size == 0)
			continue;
		name = elf_strptr(elf, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		if (f->nsyms == cap) {
			struct elfsym *ns;

			cap = cap ? cap * 2 : 256;
			ns = realloc(f->syms, cap * sizeof(*ns));
			if (!ns)
				return -ENOMEM;
			f->syms = ns;
		}
		/* An ARM Thumb function's value has bit 0 set: the address
		 * is the value without it. */
		thumb = f->machine == EM_ARM && (s.st_value & 1);
		f->syms[f->nsyms++] = (struct elfsym){
			.name = strdup(name),
			.addr = s.st_value & ~(GElf_Addr)thumb,
			.size = s.st_size,
			.thumb = thumb,
		};
	}
	return 0;
}

/* Where debug files are looked for: libdwfl's default, or a board's
 * tree (elfsym_set_sysroot). */
static char *debuginfo_path;

void elfsym_set_sysroot(const char *sysroot)
{
	free(debuginfo_path);
	debuginfo_path = NULL;
	if (sysroot && asprintf(&debuginfo_path, ":.debug:%s/usr/lib/debug", sysroot) < 0)
		debuginfo_path = NULL;
}

char **elfsym_debuginfo_path(void)
{
	return &debuginfo_path;
}

/*
 * debuginfod.  libdwfl asks the servers of DEBUGINFOD_URLS for a debug
 * file it cannot find on disk (libdw dlopens libdebuginfod.so.1), keeps
 * the download in the client cache (DEBUGINFOD_CACHE_PATH, else
 * ~/.cache/debuginfod_client), but gives the module no debug file name,
 * reports no progress and no reason for a miss.  With libdebuginfod the
 * same client of the Dwfl is asked again after libdwfl's look-up: a
 * cache hit that names the file, or the server's reason.
 */
#ifdef HAVE_LIBDEBUGINFOD
static struct {
	const char *path;	/* whose debug file is looked up */
	struct timespec start;
	bool told;		/* "downloading" was printed */
} download;

static double seconds_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t->tv_sec) + (now.tv_nsec - t->tv_nsec) / 1e9;
}

/* Called by libdebuginfod while a transfer runs: 0 lets it go on. */
static int download_progress(debuginfod_client *c, long got, long total)
{
	const char *url;

	if (!download.path || download.told || seconds_since(&download.start) < 1.0)
		return 0;
	url = debuginfod_get_url(c);
	fprintf(stderr, "probe-trace: downloading the debug file of %s from %s",
		download.path, url ? url : "debuginfod");
	if (total > 0)
		fprintf(stderr, " (%ld of %ld kB so far)", got / 1024, total / 1024);
	fputs("...\n", stderr);
	download.told = true;
	return 0;
}
#endif

void elfsym_debuginfod_watch(void *dwfl, const char *path)
{
#ifdef HAVE_LIBDEBUGINFOD
	debuginfod_client *c = dwfl ? dwfl_get_debuginfod_client(dwfl) : NULL;

	if (!c)
		return;
	debuginfod_set_progressfn(c, download_progress);
	download.path = path;
	download.told = false;
	clock_gettime(CLOCK_MONOTONIC, &download.start);
#else
	(void)dwfl;
	(void)path;
#endif
}

void elfsym_debuginfod_unwatch(void)
{
#ifdef HAVE_LIBDEBUGINFOD
	if (download.told)
		fprintf(stderr, "probe-trace: debug file of %s downloaded in %.1f s\n",
			download.path, seconds_since(&download.start));
	download.path = NULL;
	download.told = false;
#endif
}

/* The debug file of `mod` (of `path`) that a debuginfod server has, by
 * build-id (a cache hit when libdwfl just downloaded it), or NULL with
 * the reason in *note when DEBUGINFOD_URLS names a server. */
static char *debuginfod_file_of(Dwfl *dwfl, Dwfl_Module *mod, const char *path,
				char **note)
{
#ifdef HAVE_LIBDEBUGINFOD
	const char *urls = getenv("DEBUGINFOD_URLS");
	debuginfod_client *c;
	const unsigned char *id;
	GElf_Addr id_addr;
	char *found = NULL, hex[129];
	int len, fd, i;

	if (!urls || !*urls)
		return NULL;
	len = dwfl_module_build_id(mod, &id, &id_addr);
	if (len <= 0) {
		if (asprintf(note, "debuginfod cannot help: %s has no build-id", path) < 0)
			*note = NULL;
		return NULL;
	}
	c = dwfl_get_debuginfod_client(dwfl);
	if (!c) {
		if (asprintf(note, "no debuginfod client (is libdebuginfod.so.1 installed?)") < 0)
			*note = NULL;
		return NULL;
	}
	fd = debuginfod_find_debuginfo(c, id, len, &found);
	if (fd >= 0) {
		close(fd);
		return found;
	}
	for (i = 0; i < len && i < 64; i++)
		sprintf(hex + 2 * i, "%02x", id[i]);
	if (asprintf(note, "DEBUGINFOD_URLS=%s gave no debug file of build-id "
		     "%s: %s", urls, hex, strerror(-fd)) < 0)
		*note = NULL;
	return NULL;
#else
	(void)dwfl;
	(void)mod;
	(void)path;
	(void)note;
	return NULL;
#endif
}

/* The separate debug file of `path`, as libdwfl finds it (see the top of
 * this file), or NULL (with a reason in *note when debuginfod was asked). */
static char *debug_file_of(const char *path, char **note)
{
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &debuginfo_path,
	};
	Dwfl *dwfl = dwfl_begin(&cb);
	Dwfl_Module *mod;
	const char *debug = NULL;
	char *found = NULL;

	if (!dwfl)
		return NULL;
	mod = dwfl_report_offline(dwfl, "", path, -1);
	dwfl_report_end(dwfl, NULL, NULL);
	/* Looking for the symbol table looks for the debug file. */
	elfsym_debuginfod_watch(dwfl, path);
	if (mod && dwfl_module_getsymtab(mod) > 0 &&
	    dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &debug) && debug)
		found = strdup(debug);
	else if (mod)
		found = debuginfod_file_of(dwfl, mod, path, note);
	elfsym_debuginfod_unwatch();
	dwfl_end(dwfl);
	return found;
}

/* The function symbols of `debug`'s .symtab (its sections hold no code:
 * the bytes come from the stripped file).  0 when it has none. */
static int load_debug_table(struct elfsym_file *f, const char *debug)
{
	int fd = open(debug, O_RDONLY | O_CLOEXEC), ret = 0;
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (elf && (scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB) {
			ret = load_table(f, elf, scn, &sh);
			break;
		}
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

static int open_file(struct elfsym_file *f, const char *path, bool need_syms,
		     char *err, size_t errsize)
{
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	GElf_Shdr sh, symsh, dynsh;
	GElf_Ehdr eh;
	size_t out = 0;
	int ret;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return fail(err, errsize, -EIO, "libelf: %s", elf_errmsg(-1));
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0)
		return fail(err, errsize, -errno, "%s: %s", path, strerror(errno));
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || !gelf_getehdr(f->elf, &eh)) {
		ret = fail(err, errsize, -ENOEXEC, "%s: not an ELF file", path);
		goto out;
	}
	f->machine = eh.e_machine;
	while ((scn = elf_nextscn(f->elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB && !symtab) {
			symtab = scn;
			symsh = sh;
		} else if (sh.sh_type == SHT_DYNSYM && !dynsym) {
			dynsym = scn;
			dynsh = sh;
		}
	}
	f->stripped = !symtab;
	ret = 0;
	if (symtab) {
		ret = load_table(f, f->elf, symtab, &symsh);
	} else if ((f->debug_path = debug_file_of(path, &f->debug_note))) {
		ret = load_debug_table(f, f->debug_path);
		if (ret == 0 && f->nsyms)
			f->stripped = false;
		else {
			free(f->debug_path);	/* no functions: not used */
			f->debug_path = NULL;
		}
	}
	/* The dynamic symbols too, after a debug file's: an exported name
	 * may be there only (fclose is _IO_new_fclose in libc's .symtab,
	 * its versioned name fclose@@GLIBC_2.2.5), and joins the others at
	 * its address as an alias. */
	if (ret == 0 && !symtab && dynsym)
		ret = load_table(f, f->elf, dynsym, &dynsh);
	if (ret) {
		fail(err, errsize, ret, "%s: cannot read symbols: %s", path,
		     strerror(-ret));
		goto out;
	}
	if (f->nsyms == 0 && need_syms) {
		ret = fail(err, errsize, -ENODATA,
			   "%s: stripped: no function symbols (neither .symtab "
			   "nor .dynsym lists any)", path);
		goto out;
	}
	/* one entry per address, the first name listed wins; the others
	 * are its aliases */
	if (f->nsyms)	/* a stripped file may have no table at all */
		qsort(f->syms, f->nsyms, sizeof(*f->syms), by_addr);
	for (size_t i = 0; i < f->nsyms; i++) {
		if (out && f->syms[out - 1].addr == f->syms[i].addr) {
			struct elfsym *keep = &f->syms[out - 1];
			char **a = realloc(keep->aliases,
					   (keep->naliases + 1) * sizeof(*a));
			if (!a) {
				free(f->syms[i].name);
				continue;
			}
			a[keep->naliases++] = f->syms[i].name;
			keep->aliases = a;
			continue;
		}
		f->syms[out++] = f->syms[i];
	}
	f->nsyms = out;
	if (f->nmaps)
		qsort(f->maps, f->nmaps, sizeof(*f->maps), by_map_addr);
	for (size_t i = 0; i < f->nsyms; i++) {
		struct elfsym *s = &f->syms[i];

		s->code = code_at(f->elf, s->addr, s->size);
		if (s->name[0] == '_' && s->name[1] == 'Z')
			s->demangled = cplus_demangle(s->name, DMGL_PARAMS | DMGL_ANSI);
	}
	return 0;
out:
	elfsym_close(f);
	return ret;
}

int elfsym_open(struct elfsym_file *f, const char *path, char *err,
		size_t errsize)
{
	return open_file(f, path, true, err, errsize);
}

int elfsym_open_any(struct elfsym_file *f, const char *path, char *err,
		    size_t errsize)
{
	return open_file(f, path, false, err, errsize);
}

void elfsym_close(struct elfsym_file *f)
{
	for (size_t i = 0; i < f->nsyms; i++) {
		free(f->syms[i].name);
		free(f->syms[i].demangled);
		for (size_t k = 0; k < f->syms[i].naliases; k++)
			free(f->syms[i].aliases[k]);
		free(f->syms[i].aliases);
	}
	free(f->syms);
	free(f->maps);
	free(f->debug_path);
	free(f->debug_note);
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	memset(f, 0, sizeof(*f));
	f->fd = -1;
}

bool elfsym_matches(const struct elfsym *s, const char *query)
{
	size_t n;

	if (strcmp(s->name, query) == 0)
		return true;
	for (size_t i = 0; i < s->naliases; i++)
		if (strcmp(s->aliases[i], query) == 0)
			return true;
	if (!s->demangled)
		return false;
	if (strcmp(s->demangled, query) == 0)
		return true;
	n = strlen(query);
	return strncmp(s->demangled, query, n) == 0 && s->demangled[n] == '(';
}
