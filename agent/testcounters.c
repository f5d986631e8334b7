/* Counters around one test: two snapshots and what moved between them
 * (testcounters.h). */
#include "testcounters.h"

#include "counters.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "probe.h"

#define TCOUNT_NAME_LEN 64

enum tcount_src {
	TC_NETDEV,
	TC_ETHTOOL,
	TC_RDMA,
	TC_HW,
};

static const char *const tcount_src_name[] = {"netdev", "ethtool", "rdma",
					      "hw"};

/* The interface statistics that tell of trouble; the byte and packet
 * counts tell of volume, which the test's own figures already give. */
static const char *const tcount_netdev_stats[] = {
	"collisions",	       "rx_crc_errors",	    "rx_dropped",
	"rx_errors",	       "rx_fifo_errors",    "rx_frame_errors",
	"rx_length_errors",    "rx_missed_errors",  "rx_nohandler",
	"rx_over_errors",      "tx_aborted_errors", "tx_carrier_errors",
	"tx_dropped",	       "tx_errors",	    "tx_fifo_errors",
	"tx_heartbeat_errors", "tx_window_errors",
};

/* Beside statistics/: link flaps (carrier_down_count since Linux 4.16). */
static const char *const tcount_netdev_link[] = {"carrier_changes",
						 "carrier_down_count"};

/* ethtool names kept: what speaks of loss, congestion, pause or the link
 * (documented in docs/COUNTERS.md). */
static const char *const tcount_ethtool_words[] = {
	"pause",     "discard", "drop",	   "err",    "link_down",
	"fec",	     "cnp",	"ecn",	   "buf",    "timeout",
	"corrected", "symbol",	"crc",	   "cong",   "oversize",
	"undersize", "jabber",	"recover", "marked", "miss",
};

struct tcount_val {
	uint8_t src;
	char name[TCOUNT_NAME_LEN];
	uint64_t v;
};

struct tcount_snap {
	struct tcount_val *v;
	size_t n;
	unsigned left_out; /* past TCOUNT_MAX_SNAP */
	double t;	   /* CLOCK_MONOTONIC seconds */
	char error[200];
};

struct tcount {
	char root[PATH_MAX];
	char ifname[IFNAMSIZ];
	char dev[64];
	unsigned port;
	struct tcount_snap s[2];
	char error[400];
	Ring__CounterDelta d[TCOUNT_MAX_DELTAS];
	Ring__CounterDelta *dp[TCOUNT_MAX_DELTAS];
};

static double tcount_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void tcount_err(struct tcount_snap *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The first reason a snapshot is incomplete is the one kept. */
static void tcount_err(struct tcount_snap *s, const char *fmt, ...)
{
	va_list ap;

	if (s->error[0])
		return;
	va_start(ap, fmt);
	vsnprintf(s->error, sizeof(s->error), fmt, ap);
	va_end(ap);
}

/* One value into the snapshot; sum: add to an entry of the same name
 * (per-queue counters folded into one). */
static void tcount_put(struct tcount_snap *s, enum tcount_src src,
		       const char *name, uint64_t v, int sum)
{
	struct tcount_val *e;

	if (sum)
		for (size_t i = 0; i < s->n; i++)
			if (s->v[i].src == src && !strcmp(s->v[i].name, name)) {
				s->v[i].v += v;
				return;
			}
	if (s->n >= TCOUNT_MAX_SNAP || strlen(name) >= TCOUNT_NAME_LEN) {
		s->left_out++;
		return;
	}
	e = &s->v[s->n++];
	e->src = (uint8_t)src;
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->v = v;
}

/* A path into buf; -1 when it does not fit. */
static int tcount_path(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int tcount_path(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static void tcount_netdev(struct tcount *c, struct tcount_snap *s)
{
	char path[PATH_MAX];
	uint64_t v;
	int n;

	n = snprintf(path, sizeof(path), "%s/sys/class/net/%s/statistics",
		     c->root, c->ifname);
	if (n < 0 || (size_t)n >= sizeof(path) || access(path, R_OK) < 0) {
		tcount_err(s, "%s: no statistics in sysfs", c->ifname);
		return;
	}
	for (size_t i = 0;
	     i < sizeof(tcount_netdev_stats) / sizeof(tcount_netdev_stats[0]);
	     i++) {
		if (tcount_path(path, sizeof(path),
				"%s/sys/class/net/%s/statistics/%s", c->root,
				c->ifname, tcount_netdev_stats[i]) == 0 &&
		    counters_read(path, &v) == 0)
			tcount_put(s, TC_NETDEV, tcount_netdev_stats[i], v, 0);
	}
	for (size_t i = 0;
	     i < sizeof(tcount_netdev_link) / sizeof(tcount_netdev_link[0]);
	     i++) {
		if (tcount_path(path, sizeof(path), "%s/sys/class/net/%s/%s",
				c->root, c->ifname,
				tcount_netdev_link[i]) == 0 &&
		    counters_read(path, &v) == 0)
			tcount_put(s, TC_NETDEV, tcount_netdev_link[i], v, 0);
	}
}

/* Every counter file of an RDMA port directory ("counters" or
 * "hw_counters"); a device without one has none of that kind. */
static void tcount_rdma_dir(struct tcount *c, struct tcount_snap *s,
			    const char *dir, enum tcount_src src)
{
	char path[PATH_MAX], file[PATH_MAX + 80];
	struct dirent *de;
	uint64_t v;
	DIR *d;
	int n;

	n = snprintf(path, sizeof(path),
		     "%s/sys/class/infiniband/%s/ports/%u/%s", c->root, c->dev,
		     c->port, dir);
	if (n < 0 || (size_t)n >= sizeof(path))
		return;
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "lifespan"))
			continue; /* lifespan: a setting (ms), not a count */
		if (tcount_path(file, sizeof(file), "%s/%s", path,
				de->d_name) == 0 &&
		    counters_read(file, &v) == 0)
			tcount_put(s, src, de->d_name, v, 0);
	}
	closedir(d);
}

