/* metrics: the exposition rendered from a real node table, a hand-built
 * topology and a real alert table, checked line by line and parsed as the
 * text format; then the endpoint served on loopback and asked over raw
 * sockets driven by the test's own event loop. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "coordinator/alerts.h"
#include "coordinator/health.h"
#include "coordinator/http_serve.h"
#include "coordinator/metrics.h"
#include "coordinator/page.h"
#include "coordinator/nodes.h"

/* ---- The inputs ---- */

static Ring__Inventory *inv_new(const char *node)
{
	Ring__NetInterface ifs[2] = {RING__NET_INTERFACE__INIT,
				     RING__NET_INTERFACE__INIT};
	Ring__NetInterface *pifs[2] = {&ifs[0], &ifs[1]};
	Ring__Gid gid = RING__GID__INIT;
	Ring__Gid *pgid = &gid;
	Ring__RdmaPort port = RING__RDMA_PORT__INIT;
	Ring__RdmaPort *pport = &port;
	Ring__RdmaDevice dev = RING__RDMA_DEVICE__INIT;
	Ring__RdmaDevice *pdev = &dev;
	Ring__Memory mem = RING__MEMORY__INIT;
	Ring__Inventory inv = RING__INVENTORY__INIT;
	uint8_t buf[2048];
	size_t len;

	ifs[0].name = "eth1";
	ifs[0].carrier = 1;
	ifs[0].admin_up = 1;
	ifs[0].mtu = 9000;
	ifs[0].speed_mbps = 100000;
	ifs[0].pcie_link_width = 8;
	ifs[0].pcie_max_link_width = 16;
	ifs[1].name = "eth2";
	ifs[1].mtu = 1500;
	ifs[1].speed_mbps = -1;
	port.port = 1;
	port.state = "ACTIVE";
	port.n_gids = 1;
	port.gids = &pgid;
	dev.name = "mlx5_0";
	dev.n_ports = 1;
	dev.ports = &pport;
	mem.total_kib = 1048576;
	mem.available_kib = 524288;
	inv.node = (char *)node;
	inv.n_interfaces = 2;
	inv.interfaces = pifs;
	inv.n_rdma_devices = 1;
	inv.rdma_devices = &pdev;
	inv.memory = &mem;
	/* Through the wire: the table frees what it owns as unpacked. */
	len = ring__inventory__get_packed_size(&inv);
	assert_true(len <= sizeof(buf));
	ring__inventory__pack(&inv, buf);
	return ring__inventory__unpack(NULL, len, buf);
}

/* Port counters as an agent sends them: eth1 with figures (and an RDMA
 * port), eth2 all zero; interval 0 is a first sample (no rates). */
static Ring__CountersReport *ctr_new(uint64_t interval_ms)
{
	Ring__PortCounters p[2] = {RING__PORT_COUNTERS__INIT,
				   RING__PORT_COUNTERS__INIT};
	Ring__PortCounters *pp[2] = {&p[0], &p[1]};
	Ring__CountersReport r = RING__COUNTERS_REPORT__INIT;
	uint8_t buf[1024];
	size_t len;

	p[0].interface = "eth1";
	p[0].rx_bytes = 123456789012ULL;
	p[0].tx_bytes = 2000;
	p[0].rx_errors = 3;
	p[0].tx_errors = 4;
	p[0].rx_dropped = 5;
	p[0].tx_dropped = 6;
	p[0].rx_bytes_per_s = 1250000.5;
	p[0].tx_bytes_per_s = 42;
	p[0].rdma_device = "mlx5_0";
	p[0].rdma_port = 1;
	p[0].rdma_rcv_bytes = 4096;
	p[0].rdma_xmit_bytes = 8192;
	p[1].interface = "eth2";
	r.interval_ms = interval_ms;
	r.n_ports = 2;
	r.ports = pp;
	len = ring__counters_report__get_packed_size(&r);
	assert_true(len <= sizeof(buf));
	ring__counters_report__pack(&r, buf);
	return ring__counters_report__unpack(NULL, len, buf);
}

#define HOSTILE "ev\"il\\node\nx"

static struct nodes *nodes_fixture(void)
{
	struct nodes *t = nodes_new();
	struct node *n;
	static int session;

	assert_non_null(t);
	n = nodes_get(t, "n1", 16);
	n->expected = 1;
	nodes_mark_up(n, &session, "10.0.0.1", "0.1.0", 1764756000000ULL);
	n->cert_not_after_ms = 1767348000000ULL;
	nodes_set_inventory(n, inv_new("n1"));
	nodes_set_counters(n, ctr_new(10000), 1764756000000ULL);
	n = nodes_get(t, "n2", 16);
	n->expected = 1;
	nodes_mark_up(n, &session, "10.0.0.2", "0.1.0", 1764756000000ULL);
	nodes_set_counters(n, ctr_new(0), 1764756000000ULL);
	n = nodes_get(t, "n3", 16);
	n->expected = 1;
	/* Down, with the inventory it had: history, not exported. */
	n = nodes_get(t, "n4", 16);
	nodes_mark_up(n, &session, "10.0.0.4", "0.0.9", 1764756000000ULL);
	n->cert_not_after_ms = 1767348000000ULL;
	nodes_set_inventory(n, inv_new("n4"));
	nodes_set_counters(n, ctr_new(10000), 1764756000000ULL);
	nodes_mark_down(n, "heartbeat timeout", 1764756001000ULL);
	assert_non_null(nodes_get(t, HOSTILE, 16));
	return t;
}

/* Three edges: a TCP ladder with RDMA figures beside it (one direction of
 * the ladder not measured), an RDMA ladder (its write figures are the
 * ladder's own), and one with nothing measured at all. */
struct topo_fixture {
	Ring__Topology t;
	Ring__Edge e[3];
	Ring__Edge *pe[3];
	Ring__LatResult lat, rlat;
	Ring__LatResult *plat, *prlat;
	Ring__Rank rk[3];
	Ring__Rank *prk[3];
	uint32_t ladder1[2], ladder2[1], ladder3[1];
	Ring__DiagonalCheck dg[3];
	Ring__DiagonalCheck *pdg[3];
	double ab1[2], ba1[2], ab2[1], ba2[1], ab3[1], ba3[1];
};

