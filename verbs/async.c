/* SPDX-License-Identifier: BSD-3-Clause
 * Asynchronous events (ibv_get_async_event): a pipe per context that
 * device.c opens, an event a write (the SRQ's limit reached: srq.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "et_vb.h"

void
et_vb_async(struct et_vb_ctx *x, const struct ibv_async_event *ev)
{
	if (write(x->async_wr, ev, sizeof(*ev)) != (ssize_t)sizeof(*ev))
		fprintf(stderr, "ethereal-verbs: an async event lost (%s)\n", strerror(errno));
}

int
ibv_get_async_event(struct ibv_context *c, struct ibv_async_event *ev)
{
	struct et_vb_ctx *x = et_vb_ctx(c);

	return read(x->async_rd, ev, sizeof(*ev)) == (ssize_t)sizeof(*ev) ? 0 : -1;
}

void
ibv_ack_async_event(struct ibv_async_event *ev)
{
	(void)ev;
}
