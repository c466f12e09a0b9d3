/* SPDX-License-Identifier: BSD-3-Clause
 * The connection manager's states, two CMs back to back in virtual time:
 * connect, accept, reject, disconnect; the loss of each MAD and what
 * answers it (a retry, a duplicate answered again); retries running out;
 * MRA; MADs for no connection of ours; many connections at once (tens of
 * thousands).
 */
#include "et_test.h"

#include "cm/et_cm.h"
#include "wire/et_gid.h"

#define IP_A 0x0a000001u
#define IP_B 0x0a000002u
#define PORT 18515
#define SID et_rdma_service_id(ET_RDMA_PS_TCP, PORT)

static struct et_cm *A, *B;
static uint64_t now;
static int drop[0x20];     /* by attribute: so many more of it are lost */
static int crossed[0x20];  /* by attribute: how many were sent */
static int listener_ctx;
static int sidr_ctx;      /* an active SIDR request's */

static struct et_cm *
make(uint32_t ip, uint64_t guid, uint32_t max_conns)
{
	struct et_cm_conf c;

	et_cm_conf_default(&c);
	c.ip = ip;
	c.ca_guid = guid;
	c.seed = guid;
	c.max_conns = max_conns;
	return et_cm_create(&c);
}

static int
setup(void **state)
{
	(void)state;
	A = make(IP_A, 0x0200000000000001ull, 1024);
	B = make(IP_B, 0x0200000000000002ull, 1024);
	now = 1000;
	memset(drop, 0, sizeof(drop));
	memset(crossed, 0, sizeof(crossed));
	return A && B && et_cm_listen(B, SID, &listener_ctx) == 0 ? 0 : -1;
}

static int
teardown(void **state)
{
	(void)state;
	et_cm_destroy(A);
	et_cm_destroy(B);
	return 0;
}

static uint16_t
attr_of(const uint8_t *mad)
{
	return (uint16_t)(mad[16] << 8 | mad[17]);
}

/* Every MAD each side has to send, to the other, until both are quiet;
 * drop[] loses some on the way. */
static void
pump(void)
{
	bool moved;

	do {
		moved = false;
		for (int s = 0; s < 2; s++) {
			struct et_cm *from = s ? B : A, *to = s ? A : B;
			struct et_cm_out o;

			while (et_cm_pop_out(from, &o)) {
				uint16_t attr = attr_of(o.mad) & 0x1f;

				moved = true;
				assert_int_equal(o.dst_ip, s ? IP_A : IP_B);
				crossed[attr]++;
				if (drop[attr] > 0) {
					drop[attr]--;
					continue;
				}
				assert_int_equal(et_cm_input(to, s ? IP_B : IP_A, o.mad, sizeof(o.mad), now), 0);
			}
		}
	} while (moved);
}

/* Time to the next deadline of either, its timers, what they sent. */
static void
advance(void)
{
	uint64_t a = et_cm_deadline(A), b = et_cm_deadline(B);

	assert_true(a != UINT64_MAX || b != UINT64_MAX);
	now = a < b ? a : b;
	et_cm_timer(A, now);
	et_cm_timer(B, now);
	pump();
}

/* The next event of cm, which must be of type t. */
static struct et_cm_event
expect(struct et_cm *cm, enum et_cm_event_type t)
{
	struct et_cm_event e;

	assert_true(et_cm_poll_event(cm, &e));
	if (e.type != t)
		fail_msg("event %s, want %s", et_cm_event_name(e.type), et_cm_event_name(t));
	return e;
}

static void
no_event(struct et_cm *cm)
{
	struct et_cm_event e;

	if (et_cm_poll_event(cm, &e))
		fail_msg("unexpected event %s", et_cm_event_name(e.type));
}

static struct et_cm_conn *
connect_a(uint64_t sid, const char *pdata)
{
	struct et_cm_connect_param p = {
		.dst_ip = IP_B, .service_id = sid, .src_port = 40000, .qpn = 0x100, .psn = 0x1000,
		.mtu = 1024, .responder_resources = 4, .initiator_depth = 2, .retry_count = 6,
		.rnr_retry_count = 7, .pdata = pdata, .pdata_len = pdata ? (uint16_t)strlen(pdata) : 0};
	struct et_cm_conn *c;
	int err;

	c = et_cm_connect(A, &p, &listener_ctx + 1, now, &err);
	assert_non_null(c);
	assert_int_equal(err, 0);
	pump();
	return c;
}

static struct et_cm_conn *
accept_b(const char *pdata)
{
	struct et_cm_event e = expect(B, ET_CM_EV_CONNECT_REQUEST);
	struct et_cm_accept_param p = {.qpn = 0x22, .psn = 0xabcdef, .responder_resources = 2,
				       .initiator_depth = 4, .rnr_retry_count = 7,
				       .pdata = pdata, .pdata_len = pdata ? (uint16_t)strlen(pdata) : 0};

	assert_int_equal(et_cm_accept(B, e.conn, &p, now), 0);
	pump();
	return e.conn;
}

