/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-node's test: the server answers, the client keeps requests in
 * flight and completes them, ping-pong trades one SEND each way a round.
 */
#include <inttypes.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "host/et_worker.h"
#include "et_cli.h"
#include "node.h"

/* When --duration ends the run (never with --iters). */
static uint64_t
run_deadline(const struct node *n)
{
	return n->o.duration_ns ? n->t0 + n->o.duration_ns : UINT64_MAX;
}

/* What the peer did with our memory so far: placed, read or worked on. */
static uint64_t
lane_work_bytes(const struct lane *l)
{
	const struct node *n = l->n;
	uint64_t bytes = lane_placed_bytes(l);

	for (uint32_t i = l->k; i < n->o.qps; i += n->o.workers) {
		const struct et_qp_stats *st = et_qp_stats(n->qp[i]);

		bytes += st->read_req_bytes + st->atomics_rx * ET_ATOMIC_LEN;
	}
	return bytes;
}

/* A SEND received (the done-th): 1 it is the size the peer was asked
 * for; 0 a receive flushed at the stop; -1 the run failed (said here: a
 * peer with another -s, or -a against a node without --all). */
static int
check_recv(const struct node *n, uint64_t done, const struct et_wc *wc)
{
	if (wc->status != ET_WC_SUCCESS) {
		if (wc->status == ET_WC_WR_FLUSH_ERR && node_stop)
			return 0;
		et_cli_error("receive %" PRIu64 " on QP %u: %s", done,
			     et_qp_qpn(n->qp[wc->wr_id]), et_wc_status_str(wc->status));
		return -1;
	}
	if (wc->byte_len != n->size) {
		et_cli_error("message %" PRIu64 " is %u bytes, expected %u (the peer's -s%s must "
			     "match our %s)", done + 1, wc->byte_len, n->size,
			     is_perftest(&n->o) ? " and -a" : "",
			     n->o.all ? "--all" : "--size");
		return -1;
	}
	return 1;
}

/* Run fn on every lane, lane 0 on this lcore and the others on the EAL's
 * next ones; when lane 0 returns, tell the others (lanes_stop) if stop,
 * wait for them, and sum what they counted into the node. */
static void
run_lanes(struct node *n, int (*fn)(void *lane), bool stop)
{
	unsigned int lcore = rte_get_next_lcore(-1, 1, 0);
	uint32_t k;

	atomic_store(&n->lanes_stop, 0);
	for (k = 0; k < n->o.workers; k++) {
		struct lane *l = &n->lane[k];

		l->done = l->flushed = l->t1 = l->busy_cyc = 0;
		l->bad = 0;
	}
	for (k = 1; k < n->o.workers; k++, lcore = rte_get_next_lcore(lcore, 1, 0))
		rte_eal_remote_launch(fn, &n->lane[k], lcore);
	fn(&n->lane[0]);
	if (stop)
		atomic_store(&n->lanes_stop, 1);
	rte_eal_mp_wait_lcore();
	n->t1 = 0;
	for (k = 0; k < n->o.workers; k++) {
		const struct lane *l = &n->lane[k];

		n->done += l->done;
		n->flushed += l->flushed;
		n->bad += l->bad;
		n->t1 = l->t1 > n->t1 ? l->t1 : n->t1;
	}
}

/* One poll of a lane's NIC.  The cycles of the polls that did something
 * are the lane's busy time: what it needs of a core of its own, however
 * many lanes share the cores here. */
static void
lane_poll(struct lane *l)
{
	uint64_t t0 = rte_rdtsc();

	if (et_nic_poll(&l->nic, et_tsc_ns()))
		l->busy_cyc += rte_rdtsc() - t0;
	else if (l->n->o.yield)
		sched_yield();
	if (l->k == 0 && l->n->cm)
		cm_poll(l->n);
}

static bool
lanes_stopped(struct lane *l)
{
	return atomic_load_explicit(&l->n->lanes_stop, memory_order_relaxed) != 0;
}

