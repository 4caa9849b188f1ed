/* pending.h - tracepoint locations in libraries not loaded yet (pending.c). */
#ifndef PROBE_PENDING_H
#define PROBE_PENDING_H

#include <stdbool.h>
#include <stdint.h>

struct process;
struct rsp_buf;

struct pending {
	struct pending *next;
	uint32_t number;	/* the tracepoint ... */
	uint64_t key;		/* ... and its location's address (QTDP) */
	char *lib;		/* the library, as a spec names it */
	char *sym;		/* "" for none: offset is link-time */
	uint64_t offset;
	/* The current placement. */
	bool placed;
	uint64_t addr;		/* where its probe is */
	uint64_t lm, l_addr;	/* the load it is in */
	unsigned int loads;	/* placements this run */
	uint64_t hits_at;	/* the tracepoint's frames when placed */
	uint64_t failed_lm;	/* the load it could not be placed in */
};

/* Qprobe.pending: 0 or -errno with the reason in `why`. */
int pending_define(uint32_t number, uint64_t key, uint64_t offset,
		   const char *sym, const char *lib, char *why, size_t whylen);
/* QTinit: none left. */
void pending_clear(void);
bool pending_any(void);
/* A number that changes with every change of the locations or their
 * placement (a cache of what runs at an address is then stale). */
uint64_t pending_gen(void);
struct pending *pending_find(uint32_t number, uint64_t key);
/* The placed locations whose probe is at `addr`, one after another. */
struct pending *pending_next_at(uint64_t addr, const struct pending *prev);
/* A new run: nothing placed, no events. */
void pending_start_run(void);
/* The library list changed, or the run starts: place and remove. */
void pending_update(struct process *p);
/* The run or the traced process ended: the placements end too (their
 * probes are removed or gone with the process by the caller). */
void pending_run_ended(void);
/* qprobe.libevents */
void pending_events_reply(struct rsp_buf *reply);

/* trace-install.c, trace-run.c, for pending.c */
/* A probe at `addr` for tracepoint `number` at `key`. */
int trace_place(struct process *p, uint32_t number, uint64_t key,
		uint64_t addr, char *why, size_t whylen);
/* The probe at `addr` goes, if no placed location needs it; its library
 * is unmapped. */
void trace_unplace(struct process *p, uint64_t addr);
/* Frames collected for tracepoint `number` at `key` this run. */
uint64_t trace_frames_of(uint32_t number, uint64_t key);

#endif
