/* libFuzzer target for the picture of the ring: the input is a packed
 * StatusReply (what a coordinator, or anything on the control socket's
 * path, could send ringctl). Whatever decodes must draw: one document,
 * under SVG_MAX_BYTES, all of it UTF-8, no control byte but newlines,
 * every '<' a tag's and every '>' the end of one (text and attribute
 * values escaped), starting with the svg element and ending with its
 * close. A site of rings (issue 24) is drawn also as the page draws it
 * (tiles linked) and as one ring alone (its first, and one that is no
 * ring's: ENOENT, nothing drawn). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svg.h"
#include "text.h"

#include "fuzzcheck.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One document as the header says. */
static void check_doc(char *doc, size_t len)
{
	size_t open = 0, close = 0;
	int in_tag = 0;

	fuzz_check(doc);
	fuzz_check(len < SVG_MAX_BYTES && strlen(doc) == len);
	fuzz_check(
		!strncmp(doc, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39));
	fuzz_check(len > 7 && !strcmp(doc + len - 7, "</svg>\n"));
	for (size_t i = 0; i < len;) {
		size_t n =
			text_utf8_len((const unsigned char *)doc + i, len - i);

		fuzz_check(n > 0);
		fuzz_check((unsigned char)doc[i] >= 0x20 || doc[i] == '\n');
		fuzz_check(doc[i] != 0x7f);
		if (doc[i] == '<') {
			fuzz_check(!in_tag);
			in_tag = 1;
			open++;
		} else if (doc[i] == '>') {
			fuzz_check(in_tag);
			in_tag = 0;
			close++;
		}
		i += n;
	}
	fuzz_check(open == close && !in_tag);
	free(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Ring__StatusReply *r = ring__status_reply__unpack(NULL, size, data);
	struct svg_opts page = {.link = "/?ring="}, none = {.ring = "-"};
	size_t len = 0;
	char *doc;

	if (!r)
		return 0;
	doc = svg_render(r, &len);
	check_doc(doc, len);
	doc = svg_render_opts(r, &page, &len);
	check_doc(doc, len);
	if (r->topology && r->topology->n_rings && *r->topology->rings[0]->id) {
		struct svg_opts one = {.ring = r->topology->rings[0]->id};

		doc = svg_render_opts(r, &one, &len);
		check_doc(doc, len);
	}
	/* "-" is no valid id; a hostile reply may still hold it */
	errno = 0;
	doc = svg_render_opts(r, &none, &len);
	if (doc)
		check_doc(doc, len);
	else
		fuzz_check(errno == ENOENT);
	ring__status_reply__free_unpacked(r, NULL);
	return 0;
}
