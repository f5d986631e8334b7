/* ringctl: the operator's command. Exit status: 0 ok/healthy, 1 degraded,
 * 2 cannot reach the coordinator, refused request or bad usage. */
#include <stdlib.h>

#include "cli.h"
#include "client.h"
#include "error_report.h"
#include "help.h"

int main(int argc, char **argv)
{
	struct ringctl rc = {.timeout_ms = 10000, .fmt = WRITER_PLAIN};
	FILE *err = stderr, *cap;
	char **words, *text = NULL;
	size_t len = 0;
	int n, r;

	rc.sock = getenv("RINGCTL_SOCKET");
	if (!rc.sock || !*rc.sock)
		rc.sock = CLIENT_DEFAULT_SOCKET;
	words = calloc((size_t)argc + 1, sizeof(*words));
	if (!words) {
		perror("ringctl");
		return EXIT_TROUBLE;
	}
	/* Errors are reported where they happen (error_report.h), in the
	 * chosen format, to stderr as it is now. What other code still
	 * writes to stderr as "ringctl: ..." lines is gathered here for
	 * -f json and becomes one report at exit (error_report_end). Until
	 * -f is read, gather it all. */
	error_report_setup(err);
	cap = open_memstream(&text, &len);
	if (cap)
		stderr = cap;
	r = ringctl_global(&rc, argc, argv, words, &n);
	if (cap && rc.fmt != WRITER_JSON) {
		stderr = err;
		fclose(cap);
		cap = NULL;
		fwrite(text, 1, len, stderr);
		free(text);
		text = NULL;
	}
	if (r) {
		r--;
	} else if (rc.version && rc.fmt != WRITER_PLAIN) {
		struct writer *w = writer_new(stdout, rc.fmt);

		writer_str(w, "version", RING_VERSION);
		writer_finish(w);
	} else if (rc.version) {
		printf("ringctl %s\n", RING_VERSION);
	} else if (rc.help && !n)
		help_print_overview(stdout);
	else
		r = ringctl_run(&rc, n, words);
	free(words);
	if (cap) {
		stderr = err;
		fclose(cap);
	}
	error_report_end(r, text, cap ? len : 0);
	free(text);
	return r;
}
