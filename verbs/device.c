/* SPDX-License-Identifier: BSD-3-Clause
 * The device: found with no kernel (the environment names it), opened on
 * the process runtime, and what a program asks of it.
 *
 * ETHEREAL_DEV (the DPDK device of the port, %d: the slot) makes the
 * device exist; without it the list is empty, as on a host with no RDMA
 * device.  ETHEREAL_SLOT, _CONF, _LB, _EAL, _RUNDIR, _MAC, _FAULT, _YIELD
 * and _STATS are the provider's FI_ETHEREAL_* (docs/libfabric.md), read
 * the same way (host/et_process): same slot rule, same addresses.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "et_vb.h"
#include "et_cli.h"
#include "et_fabric_cli.h"

struct et_vb_device et_vb_device = {
	.dev = {
		.node_type = IBV_NODE_CA,
		.transport_type = IBV_TRANSPORT_IB,
		.name = ET_VB_DEVICE_NAME,
		.dev_name = "uverbs-" ET_VB_DEVICE_NAME,
		.dev_path = "",
		.ibdev_path = "",
	},
};

static struct et_vb_env env;
static int setup_rc = 1; /* 1: not yet */

static const char *
env_str(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

int
et_vb_setup(void)
{
	struct et_process_conf pc;
	char why[256];

	if (setup_rc != 1)
		return setup_rc;
	et_cli_program("ethereal-verbs");
	env.dev = env_str("ETHEREAL_DEV");
	env.conf = env_str("ETHEREAL_CONF");
	env.lb = env_str("ETHEREAL_LB");
	env.eal = env_str("ETHEREAL_EAL");
	env.rundir = env_str("ETHEREAL_RUNDIR");
	env.mac = env_str("ETHEREAL_MAC");
	env.ip = env_str("ETHEREAL_IP");
	env.fault = env_str("ETHEREAL_FAULT");
	env.slot = env_str("ETHEREAL_SLOT") ? atoi(env_str("ETHEREAL_SLOT")) : -1;
	env.yield = env_str("ETHEREAL_YIELD") && atoi(env_str("ETHEREAL_YIELD"));
	env.stats = env_str("ETHEREAL_STATS") ? atoi(env_str("ETHEREAL_STATS")) : 0;
	memset(&pc, 0, sizeof(pc));
	pc.program = "ethereal-verbs";
	pc.prefix = "etvb";
	pc.eal = env.eal;
	pc.dev = env.dev;
	pc.mac = env.mac;
	pc.ip = env.ip;
	pc.rundir = env.rundir;
	pc.fault = env.fault;
	pc.slot = env.slot;
	pc.yield = env.yield;
	if (env.ip && inet_pton(AF_INET, env.ip, &(struct in_addr){0}) != 1) {
		fprintf(stderr, "ethereal-verbs: ETHEREAL_IP=%s: not an IPv4 address\n", env.ip);
		return setup_rc = -1;
	}
	if (et_fabric_conf_process(env.conf, env.lb, &pc) || et_process_configure(&pc)) {
		fprintf(stderr, "ethereal-verbs: ETHEREAL_CONF=%s, ETHEREAL_LB=%s: refused\n",
			env.conf ? env.conf : "(none)", env.lb ? env.lb : "(none)");
		return setup_rc = -1;
	}
	/* the slot now (a file lock, no EAL): the device's GUID names it */
	if (env.dev && et_process_slot_choose(0, why, sizeof(why)))
		fprintf(stderr, "ethereal-verbs: %s\n", why);
	return setup_rc = 0;
}

/* The MAC the port will have: ETHEREAL_MAC's, else one made of the slot's
 * address (02:00:IP): known before the port opens, so a GUID listed and
 * the one queried agree. */
static void
planned_mac(uint8_t mac[6])
{
	uint32_t ip = et_process.ip;

	if (env.mac && sscanf(env.mac, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1], &mac[2],
			      &mac[3], &mac[4], &mac[5]) == 6)
		return;
	mac[0] = 0x02;
	mac[1] = 0x00;
	mac[2] = (uint8_t)(ip >> 24);
	mac[3] = (uint8_t)(ip >> 16);
	mac[4] = (uint8_t)(ip >> 8);
	mac[5] = (uint8_t)ip;
}

