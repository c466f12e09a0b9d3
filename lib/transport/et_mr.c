/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>

#include "transport/et_mr.h"

int
et_mr_table_init(struct et_mr_table *t, uint32_t cap)
{
	if (cap == 0 || cap > (1u << 24))
		return -EINVAL;
	t->mrs = calloc(cap, sizeof(*t->mrs));
	t->cap = cap;
	t->gen = 1;
	return t->mrs ? 0 : -ENOMEM;
}

void
et_mr_table_free(struct et_mr_table *t)
{
	free(t->mrs);
	t->mrs = NULL;
	t->cap = 0;
}

const struct et_mr *
et_mr_reg(struct et_mr_table *t, void *addr, uint64_t len, uint32_t access)
{
	uint32_t i;

	if (len == 0 || addr == NULL ||
	    (uint64_t)(uintptr_t)addr + len < (uint64_t)(uintptr_t)addr)
		return NULL;
	for (i = 0; i < t->cap; i++) {
		struct et_mr *mr = &t->mrs[i];

		if (mr->valid)
			continue;
		/* a new generation per registration: stale keys miss */
		if (++t->gen == 0)
			t->gen = 1;
		*mr = (struct et_mr){.addr = addr, .len = len,
				     .key = i << 8 | t->gen, .access = access,
				     .valid = true};
		return mr;
	}
	return NULL;
}

static struct et_mr *
find(const struct et_mr_table *t, uint32_t key)
{
	uint32_t i = key >> 8;

	if (i >= t->cap || !t->mrs[i].valid || t->mrs[i].key != key)
		return NULL;
	return &t->mrs[i];
}

int
et_mr_dereg(struct et_mr_table *t, uint32_t key)
{
	struct et_mr *mr = find(t, key);

	if (mr == NULL)
		return -EINVAL;
	mr->valid = false;
	return 0;
}

uint8_t *
et_mr_lookup(const struct et_mr_table *t, uint32_t key, uint64_t va,
	     uint64_t len, uint32_t access)
{
	const struct et_mr *mr = find(t, key);
	uint64_t start;

	if (mr == NULL || (mr->access & access) != access)
		return NULL;
	start = (uint64_t)(uintptr_t)mr->addr;
	/* va - start <= mr->len - len, written so nothing can overflow */
	if (va < start || len > mr->len || va - start > mr->len - len)
		return NULL;
	return mr->addr + (va - start);
}
