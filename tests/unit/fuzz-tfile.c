/*
 * fuzz-tfile.c - libFuzzer target for the trace-file reader.
 *
 * `probe-trace dump` reads files it did not write: a recording cut short
 * when the recorder died, a file gdb's `tsave` wrote, or bytes damaged on
 * a board's flash.  Whatever the file holds, dump must print what it can
 * and say why it stopped, never crash, read out of bounds or leak.  Each
 * input is used two ways:
 *
 *   1. as a whole trace file, run through the real `probe-trace dump`
 *      and `probe-trace report` (cmd_dump, cmd_report, exactly the code
 *      the binary runs) as text, JSON, a summary, a JSON summary, a
 *      report (per thread, with a histogram of arg0) or a Chrome trace
 *      written to /dev/null.  The file is a memfd named by /proc/self/fd/N, so
 *      the reader opens it as it opens any path.  dump must return one
 *      of its documented exit statuses;
 *   2. as the blocks of one trace frame, put in a one-frame struct tbuf:
 *      the readers of protocol/tbuf-read.c (registers, PC, memory, trace
 *      state variables, traceframe-info, searches) must stay inside the
 *      frame's bytes and agree with each other.  The first input byte
 *      picks the register block's size, as the file's "R" line does.
 *
 * Run it with -close_fd_mask=3 (run-fuzz-tfile.sh does): dump prints
 * every frame, and its complaints, on stdout and stderr.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "client/probe-trace.h"
#include "client/record.h"
#include "protocol/rsp.h"
#include "protocol/tbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd = -1;
static char path[64];

static void check(bool ok)
{
	if (!ok)
		abort();
}

static void dump_file(const uint8_t *data, size_t size)
{
	/* the subcommand, then its options */
	static const char *const modes[][5] = {
		{ "dump", NULL }, { "dump", "--json", NULL },
		{ "dump", "--summary", NULL }, { "dump", "--summary", "--json", NULL },
		{ "report", NULL }, { "report", "--per-thread", "--hist=arg0", NULL },
		{ "dump", "--format=chrome", "--force", "-o", "/dev/null" },
	};
	const size_t nmodes = sizeof(modes) / sizeof(modes[0]);

	if (memfd < 0) {
		memfd = memfd_create("fuzz-tfile", MFD_CLOEXEC);
		check(memfd >= 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	}
	check(ftruncate(memfd, 0) == 0);
	check(pwrite(memfd, data, size, 0) == (ssize_t)size);
	/* One output mode per input, picked by its length: each call costs
	 * dump's two big allocations, and mutations change the length often
	 * enough to give every input every mode. */
	{
		const char *const *m = modes[size % nmodes];
		char *argv[8];
		int argc = 0, rc;

		for (int k = 0; k < 5 && m[k]; k++)
			argv[argc++] = (char *)m[k];
		argv[argc++] = path;
		argv[argc] = NULL;
		rc = strcmp(m[0], "dump") == 0 ? cmd_dump(argc, argv)
					       : cmd_report(argc, argv);
		check(rc == PT_EXIT_OK || rc == PT_EXIT_FAIL);
		fflush(stdout);
	}
}

static uint64_t find_tp_addr(void *ctx, int tpnum)
{
	return (uint64_t)tpnum * 16;
}

/* One frame of blocks in a struct tbuf, as the agent's buffer holds it. */
static void read_frame(const uint8_t *data, size_t size)
{
	static const size_t regblocks[] = { 0, 1, 8, 16, 168, 248, 560, 4096 };
	struct tbuf tb = { 0 };
	struct tbuf_frame f;
	struct rsp_buf xml;
	const uint8_t *regs;
	uint32_t len;
	uint8_t *buf;

	if (size < 1)
		return;
	tb.regblock_size = regblocks[data[0] % 8];
	data++;
	size--;
	len = (uint32_t)size;
	buf = malloc(TBUF_FRAME_HEADER + size);
	check(buf != NULL);
	buf[0] = 1;
	buf[1] = 0;
	memcpy(buf + 2, &len, 4);
	memcpy(buf + TBUF_FRAME_HEADER, data, size);
	tb.data = buf;
	tb.size = TBUF_FRAME_HEADER + size;
	tb.start = 0;
	tb.end = tb.used = tb.size;
	tb.frames = tb.created = 1;

	check(tbuf_frame_get(&tb, 0, &f) == 0);
	check(f.data_len == size && f.tpnum == 1);
	check(tbuf_frame_get(&tb, 1, &f) == -ENOENT);
	check(tbuf_frame_get(&tb, 0, &f) == 0);

	if (tbuf_frame_regs(&tb, &f, &regs) == 0)
		check(regs >= f.data && regs + tb.regblock_size <= f.data + size);

	for (size_t off = 0; off < 24; off += 7) {
		struct tbuf_pc pc = {
			.pc_offset = off, .pc_size = 1u << (off % 4),
			.tp_addr = find_tp_addr,
		};
		uint64_t at = tbuf_frame_pc(&tb, &f, &pc);
		struct tbuf_query q = {
			.kind = TBUF_FIND_RANGE, .lo = at, .hi = at,
		};
		struct tbuf_frame g;

		/* a search for the PC just read finds this frame */
		check(tbuf_find(&tb, &q, -1, &pc, &g) == 0 && g.number == 0);
	}

	/* Memory: each M block read at its start and at its last byte (an
	 * earlier block may hold the address too); a read never exceeds what
	 * was asked. */
	size_t pos = 0;
	struct tbuf_block b;
	int r;
	while ((r = tbuf_block_next(f.data, f.data_len, tb.regblock_size,
				    &pos, &b)) > 0) {
		uint8_t out[64];
		uint64_t addr;
		int32_t num;
		int64_t v;
		size_t got;

		check(b.body >= f.data && b.body + b.body_len <= f.data + size);
		if (b.type == 'M') {
			memcpy(&addr, b.body, 8);
			check(tbuf_frame_read_mem(&tb, &f, addr, out, sizeof(out),
						  &got) == 0);
			check(got <= sizeof(out));
			uint16_t mlen = (uint16_t)(b.body_len - 10);
			if (mlen) {
				check(tbuf_frame_read_mem(&tb, &f, addr + mlen - 1,
							  out, 1, &got) == 0);
				check(got <= 1);
			}
		} else if (b.type == 'V') {
			memcpy(&num, b.body, 4);
			check(tbuf_frame_tsv(&tb, &f, num, &v) == 0);
		}
	}
	check(r == 0 || r == -EINVAL);

	rsp_buf_init(&xml);
	tbuf_frame_info_xml(&tb, &f, &xml);
	check(xml.len > 0);
	rsp_buf_free(&xml);

	/* The raw stream is the frame, byte for byte. */
	uint8_t *raw = malloc(tb.used);
	size_t got;
	check(raw != NULL);
	check(tbuf_raw_read(&tb, 0, raw, tb.used, &got) == 0);
	check(got == tb.used && memcmp(raw, buf, got) == 0);
	free(raw);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	dump_file(data, size);
	read_frame(data, size);
	return 0;
}
