/* Rendering into a string for unit tests of ringctl's output: a memory
 * stream, with or without a writer on it, that gives back what was
 * written. Shared by test_writer.c and test_ctl.c so both capture output
 * the same way. */
#ifndef RING_TESTWRITER_H
#define RING_TESTWRITER_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>

#include "ringctl/writer.h"

struct testwriter {
	char *buf;
	size_t len;
	FILE *f;
	struct writer *w; /* NULL for a bare stream */
};

/* A fresh memory stream to print into. */
static inline FILE *testwriter_stream(struct testwriter *t)
{
	t->buf = NULL;
	t->len = 0;
	t->w = NULL;
	t->f = open_memstream(&t->buf, &t->len);
	assert_non_null(t->f);
	return t->f;
}

/* A writer in fmt on a fresh memory stream. */
static inline struct writer *testwriter_open(struct testwriter *t,
					     enum writer_format fmt)
{
	t->w = writer_new(testwriter_stream(t), fmt);
	assert_non_null(t->w);
	return t->w;
}

/* Finishes the writer, if any, and closes the stream: what was written,
 * as a string the caller frees. */
static inline char *testwriter_close(struct testwriter *t)
{
	if (t->w)
		writer_finish(t->w);
	t->w = NULL;
	assert_int_equal(fclose(t->f), 0);
	return t->buf;
}

#endif
