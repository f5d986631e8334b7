/* Text from peers: the one UTF-8 check that the log and ringctl's writer
 * share before they escape what they print. */
#ifndef RING_TEXT_H
#define RING_TEXT_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (n bytes left, n > 0), 0 if
 * invalid: overlong forms, surrogates and code points past U+10FFFF are
 * refused. */
size_t text_utf8_len(const unsigned char *s, size_t n);

#endif
