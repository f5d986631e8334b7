/* The verbs engine's resources: the device, port and GID facing the peer,
 * the registered buffer, queue pairs created and in INIT. */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "inventory.h"
#include "verbs_int.h"

#define VERBS_MAX_RD_ATOM 16

/* ---- device, port and GID ---- */

static int verbs_gid_is_v4(const uint8_t *g)
{
	static const uint8_t pfx[12] = {0, 0, 0, 0, 0,	  0,
					0, 0, 0, 0, 0xff, 0xff};

	return !memcmp(g, pfx, sizeof(pfx));
}

/* Higher is better: RoCE v2 over IPv4 (what NCCL uses on a routed or
 * direct-cabled RoCE fabric), then v2 over IPv6, then the rest; link-local
 * addresses last. */
static int verbs_gid_score(const struct ibv_gid_entry *e)
{
	const uint8_t *g = e->gid.raw;
	int v4 = verbs_gid_is_v4(g);
	int ll = v4 ? (g[12] == 169 && g[13] == 254)
		    : (g[0] == 0xfe && (g[1] & 0xc0) == 0x80);
	int s = e->gid_type == IBV_GID_TYPE_ROCE_V2 ? 8 : 4;

	if (v4)
		s += 2;
	if (!ll)
		s += 1;
	return s;
}

static void verbs_fill_ipv4(struct verbs_endpoint *ep)
{
	struct ifaddrs *ifa, *i;
	struct in_addr want;

	if (!verbs_gid_is_v4(ep->gid))
		return;
	memcpy(&want, ep->gid + 12, 4);
	inet_ntop(AF_INET, &want, ep->ipv4, sizeof(ep->ipv4));
	if (getifaddrs(&ifa) < 0)
		return;
	for (i = ifa; i; i = i->ifa_next) {
		const struct sockaddr_in *a = (void *)i->ifa_addr;
		const struct sockaddr_in *m = (void *)i->ifa_netmask;

		if (!a || a->sin_family != AF_INET || !m ||
		    a->sin_addr.s_addr != want.s_addr)
			continue;
		ep->prefix = (unsigned)__builtin_popcount(m->sin_addr.s_addr);
		break;
	}
	freeifaddrs(ifa);
}

/* Choose port and GID on an open device. ifindex 0 = any interface. */
int verbs_pick_gid(struct verbs_test *t, unsigned ifindex,
		   const struct verbs_setup *s, char *why, size_t len)
{
	struct ibv_gid_entry tab[256], best;
	ssize_t n = ibv_query_gid_table(t->ctx, tab, 256, 0);
	int best_score = -1;

	if (s->gid_set) {
		unsigned port = t->local.port ? t->local.port : 1;

		if (ibv_query_gid_ex(t->ctx, port, s->gid_index, &best, 0)) {
			snprintf(why, len,
				 "GID index %u is not valid on %s port %u",
				 s->gid_index, t->local.device, port);
			return -1;
		}
		best_score = 0;
	}
	for (ssize_t i = 0; !s->gid_set && i < n; i++) {
		int sc;

		if (ifindex && tab[i].ndev_ifindex != ifindex)
			continue;
		if (t->local.port && tab[i].port_num != t->local.port)
			continue;
		sc = verbs_gid_score(&tab[i]);
		if (sc > best_score) {
			best_score = sc;
			best = tab[i];
		}
	}
	if (best_score < 0) {
		snprintf(why, len,
			 "%s has no GID%s%s: is the interface up with an "
			 "address, and is it bound to this RDMA device?",
			 t->local.device, ifindex ? " on " : "",
			 ifindex ? s->interface : "");
		return -1;
	}
	t->local.port = best.port_num;
	t->local.gid_index = best.gid_index;
	memcpy(t->local.gid, best.gid.raw, 16);
	inet_ntop(AF_INET6, best.gid.raw, t->local.gid_str,
		  sizeof(t->local.gid_str));
	snprintf(t->local.gid_type, sizeof(t->local.gid_type), "%s",
		 inventory_gid_type(best.gid_type));
	if (best.ndev_ifindex)
		if_indextoname(best.ndev_ifindex, t->local.netdev);
	verbs_fill_ipv4(&t->local);
	return 0;
}

static int verbs_allowed(const struct verbs_setup *s, const char *dev)
{
	return !s->conf || agent_conf_is_rdma_device(s->conf, dev);
}

/* The device that carries a GID on ifindex (the interface facing the
 * peer), among those the agent may use. */
