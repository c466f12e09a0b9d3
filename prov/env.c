/* SPDX-License-Identifier: BSD-3-Clause
 * The process the provider runs in: its parameters, the fabric's conf,
 * its slot (which host of the conf it is), and, with the first domain,
 * DPDK's EAL, the port and the NIC model; and the progress every CQ,
 * counter and EQ read drives (manual progress: the DPDK poll runs in the
 * consumer's reads).
 *
 * The slot rule.  N processes on one machine started with the same
 * environment (fabtests' server and client, mpirun's ranks) each need a
 * port and an address of their own.  Slot k is host k of the conf's
 * topology (address 10.0.TOR.(k % hosts-per-leaf + 1), as ethereal-coll's
 * rank k), and its port is FI_ETHEREAL_DEV with every %d replaced by k (a
 * memif socket of one ethereal-switch per slot, say).  A process takes:
 *   1. FI_ETHEREAL_SLOT, when set;
 *   2. else the host whose address the consumer names as its source
 *      (fi_getinfo with FI_SOURCE, or hints->src_addr);
 *   3. else its local rank under a launcher (OMPI_COMM_WORLD_LOCAL_RANK,
 *      MPI_LOCALRANKID, SLURM_LOCALID);
 *   4. else the first slot whose lock is free.
 * Whichever way, it holds the slot's lock (a file in FI_ETHEREAL_RUNDIR,
 * named by the device template) until it exits, and a slot held by
 * another process is refused.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "et_fi.h"
#include "link/et_link_conf.h"
#include "et_fi_cm.h"
#include "et_app_eal.h"
#include "et_cli.h"
#include "et_fabric_cli.h"
#include "host/et_worker.h"
#include "sim/et_net.h"

struct et_fi_proc et_fi_proc = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.slot = -1,
	.slot_fd = -1,
	.next_port = 0,
};

void
et_fi_lock(void)
{
	pthread_mutex_lock(&et_fi_proc.lock);
}

void
et_fi_unlock(void)
{
	pthread_mutex_unlock(&et_fi_proc.lock);
}

uint64_t
et_fi_now(void)
{
	return et_fi_proc.eal_up ? et_tsc_ns() : 0;
}

static char *
param_str(const char *name)
{
	char *v = NULL;

	if (fi_param_get_str(&et_fi_prov, name, &v) != FI_SUCCESS || v == NULL || !*v)
		return NULL;
	return v;
}

static int
conf_load(struct et_fi_proc *p)
{
	struct cli o;
	char err[256];

	memset(&o, 0, sizeof(o));
	et_fabric_params_default(&p->fp);
	/* as ethereal-coll reads it: the conf, then what it named ([lb] policy,
	 * [run] seed) applied */
	if (p->env.conf && (load_conf(p->env.conf, &p->fp, &o) || finish_params(&o, &p->fp))) {
		ET_FI_WARN(FI_LOG_CORE, "FI_ETHEREAL_CONF=%s: refused (see the message above)\n",
			   p->env.conf);
		cli_free(&o);
		return -FI_EINVAL;
	}
	cli_free(&o);
	if (p->env.lb && et_lb_parse(p->env.lb, &p->fp.lb, err, sizeof(err))) {
		ET_FI_WARN(FI_LOG_CORE, "FI_ETHEREAL_LB=%s: %s\n", p->env.lb, err);
		return -FI_EINVAL;
	}
	et_fabric_rt_conf(&p->fp, &p->rc);
	/* no conf: the RTO of the RDMA tools' timeout 14 (ethereal-node's),
	 * for processes that share cores, not the emulator's 1 ms */
	if (p->env.conf == NULL)
		p->rc.qp.rto_ns = ET_FI_DEFAULT_RTO_NS;
	/* 7 retries forever: a send to a peer that has exited would hang its
	 * sender, where a consumer must see an error entry */
	if (p->rc.qp.retry_cnt > 6)
		p->rc.qp.retry_cnt = 6;
	p->seed = p->fp.seed;
	return 0;
}

