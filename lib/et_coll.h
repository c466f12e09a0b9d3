/* SPDX-License-Identifier: BSD-3-Clause
 * TEMPORARY stand-in (a2a only) until the real schedule module lands. */
#ifndef ET_COLL_H
#define ET_COLL_H
#include <stdint.h>
enum et_coll_kind { ET_COLL_ALLREDUCE, ET_COLL_ALLGATHER, ET_COLL_REDUCESCATTER, ET_COLL_ALLTOALL };
enum et_coll_algo { ET_ALGO_A2A, ET_ALGO_RD, ET_ALGO_RING, ET_ALGO_DBT };
enum et_coll_dtype { ET_DT_INT32, ET_DT_FLOAT32 };
struct et_coll_send { uint32_t dst; uint32_t recv; uint64_t src_off, len; };
struct et_coll_recv { uint32_t src; uint64_t staging_off; uint64_t data_off; uint64_t len; uint8_t reduce; };
struct et_coll_step { uint32_t first_send, nsend; uint32_t first_recv, nrecv; };
struct et_coll_rank {
	struct et_coll_send *sends; uint32_t nsends;
	struct et_coll_recv *recvs; uint32_t nrecvs;
	struct et_coll_step *steps; uint32_t nsteps;
	uint64_t staging_bytes;
};
struct et_coll_sched {
	uint32_t nranks; uint64_t size; enum et_coll_kind kind; enum et_coll_algo algo;
	uint32_t dtype_size; struct et_coll_rank *rank; uint64_t staging_bytes;
};
int et_coll_build(struct et_coll_sched *s, enum et_coll_kind kind, enum et_coll_algo algo,
		  uint32_t nranks, uint64_t size, uint64_t chunk_bytes, const char **why);
void et_coll_free(struct et_coll_sched *s);
int et_coll_parse_kind(const char *name, enum et_coll_kind *out);
int et_coll_parse_algo(const char *name, enum et_coll_algo *out);
const char *et_coll_kind_name(enum et_coll_kind);
const char *et_coll_algo_name(enum et_coll_algo);
void et_coll_apply(const struct et_coll_recv *r, uint8_t *data, const uint8_t *staging, enum et_coll_dtype dt);
void et_coll_fill(const struct et_coll_sched *s, uint32_t rank, uint64_t seed, enum et_coll_dtype dt, uint8_t *data);
void et_coll_expect(const struct et_coll_sched *s, uint32_t rank, uint64_t seed, enum et_coll_dtype dt, uint8_t *out);
void et_coll_checked_range(const struct et_coll_sched *s, uint32_t rank, uint64_t *off, uint64_t *len);
uint64_t et_coll_bytes_sent(const struct et_coll_sched *s, uint32_t rank);
#endif
