#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testwriter.h"
#include "ringctl/writer.h"

static const char *const format_names[] = {
	[WRITER_PLAIN] = "plain",
	[WRITER_KEYVALUE] = "keyvalue",
	[WRITER_JSON] = "json",
};

/* Render with fn into a string (caller frees). */
static char *render(enum writer_format fmt, void (*fn)(struct writer *))
{
	struct testwriter t;

	fn(testwriter_open(&t, fmt));
	return testwriter_close(&t);
}

/* got is want; a difference shows both, under the case's name. */
static void assert_output(const char *name, const char *got, const char *want)
{
	if (strcmp(got, want))
		print_error("--- %s: want\n%s--- got\n%s---\n", name, want,
			    got);
	assert_string_equal(got, want);
}

static void check(enum writer_format fmt, void (*fn)(struct writer *),
		  const char *want)
{
	char *got = render(fmt, fn);

	assert_output(format_names[fmt], got, want);
	free(got);
}

/* fn's output in each format. */
static void check_formats(void (*fn)(struct writer *), const char *plain,
			  const char *keyvalue, const char *json)
{
	check(WRITER_PLAIN, fn, plain);
	check(WRITER_KEYVALUE, fn, keyvalue);
	check(WRITER_JSON, fn, json);
}

/* The shared tree: every kind of node once. */
static void tree(struct writer *w)
{
	writer_str(w, "coordinator", "coord-1");
	writer_str(w, "note", "say \"hi\"\\\n\tnext\x01\xff");
	writer_obj_start(w, "memory");
	writer_uint(w, "total_kib", 1024);
	writer_obj_start(w, "swap");
	writer_int(w, "delta", -5);
	writer_obj_end(w);
	writer_obj_end(w);
	writer_list_start(w, "nodes");
	writer_obj_start(w, NULL);
	writer_str(w, "node", "n1");
	writer_bool(w, "up", 1);
	writer_list_start(w, "ifs");
	writer_str(w, NULL, "enp1s0f0np0");
	writer_str(w, NULL, "enP2p1s0f0np0");
	writer_list_end(w);
	writer_obj_end(w);
	writer_list_end(w);
	writer_list_start(w, "tags");
	writer_str(w, NULL, "a");
	writer_str(w, NULL, "b");
	writer_list_end(w);
	writer_list_start(w, "empty");
	writer_list_end(w);
	writer_double(w, "gbps", 102.8, 2);
	writer_bool(w, "degraded", 0);
}

static void test_tree_plain(void **state)
{
	(void)state;
	check(WRITER_PLAIN, tree,
	      "coordinator: coord-1\n"
	      "note: say \"hi\"\\\\\\n\\tnext\\x01\xef\xbf\xbd\n"
	      "memory:\n"
	      "  total_kib: 1024\n"
	      "  swap:\n"
	      "    delta: -5\n"
	      "nodes:\n"
	      "  - node: n1\n"
	      "    up: yes\n"
	      "    ifs: enp1s0f0np0, enP2p1s0f0np0\n"
	      "tags: a, b\n"
	      "empty: (none)\n"
	      "gbps: 102.80\n"
	      "degraded: no\n");
}

static void test_tree_keyvalue(void **state)
{
	(void)state;
	check(WRITER_KEYVALUE, tree,
	      "coordinator=coord-1\n"
	      "note=say \"hi\"\\\\\\n\\tnext\\x01\xef\xbf\xbd\n"
	      "memory.total_kib=1024\n"
	      "memory.swap.delta=-5\n"
	      "nodes.0.node=n1\n"
	      "nodes.0.up=yes\n"
	      "nodes.0.ifs.0=enp1s0f0np0\n"
	      "nodes.0.ifs.1=enP2p1s0f0np0\n"
	      "tags.0=a\n"
	      "tags.1=b\n"
	      "gbps=102.80\n"
	      "degraded=no\n");
}

static void test_tree_json(void **state)
{
	(void)state;
	check(WRITER_JSON, tree,
	      "{\n"
	      "  \"coordinator\": \"coord-1\",\n"
	      "  \"note\": \"say \\\"hi\\\"\\\\\\n\\tnext\\u0001\\ufffd\",\n"
	      "  \"memory\": {\n"
	      "    \"total_kib\": 1024,\n"
	      "    \"swap\": {\n"
	      "      \"delta\": -5\n"
	      "    }\n"
	      "  },\n"
	      "  \"nodes\": [\n"
	      "    {\n"
	      "      \"node\": \"n1\",\n"
	      "      \"up\": true,\n"
	      "      \"ifs\": [\n"
	      "        \"enp1s0f0np0\",\n"
	      "        \"enP2p1s0f0np0\"\n"
	      "      ]\n"
	      "    }\n"
	      "  ],\n"
	      "  \"tags\": [\n"
	      "    \"a\",\n"
	      "    \"b\"\n"
	      "  ],\n"
	      "  \"empty\": [],\n"
	      "  \"gbps\": 102.8,\n"
	      "  \"degraded\": false\n"
	      "}\n");
}

/* Several records, an empty one, a one-element list of scalars and an empty
 * object; the plain form keeps records apart with a blank line. */