int
et_fi_env_load(void)
{
	struct et_fi_proc *p = &et_fi_proc;
	int v;

	if (p->env_read)
		return p->conf_loaded ? 0 : -FI_EINVAL;
	p->env_read = true;
	et_cli_program("ethereal-fi");
	p->env.eal = param_str("eal");
	p->env.dev = param_str("dev");
	p->env.conf = param_str("conf");
	p->env.lb = param_str("lb");
	p->env.rundir = param_str("rundir");
	p->env.mac = param_str("mac");
	p->env.fault = param_str("fault");
	p->env.slot = -1;
	if (fi_param_get_int(&et_fi_prov, "slot", &v) == FI_SUCCESS)
		p->env.slot = v;
	if (fi_param_get_bool(&et_fi_prov, "yield", &v) == FI_SUCCESS)
		p->env.yield = v;
	if (fi_param_get_int(&et_fi_prov, "stats", &v) == FI_SUCCESS)
		p->env.stats = v;
	{
		char *rdv = param_str("rdv");

		if (rdv && strcmp(rdv, "read") && strcmp(rdv, "write")) {
			ET_FI_WARN(FI_LOG_CORE, "FI_ETHEREAL_RDV=%s: expected read or write\n", rdv);
			return -FI_EINVAL;
		}
		p->env.rdv_read = rdv && strcmp(rdv, "read") == 0;
	}
	p->env.eager = ET_FI_EAGER_DEFAULT;
	if (fi_param_get_int(&et_fi_prov, "eager", &v) == FI_SUCCESS) {
		if (v < 0 || v > 65536) {
			ET_FI_WARN(FI_LOG_CORE, "FI_ETHEREAL_EAGER=%d: expected 0..65536\n", v);
			return -FI_EINVAL;
		}
		p->env.eager = (size_t)v;
	}
	if (conf_load(p))
		return -FI_EINVAL;
	p->conf_loaded = true;
	return 0;
}

uint32_t
et_fi_host_of_ip(uint32_t ip)
{
	const struct et_topo *t = &et_fi_proc.fp.t;
	uint32_t n = et_topo_hosts(t);

	for (uint32_t k = 0; k < n; k++)
		if (et_net_host_ip(t, k) == ip)
			return k;
	return UINT32_MAX;
}

/* The device template as a file name: its characters that are not. */
static void
lock_path(int slot, char *out, size_t len)
{
	const char *dir = et_fi_proc.env.rundir ? et_fi_proc.env.rundir : "/tmp";
	const char *dev = et_fi_proc.env.dev ? et_fi_proc.env.dev : "none";
	uint64_t h = 1469598103934665603ull; /* FNV-1a of the template */

	for (const char *c = dev; *c; c++)
		h = (h ^ (uint8_t)*c) * 1099511628211ull;
	snprintf(out, len, "%s/ethereal-fi-%u-%016llx-%d.lock", dir, (unsigned)getuid(),
		 (unsigned long long)h, slot);
}

/* 1: locked; 0: another process holds it; -errno. */
static int
try_lock(int slot)
{
	char path[512];
	int fd;

	lock_path(slot, path, sizeof(path));
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int e = errno;

		close(fd);
		return e == EWOULDBLOCK ? 0 : -e;
	}
	et_fi_proc.slot_fd = fd;
	return 1;
}

static int
local_rank(void)
{
	static const char *const vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
					   "SLURM_LOCALID"};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);

		if (v && *v)
			return atoi(v);
	}
	return -1;
}

int
et_fi_slot_choose(uint32_t want_ip)
{
	struct et_fi_proc *p = &et_fi_proc;
	int n, slot = -1, r;
	char ip[INET_ADDRSTRLEN];

	if (et_fi_env_load())
		return -FI_EINVAL;
	n = (int)et_topo_hosts(&p->fp.t);
	if (p->slot >= 0)
		return want_ip == 0 || want_ip == p->ip ? 0 : -FI_ENODATA;
	if (p->env.slot >= 0)
		slot = p->env.slot;
	else if (want_ip) {
		uint32_t h = et_fi_host_of_ip(want_ip);

		if (h == UINT32_MAX)
			return -FI_ENODATA; /* not an address of the fabric */
		slot = (int)h;
	} else {
		slot = local_rank();
	}
	if (slot >= n) {
		ET_FI_WARN(FI_LOG_CORE, "slot %d: the fabric's topology has %d hosts\n", slot, n);
		return -FI_ENODATA;
	}
	if (slot >= 0) {
		r = try_lock(slot);
		if (r <= 0) {
			ET_FI_WARN(FI_LOG_CORE, "slot %d: %s\n", slot,
				   r == 0 ? "held by another process" : strerror(-r));
			return -FI_ENODATA;
		}
	} else {
		for (int k = 0; k < n && slot < 0; k++) {
			r = try_lock(k);
			if (r < 0) {
				ET_FI_WARN(FI_LOG_CORE, "slot lock: %s\n", strerror(-r));
				return -FI_ENODATA;
			}
			if (r == 1)
				slot = k;
		}
		if (slot < 0) {
			ET_FI_WARN(FI_LOG_CORE, "all %d slots are held by other processes\n", n);
			return -FI_ENODATA;
		}
	}
	p->slot = slot;
	p->ip = et_net_host_ip(&p->fp.t, (uint32_t)slot);
	if (want_ip && want_ip != p->ip)
		return -FI_ENODATA;
	ET_FI_INFO(FI_LOG_CORE, "slot %d: %s\n", slot,
		   inet_ntop(AF_INET, &(struct in_addr){htonl(p->ip)}, ip, sizeof(ip)));
	return 0;
}

