/* Max payload size and the upstream port of a netdev's PCI device.
 *
 * sysfs has no file for the max payload size (MPS). Config space has it:
 * the capability list starts at the pointer at 0x34 (when Status bit 4
 * says there is one), each entry an id byte and a next pointer; the PCI
 * Express capability (id 0x10) has Device Control at +0x08, whose bits
 * 7:5 encode 128 << n bytes (0-5; 6 and 7 reserved). Linux lets a user
 * other than root read only the first 64 bytes of `config`, and the
 * capability sits beyond them on the devices this was written for: there
 * the figure is unreadable and the caller says what it assumes.
 *
 * The upstream port: the parent directory of the device in
 * /sys/devices is the port its link trains with (a root port, or a
 * switch's downstream port); its max_link_width is what the slot or the
 * board's wiring allows. */
#include "inventory_pcie.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PCIE_CFG_MAX 4096
#define PCIE_CAP_PTR 0x34
#define PCIE_STATUS 0x06
#define PCIE_STATUS_CAP_LIST 0x10
#define PCIE_CAP_ID_EXP 0x10
#define PCIE_DEVCTL 0x08
/* A list longer than this loops: 256 bytes hold at most 48 entries. */
#define PCIE_CAP_HOPS 48

unsigned inventory_pcie_mps(const unsigned char *cfg, size_t len)
{
	unsigned ptr, hops = 0;

	if (!cfg || len < 64 || !(cfg[PCIE_STATUS] & PCIE_STATUS_CAP_LIST))
		return 0;
	ptr = cfg[PCIE_CAP_PTR] & 0xfc;
	while (ptr >= 0x40 && hops++ < PCIE_CAP_HOPS) {
		unsigned enc;

		if ((size_t)ptr + 1 >= len)
			return 0;
		if (cfg[ptr] != PCIE_CAP_ID_EXP) {
			ptr = cfg[ptr + 1] & 0xfc;
			continue;
		}
		if ((size_t)ptr + PCIE_DEVCTL + 1 >= len)
			return 0;
		enc = (cfg[ptr + PCIE_DEVCTL] >> 5) & 0x7;
		return enc <= 5 ? 128u << enc : 0;
	}
	return 0;
}

/* Up to len bytes of path; the count read, or -1. */
static ssize_t pcie_read_file(const char *path, unsigned char *buf, size_t len)
{
	size_t used = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (used < len) {
		ssize_t r = read(fd, buf + used, len - used);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			close(fd);
			errno = e;
			return -1;
		}
		if (r == 0)
			break;
		used += (size_t)r;
	}
	close(fd);
	return (ssize_t)used;
}

/* A sysfs attribute of dir as text, trailing blanks cut; "" unreadable. */
static void pcie_attr(const char *dir, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;

	buf[0] = '\0';
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    (int)sizeof(path))
		return;
	n = pcie_read_file(path, (unsigned char *)buf, len - 1);
	if (n < 0)
		return;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
}

/* [D]DDDD:BB:DD.F, as the kernel names a PCI device's directory (a
 * domain of more than four digits behind Intel's VMD). */
static int pcie_is_addr(const char *s)
{
	static const char tail[] = ":hh:hh.h";
	size_t n = strlen(s), dom = n - (sizeof(tail) - 1);

	if (n < sizeof(tail) - 1 + 4 || dom > 8)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char want = i < dom ? 'h' : tail[i - dom];
		int hex = (s[i] >= '0' && s[i] <= '9') ||
			  (s[i] >= 'a' && s[i] <= 'f');

		if (want == 'h' ? !hex : s[i] != want)
			return 0;
	}
	return 1;
}

int inventory_pcie_read(const char *sysfs_root, const char *ifname,
			unsigned *mps, struct inventory_pcie_up *up)
{
	unsigned char *cfg;
	char link[PATH_MAX], dev[PATH_MAX], width[16];
	char *slash;
	ssize_t n;

	*mps = 0;
	memset(up, 0, sizeof(*up));
	if (snprintf(link, sizeof(link), "%s/sys/class/net/%s/device",
		     sysfs_root, ifname) >= (int)sizeof(link) ||
	    !realpath(link, dev)) {
		errno = ENOENT;
		return -1;
	}
	slash = strrchr(dev, '/');
	if (!slash || !pcie_is_addr(slash + 1)) {
		errno = ENOENT;
		return -1;
	}
	cfg = malloc(PCIE_CFG_MAX);
	if (!cfg)
		return -1;
	if (snprintf(link, sizeof(link), "%s/config", dev) <
	    (int)sizeof(link)) {
		n = pcie_read_file(link, cfg, PCIE_CFG_MAX);
		if (n > 0)
			*mps = inventory_pcie_mps(cfg, (size_t)n);
	}
	free(cfg);
	/* The parent: a port only when named like a PCI device (a root
	 * bus's directory, pci0000:00, is none). */
	*slash = '\0';
	slash = strrchr(dev, '/');
	if (!slash || !pcie_is_addr(slash + 1))
		return 0;
	snprintf(up->addr, sizeof(up->addr), "%s", slash + 1);
	pcie_attr(dev, "max_link_speed", up->max_speed, sizeof(up->max_speed));
	pcie_attr(dev, "max_link_width", width, sizeof(width));
	if (width[0] >= '1' && width[0] <= '9') {
		unsigned long w = strtoul(width, NULL, 10);

		up->max_width = w <= 32 ? (unsigned)w : 0;
	}
	return 0;
}
