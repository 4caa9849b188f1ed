/*
 * xfer.c - qXfer objects: target description, auxv, exec file, threads,
 * shared libraries, signal info (readers for agent/packets.c's table,
 * which sends gdb the piece it asked for).
 *
 * Each object is produced whole and gdb reads it in pieces: `m` while more
 * follows, `l` for the last piece, binary-escaped.
 *
 * The shared-library list follows the dynamic linker's own records: the
 * program's PT_DYNAMIC (found through AT_PHDR in auxv) holds DT_DEBUG, the
 * address of `struct r_debug`, whose r_map starts the chain of link_maps
 * (l_addr, l_name, l_ld, l_next, l_prev: five pointers).  The records are
 * read in the program's word size and ELF class (elfmem.c).  The first entry
 * is the program itself.  Before the dynamic linker has run, DT_DEBUG is
 * zero and the list is empty; gdb learns of libraries later through its
 * breakpoint in the dynamic linker.
 */
#define LOG_DOMAIN "xfer"
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/elfmem.h"
#include "agent/log.h"
#include "agent/packets.h"

static int read_file(const char *path, struct rsp_buf *out)
{
	char buf[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		rsp_buf_put(out, buf, n);
	close(fd);
	return n < 0 ? -errno : 0;
}

int xfer_features(struct rsp_request *req, struct rsp_buf *obj, struct rsp_buf *reply)
{
	struct process *p = current_process();
	unsigned int features = p ? p->features : regs_detect_features(getpid());
	char xml[32768];

	if (strcmp(req->u.xfer.annex, "target.xml") != 0)
		return -ENOENT;
	int n = agent.arch->target_xml(features, xml, sizeof(xml));
	if (n < 0)
		return n;
	rsp_buf_put(obj, xml, n);
	return 0;
}

static int read_auxv(struct process *p, struct rsp_buf *obj)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/auxv", p->pid);
	return read_file(path, obj);
}

int xfer_auxv(struct rsp_request *req, struct rsp_buf *obj, struct rsp_buf *reply)
{
	struct process *p = current_process();

	return p ? read_auxv(p, obj) : -ESRCH;
}

int xfer_exec_file(struct rsp_request *req, struct rsp_buf *obj, struct rsp_buf *reply)
{
	char path[64], exe[4096];
	pid_t pid = 0;
	ssize_t n;

	if (req->u.xfer.annex[0])
		pid = strtol(req->u.xfer.annex, NULL, 16);
	else if (current_process())
		pid = current_process()->pid;
	if (pid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n < 0)
		return -errno;
	rsp_buf_put(obj, exe, n);
	return 0;
}

int xfer_threads(struct rsp_request *req, struct rsp_buf *obj, struct rsp_buf *reply)
{
	char name[64];

	rsp_xml_threads_begin(obj);
	for (struct process *p = agent.processes; p; p = p->next)
		for (struct thread *t = p->threads; t && !p->hidden; t = t->next) {
			if (t->zombie)
				continue;
			struct rsp_thread_info info = {
				.pid = p->pid,
				.tid = t->tid,
				.core = thread_core(t->tid),
				.name = thread_name(p->pid, t->tid, name, sizeof(name))
					? name : NULL,
			};
			rsp_xml_thread(obj, agent.multiprocess, &info);
		}
	rsp_xml_threads_end(obj);
	return 0;
}

static int mem_cb(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return mem_read(ctx, addr, buf, len) == (ssize_t)len ? 0 : -EFAULT;
}

/* The program's memory with its word size (the arch's: 8 or 4). */
static struct elfmem program_mem(struct process *p)
{
	return (struct elfmem){ { p, mem_cb, NULL }, agent.ptrace->word_size };
}

/* The value of entry `type` of the process's auxiliary vector. */
bool process_auxv(struct process *p, uint64_t type, uint64_t *value)
{
	struct rsp_buf auxv;
	bool found = false;

	rsp_buf_init(&auxv);
	if (read_auxv(p, &auxv) == 0)
		found = elfmem_auxv_find((const uint8_t *)auxv.data, auxv.len,
					 agent.ptrace->word_size, type, value);
	rsp_buf_free(&auxv);
	return found;
}

