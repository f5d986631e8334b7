/* counters: the agent's port counters read from a sysfs tree the test
 * writes (statistics files and an RDMA port's data counters), rates
 * against the previous sample, a counter going back, the interfaces left
 * out; and the counters_interval directive. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent_conf.h"
#include "agent/counters.h"
#include "testutil.h"
#include "coordinator/validate.h"

struct fixture {
	char root[64];
};

static void mkdirs(const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(buf, 0755);
			*p = '/';
		}
	mkdir(buf, 0755);
}

static void put(const struct fixture *f, const char *dir, const char *file,
		const char *value)
{
	char path[PATH_MAX];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", f->root, dir);
	mkdirs(path);
	snprintf(path, sizeof(path), "%s/%s/%s", f->root, dir, file);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "%s\n", value);
	assert_int_equal(fclose(fp), 0);
}

/* The eight statistics of ifname, each base + its index (rx_bytes is
 * base, tx_bytes base + 1, ...). */
static void put_stats(const struct fixture *f, const char *ifname,
		      unsigned long long base)
{
	static const char *const names[] = {
		"rx_bytes",  "tx_bytes",  "rx_packets", "tx_packets",
		"rx_errors", "tx_errors", "rx_dropped", "tx_dropped",
	};
	char dir[128], v[32];

	snprintf(dir, sizeof(dir), "sys/class/net/%s/statistics", ifname);
	for (unsigned i = 0; i < 8; i++) {
		snprintf(v, sizeof(v), "%llu", base + i);
		put(f, dir, names[i], v);
	}
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->root, sizeof(f->root), "/tmp/ringd-counters-XXXXXX");
	assert_non_null(mkdtemp(f->root));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	testutil_rm_tree(f->root);
	free(f);
	return 0;
}

/* An inventory as the agent's: a management interface, two data ones
 * (eth2 bound to mlx5_0, whose port 2 serves it), one data interface
 * whose statistics are missing. */
struct inv {
	Ring__Inventory inv;
	Ring__NetInterface f[4];
	Ring__NetInterface *pf[4];
	Ring__RdmaDevice dev;
	Ring__RdmaDevice *pdev;
	Ring__RdmaPort port[2];
	Ring__RdmaPort *pport[2];
};

static void inv_init(struct inv *v)
{
	static const char *const names[] = {"eno1", "eth1", "eth2", "eth9"};

	ring__inventory__init(&v->inv);
	for (unsigned i = 0; i < 4; i++) {
		ring__net_interface__init(&v->f[i]);
		v->f[i].name = (char *)names[i];
		v->pf[i] = &v->f[i];
	}
	v->f[0].management = 1;
	v->f[2].rdma_device = "mlx5_0";
	ring__rdma_device__init(&v->dev);
	v->dev.name = "mlx5_0";
	for (unsigned i = 0; i < 2; i++) {
		ring__rdma_port__init(&v->port[i]);
		v->port[i].port = i + 1;
		v->pport[i] = &v->port[i];
	}
	v->port[0].netdev = "eth3";
	v->port[1].netdev = "eth2";
	v->dev.n_ports = 2;
	v->dev.ports = v->pport;
	v->pdev = &v->dev;
	v->inv.n_interfaces = 4;
	v->inv.interfaces = v->pf;
	v->inv.n_rdma_devices = 1;
	v->inv.rdma_devices = &v->pdev;
}

static const Ring__PortCounters *port_of(const Ring__CountersReport *r,
					 const char *name)
{
	for (size_t i = 0; i < r->n_ports; i++)
		if (!strcmp(r->ports[i]->interface, name))
			return r->ports[i];
	return NULL;
}

