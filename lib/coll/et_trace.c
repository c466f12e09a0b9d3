/* SPDX-License-Identifier: BSD-3-Clause */
/* The trace parser: line by line, every error FILE:LINE and what was
 * expected. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/et_conf.h"
#include "coll/et_trace.h"

#define LINE_MAX_CHARS 4096
#define MAX_FIELDS 8

struct parser {
	struct et_trace *t;
	const char *file;
	uint32_t line;
	char *err;
	size_t errlen;
};

static int __attribute__((format(printf, 2, 3)))
bad(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(p->err, p->errlen, "%s:%u: ", p->file, p->line);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < p->errlen)
		vsnprintf(p->err + n, p->errlen - n, fmt, ap);
	va_end(ap);
	return -1;
}

static int
find_node(const struct et_trace *t, const char *name)
{
	for (uint32_t i = 0; i < t->n_nodes; i++)
		if (strcmp(t->nodes[i].name, name) == 0)
			return (int)i;
	return -1;
}

static int
find_group(const struct et_trace *t, const char *name)
{
	for (uint32_t i = 0; i < t->n_groups; i++)
		if (strcmp(t->groups[i].name, name) == 0)
			return (int)i;
	return -1;
}

static bool
parse_u32(const char *s, uint32_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return false;
	v = strtoull(s, &end, 10);
	if (*end || v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* "120us", "1.5ms", "800ns" */
static bool
parse_duration(const char *s, uint64_t *ns)
{
	static const struct { const char *unit; double mul; } units[] = {
		{"ns", 1}, {"us", 1e3}, {"ms", 1e6}};
	char *end;
	double v;

	if ((*s < '0' || *s > '9') && *s != '.')
		return false;
	v = strtod(s, &end);
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(end, units[i].unit) == 0 && v * units[i].mul < 1e15) {
			*ns = (uint64_t)(v * units[i].mul + 0.5);
			return true;
		}
	return false;
}

static bool
good_name(const char *s)
{
	if (strlen(s) >= ET_TRACE_NAME_MAX)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' || *s == '.'))
			return false;
	return true;
}

static int
new_name(struct parser *p, const char *what, const char *name)
{
	if (!good_name(name))
		return bad(p, "%s name '%s': letters, digits, '_', '-', '.', at most %d", what, name,
			   ET_TRACE_NAME_MAX - 1);
	if (find_node(p->t, name) >= 0 || find_group(p->t, name) >= 0)
		return bad(p, "'%s' is defined twice", name);
	return 0;
}

static int
do_ranks(struct parser *p, char **f, int n)
{
	if (n != 2 || !parse_u32(f[1], &p->t->ranks) || p->t->ranks == 0)
		return bad(p, "expected 'ranks N' (N > 0)");
	return 0;
}

static int
do_group(struct parser *p, char **f, int n)
{
	struct et_trace *t = p->t;
	struct et_trace_group g = {0}, *grown;

	if (n != 4 || !parse_u32(f[2], &g.size) || !parse_u32(f[3], &g.stride) || g.size == 0 ||
	    g.stride == 0)
		return bad(p, "expected 'group NAME SIZE STRIDE' (numbers > 0)");
	if (new_name(p, "group", f[1]))
		return -1;
	if ((uint64_t)g.size * g.stride > t->ranks || t->ranks % (g.size * g.stride))
		return bad(p, "group %s: SIZE x STRIDE = %u x %u must divide the %u ranks", f[1],
			   g.size, g.stride, t->ranks);
	snprintf(g.name, sizeof(g.name), "%s", f[1]);
	grown = realloc(t->groups, (t->n_groups + 1) * sizeof(*grown));
	if (grown == NULL)
		return bad(p, "out of memory");
	t->groups = grown;
	t->groups[t->n_groups++] = g;
	return 0;
}

