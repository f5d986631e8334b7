/* Small files the inventory reads, whole and trimmed (sysread.h). */
#include "sysread.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

static int sysread_vpath(char *buf, size_t len, const char *fmt, va_list ap)
{
	int n = vsnprintf(buf, len, fmt, ap);

	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int sysread_path(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = sysread_vpath(buf, len, fmt, ap);
	va_end(ap);
	return rc;
}

int sysread_file(const char *path, char *buf, size_t len)
{
	size_t used = 0;
	int fd, saved;

	if (!len) {
		errno = EINVAL;
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (used + 1 < len) {
		ssize_t n = read(fd, buf + used, len - 1 - used);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			saved = errno;
			close(fd);
			errno = saved;
			return -1;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	close(fd);
	while (used > 0 && isspace((unsigned char)buf[used - 1]))
		used--;
	buf[used] = '\0';
	return 0;
}

int sysread_at(char *buf, size_t len, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = sysread_vpath(path, sizeof(path), fmt, ap);
	va_end(ap);
	return rc < 0 ? -1 : sysread_file(path, buf, len);
}
