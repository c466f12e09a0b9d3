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
 *    in index order (et_coll_apply: copy, or reduce element-wise) and
 *    enters step k+1.  After the last step the rank is done (et_coll_finish).
 * So a send of step k reads data as it is after the recvs of steps < k were
 * applied, and nothing writes that range before the send completes.  A send
 * and its recv never form a cycle of waits: every schedule here is built on
 * a global step count where a recv sits in the step number of its send,
 * and steps that would be empty are dropped (an empty step is a no-op).
 *
 * Chunks.  The vector is count elements of the dtype (size = count x its
 * bytes); chunk j of N is one of N near-equal parts, the first count % N of
 * them one element longer (as MPICH splits a vector), so any count runs on
 * any N, and a count of 0 is a collective of no steps.
 *
 * Results:
 *  - allreduce: every rank ends with the element-wise reduction (op) of all
 *    inputs;
 *  - reducescatter: rank r's chunk r holds the reduction of everyone's
 *    chunk r (the rest of data is scratch, see et_coll_checked_range());
 *  - allgather: rank r's input is its chunk r; every rank ends with all;
 *  - alltoall: rank r's block j goes to rank j, which ends with it in its
 *    block r (the diagonal block stays).  Block r -> j is c((r + j) mod N)
 *    elements, c(k) the length of chunk k: every rank sends and receives
 *    count elements whether N divides count or not (all equal when it
 *    does).
 *
 * Algorithms: a2a (direct: one step, allreduce two), rd (recursive halving
 * and doubling; allreduce is Rabenseifner's as MPICH and Astra-Sim run it:
 * the nearest partner first, with half the vector, so the largest
 * exchanges stay in a rack), ring (N - 1 steps per half), dbt (allreduce
 * only: double binary tree, pipelined in chunks), rd-far (allreduce only:
 * Rabenseifner with the farthest partner first, so the largest exchanges
 * cross the fabric's core; this project's rd before 2026-11-26).  rd and
 * rd-far run on any N as MPICH does: with P the largest power of two <= N,
 * the first N - P even ranks fold in (each hands its part to the odd rank
 * after it: allreduce and reducescatter the whole vector, reduced there;
 * allgather its chunk), P ranks run the power-of-two schedule on blocks of
 * one or two chunks, and the folded ranks get their result back (fold
 * out): two steps more.  One rank: no steps.
 *
 * Reduction.  Each recv is reduced into data in a fixed order (the
 * schedule's, the same in every run): integers wrap (sum, prod), half and
 * bfloat16 are computed in float and rounded to nearest even at each
 * step, avg is the sum divided by N once, at the end (et_coll_finish).
 * The reference data (et_coll_fill) makes every result exact in any order,
 * so the check is byte for byte for every dtype, half and bfloat16 too
 * (tolerance 0): floating-point inputs are integers small enough that
 * every partial sum is exact (|x| <= min(256, 2^p / N), p the significand's
 * bits: 11 half, 8 bfloat16, 24 float, 53 double; past 2^p ranks the
 * others give 0), products are of
 * +-2^e with the e of at most 8 ranks in -1..1, and max and min are exact
 * anyway; integer inputs are any bits (odd for prod, so a product is never
 * 0).
 */
#ifndef ET_COLL_H
#define ET_COLL_H

#include <stdbool.h>
#include <stdint.h>

enum et_coll_kind { ET_COLL_ALLREDUCE, ET_COLL_ALLGATHER, ET_COLL_REDUCESCATTER, ET_COLL_ALLTOALL,
		    ET_COLL_KINDS };
enum et_coll_algo { ET_ALGO_A2A, ET_ALGO_RD, ET_ALGO_RING, ET_ALGO_DBT, ET_ALGO_RD_FAR,
		    ET_ALGO_COUNT };
/* ncclDataType_t's order, nccl-tests' names */
enum et_coll_dtype { ET_DT_INT8, ET_DT_UINT8, ET_DT_INT32, ET_DT_UINT32, ET_DT_INT64,
		     ET_DT_UINT64, ET_DT_HALF, ET_DT_FLOAT, ET_DT_DOUBLE, ET_DT_BFLOAT16,
		     ET_DT_COUNT };
/* ncclRedOp_t's */
enum et_coll_op { ET_OP_SUM, ET_OP_PROD, ET_OP_MAX, ET_OP_MIN, ET_OP_AVG, ET_OP_COUNT };

/* A collective: what et_coll_check() judges and et_coll_build() builds. */
struct et_coll_spec {
	enum et_coll_kind kind;
	enum et_coll_algo algo;
	uint32_t nranks;
	uint64_t count;         /* elements of dtype per rank: the whole vector */
	enum et_coll_dtype dtype;
	enum et_coll_op op;     /* allreduce and reducescatter; the others move data only */
	uint64_t chunk_bytes;   /* dbt's pipelining unit (whole elements; 0: size / 8) */
};

/* A rank's data is one RDMA WRITE per subflow, at most 2^32 - 1 bytes. */
#define ET_COLL_MAX_BYTES UINT32_MAX

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
	uint8_t reduce;		/* 1: data = data op staging, element-wise; 0: copy */
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
	uint64_t count;		/* elements per rank */
	uint64_t size;		/* bytes per rank: count x dtype_size */
	enum et_coll_kind kind;
	enum et_coll_algo algo;
	enum et_coll_dtype dtype;
	enum et_coll_op op;
	uint32_t dtype_size;
	struct et_coll_rank *rank;	/* nranks of them */
	uint64_t staging_bytes;	/* max over ranks */
};

