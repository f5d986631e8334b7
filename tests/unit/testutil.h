/* Shared by the unit tests that make a temporary tree (test_cfg,
 * test_pki): removing it again. Header-only, so each test program stays
 * one source file. */
#ifndef RING_TESTUTIL_H
#define RING_TESTUTIL_H

#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>

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