static void topo_fixture_init(struct topo_fixture *f)
{
	static const char *const names[3] = {"n1", "n2", "n3"};
	Ring__Topology t = RING__TOPOLOGY__INIT;
	Ring__Edge e = RING__EDGE__INIT;
	Ring__LatResult l = RING__LAT_RESULT__INIT;
	Ring__Rank r = RING__RANK__INIT;

	memset(f, 0, sizeof(*f));
	f->t = t;
	for (int i = 0; i < 3; i++) {
		f->e[i] = e;
		f->pe[i] = &f->e[i];
		f->e[i].a = (char *)names[i];
		f->e[i].b = (char *)names[(i + 1) % 3];
		f->e[i].a_interface = i ? "eth2" : "eth1";
		f->e[i].b_interface = "eth1";
		f->e[i].rdma_write_gbps_a_to_b = -1;
		f->e[i].rdma_write_gbps_b_to_a = -1;
		f->e[i].rdma_read_gbps_a_to_b = -1;
		f->e[i].rdma_read_gbps_b_to_a = -1;
		f->rk[i] = r;
		f->prk[i] = &f->rk[i];
		f->rk[i].rank = (uint32_t)i;
		f->rk[i].node = (char *)names[i];
	}
	f->e[2].b_interface = "eth2";
	/* n1-n2 */
	f->ladder1[0] = 1;
	f->ladder1[1] = 4;
	f->ab1[0] = 9.41;
	f->ab1[1] = 23.5;
	f->ba1[0] = 9.4;
	f->ba1[1] = -1;
	f->e[0].n_ladder = f->e[0].n_gbps_a_to_b = f->e[0].n_gbps_b_to_a = 2;
	f->e[0].ladder = f->ladder1;
	f->e[0].gbps_a_to_b = f->ab1;
	f->e[0].gbps_b_to_a = f->ba1;
	f->e[0].method = "tcp";
	f->e[0].method_kind = RING__EDGE_METHOD__EDGE_METHOD_TCP;
	f->e[0].nominal_gbps = 100;
	f->e[0].measured_ms = 1764756000123ULL;
	f->e[0].verified = 1;
	f->e[0].rdma_write_gbps_a_to_b = 90;
	/* its last light check, failed */
	f->e[0].light_ms = 1764756004500ULL;
	/* A bandwidth sample, b -> a the worse; e[1] has none. */
	f->e[0].sample_ms = 1764756004000ULL;
	f->e[0].sample_gbps_a_to_b = 20.0;
	f->e[0].sample_gbps_b_to_a = 16.0;
	f->e[1].sample_gbps_a_to_b = f->e[1].sample_gbps_b_to_a = -1;
	f->e[0].light_error = "probe timed out";
	f->e[0].light_lat_p50_us = -1;
	f->e[0].rdma_read_gbps_a_to_b = 80;
	f->lat = l;
	f->lat.size = 64;
	f->lat.n = 1000;
	f->lat.p50_us = 8.6;
	f->lat.p99_us = 12;
	f->lat.p999_us = 20;
	f->plat = &f->lat;
	f->e[0].n_latency = 1;
	f->e[0].latency = &f->plat;
	f->rlat = l;
	f->rlat.size = 8;
	f->rlat.n = 100;
	f->rlat.p50_us = 2.5;
	f->rlat.p99_us = 3;
	f->rlat.p999_us = 4;
	f->prlat = &f->rlat;
	f->e[0].n_rdma_write_lat = 1;
	f->e[0].rdma_write_lat = &f->prlat;
	f->e[0].live_state = "up";
	f->e[0].live_since_ms = 1764756002000ULL;
	/* n2-n3, over RDMA queue pairs */
	f->ladder2[0] = 4;
	f->ab2[0] = 95;
	f->ba2[0] = 96;
	f->e[1].n_ladder = f->e[1].n_gbps_a_to_b = f->e[1].n_gbps_b_to_a = 1;
	f->e[1].ladder = f->ladder2;
	f->e[1].gbps_a_to_b = f->ab2;
	f->e[1].gbps_b_to_a = f->ba2;
	f->e[1].method = "rdma";
	f->e[1].method_kind = RING__EDGE_METHOD__EDGE_METHOD_RDMA;
	f->e[1].rdma_write_gbps_a_to_b = 95;
	f->e[1].rdma_write_gbps_b_to_a = 96;
	f->e[1].live_state = "down";
	f->e[1].live_since_ms = 1764756003000ULL;
	/* n3-n1: nothing measured; a state we do not know */
	f->ladder3[0] = 1;
	f->ab3[0] = -1;
	f->ba3[0] = NAN;
	f->e[2].n_ladder = f->e[2].n_gbps_a_to_b = f->e[2].n_gbps_b_to_a = 1;
	f->e[2].ladder = f->ladder3;
	f->e[2].gbps_a_to_b = f->ab3;
	f->e[2].gbps_b_to_a = f->ba3;
	f->e[2].nominal_gbps = NAN;
	f->e[2].live_state = "sideways";
	f->t.kind = "ring";
	f->t.live_kind = "line";
	f->t.n_edges = 3;
	f->t.edges = f->pe;
	f->t.n_ranks = 3;
	f->t.ranks = f->prk;
	f->t.order_valid = 0;
	f->t.surveyed_ms = 1764756000500ULL;
	/* Diagonal checks, out of order: n2-n4 clean, n1-n3 at two of n3's
	 * addresses (the second reached it) */
	for (int i = 0; i < 3; i++) {
		Ring__DiagonalCheck d = RING__DIAGONAL_CHECK__INIT;

		f->dg[i] = d;
		f->pdg[i] = &f->dg[i];
	}
	f->dg[0].a = "n2";
	f->dg[0].b = "n4";
	f->dg[1].a = "n1";
	f->dg[1].b = "n3";
	f->dg[2].a = "n1";
	f->dg[2].b = "n3";
	f->dg[2].path = 1;
	f->t.n_diagonals = 3;
	f->t.diagonals = f->pdg;
}

static void no_notify(const struct alert *a, enum alert_event ev, void *arg)
{
	(void)a;
	(void)ev;
	(void)arg;
}

static struct alerts *alerts_fixture(void)
{
	struct alerts_conf conf = {
		.hold_down_ms = 0,
		.max_resolved = 16,
		.keep_resolved_ms = 3600000,
		.max_firing = 16,
	};
	struct alerts *t = alerts_new(&conf, no_notify, NULL);
	uint64_t now = 1764756000000ULL;

	assert_non_null(t);
	assert_int_equal(alerts_raise(t, "node_down", "n3", "n3", NULL,
				      ALERT_CRITICAL, "n3 is down", now),
			 0);
	assert_int_equal(alerts_raise(t, "cable_down", "n1-n2", NULL, "n1-n2",
				      ALERT_CRITICAL,
				      "cut at XYZZY: \"text\"\n", now),
			 0);
	assert_int_equal(alerts_raise(t, "cable_down", "n2-n3", NULL, "n2-n3",
				      ALERT_CRITICAL, "cut", now),
			 0);
	assert_int_equal(alerts_raise(t, "mtu_mismatch", "n1-n2", NULL, "n1-n2",
				      ALERT_WARNING, "mtu", now),
			 0);
	/* Resolved: not firing, not counted. */
	assert_int_equal(alerts_raise(t, "gid_change", "n1", "n1", NULL,
				      ALERT_WARNING, "gid", now),
			 0);
	alerts_clear(t, "gid_change", "n1", now + 1);
	assert_int_equal(alerts_firing(t), 4);
	return t;
}

/* ---- Reading the exposition ---- */

/* The coordinator derives the one health from the alerts (health.h). */
static struct health fixture_health;
static const struct health *health_for(const struct alerts *t)
{
	struct health_facts f = {
		.alerts = t, .has_topology = 1, .kind = "ring", .n_ranks = 4};

	health_derive(&f, &fixture_health);
	return &fixture_health;
}

static char *render(const struct metrics_src *src)
{
	struct evbuffer *b = evbuffer_new();
	size_t len;
	char *s;

	assert_non_null(b);
	assert_int_equal(metrics_render(b, src), 0);
	len = evbuffer_get_length(b);
	s = malloc(len + 1);
	assert_non_null(s);
	assert_int_equal(evbuffer_remove(b, s, len), (int)len);
	s[len] = '\0';
	evbuffer_free(b);
	return s;
}

static int has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return 1;
	return 0;
}

static void expect_line(const char *text, const char *line)
{
	if (!has_line(text, line))
		fail_msg("line missing: %s", line);
}

static void expect_no_line(const char *text, const char *line)
{
	if (has_line(text, line))
		fail_msg("line present: %s", line);
}

/* Lines that start with prefix. */
static unsigned count_prefix(const char *text, const char *prefix)
{
	unsigned k = 0;
	size_t n = strlen(prefix);

	for (const char *p = text; *p; p = strchr(p, '\n') + 1) {
		if (!strncmp(p, prefix, n))
			k++;
		if (!strchr(p, '\n'))
			break;
	}
	return k;
}

static int name_char(int c, int first)
{
	return isalpha(c) || c == '_' || c == ':' || (!first && isdigit(c));
}

/* One sample line: name{label="value",...} value. Returns the length of
 * the series (name and labels) or fails naming the line. */
static size_t parse_sample(const char *line, size_t len, const char *family)
{
	size_t i = 0, series;
	char labels[16][64];
	unsigned n_labels = 0;
	char num[64];
	char *end;
	double v;

	while (i < len && name_char((unsigned char)line[i], i == 0))
		i++;
	if (!i || strlen(family) != i || strncmp(line, family, i))
		fail_msg("sample not of family %s: %.*s", family, (int)len,
			 line);
	if (i < len && line[i] == '{') {
		i++;
		while (i < len && line[i] != '}') {
			size_t s = i;

			while (i < len &&
			       name_char((unsigned char)line[i], i == s) &&
			       line[i] != ':')
				i++;
			if (i == s || i - s >= 64 || i + 1 >= len ||
			    line[i] != '=' || line[i + 1] != '"')
				fail_msg("bad label name: %.*s", (int)len,
					 line);
			assert_true(n_labels < 16);
			snprintf(labels[n_labels], 64, "%.*s", (int)(i - s),
				 line + s);
			for (unsigned k = 0; k < n_labels; k++)
				if (!strcmp(labels[k], labels[n_labels]))
					fail_msg("label twice: %.*s", (int)len,
						 line);
			n_labels++;
			for (i += 2; i < len && line[i] != '"'; i++)
				if (line[i] == '\\') {
					i++;
					if (i >= len ||
					    !strchr("\\\"n", line[i]))
						fail_msg("bad escape: %.*s",
							 (int)len, line);
				}
			if (i >= len)
				fail_msg("unterminated value: %.*s", (int)len,
					 line);
			i++;
			if (i < len && line[i] == ',')
				i++;
		}
		if (i >= len)
			fail_msg("unterminated labels: %.*s", (int)len, line);
		i++;
	}
	series = i;
	if (i >= len || line[i] != ' ' || len - i - 1 >= sizeof(num))
		fail_msg("no value: %.*s", (int)len, line);
	snprintf(num, sizeof(num), "%.*s", (int)(len - i - 1), line + i + 1);
	v = strtod(num, &end);
	if (end == num || *end || !isfinite(v))
		fail_msg("bad value: %.*s", (int)len, line);
	return series;
}

