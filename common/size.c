/* The one size grammar (see size.h). */
#include "size.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "reason.h"

struct size_unit {
	const char *text;
	uint64_t mult;
};

#define SIZE_KI 1024ull
#define SIZE_K 1000ull
/* Compared after the unit's first letter is upper-cased. */
static const struct size_unit size_units[] = {
	{"", 1},
	{"B", 1},
	{"K", SIZE_KI},
	{"M", SIZE_KI << 10},
	{"G", SIZE_KI << 20},
	{"T", SIZE_KI << 30},
	{"P", SIZE_KI << 40},
	{"Ki", SIZE_KI},
	{"Mi", SIZE_KI << 10},
	{"Gi", SIZE_KI << 20},
	{"Ti", SIZE_KI << 30},
	{"Pi", SIZE_KI << 40},
	{"KiB", SIZE_KI},
	{"MiB", SIZE_KI << 10},
	{"GiB", SIZE_KI << 20},
	{"TiB", SIZE_KI << 30},
	{"PiB", SIZE_KI << 40},
	{"KB", SIZE_K},
	{"MB", 1000000ull},
	{"GB", 1000000000ull},
	{"TB", 1000000000000ull},
	{"PB", 1000000000000000ull},
};

int size_number(const char *s, uint64_t *mant, int *exp10, const char **end)
{
	const char *p = s;
	uint64_t m = 0;
	int digits = 0, frac = 0, point = 0, e = 0;

	if (!s)
		return -1;
	for (;; p++) {
		if (*p >= '0' && *p <= '9') {
			if (m > (UINT64_MAX - 9) / 10)
				return -1;
			m = m * 10 + (uint64_t)(*p - '0');
			digits++;
			frac += point;
		} else if (*p == '.' && !point) {
			/* A digit on both sides: "5." and ".5" are typos. */
			if (p == s || p[1] < '0' || p[1] > '9')
				return -1;
			point = 1;
		} else {
			break;
		}
	}
	if (!digits)
		return -1;
	if (*p == 'e' || *p == 'E') {
		const char *q = p + 1;
		int neg = 0, ed = 0;

		if (*q == '+' || *q == '-')
			neg = *q++ == '-';
		for (; *q >= '0' && *q <= '9' && ed < 3; q++, ed++)
			e = e * 10 + (*q - '0');
		if (!ed || ed > 2)
			return -1;
		p = q;
		e = neg ? -e : e;
	}
	*mant = m;
	*exp10 = e - frac;
	*end = p;
	return 0;
}

/* 128 bits: mant < 2^64 and mult <= 2^50 cannot overflow, and v stays at
 * most 10 x max. */
int size_scale(uint64_t mant, uint64_t mult, int exp10, uint64_t max,
	       int round_up, uint64_t *out)
{
	unsigned __int128 v = (unsigned __int128)mant * mult;
	int rest = 0;

	/* Floor division step by step; rest: the whole was not exact. */
	for (; exp10 < 0 && v; exp10++) {
		rest |= v % 10 != 0;
		v /= 10;
	}
	if (rest && !round_up)
		return -1;
	v += rest;
	for (; exp10 > 0 && v; exp10--) {
		if (v > max)
			return -2;
		v *= 10;
	}
	if (v > max)
		return -2;
	*out = (uint64_t)v;
	return 0;
}

/* The unit's multiplier, or 0 for none of the table's. */
static uint64_t size_unit_mult(const char *u)
{
	char t[4];
	size_t n = strlen(u);

	if (n >= sizeof(t))
		return 0;
	memcpy(t, u, n + 1);
	if (t[0] >= 'a' && t[0] <= 'z' && t[0] != 'b')
		t[0] = (char)(t[0] - 'a' + 'A');
	for (size_t i = 0; i < sizeof(size_units) / sizeof(size_units[0]); i++)
		if (!strcmp(t, size_units[i].text))
			return size_units[i].mult;
	return 0;
}

