/*
 * record-modules.c - the program and its libraries as local ELF files.
 *
 * A module is a file mapped into the process: mods[0] is the program,
 * the others its loaded libraries (libraries-svr4), each with its path
 * on the target, the local copy read for it (under --sysroot), and its
 * load bias (runtime address = link-time address + bias).  Symbols and
 * DWARF are read lazily, once, when a probe spec needs them; a local
 * copy whose GNU build-id differs from the one in the target's memory
 * is refused, since its addresses would be wrong.
 */
#include "config.h"

#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/dwarfval.h"
#include "client/elfsym.h"
#include "client/recorder.h"

char *local_path(struct recorder *r, const char *target_path)
{
	char *p;

	if (!r->sysroot)
		return strdup(target_path);
	if (asprintf(&p, "%s%s", r->sysroot, target_path) < 0)
		abort();
	return p;
}

/* A module's file, stripped or not: the program's header and build-id
 * are needed even when only a library is probed. */
struct elfsym_file *module_elf(struct module *m)
{
	char err[512];

	if (!m->opened && !m->failed) {
		if (elfsym_open_any(&m->ef, m->local, err, sizeof(err)) < 0) {
			err_msg("%s", err);
			m->failed = true;
		} else {
			m->opened = true;
		}
	}
	return m->opened ? &m->ef : NULL;
}

/*
 * The GNU build-id note of a local file: its bytes and link-time address.
 * Returns the id length, 0 when there is none.
 */
static size_t build_id(struct elfsym_file *f, uint8_t *id, size_t size,
		       uint64_t *vaddr)
{
	Elf *e = f->elf;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    !(sh.sh_flags & SHF_ALLOC) || !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp((char *)d->d_buf + name_off, "GNU", 4) == 0 &&
			    nh.n_descsz <= size) {
				memcpy(id, (char *)d->d_buf + desc_off, nh.n_descsz);
				*vaddr = sh.sh_addr + desc_off;
				return nh.n_descsz;
			}
		}
	}
	return 0;
}

/* Refuses a local copy whose build-id differs from the loaded one. */
int check_build_id(struct recorder *r, struct module *m)
{
	struct elfsym_file *f = module_elf(m);
	uint8_t want[64], got[64];
	uint64_t vaddr;
	size_t n;

	if (!f)
		return -ENOENT;
	n = build_id(f, want, sizeof(want), &vaddr);
	if (n == 0)
		return 0;	/* nothing to compare */
	if (read_target(r, vaddr + m->bias, got, n) < 0) {
		err_msg("%s: cannot read the target's build-id at 0x%llx",
			m->path, (unsigned long long)(vaddr + m->bias));
		return -EFAULT;
	}
	if (memcmp(want, got, n) != 0) {
		struct rsp_buf a, b;
		rsp_buf_init(&a);
		rsp_buf_init(&b);
		err_msg("%s: the local copy %s has build-id %s but the target's "
			"has %s: give the right copy (--sysroot)",
			m->path, m->local, hex_of(&a, want, n), hex_of(&b, got, n));
		rsp_buf_free(&a);
		rsp_buf_free(&b);
		return -ESTALE;
	}
	return 0;
}

struct module *add_module(struct recorder *r, const char *path,
				 uint64_t bias)
{
	struct module *m;

	if (r->nmods == MAX_MODULES)
		return NULL;
	m = &r->mods[r->nmods++];
	memset(m, 0, sizeof(*m));
	m->path = strdup(path);
	m->local = local_path(r, path);
	m->bias = bias;
	return m;
}

/* <library name="..." ... l_addr="0x..." .../> */
void parse_libraries(struct recorder *r, const char *xml)
{
	const char *p = xml;

	while ((p = strstr(p, "<library "))) {
		const char *end = strchr(p, '>');
		const char *name, *la;
		if (!end)
			break;
		name = strstr(p, "name=\"");
		la = strstr(p, "l_addr=\"");
		if (name && la && name < end && la < end) {
			name += 6;
			size_t n = strcspn(name, "\"");
			char path[PATH_MAX];
			snprintf(path, sizeof(path), "%.*s", (int)n, name);
			if (path[0] == '/')
				add_module(r, path, strtoull(la + 8, NULL, 16));
		}
		p = end;
	}
}

/* The library named by a spec: a path, a file name or its prefix before
 * ".so" ("libc", "libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6"). */
struct module *find_library(struct recorder *r, const char *lib,
				   char *err, size_t errsize)
{
	struct module *found = NULL;
	int count = 0;

	for (size_t i = 1; i < r->nmods; i++) {
		const char *path = r->mods[i].path;
		const char *base = strrchr(path, '/');
		base = base ? base + 1 : path;
		size_t n = strlen(lib);
		bool match = strcmp(path, lib) == 0 || strcmp(base, lib) == 0 ||
			     (strncmp(base, lib, n) == 0 &&
			      (base[n] == '.' || base[n] == '-'));
		if (match) {
			if (found && strcmp(found->path, path) != 0)
				count++;
			if (!found)
				count++;
			found = &r->mods[i];
		}
	}
	if (count == 1)
		return found;
	if (count == 0)
		snprintf(err, errsize, "no library '%s' is loaded in the process%s",
			 lib, r->nmods > 1 ? "" : " (it loads none)");
	else
		snprintf(err, errsize, "library '%s' is ambiguous: give its path", lib);
	return NULL;
}

/* Whether no loaded library matches `lib` at all (not an ambiguity). */
bool library_missing(struct recorder *r, const char *lib)
{
	char err[256];

	return !find_library(r, lib, err, sizeof(err)) &&
	       strncmp(err, "no library", 10) == 0;
}

/* The module's DWARF, or NULL (err says why). */
struct dv_module *module_dwarf(struct module *m, char *err,
				      size_t errsize)
{
	if (!m->dv_tried) {
		char why[512] = "no DWARF";
		m->dv_tried = true;
		if (dv_open(&m->dv, m->local, why, sizeof(why)) < 0) {
			m->dv = NULL;
			m->dv_error = strdup(why);
		}
	}
	if (!m->dv)
		snprintf(err, errsize, "%s", m->dv_error ? m->dv_error : "no DWARF");
	return m->dv;
}
