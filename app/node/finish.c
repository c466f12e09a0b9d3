/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-node's last words over TCP after the test: ours (DONE, BYE)
 * or perftest's (an address message, the client's figures, "done").
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>

#include "et_cli.h"

#include "node.h"

/* write_bw's server: the bytes placed must be what the client's report
 * says it sent (its size and its message count over all QPs; with -a,
 * that many of every size 2 .. 2^23), in whole messages. */
static int
check_write_server(struct node *n, const struct et_perftest_report *theirs)
{
	const struct opts *o = &n->o;
	uint64_t placed = placed_bytes(n);
	uint64_t want_size = o->all ? ALL_MAX_SIZE : o->size;
	uint64_t want = o->all ? (2ull * ALL_MAX_SIZE - ALL_MIN_SIZE) * theirs->iters
			       : theirs->size * theirs->iters;

	if (theirs->size != want_size)
		return et_cli_error("the peer ran %" PRIu64 "-byte messages%s, we %s %" PRIu64
				    " (give the tool's -s as --size, -a as --all)", theirs->size,
				    o->all ? " last" : "", o->all ? "--all, last" : "--size",
				    want_size);
	if (placed != want)
		return et_cli_error("%" PRIu64 " bytes placed, the peer reports %" PRIu64
				    " (%" PRIu64 " x %" PRIu64 "%s)", placed, want, theirs->iters,
				    theirs->size, o->all ? " of each size" : "");
	n->done = o->all ? theirs->iters * 23 : theirs->iters;
	return 0;
}

/* read_bw and atomic_bw's server: the peer's READs asked for what its report
 * says it read, its atomics ran once each. */
static int
check_rd_server(struct node *n, const struct et_perftest_report *theirs)
{
	const struct opts *o = &n->o;
	uint64_t want_size = o->all ? ALL_MAX_SIZE : o->size;
	uint64_t want = o->all ? (2ull * ALL_MAX_SIZE - ALL_MIN_SIZE) * theirs->iters
			       : theirs->size * theirs->iters;

	if (theirs->size != want_size)
		return et_cli_error("the peer ran %" PRIu64 "-byte requests, we %" PRIu64
				    " (give the tool's -s as --size)", theirs->size, want_size);
	if (o->mode == MODE_ATOMIC_BW ? atomics_served(n) != theirs->iters
				      : read_bytes_served(n) != want)
		return et_cli_error("the peer reports %" PRIu64 " x %" PRIu64 " bytes; its %s "
				    "asked for %" PRIu64, theirs->iters, theirs->size,
				    o->mode == MODE_ATOMIC_BW ? "atomics (x 8 bytes)" : "READs",
				    o->mode == MODE_ATOMIC_BW ? atomics_served(n) * ET_ATOMIC_LEN
							      : read_bytes_served(n));
	n->done = o->all ? theirs->iters * 23 : theirs->iters;
	return 0;
}

static int
perftest_close(struct node *n)
{
	snprintf(n->phase, sizeof(n->phase), "at the close");
	n->oob.closing = true;
	if (perftest_keys(n, 1, NULL))
		return -1;
	n->oob.idle = NULL; /* the peer may close its port from here on */
	if (n->o.oob != OOB_CM) /* -R's peer says no "done": it disconnects */
		oob_perftest_bye(&n->oob);
	return 0;
}

/* perftest's last words: write_bw, read_bw and atomic_bw trade an address
 * message and the client's figures (its server prints them and our row),
 * both a last address message and "done"; send_bw, send_lat and read_lat
 * only the latter; write_lat none. */
