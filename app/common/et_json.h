/* SPDX-License-Identifier: BSD-3-Clause
 * The programs' JSON results, through jansson: strings are escaped, keys
 * keep the order they were added in.
 *
 * A figure the programs round (seconds to 6 places, Gbit/s to 3) is made
 * with et_json_fixed(): the double nearest to the rounded decimal, written
 * with 15 significant digits, which gives that decimal back (any decimal
 * of up to 15 digits survives the trip through a double).  So 0.123 is
 * written 0.123, not 0.12299999999999999, and 400.000 is 400.0.
 */
#ifndef ET_JSON_H
#define ET_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

/* v rounded to decimals places as printf rounds it; null when v is not
 * finite (JSON has no NaN or infinity). */
json_t *et_json_fixed(double v, int decimals);

/* null when nothing was checked, else true or false. */
json_t *et_json_verdict(bool checked, bool ok);

/* obj[key] = v, a JSON integer (jansson's are signed 64-bit: counters
 * beyond 2^63 do not occur here). */
void et_json_set_u64(json_t *obj, const char *key, uint64_t v);

/* Every counter of a table (base/et_counters.h) as obj[name]: a number, or
 * an array for an array counter. */
struct et_ctr_table;
void et_json_set_counters(json_t *obj, const struct et_ctr_table *t, const void *stats);

/* Write obj and a newline to path, on one line ({"key": value, ...}: one
 * object per line for tools that read lines); obj is released.  -1 after
 * a message when the file cannot be written. */
int et_json_write(const char *path, json_t *obj);

/* Write obj and a newline to f, indented by indent spaces a level; obj is
 * released. */
int et_json_print(FILE *f, json_t *obj, int indent);

#endif /* ET_JSON_H */
