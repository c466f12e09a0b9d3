/* SPDX-License-Identifier: BSD-3-Clause
 * TEMPORARY stand-in (a2a allreduce only). */
#include <stdlib.h>
#include <string.h>
#include "et_coll.h"
static const char *const kn[] = {"allreduce", "allgather", "reducescatter", "alltoall"};
static const char *const an[] = {"a2a", "rd", "ring", "dbt"};
int et_coll_parse_kind(const char *n, enum et_coll_kind *o) { for (int i = 0; i < 4; i++) if (!strcmp(n, kn[i])) { *o = i; return 0; } return -1; }
int et_coll_parse_algo(const char *n, enum et_coll_algo *o) { for (int i = 0; i < 4; i++) if (!strcmp(n, an[i])) { *o = i; return 0; } return -1; }
const char *et_coll_kind_name(enum et_coll_kind k) { return kn[k]; }
const char *et_coll_algo_name(enum et_coll_algo a) { return an[a]; }
int et_coll_build(struct et_coll_sched *s, enum et_coll_kind kind, enum et_coll_algo algo, uint32_t n, uint64_t size, uint64_t chunk, const char **why)
{
	(void)chunk;
	memset(s, 0, sizeof(*s));
	if (kind != ET_COLL_ALLREDUCE || algo != ET_ALGO_A2A) { *why = "stand-in: allreduce a2a only"; return -1; }
	if (size % (4ull * n)) { *why = "size must be a multiple of 4 x ranks"; return -1; }
	s->nranks = n; s->size = size; s->kind = kind; s->algo = algo; s->dtype_size = 4;
	s->rank = calloc(n, sizeof(*s->rank));
	uint64_t c = size / n;
	for (uint32_t r = 0; r < n; r++) {
		struct et_coll_rank *k = &s->rank[r];
		k->sends = calloc(2 * n, sizeof(*k->sends)); k->recvs = calloc(2 * n, sizeof(*k->recvs)); k->steps = calloc(2, sizeof(*k->steps));
		k->nsteps = 2;
		for (int st = 0; st < 2; st++) {
			k->steps[st] = (struct et_coll_step){k->nsends, 0, k->nrecvs, 0};
			for (uint32_t j = 0; j < n; j++) {
				if (j == r) continue;
				/* recv index at j for src r in step st: st*(n-1) + (r < j ? r : r-1) */
				uint32_t ridx = st * (n - 1) + (r < j ? r : r - 1);
				k->sends[k->nsends++] = (struct et_coll_send){j, ridx, st == 0 ? j * c : r * c, c};
				k->steps[st].nsend++;
			}
			for (uint32_t j = 0; j < n; j++) {
				if (j == r) continue;
				k->recvs[k->nrecvs] = (struct et_coll_recv){j, (uint64_t)k->nrecvs * c, st == 0 ? r * c : j * c, c, st == 0};
				k->nrecvs++;
				k->steps[st].nrecv++;
			}
		}
		k->staging_bytes = (uint64_t)k->nrecvs * c;
		if (k->staging_bytes > s->staging_bytes) s->staging_bytes = k->staging_bytes;
	}
	return 0;
}
void et_coll_free(struct et_coll_sched *s) { for (uint32_t r = 0; s->rank && r < s->nranks; r++) { free(s->rank[r].sends); free(s->rank[r].recvs); free(s->rank[r].steps); } free(s->rank); memset(s, 0, sizeof(*s)); }
void et_coll_apply(const struct et_coll_recv *r, uint8_t *data, const uint8_t *st, enum et_coll_dtype dt)
{
	(void)dt;
	if (!r->reduce) { memcpy(data + r->data_off, st + r->staging_off, r->len); return; }
	for (uint64_t i = 0; i < r->len; i += 4) { int32_t a, b; memcpy(&a, data + r->data_off + i, 4); memcpy(&b, st + r->staging_off + i, 4); a = (int32_t)((uint32_t)a + (uint32_t)b); memcpy(data + r->data_off + i, &a, 4); }
}
static int32_t val(uint32_t rank, uint64_t i, uint64_t seed) { return (int32_t)((rank + 1) * 1000003u + (uint32_t)i * 7u + (uint32_t)seed); }
void et_coll_fill(const struct et_coll_sched *s, uint32_t rank, uint64_t seed, enum et_coll_dtype dt, uint8_t *d) { (void)dt; for (uint64_t i = 0; i < s->size / 4; i++) { int32_t v = val(rank, i, seed); memcpy(d + 4 * i, &v, 4); } }
void et_coll_expect(const struct et_coll_sched *s, uint32_t rank, uint64_t seed, enum et_coll_dtype dt, uint8_t *o) { (void)dt; (void)rank; for (uint64_t i = 0; i < s->size / 4; i++) { uint32_t v = 0; for (uint32_t r = 0; r < s->nranks; r++) v += (uint32_t)val(r, i, seed); memcpy(o + 4 * i, &v, 4); } }
void et_coll_checked_range(const struct et_coll_sched *s, uint32_t rank, uint64_t *off, uint64_t *len) { (void)rank; *off = 0; *len = s->size; }
uint64_t et_coll_bytes_sent(const struct et_coll_sched *s, uint32_t rank) { (void)rank; return 2 * s->size / s->nranks * (s->nranks - 1); }
