/* SPDX-License-Identifier: BSD-3-Clause
 * What the files of sim/ share and nothing else sees.
 */
#ifndef ET_SIM_PRIV_H
#define ET_SIM_PRIV_H

#include "sim/et_fabric.h"

/* Set f->error (the first failure stays) and return -EIO. */
int et_fabric_fail(struct et_fabric *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Links a packet crosses on the fabric's longest path. */
uint32_t et_fabric_longest_path_hops(const struct et_topo *t);

#endif /* ET_SIM_PRIV_H */
