/*
 * retpad-common.c - the return pad builders' shared checks and branch
 * bookkeeping (see retpad-common.h).
 */
#include "config.h"

#include "arch/retpad-common.h"

bool retpad_area_ok(const struct arch_ret_pad *r)
{
	return r->area && !(r->area & 4095) && r->tramp && !(r->tramp & 3);
}

/* Whether [a, a + alen) and [b, b + blen) do not overlap. */
static bool apart(size_t a, size_t alen, size_t b, size_t blen)
{
	return a + alen <= b || b + blen <= a;
}

bool retpad_ring_ok(const struct arch_pad_ring *g, unsigned int image_bytes,
		    unsigned int frame_bytes)
{
	size_t rec;

	if (!g->nrecords || (g->nrecords & (g->nrecords - 1)) ||
	    g->record_shift < 10 || g->record_shift > 24 || (g->ring & 7) ||
	    (g->off_records & 7))
		return false;
	rec = (size_t)1 << g->record_shift;
	return !((g->off_seq & 7) || (size_t)g->off_seq + 8 > rec || g->off_seq < image_bytes ||
		 (g->off_frame & 7) || g->off_frame < image_bytes ||
		 (size_t)g->off_frame + frame_bytes > rec ||
		 (g->off_blocks & 7) || g->off_blocks < image_bytes ||
		 (size_t)g->off_blocks + RET_REC_SIZE > rec) &&
	       apart(g->off_seq, 8, g->off_frame, frame_bytes) &&
	       apart(g->off_blocks, RET_REC_SIZE, g->off_frame, frame_bytes) &&
	       apart(g->off_blocks, RET_REC_SIZE, g->off_seq, 8);
}

void retpad_fix_to(uint8_t *buf, size_t size, bool overflow, const struct retpad_fix *f,
		   size_t to, retpad_enc_fn *enc)
{
	uint32_t w;

	if (overflow || f->at + 4 > size)
		return;
	w = enc(f, to);
	for (int k = 0; k < 4; k++)
		buf[f->at + k] = (uint8_t)(w >> (8 * k));
}

int retpad_append(uint8_t *buf, size_t size, size_t *len,
		  int (*emit)(uint8_t *out, size_t size))
{
	int m = emit(*len < size ? buf + *len : buf, *len < size ? size - *len : 0);

	if (m < 0)
		return m;
	*len += (size_t)m;
	return 0;
}
