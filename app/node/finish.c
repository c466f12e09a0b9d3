/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-node's last words over TCP after the test: ours (DONE, BYE)
 * or perftest's (an address message, the client's figures, "done").
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>

#include "node.h"

/* perftest's last words: write_bw trades an address message and the
 * client's figures (its server prints them), both a last address message
 * and "done". */
static void
perftest_finish(struct node *n)
{
	double s = (double)(n->t1 - n->t0) / 1e9;
	struct perftest_report mine = {.size = n->o.size, .iters = n->done}, theirs;

	mine.bw_avg = mine.bw_peak = s > 0 ? (double)n->done * n->o.size / s / 1048576.0 : 0;
	mine.msg_rate = s > 0 ? (double)n->done / s / 1e6 : 0;
	if (n->o.mode == MODE_WRITE_BW) {
		if (perftest_key(n, NULL) || oob_perftest_report(&n->oob, n->o.server, &mine, &theirs)) {
			n->bad++;
			return;
		}
		if (n->o.server)
			printf("perftest peer reports: %" PRIu64 " bytes x %" PRIu64 ", peak %.2f MiB/s, "
			       "average %.2f MiB/s, %.6f Mpps\n", theirs.size, theirs.iters,
			       theirs.bw_peak, theirs.bw_avg, theirs.msg_rate);
	}
	if (perftest_key(n, NULL)) {
		n->bad++;
		return;
	}
	oob_perftest_bye(&n->oob);
	/* the pattern is ours: only an ethereal-node client writes it */
	if (n->o.server && n->o.verify)
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

	if (n->oob.fd < 0 || n->o.oob == OOB_PINGPONG)
		return;
	n->oob.idle = NULL;
	n->oob.stop = &never; /* said even after SIGINT: the peer waits for it */
	n->oob.timeout_ms = 30000;
	if (n->o.oob == OOB_PERFTEST) {
		perftest_finish(n);
		return;
	}
	if (!n->o.server) {
		if (oob_write(&n->oob, "DONE\n", 5) || oob_read_line(&n->oob, line, sizeof(line)))
			n->bad++;
		return;
	}
	/* a server stopped by SIGINT has nothing to wait for */
	if (!node_stop && oob_read_line(&n->oob, line, sizeof(line)) == 0 && n->o.verify &&
	    n->o.mode != MODE_PINGPONG)
		check_written(n);
	if (oob_write(&n->oob, "BYE\n", 4))
		n->bad++;
}
