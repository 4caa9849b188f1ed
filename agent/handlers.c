/*
 * handlers.c - the handlers of the general packets: handshake, queries,
 * settings, registers, memory, execution, breakpoints.
 *
 * agent/packets.c's table leads here.  Handlers see typed requests
 * (protocol/rsp-request.h) and answer with protocol/rsp-reply.h's
 * functions; an empty reply tells gdb the packet is not supported.
 * Errors go out as `E.<text>` so gdb shows the user what was wrong.
 * Resume requests defer their reply: the stop reply comes when the program
 * stops (inferior.c).
 */
#define LOG_DOMAIN "rsp"
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libiberty/libiberty.h>

#include "agent/agent.h"
#include "agent/log.h"
#include "agent/packets.h"

/* W00 without a process id, as gdbserver says when it has no process. */
static void reply_no_process(struct rsp_buf *reply)
{
	struct rsp_stop s = { .kind = RSP_STOP_EXITED, .exit_code = 0 };

	rsp_reply_stop(reply, &s);
}

static void put_errno(struct rsp_buf *reply, const char *what, int err)
{
	rsp_reply_errno(reply, what, err);
}

/* --- stop replies ------------------------------------------------------------ */

static const enum rsp_stop_reason stop_reasons[] = {
	[REASON_NONE] = RSP_REASON_NONE,
	[REASON_SWBREAK] = RSP_REASON_SWBREAK,
	[REASON_HWBREAK] = RSP_REASON_HWBREAK,
	[REASON_WATCH] = RSP_REASON_WATCH,
	[REASON_RWATCH] = RSP_REASON_RWATCH,
	[REASON_AWATCH] = RSP_REASON_AWATCH,
	[REASON_SYSCALL_ENTRY] = RSP_REASON_SYSCALL_ENTRY,
	[REASON_SYSCALL_RETURN] = RSP_REASON_SYSCALL_RETURN,
	[REASON_FORK] = RSP_REASON_FORK,
	[REASON_VFORK] = RSP_REASON_VFORK,
	[REASON_VFORK_DONE] = RSP_REASON_VFORK_DONE,
	[REASON_EXEC] = RSP_REASON_EXEC,
	[REASON_CLONE] = RSP_REASON_CREATE,
	/* REASON_LIBRARY: gdb learns of libraries through its own
	 * breakpoint in the dynamic linker; nothing said. */
	[REASON_LIBRARY] = RSP_REASON_NONE,
};

static enum rsp_stop_kind stop_kind(enum stop_kind k)
{
	switch (k) {
	case STOP_EXITED: return RSP_STOP_EXITED;
	case STOP_KILLED: return RSP_STOP_SIGNALLED;
	case STOP_THREAD_EXITED: return RSP_STOP_THREAD_EXITED;
	case STOP_NO_RESUMED: return RSP_STOP_NO_RESUMED;
	case STOP_SIGNAL: break;
	}
	return RSP_STOP_SIGNAL;
}

/* The stop as gdb hears of it: what it negotiated (swbreak+...) and what
 * --disable-packet took away decide which fields go out. */
static void put_stop(const struct stop_event *ev, struct rsp_buf *out,
		     bool notification)
{
	struct rsp_expedited regs[32];
	struct rsp_stop s = {
		.kind = stop_kind(ev->kind),
		.multiprocess = agent.multiprocess,
		.signal = ev->gdb_signal,
		.exit_code = ev->exit_code,
		.pid = ev->pid,
		.tid = ev->tid,
		.no_resumed_supported = agent.report_no_resumed,
		.bare = (agent.opt.disabled & DISABLE_T) != 0,
		.no_thread = (agent.opt.disabled & DISABLE_TTHREAD) != 0,
		.value = ev->data,
		.child_pid = (int64_t)(pid_t)ev->data,
		.exec_path = ev->exec_path,
		.regs = regs,
	};
	struct thread *t;

	if (s.kind != RSP_STOP_SIGNAL || s.bare)
		goto out;
	if ((unsigned)ev->reason < sizeof(stop_reasons) / sizeof(stop_reasons[0]))
		s.reason = stop_reasons[ev->reason];
	if ((s.reason == RSP_REASON_SWBREAK && !agent.swbreak_feature) ||
	    (s.reason == RSP_REASON_HWBREAK && !agent.hwbreak_feature))
		s.reason = RSP_REASON_NONE;
	t = thread_find(ev->reason == REASON_CLONE ? ev->pid : ev->tid);
	if (!t)
		t = thread_find(ev->tid);
	if (t) {
		uint8_t *blk = regs_block_gpr(t);
		for (const int *r = agent.arch->expedite;
		     blk && *r >= 0 && s.nregs < sizeof(regs) / sizeof(regs[0]); r++) {
			const struct arch_reg *reg = &agent.arch->regs[*r];
			regs[s.nregs++] = (struct rsp_expedited){
				.regnum = (unsigned)*r,
				.value = blk + reg->offset,
				.len = reg->bitsize / 8,
			};
		}
	}
	if (ev->reason == REASON_CLONE && t)
		s.tid = t->tid;
	s.core = thread_core(ev->tid);
out:
	if (notification)
		rsp_notify_stop(out, &s);
	else
		rsp_reply_stop(out, &s);
}