static int is_total(const char *name)
{
	size_t n = strlen(name);

	return n > 6 && !strcmp(name + n - 6, "_total");
}

/* The whole exposition: each family's HELP and TYPE once, before its
 * samples, which follow together; every sample parses; no series twice.
 * Returns the number of samples. */
static unsigned check_format(const char *text)
{
	char fams[96][80];
	unsigned n_fams = 0, n_samples = 0;
	const char *family = "";
	char **series = NULL;
	unsigned n_series = 0;

	assert_true(*text);
	assert_int_equal(text[strlen(text) - 1], '\n');
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = (size_t)(nl - p);
		char name[80];

		if (!strncmp(p, "# HELP ", 7)) {
			assert_int_equal(
				sscanf(p + 7, "%79[a-zA-Z0-9_:]", name), 1);
			for (unsigned k = 0; k < n_fams; k++)
				if (!strcmp(fams[k], name))
					fail_msg("family twice: %s", name);
			assert_true(n_fams < 96);
			snprintf(fams[n_fams++], sizeof(fams[0]), "%s", name);
			p = nl + 1;
			nl = strchr(p, '\n');
			assert_non_null(nl);
			/* Counters are the _total families, and only they. */
			if (strncmp(p, "# TYPE ", 7) ||
			    strncmp(p + 7, name, strlen(name)) ||
			    strncmp(p + 7 + strlen(name),
				    is_total(name) ? " counter\n" : " gauge\n",
				    is_total(name) ? 9 : 7))
				fail_msg("no TYPE after HELP of %s", name);
			family = fams[n_fams - 1];
		} else if (*p == '#') {
			fail_msg("stray comment: %.*s", (int)len, p);
		} else {
			size_t s = parse_sample(p, len, family);

			series = realloc(series,
					 (n_series + 1) * sizeof(*series));
			assert_non_null(series);
			series[n_series] = strndup(p, s);
			for (unsigned k = 0; k < n_series; k++)
				if (!strcmp(series[k], series[n_series]))
					fail_msg("series twice: %s", series[k]);
			n_series++;
			n_samples++;
		}
		p = nl + 1;
	}
	for (unsigned k = 0; k < n_series; k++)
		free(series[k]);
	free(series);
	return n_samples;
}

/* ---- Rendering ---- */

/* Baselines as the watch keeps them: n1-n2's only. */
static double edge_baseline(const Ring__Edge *e, void *arg)
{
	assert_ptr_equal(arg, (void *)edge_baseline);
	return !strcmp(e->a, "n1") && !strcmp(e->b, "n2") ? 40 : -1;
}

/* gid_change's view: n2-n3's GID changed, n1-n2's not, n3-n1 not judged
 * (an end down). */
static int edge_gid_changed(const Ring__Edge *e, void *arg)
{
	assert_ptr_equal(arg, (void *)edge_baseline);
	return !strcmp(e->a, "n2") ? 1 : !strcmp(e->a, "n1") ? 0 : -1;
}

#define E1 "a=\"n1\",a_interface=\"eth1\",b=\"n2\",b_interface=\"eth1\""
#define E2 "a=\"n2\",a_interface=\"eth2\",b=\"n3\",b_interface=\"eth1\""
#define E3 "a=\"n3\",a_interface=\"eth2\",b=\"n1\",b_interface=\"eth2\""
#define BW "ringd_edge_bandwidth_bytes_per_second{"
#define LAT "ringd_edge_latency_seconds{"

