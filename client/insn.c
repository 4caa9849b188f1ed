/*
 * insn.c - `probe-trace insn FILE [SYMBOL]`: how each instruction would
 * be probed.
 *
 * One line per instruction: address, length, strategy (emulate, boost,
 * step, reject) and the reason or a short description, straight from
 * the arch's classifier, so what users see is what the agent will do.
 * `--summary` counts the strategy of every function's FIRST instruction,
 * where most probes go; that is how doc/x86_64.md was measured.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "client/elfsym.h"
#include "client/probe-trace.h"

#define N_STRATEGIES 4
#define MAX_FORMS 512

struct form_count {
	enum arch_strategy strategy;
	const char *reason;
	unsigned long n;
};

struct summary {
	unsigned long by_strategy[N_STRATEGIES];
	unsigned long entries, undecodable;
	struct form_count forms[MAX_FORMS];
	size_t nforms;
};

static void insn_usage(FILE *out)
{
	fprintf(out,
		"Usage: probe-trace insn [--summary] FILE [SYMBOL]\n"
		"\nPrints, for every instruction of SYMBOL (or of every function\n"
		"of FILE), its address, length and probe strategy:\n"
		"  emulate  one stop, the agent computes the effect\n"
		"  boost    one stop, runs from an out-of-line slot\n"
		"  step     two stops, single-stepped in the slot\n"
		"  reject   cannot be probed (the reason follows)\n"
		"On 32-bit ARM a function whose symbol value has bit 0 set is\n"
		"decoded as Thumb, the others as A32.\n"
		"\n  -s, --summary  share of each strategy over function entries\n"
		"  -h, --help     this text\n");
}

static void count_form(struct summary *sm, const struct arch_insn *insn)
{
	for (size_t i = 0; i < sm->nforms; i++) {
		if (sm->forms[i].strategy == insn->strategy &&
		    strcmp(sm->forms[i].reason, insn->reason) == 0) {
			sm->forms[i].n++;
			return;
		}
	}
	if (sm->nforms < MAX_FORMS)
		sm->forms[sm->nforms++] = (struct form_count){
			insn->strategy, insn->reason, 1 };
}

static int by_count(const void *a, const void *b)
{
	const struct form_count *x = a, *y = b;

	return x->n == y->n ? 0 : x->n < y->n ? 1 : -1;
}

static void print_line(const struct arch_insn *insn, int err)
{
	printf("  %12llx  %2u  %-7s  ", (unsigned long long)insn->addr,
	       insn->len, err ? "reject" : arch_strategy_name(insn->strategy));
	for (unsigned int i = 0; i < insn->len; i++)
		printf("%02x", insn->bytes[i]);
	printf("%*s  %s\n", (int)(2 * (15 - insn->len)), "", insn->reason);
}

/* Data inside a function (an ARM literal pool), a word a line. */
static uint64_t print_data(const uint8_t *p, uint64_t addr, uint64_t n)
{
	unsigned int len = n < 4 ? (unsigned int)n : 4 - (unsigned int)(addr & 3);

	printf("  %12llx  %2u  %-7s  ", (unsigned long long)addr, len, "data");
	for (unsigned int i = 0; i < len; i++)
		printf("%02x", p[i]);
	printf("%*s  %s\n", (int)(2 * (15 - len)), "",
	       "literal data ($d mapping symbol)");
	return len;
}

/* Every instruction of one function. */
static void list_function(const struct arch_ops *ops,
			  const struct elfsym_file *f, const struct elfsym *s)
{
	printf("%016llx <%s>:\n", (unsigned long long)s->addr, elfsym_display(s));
	if (!s->code) {
		printf("  (no code in the file: not in an executable section)\n");
		return;
	}
	for (uint64_t off = 0; off < s->size;) {
		struct arch_insn insn;
		uint64_t end;
		/* ARM mapping symbols: data, or the instruction set here */
		char map = elfsym_map_at(f, s->addr + off, &end);
		bool thumb = map ? map == 't' : s->thumb;
		int err;

		if (map == 'd') {
			if (end > s->addr + s->size)
				end = s->addr + s->size;
			off += print_data(s->code + off, s->addr + off,
					  end - (s->addr + off));
			continue;
		}
		err = arch_insn_decode_in(ops, s->code, s->size,
					  elfsym_code_addr(s),
					  (s->addr + off) | thumb, &insn);

		print_line(&insn, err);
		/* A fixed-width arch (aarch64) knows where the next
		 * instruction starts even after a word it cannot decode
		 * (data in the code, an unallocated encoding): go on. */
		if (err && !(err == -EILSEQ && insn.len)) {
			printf("  (stopping here: the rest of the function "
			       "cannot be decoded)\n");
			return;
		}
		off += insn.len;
	}
}

static void summarize_entry(const struct arch_ops *ops, const struct elfsym *s,
			    struct summary *sm)
{
	struct arch_insn insn;