void format_stop_reply(const struct stop_event *ev, struct rsp_buf *out)
{
	put_stop(ev, out, false);
}

void format_stop_notification(const struct stop_event *ev, struct rsp_buf *out)
{
	put_stop(ev, out, true);
}

/* --- handshake and queries --------------------------------------------------- */

static bool has_feature(const char *list, const char *feature)
{
	size_t n = strlen(feature);

	for (const char *p = list; p && *p;) {
		size_t len = strcspn(p, ";");
		if (len == n && strncmp(p, feature, n) == 0)
			return true;
		p += len;
		if (*p == ';')
			p++;
	}
	return false;
}

void h_qsupported(struct rsp_request *req, struct rsp_buf *reply)
{
	const char *g = req->u.str;

	agent.multiprocess = has_feature(g, "multiprocess+");
	agent.swbreak_feature = has_feature(g, "swbreak+");
	agent.hwbreak_feature = has_feature(g, "hwbreak+");
	agent.report_fork = has_feature(g, "fork-events+");
	agent.report_vfork = has_feature(g, "vfork-events+");
	agent.report_exec = has_feature(g, "exec-events+");
	agent.report_no_resumed = has_feature(g, "no-resumed+");
	agent.error_messages = has_feature(g, "error-message+");
	struct rsp_features f = {
		.packet_size = RSP_MAX_PAYLOAD,
		.fast_tracepoints = agent.arch->emit_pad_handoff != NULL,
		.threads = !(agent.opt.disabled & DISABLE_THREADS),
		.multiprocess = agent.multiprocess,
		.swbreak = agent.swbreak_feature,
		.hwbreak = agent.hwbreak_feature,
		.fork_events = agent.report_fork,
		.vfork_events = agent.report_vfork,
		.exec_events = agent.report_exec,
	};
	rsp_reply_supported(reply, &f);
}

void h_ok(struct rsp_request *req, struct rsp_buf *reply)
{
	rsp_reply_ok(reply);
}

void h_unknown(struct rsp_request *req, struct rsp_buf *reply)
{
}

void h_invalid(struct rsp_request *req, struct rsp_buf *reply)
{
	rsp_reply_error(reply, "%s", req->error ? req->error : "malformed packet");
}

void h_start_noack(struct rsp_request *req, struct rsp_buf *reply)
{
	agent.noack = true;
	rsp_reply_ok(reply);
}

void h_extended(struct rsp_request *req, struct rsp_buf *reply)
{
	agent.extended = true;
	rsp_reply_ok(reply);
}

void h_halt_reason(struct rsp_request *req, struct rsp_buf *reply)
{
	if (!agent.processes) {
		/* Non-stop: no stopped thread to list.  All-stop: W00, as
		 * gdbserver says when it has no process. */
		if (agent.non_stop)
			rsp_reply_ok(reply);
		else
			reply_no_process(reply);
		return;
	}
	if (agent.non_stop) {
		/* The thread of the last stop, and every unreported event,
		 * one at a time through vStopped.  gdb takes the other threads
		 * for running and stops them with vCont;t, as with gdbserver. */
		server_clear_stops();
		for (struct process *p = agent.processes; p; p = p->next)
			for (struct thread *t = p->threads; t; t = t->next) {
				struct stop_event ev;
				if (t->state != THREAD_STOPPED)
					continue;
				if (t->has_pending) {
					ev = t->pending_ev;
					t->has_pending = false;
					memset(&t->pending_ev, 0, sizeof(ev));
				} else if (agent.have_last_stop &&
					   agent.last_stop.tid == t->tid) {
					stop_event_set(&ev, STOP_SIGNAL,
						       agent.last_stop.gdb_signal,
						       p->pid, t->tid);
				} else {
					continue;
				}
				t->stop_reported = true;
				server_queue_stop_quiet(&ev);
			}
		server_next_stop(reply, false);
		return;
	}
	if (agent.running) {
		/* A program that ran on while nobody was connected (disconnected
		 * tracing): stop it, as gdb expects of a new connection. */
		inferior_stop_all();
		struct thread *t = current_thread();
		if (t)
			stop_event_set(&agent.last_stop, STOP_SIGNAL, 0, t->proc->pid, t->tid);
		agent.have_last_stop = t != NULL;
	}
	if (agent.have_last_stop && agent.last_stop.kind == STOP_SIGNAL &&
	    thread_find(agent.last_stop.tid)) {
		format_stop_reply(&agent.last_stop, reply);
		return;
	}
	struct thread *t = current_thread();
	struct stop_event ev = {
		.kind = STOP_SIGNAL, .gdb_signal = 0,
		.pid = t->proc->pid, .tid = t->tid,
	};
	format_stop_reply(&ev, reply);
}