static void test_render_full(void **state)
{
	struct topo_fixture f;
	struct nodes *nodes = nodes_fixture();
	struct alerts *alerts = alerts_fixture();
	struct metrics_src src = {
		.nodes = nodes,
		.topology = &f.t,
		.alerts = alerts,
		.health = health_for(alerts),
		.coordinator = "coord1",
		.version = "0.1.0",
		.now_ms = 1764756010000ULL,
		.rdma_qps = 2,
		.cert_not_after_ms = 1767348000500ULL,
		.survey_failed = 1,
		.survey_interval_ms = 3600000,
		.edge_baseline = edge_baseline,
		.edge_gid_changed = edge_gid_changed,
		.edge_arg = (void *)edge_baseline,
	};
	char *s;

	(void)state;
	topo_fixture_init(&f);
	s = render(&src);
	assert_true(check_format(s) > 60);
	expect_line(s, "ringd_coordinator_info{coordinator=\"coord1\","
		       "version=\"0.1.0\"} 1");
	/* health and alerts: by rule and severity, resolved ones left out */
	expect_line(s, "ringd_health{state=\"critical\"} 1");
	expect_line(s, "ringd_health{state=\"healthy\"} 0");
	expect_line(s, "ringd_alerts_firing{rule=\"cable_down\","
		       "severity=\"critical\",ring=\"\"} 2");
	expect_line(s, "ringd_alerts_firing{rule=\"node_down\","
		       "severity=\"critical\",ring=\"\"} 1");
	expect_line(s, "ringd_alerts_firing{rule=\"mtu_mismatch\","
		       "severity=\"warning\",ring=\"\"} 1");
	assert_int_equal(count_prefix(s, "ringd_alerts_firing{"), 3);
	assert_null(strstr(s, "XYZZY"));
	/* nodes */
	expect_line(s, "ringd_node_up{node=\"n1\",ring=\"\"} 1");
	expect_line(s, "ringd_node_up{node=\"n3\",ring=\"\"} 0");
	expect_line(s, "ringd_node_up{node=\"n4\",ring=\"\"} 0");
	expect_line(s, "ringd_node_expected{node=\"n3\",ring=\"\"} 1");
	expect_line(s, "ringd_node_expected{node=\"n4\",ring=\"\"} 0");
	expect_line(
		s,
		"ringd_node_info{node=\"n4\",version=\"0.0.9\",ring=\"\"} 1");
	expect_line(
		s,
		"ringd_node_last_seen_timestamp_seconds{node=\"n1\",ring=\"\"} "
		"1764756000");
	expect_line(s, "ringd_coordinator_certificate_expiry_timestamp_seconds "
		       "1767348000.5");
	/* certificates of up nodes only */
	expect_line(s, "ringd_node_certificate_expiry_timestamp_seconds{node="
		       "\"n1\",ring=\"\"} 1767348000");
	assert_int_equal(
		count_prefix(
			s, "ringd_node_certificate_expiry_timestamp_seconds{"),
		1);
	expect_line(
		s,
		"ringd_node_memory_total_bytes{node=\"n1\",ring=\"\"} 1073741824");
	expect_line(
		s,
		"ringd_node_memory_available_bytes{node=\"n1\",ring=\"\"} 536870912");
	/* the hostile name, escaped */
	expect_line(s,
		    "ringd_node_up{node=\"ev\\\"il\\\\node\\nx\",ring=\"\"} 0");
	assert_int_equal(count_prefix(s, "ringd_node_up{"), 5);
	/* interfaces of up nodes only */
	expect_line(
		s,
		"ringd_interface_up{node=\"n1\",interface=\"eth1\",ring=\"\"} 1");
	expect_line(
		s,
		"ringd_interface_up{node=\"n1\",interface=\"eth2\",ring=\"\"} 0");
	expect_line(s, "ringd_interface_speed_bytes_per_second{node=\"n1\","
		       "interface=\"eth1\",ring=\"\"} 12500000000");
	expect_no_line(s, "ringd_interface_speed_bytes_per_second{node=\"n1\","
			  "interface=\"eth2\",ring=\"\"} -125000");
	assert_int_equal(
		count_prefix(s, "ringd_interface_speed_bytes_per_second{"), 1);
	expect_line(s, "ringd_interface_mtu_bytes{node=\"n1\","
		       "interface=\"eth1\",ring=\"\"} 9000");
	expect_line(s, "ringd_rdma_port_active{node=\"n1\",device=\"mlx5_0\","
		       "port=\"1\",ring=\"\"} 1");
	/* PCIe lanes where known (eth2's are not) */
	expect_line(s, "ringd_interface_pcie_link_width{node=\"n1\","
		       "interface=\"eth1\",ring=\"\"} 8");
	expect_line(s, "ringd_interface_pcie_link_max_width{node=\"n1\","
		       "interface=\"eth1\",ring=\"\"} 16");
	assert_int_equal(count_prefix(s, "ringd_interface_pcie_link_width{"),
			 1);
	assert_null(strstr(s, "ringd_interface_pcie_link_width{node=\"n1\","
			      "interface=\"eth2\"}"));
	assert_null(strstr(s, "node=\"n4\",interface"));
	assert_null(strstr(s, "ringd_node_memory_total_bytes{node=\"n4\""));
	/* port counters of up nodes; rates only after a first interval */
	expect_line(s, "ringd_interface_receive_bytes_total{node=\"n1\","
		       "interface=\"eth1\",ring=\"\"} 123456789012");
	expect_line(s, "ringd_interface_transmit_bytes_total{node=\"n1\","
		       "interface=\"eth1\",ring=\"\"} 2000");
	expect_line(s, "ringd_interface_receive_errors_total{node=\"n1\","
		       "interface=\"eth1\",ring=\"\"} 3");
	expect_line(s, "ringd_interface_transmit_errors_total{node=\"n1\","
		       "interface=\"eth1\",ring=\"\"} 4");
	expect_line(s, "ringd_interface_receive_drops_total{node=\"n1\","
		       "interface=\"eth1\",ring=\"\"} 5");
	expect_line(s, "ringd_interface_transmit_drops_total{node=\"n1\","
		       "interface=\"eth1\",ring=\"\"} 6");
	expect_line(s, "ringd_interface_receive_bytes_per_second{node=\"n1\","
		       "interface=\"eth1\",ring=\"\"} 1250000.5");
	expect_line(s, "ringd_interface_transmit_bytes_per_second{node=\"n1\","
		       "interface=\"eth1\",ring=\"\"} 42");
	expect_line(s, "ringd_interface_transmit_drops_total{node=\"n2\","
		       "interface=\"eth2\",ring=\"\"} 0");
	expect_line(s, "ringd_rdma_port_receive_bytes_total{node=\"n1\","
		       "device=\"mlx5_0\",port=\"1\",ring=\"\"} 4096");
	expect_line(s, "ringd_rdma_port_transmit_bytes_total{node=\"n1\","
		       "device=\"mlx5_0\",port=\"1\",ring=\"\"} 8192");
	assert_int_equal(
		count_prefix(s, "ringd_interface_receive_bytes_total{"), 4);
	/* n2's first sample: totals, no rate */
	assert_int_equal(
		count_prefix(s, "ringd_interface_receive_bytes_per_second{"),
		2);
	assert_int_equal(
		count_prefix(s, "ringd_rdma_port_receive_bytes_total{"), 2);
	assert_null(strstr(s, "_total{node=\"n4\""));
	expect_line(s, "# TYPE ringd_interface_receive_bytes_total counter");
	expect_line(s, "# TYPE ringd_interface_receive_bytes_per_second gauge");
	/* topology */
	expect_line(s,
		    "ringd_topology_info{kind=\"ring\",live_kind=\"line\"} 1");
	expect_line(s, "ringd_topology_order_valid 0");
	expect_line(s, "ringd_topology_surveyed_timestamp_seconds "
		       "1764756000.5");
	expect_line(s, "ringd_topology_not_surveyed_nodes 0");
	expect_line(s, "ringd_rank{node=\"n2\",ring=\"\"} 1");
	expect_line(s, "ringd_survey_last_failed 1");
	expect_line(s, "ringd_survey_interval_seconds 3600");
	/* bandwidth: the TCP ladder, RDMA beside it, read named by the way
	 * the data flows */
	expect_line(s, BW E1 ",direction=\"a_to_b\",streams=\"1\","
			     "transport=\"tcp\",ring=\"\"} 1176250000");
	expect_line(s, BW E1 ",direction=\"a_to_b\",streams=\"4\","
			     "transport=\"tcp\",ring=\"\"} 2937500000");
	expect_line(s, BW E1 ",direction=\"b_to_a\",streams=\"1\","
			     "transport=\"tcp\",ring=\"\"} 1175000000");
	expect_line(s, BW E1 ",direction=\"a_to_b\",streams=\"2\","
			     "transport=\"rdma_write\",ring=\"\"} 11250000000");
	expect_line(s, BW E1 ",direction=\"b_to_a\",streams=\"2\","
			     "transport=\"rdma_read\",ring=\"\"} 10000000000");
	assert_int_equal(count_prefix(s, BW E1), 5);
	/* the RDMA ladder once, not again as the write figures */
	expect_line(s, BW E2 ",direction=\"a_to_b\",streams=\"4\","
			     "transport=\"rdma_write\",ring=\"\"} 11875000000");
	expect_line(s, BW E2 ",direction=\"b_to_a\",streams=\"4\","
			     "transport=\"rdma_write\",ring=\"\"} 12000000000");
	assert_int_equal(count_prefix(s, BW E2), 2);
	/* not measured (-1, NaN): no sample */
	assert_int_equal(count_prefix(s, BW E3), 0);
	/* (check_format took every value for a finite number) */
	assert_null(strstr(s, "} -"));
	/* latency */
	expect_line(s, LAT E1 ",transport=\"tcp\",size=\"64\","
			      "quantile=\"0.5\",ring=\"\"} 8.6e-06");
	expect_line(s, LAT E1 ",transport=\"tcp\",size=\"64\","
			      "quantile=\"0.99\",ring=\"\"} 1.2e-05");
	expect_line(s, LAT E1 ",transport=\"rdma_write\",size=\"8\","
			      "quantile=\"0.5\",ring=\"\"} 2.5e-06");
	assert_int_equal(count_prefix(s, LAT), 6);
	/* edge facts and live state */
	expect_line(s, "ringd_edge_nominal_bytes_per_second{" E1
		       ",ring=\"\"} 12500000000");
	assert_int_equal(
		count_prefix(s, "ringd_edge_nominal_bytes_per_second{"), 1);
	/* what edge_degraded judges: n1-n2's ladder top, its worse way (b_to_a
	 * not measured: a_to_b's 23.5); n2-n3's RDMA ladder, the worse
	 * direction; n3-n1 nothing. The baseline where the watch has one. */
	expect_line(s, "ringd_edge_headline_bytes_per_second{" E1
		       ",ring=\"\"} 2937500000");
	expect_line(s, "ringd_edge_headline_bytes_per_second{" E2
		       ",ring=\"\"} 11875000000");
	assert_int_equal(
		count_prefix(s, "ringd_edge_headline_bytes_per_second{"), 2);
	expect_line(s, "ringd_edge_baseline_bytes_per_second{" E1
		       ",ring=\"\"} 5000000000");
	assert_int_equal(
		count_prefix(s, "ringd_edge_baseline_bytes_per_second{"), 1);
	expect_line(s, "ringd_edge_light_check_ok{" E1 ",ring=\"\"} 0");
	expect_line(s, "ringd_edge_light_check_timestamp_seconds{" E1
		       ",ring=\"\"} 1764756004.5");
	assert_int_equal(
		count_prefix(s, "ringd_edge_light_check_timestamp_seconds{"),
		1);
	assert_int_equal(
		count_prefix(s, "ringd_edge_light_check_latency_seconds{"), 0);
	expect_line(s, "ringd_edge_sample_bytes_per_second{" E1
		       ",ring=\"\"} 2000000000");
	assert_int_equal(count_prefix(s, "ringd_edge_sample_bytes_per_second{"),
			 1);
	expect_line(s, "ringd_edge_sample_timestamp_seconds{" E1
		       ",ring=\"\"} 1764756004");
	expect_line(s, "ringd_edge_gid_changed{" E1 ",ring=\"\"} 0");
	expect_line(s, "ringd_edge_gid_changed{" E2 ",ring=\"\"} 1");
	assert_int_equal(count_prefix(s, "ringd_edge_gid_changed{"), 2);
	/* one sample per checked pair, 1 if any check found a path */
	expect_line(s, "ringd_diagonal_path{a=\"n1\",b=\"n3\",ring=\"\"} 1");
	expect_line(s, "ringd_diagonal_path{a=\"n2\",b=\"n4\",ring=\"\"} 0");
	assert_int_equal(count_prefix(s, "ringd_diagonal_path{"), 2);
	expect_line(s, "ringd_edge_measured_timestamp_seconds{" E1
		       ",ring=\"\"} 1764756000.123");
	expect_line(s, "ringd_edge_verified{" E1 ",ring=\"\"} 1");
	expect_line(s, "ringd_edge_verified{" E3 ",ring=\"\"} 0");
	expect_line(s, "ringd_edge_up{" E1 ",ring=\"\"} 1");
	expect_line(s, "ringd_edge_up{" E2 ",ring=\"\"} 0");
	assert_int_equal(count_prefix(s, "ringd_edge_up{"), 2);
	expect_line(s, "ringd_edge_state{" E2 ",state=\"down\",ring=\"\"} 1");
	expect_line(s, "ringd_edge_state{" E2 ",state=\"up\",ring=\"\"} 0");
	assert_int_equal(count_prefix(s, "ringd_edge_state{"), 8);
	expect_line(s, "ringd_edge_state_since_timestamp_seconds{" E2
		       ",ring=\"\"} 1764756003");
	free(s);
	alerts_free(alerts);
	nodes_free(nodes);
}

