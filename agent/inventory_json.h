/* The inventory as JSON, for ring-agent --print-inventory. protobuf-c has
 * no JSON: this walks the message descriptors, so every field of the
 * schema is printed under its .proto name, new ones included. */
#ifndef RING_INVENTORY_JSON_H
#define RING_INVENTORY_JSON_H

#include <stdio.h>

#include "ring.pb-c.h"

/* One JSON object and a newline to f. Strings are escaped (quote,
 * backslash, control characters, bytes that are not UTF-8 as \u00XX);
 * bytes fields are hex strings; a double that is not finite is null;
 * 64-bit integers are numbers. 0, or -1 with errno on a write error. */
int inventory_json_write(FILE *f, const ProtobufCMessage *m);

/* The same into a malloc()ed NUL-terminated string (NULL, errno set). */
char *inventory_json_string(const ProtobufCMessage *m);

#endif