/* The EUI-64 of a MAC, as an RDMA NIC's node GUID is (host order). */
uint64_t
et_vb_guid(void)
{
	uint8_t m[6];

	planned_mac(m);
	return (uint64_t)(m[0] ^ 2) << 56 | (uint64_t)m[1] << 48 | (uint64_t)m[2] << 40 |
	       0xfffeull << 24 | (uint64_t)m[3] << 16 | (uint64_t)m[4] << 8 | m[5];
}

/* ---- the device list ---- */

struct ibv_device **
ibv_get_device_list(int *num)
{
	struct ibv_device **l = calloc(2, sizeof(*l));

	if (l == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (et_vb_setup() == 0 && env.dev)
		l[0] = &et_vb_device.dev;
	if (num)
		*num = l[0] ? 1 : 0;
	return l;
}

void
ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *
ibv_get_device_name(struct ibv_device *dev)
{
	return dev ? dev->name : NULL;
}

__be64
ibv_get_device_guid(struct ibv_device *dev)
{
	(void)dev;
	return htobe64(et_vb_guid());
}

int
ibv_get_device_index(struct ibv_device *dev)
{
	return dev == &et_vb_device.dev ? 0 : -1;
}

/* ---- open and close ---- */

static uint32_t
progress_hook(void *c, uint64_t now)
{
	(void)now;
	return et_vb_cq_events(c);
}

static int vb_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *a,
			 size_t size);
static int vb_query_device_ex(struct ibv_context *c, const struct ibv_query_device_ex_input *in,
			      struct ibv_device_attr_ex *a, size_t size);

struct ibv_context *
ibv_open_device(struct ibv_device *dev)
{
	struct et_vb_ctx *x;
	struct ibv_context *c;
	int fds[2] = {-1, -1};

	if (dev != &et_vb_device.dev || et_vb_setup()) {
		errno = ENODEV;
		return NULL;
	}
	x = calloc(1, sizeof(*x));
	if (x == NULL || (x->qps = calloc(ET_VB_MAX_QP, sizeof(*x->qps))) == NULL ||
	    pipe2(fds, O_CLOEXEC)) {
		if (x)
			free(x->qps);
		free(x);
		errno = ENOMEM;
		return NULL;
	}
	et_process_lock();
	if (et_process_open()) {
		et_process_unlock();
		fprintf(stderr, "ethereal-verbs: %s\n", et_process.why);
		close(fds[0]);
		close(fds[1]);
		free(x->qps);
		free(x);
		errno = ENODEV;
		return NULL;
	}
	et_process_hook(progress_hook, x);
	et_process_unlock();
	x->async_rd = fds[0];
	x->async_wr = fds[1];
	x->guid = et_vb_guid();
	c = &x->vctx.context;
	c->device = dev;
	c->cmd_fd = -1;
	c->async_fd = fds[0];
	c->num_comp_vectors = 1;
	pthread_mutex_init(&c->mutex, NULL);
	c->abi_compat = __VERBS_ABI_IS_EXTENDED;
	c->ops.poll_cq = et_vb_poll_cq;
	c->ops.req_notify_cq = et_vb_req_notify_cq;
	c->ops.post_send = et_vb_post_send;
	c->ops.post_recv = et_vb_post_recv;
	c->ops.post_srq_recv = et_vb_post_srq_recv;
	x->vctx.sz = sizeof(x->vctx);
	x->vctx.query_port = vb_query_port;
	x->vctx.query_device_ex = vb_query_device_ex;
	x->vctx.create_qp_ex = et_vb_create_qp_ex;
	return c;
}

int
ibv_close_device(struct ibv_context *c)
{
	struct et_vb_ctx *x = et_vb_ctx(c);

	et_process_lock();
	/* what we sent last (the ACK of the peer's last message, as a real
	 * NIC sends it before the completion shows) may still be in the
	 * port's ring: a peer that never sees it retries forever (7) */
	et_process_linger();
	/* ETHEREAL_STATS once, at the last close: a program may hold two
	 * contexts (UCX: its own, and librdmacm's, which closes at exit) */
	if (env.stats && et_process.nic_up && et_process.users == 1) {
		et_process_print_summary("ethereal-verbs", "");
		et_process_print_counters("ethereal-verbs");
	}
	et_process_unhook(progress_hook, x);
	et_process_close();
	et_process_unlock();
	close(x->async_rd);
	close(x->async_wr);
	pthread_mutex_destroy(&c->mutex);
	free(x->qps);
	free(x);
	return 0;
}