void h_qattached(struct rsp_request *req, struct rsp_buf *reply)
{
	struct process *p = req->u.pid ? process_find(req->u.pid) : current_process();

	if (!p) {
		rsp_reply_error(reply, "no such process");
		return;
	}
	rsp_reply_bool(reply, p->attached);
}

void h_qc(struct rsp_request *req, struct rsp_buf *reply)
{
	struct thread *t = current_thread();

	if (!t) {
		rsp_reply_error(reply, "no process");
		return;
	}
	rsp_reply_current_thread(reply, agent.multiprocess, t->proc->pid, t->tid);
}

void h_qsymbol(struct rsp_request *req, struct rsp_buf *reply)
{
	rsp_reply_ok(reply);
}

static void put_thread_list_from(struct rsp_buf *reply)
{
	struct rsp_thread_list list = { .multiprocess = agent.multiprocess };

	while (agent.proc_iter) {
		if (agent.proc_iter->hidden)
			agent.thread_iter = NULL;
		while (agent.thread_iter) {
			struct thread *t = agent.thread_iter;
			agent.thread_iter = t->next;
			if (t->zombie)
				continue;
			if (!rsp_thread_list_add(reply, &list, t->proc->pid, t->tid))
				return;
		}
		agent.proc_iter = agent.proc_iter->next;
		agent.thread_iter = agent.proc_iter ? agent.proc_iter->threads : NULL;
	}
	rsp_thread_list_end(reply, &list);
}

void h_threadinfo_first(struct rsp_request *req, struct rsp_buf *reply)
{
	agent.proc_iter = agent.processes;
	agent.thread_iter = agent.proc_iter ? agent.proc_iter->threads : NULL;
	put_thread_list_from(reply);
}

void h_threadinfo_next(struct rsp_request *req, struct rsp_buf *reply)
{
	put_thread_list_from(reply);
}

void h_thread_extra(struct rsp_request *req, struct rsp_buf *reply)
{
	struct thread *t = thread_find_ptid(req->u.ptid.pid, req->u.ptid.tid);
	char name[64];

	if (!t) {
		rsp_reply_error(reply, "no such thread");
		return;
	}
	if (thread_name(t->proc->pid, t->tid, name, sizeof(name)))
		rsp_reply_hex(reply, name, strlen(name));
}

void h_thread_alive(struct rsp_request *req, struct rsp_buf *reply)
{
	struct thread *t = thread_find_ptid(req->u.ptid.pid, req->u.ptid.tid);

	if (t && (req->u.ptid.tid <= 0 || t->tid == req->u.ptid.tid) &&
	    !t->zombie && kill(t->tid, 0) == 0)
		rsp_reply_ok(reply);
	else
		rsp_reply_error(reply, "thread is not alive");
}

void h_set_thread(struct rsp_request *req, struct rsp_buf *reply)
{
	struct rsp_ptid id = req->u.set_thread.ptid;
	struct thread *t = NULL;

	if (id.tid == RSP_ID_ALL || (id.tid == RSP_ID_ANY && id.pid <= 0)) {
		/* "all" or "any": the first thread of the current process. */
		if (req->u.set_thread.op == 'g') {
			agent.gthread = NULL;
			agent.gpid = 0;
		} else {
			agent.cthread = NULL;
		}
		rsp_reply_ok(reply);
		return;
	}
	t = thread_find_ptid(id.pid, id.tid);
	if (!t || (id.tid > 0 && t->tid != id.tid)) {
		rsp_reply_error(reply, "no such thread");
		return;
	}
	if (req->u.set_thread.op == 'g') {
		agent.gthread = id.tid > 0 ? t : NULL;
		agent.gpid = t->proc->pid;
	} else {
		agent.cthread = t;
	}
	rsp_reply_ok(reply);
}

void h_rcmd(struct rsp_request *req, struct rsp_buf *reply)
{
	handle_monitor(req->u.str, reply);
}