/* Answer until the client says so on TCP (or SIGINT / --duration with a
 * static peer), counting what arrives; a peer that goes quiet for 10 s
 * with its word unsaid is named.  (Not when the SENDs it should send are
 * in: its word comes once our last ACK is out, and it is the port polled
 * here that sends it.)  Lane 0 listens and decides; the others answer
 * until it says so. */
static int
serve_lane(void *arg)
{
	struct lane *l = arg;
	struct node *n = l->n;
	const struct opts *o = &n->o;
	uint64_t deadline = run_deadline(n), last = et_tsc_ns(), placed = 0;
	uint64_t placed_at_first = UINT64_MAX; /* by the end of message 1 */

	for (;;) {
		for (int k = 0; k < 4096; k++) {
			struct et_wc wc;

			lane_poll(l);
			/* a failed QP completes a receive posted to it at once,
			 * flushed: post again only what came in */
			while (!l->bad && et_cq_poll(&l->host.rcq, &wc, 1)) {
				int ok = check_recv(n, l->done, &wc);

				l->bad += ok < 0;
				if (ok > 0) {
					if (++l->done == 1)
						placed_at_first = lane_work_bytes(l);
					post_recv(n, (uint32_t)wc.wr_id);
				}
			}
		}
		if (l->k) {
			if (lanes_stopped(l) || l->bad)
				break;
			continue;
		}
		uint64_t t = et_tsc_ns(), now_placed = lane_work_bytes(l);

		if (now_placed != placed) {
			placed = now_placed;
			last = t;
		}
		/* a client on TCP says when it is done, its last WRITEs
		 * acknowledged: a server that stopped at its own --duration
		 * left them unanswered, and the client failed on them */
		if (node_stop || l->bad || (!oob_is_open(&n->oob) && t > deadline))
			break;
		if (oob_is_open(&n->oob) && is_perftest(o) && t - last > 10000000000ull) {
			/* a peer silent in the middle of message 2 is a
			 * stall, not ib_send_lat (tests/rxe retries on it) */
			if (o->mode == MODE_SEND_BW && l->done == 1 && placed == placed_at_first)
				et_cli_error("one message, then nothing for 10 s: the peer waits for "
					     "an answer, it runs ib_send_lat's test; we run send_bw");
			else
				et_cli_error("nothing from the peer for 10 s (%" PRIu64 " bytes in, "
					     "no word on TCP)", placed);
			l->bad++;
			break;
		}
		if (oob_pending(&n->oob))
			break;
	}
	l->t1 = et_tsc_ns();
	return 0;
}

/* Our dialect's server (or a static peer's): answer, then check the
 * memory the client wrote. */
void
run_server(struct node *n)
{
	const struct opts *o = &n->o;

	run_lanes(n, serve_lane, true);
	/* WRITEs, READs and atomics complete nothing here: count what they did */
	if (o->mode == MODE_ATOMIC_BW)
		n->done = atomics_served(n);
	else if (is_rd(o->mode))
		n->done = read_bytes_served(n) / o->size;
	else if (o->mode != MODE_SEND_BW)
		n->done = placed_bytes(n) / o->size;
	if (oob_is_open(&n->oob))
		last_words(n);
	else if (o->verify)
		check_server_memory(n);
}

/* The request a client posts for QP i: a WRITE, SEND, READ of its part of
 * our buffer, or a FETCH & ADD of 1 whose old value lands in slot k of its
 * part. */
