/* SPDX-License-Identifier: BSD-3-Clause
 * Typed reads from INI files (rte_cfgfile) with errors that name the file,
 * the section, the key and what was expected.
 */
#ifndef ET_CONF_H
#define ET_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rte_cfgfile;

struct et_conf {
	struct rte_cfgfile *cfg;
	const char *file;
	char err[512];
};

/* Open a file; -1 with c->err set when it is missing or not INI. */
int et_conf_open(struct et_conf *c, const char *file);
void et_conf_close(struct et_conf *c);

bool et_conf_has_section(struct et_conf *c, const char *section);

/* -1 and c->err when the section is missing. */
int et_conf_need_section(struct et_conf *c, const char *section);

/* Every key of the section must be one of allowed (NULL-terminated). */
int et_conf_check_keys(struct et_conf *c, const char *section,
		       const char *const allowed[]);

/* Every section must be one of allowed (NULL-terminated); a name ending in
 * '#' stands for that prefix followed by a number ("port#": port0, port1..).
 * Returns the number of sections matching `counted` (one of allowed, or
 * NULL) or -1 with c->err set. */
int et_conf_check_sections(struct et_conf *c, const char *const allowed[],
			   const char *counted);

/* An unsigned integer in [min, max]; a missing key gives def, or an error
 * when required. */
int et_conf_u32(struct et_conf *c, const char *section, const char *key,
		uint32_t min, uint32_t max, bool required, uint32_t def,
		uint32_t *out);

/* One of the NULL-terminated names; *out is its index. */
int et_conf_enum(struct et_conf *c, const char *section, const char *key,
		 const char *const names[], bool required, int def, int *out);

/* A real number in [min, max]. */
int et_conf_double(struct et_conf *c, const char *section, const char *key,
		   double min, double max, bool required, double def, double *out);

/* The raw string, or def (which may be NULL) when missing. */
const char *et_conf_str(struct et_conf *c, const char *section, const char *key,
			const char *def);

/* A byte count with an optional K/M/G suffix (powers of 2). */
int et_conf_bytes(struct et_conf *c, const char *section, const char *key,
		  uint64_t min, uint64_t max, bool required, uint64_t def,
		  uint64_t *out);

/* Parse "12", "64K", "16M", "1G" (powers of 2); -1 if not such a number. */
int et_parse_bytes(const char *s, uint64_t *out);

/* Record an error about a key (for checks across keys). */
int et_conf_fail(struct et_conf *c, const char *section, const char *key,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif /* ET_CONF_H */
