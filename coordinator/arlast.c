/* See arlast.h. */
#include "arlast.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "log.h"
#include "reason.h"
#include "validate.h"

/* A time no run takes (an hour is the job's deadline): past it, the
 * figure is not a measurement. */
#define ARLAST_TIME_US_MAX 3.6e9

static int arlast_name_ok(const char *s)
{
	return s && *s && strlen(s) <= 63 && validate_text(s, 63);
}

int arlast_check(const Ring__AllreduceReport *r, char *why, size_t len)
{
	if (!r)
		return reason_fail(why, len, "no report");
	if (validate_message(&r->base, why, len) < 0)
		return -1;
	if (r->error && *r->error)
		return reason_fail(why, len, "a failed run");
	if (r->n_order < 2 || r->n_order > ARLIMITS_RANKS_MAX)
		return reason_fail(why, len, "%zu ranks (2 to %d)", r->n_order,
				   ARLIMITS_RANKS_MAX);
	for (size_t i = 0; i < r->n_order; i++)
		if (!arlast_name_ok(r->order[i]))
			return reason_fail(why, len,
					   "rank %zu's node name is not 1-63 "
					   "printable bytes",
					   i);
	if (r->n_sizes < 1 || r->n_sizes > ARLIMITS_SIZES_MAX)
		return reason_fail(why, len, "%zu sizes (1 to %d)", r->n_sizes,
				   ARLIMITS_SIZES_MAX);
	for (size_t i = 0; i < r->n_sizes; i++) {
		const Ring__AllreduceSize *s = r->sizes[i];

		if (!s || s->size < ARLIMITS_SIZE_MIN ||
		    s->size > ARLIMITS_SIZE_MAX || s->size % 4)
			return reason_fail(why, len,
					   "size %zu is not a multiple of 4 "
					   "bytes within 1 KiB..16 GiB",
					   i);
		if (!isfinite(s->time_us) || s->time_us <= 0 ||
		    s->time_us > ARLAST_TIME_US_MAX ||
		    !isfinite(s->min_time_us) || s->min_time_us < 0 ||
		    !isfinite(s->algbw_gbps) || s->algbw_gbps < 0 ||
		    !isfinite(s->busbw_gbps) || s->busbw_gbps < 0)
			return reason_fail(why, len,
					   "size %llu bytes: a time or rate "
					   "that is not a finite figure",
					   (unsigned long long)s->size);
		if (!s->verified)
			return reason_fail(why, len,
					   "size %llu bytes: not verified",
					   (unsigned long long)s->size);
	}
	if (!r->started_ms || r->finished_ms < r->started_ms)
		return reason_fail(why, len, "no time it ran");
	if (!validate_text(r->method, ARLAST_TEXT_MAX) ||
	    !validate_text(r->order_source, ARLAST_TEXT_MAX) ||
	    !validate_text(r->comparison, ARLAST_TEXT_MAX))
		return reason_fail(why, len,
				   "a text that is not printable or "
				   "longer than 1024 bytes");
	/* Per step's transport: none (older runs) or one per rank. */
	if (r->n_step_methods && r->n_step_methods != r->n_order)
		return reason_fail(why, len, "%zu step methods for %zu ranks",
				   r->n_step_methods, r->n_order);
	for (size_t i = 0; i < r->n_step_methods; i++)
		if (!validate_text(r->step_methods[i], 16))
			return reason_fail(why, len,
					   "step method %zu is not printable "
					   "or longer than 16 bytes",
					   i);
	if (r->n_notes > ARLIMITS_RANKS_MAX)
		return reason_fail(why, len, "%zu notes (at most %d)",
				   r->n_notes, ARLIMITS_RANKS_MAX);
	for (size_t i = 0; i < r->n_notes; i++)
		if (!validate_text(r->notes[i], ARLAST_TEXT_MAX))
			return reason_fail(
				why, len,
				"note %zu is not printable or longer "
				"than 1024 bytes",
				i);
	return 0;
}

int arlast_keep(struct arlast *a, const Ring__AllreduceReport *r)
{
	Ring__AllreduceReport *copy;
	char why[256];

	if (arlast_check(r, why, sizeof(why)) < 0) {
		errno = EINVAL;
		return -1;
	}
	copy = frame_copy(&r->base);
	if (!copy) {
		errno = ENOMEM;
		return -1;
	}
	/* The comparison was against an older run: not this run's figure. */
	if (a->last[r->n_order])
		ring__allreduce_report__free_unpacked(a->last[r->n_order],
						      NULL);
	a->last[r->n_order] = copy;
	return 0;
}