int tcount_ethtool_name(const char *name, char *out, size_t len)
{
	static const char *const queues[] = {"rx", "tx",    "ch",  "rq",
					     "sq", "xdpsq", "xsk", "queue_"};
	size_t n = strnlen(name, ETH_GSTRING_LEN), k = 0;
	int folded = 0, keep = 0;

	if (!n || n >= len)
		return 0;
	for (size_t i = 0; i < sizeof(tcount_ethtool_words) /
					   sizeof(tcount_ethtool_words[0]) &&
			   !keep;
	     i++)
		keep = strstr(name, tcount_ethtool_words[i]) != NULL;
	if (!keep)
		return 0;
	/* A queue's number (after rx, tx, ch, ... at the start of a word,
	 * before '_') folds into '*': "rx3_wqe_err" and "rx_queue_3_drops"
	 * are one counter summed over the queues; "rx_prio3_pause" stays. */
	for (size_t i = 0; i < n && k + 1 < len; i++) {
		int q = 0;

		if (!folded && name[i] >= '0' && name[i] <= '9') {
			for (size_t w = 0;
			     w < sizeof(queues) / sizeof(queues[0]); w++) {
				size_t wl = strlen(queues[w]);

				if (i >= wl &&
				    !strncmp(name + i - wl, queues[w], wl) &&
				    (i == wl || name[i - wl - 1] == '_' ||
				     !strcmp(queues[w], "queue_")))
					q = 1;
			}
			if (q) {
				size_t j = i;

				while (j < n && name[j] >= '0' &&
				       name[j] <= '9')
					j++;
				if (j < n && name[j] == '_') {
					out[k++] = '*';
					i = j - 1;
					folded = 1;
					continue;
				}
			}
		}
		out[k++] = name[i];
	}
	out[k] = '\0';
	for (size_t i = 0; i < k; i++)
		if ((unsigned char)out[i] < 0x21 ||
		    (unsigned char)out[i] > 0x7e)
			out[i] = '_';
	return 1;
}

/* SIOCETHTOOL on ifr; -1 with errno. */
static int tcount_ioctl(int fd, const char *ifname, void *data)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = data;
	return ioctl(fd, SIOCETHTOOL, &ifr);
}

/* The driver's statistics through the kernel's ethtool interface: the
 * count (GSSET_INFO), the names (GSTRINGS), the values (GSTATS). */
