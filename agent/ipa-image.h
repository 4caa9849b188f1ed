/*
 * ipa-image.h - the in-process collector's image, placed by the agent
 * (see ipa-image.c and agent/ipa/ipa-abi.h).
 */
#ifndef PROBE_IPA_IMAGE_H
#define PROBE_IPA_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IPA_IMAGE_MAX (256u << 10)

struct ipa_image {
	const unsigned char *file;	/* the shared object's bytes */
	size_t file_size;
	unsigned machine;		/* EM_* */
	unsigned word;			/* bytes of its pointers: 8, or 4 (ARM) */
	size_t size;			/* bytes it takes once placed */
	/* Offsets from the image's base. */
	uint64_t collect;		/* ipa_collect */
	uint64_t collect_site;		/* ipa_collect_site */
	uint64_t site_wants;		/* ipa_site_wants */
	uint64_t fault_begin, fault_end; /* ipa_copy's loads */
	uint64_t fault_exit;		/* where a faulting load resumes */
	uint64_t copy_native;		/* ipa_copy for the pads to call
					 * (arch_pad_ring.copy_fn); 0: the
					 * arch's image has none */
	char error[160];		/* why the last call failed */
};

/* The image linked into this agent: checks it and fills *img. */
int ipa_image_open(struct ipa_image *img);
/* The same for the image in `file` (the unit tests). */
int ipa_image_open_file(struct ipa_image *img, const void *file, size_t size);
/* Writes the image as it must be at `base` in the process into
 * out[0, img->size); `size` is out's size.  0 or -errno (img->error). */
int ipa_image_place(struct ipa_image *img, uint64_t base, uint8_t *out,
		    size_t size);

/* True when a fault at `pc` (offset from the base) is one of ipa_copy's
 * loads, to be resumed at fault_exit. */
static inline bool ipa_image_fault_fixable(const struct ipa_image *img,
					   uint64_t off)
{
	return off >= img->fault_begin && off < img->fault_end;
}

#endif
