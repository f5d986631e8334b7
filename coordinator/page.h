/* The read-only page of the ring on the metrics listener (GET / and GET
 * /ring.svg): the picture of svg.h, drawn from the same inputs as the
 * exposition, in an HTML page that reloads itself every PAGE_REFRESH_S
 * seconds. No script, no form, no request that changes anything. */
#ifndef RING_PAGE_H
#define RING_PAGE_H

#include <event2/buffer.h>

struct metrics_src;

#define PAGE_REFRESH_S 5

/* Append the picture (html 0) or the page holding it (html 1) to out.
 * 0, or -1 with errno (ENOMEM). */
int page_render(struct evbuffer *out, const struct metrics_src *src, int html);

#endif