/* ---- queries ---- */

static enum ibv_mtu
mtu_enum(uint32_t bytes)
{
	return bytes >= 4096 ? IBV_MTU_4096 : bytes >= 2048 ? IBV_MTU_2048
		: bytes >= 1024 ? IBV_MTU_1024 : bytes >= 512 ? IBV_MTU_512 : IBV_MTU_256;
}

int
ibv_query_device(struct ibv_context *c, struct ibv_device_attr *a)
{
	struct et_vb_ctx *x = et_vb_ctx(c);

	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "ethereal-dpdk");
	a->node_guid = htobe64(x->guid);
	a->sys_image_guid = htobe64(x->guid);
	a->max_mr_size = UINT64_MAX;
	a->page_size_cap = 0xfffff000;
	a->vendor_id = 0;                 /* no vendor's: perftest uses its generic paths */
	a->vendor_part_id = 0;
	a->hw_ver = 1;
	a->max_qp = (int)ET_VB_MAX_QP;
	a->max_qp_wr = (int)ET_VB_MAX_QP_WR;
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_SYS_IMAGE_GUID |
			      IBV_DEVICE_PORT_ACTIVE_EVENT | IBV_DEVICE_CHANGE_PHY_PORT;
	a->max_srq = (int)ET_VB_MAX_QP;
	a->max_srq_wr = (int)ET_VB_MAX_QP_WR;
	a->max_srq_sge = (int)ET_VB_MAX_RECV_SGE;
	a->max_sge = (int)RTE_MIN(ET_VB_MAX_SEND_SGE, ET_VB_MAX_RECV_SGE);
	a->max_sge_rd = (int)ET_VB_MAX_SEND_SGE;
	a->max_cq = (int)ET_VB_MAX_QP;
	a->max_cqe = (int)ET_VB_MAX_CQE;
	a->max_mr = (int)ET_VB_MAX_MR;
	a->max_pd = 1024;
	a->max_qp_rd_atom = (int)ET_VB_MAX_RD_ATOMIC;
	a->max_qp_init_rd_atom = (int)ET_VB_MAX_RD_ATOMIC;
	a->max_res_rd_atom = (int)(ET_VB_MAX_RD_ATOMIC * ET_VB_MAX_QP);
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;
	return 0;
}

static int
vb_query_device_ex(struct ibv_context *c, const struct ibv_query_device_ex_input *in,
		   struct ibv_device_attr_ex *a, size_t size)
{
	(void)in;
	if (size < sizeof(a->orig_attr))
		return EINVAL;
	memset(a, 0, size < sizeof(*a) ? size : sizeof(*a));
	return ibv_query_device(c, &a->orig_attr);
}

static int
vb_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *a, size_t size)
{
	(void)c;
	if (port != 1)
		return EINVAL;
	memset(a, 0, size < sizeof(*a) ? size : sizeof(*a));
	a->state = IBV_PORT_ACTIVE;
	a->max_mtu = IBV_MTU_4096;
	a->active_mtu = mtu_enum(et_process.c.rc.qp.mtu);
	a->gid_tbl_len = (int)ET_VB_GIDS;
	a->port_cap_flags = IBV_PORT_CM_SUP;
	a->max_msg_sz = 1u << 31;
	a->pkey_tbl_len = 1;
	a->max_vl_num = 1;
	a->active_width = 2;   /* 4x */
	a->active_speed = 32;  /* HDR: with 4x, 200 Gbit/s; the wire paces a real port */
	a->phys_state = 5;     /* LinkUp */
	a->link_layer = IBV_LINK_LAYER_ETHERNET;
	return 0;
}

#undef ibv_query_port
int ibv_query_port(struct ibv_context *c, uint8_t port, struct _compat_ibv_port_attr *a);

