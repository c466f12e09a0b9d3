/* SPDX-License-Identifier: BSD-3-Clause
 * Counters into rte_telemetry replies: every counter of a table
 * (base/et_counters.h) by name, so a new counter shows without a new line.
 */
#ifndef ET_TEL_H
#define ET_TEL_H

#include <rte_telemetry.h>

#include "base/et_counters.h"

/* d is a dict being built; keys are prefix + the counter's name. */
void et_tel_add_counters(struct rte_tel_data *d, const struct et_ctr_table *t,
			 const void *stats, const char *prefix);

#endif /* ET_TEL_H */
