/* SPDX-License-Identifier: BSD-3-Clause
 * Switch parameters from a conf section: the keys ethereal-switch and
 * ethereal-fabric share (ET_SW_CONF_KEYS).  The caller checks which keys its
 * section allows.
 */
#ifndef ET_SWITCH_CONF_H
#define ET_SWITCH_CONF_H

#include "base/et_conf.h"
#include "et_switch.h"

#define ET_SW_CONF_KEYS "buffer", "dt-alpha", "ecn-k", "pfc", "pfc-alpha", "acks-first", \
			"detect-delay-ms", "max-frame"

/* Read into p, whose values are the defaults; -1 with c->err set. */
int et_sw_params_load(struct et_conf *c, const char *sec, struct et_sw_params *p);

#endif /* ET_SWITCH_CONF_H */
