/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-node --oob cm: rdmacm-utils' tests on the connections cm.c
 * makes by RDMA CM:
 *
 *   ucmatose: --qps connections, --iters SENDs of --size on each, the
 *   server's first; the client answers each with what it received (the
 *   tool sends from its receive buffer); then the server's DREQs;
 *
 *   rping: per ping the client names its buffer (a SEND of address, rkey,
 *   size), the server RDMA READs it and says go, the client names its
 *   sink, the server RDMA WRITEs what it read there and says go; the
 *   client checks the echo (-V); after --iters pings its DREQ.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/et_bytes.h"
#include "host/et_worker.h"
#include "et_cli.h"
#include "node.h"

/* ---- ucmatose's test ---- */

/* Completions on cq (a receive: of --size) until *got is want, each one
 * well; 10 s without one, or the peer gone: -1, said. */
static int
ucmatose_wait(struct node *n, struct et_cq *cq, uint64_t want, uint64_t *got, const char *what)
{
	bool recv = cq == &n->lane[0].host.rcq;
	uint64_t last = et_tsc_ns();
	struct et_wc wc;

	while (*got < want && !node_stop) {
		if (et_cq_poll(cq, &wc, 1) == 0) {
			cm_poll_once(n);
			if (et_tsc_ns() - last > 10000000000ull)
				return et_cli_error("ucmatose: %" PRIu64 " of %" PRIu64 " %s, then "
						    "nothing for 10 s", *got, want, what);
			continue;
		}
		last = et_tsc_ns();
		/* the client's last answers, their ACKs lost: the server closes
		 * only once it has every answer */
		if (wc.status == ET_WC_WR_FLUSH_ERR && !recv && !n->o.server &&
		    cm_down(n, (uint32_t)wc.wr_id)) {
			if (*got + 1 == want)
				et_info("ucmatose: the server closed before it acknowledged our "
					"last answers");
			(*got)++;
			continue;
		}
		if (wc.status != ET_WC_SUCCESS)
			return et_cli_error("ucmatose: %s: number %" PRIu64 " %s", what, *got + 1,
					    et_wc_status_str(wc.status));
		if (recv && wc.byte_len != n->o.size)
			return et_cli_error("ucmatose: message %" PRIu64 " is %u bytes, expected %u "
					    "(the peer's -S must match our --size)", *got + 1,
					    wc.byte_len, n->o.size);
		/* the server: each answer is what it sent (the tool answers
		 * from the buffer it received into) */
		if (recv && n->o.server && n->o.verify &&
		    memcmp(n->buf + wc.wr_id * n->o.size,
			   n->buf + ((uint64_t)n->o.qps + wc.wr_id) * n->o.size, n->o.size)) {
			et_cli_error("--verify: answer %" PRIu64 " on QP %" PRIu64 " differs from "
				     "what we sent", *got + 1, wc.wr_id);
			n->bad++;
		}
		(*got)++;
	}
	return node_stop ? -1 : 0;
}

/* --iters SENDs on each QP: the server's from its send area, the client's
 * from what it received (as the tool answers). */
static int
ucmatose_send(struct node *n)
{
	const struct opts *o = &n->o;

	for (uint32_t i = 0; i < o->qps; i++)
		for (uint64_t k = 0; k < o->iters; k++) {
			uint64_t area = o->server ? (uint64_t)o->qps + i : i;
			struct et_send_wr wr = {.wr_id = i, .opcode = ET_WR_SEND,
						.local_addr = n->buf + area * o->size,
						.length = o->size, .lkey = n->key};

			/* a full send queue: let some complete */
			while (et_nic_post_send(&n->lane[0].nic, n->qp[i], &wr) == -ENOSPC) {
				if (node_stop)
					return -1;
				cm_poll_once(n);
			}
		}
	return 0;
}

/* ucmatose's test: the server's SENDs, the client's answers, the server's
 * DREQ (the client waits for it, as the tool does); a row for the table. */
