/* SPDX-License-Identifier: BSD-3-Clause
 * Conf errors: every bad file names the file, the section, the key and
 * what was expected.
 */
#include <stdio.h>
#include <unistd.h>

#include "et_test.h"

#include "base/et_conf.h"
#include "topo/et_topo.h"

struct conf_case {
	const char *what;
	const char *text;  /* NULL: the file does not exist */
	const char *want[3]; /* substrings of the message */
};

static const struct conf_case cases[] = {
	{"missing file", NULL, {"cannot read", "No such file"}},
	{"not INI", "[topology]\nkind = leaf-spine\nthis is not ini\n",
	 {":3: expected '[section]' or 'key = value'", "got 'this is not ini'"}},
	{"unclosed section", "[topology\nkind = leaf-spine\n", {":1: expected"}},
	{"no section", "[other]\nx = 1\n", {"[topology]", "section is missing"}},
	{"no kind", "[topology]\nleaves = 2\n", {"[topology] kind", "missing", "leaf-spine, fat-tree"}},
	{"bad kind", "[topology]\nkind = torus\n", {"[topology] kind", "got 'torus'"}},
	{"unknown key", "[topology]\nkind = leaf-spine\nleafs = 4\n",
	 {"[topology] leafs", "unknown key", "hosts-per-leaf"}},
	{"key of the other kind", "[topology]\nkind = leaf-spine\npods = 4\n",
	 {"[topology] pods", "unknown key"}},
	{"missing key", "[topology]\nkind = leaf-spine\nleaves = 4\nspines = 4\n",
	 {"[topology] hosts-per-leaf", "missing", "1..4096"}},
	{"not a number", "[topology]\nkind = leaf-spine\nleaves = four\nspines = 4\nhosts-per-leaf = 4\n",
	 {"[topology] leaves", "expected an integer in 1..4096", "got 'four'"}},
	{"negative", "[topology]\nkind = leaf-spine\nleaves = -4\nspines = 4\nhosts-per-leaf = 4\n",
	 {"[topology] leaves", "got '-4'"}},
	{"trailing junk", "[topology]\nkind = leaf-spine\nleaves = 4x\nspines = 4\nhosts-per-leaf = 4\n",
	 {"got '4x'"}},
	{"out of range", "[topology]\nkind = leaf-spine\nleaves = 4\nspines = 300\nhosts-per-leaf = 4\n",
	 {"[topology] spines", "1..256", "got '300'"}},
	{"zero", "[topology]\nkind = fat-tree\npods = 0\ntors-per-pod = 2\naggs-per-pod = 2\ncores-per-agg = 2\nhosts-per-tor = 2\n",
	 {"[topology] pods", "got '0'"}},
	{"inconsistent", "[topology]\nkind = leaf-spine\nleaves = 4\nspines = 64\nhosts-per-leaf = 4\nlinks-per-pair = 5\n",
	 {"[topology]: inconsistent topology", "320 uplinks"}},
	/* rte_cfgfile keeps the first of two keys and never reads a second
	 * section of a name: both are refused, by line */
	{"key twice", "[topology]\nkind = leaf-spine\nleaves = 4\n; ok\nleaves = 2\nleaves = 8\n",
	 {":5: [topology] leaves: set a second time", "first at line 3"}},
	{"section twice", "[topology]\nkind = leaf-spine\n[other]\nx = 1\n[ topology ]\nleaves = 2\n",
	 {":5: [topology]: a second section of this name", "first at line 1"}},
	{"too many hosts", "[topology]\nkind = leaf-spine\nleaves = 4096\nspines = 4\nhosts-per-leaf = 4096\n",
	 {"inconsistent topology", "hosts"}},
};

static void
test_bad_confs(void **state)
{
	size_t i, k;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct conf_case *c = &cases[i];
		char path[] = "/tmp/et-conf-XXXXXX";
		struct et_conf conf;
		struct et_topo t;
		int fd = mkstemp(path), rc;

		assert_true(fd >= 0);
		if (c->text) {
			assert_int_equal(write(fd, c->text, strlen(c->text)),
					 (ssize_t)strlen(c->text));
		} else {
			unlink(path);
		}
		close(fd);
		rc = et_conf_open(&conf, path);
		if (rc == 0)
			rc = et_topo_load(&conf, &t);
		et_conf_close(&conf);
		unlink(path);
		if (rc != -1)
			fail_msg("%s: accepted", c->what);
		if (strstr(conf.err, path) == NULL)
			fail_msg("%s: message does not name the file: %s", c->what, conf.err);
		for (k = 0; k < 3 && c->want[k]; k++)
			if (strstr(conf.err, c->want[k]) == NULL)
				fail_msg("%s: message lacks '%s': %s", c->what,
					 c->want[k], conf.err);
	}
}

static void
test_shipped_confs(void **state)
{
	static const struct {
		const char *file;
		uint32_t hosts;
	} shipped[] = {
		{"smoke.ini", 4},
		{"leaf-spine-16.ini", 16},
		{"paper-leaf-spine-256.ini", 256},
		{"paper-fat-tree-512.ini", 512},
	};
	const char *dir = getenv("ET_CONF_DIR");
	size_t i;

	assert_non_null(dir);
	for (i = 0; i < sizeof(shipped) / sizeof(shipped[0]); i++) {
		char path[512];
		struct et_conf c;
		struct et_topo t;

		snprintf(path, sizeof(path), "%s/%s", dir, shipped[i].file);
		if (et_conf_open(&c, path) || et_topo_load(&c, &t))
			fail_msg("%s", c.err);
		et_conf_close(&c);
		assert_int_equal(et_topo_hosts(&t), shipped[i].hosts);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_confs),
		cmocka_unit_test(test_shipped_confs),
	};

	return cmocka_run_group_tests_name("conf", tests, NULL, NULL);
}
