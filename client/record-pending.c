/*
 * record-pending.c - probes in libraries the program has not loaded yet.
 *
 * A LIB:FUNC whose LIB is not loaded is defined anyway and given to the
 * agent with Qprobe.pending: the agent places it at every load of the
 * library (dlopen) and takes it out at dlclose.  Its tracepoint's
 * address in the file is a key (PENDING_KEY), not code.  While recording
 * the recorder reads what the agent did (qprobe.libevents: placed,
 * removed, failed, with the frames of each load) and says it on stderr;
 * at the end it lists the loads, and a probe never placed fails the
 * recording like a bad spec.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/elfsym.h"
#include "client/recorder.h"
#include "client/rsp-client.h"
#include "client/spec.h"

/*
 * A function of a library the program has not loaded (yet): the agent
 * places it at each load.  A library given by a path that exists here
 * (under --sysroot) is read here, so every name probe-trace knows works
 * (demangled, from a debug file), and the agent adds the load address;
 * otherwise the agent looks the symbol up in the library's file when it
 * loads (exact names, its symbol tables only).
 */
int resolve_pending(struct recorder *r, struct probe *p, char *err,
			   size_t errsize)
{
	struct module *m;
	struct elfsym_file *f;
	const struct elfsym *hit = NULL;
	char *local = NULL;

	if (p->spec.where != SPEC_FUNC) {
		snprintf(err, errsize, "no library '%s' is loaded in the process, and "
			 "only functions (LIB:FUNC) can wait for a library to load, not "
			 "USDT probes", p->spec.lib);
		return -ENOENT;
	}
	p->pending = true;
	if (p->spec.lib[0] == '/')
		local = local_path(r, p->spec.lib);
	if (!local || access(local, R_OK) != 0) {
		free(local);
		p->pending_sym = strdup(p->spec.func);
		p->sites[0].addr = PENDING_KEY(p->tpnum);
		p->nsites = 1;
		return 0;
	}
	free(local);
	m = add_module(r, p->spec.lib, 0);
	if (!m || !(f = module_elf(m))) {
		snprintf(err, errsize, "cannot read the symbols of %s",
			 m ? m->local : p->spec.lib);
		return -ENOENT;
	}
	/* Not a library of the process: find_library must not see it. */
	r->nmods--;
	for (size_t i = 0; i < f->nsyms && !hit; i++)
		if (elfsym_matches(&f->syms[i], p->spec.func))
			hit = &f->syms[i];
	int rc = 0;
	if (!hit) {
		snprintf(err, errsize, "no function '%s' in %s", p->spec.func, m->local);
		rc = -ENOENT;
	} else if (p->spec.offset >= hit->size) {
		snprintf(err, errsize, "%s+%llu is beyond the end of %s (%llu bytes)",
			 p->spec.func, (unsigned long long)p->spec.offset,
			 elfsym_display(hit), (unsigned long long)hit->size);
		rc = -ERANGE;
	} else {
		p->sites[0].addr = hit->addr + p->spec.offset;
		p->nsites = 1;
	}
	if (m->opened)
		elfsym_close(&m->ef);
	free(m->path);
	free(m->local);
	return rc;
}

/* Qprobe.pending for a pending probe's tracepoint. */
int define_pending(struct recorder *r, struct probe *p)
{
	struct rsp_buf pkt, hex;
	const char *sym = p->pending_sym ? p->pending_sym : "";
	int e;

	rsp_buf_init(&pkt);
	rsp_buf_init(&hex);
	rsp_buf_printf(&pkt, "Qprobe.pending:%x:%llx:%llx:", p->tpnum,
		       (unsigned long long)p->sites[0].addr,
		       (unsigned long long)(p->pending_sym ? p->spec.offset
							   : p->sites[0].addr));
	rsp_buf_puts(&pkt, hex_of(&hex, sym, strlen(sym)));
	rsp_buf_putc(&pkt, ':');
	rsp_buf_puts(&pkt, hex_of(&hex, p->spec.lib, strlen(p->spec.lib)));
	rsp_buf_putc(&pkt, '\0');
	e = request_ok(r, "defining a probe in a library not loaded yet", "%s", pkt.data);
	rsp_buf_free(&pkt);
	rsp_buf_free(&hex);
	return e;
}

bool any_pending(struct recorder *r)
{
	for (size_t i = 0; i < r->nprobes; i++)
		if (r->probes[i].pending)
			return true;
	return false;
}

