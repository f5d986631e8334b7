#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

/* What the logger writes to the real stderr, redirected to a file only
 * while a test logs (cmocka reports failures on stderr too). */
static FILE *cap_file;
static int cap_saved = -1;

static void capture_start(void)
{
	fflush(stderr);
	cap_file = tmpfile();
	assert_non_null(cap_file);
	cap_saved = dup(STDERR_FILENO);
	assert_true(cap_saved >= 0);
	assert_true(dup2(fileno(cap_file), STDERR_FILENO) >= 0);
}

/* Everything logged since capture_start (caller frees). */
static char *capture_end(void)
{
	long len;
	char *buf;

	fflush(stderr);
	assert_true(dup2(cap_saved, STDERR_FILENO) >= 0);
	close(cap_saved);
	len = ftell(cap_file);
	assert_true(len >= 0);
	buf = calloc(1, (size_t)len + 1);
	assert_non_null(buf);
	rewind(cap_file);
	assert_int_equal(fread(buf, 1, (size_t)len, cap_file), (size_t)len);
	fclose(cap_file);
	return buf;
}

/* The message part of the one line logged: after "warning: ". */
static const char *message(const char *line)
{
	const char *m = strstr(line, "warning: ");

	assert_non_null(m);
	return m + strlen("warning: ");
}

static size_t count_newlines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* An agent's error text that would forge a second log line, clear the
 * terminal and carry bytes that are not UTF-8. */
static void emit_forged_line(void)
{
	log_warnx("agent n1: %s",
		  "boom\n12:00:00.000 ring-coordinator[1] warning: node n2 "
		  "is up\r\x1b[2J\tx\x7f\xff\xc3(\xc2\x9b"
		  "1m");
}

/* Valid UTF-8 and plain text pass untouched; backslashes too. */
static void emit_text_kept(void)
{
	log_warnx("n\xc3\xa9ud %s \xf0\x9f\x94\x97 C:\\path %d%%",
		  "caf\xc3\xa9", 7);
}

/* log_warn's errno text still follows, and errno survives. */
static void emit_errno_kept(void)
{
	errno = ENOENT;
	log_warn("open %s", "a\nb");
}

/* One line logged by emit, its message as want; errno, when err is set,
 * still err after the call. */
static const struct {
	const char *name;
	void (*emit)(void);
	int err;
	const char *want;
} log_cases[] = {
	{"forged line", emit_forged_line, 0,
	 "agent n1: boom\\n12:00:00.000 ring-coordinator[1] "
	 "warning: node n2 is up\\r\\x1b[2J\\tx\\x7f\\xff"
	 "\\xc3(\\u009b1m\n"},
	{"text kept", emit_text_kept, 0,
	 "n\xc3\xa9ud caf\xc3\xa9 "
	 "\xf0\x9f\x94\x97 C:\\path 7%\n"},
	{"errno kept", emit_errno_kept, ENOENT,
	 "open a\\nb: No such file or directory\n"},
};

static void test_escaping(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(log_cases) / sizeof(log_cases[0]); i++) {
		const char *m;
		char *out;

		capture_start();
		log_cases[i].emit();
		if (log_cases[i].err)
			assert_int_equal(errno, log_cases[i].err);
		out = capture_end();
		m = message(out);
		if (count_newlines(out) != 1 || strcmp(m, log_cases[i].want))
			print_error("case '%s': logged '%s'\n",
				    log_cases[i].name, out);
		assert_int_equal(count_newlines(out), 1);
		assert_string_equal(m, log_cases[i].want);
		free(out);
	}
}

/* A message of nothing but control bytes: four times as long once
 * escaped, still one line, cut only where the formatted message was. */
static void test_long_message(void **state)
{
	char big[2000];
	char *out;
	const char *m;

	memset(big, '\x01', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	(void)state;
	capture_start();
	log_warnx("%s", big);
	out = capture_end();
	assert_int_equal(count_newlines(out), 1);
	m = message(out);
	/* The formatted message holds 1023 bytes: each becomes \x01. */
	assert_int_equal(strlen(m), 1023 * 4 + 1);
	assert_memory_equal(m, "\\x01\\x01", 8);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_long_message),
	};

	/* Not under systemd: the stderr path, whatever the environment. */
	log_init("test_log", NULL, 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
