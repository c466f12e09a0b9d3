/* SPDX-License-Identifier: BSD-3-Clause */
#include "et_tel.h"

static void
add_one(void *ctx, const char *name, uint64_t v)
{
	rte_tel_data_add_dict_u64(ctx, name, v);
}

void
et_tel_add_counters(struct rte_tel_data *d, const struct et_ctr_table *t, const void *stats,
		    const char *prefix)
{
	et_ctr_each(t, stats, prefix, add_one, d);
}
