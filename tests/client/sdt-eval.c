/*
 * sdt-eval.c - USDT arguments read from a live process through the
 * bytecode sdt_arg_emit() writes, to compare with what the process says.
 *
 *	sdt-eval PROG
 *
 * Starts PROG under ptrace, finds its load bias (AT_ENTRY - e_entry, as
 * probe-trace record does), enables every USDT probe of PROG with an
 * int3 at pc + bias and +1 on its semaphore, and at each hit compiles
 * every argument with sdt_arg_emit(bias), runs it with ax_eval on the
 * stopped thread's registers and memory, and prints
 *
 *	tracer: sdt:PROVIDER:NAME VALUE...
 *
 * (signed arguments as signed numbers).  The target prints the same line
 * with "target:" from its own variables (tests/client/progs/sdt-prog.c),
 * so the two sets of lines must be equal; tests/client/list-sdt.sh
 * compares them.  A probe behind a semaphore fires only if the semaphore
 * was found and raised.  Exit: 0, 1 on a failure it reports, 77 when
 * ptrace is not allowed here.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include <elf.h>

#include "client/sdt.h"
#include "protocol/ax.h"
#include "protocol/ax-emit.h"

struct tracee {
	struct ax_ctx ctx;		/* first: callbacks get &tracee.ctx */
	pid_t pid;
	struct user_regs_struct regs;
	int mem_fd;			/* /proc/PID/mem */
};

/* gdb's x86-64 numbering, 0-16, as user_regs_struct fields. */
static const size_t gdb_reg_offset[] = {
	offsetof(struct user_regs_struct, rax),
	offsetof(struct user_regs_struct, rbx),
	offsetof(struct user_regs_struct, rcx),
	offsetof(struct user_regs_struct, rdx),
	offsetof(struct user_regs_struct, rsi),
	offsetof(struct user_regs_struct, rdi),
	offsetof(struct user_regs_struct, rbp),
	offsetof(struct user_regs_struct, rsp),
	offsetof(struct user_regs_struct, r8),
	offsetof(struct user_regs_struct, r9),
	offsetof(struct user_regs_struct, r10),
	offsetof(struct user_regs_struct, r11),
	offsetof(struct user_regs_struct, r12),
	offsetof(struct user_regs_struct, r13),
	offsetof(struct user_regs_struct, r14),
	offsetof(struct user_regs_struct, r15),
	offsetof(struct user_regs_struct, rip),
};

static int read_reg(const struct ax_ctx *ctx, unsigned regnum, uint64_t *value)
{
	const struct tracee *t = (const struct tracee *)ctx;

	if (regnum >= sizeof(gdb_reg_offset) / sizeof(gdb_reg_offset[0]))
		return -EINVAL;
	memcpy(value, (const char *)&t->regs + gdb_reg_offset[regnum],
	       sizeof(*value));
	return 0;
}

static long read_mem(const struct ax_ctx *ctx, uint64_t addr, void *buf,
		     size_t len)
{
	const struct tracee *t = (const struct tracee *)ctx;
	ssize_t n = pread(t->mem_fd, buf, len, (off_t)addr);

	return n < 0 ? -errno : (long)n;
}

/* Rewrites the word at addr with edit(); x86-64 is little-endian, so
 * the low bytes of the word are the bytes at addr. */
static int peek_poke(pid_t pid, uint64_t addr,
		     uint64_t (*edit)(uint64_t word, uint64_t *saved),
		     uint64_t *saved)
{
	long word;

	errno = 0;
	word = ptrace(PTRACE_PEEKDATA, pid, (void *)addr, NULL);
	if (errno)
		return -errno;
	word = (long)edit((uint64_t)word, saved);
	if (ptrace(PTRACE_POKEDATA, pid, (void *)addr, (void *)word))
		return -errno;
	return 0;
}

/* int3 in the low byte, the byte it replaces kept in *saved */
static uint64_t put_int3(uint64_t word, uint64_t *saved)
{
	*saved = word & 0xff;
	return (word & ~0xffull) | 0xcc;
}

static uint64_t restore_byte(uint64_t word, uint64_t *saved)
{
	return (word & ~0xffull) | (*saved & 0xff);
}

/* the 2-byte semaphore counter + 1 */
static uint64_t raise_sem(uint64_t word, uint64_t *saved)
{
	(void)saved;
	return (word & ~0xffffull) | ((word + 1) & 0xffff);
}

static int auxv_entry(pid_t pid, uint64_t *entry)
{
	char path[64];
	uint64_t av[2];
	int fd, ret = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	if ((fd = open(path, O_RDONLY)) < 0)
		return -errno;
	while (read(fd, av, sizeof(av)) == (ssize_t)sizeof(av) && av[0] != AT_NULL)
		if (av[0] == AT_ENTRY) {
			*entry = av[1];
			ret = 0;
		}
	close(fd);
	return ret;
}