static struct et_send_wr
client_wr(const struct node *n, uint32_t i, uint64_t k)
{
	const struct opts *o = &n->o;
	bool tool = is_perftest(o);
	uint8_t *mine = n->buf + (uint64_t)i * n->stride;
	struct et_send_wr wr = {.wr_id = i, .local_addr = mine, .length = n->size, .lkey = n->key,
				.remote_addr = tool ? n->them_qp[i].addr
						    : n->them.addr + (uint64_t)i * o->size,
				.rkey = tool ? n->them_qp[i].rkey : n->them.rkey};

	switch (o->mode) {
	case MODE_SEND_BW: wr.opcode = ET_WR_SEND; break;
	case MODE_READ_BW:
	case MODE_READ_LAT: wr.opcode = ET_WR_RDMA_READ; break;
	case MODE_ATOMIC_BW:
		wr.opcode = ET_WR_ATOMIC_FETCH_ADD;
		wr.compare_add = 1;
		wr.local_addr = mine + (k % DEPTH) * ET_ATOMIC_LEN;
		break;
	default: wr.opcode = ET_WR_RDMA_WRITE; break;
	}
	return wr;
}

/* --verify, atomic_bw in our dialect: the k-th FETCH & ADD of 1 on QP i's
 * counter (which starts at 0, and only this client adds to) returns k; a
 * request executed twice would make a later one return more. */
static void
check_atomic_old(struct lane *l, uint32_t i, uint64_t k)
{
	const struct node *n = l->n;
	uint64_t v;

	if (!n->o.verify || n->o.oob != OOB_ETHEREAL)
		return;
	memcpy(&v, n->buf + (uint64_t)i * n->stride + (k % DEPTH) * ET_ATOMIC_LEN, sizeof(v));
	if (v != k) {
		et_cli_error("--verify: FETCH & ADD %" PRIu64 " on QP %u returned %" PRIu64 ", "
			     "expected %" PRIu64 " (the count of those before it)", k, i, v, k);
		l->bad++;
	}
}

static void
count_send_wc(struct node *n, const struct et_wc *wc, uint64_t *flushed, int *bad)
{
	if (wc->status == ET_WC_WR_FLUSH_ERR) {
		(*flushed)++;
	} else if (wc->status != ET_WC_SUCCESS) {
		et_cli_error("QP %u: %s", et_qp_qpn(n->qp[wc->wr_id]), et_wc_status_str(wc->status));
		node_stop = 1;
		(*bad)++;
	}
}

/* Post, keep DEPTH (1 for latency) requests in flight per QP, complete:
 * --iters per QP, of n->size bytes, from QP i's part of our buffer to its
 * peer's; a lane its QPs. */
static int
client_lane(void *arg)
{
	struct lane *l = arg;
	struct node *n = l->n;
	const struct opts *o = &n->o;
	const uint32_t step = o->workers;
	uint32_t mine = (o->qps - l->k + step - 1) / step;
	uint64_t deadline = run_deadline(n);
	uint64_t want = o->duration_ns ? UINT64_MAX : o->iters * mine;
	uint64_t *posted_at = calloc(o->qps, sizeof(*posted_at));
	/* each QP its --iters: a peer's QP takes that many */
	uint64_t *per_qp = calloc(o->qps, sizeof(*per_qp));
	uint64_t *qp_done = calloc(o->qps, sizeof(*qp_done));
	uint64_t qp_want = o->duration_ns ? UINT64_MAX : o->iters;
	uint64_t drain_until = 0, posted = 0;
	uint32_t i;

	if (!posted_at || !per_qp || !qp_done) {
		et_cli_error("out of memory");
		l->bad++;
		want = 0; /* nothing posted: the loop ends at once */
	}
	/* on SIGINT/SIGTERM post nothing more, let what is out complete for
	 * up to a second, then flush the rest */
	while (l->done < posted || (!node_stop && l->done < want && et_tsc_ns() < deadline)) {
		struct et_wc wc[32];
		uint32_t k;

		if (node_stop && drain_until == 0)
			drain_until = et_tsc_ns() + 1000000000ull;
		if (drain_until && et_tsc_ns() > drain_until) {
			for (i = l->k; i < o->qps; i += step)
				et_qp_flush(n->qp[i]);
			drain_until = UINT64_MAX;
		}
		for (i = l->k; !node_stop && i < o->qps && posted < want && et_tsc_ns() < deadline;
		     i += step) {
			uint32_t depth = times_rounds(o->mode) ? 1 : DEPTH;

			while (et_qp_sq_outstanding(n->qp[i]) < depth && posted < want &&
			       per_qp[i] < qp_want) {
				struct et_send_wr wr = client_wr(n, i, per_qp[i]);

				if (et_nic_post_send(&l->nic, n->qp[i], &wr))
					break;
				posted_at[i] = et_tsc_ns();
				posted++;
				per_qp[i]++;
			}
		}
		lane_poll(l);
		k = et_cq_poll(&l->host.scq, wc, 32);
		for (uint32_t j = 0; j < k; j++) {
			uint32_t q = (uint32_t)wc[j].wr_id;

			count_send_wc(n, &wc[j], &l->flushed, &l->bad);
			if (n->lat && l->done < o->iters)
				n->lat[l->done] = et_tsc_ns() - posted_at[q];
			if (wc[j].status == ET_WC_SUCCESS && o->mode == MODE_ATOMIC_BW)
				check_atomic_old(l, q, qp_done[q]);
			qp_done[q]++;
			l->done++;
		}
	}
	l->t1 = et_tsc_ns();
	free(posted_at);
	free(per_qp);
	free(qp_done);
	if (drain_until && !l->bad)
		et_info("stopped: %" PRIu64 " requests completed, %" PRIu64 " flushed",
			l->done - l->flushed, l->flushed);
	return 0;
}

