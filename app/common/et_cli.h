/* SPDX-License-Identifier: BSD-3-Clause
 * What the programs' command lines share: one message format for a bad
 * value, PROGRAM: OPTION: expected WHAT, got 'X', and the parsers behind
 * it (numbers, byte counts with K/M/G, times with ns/us/ms/s, a choice
 * among names).  The et_cli_* functions print that message and return -1;
 * et_parse_* only parse.
 *
 * Messages (errors, warnings, progress) go through rte_log under the
 * program's own type, ethereal.NAME (ethereal.node, ...), to stderr, so
 * DPDK's --log-level quiets them like any library's: --log-level=error
 * keeps errors only, --log-level=ethereal.*:warning ours only.  Results
 * (tables, paths) go to stdout with printf and are never quieted.
 */
#ifndef ET_CLI_H
#define ET_CLI_H

#include <stdarg.h>
#include <stdint.h>

#include <rte_log.h>

/* Exit codes, the same in every program: 0 done, 1 the run failed (or the
 * machine refused: DPDK, memory, a port), 2 a bad command line or conf. */
#define ET_EXIT_OK 0
#define ET_EXIT_FAIL 1
#define ET_EXIT_USAGE 2

/* The program name every message starts with ("ethereal-node"); registers
 * its log type.  Called first in main, before the EAL parses --log-level. */
void et_cli_program(const char *name);
const char *et_cli_name(void);

/* "PROGRAM: " and the message at level (RTE_LOG_ERR ... RTE_LOG_DEBUG). */
void et_log(uint32_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void et_vlog(uint32_t level, const char *fmt, va_list ap);
#define et_warn(...) et_log(RTE_LOG_WARNING, __VA_ARGS__)
#define et_info(...) et_log(RTE_LOG_INFO, __VA_ARGS__)

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

/* Milliseconds of CLOCK_MONOTONIC: the deadlines of the programs' waits on
 * sockets (the data path's clock is the TSC, host/et_worker.h). */
uint64_t et_mono_ms(void);

/* Whether --help or -h is anywhere on the line, before or after "--": the
 * program prints its own usage then, not DPDK's. */
int et_cli_wants_help(int argc, char **argv);

/* The line printed under a program's usage about the EAL arguments. */
#define ET_CLI_EAL_HELP \
	"EAL args (before --) are DPDK's: -l CORES, --vdev DEV, -a PCI, --no-huge, -m MB,\n" \
	"--log-level LEVEL, ...; see https://doc.dpdk.org/guides-22.11/linux_gsg/linux_eal_parameters.html\n"

struct et_conf;
/* The end of reading a conf: its error said if rc (file, section, key and
 * why), the file closed; rc. */
int et_cli_conf_close(struct et_conf *c, int rc);

/* An output folder: made with its parents if missing; -1 after
 * "PROGRAM: OPT: cannot create DIR: why". */
int et_cli_out_dir(const char *opt, const char *dir);

/* An output file: checked before the run that it can be written (its
 * folder exists and is writable), so a long run does not end in "cannot
 * write"; -1 after "PROGRAM: OPT: cannot write PATH: why". */
int et_cli_out_file(const char *opt, const char *path);

#endif /* ET_CLI_H */