/* A connects, B accepts: both established. */
static void
establish(struct et_cm_conn **a, struct et_cm_conn **b)
{
	*a = connect_a(SID, NULL);
	*b = accept_b(NULL);
	expect(A, ET_CM_EV_ESTABLISHED);
	expect(B, ET_CM_EV_ESTABLISHED);
}

static void
test_connect(void **state)
{
	struct et_cm_conn *a, *b;
	struct et_cm_event e;

	(void)state;
	a = connect_a(SID, "hello");
	e = expect(B, ET_CM_EV_CONNECT_REQUEST);
	assert_ptr_equal(e.ctx, &listener_ctx);
	assert_int_equal(e.service_id, SID);
	assert_int_equal(e.peer_ip, IP_A);
	assert_int_equal(e.peer_port, 40000);
	assert_int_equal(e.peer_qpn, 0x100);
	assert_int_equal(e.peer_psn, 0x1000);
	assert_int_equal(e.mtu, 1024);
	/* what A's initiator may have out, B takes in */
	assert_int_equal(e.responder_resources, 2);
	assert_int_equal(e.initiator_depth, 4);
	assert_int_equal(e.retry_count, 6);
	assert_int_equal(e.rnr_retry_count, 7);
	assert_int_equal(e.pdata_len, ET_CMA_REQ_PDATA);
	assert_memory_equal(e.pdata, "hello\0\0", 7);
	b = e.conn;
	assert_int_equal(et_cm_conn_state(b), ET_CMS_REQ_RCVD);
	assert_int_equal(et_cm_conn_state(a), ET_CMS_REQ_SENT);
	struct et_cm_accept_param p = {.qpn = 0x22, .psn = 0xabcdef, .responder_resources = 2,
				       .initiator_depth = 4, .rnr_retry_count = 5,
				       .pdata = "welcome", .pdata_len = 7};
	assert_int_equal(et_cm_accept(B, b, &p, now), 0);
	pump();
	e = expect(A, ET_CM_EV_ESTABLISHED);
	assert_ptr_equal(e.conn, a);
	assert_ptr_equal(e.ctx, &listener_ctx + 1);
	assert_int_equal(e.peer_qpn, 0x22);
	assert_int_equal(e.peer_psn, 0xabcdef);
	assert_int_equal(e.responder_resources, 4);
	assert_int_equal(e.initiator_depth, 2);
	assert_int_equal(e.rnr_retry_count, 5);
	assert_int_equal(e.pdata_len, ET_CM_REP_PDATA);
	assert_memory_equal(e.pdata, "welcome", 7);
	e = expect(B, ET_CM_EV_ESTABLISHED);
	assert_ptr_equal(e.conn, b);
	assert_int_equal(et_cm_conn_state(a), ET_CMS_ESTABLISHED);
	assert_int_equal(et_cm_conn_state(b), ET_CMS_ESTABLISHED);
	assert_int_equal(crossed[ET_CM_REQ & 0x1f] + crossed[ET_CM_REP & 0x1f] +
			 crossed[ET_CM_RTU & 0x1f], 3);
	no_event(A);
	no_event(B);

	/* B closes: DREQ, DREP; both in time wait, then closed */
	assert_int_equal(et_cm_disconnect(B, b, now), 0);
	assert_int_equal(et_cm_disconnect(B, b, now), -EINVAL);
	pump();
	expect(A, ET_CM_EV_DISCONNECTED);
	expect(B, ET_CM_EV_DISCONNECTED);
	assert_int_equal(et_cm_conn_state(a), ET_CMS_TIMEWAIT);
	assert_int_equal(et_cm_conn_state(b), ET_CMS_TIMEWAIT);
	advance();
	assert_int_equal(et_cm_conn_state(a), ET_CMS_CLOSED);
	assert_int_equal(et_cm_conn_state(b), ET_CMS_CLOSED);
	et_cm_release(A, a, now);
	et_cm_release(B, b, now);
	assert_int_equal(et_cm_deadline(A), UINT64_MAX);
	assert_int_equal(et_cm_stats(A)->established, 1);
	assert_int_equal(et_cm_stats(B)->disconnected, 1);
	assert_int_equal(et_cm_stats(A)->tx_retries + et_cm_stats(B)->tx_retries, 0);
}

