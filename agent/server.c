/*
 * server.c - the agent's front door: transports, framing, dispatch.
 *
 * Two transports, one connection at a time:
 *   "-"          gdb's pipe: packets on stdin/stdout (gdb's `target remote |`
 *                and ssh); the program's output goes to our stderr
 *   [HOST]:PORT  a TCP listener, on loopback unless a host is named
 *
 * Bytes from gdb go through the framer (protocol/rsp-frame.c); each packet
 * is acknowledged (until QStartNoAckMode), parsed, handled, and answered.
 * Resume requests are answered later, by the stop reply that
 * stop.c sends when the program stops.
 *
 * Replies are written before the handler returns (blocking writes): no
 * output is ever left pending in the agent.  So when gdb's input is all
 * handled, no timer is due and the program runs, only a wait status can
 * come next, and the loop waits for it in waitid() (hot-wait.c) rather
 * than in epoll: a probe hit then costs no event-loop system call.
 */
#define LOG_DOMAIN "server"
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "agent/agent.h"
#include "agent/log.h"

struct queued_stop {
	struct stop_event ev;
	struct queued_stop *next;
};

/* The connection to the client, and what it has not been told yet. */
struct server {
	struct evconnlistener *listener;
	struct event *read_ev;
	struct event *sigchld_ev;
	struct event *udp_ev;		/* UDP: waiting for gdb's first datagram */
	int in_fd, out_fd;		/* -1 when nobody is connected */
	bool stdio;
	struct rsp_framer framer;
	struct rsp_buf last;		/* last framed reply, for `-` */
	struct rsp_request *req;
	bool deferred;			/* the reply comes later (resume) */
	bool had_connection;
	bool hot;			/* the connection can end a hot wait */
	bool cold;			/* no hot wait until the next SIGCHLD
					 * (server_run) */
	unsigned int timers;		/* scheduled on_more_statuses calls */
	/* Non-stop: stop notifications not yet taken by vStopped. */
	struct queued_stop *stops, **stops_tail;
	bool stop_in_flight;		/* %Stop sent, vStopped pending */
};

static struct server srv = { .in_fd = -1, .out_fd = -1, .stops_tail = &srv.stops };

/* "-" and gdbserver's "stdio" both mean gdb's pipe. */
bool server_is_stdio(void)
{
	return agent.opt.comm && (strcmp(agent.opt.comm, "-") == 0 ||
				  strcmp(agent.opt.comm, "stdio") == 0);
}

static void server_write(const char *data, size_t len)
{
	while (len && srv.out_fd >= 0) {
		ssize_t n = write(srv.out_fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			debug("write: %s", strerror(errno));
			return;	/* the read side will see the hang-up */
		}
		data += n;
		len -= n;
	}
}

static void server_send_packet(const char *payload, size_t len)
{
	if (srv.out_fd < 0)
		return;
	if (agent.opt.remote_debug)
		fprintf(stderr, "putpkt (\"%.*s\");\n", (int)(len > 2000 ? 2000 : len),
			payload);
	rsp_buf_reset(&srv.last);
	rsp_frame(&srv.last, payload, len);
	server_write(srv.last.data, srv.last.len);
}

void server_send_stop(const struct stop_event *ev)
{
	struct rsp_buf b;

	rsp_buf_init(&b);
	format_stop_reply(ev, &b);
	server_send_packet(b.data ? b.data : "", b.len);
	rsp_buf_free(&b);
	if (!agent.extended && !agent.processes &&
	    (ev->kind == STOP_EXITED || ev->kind == STOP_KILLED)) {
		/* Plain remote: nothing left to debug. */
		if (ev->kind == STOP_EXITED)
			log_user("\nChild exited with status %d", ev->exit_code);
		else
			log_user("\nChild terminated with signal = %d", ev->gdb_signal);
		agent.exit_after_reply = true;
	}
}

/* --- non-stop notifications ------------------------------------------------
 *
 * Stops queue up; the first goes out as `%Stop:<reply>`.  gdb answers with
 * vStopped until the queue is drained: each vStopped drops the stop gdb has
 * seen and is answered with the next, or OK.  A stop that comes while gdb
 * is draining is just appended.
 */

void server_queue_stop_quiet(const struct stop_event *ev)
{
	struct queued_stop *q = calloc(1, sizeof(*q));

	if (!q)
		abort();
	q->ev = *ev;	/* takes exec_path */
	*srv.stops_tail = q;
	srv.stops_tail = &q->next;
}