static void test_sample_and_rates(void **state)
{
	struct fixture *f = *state;
	struct counters *c = counters_new(f->root);
	const Ring__CountersReport *r;
	const Ring__PortCounters *p;
	struct inv v;

	assert_non_null(c);
	inv_init(&v);
	put_stats(f, "eno1", 5);
	put_stats(f, "eth1", 1000);
	put_stats(f, "eth2", 2000);
	put(f, "sys/class/infiniband/mlx5_0/ports/2/counters", "port_rcv_data",
	    "100");
	put(f, "sys/class/infiniband/mlx5_0/ports/2/counters", "port_xmit_data",
	    "250");

	/* First sample: totals, no rates. */
	r = counters_sample(c, &v.inv, 10000);
	assert_int_equal(r->interval_ms, 0);
	assert_int_equal(r->n_ports, 2); /* not eno1 (mgmt), not eth9 */
	assert_null(port_of(r, "eno1"));
	assert_null(port_of(r, "eth9"));
	p = port_of(r, "eth1");
	assert_non_null(p);
	assert_int_equal(p->rx_bytes, 1000);
	assert_int_equal(p->tx_bytes, 1001);
	assert_int_equal(p->rx_packets, 1002);
	assert_int_equal(p->tx_packets, 1003);
	assert_int_equal(p->rx_errors, 1004);
	assert_int_equal(p->tx_errors, 1005);
	assert_int_equal(p->rx_dropped, 1006);
	assert_int_equal(p->tx_dropped, 1007);
	assert_true(p->rx_bytes_per_s == 0 && p->tx_bytes_per_s == 0);
	assert_string_equal(p->rdma_device, "");
	p = port_of(r, "eth2");
	assert_non_null(p);
	/* The port serving eth2 (2, not the first), words x 4. */
	assert_string_equal(p->rdma_device, "mlx5_0");
	assert_int_equal(p->rdma_port, 2);
	assert_int_equal(p->rdma_rcv_bytes, 400);
	assert_int_equal(p->rdma_xmit_bytes, 1000);

	/* 2 s later: eth1 received 2,000,000 bytes and sent 1,000,000. */
	put(f, "sys/class/net/eth1/statistics", "rx_bytes", "2001000");
	put(f, "sys/class/net/eth1/statistics", "tx_bytes", "1001001");
	r = counters_sample(c, &v.inv, 12000);
	assert_int_equal(r->interval_ms, 2000);
	p = port_of(r, "eth1");
	assert_non_null(p);
	assert_true(p->rx_bytes_per_s == 1000000.0);
	assert_true(p->tx_bytes_per_s == 500000.0);
	p = port_of(r, "eth2");
	assert_true(p->rx_bytes_per_s == 0 && p->tx_bytes_per_s == 0);

	/* A counter that went back (wrap, driver reset): no rate for it this
	 * time; the other direction still has one. */
	put(f, "sys/class/net/eth1/statistics", "rx_bytes", "10");
	put(f, "sys/class/net/eth1/statistics", "tx_bytes", "2001001");
	r = counters_sample(c, &v.inv, 13000);
	p = port_of(r, "eth1");
	assert_int_equal(p->rx_bytes, 10);
	assert_true(p->rx_bytes_per_s == 0);
	assert_true(p->tx_bytes_per_s == 1000000.0);
	/* ... and from the new value on, rates again. */
	put(f, "sys/class/net/eth1/statistics", "rx_bytes", "510");
	r = counters_sample(c, &v.inv, 14000);
	assert_true(port_of(r, "eth1")->rx_bytes_per_s == 500.0);
	counters_free(c);
}

static int listening_eth1(const char *ifname, void *arg)
{
	(void)arg;
	return !strcmp(ifname, "eth1");
}

/* Each port's carrier_changes and carrier, read around the statistics
 * (port_state set); no carrier file (an interface admin-down reads
 * EINVAL) is no carrier; the beacon receiver as the agent says. */