void h_get_tls_addr(struct rsp_request *req, struct rsp_buf *reply)
{
	struct thread *t = thread_find_ptid(req->u.tls.ptid.pid, req->u.tls.ptid.tid);
	uint64_t addr;

	if (!t) {
		rsp_reply_error(reply, "no such thread");
		return;
	}
	if (thread_db_tls_address(t, req->u.tls.lm, req->u.tls.offset, &addr) < 0) {
		/* gdb 13 reports "Remote target failed to process
		 * qGetTLSAddr" whatever the text. */
		rsp_reply_failure(reply, &(struct rsp_error){ RSP_ERR_FAILED,
				  "cannot find the thread-local storage address" },
				  agent.error_messages);
		return;
	}
	rsp_reply_number(reply, addr);
}

/* lldb's question for the address its dynamic loader plugin reads the
 * struct r_debug pointer from (lldb-server answers the same): DT_DEBUG's
 * value in the program's _DYNAMIC, as bare hex. */
void h_shlib_info_addr(struct rsp_request *req, struct rsp_buf *reply)
{
	struct process *p = current_process();
	uint64_t slot;
	int err;

	(void)req;
	if (!p) {
		rsp_reply_error(reply, "no process");
		return;
	}
	if ((err = svr4_debug_slot(p, &slot)) < 0) {
		rsp_reply_error(reply, err == -ENOENT ?
				  "the program has no DT_DEBUG entry (not dynamically linked)" :
				  "cannot read the program's dynamic section");
		return;
	}
	rsp_reply_number(reply, slot);
}

/* lldb's question for the mapping around an address (lldb-server's
 * answer): start, size, permissions (none in a gap) and the mapped
 * file's name, hex.  lldb loads the dynamic linker and the vDSO by the
 * names of the mappings at their addresses before the program's library
 * list exists.  gdb never sends it. */
void h_memory_region(struct rsp_request *req, struct rsp_buf *reply)
{
	struct process *p = current_process();
	struct mem_region r;
	int err;

	if (!p) {
		rsp_reply_error(reply, "no process");
		return;
	}
	if ((err = mem_region_at(p, req->u.mem.addr, &r)) < 0) {
		rsp_reply_error(reply, "cannot read the memory map: %s", strerror(-err));
		return;
	}
	struct rsp_mem_region reply_region = {
		.start = r.start,
		.size = r.end - r.start,
		.has_perms = r.mapped && strncmp(r.perms, "---", 3) != 0,
		.read = r.perms[0] == 'r',
		.write = r.perms[1] == 'w',
		.exec = r.perms[2] == 'x',
		.name = r.name,
	};
	rsp_reply_mem_region(reply, &reply_region);
}

/* --- settings ---------------------------------------------------------------- */

void h_nonstop(struct rsp_request *req, struct rsp_buf *reply)
{
	agent.non_stop = req->u.flag;
	server_clear_stops();
	rsp_reply_ok(reply);
}

/* The recorder's connection may drop (an ssh link to a board): the
 * programs it records must not die with it. */
void h_detach_on_close(struct rsp_request *req, struct rsp_buf *reply)
{
	agent.detach_on_close = req->u.flag;
	rsp_reply_ok(reply);
}

void h_vstopped(struct rsp_request *req, struct rsp_buf *reply)
{
	server_next_stop(reply, true);
}

void h_pass_signals(struct rsp_request *req, struct rsp_buf *reply)
{
	memcpy(agent.pass_signals, req->u.sigs.set, sizeof(agent.pass_signals));
	rsp_reply_ok(reply);
}

void h_program_signals(struct rsp_request *req, struct rsp_buf *reply)
{
	memcpy(agent.program_signals, req->u.sigs.set, sizeof(agent.program_signals));
	agent.program_signals_set = true;
	rsp_reply_ok(reply);
}

void h_thread_events(struct rsp_request *req, struct rsp_buf *reply)
{
	agent.thread_events = req->u.flag;
	rsp_reply_ok(reply);
}

void h_catch_syscalls(struct rsp_request *req, struct rsp_buf *reply)
{
	agent.catch_syscalls = req->u.syscalls.enable;
	agent.catch_any_syscall = req->u.syscalls.any;
	memset(agent.catch_syscall_set, 0, sizeof(agent.catch_syscall_set));
	for (size_t i = 0; i < req->u.syscalls.count; i++)
		if (req->u.syscalls.nr[i] >= 0 && req->u.syscalls.nr[i] < 1024)
			agent.catch_syscall_set[req->u.syscalls.nr[i]] = true;
	rsp_reply_ok(reply);
}

void h_disable_randomization(struct rsp_request *req, struct rsp_buf *reply)
{
	agent.opt.disable_randomization = req->u.flag;
	rsp_reply_ok(reply);
}

void h_startup_with_shell(struct rsp_request *req, struct rsp_buf *reply)
{
	agent.opt.startup_with_shell = req->u.flag;
	rsp_reply_ok(reply);
}

