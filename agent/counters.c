/* Port counters: sysfs statistics of the data interfaces and their RDMA
 * ports' data counters, rates against the previous sample (counters.h). */
#include "counters.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What the next sample's rates are computed against. */
struct counters_prev {
	char name[IFNAMSIZ];
	uint64_t rx_bytes, tx_bytes;
};

struct counters {
	char root[PATH_MAX];
	uint64_t last_ms; /* the previous sample; 0 = none */
	struct counters_prev prev[COUNTERS_MAX_PORTS];
	size_t n_prev;
	/* The report and what it points to. */
	Ring__CountersReport report;
	Ring__PortCounters ports[COUNTERS_MAX_PORTS];
	Ring__PortCounters *ptrs[COUNTERS_MAX_PORTS];
	char names[COUNTERS_MAX_PORTS][IFNAMSIZ];
	char rdma[COUNTERS_MAX_PORTS][64];
	counters_listening_fn *listening;
	void *listening_arg;
};

struct counters *counters_new(const char *sysfs_root)
{
	struct counters *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if (sysfs_root && (size_t)snprintf(c->root, sizeof(c->root), "%s",
					   sysfs_root) >= sizeof(c->root)) {
		free(c);
		errno = ENAMETOOLONG;
		return NULL;
	}
	return c;
}

void counters_set_listening(struct counters *c, counters_listening_fn *fn,
			    void *arg)
{
	c->listening = fn;
	c->listening_arg = arg;
}

void counters_free(struct counters *c)
{
	free(c);
}

int counters_read(const char *path, uint64_t *out)
{
	char buf[32], *end;
	unsigned long long v;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	do
		n = read(fd, buf, sizeof(buf) - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0) {
		errno = n ? errno : EINVAL;
		return -1;
	}
	buf[n] = '\0';
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || end == buf || buf[0] == '-' || (*end && *end != '\n')) {
		errno = EINVAL;
		return -1;
	}
	*out = v;
	return 0;
}

static int counters_read_stat(const struct counters *c, const char *ifname,
			      const char *stat, uint64_t *out)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path),
			 "%s/sys/class/net/%s/statistics/%s", c->root, ifname,
			 stat);

	if (n < 0 || (size_t)n >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return counters_read(path, out);
}

/* A file of /sys/class/net/IF/ (carrier, carrier_changes). */
static int counters_read_link(const struct counters *c, const char *ifname,
			      const char *file, uint64_t *out)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/sys/class/net/%s/%s", c->root,
			 ifname, file);

	if (n < 0 || (size_t)n >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return counters_read(path, out);
}

