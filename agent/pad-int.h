/*
 * pad-int.h - what the jump pad files share, and no one else: the layout
 * of the shared memory (the table of entries and the ring of records),
 * a process's pad state (struct pad_table) and the code of its pads
 * (struct pad_code), and the functions one pad file calls in another.
 *
 *   pad.c        placement: the shared memory, the in-process collector's
 *                memory and sites, a probe's pad and its site code,
 *                detach and teardown
 *   pad-ret.c    returns with no stop: the shadow stacks, the return
 *                trampoline, the TSC against the clocks
 *   pad-step.c   threads in pads: the hand-off trap, running on, leaving
 *                and settling a thread out of a pad
 *   pad-drain.c  the ring's records to their owner (pad_drain), and
 *                salvage of the records a gone agent left (pad_salvage)
 *
 * The public interface is in agent/agent.h (pad_*).
 */
#ifndef AGENT_PAD_INT_H
#define AGENT_PAD_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "agent/agent.h"
#include "agent/ipa-image.h"
#include "agent/pad-ring.h"

/*
 * The shared memory: the table of PAD_ENTRIES entries, then the
 * collector's ring: a page for its head, then records laid out as
 * entries (struct arch_pad_layout: the arch's), with the sequence word
 * where an entry has its owner.  A record is twice an entry: the second
 * half is the block area the in-process collector fills (PAD_IPA).
 * Then the thread id table the pads read (pad-tid.c, PAD_TID_* in
 * arch/arch.h).  A record's time is a CLOCK_REALTIME timespec, or the
 * TSC with PAD_TIME_TSC where the timespec's tv_nsec would be.
 *
 * The in-process collector (agent/ipa/, PAD_IPA) has memory of its own,
 * a second memfd: its image (ipa_image_place), read and execute in the
 * process, then its data (the sites, the programs and their counters),
 * read-write, given out in order and never reused while the process
 * lives: IPA_DATA_SIZE bytes serve a few hundred sites.
 */
#define PAD_ENTRIES 256
#define RING_RECORDS_OFF 4096
#define RING_RECORDS 4096
#define FRAME_WORDS_MAX 64

#define IPA_DATA_SIZE (256u << 10)
#define IPA_PROGS_MAX (16u << 10)	/* a site's programs, together */

#define PAD_CODE_MAX 2048	/* a pad's code while it is built, at most */
#define PAD_SITE_MAX 16	/* the bytes a jump and its breakpoints cover, at most */
#define PAD_FUNC_MAX (4u << 20)	/* functions scanned for branches, at most */

static inline const struct arch_pad_layout *layout(void)
{
	return agent.arch->pad_layout;
}

static inline size_t table_size(void)
{
	return (size_t)PAD_ENTRIES << layout()->entry_shift;
}

/* The ring's offset in the shared memory (after the table). */
static inline size_t ring_off(void)
{
	return table_size();
}

/* A ring record: an entry's layout, then the block area. */
static inline unsigned int record_shift(void)
{
	return layout()->entry_shift + 1;
}

static inline unsigned int blocks_off(void)
{
	return 1u << layout()->entry_shift;
}

static inline unsigned int blocks_size(void)
{
	return (1u << record_shift()) - blocks_off();
}

static inline size_t ring_records_bytes(void)
{
	return (size_t)RING_RECORDS << record_shift();
}

/* The thread id table pads read (PAD_TID_* in arch/arch.h), after the
 * ring's records. */
static inline size_t tids_off(void)
{
	return table_size() + RING_RECORDS_OFF + ring_records_bytes();
}

#define TIDS_BYTES (((size_t)PAD_TID_ENTRIES * 16 + 4095) & ~(size_t)4095)

/* The return trampoline's latency histograms (RET_HIST_*), after the
 * thread id table. */
static inline size_t hist_off(void)
{
	return tids_off() + TIDS_BYTES;
}

static inline size_t shm_size(void)
{
	return hist_off() + RET_HIST_BYTES;
}