static void records(struct writer *w)
{
	writer_list_start(w, "nodes");
	writer_obj_start(w, NULL);
	writer_str(w, "node", "n1");
	writer_obj_start(w, "mem");
	writer_uint(w, "total", 1);
	writer_obj_end(w);
	writer_obj_end(w);
	writer_obj_start(w, NULL);
	writer_obj_start(w, "mem");
	writer_uint(w, "total", 2);
	writer_obj_end(w);
	writer_list_start(w, "down");
	writer_str(w, NULL, "enp1s0f1np1");
	writer_list_end(w);
	writer_obj_end(w);
	writer_obj_start(w, NULL);
	writer_obj_end(w);
	writer_list_end(w);
	writer_obj_start(w, "extra");
	writer_obj_end(w);
}

static void test_records_plain(void **state)
{
	(void)state;
	check(WRITER_PLAIN, records,
	      "nodes:\n"
	      "  - node: n1\n"
	      "    mem:\n"
	      "      total: 1\n"
	      "\n"
	      "  - mem:\n"
	      "      total: 2\n"
	      "    down: enp1s0f1np1\n"
	      "\n"
	      "  -\n"
	      "extra:\n");
}

static void test_records_keyvalue(void **state)
{
	(void)state;
	check(WRITER_KEYVALUE, records,
	      "nodes.0.node=n1\n"
	      "nodes.0.mem.total=1\n"
	      "nodes.1.mem.total=2\n"
	      "nodes.1.down.0=enp1s0f1np1\n");
}

static void test_records_json(void **state)
{
	(void)state;
	check(WRITER_JSON, records,
	      "{\n"
	      "  \"nodes\": [\n"
	      "    {\n"
	      "      \"node\": \"n1\",\n"
	      "      \"mem\": {\n"
	      "        \"total\": 1\n"
	      "      }\n"
	      "    },\n"
	      "    {\n"
	      "      \"mem\": {\n"
	      "        \"total\": 2\n"
	      "      },\n"
	      "      \"down\": [\n"
	      "        \"enp1s0f1np1\"\n"
	      "      ]\n"
	      "    },\n"
	      "    {}\n"
	      "  ],\n"
	      "  \"extra\": {}\n"
	      "}\n");
}

/* The same rows through the table API (table != 0) or the list API. Row 2
 * has an empty list and a key ("reason") rows 1 and 3 lack, row 1 a list of
 * two, row 3 no "expected" and an empty string; "nœud" is 4 characters in 5
 * bytes and the tab must come out escaped. */
static void rows(struct writer *w, int table)
{
	if (table)
		writer_table_start(w, "nodes");
	else
		writer_list_start(w, "nodes");
	writer_obj_start(w, NULL);
	writer_str(w, "node", "n1");
	writer_str(w, "state", "up");
	writer_bool(w, "expected", 1);
	writer_list_start(w, "data_ifs");
	writer_str(w, NULL, "eth1");
	writer_str(w, NULL, "eth2");
	writer_list_end(w);
	writer_double(w, "gbps", 102.8, 2);
	writer_obj_end(w);
	writer_obj_start(w, NULL);
	writer_str(w, "node", "n\xc5\x93ud");
	writer_str(w, "state", "down");
	writer_bool(w, "expected", 0);
	writer_list_start(w, "data_ifs");
	writer_list_end(w);
	writer_str(w, "reason", "cut\there");
	writer_double(w, "gbps", 0, 2);
	writer_obj_end(w);
	writer_obj_start(w, NULL);
	writer_str(w, "node", "n3");
	writer_str(w, "state", "");
	writer_list_start(w, "data_ifs");
	writer_str(w, NULL, "eth3");
	writer_list_end(w);
	writer_int(w, "gbps", -7);
	writer_obj_end(w);
	if (table)
		writer_table_end(w);
	else
		writer_list_end(w);
	writer_str(w, "after", "x");
}

static void table(struct writer *w)
{
	rows(w, 1);
}

static void table_as_list(struct writer *w)
{
	rows(w, 0);
}

/* Columns: first appearance, "reason" before "gbps" as in the row that
 * brings it; widths by characters; the last column is not padded. */
static void test_table_plain(void **state)
{
	(void)state;
	check(WRITER_PLAIN, table,
	      "nodes:\n"
	      "  NODE  STATE  EXPECTED  DATA IFS   REASON     GBPS\n"
	      "  n1    up     yes       eth1,eth2  -          102.80\n"
	      "  n\xc5\x93ud  down   no        -          cut\\there  0.00\n"
	      "  n3    -      -         eth3       -          -7\n"
	      "after: x\n");
}

static void test_table_keyvalue(void **state)
{
	(void)state;
	check(WRITER_KEYVALUE, table,
	      "nodes.0.node=n1\n"
	      "nodes.0.state=up\n"
	      "nodes.0.expected=yes\n"
	      "nodes.0.data_ifs.0=eth1\n"
	      "nodes.0.data_ifs.1=eth2\n"
	      "nodes.0.gbps=102.80\n"
	      "nodes.1.node=n\xc5\x93ud\n"
	      "nodes.1.state=down\n"
	      "nodes.1.expected=no\n"
	      "nodes.1.reason=cut\\there\n"
	      "nodes.1.gbps=0.00\n"
	      "nodes.2.node=n3\n"
	      "nodes.2.state=\n"
	      "nodes.2.data_ifs.0=eth3\n"
	      "nodes.2.gbps=-7\n"
	      "after=x\n");
}