/* s with every %d replaced by the slot. */
static void
expand(const char *s, int slot, char *out, size_t len)
{
	size_t k = 0;

	for (; *s && k + 12 < len; s++) {
		if (s[0] == '%' && s[1] == 'd') {
			k += (size_t)snprintf(out + k, len - k, "%d", slot);
			s++;
		} else {
			out[k++] = *s;
		}
	}
	out[k] = 0;
}

static bool
has_arg(int argc, char **argv, const char *a)
{
	size_t n = strlen(a);

	for (int i = 1; i < argc; i++)
		if (strncmp(argv[i], a, n) == 0 && (argv[i][n] == 0 || argv[i][n] == '='))
			return true;
	return false;
}

/* The consumer's getopt state and its thread's CPUs survive the EAL: it
 * parses with getopt and pins its main thread to lcore 0's CPU. */
static int
eal_init(struct et_fi_proc *p)
{
	const char *def = "--no-huge --no-shconf --no-pci -m 512 --no-telemetry "
			  "--log-level=*:error --log-level=ethereal.*:warning";
	char *args = strdup(p->env.eal ? p->env.eal : def), *save = NULL, *tok;
	char *argv[64], prefix[64], lc[8];
	int argc = 0, r, s_optind = optind, s_opterr = opterr, s_optopt = optopt;
	char *s_optarg = optarg;
	cpu_set_t cpus;
	bool pinned = pthread_getaffinity_np(pthread_self(), sizeof(cpus), &cpus) == 0;

	if (args == NULL)
		return -FI_ENOMEM;
	argv[argc++] = "ethereal-fi";
	for (tok = strtok_r(args, " \t", &save); tok && argc < 56; tok = strtok_r(NULL, " \t", &save))
		argv[argc++] = tok;
	if (!has_arg(argc, argv, "--file-prefix")) {
		snprintf(prefix, sizeof(prefix), "--file-prefix=etfi%d", (int)getpid());
		argv[argc++] = prefix;
	}
	if (!has_arg(argc, argv, "-l") && !has_arg(argc, argv, "--lcores") &&
	    !has_arg(argc, argv, "-c")) {
		snprintf(lc, sizeof(lc), "%d", sched_getcpu() >= 0 ? sched_getcpu() : 0);
		argv[argc++] = "-l";
		argv[argc++] = lc;
	}
	argv[argc] = NULL;
	optind = 1;
	r = rte_eal_init(argc, argv);
	optind = s_optind;
	opterr = s_opterr;
	optopt = s_optopt;
	optarg = s_optarg;
	if (pinned)
		pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
	free(args);
	if (r < 0) {
		snprintf(p->why, sizeof(p->why), "EAL (FI_ETHEREAL_EAL): %s",
			 rte_strerror(rte_errno));
		return -FI_EINVAL;
	}
	p->eal_up = true;
	return 0;
}

/* FI_ETHEREAL_DEV=loop: one ring that the port both sends to and reads
 * from, so endpoints of one process (one address) reach each other with
 * no switch: the frames are real and cross a ring as net_ring's do. */
static int
open_loop(struct et_fi_proc *p)
{
	struct rte_ring *r = rte_ring_create("et_fi_loop", 4096, (int)rte_socket_id(),
					     RING_F_SP_ENQ | RING_F_SC_DEQ);

	if (r == NULL)
		return -ENOMEM;
	memset(&p->port, 0, sizeof(p->port));
	p->port.kind = ET_PORT_RING;
	p->port.rx = p->port.tx = r;
	p->port.own[0] = r;
	snprintf(p->port.name, sizeof(p->port.name), "loop");
	/* a locally administered MAC of the address */
	p->mac = (struct rte_ether_addr){{0x02, 0x00, (uint8_t)(p->ip >> 24),
					  (uint8_t)(p->ip >> 16), (uint8_t)(p->ip >> 8),
					  (uint8_t)p->ip}};
	return 0;
}

