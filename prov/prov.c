/* SPDX-License-Identifier: BSD-3-Clause
 * The provider's entry point, its parameters, fi_getinfo and the fabric.
 *
 * What it claims is one fi_info, the one below: FI_EP_RDM with messages,
 * tagged messages (ignore bits, directed receives, peek and claim) and RMA
 * reads and writes (with remote CQ data), manual progress, FI_SOCKADDR_IN addresses
 * (the host's RoCE IPv4 address and the endpoint's port).  fi_info -p
 * ethereal -v prints exactly it.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "et_fi.h"

/* what every endpoint can do */
#define ET_FI_TX_CAPS (FI_MSG | FI_TAGGED | FI_RMA | FI_SEND | FI_WRITE | FI_READ)
#define ET_FI_RX_CAPS (FI_MSG | FI_TAGGED | FI_RMA | FI_RECV | FI_REMOTE_WRITE | \
		       FI_REMOTE_READ | FI_DIRECTED_RECV | FI_SOURCE)
#define ET_FI_DOM_CAPS (FI_LOCAL_COMM | FI_REMOTE_COMM)
#define ET_FI_CAPS (ET_FI_TX_CAPS | ET_FI_RX_CAPS | ET_FI_DOM_CAPS)
/* what RMA's target needs of the consumer's registrations */
#define ET_FI_MR_MODE (FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY)
/* libfabric's generic tag format: every bit the consumer's */
#define ET_FI_TAG_FORMAT 0xaaaaaaaaaaaaaaaaull

static struct fi_tx_attr tx_attr = {
	.caps = ET_FI_TX_CAPS,
	.msg_order = FI_ORDER_SAS,
	.comp_order = FI_ORDER_NONE,
	.inject_size = ET_FI_EAGER_DEFAULT,
	.size = ET_FI_TX_SIZE,
	.iov_limit = 1,
	.rma_iov_limit = 1,
};

static struct fi_rx_attr rx_attr = {
	.caps = ET_FI_RX_CAPS,
	.msg_order = FI_ORDER_SAS,
	.comp_order = FI_ORDER_NONE,
	.total_buffered_recv = 0,
	.size = ET_FI_RX_SIZE,
	.iov_limit = 1,
};

static struct fi_ep_attr ep_attr = {
	.type = FI_EP_RDM,
	.protocol = FI_PROTO_UNSPEC,
	.protocol_version = 1,
	.max_msg_size = ET_FI_MAX_MSG,
	.mem_tag_format = ET_FI_TAG_FORMAT,
	.tx_ctx_cnt = 1,
	.rx_ctx_cnt = 1,
};

static struct fi_domain_attr domain_attr = {
	.name = ET_FI_NAME,
	.threading = FI_THREAD_SAFE,
	.control_progress = FI_PROGRESS_MANUAL,
	.data_progress = FI_PROGRESS_MANUAL,
	.resource_mgmt = FI_RM_ENABLED,
	.av_type = FI_AV_UNSPEC,
	.mr_mode = ET_FI_MR_MODE,
	.mr_key_size = 4,
	.cq_data_size = ET_FI_CQ_DATA_SIZE,
	.cq_cnt = 256,
	.ep_cnt = 64,
	.tx_ctx_cnt = 64,
	.rx_ctx_cnt = 64,
	.max_ep_tx_ctx = 1,
	.max_ep_rx_ctx = 1,
	.cntr_cnt = 256,
	.mr_iov_limit = 1,
	.caps = ET_FI_DOM_CAPS,
	.mr_cnt = ET_FI_MR_CAP,
};

static struct fi_fabric_attr fabric_attr = {
	.name = ET_FI_NAME,
	.prov_version = ET_FI_PROV_VERSION,
};

static struct fi_info info_template = {
	.caps = ET_FI_CAPS,
	.addr_format = FI_SOCKADDR_IN,
	.tx_attr = &tx_attr,
	.rx_attr = &rx_attr,
	.ep_attr = &ep_attr,
	.domain_attr = &domain_attr,
	.fabric_attr = &fabric_attr,
};

/* ---- addresses ---- */

void
et_fi_sockaddr(uint32_t ip, uint16_t port, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons(port);
	sa->sin_addr.s_addr = htonl(ip);
}

/* node: a dotted IPv4 address (or a name /etc/hosts resolves); service: a
 * port number.  Either may be NULL (0). */