static void test_table_json(void **state)
{
	(void)state;
	check(WRITER_JSON, table,
	      "{\n"
	      "  \"nodes\": [\n"
	      "    {\n"
	      "      \"node\": \"n1\",\n"
	      "      \"state\": \"up\",\n"
	      "      \"expected\": true,\n"
	      "      \"data_ifs\": [\n"
	      "        \"eth1\",\n"
	      "        \"eth2\"\n"
	      "      ],\n"
	      "      \"gbps\": 102.8\n"
	      "    },\n"
	      "    {\n"
	      "      \"node\": \"n\xc5\x93ud\",\n"
	      "      \"state\": \"down\",\n"
	      "      \"expected\": false,\n"
	      "      \"data_ifs\": [],\n"
	      "      \"reason\": \"cut\\there\",\n"
	      "      \"gbps\": 0\n"
	      "    },\n"
	      "    {\n"
	      "      \"node\": \"n3\",\n"
	      "      \"state\": \"\",\n"
	      "      \"data_ifs\": [\n"
	      "        \"eth3\"\n"
	      "      ],\n"
	      "      \"gbps\": -7\n"
	      "    }\n"
	      "  ],\n"
	      "  \"after\": \"x\"\n"
	      "}\n");
}

/* a renders as b does in fmt; name says which case on a difference. */
static void check_same(const char *name, enum writer_format fmt,
		       void (*a)(struct writer *), void (*b)(struct writer *))
{
	char *want = render(fmt, b);
	char *got = render(fmt, a);

	assert_output(name, got, want);
	free(got);
	free(want);
}

/* Machine formats do not change shape when a list becomes a table. */
static void test_table_machine_same_as_list(void **state)
{
	(void)state;
	check_same("json", WRITER_JSON, table, table_as_list);
	check_same("keyvalue", WRITER_KEYVALUE, table, table_as_list);
}

static void empty_table(struct writer *w)
{
	writer_table_start(w, "nodes");
	writer_table_end(w);
}

static void empty_list(struct writer *w)
{
	writer_list_start(w, "nodes");
	writer_list_end(w);
}

static void test_table_empty(void **state)
{
	(void)state;
	check_formats(empty_table, "nodes: (none)\n", "",
		      "{\n  \"nodes\": []\n}\n");
	for (int fmt = WRITER_PLAIN; fmt <= WRITER_JSON; fmt++)
		check_same(format_names[fmt], (enum writer_format)fmt,
			   empty_table, empty_list);
}

/* A table keeps the indentation of its depth; one left open (with its last
 * row) is printed by finish; the heading escapes like any key. */
static void nested_table(struct writer *w)
{
	writer_obj_start(w, "cluster");
	writer_table_start(w, "links");
	writer_obj_start(w, NULL);
	writer_str(w, "from_to", "a");
	writer_uint(w, "k\x1b", 1);
	writer_obj_end(w);
	writer_obj_start(w, NULL);
	writer_str(w, "from_to", "bb\x1b[2J");
}

static void test_table_nested(void **state)
{
	(void)state;
	check(WRITER_PLAIN, nested_table,
	      "cluster:\n"
	      "  links:\n"
	      "    FROM TO    K\\x1b\n"
	      "    a          1\n"
	      "    bb\\x1b[2J  -\n");
}

/* What a table cannot show falls back to the list layout, whenever it
 * comes: an object in a row, in a row's list, a scalar or a list directly
 * in the table, rows without members. */
static void bad_rows(struct writer *w, int table, int how)
{
	if (table)
		writer_table_start(w, "nodes");
	else
		writer_list_start(w, "nodes");
	writer_obj_start(w, NULL);
	writer_str(w, "node", "n1");
	writer_obj_end(w);
	if (how == 2) {
		writer_str(w, NULL, "stray");
		writer_list_start(w, NULL);
		writer_str(w, NULL, "x");
		writer_list_end(w);
	}
	writer_obj_start(w, NULL);
	writer_str(w, "node", "n2");
	writer_list_start(w, "ifs");
	writer_str(w, NULL, "eth1");
	if (how == 1) {
		writer_obj_start(w, NULL);
		writer_uint(w, "port", 1);
		writer_obj_end(w);
	}
	writer_list_end(w);
	if (how == 0) {
		writer_obj_start(w, "mem");
		writer_uint(w, "total", 2);
		writer_obj_end(w);
	}
	writer_str(w, "state", "up");
	writer_obj_end(w);
	if (how == 3) {
		writer_obj_start(w, NULL);
		writer_obj_end(w);
	}
	writer_list_end(w);
	writer_str(w, "after", "x");
}

/* Which of bad_rows' cases bad_table and bad_list draw. */
static int bad_how;

static void bad_table(struct writer *w)
{
	bad_rows(w, 1, bad_how);
}

static void bad_list(struct writer *w)
{
	bad_rows(w, 0, bad_how);
}

