/* The inputs and arithmetic every plan mode shares: the size grammar
 * (common/size.h), parameter counts and bytes per parameter (exact), a
 * model's bytes, nodes needed, and the figures of a model over n nodes.
 * Pure: no I/O, nothing of the coordinator. */
#include "plan_common.h"

#include <stdio.h>
#include <string.h>

#include "size.h"

struct plan_suffix {
	const char *text;
	uint64_t mult;
};

#define PLAN_K 1000ull
/* B is a billion parameters here, as model names count them (744B). */
static const struct plan_suffix plan_params_suffixes[] = {
	{"", 1},
	{"K", PLAN_K},
	{"M", 1000000ull},
	{"B", 1000000000ull},
	{"T", 1000000000000ull},
};

/* The number and its suffix from table t; the suffix's multiplier in
 * *mult. -1 not a number, -3 an unknown suffix. */
static int plan_number_suffix(const char *s, const struct plan_suffix *t,
			      size_t nt, uint64_t *mant, int *exp10,
			      uint64_t *mult)
{
	const char *end;

	if (size_number(s, mant, exp10, &end) < 0)
		return -1;
	for (size_t i = 0; i < nt; i++)
		if (!strcmp(end, t[i].text)) {
			*mult = t[i].mult;
			return 0;
		}
	return -3;
}

int plan_parse_size(const char *s, uint64_t *bytes, char *err, size_t len)
{
	/* The one grammar (size.h): 800GB is 8e11 bytes, 1K is 1024. */
	return size_parse(s, 0, PLAN_BYTES_MAX, bytes, err, len);
}

int plan_parse_params(const char *s, uint64_t *n, char *err, size_t len)
{
	uint64_t mant, mult = 1;
	int exp10, r;

	r = plan_number_suffix(s, plan_params_suffixes,
			       sizeof(plan_params_suffixes) /
				       sizeof(plan_params_suffixes[0]),
			       &mant, &exp10, &mult);
	if (r < 0) {
		snprintf(err, len,
			 "'%s' is not a number of parameters: a whole number, "
			 "or with K, M, B (billion) or T, e.g. 744B, 1.6T, "
			 "70e9",
			 s);
		return -1;
	}
	r = size_scale(mant, mult, exp10, PLAN_PARAMS_MAX, 0, n);
	if (r == -1)
		snprintf(err, len, "'%s' is not a whole number of parameters",
			 s);
	else if (r == -2)
		snprintf(err, len, "'%s' is more than 10^15 parameters", s);
	else if (!*n)
		snprintf(err, len, "'%s': no parameters", s);
	return r < 0 || !*n ? -1 : 0;
}

int plan_parse_bpp(const char *s, uint64_t *num, uint64_t *den, char *err,
		   size_t len)
{
	const char *end;
	uint64_t mant, d = 1;
	int exp10;

	if (size_number(s, &mant, &exp10, &end) < 0 || *end)
		goto bad;
	/* 2.50 is 25/10: trailing zeros say nothing. */
	while (exp10 < 0 && mant && mant % 10 == 0) {
		mant /= 10;
		exp10++;
	}
	if (exp10 < -6)
		goto bad;
	for (; exp10 < 0; exp10++)
		d *= 10;
	for (; exp10 > 0 && mant <= PLAN_BPP_MAX; exp10--)
		mant *= 10;
	if (!mant || mant > PLAN_BPP_MAX * d)
		goto bad;
	*num = mant;
	*den = d;
	return 0;
bad:
	snprintf(err, len,
		 "'%s' is not a number of bytes per parameter: more than 0, "
		 "at most %d, at most 6 decimals (e.g. 2, 2.03, 0.5)",
		 s, PLAN_BPP_MAX);
	return -1;
}

int plan_model_bytes(uint64_t params, uint64_t num, uint64_t den,
		     uint64_t *bytes)
{
	unsigned __int128 v = (unsigned __int128)params * num;

	if (!den)
		return -1;
	v = v / den + (v % den != 0);
	if (v > PLAN_BYTES_MAX)
		return -1;
	*bytes = (uint64_t)v;
	return 0;
}

uint64_t plan_nodes_needed(uint64_t model, uint64_t per_node)
{
	if (!per_node)
		return 0;
	return model / per_node + (model % per_node != 0);
}

static uint64_t plan_add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

void plan_compute(uint64_t model, const uint64_t *usable, size_t n,
		  struct plan_figures *f)
{
	memset(f, 0, sizeof(*f));
	f->n = n;
	for (size_t i = 0; i < n; i++) {
		f->total = plan_add_sat(f->total, usable[i]);
		if (!i || usable[i] < f->smallest) {
			f->smallest = usable[i];
			f->smallest_at = i;
		}
	}
	f->capacity = n && f->smallest > UINT64_MAX / n ? UINT64_MAX
							: f->smallest * n;
	f->needed = plan_nodes_needed(model, f->smallest);
	f->holds = n && model <= f->capacity;
	if (f->holds)
		f->headroom_bytes = f->capacity - model;
	else
		f->short_bytes = model - f->capacity;
}
