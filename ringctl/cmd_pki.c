/* ringctl pki: the cluster CA and its certificates, files only. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "error_report.h"
#include "pki.h"

static int ringctl_parse_days(const char *s, unsigned *days)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (!*s || *end || v < 1 || v > 36500)
		return -1;
	*days = (unsigned)v;
	return 0;
}

int ringctl_pki(const struct ringctl *rc, int argc, char **argv)
{
	const char *pos[2] = {NULL, NULL}, *cn = "ringd cluster CA";
	enum pki_role role = PKI_ROLE_NODE;
	char err[512], serial[PKI_SERIAL_LEN];
	const char *dir, *name;
	unsigned days = 0;
	int i, init, npos = 0;

	if (argc < 1)
		return error_report_usage(
			"pki needs 'init DIR' or 'issue DIR NAME'");
	init = !strcmp(argv[0], "init");
	if (!init && strcmp(argv[0], "issue"))
		return error_report_usage("unknown pki command '%s'", argv[0]);
	/* Options may come before or after DIR and NAME. */
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--days") && i + 1 < argc) {
			if (ringctl_parse_days(argv[++i], &days) < 0)
				return error_report_usage(
					"--days: '%s' is not 1..36500",
					argv[i]);
		} else if (init && !strcmp(argv[i], "--cn") && i + 1 < argc) {
			cn = argv[++i];
		} else if (!init && !strcmp(argv[i], "--coordinator")) {
			role = PKI_ROLE_COORDINATOR;
		} else if (argv[i][0] != '-' && npos < (init ? 1 : 2)) {
			pos[npos++] = argv[i];
		} else {
			return error_report_usage("unexpected argument '%s'",
						  argv[i]);
		}
	}
	if (npos < 1)
		return error_report_usage("pki %s needs a DIR", argv[0]);
	if (!init && npos < 2)
		return error_report_usage("pki issue needs a NAME");
	dir = pos[0];
	name = pos[1];
	if (init ? pki_init(dir, cn, days ? days : 3650, err, sizeof(err))
		 : pki_issue(dir, name, role, days ? days : 825, serial,
			     sizeof(serial), err, sizeof(err))) {
		error_report(EXIT_TROUBLE, "pki", dir, NULL, "%s", err);
		return EXIT_TROUBLE;
	}
	if (rc->fmt != WRITER_PLAIN) {
		/* The same facts, with the paths as fields. */
		char crt[PATH_MAX], key[PATH_MAX];
		struct writer *w = writer_new(stdout, rc->fmt);

		snprintf(crt, sizeof(crt), "%s/%s.crt", dir,
			 init ? "ca" : name);
		snprintf(key, sizeof(key), "%s/%s.key", dir,
			 init ? "ca" : name);
		writer_str(w, "created", init ? "ca" : "certificate");
		if (!init) {
			writer_str(w, "name", name);
			writer_str(w, "role",
				   role == PKI_ROLE_COORDINATOR ? "coordinator"
								: "node");
			writer_str(w, "serial", serial);
		}
		writer_str(w, "certificate", crt);
		writer_str(w, "key", key);
		writer_finish(w);
	} else if (init) {
		printf("created CA %s/ca.crt (key %s/ca.key)\n", dir, dir);
	} else {
		/* The serial is what 'deny_serial' names to revoke it. */
		printf("issued %s/%s.crt (key %s/%s.key), %s certificate, "
		       "serial %s\n",
		       dir, name, dir, name,
		       role == PKI_ROLE_COORDINATOR ? "coordinator" : "node",
		       serial);
	}
	return 0;
}