static void test_table_fallback(void **state)
{
	/* The table falls back to exactly the list's output. */
	static const struct {
		const char *name;
		enum writer_format fmt;
		int how;
	} same[] = {
		{"plain, object in a row", WRITER_PLAIN, 0},
		{"plain, object in a row's list", WRITER_PLAIN, 1},
		{"plain, scalar and list in the table", WRITER_PLAIN, 2},
		{"json, object in a row's list", WRITER_JSON, 1},
		{"keyvalue, scalar and list in the table", WRITER_KEYVALUE, 2},
	};

	(void)state;
	bad_how = 0;
	check(WRITER_PLAIN, bad_table,
	      "nodes:\n"
	      "  - node: n1\n"
	      "\n"
	      "  - node: n2\n"
	      "    ifs: eth1\n"
	      "    mem:\n"
	      "      total: 2\n"
	      "    state: up\n"
	      "after: x\n");
	for (size_t i = 0; i < sizeof(same) / sizeof(*same); i++) {
		bad_how = same[i].how;
		check_same(same[i].name, same[i].fmt, bad_table, bad_list);
	}
}

static void empty_rows(struct writer *w)
{
	writer_table_start(w, "nodes");
	writer_obj_start(w, NULL);
	writer_obj_end(w);
	writer_obj_start(w, NULL);
	writer_obj_end(w);
	writer_table_end(w);
}

/* A table inside a table row: the outer one becomes a list, the inner one
 * is still a table. */
static void table_in_table(struct writer *w)
{
	writer_table_start(w, "nodes");
	writer_obj_start(w, NULL);
	writer_str(w, "node", "n1");
	writer_table_start(w, "ports");
	writer_obj_start(w, NULL);
	writer_uint(w, "port", 1);
	writer_str(w, "state", "up");
	writer_obj_end(w);
	writer_table_end(w);
	writer_obj_end(w);
	writer_table_end(w);
}

static void test_table_degenerate(void **state)
{
	(void)state;
	check(WRITER_PLAIN, empty_rows, "nodes:\n  -\n\n  -\n");
	check(WRITER_PLAIN, table_in_table,
	      "nodes:\n"
	      "  - node: n1\n"
	      "    ports:\n"
	      "      PORT  STATE\n"
	      "      1     up\n");
}

static void nothing(struct writer *w)
{
	(void)w;
}

static void test_empty_root(void **state)
{
	(void)state;
	check_formats(nothing, "", "", "{}\n");
}

/* finish closes what the caller left open; stray ends are ignored. */
static void unbalanced(struct writer *w)
{
	writer_obj_end(w);
	writer_list_end(w);
	writer_obj_start(w, "a");
	writer_list_start(w, "b");
	writer_int(w, NULL, 1);
}

static void test_unbalanced(void **state)
{
	(void)state;
	check_formats(unbalanced, "a:\n  b: 1\n", "a.b.0=1\n",
		      "{\n"
		      "  \"a\": {\n"
		      "    \"b\": [\n"
		      "      1\n"
		      "    ]\n"
		      "  }\n"
		      "}\n");
}

static void numbers(struct writer *w)
{
	writer_double(w, "tenth", 0.1, 3);
	writer_double(w, "third", 1.0 / 3.0, 0);
	writer_double(w, "nan", NAN, 1);
	writer_double(w, "inf", -INFINITY, 1);
	writer_double(w, "big", 1e21, 0);
	writer_int(w, "min", INT64_MIN);
	writer_uint(w, "max", UINT64_MAX);
}

static void test_numbers(void **state)
{
	(void)state;
	check(WRITER_JSON, numbers,
	      "{\n"
	      "  \"tenth\": 0.1,\n"
	      "  \"third\": 0.3333333333333333,\n"
	      "  \"nan\": null,\n"
	      "  \"inf\": null,\n"
	      "  \"big\": 1e+21,\n"
	      "  \"min\": -9223372036854775808,\n"
	      "  \"max\": 18446744073709551615\n"
	      "}\n");
	check(WRITER_KEYVALUE, numbers,
	      "tenth=0.100\n"
	      "third=0\n"
	      "nan=nan\n"
	      "inf=-inf\n"
	      "big=1000000000000000000000\n"
	      "min=-9223372036854775808\n"
	      "max=18446744073709551615\n");
}

/* Valid UTF-8 passes through; overlong forms, surrogates, truncated
 * sequences and C1 controls never reach the output as such. */
static void unicode(struct writer *w)
{
	writer_str(w, "ok", "caf\xc3\xa9 \xf0\x9f\x94\x97");
	writer_str(w, "overlong", "\xc0\xaf");
	writer_str(w, "surrogate", "\xed\xa0\x80");
	writer_str(w, "truncated", "x\xe2\x82");
	writer_str(w, "c1",
		   "\xc2\x9b"
		   "1m\x7f");
	writer_str(w, "null", NULL);
	writer_str(w, "k\ney", "v");
}

static void test_unicode(void **state)
{
	(void)state;
	check(WRITER_JSON, unicode,
	      "{\n"
	      "  \"ok\": \"caf\xc3\xa9 \xf0\x9f\x94\x97\",\n"
	      "  \"overlong\": \"\\ufffd\\ufffd\",\n"
	      "  \"surrogate\": \"\\ufffd\\ufffd\\ufffd\",\n"
	      "  \"truncated\": \"x\\ufffd\\ufffd\",\n"
	      "  \"c1\": \"\\u009b1m\\u007f\",\n"
	      "  \"null\": null,\n"
	      "  \"k\\ney\": \"v\"\n"
	      "}\n");
	check(WRITER_KEYVALUE, unicode,
	      "ok=caf\xc3\xa9 \xf0\x9f\x94\x97\n"
	      "overlong=\xef\xbf\xbd\xef\xbf\xbd\n"
	      "surrogate=\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\n"
	      "truncated=x\xef\xbf\xbd\xef\xbf\xbd\n"
	      "c1=\\u009b1m\\x7f\n"
	      "null=\n"
	      "k\\ney=v\n");
}

