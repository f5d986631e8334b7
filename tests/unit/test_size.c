/* The one size grammar (common/size.c), and the same strings fed to every
 * parser that takes a size: plan's options, test --size and --sizes (TCP
 * and RDMA latency), test allreduce --sizes and the configuration files.
 * One answer per string, whichever command reads it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringctl/allreduce_cli.h"
#include "cfg.h"
#include "ringctl/plan.h"
#include "size.h"
#include "ringctl/testargs.h"

/* A string and its bytes; 0: refused, and the refusal names the string. */
static const struct {
	const char *s;
	uint64_t bytes;
} cases[] = {
	{"4096", 4096},	  {"4096B", 4096},    {"4K", 4096},
	{"4k", 4096},	  {"4Ki", 4096},      {"4KiB", 4096},
	{"8KB", 8000},	  {"8kB", 8000},      {"1.5K", 1536},
	{"1M", 1048576},  {"1m", 1048576},    {"1MiB", 1048576},
	{"1MB", 1000000}, {"0.5MiB", 524288}, {"2e3", 2000},
	{"1Kb", 0},	  {"1kib", 0},	      {"1KIB", 0},
	{"1 K", 0},	  {"K", 0},	      {"-4K", 0},
	{"1.5", 0},	  {"4X", 0},	      {"", 0},
};

static void test_grammar(void **state)
{
	char err[256];
	uint64_t v = 0;

	(void)state;
	assert_int_equal(size_parse("800GB", 1, 1ull << 60, &v, NULL, 0), 0);
	assert_int_equal(v, 800000000000ull);
	assert_int_equal(size_parse("800G", 1, 1ull << 60, &v, NULL, 0), 0);
	assert_int_equal(v, 800ull << 30);
	assert_int_equal(size_parse("121.7GiB", 1, 1ull << 60, &v, NULL, 0), 0);
	assert_int_equal(v, 130674379981ull); /* a fraction of a byte: up */
	assert_int_equal(size_parse("1T", 1, 1ull << 60, &v, NULL, 0), 0);
	assert_int_equal(v, 1ull << 40);
	assert_int_equal(size_parse("1TB", 1, 1ull << 60, &v, NULL, 0), 0);
	assert_int_equal(v, 1000000000000ull);
	/* The reference cluster: ceil(800 GB / 121.7 GiB) = 7 nodes. */
	{
		uint64_t model, node;

		assert_int_equal(
			size_parse("800GB", 1, 1ull << 60, &model, NULL, 0), 0);
		assert_int_equal(
			size_parse("121.7GiB", 1, 1ull << 60, &node, NULL, 0),
			0);
		assert_int_equal((model + node - 1) / node, 7);
	}
	errno = 0;
	assert_int_equal(size_parse("2G", 1, 1ull << 30, &v, err, sizeof(err)),
			 -1);
	assert_int_equal(errno, ERANGE);
	assert_non_null(strstr(err, "'2G' is out of range (1 byte..1GiB)"));
	assert_int_equal(size_parse("0", 1, 100, &v, err, sizeof(err)), -1);
	assert_int_equal(errno, ERANGE);
	assert_int_equal(
		size_parse("99999999999999999999", 1, UINT64_MAX, &v, NULL, 0),
		-1);
	assert_int_equal(size_parse(NULL, 0, 1, &v, err, sizeof(err)), -1);
	assert_int_equal(
		size_parse("800Gb", 0, 1ull << 60, &v, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "lower-case b is bits"));
}

static void test_format(void **state)
{
	char b[32];

	(void)state;
	assert_string_equal(size_format(10240, b, sizeof(b)), "10KiB");
	assert_string_equal(size_format(8u << 20, b, sizeof(b)), "8MiB");
	assert_string_equal(size_format(1ull << 30, b, sizeof(b)), "1GiB");
	assert_string_equal(size_format(1000, b, sizeof(b)), "1000");
	assert_string_equal(size_format(64, b, sizeof(b)), "64");
	assert_string_equal(size_format(0, b, sizeof(b)), "0");
	/* What it writes reads back as the same size. */
	for (uint64_t v = 1; v < (1ull << 40); v = v * 3 + 1024) {
		uint64_t back;

		assert_int_equal(size_parse(size_format(v, b, sizeof(b)), 0,
					    UINT64_MAX, &back, NULL, 0),
				 0);
		assert_int_equal(back, v);
	}
}

