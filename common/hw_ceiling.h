/* The hardware-ceiling model (docs/HARDWARE.md), one for the
 * coordinator's findings and `ringctl explain`: a port's line rate less
 * framing at an MTU, a PCIe link trained fully, which limit a measured
 * figure sits at (or shows the model understates), and the survey's
 * ratios that say whose limit a cable or a node hits. Pure: numbers in,
 * numbers out, no text. */
#ifndef RING_HW_CEILING_H
#define RING_HW_CEILING_H

/* RoCE's largest path MTU: below it every message takes more packets. */
#define HW_ROCE_MTU_MAX 4096
/* RoCE's default path MTU, where an active_mtu is not known. */
#define HW_ROCE_MTU_DEFAULT 1024
/* The netdev MTU where none is known. */
#define HW_MTU_DEFAULT 1500
/* The MTU the advice asks for (jumbo frames). */
#define HW_MTU_JUMBO 9000
/* A figure within this fraction of a limit "sits at" it. */
#define HW_AT 0.10
/* A figure more than this fraction above a computed limit shows the
 * model understates it (within it: the limits' rounding). */
#define HW_MODEL_SLACK 0.01

/* Framing per byte on the wire at mtu: RoCE v2 (rdma) or TCP/IPv4 with
 * timestamps, Ethernet's header, FCS, preamble and gap included. */
double hw_framing(int rdma, unsigned mtu);

/* A PCIe link's usable rate were it trained to its device's maximum
 * width and speed (GT/s); usable as it is when those are not known. */
double hw_pcie_full(double usable_gbps, unsigned width, unsigned max_width,
		    double gts, double max_gts);

/* Where figure gbps stands against limits[0..n) (Gbps, > 0): *at the
 * lowest limit it sits at (within HW_AT), *low the lowest limit,
 * *understated the lowest limit when the figure is above it by more than
 * HW_MODEL_SLACK; each -1 when none. */
void hw_place(double gbps, const double *limits, unsigned n, int *at, int *low,
	      int *understated);

/* A cable's port step (all its functions at once) against its best
 * function alone (the ratio, worse direction). */
enum hw_port_step {
	HW_PORT_NEEDS_TWINS, /* together well above one alone */
	HW_PORT_AT_LIMIT,    /* hardly above: the cable or port is the limit */
	HW_PORT_BETWEEN,
};
enum hw_port_step hw_port_step_class(double ratio);

/* Ring load both ways at once (both) against one way (one) on a cable:
 * whether it fell enough to say the host side limits it. */
int hw_load_fell(double both, double one);

/* A node's function pairs through one PCIe link (best of them, slow_hi)
 * against the worst through another link (fast_lo): whether that link is
 * the limit. */
int hw_link_slower(double slow_hi, double fast_lo);

#endif