static void test_port_state(void **state)
{
	struct fixture *f = *state;
	struct counters *c = counters_new(f->root);
	const Ring__CountersReport *r;
	const Ring__PortCounters *p;
	char path[PATH_MAX];
	struct inv v;

	assert_non_null(c);
	inv_init(&v);
	put_stats(f, "eth1", 1000);
	put_stats(f, "eth2", 2000);
	put(f, "sys/class/net/eth1", "carrier", "1");
	put(f, "sys/class/net/eth1", "carrier_changes", "4");
	put(f, "sys/class/net/eth2", "carrier_changes", "7");
	r = counters_sample(c, &v.inv, 1000);
	assert_true(r->port_state);
	p = port_of(r, "eth1");
	assert_non_null(p);
	assert_int_equal(p->carrier_changes, 4);
	assert_true(p->carrier);
	assert_false(p->listening); /* no receiver known */
	p = port_of(r, "eth2");
	assert_non_null(p);
	assert_int_equal(p->carrier_changes, 7);
	assert_false(p->carrier);
	counters_set_listening(c, listening_eth1, NULL);
	put(f, "sys/class/net/eth1", "carrier", "0");
	put(f, "sys/class/net/eth1", "carrier_changes", "5");
	r = counters_sample(c, &v.inv, 2000);
	p = port_of(r, "eth1");
	assert_int_equal(p->carrier_changes, 5);
	assert_false(p->carrier);
	assert_true(p->listening);
	assert_false(port_of(r, "eth2")->listening);
	/* No carrier_changes (a kernel before 3.15): the carrier alone. */
	snprintf(path, sizeof(path), "%s/sys/class/net/eth1/carrier_changes",
		 f->root);
	assert_int_equal(unlink(path), 0);
	put(f, "sys/class/net/eth1", "carrier", "1");
	r = counters_sample(c, &v.inv, 3000);
	p = port_of(r, "eth1");
	assert_int_equal(p->carrier_changes, 0);
	assert_true(p->carrier);
	counters_free(c);
}

/* What cannot be read is left out, never reported as zeros. */
static void test_unreadable(void **state)
{
	struct fixture *f = *state;
	struct counters *c = counters_new(f->root);
	const Ring__CountersReport *r;
	const Ring__PortCounters *p;
	struct inv v;

	assert_non_null(c);
	inv_init(&v);
	put_stats(f, "eth1", 0);
	put_stats(f, "eth2", 0);
	/* eth1: one statistic is not a number; eth2's RDMA port has only
	 * one of its data counters. */
	put(f, "sys/class/net/eth1/statistics", "tx_errors", "-3");
	put(f, "sys/class/infiniband/mlx5_0/ports/2/counters", "port_rcv_data",
	    "7");
	r = counters_sample(c, &v.inv, 1000);
	assert_int_equal(r->n_ports, 1);
	p = port_of(r, "eth2");
	assert_non_null(p);
	assert_string_equal(p->rdma_device, "");
	assert_int_equal(p->rdma_rcv_bytes, 0);
	/* No inventory: an empty report. */
	r = counters_sample(c, NULL, 2000);
	assert_int_equal(r->n_ports, 0);
	counters_free(c);
	/* A root that does not exist: nothing, no error. */
	c = counters_new("/nonexistent-ringd-root");
	assert_non_null(c);
	assert_int_equal(counters_sample(c, &v.inv, 1000)->n_ports, 0);
	counters_free(c);
}

/* The report goes through the wire as it is. */
static void test_packs(void **state)
{
	struct fixture *f = *state;
	struct counters *c = counters_new(f->root);
	const Ring__CountersReport *r;
	Ring__CountersReport *back;
	uint8_t buf[4096];
	size_t len;
	struct inv v;

	assert_non_null(c);
	inv_init(&v);
	put_stats(f, "eth1", 1ull << 40);
	put_stats(f, "eth2", 3);
	counters_sample(c, &v.inv, 1000);
	put_stats(f, "eth1", (1ull << 40) + 4096);
	r = counters_sample(c, &v.inv, 2000);
	len = ring__counters_report__get_packed_size(r);
	assert_true(len < sizeof(buf));
	ring__counters_report__pack(r, buf);
	back = ring__counters_report__unpack(NULL, len, buf);
	assert_non_null(back);
	assert_int_equal(back->n_ports, 2);
	assert_int_equal(back->interval_ms, 1000);
	assert_string_equal(back->ports[0]->interface, "eth1");
	assert_int_equal(back->ports[0]->rx_bytes, (1ull << 40) + 4096);
	assert_true(back->ports[0]->rx_bytes_per_s == 4096.0);
	ring__counters_report__free_unpacked(back, NULL);
	counters_free(c);
}