void server_queue_stop(const struct stop_event *ev)
{
	server_queue_stop_quiet(ev);
	if (srv.stop_in_flight)
		return;
	struct rsp_buf b, framed;
	rsp_buf_init(&b);
	rsp_buf_init(&framed);
	format_stop_notification(&srv.stops->ev, &b);
	rsp_frame_notification(&framed, b.data, b.len);
	if (agent.opt.remote_debug)
		fprintf(stderr, "notif (\"%s\");\n", b.data);
	server_write(framed.data, framed.len);
	rsp_buf_free(&b);
	rsp_buf_free(&framed);
	srv.stop_in_flight = true;
}

void server_next_stop(struct rsp_buf *reply, bool drop_first)
{
	if (drop_first && srv.stops) {
		struct queued_stop *q = srv.stops;
		srv.stops = q->next;
		if (!srv.stops)
			srv.stops_tail = &srv.stops;
		free(q->ev.exec_path);
		free(q);
	}
	if (srv.stops) {
		format_stop_reply(&srv.stops->ev, reply);
		srv.stop_in_flight = true;
	} else {
		rsp_reply_ok(reply);
		srv.stop_in_flight = false;
	}
}

bool server_stop_queued(pid_t pid, pid_t tid)
{
	for (struct queued_stop *q = srv.stops; q; q = q->next) {
		const struct stop_event *ev = &q->ev;
		if (ev->kind == STOP_SIGNAL && ev->tid == tid)
			return true;
		/* The child of a fork gdb has not pulled yet. */
		if (ev->kind == STOP_SIGNAL && (ev->reason == REASON_FORK ||
						ev->reason == REASON_VFORK) &&
		    (pid_t)ev->data == pid)
			return true;
	}
	return false;
}

void server_drop_stops(pid_t pid, void (*dropped)(const struct stop_event *))
{
	struct queued_stop **pp = &srv.stops;

	/* The first stop, once notified, is gdb's to acknowledge: kept, and
	 * gdb will take care of a fork child it names. */
	if (srv.stop_in_flight && *pp)
		pp = &(*pp)->next;
	while (*pp) {
		struct queued_stop *q = *pp;
		if (q->ev.pid != pid) {
			pp = &q->next;
			continue;
		}
		dropped(&q->ev);
		*pp = q->next;
		free(q->ev.exec_path);
		free(q);
	}
	srv.stops_tail = &srv.stops;
	while (*srv.stops_tail)
		srv.stops_tail = &(*srv.stops_tail)->next;
}

void server_clear_stops(void)
{
	while (srv.stops) {
		struct queued_stop *q = srv.stops;
		srv.stops = q->next;
		free(q->ev.exec_path);
		free(q);
	}
	srv.stops_tail = &srv.stops;
	srv.stop_in_flight = false;
}

void server_console(const char *text)
{
	struct rsp_buf b;

	rsp_buf_init(&b);
	rsp_reply_console(&b, text);
	server_send_packet(b.data, b.len);
	rsp_buf_free(&b);
}

void server_defer_reply(void)
{
	srv.deferred = true;
}

static void server_close_connection(void);

static void server_finish_and_exit(int code)
{
	inferior_kill_all_for_exit();
	exit(code);
}

static void handle_packet(char *payload, size_t len)
{
	struct rsp_request *req = srv.req;

	if (agent.opt.remote_debug)
		fprintf(stderr, "getpkt (\"%.*s\");\n",
			(int)(len > 2000 ? 2000 : len), payload);
	rsp_parse(payload, len, req);
	rsp_buf_reset(&agent.reply);
	srv.deferred = false;
	handle_request(req, &agent.reply);
	if (!srv.deferred)
		server_send_packet(agent.reply.data ? agent.reply.data : "",
				   agent.reply.len);
	if (agent.exit_after_reply) {
		server_close_connection();
		server_finish_and_exit(0);
	}
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	uint8_t buf[8192];
	ssize_t n = read(fd, buf, sizeof(buf));
	size_t off = 0;

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		server_close_connection();
		return;
	}
	while (off < (size_t)n && srv.in_fd >= 0) {
		size_t used;
		enum rsp_event ev = rsp_framer_feed(&srv.framer, buf + off,
						    n - off, &used);
		off += used;
		switch (ev) {
		case RSP_EV_NONE:
		case RSP_EV_ACK:
			break;
		case RSP_EV_NOTIFICATION:
			/* Only stubs send notifications: noise from a client. */
			debug("ignored a notification packet from the client");
			break;
		case RSP_EV_NACK:
			if (srv.last.len)
				server_write(srv.last.data, srv.last.len);
			break;
		case RSP_EV_INTERRUPT:
			debug("interrupt");
			inferior_interrupt();
			break;
		case RSP_EV_BAD_CHECKSUM:
			debug("bad checksum");
			if (!agent.noack)
				server_write("-", 1);
			break;
		case RSP_EV_TOO_LONG:
			if (!agent.noack)
				server_write("+", 1);
			server_send_packet("E.packet too long", 17);
			break;
		case RSP_EV_PACKET:
			if (!agent.noack)
				server_write("+", 1);
			handle_packet(srv.framer.payload, srv.framer.len);
			break;
		}
	}
}

