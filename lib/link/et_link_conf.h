/* SPDX-License-Identifier: BSD-3-Clause
 * Link faults by name, from a conf section or a KEY=VALUE,... string: one
 * table for every program that runs links (ethereal-fabric's [link] and
 * --fault, ethereal-switch's [portN]).
 */
#ifndef ET_LINK_CONF_H
#define ET_LINK_CONF_H

#include <stddef.h>

#include "base/et_conf.h"
#include "link/et_egress.h"

/* The key names, for a section's list of allowed keys. */
#define ET_LINK_FAULT_KEYS                                                                \
	"loss-ppm", "ge-enter-ppm", "ge-exit-ppm", "ge-loss-ppm", "corrupt-ppm", "dup-ppm", \
		"jitter-ns", "flap-period-us", "flap-down-us"

/* Read the fault keys of section sec into lm (missing keys: no fault);
 * -1 with c->err set. */
int et_link_faults_load(struct et_conf *c, const char *sec, struct et_link_model *lm);

/* "loss-ppm=1000,dup-ppm=50": -1 with what was wrong in err. */
int et_link_faults_parse(const char *spec, struct et_link_model *lm, char *err, size_t n);

#endif /* ET_LINK_CONF_H */
