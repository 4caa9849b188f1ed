/*
 * rsp-buf.c - reply buffers, hex and binary encodings.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/rsp.h"

static const char hexdigits[] = "0123456789abcdef";

void rsp_buf_init(struct rsp_buf *b)
{
	b->data = NULL;
	b->len = b->cap = 0;
}

void rsp_buf_free(struct rsp_buf *b)
{
	free(b->data);
	rsp_buf_init(b);
}

void rsp_buf_reset(struct rsp_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

/* Keeps room for `extra` more bytes plus a NUL, so data is always a string. */
static void rsp_buf_reserve(struct rsp_buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;

	if (need <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap *= 2;
	char *p = realloc(b->data, cap);
	if (!p)
		abort();
	b->data = p;
	b->cap = cap;
}

void rsp_buf_put(struct rsp_buf *b, const void *data, size_t len)
{
	rsp_buf_reserve(b, len);
	memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
}

void rsp_buf_puts(struct rsp_buf *b, const char *s)
{
	rsp_buf_put(b, s, strlen(s));
}

void rsp_buf_putc(struct rsp_buf *b, char c)
{
	rsp_buf_put(b, &c, 1);
}

static void rsp_buf_vprintf(struct rsp_buf *b, const char *fmt, va_list ap)
{
	va_list again;
	int n;

	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, again);
	va_end(again);
	if (n < 0)
		return;
	rsp_buf_reserve(b, n);
	vsnprintf(b->data + b->len, n + 1, fmt, ap);
	b->len += n;
}

void rsp_buf_printf(struct rsp_buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rsp_buf_vprintf(b, fmt, ap);
	va_end(ap);
}

void rsp_buf_put_hex(struct rsp_buf *b, const void *data, size_t len)
{
	const uint8_t *p = data;

	rsp_buf_reserve(b, 2 * len);
	for (size_t i = 0; i < len; i++) {
		b->data[b->len++] = hexdigits[p[i] >> 4];
		b->data[b->len++] = hexdigits[p[i] & 15];
	}
	b->data[b->len] = '\0';
}

static bool rsp_needs_escape(uint8_t c)
{
	return c == '#' || c == '$' || c == '}' || c == '*';
}

/* Whether one of the 8 bytes of `w` is one to escape: a byte of w ^ c
 * is zero where w has c, and (x - 0x01..) & ~x & 0x80.. is non-zero
 * exactly when some byte of x is zero. */
static bool word_needs_escape(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ull;
	const uint64_t x1 = w ^ (ones * '#'), x2 = w ^ (ones * '$');
	const uint64_t x3 = w ^ (ones * '}'), x4 = w ^ (ones * '*');

	return (((x1 - ones) & ~x1) | ((x2 - ones) & ~x2) |
		((x3 - ones) & ~x3) | ((x4 - ones) & ~x4)) & (ones << 7);
}

/*
 * Binary payloads (qprobe.frames streams megabytes of trace frames) are
 * mostly bytes that need no escape: the runs between two special bytes
 * are found 8 bytes at a time and copied whole.
 */
void rsp_buf_put_escaped(struct rsp_buf *b, const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t i = 0;

	rsp_buf_reserve(b, 2 * len);
	while (i < len) {
		size_t j = i;
		uint64_t w;
		while (len - j >= 8) {
			memcpy(&w, p + j, 8);
			if (word_needs_escape(w))
				break;
			j += 8;
		}
		while (j < len && !rsp_needs_escape(p[j]))
			j++;
		memcpy(b->data + b->len, p + i, j - i);
		b->len += j - i;
		if (j == len)
			break;
		b->data[b->len++] = '}';
		b->data[b->len++] = p[j] ^ 0x20;
		i = j + 1;
	}
	b->data[b->len] = '\0';
}

void rsp_buf_put_error(struct rsp_buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rsp_buf_put_verror(b, fmt, ap);
	va_end(ap);
}

void rsp_buf_put_verror(struct rsp_buf *b, const char *fmt, va_list ap)
{
	struct rsp_buf text;

	rsp_buf_init(&text);
	rsp_buf_vprintf(&text, fmt, ap);
	rsp_buf_puts(b, "E.");
	/* gdb shows the text as is; the framing characters cannot appear. */
	for (size_t i = 0; i < text.len; i++) {
		char c = text.data[i];
		rsp_buf_putc(b, rsp_needs_escape(c) || c == '\n' ? ' ' : c);
	}
	rsp_buf_free(&text);
}

/*
 * The sum of bytes modulo 256, 8 bytes at a time: a word's even and odd
 * bytes go into four 16-bit lanes (at most 2 * 255 a word, so a lane
 * holds 128 words' worth before it could carry into the next), and the
 * lanes' low bytes add up to the sum.  A recording checksums every byte
 * of its frames on both sides of the connection.
 */
uint8_t rsp_checksum(const void *data, size_t len)
{
	const uint64_t lanes = 0x00ff00ff00ff00ffull;
	const uint8_t *p = data;
	uint8_t sum = 0;
	size_t i = 0;

	while (len - i >= 8) {
		size_t words = (len - i) / 8;
		uint64_t acc = 0, w;
		if (words > 128)
			words = 128;
		for (size_t k = 0; k < words; k++, i += 8) {
			memcpy(&w, p + i, 8);
			acc += (w & lanes) + ((w >> 8) & lanes);
		}
		sum += (uint8_t)(acc + (acc >> 16) + (acc >> 32) + (acc >> 48));
	}
	for (; i < len; i++)
		sum += p[i];
	return sum;
}

static void rsp_frame_with(struct rsp_buf *out, char start,
			   const char *payload, size_t len)
{
	uint8_t sum = rsp_checksum(payload, len);

	rsp_buf_reserve(out, len + 4);
	rsp_buf_putc(out, start);
	rsp_buf_put(out, payload, len);
	rsp_buf_putc(out, '#');
	rsp_buf_putc(out, hexdigits[sum >> 4]);
	rsp_buf_putc(out, hexdigits[sum & 15]);
}

void rsp_frame(struct rsp_buf *out, const char *payload, size_t len)
{
	rsp_frame_with(out, '$', payload, len);
}

void rsp_frame_notification(struct rsp_buf *out, const char *payload,
			    size_t len)
{
	rsp_frame_with(out, '%', payload, len);
}

int rsp_hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

ssize_t rsp_hex_decode(const char *hex, size_t hexlen, void *out,
		       size_t outsize)
{
	uint8_t *o = out;

	if (hexlen % 2 || hexlen / 2 > outsize)
		return -EINVAL;
	for (size_t i = 0; i < hexlen / 2; i++) {
		int hi = rsp_hex_digit((unsigned char)hex[2 * i]);
		int lo = rsp_hex_digit((unsigned char)hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		o[i] = hi << 4 | lo;
	}
	return hexlen / 2;
}

ssize_t rsp_unescape(char *data, size_t len)
{
	/* Nothing moves up to the first escape: find it at once. */
	char *first = memchr(data, '}', len);
	size_t o, i;

	if (!first)
		return (ssize_t)len;
	o = i = (size_t)(first - data);
	while (i < len) {
		if (data[i] == '}') {
			if (++i == len)
				return -EINVAL;
			data[o++] = data[i++] ^ 0x20;
			continue;
		}
		/* The run up to the next escape, in one move. */
		char *next = memchr(data + i, '}', len - i);
		size_t n = next ? (size_t)(next - (data + i)) : len - i;
		memmove(data + o, data + i, n);
		o += n;
		i += n;
	}
	return (ssize_t)o;
}