static void
test_reject(void **state)
{
	struct et_cm_event e;

	(void)state;
	struct et_cm_conn *a = connect_a(SID, NULL);
	e = expect(B, ET_CM_EV_CONNECT_REQUEST);
	assert_int_equal(et_cm_reject(B, e.conn, "go away", 7, now), 0);
	assert_int_equal(et_cm_reject(B, e.conn, NULL, 0, now), -EINVAL);
	pump();
	e = expect(A, ET_CM_EV_REJECTED);
	assert_int_equal(e.reason, ET_CM_REJ_CONSUMER);
	assert_memory_equal(e.pdata, "go away", 7);
	assert_int_equal(e.pdata_len, ET_CM_REJ_PDATA);
	assert_int_equal(et_cm_conn_state(a), ET_CMS_CLOSED);
	et_cm_release(A, a, now);
	no_event(A);
	/* no listener on the port: held for one (req_hold_ns), then invalid
	 * service ID */
	uint64_t t0 = now;

	a = connect_a(et_rdma_service_id(ET_RDMA_PS_TCP, 1), NULL);
	no_event(A);
	assert_int_equal(et_cm_stats(B)->req_held, 1);
	advance();
	assert_int_equal(now - t0, 100000000);
	e = expect(A, ET_CM_EV_REJECTED);
	assert_int_equal(e.reason, ET_CM_REJ_INVALID_SERVICE_ID);
	assert_int_equal(et_cm_stats(B)->req_no_listener, 1);
	et_cm_release(A, a, now);
	no_event(B);
	/* the listener comes while its REQ waits: the REQ is its */
	a = connect_a(et_rdma_service_id(ET_RDMA_PS_TCP, 2), NULL);
	no_event(B);
	assert_int_equal(et_cm_listen(B, et_rdma_service_id(ET_RDMA_PS_TCP, 2), NULL), 0);
	assert_int_equal(et_cm_deadline(B), 0);
	et_cm_timer(B, now);
	e = expect(B, ET_CM_EV_CONNECT_REQUEST);
	assert_int_equal(et_cm_reject(B, e.conn, NULL, 0, now), 0);
	pump();
	e = expect(A, ET_CM_EV_REJECTED);
	assert_int_equal(e.reason, ET_CM_REJ_CONSUMER);
	et_cm_release(A, a, now);
	assert_int_equal(et_cm_unlisten(B, et_rdma_service_id(ET_RDMA_PS_TCP, 2)), 0);
	assert_int_equal(et_cm_unlisten(B, SID), 0);
	assert_int_equal(et_cm_unlisten(B, SID), -ENOENT);
	assert_int_equal(et_cm_listen(B, SID, NULL), 0);
	assert_int_equal(et_cm_listen(B, SID, NULL), -EADDRINUSE);
}

/* A REQ of ours, from A to B, as bytes to tamper with. */
static void
req_bytes(uint8_t mad[ET_MAD_LEN])
{
	struct et_cm_connect_param p = {.dst_ip = IP_B, .service_id = SID, .qpn = 0x100,
					.psn = 1, .mtu = 1024};
	struct et_cm_out o;
	int err;

	assert_non_null(et_cm_connect(A, &p, NULL, now, &err));
	assert_true(et_cm_pop_out(A, &o));
	memcpy(mad, o.mad, ET_MAD_LEN);
}

/* B's answer to a REQ: a REJ and its reason. */
static uint16_t
b_rejects(const uint8_t *mad)
{
	struct et_cm_out o;
	struct et_cm_msg m;

	assert_int_equal(et_cm_input(B, IP_A, mad, ET_MAD_LEN, now), 0);
	assert_true(et_cm_pop_out(B, &o));
	assert_int_equal(o.dst_ip, IP_A);
	assert_int_equal(et_cm_parse(o.mad, sizeof(o.mad), &m), 0);
	assert_int_equal(m.hdr.attr_id, ET_CM_REJ);
	assert_int_equal(m.u.rej.msg_rejected, ET_CM_MSG_REQ);
	assert_false(et_cm_pop_out(B, &o));
	return m.u.rej.reason;
}