/* Names an agent chose, in every kind of slot: a key, a table cell, a
 * list item, a nested value. */
static const char *const hostile_names[] = {
	"x\nLD_PRELOAD=/a",
	"n\"q",
	"$(reboot)",
	"`id`",
	"\x1b[2J\x1b]0;t\x07",
	"a\rb",
	"\xc2\x9b"
	"31m",
	"\xff\xfe",
	"tab\tx",
	"\\n",
};
static const char *hostile_value;

static void hostile(struct writer *w)
{
	const char *v = hostile_value;

	writer_str(w, v, v);
	writer_table_start(w, "ranks");
	writer_obj_start(w, NULL);
	writer_str(w, "node", v);
	writer_str(w, "mgmt_interface", v);
	writer_obj_end(w);
	writer_table_end(w);
	writer_list_start(w, "ifs");
	writer_str(w, NULL, v);
	writer_str(w, NULL, v);
	writer_list_end(w);
	writer_obj_start(w, "inventory");
	writer_obj_start(w, v);
	writer_str(w, "version", v);
	writer_obj_end(w);
	writer_obj_end(w);
}

static size_t count_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* No control character (C0, DEL, C1) and no byte that is not UTF-8 reaches
 * the output, and hostile text adds no line: the output has as many lines
 * as with a harmless name. */
static void test_hostile_names(void **state)
{
	static const enum writer_format fmts[] = {WRITER_PLAIN, WRITER_KEYVALUE,
						  WRITER_JSON};

	(void)state;
	for (size_t f = 0; f < sizeof(fmts) / sizeof(*fmts); f++) {
		char *ref, *got;

		hostile_value = "n1";
		ref = render(fmts[f], hostile);
		for (size_t i = 0;
		     i < sizeof(hostile_names) / sizeof(*hostile_names); i++) {
			const unsigned char *p;

			hostile_value = hostile_names[i];
			got = render(fmts[f], hostile);
			if (count_lines(got) != count_lines(ref))
				print_error(
					"--- format %zu, name %zu:\n%s---\n", f,
					i, got);
			assert_int_equal(count_lines(got), count_lines(ref));
			for (p = (const unsigned char *)got; *p; p++) {
				assert_false(*p < 0x20 && *p != '\n');
				assert_false(*p == 0x7f || *p == 0xff ||
					     *p == 0xfe);
				assert_false(p[0] == 0xc2 && p[1] >= 0x80 &&
					     p[1] < 0xa0);
			}
			free(got);
		}
		free(ref);
	}
	/* JSON keeps the text exactly, escaped. */
	hostile_value = "x\nLD_PRELOAD=/a \"$(id)\" \x1b[0m";
	check(WRITER_JSON, hostile,
	      "{\n"
	      "  \"x\\nLD_PRELOAD=/a \\\"$(id)\\\" \\u001b[0m\": "
	      "\"x\\nLD_PRELOAD=/a \\\"$(id)\\\" \\u001b[0m\",\n"
	      "  \"ranks\": [\n"
	      "    {\n"
	      "      \"node\": \"x\\nLD_PRELOAD=/a \\\"$(id)\\\" "
	      "\\u001b[0m\",\n"
	      "      \"mgmt_interface\": \"x\\nLD_PRELOAD=/a \\\"$(id)\\\" "
	      "\\u001b[0m\"\n"
	      "    }\n"
	      "  ],\n"
	      "  \"ifs\": [\n"
	      "    \"x\\nLD_PRELOAD=/a \\\"$(id)\\\" \\u001b[0m\",\n"
	      "    \"x\\nLD_PRELOAD=/a \\\"$(id)\\\" \\u001b[0m\"\n"
	      "  ],\n"
	      "  \"inventory\": {\n"
	      "    \"x\\nLD_PRELOAD=/a \\\"$(id)\\\" \\u001b[0m\": {\n"
	      "      \"version\": \"x\\nLD_PRELOAD=/a \\\"$(id)\\\" "
	      "\\u001b[0m\"\n"
	      "    }\n"
	      "  }\n"
	      "}\n");
	/* keyvalue: one line per value, the newline shown as \n. */
	hostile_value = "x\nLD_PRELOAD=/a";
	check(WRITER_KEYVALUE, hostile,
	      "x\\nLD_PRELOAD=/a=x\\nLD_PRELOAD=/a\n"
	      "ranks.0.node=x\\nLD_PRELOAD=/a\n"
	      "ranks.0.mgmt_interface=x\\nLD_PRELOAD=/a\n"
	      "ifs.0=x\\nLD_PRELOAD=/a\n"
	      "ifs.1=x\\nLD_PRELOAD=/a\n"
	      "inventory.x\\nLD_PRELOAD=/a.version=x\\nLD_PRELOAD=/a\n");
}