/* Statuses handled per turn of the loop before gdb's input gets its turn. */
#define STATUSES_PER_TURN 64

static void on_more_statuses(evutil_socket_t fd, short what, void *arg);

/* More statuses may be waiting with their SIGCHLD already consumed: come
 * back after the loop has polled.  Not with a zero timeout: libevent 2.1's
 * event_base_once() activates that at once, in the queue being run, so a
 * turn that always finds more statuses (threads trapping as fast as the
 * agent resumes them: 8 threads on one CPU) never lets the loop poll gdb's
 * input again.  A timeout of 1 us goes through the timer heap, which is
 * looked at after the poll.  One come-back at a time: each SIGCHLD turn
 * that left statuses used to add one more, every one of them handled
 * its own turn of statuses before the next poll, and the time between
 * two polls grew with the run (2 s after 20 s in the aarch64 guest). */
static void come_back_for_statuses(void)
{
	static const struct timeval now = { 0, 1 };

	if (srv.timers)
		return;		/* one is due already */
	if (event_base_once(agent.base, -1, EV_TIMEOUT, on_more_statuses, NULL,
			    &now) == 0)
		srv.timers++;
}

static void on_more_statuses(evutil_socket_t fd, short what, void *arg)
{
	srv.timers--;
	if (inferior_sigchld_some(STATUSES_PER_TURN))
		come_back_for_statuses();
	if (agent.exit_after_reply && !agent.running)
		server_finish_and_exit(0);
}

void server_statuses_soon(void)
{
	if (agent.base)
		come_back_for_statuses();
}

static void on_sigchld(evutil_socket_t fd, short what, void *arg)
{
	struct signalfd_siginfo si[16];

	/* One read: waitpid below collects every pending status anyway, and
	 * anything left keeps the descriptor readable. */
	if (read(fd, si, sizeof(si)) < 0 && errno != EAGAIN)
		debug("signalfd: %s", strerror(errno));
	srv.cold = false;	/* the program gives work: wait for it hot */
	if (inferior_sigchld_some(STATUSES_PER_TURN))
		come_back_for_statuses();
	if (agent.exit_after_reply && !agent.running)
		server_finish_and_exit(0);
}

static void connection_open(int in_fd, int out_fd)
{
	srv.in_fd = in_fd;
	srv.out_fd = out_fd;
	srv.had_connection = true;
	rsp_framer_init(&srv.framer);
	srv.hot = hot_wait_possible(in_fd);
	debug("connection on fd %d%s", in_fd,
	      srv.hot ? "" : ": input cannot raise SIGIO, no hot wait");
	agent.noack = false;
	agent.extended = false;
	agent.non_stop = false;
	server_clear_stops();
	srv.read_ev = event_new(agent.base, in_fd, EV_READ | EV_PERSIST,
				on_read, NULL);
	event_add(srv.read_ev, NULL);
}

/* The connection is gone: what happens to the programs depends on how the
 * agent was started. */
