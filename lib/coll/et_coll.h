/* SPDX-License-Identifier: BSD-3-Clause
 * Collective-communication schedules: what every rank sends and receives,
 * step by step, for all-reduce, all-gather, reduce-scatter and all-to-all
 * over N ranks.  Plain C, no DPDK; the fabric runner carries the sends as
 * RDMA WRITE with immediate, and the functions at the end are a reference
 * for verifying the data.
 *
 * Buffers.  Every rank owns `data` (size bytes, the vector: input and
 * result) and `staging` (its et_coll_rank.staging_bytes).  Every receive
 * lands in a staging range of its own, never reused, because senders run
 * ahead: bytes for a later step may arrive while the receiver still reads
 * data for an earlier one.
 *
 * Execution rule (the runner must follow it exactly):
 *  - a rank enters step 0 at once, and step k+1 when step k is finished;
 *  - on entering step k it issues all sends of step k; a send writes len
 *    bytes of its data at src_off into staging of rank dst, at the
 *    staging_off of recv index `recv` there;
 *  - step k is finished when all its sends have completed and all its recvs
 *    have fully arrived; the rank then applies the recvs of step k to data
 *    in index order (et_coll_apply: copy, or element-wise sum) and enters
 *    step k+1.  After the last step the rank is done.
 * So a send of step k reads data as it is after the recvs of steps < k were
 * applied, and nothing writes that range before the send completes.  A send
 * and its recv never form a cycle of waits: every schedule here is built on
 * a global step count where a recv sits in the step number of its send,
 * and steps that would be empty are dropped (an empty step is a no-op).
 *
 * Results, chunk = size / N at offset r * chunk:
 *  - allreduce: every rank ends with the element-wise sum of all inputs;
 *  - reducescatter: rank r's chunk r holds the sum of everyone's chunk r
 *    (the rest of data is scratch, see et_coll_checked_range());
 *  - allgather: rank r's input is its chunk r; every rank ends with all;
 *  - alltoall: rank r's chunk j goes to rank j, which ends with it in its
 *    chunk r (the diagonal chunk stays).
 *
 * Algorithms: a2a (direct: one step, allreduce two), rd (recursive halving
 * and doubling, power-of-two N; allreduce is Rabenseifner's as MPICH and
 * Astra-Sim run it: the nearest partner first, with half the vector, so
 * the largest exchanges stay in a rack), ring (N - 1 steps per half), dbt
 * (allreduce only: double binary tree, pipelined in chunks), rd-far
 * (allreduce only: Rabenseifner with the farthest partner first, so the
 * largest exchanges cross the fabric's core; this project's rd before
 * 2026-11-26).
 * Sums are reduced in a fixed order and broadcast from one rank, so float32
 * results are deterministic and equal on every rank.
 */
#ifndef ET_COLL_H
#define ET_COLL_H

#include <stdint.h>

enum et_coll_kind { ET_COLL_ALLREDUCE, ET_COLL_ALLGATHER, ET_COLL_REDUCESCATTER, ET_COLL_ALLTOALL };
enum et_coll_algo { ET_ALGO_A2A, ET_ALGO_RD, ET_ALGO_RING, ET_ALGO_DBT, ET_ALGO_RD_FAR,
		    ET_ALGO_COUNT };
enum et_coll_dtype { ET_DT_INT32, ET_DT_FLOAT32 };

/* This rank writes len bytes of its data at src_off to rank dst, into the
 * staging range of dst's recvs[recv]. */
struct et_coll_send {
	uint32_t dst;
	uint32_t recv;		/* index into dst's recvs[] (0..nrecvs - 1) */
	uint64_t src_off, len;
};

struct et_coll_recv {
	uint32_t src;
	uint64_t staging_off;	/* where the bytes land in this rank's staging */
	uint64_t data_off;	/* where they go in data when the step is applied */
	uint64_t len;
	uint8_t reduce;		/* 1: data += staging, element-wise; 0: copy */
};

/* Ranges into the rank's sends[] and recvs[]; consecutive steps cover both
 * arrays in order. */
struct et_coll_step {
	uint32_t first_send, nsend;
	uint32_t first_recv, nrecv;
};

struct et_coll_rank {
	struct et_coll_send *sends;
	uint32_t nsends;
	struct et_coll_recv *recvs;
	uint32_t nrecvs;
	struct et_coll_step *steps;
	uint32_t nsteps;
	uint64_t staging_bytes;	/* sum of its recvs' lengths */
};

struct et_coll_sched {
	uint32_t nranks;
	uint64_t size;
	enum et_coll_kind kind;
	enum et_coll_algo algo;
	uint32_t dtype_size;	/* 4: int32 and float32 */
	struct et_coll_rank *rank;	/* nranks of them */
	uint64_t staging_bytes;	/* max over ranks */
};

/* Build the schedule of kind by algo for nranks ranks of size bytes each.
 * size must be a multiple of 4 * nranks.  chunk_bytes is dbt's pipelining
 * unit (rounded down to 4 bytes; 0: size / 8), ignored by the others.
 * N = 1 gives 0 steps.  Returns 0, or -1 with *why set to a message (and s
 * zeroed, so et_coll_free() is still safe). */
int et_coll_build(struct et_coll_sched *s, enum et_coll_kind kind, enum et_coll_algo algo,
		  uint32_t nranks, uint64_t size, uint64_t chunk_bytes, const char **why);
void et_coll_free(struct et_coll_sched *s);

/* allreduce allgather reducescatter alltoall / a2a rd ring dbt rd-far; 0 or -1 */
int et_coll_parse_kind(const char *name, enum et_coll_kind *out);
int et_coll_parse_algo(const char *name, enum et_coll_algo *out);
const char *et_coll_kind_name(enum et_coll_kind kind);
const char *et_coll_algo_name(enum et_coll_algo algo);

/* Apply one arrived recv when its step is finished: copy, or add staging
 * into data element by element (int32 wraps). */
void et_coll_apply(const struct et_coll_recv *r, uint8_t *data, const uint8_t *staging,
		   enum et_coll_dtype dt);

/* Verification.  et_coll_fill() writes rank's input (size bytes, distinct
 * per rank and seed; float32 values are small integers so every sum is
 * exact whatever the order); et_coll_expect() writes what rank's data must
 * hold at the end, in its checked range (zeros elsewhere). */
void et_coll_fill(const struct et_coll_sched *s, uint32_t rank, uint64_t seed,
		  enum et_coll_dtype dt, uint8_t *data);
void et_coll_expect(const struct et_coll_sched *s, uint32_t rank, uint64_t seed,
		    enum et_coll_dtype dt, uint8_t *out);
/* The part of rank's data the collective defines: all of it, except for
 * reducescatter (chunk rank). */
void et_coll_checked_range(const struct et_coll_sched *s, uint32_t rank, uint64_t *off,
			   uint64_t *len);

/* Bytes this rank sends in total. */
uint64_t et_coll_bytes_sent(const struct et_coll_sched *s, uint32_t rank);

#endif /* ET_COLL_H */
