/* SPDX-License-Identifier: BSD-3-Clause
 * The process runtime (et_process.h): one per process, whichever front
 * ends use it.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
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

#include "base/et_rand.h"
#include "host/et_process.h"
#include "host/et_rdmacm.h"
#include "host/et_worker.h"
#include "link/et_link_conf.h"

/* frames the process's pool holds: its queues and every QP's window */
#define POOL_MBUFS 16383u
/* a 4 KB-MTU RoCEv2 frame and its headroom */
#define POOL_DATA_ROOM (RTE_PKTMBUF_HEADROOM + 4096 + 256)

struct et_process et_process = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.slot = -1,
	.slot_fd = -1,
};

void
et_process_lock(void)
{
	pthread_mutex_lock(&et_process.lock);
}

void
et_process_unlock(void)
{
	pthread_mutex_unlock(&et_process.lock);
}

uint64_t
et_process_now(void)
{
	return et_process.eal_up ? et_tsc_ns() : 0;
}

/* ---- the conf ---- */

static const char *
keep(char **at, const char *s)
{
	char *d;

	if (s == NULL)
		return NULL;
	d = *at;
	strcpy(d, s);
	*at += strlen(s) + 1;
	return d;
}

int
et_process_configure(const struct et_process_conf *c)
{
	struct et_process *p = &et_process;
	const char *s[] = {c->program, c->prefix, c->eal, c->dev, c->mac, c->ip, c->rundir,
			   c->fault};
	size_t n = 0;
	char *at;

	if (p->configured)
		return 0;
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		n += s[i] ? strlen(s[i]) + 1 : 0;
	if ((p->strs = malloc(n + 16)) == NULL)
		return -ENOMEM;
	at = p->strs;
	p->c = *c;
	p->c.program = keep(&at, c->program ? c->program : "ethereal");
	p->c.prefix = keep(&at, c->prefix ? c->prefix : "et");
	p->c.eal = keep(&at, c->eal);
	p->c.dev = keep(&at, c->dev);
	p->c.mac = keep(&at, c->mac);
	p->c.ip = keep(&at, c->ip);
	if (c->ip) {
		struct in_addr a;

		if (inet_pton(AF_INET, c->ip, &a) != 1) {
			free(p->strs);
			p->strs = NULL;
			return -EINVAL;
		}
		p->own_ip = ntohl(a.s_addr);
	}
	p->c.rundir = keep(&at, c->rundir);
	p->c.fault = keep(&at, c->fault);
	p->psn_rng = c->rc.seed * 0x9e3779b97f4a7c15ull + 0x5851f42d4c957f2dull;
	p->configured = true;
	return 0;
}

uint32_t
et_process_host_of_ip(uint32_t ip)
{
	const struct et_topo *t = &et_process.c.rc.t;
	uint32_t n = et_topo_hosts(t);

	for (uint32_t k = 0; k < n; k++)
		if (et_topo_host_ip(t, k) == ip)
			return k;
	return UINT32_MAX;
}

void
et_process_mac_of(uint32_t ip, struct rte_ether_addr *mac)
{
	struct et_process *p = &et_process;
	uint64_t start = et_tsc_ns();
	const uint8_t *m = NULL;

	memset(mac, 0xff, sizeof(*mac));
	if (!p->nic_up || et_process_host_of_ip(ip) != UINT32_MAX)
		return;
	for (uint64_t now = start; (m = et_arp_lookup(&p->arp, ip)) == NULL; now = et_tsc_ns()) {
		et_nic_arp_request(&p->nic, ip, now); /* rate-limited by the ARP table */
		/* from inside a progress (the CM agent's events) none may be
		 * run: asked, and answered by what the agent learned (its
		 * caller's) */
		if (p->progressing || now - start >= ET_PROCESS_ARP_WAIT_NS)
			return;
		if (et_process_progress() == 0)
			sched_yield();
	}
	memcpy(mac->addr_bytes, m, sizeof(mac->addr_bytes));
}

/* ---- the slot ---- */