/* The probe's address a frame holds. */
static inline uint64_t frame_pc(const uint8_t *e)
{
	uint64_t pc;

	memcpy(&pc, e + layout()->off_frame + 8 * layout()->frame_pc, 8);
	return pc;
}

/* Code of a pad, kept until the process goes (threads may still be in
 * it after its probe is removed). */
enum { PAD_FAULT_COND, PAD_FAULT_TID, PAD_FAULT_RET, PAD_FAULT_BASES, PAD_FAULTS };
struct pad_code {
	struct pad_code *next;
	uint64_t addr, trap, site;
	size_t len;
	/* Loads that may fault (0: none) and where a fault there goes
	 * on: a native condition's (its true path), and the thread
	 * pointer's word (the TCB's self pointer) of the tid lookup, of
	 * the return push and of the record's bases (struct
	 * arch_pad_fault). */
	struct pad_load {
		uint64_t load, take;
	} faults[PAD_FAULTS];
};

struct pad_table {
	uint64_t remote;		/* where the process maps it */
	uint8_t *local;			/* where the agent does */
	unsigned int image_form;	/* ptrace_arch_ops.pad_options */
	bool tp_read;
	bool failed;			/* could not be set up: no pads */
	struct pad_code *codes;
	struct pad_ring_reader reader;	/* how far pad_drain read the ring */
	bool tsc_time;			/* recording pads stamp hits with the TSC */
	bool time_said;			/* ... and the log said how they do */
	/* The register block a record is loaded into for its owner (a
	 * register source with no thread: the hitting thread went on long
	 * ago); made by the first drain. */
	uint8_t *rec_regs;
	/* The in-process collector's memory (PAD_IPA): none until a site
	 * wants it. */
	struct ipa_image img;
	uint64_t ipa_remote;
	uint8_t *ipa_local;
	size_t ipa_size, ipa_used;
	size_t ipa_tsvs_off;		/* struct ipa_tsvs, from the base */
	bool ipa_failed;
	uint64_t ipa_faults;		/* its loads fixed up (pad_fault) */
	uint64_t tp_faults;		/* thread pointer word loads fixed up (pad_fault) */
	/* The process's vDSO clock_gettime, which a pad that stores the
	 * hit's time calls instead of the system call (0: none found). */
	uint64_t vdso_clock;
	uint64_t vdso_lo, vdso_hi;	/* the [vdso] mapping it lies in */
	bool vdso_looked;
	/* Return probes with no stop: could not be set up in this process
	 * (no more tries); returns the drain took. */
	bool ret_failed;
	uint64_t ret_recorded;
};

static inline uint8_t *record_at(struct pad_table *pt, uint64_t pos)
{
	return pt->local + ring_off() + RING_RECORDS_OFF +
	       ((size_t)(pos & (RING_RECORDS - 1)) << record_shift());
}

static inline volatile uint64_t *seq_of(uint8_t *rec)
{
	return (volatile uint64_t *)(rec + layout()->off_seq);
}

static inline volatile uint32_t *word(uint8_t *e, unsigned int off)
{
	return (volatile uint32_t *)(e + off);
}

static inline uint8_t *entry_at(struct pad_table *pt, unsigned int i)
{
	return pt->local + ((size_t)i << layout()->entry_shift);
}


/* pad.c */
uint8_t *pad_owned_entry(struct pad_table *pt, pid_t tid, uint32_t ready);
int pad_remote_call(struct thread *t, long nr, long a0, long a1, long a2,
		    long a3, long a4, long a5, long *ret);
struct pad_code *pad_code_at(struct process *p, uint64_t pc);

/* pad-ret.c */
int pad_ret_get(struct process *p, struct pad_table *pt, char *why, size_t whylen);
void pad_tsc_calibrate(void);
void pad_tsc_refine(void);
uint64_t pad_tsc_ns(uint64_t ticks);
uint64_t pad_tsc_real_us(uint64_t t);

/* pad-tid.c */
void pad_tid_reset(struct process *p);
bool pad_tid_usable(const struct pad_table *pt);
bool pad_tsc_usable(void);

#endif