/* Nothing known yet: every family still named once, no sample made up. */
static void test_render_empty(void **state)
{
	struct metrics_src src = {0};
	struct nodes *nodes = nodes_new();
	char *s;

	(void)state;
	s = render(&src);
	/* the coordinator's info, ringd_survey_interval_seconds and
	 * ringd_survey_last_failed */
	assert_int_equal(check_format(s), 3);
	expect_line(s,
		    "ringd_coordinator_info{coordinator=\"\",version=\"\"} 1");
	assert_int_equal(count_prefix(s, "# TYPE "), 65);
	/* no failure known: 0, not absent (a rule reads it) */
	expect_line(s, "ringd_survey_last_failed 0");
	assert_int_equal(
		count_prefix(
			s,
			"ringd_coordinator_certificate_expiry_timestamp_seconds "),
		0);
	free(s);
	src.nodes = nodes;
	s = render(&src);
	assert_int_equal(check_format(s), 3);
	free(s);
	nodes_free(nodes);
}

/* The state store: a state set and its counters. */
static void test_render_store(void **state)
{
	struct store_keeper_info in = {
		.state = STORE_KEEPER_FAILING,
		.unsaved = 909,
		.reopened = 2,
	};
	struct metrics_src src = {.store = &in};
	char *s;

	(void)state;
	s = render(&src);
	expect_line(s, "# TYPE ringd_store_unsaved_writes_total counter");
	expect_line(s, "ringd_store_state{state=\"ok\"} 0");
	expect_line(s, "ringd_store_state{state=\"failing\"} 1");
	expect_line(s, "ringd_store_state{state=\"unavailable\"} 0");
	expect_line(s, "ringd_store_unsaved_writes_total 909");
	expect_line(s, "ringd_store_reopened_total 2");
	free(s);
}

/* A topology not yet overlaid, and a kind from outside the known set:
 * mapped, not passed through. */
static void test_render_kinds(void **state)
{
	struct topo_fixture f;
	struct metrics_src src = {.topology = &f.t};
	char *s;

	(void)state;
	topo_fixture_init(&f);
	f.t.kind = "hexagon\"";
	f.t.live_kind = "";
	f.t.n_ranks = 0;
	s = render(&src);
	check_format(s);
	expect_line(s, "ringd_topology_info{kind=\"other\",live_kind=\"\"} 1");
	assert_int_equal(count_prefix(s, "ringd_topology_order_valid "), 0);
	assert_int_equal(count_prefix(s, "ringd_rank{"), 0);
	/* without the queue pair count, the RDMA figures' streams is
	 * empty */
	expect_line(s, BW E1 ",direction=\"a_to_b\",streams=\"\","
			     "transport=\"rdma_write\",ring=\"\"} 11250000000");
	free(s);
}

/* A site of three rings (issue 24), hand-built as the coordinator
 * publishes it: kind "rings", each ring's order in its RingView. */
struct rings_fixture {
	struct topo_fixture f; /* n1-n2-n3: the ring pod-a */
	Ring__Topology t;
	Ring__Edge e[5];
	Ring__Edge *pe[5];
	Ring__RingView rv[3];
	Ring__RingView *prv[3];
	Ring__Rank rk[2];
	Ring__Rank *prk[2];
	char *m0[3], *m1[2], *m2[2];
};

static void rings_fixture_init(struct rings_fixture *x)
{
	Ring__RingView rv = RING__RING_VIEW__INIT;
	Ring__Rank rk = RING__RANK__INIT;
	static char *n[] = {"n1", "n2", "n3", "n4", "n5", "n6", "n7"};

	topo_fixture_init(&x->f);
	x->t = x->f.t;
	x->t.kind = "rings";
	x->t.live_kind = "rings";
	x->t.n_ranks = 0;
	x->t.ranks = NULL;
	x->t.n_order = 0;
	for (int i = 0; i < 3; i++) {
		x->e[i] = x->f.e[i];
		x->pe[i] = &x->e[i];
	}
	/* n4-n5 a pair; n6-n7 the cut cable of pod-c, a split */
	x->e[3] = x->f.e[0];
	x->e[3].a = "n4";
	x->e[3].b = "n5";
	x->e[4] = x->f.e[0];
	x->e[4].a = "n6";
	x->e[4].b = "n7";
	x->e[4].live_state = "down";
	x->pe[3] = &x->e[3];
	x->pe[4] = &x->e[4];
	x->t.n_edges = 5;
	x->t.edges = x->pe;
	x->t.n_diagonals = 0;
	for (int i = 0; i < 3; i++) {
		x->rv[i] = rv;
		x->prv[i] = &x->rv[i];
	}
	memcpy(x->m0, n, sizeof(x->m0));
	memcpy(x->m1, n + 3, sizeof(x->m1));
	memcpy(x->m2, n + 5, sizeof(x->m2));
	x->rv[0].id = "pod-a";
	x->rv[0].configured = 1;
	x->rv[0].kind = "ring";
	x->rv[0].n_nodes = 3;
	x->rv[0].nodes = x->m0;
	x->rv[0].n_ranks = x->f.t.n_ranks;
	x->rv[0].ranks = x->f.t.ranks;
	x->rv[0].order_valid = 1;
	x->rv[0].health = "critical";
	x->rv[0].n_alerts = 4;
	x->rv[0].slowest_edge = "n1-n2";
	x->rv[0].slowest_gbps = 9.41;
	x->rv[1].id = "ring-n4";
	x->rv[1].kind = "pair";
	x->rv[1].n_nodes = 2;
	x->rv[1].nodes = x->m1;
	for (int i = 0; i < 2; i++) {
		x->rk[i] = rk;
		x->rk[i].node = n[3 + i];
		x->rk[i].rank = (uint32_t)i;
		x->prk[i] = &x->rk[i];
	}
	x->rv[1].n_ranks = 2;
	x->rv[1].ranks = x->prk;
	x->rv[1].order_valid = 1;
	x->rv[1].health = "healthy";
	x->rv[1].surveyed_ms = 1764756000000ULL;
	x->rv[2].id = "pod-c";
	x->rv[2].configured = 1;
	x->rv[2].kind = "split";
	x->rv[2].n_components = 2;
	x->rv[2].n_nodes = 2;
	x->rv[2].nodes = x->m2;
	x->rv[2].health = "critical";
	x->rv[2].n_alerts = 2;
	x->t.n_rings = 3;
	x->t.rings = x->prv;
}

static void test_render_rings(void **state)
{
	struct rings_fixture x;
	struct nodes *nodes = nodes_fixture();
	struct alerts *alerts = alerts_fixture();
	struct metrics_src src = {.nodes = nodes, .alerts = alerts};
	uint64_t now = 1764756000000ULL;
	char *s;

	(void)state;
	rings_fixture_init(&x);
	src.topology = &x.t;
	/* pod-c's: by its edge, and by its subject (a ring's id) */
	assert_int_equal(alerts_raise(alerts, "cable_down", "n6-n7", NULL,
				      "n6-n7", ALERT_CRITICAL, "cut", now),
			 0);
	assert_int_equal(alerts_raise(alerts, "ring_broken", "pod-c", NULL,
				      NULL, ALERT_CRITICAL, "cut", now),
			 0);
	s = render(&src);
	check_format(s);
	expect_line(s,
		    "ringd_topology_info{kind=\"rings\",live_kind=\"rings\"} "
		    "1");
	expect_line(s, "ringd_topology_rings 3");
	/* every node, edge and alert family carries its subject's ring */
	expect_line(s, "ringd_node_up{node=\"n1\",ring=\"pod-a\"} 1");
	expect_line(s, "ringd_node_up{node=\"n4\",ring=\"ring-n4\"} 0");
	expect_line(s, "ringd_node_up{node=\"ev\\\"il\\\\node\\nx\","
		       "ring=\"\"} 0");
	expect_line(s, "ringd_interface_up{node=\"n1\",interface=\"eth1\","
		       "ring=\"pod-a\"} 1");
	expect_line(s, "ringd_alerts_firing{rule=\"cable_down\","
		       "severity=\"critical\",ring=\"pod-a\"} 2");
	expect_line(s, "ringd_alerts_firing{rule=\"cable_down\","
		       "severity=\"critical\",ring=\"pod-c\"} 1");
	expect_line(s, "ringd_alerts_firing{rule=\"ring_broken\","
		       "severity=\"critical\",ring=\"pod-c\"} 1");
	expect_line(s, "ringd_edge_verified{a=\"n4\",a_interface=\"eth1\","
		       "b=\"n5\",b_interface=\"eth1\",ring=\"ring-n4\"} 1");
	expect_line(s, "ringd_edge_up{a=\"n6\",a_interface=\"eth1\",b=\"n7\","
		       "b_interface=\"eth1\",ring=\"pod-c\"} 0");
	expect_line(s, "ringd_edge_up{" E1 ",ring=\"pod-a\"} 1");
	/* each ring's own rank order */
	expect_line(s, "ringd_rank{node=\"n1\",ring=\"pod-a\"} 0");
	expect_line(s, "ringd_rank{node=\"n5\",ring=\"ring-n4\"} 1");
	/* the top-level order is empty: no site-wide order_valid */
	assert_int_equal(count_prefix(s, "ringd_topology_order_valid "), 0);
	/* the per-ring families */
	expect_line(s, "ringd_ring_info{kind=\"ring\",configured=\"true\","
		       "ring=\"pod-a\"} 1");
	expect_line(s, "ringd_ring_info{kind=\"pair\",configured=\"false\","
		       "ring=\"ring-n4\"} 1");
	expect_line(s, "ringd_ring_info{kind=\"split\",configured=\"true\","
		       "ring=\"pod-c\"} 1");
	expect_line(s, "ringd_ring_nodes{ring=\"pod-a\"} 3");
	expect_line(s, "ringd_ring_nodes{ring=\"pod-c\"} 2");
	expect_line(s,
		    "ringd_ring_health{state=\"critical\",ring=\"pod-c\"} 1");
	expect_line(s, "ringd_ring_health{state=\"healthy\",ring=\"pod-c\"} 0");
	expect_line(s, "ringd_ring_health{state=\"healthy\",ring=\"ring-n4\"} "
		       "1");
	expect_line(s, "ringd_ring_order_valid{ring=\"pod-a\"} 1");
	expect_line(s, "ringd_ring_order_valid{ring=\"ring-n4\"} 1");
	assert_int_equal(count_prefix(s, "ringd_ring_order_valid{"), 2);
	expect_line(s, "ringd_ring_alerts_firing{ring=\"pod-c\"} 2");
	expect_line(s, "ringd_ring_slowest_edge_bytes_per_second{ring="
		       "\"pod-a\"} 1176250000");
	assert_int_equal(
		count_prefix(s, "ringd_ring_slowest_edge_bytes_per_second{"),
		1);
	expect_line(s, "ringd_ring_surveyed_timestamp_seconds{ring="
		       "\"ring-n4\"} 1764756000");
	/* cardinality: one series per ring in each per-ring gauge */
	assert_int_equal(count_prefix(s, "ringd_ring_nodes{"), 3);
	free(s);
	alerts_free(alerts);
	nodes_free(nodes);
}