/* The coordinator's checks on arrival: what a hostile agent could send. */
static void test_validate(void **state)
{
	static Ring__PortCounters p[VALIDATE_MAX_COUNTER_PORTS + 1];
	static Ring__PortCounters *pp[VALIDATE_MAX_COUNTER_PORTS + 1];
	static char names[VALIDATE_MAX_COUNTER_PORTS + 1][16];
	Ring__CountersReport r = RING__COUNTERS_REPORT__INIT;
	char why[200];

	(void)state;
	for (unsigned i = 0; i <= VALIDATE_MAX_COUNTER_PORTS; i++) {
		ring__port_counters__init(&p[i]);
		snprintf(names[i], sizeof(names[i]), "eth%u", i);
		p[i].interface = names[i];
		pp[i] = &p[i];
	}
	r.ports = pp;
	r.n_ports = VALIDATE_MAX_COUNTER_PORTS;
	assert_int_equal(validate_counters_report(&r, why, sizeof(why)), 0);
	r.n_ports = VALIDATE_MAX_COUNTER_PORTS + 1;
	assert_int_equal(validate_counters_report(&r, why, sizeof(why)), -1);
	assert_string_equal(why, "257 ports (max 256)");
	r.n_ports = 2;
	p[1].interface = "a/b";
	assert_int_equal(validate_counters_report(&r, why, sizeof(why)), -1);
	assert_string_equal(why, "port 1: invalid interface name");
	p[1].interface = "";
	assert_int_equal(validate_counters_report(&r, why, sizeof(why)), -1);
	p[1].interface = "eth0";
	assert_int_equal(validate_counters_report(&r, why, sizeof(why)), -1);
	assert_string_equal(why, "interface eth0 listed twice");
	p[1].interface = names[1];
	p[1].rx_bytes_per_s = NAN;
	assert_int_equal(validate_counters_report(&r, why, sizeof(why)), -1);
	assert_string_equal(why, "eth1: invalid rate");
	p[1].rx_bytes_per_s = 0;
	p[1].tx_bytes_per_s = -1;
	assert_int_equal(validate_counters_report(&r, why, sizeof(why)), -1);
	p[1].tx_bytes_per_s = INFINITY;
	assert_int_equal(validate_counters_report(&r, why, sizeof(why)), -1);
	p[1].tx_bytes_per_s = 1e9;
	p[1].rdma_device = "mlx5 0";
	assert_int_equal(validate_counters_report(&r, why, sizeof(why)), -1);
	assert_string_equal(why, "eth1: invalid RDMA device name");
	p[1].rdma_device = "mlx5_0";
	assert_int_equal(validate_counters_report(&r, why, sizeof(why)), 0);
}

static unsigned n_errors;

static void count_error(const char *msg, void *arg)
{
	(void)msg;
	(void)arg;
	n_errors++;
}

static int parse(struct agent_conf *c, const char *line)
{
	struct cfg_ctx ctx = {.file = "t.conf", .report = count_error};
	char buf[256];

	n_errors = 0;
	agent_conf_defaults(c);
	snprintf(buf, sizeof(buf), "coordinator c1\nnode n1\n%s\n", line);
	return agent_conf_load_buffer(c, "t.conf", buf, strlen(buf), &ctx);
}

static void test_conf(void **state)
{
	struct agent_conf c;

	(void)state;
	assert_int_equal(parse(&c, ""), 0);
	assert_int_equal(c.counters_interval_ms, 10000);
	assert_int_equal(parse(&c, "counters_interval 0"), 0);
	assert_int_equal(c.counters_interval_ms, 0);
	assert_int_equal(parse(&c, "counters_interval 1s"), 0);
	assert_int_equal(c.counters_interval_ms, 1000);
	assert_int_equal(parse(&c, "counters_interval 1h"), 0);
	assert_int_equal(c.counters_interval_ms, 3600000);
	assert_int_equal(parse(&c, "counters_interval 500ms"), -1);
	assert_int_equal(n_errors, 1);
	assert_int_equal(parse(&c, "counters_interval 61m"), -1);
	assert_int_equal(n_errors, 1);
	assert_int_equal(parse(&c, "counters_interval often"), -1);
	assert_int_equal(n_errors, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sample_and_rates, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_port_state, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_unreadable, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_packs, setup, teardown),
		cmocka_unit_test(test_conf),
		cmocka_unit_test(test_validate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
