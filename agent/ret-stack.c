/*
 * ret-stack.c - the shadow stack's staleness rules (ret-stack.h): pure,
 * no process and no ptrace; retprobe.c gives them the memory read.
 */
#include "config.h"

#include <string.h>

#include "agent/ret-stack.h"

void ret_stack_drop(struct ret_stack *rs, size_t i)
{
	memmove(&rs->e[i], &rs->e[i + 1], (rs->n - i - 1) * sizeof(rs->e[0]));
	rs->n--;
}

int ret_stack_find(const struct ret_stack *rs, uint64_t slot)
{
	for (size_t i = rs->n; i-- > 0;)
		if (rs->e[i].slot == slot)
			return (int)i;
	return -1;
}

void ret_stack_drop_stale_entry(struct ret_stack *rs, uint64_t sp, bool link,
				bool chained, ret_holds_tramp_fn *holds,
				void *arg)
{
	for (size_t i = rs->n; i-- > 0;) {
		uint64_t s = rs->e[i].slot;
		if (link ? s < sp || (s == sp && !chained)
			 : s <= sp && !holds(s, arg))
			ret_stack_drop(rs, i);
	}
}

void ret_stack_drop_stale_return(struct ret_stack *rs, size_t i,
				 uint64_t slot, bool link,
				 ret_holds_tramp_fn *holds, void *arg)
{
	for (size_t j = rs->n; j-- > i + 1;)
		if (rs->e[j].slot < slot && (link || !holds(rs->e[j].slot, arg)))
			ret_stack_drop(rs, j);
}
