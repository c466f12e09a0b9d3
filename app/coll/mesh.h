/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-coll's management network: a TCP connection from every rank to
 * every other, made through the root (rank 0), which every rank reaches
 * first (as NCCL's bootstrap does); then fixed-size messages on them.
 *
 * Bootstrap: rank 0 listens on the root's port; every other rank listens
 * on a port of its own, connects to the root and says who it is and where
 * it listens; the root answers each with everyone's address once all are
 * in; then rank r connects to ranks 1 .. r-1 and accepts ranks r+1 ..
 * world-1.  A rank that is missing, twice there, or of another world size
 * ends the bootstrap with a message naming it.
 */
#ifndef ET_COLL_MESH_H
#define ET_COLL_MESH_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

enum mesh_type {
	MSG_HELLO = 1,  /* a: rank, b: world, c: listening port */
	MSG_ADDR,       /* a: rank, b: IPv4 (host order), c: port */
	/* f of OPEN, OPENED and CLOSE: which collective (a trace's node; 0) */
	MSG_OPEN,       /* open a subflow's far end: a: sub, b: QPN, c: sq_psn, d: rq_psn,
			 * e: receive | multipath << 31, x: offset, y: length */
	MSG_OPENED,     /* a: sub, b: 0 or errno, c: QPN, d: rkey, x: address */
	MSG_CLOSE,      /* a: the far end's QPN: it goes */
	MSG_BARRIER,    /* a: sequence; b: BARRIER_*; x, y, z, w, c, d, e, f: the sender's
			 * figures (see coll_fig_of in run.c) */
};

#define BARRIER_FAILED 1u /* the sender failed (it said why) */
#define BARRIER_LAST 2u   /* the sender leaves after this barrier */

struct msg {
	uint32_t type, a, b, c, d, e, f;
	uint64_t x, y, z, w;
};

#define MSG_LEN 60 /* on the wire: each field big-endian, in the order above */

struct mesh {
	uint32_t rank, world;
	int *fd;             /* by rank; -1 for this rank */
	uint8_t (*buf)[MSG_LEN];
	uint32_t *have;      /* bytes of a message read so far, per rank */
	uint8_t *may_leave;  /* per rank: its connection may end (it said so) */
	uint32_t *ip;        /* per rank: where it listens (bootstrap) */
	uint16_t *port;
	uint32_t next;       /* the rank mesh_recv looks at first */
	int listen_fd;
	volatile sig_atomic_t *stop;
	bool lost;           /* a peer's connection ended while it had to stay */
	char err[256];
};

/* Bootstrap; 0, or -1 with m->err.  root: "HOST:PORT"; timeout_ms for the
 * whole of it. */
int mesh_open(struct mesh *m, uint32_t rank, uint32_t world, const char *root,
	      uint64_t timeout_ms, volatile sig_atomic_t *stop);
/* 0, or -1 with m->err (the peer is gone). */
int mesh_send(struct mesh *m, uint32_t to, const struct msg *x);
/* A whole message from any rank, without waiting: 1 (with *from), 0 none
 * yet, -1 with m->err naming the rank whose connection ended. */
int mesh_recv(struct mesh *m, uint32_t *from, struct msg *x);
/* Rank r has said its last word: its connection ending is no error. */
void mesh_may_leave(struct mesh *m, uint32_t r);
void mesh_close(struct mesh *m);

#endif /* ET_COLL_MESH_H */
