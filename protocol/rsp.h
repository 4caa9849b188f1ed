/*
 * rsp.h - GDB Remote Serial Protocol framing, buffers and encodings.
 *
 * Pure code: no system calls.  The agent feeds the bytes it receives to a
 * `struct rsp_framer`, which hands back whole packets, acks, interrupts and
 * framing errors one event at a time; replies are built in a `struct rsp_buf`
 * and framed with rsp_frame().
 *
 * Framing facts (gdb 13.1): a packet is `$<payload>#<2 hex checksum>`, the
 * checksum being the sum of the payload bytes modulo 256.  Until
 * QStartNoAckMode each packet is answered with `+` (good) or `-` (resend).
 * Outside a packet, 0x03 is an interrupt request and stray `+`/`-` are acks.
 * The payload is kept exactly as sent: binary payloads (X, vFile:pwrite,
 * qSearch:memory) escape `#$}*` as `}` followed by the byte XOR 0x20, and
 * only the parser of those packets undoes it (rsp_unescape()).
 */
#ifndef PROBE_RSP_H
#define PROBE_RSP_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>

/* Largest payload we accept; advertised as PacketSize in qSupported. */
#define RSP_MAX_PAYLOAD 0x4000

/* A growable byte buffer for replies.  Allocation failure aborts. */
struct rsp_buf {
	char *data;
	size_t len, cap;
};

void rsp_buf_init(struct rsp_buf *b);
void rsp_buf_free(struct rsp_buf *b);
void rsp_buf_reset(struct rsp_buf *b);
void rsp_buf_put(struct rsp_buf *b, const void *data, size_t len);
void rsp_buf_puts(struct rsp_buf *b, const char *s);
void rsp_buf_putc(struct rsp_buf *b, char c);
void rsp_buf_printf(struct rsp_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Appends `len` bytes as lower-case hex (two digits a byte). */
void rsp_buf_put_hex(struct rsp_buf *b, const void *data, size_t len);
/* Appends `len` bytes escaped for a binary reply (`#$}*` -> `}` x^0x20). */
void rsp_buf_put_escaped(struct rsp_buf *b, const void *data, size_t len);
/* Appends an error reply `E.<text>` (text made safe: no `#$}*`). */
void rsp_buf_put_error(struct rsp_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void rsp_buf_put_verror(struct rsp_buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/* Frames `payload` as `$payload#cs` (or `%payload#cs` for a notification)
 * and appends it to `out`. */
void rsp_frame(struct rsp_buf *out, const char *payload, size_t len);
void rsp_frame_notification(struct rsp_buf *out, const char *payload,
			    size_t len);
uint8_t rsp_checksum(const void *data, size_t len);

/* Hex helpers.  Return the number of bytes decoded / -EINVAL. */
int rsp_hex_digit(int c);			/* -1 if not hex */
ssize_t rsp_hex_decode(const char *hex, size_t hexlen, void *out,
		       size_t outsize);
/* Undoes `}` escapes in place; returns the new length or -EINVAL for a
 * trailing lone `}`. */
ssize_t rsp_unescape(char *data, size_t len);

/* --- Framing ------------------------------------------------------------ */

enum rsp_event {
	RSP_EV_NONE,		/* input exhausted, nothing complete yet */
	RSP_EV_PACKET,		/* a packet with a good checksum: see payload */
	RSP_EV_BAD_CHECKSUM,	/* a packet whose checksum did not match */
	RSP_EV_TOO_LONG,	/* a packet longer than RSP_MAX_PAYLOAD, dropped */
	RSP_EV_INTERRUPT,	/* 0x03 outside a packet */
	RSP_EV_ACK,		/* `+` */
	RSP_EV_NACK,		/* `-`: resend the last reply */
	RSP_EV_NOTIFICATION,	/* `%payload#cs` (a stub's asynchronous
				 * notification): see payload */
};

struct rsp_framer {
	int state;			/* private */
	uint8_t sum;			/* running checksum of the payload */
	uint8_t got_sum;		/* checksum digits received so far */
	bool overflow;			/* payload exceeded the limit */
	bool notification;		/* the packet began with `%` */
	char *payload;			/* NUL-terminated payload of the event */
	size_t len, cap;
};

void rsp_framer_init(struct rsp_framer *f);
void rsp_framer_free(struct rsp_framer *f);
/*
 * Consumes bytes from `data` until one event is complete or the input is
 * used up.  Stores how many bytes were consumed in *used and returns the
 * event; for RSP_EV_PACKET, f->payload / f->len hold the payload until the
 * next call; RSP_EV_NOTIFICATION likewise for a `%` packet with a good
 * checksum (only stubs send those).  Garbage between packets is skipped.
 */
enum rsp_event rsp_framer_feed(struct rsp_framer *f, const uint8_t *data,
			       size_t len, size_t *used);

#endif
