/*
 * record-hist.c - latency histograms the agent keeps (`FUNC%return hist`).
 *
 * A hot function (a call every 150 ns) cannot afford a frame per call:
 * writing and streaming the frames costs more than the call.  For a
 * `hist` probe the agent adds each return's latency (probe_latency_ns:
 * ns from entry to return) to a log2 histogram of its own and records
 * nothing, so the program runs at close to its own speed.  The probe's
 * tracepoint is defined with its condition and no actions
 * (record-define.c), then marked with Qprobe.hist; after the run, whatever
 * ended it, qprobe.hist reads the histogram back, and it is printed on
 * stdout as `probe-trace report` prints a latency histogram (stats.h),
 * also with -q, as bpftrace prints its maps at exit.
 *
 * Reply of qprobe.hist: H<count>;<sum_ns>;<zero>;<b0>,<b1>,...,<bk> in
 * hex, b_i the hits with latency in [2^i, 2^(i+1)) ns, trailing empty
 * buckets left out, count = zero + the sum of the b_i.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/recorder.h"
#include "client/rsp-client.h"
#include "protocol/stats.h"

/* The agent as the user named it, for messages. */
static void agent_name(const struct recorder *r, char *buf, size_t size)
{
	if (r->connect)
		snprintf(buf, size, "the agent at %s", r->connect);
	else if (r->agent_cmd)
		snprintf(buf, size, "the agent (%s)", r->agent_cmd);
	else
		snprintf(buf, size, "the local probe-agent");
}

int define_hist(struct recorder *r, struct probe *p)
{
	char agent[256];

	for (size_t i = 0; i < p->nsites; i++) {
		int e = rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT,
					   "Qprobe.hist:%x:%llx", p->tpnum,
					   (unsigned long long)p->sites[i].addr);
		if (e < 0) {
			err_msg("%s: asking for a latency histogram: %s", p->name,
				r->c.error);
			return e;
		}
		if (strcmp(r->reply.data, "OK") == 0)
			continue;
		if (!r->reply.data[0]) {
			agent_name(r, agent, sizeof(agent));
			err_msg("%s: %s does not keep latency histograms (it does not "
				"know Qprobe.hist): drop `hist` to record a frame per "
				"call, or use a newer probe-agent", p->name, agent);
			return -ENOTSUP;
		}
		const char *m = r->reply.data;
		if (m[0] == 'E' && m[1] == '.')
			m += 2;
		err_msg("%s: the agent cannot keep its latency histogram: %s",
			p->name, m);
		return -EIO;
	}
	return 0;
}

/* One hex number at *s (at least one digit, at most 16), then *s past it. */
static int take_hex(const char **s, uint64_t *out)
{
	const char *p = *s;
	uint64_t v = 0;
	int n = 0;

	while (isxdigit((unsigned char)*p) && !isupper((unsigned char)*p)) {
		if (++n > 16)
			return -EINVAL;
		v = v << 4 | (uint64_t)(isdigit((unsigned char)*p) ? *p - '0'
								   : *p - 'a' + 10);
		p++;
	}
	if (!n)
		return -EINVAL;
	*s = p;
	*out = v;
	return 0;
}

/* H<count>;<sum>;<zero>;<b0>,...,<bk> added to p's histogram (a probe
 * of several locations: theirs together). */
static int parse_hist(const char *reply, struct probe *p)
{
	const char *s = reply;
	struct log2_hist h;
	uint64_t total, sum;

	memset(&h, 0, sizeof(h));
	if (*s++ != 'H' || take_hex(&s, &h.n) < 0 || *s++ != ';' ||
	    take_hex(&s, &sum) < 0 || *s++ != ';' ||
	    take_hex(&s, &h.zero) < 0 || *s++ != ';')
		return -EINVAL;
	total = h.zero;
	for (int k = 0; *s; k++) {
		if (k == 64 || (k && *s++ != ',') ||
		    take_hex(&s, &h.b[k]) < 0)
			return -EINVAL;
		if (total + h.b[k] < total)
			return -EINVAL;
		total += h.b[k];
	}
	if (total != h.n)
		return -EINVAL;
	p->hist.n += h.n;
	p->hist.zero += h.zero;
	for (int k = 0; k < 64; k++)
		p->hist.b[k] += h.b[k];
	p->hist_sum += sum;
	return 0;
}

int read_hists(struct recorder *r)
{
	int rc = 0;

	for (size_t i = 0; i < r->nprobes; i++) {
		struct probe *p = &r->probes[i];
		if (!p->spec.hist)
			continue;
		if (r->c.eof) {
			err_msg("%s: the agent is gone: its latency histogram is lost",
				p->name);
			return -EPIPE;
		}
		memset(&p->hist, 0, sizeof(p->hist));
		p->hist_sum = 0;
		/* Every location's (define_hist marked each). */
		bool ok = true;
		for (size_t j = 0; j < p->nsites && ok; j++) {
			int e = rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT,
						   "qprobe.hist:%x:%llx", p->tpnum,
						   (unsigned long long)p->sites[j].addr);
			const char *m = r->reply.data;
			ok = false;
			if (e < 0)
				err_msg("%s: reading its latency histogram: %s", p->name,
					r->c.error);
			else if (m[0] == 'E' && m[1] == '.')
				err_msg("%s: the agent has no latency histogram of it: %s",
					p->name, m + 2);
			else if (parse_hist(m, p) < 0)
				err_msg("%s: the agent's latency histogram is malformed "
					"(expected H<count>;<sum>;<zero>;<b0>,<b1>,... in "
					"lowercase hex, the buckets adding up to the count): "
					"%.200s", p->name, m[0] ? m : "(empty reply)");
			else
				ok = true;
		}
		if (!ok) {
			rc = -EIO;
			continue;
		}
		p->hist_known = true;
	}
	return rc;
}

/* ns as microseconds with three decimals: 1234567 -> "1234.567us". */
static void put_us(uint64_t ns)
{
	printf("%" PRIu64 ".%03uus", ns / 1000, (unsigned)(ns % 1000));
}

void print_hists(struct recorder *r)
{
	for (size_t i = 0; i < r->nprobes; i++) {
		const struct probe *p = &r->probes[i];
		if (!p->hist_known)
			continue;
		printf("%s: %" PRIu64 " call%s", p->name, p->hist.n,
		       p->hist.n == 1 ? "" : "s");
		if (p->hist.n) {
			printf(", latency avg ");
			put_us(p->hist_sum / p->hist.n);
			printf(" (sum ");
			put_us(p->hist_sum);
			printf(")\n");
			printf("  latency (ns):\n");
			log2_hist_print(stdout, &p->hist, 4);
		} else {
			printf("\n");
		}
	}
	fflush(stdout);
}
