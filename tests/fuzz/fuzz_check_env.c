/* libFuzzer target: arbitrary bytes as an NCCL environment file for
 * ringctl check nccl-env. Checks that the parser neither crashes nor
 * leaks, that what it keeps obeys its own rules (names, bounds, control
 * characters, one entry per name), and that the lint and the rendering
 * of the reference cluster take any environment it accepts. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringctl/check_env.h"
#include "../unit/testgb10.h"

static void fuzz_check_env_var(const struct check_env_set *set, size_t i)
{
	const struct check_env_var *v = &set->v[i];
	size_t nl = strlen(v->name), vl = strlen(v->value);

	if (!nl || nl >= CHECK_ENV_NAME_MAX || vl >= CHECK_ENV_VALUE_MAX ||
	    (v->name[0] >= '0' && v->name[0] <= '9') || !v->line ||
	    v->prev_line >= v->line)
		__builtin_trap();
	for (size_t k = 0; k < nl; k++) {
		char c = v->name[k];

		if (c != '_' && !(c >= 'A' && c <= 'Z') &&
		    !(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9'))
			__builtin_trap();
	}
	for (size_t k = 0; k < vl; k++)
		if ((unsigned char)v->value[k] < 0x20 ||
		    (unsigned char)v->value[k] == 0x7f)
			__builtin_trap();
	/* A later assignment replaced an earlier one: one entry per name
	 * in each scope (before the blocks, each node's block). */
	if (v->block < -1 || v->block >= (int)set->n_blocks)
		__builtin_trap();
	for (size_t j = 0; j < i; j++)
		if (set->v[j].block == v->block &&
		    !strcmp(set->v[j].name, v->name))
			__builtin_trap();
	if (v->block < 0 && check_env_get(set, v->name) != v->value)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum writer_format fmts[] = {WRITER_PLAIN, WRITER_KEYVALUE,
						  WRITER_JSON};
	struct check_env_set set;
	struct check_env_result *res;
	struct testgb10 tp;
	char err[512];

	if (check_env_parse((const char *)data, size, "fuzz", &set, err,
			    sizeof(err)) < 0) {
		/* One line naming the input. */
		if (strncmp(err, "fuzz:", 5) || strchr(err, '\n') || set.v ||
		    set.n || set.blocks || set.n_blocks)
			__builtin_trap();
		return 0;
	}
	for (size_t i = 0; i < set.n; i++)
		fuzz_check_env_var(&set, i);
	res = calloc(1, sizeof(*res));
	if (!res)
		goto out;
	testgb10_init(&tp);
	testgb10_inventories(&tp);
	/* With the GID tables, or (odd sizes) against the survey's index. */
	check_env_lint(&set, &tp.t, NULL, size & 1 ? NULL : tp.invp, res);
	if (res->n > CHECK_ENV_ISSUES_MAX || res->problems > res->counted)
		__builtin_trap();
	for (size_t k = 0; k < sizeof(fmts) / sizeof(fmts[0]); k++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		struct writer *w = f ? writer_new(f, fmts[k]) : NULL;

		if (w)
			check_env_render(w, f, fmts[k], "fuzz", &tp.t, res);
		if (f)
			fclose(f);
		/* Text from the input cannot break the output's lines. */
		if (buf && memchr(buf, '\0', len))
			__builtin_trap();
		free(buf);
	}
	free(res);
out:
	check_env_set_free(&set);
	return 0;
}
