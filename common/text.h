/* Text from peers: the one UTF-8 check that the log and ringctl's writer
 * share before they escape what they print. */
#ifndef RING_TEXT_H
#define RING_TEXT_H

#include <stddef.h>

#include "ring.pb-c.h"

/* Length of the valid UTF-8 sequence at s (n bytes left, n > 0), 0 if
 * invalid: overlong forms, surrogates and code points past U+10FFFF are
 * refused. */
size_t text_utf8_len(const unsigned char *s, size_t n);

/* An edge's name everywhere (status, findings, alerts, history, the
 * feed): "a-b"; a cable's second function pair (twins) "a-b:a_if", so
 * that the two pairs of one cable are told apart. */
void text_edge_name(char *buf, size_t len, const char *a, const char *b,
		    const char *a_if, int twin);
/* The same for a published edge. */
void text_edge_msg_name(char *buf, size_t len, const Ring__Edge *e);

/* The cable between nodes x and y, named as t publishes it (its first
 * edge joining them, whichever way round it was asked), else "x-y": the
 * one rule for a pair's name in the live overlay, the picture and ringctl. */
void text_pair_name(char *buf, size_t len, const Ring__Topology *t,
		    const char *x, const char *y);

/* A host name or numeric address a resolver may be asked for: 1..253
 * letters, digits, '.', '-', '_' or ':'. 0, or -1 with why. */
#define TEXT_HOST_NAME_MAX 253
/* Node names may hold '-', so an edge "a-b" may split at any of them:
 * fn(a, b, arg) for each way it splits, left to right (a copied, at most
 * 63 bytes as a node name; longer ones skipped). The first nonzero
 * return ends it and is returned; 0 when none. */
int text_edge_splits(const char *edge,
		     int (*fn)(const char *a, const char *b, void *arg),
		     void *arg);

int text_host_name_check(const char *name, char *why, size_t len);

#endif