static int elf_entry(const char *path, uint64_t *entry)
{
	GElf_Ehdr eh;
	Elf *elf;
	int fd, ret = -ENOEXEC;

	elf_version(EV_CURRENT);
	if ((fd = open(path, O_RDONLY)) < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && gelf_getehdr(elf, &eh)) {
		*entry = eh.e_entry;
		ret = 0;
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

static int report_hit(struct tracee *t, const struct sdt_probe *p,
		      uint64_t bias)
{
	char name[256];

	sdt_probe_fullname(p, name, sizeof(name));
	printf("tracer: %s", name);
	for (size_t i = 0; i < p->nargs; i++) {
		const struct sdt_arg *a = &p->args[i];
		struct ax_result res;
		struct ax_emit e;
		int ret;

		ax_emit_init(&e);
		ret = sdt_arg_emit(a, &e, bias);
		ax_emit_op(&e, AX_OP_END);
		if (ret || e.error) {
			fprintf(stderr, "sdt-eval: %s argument %zu: cannot "
				"compile: %s\n", name, i + 1,
				strerror(-(ret ? ret : e.error)));
			ax_emit_free(&e);
			return -1;
		}
		ret = ax_eval(e.code, e.len, &t->ctx, &res);
		ax_emit_free(&e);
		if (ret || !res.has_value) {
			fprintf(stderr, "sdt-eval: %s argument %zu: %s\n", name,
				i + 1, res.message);
			return -1;
		}
		if (a->is_signed)
			printf(" %" PRId64, (int64_t)res.value);
		else
			printf(" %" PRIu64, res.value);
	}
	printf("\n");
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	struct tracee t = { .mem_fd = -1 };
	struct sdt_file sf;
	uint64_t *saved = NULL, entry_run = 0, entry_file = 0, bias;
	char err[512], path[64];
	int status, ret = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: sdt-eval PROG\n");
		return 2;
	}
	if (sdt_open(&sf, argv[1], err, sizeof(err))) {
		fprintf(stderr, "sdt-eval: %s\n", err);
		return 1;
	}
	for (size_t i = 0; i < sf.nprobes; i++)
		if (sf.probes[i].error) {
			fprintf(stderr, "sdt-eval: %s\n", sf.probes[i].error);
			goto out;
		}
	saved = calloc(sf.nprobes ? sf.nprobes : 1, sizeof(*saved));
	if (!saved)
		goto out;

	t.ctx.read_reg = read_reg;
	t.ctx.read_mem = read_mem;
	fflush(stdout);
	t.pid = fork();
	if (t.pid < 0)
		goto out;
	if (t.pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(77);
		execl(argv[1], argv[1], (char *)NULL);
		_exit(127);
	}
	if (waitpid(t.pid, &status, 0) != t.pid || !WIFSTOPPED(status)) {
		if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
			fprintf(stderr, "sdt-eval: ptrace not allowed here\n");
			ret = 77;
		} else {
			fprintf(stderr, "sdt-eval: %s did not start\n", argv[1]);
		}
		goto out;
	}
	if (auxv_entry(t.pid, &entry_run) || elf_entry(argv[1], &entry_file)) {
		fprintf(stderr, "sdt-eval: no entry point\n");
		goto kill;
	}
	bias = entry_run - entry_file;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)t.pid);
	if ((t.mem_fd = open(path, O_RDONLY)) < 0) {
		perror("sdt-eval: /proc/PID/mem");
		goto kill;
	}
	for (size_t i = 0; i < sf.nprobes; i++) {
		const struct sdt_probe *p = &sf.probes[i];

		if (peek_poke(t.pid, p->pc + bias, put_int3, &saved[i]) ||
		    (p->semaphore && peek_poke(t.pid, p->semaphore + bias,
					       raise_sem, NULL))) {
			fprintf(stderr, "sdt-eval: cannot enable sdt:%s:%s\n",
				p->provider, p->name);
			goto kill;
		}
	}

	for (;;) {
		const struct sdt_probe *hit = NULL;
		size_t i;

		if (ptrace(PTRACE_CONT, t.pid, NULL, NULL) ||
		    waitpid(t.pid, &status, 0) != t.pid)
			goto kill;
		if (WIFEXITED(status)) {
			ret = WEXITSTATUS(status) ? 1 : 0;
			if (ret)
				fprintf(stderr, "sdt-eval: target exited %d\n",
					WEXITSTATUS(status));
			t.pid = 0;
			break;
		}
		if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP ||
		    ptrace(PTRACE_GETREGS, t.pid, NULL, &t.regs)) {
			fprintf(stderr, "sdt-eval: unexpected stop %#x\n", status);
			goto kill;
		}
		for (i = 0; i < sf.nprobes; i++)
			if (sf.probes[i].pc + bias == t.regs.rip - 1) {
				hit = &sf.probes[i];
				break;
			}
		if (!hit) {
			fprintf(stderr, "sdt-eval: trap at %#llx, no probe\n",
				(unsigned long long)t.regs.rip);
			goto kill;
		}
		/* the registers as they were at the nop, before the int3 */
		t.regs.rip--;
		if (report_hit(&t, hit, bias))
			goto kill;
		/* each probe is reported once: put the nop back, run it */
		if (peek_poke(t.pid, t.regs.rip, restore_byte, &saved[i]) ||
		    ptrace(PTRACE_SETREGS, t.pid, NULL, &t.regs))
			goto kill;
	}
	goto out;
kill:
	if (t.pid > 0) {
		kill(t.pid, SIGKILL);
		waitpid(t.pid, &status, 0);
	}
	ret = ret == 77 ? 77 : 1;
out:
	if (t.mem_fd >= 0)
		close(t.mem_fd);
	free(saved);
	sdt_close(&sf);
	return ret;
}