static void tcount_ethtool(struct tcount *c, struct tcount_snap *s)
{
	uint64_t raw[4] = {0}; /* struct ethtool_sset_info and one u32 */
	struct ethtool_sset_info *si = (struct ethtool_sset_info *)raw;
	struct ethtool_gstrings *str = NULL;
	struct ethtool_stats *st = NULL;
	char norm[TCOUNT_NAME_LEN], name[ETH_GSTRING_LEN + 1];
	uint32_t n, cap;
	int fd;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		tcount_err(s, "ethtool: socket: %s", strerror(errno));
		return;
	}
	si->cmd = ETHTOOL_GSSET_INFO;
	si->sset_mask = 1ull << ETH_SS_STATS;
	if (tcount_ioctl(fd, c->ifname, si) < 0) {
		/* No ethtool statistics (lo, a bridge): nothing to read. */
		if (errno != EOPNOTSUPP && errno != ENODEV)
			tcount_err(s, "%s: ethtool: %s", c->ifname,
				   strerror(errno));
		goto out;
	}
	memcpy(&n, (const char *)raw + sizeof(*si), sizeof(n));
	if (!(si->sset_mask & (1ull << ETH_SS_STATS)) || n == 0)
		goto out;
	if (n > TCOUNT_MAX_ETHTOOL) {
		tcount_err(s, "%s: %u ethtool statistics, more than %d read",
			   c->ifname, n, TCOUNT_MAX_ETHTOOL);
		goto out;
	}
	/* The kernel writes its count of the moment, not ours: room to spare
	 * for a set that grew between the calls (channels added). */
	cap = n + n / 4 + 64;
	str = calloc(1, sizeof(*str) + (size_t)cap * ETH_GSTRING_LEN);
	st = calloc(1, sizeof(*st) + (size_t)cap * sizeof(uint64_t));
	if (!str || !st) {
		tcount_err(s, "ethtool: out of memory");
		goto out;
	}
	str->cmd = ETHTOOL_GSTRINGS;
	str->string_set = ETH_SS_STATS;
	str->len = n;
	st->cmd = ETHTOOL_GSTATS;
	st->n_stats = n;
	if (tcount_ioctl(fd, c->ifname, str) < 0 ||
	    tcount_ioctl(fd, c->ifname, st) < 0) {
		tcount_err(s, "%s: ethtool: %s", c->ifname, strerror(errno));
		goto out;
	}
	if (str->len != st->n_stats || str->len > cap) {
		tcount_err(s, "%s: ethtool statistics changed while read",
			   c->ifname);
		goto out;
	}
	for (uint32_t i = 0; i < str->len; i++) {
		memcpy(name, str->data + (size_t)i * ETH_GSTRING_LEN,
		       ETH_GSTRING_LEN);
		name[ETH_GSTRING_LEN] = '\0';
		if (tcount_ethtool_name(name, norm, sizeof(norm)))
			tcount_put(s, TC_ETHTOOL, norm, st->data[i], 1);
	}
out:
	free(str);
	free(st);
	close(fd);
}

static void tcount_take(struct tcount *c, struct tcount_snap *s)
{
	s->n = 0;
	s->t = tcount_now();
	if (c->ifname[0]) {
		tcount_netdev(c, s);
		/* A fixture root stands for another machine; the kernel's
		 * ethtool answers for this one. */
		if (!c->root[0])
			tcount_ethtool(c, s);
	}
	if (c->dev[0]) {
		tcount_rdma_dir(c, s, "counters", TC_RDMA);
		tcount_rdma_dir(c, s, "hw_counters", TC_HW);
	}
}

/* The interface holding IPv4 address addr, into out; -1 if none. */
static int tcount_if_of_addr(const char *addr, char *out, size_t len)
{
	struct ifaddrs *ifa, *i;
	struct in_addr want;
	int rc = -1;

	if (!addr || inet_pton(AF_INET, addr, &want) != 1 ||
	    getifaddrs(&ifa) < 0)
		return -1;
	for (i = ifa; i && rc < 0; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
		    ((const struct sockaddr_in *)(const void *)i->ifa_addr)
				    ->sin_addr.s_addr == want.s_addr &&
		    strlen(i->ifa_name) < len) {
			snprintf(out, len, "%s", i->ifa_name);
			rc = 0;
		}
	freeifaddrs(ifa);
	return rc;
}

struct tcount *tcount_begin(const char *sysfs_root, const char *ifname,
			    const char *local_addr, const char *peer_addr,
			    const char *rdma_dev, unsigned rdma_port)
{
	struct tcount *c = calloc(1, sizeof(*c));
	struct probe_route r;

	if (!c)
		return NULL;
	for (int k = 0; k < 2; k++) {
		c->s[k].v = calloc(TCOUNT_MAX_SNAP, sizeof(*c->s[k].v));
		if (!c->s[k].v) {
			tcount_free(c);
			errno = ENOMEM;
			return NULL;
		}
	}
	if (sysfs_root && (size_t)snprintf(c->root, sizeof(c->root), "%s",
					   sysfs_root) >= sizeof(c->root))
		c->root[0] = '\0'; /* too long for any path: said below */
	if (ifname && *ifname && strlen(ifname) < sizeof(c->ifname))
		snprintf(c->ifname, sizeof(c->ifname), "%s", ifname);
	else if (local_addr && *local_addr)
		tcount_if_of_addr(local_addr, c->ifname, sizeof(c->ifname));
	else if (peer_addr && *peer_addr && probe_route_get(peer_addr, &r) == 0)
		snprintf(c->ifname, sizeof(c->ifname), "%s", r.ifname);
	if (rdma_dev && *rdma_dev && strlen(rdma_dev) < sizeof(c->dev)) {
		snprintf(c->dev, sizeof(c->dev), "%s", rdma_dev);
		c->port = rdma_port ? rdma_port : 1;
	}
	if (!c->ifname[0] && !c->dev[0])
		snprintf(c->error, sizeof(c->error),
			 "no interface known for this test's address");
	else
		tcount_take(c, &c->s[0]);
	log_debug("ops", "before: %zu counters of %s%s%s", c->s[0].n,
		  c->ifname[0] ? c->ifname : "-", c->dev[0] ? " and " : "",
		  c->dev);
	return c;
}

