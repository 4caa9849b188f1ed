/*
 * record-direct.c - the local fast path: the agent writes the frames
 * into the trace file itself.
 *
 * When the agent runs on this machine, the frames need not cross the
 * connection.  Once the header is written, the recorder names its file
 * to the agent (Qprobe.file: the absolute path, the device and inode it
 * has open, the offset of the end marker); the agent opens the same
 * file, checks it is the same, and from then on each qprobe.fwrite
 * appends what its buffer holds, with a new end marker, and answers how
 * many frames and bytes that was, how many frames of each probe, and the
 * threads new in them.  The recorder counts with that, looking at the
 * file only where it is cheap (its size, the header's last bytes, the
 * first new frame's header), and keeps the rest of the file: header,
 * status line, thread table.  Reading the frames back from the page
 * cache to count them was a quarter of all the CPU a recording took,
 * memory the recorder had never touched; the agent counts them in its
 * own buffer, right after building them.  An agent that answers with
 * the two numbers alone gets the old way (take_written).
 *
 * The path is the default.  The frames come over the connection
 * (qprobe.frames, record-drain.c) instead, and the recorder says why
 * unless --quiet, when: --no-direct; --live, --tid or --comm (they need
 * every frame in the recorder before the file has it); the output is not
 * a regular file; the agent cannot open the file or it is not the same
 * one (an agent on another machine: the ssh case); or the agent does not
 * know the packet.
 *
 * If the agent dies, the frames it wrote but had not reported yet are in
 * the file: direct_adopt counts them in before a new agent salvages
 * more, which then come over the connection.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/recorder.h"
#include "client/rsp-client.h"
#include "protocol/rsp.h"

/* The frames from r->end to r->end + len into r->carry (free in this
 * mode).  Returns the bytes read, or -errno. */