static void
test_bad_req(void **state)
{
	uint8_t mad[ET_MAD_LEN], bad[ET_MAD_LEN];
	const int pd = ET_MAD_HDR_LEN + 140; /* the REQ's private data */

	(void)state;
	req_bytes(mad);
	/* rdma_cm's header: garbage, IPv6, another host */
	memcpy(bad, mad, sizeof(bad));
	memset(bad + pd, 0xa5, ET_CMA_HDR_LEN);
	assert_int_equal(b_rejects(bad), ET_CM_REJ_CONSUMER);
	memcpy(bad, mad, sizeof(bad));
	bad[pd + 1] = 0x60;
	assert_int_equal(b_rejects(bad), ET_CM_REJ_CONSUMER);
	memcpy(bad, mad, sizeof(bad));
	bad[pd + 35] ^= 1;
	assert_int_equal(b_rejects(bad), ET_CM_REJ_CONSUMER);
	assert_int_equal(et_cm_stats(B)->req_bad_pdata, 3);
	/* UC, an MTU code of none, a GID not B's */
	memcpy(bad, mad, sizeof(bad));
	bad[ET_MAD_HDR_LEN + 43] |= 1 << 1;
	assert_int_equal(b_rejects(bad), ET_CM_REJ_INVALID_TRANSPORT);
	memcpy(bad, mad, sizeof(bad));
	bad[ET_MAD_HDR_LEN + 50] = 7 << 4;
	assert_int_equal(b_rejects(bad), ET_CM_REJ_INVALID_MTU);
	memcpy(bad, mad, sizeof(bad));
	bad[ET_MAD_HDR_LEN + 72 + 15] ^= 1;
	assert_int_equal(b_rejects(bad), ET_CM_REJ_INVALID_GID);
	assert_int_equal(et_cm_stats(B)->req_bad_param, 3);
	/* a MAD of another class or version: refused, counted, unanswered */
	memcpy(bad, mad, sizeof(bad));
	bad[1] = 0x03;
	assert_int_equal(et_cm_input(B, IP_A, bad, ET_MAD_LEN, now), -ET_MAD_E_CLASS);
	bad[1] = 0x07;
	bad[2] = 1;
	assert_int_equal(et_cm_input(B, IP_A, bad, ET_MAD_LEN, now), -ET_MAD_E_CLASS_VERSION);
	assert_int_equal(et_cm_input(B, IP_A, mad, 100, now), -ET_MAD_E_TRUNC);
	assert_int_equal(et_cm_stats(B)->rx_bad[ET_MAD_E_CLASS], 1);
	assert_int_equal(et_cm_stats(B)->rx_bad[ET_MAD_E_CLASS_VERSION], 1);
	assert_int_equal(et_cm_stats(B)->rx_bad[ET_MAD_E_TRUNC], 1);
	no_event(B);
	/* and nothing else was disturbed: the REQ as it was is taken */
	assert_int_equal(et_cm_input(B, IP_A, mad, ET_MAD_LEN, now), 0);
	expect(B, ET_CM_EV_CONNECT_REQUEST);
}

static void
test_lose_req(void **state)
{
	struct et_cm_conn *a, *b;

	(void)state;
	drop[ET_CM_REQ & 0x1f] = 1;
	a = connect_a(SID, NULL);
	no_event(B);
	advance(); /* A's REQ timeout: sent again */
	b = accept_b(NULL);
	expect(A, ET_CM_EV_ESTABLISHED);
	expect(B, ET_CM_EV_ESTABLISHED);
	assert_int_equal(crossed[ET_CM_REQ & 0x1f], 2);
	assert_int_equal(et_cm_stats(A)->tx_retries, 1);
	assert_int_equal(et_cm_conn_state(a), ET_CMS_ESTABLISHED);
	assert_int_equal(et_cm_conn_state(b), ET_CMS_ESTABLISHED);
}

static void
test_lose_rep(void **state)
{
	struct et_cm_conn *a, *b;

	(void)state;
	drop[ET_CM_REP & 0x1f] = 1;
	a = connect_a(SID, NULL);
	b = accept_b(NULL);
	no_event(A);
	/* B's REP timeout (the REQ's local response timeout, 268 ms) comes
	 * before A's REQ timeout (302 ms): the REP again */
	advance();
	expect(A, ET_CM_EV_ESTABLISHED);
	expect(B, ET_CM_EV_ESTABLISHED);
	assert_int_equal(crossed[ET_CM_REP & 0x1f], 2);
	assert_int_equal(et_cm_stats(B)->tx_retries, 1);
	assert_int_equal(et_cm_conn_state(a), ET_CMS_ESTABLISHED);
	assert_int_equal(et_cm_conn_state(b), ET_CMS_ESTABLISHED);
}

/* A repeated REQ gets the REP again, byte for byte. */
static void
test_dup_req(void **state)
{
	uint8_t req[ET_MAD_LEN];
	struct et_cm_out rep1, rep2;
	struct et_cm_event e;

	(void)state;
	req_bytes(req);
	assert_int_equal(et_cm_input(B, IP_A, req, ET_MAD_LEN, now), 0);
	e = expect(B, ET_CM_EV_CONNECT_REQUEST);
	/* repeated while B's consumer decides: an MRA, then that MRA again */
	assert_int_equal(et_cm_input(B, IP_A, req, ET_MAD_LEN, now), 0);
	assert_true(et_cm_pop_out(B, &rep1));
	assert_int_equal(attr_of(rep1.mad), ET_CM_MRA);
	assert_int_equal(et_cm_conn_state(e.conn), ET_CMS_MRA_REQ_SENT);
	assert_int_equal(et_cm_input(B, IP_A, req, ET_MAD_LEN, now), 0);
	assert_true(et_cm_pop_out(B, &rep2));
	assert_memory_equal(rep1.mad, rep2.mad, ET_MAD_LEN);
	assert_int_equal(et_cm_accept(B, e.conn, &(struct et_cm_accept_param){.qpn = 7, .psn = 8},
				      now), 0);
	assert_true(et_cm_pop_out(B, &rep1));
	assert_int_equal(attr_of(rep1.mad), ET_CM_REP);
	assert_int_equal(et_cm_input(B, IP_A, req, ET_MAD_LEN, now), 0);
	assert_true(et_cm_pop_out(B, &rep2));
	assert_memory_equal(rep1.mad, rep2.mad, ET_MAD_LEN);
	assert_int_equal(et_cm_stats(B)->rx_dups, 3);
	assert_int_equal(et_cm_stats(B)->mra_sent, 1);
	no_event(B);
}