void
run_client(struct node *n)
{
	run_lanes(n, client_lane, false);
	if (n->o.verify && is_rd(n->o.mode) && n->o.mode != MODE_ATOMIC_BW && !n->bad)
		check_written(n);
	/* tell the server, which then checks its memory; wait until it has
	 * stopped polling before closing the port: DPDK 22.11's memif unmaps
	 * the shared rings from its control thread when the peer leaves,
	 * under a datapath that may still be reading them */
	last_words(n);
}

/* ibv_rc_pingpong's data phase: one SEND each way per iteration, the
 * client first.  Like the tool, the server sends back the buffer it
 * received into, so the client checks (--verify) that its message, a new
 * pattern each iteration, came back intact: the peer's receive and send
 * paths both carried it.  The client times each round trip. */
void
run_pingpong(struct node *n)
{
	const struct opts *o = &n->o;
	uint64_t deadline = run_deadline(n);
	uint64_t rounds = o->duration_ns ? UINT64_MAX : o->iters, sent = 0, got = 0, last = et_tsc_ns();
	uint8_t *sbuf = n->buf, *rbuf = n->buf + (o->server ? 0 : o->size);
	bool waiting_send = false, waiting_recv = o->server; /* the client sends first */
	uint64_t t_send = 0;

	while (!node_stop && (sent < rounds || waiting_send || waiting_recv)) {
		struct et_wc wc;
		uint64_t t = et_tsc_ns();

		if (!waiting_send && !waiting_recv) {
			if (sent == rounds || t > deadline)
				break;
			if (!o->server)
				for (uint32_t k = 0; k < o->size; k++)
					sbuf[k] = test_pattern(sent * o->size + k);
			struct et_send_wr wr = {.wr_id = 0, .opcode = ET_WR_SEND, .local_addr = sbuf,
						.length = o->size, .lkey = n->key};

			if (et_nic_post_send(&n->lane[0].nic, n->qp[0], &wr)) {
				et_cli_error("cannot post a SEND");
				n->bad++;
				break;
			}
			t_send = t;
			sent++;
			waiting_send = true;
			waiting_recv = !o->server || sent < rounds;
		}
		if (et_nic_poll(&n->lane[0].nic, t) == 0 && o->yield)
			sched_yield();
		while (et_cq_poll(&n->lane[0].host.scq, &wc, 1)) {
			count_send_wc(n, &wc, &n->flushed, &n->bad);
			waiting_send = false;
			last = t;
		}
		while (et_cq_poll(&n->lane[0].host.rcq, &wc, 1)) {
			if (wc.status != ET_WC_SUCCESS || wc.byte_len != o->size) {
				et_cli_error("receive %" PRIu64 ": %s, %u bytes (expected %u)",
					     got, et_wc_status_str(wc.status), wc.byte_len, o->size);
				n->bad++;
				node_stop = 1;
				break; /* the rest is flushed: a receive posted now would be too */
			} else if (!o->server && o->verify && memcmp(rbuf, sbuf, o->size) != 0) {
				et_cli_error("round %" PRIu64 ": the echo differs from what we sent",
					     got);
				n->bad++;
			}
			if (!o->server && n->lat && got < o->iters)
				n->lat[got] = et_tsc_ns() - t_send;
			got++;
			n->done++;
			post_recv(n, 0);
			waiting_recv = false;
			last = t;
		}
		if (n->bad)
			break;
		if (t - last > 10000000000ull) {
			et_cli_error("ping-pong: nothing from the peer for 10 s "
				     "(round %" PRIu64 ")", got);
			n->bad++;
			break;
		}
	}
	n->t1 = et_tsc_ns();
	if (n->oob.fd >= 0 && o->oob == OOB_ETHEREAL) {
		last_words(n);
		return;
	}
	/* A tool's peer has no last word: our last ACK may be lost or its last
	 * SEND resent; answer until it has been quiet for 300 ms (at most 3 s). */
	for (uint64_t quiet = et_tsc_ns(), end = quiet + 3000000000ull, t = quiet;
	     t < end && t - quiet < 300000000ull; t = et_tsc_ns())
		if (et_nic_poll(&n->lane[0].nic, t))
			quiet = t;
}

