/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-switch's telemetry (rte_telemetry, /ethereal/switch/...): each
 * command names its switch first when the process holds several
 * ("leaf0,3"), and may when it holds one.  The poll loops apply what a
 * command asks (sw_node's requests); an error is an answer that says why.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "et_tel.h"
#include "sw_proc_priv.h"

static struct sw_proc *proc;

/* "SWITCH,ARGS" when the first word names a switch, else "ARGS" (the
 * process's one switch): the switch, *rest its ARGS; NULL with msg set. */
static struct sw_node *
named(const char *params, const char **rest, char *msg, size_t len)
{
	struct sw_node *x;
	const char *comma;
	size_t n;

	if (params == NULL)
		params = "";
	comma = strchr(params, ',');
	n = comma ? (size_t)(comma - params) : strlen(params);
	for (uint16_t i = 0; i < proc->n; i++) {
		const char *name = proc->node[i].sw.name;

		if (strlen(name) == n && strncmp(name, params, n) == 0) {
			*rest = comma ? comma + 1 : "";
			return &proc->node[i];
		}
	}
	*rest = params;
	x = sw_find(proc, NULL, msg, len);
	if (x == NULL) {
		char names[200];

		snprintf(names, sizeof(names), "%s", msg);
		snprintf(msg, len, "error: name the switch first (SWITCH,...), %s", names);
	}
	return x;
}

static void
add_ports(struct rte_tel_data *d, const struct sw_node *x)
{
	const struct et_switch *sw = &x->sw;

	for (uint16_t i = 0; i < sw->n_ports; i++) {
		const struct et_sw_port *p = &sw->ports[i];
		struct rte_tel_data *c = rte_tel_data_alloc();
		char name[16], ip[16];

		if (c == NULL)
			return;
		rte_tel_data_start_dict(c);
		et_tel_add_counters(c, &et_sw_port_ctrs, &p->st, "");
		et_tel_add_counters(c, &et_egress_ctrs, &p->eg.st, "");
		rte_tel_data_add_dict_u64(c, "failed", p->failed);
		rte_tel_data_add_dict_string(c, "link", p->link_down ? "down" : "up");
		sw_format_ipv4(p->ip, ip, sizeof(ip));
		rte_tel_data_add_dict_string(c, "ip", p->ip ? ip : "none");
		snprintf(name, sizeof(name), "port%u", i);
		rte_tel_data_add_dict_container(d, name, c, 0);
	}
}

/* "" : the one switch's ports, or every switch's by name; "NAME": its */
static int
tel_ports(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char msg[256];

	(void)cmd;
	rte_tel_data_start_dict(d);
	if ((params == NULL || *params == '\0') && proc->n > 1) {
		for (uint16_t i = 0; i < proc->n; i++) {
			struct rte_tel_data *c = rte_tel_data_alloc();

			if (c == NULL)
				return -ENOMEM;
			rte_tel_data_start_dict(c);
			add_ports(c, &proc->node[i]);
			rte_tel_data_add_dict_container(d, proc->node[i].sw.name, c, 0);
		}
		return 0;
	}
	const char *rest;
	struct sw_node *x = named(params, &rest, msg, sizeof(msg));

	if (x == NULL || *rest) {
		rte_tel_data_string(d, x ? "error: expected a switch's name, or nothing" : msg);
		return 0;
	}
	add_ports(d, x);
	return 0;
}

static int
tel_port_request(const char *params, size_t req_off, struct rte_tel_data *d)
{
	const char *rest;
	char msg[256], *end;
	struct sw_node *x = named(params, &rest, msg, sizeof(msg));
	long port = -1;

	/* an error as a message: a bare -EINVAL reads as null in the client */
	if (x == NULL) {
		rte_tel_data_string(d, msg);
		return 0;
	}
	port = *rest ? strtol(rest, &end, 10) : -1;
	if (*rest == '\0' || *end != '\0' || port < 0 || port >= x->sw.n_ports) {
		snprintf(msg, sizeof(msg), "error: expected a port index 0..%u of %s, got '%s'",
			 x->sw.n_ports - 1u, x->sw.name, rest);
		rte_tel_data_string(d, msg);
		return 0;
	}
	atomic_store((_Atomic int *)((char *)x + req_off), (int)port); /* its lane applies it */
	rte_tel_data_string(d, "ok");
	return 0;
}

static int
tel_fail(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	return tel_port_request(params, offsetof(struct sw_node, fail_request), d);
}

static int
tel_restore(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	return tel_port_request(params, offsetof(struct sw_node, restore_request), d);
}

static int
tel_withdraw(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned int a, b, cc, dd, len, up;
	const char *rest;
	char tail, msg[256];
	struct sw_node *x;

	(void)cmd;
	x = named(params, &rest, msg, sizeof(msg));
	if (x == NULL) {
		rte_tel_data_string(d, msg);
		return 0;
	}
	if (sscanf(rest, "%u.%u.%u.%u/%u,%u%c", &a, &b, &cc, &dd, &len, &up, &tail) != 6 ||
	    a > 255 || b > 255 || cc > 255 || dd > 255 || len > 32 || up >= x->sw.n_uplinks) {
		snprintf(msg, sizeof(msg),
			 "error: expected PREFIX/LEN,UPLINK like 10.0.1.0/24,1 (uplinks 0..%d of %s), "
			 "got '%s'", (int)x->sw.n_uplinks - 1, x->sw.name, rest);
		rte_tel_data_string(d, msg);
		return 0;
	}
	atomic_store(&x->withdraw_request,
		     (int64_t)(a << 24 | b << 16 | cc << 8 | dd) << 16 | len << 8 | up);
	rte_tel_data_string(d, "ok");
	return 0;
}

static int
tel_kill(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const char *rest;
	char msg[256];
	struct sw_node *x = named(params, &rest, msg, sizeof(msg));

	(void)cmd;
	if (x == NULL || *rest) {
		rte_tel_data_string(d, x ? "error: expected a switch's name" : msg);
		return 0;
	}
	atomic_store(&x->kill_request, true);
	rte_tel_data_string(d, "ok");
	return 0;
}

void
sw_tel_register(struct sw_proc *p)
{
	proc = p;
	rte_telemetry_register_cmd("/ethereal/switch/ports", tel_ports,
				   "Per-port counters. Parameter: the switch's name (all: none)");
	rte_telemetry_register_cmd("/ethereal/switch/fail", tel_fail,
				   "Fail a port's link now. Parameters: [SWITCH,]PORT");
	rte_telemetry_register_cmd("/ethereal/switch/restore", tel_restore,
				   "Bring a failed port's link back. Parameters: [SWITCH,]PORT");
	rte_telemetry_register_cmd("/ethereal/switch/withdraw", tel_withdraw,
				   "Traffic up to a prefix avoids an uplink. "
				   "Parameters: [SWITCH,]PREFIX/LEN,UPLINK");
	rte_telemetry_register_cmd("/ethereal/switch/kill", tel_kill,
				   "Kill a switch of the process: its ports go down as a dead "
				   "machine's would. Parameter: SWITCH");
}
