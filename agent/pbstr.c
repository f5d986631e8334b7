/* Strings of the agent's protobuf messages (pbstr.h). */
#include "pbstr.h"

#include <stdlib.h>
#include <string.h>

#include <protobuf-c/protobuf-c.h>

void pbstr_free(char *s)
{
	if (s && s != protobuf_c_empty_string)
		free(s);
}

int pbstr_set(char **dst, const char *s)
{
	char *copy = (char *)protobuf_c_empty_string;

	if (s && *s) {
		copy = strdup(s);
		if (!copy)
			return -1;
	}
	pbstr_free(*dst);
	*dst = copy;
	return 0;
}