int
ibv_query_port(struct ibv_context *c, uint8_t port, struct _compat_ibv_port_attr *a)
{
	/* the old layout: no port_cap_flags2 (the macro's path passes the size) */
	return vb_query_port(c, port, (struct ibv_port_attr *)a,
			     offsetof(struct ibv_port_attr, port_cap_flags2));
}

/* GID 0: fe80::EUI-64, GID 1: ::ffff:IPv4, both RoCE v2 (rxe's table;
 * perftest -x 1, ibv_rc_pingpong -g 1). */
static int
gid_of(int index, union ibv_gid *gid)
{
	uint64_t g = et_vb_guid();
	uint32_t ip = et_process.ip;

	memset(gid, 0, sizeof(*gid));
	if (index == 0) {
		gid->raw[0] = 0xfe;
		gid->raw[1] = 0x80;
		for (int i = 0; i < 8; i++)
			gid->raw[8 + i] = (uint8_t)(g >> (56 - 8 * i));
		return 0;
	}
	if (index == 1) {
		gid->raw[10] = gid->raw[11] = 0xff;
		gid->raw[12] = (uint8_t)(ip >> 24);
		gid->raw[13] = (uint8_t)(ip >> 16);
		gid->raw[14] = (uint8_t)(ip >> 8);
		gid->raw[15] = (uint8_t)ip;
		return 0;
	}
	return -1;
}

int
ibv_query_gid(struct ibv_context *c, uint8_t port, int index, union ibv_gid *gid)
{
	(void)c;
	if (port != 1 || gid_of(index, gid)) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int
ibv_query_gid_type(struct ibv_context *c, uint8_t port, unsigned int index,
		   enum et_vb_gid_type_sysfs *type)
{
	union ibv_gid g;

	(void)c;
	if (port != 1 || gid_of((int)index, &g)) {
		errno = EINVAL;
		return -1;
	}
	*type = ET_VB_GID_SYSFS_ROCE_V2;
	return 0;
}

int
_ibv_query_gid_ex(struct ibv_context *c, uint32_t port, uint32_t index,
		  struct ibv_gid_entry *e, uint32_t flags, size_t size)
{
	(void)c;
	if (flags || size < sizeof(*e))
		return EINVAL;
	if (port != 1 || gid_of((int)index, &e->gid))
		return ENODATA;
	e->gid_index = index;
	e->port_num = port;
	e->gid_type = IBV_GID_TYPE_ROCE_V2;
	e->ndev_ifindex = 0;
	return 0;
}

ssize_t
_ibv_query_gid_table(struct ibv_context *c, struct ibv_gid_entry *e, size_t max, uint32_t flags,
		     size_t size)
{
	size_t n = 0;

	if (flags || size < sizeof(*e))
		return -EINVAL;
	for (uint32_t i = 0; i < ET_VB_GIDS && n < max; i++)
		if (_ibv_query_gid_ex(c, 1, i, &e[n], 0, size) == 0)
			n++;
	return (ssize_t)n;
}

int
ibv_query_pkey(struct ibv_context *c, uint8_t port, int index, __be16 *pkey)
{
	(void)c;
	if (port != 1 || index != 0) {
		errno = EINVAL;
		return -1;
	}
	*pkey = htobe16(0xffff);
	return 0;
}

int
ibv_get_pkey_index(struct ibv_context *c, uint8_t port, __be16 pkey)
{
	(void)c;
	return port == 1 && (be16toh(pkey) & 0x7fff) == 0x7fff ? 0 : -1;
}

/* ---- what rdma-core offers programs besides ---- */

int
ibv_fork_init(void)
{
	return 0; /* nothing is pinned: no kernel maps our memory */
}

enum ibv_fork_status
ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

int
ibv_dontfork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

int
ibv_dofork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

/* No sysfs: what a program reads there (ibv_devinfo's board_id) is not. */
int
ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	(void)dir;
	(void)file;
	(void)buf;
	(void)size;
	errno = ENOENT;
	return -1;
}

const char *
ibv_get_sysfs_path(void)
{
	return "/nonexistent-sysfs-ethereal";
}