static void test_format_parse(void **state)
{
	enum writer_format f;

	(void)state;
	assert_int_equal(writer_format_parse("plain", &f), 0);
	assert_int_equal(f, WRITER_PLAIN);
	assert_int_equal(writer_format_parse("keyvalue", &f), 0);
	assert_int_equal(f, WRITER_KEYVALUE);
	assert_int_equal(writer_format_parse("json", &f), 0);
	assert_int_equal(f, WRITER_JSON);
	errno = 0;
	assert_int_equal(writer_format_parse("yaml", &f), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(writer_format_parse("JSON", &f), -1);
	assert_int_equal(writer_format_parse("", &f), -1);
	assert_int_equal(writer_format_parse(NULL, &f), -1);
}

/* Deep nesting grows the stack and the path without limit. */
static void deep(struct writer *w)
{
	int i;

	for (i = 0; i < 100; i++)
		writer_obj_start(w, "abcdefghij");
	writer_int(w, "x", 1);
}

static void test_deep(void **state)
{
	char *got;
	size_t want_len = 100 * 11 + strlen("x=1\n");

	(void)state;
	got = render(WRITER_KEYVALUE, deep);
	assert_int_equal(strlen(got), want_len);
	assert_memory_equal(got, "abcdefghij.abcdefghij.", 22);
	assert_string_equal(got + want_len - 6, "j.x=1\n");
	free(got);
	got = render(WRITER_JSON, deep);
	assert_non_null(strstr(got, "\n}\n"));
	free(got);
}

/* A key the object already has is left out, with all it would open; the
 * same key in another object (a sibling record, a nested one) is fine. */
static void dups(struct writer *w)
{
	writer_int(w, "a", 1);
	writer_str(w, "a", "again");
	writer_obj_start(w, "m");
	writer_uint(w, "x", 2);
	writer_list_start(w, "x");
	writer_int(w, NULL, 3);
	writer_obj_start(w, NULL);
	writer_int(w, "y", 4);
	writer_obj_end(w);
	writer_list_end(w);
	writer_obj_start(w, "m");
	writer_int(w, "x", 5);
	writer_obj_end(w);
	writer_obj_end(w);
	writer_obj_start(w, "m");
	writer_table_start(w, "t");
	writer_int(w, "z", 6);
	writer_table_end(w);
	writer_obj_end(w);
	writer_table_start(w, "rows");
	for (int i = 0; i < 2; i++) {
		writer_obj_start(w, NULL);
		writer_int(w, "n", i);
		writer_double(w, "n", 7, 1);
		writer_bool(w, "ok", i);
		writer_none(w, "ok", "-");
		writer_obj_end(w);
	}
	writer_table_end(w);
	writer_bool(w, "b", 1);
}

static void test_duplicate_keys(void **state)
{
	static const char *const want[] = {
		[WRITER_JSON] = "{\n"
				"  \"a\": 1,\n"
				"  \"m\": {\n"
				"    \"x\": 2,\n"
				"    \"m\": {\n"
				"      \"x\": 5\n"
				"    }\n"
				"  },\n"
				"  \"rows\": [\n"
				"    {\n"
				"      \"n\": 0,\n"
				"      \"ok\": false\n"
				"    },\n"
				"    {\n"
				"      \"n\": 1,\n"
				"      \"ok\": true\n"
				"    }\n"
				"  ],\n"
				"  \"b\": true\n"
				"}\n",
		[WRITER_KEYVALUE] = "a=1\n"
				    "m.x=2\n"
				    "m.m.x=5\n"
				    "rows.0.n=0\n"
				    "rows.0.ok=no\n"
				    "rows.1.n=1\n"
				    "rows.1.ok=yes\n"
				    "b=yes\n",
		[WRITER_PLAIN] = "a: 1\n"
				 "m:\n"
				 "  x: 2\n"
				 "  m:\n"
				 "    x: 5\n"
				 "rows:\n"
				 "  N  OK\n"
				 "  0  no\n"
				 "  1  yes\n"
				 "b: yes\n",
	};

	FILE *err = tmpfile();
	int saved = dup(STDERR_FILENO);
	char line[256];
	int warned = 0;

	(void)state;
	/* The warnings, held for counting rather than shown. */
	assert_non_null(err);
	assert_true(saved >= 0);
	fflush(stderr);
	assert_true(dup2(fileno(err), STDERR_FILENO) >= 0);
	for (int fmt = WRITER_PLAIN; fmt <= WRITER_JSON; fmt++) {
		struct testwriter t;
		struct writer *w = testwriter_open(&t, (enum writer_format)fmt);
		char *buf;

		dups(w);
		/* a, m.x (the list), m (the object), rows' n and ok twice */
		assert_int_equal(writer_duplicates(w), 7);
		buf = testwriter_close(&t);
		assert_output(format_names[fmt], buf, want[fmt]);
		free(buf);
	}
	fflush(stderr);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	rewind(err);
	while (fgets(line, sizeof(line), err)) {
		assert_non_null(strstr(line, "ringctl: internal error: "
					     "duplicate key '"));
		warned++;
	}
	fclose(err);
	assert_int_equal(warned, 3 * 7);
}

/* An absent figure: null in JSON, its text elsewhere, "-" in a table. */
static void absent(struct writer *w)
{
	writer_none(w, "size", "agent default");
	writer_table_start(w, "edges");
	writer_obj_start(w, NULL);
	writer_str(w, "edge", "n1-n2");
	writer_none(w, "pct", "");
	writer_obj_end(w);
	writer_obj_start(w, NULL);
	writer_str(w, "edge", "n2-n3");
	writer_double(w, "pct", 51, 1);
	writer_obj_end(w);
	writer_table_end(w);
}

/* keyvalue names list elements: by their name, '_' for what a path cannot
 * hold, "#INDEX" for a repeated or empty name; JSON and plain as before. */
static void named(struct writer *w)
{
	static const char *const ids[] = {"n1", "gb10-1.lab", "n1",
					  "",	"a=b c",      "#"};

	writer_list_start(w, "nodes");
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		writer_obj_start_named(w, ids[i]);
		writer_uint(w, "i", i);
		writer_list_start(w, "ports");
		writer_obj_start_named(w, "1");
		writer_str(w, "state", "up");
		writer_obj_end(w);
		writer_list_end(w);
		writer_obj_end(w);
	}
	writer_list_end(w);
	/* Not a list element: no name to give, a plain object. */
	writer_obj_start_named(w, "stray");
	writer_obj_end(w);
}

