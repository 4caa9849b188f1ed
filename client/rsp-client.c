/*
 * rsp-client.c - the client end of the Remote Serial Protocol
 * (rsp-client.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client/rsp-client.h"

static void client_init(struct rsp_client *c)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	rsp_framer_init(&c->framer);
	rsp_buf_init(&c->out);
	c->notes_tail = &c->notes;
}

int rsp_client_spawn(struct rsp_client *c, const char *command)
{
	int sv[2];
	pid_t pid;

	client_init(c);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		snprintf(c->error, sizeof(c->error), "socketpair: %s",
			 strerror(errno));
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int err = errno;
		close(sv[0]);
		close(sv[1]);
		snprintf(c->error, sizeof(c->error), "fork: %s", strerror(err));
		return -err;
	}
	if (pid == 0) {
		setpgid(0, 0);
		dup2(sv[1], 0);
		dup2(sv[1], 1);
		execl("/bin/sh", "sh", "-c", command, (char *)NULL);
		fprintf(stderr, "probe-trace: /bin/sh: %s\n", strerror(errno));
		_exit(127);
	}
	close(sv[1]);
	c->fd = sv[0];
	c->agent = pid;
	return 0;
}

int rsp_client_connect(struct rsp_client *c, const char *hostport)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	char host[256];
	const char *colon = strrchr(hostport, ':');
	int err;

	client_init(c);
	if (!colon || !colon[1] || (size_t)(colon - hostport) >= sizeof(host)) {
		snprintf(c->error, sizeof(c->error),
			 "'%s': expected HOST:PORT or :PORT", hostport);
		return -EINVAL;
	}
	memcpy(host, hostport, colon - hostport);
	host[colon - hostport] = '\0';
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	err = getaddrinfo(host[0] ? host : "localhost", colon + 1, &hints, &res);
	if (err) {
		snprintf(c->error, sizeof(c->error), "%s: %s", hostport,
			 gai_strerror(err));
		return -EHOSTUNREACH;
	}
	err = ECONNREFUSED;
	for (ai = res; ai; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
				ai->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
			c->fd = fd;
			break;
		}
		err = errno;
		close(fd);
	}
	freeaddrinfo(res);
	if (c->fd < 0) {
		snprintf(c->error, sizeof(c->error), "cannot connect to %s: %s",
			 hostport, strerror(err));
		return -err;
	}
	return 0;
}

int rsp_client_close(struct rsp_client *c, int wait_ms)
{
	int status = -1;

	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	if (c->agent > 0) {
		for (int waited = 0;; waited += 10) {
			pid_t r = waitpid(c->agent, &status, WNOHANG);
			if (r == c->agent || (r < 0 && errno != EINTR))
				break;
			if (waited >= wait_ms) {
				kill(-c->agent, SIGKILL);
				kill(c->agent, SIGKILL);
				while (waitpid(c->agent, &status, 0) < 0 &&
				       errno == EINTR)
					;
				break;
			}
			struct timespec ts = { 0, 10 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
		c->agent = 0;
	}
	while (c->notes) {
		struct rsp_note *n = c->notes;
		c->notes = n->next;
		free(n);
	}
	rsp_framer_free(&c->framer);
	rsp_buf_free(&c->out);
	return status;
}

/* Says why the connection ended, with the agent command's exit status
 * when it has one. */