extern char **environ;

static size_t env_count(void)
{
	size_t n = 0;
	while (agent.env && agent.env[n])
		n++;
	return n;
}

static void env_unset(const char *name, size_t nlen)
{
	size_t n = env_count();

	for (size_t i = 0; i < n; i++) {
		if (strncmp(agent.env[i], name, nlen) == 0 && agent.env[i][nlen] == '=') {
			free(agent.env[i]);
			agent.env[i] = agent.env[n - 1];
			agent.env[n - 1] = NULL;
			return;
		}
	}
}

void h_env_reset(struct rsp_request *req, struct rsp_buf *reply)
{
	for (size_t i = 0; agent.env && agent.env[i]; i++)
		free(agent.env[i]);
	free(agent.env);
	agent.env = NULL;
	/* Back to the agent's own environment. */
	size_t n = 0;
	while (environ[n])
		n++;
	agent.env = calloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		agent.env[i] = xstrdup(environ[i]);
	rsp_reply_ok(reply);
}

void h_env_set(struct rsp_request *req, struct rsp_buf *reply)
{
	const char *eq = strchr(req->u.str, '=');

	if (!eq) {
		rsp_reply_error(reply, "environment entry without '=': %s", req->u.str);
		return;
	}
	if (!agent.env)
		h_env_reset(req, &(struct rsp_buf){ 0 });
	env_unset(req->u.str, eq - req->u.str);
	size_t n = env_count();
	agent.env = xrealloc(agent.env, (n + 2) * sizeof(char *));
	agent.env[n] = xstrdup(req->u.str);
	agent.env[n + 1] = NULL;
	rsp_reply_ok(reply);
}

void h_env_unset(struct rsp_request *req, struct rsp_buf *reply)
{
	struct rsp_buf scratch = { 0 };

	if (!agent.env)
		h_env_reset(req, &scratch);
	rsp_buf_free(&scratch);
	env_unset(req->u.str, strlen(req->u.str));
	rsp_reply_ok(reply);
}

void h_set_workdir(struct rsp_request *req, struct rsp_buf *reply)
{
	free(agent.workdir);
	agent.workdir = req->u.str[0] ? xstrdup(req->u.str) : NULL;
	rsp_reply_ok(reply);
}

/* --- registers and memory ------------------------------------------------------- */

static struct thread *need_thread(struct rsp_buf *reply)
{
	struct thread *t = current_thread();

	if (!t)
		rsp_reply_error(reply, "no thread selected: the program is not running");
	else if (t->state != THREAD_STOPPED) {
		rsp_reply_error(reply, "thread %d is running", t->tid);
		t = NULL;
	}
	return t;
}

void h_read_regs(struct rsp_request *req, struct rsp_buf *reply)
{
	struct thread *t;
	uint8_t *blk;

	if (trace_frame_selected()) {
		trace_frame_regs(reply);
		return;
	}
	t = need_thread(reply);
	if (!t)
		return;
	blk = regs_block(t);
	if (!blk) {
		put_errno(reply, "cannot read registers", errno);
		return;
	}
	rsp_reply_hex(reply, blk, regs_block_size(t->proc));
}

void h_write_regs(struct rsp_request *req, struct rsp_buf *reply)
{
	struct thread *t = need_thread(reply);
	uint8_t *blk;
	size_t size;

	if (!t)
		return;
	blk = regs_block(t);
	size = regs_block_size(t->proc);
	if (!blk) {
		put_errno(reply, "cannot read registers", errno);
		return;
	}
	if (req->u.data.len > size) {
		rsp_reply_error(reply, "G packet has %zu bytes, the register block %zu",
				  req->u.data.len, size);
		return;
	}
	memcpy(blk, req->u.data.data, req->u.data.len);
	t->regs_dirty = true;
	int err = regs_flush(t);
	if (err < 0)
		put_errno(reply, "cannot write registers", err);
	else
		rsp_reply_ok(reply);
}

static const struct arch_reg *reg_of(struct thread *t, unsigned int regnum)
{
	if (regnum >= agent.arch->nregs_for(t->proc->features))
		return NULL;
	return &agent.arch->regs[regnum];
}

void h_read_reg(struct rsp_request *req, struct rsp_buf *reply)
{
	struct thread *t;
	const struct arch_reg *r;
	uint8_t *blk;

	if (trace_frame_selected()) {
		trace_frame_reg(req->u.reg.regnum, reply);
		return;
	}
	t = need_thread(reply);
	if (!t)
		return;
	r = reg_of(t, req->u.reg.regnum);
	if (!r) {
		rsp_reply_error(reply, "no register %u", req->u.reg.regnum);
		return;
	}
	blk = regs_block(t);
	if (!blk) {
		put_errno(reply, "cannot read registers", errno);
		return;
	}
	rsp_reply_hex(reply, blk + r->offset, r->bitsize / 8);
}