static void server_close_connection(void)
{
	if (srv.in_fd < 0)
		return;
	event_free(srv.read_ev);
	srv.read_ev = NULL;
	if (srv.in_fd != 0)
		close(srv.in_fd);
	srv.in_fd = srv.out_fd = -1;
	rsp_framer_free(&srv.framer);
	if (agent.exit_after_reply)
		return;
	bool keep_tracing = trace_disconnect();
	if (srv.stdio || agent.opt.once || !srv.listener) {
		debug("connection closed: exiting");
		server_finish_and_exit(0);
	}
	log_user("Remote side has terminated connection.  "
		 "probe-agent will reopen the connection.");
	if (keep_tracing)
		/* The tracepoints stay in; the program stays where gdb left
		 * it, and collects as soon as anyone resumes it. */
		log_user("Disconnected tracing in effect: the trace stays armed.");
	evconnlistener_enable(srv.listener);
	log_always("Listening on port %d", agent.listen_port);
}

static void on_accept(struct evconnlistener *l, evutil_socket_t fd,
		      struct sockaddr *sa, int socklen, void *arg)
{
	char host[NI_MAXHOST], port[NI_MAXSERV];
	int one = 1;

	if (srv.in_fd >= 0) {
		close(fd);
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (getnameinfo(sa, socklen, host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV) == 0)
		log_user("Remote debugging from host %s, port %s", host, port);
	evconnlistener_disable(l);
	ret_marks_clear();
	trace_hist_marks_clear();
	connection_open(fd, fd);
}

/* A UDP "connection" starts with gdb's first datagram: its sender becomes
 * the peer, and the socket is connected to it. */
static void on_udp_first(evutil_socket_t fd, short what, void *arg)
{
	struct sockaddr_storage peer;
	socklen_t len = sizeof(peer);
	char c;

	if (recvfrom(fd, &c, 1, MSG_PEEK, (struct sockaddr *)&peer, &len) < 0 ||
	    connect(fd, (struct sockaddr *)&peer, len) < 0) {
		debug("udp: %s", strerror(errno));
		return;
	}
	event_free(srv.udp_ev);
	srv.udp_ev = NULL;
	connection_open(fd, fd);
}

/*
 * COMM is [PROTO:][HOST]:PORT with PROTO one of tcp, tcp4, tcp6, udp, udp4,
 * udp6 (as gdbserver accepts); a bare PORT means :PORT.  HOST may be an
 * IPv6 address, bracketed or not.
 */
static struct addrinfo *comm_resolve(const char *comm, int *socktype_out)
{
	static const struct {
		const char *prefix;
		int family, socktype;
	} protos[] = {
		{ "tcp:", AF_UNSPEC, SOCK_STREAM }, { "tcp4:", AF_INET, SOCK_STREAM },
		{ "tcp6:", AF_INET6, SOCK_STREAM }, { "udp:", AF_UNSPEC, SOCK_DGRAM },
		{ "udp4:", AF_INET, SOCK_DGRAM }, { "udp6:", AF_INET6, SOCK_DGRAM },
	};
	int family = AF_UNSPEC, socktype = SOCK_STREAM;
	char host[256] = "";
	struct addrinfo hints = { 0 }, *ai = NULL;
	int err;

	for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++) {
		size_t n = strlen(protos[i].prefix);
		if (strncmp(comm, protos[i].prefix, n) == 0) {
			family = protos[i].family;
			socktype = protos[i].socktype;
			comm += n;
			break;
		}
	}
	const char *colon = strrchr(comm, ':');
	if (!colon)
		colon = comm - 1;	/* a bare port number */
	if (colon > comm) {
		size_t hl = colon - comm;
		if (hl >= sizeof(host))
			die("host name too long: %s", comm);
		memcpy(host, comm, hl);
		host[hl] = '\0';
		if (host[0] == '[' && host[hl - 1] == ']') {
			memmove(host, host + 1, hl - 2);
			host[hl - 2] = '\0';
		}
	}
	const char *port = colon + 1;
	char *end;
	long pnum = strtol(port, &end, 10);
	if (!*port || *end || pnum < 0 || pnum > 65535)
		die("bad port in '%s': expected [tcp:|udp:][HOST]:PORT, PORT 0-65535",
		    comm);

	hints.ai_family = family;
	hints.ai_socktype = socktype;
	hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE;
	/* Loopback unless a host is named: the agent controls processes. */
	if (!host[0])
		snprintf(host, sizeof(host), "%s",
			 family == AF_INET6 ? "::1" : "127.0.0.1");
	err = getaddrinfo(host, port, &hints, &ai);
	if (err) {
		/* gdb's testsuite recognises this wording. */
		fprintf(stderr, "%s: cannot resolve name: %s\n", host,
			gai_strerror(err));
		exit(1);
	}
	*socktype_out = socktype;
	return ai;
}

