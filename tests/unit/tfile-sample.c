/*
 * tfile-sample.c - the trace described in tfile-sample.h, built through
 * the same parser and store calls the agent makes.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "protocol/rsp.h"
#include "protocol/rsp-request.h"
#include "tests/unit/tfile-sample.h"

static const char *const sample_packets[] = {
	"QTinit",
	"QTDP:1:0000000000401000:E:0:0-",
	"QTDP:-1:0000000000401000:R0fffffffffffffffffffffffffffffffffffff-",
	"QTDP:-1:0000000000401000:M-1,404000,4",
	"QTDPsrc:1:401000:at:0:9:2a3078343031303030",		/* *0x401000 */
	/* collect $regs, *(int *)0x404000 */
	"QTDPsrc:1:401000:cmd:0:1f:636f6c6c6563742024726567732c202a28696e74202a293078343034303030",
	"QTDP:2:0000000000401020:E:0:5-",
	"QTDP:-2:0000000000401020:R0fffffffffffffffffffffffffffffffffffff",
	"QTDPsrc:2:401020:at:0:9:2a3078343031303230",		/* *0x401020 */
	"QTDPsrc:2:401020:cmd:0:d:636f6c6c656374202472656773",	/* collect $regs */
	"QTDV:1:0000000000000000:1:74726163655f74696d657374616d70",
	"QTDV:2:0000000000000000:0:68697473",
};

uint64_t tfile_sample_pc(unsigned i)
{
	return i % 2 ? SAMPLE_TP2_ADDR : SAMPLE_TP1_ADDR;
}

uint32_t tfile_sample_word(unsigned i)
{
	return 0x1000 + i;
}

int64_t tfile_sample_hits(unsigned i)
{
	return (int64_t)i * 3 - 4;
}

static int sample_feed(struct tfile_sample *s, const char *packet)
{
	static struct rsp_request req;
	struct tp_def *tp;
	size_t len = strlen(packet);
	char *copy = strdup(packet);
	int ret = -EINVAL;

	if (!copy)
		return -ENOMEM;
	rsp_parse(copy, len, &req);
	switch (req.kind) {
	case RSP_REQ_TINIT:
		tp_store_clear(&s->store);
		ret = 0;
		break;
	case RSP_REQ_TDP:
		ret = tp_define(&s->store, &req, &tp);
		break;
	case RSP_REQ_TDP_ACTIONS:
		ret = tp_add_actions(&s->store, &req, &tp);
		break;
	case RSP_REQ_TDP_SRC:
		ret = tp_add_source(&s->store, &req);
		break;
	case RSP_REQ_TDV:
		ret = tsv_define(&s->store, req.u.tdv.number, req.u.tdv.initial,
				 req.u.tdv.builtin, req.u.tdv.name);
		break;
	default:
		break;
	}
	free(copy);
	return ret;
}

static int sample_frame(struct tfile_sample *s, unsigned i, const uint8_t *big)
{
	int16_t tpnum = i % 2 ? 2 : 1;
	uint32_t word = tfile_sample_word(i);
	uint64_t pc = tfile_sample_pc(i), v;
	struct tp_def *tp;
	uint8_t *regs;
	size_t size;
	int ret;

	if ((ret = tbuf_frame_begin(&s->tb, tpnum)) != 0 ||
	    (ret = tbuf_add_regs_reserve(&s->tb, &regs)) != 0)
		return ret;
	memset(regs, 0, s->regsize);
	for (unsigned r = 0; r < 16; r++) {	/* rax.. r15 = r * 0x11 + i */
		v = r * 0x11 + i;
		memcpy(regs + 8 * r, &v, 8);
	}
	memcpy(regs + s->pc_offset, &pc, 8);
	if (tpnum == 1 &&
	    (ret = tbuf_add_mem(&s->tb, SAMPLE_MEM_ADDR, &word, 4)) != 0)
		return ret;
	if (i == 2 && (ret = tbuf_add_mem(&s->tb, SAMPLE_BIG_ADDR, big,
					  SAMPLE_BIG_LEN)) != 0)
		return ret;
	if ((ret = tbuf_add_tsv(&s->tb, 2, tfile_sample_hits(i))) != 0 ||
	    (ret = tbuf_frame_commit(&s->tb, &size)) != 0)
		return ret;
	tp = tp_find_number(&s->store, tpnum);
	tp->hit_count++;
	tp->bytes_used += size;
	return 0;
}

int tfile_sample_build(struct tfile_sample *s)
{
	const struct arch_ops *arch = arch_host();
	uint8_t *big;
	int ret;

	memset(s, 0, sizeof(*s));
	s->regsize = arch->regblock_size_for(0);
	s->pc_offset = arch->regs[arch->pc_regnum].offset;
	ret = arch->target_xml(0, s->xml, sizeof(s->xml));
	if (ret < 0)
		return ret;
	if ((ret = tp_store_init(&s->store)) != 0 ||
	    (ret = tbuf_init(&s->tb, 0, s->regsize)) != 0)
		return ret;
	for (size_t i = 0; i < sizeof(sample_packets) / sizeof(sample_packets[0]); i++)
		if ((ret = sample_feed(s, sample_packets[i])) != 0)
			return ret;
	tp_store_start_run(&s->store);
	big = malloc(SAMPLE_BIG_LEN);
	if (!big)
		return -ENOMEM;
	for (size_t i = 0; i < SAMPLE_BIG_LEN; i++)
		big[i] = (uint8_t)(i ^ (i >> 8));
	for (unsigned i = 0; i < SAMPLE_FRAMES && ret == 0; i++)
		ret = sample_frame(s, i, big);
	free(big);
	if (ret != 0)
		return ret;
	s->status = (struct tp_status){
		.reason = TP_STOP_COMMAND, .stop_notes = "",
		.frames = s->tb.frames, .created = s->tb.created,
		.free_bytes = tbuf_free_bytes(&s->tb), .size = s->tb.size,
		.start_time = 0x1000, .stop_time = 0x2000,
		.user = "tester", .notes = "sample",
	};
	return 0;
}

void tfile_sample_free(struct tfile_sample *s)
{
	tp_store_free(&s->store);
	tbuf_free(&s->tb);
}
