/* ringctl's --ring ID (issue 24: a site of many rings): taken out of a
 * command's words wherever it stands (--ring ID or --ring=ID), each id
 * checked as a node name is (1-63 of A-Z a-z 0-9 . _ -, not starting with
 * '-' or '.'), named once, as often as the command allows. */
#ifndef RING_RING_ARG_H
#define RING_RING_ARG_H

#include <stddef.h>

#define RING_ARG_ID_MAX 63
/* Rings one survey may name (SurveyRequest.rings). */
#define RING_ARG_MAX 256

/* 1 when id is a well-formed ring id, else 0. */
int ring_arg_valid(const char *id);

/* Every --ring out of argv[0..*argc) (the rest kept in order, *argc
 * updated), its ids into ids (at most max; *n of them). 0, or -1 with why
 * in err naming the value: no value, a malformed id, one named twice,
 * more than max. */
int ring_arg_take(int *argc, char **argv, const char **ids, size_t max,
		  size_t *n, char *err, size_t len);

#endif
