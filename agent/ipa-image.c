/*
 * ipa-image.c - the in-process collector's image, as the agent places it
 * in a traced process.
 *
 * The image (agent/ipa/, see ipa-abi.h) is built as a small shared object
 * with no libc and no undefined symbol, and linked into the agent as
 * bytes (ipa-blob.S).  Placing it is what a dynamic loader would do, for
 * the little it needs: its loadable segments copied at their offsets from
 * one base, and its relative relocations (the interpreter's tables hold
 * pointers) applied for that base.  Any other relocation, or a segment
 * with zero-filled memory (writable globals the image must not have), is
 * refused: the image runs from memory the process cannot write, shared
 * by every thread, so it keeps no state of its own.
 *
 * libelf reads the image; nothing here touches a process.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>

#include "agent/ipa-image.h"

extern const unsigned char probe_ipa_image[];
extern const unsigned char probe_ipa_image_end[];

static const struct {
	const char *name;
	size_t off;
	bool optional;		/* absent: the field stays 0 */
} wanted[] = {
	{ "ipa_collect", offsetof(struct ipa_image, collect), false },
	{ "ipa_collect_site", offsetof(struct ipa_image, collect_site), false },
	{ "ipa_site_wants", offsetof(struct ipa_image, site_wants), false },
	{ "ipa_copy_fault_begin", offsetof(struct ipa_image, fault_begin), false },
	{ "ipa_copy_fault_end", offsetof(struct ipa_image, fault_end), false },
	{ "ipa_copy_fault_exit", offsetof(struct ipa_image, fault_exit), false },
	{ "ipa_copy_native", offsetof(struct ipa_image, copy_native), true },
};

static int fail(struct ipa_image *img, int err, const char *what)
{
	snprintf(img->error, sizeof(img->error), "in-process collector image: %s",
		 what);
	return err;
}

static unsigned relative_type(unsigned machine)
{
	switch (machine) {
	case EM_X86_64: return R_X86_64_RELATIVE;
	case EM_AARCH64: return R_AARCH64_RELATIVE;
	case EM_ARM: return R_ARM_RELATIVE;
	default: return 0;
	}
}

/* The class an image of `machine` must have: 32-bit ARM's pointers are
 * 4 bytes, and its relative relocations REL ones, whose addend is the
 * word in place. */
static int machine_class(unsigned machine)
{
	return machine == EM_ARM ? ELFCLASS32 : ELFCLASS64;
}

/* Checks the image and learns its size and symbols. */
static int scan(struct ipa_image *img, Elf *elf)
{
	GElf_Ehdr eh;
	size_t nph;

	if (!gelf_getehdr(elf, &eh) || eh.e_type != ET_DYN ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || !relative_type(eh.e_machine) ||
	    gelf_getclass(elf) != machine_class(eh.e_machine))
		return fail(img, -ENOEXEC, "not a little-endian shared object of a known arch");
	img->machine = eh.e_machine;
	img->word = gelf_getclass(elf) == ELFCLASS32 ? 4 : 8;
	if (elf_getphdrnum(elf, &nph) < 0)
		return fail(img, -ENOEXEC, "no program headers");
	img->size = 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_memsz != ph.p_filesz)
			return fail(img, -ENOEXEC, "a segment with zero-filled memory");
		if (ph.p_offset + ph.p_filesz > img->file_size)
			return fail(img, -ENOEXEC, "a segment past the end of the file");
		if (ph.p_vaddr + ph.p_memsz > img->size)
			img->size = ph.p_vaddr + ph.p_memsz;
	}
	if (!img->size || img->size > IPA_IMAGE_MAX)
		return fail(img, -ENOEXEC, "no loadable segment, or too big");

	uint64_t *dst[sizeof(wanted) / sizeof(wanted[0])];
	bool found[sizeof(wanted) / sizeof(wanted[0])] = { false };
	for (size_t k = 0; k < sizeof(wanted) / sizeof(wanted[0]); k++)
		dst[k] = (uint64_t *)((char *)img + wanted[k].off);

	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || !(d = elf_getdata(scn, NULL)))
			continue;
		if (sh.sh_type == SHT_DYNSYM) {
			size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
			for (size_t i = 0; i < n; i++) {
				GElf_Sym s;
				const char *name;
				if (!gelf_getsym(d, (int)i, &s) ||
				    !(name = elf_strptr(elf, sh.sh_link, s.st_name)))
					continue;
				for (size_t k = 0; k < sizeof(wanted) / sizeof(wanted[0]); k++)
					if (strcmp(name, wanted[k].name) == 0 &&
					    s.st_shndx != SHN_UNDEF) {
						*dst[k] = s.st_value;
						found[k] = true;
					}
			}
		} else if (sh.sh_type == (img->word == 4 ? SHT_RELA : SHT_REL)) {
			/* One kind per arch: RELA on the 64-bit ones, REL on
			 * 32-bit ARM. */
			return fail(img, -ENOEXEC, img->word == 4 ? "RELA relocations"
								  : "REL relocations");
		}
	}
	for (size_t k = 0; k < sizeof(wanted) / sizeof(wanted[0]); k++)
		if (!found[k] && !wanted[k].optional)
			return fail(img, -ENOEXEC, "a symbol is missing");
	if (!(img->fault_begin < img->fault_end && img->fault_end <= img->size &&
	      img->copy_native < img->size &&
	      img->fault_exit < img->size && img->collect < img->size &&
	      img->collect_site < img->size && img->site_wants < img->size))
		return fail(img, -ENOEXEC, "symbols outside the image");
	return 0;
}