static void test_named_keyvalue(void **state)
{
	(void)state;
	check(WRITER_KEYVALUE, named,
	      "nodes.n1.i=0\n"
	      "nodes.n1.ports.1.state=up\n"
	      "nodes.gb10-1_lab.i=1\n"
	      "nodes.gb10-1_lab.ports.1.state=up\n"
	      "nodes.#2.i=2\n"
	      "nodes.#2.ports.1.state=up\n"
	      "nodes.#3.i=3\n"
	      "nodes.#3.ports.1.state=up\n"
	      "nodes.a_b_c.i=4\n"
	      "nodes.a_b_c.ports.1.state=up\n"
	      "nodes.#5.i=5\n"
	      "nodes.#5.ports.1.state=up\n");
}

static void test_named_json_plain(void **state)
{
	char *json, *plain;

	(void)state;
	json = render(WRITER_JSON, named);
	plain = render(WRITER_PLAIN, named);
	/* A list in JSON, as for writer_obj_start(w, NULL). */
	assert_non_null(strstr(json, "\"nodes\": [\n    {\n      \"i\": 0,"));
	assert_null(strstr(json, "n1"));
	assert_null(strstr(plain, "n1"));
	assert_non_null(strstr(plain, "nodes:\n  - i: 0\n    ports:\n"));
	free(json);
	free(plain);
}

/* Plain prose wraps at 100 columns under its start; a word longer than
 * the room stays whole. */
static void wrapped(struct writer *w)
{
	char word[120];

	writer_str(w, "finding",
		   "every edge tops out at 48% of its 2 Gbps nominal (1.0 "
		   "Gbps median, spread 0%): a uniform ceiling - a link-layer "
		   "or host limit, not a bad cable");
	memset(word, 'x', sizeof(word) - 1);
	word[sizeof(word) - 1] = '\0';
	writer_str(w, "long", word);
	writer_str(w, "short", "fits");
}

static void test_wrap_plain(void **state)
{
	char *out;
	const char *line;

	(void)state;
	/* keyvalue: one line a value, whatever its length. */
	out = render(WRITER_KEYVALUE, wrapped);
	assert_non_null(strstr(out, "spread 0%): a uniform ceiling - a "
				    "link-layer or host limit, not a bad "
				    "cable\nlong=xxx"));
	free(out);
	out = render(WRITER_PLAIN, wrapped);
	assert_non_null(strstr(
		out, "finding: every edge tops out at 48% of its 2 Gbps "
		     "nominal (1.0 Gbps median, spread 0%): a uniform\n"
		     "         ceiling - a link-layer or host limit, not "
		     "a bad cable\nlong: xxx"));
	assert_non_null(strstr(out, "\nshort: fits\n"));
	for (line = out; *line; line = strchr(line, '\n') + 1) {
		size_t n = (size_t)(strchr(line, '\n') - line);

		if (strncmp(line, "long: ", 6))
			assert_true(n <= 100);
	}
	free(out);
}

/* Plain within 100 columns: a table's long last column wraps under its
 * start; a table whose other columns leave it no room becomes records,
 * empty cells left out; a column no row fills and an object's blank
 * member are left out. */
static void wide_last(struct writer *w)
{
	writer_table_start(w, "findings");
	writer_obj_start(w, NULL);
	writer_str(w, "level", "info");
	writer_str(w, "unused", "");
	writer_str(w, "finding",
		   "n1, n2, n3, n4 eth3: carrier but no address: if it is the "
		   "other PCIe half of a cabled port, address and use it too");
	writer_obj_end(w);
	writer_table_end(w);
	writer_str(w, "blank", "");
	writer_none(w, "none", "");
	writer_str(w, "kept", "yes");
}

static void wide_cols(struct writer *w)
{
	char v[48];

	memset(v, 'v', sizeof(v) - 1);
	v[sizeof(v) - 1] = '\0';
	writer_table_start(w, "rows");
	writer_obj_start(w, NULL);
	writer_str(w, "a", v);
	writer_str(w, "b", v);
	writer_str(w, "c", "");
	writer_str(w, "d", "end");
	writer_obj_end(w);
	writer_table_end(w);
}

