/* The report's message arena (msg_arena.h). */
#include "msg_arena.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *msg_arena_alloc(struct msg_arena *a, size_t size)
{
	void *m;

	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 64;
		void **np = realloc(a->p, cap * sizeof(*np));

		if (!np)
			return NULL;
		a->p = np;
		a->cap = cap;
	}
	m = calloc(1, size ? size : 1);
	if (m)
		a->p[a->n++] = m;
	return m;
}

char *msg_arena_printf(struct msg_arena *a, const char *fmt, ...)
{
	char buf[512];
	char *s;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	s = msg_arena_alloc(a, strlen(buf) + 1);
	if (s)
		memcpy(s, buf, strlen(buf) + 1);
	return s ? s : (char *)"";
}

void msg_arena_free(struct msg_arena *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->p[i]);
	free(a->p);
}
