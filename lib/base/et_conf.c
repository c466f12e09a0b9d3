/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cfgfile.h>

#include "base/et_conf.h"

int
et_conf_fail(struct et_conf *c, const char *section, const char *key,
	     const char *fmt, ...)
{
	int n;
	va_list ap;

	if (key)
		n = snprintf(c->err, sizeof(c->err), "%s: [%s] %s: ", c->file,
			     section, key);
	else
		n = snprintf(c->err, sizeof(c->err), "%s: [%s]: ", c->file, section);
	if (n < 0 || (size_t)n >= sizeof(c->err))
		return -1;
	va_start(ap, fmt);
	vsnprintf(c->err + n, sizeof(c->err) - n, fmt, ap);
	va_end(ap);
	return -1;
}

/* "a, b, c" from a NULL-terminated list of names. */
static void
join_names(const char *const names[], char *out, size_t size)
{
	size_t len = 0;
	int i;

	out[0] = '\0';
	for (i = 0; names[i] && len < size; i++)
		len += snprintf(out + len, size - len, "%s%s", i ? ", " : "",
				names[i]);
}

/* Where a section or a key was first seen, for the duplicate check. */
struct seen {
	char name[CFG_NAME_LEN];
	int line;
};

struct seen_list {
	struct seen *v;
	int n, cap;
};

/* The line of name in l, or 0; -1 when it could not be recorded. */
static int
seen_before(struct seen_list *l, const char *name, int line)
{
	for (int i = 0; i < l->n; i++)
		if (strcmp(l->v[i].name, name) == 0)
			return l->v[i].line;
	if (l->n == l->cap) {
		int cap = l->cap ? 2 * l->cap : 32;
		struct seen *v = realloc(l->v, (size_t)cap * sizeof(*v));

		if (v == NULL)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	snprintf(l->v[l->n].name, sizeof(l->v[l->n].name), "%s", name);
	l->v[l->n++].line = line;
	return 0;
}

/* s[0..n) without the blanks around it, as rte_cfgfile strips names. */
static void
strip(char *out, size_t size, const char *s, size_t n)
{
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	snprintf(out, size, "%.*s", (int)n, s);
}

/* rte_cfgfile skips lines it does not understand, keeps the first of two
 * keys of one name (the others are never read) and makes a second section
 * of a name that nothing looks up: we name all three instead, by line. */
static int
check_lines(struct et_conf *c)
{
	FILE *f = fopen(c->file, "r");
	struct seen_list sections = {0}, keys = {0};
	char line[1024], name[CFG_NAME_LEN], section[CFG_NAME_LEN] = "";
	int n = 0, first, rc = 0;

	if (f == NULL)
		return 0; /* reported by the caller */
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		char *p = line, *end, *eq;

		n++;
		while (*p == ' ' || *p == '\t')
			p++;
		end = p + strcspn(p, "\r\n");
		*end = '\0';
		if (*p == '\0' || *p == ';' || *p == '#')
			continue;
		if (*p == '[' && end[-1] == ']') {
			strip(name, sizeof(name), p + 1, strcspn(p + 1, "]"));
			first = seen_before(&sections, name, n);
			rc = first < 0 ? -ENOMEM : first > 0 ? -EEXIST : 0;
			if (first > 0)
				snprintf(c->err, sizeof(c->err),
					 "%s:%d: [%s]: a second section of this name (the "
					 "first at line %d): give each key once, in one section",
					 c->file, n, name, first);
			snprintf(section, sizeof(section), "%s", name);
			keys.n = 0;
			continue;
		}
		eq = strchr(p, '=');
		if (eq == NULL) {
			snprintf(c->err, sizeof(c->err),
				 "%s:%d: expected '[section]' or 'key = value', got '%.64s'",
				 c->file, n, p);
			rc = -EINVAL;
			break;
		}
		strip(name, sizeof(name), p, (size_t)(eq - p));
		first = seen_before(&keys, name, n);
		rc = first < 0 ? -ENOMEM : first > 0 ? -EEXIST : 0;
		if (first > 0)
			snprintf(c->err, sizeof(c->err),
				 "%s:%d: [%s] %s: set a second time (first at line %d): "
				 "give each key once",
				 c->file, n, section, name, first);
	}
	if (rc == -ENOMEM)
		snprintf(c->err, sizeof(c->err), "%s: out of memory", c->file);
	free(sections.v);
	free(keys.v);
	fclose(f);
	return rc ? -1 : 0;
}