static void *
keeper_main(void *arg)
{
	struct et_fi_proc *p = arg;
	struct timespec nap = {0, (long)(ET_FI_KEEPER_IDLE_NS / 4)};

	while (!p->keeper_stop) {
		nanosleep(&nap, NULL);
		if (et_tsc_ns() - __atomic_load_n(&p->last_progress_ns, __ATOMIC_RELAXED) <
		    ET_FI_KEEPER_IDLE_NS)
			continue;
		if (pthread_mutex_trylock(&p->lock))
			continue; /* the consumer is in: it progresses */
		/* as long as there is work, as a NIC would (bounded: the lock) */
		for (int i = 0; i < 256 && et_fi_progress(); i++)
			;
		p->keeper_runs++;
		et_fi_unlock();
	}
	return NULL;
}

int
et_fi_port_open(void)
{
	struct et_fi_proc *p = &et_fi_proc;
	char dev[512];
	int r;

	if (p->nic_up)
		return 0;
	if (p->why[0])
		return -FI_ENODEV; /* said once */
	if ((r = et_fi_slot_choose(0)) != 0) {
		snprintf(p->why, sizeof(p->why), "no slot (see FI_LOG_LEVEL=warn)");
		return r;
	}
	if (p->env.dev == NULL) {
		snprintf(p->why, sizeof(p->why),
			 "no port: set FI_ETHEREAL_DEV (a DPDK device, %%d for the slot; "
			 "'loop' for one process)");
		goto fail;
	}
	if (!p->eal_up && eal_init(p))
		goto fail;
	p->mp = et_app_pool("et_fi", 16383, ET_APP_MBUF_4K_FRAME);
	if (p->mp == NULL) {
		snprintf(p->why, sizeof(p->why), "no memory for the frame pool (give EAL more: -m)");
		goto fail;
	}
	expand(p->env.dev, p->slot, dev, sizeof(dev));
	if (strcmp(dev, "loop") == 0) {
		r = open_loop(p);
	} else {
		r = et_port_ethdev(&p->port, dev, p->mp, 1024, 1);
		if (r == 0)
			rte_eth_macaddr_get(p->port.eth_port, &p->mac);
	}
	if (r) {
		snprintf(p->why, sizeof(p->why), "FI_ETHEREAL_DEV: cannot start '%s': %s", dev,
			 strerror(-r));
		goto fail;
	}
	if (p->env.mac) {
		char m[64];

		expand(p->env.mac, p->slot, m, sizeof(m));
		if (rte_ether_unformat_addr(m, &p->mac)) {
			snprintf(p->why, sizeof(p->why), "FI_ETHEREAL_MAC: '%s' is not a MAC", m);
			goto fail;
		}
	}
	/* the port is a real one: the wire paces it, not the conf's [link]
	 * model (its rate would let the NIC hand the port 2 frames a poll);
	 * FI_ETHEREAL_FAULT's faults on it */
	struct et_link_model wire = {0};
	char ferr[256];

	if (p->env.fault && et_link_faults_parse(p->env.fault, &wire, ferr, sizeof(ferr))) {
		snprintf(p->why, sizeof(p->why), "FI_ETHEREAL_FAULT: %s", ferr);
		goto fail;
	}

	if (et_nic_init(&p->nic, &p->port, &wire, p->mp, &p->mac, p->ip, 0x100, 16384)) {
		snprintf(p->why, sizeof(p->why), "cannot set up the NIC model");
		goto fail;
	}
	/* acknowledgements (ACK, NAK, CNP) ahead of data, as a NIC's queue of
	 * their own sends them: in their QP's turn, a congested port's
	 * receiver (every packet CE-marked) owed CNPs faster than one a turn
	 * drained them, its ACKs waited behind them, and healthy connections
	 * ran out of retries (IMB Alltoall on the 2x2x2 testbed) */
	et_nic_acks_first(&p->nic, true);
	/* switch ports and kernel hosts on the segment can resolve us */
	et_arp_init(&p->arp, p->mac.addr_bytes, p->ip, 10000000, 8);
	p->nic.arp = &p->arp;
	et_lb_host_init(&p->lb, &p->rc.lb, &p->rc.t, (uint32_t)p->slot, p->rc.seed);
	p->nic_up = true;
	p->last_progress_ns = et_tsc_ns();
	if (pthread_create(&p->keeper, NULL, keeper_main, p) == 0)
		p->keeper_up = true;
	else
		ET_FI_WARN(FI_LOG_DOMAIN, "no keeper thread: a consumer away for long looks dead\n");
	/* memif and tap come up a little after start */
	if (p->port.kind == ET_PORT_ETHDEV)
		et_port_await_link_up(&p->port, 5000, NULL);
	return 0;
fail:
	ET_FI_WARN(FI_LOG_DOMAIN, "%s\n", p->why);
	return -FI_ENODEV;
}