static void
test_lose_rtu(void **state)
{
	struct et_cm_conn *a, *b;

	(void)state;
	drop[ET_CM_RTU & 0x1f] = 1;
	a = connect_a(SID, NULL);
	b = accept_b(NULL);
	expect(A, ET_CM_EV_ESTABLISHED);
	no_event(B);
	advance(); /* B's REP again; A answers the repeated REP with its RTU */
	expect(B, ET_CM_EV_ESTABLISHED);
	assert_int_equal(et_cm_stats(A)->rx_dups, 1);
	assert_int_equal(crossed[ET_CM_RTU & 0x1f], 2);
	assert_int_equal(et_cm_conn_state(a), ET_CMS_ESTABLISHED);
	assert_int_equal(et_cm_conn_state(b), ET_CMS_ESTABLISHED);
	no_event(A);
}

static void
test_lose_dreq_drep(void **state)
{
	struct et_cm_conn *a, *b;

	(void)state;
	establish(&a, &b);
	drop[ET_CM_DREQ & 0x1f] = 1;
	drop[ET_CM_DREP & 0x1f] = 1;
	assert_int_equal(et_cm_disconnect(A, a, now), 0);
	pump();
	no_event(B);
	advance(); /* the DREQ again; B's DREP is lost */
	expect(B, ET_CM_EV_DISCONNECTED);
	no_event(A);
	advance(); /* the DREQ once more: B, in time wait, answers again */
	expect(A, ET_CM_EV_DISCONNECTED);
	assert_int_equal(et_cm_stats(A)->tx_retries, 2);
	assert_int_equal(et_cm_stats(B)->rx_dups, 1);
	assert_int_equal(crossed[ET_CM_DREQ & 0x1f], 3);
	assert_int_equal(crossed[ET_CM_DREP & 0x1f], 2);
	assert_int_equal(et_cm_conn_state(a), ET_CMS_TIMEWAIT);
	assert_int_equal(et_cm_conn_state(b), ET_CMS_TIMEWAIT);
	/* the consumers let go in time wait: freed when it ends */
	et_cm_release(A, a, now);
	et_cm_release(B, b, now);
	while (et_cm_deadline(A) != UINT64_MAX || et_cm_deadline(B) != UINT64_MAX)
		advance();
	no_event(A);
	no_event(B);
}

static void
test_unreachable(void **state)
{
	struct et_cm_conn *a, *b;
	struct et_cm_event e;

	(void)state;
	/* every REQ lost: 1 + max CM retries of them, then REJ timeout */
	drop[ET_CM_REQ & 0x1f] = 1000;
	a = connect_a(SID, NULL);
	while (et_cm_conn_state(a) != ET_CMS_CLOSED)
		advance();
	expect(A, ET_CM_EV_UNREACHABLE);
	assert_int_equal(crossed[ET_CM_REQ & 0x1f], 8);
	assert_int_equal(crossed[ET_CM_REJ & 0x1f], 1);
	assert_int_equal(et_cm_stats(A)->unreachable, 1);
	assert_int_equal(et_cm_stats(B)->stray, 1); /* the REJ found nothing at B */
	et_cm_release(A, a, now);
	drop[ET_CM_REQ & 0x1f] = 0;

	/* every RTU lost: B sends its REP 8 times, then gives up with a REJ
	 * timeout, which closes A's connection */
	drop[ET_CM_RTU & 0x1f] = 1000;
	a = connect_a(SID, NULL);
	b = accept_b(NULL);
	expect(A, ET_CM_EV_ESTABLISHED);
	while (et_cm_conn_state(b) != ET_CMS_CLOSED)
		advance();
	expect(B, ET_CM_EV_UNREACHABLE);
	e = expect(A, ET_CM_EV_DISCONNECTED);
	assert_ptr_equal(e.conn, a);
	assert_int_equal(et_cm_stats(B)->unreachable, 1);
	assert_int_equal(et_cm_stats(A)->rx_dups, 7);
}

static void
test_mra(void **state)
{
	struct et_cm_conn *a;
	struct et_cm_event e;

	(void)state;
	a = connect_a(SID, NULL);
	e = expect(B, ET_CM_EV_CONNECT_REQUEST);
	/* B's consumer takes its time: A's REQ again, B's MRA, A waits the
	 * service timeout it names (4.3 s) */
	advance();
	assert_int_equal(et_cm_stats(B)->mra_sent, 1);
	assert_int_equal(et_cm_stats(A)->mra_rcvd, 1);
	assert_int_equal(et_cm_conn_state(a), ET_CMS_MRA_REQ_RCVD);
	assert_true(et_cm_deadline(A) - now > 4000000000ull);
	assert_int_equal(et_cm_accept(B, e.conn, &(struct et_cm_accept_param){.qpn = 7}, now), 0);
	pump();
	expect(A, ET_CM_EV_ESTABLISHED);
	expect(B, ET_CM_EV_ESTABLISHED);
	assert_int_equal(et_cm_deadline(A), UINT64_MAX);
}