int
et_conf_open(struct et_conf *c, const char *file)
{
	c->file = file;
	c->err[0] = '\0';
	c->cfg = NULL;
	/* rte_cfgfile_load does not tell a missing file from a bad one */
	if (access(file, R_OK) != 0) {
		snprintf(c->err, sizeof(c->err), "%s: cannot read: %s", file,
			 strerror(errno));
		return -1;
	}
	if (check_lines(c))
		return -1;
	c->cfg = rte_cfgfile_load(file, 0);
	if (c->cfg == NULL) {
		snprintf(c->err, sizeof(c->err),
			 "%s: not a valid INI file (expected [section] and key = value lines)",
			 file);
		return -1;
	}
	return 0;
}

void
et_conf_close(struct et_conf *c)
{
	if (c->cfg)
		rte_cfgfile_close(c->cfg);
	c->cfg = NULL;
}

bool
et_conf_has_section(struct et_conf *c, const char *section)
{
	return rte_cfgfile_has_section(c->cfg, section);
}

int
et_conf_need_section(struct et_conf *c, const char *section)
{
	if (!et_conf_has_section(c, section))
		return et_conf_fail(c, section, NULL, "section is missing");
	return 0;
}

static bool
section_matches(const char *pattern, const char *name)
{
	size_t n = strlen(pattern);

	if (n && pattern[n - 1] == '#') {
		if (strncmp(pattern, name, n - 1) != 0 || name[n - 1] == 0)
			return false;
		for (name += n - 1; *name; name++)
			if (*name < '0' || *name > '9')
				return false;
		return true;
	}
	return strcmp(pattern, name) == 0;
}

int
et_conf_check_sections(struct et_conf *c, const char *const allowed[], const char *counted)
{
	int i, cap = rte_cfgfile_num_sections(c->cfg, NULL, 0), n, matched = 0, rc = 0;
	char **names;

	if (cap <= 0)
		return 0;
	names = calloc(cap, sizeof(*names));
	for (i = 0; names && i < cap; i++)
		if ((names[i] = malloc(CFG_NAME_LEN)) == NULL)
			break;
	if (names == NULL || i < cap) {
		rc = et_conf_fail(c, "?", NULL, "out of memory");
		goto out;
	}
	n = rte_cfgfile_sections(c->cfg, names, cap);
	for (i = 0; i < n && rc == 0; i++) {
		const char *const *a;

		for (a = allowed; *a && !section_matches(*a, names[i]); a++)
			;
		if (*a == NULL) {
			char list[256];

			join_names(allowed, list, sizeof(list));
			for (char *h = strchr(list, '#'); h; h = strchr(h, '#'))
				*h = 'N'; /* "portN": any number */
			rc = et_conf_fail(c, names[i], NULL,
					  "unknown section (expected one of: %s)", list);
		} else if (counted && strcmp(*a, counted) == 0) {
			matched++;
		}
	}
out:
	for (i = 0; names && i < cap; i++)
		free(names[i]);
	free(names);
	return rc ? rc : matched;
}

int
et_conf_check_keys(struct et_conf *c, const char *section,
		   const char *const allowed[])
{
	int i, n = rte_cfgfile_section_num_entries(c->cfg, section);
	struct rte_cfgfile_entry *e;

	if (n <= 0)
		return 0;
	e = calloc(n, sizeof(*e));
	if (e == NULL)
		return et_conf_fail(c, section, NULL, "out of memory");
	n = rte_cfgfile_section_entries(c->cfg, section, e, n);
	for (i = 0; i < n; i++) {
		const char *const *a;

		for (a = allowed; *a; a++)
			if (strcmp(*a, e[i].name) == 0)
				break;
		if (*a == NULL) {
			char list[256];

			join_names(allowed, list, sizeof(list));
			et_conf_fail(c, section, e[i].name,
				     "unknown key (expected one of: %s)", list);
			free(e);
			return -1;
		}
	}
	free(e);
	return 0;
}

