/* SPDX-License-Identifier: BSD-3-Clause
 * The CM's tables (et_cm_table_priv.h): slots with a FIFO of the free
 * ones, two chained hashes, the timers' heap.
 */
#include "cm/et_cm_table_priv.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define NONE ET_CM_NO_SLOT
#define OUT (UINT32_MAX - 1) /* a chain's next[]: the entry is in no bucket */
#define FIRST_SLOTS 64u
#define FIRST_LISTENERS 4u

/* ---- chained hashes in arrays ---- */

/* murmur3's finaliser: every bit of the key moves every bit of the hash */
static uint64_t
mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static uint64_t
remote_hash(const struct et_cm_table *t, uint64_t guid, uint32_t id)
{
	return mix(mix(guid ^ t->salt) ^ id);
}

static uint64_t
sid_hash(const struct et_cm_table *t, uint64_t service_id)
{
	return mix(service_id ^ t->salt);
}

static void
chain_add(struct et_cm_chain *ch, uint32_t i, uint64_t hash)
{
	uint32_t *head = &ch->head[hash & ch->mask];

	ch->next[i] = *head;
	*head = i;
}

/* The link that points at entry i (in its bucket's chain). */
static uint32_t *
chain_link(struct et_cm_chain *ch, uint32_t i, uint64_t hash)
{
	uint32_t *p = &ch->head[hash & ch->mask];

	while (*p != i)
		p = &ch->next[*p];
	return p;
}

static void
chain_unlink(struct et_cm_chain *ch, uint32_t i, uint64_t hash)
{
	*chain_link(ch, i, hash) = ch->next[i];
	ch->next[i] = OUT;
}

/* Buckets for n entries (a power of 2, one per entry or more), all empty:
 * the caller adds its entries again.  -ENOMEM leaves the chain as it was. */
static int
chain_rebucket(struct et_cm_chain *ch, uint32_t n)
{
	uint32_t b = 1, *head;

	while (b < n)
		b *= 2;
	if ((head = malloc(b * sizeof(*head))) == NULL)
		return -ENOMEM;
	for (uint32_t k = 0; k < b; k++)
		head[k] = NONE;
	free(ch->head);
	ch->head = head;
	ch->mask = b - 1;
	return 0;
}

/* *p made room for n elements of size elem; false (nothing changed) when
 * there is no memory. */
static bool
resize(void *p, size_t n, size_t elem)
{
	void *q = realloc(*(void **)p, n * elem);

	if (q == NULL)
		return false;
	*(void **)p = q;
	return true;
}

/* ---- slots ---- */

/* cap slots at most.  The FIFO holds the slots never taken (generation
 * 0) first, in order, then the freed ones: the new slots go between, so
 * the IDs of freed slots come back as late as possible. */
static int
grow(struct et_cm_table *t, uint32_t cap)
{
	uint32_t *fifo, old = t->cap, fresh = 0, k;

	if (!resize(&t->conn, cap, sizeof(*t->conn)) || !resize(&t->gen, cap, sizeof(*t->gen)) ||
	    !resize(&t->rguid, cap, sizeof(*t->rguid)) || !resize(&t->rid, cap, sizeof(*t->rid)) ||
	    !resize(&t->remote.next, cap, sizeof(*t->remote.next)) ||
	    et_heap_grow(&t->timers, old, cap) || (fifo = malloc(cap * sizeof(*fifo))) == NULL)
		return -ENOMEM;
	if (chain_rebucket(&t->remote, cap)) {
		free(fifo);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < old; i++)
		if (t->remote.next[i] != OUT)
			chain_add(&t->remote, i, remote_hash(t, t->rguid[i], t->rid[i]));
	while (fresh < t->fifo_n && t->gen[t->fifo[(t->fifo_head + fresh) % old]] == 0)
		fresh++;
	for (k = 0; k < t->fifo_n; k++)
		fifo[k < fresh ? k : k + cap - old] = t->fifo[(t->fifo_head + k) % old];
	for (uint32_t i = old; i < cap; i++) {
		t->conn[i] = NULL;
		t->gen[i] = 0;
		t->remote.next[i] = OUT;
		fifo[fresh + i - old] = i;
	}
	free(t->fifo);
	t->fifo = fifo;
	t->fifo_head = 0;
	t->fifo_n += cap - old;
	t->cap = cap;
	return 0;
}

int
et_cm_table_init(struct et_cm_table *t, uint32_t max, uint64_t salt)
{
	memset(t, 0, sizeof(*t));
	if (max == 0 || max > 65536)
		return -EINVAL;
	t->max = max;
	t->salt = salt;
	if (et_heap_init(&t->timers, 0) ||
	    grow(t, max < FIRST_SLOTS ? max : FIRST_SLOTS) ||
	    chain_rebucket(&t->lis_hash, FIRST_LISTENERS)) {
		et_cm_table_free(t);
		return -ENOMEM;
	}
	return 0;
}