/* Whether c can run, the one judgement every program makes before it
 * starts anything: 0, or -EINVAL with *why saying why not (alltoall
 * other than by a2a, dbt or rd-far other than allreduce, no ranks, more
 * than ET_COLL_MAX_BYTES per rank, dbt's chunks too many, an unknown
 * kind, algorithm, dtype or op).  Any count and any rank count are fine. */
int et_coll_check(const struct et_coll_spec *c, const char **why);

/* Build c's schedule (et_coll_check first).  0, or a negative errno with
 * *why set (and s zeroed, so et_coll_free() is still safe). */
int et_coll_build(struct et_coll_sched *s, const struct et_coll_spec *c, const char **why);
void et_coll_free(struct et_coll_sched *s);

/* allreduce allgather reducescatter alltoall / a2a rd ring dbt rd-far /
 * nccl-tests' int8 uint8 int32 uint32 int64 uint64 half float double
 * bfloat16 (and its other names: char, int, float16, float32, float64) /
 * sum prod max min avg; 0 or -EINVAL */
int et_coll_parse_kind(const char *name, enum et_coll_kind *out);
int et_coll_parse_algo(const char *name, enum et_coll_algo *out);
int et_coll_parse_dtype(const char *name, enum et_coll_dtype *out);
int et_coll_parse_op(const char *name, enum et_coll_op *out);
const char *et_coll_kind_name(enum et_coll_kind kind);
const char *et_coll_algo_name(enum et_coll_algo algo);
const char *et_coll_dtype_name(enum et_coll_dtype dtype);
const char *et_coll_op_name(enum et_coll_op op);
/* Bytes of one element: 1, 2, 4 or 8; 0 for no dtype. */
uint32_t et_coll_dtype_size(enum et_coll_dtype dtype);

/* allreduce and reducescatter reduce with an op; the others move data. */
static inline bool
et_coll_reduces(enum et_coll_kind kind)
{
	return kind == ET_COLL_ALLREDUCE || kind == ET_COLL_REDUCESCATTER;
}

/* The spec of bytes per rank: whole elements of dtype, as nccl-tests
 * counts them (bytes / element size, rounded down). */
static inline struct et_coll_spec
et_coll_spec_of(enum et_coll_kind kind, enum et_coll_algo algo, uint32_t nranks, uint64_t bytes,
		enum et_coll_dtype dtype, enum et_coll_op op, uint64_t chunk_bytes)
{
	uint32_t es = et_coll_dtype_size(dtype);

	return (struct et_coll_spec){kind, algo, nranks, es ? bytes / es : 0, dtype, op,
				     chunk_bytes};
}

/* Apply one arrived recv when its step is finished: copy, or reduce
 * staging into data element by element with the schedule's op. */
void et_coll_apply(const struct et_coll_sched *s, const struct et_coll_recv *r, uint8_t *data,
		   const uint8_t *staging);
/* After the last step: what the op does once at the end (avg: divide the
 * rank's result by N); nothing for the others. */
void et_coll_finish(const struct et_coll_sched *s, uint32_t rank, uint8_t *data);

/* Chunk j (0..N - 1): its offset and length in bytes. */
void et_coll_chunk(const struct et_coll_sched *s, uint32_t j, uint64_t *off, uint64_t *len);

/* Verification.  et_coll_fill() writes rank's input (size bytes, distinct
 * per rank and seed, see Reduction above); et_coll_expect() writes what
 * rank's data must hold at the end, in its checked range (zeros
 * elsewhere). */
void et_coll_fill(const struct et_coll_sched *s, uint32_t rank, uint64_t seed, uint8_t *data);
void et_coll_expect(const struct et_coll_sched *s, uint32_t rank, uint64_t seed, uint8_t *out);
/* The part of rank's data the collective defines: all of it, except for
 * reducescatter (chunk rank). */
void et_coll_checked_range(const struct et_coll_sched *s, uint32_t rank, uint64_t *off,
			   uint64_t *len);
/* The elements of rank's checked range that differ from what it must
 * hold: into *wrong; 0 or -ENOMEM. */
int et_coll_wrong(const struct et_coll_sched *s, uint32_t rank, uint64_t seed,
		  const uint8_t *data, uint64_t *wrong);
/* The same for every rank at once, data[r] rank r's (the reduction is
 * computed once for all). */
int et_coll_wrong_all(const struct et_coll_sched *s, uint64_t seed, const uint8_t *const *data,
		      uint64_t *wrong);

/* Bytes this rank sends in total. */
uint64_t et_coll_bytes_sent(const struct et_coll_sched *s, uint32_t rank);

#endif /* ET_COLL_H */
