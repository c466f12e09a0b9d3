/* SPDX-License-Identifier: BSD-3-Clause
 * The fabric's frame pool, which grows when it runs dry.
 *
 * A NIC builds frames from host memory and never waits for buffers, but
 * here one pool holds every frame of the fabric, those the switches queue
 * too.  Run dry, it made hosts wait as no NIC would, and on several lanes
 * which lane got its last frames depended on the lcores' timing.  So when
 * the pool's own stack is empty, its dequeue hands out frames of overflow
 * pools made then (of anonymous memory, outside EAL's -m), up to a
 * ceiling: beyond it the pool is dry as before.  An overflow frame belongs
 * to its own pool (m->pool), so it goes back there when freed; one left in
 * the pool's per-lcore cache is sent home when the cache spills.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_spinlock.h>

#include "sim/et_sim_priv.h"

#define OPS_NAME "et_fabric_grow"
#define MAX_MORE 64

struct grow {
	const struct rte_mempool_ops *base; /* the stack's (or the ring's) */
	rte_spinlock_t lock;
	uint16_t data_room;
	int socket;
	uint32_t chunk;                     /* mbufs an overflow pool holds */
	uint32_t size, max;                 /* all pools' mbufs now, at most */
	struct rte_mempool *more[MAX_MORE];
	uint32_t n_more;                    /* read without the lock: release/acquire */
	bool failed;                        /* an overflow pool could not be made */
	bool closing;                       /* rte_mempool_free drains it: no growing */
};

static struct grow *
grow_of(const struct rte_mempool *mp)
{
	return mp->pool_config;
}

static int
grow_alloc(struct rte_mempool *mp)
{
	return grow_of(mp)->base->alloc(mp);
}

static void
grow_free(struct rte_mempool *mp)
{
	grow_of(mp)->base->free(mp);
}

static unsigned int
grow_get_count(const struct rte_mempool *mp)
{
	return grow_of(mp)->base->get_count(mp);
}

static int
grow_enqueue(struct rte_mempool *mp, void *const *objs, unsigned int n)
{
	const struct rte_mempool_ops *base = grow_of(mp)->base;
	unsigned int i, from = 0;
	int rc = 0;

	/* runs of the pool's own frames go to its stack, the others home */
	for (i = 0; i < n; i++) {
		struct rte_mempool *home = rte_mempool_from_obj(objs[i]);

		if (home == mp)
			continue;
		if (i > from)
			rc |= base->enqueue(mp, objs + from, i - from);
		rte_mempool_put(home, objs[i]);
		from = i + 1;
	}
	if (n > from)
		rc |= base->enqueue(mp, objs + from, n - from);
	return rc;
}

/* An overflow pool of chunk mbufs, as rte_pktmbuf_pool_create makes one
 * but on anonymous memory and without a cache of its own. */
static struct rte_mempool *
make_more(const struct grow *g, const struct rte_mempool *mp, uint32_t k)
{
	struct rte_pktmbuf_pool_private priv = {.mbuf_data_room_size = g->data_room};
	char name[RTE_MEMPOOL_NAMESIZE];
	struct rte_mempool *x;

	snprintf(name, sizeof(name), "%.20s+%u", mp->name, k);
	x = rte_mempool_create_empty(name, g->chunk, mp->elt_size, 0, sizeof(priv), g->socket, 0);
	if (x == NULL)
		return NULL;
	if (rte_mempool_set_ops_byname(x, g->base->name, NULL) ||
	    (rte_pktmbuf_pool_init(x, &priv), rte_mempool_populate_anon(x) != (int)g->chunk)) {
		rte_mempool_free(x);
		return NULL;
	}
	rte_mempool_obj_iter(x, rte_pktmbuf_init, NULL);
	return x;
}

static int
from_more(struct grow *g, void **objs, unsigned int n)
{
	uint32_t k = __atomic_load_n(&g->n_more, __ATOMIC_ACQUIRE);

	for (uint32_t i = 0; i < k; i++)
		if (rte_mempool_get_bulk(g->more[i], objs, n) == 0)
			return 0;
	return -ENOBUFS;
}