void h_write_reg(struct rsp_request *req, struct rsp_buf *reply)
{
	struct thread *t = need_thread(reply);
	const struct arch_reg *r;
	uint8_t *blk;

	if (!t)
		return;
	r = reg_of(t, req->u.reg.regnum);
	if (!r) {
		rsp_reply_error(reply, "no register %u", req->u.reg.regnum);
		return;
	}
	if (req->u.reg.len != r->bitsize / 8) {
		rsp_reply_error(reply, "register %s has %u bytes, not %zu", r->name,
				  r->bitsize / 8, req->u.reg.len);
		return;
	}
	blk = regs_block(t);
	if (!blk) {
		put_errno(reply, "cannot read registers", errno);
		return;
	}
	memcpy(blk + r->offset, req->u.reg.value, req->u.reg.len);
	t->regs_dirty = true;
	int err = regs_flush(t);
	if (err < 0)
		put_errno(reply, "cannot write registers", err);
	else
		rsp_reply_ok(reply);
}

static struct process *need_process(struct rsp_buf *reply)
{
	struct process *p = current_process();

	if (!p)
		rsp_reply_error(reply, "no process: the program is not running");
	return p;
}

void h_read_mem(struct rsp_request *req, struct rsp_buf *reply)
{
	struct process *p;
	uint8_t buf[RSP_MAX_PAYLOAD / 2];
	size_t len = req->u.mem.len;
	ssize_t n;

	if (trace_frame_selected()) {
		trace_frame_mem(req->u.mem.addr,
				len < sizeof(buf) ? len : sizeof(buf), reply);
		return;
	}
	p = need_process(reply);
	if (!p)
		return;
	if (len > sizeof(buf))
		len = sizeof(buf);	/* gdb accepts a shorter reply */
	if (len == 0)
		return;
	n = mem_read(p, req->u.mem.addr, buf, len);
	if (n <= 0) {
		/* gdb 13 takes only `Enn` here: it would hex-decode `E.text`. */
		char why[64];
		snprintf(why, sizeof(why), "cannot read memory at 0x%llx",
			 (unsigned long long)req->u.mem.addr);
		debug("%s", why);
		rsp_reply_failure(reply, &(struct rsp_error){ RSP_ERR_FAILED, why },
				  agent.error_messages);
		return;
	}
	rsp_reply_hex(reply, buf, n);
}

void h_write_mem(struct rsp_request *req, struct rsp_buf *reply)
{
	struct process *p = need_process(reply);
	ssize_t n;

	if (!p)
		return;
	if (req->u.mem.len == 0) {
		rsp_reply_ok(reply);
		return;
	}
	n = mem_write(p, req->u.mem.addr, req->u.mem.data, req->u.mem.len);
	if (n != (ssize_t)req->u.mem.len)
		rsp_reply_error(reply, "cannot write memory at 0x%llx",
				  (unsigned long long)req->u.mem.addr);
	else
		rsp_reply_ok(reply);
}

void h_search_mem(struct rsp_request *req, struct rsp_buf *reply)
{
	struct process *p = need_process(reply);
	uint64_t addr = req->u.search.addr, end = addr + req->u.search.len;
	size_t plen = req->u.search.pattern_len;
	static uint8_t chunk[65536];

	if (!p)
		return;
	if (plen == 0 || plen > sizeof(chunk) / 2) {
		rsp_reply_error(reply, "search pattern of %zu bytes not supported", plen);
		return;
	}
	while (addr < end) {
		size_t want = end - addr < sizeof(chunk) ? end - addr : sizeof(chunk);
		ssize_t n = mem_read(p, addr, chunk, want);
		if (n <= 0) {
			rsp_reply_error(reply, "cannot read memory at 0x%llx",
					  (unsigned long long)addr);
			return;
		}
		uint8_t *hit = memmem(chunk, n, req->u.search.pattern, plen);
		if (hit) {
			rsp_reply_search(reply, true, addr + (hit - chunk));
			return;
		}
		if ((size_t)n < plen || addr + n >= end)
			break;
		/* Overlap so a match across chunks is found. */
		addr += n - (plen - 1);
	}
	rsp_reply_search(reply, false, 0);
}

