/*
 * ipa.h - the in-process collector's functions (see ipa-abi.h).
 */
#ifndef PROBE_IPA_H
#define PROBE_IPA_H

#include <stddef.h>
#include <stdint.h>

#include "agent/ipa/ipa-abi.h"

/* The image's entry points are its only dynamic symbols. */
#ifdef IPA_IMAGE
#define IPA_EXPORT __attribute__((visibility("default")))
#else
#define IPA_EXPORT
#endif

/* One hit of hit->prog: an enum ipa_verdict, the record's blocks in
 * hit->out[0, hit->out_len). */
IPA_EXPORT int ipa_collect(struct ipa_hit *hit);

/* One hit of a jump pad's site: every program of `site` on the frame's
 * `regs` (nregs of them), the groups in out[0, out_size) (struct
 * ipa_site_out).  Returns the site's verdict. */
IPA_EXPORT int ipa_collect_site(const struct ipa_site *site,
				const uint64_t *regs, uint32_t nregs,
				uint8_t *out, uint32_t out_size);

/* Whether any tracepoint of `site` may want this hit: 0 when all have
 * false conditions (the pad then claims no record). */
IPA_EXPORT int ipa_site_wants(const struct ipa_site *site,
			      const uint64_t *regs, uint32_t nregs);

/*
 * Copies up to `len` bytes from `src` and returns how many it copied: all
 * of them, or those before the first unreadable byte.  In the image it is
 * arch assembly (ipa-copy-ARCH.S) whose loads lie between
 * ipa_copy_fault_begin and ipa_copy_fault_end; the agent resumes a fault
 * there at ipa_copy_fault_exit, which returns the count so far.
 */
size_t ipa_copy(void *dst, const void *src, size_t len);

#endif