/* The ring's page: the picture from the same inputs as the exposition,
 * in a page that reloads itself; names escaped. */
static void test_page_render(void **state)
{
	struct topo_fixture f;
	struct nodes *nodes = nodes_fixture();
	struct alerts *alerts = alerts_fixture();
	struct metrics_src src = {
		.nodes = nodes,
		.topology = &f.t,
		.alerts = alerts,
		.health = health_for(alerts),
		.coordinator = "coord1",
		.version = "0.1.0",
		.now_ms = 1764756010000ULL,
	};
	struct evbuffer *b = evbuffer_new();
	char *s;

	(void)state;
	topo_fixture_init(&f);
	assert_non_null(b);
	assert_int_equal(page_render(b, &src, 1, NULL), 0);
	s = strndup((const char *)evbuffer_pullup(b, -1),
		    evbuffer_get_length(b));
	assert_non_null(s);
	assert_true(!strncmp(s, "<!DOCTYPE html>\n", 16));
	/* n1, n2 up of five; n2-n3 down */
	assert_non_null(strstr(s, "<title>ringd: critical, 2 of 5 nodes up, 1 "
				  "cable down</title>"));
	assert_non_null(
		strstr(s, "<meta http-equiv=\"refresh\" content=\"5\">"));
	assert_null(strstr(s, "<script"));
	assert_null(strstr(s, "<form"));
	assert_non_null(strstr(s, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
	assert_non_null(strstr(s, "id=\"node-n1\" class=\"node up\""));
	assert_non_null(strstr(s, "id=\"node-n3\" class=\"node never\""));
	assert_non_null(strstr(s, "id=\"node-n4\" class=\"node down\""));
	assert_non_null(strstr(s, "id=\"edge-n1-n2\" class=\"edge up\""));
	assert_non_null(strstr(s, "id=\"edge-n2-n3\" class=\"edge down\""));
	/* A state outside the set: drawn as measured, never passed on. */
	assert_non_null(strstr(s, "id=\"edge-n3-n1\" class=\"edge measured\""));
	assert_null(strstr(s, "sideways"));
	/* The alerts firing, the health from them. */
	assert_non_null(strstr(s, "n3 is down"));
	assert_non_null(strstr(s, "class=\"health critical\""));
	assert_non_null(
		strstr(s, "cut at XYZZY: &quot;text&quot;\xef\xbf\xbd"));
	assert_non_null(
		strstr(s, "data-name=\"ev&quot;il\\node\xef\xbf\xbdx\""));
	assert_non_null(strstr(s, "</svg>\n<p id=\"about\">"));
	assert_true(strlen(s) > 3000);
	free(s);
	/* The picture alone. */
	evbuffer_drain(b, evbuffer_get_length(b));
	assert_int_equal(page_render(b, &src, 0, NULL), 0);
	s = strndup((const char *)evbuffer_pullup(b, -1),
		    evbuffer_get_length(b));
	assert_non_null(s);
	assert_true(!strncmp(s, "<svg xmlns=", 11));
	assert_int_equal(strcmp(s + strlen(s) - 7, "</svg>\n"), 0);
	free(s);
	evbuffer_free(b);
	alerts_free(alerts);
	nodes_free(nodes);
}

/* ---- The server ---- */

struct server {
	struct event_base *base;
	struct metrics *m;
	struct nodes *nodes;
	unsigned scrapes;
	const Ring__Topology *topology; /* NULL: no survey yet */
	const struct alerts *alerts;
};

static void fill_src(struct metrics_src *src, void *arg)
{
	struct server *sv = arg;

	sv->scrapes++;
	src->nodes = sv->nodes;
	src->topology = sv->topology;
	src->alerts = sv->alerts;
	src->coordinator = "coord1";
	src->version = "0.1.0";
}

struct client {
	struct bufferevent *bev;
	struct evbuffer *in;
	int eof;
};

static void client_read(struct bufferevent *bev, void *arg)
{
	struct client *c = arg;

	evbuffer_add_buffer(c->in, bufferevent_get_input(bev));
}

static void client_event(struct bufferevent *bev, short what, void *arg)
{
	struct client *c = arg;

	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		c->eof = 1;
}

static struct client *client_open(struct server *sv, const char *req)
{
	struct client *c = calloc(1, sizeof(*c));
	struct sockaddr_in sin = {.sin_family = AF_INET};

	assert_non_null(c);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(metrics_port(sv->m));
	c->in = evbuffer_new();
	c->bev = bufferevent_socket_new(sv->base, -1, BEV_OPT_CLOSE_ON_FREE);
	assert_non_null(c->in);
	assert_non_null(c->bev);
	bufferevent_setcb(c->bev, client_read, NULL, client_event, c);
	assert_int_equal(bufferevent_socket_connect(
				 c->bev, (struct sockaddr *)&sin, sizeof(sin)),
			 0);
	assert_int_equal(bufferevent_write(c->bev, req, strlen(req)), 0);
	assert_int_equal(bufferevent_enable(c->bev, EV_READ), 0);
	return c;
}

static void client_close(struct client *c)
{
	bufferevent_free(c->bev);
	evbuffer_free(c->in);
	free(c);
}

/* What the client has read, as a string (malloc'd). */
static char *client_str(struct client *c)
{
	size_t n = evbuffer_get_length(c->in);
	char *s = malloc(n + 1);

	assert_non_null(s);
	assert_int_equal(evbuffer_copyout(c->in, s, n), (ev_ssize_t)n);
	s[n] = '\0';
	return s;
}

static int client_headers_done(struct client *c)
{
	size_t len = evbuffer_get_length(c->in);
	const char *p = (const char *)evbuffer_pullup(c->in, -1);

	return p && memmem(p, len, "\r\n\r\n", 4) != NULL;
}

static void set_flag(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	*(int *)arg = 1;
}

/* Run the loop until done(c) or ms have passed; done(c) at the end. */
static int run_until(struct server *sv, struct client *c,
		     int (*done)(struct client *), unsigned ms)
{
	int expired = 0;
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
	struct event *tm = evtimer_new(sv->base, set_flag, &expired);

	assert_non_null(tm);
	evtimer_add(tm, &tv);
	while (!done(c) && !expired)
		event_base_loop(sv->base, EVLOOP_ONCE);
	event_free(tm);
	return done(c);
}

static int client_eof(struct client *c)
{
	return c->eof;
}

/* One request on its own connection, read to the server's close. The
 * reply text is returned (malloc'd). */
static char *http(struct server *sv, const char *req)
{
	struct client *c = client_open(sv, req);
	char *s;

	assert_true(run_until(sv, c, client_eof, 5000));
	s = client_str(c);
	client_close(c);
	return s;
}

static int status_of(const char *reply)
{
	int code = 0;

	if (sscanf(reply, "HTTP/1.%*d %d", &code) != 1)
		return -1;
	return code;
}

static int client_status(struct client *c)
{
	char *s = client_str(c);
	int code = status_of(s);

	free(s);
	return code;
}

static int server_setup(void **state)
{
	struct server *sv = calloc(1, sizeof(*sv));

	assert_non_null(sv);
	sv->base = event_base_new();
	sv->nodes = nodes_fixture();
	sv->m = metrics_new(sv->base, "127.0.0.1:0", fill_src, sv);
	assert_non_null(sv->m);
	assert_int_not_equal(metrics_port(sv->m), 0);
	*state = sv;
	return 0;
}

static int server_teardown(void **state)
{
	struct server *sv = *state;

	metrics_free(sv->m);
	nodes_free(sv->nodes);
	event_base_free(sv->base);
	free(sv);
	return 0;
}

static void test_http_get(void **state)
{
	struct server *sv = *state;
	char *r = http(sv, "GET /metrics HTTP/1.1\r\nHost: x\r\n"
			   "Connection: close\r\n\r\n");
	const char *body = strstr(r, "\r\n\r\n");

	assert_int_equal(status_of(r), 200);
	assert_non_null(strcasestr(r, "\r\nContent-Type: text/plain; "
				      "version=0.0.4; charset=utf-8\r\n"));
	assert_non_null(body);
	body += 4;
	assert_true(check_format(body) > 10);
	expect_line(body, "ringd_node_up{node=\"n1\",ring=\"\"} 1");
	expect_line(body, "ringd_coordinator_info{coordinator=\"coord1\","
			  "version=\"0.1.0\"} 1");
	assert_int_equal(sv->scrapes, 1);
	free(r);
	/* HTTP/1.0, and a query string: the same page */
	r = http(sv, "GET /metrics?x=1 HTTP/1.0\r\n\r\n");
	assert_int_equal(status_of(r), 200);
	assert_non_null(strstr(r, "\r\n\r\n# HELP ringd_coordinator_info "));
	free(r);
	/* HEAD: the headers alone */
	r = http(sv, "HEAD /metrics HTTP/1.1\r\nHost: x\r\n"
		     "Connection: close\r\n\r\n");
	assert_int_equal(status_of(r), 200);
	body = strstr(r, "\r\n\r\n");
	assert_non_null(body);
	assert_string_equal(body, "\r\n\r\n");
	assert_non_null(strcasestr(r, "\r\nContent-Length: "));
	assert_true(atoi(strcasestr(r, "\r\nContent-Length: ") + 18) > 1000);
	free(r);
	assert_int_equal(sv->scrapes, 3);
}

static void test_http_refused(void **state)
{
	struct server *sv = *state;
	char *big = malloc(20000);
	char *r;

	r = http(sv, "GET /other HTTP/1.1\r\nHost: x\r\n"
		     "Connection: close\r\n\r\n");
	assert_int_equal(status_of(r), 404);
	free(r);
	r = http(sv,
		 "GET /ring HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	assert_int_equal(status_of(r), 404);
	free(r);
	r = http(sv, "GET /ring.svg/x HTTP/1.1\r\nHost: x\r\n"
		     "Connection: close\r\n\r\n");
	assert_int_equal(status_of(r), 404);
	free(r);
	/* The page changes nothing: nothing but GET and HEAD. */
	r = http(sv, "POST / HTTP/1.1\r\nHost: x\r\n"
		     "Content-Length: 3\r\nConnection: close\r\n\r\nabc");
	assert_int_equal(status_of(r), 405);
	free(r);
	r = http(sv, "POST /metrics HTTP/1.1\r\nHost: x\r\n"
		     "Content-Length: 3\r\nConnection: close\r\n\r\nabc");
	assert_int_equal(status_of(r), 405);
	assert_non_null(strcasestr(r, "\r\nAllow: GET, HEAD\r\n"));
	free(r);
	r = http(sv, "DELETE /metrics HTTP/1.1\r\nHost: x\r\n"
		     "Connection: close\r\n\r\n");
	assert_int_equal(status_of(r), 405);
	free(r);
	/* A body larger than a scrape needs: refused, not read. */
	r = http(sv, "POST /metrics HTTP/1.1\r\nHost: x\r\n"
		     "Content-Length: 100000\r\nConnection: close\r\n\r\n");
	assert_int_not_equal(status_of(r), 200);
	assert_int_not_equal(status_of(r), 405);
	free(r);
	/* Headers past the limit: refused (or dropped), never served. */
	assert_non_null(big);
	snprintf(big, 20000, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Pad: ");
	memset(big + strlen(big), 'a', 12000);
	big[strlen("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Pad: ") + 12000] =
		'\0';
	strcat(big, "\r\nConnection: close\r\n\r\n");
	r = http(sv, big);
	assert_int_not_equal(status_of(r), 200);
	free(r);
	free(big);
	assert_int_equal(sv->scrapes, 0);
}

static void test_http_page(void **state)
{
	struct server *sv = *state;
	char *r = http(sv, "GET / HTTP/1.1\r\nHost: x\r\n"
			   "Connection: close\r\n\r\n");
	const char *body = strstr(r, "\r\n\r\n");

	assert_int_equal(status_of(r), 200);
	assert_non_null(strcasestr(r, "\r\nContent-Type: text/html; "
				      "charset=utf-8\r\n"));
	assert_non_null(strcasestr(r, "\r\nCache-Control: no-store\r\n"));
	assert_non_null(strcasestr(r, "\r\nContent-Security-Policy: "
				      "default-src 'none';"));
	assert_non_null(body);
	assert_true(!strncmp(body + 4, "<!DOCTYPE html>", 15));
	assert_non_null(strstr(body, "<meta http-equiv=\"refresh\""));
	assert_non_null(strstr(body, "id=\"node-n1\""));
	assert_non_null(strstr(body, "no survey yet"));
	free(r);
	r = http(sv, "GET /ring.svg HTTP/1.0\r\n\r\n");
	assert_int_equal(status_of(r), 200);
	assert_non_null(strcasestr(r, "\r\nContent-Type: image/svg+xml; "
				      "charset=utf-8\r\n"));
	assert_non_null(strstr(r, "\r\n\r\n<svg xmlns="));
	free(r);
	r = http(sv, "HEAD / HTTP/1.1\r\nHost: x\r\n"
		     "Connection: close\r\n\r\n");
	assert_int_equal(status_of(r), 200);
	body = strstr(r, "\r\n\r\n");
	assert_non_null(body);
	assert_string_equal(body, "\r\n\r\n");
	assert_true(atoi(strcasestr(r, "\r\nContent-Length: ") + 18) > 1000);
	free(r);
	assert_int_equal(sv->scrapes, 3);
}

/* HTTP_SERVE_PER_SOURCE kept-alive connections from one address: the
 * next one from it is served at once, and the oldest of the idle ones is
 * closed to make room (a client reconnects for its next request). */
/* A site of three rings served: the overview linking each ring's page;
 * ?ring=ID one ring's page and picture; a query that is not ring=ID, or
 * names no ring: 404 with a short text, nothing rendered. */
static void test_http_rings(void **state)
{
	struct server *sv = *state;
	struct rings_fixture x;
	struct alerts *alerts = alerts_fixture();
	static const char *const bad[] = {
		"/?x=1",
		"/?ring=",
		"/?ring=a%2Fb",
		"/?ring=a&x=1",
		"/ring.svg?ring=a/b",
		"/?RING=pod-a",
		"/?ring=pod-a#x",
		"/?ring=0123456789012345678901234567890123456789012345678901"
		"234567890123",
	};
	char *r;

	rings_fixture_init(&x);
	sv->topology = &x.t;
	sv->alerts = alerts;
	r = http(sv, "GET / HTTP/1.0\r\n\r\n");
	assert_int_equal(status_of(r), 200);
	assert_non_null(strstr(r, "class=\"ringd site\""));
	assert_non_null(strstr(r, "<a href=\"/?ring=pod-a\"><g "
				  "id=\"tile-pod-a\""));
	assert_non_null(strstr(r, "<a href=\"/?ring=ring-n4\">"));
	assert_non_null(strstr(r, "<svg id=\"ring-pod-c\""));
	free(r);
	r = http(sv, "GET /?ring=pod-a HTTP/1.0\r\n\r\n");
	assert_int_equal(status_of(r), 200);
	assert_non_null(strstr(r, "<title>ringd: ring pod-a: critical, 2 of 3 "
				  "nodes up, "));
	assert_null(strstr(r, "class=\"ringd site\""));
	assert_non_null(strstr(r, "id=\"node-n1\""));
	assert_null(strstr(r, "id=\"node-n4\""));
	/* its alerts alone: pod-a's cable_down, not pod-c's */
	assert_non_null(strstr(r, "cut at XYZZY"));
	assert_non_null(strstr(r, "<a href=\"/ring.svg?ring=pod-a\">"));
	free(r);
	r = http(sv, "GET /ring.svg?ring=ring-n4 HTTP/1.0\r\n\r\n");
	assert_int_equal(status_of(r), 200);
	assert_non_null(strcasestr(r, "\r\nContent-Type: image/svg+xml"));
	assert_non_null(strstr(r, "\r\n\r\n<svg xmlns="));
	assert_non_null(strstr(r, "id=\"node-n4\""));
	assert_non_null(strstr(r, "id=\"node-n5\""));
	assert_null(strstr(r, "id=\"node-n1\""));
	free(r);
	r = http(sv, "GET /?ring=pod-z HTTP/1.0\r\n\r\n");
	assert_int_equal(status_of(r), 404);
	assert_non_null(strstr(r, "\r\n\r\nnot found: no such ring"));
	free(r);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char req[256];
		unsigned before = sv->scrapes;

		snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\n\r\n", bad[i]);
		r = http(sv, req);
		if (status_of(r) != 404 ||
		    !strstr(r, "\r\n\r\nnot found: the page takes ?ring=ID"))
			fail_msg("%s: %.200s", bad[i], r);
		/* refused before anything was gathered */
		assert_int_equal(sv->scrapes, before);
		free(r);
	}
	/* the metrics take no query: as before */
	r = http(sv, "GET /metrics?ring=x HTTP/1.0\r\n\r\n");
	assert_int_equal(status_of(r), 200);
	assert_non_null(strstr(r, "\nringd_ring_nodes{ring=\"pod-a\"} 3\n"));
	free(r);
	sv->topology = NULL;
	sv->alerts = NULL;
	alerts_free(alerts);
}

static void test_http_connection_bound(void **state)
{
	struct server *sv = *state;
	struct client *held[HTTP_SERVE_PER_SOURCE], *extra;
	const char *head = "HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n";

	for (unsigned i = 0; i < HTTP_SERVE_PER_SOURCE; i++) {
		held[i] = client_open(sv, head);
		assert_true(run_until(sv, held[i], client_headers_done, 5000));
		assert_int_equal(client_status(held[i]), 200);
	}
	extra = client_open(sv, head);
	assert_true(run_until(sv, extra, client_headers_done, 5000));
	assert_int_equal(client_status(extra), 200);
	assert_true(run_until(sv, held[0], client_eof, 5000));
	for (unsigned i = 1; i < HTTP_SERVE_PER_SOURCE; i++)
		assert_false(held[i]->eof);
	client_close(extra);
	/* The others still held: the server frees them (teardown). */
	for (unsigned i = 0; i < HTTP_SERVE_PER_SOURCE; i++)
		client_close(held[i]);
}

static void test_new_errors(void **state)
{
	struct server *sv = *state;
	char addr[64];

	(void)state;
	errno = 0;
	assert_null(metrics_new(sv->base, "not an address", fill_src, sv));
	assert_int_equal(errno, EINVAL);
	assert_null(metrics_new(sv->base, "/tmp/sock", fill_src, sv));
	assert_int_equal(errno, EINVAL);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", metrics_port(sv->m));
	errno = 0;
	assert_null(metrics_new(sv->base, addr, fill_src, sv));
	assert_int_equal(errno, EADDRINUSE);
	metrics_free(NULL);
}

/* IPv6 loopback, bracketed. */
static void test_new_v6(void **state)
{
	struct event_base *base = event_base_new();
	struct metrics *m;

	(void)state;
	m = metrics_new(base, "[::1]:0", fill_src, NULL);
	if (!m && (errno == EADDRNOTAVAIL || errno == EAFNOSUPPORT)) {
		event_base_free(base);
		skip(); /* no IPv6 here */
	}
	assert_non_null(m);
	assert_int_not_equal(metrics_port(m), 0);
	metrics_free(m);
	event_base_free(base);
}

/* An alert in its hold-down still fires and is counted as clearing too;
 * the health of a restarted coordinator is the state set's relearning. */
static void test_render_clearing(void **state)
{
	struct alerts_conf conf = {.hold_down_ms = 60000,
				   .max_resolved = 16,
				   .keep_resolved_ms = 3600000,
				   .max_firing = 16};
	struct alerts *t = alerts_new(&conf, no_notify, NULL);
	uint64_t now = 1764756000000ULL;
	struct health h;
	struct health_facts f = {.alerts = NULL,
				 .relearning = 1,
				 .relearn_left_ms = 30000,
				 .has_topology = 1,
				 .kind = "ring",
				 .n_ranks = 4};
	struct metrics_src src = {.alerts = t,
				  .health = &h,
				  .coordinator = "coord1",
				  .version = "0.1.0",
				  .now_ms = now};
	char *s;

	(void)state;
	assert_non_null(t);
	assert_int_equal(alerts_raise(t, "cable_down", "n1-n2", NULL, "n1-n2",
				      ALERT_CRITICAL, "cut", now),
			 0);
	assert_int_equal(alerts_raise(t, "cable_down", "n2-n3", NULL, "n2-n3",
				      ALERT_CRITICAL, "cut", now),
			 0);
	assert_int_equal(alerts_raise(t, "mtu_mismatch", "n1-n2", NULL, "n1-n2",
				      ALERT_WARNING, "mtu", now),
			 0);
	alerts_clear(t, "cable_down", "n1-n2", now + 1000);
	src.health = health_for(t);
	s = render(&src);
	assert_true(check_format(s) > 5);
	expect_line(s, "ringd_alerts_firing{rule=\"cable_down\","
		       "severity=\"critical\",ring=\"\"} 2");
	expect_line(s, "ringd_alerts_clearing{rule=\"cable_down\","
		       "severity=\"critical\",ring=\"\"} 1");
	expect_line(s, "ringd_alerts_clearing{rule=\"mtu_mismatch\","
		       "severity=\"warning\",ring=\"\"} 0");
	expect_line(s, "ringd_health{state=\"critical\"} 1");
	free(s);
	/* The page: the alert in its hold-down marked in the picture; the
	 * title says clearing once every critical one clears. */
	{
		struct evbuffer *b = evbuffer_new();

		assert_int_equal(page_render(b, &src, 1, NULL), 0);
		s = strndup((const char *)evbuffer_pullup(b, -1),
			    evbuffer_get_length(b));
		assert_non_null(strstr(s, "class=\"alert critical clearing\""));
		assert_non_null(strstr(s, "<title>ringd: critical, "));
		free(s);
		alerts_clear(t, "cable_down", "n2-n3", now + 1000);
		src.health = health_for(t);
		evbuffer_drain(b, evbuffer_get_length(b));
		assert_int_equal(page_render(b, &src, 1, NULL), 0);
		s = strndup((const char *)evbuffer_pullup(b, -1),
			    evbuffer_get_length(b));
		assert_non_null(
			strstr(s, "<title>ringd: critical (clearing), "));
		free(s);
		evbuffer_free(b);
	}

	/* Relearning: no alert counts, the restart is the state. */
	alerts_free(t);
	t = alerts_new(&conf, no_notify, NULL);
	f.alerts = t;
	health_derive(&f, &h);
	src.alerts = t;
	src.health = &h;
	s = render(&src);
	expect_line(s, "ringd_health{state=\"relearning\"} 1");
	expect_line(s, "ringd_health{state=\"healthy\"} 0");
	assert_non_null(strstr(s, "# TYPE ringd_alerts_clearing gauge"));
	assert_null(strstr(s, "ringd_alerts_clearing{"));
	free(s);
	alerts_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_render_full),
		cmocka_unit_test(test_render_clearing),
		cmocka_unit_test(test_render_empty),
		cmocka_unit_test(test_render_store),
		cmocka_unit_test(test_render_kinds),
		cmocka_unit_test(test_page_render),
		cmocka_unit_test_setup_teardown(test_http_page, server_setup,
						server_teardown),
		cmocka_unit_test_setup_teardown(test_http_get, server_setup,
						server_teardown),
		cmocka_unit_test_setup_teardown(test_http_refused, server_setup,
						server_teardown),
		cmocka_unit_test_setup_teardown(test_http_connection_bound,
						server_setup, server_teardown),
		cmocka_unit_test_setup_teardown(test_new_errors, server_setup,
						server_teardown),
		cmocka_unit_test(test_new_v6),
		cmocka_unit_test(test_render_rings),
		cmocka_unit_test_setup_teardown(test_http_rings, server_setup,
						server_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
