/* SPDX-License-Identifier: BSD-3-Clause */
#include "et_switch_conf.h"

int
et_sw_params_load(struct et_conf *c, const char *sec, struct et_sw_params *p)
{
	static const char *const onoff[] = {"off", "on", NULL};
	uint32_t ms;
	int pfc, acks_first;

	if (et_conf_bytes(c, sec, "buffer", 4096, 1ull << 34, false, p->buffer_bytes,
			  &p->buffer_bytes) ||
	    et_conf_double(c, sec, "dt-alpha", 1.0 / 64, 64, false, p->dt_alpha, &p->dt_alpha) ||
	    et_conf_bytes(c, sec, "ecn-k", 0, 1ull << 34, false, p->ecn_k_bytes, &p->ecn_k_bytes) ||
	    et_conf_enum(c, sec, "pfc", onoff, false, p->pfc, &pfc) ||
	    et_conf_double(c, sec, "pfc-alpha", 1.0 / 64, 64, false, p->pfc_alpha, &p->pfc_alpha) ||
	    et_conf_enum(c, sec, "acks-first", onoff, false, p->acks_first, &acks_first) ||
	    et_conf_u32(c, sec, "detect-delay-ms", 0, 3600000, false,
			(uint32_t)(p->detect_delay_ns / 1000000), &ms) ||
	    et_conf_u32(c, sec, "max-frame", 64, 65535, false, p->max_frame, &p->max_frame))
		return -1;
	p->pfc = pfc;
	p->acks_first = acks_first;
	p->detect_delay_ns = (uint64_t)ms * 1000000;
	return 0;
}
