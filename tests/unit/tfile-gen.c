/*
 * tfile-gen.c - writes the sample trace (tfile-sample.h) to a file, for
 * test-tfile-gdb.sh to load into gdb and the reference reader.
 *
 * Usage: tfile-gen FILE
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "protocol/tfile.h"
#include "tests/unit/tfile-sample.h"

static int write_stdio(void *ctx, const void *data, size_t len)
{
	return fwrite(data, 1, len, ctx) == len ? 0 : -EIO;
}

int main(int argc, char **argv)
{
	static struct tfile_sample s;
	struct tfile_writer w;
	FILE *f;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: tfile-gen FILE\n");
		return 99;
	}
	ret = tfile_sample_build(&s);
	if (ret != 0) {
		fprintf(stderr, "tfile-gen: sample: %s\n", strerror(-ret));
		return 99;
	}
	f = fopen(argv[1], "wb");
	if (!f) {
		perror(argv[1]);
		return 99;
	}
	tfile_writer_init(&w, write_stdio, f);
	ret = tfile_write(&w, s.regsize, s.xml, &s.status, &s.store, &s.tb);
	if (fclose(f) != 0 && ret == 0)
		ret = -EIO;
	tfile_sample_free(&s);
	if (ret != 0) {
		fprintf(stderr, "tfile-gen: %s\n", strerror(-ret));
		return 99;
	}
	return 0;
}