void h_crc(struct rsp_request *req, struct rsp_buf *reply)
{
	struct process *p = need_process(reply);
	uint64_t addr = req->u.mem.addr;
	size_t left = req->u.mem.len;
	unsigned int crc = 0xffffffff;
	uint8_t buf[4096];

	if (!p)
		return;
	while (left) {
		size_t want = left < sizeof(buf) ? left : sizeof(buf);
		ssize_t n = mem_read(p, addr, buf, want);
		if (n != (ssize_t)want) {
			rsp_reply_error(reply, "cannot read memory at 0x%llx",
					  (unsigned long long)addr);
			return;
		}
		/* gdb's CRC-32 variant, as libiberty implements it. */
		crc = xcrc32(buf, (int)n, crc);
		addr += n;
		left -= n;
	}
	rsp_reply_crc(reply, crc);
}

/* --- execution --------------------------------------------------------------- */

void h_vcont_query(struct rsp_request *req, struct rsp_buf *reply)
{
	rsp_reply_vcont_actions(reply);
}

void h_vcont(struct rsp_request *req, struct rsp_buf *reply)
{
	struct rsp_resume_action acts[RSP_MAX_VCONT_ACTIONS];
	size_t n = req->u.vcont.count;

	memcpy(acts, req->u.vcont.actions, n * sizeof(acts[0]));
	/* Legacy c/s resume the Hc thread, or everything. */
	if (n == 1 && acts[0].ptid.pid == RSP_ID_ALL && acts[0].ptid.tid == RSP_ID_ALL &&
	    req->u.vcont.legacy && agent.cthread && acts[0].kind == RSP_RESUME_STEP) {
		acts[0].ptid.pid = agent.cthread->proc->pid;
		acts[0].ptid.tid = agent.cthread->tid;
	}
	if (!agent.processes) {
		reply_no_process(reply);
		return;
	}
	int err = inferior_resume(acts, n);
	if (agent.non_stop) {
		/* Stops come later, as notifications. */
		rsp_reply_ok(reply);
		return;
	}
	if (err < 0) {
		rsp_reply_error(reply, "no thread to resume");
		return;
	}
	server_defer_reply();
}

void h_vctrlc(struct rsp_request *req, struct rsp_buf *reply)
{
	inferior_interrupt();
	rsp_reply_ok(reply);
}

static void exit_if_nothing_left(void)
{
	if (!agent.extended && !agent.processes)
		agent.exit_after_reply = true;
}

void h_kill(struct rsp_request *req, struct rsp_buf *reply)
{
	while (agent.processes)
		inferior_kill(agent.processes);
	agent.have_last_stop = false;
	exit_if_nothing_left();
	/* `k` has no reply in gdb's protocol: gdb never reads one (gdb 13
	 * sends it only when vKill is not supported).  With the extended
	 * protocol it may go on using the connection, so a reply would be
	 * taken for the answer to its next request.
	 * Without it gdb closes the connection after `k` unread, while lldb
	 * waits for the process's end as the reply (lldb-server sends it)
	 * and otherwise reports that the packet failed: so say how the
	 * process ended, killed by SIGKILL, and exit after it. */
	if (agent.extended)
		server_defer_reply();
	else
		rsp_reply_stop(reply, &(struct rsp_stop){
			.kind = RSP_STOP_SIGNALLED, .signal = signal_to_gdb(SIGKILL) });
}

void h_vkill(struct rsp_request *req, struct rsp_buf *reply)
{
	/* Without the multiprocess extension gdb names its own stand-in
	 * pid (42000), not the process: kill the current one, as gdbserver
	 * does. */
	struct process *p = agent.multiprocess ? process_find(req->u.pid) :
						 current_process();

	if (!p) {
		rsp_reply_error(reply, "no process %lld", (long long)req->u.pid);
		return;
	}
	inferior_kill(p);
	agent.have_last_stop = false;
	rsp_reply_ok(reply);
	exit_if_nothing_left();
}

void h_detach(struct rsp_request *req, struct rsp_buf *reply)
{
	struct process *p = req->u.pid ? process_find(req->u.pid) : current_process();

	if (!p) {
		rsp_reply_error(reply, "no process to detach from");
		return;
	}
	/* Stops gdb has not pulled die with the process; so do the
	 * children of fork events among them, unknown to gdb. */
	server_drop_stops(p->pid, inferior_detach_fork_child);
	inferior_detach(p);
	agent.have_last_stop = false;
	rsp_reply_ok(reply);
	exit_if_nothing_left();
}

static char **last_argv;

static void remember_argv(char **argv)
{
	if (last_argv) {
		for (size_t i = 0; last_argv[i]; i++)
			free(last_argv[i]);
		free(last_argv);
	}
	last_argv = dupargv(argv);
}