	if (!s->code) {
		sm->undecodable++;
		return;
	}
	sm->entries++;
	if (ops->insn_decode(s->code, s->size, elfsym_code_addr(s), &insn)) {
		sm->by_strategy[ARCH_REJECT]++;
		insn.strategy = ARCH_REJECT;
		count_form(sm, &insn);
		return;
	}
	sm->by_strategy[insn.strategy]++;
	count_form(sm, &insn);
}

static void print_summary(const char *path, struct summary *sm)
{
	double total = sm->entries ? (double)sm->entries : 1.0;

	printf("%s: %lu function entries\n", path, sm->entries);
	for (int s = 0; s < N_STRATEGIES; s++)
		printf("  %-7s %8lu  %6.2f%%\n", arch_strategy_name(s),
		       sm->by_strategy[s], 100.0 * sm->by_strategy[s] / total);
	printf("  one stop or fewer (emulate + boost): %.2f%%\n",
	       100.0 * (sm->by_strategy[ARCH_EMULATE] +
			sm->by_strategy[ARCH_BOOST]) / total);
	if (sm->undecodable)
		printf("  (%lu functions without code in the file not counted)\n",
		       sm->undecodable);
	qsort(sm->forms, sm->nforms, sizeof(sm->forms[0]), by_count);
	printf("by form:\n");
	for (size_t i = 0; i < sm->nforms; i++)
		printf("  %8lu  %6.2f%%  %-7s  %s\n", sm->forms[i].n,
		       100.0 * sm->forms[i].n / total,
		       arch_strategy_name(sm->forms[i].strategy),
		       sm->forms[i].reason);
}

/* Cheap suggestions for an unknown symbol: names containing it. */
static void suggest(const struct elfsym_file *f, const char *query)
{
	int shown = 0;

	for (size_t i = 0; i < f->nsyms && shown < 8; i++) {
		const char *n = elfsym_display(&f->syms[i]);

		if (strstr(n, query) || strstr(f->syms[i].name, query)) {
			fprintf(stderr, "%s  %s\n", shown ? "          " :
				"Did you mean:", n);
			shown++;
		}
	}
}

int cmd_insn(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "summary", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct arch_ops *ops;
	struct elfsym_file f;
	struct summary *sm = NULL;
	bool summary = false, found = false;
	const char *path, *sym;
	char err[512];
	int c, ret = PT_EXIT_OK;

	optind = 1;
	while ((c = getopt_long(argc, argv, "sh", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			summary = true;
			break;
		case 'h':
			insn_usage(stdout);
			return PT_EXIT_OK;
		default:
			insn_usage(stderr);
			return PT_EXIT_USAGE;
		}
	}
	if (optind >= argc || argc - optind > 2) {
		fprintf(stderr, "probe-trace insn: %s\n", optind >= argc ?
			"missing FILE" : "too many arguments");
		insn_usage(stderr);
		return PT_EXIT_USAGE;
	}
	path = argv[optind];
	sym = optind + 1 < argc ? argv[optind + 1] : NULL;

	if (elfsym_open(&f, path, err, sizeof(err))) {
		fprintf(stderr, "probe-trace insn: %s\n", err);
		return PT_EXIT_FAIL;
	}
	/* the file's arch, which need not be this machine's */
	ops = arch_for_elf_machine(f.machine);
	if (!ops) {
		fprintf(stderr, "probe-trace insn: %s: %s\n", path,
			arch_machine_unsupported(f.machine, err, sizeof(err)));
		ret = PT_EXIT_FAIL;
		goto out;
	}
	if (f.stripped)
		fprintf(stderr, "probe-trace insn: %s is stripped and has no debug "
			"file%s%s%s: using the dynamic symbols only\n", path,
			f.debug_note ? " (" : "", f.debug_note ? f.debug_note : "",
			f.debug_note ? ")" : "");
	else if (f.debug_path)
		fprintf(stderr, "probe-trace insn: symbols of %s from %s\n", path,
			f.debug_path);
	if (summary && !(sm = calloc(1, sizeof(*sm)))) {
		fprintf(stderr, "probe-trace insn: out of memory\n");
		ret = PT_EXIT_FAIL;
		goto out;
	}

	for (size_t i = 0; i < f.nsyms; i++) {
		if (sym && !elfsym_matches(&f.syms[i], sym))
			continue;
		found = true;
		if (summary)
			summarize_entry(ops, &f.syms[i], sm);
		else
			list_function(ops, &f, &f.syms[i]);
	}
	if (!found) {
		fprintf(stderr, "probe-trace insn: %s: no function named '%s'\n",
			path, sym);
		suggest(&f, sym);
		ret = PT_EXIT_FAIL;
		goto out;
	}
	if (summary)
		print_summary(path, sm);
out:
	free(sm);
	elfsym_close(&f);
	return ret;
}
