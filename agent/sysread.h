/* Small files the inventory reads (sysfs attributes, procfs lines, the
 * capture's copies) and the paths they sit at: one reader for the agent's
 * modules, so each reads a file the same way. */
#ifndef RING_SYSREAD_H
#define RING_SYSREAD_H

#include <stddef.h>

/* fmt's path into buf; 0, or -1 with ENAMETOOLONG when it does not fit. */
int sysread_path(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The whole file at path (up to len - 1 bytes), trailing whitespace cut.
 * 0, or -1 with errno (absent, unreadable). */
int sysread_file(const char *path, char *buf, size_t len);
/* sysread_file at a formatted path. */
int sysread_at(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
