/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/et_agenda.h"

int
et_agenda_init(struct et_agenda *a, uint32_t n)
{
	uint32_t words = (n + 63) / 64, i;

	memset(a, 0, sizeof(*a));
	a->n = n;
	a->bits = calloc(words ? words : 1, sizeof(*a->bits));
	if (a->bits == NULL || et_heap_init(&a->wake, n)) {
		et_agenda_free(a);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		et_agenda_mark(a, i);
	return 0;
}

void
et_agenda_free(struct et_agenda *a)
{
	free(a->bits);
	et_heap_free(&a->wake);
	memset(a, 0, sizeof(*a));
}

void
et_agenda_wake_at(struct et_agenda *a, uint32_t i, uint64_t t)
{
	et_heap_set(&a->wake, i, t);
}

void
et_agenda_due(struct et_agenda *a, uint64_t now)
{
	uint32_t i;

	while ((i = et_heap_pop_due(&a->wake, now)) != ET_HEAP_NONE)
		et_agenda_mark(a, i);
}

uint64_t
et_agenda_next(const struct et_agenda *a, uint64_t now)
{
	for (uint32_t w = 0; w < (a->n + 63) / 64; w++)
		if (a->bits[w])
			return now;
	return et_heap_first_at(&a->wake);
}
