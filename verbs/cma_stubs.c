/* SPDX-License-Identifier: BSD-3-Clause
 * What our librdmacm does not do yet (docs/verbs.md): present, since
 * Debian's programs bind every librdmacm symbol they import at load
 * (BIND_NOW), and refusing with ENOSYS as a call of an older librdmacm
 * would.  SRQs, multicast, ECE and rsockets.
 */
#include <errno.h>
#include <stdarg.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <rdma/rsocket.h>

static int
enosys(void)
{
	errno = ENOSYS;
	return -1;
}

int
rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	(void)id, (void)pd, (void)attr;
	return enosys();
}

int
rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	(void)id, (void)attr;
	return enosys();
}

void
rdma_destroy_srq(struct rdma_cm_id *id)
{
	(void)id;
}

int
rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	(void)id, (void)addr, (void)context;
	return enosys();
}

int
rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *mc_join_attr,
		       void *context)
{
	(void)id, (void)mc_join_attr, (void)context;
	return enosys();
}

int
rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	(void)id, (void)addr;
	return enosys();
}

int
rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	(void)id, (void)qp_attr, (void)qp_attr_mask;
	return enosys();
}

int
rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	(void)id, (void)ece;
	return enosys();
}

int
rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	(void)id, (void)ece;
	return enosys();
}

int
rdma_reject_ece(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	(void)id, (void)private_data, (void)private_data_len;
	return enosys();
}

/* ---- rsockets ---- */

int
rsocket(int domain, int type, int protocol)
{
	(void)domain, (void)type, (void)protocol;
	return enosys();
}

int
rbind(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	return enosys();
}

int
rlisten(int socket, int backlog)
{
	(void)socket, (void)backlog;
	return enosys();
}

int
raccept(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	return enosys();
}

int
rconnect(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	return enosys();
}

int
rshutdown(int socket, int how)
{
	(void)socket, (void)how;
	return enosys();
}

int
rclose(int socket)
{
	(void)socket;
	return enosys();
}

ssize_t
rrecv(int socket, void *buf, size_t len, int flags)
{
	(void)socket, (void)buf, (void)len, (void)flags;
	return enosys();
}

ssize_t
rrecvfrom(int socket, void *buf, size_t len, int flags, struct sockaddr *src_addr,
	  socklen_t *addrlen)
{
	(void)socket, (void)buf, (void)len, (void)flags, (void)src_addr, (void)addrlen;
	return enosys();
}

ssize_t
rrecvmsg(int socket, struct msghdr *msg, int flags)
{
	(void)socket, (void)msg, (void)flags;
	return enosys();
}

ssize_t
rsend(int socket, const void *buf, size_t len, int flags)
{
	(void)socket, (void)buf, (void)len, (void)flags;
	return enosys();
}

ssize_t
rsendto(int socket, const void *buf, size_t len, int flags, const struct sockaddr *dest_addr,
	socklen_t addrlen)
{
	(void)socket, (void)buf, (void)len, (void)flags, (void)dest_addr, (void)addrlen;
	return enosys();
}

ssize_t
rsendmsg(int socket, const struct msghdr *msg, int flags)
{
	(void)socket, (void)msg, (void)flags;
	return enosys();
}

ssize_t
rread(int socket, void *buf, size_t count)
{
	(void)socket, (void)buf, (void)count;
	return enosys();
}

ssize_t
rreadv(int socket, const struct iovec *iov, int iovcnt)
{
	(void)socket, (void)iov, (void)iovcnt;
	return enosys();
}

ssize_t
rwrite(int socket, const void *buf, size_t count)
{
	(void)socket, (void)buf, (void)count;
	return enosys();
}

ssize_t
rwritev(int socket, const struct iovec *iov, int iovcnt)
{
	(void)socket, (void)iov, (void)iovcnt;
	return enosys();
}

int
rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	(void)fds, (void)nfds, (void)timeout;
	return enosys();
}

int
rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds, struct timeval *timeout)
{
	(void)nfds, (void)readfds, (void)writefds, (void)exceptfds, (void)timeout;
	return enosys();
}

int
rgetpeername(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	return enosys();
}

int
rgetsockname(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	return enosys();
}

int
rsetsockopt(int socket, int level, int optname, const void *optval, socklen_t optlen)
{
	(void)socket, (void)level, (void)optname, (void)optval, (void)optlen;
	return enosys();
}

int
rgetsockopt(int socket, int level, int optname, void *optval, socklen_t *optlen)
{
	(void)socket, (void)level, (void)optname, (void)optval, (void)optlen;
	return enosys();
}

int
rfcntl(int socket, int cmd, ...)
{
	(void)socket, (void)cmd;
	return enosys();
}

off_t
riomap(int socket, void *buf, size_t len, int prot, int flags, off_t offset)
{
	(void)socket, (void)buf, (void)len, (void)prot, (void)flags, (void)offset;
	return enosys();
}

int
riounmap(int socket, void *buf, size_t len)
{
	(void)socket, (void)buf, (void)len;
	return enosys();
}

size_t
riowrite(int socket, const void *buf, size_t count, off_t offset, int flags)
{
	(void)socket, (void)buf, (void)count, (void)offset, (void)flags;
	errno = ENOSYS;
	return 0;
}
