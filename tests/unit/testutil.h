/* Shared by the unit tests that make a temporary tree (test_cfg,
 * test_pki, test_readtest, test_readrelay): a file of a given size in it,
 * and removing it again. Header-only, so each test program stays one
 * source file. */
#ifndef RING_TESTUTIL_H
#define RING_TESTUTIL_H

#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* path filled with bytes bytes (0x5a): 0, or -1. */
static inline int testutil_write_file(const char *path, size_t bytes)
{
	FILE *f = fopen(path, "w");
	char buf[65536];
	int ret = 0;

	if (!f)
		return -1;
	memset(buf, 0x5a, sizeof(buf));
	while (bytes && ret == 0) {
		size_t n = bytes < sizeof(buf) ? bytes : sizeof(buf);

		if (fwrite(buf, 1, n, f) != n)
			ret = -1;
		bytes -= n;
	}
	if (fclose(f) != 0)
		ret = -1;
	return ret;
}

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