/* port_rcv_data and port_xmit_data count 4-byte words. */
static int counters_read_rdma(const struct counters *c, const char *dev,
			      uint32_t port, const char *stat, uint64_t *out)
{
	char path[PATH_MAX];
	uint64_t words;
	int n = snprintf(path, sizeof(path),
			 "%s/sys/class/infiniband/%s/ports/%u/counters/%s",
			 c->root, dev, (unsigned)port, stat);

	if (n < 0 || (size_t)n >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (counters_read(path, &words) < 0)
		return -1;
	*out = words > UINT64_MAX / 4 ? UINT64_MAX : words * 4;
	return 0;
}

/* The port of f's RDMA device that serves f: the one whose netdev it is,
 * else the only one, else 1. */
static uint32_t counters_rdma_port(const Ring__Inventory *inv,
				   const Ring__NetInterface *f)
{
	for (size_t d = 0; d < inv->n_rdma_devices; d++) {
		const Ring__RdmaDevice *dev = inv->rdma_devices[d];

		if (strcmp(dev->name, f->rdma_device))
			continue;
		for (size_t p = 0; p < dev->n_ports; p++)
			if (!strcmp(dev->ports[p]->netdev, f->name))
				return dev->ports[p]->port;
		if (dev->n_ports == 1)
			return dev->ports[0]->port;
	}
	return 1;
}

static const struct counters_prev *counters_find_prev(const struct counters *c,
						      const char *name)
{
	for (size_t i = 0; i < c->n_prev; i++)
		if (!strcmp(c->prev[i].name, name))
			return &c->prev[i];
	return NULL;
}

static double counters_rate(uint64_t now, uint64_t before, uint64_t ms)
{
	if (!ms || now < before)
		return 0;
	return (double)(now - before) * 1000.0 / (double)ms;
}

/* One interface into slot k; -1 when its statistics cannot be read. */
static int counters_one(struct counters *c, const Ring__Inventory *inv,
			const Ring__NetInterface *f, size_t k,
			uint64_t elapsed_ms)
{
	Ring__PortCounters *p = &c->ports[k];
	const struct counters_prev *prev;
	struct {
		const char *name;
		uint64_t *field;
	} stats[] = {
		{"rx_bytes", &p->rx_bytes},	{"tx_bytes", &p->tx_bytes},
		{"rx_packets", &p->rx_packets}, {"tx_packets", &p->tx_packets},
		{"rx_errors", &p->rx_errors},	{"tx_errors", &p->tx_errors},
		{"rx_dropped", &p->rx_dropped}, {"tx_dropped", &p->tx_dropped},
	};
	uint64_t rcv, xmit, before = 0, after = 0, carrier;
	int have_before, have_after;

	if (strlen(f->name) >= IFNAMSIZ)
		return -1;
	ring__port_counters__init(p);
	/* carrier_changes before and after the statistics: equal, and carrier
	 * up, means the link was up throughout the read, so a window between
	 * two such samples with equal counts had carrier throughout. carrier
	 * reads EINVAL while the interface is down: no carrier. A kernel
	 * without carrier_changes (before 3.15) leaves carrier alone to say
	 * it; one read failing of two is a change (the interface went). */
	have_before =
		counters_read_link(c, f->name, "carrier_changes", &before) == 0;
	for (size_t i = 0; i < sizeof(stats) / sizeof(stats[0]); i++)
		if (counters_read_stat(c, f->name, stats[i].name,
				       stats[i].field) < 0)
			return -1;
	if (counters_read_link(c, f->name, "carrier", &carrier) < 0)
		carrier = 0;
	have_after =
		counters_read_link(c, f->name, "carrier_changes", &after) == 0;
	p->carrier_changes = have_after ? after : 0;
	p->carrier = carrier == 1 && have_before == have_after &&
		     (!have_after || before == after);
	p->listening = c->listening && c->listening(f->name, c->listening_arg);
	memcpy(c->names[k], f->name, strlen(f->name) + 1);
	p->interface = c->names[k];
	prev = counters_find_prev(c, f->name);
	if (prev) {
		p->rx_bytes_per_s =
			counters_rate(p->rx_bytes, prev->rx_bytes, elapsed_ms);
		p->tx_bytes_per_s =
			counters_rate(p->tx_bytes, prev->tx_bytes, elapsed_ms);
	}
	if (f->rdma_device && *f->rdma_device &&
	    strlen(f->rdma_device) < sizeof(c->rdma[k])) {
		uint32_t port = counters_rdma_port(inv, f);

		/* Some devices (and software ones) have no data counters. */
		if (counters_read_rdma(c, f->rdma_device, port, "port_rcv_data",
				       &rcv) == 0 &&
		    counters_read_rdma(c, f->rdma_device, port,
				       "port_xmit_data", &xmit) == 0) {
			memcpy(c->rdma[k], f->rdma_device,
			       strlen(f->rdma_device) + 1);
			p->rdma_device = c->rdma[k];
			p->rdma_port = port;
			p->rdma_rcv_bytes = rcv;
			p->rdma_xmit_bytes = xmit;
		}
	}
	c->ptrs[k] = p;
	return 0;
}

const Ring__CountersReport *
counters_sample(struct counters *c, const Ring__Inventory *inv, uint64_t now_ms)
{
	uint64_t elapsed =
		c->last_ms && now_ms > c->last_ms ? now_ms - c->last_ms : 0;
	size_t n = 0;

	ring__counters_report__init(&c->report);
	for (size_t i = 0;
	     inv && i < inv->n_interfaces && n < COUNTERS_MAX_PORTS; i++) {
		const Ring__NetInterface *f = inv->interfaces[i];

		if (f->management || !f->name || !*f->name)
			continue;
		if (counters_one(c, inv, f, n, elapsed) == 0)
			n++;
	}
	/* This sample is what the next one's rates are computed against. */
	for (size_t i = 0; i < n; i++) {
		memcpy(c->prev[i].name, c->names[i], sizeof(c->prev[i].name));
		c->prev[i].rx_bytes = c->ports[i].rx_bytes;
		c->prev[i].tx_bytes = c->ports[i].tx_bytes;
	}
	c->n_prev = n;
	c->last_ms = now_ms ? now_ms : 1;
	c->report.interval_ms = elapsed;
	c->report.port_state = 1;
	c->report.n_ports = n;
	c->report.ports = c->ptrs;
	return &c->report;
}