static void run_program(char **argv, struct rsp_buf *reply)
{
	struct process *p;
	int err;

	err = inferior_start(argv, &p);
	if (err == -ECHILD) {
		rsp_reply_error(reply, "%s exited during startup", argv[0]);
		return;
	}
	if (err < 0) {
		put_errno(reply, argv[0], err);
		return;
	}
	agent.gthread = p->threads;
	agent.cthread = NULL;
	stop_event_set(&agent.last_stop, STOP_SIGNAL, signal_to_gdb(SIGTRAP),
		       p->pid, p->pid);
	agent.have_last_stop = true;
	format_stop_reply(&agent.last_stop, reply);
}

void h_vrun(struct rsp_request *req, struct rsp_buf *reply)
{
	size_t argc = req->u.argv.argc;
	char **argv = xcalloc(argc + 1, sizeof(char *));

	for (size_t i = 0; i < argc; i++)
		argv[i] = (char *)req->u.argv.argv[i];
	if (argc == 0 || !argv[0][0]) {
		const char *def = agent.opt.prog_argv ? agent.opt.prog_argv[0]
			: last_argv ? last_argv[0] : NULL;
		if (!def) {
			rsp_reply_error(reply, "no program to run: give its name to 'run' or 'set remote exec-file'");
			free(argv);
			return;
		}
		if (argc == 0)
			argc = 1;
		argv[0] = (char *)def;
	}
	argv[0] = program_path(argv[0]);
	/* A new run replaces what ran before in this mode. */
	remember_argv(argv);
	free(argv[0]);
	free(argv);
	run_program(last_argv, reply);
}

void h_restart(struct rsp_request *req, struct rsp_buf *reply)
{
	while (agent.processes)
		inferior_kill(agent.processes);
	if (last_argv) {
		struct rsp_buf ignored;
		rsp_buf_init(&ignored);
		run_program(last_argv, &ignored);
		rsp_buf_free(&ignored);
	}
	/* R has no reply. */
	server_defer_reply();
}

void h_vattach(struct rsp_request *req, struct rsp_buf *reply)
{
	struct process *p;
	int err = inferior_attach((pid_t)req->u.pid, &p);

	if (err < 0) {
		rsp_reply_error(reply, "cannot attach to process %lld: %s",
				  (long long)req->u.pid, strerror(-err));
		return;
	}
	agent.gthread = p->threads;
	stop_event_set(&agent.last_stop, STOP_SIGNAL, 0, p->pid, p->pid);
	agent.have_last_stop = true;
	if (agent.non_stop) {
		/* Every thread stopped for the attach: gdb hears of each by
		 * notification, with signal 0. */
		rsp_reply_ok(reply);
		for (struct thread *t = p->threads; t; t = t->next) {
			struct stop_event ev;
			stop_event_set(&ev, STOP_SIGNAL, 0, p->pid, t->tid);
			t->stop_reported = true;
			server_queue_stop(&ev);
		}
		return;
	}
	format_stop_reply(&agent.last_stop, reply);
}

/* --- breakpoints ------------------------------------------------------------- */

void h_point(struct rsp_request *req, struct rsp_buf *reply)
{
	struct process *p = need_process(reply);
	bool insert = req->kind == RSP_REQ_INSERT_POINT;
	enum rsp_point_type type = req->u.point.type;
	uint64_t addr = req->u.point.addr;
	int err;

	if (!p)
		return;
	if (type == RSP_POINT_READ_WATCH && !hw_can_read_watch(p)) {
		/* The debug registers cannot watch reads alone (x86):
		 * unsupported, so gdb watches accesses and keeps the stops
		 * that leave the value unchanged. */
		return;
	}
	if (type == RSP_POINT_SW_BREAK) {
		char why[200];
		if (!insert) {
			err = bp_remove_gdb(p, addr);
		} else {
			err = bp_insert_gdb(p, addr, req->u.point.kind,
					    req->u.point.cond_and_cmds, why, sizeof(why));
			if (err == -EINVAL || err == -ENOMEM) {
				rsp_reply_error(reply, "%s", why);
				return;
			}
		}
	} else {
		err = insert ? hw_insert(p, type, addr, req->u.point.kind)
			     : hw_remove(p, type, addr, req->u.point.kind);
	}
	if (err == -ENOSPC) {
		rsp_reply_error(reply, "no free hardware debug register");
		return;
	}
	if (err == -ENODEV) {
		rsp_reply_error(reply, "hardware breakpoints and watchpoints do not "
				  "fire on this machine; use software watchpoints "
				  "(set can-use-hw-watchpoints 0) and breakpoints");
		return;
	}
	if (err < 0) {
		rsp_reply_error(reply, "cannot %s %s at 0x%llx: %s",
				  insert ? "insert" : "remove",
				  type == RSP_POINT_SW_BREAK ? "breakpoint" : "hardware point",
				  (unsigned long long)addr, strerror(-err));
		return;
	}
	rsp_reply_ok(reply);
}
