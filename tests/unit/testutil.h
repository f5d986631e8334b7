/* Shared by the cmocka unit tests: checks for table-driven tests that say
 * which case of the table failed (cmocka itself names only the line of the
 * loop), and removing a temporary tree. Header-only, so each test program
 * stays one source file; include it after <cmocka.h>. */
#ifndef RING_TESTUTIL_H
#define RING_TESTUTIL_H

#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* assert_true(cond), naming the case first when it fails. */
#define TU_CHECK(name, cond)                                                   \
	do {                                                                   \
		int tu_ok_ = !!(cond);                                         \
		if (!tu_ok_)                                                   \
			print_error("case '%s': %s\n", (name), #cond);         \
		assert_true(tu_ok_);                                           \
	} while (0)

/* assert_int_equal(a, b), naming the case first when it fails. */
#define TU_INT_EQ(name, a, b)                                                  \
	do {                                                                   \
		uintmax_t tu_a_ = (uintmax_t)(a), tu_b_ = (uintmax_t)(b);      \
		if (tu_a_ != tu_b_)                                            \
			print_error("case '%s': %s is %jd, want %jd\n",        \
				    (name), #a, (intmax_t)tu_a_,               \
				    (intmax_t)tu_b_);                          \
		assert_int_equal(tu_a_, tu_b_);                                \
	} while (0)

/* assert_string_equal(a, b), naming the case first when it fails. */
#define TU_STR_EQ(name, a, b)                                                  \
	do {                                                                   \
		const char *tu_a_ = (a), *tu_b_ = (b);                         \
		if (!tu_a_ || !tu_b_ || strcmp(tu_a_, tu_b_))                  \
			print_error("case '%s': %s\n", (name), #a);            \
		assert_string_equal(tu_a_, tu_b_);                             \
	} while (0)

static inline int testutil_rm_entry(const char *path, const struct stat *st,
				    int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Remove a temporary directory and all below it; links are not followed. */
static inline void testutil_rm_tree(const char *top)
{
	nftw(top, testutil_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