/* MADs for no connection: a DREP for a DREQ (as Linux), a REJ for a
 * REP, nothing for the others; at most the rate limit's answers. */
static void
test_stray(void **state)
{
	struct et_cm_msg m;
	uint8_t mad[ET_MAD_LEN];
	struct et_cm_out o;

	(void)state;
	et_cm_msg_init(&m, ET_CM_DREQ, 99);
	m.u.ids.local_comm_id = 0x1234;
	m.u.ids.remote_comm_id = 0x5678;
	assert_int_equal(et_cm_build(mad, &m), ET_MAD_LEN);
	assert_int_equal(et_cm_input(B, IP_A, mad, ET_MAD_LEN, now), 0);
	assert_true(et_cm_pop_out(B, &o));
	assert_int_equal(et_cm_parse(o.mad, ET_MAD_LEN, &m), 0);
	assert_int_equal(m.hdr.attr_id, ET_CM_DREP);
	assert_int_equal(m.hdr.tid, 99);
	assert_int_equal(m.u.ids.local_comm_id, 0x5678);
	assert_int_equal(m.u.ids.remote_comm_id, 0x1234);
	assert_int_equal(et_cm_stats(B)->dreq_unknown, 1);

	et_cm_msg_init(&m, ET_CM_REP, 98);
	m.u.rep.local_comm_id = 0x4321;
	m.u.rep.remote_comm_id = 0x8765;
	assert_int_equal(et_cm_build(mad, &m), ET_MAD_LEN);
	assert_int_equal(et_cm_input(B, IP_A, mad, ET_MAD_LEN, now), 0);
	assert_true(et_cm_pop_out(B, &o));
	assert_int_equal(et_cm_parse(o.mad, ET_MAD_LEN, &m), 0);
	assert_int_equal(m.hdr.attr_id, ET_CM_REJ);
	assert_int_equal(m.u.rej.reason, ET_CM_REJ_INVALID_COMM_ID);
	assert_int_equal(m.u.rej.msg_rejected, ET_CM_MSG_REP);
	assert_int_equal(m.u.rej.remote_comm_id, 0x4321);
	assert_int_equal(et_cm_stats(B)->rep_unknown, 1);

	for (uint16_t attr = ET_CM_MRA; attr <= ET_CM_DREP; attr++) {
		if (attr == ET_CM_REP || attr == ET_CM_DREQ)
			continue;
		et_cm_msg_init(&m, attr, 97);
		assert_int_equal(et_cm_build(mad, &m), ET_MAD_LEN);
		assert_int_equal(et_cm_input(B, IP_A, mad, ET_MAD_LEN, now), 0);
		assert_false(et_cm_pop_out(B, &o));
	}
	assert_int_equal(et_cm_stats(B)->stray, 4);
	/* a flood of stray DREQs: the burst answered, the rest counted */
	et_cm_msg_init(&m, ET_CM_DREQ, 96);
	assert_int_equal(et_cm_build(mad, &m), ET_MAD_LEN);
	for (int i = 0; i < 100; i++)
		assert_int_equal(et_cm_input(B, IP_A, mad, ET_MAD_LEN, now), 0);
	int answered = 0;
	while (et_cm_pop_out(B, &o))
		answered++;
	assert_int_equal(answered, 16 - 2);
	assert_int_equal(et_cm_stats(B)->answers_limited, 100 - answered);
	no_event(B);
}

/* A DREQ naming another QP is dropped (as Linux); releases in every state. */
static void
test_release(void **state)
{
	struct et_cm_conn *a, *b;
	struct et_cm_event e;
	struct et_cm_msg m;
	uint8_t mad[ET_MAD_LEN];

	(void)state;
	establish(&a, &b);
	et_cm_msg_init(&m, ET_CM_DREQ, 1);
	m.u.ids.local_comm_id = et_cm_conn_local_id(a);
	m.u.ids.remote_comm_id = et_cm_conn_local_id(b);
	m.u.ids.remote_qpn = 0x23;
	assert_int_equal(et_cm_build(mad, &m), ET_MAD_LEN);
	assert_int_equal(et_cm_input(B, IP_A, mad, ET_MAD_LEN, now), 0);
	assert_int_equal(et_cm_stats(B)->dreq_bad_qpn, 1);
	assert_int_equal(et_cm_conn_state(b), ET_CMS_ESTABLISHED);
	/* established, let go: a DREQ, no event for A */
	et_cm_release(A, a, now);
	pump();
	expect(B, ET_CM_EV_DISCONNECTED);
	no_event(A);
	et_cm_release(B, b, now);

	/* a REQ let go before any answer: REJ timeout, which B finds by
	 * A's ID and GUID (it never told A its own) */
	a = connect_a(SID, NULL);
	e = expect(B, ET_CM_EV_CONNECT_REQUEST);
	et_cm_release(A, a, now);
	pump();
	e = expect(B, ET_CM_EV_REJECTED);
	assert_int_equal(e.reason, ET_CM_REJ_TIMEOUT);
	assert_int_equal(et_cm_conn_state(e.conn), ET_CMS_CLOSED);
	et_cm_release(B, e.conn, now);

	/* a request let go by B: consumer reject */
	a = connect_a(SID, NULL);
	e = expect(B, ET_CM_EV_CONNECT_REQUEST);
	et_cm_release(B, e.conn, now);
	pump();
	e = expect(A, ET_CM_EV_REJECTED);
	assert_int_equal(e.reason, ET_CM_REJ_CONSUMER);
	et_cm_release(A, a, now);
	while (et_cm_deadline(A) != UINT64_MAX || et_cm_deadline(B) != UINT64_MAX)
		advance();
	no_event(A);
	no_event(B);
}

