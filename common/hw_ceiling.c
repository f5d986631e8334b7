/* The hardware-ceiling model: framing, PCIe trained fully, a figure's
 * place among its limits, and the survey's ratios. See hw_ceiling.h. */
#include "hw_ceiling.h"

/* Framing per packet, bytes: Ethernet header, FCS, preamble and gap (38);
 * TCP/IPv4 with timestamps (52); RoCE v2: IPv4, UDP, BTH, ICRC (44). */
#define HW_ETH_WIRE 38.0
#define HW_TCPIP_HDR 52.0
#define HW_ROCE_HDR 44.0
/* Port step vs one function alone: at 1.5x the twins add a function's
 * worth; under 1.2x they add hardly anything. */
#define HW_TWINS_RATIO 1.5
#define HW_LIMIT_RATIO 1.2
/* Both ways at once under three quarters of one way: the host side. */
#define HW_LOAD_FELL 0.75
/* A link's best pair at most 60% of another link's worst: that link. */
#define HW_LINK_SLOWER 0.6

double hw_framing(int rdma, unsigned mtu)
{
	if (rdma)
		return mtu / (mtu + HW_ROCE_HDR + HW_ETH_WIRE);
	return (mtu - HW_TCPIP_HDR) / (mtu + HW_ETH_WIRE);
}

double hw_pcie_full(double usable_gbps, unsigned width, unsigned max_width,
		    double gts, double max_gts)
{
	double full = usable_gbps;

	if (width && max_width > width)
		full *= (double)max_width / width;
	if (gts > 0 && max_gts > gts)
		full *= max_gts / gts;
	return full;
}

void hw_place(double gbps, const double *limits, unsigned n, int *at, int *low,
	      int *understated)
{
	double lowest = 0;

	*at = -1;
	*low = -1;
	*understated = -1;
	for (unsigned i = 0; i < n; i++) {
		double r = gbps / limits[i];

		if (*low < 0 || limits[i] < lowest) {
			*low = (int)i;
			lowest = limits[i];
		}
		if (r >= 1.0 - HW_AT && r <= 1.0 + HW_AT &&
		    (*at < 0 || limits[i] < limits[*at]))
			*at = (int)i;
	}
	if (*low >= 0 && gbps > (1.0 + HW_MODEL_SLACK) * lowest)
		*understated = *low;
}

enum hw_port_step hw_port_step_class(double ratio)
{
	if (ratio >= HW_TWINS_RATIO)
		return HW_PORT_NEEDS_TWINS;
	if (ratio < HW_LIMIT_RATIO)
		return HW_PORT_AT_LIMIT;
	return HW_PORT_BETWEEN;
}

int hw_load_fell(double both, double one)
{
	return both < HW_LOAD_FELL * one;
}

int hw_link_slower(double slow_hi, double fast_lo)
{
	return !(slow_hi > HW_LINK_SLOWER * fast_lo);
}