/* "1 byte", "16GiB": a bound in words. */
static const char *size_words(uint64_t v, char *buf, size_t len)
{
	char f[32];

	size_format(v, f, sizeof(f));
	if (f[strlen(f) - 1] >= '0' && f[strlen(f) - 1] <= '9')
		snprintf(buf, len, "%s byte%s", f, v == 1 ? "" : "s");
	else
		snprintf(buf, len, "%s", f);
	return buf;
}

int size_parse(const char *s, uint64_t min, uint64_t max, uint64_t *out,
	       char *err, size_t len)
{
	const char *unit;
	uint64_t mant, mult, v;
	int exp10, r;
	char a[40], b[40];

	if (size_number(s, &mant, &exp10, &unit) < 0)
		goto bad;
	mult = size_unit_mult(unit);
	if (!mult) {
		if (*unit && unit[strlen(unit) - 1] == 'b') {
			errno = EINVAL;
			if (err)
				reason_fail(err, len,
					    "'%s': a lower-case b is bits; "
					    "sizes are bytes (GB: 10^9 bytes, "
					    "GiB: 2^30 bytes)",
					    s);
			return -1;
		}
		goto bad;
	}
	/* A bare number or B counts bytes: whole; with a unit, a fraction
	 * of a byte rounds up. */
	r = size_scale(mant, mult, exp10, max, mult > 1, &v);
	if (r == -1) {
		errno = EINVAL;
		if (err)
			reason_fail(err, len,
				    "'%s' is not a whole number of bytes", s);
		return -1;
	}
	if (r == -2 || v < min) {
		errno = ERANGE;
		if (err)
			reason_fail(err, len, "'%s' is out of range (%s..%s)",
				    s, size_words(min, a, sizeof(a)),
				    size_words(max, b, sizeof(b)));
		return -1;
	}
	*out = v;
	return 0;
bad:
	errno = EINVAL;
	if (err)
		reason_fail(err, len, "'%s' is not a size: " SIZE_FORMS,
			    s ? s : "");
	return -1;
}

int size_parse_list(const char *s, uint64_t min, uint64_t max, uint64_t *out,
		    size_t max_n, size_t *n, char *err, size_t len)
{
	const char *p = s, *comma, *start[64];
	size_t k = 0, il, ol;

	if (!s || !*s)
		return reason_fail(err, len, "'%s': an empty list of sizes",
				   s ? s : "");
	for (;; p = comma + 1) {
		char item[64];

		comma = strchr(p, ',');
		il = comma ? (size_t)(comma - p) : strlen(p);
		if (!il)
			return reason_fail(err, len,
					   "'%s': an empty item (no size "
					   "between commas)",
					   s);
		if (il >= sizeof(item))
			return reason_fail(err, len, "'%.*s' is not a size",
					   (int)(sizeof(item) - 1), p);
		memcpy(item, p, il);
		item[il] = '\0';
		if (k == max_n || k == sizeof(start) / sizeof(start[0]))
			return reason_fail(err, len,
					   "'%s': more than %zu sizes", s,
					   max_n);
		if (size_parse(item, min, max, &out[k], err, len) < 0)
			return -1;
		start[k] = p;
		for (size_t j = 0; j < k; j++) {
			if (out[j] != out[k])
				continue;
			ol = strcspn(start[j], ",");
			if (ol == il && !memcmp(start[j], item, il))
				return reason_fail(err, len,
						   "'%s' is given twice: "
						   "give each size once",
						   item);
			return reason_fail(err, len,
					   "'%s' is '%.*s' again (%llu "
					   "bytes): give each size once",
					   item, (int)ol, start[j],
					   (unsigned long long)out[k]);
		}
		k++;
		if (!comma)
			break;
	}
	*n = k;
	return 0;
}

const char *size_format(uint64_t v, char *buf, size_t len)
{
	static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
	int u = -1;

	while (v && u < 4 && !(v % 1024)) {
		v >>= 10;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%llu", (unsigned long long)v);
	else
		snprintf(buf, len, "%llu%s", (unsigned long long)v, unit[u]);
	return buf;
}