void
et_fi_port_close(void)
{
	struct et_fi_proc *p = &et_fi_proc;

	if (p->keeper_up) {
		p->keeper_stop = 1;
		et_fi_unlock(); /* it may be waiting for the lock */
		pthread_join(p->keeper, NULL);
		et_fi_lock();
		p->keeper_up = false;
	}
	if (p->nic_up) {
		et_fi_cm_close();
		et_nic_free(&p->nic);
		et_port_close(&p->port);
		p->nic_up = false;
	}
}

void
et_fi_linger(void)
{
	struct et_fi_proc *p = &et_fi_proc;
	uint64_t start, quiet_since, last_rx;

	if (!p->nic_up)
		return;
	start = quiet_since = et_tsc_ns();
	last_rx = p->nic.st.rx_pkts;
	for (;;) {
		uint64_t now = et_tsc_ns();

		et_fi_progress();
		if (p->nic.st.rx_pkts != last_rx) {
			last_rx = p->nic.st.rx_pkts;
			quiet_since = now;
		}
		if (now - quiet_since >= ET_FI_LINGER_QUIET_NS || now - start >= ET_FI_LINGER_MAX_NS)
			return;
		sched_yield();
	}
}

static void
add_qp(void *ctx, struct et_qp *qp)
{
	et_ctr_add(&et_qp_ctrs, ctx, et_qp_stats(qp));
}

static void
print_nonzero(void *ctx, const char *name, uint64_t v)
{
	if (v)
		fprintf(stderr, " %s %llu", name, (unsigned long long)v);
}

void
et_fi_report(void)
{
	struct et_fi_proc *p = &et_fi_proc;
	struct et_qp_stats st = p->qp_gone;
	char lb[32];

	if (!p->env.stats || !p->nic_up)
		return;
	et_nic_each_qp(&p->nic, add_qp, &st);
	fprintf(stderr,
		"ethereal-fi: slot %d %u.%u.%u.%u %s: qps %llu, tx_pkts %llu, retransmits %llu, "
		"timeouts %llu, rerouted %llu, paths_marked_bad %llu, rx_pkts %llu, "
		"cnps_rx %llu, keeper_runs %llu, reconnects %llu, resent %llu, dup_msgs %llu, "
		"lost_peers %llu\n",
		p->slot, p->ip >> 24, (p->ip >> 16) & 255, (p->ip >> 8) & 255, p->ip & 255,
		et_lb_name(&p->rc.lb, lb, sizeof(lb)), (unsigned long long)p->qps_made,
		(unsigned long long)(st.tx_pkts + st.read_resp_tx), (unsigned long long)st.retransmits,
		(unsigned long long)st.timeouts, (unsigned long long)p->lb.paths.rerouted,
		(unsigned long long)p->lb.paths.marked_bad,
		(unsigned long long)(st.rx_pkts + st.read_resp_rx),
		(unsigned long long)st.cnps_rx, (unsigned long long)p->keeper_runs,
		(unsigned long long)p->reconnects, (unsigned long long)p->resent,
		(unsigned long long)p->dup_msgs, (unsigned long long)p->lost_peers);
	if (p->env.stats > 1) { /* every counter not zero: QPs', then the NIC's */
		fprintf(stderr, "ethereal-fi: slot %d:", p->slot);
		et_ctr_each(&et_qp_ctrs, &st, "qp.", print_nonzero, NULL);
		et_ctr_each(&et_nic_ctrs, &p->nic.st, "nic.", print_nonzero, NULL);
		fprintf(stderr, "\n");
	}
}

void
et_fi_idle(void)
{
	if (et_fi_proc.env.yield && et_fi_proc.last_work == 0)
		sched_yield();
}

uint32_t
et_fi_progress(void)
{
	struct et_fi_proc *p = &et_fi_proc;
	uint32_t work;
	uint64_t now;

	if (!p->nic_up)
		return 0;
	p->progress_calls++;
	now = et_tsc_ns();
	__atomic_store_n(&p->last_progress_ns, now, __ATOMIC_RELAXED);
	work = et_nic_poll(&p->nic, now);
	et_fi_cm_poll(now);
	for (struct et_fi_ep *ep = p->eps; ep; ep = ep->next) {
		et_fi_conn_poll(ep);
		et_fi_flow_poll(ep, now);
		et_fi_keys_expire(ep, now);
	}
	/* what the completions posted leaves now, not at the next read */
	work += et_nic_poll(&p->nic, et_tsc_ns());
	p->last_work = work;
	return work;
}