/* ---- perftest's tests (--oob perftest) ---- */

/* The latency tests' wait: poll the port and complete our WRITEs and
 * SENDs until done() says so; false on a failed request, SIGINT, or 10 s
 * without it (a peer that does not answer as the tool does). */
struct lat {
	struct node *n;
	uint64_t scnt, rcnt, ccnt, t_post;
	uint8_t *sbuf, *rbuf;
};

static bool
lat_poll(struct lat *l, bool (*done)(struct lat *l), const char *what)
{
	struct node *n = l->n;
	uint64_t start = et_tsc_ns();

	for (;;) {
		struct et_wc wc;

		if (done(l))
			return !n->bad;
		uint64_t t = et_tsc_ns();

		if (et_nic_poll(&n->lane[0].nic, t) == 0 && n->o.yield)
			sched_yield();
		while (et_cq_poll(&n->lane[0].host.scq, &wc, 1)) {
			count_send_wc(n, &wc, &n->flushed, &n->bad);
			l->ccnt++;
		}
		if (node_stop || n->bad)
			return false;
		if (t - start > 10000000000ull) {
			et_cli_error("size %u, round %" PRIu64 ": no %s from the peer for 10 s (it does "
				     "not answer as %s does: is it another tool?)", n->size,
				     l->rcnt + (n->o.mode == MODE_SEND_LAT), what, n->o.mode == MODE_WRITE_LAT ? "ib_write_lat"
										: "ib_send_lat");
			n->bad++;
			return false;
		}
	}
}

static bool
write_arrived(struct lat *l)
{
	return l->rbuf[l->n->size - 1] == (uint8_t)l->rcnt;
}

static bool
all_completed(struct lat *l)
{
	return l->ccnt >= l->scnt;
}

/* ib_write_lat's ping-pong: each side WRITEs its message into the other's
 * receive area, a round's counter in the last byte, and waits for the
 * peer's counter to appear in its own; the server writes first.  The
 * client times from its post to the answer's arrival: a round trip. */
