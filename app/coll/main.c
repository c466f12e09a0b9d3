/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-coll: one host of a fabric per process on a DPDK port, running
 * collectives with every other rank, as nccl-tests' all_reduce_perf does
 * with GPUs (see coll.h for the parts).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_ethdev.h>

#include "coll.h"
#include "et_app_eal.h"
#include "et_cli.h"
#include "sim/et_net.h"

volatile sig_atomic_t coll_stop;

static void
on_signal(int sig)
{
	(void)sig;
	coll_stop = 1;
}

/* The host's QPNs start where the fabric's do; it holds its subflows'
 * sending ends and its peers' receiving ends. */
#define COLL_QPN_BASE 0x100
#define COLL_MAX_QPS (2 * ET_RT_MAX_QPS)

int
coll_open_port(struct coll *c)
{
	struct rte_ether_addr mac;
	uint32_t ip = et_topo_host_ip(&c->p.t, c->o.rank);
	int r;

	c->mp = et_app_pool("coll", 32767, ET_APP_MBUF_4K_FRAME);
	c->peer_cc = calloc(c->o.world, sizeof(*c->peer_cc));
	c->fig = calloc(c->o.world, sizeof(*c->fig));
	if (!c->mp || !c->peer_cc || !c->fig)
		return et_cli_error("out of memory for the frame pool (give EAL more, -m)");
	r = et_port_ethdev(&c->port, c->o.port, c->mp, 1024, 1);
	if (r)
		return et_cli_error("--port: cannot start '%s': %s", c->o.port, strerror(-r));
	c->port_open = true;
	if (c->o.mac) {
		if (rte_ether_unformat_addr(c->o.mac, &mac))
			return et_cli_bad("--mac", "a MAC like 02:00:00:00:00:01", c->o.mac);
	} else {
		rte_eth_macaddr_get(c->port.eth_port, &mac);
	}
	if (et_nic_init(&c->nic, &c->port, &c->p.host_link, c->mp, &mac, ip, COLL_QPN_BASE,
			COLL_MAX_QPS))
		return et_cli_error("cannot set up the NIC model");
	c->nic_open = true;
	et_nic_acks_first(&c->nic, c->p.acks_first);
	/* kernel hosts and switch ports on the segment can resolve us */
	et_arp_init(&c->arp, mac.addr_bytes, ip, 10000000, 8);
	c->nic.arp = &c->arp;
	et_lb_host_init(&c->lb, &c->rc.lb, &c->rc.t, c->o.rank, c->rc.seed);
	if (c->o.f.plan) {
		char path[4096];

		snprintf(path, sizeof(path), "%s.%u", c->o.f.plan, c->o.rank);
		if ((c->plan = fopen(path, "w")) == NULL)
			return et_cli_error("--plan: cannot write %s: %s", path, strerror(errno));
	}
	return 0;
}

void
coll_close(struct coll *c)
{
	/* a peer that died may have been the far end of our link */
	if (c->mesh.lost && c->port_open)
		et_port_await_peer_gone(&c->port, 2000);
	mesh_close(&c->mesh);
	if (c->plan)
		fclose(c->plan);
	if (c->nic_open)
		et_nic_free(&c->nic);
	if (c->port_open)
		et_port_close(&c->port);
	free(c->peer_cc);
	free(c->fig);
	free(c->early);
	for (uint32_t i = 0; c->rows && i < c->n_rows_cap; i++)
		free(c->rows[i].rank);
	free(c->rows);
	free(c->points);
	coll_free_trace(c);
	cli_free(&c->o.f);
}

void
coll_free_trace(struct coll *c)
{
	if (c->trace)
		et_trace_free(c->trace);
	free(c->trace);
	c->trace = NULL;
}

/* The sweep, as nccl-tests runs it (a collective with wrong data is
 * counted, and the sweep goes on); 0, or 1 when one failed (said why) or
 * had wrong data. */
static int
run_sweep(struct coll *c)
{
	uint32_t n = c->n_points, i;
	int bad;

	c->rows = calloc(n, sizeof(*c->rows));
	bad = c->rows == NULL;
	c->n_rows_cap = bad ? 0 : n;
	for (i = 0; !bad && i < n; i++)
		bad = (c->rows[i].rank = calloc(c->o.world, sizeof(*c->rows[i].rank))) == NULL;
	if (bad)
		return et_cli_error("out of memory");
	if (c->o.rank == 0)
		coll_print_header(c);
	for (i = 0; i < n; i++) {
		struct row *row = &c->rows[c->n_rows];

		if (coll_run_point(c, &c->points[i], i + 1 == n, row))
			return 1; /* said why; a row of a run that did not end is no figure */
		bad |= row->all.wrong != 0;
		c->n_rows++;
		if (c->o.rank == 0)
			coll_print_row(c, row);
	}
	if (c->o.rank == 0)
		coll_print_end(c);
	return bad;
}

int
main(int argc, char **argv)
{
	static struct coll c;
	int r, bad = 1;

	et_cli_program("ethereal-coll");
	if (et_cli_wants_help(argc, argv)) {
		coll_usage(stdout);
		return ET_EXIT_OK;
	}
	/* a question about the conf, or a dry run: no DPDK */
	r = et_app_args_start(argc, argv);
	for (int i = r; i < argc; i++)
		if (strcmp(argv[i], "--switch-mode") == 0 || strcmp(argv[i], "--dry-run") == 0) {
			bad = coll_parse(argc - r, argv + r, &c.o) || coll_setup(&c);
			coll_free_trace(&c);
			free(c.points);
			cli_free(&c.o.f);
			return bad ? ET_EXIT_USAGE : ET_EXIT_OK;
		}
	r = et_app_eal_init(NULL, argc, argv);
	if (r < 0)
		return ET_EXIT_FAIL;
	if (coll_parse(argc - r, argv + r, &c.o) || coll_setup(&c) || c.o.switch_mode) {
		coll_free_trace(&c);
		free(c.points);
		cli_free(&c.o.f);
		et_app_eal_cleanup();
		return c.o.switch_mode ? ET_EXIT_OK : ET_EXIT_USAGE;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (coll_open_port(&c) == 0 && coll_start(&c) == 0) {
		if (c.trace) {
			if (c.o.rank == 0)
				coll_print_header(&c);
			bad = coll_run_trace(&c) != 0;
			if (!bad && c.o.rank == 0)
				coll_print_trace(&c);
		} else {
			bad = run_sweep(&c);
		}
		if (!bad && c.o.rank == 0 && c.o.f.json && coll_write_json(&c, c.o.f.json))
			bad = 1;
		fflush(stdout);
	}
	coll_close(&c);
	et_app_eal_cleanup();
	return bad ? ET_EXIT_FAIL : ET_EXIT_OK;
}
