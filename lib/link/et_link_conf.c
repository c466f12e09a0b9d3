/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "link/et_link_conf.h"

static const struct fault_key {
	const char *name;
	size_t off;      /* in struct et_link_model */
	bool wide;       /* uint64_t, else uint32_t */
	uint64_t scale;  /* the key's unit in the field's: us -> ns */
	uint64_t max;
} fault_keys[] = {
	{"loss-ppm", offsetof(struct et_link_model, loss_ppm), false, 1, 1000000},
	{"ge-enter-ppm", offsetof(struct et_link_model, ge_enter_ppm), false, 1, 1000000},
	{"ge-exit-ppm", offsetof(struct et_link_model, ge_exit_ppm), false, 1, 1000000},
	{"ge-loss-ppm", offsetof(struct et_link_model, ge_loss_ppm), false, 1, 1000000},
	{"corrupt-ppm", offsetof(struct et_link_model, corrupt_ppm), false, 1, 1000000},
	{"dup-ppm", offsetof(struct et_link_model, dup_ppm), false, 1, 1000000},
	{"jitter-ns", offsetof(struct et_link_model, jitter_ns), true, 1, 1000000000},
	{"flap-period-us", offsetof(struct et_link_model, flap_period_ns), true, 1000, 100000000},
	{"flap-down-us", offsetof(struct et_link_model, flap_down_ns), true, 1000, 100000000},
};

static void
set_fault(struct et_link_model *lm, const struct fault_key *k, uint64_t v)
{
	if (k->wide)
		*(uint64_t *)((char *)lm + k->off) = v * k->scale;
	else
		*(uint32_t *)((char *)lm + k->off) = (uint32_t)v;
}

int
et_link_faults_load(struct et_conf *c, const char *sec, struct et_link_model *lm)
{
	for (size_t i = 0; i < RTE_DIM(fault_keys); i++) {
		uint32_t v;

		if (et_conf_u32(c, sec, fault_keys[i].name, 0, (uint32_t)fault_keys[i].max, false,
				0, &v))
			return -1;
		set_fault(lm, &fault_keys[i], v);
	}
	return 0;
}

int
et_link_faults_parse(const char *spec, struct et_link_model *lm, char *err, size_t n)
{
	char buf[512], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '='), *end;
		unsigned long long v;
		size_t i;

		if (eq)
			*eq++ = 0;
		for (i = 0; i < RTE_DIM(fault_keys) && strcmp(tok, fault_keys[i].name); i++)
			;
		if (!eq || i == RTE_DIM(fault_keys)) {
			snprintf(err, n, "expected KEY=VALUE with KEY one of loss-ppm, ge-enter-ppm, "
				 "ge-exit-ppm, ge-loss-ppm, corrupt-ppm, dup-ppm, jitter-ns, "
				 "flap-period-us, flap-down-us, got '%s'", tok);
			return -1;
		}
		v = strtoull(eq, &end, 10);
		if (*end || end == eq || *eq == '-' || v > fault_keys[i].max) {
			snprintf(err, n, "expected a whole number in range for %s (0..%llu), got '%s'",
				 fault_keys[i].name, (unsigned long long)fault_keys[i].max, eq);
			return -1;
		}
		set_fault(lm, &fault_keys[i], v);
	}
	return 0;
}