int
et_conf_u32(struct et_conf *c, const char *section, const char *key,
	    uint32_t min, uint32_t max, bool required, uint32_t def, uint32_t *out)
{
	const char *v = rte_cfgfile_get_entry(c->cfg, section, key);
	unsigned long long x;
	char *end;

	if (v == NULL) {
		if (required)
			return et_conf_fail(c, section, key,
					    "missing (expected an integer in %u..%u)",
					    min, max);
		*out = def;
		return 0;
	}
	errno = 0;
	x = strtoull(v, &end, 0);
	if (v[0] == '\0' || v[0] == '-' || *end != '\0' || errno != 0 || x < min ||
	    x > max)
		return et_conf_fail(c, section, key,
				    "expected an integer in %u..%u, got '%s'", min,
				    max, v);
	*out = (uint32_t)x;
	return 0;
}

int
et_conf_enum(struct et_conf *c, const char *section, const char *key,
	     const char *const names[], bool required, int def, int *out)
{
	const char *v = rte_cfgfile_get_entry(c->cfg, section, key);
	char list[256];
	int i;

	if (v == NULL && !required) {
		*out = def;
		return 0;
	}
	for (i = 0; v && names[i]; i++)
		if (strcmp(names[i], v) == 0) {
			*out = i;
			return 0;
		}
	join_names(names, list, sizeof(list));
	if (v == NULL)
		return et_conf_fail(c, section, key, "missing (expected one of: %s)",
				    list);
	return et_conf_fail(c, section, key, "expected one of: %s, got '%s'", list,
			    v);
}

int
et_conf_double(struct et_conf *c, const char *section, const char *key,
	       double min, double max, bool required, double def, double *out)
{
	const char *v = rte_cfgfile_get_entry(c->cfg, section, key);
	char *end;
	double x;

	if (v == NULL) {
		if (required)
			return et_conf_fail(c, section, key,
					    "missing (expected a number in %g..%g)", min, max);
		*out = def;
		return 0;
	}
	errno = 0;
	x = strtod(v, &end);
	if (v[0] == '\0' || *end != '\0' || errno != 0 || !(x >= min && x <= max))
		return et_conf_fail(c, section, key,
				    "expected a number in %g..%g, got '%s'", min, max, v);
	*out = x;
	return 0;
}

const char *
et_conf_str(struct et_conf *c, const char *section, const char *key, const char *def)
{
	const char *v = rte_cfgfile_get_entry(c->cfg, section, key);

	return v ? v : def;
}

int
et_parse_bytes(const char *s, uint64_t *out)
{
	unsigned long long x;
	char *end;
	int shift = 0;

	if (s[0] == '\0' || s[0] == '-')
		return -1;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'K': case 'k':
		shift = 10;
		end++;
		break;
	case 'M': case 'm':
		shift = 20;
		end++;
		break;
	case 'G': case 'g':
		shift = 30;
		end++;
		break;
	}
	if (*end != '\0' || x > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)x << shift;
	return 0;
}

int
et_conf_bytes(struct et_conf *c, const char *section, const char *key,
	      uint64_t min, uint64_t max, bool required, uint64_t def, uint64_t *out)
{
	const char *v = rte_cfgfile_get_entry(c->cfg, section, key);
	uint64_t x;

	if (v == NULL) {
		if (required)
			return et_conf_fail(c, section, key,
					    "missing (expected a size like 64M)");
		*out = def;
		return 0;
	}
	if (et_parse_bytes(v, &x) || x < min || x > max)
		return et_conf_fail(c, section, key,
				    "expected a size in %llu..%llu bytes (K/M/G allowed), got '%s'",
				    (unsigned long long)min, (unsigned long long)max, v);
	*out = x;
	return 0;
}