static void
lat_write(struct node *n)
{
	const struct opts *o = &n->o;
	struct lat l = {.n = n, .sbuf = n->buf, .rbuf = n->buf + n->stride};
	uint64_t iters = o->iters;

	/* a peer that writes before the exchange ends is not ib_write_lat */
	if (placed_bytes(n) > 0) {
		et_cli_error("the peer wrote %" PRIu64 " bytes before the exchange ended: it runs "
			     "ib_write_bw's test, we run write_lat", placed_bytes(n));
		n->bad++;
		return;
	}
	while (l.scnt < iters || l.ccnt < iters || l.rcnt < iters) {
		if (l.rcnt < iters && !(l.scnt < 1 && o->server)) {
			l.rcnt++;
			if (!lat_poll(&l, write_arrived, "WRITE"))
				break;
			/* the server writes first: an answer is to our post before */
			if (!o->server && n->lat && l.rcnt > 1)
				n->lat[n->nlat++] = et_tsc_ns() - l.t_post;
			n->done++;
		}
		if (l.scnt < iters) {
			struct et_send_wr wr = {.wr_id = 0, .opcode = ET_WR_RDMA_WRITE,
						.local_addr = l.sbuf, .length = n->size,
						.lkey = n->key, .remote_addr = n->them_qp[0].addr,
						.rkey = n->them_qp[0].rkey};

			l.sbuf[n->size - 1] = (uint8_t)++l.scnt;
			l.t_post = et_tsc_ns();
			if (et_nic_post_send(&n->lane[0].nic, n->qp[0], &wr)) {
				et_cli_error("cannot post WRITE %" PRIu64, l.scnt);
				n->bad++;
				break;
			}
		}
		if (!lat_poll(&l, all_completed, "ACK"))
			break;
	}
	n->t1 = et_tsc_ns();
}

static bool
send_arrived(struct lat *l)
{
	struct node *n = l->n;
	struct et_wc wc;

	if (!et_cq_poll(&n->lane[0].host.rcq, &wc, 1))
		return false;
	int ok = check_recv(n, l->rcnt, &wc);

	if (ok <= 0) {
		n->bad += ok < 0; /* lat_poll returns false */
		return true;
	}
	l->rcnt++;
	post_recv(n, 0);
	/* the peer answers one SEND with one: another before our answer is a
	 * bandwidth test's */
	if (l->rcnt < n->o.iters && et_cq_poll(&n->lane[0].host.rcq, &wc, 1)) {
		et_cli_error("the peer sends without waiting for our answer (SEND %" PRIu64
			     " came before our answer to %" PRIu64 "): it runs ib_send_bw's test, "
			     "we run send_lat", l->rcnt + 1, l->rcnt);
		n->bad++;
	}
	return true;
}

/* ib_send_lat's ping-pong: one SEND each way a round, the client first. */
static void
lat_send(struct node *n)
{
	const struct opts *o = &n->o;
	struct lat l = {.n = n, .sbuf = n->buf, .rbuf = n->buf + n->stride};
	uint64_t iters = o->iters;

	while (l.scnt < iters || l.rcnt < iters) {
		if (l.rcnt < iters && !(l.scnt < 1 && !o->server)) {
			if (!lat_poll(&l, send_arrived, "SEND"))
				break;
			if (!o->server && n->lat)
				n->lat[n->nlat++] = et_tsc_ns() - l.t_post;
			n->done++;
		}
		if (l.scnt < iters) {
			struct et_send_wr wr = {.wr_id = 0, .opcode = ET_WR_SEND, .local_addr = l.sbuf,
						.length = n->size, .lkey = n->key};

			l.scnt++;
			l.t_post = et_tsc_ns();
			if (et_nic_post_send(&n->lane[0].nic, n->qp[0], &wr)) {
				et_cli_error("cannot post SEND %" PRIu64, l.scnt);
				n->bad++;
				break;
			}
		}
	}
	if (!n->bad && !node_stop)
		(void)lat_poll(&l, all_completed, "ACK");
	n->t1 = et_tsc_ns();
}

