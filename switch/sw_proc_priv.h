/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-switch's process: one switch per --config (a whole fabric's
 * switches in one process, or one switch as on a lab's machine), the
 * links between them (ring ports: mbufs handed over, no copy), the
 * requests telemetry makes of each, and the lanes that poll them.
 */
#ifndef SW_PROC_PRIV_H
#define SW_PROC_PRIV_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_mempool.h>

#include "et_switch.h"

struct et_capture;

struct sw_node {
	struct et_switch sw;
	const char *file;
	/* a ring port's far end: the switch it leads to (-1: another kind) */
	int16_t ring_peer[ET_SW_MAX_PORTS];
	struct et_capture *cap[ET_SW_MAX_PORTS];
	unsigned int lane;   /* the lcore that polls it, by index */
	uint64_t link_next;  /* when its ports' links are read next */
	/* telemetry's requests, applied by the node's lane */
	_Atomic int fail_request, restore_request;
	_Atomic int64_t withdraw_request; /* prefix << 16 | depth << 8 | uplink; -1: none */
	_Atomic bool kill_request;
	_Atomic bool dead;  /* killed: polled no more, its links down */
	uint64_t killed_mono_ms;
};

struct sw_proc {
	struct sw_node *node;
	uint16_t n;
	uint16_t n_lanes;
};

/* Every conf of files[0..n) into p->node (allocated), ring ports paired
 * by name across them; the error (file, section, key) said.  0 or -1. */
int sw_load(struct sw_proc *p, char *const *files, uint16_t n, struct rte_mempool *mp);

/* The switch a command names: "NAME" (any count) or "" (only when the
 * process holds one); NULL when there is none, msg the names there are
 * ("one of: leaf0 leaf1 ..."). */
struct sw_node *sw_find(struct sw_proc *p, const char *name, char *msg, size_t len);

/* The telemetry commands under /ethereal/switch/, over p. */
void sw_tel_register(struct sw_proc *p);

/* "a.b.c.d" <-> host order; parse: -1 if it is not one. */
int sw_parse_ipv4(const char *s, uint32_t *ip);
void sw_format_ipv4(uint32_t ip, char *buf, size_t n);

#endif /* SW_PROC_PRIV_H */
