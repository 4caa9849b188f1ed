/*
 * vfile.c - host I/O (vFile): gdb reads the program and its libraries from
 * the target, so no local copy or `set sysroot` is needed.
 *
 * The wire uses gdb's own flag, mode and errno numbers (File-I/O protocol),
 * and `fstat` answers with gdb's big-endian `struct fio_stat`.  `setfs:PID`
 * names whose filesystem paths refer to: they are opened through
 * /proc/PID/root, which follows the process into its mount namespace or
 * chroot.
 */
#define LOG_DOMAIN "vfile"
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/packets.h"
#include "agent/log.h"

/* gdb File-I/O open flags. */
#define FILEIO_O_RDONLY 0x0
#define FILEIO_O_WRONLY 0x1
#define FILEIO_O_RDWR 0x2
#define FILEIO_O_APPEND 0x8
#define FILEIO_O_CREAT 0x200
#define FILEIO_O_TRUNC 0x400
#define FILEIO_O_EXCL 0x800

/* gdb File-I/O errno values. */
static int fileio_errno(int err)
{
	switch (err) {
	case EPERM: return 1;
	case ENOENT: return 2;
	case EINTR: return 4;
	case EBADF: return 9;
	case EACCES: return 13;
	case EFAULT: return 14;
	case EBUSY: return 16;
	case EEXIST: return 17;
	case ENODEV: return 19;
	case ENOTDIR: return 20;
	case EISDIR: return 21;
	case EINVAL: return 22;
	case ENFILE: return 23;
	case EMFILE: return 24;
	case EFBIG: return 27;
	case ENOSPC: return 28;
	case ESPIPE: return 29;
	case EROFS: return 30;
	case ENAMETOOLONG: return 91;
	default: return 9999;
	}
}

#define MAX_VFILE_FDS 64
static int open_fds[MAX_VFILE_FDS];
static int nopen;

static bool fd_is_ours(int fd)
{
	for (int i = 0; i < nopen; i++)
		if (open_fds[i] == fd)
			return true;
	return false;
}

static void fail(struct rsp_buf *reply, int err)
{
	struct rsp_vfile_result r = { .result = -1, .fileio_errno = fileio_errno(err) };

	rsp_reply_vfile(reply, &r);
}

/* F<result>, with `len` bytes of data after a `;` when data is not NULL. */
static void done(struct rsp_buf *reply, int64_t result, const void *data, size_t len)
{
	struct rsp_vfile_result r = { .result = result, .data = data, .len = len };

	rsp_reply_vfile(reply, &r);
}

static void resolve(const char *path, char *out, size_t size)
{
	if (agent.vfile_pid > 0 && path[0] == '/')
		snprintf(out, size, "/proc/%d/root%s", agent.vfile_pid, path);
	else
		snprintf(out, size, "%s", path);
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v;
}

static void put_be64(uint8_t *p, uint64_t v)
{
	put_be32(p, v >> 32);
	put_be32(p + 4, (uint32_t)v);
}

void vfile_open(struct rsp_request *req, struct rsp_buf *reply)
{
	int gf = req->u.vfile.flags, flags = 0;
	char path[4200];

	switch (gf & 3) {
	case FILEIO_O_WRONLY: flags = O_WRONLY; break;
	case FILEIO_O_RDWR: flags = O_RDWR; break;
	default: flags = O_RDONLY; break;
	}
	if (gf & FILEIO_O_APPEND) flags |= O_APPEND;
	if (gf & FILEIO_O_CREAT) flags |= O_CREAT;
	if (gf & FILEIO_O_TRUNC) flags |= O_TRUNC;
	if (gf & FILEIO_O_EXCL) flags |= O_EXCL;
	if (nopen == MAX_VFILE_FDS) {
		fail(reply, EMFILE);
		return;
	}
	resolve(req->u.vfile.path, path, sizeof(path));
	int fd = open(path, flags | O_CLOEXEC, req->u.vfile.mode & 0777);
	if (fd < 0) {
		fail(reply, errno);
		return;
	}
	open_fds[nopen++] = fd;
	done(reply, fd, NULL, 0);
}

