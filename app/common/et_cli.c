/* SPDX-License-Identifier: BSD-3-Clause */
#include "et_cli.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_log.h>

#include "base/et_conf.h"

static const char *program = "ethereal";
static int logtype = RTE_LOGTYPE_USER1;

void
et_cli_program(const char *name)
{
	char type[64];
	char *dash;
	int t;

	program = name;
	/* ethereal-node logs as ethereal.node, DPDK's dotted style, so
	 * --log-level=ethereal.*:LEVEL reaches every program */
	snprintf(type, sizeof(type), "%s", name);
	dash = strchr(type, '-');
	if (dash != NULL)
		*dash = '.';
	t = rte_log_register_type_and_pick_level(type, RTE_LOG_INFO);
	if (t >= 0)
		logtype = t;
	/* messages apart from results: stdout carries only tables and
	 * paths, whatever --log-level says (and nothing goes to syslog) */
	rte_openlog_stream(stderr);
}

void
et_vlog(uint32_t level, const char *fmt, va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	rte_log(level, (uint32_t)logtype, "%s: %s\n", program, msg);
}

void
et_log(uint32_t level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	et_vlog(level, fmt, ap);
	va_end(ap);
}

const char *
et_cli_name(void)
{
	return program;
}

int
et_cli_bad(const char *opt, const char *what, const char *got)
{
	et_log(RTE_LOG_ERR, "%s: expected %s, got '%s'", opt, what, got);
	return -1;
}

int
et_cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	et_vlog(RTE_LOG_ERR, fmt, ap);
	va_end(ap);
	return -1;
}

int
et_parse_u64(const char *s, uint64_t *out)
{
	unsigned long long x;
	char *end;

	if (s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (*end || errno)
		return -1;
	*out = x;
	return 0;
}

int
et_parse_time_ns(const char *s, uint64_t unit_ns, uint64_t *out)
{
	static const struct {
		const char *suffix;
		double ns;
	} units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
	char *end;
	double v = strtod(s, &end), mul = -1;

	if (end == s || v < 0 || !isfinite(v))
		return -1;
	if (*end == '\0')
		mul = (double)unit_ns;
	for (size_t i = 0; mul < 0 && i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(end, units[i].suffix) == 0)
			mul = units[i].ns;
	if (mul < 0 || v * mul >= 18446744073709551616.0)
		return -1;
	*out = (uint64_t)(v * mul);
	return 0;
}

int
et_cli_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char range[48];

	if (et_parse_u64(s, out))
		return et_cli_bad(opt, "a number", s);
	if (*out >= min && *out <= max)
		return 0;
	snprintf(range, sizeof(range), "%" PRIu64 "..%" PRIu64, min, max);
	return et_cli_bad(opt, range, s);
}

/* 1073741824 as 1G, 65536 as 64K: as et_parse_bytes reads them */
static void
bytes_str(uint64_t x, char *out, size_t cap)
{
	static const char suffix[] = "GMK";
	int shift = 30;

	for (int i = 0; i < 3; i++, shift -= 10)
		if (x && x % (1ull << shift) == 0) {
			snprintf(out, cap, "%" PRIu64 "%c", x >> shift, suffix[i]);
			return;
		}
	snprintf(out, cap, "%" PRIu64, x);
}

int
et_cli_bytes(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char what[96], lo[24], hi[24];

	if (et_parse_bytes(s, out) == 0 && *out >= min && *out <= max)
		return 0;
	bytes_str(min, lo, sizeof(lo));
	bytes_str(max, hi, sizeof(hi));
	if (max == UINT64_MAX)
		snprintf(what, sizeof(what), "a byte count (%s or more) like 4096, 64K or 16M", lo);
	else
		snprintf(what, sizeof(what), "a byte count (%s..%s) like 4096, 64K or 16M", lo, hi);
	return et_cli_bad(opt, what, s);
}

int
et_cli_time_ns(const char *opt, const char *s, uint64_t unit_ns, const char *what, uint64_t *out)
{
	if (et_parse_time_ns(s, unit_ns, out) || *out == 0)
		return et_cli_bad(opt, what, s);
	return 0;
}

int
et_cli_choice(const char *opt, const char *const *names, const char *s)
{
	char what[256];
	size_t n;
	int k;

	for (k = 0; names[k]; k++)
		if (strcmp(names[k], s) == 0)
			return k;
	n = (size_t)snprintf(what, sizeof(what), "one of");
	for (k = 0; names[k] && n < sizeof(what); k++)
		n += (size_t)snprintf(what + n, sizeof(what) - n, " %s", names[k]);
	return et_cli_bad(opt, what, s);
}

int
et_cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return 1;
	return 0;
}

int
et_cli_out_dir(const char *opt, const char *dir)
{
	char path[4096];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(path))
		return et_cli_bad(opt, "a folder", dir);
	memcpy(path, dir, n + 1);
	/* each parent, then the folder itself */
	for (char *s = path + 1;; s++) {
		char c = *s;

		if (c != '/' && c != '\0')
			continue;
		*s = '\0';
		if (mkdir(path, 0777) && errno != EEXIST)
			return et_cli_error("%s: cannot create %s: %s", opt, path, strerror(errno));
		*s = c;
		if (c == '\0')
			break;
	}
	if (access(dir, W_OK))
		return et_cli_error("%s: cannot write in %s: %s", opt, dir, strerror(errno));
	return 0;
}

int
et_cli_out_file(const char *opt, const char *path)
{
	FILE *f = fopen(path, "a");

	if (f == NULL)
		return et_cli_error("%s: cannot write %s: %s", opt, path, strerror(errno));
	fclose(f);
	return 0;
}

uint64_t
et_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int
et_cli_conf_close(struct et_conf *c, int rc)
{
	if (rc)
		et_cli_error("%s", c->err);
	et_conf_close(c);
	return rc;
}
