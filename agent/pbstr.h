/* Strings of the agent's protobuf messages: a fresh message's point at
 * protobuf_c_empty_string, everything else was strdup()ed by the agent.
 * One pair of helpers for every module that fills a message. */
#ifndef RING_PBSTR_H
#define RING_PBSTR_H

/* Free s unless it is protobuf-c's shared empty string (or NULL). */
void pbstr_free(char *s);
/* *dst = a copy of s (the empty string for NULL or ""), the old value
 * freed. 0, or -1 (ENOMEM) with *dst unchanged. */
int pbstr_set(char **dst, const char *s);

#endif