int ipa_image_open(struct ipa_image *img)
{
	memset(img, 0, sizeof(*img));
	img->file = probe_ipa_image;
	img->file_size = (size_t)(probe_ipa_image_end - probe_ipa_image);
	return ipa_image_open_file(img, img->file, img->file_size);
}

int ipa_image_open_file(struct ipa_image *img, const void *file, size_t size)
{
	Elf *elf;
	int err;

	memset(img, 0, sizeof(*img));
	img->file = file;
	img->file_size = size;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return fail(img, -ENOSYS, "libelf is too old");
	elf = elf_memory((char *)file, size);
	if (!elf)
		return fail(img, -ENOEXEC, elf_errmsg(-1));
	err = scan(img, elf);
	elf_end(elf);
	return err;
}

int ipa_image_place(struct ipa_image *img, uint64_t base, uint8_t *out,
		    size_t size)
{
	unsigned rel = relative_type(img->machine);
	size_t nph;
	Elf *elf;
	int err = 0;

	if (size < img->size)
		return fail(img, -ENOSPC, "no room for it");
	elf = elf_memory((char *)img->file, img->file_size);
	if (!elf || elf_getphdrnum(elf, &nph) < 0) {
		elf_end(elf);
		return fail(img, -ENOEXEC, "unreadable");
	}
	memset(out, 0, img->size);
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD)
			memcpy(out + ph.p_vaddr, img->file + ph.p_offset, ph.p_filesz);
	}
	if (img->word == 4 && base + img->size > UINT32_MAX + 1ull) {
		elf_end(elf);
		return fail(img, -ERANGE, "a base beyond 32 bits");
	}
	Elf_Scn *scn = NULL;
	while (!err && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		bool rela = img->word == 8;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != (rela ? SHT_RELA : SHT_REL) ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; i < n; i++) {
			GElf_Rela r = { 0 };
			GElf_Rel rl;
			bool ok = rela ? gelf_getrela(d, (int)i, &r) != NULL
				       : gelf_getrel(d, (int)i, &rl) != NULL;
			if (ok && !rela) {
				r.r_offset = rl.r_offset;
				r.r_info = rl.r_info;
			}
			if (!ok || GELF_R_TYPE(r.r_info) != rel ||
			    r.r_offset + img->word > img->size) {
				err = fail(img, -ENOEXEC,
					   "a relocation other than a relative one");
				break;
			}
			if (rela) {
				uint64_t v = base + (uint64_t)r.r_addend;
				memcpy(out + r.r_offset, &v, sizeof(v));
			} else {
				/* REL: the addend is the word the link left
				 * there (little-endian). */
				uint32_t v;
				memcpy(&v, out + r.r_offset, sizeof(v));
				v += (uint32_t)base;
				memcpy(out + r.r_offset, &v, sizeof(v));
			}
		}
	}
	elf_end(elf);
	return err;
}