/* Where auxv says the program's headers are. */
static bool program_headers(struct process *p, uint64_t *phdr, uint64_t *phnum)
{
	*phdr = *phnum = 0;
	return process_auxv(p, AT_PHDR, phdr) && process_auxv(p, AT_PHNUM, phnum) &&
	       *phdr && *phnum && *phnum <= 256;
}

/* Calls fn for each program header of the program; stops when fn says so. */
static bool for_each_phdr(struct process *p,
			  bool (*fn)(const struct elfmem_phdr *, uint64_t phdr, void *),
			  void *arg)
{
	struct elfmem m = program_mem(p);
	uint64_t phdr, phnum;

	if (!program_headers(p, &phdr, &phnum))
		return false;
	for (uint64_t i = 0; i < phnum; i++) {
		struct elfmem_phdr ph;
		if (elfmem_phdr(&m, phdr, i, &ph) < 0)
			return false;
		if (fn(&ph, phdr, arg))
			return true;
	}
	return false;
}

static bool phdr_bias(const struct elfmem_phdr *ph, uint64_t phdr, void *arg)
{
	if (ph->type != PT_PHDR)
		return false;
	*(uint64_t *)arg = phdr - ph->vaddr;
	return true;
}

static bool phdr_first_load(const struct elfmem_phdr *ph, uint64_t phdr, void *arg)
{
	if (ph->type != PT_LOAD || ph->offset != 0)
		return false;
	*(uint64_t *)arg = ph->vaddr;
	return true;
}

/*
 * Load bias of the program: where PT_PHDR is minus where it was linked.
 * Programs have PT_PHDR; the dynamic linker run as a program (ld.so PROG)
 * does not.  Then the ELF header, which starts the first segment, sits
 * e_phoff bytes before the program headers.
 */
uint64_t program_load_bias(struct process *p)
{
	struct elfmem m = program_mem(p);
	uint64_t bias = 0, phdr, phnum, first = 0, phoff;
	size_t ehsize = elfmem_ehdr_size(m.word);

	if (for_each_phdr(p, phdr_bias, &bias))
		return bias;
	if (!program_headers(p, &phdr, &phnum) ||
	    !for_each_phdr(p, phdr_first_load, &first))
		return 0;
	if (elfmem_ehdr_phoff(&m, phdr - ehsize, &phoff) < 0 || phoff != ehsize)
		return 0;
	return phdr - ehsize - first;
}

static bool phdr_dynamic(const struct elfmem_phdr *ph, uint64_t phdr, void *arg)
{
	if (ph->type != PT_DYNAMIC)
		return false;
	*(uint64_t *)arg = ph->vaddr;
	return true;
}

/* Address of the program's struct r_debug, 0 before the dynamic linker
 * has filled DT_DEBUG, -ENOENT when the program has no DT_DEBUG at all
 * (the dynamic linker run as the program: gdb then finds _r_debug by its
 * symbol, once told that this list cannot be had). */
static int64_t find_r_debug(struct process *p)
{
	struct elfmem m = program_mem(p);
	uint64_t dynamic = 0, val;
	int err;

	if (!for_each_phdr(p, phdr_dynamic, &dynamic))
		return -ENOENT;
	dynamic += program_load_bias(p);
	err = elfmem_dynamic_find(&m, dynamic, DT_DEBUG, 512, &val);
	if (err == -ENOENT)
		return -ENOENT;
	return err < 0 ? 0 : (int64_t)val;
}

/* Address of DT_DEBUG's value in the program's _DYNAMIC: where the dynamic
 * linker stores the address of its struct r_debug.  lldb asks for it with
 * qShlibInfoAddr (gdb never sends that packet), reads the pointer there and
 * finds the rendezvous structure through it; without an answer it would take
 * main-lm of the svr4 library list for this address.  -ENOENT when the
 * program has no DT_DEBUG (a static program), or the reader's -errno. */
int svr4_debug_slot(struct process *p, uint64_t *slot)
{
	struct elfmem m = program_mem(p);
	uint64_t dynamic = 0;

	if (!for_each_phdr(p, phdr_dynamic, &dynamic))
		return -ENOENT;
	dynamic += program_load_bias(p);
	return elfmem_dynamic_slot(&m, dynamic, DT_DEBUG, 512, slot);
}

