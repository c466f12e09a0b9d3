/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer target for the connection manager: its MAD parser, and the CM
 * itself driven by a script of MADs from two peers, time steps and the
 * consumer's calls (connect, accept, reject, disconnect, release).
 * Beyond "no crash": whatever the parser takes, the builder rebuilds into a
 * MAD that parses to the same message; every MAD the CM hands out parses;
 * every MAD in is counted once (taken, or refused by reason); once every
 * connection is let go and time has passed, nothing is left to wait for.
 *
 * Input: a byte of op, then its operands: 0-3 a MAD of up to 256 bytes
 * (its length byte first) from peer op & 1; 4 time (a byte of 10 ms
 * steps); 5 connect; 6 and 7 act on a connection the consumer holds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cm/et_cm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define IP 0x0a4d0003u
#define PEERS 2
#define HELD 64

static void
roundtrip(const uint8_t *mad, size_t len)
{
	struct et_cm_msg m, again;
	uint8_t out[ET_MAD_LEN];
	int rc = et_cm_parse(mad, len, &m);

	if (rc > 0 || -rc >= ET_MAD_E_COUNT)
		abort();
	if (rc)
		return;
	if (m.pdata < mad || m.pdata + m.pdata_len != mad + ET_MAD_LEN)
		abort();
	if (et_cm_build(out, &m) != ET_MAD_LEN || et_cm_parse(out, sizeof(out), &again) != 0)
		abort();
	if (memcmp(&m.hdr, &again.hdr, sizeof(m.hdr)) || memcmp(&m.u, &again.u, sizeof(m.u)) ||
	    m.pdata_len != again.pdata_len || memcmp(m.pdata, again.pdata, m.pdata_len))
		abort();
}

struct state {
	struct et_cm *cm;
	struct et_cm_conn *held[HELD];
	uint32_t n_held;
	uint64_t now, in;
};

static void
hold(struct state *s, struct et_cm_conn *c)
{
	if (s->n_held < HELD)
		s->held[s->n_held++] = c;
	else
		et_cm_release(s->cm, c, s->now);
}

static void
let_go(struct state *s, uint32_t i)
{
	et_cm_release(s->cm, s->held[i], s->now);
	s->held[i] = s->held[--s->n_held];
}

/* What the CM hands out: every MAD must parse; requests are held. */
static void
drain(struct state *s)
{
	struct et_cm_event e;
	struct et_cm_out o;
	struct et_cm_msg m;

	while (et_cm_pop_out(s->cm, &o))
		if (et_cm_parse(o.mad, sizeof(o.mad), &m) != 0 || o.dst_ip == 0)
			abort();
	while (et_cm_poll_event(s->cm, &e))
		if (e.type == ET_CM_EV_CONNECT_REQUEST)
			hold(s, e.conn);
}

static void
act(struct state *s, uint8_t what, uint8_t which)
{
	struct et_cm_conn *c;
	uint32_t i;

	if (s->n_held == 0)
		return;
	i = which % s->n_held;
	c = s->held[i];
	switch (what % 5) {
	case 0: {
		struct et_cm_accept_param p = {.qpn = 0x100 + i, .psn = which, .pdata = "ok",
					       .pdata_len = 2};

		et_cm_accept(s->cm, c, &p, s->now);
		break;
	}
	case 1: et_cm_reject(s->cm, c, "no", 2, s->now); break;
	case 2: et_cm_disconnect(s->cm, c, s->now); break;
	case 3: et_cm_notify_established(s->cm, c, s->now); break;
	default: let_go(s, i); break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct et_cm_conf conf;
	struct state s = {.now = 1000};
	const struct et_cm_stats *st;
	uint64_t bad = 0;
	size_t k = 0;

	et_cm_conf_default(&conf);
	conf.ip = IP;
	conf.ca_guid = 0x020000fffe000003ull;
	conf.max_conns = 16;
	s.cm = et_cm_create(&conf);
	if (s.cm == NULL || et_cm_listen(s.cm, et_rdma_service_id(ET_RDMA_PS_TCP, 18515), NULL) ||
	    et_cm_listen(s.cm, 0x0002c90300001234ull, NULL))
		abort();
	while (k < size) {
		uint8_t op = data[k++];

		if (op % 8 < 4) {
			size_t len = k < size ? data[k++] + 1u : 0; /* 1 .. 256 */
			uint8_t mad[ET_MAD_LEN + 1];

			len = len > size - k ? size - k : len;
			memcpy(mad, data + k, len);
			k += len;
			/* a whole MAD's length but for one byte in 256 */
			if (len == ET_MAD_LEN && op & 0x80)
				mad[len++] = 0;
			roundtrip(mad, len);
			et_cm_input(s.cm, IP - 1 - (op & 1), mad, len, s.now);
			s.in++;
		} else if (op % 8 == 4) {
			s.now += (k < size ? data[k++] : 1) * 10000000ull;
			et_cm_timer(s.cm, s.now);
		} else if (op % 8 == 5) {
			struct et_cm_connect_param p = {
				.dst_ip = IP - 1 - (op >> 7), .service_id = et_rdma_service_id(
					ET_RDMA_PS_TCP, 7471), .qpn = 0x200, .psn = 7, .mtu = 1024,
				.pdata = "hi", .pdata_len = 2};
			int err;
			struct et_cm_conn *c = et_cm_connect(s.cm, &p, NULL, s.now, &err);

			if (c)
				hold(&s, c);
		} else if (k + 1 < size) {
			act(&s, data[k], data[k + 1]);
			k += 2;
		}
		drain(&s);
	}
	/* every MAD counted once: taken, or refused by reason */
	st = et_cm_stats(s.cm);
	for (int e = 0; e < ET_MAD_E_COUNT; e++)
		bad += st->rx_bad[e];
	if (st->rx_mads + bad != s.in)
		abort();
	/* all let go, time on: nothing left to wait for */
	while (s.n_held)
		let_go(&s, 0);
	for (int round = 0; round < 4096 && et_cm_deadline(s.cm) != UINT64_MAX; round++) {
		s.now = et_cm_deadline(s.cm);
		et_cm_timer(s.cm, s.now);
		drain(&s);
	}
	if (et_cm_deadline(s.cm) != UINT64_MAX)
		abort();
	et_cm_destroy(s.cm);
	return 0;
}