struct ibv_context *verbs_open(const struct verbs_setup *s, unsigned ifindex,
			       char *name, size_t name_len, char *why,
			       size_t len)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n = 0;

	list = ibv_get_device_list(&n);
	if (!list) {
		snprintf(why, len, "no RDMA devices: %s", strerror(errno));
		return NULL;
	}
	for (int i = 0; i < n && !ctx; i++) {
		const char *dn = ibv_get_device_name(list[i]);
		struct ibv_gid_entry tab[256];
		ssize_t k;
		int match = 0;

		if (s->device && *s->device) {
			if (strcmp(dn, s->device))
				continue;
			if (!verbs_allowed(s, dn)) {
				snprintf(why, len,
					 "RDMA device %s is not this agent's "
					 "(rdma_device in agent.conf)",
					 dn);
				break;
			}
			ctx = ibv_open_device(list[i]);
			if (!ctx)
				snprintf(why, len, "cannot open %s: %s", dn,
					 strerror(errno));
			break;
		}
		if (!verbs_allowed(s, dn))
			continue;
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			continue;
		k = ibv_query_gid_table(ctx, tab, 256, 0);
		for (ssize_t j = 0; j < k && !match; j++)
			match = !ifindex || tab[j].ndev_ifindex == ifindex;
		if (!match) {
			ibv_close_device(ctx);
			ctx = NULL;
		}
	}
	if (ctx)
		snprintf(name, name_len, "%s",
			 ibv_get_device_name(ctx->device));
	else if (!*why && s->device && *s->device)
		snprintf(why, len, "no RDMA device named %s", s->device);
	else if (!*why)
		snprintf(why, len,
			 "no RDMA device of this agent has a GID on %s (no "
			 "RoCE port there, or the interface has no address)",
			 s->interface && *s->interface ? s->interface : "any "
								       "interface");
	ibv_free_device_list(list);
	return ctx;
}

int verbs_query(struct verbs_test *t, char *why, size_t len)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	int e;

	e = ibv_query_device(t->ctx, &da);
	if (e) {
		snprintf(why, len, "ibv_query_device(%s): %s", t->local.device,
			 strerror(e));
		return -1;
	}
	e = ibv_query_port(t->ctx, (uint8_t)t->local.port, &pa);
	if (e) {
		snprintf(why, len, "ibv_query_port(%s port %u): %s",
			 t->local.device, t->local.port, strerror(e));
		return -1;
	}
	if (pa.state != IBV_PORT_ACTIVE) {
		snprintf(why, len, "%s port %u is %s, not ACTIVE (link down?)",
			 t->local.device, t->local.port,
			 ibv_port_state_str(pa.state));
		return -1;
	}
	t->rd_atom = da.max_qp_rd_atom < VERBS_MAX_RD_ATOM
			     ? (unsigned)da.max_qp_rd_atom
			     : VERBS_MAX_RD_ATOM;
	if (!t->rd_atom)
		t->rd_atom = 1;
	t->local.rd_atomic = t->rd_atom;
	if ((int)t->p.tx_depth > da.max_qp_wr) {
		snprintf(why, len, "tx depth %u exceeds %s's limit %d",
			 t->p.tx_depth, t->local.device, da.max_qp_wr);
		return -1;
	}
	t->active_mtu = pa.active_mtu;
	t->local.mtu = 128u << pa.active_mtu;
	t->local.lid = pa.lid;
	t->is_ib = pa.link_layer != IBV_LINK_LAYER_ETHERNET;
	return 0;
}

/* ---- memory ---- */

int verbs_register(struct verbs_test *t, uint64_t max_memory, char *why,
		   size_t len)
{
	uint64_t need = verbs_params_memory(&t->p);
	size_t align = need >= (2u << 20) ? 2u << 20 : 4096;
	struct rlimit rl;
	int e;

	if (need > max_memory) {
		snprintf(why, len,
			 "the test needs %llu MiB of registered memory; "
			 "rdma_max_memory allows %llu MiB",
			 (unsigned long long)(need >> 20),
			 (unsigned long long)(max_memory >> 20));
		errno = E2BIG;
		return -1;
	}
	t->buf_len = (need + align - 1) / align * align;
	e = posix_memalign((void **)&t->buf, align, t->buf_len);
	if (e) {
		t->buf = NULL;
		snprintf(why, len, "cannot allocate %zu bytes: %s", t->buf_len,
			 strerror(e));
		errno = e;
		return -1;
	}
	memset(t->buf, 0, t->buf_len);
	t->mr = ibv_reg_mr(t->pd, t->buf, t->buf_len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ);
	if (!t->mr) {
		e = errno;
		if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 &&
		    rl.rlim_cur != RLIM_INFINITY)
			snprintf(why, len,
				 "ibv_reg_mr of %zu KiB failed: %s; the "
				 "locked-memory limit (RLIMIT_MEMLOCK) is "
				 "%llu KiB: raise LimitMEMLOCK in "
				 "ring-agent.service to at least "
				 "rdma_max_total_memory plus a little",
				 t->buf_len >> 10, strerror(e),
				 (unsigned long long)(rl.rlim_cur >> 10));
		else
			snprintf(why, len, "ibv_reg_mr of %zu KiB failed: %s",
				 t->buf_len >> 10, strerror(e));
		free(t->buf);
		t->buf = NULL;
		errno = e;
		return -1;
	}
	t->local.rkey = t->mr->rkey;
	t->local.addr = (uint64_t)(uintptr_t)t->buf;
	t->local.length = t->buf_len;
	return 0;
}

/* ---- queue pairs ---- */

struct ibv_qp *verbs_qp_create(struct verbs_test *t, unsigned inline_)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp;

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = t->cq;
	ia.recv_cq = t->cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = t->p.tx_depth;
	ia.cap.max_recv_wr = 1;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.cap.max_inline_data = inline_;
	qp = ibv_create_qp(t->pd, &ia);
	if (qp)
		t->max_inline = ia.cap.max_inline_data;
	return qp;
}

int verbs_qp_to_init(struct verbs_test *t, struct ibv_qp *qp)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = (uint8_t)t->local.port;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ;
	return ibv_modify_qp(qp, &a,
			     IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				     IBV_QP_ACCESS_FLAGS);
}
