/* Shared by the unit tests that need real sockets in a private network
 * namespace (test_probe, test_lldp): a checked shell step, a check that
 * returns from the child, and running the child in a fork (as a cmocka
 * test: TESTNS_UNIT_TEST). Header-only, so
 * each test program stays one source file. */
#ifndef RING_TESTNS_H
#define RING_TESTNS_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* In a child: fail it (exit status 1) with the place and the condition. */
#define NS_CHECK(cond)                                                         \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
				__LINE__, #cond);                              \
			return 1;                                              \
		}                                                              \
	} while (0)

/* Run a shell command; 0, or nonzero (said on stderr) when it failed. */
static inline int testns_sh(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static inline int testns_sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "failed: %s\n", cmd);
		return st ? st : -1;
	}
	return 0;
}

/* Run child() in a fork and give its exit status. A child returns 77 when
 * it cannot have what it needs (no root, no CLONE_NEWNET, no ip(8)):
 * that is a skip only where RINGD_ALLOW_SKIP=1 says skips are fine, and
 * otherwise a failure, so that `make check` cannot pass without it.
 * Returns 0 (passed), 77 (skip allowed) or another status (failed). */
static inline int testns_run(int (*child)(void))
{
	const char *allow = getenv("RINGD_ALLOW_SKIP");
	pid_t pid;
	int st;

	if (geteuid() != 0)
		st = 77 << 8;
	else {
		fflush(stdout);
		fflush(stderr);
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0)
			_exit(child());
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
			return 1;
	}
	if (WEXITSTATUS(st) != 77)
		return WEXITSTATUS(st);
	if (allow && !strcmp(allow, "1"))
		return 77;
	fprintf(stderr, "needs root, a private network namespace and ip(8); "
			"set RINGD_ALLOW_SKIP=1 to skip\n");
	return 1;
}

/* The cmocka test around a namespace child: a skip where testns_run
 * allows one, otherwise the child must pass. Include <cmocka.h> first;
 * list it with TESTNS_UNIT_TEST(child). */
struct testns_child {
	int (*run)(void);
};

static inline void test_namespace(void **state)
{
	const struct testns_child *c = *state;
	int rc = testns_run(c->run);

	if (rc == 77)
		skip();
	else
		assert_int_equal(rc, 0);
}

#define TESTNS_UNIT_TEST(child)                                                \
	cmocka_unit_test_prestate(test_namespace, &(struct testns_child){child})

#endif
