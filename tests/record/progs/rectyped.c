/*
 * rectyped.c - a target for typed probes (DWARF): structs nested in
 * structs, arrays, strings, enums, bools, floating point, negative and
 * pointer return values, and a source line with locals.  Built with -g
 * at -O0 and at -O2.
 *
 *   rectyped OUT N     N rounds of calls; every call writes its own
 *                      ground truth to OUT, one line each:
 *
 *   place ID PRICE COLOR OK NAME A B0 B1 B2 RATIO LABEL N SCALE FLAG = RET
 *   neg X = RET
 *   half X = RET          (a double)
 *   pick X = COLOR        (an enum)
 *   even X = 0|1          (a bool)
 *   label X = STRING      (a char *)
 *   line TOTAL I          (at the line marked LINE-PROBE)
 *
 *   rectyped OUT malloc  5 allocations too big for malloc's thread cache,
 *                        so that _int_malloc serves them:  malloc BYTES
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum color { RED, GREEN = 5, BLUE };

struct inner {
	int a;
	short b[3];
};

struct item {
	int id;
	double price;
	enum color color;
	bool ok;
	char name[8];
	struct inner in;
	float ratio;
	struct item *next;
};

static FILE *out;
static const char *labels[] = { "alpha", "beta", "gam\"ma" };

__attribute__((noinline)) int place(const struct item *it, int n,
				    const char *label, enum color c,
				    double scale, bool flag)
{
	int r = it->id * n - (flag ? 1000 : 0) + (int)c;

	fprintf(out, "place %d %.17g %d %d %s %d %d %d %d %.9g %s %d %.17g %d = %d\n",
		it->id, it->price, (int)it->color, (int)it->ok, it->name, it->in.a,
		it->in.b[0], it->in.b[1], it->in.b[2], (double)it->ratio, label, n,
		scale, (int)flag, r);
	(void)c;
	return r;
}

__attribute__((noinline)) int neg(int x)
{
	int r = -x * 3;

	fprintf(out, "neg %d = %d\n", x, r);
	return r;
}

__attribute__((noinline)) double half(int x)
{
	double r = x / 2.0;

	fprintf(out, "half %d = %.17g\n", x, r);
	return r;
}

__attribute__((noinline)) enum color pick(int x)
{
	enum color r = x % 3 == 0 ? RED : x % 3 == 1 ? GREEN : BLUE;

	fprintf(out, "pick %d = %d\n", x, (int)r);
	return r;
}

__attribute__((noinline)) bool even(int x)
{
	bool r = x % 2 == 0;

	fprintf(out, "even %d = %d\n", x, (int)r);
	return r;
}

__attribute__((noinline)) const char *label(int x)
{
	const char *r = labels[x % 3];

	fprintf(out, "label %d = %s\n", x, r);
	return r;
}

__attribute__((noinline)) long sum(const int *v, int n)
{
	long total = 0;

	for (int i = 0; i < n; i++) {
		total += v[i];
		fprintf(out, "line %ld %d\n", total, i); /* LINE-PROBE */
	}
	return total;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: rectyped OUT N\n");
		return 2;
	}
	out = fopen(argv[1], "w");
	if (!out)
		return 1;
	setvbuf(out, NULL, _IOLBF, 0);
	if (strcmp(argv[2], "malloc") == 0) {
		for (size_t i = 0; i < 5; i++) {
			size_t n = 70000 + 16 * i;
			void *p = malloc(n);
			fprintf(out, "malloc %zu\n", n);
			free(p);
		}
		fclose(out);
		return 0;
	}
	int rounds = atoi(argv[2]);
	struct item chain = { .id = 999 };
	for (int i = 0; i < rounds; i++) {
		struct item it = {
			.id = 100 + i, .price = 1.25 * (i + 1),
			.color = (enum color[]){ RED, GREEN, BLUE }[i % 3],
			.ok = i % 2, .in = { .a = -i, .b = { (short)i, (short)(2 * i), (short)-7 } },
			.ratio = 0.5f + (float)i, .next = &chain,
		};
		int v[4] = { i, 10, 20, 30 };
		snprintf(it.name, sizeof(it.name), "n%d", i);
		place(&it, i + 2, labels[i % 3], it.color, -0.5 * i, i % 2 == 0);
		neg(i + 1);
		half(2 * i + 1);
		pick(i);
		even(i);
		label(i);
		sum(v, 2);
	}
	fclose(out);
	return 0;
}