void
run_ucmatose(struct node *n)
{
	const struct opts *o = &n->o;
	struct et_cq *scq = &n->lane[0].host.scq, *rcq = &n->lane[0].host.rcq;
	uint64_t want = o->iters * o->qps, sent = 0, got = 0, ms;
	uint32_t down;
	int r;

	n->size = o->size;
	for (uint64_t k = 0; o->server && k < (uint64_t)o->qps * o->size; k++)
		n->buf[(uint64_t)o->qps * o->size + k] = test_pattern(k);
	n->t0 = et_tsc_ns();
	n->pkts0 = nic_packets(n);
	if (o->server)
		r = ucmatose_send(n) || ucmatose_wait(n, scq, want, &sent, "SENDs completed") ||
		    ucmatose_wait(n, rcq, want, &got, "answers received");
	else
		r = ucmatose_wait(n, rcq, want, &got, "messages received") || ucmatose_send(n) ||
		    ucmatose_wait(n, scq, want, &sent, "answers completed");
	n->t1 = et_tsc_ns();
	n->done = got;
	if (r) {
		n->bad++;
		return;
	}
	if (o->server)
		cm_disconnect_all(n);
	/* the client waits for the server, which first takes its answers */
	ms = cm_close_ms(n) + (o->server ? 0 : 7000);
	if ((down = cm_wait_down(n, ms)) != o->qps && !node_stop) {
		et_cli_error("ucmatose: the %s did not close the connections in %.1f s (%u of %u "
			     "closed)", o->server ? "peer" : "server", ms / 1000.0, down, o->qps);
		n->bad++;
	}
}

/* ---- rping's test ---- */

#define RP_SEND 100 /* wr_id of our SENDs; an RDMA READ or WRITE's is RP_RDMA */
#define RP_RDMA 101

/* The buffer of rping's client for ping k: "rdma-ping-k: " and a run of
 * the letters from 'A' + k (mod 58) on, ending in a NUL. */
static void
rping_text(uint8_t *b, uint32_t size, uint64_t k)
{
	int cc = snprintf((char *)b, size, "rdma-ping-%d: ", (int)k);
	uint8_t c = (uint8_t)(65 + k % 58);

	for (uint32_t i = (uint32_t)cc; i < size; i++) {
		b[i] = c++;
		if (c > 122)
			c = 65;
	}
	b[size - 1] = 0;
}

/* The completion of wr_id on cq (any receive for UINT64_MAX), SENDs'
 * completed on the way checked and passed: 0; 1 when the peer closed the
 * connection first; -1 said (a failure, 10 s of nothing). */
static int
rping_wait(struct node *n, struct et_cq *cq, uint64_t wr_id, struct et_wc *wc, const char *what)
{
	uint64_t last = et_tsc_ns();

	while (!node_stop) {
		if (et_cq_poll(cq, wc, 1) == 0) {
			if (cm_down(n, 0))
				return 1;
			if (et_tsc_ns() - last > 10000000000ull)
				return et_cli_error("rping: no %s for 10 s", what);
			cm_poll_once(n);
			continue;
		}
		if (wc->status == ET_WC_WR_FLUSH_ERR && cm_down(n, 0))
			return 1; /* the DREQ flushed the QP */
		if (wc->status != ET_WC_SUCCESS)
			return et_cli_error("rping: %s: %s", wc->wr_id == RP_SEND ? "a SEND" : what,
					    et_wc_status_str(wc->status));
		if (wr_id == UINT64_MAX ? wc->opcode == ET_WC_RECV : wc->wr_id == wr_id)
			break;
	}
	if (node_stop)
		return -1;
	if (wc->opcode == ET_WC_RECV && wc->byte_len != 16)
		return et_cli_error("rping: a message of %u bytes where its 16 belong", wc->byte_len);
	return 0;
}

/* A 16-byte message: rping's address, rkey and size, big-endian. */
static int
rping_send(struct node *n, uint64_t addr, uint32_t rkey, uint32_t size)
{
	uint8_t *m = rping_slot(n, 2);
	struct et_send_wr wr = {.wr_id = RP_SEND, .opcode = ET_WR_SEND, .local_addr = m,
				.length = 16, .lkey = n->key};

	et_store64(m, addr);
	et_store32(m + 8, rkey);
	et_store32(m + 12, size);
	if (et_nic_post_send(&n->lane[0].nic, n->qp[0], &wr))
		return et_cli_error("rping: cannot post a SEND");
	return 0;
}

/* The next message, its slot posted again: 0, 1 the peer closed, -1. */
static int
rping_next(struct node *n, uint64_t *addr, uint32_t *rkey, uint32_t *size, const char *what)
{
	struct et_wc wc;
	int r = rping_wait(n, &n->lane[0].host.rcq, UINT64_MAX, &wc, what);
	const uint8_t *m = rping_slot(n, (uint32_t)wc.wr_id);

	if (r)
		return r;
	*addr = et_load64(m);
	*rkey = et_load32(m + 8);
	*size = et_load32(m + 12);
	rping_recv(n, (uint32_t)wc.wr_id);
	return 0;
}