int
et_fi_parse_addr(const char *node, const char *service, uint32_t *ip, uint16_t *port)
{
	struct in_addr a;

	*ip = 0;
	*port = 0;
	if (service && *service) {
		char *end;
		unsigned long v = strtoul(service, &end, 10);

		if (*end || v > 65535)
			return -FI_EINVAL;
		*port = (uint16_t)v;
	}
	if (node && *node) {
		if (inet_pton(AF_INET, node, &a) == 1) {
			*ip = ntohl(a.s_addr);
		} else {
			struct addrinfo hints = {.ai_family = AF_INET}, *res = NULL;

			if (getaddrinfo(node, NULL, &hints, &res) || res == NULL)
				return -FI_ENODATA;
			*ip = ntohl(((struct sockaddr_in *)res->ai_addr)->sin_addr.s_addr);
			freeaddrinfo(res);
		}
	}
	return 0;
}

static int
addr_of(const void *addr, size_t len, uint32_t fmt, uint32_t *ip, uint16_t *port)
{
	const struct sockaddr_in *sa = addr;

	if (addr == NULL || len < sizeof(*sa) || sa->sin_family != AF_INET ||
	    (fmt != FI_FORMAT_UNSPEC && fmt != FI_SOCKADDR_IN && fmt != FI_SOCKADDR))
		return -FI_ENODATA;
	*ip = ntohl(sa->sin_addr.s_addr);
	*port = ntohs(sa->sin_port);
	return 0;
}

static void *
sockaddr_dup(uint32_t ip, uint16_t port, size_t *len)
{
	struct sockaddr_in *sa = malloc(sizeof(*sa));

	if (sa)
		et_fi_sockaddr(ip, port, sa);
	*len = sa ? sizeof(*sa) : 0;
	return sa;
}

/* ---- hints ---- */

#define REFUSE(...)                                                                           \
	do {                                                                                  \
		ET_FI_INFO(FI_LOG_CORE, __VA_ARGS__);                                         \
		return -FI_ENODATA;                                                           \
	} while (0)

/* The consumer's memory registration mode against ours: the bits an RMA
 * target needs (virtual addresses, the provider's keys, allocated memory)
 * when it asked for RMA, none when it did not; a consumer that named no
 * caps and cannot take those bits gets the caps without RMA.  Before API
 * 1.5 the answer is FI_MR_BASIC, what those bits were then. */
static int
mr_mode_for(uint32_t version, const struct fi_info *hints, uint64_t *caps, int *mode)
{
	int user = hints && hints->domain_attr ? hints->domain_attr->mr_mode : 0;
	const uint64_t rma = FI_RMA | FI_WRITE | FI_REMOTE_WRITE | FI_READ | FI_REMOTE_READ;

	if (user & FI_MR_SCALABLE)
		REFUSE("FI_MR_SCALABLE: our keys are the provider's (FI_MR_PROV_KEY)\n");
	if (FI_VERSION_LT(version, FI_VERSION(1, 5)) || (user & FI_MR_BASIC)) {
		*mode = FI_MR_BASIC;
		return 0;
	}
	*mode = 0;
	if (!(*caps & rma) || (user & ET_FI_MR_MODE) == ET_FI_MR_MODE || !hints) {
		*mode = *caps & rma ? ET_FI_MR_MODE : 0;
		return 0;
	}
	if (hints && hints->caps)
		REFUSE("mr_mode 0x%x: RMA needs FI_MR_VIRT_ADDR|FI_MR_ALLOCATED|FI_MR_PROV_KEY\n",
		       user);
	*caps &= ~rma;
	return 0;
}

