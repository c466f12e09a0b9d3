/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-node --oob cm: no TCP.  Connections by RDMA CM on the wire
 * (host/et_rdmacm: MADs to QP 1), as rdma_cm applications make them, and
 * over them perftest -R (ib_write_bw -R, ib_send_lat -R, ...): a first
 * connection whose QP carries perftest's whole exchange as SENDs, one
 * message each (version, page, cache line, MTU, the address messages in
 * binary, the figures); a sync on it, then one connection per test QP to
 * the same port, another sync, and the test as over TCP (connect.c,
 * run.c, finish.c speak it through struct oob's message transport).
 * rdmacm-utils' ucmatose and rping run on its connections (cm_tools.c);
 * ucmatose's client asks for a window of them at once, however many.
 *
 * The port of a server is rdma_cm's TCP port space's --oob-port; --client
 * names the peer's RoCE address.  At the end every connection is closed
 * with DREQ/DREP while the port is still polled (cm_close).
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/et_rdmacm.h"
#include "host/et_worker.h"
#include "et_cli.h"
#include "et_json.h"
#include "node.h"

#define CHAN_RECVS 4
#define CHAN_MSG 64          /* perftest's messages: 56 bytes at most */
#define WAIT_MS 60000        /* for the peer to connect or answer */
#define CLOSE_MS 3000        /* for the connections to close, and 1 ms per 10 of them */
/* Requests (REQ or DREQ) we have out at once, so that each is answered
 * within the CM's response timeout (268 ms) however many are asked for:
 * from WINDOW_FIRST, one more per answer up to WINDOW_MAX, halved (down to
 * WINDOW_MIN) whenever the CM had to send one again (the peer slower than
 * its timeouts, as on a busy machine), so that retries do not feed on
 * themselves. */
#define WINDOW_FIRST 32
#define WINDOW_MIN 8
#define WINDOW_MAX 256

/* A connection's state as the node follows it. */
enum conn_state { C_NONE, C_WAIT, C_UP, C_DOWN, C_REJECTED, C_UNREACHABLE, C_STATES };

struct cm_node {
	struct et_rdmacm *rcm;
	/* connection i is the test's QP i; i == qps perftest -R's exchange */
	struct et_rdmacm_id **id;
	uint8_t *st;         /* enum conn_state */
	uint16_t *reason;    /* C_REJECTED: the peer's REJ reason */
	uint32_t n_st[C_STATES]; /* the test's connections (not the exchange's) by state */
	uint32_t n_req;      /* a server: the test's requests accepted */
	uint64_t t_first, t_up; /* the first request, all the test's connections up */
	uint32_t n_dreq;     /* DREQs sent by cm_disconnect_all */
	uint32_t window;     /* requests out at once */
	uint64_t retries_seen; /* the CM's tx_retries when the window last changed */
	/* perftest -R's exchange: its QP, CQs and message slots */
	struct et_qp *chan;
	struct et_cq scq, rcq;
	uint8_t *chan_buf;   /* CHAN_RECVS receive slots, then the send slot */
	uint32_t chan_key;
	char why[128];       /* the message transport's last failure */
};

/* Connection i's state is s, counted (the test's connections only). */
static void
set_st(struct node *n, uint32_t i, enum conn_state s)
{
	struct cm_node *c = n->cm;

	if (i < n->o.qps) {
		c->n_st[c->st[i]]--;
		c->n_st[s]++;
		if (s == C_UP && c->n_st[C_UP] == n->o.qps)
			c->t_up = et_tsc_ns();
		if ((s == C_UP || s == C_DOWN) && c->window < WINDOW_MAX)
			c->window++; /* an answer */
	}
	c->st[i] = (uint8_t)s;
}

/* The window, halved if the CM sent something again since last asked. */
static uint32_t
window(struct cm_node *c)
{
	uint64_t r = et_rdmacm_cm_stats(c->rcm)->tx_retries;

	if (r != c->retries_seen) {
		c->retries_seen = r;
		c->window = c->window / 2 > WINDOW_MIN ? c->window / 2 : WINDOW_MIN;
	}
	return c->window;
}

uint64_t
cm_close_ms(const struct node *n)
{
	return CLOSE_MS + n->o.qps / 10;
}

/* ---- waiting: the port and the connection manager polled ---- */

void
cm_poll_once(struct node *n)
{
	if (et_nic_poll(&n->lane[0].nic, et_tsc_ns()) == 0)
		usleep(20); /* the exchange is slow anyway; leave the core to others */
	cm_poll(n);
}

/* Until done(n, arg), at most ms; false at the end of the time or on a
 * stop. */
static bool
wait_until(struct node *n, bool (*done)(struct node *n, uint32_t arg), uint32_t arg, uint64_t ms)
{
	uint64_t until = et_tsc_ns() + ms * 1000000;

	while (!node_stop && !done(n, arg) && et_tsc_ns() < until)
		cm_poll_once(n);
	return done(n, arg);
}

/* ---- perftest -R's exchange: SENDs on the first connection's QP ---- */

static void
chan_post_recv(struct cm_node *c, uint32_t slot)
{
	struct et_recv_wr rw = {.wr_id = slot, .addr = c->chan_buf + slot * CHAN_MSG,
				.length = CHAN_MSG, .lkey = c->chan_key};

	et_qp_post_recv(c->chan, &rw);
}

/* A completion on cq, the port polled meanwhile. */
static int
chan_wait(struct oob *o, struct et_cq *cq, struct et_wc *wc)
{
	struct node *n = o->msg_ctx;
	struct cm_node *c = n->cm;
	uint64_t until = et_tsc_ns() + o->timeout_ms * 1000000;

	while (!*o->stop && et_tsc_ns() < until) {
		if (et_cq_poll(cq, wc, 1))
			return 0;
		if (c->st[n->o.qps] == C_DOWN) {
			o->why = "the peer disconnected";
			return -1;
		}
		cm_poll_once(n);
	}
	snprintf(c->why, sizeof(c->why), "nothing from the peer for %" PRIu64 " s",
		 o->timeout_ms / 1000);
	o->why = *o->stop ? "interrupted" : c->why;
	return -1;
}

static int
chan_write(struct oob *o, const void *buf, size_t len)
{
	struct node *n = o->msg_ctx;
	struct cm_node *c = n->cm;
	uint8_t *slot = c->chan_buf + CHAN_RECVS * CHAN_MSG;
	struct et_send_wr wr = {.wr_id = CHAN_RECVS, .opcode = ET_WR_SEND, .local_addr = slot,
				.length = (uint32_t)len, .lkey = c->chan_key};
	struct et_wc wc;

	if (len > CHAN_MSG) {
		o->why = "a message longer than the tool takes";
		return -1;
	}
	memcpy(slot, buf, len);
	if (et_nic_post_send(&n->lane[0].nic, c->chan, &wr)) {
		o->why = "cannot post a SEND on the exchange's QP";
		return -1;
	}
	if (chan_wait(o, &c->scq, &wc))
		return -1;
	if (wc.status == ET_WC_WR_FLUSH_ERR && o->closing && c->st[n->o.qps] == C_DOWN) {
		/* its ACK lost, and the peer, which had it, disconnected */
		et_info("RDMA CM: the peer closed before it acknowledged our last message");
		return 0;
	}
	if (wc.status != ET_WC_SUCCESS) {
		o->why = et_wc_status_str(wc.status);
		return -1;
	}
	return 0;
}

static int
chan_read(struct oob *o, void *buf, size_t len)
{
	struct node *n = o->msg_ctx;
	struct cm_node *c = n->cm;
	struct et_wc wc;
	uint32_t slot;

	if (chan_wait(o, &c->rcq, &wc))
		return -1;
	if (wc.status != ET_WC_SUCCESS) {
		o->why = et_wc_status_str(wc.status);
		return -1;
	}
	slot = (uint32_t)wc.wr_id;
	if (wc.byte_len == len)
		memcpy(buf, c->chan_buf + slot * CHAN_MSG, len);
	chan_post_recv(c, slot);
	if (wc.byte_len != len) {
		snprintf(c->why, sizeof(c->why), "the peer sent %u bytes where %zu belong",
			 wc.byte_len, len);
		o->why = c->why;
		return -1;
	}
	return 0;
}

static bool
chan_pending(struct oob *o)
{
	struct node *n = o->msg_ctx;

	return et_cq_count(&n->cm->rcq) > 0;
}

static const struct oob_msg_ops chan_ops = {chan_write, chan_read, chan_pending};

/* ---- connections ---- */

/* A QP for connection i to ip: the test's QP i, or (i == qps) the
 * exchange's, on CQs of its own, its receives posted. */
static struct et_qp *
make_qp(struct node *n, uint32_t i, uint32_t ip, uint32_t mtu)
{
	struct cm_node *c = n->cm;
	struct et_qp_attr a;

	qp_attr(n, i, &a);
	a.dest_ip = ip;
	a.mtu = mtu;
	if (i < n->o.qps)
		return n->qp[i] = et_host_qp_create(&n->lane[0].host, &a);
	c->chan = et_nic_qp_create(&n->lane[0].nic, &a, &n->lane[0].host.mrs, &c->scq, &c->rcq);
	for (uint32_t s = 0; c->chan && s < CHAN_RECVS; s++)
		chan_post_recv(c, s);
	return c->chan;
}

/* Ours: the peer's QP retries as the tools ask (7: for ever; ours stops at
 * 6, qp_attr); READs and atomics: the rdmacm-utils tools ask for one each
 * way; perftest's as many as our QP answers (responder resources) and
 * has out (initiator depth). */
static struct et_rdmacm_conn_param
conn_param(const struct node *n)
{
	bool one = is_rdmacm_tool(n->o.mode);
	struct et_qp_attr a;

	et_qp_attr_default(&a);
	return (struct et_rdmacm_conn_param){
		.psn = n->me.psn, .mtu = n->o.mtu, .rnr_retry_count = 7, .retry_count = 7,
		.responder_resources = one ? 1 : NODE_RD_ATOMIC,
		.initiator_depth = one ? 1 : a.max_rd_atomic};
}

/* A server's: the exchange's first (perftest -R), then the test's (our
 * client may ask for them before our answer to the sync has been
 * acknowledged: we take them whenever they come). */
static void
on_request(struct node *n, const struct et_rdmacm_event *ev)
{
	struct cm_node *c = n->cm;
	bool chan = is_perftest(&n->o) && c->id[n->o.qps] == NULL;
	uint32_t i = chan ? n->o.qps : c->n_req;
	struct et_rdmacm_conn_param p = conn_param(n);
	char ip[INET_ADDRSTRLEN];
	struct et_qp *qp;

	if ((!chan && c->n_req == n->o.qps) ||
	    (qp = make_qp(n, i, ev->peer_ip, ev->mtu)) == NULL) {
		et_warn("RDMA CM: a connection request from %s we did not expect: rejected",
			ipv4_str(ev->peer_ip, ip));
		et_rdmacm_reject(c->rcm, ev->id, "unexpected", 10, et_tsc_ns());
		et_rdmacm_release(c->rcm, ev->id, et_tsc_ns());
		return;
	}
	if (n->them.ip == 0)
		n->them.ip = ev->peer_ip;
	if (n->o.mode == MODE_UCMATOSE)
		ucmatose_recvs(n, i);
	if (n->o.mode == MODE_RPING)
		rping_recvs(n);
	p.responder_resources = ev->responder_resources;
	p.initiator_depth = ev->initiator_depth;
	et_rdmacm_id_set_ctx(ev->id, (void *)(uintptr_t)(i + 1));
	c->id[i] = ev->id;
	set_st(n, i, C_WAIT);
	if (!chan && c->n_req++ == 0)
		c->t_first = et_tsc_ns();
	if (et_rdmacm_accept(c->rcm, ev->id, qp, &p, et_tsc_ns()))
		set_st(n, i, C_UNREACHABLE); /* cannot be: the QP is new */
}

void
cm_poll(struct node *n)
{
	struct cm_node *c = n->cm;
	struct et_rdmacm_event ev;

	et_rdmacm_poll(c->rcm, et_tsc_ns());
	while (et_rdmacm_get_event(c->rcm, &ev)) {
		uint32_t i = (uint32_t)((uintptr_t)ev.ctx - 1);

		switch (ev.type) {
		case ET_CM_EV_CONNECT_REQUEST:
			on_request(n, &ev);
			break;
		case ET_CM_EV_ESTABLISHED:
			set_st(n, i, C_UP);
			break;
		case ET_CM_EV_DISCONNECTED:
			set_st(n, i, C_DOWN);
			break;
		case ET_CM_EV_REJECTED:
			set_st(n, i, C_REJECTED);
			c->reason[i] = ev.reason;
			break;
		default:
			set_st(n, i, C_UNREACHABLE);
			break;
		}
	}
}

static bool
answered(struct node *n, uint32_t i)
{
	return n->cm->st[i] != C_WAIT;
}

/* Connection i's failure said: -1. */
static int
conn_failed(struct node *n, uint32_t i)
{
	struct cm_node *c = n->cm;
	const char *what = i == n->o.qps ? "the exchange's connection" : "a test connection";
	char ip[INET_ADDRSTRLEN];

	if (node_stop)
		return -1;
	ipv4_str(n->them.ip, ip);
	switch (c->st[i]) {
	case C_REJECTED:
		return et_cli_error("RDMA CM: %s rejected %s (port %u): %s%s", ip, what,
				    n->o.oob_port, et_cm_rej_reason_str(c->reason[i]),
				    c->reason[i] == ET_CM_REJ_INVALID_SERVICE_ID
				    ? ": nobody listens there (does the peer run the tool?)" : "");
	case C_UNREACHABLE:
		return et_cli_error("RDMA CM: no answer from %s to %s after the connection "
				    "manager's retries", ip, what);
	case C_DOWN:
		return et_cli_error("RDMA CM: %s closed %s", ip, what);
	default:
		return et_cli_error("RDMA CM: %s: no answer from %s in %u s", what, ip,
				    WAIT_MS / 1000);
	}
}

/* A client's REQ for connection i (qps: the exchange's). */
static int
connect_start(struct node *n, uint32_t i)
{
	struct cm_node *c = n->cm;
	struct et_rdmacm_conn_param p = conn_param(n);
	struct et_qp *qp = i == n->o.qps ? c->chan : n->qp[i];
	int err;

	if (i < n->o.qps && c->t_first == 0)
		c->t_first = et_tsc_ns();
	set_st(n, i, C_WAIT);
	c->id[i] = et_rdmacm_connect(c->rcm, n->them.ip, n->o.oob_port, qp, &p,
				     (void *)(uintptr_t)(i + 1), et_tsc_ns(), &err);
	if (c->id[i] == NULL) {
		set_st(n, i, C_NONE);
		return et_cli_error("RDMA CM: cannot connect QP %u: %s", i, strerror(-err));
	}
	return 0;
}

/* A client's connection i (qps: the exchange's) to the peer's port, until
 * established; while nobody listens there (perftest's server listens
 * again for the test's connections) it tries again, as perftest's client
 * does, within WAIT_MS. */
static int
connect_one(struct node *n, uint32_t i)
{
	struct cm_node *c = n->cm;
	uint64_t until = et_tsc_ns() + WAIT_MS * 1000000ull;

	for (;;) {
		if (connect_start(n, i))
			return -1;
		wait_until(n, answered, i, WAIT_MS);
		if (c->st[i] == C_UP)
			return 0;
		if (c->st[i] != C_REJECTED || c->reason[i] != ET_CM_REJ_INVALID_SERVICE_ID ||
		    node_stop || et_tsc_ns() > until)
			return conn_failed(n, i);
		/* the QP, still in RESET, tries again in 100 ms */
		et_rdmacm_release(c->rcm, c->id[i], et_tsc_ns());
		c->id[i] = NULL;
		for (uint64_t t = et_tsc_ns() + 100000000; et_tsc_ns() < t && !node_stop;)
			cm_poll_once(n);
	}
}

static bool
all_taken(struct node *n, uint32_t count)
{
	return n->cm->n_req == count;
}

/* The test's connections (upto: all of them) are all up. */
static bool
all_up(struct node *n, uint32_t upto)
{
	return n->cm->n_st[C_UP] == upto;
}

/* One of the test's connections was refused, given up or closed. */
static bool
any_failed(const struct cm_node *c)
{
	return c->n_st[C_REJECTED] || c->n_st[C_UNREACHABLE] || c->n_st[C_DOWN];
}

/* Fewer than the window of the test's connections wait for an answer, or
 * one failed. */
static bool
window_open(struct node *n, uint32_t arg)
{
	(void)arg;
	return n->cm->n_st[C_WAIT] < window(n->cm) || any_failed(n->cm);
}

/* The client's test connections, a window of them asked for at once (as
 * ucmatose asks for all of them at once), the first alone: it waits for
 * the server to listen. */
static int
connect_window(struct node *n)
{
	struct cm_node *c = n->cm;
	uint32_t qps = n->o.qps;

	for (uint32_t i = 0; i < qps; i++) {
		if (make_qp(n, i, n->them.ip, n->o.mtu) == NULL)
			return et_cli_error("cannot create QP %u", i);
		if (n->o.mode == MODE_UCMATOSE)
			ucmatose_recvs(n, i);
		if (n->o.mode == MODE_RPING)
			rping_recvs(n);
		if (i == 0 ? connect_one(n, 0) : connect_start(n, i))
			return -1;
		if (!wait_until(n, window_open, 0, WAIT_MS) || any_failed(c))
			break;
	}
	if (!any_failed(c) && wait_until(n, all_up, qps, WAIT_MS))
		return 0;
	/* the first that failed, else the first that had no answer */
	for (uint32_t i = 0; i < qps; i++)
		if (c->st[i] != C_UP && c->st[i] != C_WAIT && c->st[i] != C_NONE)
			return conn_failed(n, i);
	for (uint32_t i = 0; i < qps; i++)
		if (c->st[i] != C_UP)
			return conn_failed(n, i);
	return -1;
}

/* The test's connections: a client makes --qps, a server takes as many
 * (ucmatose's sends wait for them to be established: its RTU). */
static int
open_tests_now(struct node *n)
{
	struct cm_node *c = n->cm;
	uint32_t qps = n->o.qps;

	if (n->o.server) {
		if (!wait_until(n, all_taken, qps, WAIT_MS))
			return node_stop ? -1 : et_cli_error("RDMA CM: %u of the test's %u "
							     "connections requested in %u s",
							     c->n_req, qps, WAIT_MS / 1000);
		if (n->o.mode == MODE_UCMATOSE && !wait_until(n, all_up, qps, WAIT_MS)) {
			for (uint32_t i = 0; i < qps; i++)
				if (c->st[i] != C_UP)
					return conn_failed(n, i);
		}
		return 0;
	}
	/* perftest's client connects its QPs one by one, as the tool */
	if (is_rdmacm_tool(n->o.mode))
		return connect_window(n);
	for (uint32_t i = 0; i < qps; i++) {
		if (make_qp(n, i, n->them.ip, n->o.mtu) == NULL)
			return et_cli_error("cannot create QP %u", i);
		if (connect_one(n, i))
			return -1;
	}
	return 0;
}

/* open_tests_now, and how long the connections took said. */
static int
open_tests(struct node *n)
{
	int r = open_tests_now(n);
	const struct cm_node *c = n->cm;

	if (r == 0 && c->t_up)
		et_info("RDMA CM: %u connections established in %.3f s", n->o.qps,
			(c->t_up - c->t_first) / 1e9);
	return r;
}

/* The exchange's connection: a client connects, a server takes the first
 * request. */
static int
open_chan(struct node *n)
{
	uint32_t i = n->o.qps;

	if (!n->o.server) {
		if (make_qp(n, i, n->them.ip, n->o.mtu) == NULL)
			return et_cli_error("cannot create the exchange's QP");
		return connect_one(n, i);
	}
	if (!wait_until(n, answered, i, WAIT_MS) && n->cm->st[i] == C_NONE)
		return node_stop ? -1 : et_cli_error("RDMA CM: no peer connected to port %u in "
						     "%u s", n->o.oob_port, WAIT_MS / 1000);
	return 0;
}

/* perftest -R's syncs around the test's connections: an address message
 * each way whose content the tool does not read yet. */
static int
sync_msg(struct node *n, const char *step)
{
	uint8_t mine[ET_PERFTEST_BIN_LEN], theirs[ET_PERFTEST_BIN_LEN];

	oob_tool_format(OOB_CM, &n->me, (char *)mine);
	if (oob_xchg(&n->oob, n->o.server, mine, theirs, sizeof(mine)))
		return exchange_failed(n, step);
	return 0;
}

/* perftest's ready(): the QPs exist already, bound by RDMA CM */
static int
cm_ready(struct node *n)
{
	print_local(n);
	telemetry_show_qps(n->qp, n->o.qps);
	return 0;
}

static int
cm_open(struct node *n)
{
	struct cm_node *c = calloc(1, sizeof(*c));
	struct et_rdmacm_conf conf;

	n->cm = c;
	if (c == NULL || et_cq_init(&c->scq, 64) || et_cq_init(&c->rcq, 64) ||
	    (c->chan_buf = calloc(CHAN_RECVS + 1, CHAN_MSG)) == NULL ||
	    (c->id = calloc(n->o.qps + 1, sizeof(*c->id))) == NULL ||
	    (c->st = calloc(n->o.qps + 1, sizeof(*c->st))) == NULL ||
	    (c->reason = calloc(n->o.qps + 1, sizeof(*c->reason))) == NULL)
		return et_cli_error("out of memory");
	c->n_st[C_NONE] = n->o.qps;
	c->window = WINDOW_FIRST;
	c->chan_key = et_host_reg(&n->lane[0].host, c->chan_buf, (CHAN_RECVS + 1) * CHAN_MSG,
				  ET_ACCESS_LOCAL_WRITE);
	et_rdmacm_conf_default(&conf);
	/* a peer in time wait refuses IDs it has seen: new ones each run */
	conf.cm.seed = et_tsc_ns() ^ ((uint64_t)getpid() << 32);
	conf.cm.max_conns = MAX_QPS + 1;
	c->rcm = et_rdmacm_create(&n->lane[0].nic, &conf);
	if (c->chan_key == 0 || c->rcm == NULL)
		return et_cli_error("cannot set up RDMA CM");
	return 0;
}

int
cm_connect_peer(struct node *n)
{
	const struct opts *o = &n->o;
	struct in_addr a;

	if (cm_open(n))
		return -1;
	/* a server listens (and says so) as soon as its port is started: a
	 * memif client may connect once it has said anything */
	if (o->server) {
		int r = et_rdmacm_listen(n->cm->rcm, ET_RDMA_PS_TCP, o->oob_port, NULL);

		if (r)
			return et_cli_error("RDMA CM: cannot listen on port %u: %s", o->oob_port,
					    strerror(-r));
		et_info("waiting for the peer on RDMA CM port %u (%s)", o->oob_port,
			is_perftest(o) ? "perftest -R" : mode_names[o->mode]);
	} else {
		inet_pton(AF_INET, o->client, &a); /* checked by parse_options */
		n->them.ip = ntohl(a.s_addr);
	}
	if (wait_link_up(n))
		return -1;
	if (is_rdmacm_tool(o->mode))
		return open_tests(n) || cm_ready(n) ? -1 : 0;
	n->oob = (struct oob){.fd = -1, .msg = &chan_ops, .msg_ctx = n, .stop = &node_stop,
			      .timeout_ms = 60000};
	if (open_chan(n))
		return -1;
	if (oob_perftest_hello(&n->oob, o->server, &n->o.mtu))
		return n->oob.why ? exchange_failed(n, "the opening (version, page, MTU)") : -1;
	n->them.mtu = n->me.mtu = o->mtu;
	if (sync_msg(n, "the sync before the test's connections") || open_tests(n) ||
	    sync_msg(n, "the sync after the test's connections"))
		return -1;
	return perftest_rounds(n, cm_ready);
}

/* The test's connections (upto: all of them) are all closed. */
static bool
all_down(struct node *n, uint32_t upto)
{
	return n->cm->n_st[C_DOWN] == upto;
}

uint32_t
cm_wait_down(struct node *n, uint64_t ms)
{
	wait_until(n, all_down, n->o.qps, ms);
	return n->cm->n_st[C_DOWN];
}

bool
cm_down(const struct node *n, uint32_t i)
{
	return n->cm->st[i] == C_DOWN;
}

/* Fewer than the window of our DREQs unanswered (a connection the peer
 * closed meanwhile counts as an answer: the window only opens sooner). */
static bool
dreq_window_open(struct node *n, uint32_t down_before)
{
	struct cm_node *c = n->cm;

	return c->n_dreq - (c->n_st[C_DOWN] - down_before) < window(c);
}

void
cm_disconnect_all(struct node *n)
{
	struct cm_node *c = n->cm;
	uint32_t down_before = c->n_st[C_DOWN];

	c->n_dreq = 0;
	for (uint32_t i = 0; i < n->o.qps && !node_stop; i++) {
		if (c->st[i] != C_UP || et_rdmacm_id_state(c->id[i]) != ET_CMS_ESTABLISHED)
			continue;
		et_rdmacm_disconnect(c->rcm, c->id[i], et_tsc_ns());
		c->n_dreq++;
		wait_until(n, dreq_window_open, down_before, cm_close_ms(n));
	}
}

/* ---- the end ---- */

/* None of the connections is open: the test's (none waits for an answer
 * or is up: a closed one's DISCONNECTED event has come) and the
 * exchange's (index qps), whose CM state is asked. */
static bool
all_closed(struct node *n, uint32_t qps)
{
	struct et_rdmacm_id *chan = n->cm->id[qps];
	enum et_cm_state s = chan ? et_rdmacm_id_state(chan) : ET_CMS_CLOSED;

	return n->cm->n_st[C_WAIT] + n->cm->n_st[C_UP] == 0 &&
	       (s == ET_CMS_TIMEWAIT || s == ET_CMS_CLOSED);
}

void
cm_close(struct node *n)
{
	struct cm_node *c = n->cm;
	const struct et_cm_stats *s;
	uint64_t refused = 0;

	if (c == NULL)
		return;
	if (c->rcm) {
		/* the test's connections and the exchange's: our DREQ, or the
		 * peer's answered, the port polled until all are closed */
		struct et_rdmacm_id *chan = c->id[n->o.qps];

		if (chan && et_rdmacm_id_state(chan) == ET_CMS_ESTABLISHED)
			et_rdmacm_disconnect(c->rcm, chan, et_tsc_ns());
		cm_disconnect_all(n);
		if (!wait_until(n, all_closed, n->o.qps, cm_close_ms(n)))
			et_warn("RDMA CM: connections still open after %.1f s", cm_close_ms(n) / 1000.0);
		s = et_rdmacm_cm_stats(c->rcm);
		for (int e = 0; e < ET_MAD_E_COUNT; e++)
			refused += s->rx_bad[e];
		et_info("RDMA CM: MADs sent %" PRIu64 " (again after a timeout %" PRIu64
			"), received %" PRIu64 " (repeats %" PRIu64 ", refused %" PRIu64
			"); connections established %" PRIu64 ", closed %" PRIu64,
			s->tx_mads, s->tx_retries, s->rx_mads, s->rx_dups, refused, s->established,
			s->disconnected);
		et_rdmacm_destroy(c->rcm, et_tsc_ns());
	}
	if (c->chan)
		et_nic_qp_destroy(&n->lane[0].nic, c->chan);
	et_cq_free(&c->scq);
	et_cq_free(&c->rcq);
	free(c->chan_buf);
	free(c->id);
	free(c->st);
	free(c->reason);
	free(c);
	n->cm = NULL;
	n->oob.msg = NULL;
}

void
cm_report(const struct node *n, struct json_t *j)
{
	json_t *c = json_object();

	et_json_set_counters(c, &et_cm_ctrs, et_rdmacm_cm_stats(n->cm->rcm));
	et_json_set_counters(c, &et_rdmacm_ctrs, et_rdmacm_stats(n->cm->rcm));
	json_object_set_new(j, "cm_counters", c);
	/* from the first request to the last of the test's connections up */
	if (n->cm->t_up)
		json_object_set_new(j, "connect_s",
				    json_real((n->cm->t_up - n->cm->t_first) / 1e9));
}
