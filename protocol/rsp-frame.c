/*
 * rsp-frame.c - splitting a byte stream into RSP packets.
 *
 * A small state machine: bytes outside a packet are acks, interrupts or
 * noise; `$` opens a packet (`%` a notification), `#` closes the payload, two hex digits follow.
 * A payload over RSP_MAX_PAYLOAD is still consumed to its end (so the stream
 * stays in step) and reported as RSP_EV_TOO_LONG.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/rsp.h"

enum { ST_IDLE, ST_PAYLOAD, ST_SUM1, ST_SUM2 };

/* The bytes of `data` before its first '#' or '$', 8 at a time while a
 * word has neither (a byte of w ^ c is zero where w holds c; the
 * zero-byte test has no false negative). */
static size_t payload_run(const uint8_t *data, size_t len)
{
	const uint64_t ones = 0x0101010101010101ull;
	size_t j = 0;
	uint64_t w;

	while (len - j >= 8) {
		memcpy(&w, data + j, 8);
		uint64_t a = w ^ (ones * '#'), b = w ^ (ones * '$');
		if ((((a - ones) & ~a) | ((b - ones) & ~b)) & (ones << 7))
			break;
		j += 8;
	}
	while (j < len && data[j] != '#' && data[j] != '$')
		j++;
	return j;
}

void rsp_framer_init(struct rsp_framer *f)
{
	memset(f, 0, sizeof(*f));
	f->cap = RSP_MAX_PAYLOAD + 1;
	f->payload = malloc(f->cap);
	if (!f->payload)
		abort();
	f->payload[0] = '\0';
}

void rsp_framer_free(struct rsp_framer *f)
{
	free(f->payload);
	f->payload = NULL;
}

enum rsp_event rsp_framer_feed(struct rsp_framer *f, const uint8_t *data,
			       size_t len, size_t *used)
{
	size_t i;

	for (i = 0; i < len; i++) {
		uint8_t c = data[i];
		int d;

		switch (f->state) {
		case ST_IDLE:
			if (c == '$' || c == '%') {
				f->state = ST_PAYLOAD;
				f->len = 0;
				f->sum = 0;
				f->overflow = false;
				f->notification = c == '%';
			} else if (c == 0x03) {
				*used = i + 1;
				return RSP_EV_INTERRUPT;
			} else if (c == '+') {
				*used = i + 1;
				return RSP_EV_ACK;
			} else if (c == '-') {
				*used = i + 1;
				return RSP_EV_NACK;
			}
			break;
		case ST_PAYLOAD:
			if (c == '#') {
				f->state = ST_SUM1;
				break;
			}
			if (c != '$') {
				/* The run of ordinary bytes up to the next '#'
				 * or '$' at once: a stream of trace frames is
				 * mostly payload (one byte at a time through
				 * the switch was the recorder's hottest loop). */
				size_t j = i + payload_run(data + i, len - i);
				uint8_t sum = f->sum + rsp_checksum(data + i, j - i);
				size_t n = j - i;
				size_t room = RSP_MAX_PAYLOAD - f->len;
				if (n > room) {
					f->overflow = true;
					n = room;
				}
				memcpy(f->payload + f->len, data + i, n);
				f->len += n;
				f->sum = sum;
				i = j - 1;
				break;
			}
			if (c == '$') {
				/* A new packet before the end of this one: the
				 * sender restarted.  Drop the partial packet. */
				f->len = 0;
				f->sum = 0;
				f->overflow = false;
				f->notification = false;
				break;
			}
			f->sum += c;
			if (f->len < RSP_MAX_PAYLOAD)
				f->payload[f->len++] = c;
			else
				f->overflow = true;
			break;
		case ST_SUM1:
		case ST_SUM2:
			d = rsp_hex_digit(c);
			f->payload[f->len] = '\0';
			if (d < 0) {
				/* Not a checksum digit: the packet is broken,
				 * but the byte itself may be a `$` starting
				 * the resend, an ack or an interrupt, so it
				 * is left for the idle state to read. */
				f->state = ST_IDLE;
				*used = i;
				return RSP_EV_BAD_CHECKSUM;
			}
			if (f->state == ST_SUM1) {
				f->got_sum = d << 4;
				f->state = ST_SUM2;
				break;
			}
			f->state = ST_IDLE;
			*used = i + 1;
			if ((uint8_t)(f->got_sum | d) != f->sum)
				return RSP_EV_BAD_CHECKSUM;
			if (f->overflow)
				return RSP_EV_TOO_LONG;
			return f->notification ? RSP_EV_NOTIFICATION
					       : RSP_EV_PACKET;
		}
	}
	*used = len;
	return RSP_EV_NONE;
}
