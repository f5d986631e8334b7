/* The exposition's writer (text format 0.0.4) for metrics_expo.c and
 * metrics_rings.c: a family's HELP and TYPE, samples with escaped label
 * values, and the `ring` label of the sample being written (issue 24),
 * appended last to every sample of a per-node, per-edge or per-alert
 * family (r->ring; "" where the subject is in no ring). */
#ifndef RING_METRICS_TEXT_H
#define RING_METRICS_TEXT_H

#include <event2/buffer.h>

struct metrics_src;
struct node;
struct mr_rings;

/* One rendering: the output and whether anything failed. */
struct mr {
	struct evbuffer *b;
	int err;
	const struct metrics_src *src;
	struct node **nodes; /* sorted */
	unsigned n_nodes;
	/* Which ring each node and edge is in (metrics_rings.h). */
	struct mr_rings *rings;
	/* The ring label of the samples written now; NULL: the family has
	 * none (a site's or the coordinator's). mr_head resets it. */
	const char *ring;
};

void mr_head_type(struct mr *r, const char *name, const char *help,
		  const char *type);
/* A gauge's head. */
void mr_head(struct mr *r, const char *name, const char *help);
/* One sample: name{k1="v1",...[,ring="R"]} value; the labels are pairs
 * of strings ended by NULL, then the ring label when r->ring is set. A
 * value that is not finite is no sample. */
void mr_sample(struct mr *r, const char *name, double v, ...)
	__attribute__((sentinel));
/* The fixed sets labels are mapped into: topology classes, health
 * states (health_name's words), NULL-ended. */
extern const char *const mr_kinds[];
extern const char *const mr_health[];

/* s, or "" for NULL. */
const char *mr_str(const char *s);
/* s if it is one of the NULL-ended set, else dflt. */
const char *mr_in_set(const char *s, const char *const *set, const char *dflt);

#endif