const Ring__AllreduceReport *arlast_other(const struct arlast *a, size_t n)
{
	const Ring__AllreduceReport *other = NULL;

	for (size_t i = 0; i <= ARLIMITS_RANKS_MAX; i++)
		if (a->last[i] && i != n &&
		    (!other || a->last[i]->finished_ms > other->finished_ms))
			other = a->last[i];
	return other;
}

size_t arlast_list(const struct arlast *a, unsigned ranks,
		   Ring__AllreduceReport **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i <= ARLIMITS_RANKS_MAX && n < max; i++)
		if (a->last[i] && (!ranks || ranks == i))
			out[n++] = a->last[i];
	return n;
}

void arlast_clear(struct arlast *a)
{
	for (size_t i = 0; i <= ARLIMITS_RANKS_MAX; i++) {
		if (a->last[i])
			ring__allreduce_report__free_unpacked(a->last[i], NULL);
		a->last[i] = NULL;
	}
}

int arlast_pack(const struct arlast *a, uint8_t **buf, size_t *len)
{
	Ring__AllreduceLastReply rep = RING__ALLREDUCE_LAST_REPLY__INIT;
	Ring__AllreduceReport *v[ARLIMITS_RANKS_MAX + 1];

	rep.reports = v;
	rep.n_reports = arlast_list(a, 0, v, ARLIMITS_RANKS_MAX + 1);
	*len = ring__allreduce_last_reply__get_packed_size(&rep);
	*buf = malloc(*len ? *len : 1);
	if (!*buf)
		return -1;
	ring__allreduce_last_reply__pack(&rep, *buf);
	return 0;
}

int arlast_unpack(struct arlast *a, const void *buf, size_t len, char *why,
		  size_t whylen)
{
	Ring__AllreduceLastReply *rep;
	int kept = 0;

	arlast_clear(a);
	/* Bounded before decoding: protobuf-c allocates what the blob
	 * claims. */
	if (len > ARLAST_BLOB_MAX)
		return reason_fail(why, whylen,
				   "%zu bytes, more than the %u a store of "
				   "ours holds",
				   len, ARLAST_BLOB_MAX);
	rep = ring__allreduce_last_reply__unpack(NULL, len, buf);
	if (!rep)
		return reason_fail(why, whylen, "%zu bytes that do not decode",
				   len);
	for (size_t i = 0; i < rep->n_reports; i++) {
		const Ring__AllreduceReport *r = rep->reports[i];
		char one[256];

		if (arlast_check(r, one, sizeof(one)) < 0) {
			log_warnx("store: saved all-reduce result %zu refused: "
				  "%s",
				  i, one);
			continue;
		}
		if (a->last[r->n_order]) {
			log_warnx("store: saved all-reduce result %zu refused: "
				  "a second run over %zu ranks",
				  i, r->n_order);
			continue;
		}
		if (arlast_keep(a, r) < 0) {
			log_warnx("store: saved all-reduce result %zu not "
				  "restored: out of memory",
				  i);
			continue;
		}
		kept++;
	}
	ring__allreduce_last_reply__free_unpacked(rep, NULL);
	return kept;
}

int arlast_save(const struct arlast *a, struct store *s, uint64_t now_ms)
{
	uint8_t *buf;
	size_t len;
	int r;

	if (arlast_pack(a, &buf, &len) < 0)
		return -1;
	r = store_put_blob(s, ARLAST_KEY, buf, len, now_ms);
	free(buf);
	return r;
}

int arlast_restore(struct arlast *a, struct store *s)
{
	void *buf = NULL;
	size_t len = 0;
	uint64_t saved = 0;
	char why[256];
	int n;

	if (store_get_blob(s, ARLAST_KEY, &buf, &len, &saved) < 0) {
		if (errno == ENOENT)
			return 0;
		log_warnx("store: cannot read the saved all-reduce results");
		return -1;
	}
	n = arlast_unpack(a, buf, len, why, sizeof(why));
	free(buf);
	if (n < 0) {
		log_warnx("store: the saved all-reduce results refused: %s; "
			  "the next run starts afresh",
			  why);
		return -1;
	}
	if (n)
		log_info("restored %d saved all-reduce result%s (the last "
			 "per number of ranks)",
			 n, n == 1 ? "" : "s");
	return n;
}