void
et_cm_table_free(struct et_cm_table *t)
{
	free(t->conn);
	free(t->gen);
	free(t->fifo);
	free(t->rguid);
	free(t->rid);
	free(t->remote.head);
	free(t->remote.next);
	et_heap_free(&t->timers);
	free(t->lis);
	free(t->lis_hash.head);
	free(t->lis_hash.next);
	memset(t, 0, sizeof(*t));
}

uint32_t
et_cm_table_take(struct et_cm_table *t, struct et_cm_conn *c)
{
	uint32_t slot;

	/* a slot taken before comes back only once all max have been taken
	 * once, as when they were all there from the start; a failure to
	 * grow leaves what is free */
	if (t->cap < t->max && (t->fifo_n == 0 || t->gen[t->fifo[t->fifo_head]] != 0))
		grow(t, t->cap <= t->max / 2 ? 2 * t->cap : t->max);
	if (t->fifo_n == 0)
		return NONE;
	slot = t->fifo[t->fifo_head];
	t->fifo_head = (t->fifo_head + 1) % t->cap;
	t->fifo_n--;
	t->conn[slot] = c;
	t->gen[slot]++;
	return slot;
}

void
et_cm_table_put(struct et_cm_table *t, uint32_t slot)
{
	if (t->remote.next[slot] != OUT)
		chain_unlink(&t->remote, slot, remote_hash(t, t->rguid[slot], t->rid[slot]));
	et_heap_set(&t->timers, slot, UINT64_MAX);
	t->conn[slot] = NULL;
	t->fifo[(t->fifo_head + t->fifo_n++) % t->cap] = slot;
}

/* ---- what the peer calls them ---- */

void
et_cm_table_set_remote(struct et_cm_table *t, uint32_t slot, uint64_t guid, uint32_t id)
{
	if (t->remote.next[slot] != OUT)
		chain_unlink(&t->remote, slot, remote_hash(t, t->rguid[slot], t->rid[slot]));
	t->rguid[slot] = guid;
	t->rid[slot] = id;
	chain_add(&t->remote, slot, remote_hash(t, guid, id));
}

struct et_cm_conn *
et_cm_table_find_remote(const struct et_cm_table *t, uint64_t guid, uint32_t id)
{
	uint32_t i = t->remote.head[remote_hash(t, guid, id) & t->remote.mask];

	for (; i != NONE; i = t->remote.next[i])
		if (t->rid[i] == id && t->rguid[i] == guid)
			return t->conn[i];
	return NULL;
}

/* ---- listeners ---- */

static uint32_t
lis_find(const struct et_cm_table *t, uint64_t service_id)
{
	uint32_t i = t->lis_hash.head[sid_hash(t, service_id) & t->lis_hash.mask];

	while (i != NONE && t->lis[i].service_id != service_id)
		i = t->lis_hash.next[i];
	return i;
}

int
et_cm_table_listen(struct et_cm_table *t, uint64_t service_id, void *ctx)
{
	if (lis_find(t, service_id) != NONE)
		return -EADDRINUSE;
	if (t->n_lis == t->cap_lis) {
		uint32_t cap = t->cap_lis ? 2 * t->cap_lis : FIRST_LISTENERS;

		if (!resize(&t->lis, cap, sizeof(*t->lis)) ||
		    !resize(&t->lis_hash.next, cap, sizeof(*t->lis_hash.next)) ||
		    chain_rebucket(&t->lis_hash, cap))
			return -ENOMEM;
		t->cap_lis = cap;
		for (uint32_t i = 0; i < t->n_lis; i++)
			chain_add(&t->lis_hash, i, sid_hash(t, t->lis[i].service_id));
	}
	t->lis[t->n_lis] = (struct et_cm_listener){service_id, ctx};
	chain_add(&t->lis_hash, t->n_lis++, sid_hash(t, service_id));
	return 0;
}

int
et_cm_table_unlisten(struct et_cm_table *t, uint64_t service_id)
{
	uint32_t i = lis_find(t, service_id), last;

	if (i == NONE)
		return -ENOENT;
	chain_unlink(&t->lis_hash, i, sid_hash(t, service_id));
	/* the last listener fills the hole: the link to it now leads to i */
	last = --t->n_lis;
	if (i != last) {
		uint64_t h = sid_hash(t, t->lis[last].service_id);

		*chain_link(&t->lis_hash, last, h) = i;
		t->lis_hash.next[i] = t->lis_hash.next[last];
		t->lis[i] = t->lis[last];
	}
	return 0;
}

const struct et_cm_listener *
et_cm_table_listener(const struct et_cm_table *t, uint64_t service_id)
{
	uint32_t i = lis_find(t, service_id);

	return i == NONE ? NULL : &t->lis[i];
}
