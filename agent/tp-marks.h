/*
 * tp-marks.h - tracepoint numbers marked by a monitor command for the
 * next runs (monitor return-probe, monitor hist): a bit per number
 * 1..TP_MARK_MAX (int16 in frames).  Marks change only between runs
 * (the running one uses them), and a new client's session starts with
 * none: its numbers mean other things than the previous client's (a
 * --multi agent serves one after another); a disconnected run going on
 * keeps them.
 */
#ifndef PROBE_AGENT_TP_MARKS_H
#define PROBE_AGENT_TP_MARKS_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "agent/agent.h"

#define TP_MARK_MAX 0x7fff

struct tp_marks {
	uint8_t bits[(TP_MARK_MAX + 1) / 8];
};

static inline bool tp_marks_has(const struct tp_marks *m, uint32_t number)
{
	return number <= TP_MARK_MAX && (m->bits[number / 8] >> (number % 8)) & 1;
}

/* Marks `number` (or not): -ERANGE outside 1..TP_MARK_MAX, -EBUSY
 * during a run, -ENOENT to unmark one not marked. */
static inline int tp_marks_set(struct tp_marks *m, uint32_t number, bool on)
{
	if (number < 1 || number > TP_MARK_MAX)
		return -ERANGE;
	if (trace_running())
		return -EBUSY;
	if (!on && !tp_marks_has(m, number))
		return -ENOENT;
	if (on)
		m->bits[number / 8] |= (uint8_t)(1u << (number % 8));
	else
		m->bits[number / 8] &= (uint8_t)~(1u << (number % 8));
	return 0;
}

/* A new client's session: none, unless a run goes on. */
static inline void tp_marks_clear(struct tp_marks *m)
{
	if (!trace_running())
		memset(m, 0, sizeof(*m));
}

#endif
