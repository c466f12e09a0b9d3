/* SPDX-License-Identifier: BSD-3-Clause
 * Counters declared once.  A block of counters is an X-macro list,
 *
 *   #define ET_FOO_COUNTERS(X, A) \
 *           X(rx_pkts, GONE, "frames taken off the link") \
 *           A(rx_bad, GONE, ET_WIRE_E_COUNT, et_wire_err_name, "rx_bad", "bad frames") \
 *           X(tx_pkts, MADE, "frames made")
 *
 * (A: an array indexed by an enum, its elements named KEY_ELEMENT) from
 * which come both the struct (ET_CTR_FIELD, ET_CTR_ARRAY_FIELD) and a
 * descriptor table (ET_CTR_ENTRY, ET_CTR_ARRAY_ENTRY) that telemetry, the
 * exit tables, the JSON and the frame accounting walk.  A counter added to the list appears everywhere,
 * and its role says where it stands in the accounting, so the accounting
 * stays closed by construction.
 */
#ifndef ET_COUNTERS_H
#define ET_COUNTERS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What a counter says about frames. */
enum et_ctr_role {
	ET_CTR_INFO, /* a figure: no frame begins or ends with it */
	ET_CTR_MADE, /* a frame came into being here (built, duplicated, PAUSE) */
	ET_CTR_GONE, /* a frame ended here: taken in by its endpoint */
	ET_CTR_DROP, /* a frame ended here: refused (no route, full, failed link) */
	ET_CTR_FAULT, /* a frame ended here: lost by a link's fault model */
	ET_CTR_MAX,  /* a high-water mark: aggregated by max, not by sum */
};

struct et_ctr_desc {
	const char *name;
	size_t off;               /* of its uint64_t (the first, for an array) */
	enum et_ctr_role role;
	uint32_t n;               /* 0: one counter; else an array of n */
	const char *(*elem)(int); /* an array element's name */
	const char *key;          /* an array element is key_elem */
	const char *help;
};

struct et_ctr_table {
	const struct et_ctr_desc *d;
	unsigned int n;
};

/* In a struct definition. */
#define ET_CTR_FIELD(name, role, help) uint64_t name;
#define ET_CTR_ARRAY_FIELD(name, role, n, elem, key, help) uint64_t name[n];
/* The descriptor table `table` of struct T from its list, in the module's
 * .c file (one table a file):
 *   ET_CTR_DEFINE(et_nic_ctrs, struct et_nic_stats, ET_NIC_COUNTERS); */
#define ET_CTR_ENTRY(name, role, help) \
	{#name, offsetof(et_ctr_struct, name), ET_CTR_##role, 0, NULL, NULL, help},
#define ET_CTR_ARRAY_ENTRY(name, role, n, elem, key, help) \
	{#name, offsetof(et_ctr_struct, name), ET_CTR_##role, n, elem, key, help},
#define ET_CTR_DEFINE(table, T, LIST) \
	typedef T et_ctr_struct; \
	static const struct et_ctr_desc table##_desc[] = {LIST(ET_CTR_ENTRY, ET_CTR_ARRAY_ENTRY)}; \
	const struct et_ctr_table table = {table##_desc, sizeof(table##_desc) / sizeof(table##_desc[0])}

static inline const uint64_t *
et_ctr_ptr(const void *stats, const struct et_ctr_desc *d)
{
	return (const uint64_t *)(const void *)((const char *)stats + d->off);
}

/* One counter's value; an array's total. */
static inline uint64_t
et_ctr_get(const void *stats, const struct et_ctr_desc *d)
{
	const uint64_t *v = et_ctr_ptr(stats, d);
	uint64_t s = 0;

	if (d->n == 0)
		return *v;
	for (uint32_t i = 0; i < d->n; i++)
		s += v[i];
	return s;
}

/* The sum of the counters whose role is in roles (bits of enum et_ctr_role). */
static inline uint64_t
et_ctr_sum(const struct et_ctr_table *t, const void *stats, unsigned int roles)
{
	uint64_t s = 0;

	for (unsigned int i = 0; i < t->n; i++)
		if (roles & 1u << t->d[i].role)
			s += et_ctr_get(stats, &t->d[i]);
	return s;
}

/* a += b, counter by counter; high-water marks by max. */
static inline void
et_ctr_add(const struct et_ctr_table *t, void *a, const void *b)
{
	for (unsigned int i = 0; i < t->n; i++) {
		const struct et_ctr_desc *d = &t->d[i];
		uint64_t *x = (uint64_t *)(void *)((char *)a + d->off);
		const uint64_t *y = et_ctr_ptr(b, d);

		for (uint32_t k = 0; k < (d->n ? d->n : 1); k++)
			x[k] = d->role == ET_CTR_MAX ? (x[k] > y[k] ? x[k] : y[k]) : x[k] + y[k];
	}
}

/* Visit every counter by name: arrays as key_elem per element.  fn gets
 * its context, the name and the value. */
static inline void
et_ctr_each(const struct et_ctr_table *t, const void *stats, const char *prefix,
	    void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx)
{
	char name[96];

	for (unsigned int i = 0; i < t->n; i++) {
		const struct et_ctr_desc *d = &t->d[i];
		const uint64_t *v = et_ctr_ptr(stats, d);

		if (d->n == 0) {
			snprintf(name, sizeof(name), "%s%s", prefix, d->name);
			fn(ctx, name, *v);
			continue;
		}
		for (uint32_t k = 0; k < d->n; k++) {
			snprintf(name, sizeof(name), "%s%s_%s", prefix, d->key, d->elem((int)k));
			fn(ctx, name, v[k]);
		}
	}
}

#define ET_CTR_BIT(role) (1u << ET_CTR_##role)
#define ET_CTR_LOST (ET_CTR_BIT(DROP) | ET_CTR_BIT(FAULT))
#define ET_CTR_ENDED (ET_CTR_BIT(GONE) | ET_CTR_LOST)

#endif /* ET_COUNTERS_H */
