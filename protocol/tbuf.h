/*
 * tbuf.h - the trace buffer: frames in gdb's trace-file layout.
 *
 * One fixed byte array (default 5 MiB, gdbserver's 0x500000) holds frames
 * back to back, exactly as a tfile stores them, so `tsave` (qTBuffer) and
 * our own trace-file writer copy bytes without conversion:
 *
 *   int16 tpnum | uint32 size | blocks...          (host = target order)
 *   'R' regblock[regblock_size]
 *   'M' u64 addr | u16 len | data[len]             (len <= 65535)
 *   'V' i32 tsv | i64 value
 *
 * A frame never straddles the end of the array.  When the frame being
 * built reaches the end, it is moved to the front (older frames then form
 * an "upper" segment that ends at `wrap`); in circular mode the oldest
 * frames are dropped until the new one fits; in linear mode a frame that
 * does not fit is dropped whole and the caller stops the run (tfull).
 *
 *     !wrapped:  [.... free ....|start  frames  end|...... free ......]
 *      wrapped:  [frames  end| frame being built |start frames wrap|gap]
 *
 * Building a frame (the hit path) never allocates and never fails
 * half-way: begin, any number of appends, then commit or abort; on any
 * append error the frame is already aborted.  A pointer returned by a
 * reserve function is valid only until the next append on the frame.
 *
 * Frames are numbered as gdb sees them: 0 = the oldest frame in the buffer.
 * The PC of a frame is read from its first R block (offset and size given
 * by the caller); without one it is the tracepoint's address (callback).
 */
#ifndef PROBE_TBUF_H
#define PROBE_TBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rsp_buf;

#define TBUF_DEFAULT_SIZE 0x500000	/* gdbserver's default */
#define TBUF_MIN_SIZE 1		/* gdb may ask for 4 bytes: every frame then fills it */
#define TBUF_FRAME_HEADER 6		/* int16 tpnum + uint32 size */
#define TBUF_MEM_HEADER 11		/* 'M' + u64 addr + u16 len */
#define TBUF_TSV_BLOCK 13		/* 'V' + i32 + i64 */
#define TBUF_MAX_MEM_BLOCK 0xffff

struct tbuf {
	uint8_t *data;
	size_t size;			/* capacity */
	size_t regblock_size;		/* bytes after each 'R' */
	bool circular;

	/* Committed frames (see the picture above). */
	size_t start;			/* oldest frame */
	size_t end;			/* one past the newest frame */
	size_t wrap;			/* wrapped: end of the upper segment */
	bool wrapped;
	size_t used;			/* bytes of committed frames */
	uint64_t frames;		/* frames in the buffer */
	uint64_t created;		/* frames ever committed */
	uint64_t dropped_oldest;	/* circular: discarded to make room */
	uint64_t dropped_too_big;	/* frames larger than the buffer */
	uint64_t dropped_full;		/* linear: frames that did not fit */
	uint64_t consumed;		/* handed to a streaming client */

	/* The frame being built. */
	bool building;
	size_t fstart, wpos;
};

/* Allocates `size` bytes (0 = TBUF_DEFAULT_SIZE).  -EINVAL if below
 * TBUF_MIN_SIZE, -ENOMEM. */
int tbuf_init(struct tbuf *tb, size_t size, size_t regblock_size);
void tbuf_free(struct tbuf *tb);
/* Empties the buffer and zeroes the counters (QTinit / QTStart). */
void tbuf_clear(struct tbuf *tb);
/* QTBuffer:size (before a run): reallocates empty. -EINVAL, -ENOMEM
 * (the old buffer is kept then). */
int tbuf_resize(struct tbuf *tb, size_t size);
/* More room, the frames kept in order (none may be being built).
 * -EINVAL if smaller than now or a frame is being built, -ENOMEM. */
int tbuf_grow(struct tbuf *tb, size_t size);
void tbuf_set_circular(struct tbuf *tb, bool circular);

/* Bytes free = size - bytes of committed frames (qTStatus tfree). */
size_t tbuf_free_bytes(const struct tbuf *tb);

/* ---- building a frame (hit path, no allocation) ---- */

/* -EBUSY if a frame is being built, -EINVAL for tpnum <= 0. */
int tbuf_frame_begin(struct tbuf *tb, int16_t tpnum);
/*
 * Appends `len` raw bytes to the frame and returns where to write them.
 * Errors (the frame is dropped whole): -ENOSPC linear buffer full (stop the
 * run: tfull), -E2BIG the frame would be larger than the whole buffer
 * (counted; circular runs go on), -EINVAL no frame being built.
 */
int tbuf_frame_reserve(struct tbuf *tb, size_t len, uint8_t **out);
/* 'R' block; its bytes returned for the caller to fill, or copied. */
int tbuf_add_regs_reserve(struct tbuf *tb, uint8_t **out);
int tbuf_add_regs(struct tbuf *tb, const void *regs);
/* 'M' block of len <= TBUF_MAX_MEM_BLOCK whose data the caller fills. */
int tbuf_add_mem_reserve(struct tbuf *tb, uint64_t addr, size_t len,
			 uint8_t **out);
/* Memory of any length, split into blocks of at most 65535 bytes. */
int tbuf_add_mem(struct tbuf *tb, uint64_t addr, const void *data,
		 size_t len);
int tbuf_add_tsv(struct tbuf *tb, int32_t number, int64_t value);
/* Frame length so far (header included), and going back to it: to drop a
 * block whose memory could not be read. */
size_t tbuf_frame_mark(const struct tbuf *tb);
void tbuf_frame_rewind(struct tbuf *tb, size_t mark);
/* Commits the frame; *size = its bytes (header included) for bytes_used. */
int tbuf_frame_commit(struct tbuf *tb, size_t *size);
void tbuf_frame_abort(struct tbuf *tb);