/* The tools end without a last word on the port: our last ACK may be lost
 * or the peer's last request resent; answer until it has been quiet for
 * 300 ms (at most 3 s). */
static void
linger(struct node *n)
{
	for (uint64_t quiet = et_tsc_ns(), end = quiet + 3000000000ull, t = quiet;
	     t < end && t - quiet < 300000000ull; t = et_tsc_ns())
		if (et_nic_poll(&n->lane[0].nic, t))
			quiet = t;
}

/* perftest's one sync message before a size (send tests: the receives are
 * posted) and, send_bw -a, after it. */
static bool
sync_size(struct node *n, const char *when)
{
	snprintf(n->phase, sizeof(n->phase), "%s size %u", when, n->size);
	if (perftest_keys(n, 1, NULL) == 0)
		return true;
	n->bad++;
	return false;
}

/* One size of a perftest test; the row is printed by the caller. */
static void
perftest_size(struct node *n)
{
	const struct opts *o = &n->o;
	bool send = o->mode == MODE_SEND_BW || o->mode == MODE_SEND_LAT;

	n->done = n->flushed = 0;
	/* as the tool: exactly --iters receives per QP, none left for the next
	 * size; a send_bw client posts none */
	if (o->mode == MODE_SEND_LAT || (o->mode == MODE_SEND_BW && o->server))
		post_recvs(n, o->iters);
	if (send && !sync_size(n, "before"))
		return;
	n->t0 = et_tsc_ns();
	n->pkts0 = nic_packets(n);
	switch (o->mode) {
	case MODE_WRITE_LAT: lat_write(n); break;
	case MODE_SEND_LAT: lat_send(n); break;
	default:
		run_lanes(n, o->server ? serve_lane : client_lane, o->server);
		if (o->mode == MODE_READ_LAT)
			n->nlat = n->done < o->iters ? n->done : o->iters;
	}
	if (n->bad || node_stop)
		return;
	if (o->server && o->mode == MODE_SEND_BW && n->done != o->iters * o->qps) {
		et_cli_error("size %u: %" PRIu64 " of %" PRIu64 " messages arrived (the peer's -n "
			     "and -q must match --iters %" PRIu64 " --qps %u)", n->size, n->done,
			     o->iters * o->qps, o->iters, o->qps);
		n->bad++;
		return;
	}
	if (o->mode == MODE_SEND_BW && o->all && !sync_size(n, "after"))
		return;
}

/* perftest's test, each size (--all: 2 .. 2^23) a row; then its last
 * words.  write_bw's server cannot tell sizes apart, nor can a READ or
 * atomic test's: it answers until the client's word and counts the bytes
 * (finish.c checks them). */
void
run_perftest(struct node *n)
{
	const struct opts *o = &n->o;
	bool write_server = o->server && passive_server(o->mode);
	uint32_t first = o->all ? ALL_MIN_SIZE : o->size, last = o->all ? ALL_MAX_SIZE : o->size;

	report_header();
	if (write_server) {
		n->size = o->size;
		n->t0 = et_tsc_ns();
		run_lanes(n, serve_lane, true);
		/* read_lat's client sends no figures: the row is ours */
		if (o->mode == MODE_READ_LAT) {
			n->done = read_bytes_served(n) / o->size;
			report_row(n);
		}
	} else {
		for (uint32_t size = first; size <= last && size >= first; size *= 2) {
			n->size = size;
			n->nlat = 0;
			perftest_size(n);
			if (n->bad || node_stop)
				break;
			report_row(n);
		}
	}
	/* our last ACK out before the port goes unpolled (last_words) */
	if (is_lat(o->mode))
		linger(n);
	if (!n->bad && !node_stop)
		last_words(n); /* write_bw's server prints its row there */
}
