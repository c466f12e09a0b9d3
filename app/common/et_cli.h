/* SPDX-License-Identifier: BSD-3-Clause
 * What the programs' command lines share: one message format for a bad
 * value, PROGRAM: OPTION: expected WHAT, got 'X', and the parsers behind
 * it (numbers, byte counts with K/M/G, times with ns/us/ms/s, a choice
 * among names).  The et_cli_* functions print that message and return -1;
 * et_parse_* only parse.
 */
#ifndef ET_CLI_H
#define ET_CLI_H

#include <stdint.h>

/* The program name every message starts with ("ethereal-node"). */
void et_cli_program(const char *name);
const char *et_cli_name(void);

/* "PROGRAM: OPT: expected WHAT, got 'GOT'"; -1. */
int et_cli_bad(const char *opt, const char *what, const char *got);

/* "PROGRAM: " and the message; -1. */
int et_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A decimal number without sign; -1 if s is not one. */
int et_parse_u64(const char *s, uint64_t *out);

/* A time: a number with ns, us, ms or s after it, or bare in unit_ns
 * (1: nanoseconds, 1000000000: seconds); not negative.  -1 if not one. */
int et_parse_time_ns(const char *s, uint64_t unit_ns, uint64_t *out);

/* A decimal number in [min, max]: "expected a number" or "expected
 * MIN..MAX" otherwise. */
int et_cli_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* A byte count (4096, 64K, 16M, 1G: et_parse_bytes) in [min, max]. */
int et_cli_bytes(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* A time above 0 (et_parse_time_ns); what: the message's WHAT. */
int et_cli_time_ns(const char *opt, const char *s, uint64_t unit_ns, const char *what,
		   uint64_t *out);

/* s's index among names (NULL-terminated): "expected one of A B C". */
int et_cli_choice(const char *opt, const char *const *names, const char *s);

#endif /* ET_CLI_H */
