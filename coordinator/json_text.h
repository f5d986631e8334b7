/* JSON text for what the coordinator posts and pipes (the sinks, the
 * Alertmanager client): strings escaped, "key":"value" members, RFC 3339
 * times with milliseconds. One writer, so every receiver gets the same
 * escaping. */
#ifndef RING_JSON_TEXT_H
#define RING_JSON_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

/* A JSON string: ", \ and control characters escaped (\u00XX), valid
 * UTF-8 copied, any other byte U+FFFD (receivers refuse what is not
 * UTF-8). */
void json_text_str(struct evbuffer *b, const char *src);
/* "key":"value", with a leading comma unless first. */
void json_text_kv(struct evbuffer *b, int first, const char *key,
		  const char *val);
/* RFC 3339 UTC with milliseconds; for ms 0 (or a time gmtime refuses)
 * zero, or "" when zero is NULL. */
void json_text_time(char *buf, size_t len, uint64_t ms, const char *zero);

#endif
