/* SPDX-License-Identifier: BSD-3-Clause */
#include "base/et_counters.h"
#include "et_json.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "et_cli.h"

#define ET_JSON_FLAGS (JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))

json_t *
et_json_fixed(double v, int decimals)
{
	char buf[512];

	if (!isfinite(v))
		return json_null();
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	return json_real(strtod(buf, NULL));
}

json_t *
et_json_verdict(bool checked, bool ok)
{
	return checked ? json_boolean(ok) : json_null();
}

void
et_json_set_u64(json_t *obj, const char *key, uint64_t v)
{
	json_object_set_new(obj, key, json_integer((json_int_t)v));
}

int
et_json_print(FILE *f, json_t *obj, int indent)
{
	int r = obj == NULL || json_dumpf(obj, f, ET_JSON_FLAGS | JSON_INDENT(indent)) ||
		fputc('\n', f) == EOF ? -1 : 0;

	json_decref(obj);
	return r;
}

int
et_json_write(const char *path, json_t *obj)
{
	FILE *f = fopen(path, "w");
	int r;

	if (f == NULL) {
		json_decref(obj);
		return et_cli_error("cannot write %s: %s", path, strerror(errno));
	}
	r = et_json_print(f, obj, 0);
	if (fclose(f) != 0)
		r = -1;
	if (r)
		et_cli_error("cannot write %s", path);
	return r;
}

void
et_json_set_counters(json_t *obj, const struct et_ctr_table *t, const void *stats)
{
	for (unsigned int i = 0; i < t->n; i++) {
		const struct et_ctr_desc *d = &t->d[i];
		const uint64_t *v = et_ctr_ptr(stats, d);
		json_t *a;

		if (d->n == 0) {
			et_json_set_u64(obj, d->name, *v);
			continue;
		}
		a = json_array();
		for (uint32_t k = 0; k < d->n; k++)
			json_array_append_new(a, json_integer((json_int_t)v[k]));
		json_object_set_new(obj, d->name, a);
	}
}
