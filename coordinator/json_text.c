/* JSON text for the sinks and the Alertmanager client. */
#include "json_text.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "text.h"

void json_text_str(struct evbuffer *b, const char *src)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t n = strlen(src);

	evbuffer_add(b, "\"", 1);
	while (n) {
		size_t k = text_utf8_len(s, n);

		if (k == 1 && (*s < 0x20 || *s == 0x7f))
			evbuffer_add_printf(b, "\\u%04x", *s);
		else if (k == 1 && (*s == '"' || *s == '\\'))
			evbuffer_add_printf(b, "\\%c", *s);
		else if (k >= 1)
			evbuffer_add(b, s, k);
		else
			evbuffer_add(b, "\xef\xbf\xbd", 3);
		if (!k)
			k = 1;
		s += k;
		n -= k;
	}
	evbuffer_add(b, "\"", 1);
}

void json_text_kv(struct evbuffer *b, int first, const char *key,
		  const char *val)
{
	evbuffer_add_printf(b, "%s\"%s\":", first ? "" : ",", key);
	json_text_str(b, val);
}

void json_text_time(char *buf, size_t len, uint64_t ms, const char *zero)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	size_t n;

	if (!ms || !gmtime_r(&t, &tm)) {
		snprintf(buf, len, "%s", zero ? zero : "");
		return;
	}
	n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%03uZ", (unsigned)(ms % 1000));
}
