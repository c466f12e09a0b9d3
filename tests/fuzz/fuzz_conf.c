/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer target for the conf loader: any bytes as an INI file, read the
 * way the programs read it (the topology, typed keys of every kind, key
 * checks).  Beyond "no crash": an accepted topology validates, and every
 * failure leaves a message naming the file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/et_conf.h"
#include "topo/et_topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
must_name_file(const struct et_conf *c, const char *path)
{
	if (strstr(c->err, path) == NULL)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = {"rate-gbps", "latency-ns", "mtu", "size", NULL};
	static const char *const names[] = {"off", "on", NULL};
	char path[] = "/tmp/fuzz-conf-XXXXXX";
	int fd = mkstemp(path);
	struct et_conf c;
	struct et_topo t;
	char err[256];

	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
	if (et_conf_open(&c, path) == 0) {
		uint32_t u;
		double d;
		uint64_t b;
		int e;

		if (et_topo_load(&c, &t) == 0) {
			if (et_topo_validate(&t, err, sizeof(err)) != 0)
				abort(); /* loaded means buildable */
		} else {
			must_name_file(&c, path);
		}
		if (et_conf_check_keys(&c, "link", keys))
			must_name_file(&c, path);
		if (et_conf_u32(&c, "link", "latency-ns", 0, 1000, false, 5, &u))
			must_name_file(&c, path);
		if (et_conf_double(&c, "link", "rate-gbps", 0.5, 800, false, 1, &d))
			must_name_file(&c, path);
		if (et_conf_bytes(&c, "run", "size", 4, 1ull << 40, false, 4, &b))
			must_name_file(&c, path);
		if (et_conf_enum(&c, "switch", "pfc", names, false, 0, &e))
			must_name_file(&c, path);
		et_conf_close(&c);
	} else {
		must_name_file(&c, path);
	}
	unlink(path);
	return 0;
}
