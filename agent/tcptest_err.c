/* The TCP test's clock, error record and stop state, which every part of
 * the test engine reads and writes (the bottom of its call graph: it calls
 * none of them). See tcptest_int.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "tcptest_int.h"

double tcptest_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *tcptest_strerror(int err, char *buf, size_t len)
{
	return strerror_r(err < 0 ? -err : err, buf, len);
}

int tcptest_halted(struct tcptest *t)
{
	return atomic_load(&t->stop) || atomic_load(&t->failed);
}

/* Record the test's error (the first one wins). Control thread only. */
void tcptest_fail(struct tcptest *t, int err, const char *fmt, ...)
{
	va_list ap;

	if (t->res.err)
		return;
	t->res.err = err ? err : -EIO;
	va_start(ap, fmt);
	vsnprintf(t->res.error, sizeof(t->res.error), fmt, ap);
	va_end(ap);
}

void tcptest_werr(struct tcptest_worker *w, int err, const char *fmt, ...)
{
	va_list ap;

	if (w->err)
		return;
	w->err = err ? err : -EIO;
	w->err_at = tcptest_now();
	va_start(ap, fmt);
	vsnprintf(w->error, sizeof(w->error), fmt, ap);
	va_end(ap);
	atomic_store(&w->t->failed, 1);
}
