/* SPDX-License-Identifier: BSD-3-Clause
 * The process the provider runs in: its parameters (FI_ETHEREAL_*), the
 * fabric's conf, and the process runtime (host/et_process: the slot rule,
 * EAL, the port, the NIC, the keeper) it configures with them; the
 * provider's part of every progress (the CM agent's events, each
 * endpoint's connections and flows).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "et_fi.h"
#include "et_fi_cm.h"
#include "et_cli.h"
#include "et_fabric_cli.h"

struct et_fi_proc et_fi_proc = {
	.next_port = 0,
};

static char *
param_str(const char *name)
{
	char *v = NULL;

	if (fi_param_get_str(&et_fi_prov, name, &v) != FI_SUCCESS || v == NULL || !*v)
		return NULL;
	return v;
}

static int
conf_load(struct et_fi_proc *p)
{
	const struct et_fi_env *e = &p->env;
	struct et_process_conf pc = {
		.program = "ethereal-fi", .prefix = "etfi", .eal = e->eal, .dev = e->dev, .mac = e->mac,
		.rundir = e->rundir, .fault = e->fault, .slot = e->slot, .yield = e->yield,
	};

	if (et_fabric_conf_process(e->conf, e->lb, &pc)) {
		ET_FI_WARN(FI_LOG_CORE, "FI_ETHEREAL_CONF=%s, FI_ETHEREAL_LB=%s: refused (see the "
			   "message above)\n", e->conf ? e->conf : "(none)", e->lb ? e->lb : "(none)");
		return -FI_EINVAL;
	}
	return et_process_configure(&pc) ? -FI_ENOMEM : 0;
}

int
et_fi_env_load(void)
{
	struct et_fi_proc *p = &et_fi_proc;
	int v;

	if (p->env_read)
		return p->conf_loaded ? 0 : -FI_EINVAL;
	p->env_read = true;
	et_cli_program("ethereal-fi");
	p->env.eal = param_str("eal");
	p->env.dev = param_str("dev");
	p->env.conf = param_str("conf");
	p->env.lb = param_str("lb");
	p->env.rundir = param_str("rundir");
	p->env.mac = param_str("mac");
	p->env.fault = param_str("fault");
	p->env.slot = -1;
	if (fi_param_get_int(&et_fi_prov, "slot", &v) == FI_SUCCESS)
		p->env.slot = v;
	if (fi_param_get_bool(&et_fi_prov, "yield", &v) == FI_SUCCESS)
		p->env.yield = v;
	if (fi_param_get_int(&et_fi_prov, "stats", &v) == FI_SUCCESS)
		p->env.stats = v;
	{
		char *rdv = param_str("rdv");

		if (rdv && strcmp(rdv, "read") && strcmp(rdv, "write")) {
			ET_FI_WARN(FI_LOG_CORE, "FI_ETHEREAL_RDV=%s: expected read or write\n", rdv);
			return -FI_EINVAL;
		}
		p->env.rdv_read = rdv && strcmp(rdv, "read") == 0;
	}
	p->env.eager = ET_FI_EAGER_DEFAULT;
	if (fi_param_get_int(&et_fi_prov, "eager", &v) == FI_SUCCESS) {
		if (v < 0 || v > 65536) {
			ET_FI_WARN(FI_LOG_CORE, "FI_ETHEREAL_EAGER=%d: expected 0..65536\n", v);
			return -FI_EINVAL;
		}
		p->env.eager = (size_t)v;
	}
	if (conf_load(p))
		return -FI_EINVAL;
	p->conf_loaded = true;
	return 0;
}

int
et_fi_slot_choose(uint32_t want_ip)
{
	char why[256], ip[INET_ADDRSTRLEN];

	if (et_fi_env_load())
		return -FI_EINVAL;
	if (et_process_slot_choose(want_ip, why, sizeof(why))) {
		/* a source address that is not ours is no error of the slot rule */
		if (want_ip == 0)
			ET_FI_WARN(FI_LOG_CORE, "%s\n", why);
		return -FI_ENODATA;
	}
	ET_FI_INFO(FI_LOG_CORE, "slot %d: %s\n", et_process.slot,
		   inet_ntop(AF_INET, &(struct in_addr){htonl(et_process.ip)}, ip, sizeof(ip)));
	return 0;
}

/* The provider's part of progress: the CM agent's events, then each
 * endpoint's completions, connections and flows. */
static uint32_t
progress_hook(void *ctx, uint64_t now)
{
	(void)ctx;
	et_fi_cm_poll(now);
	for (struct et_fi_ep *ep = et_fi_proc.eps; ep; ep = ep->next) {
		et_fi_conn_poll(ep);
		et_fi_flow_poll(ep, now);
		et_fi_keys_expire(ep, now);
	}
	return 0;
}

int
et_fi_port_open(void)
{
	if (et_fi_proc.port_open)
		return 0;
	if (et_fi_slot_choose(0))
		return -FI_ENODEV;
	if (et_process_open()) {
		ET_FI_WARN(FI_LOG_DOMAIN, "%s\n", et_process.why);
		return -FI_ENODEV;
	}
	if (et_process_hook(progress_hook, NULL)) {
		et_process_close();
		return -FI_ENOSPC;
	}
	et_fi_proc.port_open = true;
	return 0;
}

void
et_fi_port_close(void)
{
	if (!et_fi_proc.port_open)
		return;
	et_process_unhook(progress_hook, NULL);
	et_fi_cm_close();
	et_process_close();
	et_fi_proc.port_open = false;
}

void
et_fi_report(void)
{
	struct et_fi_proc *p = &et_fi_proc;
	char more[160];

	if (!p->env.stats || !et_process.nic_up)
		return;
	snprintf(more, sizeof(more), ", reconnects %llu, resent %llu, dup_msgs %llu, lost_peers %llu",
		 (unsigned long long)p->reconnects, (unsigned long long)p->resent,
		 (unsigned long long)p->dup_msgs, (unsigned long long)p->lost_peers);
	et_process_print_summary("ethereal-fi", more);
	if (p->env.stats > 1)
		et_process_print_counters("ethereal-fi");
}