void pending_said(struct recorder *r)
{
	for (size_t i = 0; i < r->nprobes && !r->quiet; i++) {
		struct probe *p = &r->probes[i];
		if (p->pending)
			fprintf(stderr, "probe-trace: %s: pending: no library '%s' is "
				"loaded yet; placed when it loads\n", p->name, p->spec.lib);
	}
}

/* One event of qprobe.libevents (see doc/protocol.md). */
static void take_libevent(struct recorder *r, const char *ev, size_t len)
{
	char text[4096], hex[8200];
	unsigned int tp = 0, load = 0;
	unsigned long long key = 0, addr = 0, frames = 0;
	struct probe *p;

	if (len >= sizeof(hex))
		return;
	memcpy(hex, ev, len);
	hex[len] = '\0';
	if (hex[0] == 'o') {
		err_msg("the agent lost some library events: the per-load counts "
			"below may be incomplete");
		return;
	}
	if (sscanf(hex + 1, "%x,%llx", &tp, &key) != 2 || !(p = probe_of(r, (int)tp)))
		return;
	switch (hex[0]) {
	case 'p': {
		const char *h = NULL;
		if (sscanf(hex + 1, "%x,%llx,%llx,%x,", &tp, &key, &addr, &load) != 4)
			return;
		h = strrchr(hex, ',') + 1;
		ssize_t n = rsp_hex_decode(h, strlen(h), text, sizeof(text) - 1);
		text[n > 0 ? n : 0] = '\0';
		if (p->nloads < MAX_LOADS)
			p->loads[p->nloads] = (struct load){ addr, 0, false };
		p->nloads++;
		if (!r->quiet)
			fprintf(stderr, "%sprobe-trace: %s: placed at 0x%llx in %s (load %u)\n",
				r->tty_status ? "\r\033[K" : "", p->name, addr, text, load);
		break;
	}
	case 'r':
	case 's':
		if (sscanf(hex + 1, "%x,%llx,%llx,%x,%llx", &tp, &key, &addr, &load,
			   &frames) != 5)
			return;
		if (load >= 1 && load <= MAX_LOADS && load <= p->nloads) {
			p->loads[load - 1].frames = frames;
			p->loads[load - 1].ended = true;
		}
		if (!r->quiet && hex[0] == 'r')
			fprintf(stderr, "%sprobe-trace: %s: removed from 0x%llx, its library "
				"unloaded (load %u: %llu %s)\n", r->tty_status ? "\r\033[K" : "", p->name, addr, load,
				frames, p->spec.hist ? "calls" : "frames");
		break;
	case 'x': {
		const char *h = strrchr(hex, ',') + 1;
		ssize_t n = rsp_hex_decode(h, strlen(h), text, sizeof(text) - 1);
		text[n > 0 ? n : 0] = '\0';
		err_msg("%s: cannot be placed: %s; the program runs on without it",
			p->name, text);
		p->pending_failed = true;
		break;
	}
	}
}

int read_libevents(struct recorder *r)
{
	for (;;) {
		if (r->c.eof ||
		    rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT, "qprobe.libevents") < 0)
			return -EIO;
		if (r->reply.data[0] != 'P') {
			err_msg("library events: the agent says: %s",
				r->reply.len ? r->reply.data : "not supported");
			return -EIO;
		}
		if (r->reply.len <= 1)
			return 0;
		for (const char *s = r->reply.data + 1; *s == ';';) {
			const char *end = strchr(s + 1, ';');
			size_t len = end ? (size_t)(end - s - 1) : strlen(s + 1);
			take_libevent(r, s + 1, len);
			s += 1 + len;
		}
	}
}

/* The end of the recording: where each pending probe was, its frames
 * per load, and the ones never placed. */
void say_loads(struct recorder *r)
{
	for (size_t i = 0; i < r->nprobes; i++) {
		struct probe *p = &r->probes[i];
		if (!p->pending)
			continue;
		if (!p->nloads) {
			if (!p->pending_failed)
				err_msg("probe %s never placed: library '%s' was not loaded",
					p->name, p->spec.lib);
			continue;
		}
		if (r->quiet)
			continue;
		fprintf(stderr, "probe-trace: %s: %u load%s:", p->name, p->nloads,
			p->nloads == 1 ? "" : "s");
		for (unsigned int k = 0; k < p->nloads && k < MAX_LOADS; k++)
			fprintf(stderr, "%s load %u at 0x%llx %llu %s", k ? "," : "",
				k + 1, (unsigned long long)p->loads[k].addr,
				(unsigned long long)p->loads[k].frames,
				p->spec.hist ? "calls" : "frames");	/* hits counted */
		fputc('\n', stderr);
	}
}