static void gone(struct rsp_client *c, int err)
{
	int status;
	char why[96] = "";

	if (c->agent > 0) {
		for (int i = 0; i < 50; i++) {
			pid_t r = waitpid(c->agent, &status, WNOHANG);
			if (r == c->agent) {
				if (WIFEXITED(status))
					snprintf(why, sizeof(why), " (the agent command exited with status %d)",
						 WEXITSTATUS(status));
				else if (WIFSIGNALED(status))
					snprintf(why, sizeof(why), " (the agent was killed by signal %d)",
						 WTERMSIG(status));
				c->agent = 0;
				break;
			}
			if (r < 0)
				break;
			struct timespec ts = { 0, 2 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
	}
	if (err)
		snprintf(c->error, sizeof(c->error), "the agent closed the connection: %s%s",
			 strerror(err), why);
	else
		snprintf(c->error, sizeof(c->error), "the agent closed the connection%s", why);
}

static int write_all(struct rsp_client *c, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = send(c->fd, data, len, MSG_NOSIGNAL);
		if (n < 0 && errno == ENOTSOCK)
			n = write(c->fd, data, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			c->eof = true;
			gone(c, errno);
			return -EPIPE;
		}
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

int rsp_client_send(struct rsp_client *c, const void *payload, size_t len)
{
	if (c->fd < 0 || c->eof) {
		if (!c->error[0])
			snprintf(c->error, sizeof(c->error), "the agent closed the connection");
		return -EPIPE;
	}
	rsp_buf_reset(&c->out);
	rsp_frame(&c->out, payload, len);
	return write_all(c, c->out.data, c->out.len);
}

static void queue_note(struct rsp_client *c, const char *payload, size_t len)
{
	struct rsp_note *n = malloc(sizeof(*n) + len + 1);

	if (!n)
		abort();
	n->next = NULL;
	n->len = len;
	memcpy(n->payload, payload, len);
	n->payload[len] = '\0';
	*c->notes_tail = n;
	c->notes_tail = &n->next;
}

struct rsp_note *rsp_client_next_note(struct rsp_client *c)
{
	struct rsp_note *n = c->notes;

	if (n) {
		c->notes = n->next;
		if (!c->notes)
			c->notes_tail = &c->notes;
	}
	return n;
}

/*
 * Feeds buffered input to the framer until a reply packet is complete
 * (copied to `reply`, returns 1) or the input is used up (0).
 */
static int take_packets(struct rsp_client *c, struct rsp_buf *reply)
{
	while (c->in_off < c->in_len) {
		size_t used;
		enum rsp_event ev = rsp_framer_feed(&c->framer,
						    c->in + c->in_off,
						    c->in_len - c->in_off, &used);
		c->in_off += used;
		switch (ev) {
		case RSP_EV_NOTIFICATION:
			queue_note(c, c->framer.payload, c->framer.len);
			break;
		case RSP_EV_PACKET:
			if (!c->noack && write_all(c, "+", 1) < 0)
				return -EPIPE;
			if (reply) {
				rsp_buf_reset(reply);
				rsp_buf_put(reply, c->framer.payload,
					    c->framer.len);
				rsp_buf_putc(reply, '\0');
				reply->len--;
				return 1;
			}
			break;
		case RSP_EV_BAD_CHECKSUM:
			if (!c->noack && write_all(c, "-", 1) < 0)
				return -EPIPE;
			break;
		case RSP_EV_TOO_LONG:
			snprintf(c->error, sizeof(c->error),
				 "the agent sent a packet longer than %d bytes",
				 RSP_MAX_PAYLOAD);
			return -EPROTO;
		default:
			break;
		}
	}
	c->in_off = c->in_len = 0;
	return 0;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* One read with poll; 0 data read, -ETIMEDOUT, -EINTR, -EPIPE. */
static int read_some(struct rsp_client *c, int timeout_ms)
{
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	int r = poll(&pfd, 1, timeout_ms);
	ssize_t n;

	if (r < 0)
		return errno == EINTR ? -EINTR : -errno;
	if (r == 0)
		return -ETIMEDOUT;
	n = read(c->fd, c->in, sizeof(c->in));
	if (n < 0 && errno == EINTR)
		return -EINTR;
	if (n <= 0) {
		c->eof = true;
		gone(c, n < 0 ? errno : 0);
		return -EPIPE;
	}
	c->in_len = (size_t)n;
	c->in_off = 0;
	return 0;
}

int rsp_client_wait_reply(struct rsp_client *c, struct rsp_buf *reply,
			  int timeout_ms)
{
	long deadline = timeout_ms < 0 ? 0 : now_ms() + timeout_ms;

	for (;;) {
		int r = take_packets(c, reply);
		if (r > 0 && c->owed) {
			c->owed--;	/* an earlier request's, late */
			continue;
		}
		if (r != 0)
			return r < 0 ? r : 0;
		if (c->eof)
			return -EPIPE;
		int left = -1;
		if (timeout_ms >= 0) {
			long l = deadline - now_ms();
			if (l <= 0) {
				snprintf(c->error, sizeof(c->error),
					 "no reply from the agent in %d ms",
					 timeout_ms);
				c->owed++;	/* it may still come */
				return -ETIMEDOUT;
			}
			left = (int)l;
		}
		r = read_some(c, left);
		if (r == -ETIMEDOUT)
			continue;
		if (r < 0)
			return r;
	}
}

int rsp_client_poll(struct rsp_client *c, int timeout_ms)
{
	int r = take_packets(c, NULL);

	if (r < 0)
		return r;
	if (c->notes)
		return 0;
	r = read_some(c, timeout_ms);
	if (r < 0)
		return r;
	r = take_packets(c, NULL);
	return r < 0 ? r : 0;
}

int rsp_client_request(struct rsp_client *c, struct rsp_buf *reply,
		       int timeout_ms, const char *fmt, ...)
{
	char buf[RSP_MAX_PAYLOAD];
	va_list ap;
	int n, r;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		snprintf(c->error, sizeof(c->error), "request too long");
		return -E2BIG;
	}
	r = rsp_client_send(c, buf, (size_t)n);
	if (r < 0)
		return r;
	for (;;) {
		r = rsp_client_wait_reply(c, reply, timeout_ms);
		if (r != -EINTR)
			return r;
	}
}

int rsp_client_xfer(struct rsp_client *c, const char *object,
		    const char *annex, struct rsp_buf *out)
{
	struct rsp_buf reply;
	uint64_t off = 0;
	int r = 0;

	rsp_buf_init(&reply);
	rsp_buf_reset(out);
	for (;;) {
		r = rsp_client_request(c, &reply, 10000,
				       "qXfer:%s:read:%s:%llx,%x", object,
				       annex, (unsigned long long)off, 0x3000);
		if (r < 0)
			break;
		if (reply.len == 0 || (reply.data[0] != 'm' &&
				       reply.data[0] != 'l')) {
			snprintf(c->error, sizeof(c->error),
				 "reading %s: %s", object,
				 reply.len ? reply.data : "not supported");
			r = -EIO;
			break;
		}
		ssize_t n = rsp_unescape(reply.data + 1, reply.len - 1);
		if (n < 0) {
			snprintf(c->error, sizeof(c->error),
				 "reading %s: bad escape", object);
			r = -EPROTO;
			break;
		}
		rsp_buf_put(out, reply.data + 1, (size_t)n);
		off += (uint64_t)n;
		if (reply.data[0] == 'l')
			break;
	}
	rsp_buf_putc(out, '\0');
	out->len--;
	rsp_buf_free(&reply);
	return r;
}