static long read_back(struct recorder *r, uint64_t len)
{
	if (len > r->carry_cap) {
		size_t cap = r->carry_cap ? r->carry_cap : 65536;
		while (cap < len)
			cap *= 2;
		uint8_t *p = realloc(r->carry, cap);
		if (!p)
			return -ENOMEM;
		r->carry = p;
		r->carry_cap = cap;
	}
	size_t done = 0;
	while (done < len) {
		ssize_t n = pread(r->fd, r->carry + done, len - done,
				  (off_t)(r->end + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : (long)done;
		done += (size_t)n;
	}
	return (long)done;
}

static void say_path(struct recorder *r, const char *why)
{
	if (r->quiet)
		return;
	if (why)
		fprintf(stderr, "probe-trace: the frames come over the connection: %s\n", why);
	else
		fprintf(stderr, "probe-trace: the agent writes the frames into %s itself\n",
			r->out_path);
}

void direct_start(struct recorder *r)
{
	char why[300];
	struct stat sb;

	r->direct = false;
	if (r->no_direct) {
		say_path(r, "--no-direct");
		return;
	}
	if (r->live || r->keep_tids || r->keep_comm) {
		say_path(r, r->live ? "--live prints each frame as it arrives"
			    : "--tid and --comm filter frames in the recorder");
		return;
	}
	if (!r->out_regular || fstat(r->fd, &sb) < 0) {
		say_path(r, "the output is not a regular file");
		return;
	}
	char *abs = realpath(r->out_path, NULL);
	if (!abs) {
		snprintf(why, sizeof(why), "%s: %s", r->out_path, strerror(errno));
		say_path(r, why);
		return;
	}
	struct rsp_buf hex;
	rsp_buf_init(&hex);
	rsp_buf_put_hex(&hex, abs, strlen(abs));
	rsp_buf_putc(&hex, '\0');
	free(abs);
	int e = rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT,
				   "Qprobe.file:%llx;%llx;%llx;%s",
				   (unsigned long long)r->end,
				   (unsigned long long)sb.st_dev,
				   (unsigned long long)sb.st_ino, hex.data);
	rsp_buf_free(&hex);
	if (e < 0) {
		say_path(r, r->c.error);
		return;
	}
	if (strcmp(r->reply.data, "OK") != 0) {
		const char *text = r->reply.data;
		if (r->reply.len == 0)
			text = "the agent does not know Qprobe.file";
		else if (strncmp(text, "E.", 2) == 0)
			text += 2;
		snprintf(why, sizeof(why), "%s", text);
		say_path(r, why);
		return;
	}
	r->direct = true;
	r->head_end = r->end;
	/* After the status line, which the recorder itself rewrites. */
	uint64_t fixed = r->status_off + r->status_len;
	r->head_tail_len = r->end < fixed ? 0 :
			   r->end - fixed < sizeof(r->head_tail) ? (size_t)(r->end - fixed) :
			   sizeof(r->head_tail);
	if (pread(r->fd, r->head_tail, r->head_tail_len,
		  (off_t)(r->end - r->head_tail_len)) != (ssize_t)r->head_tail_len)
		r->head_tail_len = 0;	/* not checked then */
	say_path(r, NULL);
}

static void head_cut(struct recorder *r)
{
	err_msg("%s: its header was cut or changed by another program while it "
		"was recorded: the recording stops, with the file as that program "
		"left it", r->out_path);
}

/* Whether the header's last bytes are still what they were (another
 * program may cut the file before the agent's first frames: the agent's
 * next write then grows it again, with zeros where the header was). */
static bool head_intact(struct recorder *r)
{
	uint8_t now[sizeof(r->head_tail)];
	size_t n = r->head_tail_len;

	return !n || (pread(r->fd, now, n, (off_t)(r->head_end - n)) == (ssize_t)n &&
		      memcmp(now, r->head_tail, n) == 0);
}

/*
 * Another program may cut the file while it is recorded (a truncate, a
 * log rotation): a read of the mapping beyond the new end then raises
 * SIGBUS.  While the recorder reads the mapping, SIGBUS jumps back to
 * take_written, which says what happened; outside that window the
 * signal keeps its default action.
 */
static sigjmp_buf bus_env;
static volatile sig_atomic_t bus_armed;

static void on_sigbus(int sig)
{
	if (bus_armed) {
		bus_armed = 0;
		siglongjmp(bus_env, 1);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void cut_short(struct recorder *r, uint64_t bytes)
{
	struct stat sb;
	long long size = fstat(r->fd, &sb) == 0 ? (long long)sb.st_size : -1;

	err_msg("%s was cut to %lld bytes by another program while it was recorded "
		"(the agent had written up to byte %llu): the recording stops there",
		r->out_path, size, (unsigned long long)(r->end + bytes));
}

/* Whether the file still holds `bytes` more after r->end under its own
 * header; says what another program did to it when not. */
static bool file_holds(struct recorder *r, uint64_t bytes)
{
	struct stat sb;

	if (fstat(r->fd, &sb) == 0 && (uint64_t)sb.st_size < r->end + bytes) {
		cut_short(r, bytes);
		return false;
	}
	if (!head_intact(r)) {
		head_cut(r);
		return false;
	}
	return true;
}

/* What the agent appended: counted and its threads learnt.  Read where
 * it is, in the page cache (a mapping of the file, no copy), or into
 * r->carry when the file cannot be mapped. */
static int take_written(struct recorder *r, uint64_t frames, uint64_t bytes)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t lo = r->end & ~(uint64_t)(page - 1);
	size_t maplen = (size_t)(r->end + bytes - lo);
	const uint8_t *data;
	const uint64_t before = r->frames;

	if (!file_holds(r, bytes))
		return -EIO;
	void *map = mmap(NULL, maplen, PROT_READ, MAP_SHARED, r->fd, (off_t)lo);
	if (map != MAP_FAILED) {
		static bool handler;
		if (!handler) {
			struct sigaction sa = { .sa_handler = on_sigbus };
			sigemptyset(&sa.sa_mask);
			sigaction(SIGBUS, &sa, NULL);
			handler = true;
		}
		if (sigsetjmp(bus_env, 1)) {
			munmap(map, maplen);
			r->frames = before;	/* none of this batch is kept */
			cut_short(r, bytes);
			return -EIO;
		}
		data = (const uint8_t *)map + (r->end - lo);
	} else {
		long n = read_back(r, bytes);
		if (n != (long)bytes) {
			err_msg("reading back %s: %s", r->out_path,
				n < 0 ? strerror((int)-n) : "shorter than the agent said");
			return -EIO;
		}
		data = r->carry;
	}
	bus_armed = map != MAP_FAILED;
	size_t took = count_frames(r, data, bytes);
	bus_armed = 0;
	if (map != MAP_FAILED)
		munmap(map, maplen);
	if (took != bytes || r->frames - before != frames) {
		err_msg("%s: the agent wrote %llu frames from byte %llu, the file has %llu "
			"whole frames there: another program changed or cut the file while "
			"it was recorded; the recording stops",
			r->out_path, (unsigned long long)frames, (unsigned long long)r->end,
			(unsigned long long)(r->frames - before));
		r->frames = before;
		return -EIO;
	}
	name_threads(r);
	r->end += bytes;
	r->bytes += bytes;
	return 0;
}

/* Another program wrote into the frames the agent reported. */
static void frames_changed(struct recorder *r, uint64_t frames)
{
	err_msg("%s: the agent wrote %llu frames from byte %llu, the file has other bytes "
		"there: another program changed or cut the file while it was recorded; "
		"the recording stops",
		r->out_path, (unsigned long long)frames, (unsigned long long)r->end);
}

/*
 * What the agent appended, as its reply counts it (`counts`: the reply
 * from its ";c"): the frames per probe and the threads new in them, so
 * the frames need not be read back.  The file is looked at where it is
 * cheap: its size, its header's last bytes and the first new frame's
 * header.  False from a reply that does not add up.
 */
static int take_counted(struct recorder *r, uint64_t frames, uint64_t bytes,
			const char *counts)
{
	static uint64_t add[MAX_PROBES + 1];
	const char *p = counts + 2;
	uint64_t sum = 0;
	uint8_t head[6];

	/* Nothing written (threads left from the last reply): nothing to
	 * look at; the next drain looks at the header first. */
	if (bytes) {
		int16_t tpnum;
		uint32_t size;
		if (!file_holds(r, bytes))
			return -EIO;
		if (pread(r->fd, head, sizeof(head), (off_t)r->end) != (ssize_t)sizeof(head)) {
			cut_short(r, bytes);
			return -EIO;
		}
		memcpy(&tpnum, head, 2);
		memcpy(&size, head + 2, 4);
		if (!probe_of(r, tpnum) || (uint64_t)size + sizeof(head) > bytes) {
			frames_changed(r, frames);
			return -EIO;
		}
	}
	memset(add, 0, (r->nprobes + 1) * sizeof(add[0]));
	while (*p && *p != ';') {
		char *end;
		unsigned long long tp = strtoull(p, &end, 16), n;
		if (end == p || *end != ':' || tp < 1 || tp > r->nprobes)
			goto bad;
		p = end + 1;
		n = strtoull(p, &end, 16);
		if (end == p)
			goto bad;
		add[tp] += n;
		sum += n;
		p = end;
		if (*p == ',')
			p++;
	}
	if (sum != frames)
		goto bad;
	for (size_t i = 1; i <= r->nprobes; i++)
		probe_of(r, (int)i)->frames += add[i];
	r->frames += frames;
	if (strncmp(p, ";t", 2) == 0) {
		p += 2;
		while (*p && *p != ';') {
			char *end;
			unsigned long long tid = strtoull(p, &end, 16);
			if (end == p)
				break;
			thread_framed(r, (int64_t)tid);
			p = *end == ',' ? end + 1 : end;
		}
	}
	name_threads(r);
	r->end += bytes;
	r->bytes += bytes;
	return 0;
bad:
	err_msg("the agent's count of the frames it wrote does not add up (%s): is it "
		"another version of probe-agent than probe-trace's?  The recording stops; "
		"--no-direct records without that count", counts);
	return -EIO;
}

long direct_drain(struct recorder *r)
{
	long total = 0;

	/* Looked at on every drain, frames or not: a file cut before the
	 * agent's first frames grows again at its next write. */
	if (!head_intact(r)) {
		head_cut(r);
		r->write_failed = true;
		r->direct = false;
		return -EIO;
	}
	for (;;) {
		unsigned long long frames, bytes;
		int e = rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT, "qprobe.fwrite");
		if (e < 0)
			return e;
		int used = 0;
		if (sscanf(r->reply.data, "W%llx;%llx%n", &frames, &bytes, &used) != 2) {
			const char *text = r->reply.data;
			if (strncmp(text, "E.", 2) == 0)
				text += 2;
			/* The agent put the end marker back where its
			 * batch began: the file ends at r->end. */
			err_msg("%s; the file keeps the %llu frames before it",
				r->reply.len ? text : "the agent cannot write the file",
				(unsigned long long)r->frames);
			r->write_failed = true;
			r->direct = false;	/* the rest is refused, as
						   append_frames does */
			return -EIO;
		}
		/* An agent that counts what it wrote says so after ";c";
		 * ";+": threads left for the next reply. */
		const char *rest = r->reply.data + used;
		const char *counts = strncmp(rest, ";c", 2) == 0 ? rest : NULL;
		bool more = strstr(rest, ";+") != NULL;
		int te = counts ? take_counted(r, frames, bytes, counts)
			 : bytes ? take_written(r, frames, bytes) : 0;
		if (te < 0) {
			r->write_failed = true;
			r->direct = false;
			return -EIO;
		}
		if (bytes == 0 && !more)
			return total;
		total += (long)bytes;
	}
}

/*
 * The agent went away: the whole frames it wrote after the last reply
 * are taken as written ones, and the end marker is put after the last
 * of them (a batch cut short by its death leaves a piece of a frame).
 * From here the frames come over the connection.
 */
void direct_adopt(struct recorder *r)
{
	static const uint8_t zero[4];
	struct stat sb;

	if (!r->direct)
		return;
	r->direct = false;
	if (r->write_failed || fstat(r->fd, &sb) < 0 || (uint64_t)sb.st_size <= r->end)
		return;
	long n = read_back(r, (uint64_t)sb.st_size - r->end);
	if (n < 0)
		return;
	size_t off = 0;
	while ((size_t)n - off >= 6) {
		int16_t tpnum;
		uint32_t size;
		memcpy(&tpnum, r->carry + off, 2);
		memcpy(&size, r->carry + off + 2, 4);
		if (tpnum == 0 || (size_t)n - off - 6 < size)
			break;
		off += 6 + size;
	}
	count_frames(r, r->carry, off);
	r->end += off;
	r->bytes += off;
	if (pwrite(r->fd, zero, 4, (off_t)r->end) != 4 ||
	    ftruncate(r->fd, (off_t)(r->end + 4)) < 0)
		err_msg("%s: cannot put the end marker back: %s", r->out_path,
			strerror(errno));
}
