/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/et_agenda.h"

#define NONE UINT32_MAX

int
et_agenda_init(struct et_agenda *a, uint32_t n)
{
	uint32_t words = (n + 63) / 64, i;

	memset(a, 0, sizeof(*a));
	a->n = n;
	a->bits = calloc(words ? words : 1, sizeof(*a->bits));
	a->at = malloc((n ? n : 1) * sizeof(*a->at));
	a->heap = malloc((n ? n : 1) * sizeof(*a->heap));
	a->pos = malloc((n ? n : 1) * sizeof(*a->pos));
	if (!a->bits || !a->at || !a->heap || !a->pos) {
		et_agenda_free(a);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		a->at[i] = UINT64_MAX;
		a->pos[i] = NONE;
		et_agenda_mark(a, i);
	}
	return 0;
}

void
et_agenda_free(struct et_agenda *a)
{
	free(a->bits);
	free(a->at);
	free(a->heap);
	free(a->pos);
	memset(a, 0, sizeof(*a));
}

static inline void
place(struct et_agenda *a, uint32_t k, uint32_t node)
{
	a->heap[k] = node;
	a->pos[node] = k;
}

static void
sift_up(struct et_agenda *a, uint32_t k)
{
	uint32_t node = a->heap[k];

	while (k > 0 && a->at[a->heap[(k - 1) / 2]] > a->at[node]) {
		place(a, k, a->heap[(k - 1) / 2]);
		k = (k - 1) / 2;
	}
	place(a, k, node);
}

static void
sift_down(struct et_agenda *a, uint32_t k)
{
	uint32_t node = a->heap[k], c;

	while ((c = 2 * k + 1) < a->heap_n) {
		if (c + 1 < a->heap_n && a->at[a->heap[c + 1]] < a->at[a->heap[c]])
			c++;
		if (a->at[a->heap[c]] >= a->at[node])
			break;
		place(a, k, a->heap[c]);
		k = c;
	}
	place(a, k, node);
}

static void
remove_at(struct et_agenda *a, uint32_t k)
{
	uint32_t node = a->heap[k], last = a->heap[--a->heap_n];

	a->pos[node] = NONE;
	a->at[node] = UINT64_MAX;
	if (k == a->heap_n)
		return;
	place(a, k, last);
	sift_down(a, k);
	sift_up(a, a->pos[last]);
}

void
et_agenda_wake_at(struct et_agenda *a, uint32_t i, uint64_t t)
{
	uint64_t was = a->at[i];

	if (a->pos[i] == NONE) {
		if (t == UINT64_MAX)
			return;
		a->at[i] = t;
		place(a, a->heap_n++, i);
		sift_up(a, a->pos[i]);
	} else if (t == was) {
		return; /* the usual case: a turn that left its next event be */
	} else if (t == UINT64_MAX) {
		remove_at(a, a->pos[i]);
	} else {
		a->at[i] = t;
		if (t < was)
			sift_up(a, a->pos[i]);
		else
			sift_down(a, a->pos[i]);
	}
}

void
et_agenda_due(struct et_agenda *a, uint64_t now)
{
	while (a->heap_n && a->at[a->heap[0]] <= now) {
		et_agenda_mark(a, a->heap[0]);
		remove_at(a, 0);
	}
}

uint64_t
et_agenda_next(const struct et_agenda *a, uint64_t now)
{
	for (uint32_t w = 0; w < (a->n + 63) / 64; w++)
		if (a->bits[w])
			return now;
	return a->heap_n ? a->at[a->heap[0]] : UINT64_MAX;
}