/* Removes up to n of the oldest committed frames, which a streaming
 * client has received (they count in `consumed`, not as dropped).
 * Returns how many were removed.  Not while a frame is being built. */
uint64_t tbuf_consume(struct tbuf *tb, uint64_t n);

/* The committed frames as the bytes they are, oldest first: one piece,
 * or two when the buffer has wrapped (the upper segment, then the lower
 * one).  Returns the number of pieces (0 when empty). */
struct tbuf_span {
	const uint8_t *data;
	size_t len;
};
int tbuf_spans(const struct tbuf *tb, struct tbuf_span span[2]);
/* Removes every committed frame, which a streaming client has (they
 * count in `consumed`).  Not while a frame is being built. */
void tbuf_consume_all(struct tbuf *tb);

/* ---- reading frames ---- */

struct tbuf_frame {
	uint64_t number;		/* 0 = oldest in the buffer */
	int16_t tpnum;
	const uint8_t *raw;		/* header + blocks */
	size_t raw_len;
	const uint8_t *data;		/* blocks */
	size_t data_len;
	size_t off;			/* private: offset in tb->data */
};

/* How a frame's PC is found: `pc_size` (1..8) bytes at `pc_offset` in the
 * R block, host order; else tp_addr(ctx, tpnum). */
struct tbuf_pc {
	size_t pc_offset, pc_size;
	uint64_t (*tp_addr)(void *ctx, int tpnum);
	void *ctx;
};

enum tbuf_find_kind {
	TBUF_FIND_PC,			/* pc == lo */
	TBUF_FIND_TDP,			/* tpnum == tpnum */
	TBUF_FIND_RANGE,		/* lo <= pc <= hi */
	TBUF_FIND_OUTSIDE,		/* pc < lo || pc > hi */
};
struct tbuf_query {
	enum tbuf_find_kind kind;
	uint64_t lo, hi;
	int tpnum;
};

/* -ENOENT if there is no frame n. */
int tbuf_frame_get(const struct tbuf *tb, uint64_t n, struct tbuf_frame *f);
/* Advances f to the next frame; false at the newest. */
bool tbuf_frame_next(const struct tbuf *tb, struct tbuf_frame *f);
/* First frame after frame `after` (-1: from the oldest) matching q; the
 * search does not wrap around.  -ENOENT if none. */
int tbuf_find(const struct tbuf *tb, const struct tbuf_query *q,
	      int64_t after, const struct tbuf_pc *pc, struct tbuf_frame *f);
/* The frame's PC (see struct tbuf_pc). */
uint64_t tbuf_frame_pc(const struct tbuf *tb, const struct tbuf_frame *f,
		       const struct tbuf_pc *pc);
/* The first R block (regblock_size bytes), or -ENOENT. */
int tbuf_frame_regs(const struct tbuf *tb, const struct tbuf_frame *f,
		    const uint8_t **regs);
/* Reads from the first M block containing addr: *got = min(len, rest of
 * the block); *got = 0 (and 0) when no block holds addr. */
int tbuf_frame_read_mem(const struct tbuf *tb, const struct tbuf_frame *f,
			uint64_t addr, void *out, size_t len, size_t *got);
/* One block of a frame: type, and the bytes after the type byte ('M':
 * u64 addr, u16 len, data; 'V': i32 number, i64 value; 'R': the regs). */
struct tbuf_block {
	char type;			/* 'R', 'M', 'V' */
	const uint8_t *body;
	size_t body_len;
};
/* The block at *pos of a frame's blocks (`data`, `len`), advancing *pos:
 * 1, 0 at the end, -EINVAL for a block that does not parse.  For frames
 * outside a tbuf too (a trace file being read). */
int tbuf_block_next(const uint8_t *data, size_t len, size_t regblock_size,
		    size_t *pos, struct tbuf_block *b);
/* Value of TSV `number` in a frame's body (the bytes after its 6-byte
 * header), from the first V block of that number: a body that starts
 * with V blocks (probe-trace's frames) is looked at in place, others
 * block by block.  0, or -ENOENT. */
int tbuf_body_tsv(const uint8_t *body, size_t len, size_t regblock_size,
		  int32_t number, int64_t *value);
/* Value of TSV `number` from the first V block, or -ENOENT. */
int tbuf_frame_tsv(const struct tbuf *tb, const struct tbuf_frame *f,
		   int32_t number, int64_t *value);
/* <traceframe-info> document for the frame (qXfer:traceframe-info). */
void tbuf_frame_info_xml(const struct tbuf *tb, const struct tbuf_frame *f,
			 struct rsp_buf *out);

/* ---- raw bytes (qTBuffer, trace files) ---- */

/* Bytes of committed frames, oldest first, as one linear stream. */
size_t tbuf_raw_size(const struct tbuf *tb);
/* Copies up to len bytes from `offset` of the stream; *got may be short
 * at the end.  -EINVAL if offset > tbuf_raw_size(). */
int tbuf_raw_read(const struct tbuf *tb, uint64_t offset, void *out,
		  size_t len, size_t *got);
/* qTBuffer:offset,len reply: hex bytes, `l` at the end of the stream,
 * -EINVAL (reply E01) beyond it.  Appends at most `len` bytes' hex. */
int tbuf_reply_raw(const struct tbuf *tb, uint64_t offset, uint64_t len,
		   struct rsp_buf *b);
/* Calls fn on the stream's contiguous pieces in order (at most two). */
int tbuf_raw_foreach(const struct tbuf *tb,
		     int (*fn)(void *ctx, const void *data, size_t len),
		     void *ctx);

#endif