static int
check_hints(const struct fi_info *h)
{
	if (h->ep_attr) {
		const struct fi_ep_attr *e = h->ep_attr;

		if (e->type != FI_EP_UNSPEC && e->type != FI_EP_RDM)
			REFUSE("endpoint type %d: only FI_EP_RDM\n", e->type);
		if (e->max_msg_size > ET_FI_MAX_MSG)
			REFUSE("max_msg_size %zu\n", e->max_msg_size);
		if (e->tx_ctx_cnt > 1 || e->rx_ctx_cnt > 1)
			REFUSE("scalable or shared contexts\n");
		if (e->protocol != FI_PROTO_UNSPEC)
			REFUSE("protocol %u\n", e->protocol);
	}
	if (h->caps & ~(uint64_t)ET_FI_CAPS)
		REFUSE("caps 0x%llx: not all claimed\n", (unsigned long long)h->caps);
	if (h->addr_format != FI_FORMAT_UNSPEC && h->addr_format != FI_SOCKADDR_IN &&
	    h->addr_format != FI_SOCKADDR)
		REFUSE("address format %u: only FI_SOCKADDR_IN\n", h->addr_format);
	if (h->tx_attr) {
		const struct fi_tx_attr *t = h->tx_attr;

		if ((t->msg_order & ~tx_attr.msg_order) || (t->comp_order & ~tx_attr.comp_order))
			REFUSE("tx order 0x%llx/0x%llx: only FI_ORDER_SAS\n",
			       (unsigned long long)t->msg_order, (unsigned long long)t->comp_order);
		if (t->iov_limit > 1 || t->rma_iov_limit > 1 || t->size > tx_attr.size ||
		    t->inject_size > et_fi_proc.env.eager)
			REFUSE("tx sizes\n");
		if (t->caps & ~tx_attr.caps)
			REFUSE("tx caps\n");
	}
	if (h->rx_attr) {
		const struct fi_rx_attr *r = h->rx_attr;

		if ((r->msg_order & ~rx_attr.msg_order) || (r->comp_order & ~rx_attr.comp_order))
			REFUSE("rx order: only FI_ORDER_SAS\n");
		if (r->iov_limit > 1 || r->size > rx_attr.size || r->total_buffered_recv)
			REFUSE("rx sizes\n");
	}
	if (h->domain_attr) {
		const struct fi_domain_attr *d = h->domain_attr;

		if (d->name && strcmp(d->name, ET_FI_NAME))
			REFUSE("domain %s\n", d->name);
		if (d->control_progress == FI_PROGRESS_AUTO || d->data_progress == FI_PROGRESS_AUTO)
			REFUSE("FI_PROGRESS_AUTO: progress is manual (in CQ reads)\n");
		if (d->cq_data_size > ET_FI_CQ_DATA_SIZE)
			REFUSE("cq_data_size %zu: 4 bytes (an immediate)\n", d->cq_data_size);
		if (d->av_type != FI_AV_UNSPEC && d->av_type != FI_AV_TABLE &&
		    d->av_type != FI_AV_MAP)
			REFUSE("av_type %d\n", d->av_type);
		if (d->mr_key_size > 4 || (d->caps & ~(uint64_t)ET_FI_DOM_CAPS))
			REFUSE("domain caps or key size\n");
		if (d->max_ep_tx_ctx > 1 || d->max_ep_rx_ctx > 1 || d->max_ep_stx_ctx ||
		    d->max_ep_srx_ctx)
			REFUSE("shared or scalable contexts\n");
	}
	if (h->fabric_attr && h->fabric_attr->name && strcmp(h->fabric_attr->name, ET_FI_NAME))
		REFUSE("fabric %s\n", h->fabric_attr->name);
	return 0;
}

/* The caps an info gets: those asked (with their implied halves) or all. */
static uint64_t
caps_for(uint64_t asked)
{
	uint64_t c;

	if (!asked)
		return ET_FI_CAPS;
	c = asked & ET_FI_CAPS;
	if ((c & (FI_MSG | FI_TAGGED)) && !(c & (FI_SEND | FI_RECV)))
		c |= FI_SEND | FI_RECV;
	if ((c & FI_RMA) && !(c & (FI_WRITE | FI_REMOTE_WRITE | FI_READ | FI_REMOTE_READ)))
		c |= FI_WRITE | FI_REMOTE_WRITE | FI_READ | FI_REMOTE_READ;
	if (!(c & (FI_LOCAL_COMM | FI_REMOTE_COMM)))
		c |= FI_LOCAL_COMM | FI_REMOTE_COMM;
	return c;
}

