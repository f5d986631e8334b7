/* Topology from the measured graph: classification (ring, pair, line,
 * switch, split), anomalies, and the canonical ring / rank order. Pure
 * functions of their input, so they are unit-tested on hand-built graphs. */
#ifndef RING_TOPO_H
#define RING_TOPO_H

#include <net/if.h>
#include <stddef.h>

/* One cable as seen from its two ends. Node indices refer to names[]. */
struct topo_link {
	unsigned a, b;
	char a_if[IFNAMSIZ], b_if[IFNAMSIZ];
	int a_sees_b; /* a heard b's beacon on a_if (from b_if) */
	int b_sees_a;
	int verified;			 /* probes both ways succeeded */
	unsigned a_mtu, b_mtu;		 /* 0 = unknown */
	char a_subnet[48], b_subnet[48]; /* "10.89.3.0/30"; "" = no address */
	/* Physical ports of both ends ("" = unknown, the interface is its
	 * own port): function pairs over one cable are not parallel cables. */
	char a_port[80], b_port[80];
};

struct topo_input {
	unsigned n_nodes;
	const char *const *names;
	const struct topo_link *links;
	unsigned n_links;
	/* No beacons anywhere, but every node's data addresses reached every
	 * other node's: a switch. */
	int all_to_all_reachable;
	/* Non-adjacent pairs that nevertheless had a data-plane path. */
	const unsigned (*unexpected_paths)[2];
	unsigned n_unexpected_paths;
	/* Known ring members, one flag per node (expected, in the last
	 * published order); NULL: none known. The rank-0 node counts as one
	 * too. They decide which component is the ring when there are
	 * several (see topo_analyse). */
	const unsigned char *member;
};

enum topo_class {
	TOPO_UNKNOWN = 0, /* nothing measured yet */
	TOPO_RING,   /* n >= 3, each node exactly two neighbours, connected */
	TOPO_PAIR,   /* two nodes, one or more parallel cables */
	TOPO_LINE,   /* a ring with one cable missing */
	TOPO_SWITCH, /* all-to-all through a switch, no direct beacons */
	TOPO_SPLIT,  /* several components */
	TOPO_OTHER,  /* connected but none of the above */
	TOPO_RINGS,  /* several rings, each classified alone (topo_site.h) */
};

enum topo_anomaly_kind {
	TOPO_ONE_SIDED,	      /* only one end heard the other */
	TOPO_DEGREE,	      /* a node with three or more direct neighbours */
	TOPO_PARALLEL,	      /* several cables between the same two nodes */
	TOPO_SUBNET_MISMATCH, /* the ends of a cable are on different subnets */
	TOPO_MTU_MISMATCH,
	TOPO_UNEXPECTED_PATH, /* data path between non-adjacent nodes */
	TOPO_ISOLATED,	      /* a node with no neighbour at all */
};

/* Why a node was set apart from the ring. */
enum topo_stray_reason {
	TOPO_STRAY_NO_CABLE, /* no cable both ends of which were heard */
	TOPO_STRAY_OFF_RING, /* cables only to nodes outside the ring */
};

struct topo_stray {
	unsigned node;
	enum topo_stray_reason reason;
};

struct topo_anomaly {
	enum topo_anomaly_kind kind;
	unsigned a, b;	/* nodes involved (b = a when one node) */
	char text[256]; /* operator wording, names included */
};

struct topo_result {
	enum topo_class cls;
	/* ring: cyclic order (order[0] = rank 0); line: the path, from the
	 * end chosen by the same rules; pair: the two nodes; otherwise empty */
	unsigned *order;
	unsigned n_order;
	/* line: the two nodes whose cable is gone */
	unsigned gap_a, gap_b;
	unsigned n_components;
	struct topo_anomaly *anomalies;
	unsigned n_anomalies;
	/* Nodes not cabled into the ring's component, set apart: the class,
	 * the order and n_components are the ring's alone. Ascending by
	 * name. */
	struct topo_stray *strays;
	unsigned n_strays;
	/* The connected component of each node (in->n_nodes entries) over
	 * the adjacency, numbered from 0; NULL on a failed analysis. */
	unsigned *comp;
};

/* direction: which neighbour of rank 0 gets rank 1. */
enum topo_direction {
	TOPO_DIR_LOWER = 0, /* the lower-named neighbour (default) */
	TOPO_DIR_HIGHER = 1,
};

/* Classify and order. rank0: index of the configured rank-0 node, or -1
 * for the lowest name. Only two-sided (or verified) links make adjacency;
 * one-sided ones are anomalies. With several components, one is the
 * ring's and the others are strays (set apart, the ring classified
 * alone) when the known members (in->member, rank0) all lie in one
 * component of two nodes or more. Otherwise (members in several
 * components: a cut ring, an isolated member; or none known) the class
 * is split over every node, as without strays. 0, or -1 with errno
 * (ENOMEM, EINVAL). */
int topo_analyse(const struct topo_input *in, int rank0,
		 enum topo_direction dir, struct topo_result *out);
void topo_result_free(struct topo_result *r);
const char *topo_class_name(enum topo_class c);
const char *topo_anomaly_name(enum topo_anomaly_kind k);
/* "no_cable", "not_cabled_into_ring". */
const char *topo_stray_reason_name(enum topo_stray_reason r);

#endif