const char *
ibv_node_type_str(enum ibv_node_type t)
{
	static const char *const s[] = {"unknown", "InfiniBand channel adapter", "InfiniBand switch",
					"InfiniBand router", "iWARP NIC", "usNIC", "usNIC UDP",
					"unspecified"};

	return t >= 0 && (size_t)t < sizeof(s) / sizeof(s[0]) ? s[t] : "unknown";
}

const char *
ibv_port_state_str(enum ibv_port_state s)
{
	static const char *const n[] = {"no state change (NOP)", "down", "init", "armed", "active",
					"active deferred"};

	return s >= 0 && (size_t)s < sizeof(n) / sizeof(n[0]) ? n[s] : "unknown";
}

const char *
ibv_event_type_str(enum ibv_event_type e)
{
	static const char *const n[] = {
		"CQ error", "local work queue catastrophic error", "invalid request local work queue error",
		"local access violation work queue error", "communication established",
		"send queue drained", "path migrated", "path migration request error",
		"local catastrophic error", "port active", "port error", "LID change",
		"P_Key change", "SM change", "SRQ catastrophic error", "SRQ limit reached",
		"last WQE reached", "client reregistration", "GID table change", "WQ fatal",
	};

	return e >= 0 && (size_t)e < sizeof(n) / sizeof(n[0]) ? n[e] : "unknown";
}

const char *
ibv_wc_status_str(enum ibv_wc_status s)
{
	static const char *const n[] = {
		"success", "local length error", "local QP operation error",
		"local EE context operation error", "local protection error", "Work Request Flushed Error",
		"memory management operation error", "bad response error", "local access error",
		"remote invalid request error", "remote access error", "remote operation error",
		"transport retry counter exceeded", "RNR retry counter exceeded",
		"local RDD violation error", "remote invalid RD request", "aborted error",
		"invalid EE context number", "invalid EE context state", "fatal error",
		"response timeout error", "general error", "TM error", "TM rendezvous error",
	};

	return s >= 0 && (size_t)s < sizeof(n) / sizeof(n[0]) ? n[s] : "unknown";
}

/* IBTA's static rate codes, as multiples of 2.5 Gbit/s and in Mbit/s. */
static const struct {
	enum ibv_rate rate;
	int mult, mbps;
} rates[] = {
	{IBV_RATE_2_5_GBPS, 1, 2500},     {IBV_RATE_5_GBPS, 2, 5000},
	{IBV_RATE_10_GBPS, 4, 10000},     {IBV_RATE_20_GBPS, 8, 20000},
	{IBV_RATE_30_GBPS, 12, 30000},    {IBV_RATE_40_GBPS, 16, 40000},
	{IBV_RATE_60_GBPS, 24, 60000},    {IBV_RATE_80_GBPS, 32, 80000},
	{IBV_RATE_120_GBPS, 48, 120000},  {IBV_RATE_14_GBPS, 5, 14062},
	{IBV_RATE_56_GBPS, 22, 56250},    {IBV_RATE_112_GBPS, 45, 112500},
	{IBV_RATE_168_GBPS, 67, 168750},  {IBV_RATE_25_GBPS, 10, 25781},
	{IBV_RATE_100_GBPS, 40, 103125},  {IBV_RATE_200_GBPS, 80, 206250},
	{IBV_RATE_300_GBPS, 120, 309375}, {IBV_RATE_28_GBPS, 11, 28125},
	{IBV_RATE_50_GBPS, 20, 53125},    {IBV_RATE_400_GBPS, 160, 425000},
	{IBV_RATE_600_GBPS, 240, 637500},
};

int
ibv_rate_to_mult(enum ibv_rate rate)
{
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (rates[i].rate == rate)
			return rates[i].mult;
	return -1;
}

enum ibv_rate
mult_to_ibv_rate(int mult)
{
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (rates[i].mult == mult)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

int
ibv_rate_to_mbps(enum ibv_rate rate)
{
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (rates[i].rate == rate)
			return rates[i].mbps;
	return -1;
}

enum ibv_rate
mbps_to_ibv_rate(int mbps)
{
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (rates[i].mbps == mbps)
			return rates[i].rate;
	return IBV_RATE_MAX;
}
