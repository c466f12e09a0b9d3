/* SPDX-License-Identifier: BSD-3-Clause
 * What this device refuses, as a real one refuses it, and rdma-core's
 * driver ABI (IBVERBS_PRIVATE_34).
 *
 * Debian's perftest and UCX link libmlx5 and libefa, bound at load
 * (BIND_NOW), and those import the driver ABI: without these names the
 * programs do not start (nor with Debian's librdmacm, whose helpers
 * copying the kernel's structs are here too, doing nothing: no kernel).  The drivers' constructors register themselves
 * (verbs_register_driver_34), and nothing of theirs is called again, for
 * no device of theirs is ever listed: every other entry here fails.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "et_vb.h"

/* the driver ABI: entry points that fail (an int errno), that find nothing
 * (NULL), and the one a driver's constructor calls (it registers) */
#define ET_VB_DRIVER_INT(X) \
	X(__ioctl_final_num_attrs) X(execute_ioctl) X(ibv_cmd_advise_mr) X(ibv_cmd_alloc_dm) \
	X(ibv_cmd_alloc_mw) X(ibv_cmd_alloc_pd) X(ibv_cmd_attach_mcast) X(ibv_cmd_close_xrcd) \
	X(ibv_cmd_create_ah) X(ibv_cmd_create_counters) X(ibv_cmd_create_cq) \
	X(ibv_cmd_create_cq_ex) X(ibv_cmd_create_flow) X(ibv_cmd_create_flow_action_esp) \
	X(ibv_cmd_create_qp) X(ibv_cmd_create_qp_ex) X(ibv_cmd_create_qp_ex2) \
	X(ibv_cmd_create_rwq_ind_table) X(ibv_cmd_create_srq) X(ibv_cmd_create_srq_ex) \
	X(ibv_cmd_create_wq) X(ibv_cmd_dealloc_mw) X(ibv_cmd_dealloc_pd) X(ibv_cmd_dereg_mr) \
	X(ibv_cmd_destroy_ah) X(ibv_cmd_destroy_counters) X(ibv_cmd_destroy_cq) \
	X(ibv_cmd_destroy_flow) X(ibv_cmd_destroy_flow_action) X(ibv_cmd_destroy_qp) \
	X(ibv_cmd_destroy_rwq_ind_table) X(ibv_cmd_destroy_srq) X(ibv_cmd_destroy_wq) \
	X(ibv_cmd_detach_mcast) X(ibv_cmd_free_dm) X(ibv_cmd_get_context) X(ibv_cmd_modify_cq) \
	X(ibv_cmd_modify_flow_action_esp) X(ibv_cmd_modify_qp) X(ibv_cmd_modify_qp_ex) \
	X(ibv_cmd_modify_srq) X(ibv_cmd_modify_wq) X(ibv_cmd_open_qp) X(ibv_cmd_open_xrcd) \
	X(ibv_cmd_poll_cq) X(ibv_cmd_post_recv) X(ibv_cmd_post_send) X(ibv_cmd_post_srq_recv) \
	X(ibv_cmd_query_context) X(ibv_cmd_query_device_any) X(ibv_cmd_query_mr) \
	X(ibv_cmd_query_port) X(ibv_cmd_query_qp) X(ibv_cmd_query_srq) X(ibv_cmd_read_counters) \
	X(ibv_cmd_reg_dm_mr) X(ibv_cmd_reg_dmabuf_mr) X(ibv_cmd_reg_mr) X(ibv_cmd_req_notify_cq) \
	X(ibv_cmd_rereg_mr) X(ibv_cmd_resize_cq) X(ibv_read_ibdev_sysfs_file) X(verbs_init_cq)
#define ET_VB_DRIVER_NULL(X) X(_verbs_init_and_alloc_context) X(verbs_open_device)
#define ET_VB_DRIVER_VOID(X) \
	X(__verbs_log) X(verbs_register_driver_34) X(verbs_set_ops) X(verbs_uninit_context) \
	X(ibv_copy_ah_attr_from_kern) X(ibv_copy_qp_attr_from_kern) \
	X(ibv_copy_path_rec_from_kern) X(ibv_copy_path_rec_to_kern)

/* Their prototypes are rdma-core's private ones: the linker needs the
 * names, and nothing calls them with arguments that matter. */
#define INT_STUB(name) int name(void); int name(void) { return EOPNOTSUPP; }
#define NULL_STUB(name) void *name(void); void *name(void) { errno = EOPNOTSUPP; return NULL; }
#define VOID_STUB(name) void name(void); void name(void) { }
ET_VB_DRIVER_INT(INT_STUB)
ET_VB_DRIVER_NULL(NULL_STUB)
ET_VB_DRIVER_VOID(VOID_STUB)

bool verbs_allow_disassociate_destroy;

/* ---- verbs the device refuses ---- */

int
ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp;
	(void)gid;
	(void)lid;
	return EOPNOTSUPP;
}

int
ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp;
	(void)gid;
	(void)lid;
	return EOPNOTSUPP;
}

int
ibv_resolve_eth_l2_from_gid(struct ibv_context *c, struct ibv_ah_attr *a, uint8_t eth_mac[6],
			    uint16_t *vid)
{
	(void)c;
	(void)a;
	(void)eth_mac;
	(void)vid;
	return EOPNOTSUPP;
}

struct ibv_mr *
ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova, int fd,
		  int access)
{
	(void)pd;
	(void)offset;
	(void)length;
	(void)iova;
	(void)fd;
	(void)access;
	errno = EOPNOTSUPP;
	return NULL;
}

int
ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	(void)ece;
	return EOPNOTSUPP;
}

int
ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	(void)ece;
	return EOPNOTSUPP;
}

int
ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)qp;
	(void)op;
	(void)flags;
	return 0; /* no guarantee claimed */
}

/* Importing another process's objects needs a kernel that holds them. */
struct ibv_context *
ibv_import_device(int cmd_fd)
{
	(void)cmd_fd;
	errno = EOPNOTSUPP;
	return NULL;
}

struct ibv_pd *
ibv_import_pd(struct ibv_context *c, uint32_t handle)
{
	(void)c;
	(void)handle;
	errno = EOPNOTSUPP;
	return NULL;
}

struct ibv_mr *
ibv_import_mr(struct ibv_pd *pd, uint32_t handle)
{
	(void)pd;
	(void)handle;
	errno = EOPNOTSUPP;
	return NULL;
}

struct ibv_dm *
ibv_import_dm(struct ibv_context *c, uint32_t handle)
{
	(void)c;
	(void)handle;
	errno = EOPNOTSUPP;
	return NULL;
}

void
ibv_unimport_pd(struct ibv_pd *pd)
{
	(void)pd;
}

void
ibv_unimport_mr(struct ibv_mr *mr)
{
	(void)mr;
}

void
ibv_unimport_dm(struct ibv_dm *dm)
{
	(void)dm;
}