static const struct tcount_val *tcount_find(const struct tcount_snap *s,
					    size_t hint,
					    const struct tcount_val *x)
{
	/* Both snapshots read the same files in the same order, mostly. */
	if (hint < s->n && s->v[hint].src == x->src &&
	    !strcmp(s->v[hint].name, x->name))
		return &s->v[hint];
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].src == x->src && !strcmp(s->v[i].name, x->name))
			return &s->v[i];
	return NULL;
}

int tcount_is_volume(const char *source, const char *name)
{
	static const char *const ends[] = {"_pkts", "_packets", "_data",
					   "_bytes", "_requests"};
	size_t n = strlen(name);

	if (!strcmp(source, "netdev"))
		return 0;
	if (!strcmp(name, "rdma_sends") || !strcmp(name, "rdma_recvs") ||
	    !strcmp(name, "ack_deferred"))
		return 1;
	/* Pause frames and ECN-marked packets are counted in packets but
	 * are evidence. */
	if (strstr(name, "pause") || strstr(name, "discard") ||
	    strstr(name, "drop") || strstr(name, "err") ||
	    strstr(name, "ecn") || strstr(name, "cnp") ||
	    strstr(name, "marked"))
		return 0;
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		size_t e = strlen(ends[i]);

		if (n > e && !strcmp(name + n - e, ends[i]))
			return 1;
	}
	return 0;
}

void tcount_end(struct tcount *c, Ring__TestResult *res)
{
	const struct tcount_snap *a = &c->s[0], *b = &c->s[1];
	unsigned more = 0, left = 0;
	size_t nd = 0, used;
	double span;

	if (!c->error[0]) {
		tcount_take(c, &c->s[1]);
		span = b->t - a->t;
		for (int volume = 0; volume < 2; volume++)
			for (size_t i = 0; i < b->n; i++) {
				const struct tcount_val *x = &b->v[i];
				const struct tcount_val *o =
					tcount_find(a, i, x);
				const char *src = tcount_src_name[x->src];
				Ring__CounterDelta *d;

				/* Gone down: a reset or a wrap, not a count. */
				if (!o || x->v <= o->v ||
				    tcount_is_volume(src, x->name) != volume)
					continue;
				if (nd >= TCOUNT_MAX_DELTAS) {
					more++;
					continue;
				}
				d = &c->d[nd];
				ring__counter_delta__init(d);
				d->interface = c->ifname;
				if (x->src == TC_RDMA || x->src == TC_HW) {
					d->rdma_device = c->dev;
					d->rdma_port = c->port;
				}
				d->source = (char *)src;
				d->name = (char *)x->name;
				d->delta = x->v - o->v;
				d->span_s = span > 0 ? span : 0;
				c->dp[nd++] = d;
			}
		left = a->left_out > b->left_out ? a->left_out : b->left_out;
		used = (size_t)snprintf(
			c->error, sizeof(c->error), "%s%s%s", a->error,
			a->error[0] && b->error[0] && strcmp(a->error, b->error)
				? "; "
				: "",
			strcmp(a->error, b->error) ? b->error : "");
		if (left && used < sizeof(c->error))
			used += (size_t)snprintf(
				c->error + used, sizeof(c->error) - used,
				"%s%u counters not read (at most %d)",
				used ? "; " : "", left, TCOUNT_MAX_SNAP);
		if (more && used < sizeof(c->error))
			snprintf(c->error + used, sizeof(c->error) - used,
				 "%s%u more moved counters left out (at most "
				 "%d)",
				 used ? "; " : "", more, TCOUNT_MAX_DELTAS);
		log_debug("ops", "after %.3f s: %zu of %zu counters moved%s%s",
			  span, nd, b->n, c->error[0] ? ": " : "", c->error);
	}
	res->n_counters = nd;
	res->counters = nd ? c->dp : NULL;
	res->counters_error = c->error;
}

void tcount_free(struct tcount *c)
{
	if (!c)
		return;
	free(c->s[0].v);
	free(c->s[1].v);
	free(c);
}
