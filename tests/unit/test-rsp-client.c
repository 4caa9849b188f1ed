/*
 * test-rsp-client.c - probe-trace's side of the connection, against a
 * hand-driven agent end on the loopback.
 *
 * A request that gave up waiting (its timeout) leaves its reply owed: when
 * that reply arrives late, it must be dropped, not handed to the next
 * request as its own (a QTStop answered with a late qTStatus reply).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "client/rsp-client.h"
#include "protocol/rsp.h"

struct pair {
	struct rsp_client c;
	int agent;		/* the agent's end */
};

static int setup(void **state)
{
	static struct pair p;
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	char hostport[32];
	int lfd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(lfd, 1), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &len), 0);
	snprintf(hostport, sizeof(hostport), "127.0.0.1:%u", ntohs(a.sin_port));
	assert_int_equal(rsp_client_connect(&p.c, hostport), 0);
	p.agent = accept(lfd, NULL, NULL);
	assert_true(p.agent >= 0);
	close(lfd);
	*state = &p;
	return 0;
}

static int teardown(void **state)
{
	struct pair *p = *state;

	close(p->agent);
	rsp_client_close(&p->c, 0);
	return 0;
}

/* Writes one packet from the agent's end, framed by hand. */
static void agent_says(struct pair *p, const char *payload)
{
	unsigned int sum = 0;
	char buf[256];

	for (const char *s = payload; *s; s++)
		sum += (unsigned char)*s;
	int n = snprintf(buf, sizeof(buf), "$%s#%02x", payload, sum & 0xff);
	assert_int_equal(write(p->agent, buf, (size_t)n), n);
}

/* Reads what the client sent to the agent's end so far. */
static void agent_reads(struct pair *p, const char *want)
{
	char buf[512];
	ssize_t n = read(p->agent, buf, sizeof(buf) - 1);

	assert_true(n > 0);
	buf[n] = 0;
	assert_non_null(strstr(buf, want));
}

static void test_reply_in_time(void **state)
{
	struct pair *p = *state;
	struct rsp_buf reply;

	rsp_buf_init(&reply);
	agent_says(p, "OK");
	assert_int_equal(rsp_client_request(&p->c, &reply, 1000, "QTStop"), 0);
	assert_string_equal(reply.data, "OK");
	agent_reads(p, "$QTStop#");
	rsp_buf_free(&reply);
}

static void test_late_reply_dropped(void **state)
{
	struct pair *p = *state;
	struct rsp_buf reply;

	rsp_buf_init(&reply);
	/* No answer in time. */
	assert_int_equal(rsp_client_request(&p->c, &reply, 50, "qTStatus"), -ETIMEDOUT);
	agent_reads(p, "$qTStatus#");
	/* It comes late, before the next request's own. */
	agent_says(p, "T1;tframes:0");
	agent_says(p, "OK");
	assert_int_equal(rsp_client_request(&p->c, &reply, 1000, "QTStop"), 0);
	assert_string_equal(reply.data, "OK");
	/* In step again: the next reply is the next request's. */
	agent_says(p, "T0;tframes:5");
	assert_int_equal(rsp_client_request(&p->c, &reply, 1000, "qTStatus"), 0);
	assert_string_equal(reply.data, "T0;tframes:5");
	rsp_buf_free(&reply);
}

static void test_two_late_replies(void **state)
{
	struct pair *p = *state;
	struct rsp_buf reply;

	rsp_buf_init(&reply);
	assert_int_equal(rsp_client_request(&p->c, &reply, 30, "qTStatus"), -ETIMEDOUT);
	assert_int_equal(rsp_client_request(&p->c, &reply, 30, "qTStatus"), -ETIMEDOUT);
	agent_says(p, "T1;tframes:1");
	agent_says(p, "T1;tframes:2");
	agent_says(p, "E01");
	assert_int_equal(rsp_client_request(&p->c, &reply, 1000, "QTStop"), 0);
	assert_string_equal(reply.data, "E01");
	rsp_buf_free(&reply);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reply_in_time, setup, teardown),
		cmocka_unit_test_setup_teardown(test_late_reply_dropped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_late_replies, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
