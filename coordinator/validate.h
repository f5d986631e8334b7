/* Checks on what agents send, on arrival and before anything is stored or
 * acted on. An agent holding a valid certificate is still untrusted input:
 * these limits bound the memory a node can make the coordinator keep and
 * the work its claims can cause (docs/SECURITY.md lists them). Each check
 * returns 0, or -1 with a reason for the log and the agent's Error. */
#ifndef RING_VALIDATE_H
#define RING_VALIDATE_H

#include <stddef.h>

#include "ring.pb-c.h"

#define VALIDATE_MAX_INTERFACES 256  /* per inventory */
#define VALIDATE_MAX_IPV4 16	     /* addresses per interface */
#define VALIDATE_MAX_RDMA_DEVICES 64 /* per inventory */
#define VALIDATE_MAX_RDMA_PORTS 8    /* per device */
#define VALIDATE_MAX_GIDS 256	     /* per port */
#define VALIDATE_MAX_NEIGHBOURS 256  /* per neighbour table */
#define VALIDATE_MAX_CAPABILITIES 16 /* in Hello */
#define VALIDATE_MAX_TEXT 256	     /* informational strings */
#define VALIDATE_MAX_ERROR_TEXT 1024 /* error texts */
#define VALIDATE_MAX_REPEATED 1024   /* any repeated field, any message */
#define VALIDATE_MAX_STRING 4096     /* any string, any message */
/* The hardware model (issue 11): PCIe links and physical ports per
 * inventory, interfaces left out as not data ports. */
#define VALIDATE_MAX_PCIE_LINKS 64
#define VALIDATE_MAX_PHYS_PORTS 64
#define VALIDATE_MAX_IGNORED 256
/* A rate in Gbit/s: finite, 0 to this (beyond any NIC or PCIe link). */
#define VALIDATE_MAX_GBPS 100000.0
/* Ports per counters report. */
#define VALIDATE_MAX_COUNTER_PORTS 256
/* Counter deltas per test result (the agent sends at most 128), each of
 * a known source, with a printable name of at most 63 bytes. */
#define VALIDATE_MAX_TEST_COUNTERS 256

/* Any message from an agent: repeated fields and strings within the
 * generic bounds above, strings without NUL bytes. */
int validate_message(const ProtobufCMessage *m, char *why, size_t len);
/* A read test's result from an agent: finite figures in range, no nested
 * results, bounded texts. */
int validate_read_result(const Ring__ReadTestResult *r, char *why, size_t len);
int validate_hello(const Ring__Hello *h, char *why, size_t len);
/* Counts and names as above; the hardware model besides: at most
 * VALIDATE_MAX_PCIE_LINKS links and VALIDATE_MAX_PHYS_PORTS ports, each
 * with an id (printable, each once), member interfaces that the
 * inventory lists (each in one link and one port at most), finite rates
 * (usable no more than raw), an interface's port_id and pcie_link naming
 * a listed port and link of which it is a member, arp_ignore -1..8 and
 * arp_announce -1..2, at most VALIDATE_MAX_IGNORED ignored interface
 * names, none of them also a listed interface. */
int validate_inventory(const Ring__Inventory *inv, char *why, size_t len);
/* The table's shape (counts); entries are checked one by one with
 * validate_neighbour, since their content comes from the data plane and a
 * bad one must not blind the coordinator to the good ones. */
int validate_neighbour_table(const Ring__NeighbourTable *t, char *why,
			     size_t len);
int validate_neighbour(const Ring__Neighbour *nb, char *why, size_t len);
/* Interfaces (at most VALIDATE_MAX_COUNTER_PORTS, valid names, each
 * once), rates finite and not negative, RDMA device names valid. */
int validate_counters_report(const Ring__CountersReport *r, char *why,
			     size_t len);

/* A Linux interface name: 1-15 bytes, printable, no '/', ':' or spaces,
 * not "." or "..". */
int validate_ifname(const char *s);
/* An RDMA device name: 1-63 of [A-Za-z0-9_.-]. */
int validate_rdma_name(const char *s);
/* A unicast IPv4 address a data port can have (not 0/8, 127/8, multicast,
 * reserved or broadcast). */
int validate_unicast_ipv4(const char *s);
/* Printable ASCII of at most max bytes ("" allowed). */
int validate_text(const char *s, size_t max);

#endif