static int
grow_dequeue(struct rte_mempool *mp, void **objs, unsigned int n)
{
	struct grow *g = grow_of(mp);
	int rc;

	if (g->base->dequeue(mp, objs, n) == 0)
		return 0;
	if (g->closing)
		return -ENOBUFS;
	if (from_more(g, objs, n) == 0)
		return 0;
	/* more than a cache holds: a cache refilling itself, which on failure
	 * asks again for what its caller wants; grow only for that */
	if (mp->cache_size && n > mp->cache_size)
		return -ENOBUFS;
	rte_spinlock_lock(&g->lock);
	/* another lane may have grown it meanwhile */
	rc = from_more(g, objs, n);
	if (rc && !g->failed && g->n_more < MAX_MORE && g->size + g->chunk <= g->max) {
		struct rte_mempool *x = make_more(g, mp, g->n_more);

		if (x == NULL) {
			g->failed = true;
		} else {
			g->more[g->n_more] = x;
			g->size += g->chunk;
			__atomic_store_n(&g->n_more, g->n_more + 1, __ATOMIC_RELEASE);
			rc = rte_mempool_get_bulk(x, objs, n);
		}
	}
	rte_spinlock_unlock(&g->lock);
	return rc;
}

static const struct rte_mempool_ops grow_ops = {
	.name = OPS_NAME,
	.alloc = grow_alloc,
	.free = grow_free,
	.enqueue = grow_enqueue,
	.dequeue = grow_dequeue,
	.get_count = grow_get_count,
};

RTE_MEMPOOL_REGISTER_OPS(grow_ops);

static const struct rte_mempool_ops *
ops_named(const char *name)
{
	for (unsigned int i = 0; i < rte_mempool_ops_table.num_ops; i++)
		if (strcmp(rte_mempool_ops_table.ops[i].name, name) == 0)
			return &rte_mempool_ops_table.ops[i];
	return NULL;
}

struct rte_mempool *
et_pool_create(const char *name, uint32_t n, uint32_t max, uint16_t data_room, int socket)
{
	struct rte_pktmbuf_pool_private priv = {.mbuf_data_room_size = data_room};
	struct grow *g = calloc(1, sizeof(*g));
	struct rte_mempool *mp;

	if (g == NULL)
		return NULL;
	/* a stack, not DPDK's default ring: the mbuf freed last is the one
	 * handed out next, still in cache, and the run touches only as many
	 * as it ever holds at once, not every mbuf of the pool in turn */
	g->base = ops_named("stack");
	if (g->base == NULL) /* a DPDK without the stack driver */
		g->base = ops_named("ring_mp_mc");
	rte_spinlock_init(&g->lock);
	g->data_room = data_room;
	g->socket = socket;
	g->size = n;
	g->max = max > n ? max : n;
	g->chunk = n / 4 > 16384 ? n / 4 : 16384;
	mp = g->base ? rte_mempool_create_empty(name, n, sizeof(struct rte_mbuf) + data_room, 256,
						 sizeof(priv), socket, 0)
		     : NULL;
	if (mp == NULL) {
		free(g);
		return NULL;
	}
	if (rte_mempool_set_ops_byname(mp, OPS_NAME, g) ||
	    (rte_pktmbuf_pool_init(mp, &priv), rte_mempool_populate_default(mp) < 0)) {
		rte_mempool_free(mp);
		free(g);
		return NULL;
	}
	rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
	return mp;
}

uint32_t
et_pool_size(const struct rte_mempool *mp)
{
	return grow_of(mp)->size;
}

uint32_t
et_pool_in_use(const struct rte_mempool *mp)
{
	const struct grow *g = grow_of(mp);
	/* the pool's caches may hold overflow frames: only the sum is right,
	 * and rte_mempool_avail_count() would clip the pool's own at its size */
	uint64_t avail = g->base->get_count(mp);

	for (unsigned int l = 0; mp->cache_size && l < RTE_MAX_LCORE; l++)
		avail += mp->local_cache[l].len;
	for (uint32_t i = 0; i < g->n_more; i++)
		avail += rte_mempool_avail_count(g->more[i]);
	return avail >= g->size ? 0 : (uint32_t)(g->size - avail);
}

void
et_pool_free(struct rte_mempool *mp)
{
	struct grow *g;

	if (mp == NULL)
		return;
	g = grow_of(mp);
	/* rte_mempool_free() dequeues an object for each it made, and those
	 * in the lcores' caches are not there to be had */
	g->closing = true;
	/* the pool first: its caches may point into the overflow pools */
	rte_mempool_free(mp);
	for (uint32_t i = 0; i < g->n_more; i++)
		rte_mempool_free(g->more[i]);
	free(g);
}
