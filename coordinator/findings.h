/* Findings: the measured figures turned into operator advice. Pure. */
#ifndef RING_FINDINGS_H
#define RING_FINDINGS_H

#include "ring.pb-c.h"

/* Ladder steps the rules take (survey_streams has at most four). */
#define FINDINGS_LADDER_MAX 4
/* Nodes or cables one finding names as fields; more are in its text. */
#define FINDINGS_NAMES_MAX 8

/* The ladder the edges of one call were measured with: step i of every
 * edge's figures ran streams[i] streams (or queue pairs), in any order.
 * The largest count is the top figure; the smallest against it tells
 * saturation, the counts between say how many channels are enough. */
struct findings_ladder {
	unsigned streams[FINDINGS_LADDER_MAX];
	unsigned n;
	/* What the top figure is, for the texts: NULL = "N streams" with
	 * the largest count; an RDMA survey says e.g. "4 RDMA QPs". */
	const char *top_what;
	/* What the inventories say of the NIC halves (twins), for the
	 * uniform ceiling's advice: FINDINGS_HALVES_UNKNOWN (0, no
	 * inventories: the advice names unused halves as a suspect),
	 * FINDINGS_HALVES_UNUSED (some function has carrier but no address),
	 * FINDINGS_HALVES_USED (every cabled function is addressed: not a
	 * suspect). findings_hw_halves() tells. */
	int halves;
};

#define FINDINGS_HALVES_UNKNOWN 0
#define FINDINGS_HALVES_UNUSED 1
#define FINDINGS_HALVES_USED 2

struct findings_edge {
	const char *name;	 /* "n1-n2" */
	const char *dir_name[2]; /* "n1->n2", "n2->n1" */
	/* Measured Gbps per direction and ladder step; < 0 = not measured. */
	double gbps[2][FINDINGS_LADDER_MAX];
	double nominal_gbps; /* the port's nominal rate; 0 = unknown */
};

struct finding {
	char code[32];	/* "saturation", "uniform_ceiling", "degraded_edge",
			   "asymmetric", ... */
	char level[8];	/* "info", "warn" */
	char text[320]; /* operator wording, figures and names included */
	/* Its subject where it is one node's interface or port ("" else),
	 * and the text less those, for grouping it with the same finding on
	 * other nodes. */
	char node[64];
	char iface[32];
	char gist[320];
	/* The rest of its subject and its figures, as data (issue 23):
	 * ringctl decides on these, never on the text. Empty or 0: none. */
	char edge[160]; /* "a-b" as the topology names the edge */
	char cables[FINDINGS_NAMES_MAX][64]; /* cable ids it names */
	unsigned n_cables;
	int ring;	    /* about every edge, node or cable alike */
	char pcie_link[64]; /* a PCIe link id */
	char peer_node[64]; /* the other end it names */
	char peer_iface[32];
	char nodes[FINDINGS_NAMES_MAX][64]; /* every node it names */
	unsigned n_nodes;
	char ifaces[FINDINGS_NAMES_MAX][64]; /* every function of node */
	unsigned n_ifaces;
	double gbps;	       /* the figure it is about (measured) */
	double reference_gbps; /* what that is held against */
	unsigned mtu, peer_mtu;
};

/* ---- the subject as fields and the wire message (findings_msg.c) ---- */

/* A finding's text, code and level; every other field empty. */
void findings_init(struct finding *f, const char *code, const char *level,
		   const char *text);

/* Name node among the nodes f speaks of (once; past the room dropped). */
void findings_name_node(struct finding *f, const char *node);

/* Name ifname among the functions of f's node it speaks of (once). */
void findings_name_iface(struct finding *f, const char *ifname);

/* Name cable id among the cables f speaks of (once). */
void findings_name_cable(struct finding *f, const char *id);

/* f is about the edge a-b: its name, and both nodes named. */
void findings_set_edge(struct finding *f, const char *a, const char *b);

/* The one constructor of the wire message: f copied into memory from
 * alloc(ctx, size) (an arena the message lives in; never freed one by
 * one), every subject and figure field set; its text is text where that
 * is not NULL (longer than f holds), else f's. NULL when alloc fails. */
typedef void *(*findings_alloc_fn)(void *ctx, size_t size);
Ring__Finding *findings_msg(const struct finding *f, const char *text,
			    findings_alloc_fn alloc, void *ctx);

/* Rules (thresholds in findings.c, documented there), "top" being the
 * ladder's largest stream count:
 * - saturation: the smallest count vs the top ("1 stream reaches 36% of 8
 *   streams; use at least 4 channels"), from the median over edges;
 * - uniform ceiling: all edges within ~20% of each other and well under
 *   nominal: "link-layer ceiling, not a bad cable; check host link,
 *   PFC/ECN, unused NIC halves" (the halves only when ladder->halves does
 *   not say all are used);
 * - degraded edge: one edge well under the others: named;
 * - asymmetric: an edge whose two directions differ by more than ~20%.
 * Edges of one method per call. Returns the number written (at most
 * max). */
unsigned findings_compute(const struct findings_ladder *ladder,
			  const struct findings_edge *edges, unsigned n,
			  struct finding *out, unsigned max);

/* One node for the hardware rules: its inventory and neighbour table as
 * last received (either may be NULL). */
struct findings_hw_node {
	const char *name;
	const Ring__Inventory *inv;
	const Ring__NeighbourTable *nbrs;
};

/* Findings from the port and PCIe model of the inventories (issue 11),
 * per node in order, then across cables:
 * - port_half_unused (warn): a physical port with an addressed function
 *   and a twin with carrier but no address, both named;
 * - unaddressed_port (info): a function with carrier and no address that
 *   is not such a twin;
 * - one_pcie_link (warn): every neighbour-facing function (addressed,
 *   with carrier, and heard a neighbour when there is a neighbour table)
 *   of two or more ports on one PCIe link while another link's functions
 *   have carrier;
 * - pcie_downtrained (warn): a link below its device's maximum speed or
 *   width while the port above it supports more (PcieLink.narrow
 *   "downtrained"): reseat, slot/riser, firmware, lspci of both ends;
 * - pcie_wired_narrow (info): a link below its device's maximum at the
 *   port above's own maximum ("wired_narrow"): the board, nothing to fix;
 * - pcie_narrow (warn): below the device's maximum, the port above not
 *   read ("unknown", or an agent before the field): either of the two;
 * - twins_differ (warn): a port whose functions differ (speed, MTU,
 *   carrier, PCIe link);
 * - rdma_mtu (warn): an active Ethernet RDMA port of a cabled data
 *   function with active_mtu under 4096;
 * - arp_flux (warn): two data functions of a node in one IPv4 subnet with
 *   arp_ignore 0 or arp_announce under 2;
 * - mtu_mismatch (warn): the two ends of a cable (a neighbour heard on a
 *   data function) with different netdev MTUs, once per cable;
 * - neighbour_mac (warn): a beacon's source MAC that is not the MAC the
 *   sender's inventory gives for the interface it names.
 * Returns the number written (at most max). */
unsigned findings_hw(const struct findings_hw_node *nodes, unsigned n,
		     struct finding *out, unsigned max);

/* FINDINGS_HALVES_* for the inventories of nodes (UNKNOWN with none). */
int findings_hw_halves(const struct findings_hw_node *nodes, unsigned n);

#endif