static void
perftest_finish(struct node *n)
{
	const struct opts *o = &n->o;
	double s = (double)(n->t1 - n->t0) / 1e9;
	struct et_perftest_report mine = {.size = n->size, .iters = n->done}, theirs;

	bool rd = o->mode == MODE_READ_BW || o->mode == MODE_ATOMIC_BW;

	if (o->mode == MODE_WRITE_LAT)
		return;
	if (o->mode != MODE_WRITE_BW && !rd) {
		n->bad += perftest_close(n) != 0;
		return;
	}
	if (o->server && rd && read_bytes_served(n) + atomics_served(n) == 0) {
		et_cli_error("the peer went on with the exchange and asked nothing of our memory: "
			     "it does not run %s's test", o->mode == MODE_READ_BW ? "ib_read_bw"
										 : "ib_atomic_bw");
		n->bad++;
		return;
	}
	if (o->server && !rd && placed_bytes(n) == 0) {
		et_cli_error("the peer went on with the exchange and sent no data: it does not "
			     "run ib_write_bw's test (ib_write_lat's sends a 4th address "
			     "message here); we run write_bw");
		n->bad++;
		return;
	}
	mine.bw_avg = mine.bw_peak = s > 0 ? (double)n->done * n->size / s / 1048576.0 : 0;
	mine.msg_rate = s > 0 ? (double)n->done / s / 1e6 : 0;
	snprintf(n->phase, sizeof(n->phase), "after the test");
	if (perftest_keys(n, 1, NULL)) {
		n->bad++;
		return;
	}
	if (!o->server) /* its server reads ours at once; a write_lat server never writes */
		n->oob.timeout_ms = 10000;
	if (oob_perftest_report(&n->oob, o->server, &mine, &theirs)) {
		/* a write_lat server has gone on to its test: it writes to us */
		if (!o->server && placed_bytes(n) > 0)
			et_cli_error("the peer wrote to us after the test: it runs ib_write_lat's "
				     "test; we run write_bw");
		else if (n->oob.why)
			exchange_failed(n, "the report after the test");
		n->bad++;
		return;
	}
	if (o->server) {
		printf("perftest peer reports: %" PRIu64 " bytes x %" PRIu64 ", peak %.2f MiB/s, "
		       "average %.2f MiB/s, %.6f Mpps\n", theirs.size, theirs.iters,
		       theirs.bw_peak, theirs.bw_avg, theirs.msg_rate);
		if (rd ? check_rd_server(n, &theirs) : check_write_server(n, &theirs)) {
			n->bad++;
			return;
		}
		report_row(n);
	}
	if (perftest_close(n)) {
		n->bad++;
		return;
	}
	/* the pattern is ours: only an ethereal-node client writes it */
	if (o->server && o->verify && !rd)
		check_written(n);
}

/* Our dialect's last words: the client says DONE, the server checks its
 * memory and says BYE.  The port is not polled meanwhile: DPDK 22.11's
 * memif unmaps its rings from the control thread when the peer leaves,
 * under a datapath that may still be reading them; so neither side polls
 * once the other may be closing. */
void
last_words(struct node *n)
{
	static volatile sig_atomic_t never;
	char line[16];

	if (!oob_is_open(&n->oob) || n->o.oob == OOB_PINGPONG || is_rdmacm_tool(n->o.mode))
		return;
	n->oob.stop = &never; /* said even after SIGINT: the peer waits for it */
	n->oob.timeout_ms = 30000;
	/* perftest's peer keeps its port until its "done": ours is polled
	 * until then (a peer that writes to us now is named) */
	if (is_perftest(&n->o)) {
		perftest_finish(n);
		return;
	}
	n->oob.idle = NULL;
	if (!n->o.server) {
		if (oob_write(&n->oob, "DONE\n", 5) || oob_read_line(&n->oob, line, sizeof(line))) {
			exchange_failed(n, "the last words (DONE, BYE)");
			n->bad++;
		}
		return;
	}
	/* a server stopped by SIGINT has nothing to wait for */
	if (!node_stop) {
		if (oob_read_line(&n->oob, line, sizeof(line))) {
			exchange_failed(n, "the client's DONE");
			n->bad++;
			return;
		}
		if (n->o.verify)
			check_server_memory(n);
	}
	if (oob_write(&n->oob, "BYE\n", 4)) {
		exchange_failed(n, "our BYE");
		n->bad++;
	}
}
