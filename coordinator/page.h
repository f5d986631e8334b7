/* The read-only page of the ring on the metrics listener (GET / and GET
 * /ring.svg): the picture of svg.h, drawn from the same inputs as the
 * exposition, in an HTML page that reloads itself every PAGE_REFRESH_S
 * seconds. No script, no form, no request that changes anything. A site
 * of several rings: the overview, its tiles linking to each ring's page
 * (/?ring=ID; /ring.svg?ring=ID its picture alone). */
#ifndef RING_PAGE_H
#define RING_PAGE_H

#include <event2/buffer.h>

struct metrics_src;

#define PAGE_REFRESH_S 5

/* Bytes of a ring id (RingView.id: [A-Za-z0-9._-], 1 to 63). */
#define PAGE_RING_MAX 64

/* The query string of / and /ring.svg: none (NULL or ""): 0, the whole
 * site; exactly "ring=ID" with a valid id: 1, the id copied to
 * ring[PAGE_RING_MAX]; anything else -1 (the page answers 404). */
int page_query(const char *query, char *ring);

/* Append the picture (html 0) or the page holding it (html 1) to out:
 * the site's, or ring's alone (NULL: the site). 0, or -1 with errno
 * (ENOMEM; ENOENT: no such ring). */
int page_render(struct evbuffer *out, const struct metrics_src *src, int html,
		const char *ring);

#endif
