/*
 * list.c - `probe-trace list FILE [PATTERN]`: what can be probed in a file.
 *
 * Two tables: the functions (from elfsym, C++ names demangled) and the
 * USDT probes (from sdt), each row with the strategy the agent's default
 * (auto) would use for the instruction at the address: the arch's class
 * (what `probe-trace insn` shows), except that emulated instructions
 * writing more than the PC are boosted (arch_prefers_boost).  A USDT probe site is the nop
 * <sys/sdt.h> planted, so its row says how that nop is handled.
 *
 *	FUNCTIONS
 *	  address           size      strategy  name
 *	  0000000000001139  42        emulate   main
 *	USDT PROBES
 *	  address           semaphore         strategy  probe  arguments
 *	  0000000000001150  -                 emulate   sdt:app:start  -4@%eax
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/arch.h"
#include "client/elfsym.h"
#include "client/probe-trace.h"
#include "client/sdt.h"

static void list_usage(FILE *out)
{
	fprintf(out,
		"Usage: probe-trace list [--sdt | --functions] FILE [PATTERN]\n"
		"\nLists the functions and the USDT probes (sdt:PROVIDER:NAME) of\n"
		"FILE that can be probed, with the strategy the agent would use\n"
		"at each address (emulate, boost, step, reject).  PATTERN is a\n"
		"shell glob matched against function names (mangled or not) and\n"
		"against sdt:PROVIDER:NAME and PROVIDER:NAME.\n"
		"\n  -s, --sdt        only the USDT probes\n"
		"  -f, --functions  only the functions\n"
		"  -h, --help       this text\n");
}

/* The strategy for the instruction at `code` (`avail` bytes), or reject
 * with the reason when it cannot be decoded or is not in the file. */
static enum arch_strategy strategy_at(const struct arch_ops *ops,
				      const uint8_t *code, size_t avail,
				      uint64_t addr, const char **reason)
{
	struct arch_insn insn;

	if (!code || !avail) {
		*reason = "no code in the file at this address";
		return ARCH_REJECT;
	}
	if (ops->insn_decode(code, avail, addr, &insn)) {
		*reason = insn.reason;
		return ARCH_REJECT;
	}
	*reason = insn.reason;
	/* What the agent's default (auto) picks, not only the class. */
	if (arch_prefers_boost(ops, &insn))
		return ARCH_BOOST;
	return insn.strategy;
}

static bool function_matches(const struct elfsym *s, const char *pattern)
{
	return !pattern || fnmatch(pattern, s->name, 0) == 0 ||
	       (s->demangled && fnmatch(pattern, s->demangled, 0) == 0);
}

/* `full` is "sdt:PROVIDER:NAME"; the pattern may leave out "sdt:". */
static bool probe_matches(const char *full, const char *pattern)
{
	return !pattern || fnmatch(pattern, full, 0) == 0 ||
	       fnmatch(pattern, full + strlen("sdt:"), 0) == 0;
}

static size_t list_functions(const struct arch_ops *ops,
			     const struct elfsym_file *f, const char *pattern)
{
	size_t shown = 0;

	for (size_t i = 0; i < f->nsyms; i++) {
		const struct elfsym *s = &f->syms[i];
		enum arch_strategy st;
		const char *reason;

		if (!function_matches(s, pattern))
			continue;
		if (!shown++)
			printf("FUNCTIONS\n  %-16s  %-8s  %-8s  %s\n", "address",
			       "size", "strategy", "name");
		st = strategy_at(ops, s->code, s->code ? s->size : 0,
				 elfsym_code_addr(s), &reason);
		printf("  %016llx  %-8llu  %-8s  %s\n",
		       (unsigned long long)s->addr, (unsigned long long)s->size,
		       arch_strategy_name(st), elfsym_display(s));
		if (st == ARCH_REJECT)
			printf("    reject: %s\n", reason);
	}
	return shown;
}

/* `ef`, when not NULL, has the file's ARM mapping symbols: a probe in
 * Thumb code ($t) is decoded as Thumb. */
static size_t list_probes(const struct arch_ops *ops, Elf *elf,
			  const struct sdt_file *sf, const char *path,
			  const char *pattern, const struct elfsym_file *ef)
{
	size_t shown = 0;

	for (size_t i = 0; i < sf->nprobes; i++) {
		const struct sdt_probe *p = &sf->probes[i];
		const uint8_t *code;
		enum arch_strategy st;
		const char *reason;
		char full[512], sem[32];
		size_t avail = 0;

		sdt_probe_fullname(p, full, sizeof(full));
		if (!probe_matches(full, pattern))
			continue;
		if (!shown++)
			printf("USDT PROBES\n  %-16s  %-16s  %-8s  %s  %s\n",
			       "address", "semaphore", "strategy", "probe",
			       "arguments");
		code = elfsym_code_at(elf, p->pc, &avail);
		st = strategy_at(ops, code, avail,
				 p->pc | (ef && elfsym_map_at(ef, p->pc, NULL) == 't'),
				 &reason);
		if (p->semaphore)
			snprintf(sem, sizeof(sem), "%016llx",
				 (unsigned long long)p->semaphore);
		else
			snprintf(sem, sizeof(sem), "-");
		printf("  %016llx  %-16s  %-8s  %s  %s\n",
		       (unsigned long long)p->pc, sem, arch_strategy_name(st),
		       full, p->args_text);
		if (st == ARCH_REJECT)
			printf("    reject: %s\n", reason);
		if (p->error) {
			printf("    error: %s\n", p->error);
			fprintf(stderr, "probe-trace list: %s: %s\n", path,
				p->error);
		}
	}
	return shown;
}