/* "after A,B,C" at f[0..1]: the dependencies of node x */
static int
do_deps(struct parser *p, struct et_trace_node *x, char **f, int n)
{
	char *save = NULL, *name;
	uint32_t cap = 0;

	if (n == 0)
		return 0;
	if (n != 2 || strcmp(f[0], "after") != 0)
		return bad(p, "expected 'after NODE[,NODE..]' at the end, got '%s'", f[0]);
	for (const char *c = f[1]; *c; c++)
		cap += *c == ',';
	x->deps = calloc(cap + 1, sizeof(*x->deps));
	if (x->deps == NULL)
		return bad(p, "out of memory");
	for (name = strtok_r(f[1], ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		int d = find_node(p->t, name);

		if (d < 0)
			return bad(p, "%s: depends on '%s', which is no node defined above", x->name,
				   name);
		for (uint32_t i = 0; i < x->n_deps; i++)
			if (x->deps[i] == (uint32_t)d)
				return bad(p, "%s: '%s' named twice after 'after'", x->name, name);
		x->deps[x->n_deps++] = (uint32_t)d;
	}
	if (x->n_deps == 0)
		return bad(p, "%s: 'after' names no node", x->name);
	return 0;
}

static int
add_node(struct parser *p, struct et_trace_node *x, char **f, int n)
{
	struct et_trace *t = p->t;
	struct et_trace_node *grown;

	x->line = p->line;
	if (do_deps(p, x, f, n)) {
		free(x->deps);
		return -1;
	}
	grown = realloc(t->nodes, (t->n_nodes + 1) * sizeof(*grown));
	if (grown == NULL) {
		free(x->deps);
		return bad(p, "out of memory");
	}
	t->nodes = grown;
	t->nodes[t->n_nodes++] = *x;
	return 0;
}

static int
do_compute(struct parser *p, char **f, int n)
{
	struct et_trace_node x = {.type = ET_TRACE_COMPUTE};

	if (n < 3)
		return bad(p, "expected 'compute NAME DURATION [after NODE,..]'");
	if (new_name(p, "node", f[1]))
		return -1;
	snprintf(x.name, sizeof(x.name), "%s", f[1]);
	if (!parse_duration(f[2], &x.duration_ns))
		return bad(p, "%s: duration '%s': a number with ns, us or ms, like 120us", f[1], f[2]);
	return add_node(p, &x, f + 3, n - 3);
}

static int
do_comm(struct parser *p, char **f, int n)
{
	struct et_trace_node x = {.type = ET_TRACE_COMM};
	int gi;

	if (n < 5)
		return bad(p, "expected 'comm NAME KIND SIZE GROUP [after NODE,..]'");
	if (new_name(p, "node", f[1]))
		return -1;
	snprintf(x.name, sizeof(x.name), "%s", f[1]);
	if (et_coll_parse_kind(f[2], &x.kind))
		return bad(p, "%s: collective '%s': allreduce, allgather, reducescatter or alltoall",
			   f[1], f[2]);
	if (et_parse_bytes(f[3], &x.size))
		return bad(p, "%s: size '%s': bytes per rank like 6291456 or 6M", f[1], f[3]);
	gi = find_group(p->t, f[4]);
	if (gi < 0)
		return bad(p, "%s: no group '%s' (define it above with 'group NAME SIZE STRIDE')",
			   f[1], f[4]);
	x.group = (uint32_t)gi;
	return add_node(p, &x, f + 5, n - 5);
}

static int
parse_line(struct parser *p, char *s)
{
	char *f[MAX_FIELDS + 1], *save = NULL;
	int n = 0;

	for (char *w = strtok_r(s, " \t\r", &save); w; w = strtok_r(NULL, " \t\r", &save)) {
		if (n == MAX_FIELDS)
			return bad(p, "too many fields (dependencies go in one list: after A,B,C)");
		f[n++] = w;
	}
	if (n == 0)
		return 0;
	if (strcmp(f[0], "ranks") == 0) {
		if (p->t->ranks)
			return bad(p, "'ranks' given twice");
		return do_ranks(p, f, n);
	}
	if (p->t->ranks == 0)
		return bad(p, "'ranks N' must come first, got '%s'", f[0]);
	if (strcmp(f[0], "group") == 0)
		return do_group(p, f, n);
	if (strcmp(f[0], "compute") == 0)
		return do_compute(p, f, n);
	if (strcmp(f[0], "comm") == 0)
		return do_comm(p, f, n);
	return bad(p, "unknown line '%s': ranks, group, compute or comm", f[0]);
}

/* Each node's successors, in the order of the nodes that name it. */
static int
link_succ(struct et_trace *t)
{
	for (uint32_t k = 0; k < t->n_nodes; k++)
		for (uint32_t i = 0; i < t->nodes[k].n_deps; i++)
			t->nodes[t->nodes[k].deps[i]].n_succ++;
	for (uint32_t k = 0; k < t->n_nodes; k++) {
		t->nodes[k].succ = malloc((t->nodes[k].n_succ + 1) * sizeof(*t->nodes[k].succ));
		if (t->nodes[k].succ == NULL)
			return -1;
		t->nodes[k].n_succ = 0;
	}
	for (uint32_t k = 0; k < t->n_nodes; k++)
		for (uint32_t i = 0; i < t->nodes[k].n_deps; i++) {
			struct et_trace_node *d = &t->nodes[t->nodes[k].deps[i]];

			d->succ[d->n_succ++] = k;
		}
	return 0;
}

int
et_trace_parse(struct et_trace *t, const char *text, const char *file, char *err, size_t errlen)
{
	struct parser p = {t, file, 0, err, errlen};
	char line[LINE_MAX_CHARS];

	memset(t, 0, sizeof(*t));
	err[0] = 0;
	while (*text) {
		size_t len = strcspn(text, "\n");
		char *hash;

		p.line++;
		if (len >= sizeof(line)) {
			bad(&p, "line longer than %d characters", LINE_MAX_CHARS - 1);
			goto fail;
		}
		memcpy(line, text, len);
		line[len] = 0;
		text += len + (text[len] == '\n');
		if ((hash = strchr(line, '#')) != NULL)
			*hash = 0;
		if (parse_line(&p, line))
			goto fail;
	}
	if (t->n_nodes == 0) {
		snprintf(err, errlen, "%s: no nodes (compute or comm lines)", file);
		goto fail;
	}
	if (link_succ(t)) {
		snprintf(err, errlen, "%s: out of memory", file);
		goto fail;
	}
	return 0;
fail:
	et_trace_free(t);
	return -1;
}

void
et_trace_free(struct et_trace *t)
{
	for (uint32_t i = 0; t->nodes && i < t->n_nodes; i++) {
		free(t->nodes[i].deps);
		free(t->nodes[i].succ);
	}
	free(t->nodes);
	free(t->groups);
	memset(t, 0, sizeof(*t));
}