void vfile_close(struct rsp_request *req, struct rsp_buf *reply)
{
	int fd = req->u.vfile.fd;

	for (int i = 0; i < nopen; i++) {
		if (open_fds[i] == fd) {
			open_fds[i] = open_fds[--nopen];
			close(fd);
			done(reply, 0, NULL, 0);
			return;
		}
	}
	fail(reply, EBADF);
}

void vfile_pread(struct rsp_request *req, struct rsp_buf *reply)
{
	/* Escaping can double the data: keep the reply within PacketSize. */
	static uint8_t buf[RSP_MAX_PAYLOAD / 2];
	size_t count = req->u.vfile.count;

	if (!fd_is_ours(req->u.vfile.fd)) {
		fail(reply, EBADF);
		return;
	}
	if (count > sizeof(buf) - 32)
		count = sizeof(buf) - 32;
	ssize_t n = pread(req->u.vfile.fd, buf, count, (off_t)req->u.vfile.offset);
	if (n < 0) {
		fail(reply, errno);
		return;
	}
	done(reply, n, buf, n);
}

void vfile_pwrite(struct rsp_request *req, struct rsp_buf *reply)
{
	if (!fd_is_ours(req->u.vfile.fd)) {
		fail(reply, EBADF);
		return;
	}
	ssize_t n = pwrite(req->u.vfile.fd, req->u.vfile.data,
			   req->u.vfile.data_len, (off_t)req->u.vfile.offset);
	if (n < 0)
		fail(reply, errno);
	else
		done(reply, n, NULL, 0);
}

void vfile_fstat(struct rsp_request *req, struct rsp_buf *reply)
{
	struct stat st;
	uint8_t fio[64];

	if (!fd_is_ours(req->u.vfile.fd)) {
		fail(reply, EBADF);
		return;
	}
	if (fstat(req->u.vfile.fd, &st) < 0) {
		fail(reply, errno);
		return;
	}
	/* struct fio_stat: dev ino mode nlink uid gid rdev (4 bytes each),
	 * size blksize blocks (8), atime mtime ctime (4), all big-endian. */
	put_be32(fio + 0, st.st_dev);
	put_be32(fio + 4, st.st_ino);
	put_be32(fio + 8, st.st_mode);
	put_be32(fio + 12, st.st_nlink);
	put_be32(fio + 16, st.st_uid);
	put_be32(fio + 20, st.st_gid);
	put_be32(fio + 24, st.st_rdev);
	put_be64(fio + 28, st.st_size);
	put_be64(fio + 36, st.st_blksize);
	put_be64(fio + 44, st.st_blocks);
	put_be32(fio + 52, st.st_atime);
	put_be32(fio + 56, st.st_mtime);
	put_be32(fio + 60, st.st_ctime);
	done(reply, sizeof(fio), fio, sizeof(fio));
}

void vfile_setfs(struct rsp_request *req, struct rsp_buf *reply)
{
	agent.vfile_pid = (pid_t)req->u.vfile.pid;
	done(reply, 0, NULL, 0);
}

void vfile_unlink(struct rsp_request *req, struct rsp_buf *reply)
{
	char path[4200];

	resolve(req->u.vfile.path, path, sizeof(path));
	if (unlink(path) < 0)
		fail(reply, errno);
	else
		done(reply, 0, NULL, 0);
}

void vfile_readlink(struct rsp_request *req, struct rsp_buf *reply)
{
	char path[4200], target[4096];
	ssize_t n;

	resolve(req->u.vfile.path, path, sizeof(path));
	n = readlink(path, target, sizeof(target));
	if (n < 0)
		fail(reply, errno);
	else
		done(reply, n, target, n);
}
