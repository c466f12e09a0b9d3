/* SPDX-License-Identifier: BSD-3-Clause
 * The CM's tables: what finds a connection, a listener or the next timer
 * in time that does not grow with how many there are.
 *
 *   slots      the connections by slot (the low 16 bits of the local
 *              communication ID, with the slot's generation above them):
 *              a MAD naming our ID finds its connection at once.  Slots
 *              never taken come first, then the freed ones in the order
 *              they were freed, so an ID comes back as late as possible.
 *              The table grows (doubling, up to max) when the next slot
 *              would be one taken before: memory follows the connections
 *              made, not max.
 *   remote     connections by what the peer calls them, its (CA GUID,
 *              communication ID): a repeated REQ, a REJ that names us by
 *              our GUID.  A chained hash, keyed by a salt of the CM's seed
 *              so a peer cannot choose IDs that fall in one bucket.
 *   timers     each slot's deadline, in an indexed min-heap (base/et_heap).
 *   listeners  service ID -> the consumer's context, a chained hash.
 *
 * Private to lib/cm (and its tests): et_cm.c is its one user.
 */
#ifndef ET_CM_TABLE_PRIV_H
#define ET_CM_TABLE_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "base/et_heap.h"

/* no slot; the same as the heap's no id, which et_cm_table_pop_due passes on */
#define ET_CM_NO_SLOT ET_HEAP_NONE

struct et_cm_conn;

/* A chained hash over entries 0 .. n - 1 that lives in arrays: the caller
 * keeps the keys and compares them; the chain only says where to look. */
struct et_cm_chain {
	uint32_t mask;       /* buckets - 1 */
	uint32_t *head;      /* per bucket: its first entry; ET_CM_NO_SLOT: none */
	uint32_t *next;      /* per entry: the next one of its bucket */
};

struct et_cm_listener {
	uint64_t service_id;
	void *ctx;
};

struct et_cm_table {
	uint32_t max;               /* slots at most (max_conns) */
	uint32_t cap;               /* slots now */
	uint64_t salt;
	struct et_cm_conn **conn;   /* per slot; NULL: free */
	uint16_t *gen;              /* per slot: one more each time it is taken */
	uint32_t *fifo;             /* the free slots, the longest free first (a ring of cap) */
	uint32_t fifo_head, fifo_n;
	uint64_t *rguid;            /* per slot in `remote`: the peer's key */
	uint32_t *rid;
	struct et_cm_chain remote;  /* over slots */
	struct et_heap timers;      /* over slots */
	struct et_cm_listener *lis; /* dense: lis[0 .. n_lis) */
	uint32_t n_lis, cap_lis;
	struct et_cm_chain lis_hash; /* over lis[] */
};

/* An empty table of up to max slots (1 .. 65536); salt keys its hashes.
 * 0, -EINVAL or -ENOMEM. */
int et_cm_table_init(struct et_cm_table *t, uint32_t max, uint64_t salt);
/* The table only: the connections are the caller's to free first. */
void et_cm_table_free(struct et_cm_table *t);

/* A free slot for c (its generation one more); ET_CM_NO_SLOT when all max
 * are taken or the table cannot grow. */
uint32_t et_cm_table_take(struct et_cm_table *t, struct et_cm_conn *c);
/* The slot is free again: out of the remote hash, its timer off. */
void et_cm_table_put(struct et_cm_table *t, uint32_t slot);

/* The connection in slot (any number), NULL if none. */
static inline struct et_cm_conn *
et_cm_table_conn(const struct et_cm_table *t, uint32_t slot)
{
	return slot < t->cap ? t->conn[slot] : NULL;
}

static inline uint16_t
et_cm_table_gen(const struct et_cm_table *t, uint32_t slot)
{
	return t->gen[slot];
}

/* The peer knows slot's connection as (guid, id) from now on. */
void et_cm_table_set_remote(struct et_cm_table *t, uint32_t slot, uint64_t guid, uint32_t id);
/* The connection the peer knows as (guid, id); NULL if none.  (A peer
 * that gave two of ours one ID: the one named last.) */
struct et_cm_conn *et_cm_table_find_remote(const struct et_cm_table *t, uint64_t guid,
					   uint32_t id);

/* slot's timer at at (UINT64_MAX: none). */
static inline void
et_cm_table_arm(struct et_cm_table *t, uint32_t slot, uint64_t at)
{
	et_heap_set(&t->timers, slot, at);
}

/* The earliest timer; UINT64_MAX if none. */
static inline uint64_t
et_cm_table_deadline(const struct et_cm_table *t)
{
	return et_heap_first_at(&t->timers);
}

/* A slot whose timer is due by now (the earliest), its timer off;
 * ET_CM_NO_SLOT when none is. */
static inline uint32_t
et_cm_table_pop_due(struct et_cm_table *t, uint64_t now)
{
	return et_heap_pop_due(&t->timers, now);
}

/* 0, -EADDRINUSE (already listened on) or -ENOMEM. */
int et_cm_table_listen(struct et_cm_table *t, uint64_t service_id, void *ctx);
/* 0 or -ENOENT. */
int et_cm_table_unlisten(struct et_cm_table *t, uint64_t service_id);
/* NULL if nobody listens on service_id. */
const struct et_cm_listener *et_cm_table_listener(const struct et_cm_table *t,
						  uint64_t service_id);

#endif /* ET_CM_TABLE_PRIV_H */