void server_check_comm(void)
{
	int socktype;

	if (!server_is_stdio())
		freeaddrinfo(comm_resolve(agent.opt.comm, &socktype));
}

static int server_listen(const char *comm)
{
	int socktype;
	struct addrinfo *ai = comm_resolve(comm, &socktype);
	int fd = -1;

	if (socktype == SOCK_STREAM) {
		srv.listener = evconnlistener_new_bind(
			agent.base, on_accept, NULL,
			LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE |
				LEV_OPT_LEAVE_SOCKETS_BLOCKING | LEV_OPT_CLOSE_ON_EXEC,
			1, ai->ai_addr, ai->ai_addrlen);
		if (srv.listener)
			fd = evconnlistener_get_fd(srv.listener);
	} else {
		fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && bind(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
			int e = errno;
			close(fd);
			fd = -1;
			errno = e;
		}
	}
	freeaddrinfo(ai);
	if (fd < 0) {
		if (errno == EADDRINUSE) {
			/* gdb's testsuite waits for exactly this line. */
			fprintf(stderr, "Can't bind address: Address already in use.\n");
			exit(1);
		}
		die("cannot listen on %s: %s", comm, strerror(errno));
	}
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	agent.listen_port = ntohs(ss.ss_family == AF_INET6
					  ? ((struct sockaddr_in6 *)&ss)->sin6_port
					  : ((struct sockaddr_in *)&ss)->sin_port);
	if (socktype == SOCK_DGRAM) {
		srv.udp_ev = event_new(agent.base, fd, EV_READ, on_udp_first, NULL);
		event_add(srv.udp_ev, NULL);
	}
	log_always("Listening on port %d", agent.listen_port);
	return 0;
}

int server_start(struct agent *a)
{
	signal(SIGPIPE, SIG_IGN);
	if (hot_wait_init() < 0)
		die("cannot handle SIGIO: %s", strerror(errno));
	srv.req = malloc(sizeof(*srv.req));
	if (!srv.req)
		abort();
	rsp_buf_init(&srv.last);
	/* SIGCHLD through a signalfd: no signal handler, no self-pipe, on
	 * every probe hit. */
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	int sfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0)
		die("signalfd: %s", strerror(errno));
	srv.sigchld_ev = event_new(a->base, sfd, EV_READ | EV_PERSIST, on_sigchld, NULL);
	event_add(srv.sigchld_ev, NULL);
	if (server_is_stdio()) {
		srv.stdio = true;
		log_user("Remote debugging using stdio");
		connection_open(0, 1);
		return 0;
	}
	return server_listen(a->opt.comm);
}

/* Whether only a wait status can give the agent work now. */
static bool hot_wait_ready(void)
{
	return srv.hot && srv.in_fd >= 0 && !srv.timers &&
	       !agent.exit_after_reply && inferior_waiting();
}

/*
 * The event loop: libevent, except that whenever it has run what was ready
 * and only the program can give it work, the wait is in waitid() (see the
 * top of this file).
 */
/*
 * After a hot wait that took no status (the client's input or the tick
 * ended it), the loop waits on its own until the program gives work
 * again (its next SIGCHLD, on_sigchld).  Arming a hot wait costs some ten
 * system calls and, when input ends it, a SIGIO (a stop for the keeper
 * that traces the agent, two more switches): nothing next to a trap per
 * hit, but most of a request's cost when the program does not stop and
 * the client asks all the time (probe-trace draining the pads' frames:
 * one request per 16 KiB).  Statuses meanwhile come through the loop's
 * SIGCHLD path, as without a hot wait, and the first one makes it hot.
 */
void server_run(void)
{
	for (;;) {
		if (!srv.cold && hot_wait_ready()) {
			long n = hot_wait(srv.in_fd);
			if (n == 0)
				srv.cold = true;
			if (n < 0) {
				log_user("Input on fd %d cannot interrupt a wait (%s): "
					 "waiting in the event loop only",
					 srv.in_fd, strerror((int)-n));
				srv.hot = false;
			}
			if (agent.exit_after_reply && !agent.running)
				server_finish_and_exit(0);
		}
		/* What the jump pads collected meanwhile (every tick at most). */
		trace_drain(true);
		if (event_base_loop(agent.base, EVLOOP_ONCE) != 0)
			return;
	}
}