#define MANY 30000

/* n connections at once from A to B, each established, then closed by
 * release on both sides, time wait run out: every slot free again. */
static void
connect_many(int n)
{
	static struct et_cm_conn *a[MANY], *b[MANY];
	struct et_cm_event e;
	int err, k = 0;

	for (int i = 0; i < n; i++) {
		struct et_cm_connect_param p = {.dst_ip = IP_B, .service_id = SID, .qpn = 0x100 + i,
						.psn = (uint32_t)i, .mtu = 4096};

		a[i] = et_cm_connect(A, &p, (void *)(uintptr_t)i, now, &err);
		assert_non_null(a[i]);
	}
	pump();
	while (et_cm_poll_event(B, &e)) {
		assert_int_equal(e.type, ET_CM_EV_CONNECT_REQUEST);
		b[e.peer_qpn - 0x100] = e.conn;
		assert_int_equal(et_cm_accept(B, e.conn,
					      &(struct et_cm_accept_param){.qpn = e.peer_qpn}, now), 0);
		k++;
	}
	assert_int_equal(k, n);
	pump();
	for (k = 0; et_cm_poll_event(A, &e); k++) {
		assert_int_equal(e.type, ET_CM_EV_ESTABLISHED);
		assert_ptr_equal(a[(uintptr_t)e.ctx], e.conn);
	}
	assert_int_equal(k, n);
	for (int i = 0; i < n; i++) {
		et_cm_release(A, a[i], now);
		et_cm_release(B, b[i], now);
	}
	pump();
	while (et_cm_deadline(A) != UINT64_MAX || et_cm_deadline(B) != UINT64_MAX)
		advance();
	assert_int_equal(et_cm_stats(A)->established, n);
	assert_int_equal(et_cm_stats(B)->disconnected, n);
	assert_int_equal(et_cm_stats(A)->tx_retries + et_cm_stats(B)->tx_retries, 0);
}

/* Many at once: 1000 connections, closed, their slots freed. */
static void
test_many(void **state)
{
	struct et_cm_conn *a;
	int err;

	(void)state;
	connect_many(1000);
	/* all slots free again: 1024 more fit */
	for (int i = 0; i < 1024; i++) {
		struct et_cm_connect_param p = {.dst_ip = IP_B, .service_id = SID, .qpn = 1,
						.mtu = 256};

		a = et_cm_connect(A, &p, NULL, now, &err);
		assert_non_null(a);
	}
	struct et_cm_connect_param p = {.dst_ip = IP_B, .service_id = SID, .qpn = 1, .mtu = 256};
	assert_null(et_cm_connect(A, &p, NULL, now, &err));
	assert_int_equal(err, -ENOSPC);
	p.mtu = 1000;
	assert_null(et_cm_connect(A, &p, NULL, now, &err));
	assert_int_equal(err, -EINVAL);
}

/* SIDR (RDMA CM's UDP port space, udaddy's): the request, its answer with
 * the QPN and Q_Key and private data both ways; the answer lost and asked
 * for again (answered from time wait, one request event); a reject; no
 * listener; no answer at all (unreachable, and no REJ: SIDR has none). */
#define SID_UDP et_rdma_service_id(ET_RDMA_PS_UDP, 7174)

static struct et_cm_conn *
sidr_a(void)
{
	struct et_cm_sidr_param p = {.dst_ip = IP_B, .service_id = SID_UDP, .src_port = 40001,
				     .pdata = "udaddy", .pdata_len = 6};
	struct et_cm_conn *c;
	int err;

	c = et_cm_sidr_request(A, &p, &sidr_ctx, now, &err);
	assert_non_null(c);
	assert_int_equal(err, 0);
	assert_int_equal(et_cm_conn_state(c), ET_CMS_SIDR_REQ_SENT);
	pump();
	return c;
}