/* The device template as a file name: its characters that are not. */
static void
lock_path(int slot, char *out, size_t len)
{
	const struct et_process_conf *c = &et_process.c;
	const char *dev = c->dev ? c->dev : "none";
	uint64_t h = 1469598103934665603ull; /* FNV-1a of the template */

	for (const char *ch = dev; *ch; ch++)
		h = (h ^ (uint8_t)*ch) * 1099511628211ull;
	snprintf(out, len, "%s/%s-%u-%016llx-%d.lock", c->rundir ? c->rundir : "/tmp",
		 c->program, (unsigned)getuid(), (unsigned long long)h, slot);
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
	et_process.slot_fd = fd;
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
et_process_slot_choose(uint32_t want_ip, char *why, size_t len)
{
	struct et_process *p = &et_process;
	int n = (int)et_topo_hosts(&p->c.rc.t), slot = -1, r;

	if (p->slot >= 0) {
		if (want_ip == 0 || want_ip == p->ip)
			return 0;
		snprintf(why, len, "this process is slot %d already, another address", p->slot);
		return -ENODATA;
	}
	if (p->c.slot >= 0) {
		slot = p->c.slot;
	} else if (want_ip) {
		uint32_t h = et_process_host_of_ip(want_ip);

		if (h == UINT32_MAX) {
			snprintf(why, len, "%u.%u.%u.%u is no host of the fabric's topology",
				 want_ip >> 24, (want_ip >> 16) & 255, (want_ip >> 8) & 255,
				 want_ip & 255);
			return -ENODATA;
		}
		slot = (int)h;
	} else {
		slot = local_rank();
	}
	if (slot >= n) {
		snprintf(why, len, "slot %d: the fabric's topology has %d hosts", slot, n);
		return -ENODATA;
	}
	if (slot >= 0) {
		r = try_lock(slot);
		if (r <= 0) {
			snprintf(why, len, "slot %d: %s", slot,
				 r == 0 ? "held by another process" : strerror(-r));
			return -ENODATA;
		}
	} else {
		for (int k = 0; k < n && slot < 0; k++) {
			r = try_lock(k);
			if (r < 0) {
				snprintf(why, len, "slot lock: %s", strerror(-r));
				return -ENODATA;
			}
			if (r == 1)
				slot = k;
		}
		if (slot < 0) {
			snprintf(why, len, "all %d slots are held by other processes", n);
			return -ENODATA;
		}
	}
	p->slot = slot;
	p->ip = et_topo_host_ip(&p->c.rc.t, (uint32_t)slot);
	if (p->own_ip)
		p->ip = p->own_ip;
	if (want_ip && want_ip != p->ip) {
		snprintf(why, len, "slot %d is another address", slot);
		return -ENODATA;
	}
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

/* ---- EAL, port, NIC ---- */

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
eal_init(struct et_process *p)
{
	char *args = strdup(p->c.eal ? p->c.eal : ET_PROCESS_EAL), *save = NULL, *tok;
	char *argv[64], prefix[64], lc[8];
	int argc = 0, r, s_optind = optind, s_opterr = opterr, s_optopt = optopt;
	char *s_optarg = optarg;
	cpu_set_t cpus;
	bool pinned = pthread_getaffinity_np(pthread_self(), sizeof(cpus), &cpus) == 0;

	if (args == NULL)
		return -ENOMEM;
	argv[argc++] = (char *)p->c.program;
	for (tok = strtok_r(args, " \t", &save); tok && argc < 56; tok = strtok_r(NULL, " \t", &save))
		argv[argc++] = tok;
	/* a prefix of its own per process: its runtime folder, its telemetry */
	if (!has_arg(argc, argv, "--file-prefix")) {
		snprintf(prefix, sizeof(prefix), "--file-prefix=%.20s%d", p->c.prefix, (int)getpid());
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
		snprintf(p->why, sizeof(p->why), "EAL (%s): %s", p->c.eal ? p->c.eal : "the default",
			 rte_strerror(rte_errno));
		return -EINVAL;
	}
	p->eal_up = true;
	return 0;
}

/* The keeper: progress for a consumer that is away (computing, asleep,
 * blocked in a read of its own, as perftest's servers wait in a TCP read
 * while their peer WRITEs), as a NIC answers whatever its host does.  It
 * takes over once the consumer has not progressed for
 * ET_PROCESS_KEEPER_AWAY_NS (at once while one waits for an event), polls
 * on while there is work (keeper_run), and naps longer and longer (up to
 * KEEPER_NAP_MAX_NS) while there is none. */
#define KEEPER_NAP_MIN_NS 20000ull
#define KEEPER_NAP_MAX_NS 1000000ull
#define KEEPER_SPIN_NS 100000ull

/* One run of the keeper, the lock held on entry and let go on return: it
 * polls as a NIC would, on while packets come and until none has for
 * KEEPER_SPIN_NS (a stream's packets come microseconds apart, a nap is
 * tens: a passive receiver's ring, as perftest's WRITE server's, filled
 * between naps and the switch marked its stream down to a third).  The
 * lock is let go between polls that found nothing, so that a consumer
 * that comes back gets in; then the run ends.  Its work. */
static uint32_t
keeper_run(struct et_process *p, uint64_t *mine)
{
	uint64_t idle_from = et_tsc_ns();
	uint32_t work = 0;

	for (uint32_t i = 1; !p->keeper_stop; i++) {
		uint32_t w = et_process_progress();
		uint64_t now = et_tsc_ns();

		work += w;
		*mine = p->last_progress_ns;
		if (w)
			idle_from = now;
		else if (now - idle_from >= KEEPER_SPIN_NS)
			break;
		if (w && i % 256)
			continue;
		et_process_unlock();
		if (!w && p->c.yield)
			sched_yield();
		if (pthread_mutex_trylock(&p->lock))
			return work; /* the consumer is in */
		if (p->last_progress_ns != *mine)
			break; /* the consumer progressed meanwhile: it is back */
	}
	et_process_unlock();
	return work;
}

static void *
keeper_main(void *arg)
{
	struct et_process *p = arg;
	uint64_t mine = 0; /* last_progress_ns as the keeper's own run left it */
	uint64_t nap = KEEPER_NAP_MAX_NS;

	while (!p->keeper_stop) {
		struct timespec ts = {0, (long)nap};
		uint64_t last;
		uint32_t work = 0;

		nanosleep(&ts, NULL);
		last = __atomic_load_n(&p->last_progress_ns, __ATOMIC_RELAXED);
		if (__atomic_load_n(&p->waiters, __ATOMIC_RELAXED) == 0 && last != mine &&
		    et_tsc_ns() - last < ET_PROCESS_KEEPER_AWAY_NS) {
			nap = ET_PROCESS_KEEPER_AWAY_NS / 2; /* the consumer's at it */
			continue;
		}
		if (pthread_mutex_trylock(&p->lock)) {
			nap = KEEPER_NAP_MIN_NS; /* the consumer is in: it progresses */
			continue;
		}
		work = keeper_run(p, &mine);
		p->keeper_runs++;
		nap = work ? KEEPER_NAP_MIN_NS
			   : nap * 2 < KEEPER_NAP_MAX_NS ? nap * 2 : KEEPER_NAP_MAX_NS;
	}
	return NULL;
}

int
et_process_open(void)
{
	struct et_process *p = &et_process;
	struct et_link_model wire = {0};
	char dev[512], err[256];
	int r;

	if (p->nic_up) {
		p->users++;
		return 0;
	}
	if (p->why[0])
		return -ENODEV; /* said once */
	if (!p->configured) {
		snprintf(p->why, sizeof(p->why), "the process runtime has no conf");
		return -ENODEV;
	}
	if (p->slot < 0 && (r = et_process_slot_choose(0, err, sizeof(err))) != 0) {
		snprintf(p->why, sizeof(p->why), "no slot: %s", err);
		return -ENODEV;
	}
	if (p->c.dev == NULL) {
		snprintf(p->why, sizeof(p->why), "no port: give a DPDK device (%%d for the slot; "
			 "'loop' for one process)");
		return -ENODEV;
	}
	/* the port is a real one: the wire paces it, not the conf's [link]
	 * model (its rate would let the NIC hand the port 2 frames a poll);
	 * the faults asked for on it */
	if (p->c.fault && et_link_faults_parse(p->c.fault, &wire, err, sizeof(err))) {
		snprintf(p->why, sizeof(p->why), "faults: %s", err);
		return -ENODEV;
	}
	if (!p->eal_up && eal_init(p))
		return -ENODEV;
	p->mp = rte_pktmbuf_pool_create("et_process", POOL_MBUFS, 256, 0, POOL_DATA_ROOM,
					(int)rte_socket_id());
	if (p->mp == NULL) {
		snprintf(p->why, sizeof(p->why), "no memory for the frame pool (give EAL more: -m)");
		return -ENODEV;
	}
	expand(p->c.dev, p->slot, dev, sizeof(dev));
	if (strcmp(dev, "loop") == 0) {
		r = et_port_loop(&p->port, "loop", 4096, (int)rte_socket_id());
		/* a locally administered MAC of the address */
		p->mac = (struct rte_ether_addr){{0x02, 0x00, (uint8_t)(p->ip >> 24),
						  (uint8_t)(p->ip >> 16), (uint8_t)(p->ip >> 8),
						  (uint8_t)p->ip}};
	} else {
		r = et_port_ethdev(&p->port, dev, p->mp, 1024, 1);
		if (r == 0)
			rte_eth_macaddr_get(p->port.eth_port, &p->mac);
	}
	if (r) {
		snprintf(p->why, sizeof(p->why), "cannot start the port '%s': %s", dev, strerror(-r));
		return -ENODEV;
	}
	if (p->c.mac) {
		char m[64];

		expand(p->c.mac, p->slot, m, sizeof(m));
		if (rte_ether_unformat_addr(m, &p->mac)) {
			snprintf(p->why, sizeof(p->why), "'%s' is not a MAC", m);
			et_port_close(&p->port);
			return -ENODEV;
		}
	}
	if (et_nic_init(&p->nic, &p->port, &wire, p->mp, &p->mac, p->ip, 0x100, 16384)) {
		snprintf(p->why, sizeof(p->why), "cannot set up the NIC model");
		et_port_close(&p->port);
		return -ENODEV;
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
	et_lb_host_init(&p->lb, &p->c.rc.lb, &p->c.rc.t, (uint32_t)p->slot, p->c.rc.seed);
	p->nic_up = true;
	p->users = 1;
	p->last_progress_ns = et_tsc_ns();
	if (pthread_create(&p->keeper, NULL, keeper_main, p) == 0)
		p->keeper_up = true;
	/* memif and tap come up a little after start */
	if (p->port.kind == ET_PORT_ETHDEV)
		et_port_await_link_up(&p->port, 5000, NULL);
	return 0;
}

/* The files EAL makes in its runtime folder: its config (a primary's
 * lock), memory tables, the multi-process and telemetry sockets. */
static bool
eal_file(const char *name)
{
	static const char *const prefixes[] = {"config", "fbarray_", "mp_socket",
					       "hugepage_info", "dpdk_telemetry"};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

void
et_eal_runtime_dir_remove(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;

	/* with --no-shconf it holds nothing, and stays all the same */
	if ((d = opendir(dir)) == NULL)
		return;
	while ((e = readdir(d)) != NULL)
		if (eal_file(e->d_name) &&
		    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < sizeof(path))
			unlink(path);
	closedir(d);
	rmdir(dir);
}

void
et_process_close(void)
{
	struct et_process *p = &et_process;

	if (p->users > 1) {
		p->users--;
		return;
	}
	p->users = 0;
	if (p->keeper_up) {
		p->keeper_stop = 1;
		et_process_unlock(); /* it may be waiting for the lock */
		pthread_join(p->keeper, NULL);
		et_process_lock();
		p->keeper_up = false;
	}
	if (p->nic_up) {
		if (p->rdmacm)
			et_rdmacm_destroy(p->rdmacm, et_process_now());
		p->rdmacm = NULL;
		et_nic_free(&p->nic);
		et_port_close(&p->port);
		p->nic_up = false;
	}
	/* the EAL stays (its threads may outlive a library unloaded), its
	 * folder goes: a process per MPI rank left one each */
	if (p->eal_up && rte_eal_process_type() == RTE_PROC_PRIMARY)
		et_eal_runtime_dir_remove(rte_eal_get_runtime_dir());
}

/* ---- progress ---- */

int
et_process_hook(et_process_hook_fn fn, void *ctx)
{
	struct et_process *p = &et_process;

	for (uint32_t i = 0; i < p->n_hooks; i++)
		if (p->hooks[i].fn == fn && p->hooks[i].ctx == ctx)
			return 0;
	if (p->n_hooks == ET_PROCESS_MAX_HOOKS)
		return -ENOSPC;
	p->hooks[p->n_hooks].fn = fn;
	p->hooks[p->n_hooks].ctx = ctx;
	p->n_hooks++;
	return 0;
}

void
et_process_unhook(et_process_hook_fn fn, void *ctx)
{
	struct et_process *p = &et_process;

	for (uint32_t i = 0; i < p->n_hooks; i++)
		if (p->hooks[i].fn == fn && p->hooks[i].ctx == ctx) {
			p->hooks[i] = p->hooks[--p->n_hooks];
			return;
		}
}

uint32_t
et_process_progress(void)
{
	struct et_process *p = &et_process;
	uint32_t work;
	uint64_t now;

	if (!p->nic_up)
		return 0;
	p->progress_calls++;
	p->progressing++;
	now = et_tsc_ns();
	__atomic_store_n(&p->last_progress_ns, now, __ATOMIC_RELAXED);
	work = et_nic_poll(&p->nic, now);
	if (p->rdmacm) {
		struct et_rdmacm_event ev;

		et_rdmacm_poll(p->rdmacm, now);
		while (et_rdmacm_get_event(p->rdmacm, &ev)) {
			struct et_process_cm_holder *h = ev.ctx;

			if (h) {
				h->on_event(h, &ev, now);
			} else {
				if (ev.type == ET_CM_EV_CONNECT_REQUEST)
					et_rdmacm_reject(p->rdmacm, ev.id, NULL, 0, now);
				et_rdmacm_release(p->rdmacm, ev.id, now);
			}
			work++;
		}
	}
	for (uint32_t i = 0; i < p->n_hooks; i++)
		work += p->hooks[i].fn(p->hooks[i].ctx, now);
	/* what the completions posted leaves now, not at the next read */
	work += et_nic_poll(&p->nic, et_tsc_ns());
	p->last_work = work;
	p->progressing--;
	return work;
}

void
et_process_linger(void)
{
	struct et_process *p = &et_process;
	uint64_t start, quiet_since, last_rx;

	if (!p->nic_up)
		return;
	start = quiet_since = et_tsc_ns();
	last_rx = p->nic.st.rx_pkts;
	for (;;) {
		uint64_t now = et_tsc_ns();

		et_process_progress();
		if (p->nic.st.rx_pkts != last_rx) {
			last_rx = p->nic.st.rx_pkts;
			quiet_since = now;
		}
		if (now - quiet_since >= ET_PROCESS_LINGER_QUIET_NS ||
		    now - start >= ET_PROCESS_LINGER_MAX_NS)
			return;
		sched_yield();
	}
}

void
et_process_idle(void)
{
	if (et_process.c.yield && et_process.last_work == 0)
		sched_yield();
}

void
et_process_waiters(int d)
{
	__atomic_add_fetch(&et_process.waiters, (uint32_t)d, __ATOMIC_RELAXED);
}

/* ---- what front ends share of QPs and connections ---- */

struct et_rdmacm *
et_process_rdmacm(void)
{
	struct et_process *p = &et_process;
	struct et_rdmacm_conf conf;

	if (p->rdmacm || !p->nic_up)
		return p->rdmacm;
	et_rdmacm_conf_default(&conf);
	/* a peer in time wait refuses IDs it has seen: new ones per process */
	conf.cm.seed = et_tsc_ns() ^ ((uint64_t)getpid() << 32) ^ p->c.rc.seed;
	conf.cm.max_conns = 4096;
	/* the ToR routes by IP, as for the QPs: any MAC */
	memset(&conf.next_hop, 0xff, sizeof(conf.next_hop));
	p->rdmacm = et_rdmacm_create(&p->nic, &conf);
	return p->rdmacm;
}

uint32_t
et_process_psn(void)
{
	return (uint32_t)et_rand_next(&et_process.psn_rng) & ET_PSN_MASK;
}

uint16_t
et_process_first_path(uint32_t peer_host, bool keeps_one)
{
	struct et_lb_host *lb = &et_process.lb;
	struct et_lb_flow f = {peer_host, 1};
	struct et_lb_sub out[ET_LB_MAX_PATHS];
	uint16_t path;

	if (keeps_one && et_lb_per_packet(&et_process.c.rc.lb) &&
	    et_lb_host_path(lb, et_process_psn(), &path))
		return path;
	if (peer_host == UINT32_MAX || et_lb_plan_max(lb, 1) > ET_LB_MAX_PATHS ||
	    et_lb_plan(lb, &f, 1, et_process_now(), out) == 0)
		return (uint16_t)et_process_psn();
	return out[0].path;
}

void
et_process_qp_made(void)
{
	et_process.qps_made++;
}

void
et_process_qp_gone(struct et_qp *qp)
{
	et_ctr_add(&et_qp_ctrs, &et_process.qp_gone, et_qp_stats(qp));
}

static void
add_qp(void *ctx, struct et_qp *qp)
{
	et_ctr_add(&et_qp_ctrs, ctx, et_qp_stats(qp));
}

void
et_process_qp_stats(struct et_qp_stats *st)
{
	*st = et_process.qp_gone;
	if (et_process.nic_up)
		et_nic_each_qp(&et_process.nic, add_qp, st);
}

static void
print_nonzero(void *ctx, const char *name, uint64_t v)
{
	if (v)
		fprintf(ctx, " %s %llu", name, (unsigned long long)v);
}

void
et_process_print_summary(const char *who, const char *more)
{
	const struct et_process *x = &et_process;
	struct et_qp_stats st;
	char lb[32];

	et_process_qp_stats(&st);
	fprintf(stderr,
		"%s: slot %d %u.%u.%u.%u %s: qps %llu, tx_pkts %llu, retransmits %llu, "
		"timeouts %llu, rerouted %llu, paths_marked_bad %llu, rx_pkts %llu, "
		"cnps_rx %llu, keeper_runs %llu%s\n",
		who, x->slot, x->ip >> 24, (x->ip >> 16) & 255, (x->ip >> 8) & 255, x->ip & 255,
		et_lb_name(&x->c.rc.lb, lb, sizeof(lb)), (unsigned long long)x->qps_made,
		(unsigned long long)(st.tx_pkts + st.read_resp_tx), (unsigned long long)st.retransmits,
		(unsigned long long)st.timeouts, (unsigned long long)et_lb_host_rerouted(&x->lb),
		(unsigned long long)et_lb_host_marked_bad(&x->lb),
		(unsigned long long)(st.rx_pkts + st.read_resp_rx),
		(unsigned long long)st.cnps_rx, (unsigned long long)x->keeper_runs, more);
}

void
et_process_print_counters(const char *who)
{
	struct et_qp_stats st;
	char *text = NULL;
	size_t len = 0;
	FILE *line;

	if (!et_process.nic_up)
		return;
	et_process_qp_stats(&st);
	/* the line made whole, then written at once: the ranks of a job
	 * share stderr */
	line = open_memstream(&text, &len);
	if (line == NULL)
		return;
	fprintf(line, "%s: slot %d:", who, et_process.slot);
	et_ctr_each(&et_qp_ctrs, &st, "qp.", print_nonzero, line);
	et_ctr_each(&et_nic_ctrs, &et_process.nic.st, "nic.", print_nonzero, line);
	fprintf(line, "\n");
	if (fclose(line) == 0)
		fputs(text, stderr);
	free(text);
}