int64_t process_r_debug(struct process *p)
{
	return find_r_debug(p);
}

static void read_string(struct process *p, uint64_t addr, char *buf, size_t size)
{
	size_t got = 0;

	buf[0] = '\0';
	while (got < size - 1) {
		size_t want = size - 1 - got < 256 ? size - 1 - got : 256;
		ssize_t n = mem_read(p, addr + got, buf + got, want);
		if (n <= 0)
			break;
		void *nul = memchr(buf + got, '\0', n);
		got += n;
		if (nul)
			return;
	}
	buf[got] = '\0';
}

int svr4_library_list(struct process *p, struct rsp_buf *out)
{
	struct elfmem m = program_mem(p);
	int64_t r_debug = find_r_debug(p);
	uint64_t lm = 0;
	char name[4096];

	if (r_debug < 0)
		return (int)r_debug;
	if (r_debug && elfmem_r_map(&m, (uint64_t)r_debug, &lm) < 0)
		lm = 0;
	uint64_t main_lm = lm;
	rsp_xml_svr4_begin(out, main_lm);
	/* The first entry is the program: gdb knows it already. */
	bool first = true;
	for (int count = 0; lm && count < 100000; count++) {
		struct elfmem_link_map l;
		if (elfmem_link_map(&m, lm, &l) < 0)
			break;
		if (!first) {
			read_string(p, l.name, name, sizeof(name));
			struct rsp_svr4_library lib = {
				.name = name, .lm = lm, .l_addr = l.addr, .l_ld = l.ld,
			};
			rsp_xml_svr4_library(out, &lib);
		}
		first = false;
		lm = l.next;
	}
	rsp_xml_svr4_end(out, main_lm);
	return 0;
}

int xfer_siginfo_read(struct rsp_request *req, struct rsp_buf *obj, struct rsp_buf *reply)
{
	struct thread *t = current_thread();
	siginfo_t si;

	if (!t)
		return -ESRCH;
	if (ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si) < 0)
		return -errno;
	rsp_buf_put(obj, &si, sizeof(si));
	return 0;
}

void xfer_siginfo_write(struct rsp_request *req, struct rsp_buf *reply)
{
	struct thread *t = current_thread();
	siginfo_t si;

	if (!t || ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si) < 0) {
		rsp_reply_error(reply, "no signal information for this thread");
		return;
	}
	if (req->u.xfer.offset > sizeof(si) ||
	    req->u.xfer.data_len > sizeof(si) - req->u.xfer.offset) {
		rsp_reply_error(reply, "siginfo write beyond %zu bytes", sizeof(si));
		return;
	}
	memcpy((uint8_t *)&si + req->u.xfer.offset, req->u.xfer.data,
	       req->u.xfer.data_len);
	if (ptrace(PTRACE_SETSIGINFO, t->tid, NULL, &si) < 0) {
		rsp_reply_error(reply, "cannot write signal information: %s",
				  strerror(errno));
		return;
	}
	rsp_reply_number(reply, req->u.xfer.data_len);
}

/* The program's libraries, or E01 before the dynamic linker has run: gdb
 * then looks for _r_debug itself. */
int xfer_libraries_svr4(struct rsp_request *req, struct rsp_buf *obj, struct rsp_buf *reply)
{
	struct process *p = current_process();
	int err;

	if (!p)
		return -ESRCH;
	err = svr4_library_list(p, obj);
	if (err == -ENOENT) {
		rsp_reply_error_code(reply, RSP_ERR_FAILED);
		return XFER_REPLIED;
	}
	return err;
}

/* Produced once at offset 0: gdb reads it in pieces. */
int xfer_osdata(struct rsp_request *req, struct rsp_buf *obj, struct rsp_buf *reply)
{
	static struct rsp_buf osdata;
	int err = 0;

	if (req->u.xfer.offset == 0) {
		rsp_buf_reset(&osdata);
		err = osdata_read(req->u.xfer.annex, &osdata);
	}
	if (err == 0)
		rsp_buf_put(obj, osdata.data, osdata.len);
	return err;
}
