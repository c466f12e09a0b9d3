/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-node's test: the server answers, the client keeps requests in
 * flight and completes them, ping-pong trades one SEND each way a round.
 */
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/et_worker.h"
#include "et_cli.h"
#include "node.h"

/* When --duration ends the run (never with --iters). */
static uint64_t
run_deadline(const struct node *n)
{
	return n->o.duration_ns ? n->t0 + n->o.duration_ns : UINT64_MAX;
}

/* What the client wrote (or sent) is all here. */
void
check_written(struct node *n)
{
	for (uint64_t k = 0; k < (uint64_t)n->o.size * n->o.qps; k++)
		n->bad += n->buf[k] != test_pattern(k);
}

/* The payload the peer placed in our memory, all QPs. */
uint64_t
placed_bytes(const struct node *n)
{
	uint64_t bytes = 0;

	for (uint32_t i = 0; i < n->o.qps; i++)
		bytes += et_qp_stats(n->qp[i])->rx_bytes;
	return bytes;
}

/* Answer until the client says it is done (or SIGINT / --duration with a
 * static peer), then check the memory it wrote. */
void
run_server(struct node *n)
{
	const struct opts *o = &n->o;
	uint64_t deadline = run_deadline(n);
	for (;;) {
		for (int k = 0; k < 4096; k++) {
			struct et_wc wc;

			if (et_nic_poll(&n->nic, et_tsc_ns()) == 0 && o->yield)
				sched_yield();
			/* a failed QP completes a receive posted to it at once,
			 * flushed: post again only what came in */
			while (et_cq_poll(&n->host.rcq, &wc, 1))
				if (wc.status == ET_WC_SUCCESS) {
					n->done++;
					post_recv(n, (uint32_t)wc.wr_id);
				}
		}
		if (node_stop || et_tsc_ns() > deadline)
			break;
		if (n->oob.fd < 0)
			continue;
		struct pollfd p = {.fd = n->oob.fd, .events = POLLIN};

		if (poll(&p, 1, 0) > 0)
			break;
	}
	n->t1 = et_tsc_ns();
	if (o->mode != MODE_SEND_BW) /* WRITEs complete nothing here: count bytes */
		n->done = placed_bytes(n) / o->size;
	if (n->oob.fd >= 0)
		last_words(n);
	else if (o->verify)
		check_written(n);
}

static void
count_send_wc(struct node *n, const struct et_wc *wc)
{
	if (wc->status == ET_WC_WR_FLUSH_ERR) {
		n->flushed++;
	} else if (wc->status != ET_WC_SUCCESS) {
		et_cli_error("QP %u: %s", et_qp_qpn(n->qp[wc->wr_id]), et_wc_status_str(wc->status));
		node_stop = 1;
		n->bad++;
	}
}

/* Post, keep DEPTH (1 for latency) requests in flight per QP, complete. */
void
run_client(struct node *n)
{
	const struct opts *o = &n->o;
	uint64_t deadline = run_deadline(n);
	uint64_t want = o->duration_ns ? UINT64_MAX : o->iters * o->qps;
	uint64_t *posted_at = calloc(o->qps, sizeof(*posted_at));
	uint64_t drain_until = 0, posted = 0;
	uint32_t i;

	/* on SIGINT/SIGTERM post nothing more, let what is out complete for
	 * up to a second, then flush the rest */
	while (n->done < posted || (!node_stop && n->done < want && et_tsc_ns() < deadline)) {
		struct et_wc wc[32];
		uint32_t k;

		if (node_stop && drain_until == 0)
			drain_until = et_tsc_ns() + 1000000000ull;
		if (drain_until && et_tsc_ns() > drain_until) {
			for (i = 0; i < o->qps; i++)
				et_qp_flush(n->qp[i]);
			drain_until = UINT64_MAX;
		}
		for (i = 0; !node_stop && i < o->qps && posted < want && et_tsc_ns() < deadline; i++) {
			uint32_t depth = o->mode == MODE_WRITE_LAT ? 1 : DEPTH;

			while (et_qp_sq_outstanding(n->qp[i]) < depth && posted < want) {
				struct et_send_wr wr = {
					.wr_id = i,
					.opcode = o->mode == MODE_SEND_BW ? ET_WR_SEND : ET_WR_RDMA_WRITE,
					.local_addr = n->buf + (uint64_t)i * o->size, .length = o->size,
					.lkey = n->key,
					.remote_addr = n->them.addr + (uint64_t)i * o->size,
					.rkey = n->them.rkey};

				if (et_nic_post_send(&n->nic, n->qp[i], &wr))
					break;
				posted_at[i] = et_tsc_ns();
				posted++;
			}
		}
		if (et_nic_poll(&n->nic, et_tsc_ns()) == 0 && o->yield)
			sched_yield();
		k = et_cq_poll(&n->host.scq, wc, 32);
		for (uint32_t j = 0; j < k; j++) {
			count_send_wc(n, &wc[j]);
			if (n->lat && n->done < o->iters)
				n->lat[n->done] = et_tsc_ns() - posted_at[wc[j].wr_id];
			n->done++;
		}
	}
	n->t1 = et_tsc_ns();
	free(posted_at);
	if (drain_until && !n->bad)
		printf("ethereal-node: stopped: %" PRIu64 " requests completed, %" PRIu64 " flushed\n",
		       n->done - n->flushed, n->flushed);
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

			if (et_nic_post_send(&n->nic, n->qp[0], &wr)) {
				et_cli_error("cannot post a SEND");
				n->bad++;
				break;
			}
			t_send = t;
			sent++;
			waiting_send = true;
			waiting_recv = !o->server || sent < rounds;
		}
		if (et_nic_poll(&n->nic, t) == 0 && o->yield)
			sched_yield();
		while (et_cq_poll(&n->host.scq, &wc, 1)) {
			count_send_wc(n, &wc);
			waiting_send = false;
			last = t;
		}
		while (et_cq_poll(&n->host.rcq, &wc, 1)) {
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
		if (et_nic_poll(&n->nic, t))
			quiet = t;
}