static void test_list(void **state)
{
	uint64_t v[4];
	size_t n = 0;
	char err[256];

	(void)state;
	assert_int_equal(size_parse_list("64,4K,1MB", 1, 1ull << 30, v, 4, &n,
					 err, sizeof(err)),
			 0);
	assert_int_equal(n, 3);
	assert_int_equal(v[2], 1000000);
	assert_int_equal(size_parse_list("1M,1M", 1, 1ull << 30, v, 4, &n, err,
					 sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "'1M' is given twice"));
	assert_int_equal(size_parse_list("1M,1024K", 1, 1ull << 30, v, 4, &n,
					 err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "'1024K' is '1M' again (1048576 bytes)"));
	assert_int_equal(size_parse_list("64,,1M", 1, 1ull << 30, v, 4, &n, err,
					 sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "empty item"));
	assert_int_equal(size_parse_list("1,2,3,4,5", 1, 1ull << 30, v, 4, &n,
					 err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "more than 4 sizes"));
}

static void cfg_capture(const char *msg, void *arg)
{
	snprintf(arg, 256, "%s", msg);
}

/* Every command's parser on one string: the bytes each read, or 0 with
 * the string named in each one's error. */
static void one_string(const char *s, uint64_t want)
{
	char err[512], opt[300], cfgmsg[256] = "";
	uint64_t v = 0;
	struct testargs t;
	struct allreduce_cli *ar = calloc(1, sizeof(*ar));
	struct cfg_ctx ctx = {
		.file = "x.conf", .report = cfg_capture, .report_arg = cfgmsg};
	char *bw[] = {"rdma-bw", "n1",	   "n2",     "--op",
		      "write",	 "--size", (char *)s};
	char *lat[] = {"lat", "n1", "n2", "--sizes", (char *)s};
	char *rlat[] = {"rdma-lat", "n1",      "n2",	 "--op",
			"write",    "--sizes", (char *)s};
	char *arv[] = {"allreduce", "--sizes", (char *)s};
	int ok;

	assert_non_null(ar);
	snprintf(opt, sizeof(opt), "'%s'", s);
	print_message("size '%s'\n", s);

	/* plan --model-bytes/--reserve/--max-bytes/--allreduce-bytes */
	ok = plan_parse_size(s, &v, err, sizeof(err)) == 0;
	assert_int_equal(ok, want != 0);
	if (ok)
		assert_int_equal(v, want);
	else
		assert_non_null(strstr(err, opt));

	ok = testargs_parse(7, bw, &t, err, sizeof(err)) == 0;
	assert_int_equal(ok, want != 0);
	if (ok)
		assert_int_equal(t.rdma.size, want);
	else
		assert_non_null(strstr(err, opt));

	ok = testargs_parse(5, lat, &t, err, sizeof(err)) == 0;
	assert_int_equal(ok, want != 0);
	if (ok) {
		assert_int_equal(t.params.n_sizes, 1);
		assert_int_equal(t.sizes[0], want);
	} else {
		assert_non_null(strstr(err, opt));
	}

	ok = testargs_parse(7, rlat, &t, err, sizeof(err)) == 0;
	assert_int_equal(ok, want != 0);
	if (ok)
		assert_int_equal(t.sizes[0], want);
	else
		assert_non_null(strstr(err, opt));

	ok = allreduce_cli_parse(3, arv, ar, err, sizeof(err)) == 0;
	assert_int_equal(ok, want != 0);
	if (ok) {
		assert_int_equal(ar->req.n_sizes, 1);
		assert_int_equal(ar->sizes[0], want);
	} else {
		assert_non_null(strstr(err, opt));
	}

	ok = cfg_parse_size(&ctx, "rdma_size", s, 1, 1ull << 30, &v) == 0;
	assert_int_equal(ok, want != 0);
	if (ok)
		assert_int_equal(v, want);
	else
		assert_non_null(strstr(cfgmsg, opt));
	free(ar);
}

static void test_every_parser(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		one_string(cases[i].s, cases[i].bytes);
}

/* A size given twice is refused by each list, naming it. */
static void test_duplicates(void **state)
{
	char err[512];
	struct testargs t;
	struct allreduce_cli *ar = calloc(1, sizeof(*ar));
	char *lat[] = {"lat", "n1", "n2", "--sizes", "64,1M,1M"};
	char *arv[] = {"allreduce", "--sizes", "1M,1MiB"};

	(void)state;
	assert_non_null(ar);
	assert_int_equal(testargs_parse(5, lat, &t, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'1M' is given twice"));
	assert_int_equal(allreduce_cli_parse(3, arv, ar, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'1MiB' is '1M' again"));
	free(ar);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grammar),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_every_parser),
		cmocka_unit_test(test_duplicates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