static int
rping_rdma(struct node *n, uint8_t opcode, uint32_t len, uint64_t addr, uint32_t rkey,
	   const char *what)
{
	struct et_send_wr wr = {.wr_id = RP_RDMA, .opcode = opcode, .local_addr = n->buf,
				.length = len, .lkey = n->key, .remote_addr = addr, .rkey = rkey};
	struct et_wc wc;

	if (et_nic_post_send(&n->lane[0].nic, n->qp[0], &wr))
		return et_cli_error("rping: cannot post the %s", what);
	return rping_wait(n, &n->lane[0].host.scq, RP_RDMA, &wc, what) ? -1 : 0;
}

/* The client's pings: its buffer named, the server's go; its sink named,
 * the go again; the echo checked (--verify, rping's -V). */
static int
rping_client(struct node *n)
{
	const uint32_t size = n->o.size;
	uint8_t *start = n->buf, *sink = n->buf + size;
	uint64_t a;
	uint32_t k, s;

	for (uint64_t ping = 0; ping < n->o.iters && !node_stop; ping++) {
		uint64_t t0 = et_tsc_ns();
		int r;

		rping_text(start, size, ping);
		if ((r = rping_send(n, (uintptr_t)start, n->key, size)) ||
		    (r = rping_next(n, &a, &k, &s, "go after the READ")) ||
		    (r = rping_send(n, (uintptr_t)sink, n->key, size)) ||
		    (r = rping_next(n, &a, &k, &s, "go after the WRITE"))) {
			if (r > 0)
				et_cli_error("rping: the server closed the connection at ping %" PRIu64
					     " (is its -S our --size %u?)", ping, size);
			return -1;
		}
		n->lat[n->nlat++] = et_tsc_ns() - t0;
		if (n->o.verify && memcmp(start, sink, size)) {
			et_cli_error("--verify: ping %" PRIu64 ": the echo differs from what we sent",
				     ping);
			n->bad++;
		}
		n->done++;
	}
	return node_stop ? -1 : 0;
}

/* The server's side: READ what the client names, WRITE it back to its
 * sink (its length up to the NUL, as rping), until the client's DREQ.
 * --verify: what we read is rping's text for the ping. */
static int
rping_server(struct node *n)
{
	const uint32_t size = n->o.size;
	uint64_t a;
	uint32_t k, s;
	int r;

	for (uint64_t ping = 0;; ping++) {
		if ((r = rping_next(n, &a, &k, &s, "client's buffer")) != 0)
			return r > 0 ? 0 : -1; /* its DREQ: the pings are over */
		if (s > size)
			return et_cli_error("rping: the peer's buffer is %u bytes, ours (--size) %u",
					    s, size);
		if (rping_rdma(n, ET_WR_RDMA_READ, s, a, k, "RDMA READ"))
			return -1;
		if (n->o.verify) { /* the client's text, built in our second buffer */
			rping_text(n->buf + size, s, ping);
			if (memcmp(n->buf, n->buf + size, s)) {
				et_cli_error("--verify: ping %" PRIu64 ": what we read is not rping's "
					     "text", ping);
				n->bad++;
			}
		}
		if (rping_send(n, 0, 0, 0) || rping_next(n, &a, &k, &s, "client's sink") ||
		    rping_rdma(n, ET_WR_RDMA_WRITE, (uint32_t)strnlen((char *)n->buf, s - 1) + 1,
			       a, k, "RDMA WRITE") ||
		    rping_send(n, 0, 0, 0))
			return -1;
		n->done++;
	}
}

void
run_rping(struct node *n)
{
	n->size = n->o.size;
	n->t0 = et_tsc_ns();
	n->pkts0 = nic_packets(n);
	if (n->o.server ? rping_server(n) : rping_client(n)) {
		n->bad++;
		return;
	}
	n->t1 = et_tsc_ns();
	if (!n->o.server)
		cm_disconnect_all(n);
	if (cm_wait_down(n, 3000) != 1 && !node_stop) {
		et_cli_error("rping: the connection not closed in 3 s");
		n->bad++;
	}
}