static void long_list(struct writer *w)
{
	char name[16];

	writer_obj_start(w, "topology");
	writer_list_start(w, "order");
	for (int i = 1; i <= 40; i++) {
		snprintf(name, sizeof(name), "node%d", i);
		writer_str(w, NULL, name);
	}
	writer_list_end(w);
	writer_obj_end(w);
}

static void long_key(struct writer *w)
{
	writer_str(w,
		   "edge_degraded_with_a_key_long_enough_to_leave_no_room "
		   "n1-n2:n1/eth1-n2/eth1",
		   "cable n1-n2 is down: n1 eth1: no carrier, n2 eth1: no "
		   "carrier; the ring is now a line: the cable n1-n2 is down");
}

static void test_plain_width(void **state)
{
	char *out;
	const char *line;

	(void)state;
	/* A long key leaves no room: the value goes below it. */
	check(WRITER_PLAIN, long_key,
	      "edge_degraded_with_a_key_long_enough_to_leave_no_room "
	      "n1-n2:n1/eth1-n2/eth1:\n"
	      "    cable n1-n2 is down: n1 eth1: no carrier, n2 eth1: no "
	      "carrier; the ring is now a line: the cable\n"
	      "    n1-n2 is down\n");
	/* An inline list wraps under its first item. */
	out = render(WRITER_PLAIN, long_list);
	assert_non_null(strstr(out, "topology:\n  order: node1, node2, "));
	assert_non_null(strstr(out, ",\n         node"));
	assert_non_null(strstr(out, "node39, node40\n"));
	for (line = out; *line; line = strchr(line, '\n') + 1)
		assert_true((size_t)(strchr(line, '\n') - line) <= 100);
	free(out);
	check(WRITER_PLAIN, wide_last,
	      "findings:\n"
	      "  LEVEL  FINDING\n"
	      "  info   n1, n2, n3, n4 eth3: carrier but no address: if it is "
	      "the other PCIe half of a cabled port,\n"
	      "         address and use it too\n"
	      "kept: yes\n");
	check(WRITER_PLAIN, wide_cols,
	      "rows:\n"
	      "  - a: vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv\n"
	      "    b: vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv\n"
	      "    d: end\n");
	/* The machine formats keep every field. */
	out = render(WRITER_KEYVALUE, wide_last);
	assert_non_null(strstr(out, "findings.0.unused=\n"));
	assert_non_null(strstr(out, "\nblank=\nnone=\nkept=yes\n"));
	free(out);
}

static void test_fputs_wrapped(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	char text[200];

	(void)state;
	assert_non_null(f);
	snprintf(text, sizeof(text), "%s",
		 "healthy; ring n1 n2 n4 n3; 4 edges: 4 up, 0 down, 0 other; "
		 "rank order valid\x1b");
	fputs("2026-12-06T20:47:31Z snapshot    ", f);
	writer_fputs_wrapped(f, text, 33);
	fclose(f);
	assert_string_equal(buf, "2026-12-06T20:47:31Z snapshot    healthy; "
				 "ring n1 n2 n4 n3; 4 edges: 4 up, 0 down, "
				 "0 other; rank\n"
				 "                                 order "
				 "valid\\x1b");
	free(buf);
}

static void test_none(void **state)
{
	(void)state;
	check_formats(absent,
		      "size: agent default\n"
		      "edges:\n"
		      "  EDGE   PCT\n"
		      "  n1-n2  -\n"
		      "  n2-n3  51.0\n",
		      "size=agent default\n"
		      "edges.0.edge=n1-n2\n"
		      "edges.0.pct=\n"
		      "edges.1.edge=n2-n3\n"
		      "edges.1.pct=51.0\n",
		      "{\n"
		      "  \"size\": null,\n"
		      "  \"edges\": [\n"
		      "    {\n"
		      "      \"edge\": \"n1-n2\",\n"
		      "      \"pct\": null\n"
		      "    },\n"
		      "    {\n"
		      "      \"edge\": \"n2-n3\",\n"
		      "      \"pct\": 51\n"
		      "    }\n"
		      "  ]\n"
		      "}\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree_plain),
		cmocka_unit_test(test_tree_keyvalue),
		cmocka_unit_test(test_tree_json),
		cmocka_unit_test(test_records_plain),
		cmocka_unit_test(test_records_keyvalue),
		cmocka_unit_test(test_records_json),
		cmocka_unit_test(test_table_plain),
		cmocka_unit_test(test_table_keyvalue),
		cmocka_unit_test(test_table_json),
		cmocka_unit_test(test_table_machine_same_as_list),
		cmocka_unit_test(test_table_empty),
		cmocka_unit_test(test_table_nested),
		cmocka_unit_test(test_table_fallback),
		cmocka_unit_test(test_table_degenerate),
		cmocka_unit_test(test_empty_root),
		cmocka_unit_test(test_unbalanced),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_unicode),
		cmocka_unit_test(test_hostile_names),
		cmocka_unit_test(test_format_parse),
		cmocka_unit_test(test_deep),
		cmocka_unit_test(test_duplicate_keys),
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_named_keyvalue),
		cmocka_unit_test(test_named_json_plain),
		cmocka_unit_test(test_wrap_plain),
		cmocka_unit_test(test_plain_width),
		cmocka_unit_test(test_fputs_wrapped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