int cmd_list(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "sdt", no_argument, NULL, 's' },
		{ "functions", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct arch_ops *ops;
	bool want_sdt = true, want_funcs = true, have_syms = false;
	struct elfsym_file ef = { .fd = -1 };
	struct sdt_file sf = { 0 };
	const char *path, *pattern;
	size_t shown = 0;
	Elf *elf = NULL;
	char err[512];
	int c, fd = -1, ret = PT_EXIT_OK;

	optind = 1;
	while ((c = getopt_long(argc, argv, "sfh", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			want_funcs = false;
			break;
		case 'f':
			want_sdt = false;
			break;
		case 'h':
			list_usage(stdout);
			return PT_EXIT_OK;
		default:
			list_usage(stderr);
			return PT_EXIT_USAGE;
		}
	}
	if (!want_sdt && !want_funcs) {
		fprintf(stderr, "probe-trace list: --sdt and --functions "
			"exclude each other\n");
		return PT_EXIT_USAGE;
	}
	if (optind >= argc || argc - optind > 2) {
		fprintf(stderr, "probe-trace list: %s\n", optind >= argc ?
			"missing FILE" : "too many arguments");
		list_usage(stderr);
		return PT_EXIT_USAGE;
	}
	path = argv[optind];
	pattern = optind + 1 < argc ? argv[optind + 1] : NULL;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		fprintf(stderr, "probe-trace list: libelf: %s\n", elf_errmsg(-1));
		return PT_EXIT_FAIL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "probe-trace list: %s: %s\n", path,
			strerror(errno));
		return PT_EXIT_FAIL;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		fprintf(stderr, "probe-trace list: %s: not an ELF file\n", path);
		ret = PT_EXIT_FAIL;
		goto out;
	}
	if (sdt_read_elf(&sf, elf, err, sizeof(err))) {
		fprintf(stderr, "probe-trace list: %s: %s\n", path, err);
		ret = PT_EXIT_FAIL;
		goto out;
	}
	/* the file's arch, which need not be this machine's */
	ops = arch_for_elf_machine(sf.machine);
	if (!ops) {
		fprintf(stderr, "probe-trace list: %s: %s\n", path,
			arch_machine_unsupported(sf.machine, err, sizeof(err)));
		ret = PT_EXIT_FAIL;
		goto out;
	}
	if (want_funcs) {
		int r = elfsym_open(&ef, path, err, sizeof(err));

		if (r && (r != -ENODATA || !want_sdt || sf.nprobes == 0)) {
			fprintf(stderr, "probe-trace list: %s\n", err);
			ret = PT_EXIT_FAIL;
			goto out;
		}
		have_syms = r == 0;
		if (have_syms && ef.stripped)
			fprintf(stderr, "probe-trace list: %s is stripped and has "
				"no debug file%s%s%s: using the dynamic symbols only\n", path,
				ef.debug_note ? " (" : "", ef.debug_note ? ef.debug_note : "",
				ef.debug_note ? ")" : "");
		else if (have_syms && ef.debug_path)
			fprintf(stderr, "probe-trace list: symbols of %s from %s\n",
				path, ef.debug_path);
	}
	if (have_syms)
		shown += list_functions(ops, &ef, pattern);
	if (want_sdt) {
		if (!want_funcs && sf.nprobes == 0) {
			fprintf(stderr, "probe-trace list: %s: no USDT probes "
				"(no .note.stapsdt notes)\n", path);
			ret = PT_EXIT_FAIL;
			goto out;
		}
		/* ARM: the mapping symbols say which probes are in Thumb
		 * code (a file without them lists A32) */
		if (sf.machine == EM_ARM && !ef.elf &&
		    elfsym_open_any(&ef, path, err, sizeof(err)))
			ef.elf = NULL;
		shown += list_probes(ops, elf, &sf, path, pattern,
				     ef.elf ? &ef : NULL);
	}
	if (pattern && !shown) {
		fprintf(stderr, "probe-trace list: %s: nothing matches '%s'\n",
			path, pattern);
		ret = PT_EXIT_FAIL;
	}
out:
	sdt_close(&sf);
	if (ef.elf)
		elfsym_close(&ef);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return ret;
}