int
et_fi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
	      const struct fi_info *hints, struct fi_info **out)
{
	struct fi_info *fi;
	uint32_t src_ip = 0, dst_ip = 0;
	uint16_t src_port = 0, dst_port = 0;
	uint64_t caps;
	int mr_mode, r;

	*out = NULL;
	if ((r = et_fi_env_load()) != 0)
		return r;
	if (hints && (r = check_hints(hints)) != 0)
		return r;
	caps = caps_for(hints ? hints->caps : 0);
	if (mr_mode_for(version, hints, &caps, &mr_mode))
		return -FI_ENODATA;
	if (flags & FI_SOURCE) {
		if ((r = et_fi_parse_addr(node, service, &src_ip, &src_port)) != 0)
			return r == -FI_EINVAL ? -FI_ENODATA : r;
	} else if (node || service) {
		if ((r = et_fi_parse_addr(node, service, &dst_ip, &dst_port)) != 0)
			return r == -FI_EINVAL ? -FI_ENODATA : r;
		if (node == NULL)
			REFUSE("a service with no node and no FI_SOURCE\n");
	}
	if (hints && hints->src_addr && !src_ip &&
	    addr_of(hints->src_addr, hints->src_addrlen, hints->addr_format, &src_ip, &src_port))
		REFUSE("hints->src_addr is not a sockaddr_in\n");
	if (hints && hints->dest_addr && !dst_ip &&
	    addr_of(hints->dest_addr, hints->dest_addrlen, hints->addr_format, &dst_ip, &dst_port))
		REFUSE("hints->dest_addr is not a sockaddr_in\n");
	/* the source is ours: the address names our slot, or the rule picks it */
	if ((r = et_fi_slot_choose(src_ip)) != 0)
		return r;
	fi = fi_dupinfo(&info_template);
	if (fi == NULL)
		return -FI_ENOMEM;
	fi->caps = caps;
	fi->tx_attr->caps = caps & ET_FI_TX_CAPS;
	fi->rx_attr->caps = caps & ET_FI_RX_CAPS;
	fi->tx_attr->inject_size = et_fi_proc.env.eager;
	fi->domain_attr->mr_mode = mr_mode;
	if (hints) {
		if (hints->domain_attr) {
			const struct fi_domain_attr *d = hints->domain_attr;

			if (d->av_type != FI_AV_UNSPEC)
				fi->domain_attr->av_type = d->av_type;
			if (d->threading != FI_THREAD_UNSPEC)
				fi->domain_attr->threading = d->threading;
			if (d->resource_mgmt != FI_RM_UNSPEC)
				fi->domain_attr->resource_mgmt = d->resource_mgmt;
		}
		if (hints->tx_attr)
			fi->tx_attr->op_flags = hints->tx_attr->op_flags;
		if (hints->rx_attr)
			fi->rx_attr->op_flags = hints->rx_attr->op_flags;
		if (hints->ep_attr && hints->ep_attr->mem_tag_format)
			fi->ep_attr->mem_tag_format = hints->ep_attr->mem_tag_format;
	}
	fi->src_addr = sockaddr_dup(et_process.ip, src_port, &fi->src_addrlen);
	if (dst_ip)
		fi->dest_addr = sockaddr_dup(dst_ip, dst_port, &fi->dest_addrlen);
	if (!fi->src_addr || (dst_ip && !fi->dest_addr)) {
		fi_freeinfo(fi);
		return -FI_ENOMEM;
	}
	*out = fi;
	return 0;
}

/* ---- the fabric ---- */

static int
fabric_close(struct fid *fid)
{
	struct et_fi_fabric *f = (struct et_fi_fabric *)fid;
	int r = 0;

	et_process_lock();
	if (f->refs)
		r = -FI_EBUSY;
	et_process_unlock();
	if (r == 0)
		free(f);
	return r;
}

/* Only an EQ with a file descriptor and nothing in it may be slept on; a
 * CQ or counter has no descriptor (its completions are made in its reads). */
static int
fabric_trywait(struct fid_fabric *fabric, struct fid **fids, int count)
{
	int r = 0;

	et_process_lock();
	for (int i = 0; i < count && r == 0; i++) {
		struct et_fi_eq *eq;

		if (fids[i]->fclass != FI_CLASS_EQ)
			r = -FI_EAGAIN;
		else if ((eq = container_of(fids[i], struct et_fi_eq, eq.fid))->fd < 0 ||
			 eq->head != eq->tail)
			r = -FI_EAGAIN;
	}
	et_process_unlock();
	return r;
}

static struct fi_ops fabric_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = fabric_close,
	.bind = et_fi_no_bind,
	.control = et_fi_no_control,
	.ops_open = et_fi_no_ops_open,
};

static struct fi_ops_fabric fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = et_fi_domain_open,
	.passive_ep = et_fi_no_passive_ep,
	.eq_open = et_fi_eq_open,
	.wait_open = et_fi_no_wait_open,
	.trywait = fabric_trywait,
};

int
et_fi_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
	struct et_fi_fabric *f;

	if (attr && attr->name && strcmp(attr->name, ET_FI_NAME))
		return -FI_EINVAL;
	if (et_fi_env_load())
		return -FI_EINVAL;
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return -FI_ENOMEM;
	f->fab.fid.fclass = FI_CLASS_FABRIC;
	f->fab.fid.context = context;
	f->fab.fid.ops = &fabric_fi_ops;
	f->fab.ops = &fabric_ops;
	*fabric = &f->fab;
	return 0;
}

/* ---- the provider ---- */

/* At exit: the port closes, unless the process is leaving from inside
 * the provider (a signal handler that calls exit(), as psm's does for
 * SIGTERM, while a read held the lock): then the lock is never free.  The
 * keeper thread holds it a while too (a bounded burst of progress), so
 * the lock is waited for, briefly: giving up on the keeper's hold left it
 * running in a library libfabric then unloaded. */
