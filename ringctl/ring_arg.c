/* ringctl's --ring ID: taken out of a command's words and checked
 * (ring_arg.h). */
#include <stdio.h>
#include <string.h>

#include "ring_arg.h"

int ring_arg_valid(const char *id)
{
	size_t n = id ? strlen(id) : 0;

	/* As node names: a leading '-' would read as an option. */
	if (n < 1 || n > RING_ARG_ID_MAX || id[0] == '-' || id[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)id[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			return 0;
	}
	return 1;
}

/* One id: well formed, not named before, room for it. */
static int ring_arg_add(const char *id, const char **ids, size_t max, size_t *n,
			char *err, size_t len)
{
	if (!ring_arg_valid(id)) {
		snprintf(err, len,
			 "--ring: '%.80s' is not a ring id (1-%d of A-Z a-z "
			 "0-9 . _ -, as 'ringctl status' lists them)",
			 id, RING_ARG_ID_MAX);
		return -1;
	}
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(ids[i], id)) {
			snprintf(err, len, "--ring: '%s' named twice", id);
			return -1;
		}
	if (*n >= max) {
		if (max == 1)
			snprintf(err, len,
				 "--ring names one ring here, not also '%s'",
				 id);
		else
			snprintf(err, len, "--ring: more than %zu rings", max);
		return -1;
	}
	ids[(*n)++] = id;
	return 0;
}

int ring_arg_take(int *argc, char **argv, const char **ids, size_t max,
		  size_t *n, char *err, size_t len)
{
	int out = 0;

	*n = 0;
	for (int i = 0; i < *argc; i++) {
		const char *id;

		if (!strcmp(argv[i], "--ring")) {
			if (i + 1 >= *argc) {
				snprintf(err, len,
					 "--ring needs a ring ID (as 'ringctl "
					 "status' lists them)");
				return -1;
			}
			id = argv[++i];
		} else if (!strncmp(argv[i], "--ring=", 7)) {
			id = argv[i] + 7;
		} else {
			argv[out++] = argv[i];
			continue;
		}
		if (ring_arg_add(id, ids, max, n, err, len) < 0)
			return -1;
	}
	*argc = out;
	return 0;
}
