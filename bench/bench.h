/* SPDX-License-Identifier: BSD-3-Clause
 * What every benchmark of ethereal-bench shares: the JSON it prints.
 */
#ifndef ET_BENCH_H
#define ET_BENCH_H

struct json_t;
struct rte_mempool;

struct bench_out {
	struct json_t *obj;
};

/* Seconds on the monotonic clock. */
double bench_now_s(void);

/* One "key": value pair of the output object (3 decimal places). */
void bench_num(struct bench_out *o, const char *key, double v);

int bench_switch(struct bench_out *o, struct rte_mempool *mp);
int bench_qp(struct bench_out *o, struct rte_mempool *mp);
int bench_endpoint(struct bench_out *o, struct rte_mempool *mp);
int bench_zerocopy(struct bench_out *o, struct rte_mempool *mp);
int bench_fabric(struct bench_out *o, struct rte_mempool *mp);

#endif /* ET_BENCH_H */