static void
et_fi_cleanup(void)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 1;
	if (pthread_mutex_timedlock(&et_process.lock, &until))
		return;
	if (et_fi_proc.eps) /* endpoints never closed: their counters now */
		et_fi_report();
	et_fi_port_close();
	et_process_unlock();
}

struct fi_provider et_fi_prov = {
	.version = ET_FI_PROV_VERSION,
	.fi_version = ET_FI_API_VERSION,
	.name = ET_FI_NAME,
	.getinfo = et_fi_getinfo,
	.fabric = et_fi_fabric_open,
	.cleanup = et_fi_cleanup,
};

/* The parameters, as fi_info -e lists them (FI_ETHEREAL_<NAME>). */
static void
define_params(void)
{
	fi_param_define(&et_fi_prov, "eal", FI_PARAM_STRING,
			"DPDK EAL arguments for the process (default: --no-huge --no-shconf "
			"--no-pci -m 512 --no-telemetry --log-level=*:error; -l is the CPU the "
			"consumer runs on, --file-prefix=etfi<pid> unless given)");
	fi_param_define(&et_fi_prov, "dev", FI_PARAM_STRING,
			"the DPDK device of the process's port, every %%d replaced by its slot, "
			"e.g. net_memif0,role=client,socket=/tmp/sw/h%%d.sock (a port of one "
			"ethereal-switch per slot); 'loop' for a ring to itself (one process)");
	fi_param_define(&et_fi_prov, "slot", FI_PARAM_INT,
			"this process's slot: host N of the conf's topology (its address is "
			"10.0.TOR.(N %% hosts-per-leaf + 1)). Unset: the host whose address the "
			"consumer names as its source (-s ADDR), else the local rank "
			"(OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID), else the "
			"first slot no other process holds; a slot is held (a lock in "
			"FI_ETHEREAL_RUNDIR) until the process exits");
	fi_param_define(&et_fi_prov, "conf", FI_PARAM_STRING,
			"the fabric's conf (ethereal-fabric's INI: [topology] for the hosts, "
			"their addresses and paths, [link], [transport] for MTU, RTO, retries and "
			"DCTCP, [lb] for the policy and its batch); unset: the built-in 2x2x2 "
			"leaf-spine");
	fi_param_define(&et_fi_prov, "lb", FI_PARAM_STRING,
			"the load-balancing policy, over the conf's: ethereal, ecmp, spray, "
			"reps or mprdma:N");
	fi_param_define(&et_fi_prov, "eager", FI_PARAM_INT,
			"messages up to this many bytes go in one SEND (and are fi_inject's "
			"limit); larger ones by rendezvous (default 8192)");
	fi_param_define(&et_fi_prov, "rdv", FI_PARAM_STRING,
			"how a rendezvous moves a large message: write (default: the receiver "
			"answers CTS, the sender WRITEs, paced by its ACKs, then says DONE) or read "
			"(the receiver READs the sender's bytes, then FIN; READ responses are paced "
			"at the conf's line rate, which must then be the port's)");
	fi_param_define(&et_fi_prov, "rundir", FI_PARAM_STRING,
			"where the slots' locks are (default /tmp)");
	fi_param_define(&et_fi_prov, "yield", FI_PARAM_BOOL,
			"a CQ, counter or EQ read that finds nothing gives the core away "
			"(sched_yield): for processes sharing cores with their switch");
	fi_param_define(&et_fi_prov, "stats", FI_PARAM_INT,
			"1: when the process's last endpoint closes, one line to stderr: its QPs, "
			"packets, retransmits, timeouts, QPs rerouted and paths marked bad; 2: "
			"and a line of every QP and NIC counter that is not zero");
	fi_param_define(&et_fi_prov, "mac", FI_PARAM_STRING,
			"the port's MAC, over the device's (%%d: the slot)");
	fi_param_define(&et_fi_prov, "fault", FI_PARAM_STRING,
			"lose, corrupt, duplicate or flap what this process sends, to test its "
			"peers' recovery and its own (ethereal-node's --fault: loss-ppm=, "
			"ge-enter-ppm=, ge-exit-ppm=, ge-loss-ppm=, corrupt-ppm=, dup-ppm=, "
			"flap-period-us=, flap-down-us=)");
}

/* libfabric's entry point for an external provider (FI_EXT_INI defines
 * it, with no prototype of its own) */
struct fi_provider *fi_prov_ini(void);

FI_EXT_INI
{
	define_params();
	return &et_fi_prov;
}
