/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-node: one RoCEv2 host on any DPDK port, with perftest-like modes.
 *
 *   server: ethereal-node [EAL args --] --port DEV --ip A.B.C.D --server [opts]
 *   client: ethereal-node [EAL args --] --port DEV --ip A.B.C.D --client HOST [opts]
 *
 * Like perftest, the two sides trade their parameters (MAC, IP, QPNs, PSN,
 * rkey, buffer address) over TCP on a management network first; then the
 * client runs the test over the DPDK port and the server answers.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_eal.h>

#include "host/et_worker.h"
#include "et_app_eal.h"
#include "et_cli.h"
#include "node.h"

volatile sig_atomic_t node_stop;

static void
on_signal(int sig)
{
	(void)sig;
	node_stop = 1;
}

/* Telemetry shows nothing more; the RDMA CM's DREQs and DREPs go while the
 * port is still polled; then the port and the NICs go. */
static void
node_end(struct node *n)
{
	telemetry_show_nic(NULL);
	telemetry_show_qps(NULL, 0);
	cm_close(n);
	node_close(n);
}

int
main(int argc, char **argv)
{
	static struct node n;
	int r;

	et_cli_program("ethereal-node");
	if (et_cli_wants_help(argc, argv)) {
		usage(stdout);
		return ET_EXIT_OK;
	}
	r = et_app_eal_init(NULL, argc, argv); /* no defaults: the line is DPDK's up to "--" */
	if (r < 0)
		return ET_EXIT_FAIL;
	if (parse_options(argc - r, argv + r, &n.o)) {
		et_app_eal_cleanup();
		return ET_EXIT_USAGE;
	}
	n.oob.fd = -1;
	n.bad = 1; /* until the run ends */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	telemetry_register();
	if (node_open(&n) == 0 && connect_peer(&n) == 0) {
		if (times_rounds(n.o.mode) || n.o.mode == MODE_PINGPONG || n.o.mode == MODE_RPING)
			n.lat = calloc(n.o.iters, sizeof(*n.lat));
		n.bad = 0;
		n.t0 = et_tsc_ns();
		if (is_perftest(&n.o))
			run_perftest(&n);
		else if (n.o.mode == MODE_UCMATOSE)
			run_ucmatose(&n);
		else if (n.o.mode == MODE_RPING)
			run_rping(&n);
		else if (n.o.mode == MODE_PINGPONG)
			run_pingpong(&n);
		else if (n.o.server)
			run_server(&n);
		else
			run_client(&n);
		/* the run did what was asked, or exits 1 saying what it did not */
		if (!n.bad && n.done == 0) {
			et_cli_error("no messages %s%s", n.o.server ? "received" : "completed",
				     node_stop ? " before the stop" : "");
			n.bad++;
		}
		report_results(&n);
		if (n.o.save && save_buffer(&n))
			n.bad++;
		fflush(stdout); /* the results are out even if tearing down fails */
	}
	node_end(&n);
	et_app_eal_cleanup();
	return n.bad ? ET_EXIT_FAIL : ET_EXIT_OK;
}
