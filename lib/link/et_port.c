/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_eth_ring.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "link/et_port.h"

/* A ring in rte_malloc memory, not a memzone: DPDK 22.11 has at most
 * RTE_MAX_MEMZONE (2560) memzones per process, and rte_ring_create takes one
 * per ring; the paper's fat-tree with its 4 lanes per switch pair has 1536
 * links, 3072 rings.  Nobody looks these rings up by name. */
static struct rte_ring *
ring_alloc(const char *name, unsigned int size, int socket)
{
	const unsigned int flags = RING_F_SP_ENQ | RING_F_SC_DEQ;
	ssize_t bytes = rte_ring_get_memsize(size);
	struct rte_ring *r;

	if (bytes < 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	r = rte_zmalloc_socket(name, (size_t)bytes, RTE_CACHE_LINE_SIZE, socket);
	if (r == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	if (rte_ring_init(r, name, size, flags) != 0) {
		rte_free(r);
		rte_errno = EINVAL;
		return NULL;
	}
	return r;
}

int
et_port_ring_pair(struct et_port *a, struct et_port *b, const char *name,
		  unsigned int size, int socket)
{
	char n[RTE_RING_NAMESIZE];
	struct rte_ring *ab, *ba;

	snprintf(n, sizeof(n), "%s>", name);
	ab = ring_alloc(n, size, socket);
	snprintf(n, sizeof(n), "%s<", name);
	ba = ring_alloc(n, size, socket);
	if (ab == NULL || ba == NULL) {
		rte_free(ab);
		rte_free(ba);
		return -rte_errno;
	}
	memset(a, 0, sizeof(*a));
	memset(b, 0, sizeof(*b));
	a->kind = b->kind = ET_PORT_RING;
	a->tx = b->rx = ab;
	b->tx = a->rx = ba;
	a->own[0] = ab;
	a->own[1] = ba;
	snprintf(a->name, sizeof(a->name), "%s.a", name);
	snprintf(b->name, sizeof(b->name), "%s.b", name);
	return 0;
}

int
et_port_loop(struct et_port *p, const char *name, unsigned int size, int socket)
{
	struct rte_ring *r = ring_alloc(name, size, socket);

	if (r == NULL)
		return -rte_errno;
	memset(p, 0, sizeof(*p));
	p->kind = ET_PORT_RING;
	p->rx = p->tx = r;
	p->own[0] = r;
	snprintf(p->name, sizeof(p->name), "%s", name);
	return 0;
}

/* queues rx/tx queue pairs; with more than one, the device spreads what
 * arrives over them by RSS on the addresses and UDP ports where it can (the
 * NICs on the queues hand each other what is not theirs: et_nic_team). */
static int
start_ethdev(uint16_t port, struct rte_mempool *mp, uint16_t nb_desc, uint16_t queues)
{
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	int socket = rte_eth_dev_socket_id(port);
	int rc;

	memset(&conf, 0, sizeof(conf));
	if (socket < 0)
		socket = (int)rte_socket_id();
	rc = rte_eth_dev_info_get(port, &info);
	if (rc)
		return rc;
	if (queues > info.max_rx_queues || queues > info.max_tx_queues)
		return -E2BIG;
	/* link changes as events where the PMD has them (et_port_watch_link) */
	if (info.dev_flags && (*info.dev_flags & RTE_ETH_DEV_INTR_LSC))
		conf.intr_conf.lsc = 1;
	if (queues > 1 && (info.flow_type_rss_offloads & (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP))) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf =
			info.flow_type_rss_offloads & (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP);
	}
	rc = rte_eth_dev_configure(port, queues, queues, &conf);
	for (uint16_t q = 0; rc == 0 && q < queues; q++) {
		rc = rte_eth_rx_queue_setup(port, q, nb_desc, (unsigned int)socket, NULL, mp);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(port, q, nb_desc, (unsigned int)socket, NULL);
	}
	if (rc == 0)
		rc = rte_eth_dev_start(port);
	if (rc == 0)
		rte_eth_promiscuous_enable(port); /* not every PMD can: not fatal */
	return rc;
}

int
et_port_net_ring_pair(struct et_port *a, struct et_port *b, const char *name,
		      unsigned int size, int socket, struct rte_mempool *mp)
{
	char n[RTE_ETH_NAME_MAX_LEN];
	int pa, pb, rc;

	rc = et_port_ring_pair(a, b, name, size, socket);
	if (rc)
		return rc;
	snprintf(n, sizeof(n), "net_ring_%s_a", name);
	pa = rte_eth_from_rings(n, &a->rx, 1, &a->tx, 1, (unsigned int)socket);
	snprintf(n, sizeof(n), "net_ring_%s_b", name);
	pb = pa < 0 ? -1 : rte_eth_from_rings(n, &b->rx, 1, &b->tx, 1, (unsigned int)socket);
	if (pa < 0 || pb < 0 || start_ethdev((uint16_t)pa, mp, 512, 1) ||
	    start_ethdev((uint16_t)pb, mp, 512, 1)) {
		rc = -rte_errno ? -rte_errno : -EIO;
		et_port_close(a);
		return rc;
	}
	a->kind = b->kind = ET_PORT_ETHDEV;
	a->eth_port = (uint16_t)pa;
	b->eth_port = (uint16_t)pb;
	return 0;
}

/* DPDK 22.11's memif sends its control messages with sendmsg(fd, ..., 0):
 * a peer that vanishes between two messages would kill this process with
 * SIGPIPE, silently (a switch lost all its ports that way under load).  A
 * program that chose its own disposition keeps it. */
static void
sigpipe_ignore_unless_chosen(void)
{
	struct sigaction old;

	if (sigaction(SIGPIPE, NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
	    !(old.sa_flags & SA_SIGINFO))
		signal(SIGPIPE, SIG_IGN);
}

int
et_port_ethdev(struct et_port *p, const char *devargs, struct rte_mempool *mp,
	       uint16_t nb_desc, uint16_t queues)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	uint16_t port;
	size_t len = strcspn(devargs, ",");
	int rc;

	memset(p, 0, sizeof(*p));
	if (len >= sizeof(name) || len >= sizeof(p->name))
		return -EINVAL;
	memcpy(name, devargs, len);
	name[len] = '\0';
	if (strncmp(name, "net_memif", 9) == 0)
		sigpipe_ignore_unless_chosen();
	if (rte_eth_dev_get_port_by_name(name, &port) != 0) {
		/* DPDK's own codes here (EFAULT...) read oddly to a user */
		if (rte_dev_probe(devargs) < 0)
			return -ENODEV;
		if (rte_eth_dev_get_port_by_name(name, &port) != 0)
			return -ENODEV;
	}
	rc = start_ethdev(port, mp, nb_desc, queues);
	if (rc)
		return rc;
	p->kind = ET_PORT_ETHDEV;
	p->eth_port = port;
	p->unmap_guard = strncmp(name, "net_memif", 9) == 0;
	memcpy(p->name, name, len + 1);
	return 0;
}

void
et_port_set_timed(struct et_port *p, bool on)
{
	p->timed = on;
	if (!on) {
		free(p->tl);
		p->tl = NULL;
		p->tl_mask = p->tl_head = p->tl_tail = 0;
	}
}

int
et_port_expect(struct et_port *p, const struct et_arrival *a, uint32_t n)
{
	uint32_t have = p->tl_tail - p->tl_head, i;

	if (p->tl == NULL || have + n > p->tl_mask + 1) {
		uint32_t cap = p->tl ? (p->tl_mask + 1) * 2 : 64;
		struct et_arrival *tl;

		while (cap < have + n)
			cap *= 2;
		if ((tl = malloc(cap * sizeof(*tl))) == NULL)
			return -ENOMEM;
		for (i = 0; i < have; i++)
			tl[i] = p->tl[(p->tl_head + i) & p->tl_mask];
		free(p->tl);
		p->tl = tl;
		p->tl_mask = cap - 1;
		p->tl_head = 0;
		p->tl_tail = have;
	}
	for (i = 0; i < n; i++)
		p->tl[p->tl_tail++ & p->tl_mask] = a[i];
	return 0;
}

void
et_port_free_rings(struct et_port *p)
{
	struct rte_mbuf *m[32];
	unsigned int i, n, r;

	free(p->tl);
	p->tl = NULL;
	p->tl_mask = p->tl_head = p->tl_tail = 0;
	for (r = 0; r < 2; r++) {
		if (p->own[r] == NULL)
			continue;
		/* frames still on the link go back to their pool */
		while ((n = rte_ring_dequeue_burst(p->own[r], (void **)m, 32, NULL)) > 0)
			for (i = 0; i < n; i++)
				rte_pktmbuf_free(m[i]);
		rte_free(p->own[r]); /* ring_alloc's, not a memzone */
		p->own[r] = NULL;
	}
}

int
et_port_link_up(const struct et_port *p)
{
	struct rte_eth_link link;
	int rc;

	if (p->kind != ET_PORT_ETHDEV)
		return 1;
	rc = rte_eth_link_get_nowait(p->eth_port, &link);
	return rc ? rc : link.link_status == RTE_ETH_LINK_UP;
}

int
et_port_watch_link(const struct et_port *p, rte_eth_dev_cb_fn fn, void *arg)
{
	struct rte_eth_conf conf;

	if (p->kind != ET_PORT_ETHDEV)
		return -ENOTSUP;
	if (rte_eth_dev_conf_get(p->eth_port, &conf) != 0 || !conf.intr_conf.lsc)
		return -ENOTSUP;
	return rte_eth_dev_callback_register(p->eth_port, RTE_ETH_EVENT_INTR_LSC, fn, arg);
}

void
et_port_await_peer_gone(const struct et_port *p, unsigned int max_ms)
{
	if (p->kind != ET_PORT_ETHDEV)
		return;
	for (unsigned int k = 0; k < max_ms / 10 && et_port_link_up(p) != 0; k++)
		usleep(10000);
	usleep(100000); /* the interrupt thread finishes what it began */
}

int
et_port_await_link_up(const struct et_port *p, unsigned int max_ms,
		      const volatile sig_atomic_t *stop)
{
	for (unsigned int k = 0; p->kind == ET_PORT_ETHDEV; k++) {
		if (et_port_link_up(p) == 1)
			return 0;
		if (stop && *stop)
			return -EINTR;
		if (k >= max_ms / 10)
			return -ETIMEDOUT;
		usleep(10000);
	}
	return 0;
}

void
et_port_close(struct et_port *p)
{
	if (p->kind == ET_PORT_ETHDEV) {
		rte_eth_dev_stop(p->eth_port);
		rte_eth_dev_close(p->eth_port);
	}
	et_port_free_rings(p);
	memset(p, 0, sizeof(*p));
}