static void
test_sidr(void **state)
{
	struct et_cm_accept_param p = {.qpn = 0x33, .qkey = 0x01234567, .pdata = "ok",
				       .pdata_len = 2};
	struct et_cm_conn *a, *b;
	struct et_cm_event e;

	(void)state;
	assert_int_equal(et_cm_listen(B, SID_UDP, &listener_ctx), 0);
	a = sidr_a();
	e = expect(B, ET_CM_EV_CONNECT_REQUEST);
	assert_true(e.sidr);
	assert_int_equal(e.peer_ip, IP_A);
	assert_int_equal(e.peer_port, 40001);
	assert_int_equal(e.service_id, SID_UDP);
	assert_int_equal(e.pdata_len, ET_CM_SIDR_REQ_PDATA - ET_CMA_HDR_LEN);
	assert_memory_equal(e.pdata, "udaddy", 6);
	b = e.conn;
	assert_int_equal(et_cm_conn_state(b), ET_CMS_SIDR_REQ_RCVD);
	/* the answer lost: A asks again on its timeout, B answers again */
	drop[ET_CM_SIDR_REP & 0x1f] = 1;
	assert_int_equal(et_cm_accept(B, b, &p, now), 0);
	assert_int_equal(et_cm_accept(B, b, &p, now), -EINVAL);
	pump();
	assert_int_equal(et_cm_conn_state(b), ET_CMS_TIMEWAIT);
	no_event(A);
	advance();
	e = expect(A, ET_CM_EV_SIDR_REPLY);
	assert_ptr_equal(e.conn, a);
	assert_ptr_equal(e.ctx, &sidr_ctx);
	assert_int_equal(e.reason, ET_CM_SIDR_SUCCESS);
	assert_int_equal(e.peer_qpn, 0x33);
	assert_int_equal(e.qkey, 0x01234567);
	assert_int_equal(e.pdata_len, ET_CM_SIDR_REP_PDATA);
	assert_memory_equal(e.pdata, "ok", 2);
	assert_int_equal(crossed[ET_CM_SIDR_REQ & 0x1f], 2);
	assert_int_equal(crossed[ET_CM_SIDR_REP & 0x1f], 2);
	assert_int_equal(et_cm_conn_state(a), ET_CMS_CLOSED);
	no_event(B);
	et_cm_release(A, a, now);
	et_cm_release(B, b, now);
	while (et_cm_deadline(B) != UINT64_MAX)
		advance();

	/* a reject, with private data */
	a = sidr_a();
	e = expect(B, ET_CM_EV_CONNECT_REQUEST);
	assert_int_equal(et_cm_reject(B, e.conn, "no", 2, now), 0);
	pump();
	e = expect(A, ET_CM_EV_SIDR_REPLY);
	assert_int_equal(e.reason, ET_CM_SIDR_REJECT);
	assert_memory_equal(e.pdata, "no", 2);
	et_cm_release(A, a, now);

	/* nobody listens: held a while, then unsupported */
	assert_int_equal(et_cm_unlisten(B, SID_UDP), 0);
	a = sidr_a();
	no_event(A);
	advance();
	e = expect(A, ET_CM_EV_SIDR_REPLY);
	assert_int_equal(e.reason, ET_CM_SIDR_UNSUPPORTED);
	et_cm_release(A, a, now);
	no_event(B);

	/* no answer ever: unreachable after the retries, no REJ */
	memset(crossed, 0, sizeof(crossed));
	drop[ET_CM_SIDR_REQ & 0x1f] = 100;
	a = sidr_a();
	while (!et_cm_poll_event(A, &e))
		advance();
	assert_int_equal(e.type, ET_CM_EV_UNREACHABLE);
	assert_ptr_equal(e.conn, a);
	assert_int_equal(crossed[ET_CM_SIDR_REQ & 0x1f], 8); /* 7 retries */
	assert_int_equal(crossed[ET_CM_REJ & 0x1f], 0);
	et_cm_release(A, a, now);
	no_event(B);
}

/* Tens of thousands at once, on the defaults (room for ET_CM_MAX_CONNS):
 * what finds a connection or the next timer must not look at them all
 * (30,000 connections, each MAD one lookup: seconds if it did). */
static int
setup_big(void **state)
{
	(void)state;
	A = make(IP_A, 0x0200000000000001ull, ET_CM_MAX_CONNS);
	B = make(IP_B, 0x0200000000000002ull, ET_CM_MAX_CONNS);
	now = 1000;
	memset(drop, 0, sizeof(drop));
	memset(crossed, 0, sizeof(crossed));
	return A && B && et_cm_listen(B, SID, &listener_ctx) == 0 ? 0 : -1;
}

static void
test_tens_of_thousands(void **state)
{
	(void)state;
	connect_many(MANY);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_connect, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reject, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_req, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lose_req, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lose_rep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dup_req, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lose_rtu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lose_dreq_drep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unreachable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sidr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mra, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stray, setup, teardown),
		cmocka_unit_test_setup_teardown(test_release, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tens_of_thousands, setup_big, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
