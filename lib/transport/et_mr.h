/* SPDX-License-Identifier: BSD-3-Clause
 * Memory regions: registered (address, length, access) ranges with keys.
 * Every remote access is bounds- and permission-checked here.
 */
#ifndef ET_MR_H
#define ET_MR_H

#include <stdbool.h>
#include <stdint.h>

enum et_access {
	ET_ACCESS_LOCAL_WRITE = 1u << 0,
	ET_ACCESS_REMOTE_WRITE = 1u << 1,
	ET_ACCESS_REMOTE_READ = 1u << 2,
	ET_ACCESS_REMOTE_ATOMIC = 1u << 3,
};

struct et_mr {
	uint8_t *addr;
	uint64_t len;
	uint32_t key;    /* lkey == rkey: slot index << 8 | generation */
	uint32_t access;
	bool valid;
};

/* The regions of one host (a protection domain). */
struct et_mr_table {
	struct et_mr *mrs;
	uint32_t cap;
	uint8_t gen;
};

/* cap: 1..2^24 regions.  0, -EINVAL or -ENOMEM. */
int et_mr_table_init(struct et_mr_table *t, uint32_t cap);
void et_mr_table_free(struct et_mr_table *t);

/* Register [addr, addr + len); NULL when the table is full or len is 0. */
const struct et_mr *et_mr_reg(struct et_mr_table *t, void *addr, uint64_t len,
			      uint32_t access);
/* 0, or -EINVAL when no region has that key. */
int et_mr_dereg(struct et_mr_table *t, uint32_t key);

/* The bytes [va, va + len) of the region named by key if it grants access,
 * else NULL.  va is the address as the owner sees it (verbs style). */
uint8_t *et_mr_lookup(const struct et_mr_table *t, uint32_t key, uint64_t va,
		      uint64_t len, uint32_t access);

#endif /* ET_MR_H */
