/*
 * mem.c - the inferior's memory, through /proc/PID/mem.
 *
 * One pread or pwrite per request instead of a ptrace call per word.  The
 * file belongs to one address space: after exec it is opened again.
 *
 * mem_read/mem_write are what gdb sees: reads show the original bytes under
 * every inserted breakpoint (gdb disassembles and relocates from them), and
 * writes over a breakpoint update the saved bytes while the breakpoint
 * stays.  The _raw variants touch memory as it is.
 */
#define LOG_DOMAIN "mem"
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/log.h"

int mem_open(struct process *p)
{
	char path[64];

	if (p->mem_fd >= 0)
		close(p->mem_fd);
	snprintf(path, sizeof(path), "/proc/%d/mem", p->pid);
	p->mem_fd = open(path, O_RDWR | O_CLOEXEC);
	if (p->mem_fd < 0) {
		debug("open %s: %s", path, strerror(errno));
		return -errno;
	}
	return 0;
}

ssize_t mem_read_raw(struct process *p, uint64_t addr, void *buf, size_t len)
{
	size_t done = 0;

	if (p->mem_fd < 0)
		return -EIO;
	while (done < len) {
		ssize_t n = pread(p->mem_fd, (char *)buf + done, len - done,
				  (off_t)(addr + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += n;
	}
	/* Nothing at all readable: the address is not mapped. */
	return done ? (ssize_t)done : -EIO;
}

ssize_t mem_write_raw(struct process *p, uint64_t addr, const void *buf,
		      size_t len)
{
	size_t done = 0;

	if (p->mem_fd < 0)
		return -EIO;
	while (done < len) {
		ssize_t n = pwrite(p->mem_fd, (const char *)buf + done,
				   len - done, (off_t)(addr + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += n;
	}
	/* The collector's code is a shared mapping the kernel will not
	 * write through this file: written through the agent's own. */
	if (len && !done)
		return pad_ipa_code_write(p, addr, buf, len);
	return done;
}

/* Intersection of [a, a+alen) and [b, b+blen), as an offset range in a. */
static bool overlap(uint64_t a, size_t alen, uint64_t b, size_t blen,
		    size_t *from, size_t *to)
{
	uint64_t lo = a > b ? a : b;
	uint64_t hi = (a + alen) < (b + blen) ? a + alen : b + blen;

	if (lo >= hi)
		return false;
	*from = lo - a;
	*to = hi - a;
	return true;
}

ssize_t mem_read(struct process *p, uint64_t addr, void *buf, size_t len)
{
	ssize_t n = mem_read_raw(p, addr, buf, len);

	if (n <= 0)
		return n;
	for (struct sw_breakpoint *b = p->breakpoints; b; b = b->next) {
		size_t from, to;
		if (overlap(addr, n, b->addr, b->len, &from, &to))
			memcpy((uint8_t *)buf + from,
			       b->saved + (addr + from - b->addr), to - from);
	}
	return n;
}

ssize_t mem_write(struct process *p, uint64_t addr, const void *buf,
		  size_t len)
{
	uint8_t tmp[RSP_MAX_PAYLOAD];
	const uint8_t *src = buf;
	bool shadowed = false;

	/* Bytes under a breakpoint go to its saved copy; memory keeps the
	 * breakpoint instruction. */
	for (struct sw_breakpoint *b = p->breakpoints; b; b = b->next) {
		size_t from, to;
		if (!overlap(addr, len, b->addr, b->len, &from, &to))
			continue;
		if (!shadowed) {
			if (len > sizeof(tmp))
				return -E2BIG;
			memcpy(tmp, buf, len);
			shadowed = true;
		}
		memcpy(b->saved + (addr + from - b->addr), src + from, to - from);
		memcpy(tmp + from, (b->patched ? b->patch : b->insn) +
		       (addr + from - b->addr), to - from);
	}
	return mem_write_raw(p, addr, shadowed ? tmp : buf, len);
}

/*
 * The mapping of /proc/PID/maps that holds `addr`, or the unmapped gap
 * around it (from the end of the mapping before, to the start of the one
 * after or the top of the address space): lldb's qMemoryRegionInfo.
 * Returns 0 or -errno.
 */
int mem_region_at(struct process *p, uint64_t addr, struct mem_region *r)
{
	char path[64], line[4352];
	uint64_t prev_end = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", p->pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	*r = (struct mem_region){ .start = 0, .end = UINT64_MAX };
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;
		char pm[8];
		int n = 0;

		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %n", &lo, &hi, pm, &n) < 3)
			continue;
		if (addr < lo) {
			r->start = prev_end;
			r->end = lo;
			break;
		}
		if (addr < hi) {
			r->start = lo;
			r->end = hi;
			r->mapped = true;
			memcpy(r->perms, pm, 4);
			r->perms[4] = '\0';
			if (n > 0) {
				snprintf(r->name, sizeof(r->name), "%s", line + n);
				r->name[strcspn(r->name, "\n")] = '\0';
			}
			break;
		}
		prev_end = hi;
		r->start = prev_end;
	}
	fclose(f);
	return 0;
}

/*
 * The permissions ("r-xp" ...) of the mapping holding [addr, addr+len),
 * from /proc/PID/maps.  Returns 0, or -ENOENT when no single mapping
 * holds the range.
 */
int mem_mapping_perms(struct process *p, uint64_t addr, size_t len,
		      char perms[5])
{
	struct mem_region r;
	int err = mem_region_at(p, addr, &r);

	if (err < 0)
		return err;
	if (!r.mapped || addr + len > r.end)
		return -ENOENT;
	memcpy(perms, r.perms, 5);
	return 0;
}
