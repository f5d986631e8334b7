#include "ctl.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int ctl_request(const char *sock, int timeout_ms, Ring__Envelope *req,
		Ring__Envelope **rep, char *err, size_t errlen)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	Ring__Envelope *r = NULL;
	int fd, rc;

	if (strlen(sock) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "%s: socket path too long", sock);
		return -1;
	}
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sock);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		snprintf(err, errlen,
			 "cannot reach the coordinator at %s: %s%s", sock,
			 strerror(errno),
			 errno == ENOENT || errno == ECONNREFUSED
				 ? " (is ring-coordinator running?)"
			 : errno == EACCES ? " (are you in its group?)"
					   : "");
		goto fail;
	}
	req->request_id = (uint64_t)getpid();
	rc = frame_write_fd(fd, req, timeout_ms);
	if (rc < 0) {
		snprintf(err, errlen, "%s: sending request: %s", sock,
			 frame_strerror(rc));
		goto fail;
	}
	/* Skip anything that is not our answer (none today). */
	do {
		frame_free(r);
		r = NULL;
		rc = frame_read_fd(fd, 64u << 20, timeout_ms, &r);
		if (rc < 0) {
			snprintf(err, errlen, "%s: reading reply: %s", sock,
				 frame_strerror(rc));
			goto fail;
		}
	} while (r->request_id != req->request_id);
	close(fd);
	*rep = r;
	return 0;
fail:
	close(fd);
	return -1;
}

void ctl_format_time(unsigned long long ms, char *buf, size_t len)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (!ms || !gmtime_r(&t, &tm)) {
		snprintf(buf, len, "%s", "");
		return;
	}
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int ctl_status_health(const Ring__StatusReply *r)
{
	for (size_t i = 0; i < r->n_nodes; i++)
		if (r->nodes[i]->expected && strcmp(r->nodes[i]->state, "up"))
			return 1;
	return 0;
}

/* Member order is the column order of `ringctl status`; the fields written
 * only for a node that is not up keep their column (see writer.h). */
/* Unified memory is what a ring adds per node (the field notes' point), so
 * status shows it, in GiB, as computed from the agent's MemTotal. */
static double ctl_gib(uint64_t kib)
{
	return (double)kib / (1024.0 * 1024.0);
}

/* full: inventory's view (every timestamp and figure); otherwise the
 * columns of the status table. */
static void ctl_render_node_status(struct writer *w, const Ring__NodeStatus *n,
				   int full)
{
	int up = !strcmp(n->state, "up");
	char t[32];

	writer_str(w, "node", n->node);
	writer_str(w, "state", n->state);
	writer_bool(w, "expected", n->expected);
	writer_str(w, "mgmt_address", n->mgmt_address);
	ctl_format_time(up ? n->connected_since_ms : n->down_since_ms, t,
			sizeof(t));
	writer_str(w, up ? "connected_since" : "down_since", t);
	writer_str(w, "agent_version", n->agent_version);
	writer_uint(w, "data_interfaces", n->n_interfaces);
	writer_uint(w, "rdma_devices", n->n_rdma_devices);
	writer_list_start(w, "unaddressed_up");
	for (size_t i = 0; i < n->n_unaddressed_up; i++)
		writer_str(w, NULL, n->unaddressed_up[i]);
	writer_list_end(w);
	writer_double(w, "mem_total_gib", ctl_gib(n->mem_total_kib), 1);
	if (!up)
		writer_str(w, "down_reason", n->down_reason);
	if (!full)
		return;
	ctl_format_time(n->last_seen_ms, t, sizeof(t));
	writer_str(w, "last_seen", t);
	writer_uint(w, "mem_total_kib", n->mem_total_kib);
	writer_uint(w, "mem_available_kib", n->mem_available_kib);
}

void ctl_render_status(struct writer *w, const Ring__StatusReply *r)
{
	uint64_t mem = 0;

	writer_str(w, "coordinator", r->coordinator);
	writer_str(w, "version", r->version);
	writer_str(w, "health", ctl_status_health(r) ? "degraded" : "healthy");
	writer_uint(w, "expected", r->n_expected);
	for (size_t i = 0; i < r->n_nodes; i++)
		if (!strcmp(r->nodes[i]->state, "up"))
			mem += r->nodes[i]->mem_total_kib;
	writer_uint(w, "connected", r->n_connected);
	/* Computed: the sum of the up nodes' MemTotal. */
	writer_double(w, "mem_total_gib_up_nodes", ctl_gib(mem), 1);
	writer_table_start(w, "nodes");
	for (size_t i = 0; i < r->n_nodes; i++) {
		writer_obj_start(w, NULL);
		ctl_render_node_status(w, r->nodes[i], 0);
		writer_obj_end(w);
	}
	writer_table_end(w);
}

static void ctl_render_interface(struct writer *w, const Ring__NetInterface *f)
{
	writer_str(w, "name", f->name);
	writer_bool(w, "management", f->management);
	writer_str(w, "mac", f->mac);
	writer_list_start(w, "ipv4");
	for (size_t i = 0; i < f->n_ipv4; i++) {
		writer_obj_start(w, NULL);
		writer_str(w, "address", f->ipv4[i]->address);
		writer_uint(w, "prefix", f->ipv4[i]->prefix);
		writer_obj_end(w);
	}
	writer_list_end(w);
	writer_uint(w, "mtu", f->mtu);
	writer_bool(w, "admin_up", f->admin_up);
	writer_bool(w, "carrier", f->carrier);
	writer_str(w, "operstate", f->operstate);
	writer_bool(w, "up_no_address", f->up_no_address);
	writer_int(w, "speed_mbps", f->speed_mbps);
	writer_uint(w, "nominal_speed_mbps", f->nominal_speed_mbps);
	writer_str(w, "driver", f->driver);
	writer_str(w, "pci_address", f->pci_address);
	writer_str(w, "pcie_link_speed", f->pcie_link_speed);
	writer_uint(w, "pcie_link_width", f->pcie_link_width);
	writer_str(w, "pcie_max_link_speed", f->pcie_max_link_speed);
	writer_uint(w, "pcie_max_link_width", f->pcie_max_link_width);
	/* Derived from link speed, width and encoding, not measured. */
	writer_double(w, "pcie_gbps_computed", f->pcie_gbps, 1);
	writer_str(w, "rdma_device", f->rdma_device);
}

static void ctl_render_rdma(struct writer *w, const Ring__RdmaDevice *d)
{
	writer_str(w, "name", d->name);
	writer_str(w, "node_guid", d->node_guid);
	writer_str(w, "fw_ver", d->fw_ver);
	writer_list_start(w, "ports");
	for (size_t i = 0; i < d->n_ports; i++) {
		const Ring__RdmaPort *p = d->ports[i];

		writer_obj_start(w, NULL);
		writer_uint(w, "port", p->port);
		writer_str(w, "state", p->state);
		writer_str(w, "link_layer", p->link_layer);
		writer_str(w, "netdev", p->netdev);
		writer_double(w, "active_speed_gbps", p->active_speed_gbps, 1);
		writer_uint(w, "active_width", p->active_width);
		writer_uint(w, "active_mtu", p->active_mtu);
		writer_list_start(w, "gids");
		for (size_t k = 0; k < p->n_gids; k++) {
			writer_obj_start(w, NULL);
			writer_uint(w, "index", p->gids[k]->index);
			writer_str(w, "gid", p->gids[k]->gid);
			writer_str(w, "type", p->gids[k]->type);
			writer_str(w, "netdev", p->gids[k]->netdev);
			writer_obj_end(w);
		}
		writer_list_end(w);
		writer_obj_end(w);
	}
	writer_list_end(w);
}

void ctl_render_inventory(struct writer *w, const Ring__InventoryReply *r)
{
	const Ring__Inventory *inv = r->inventory;

	if (r->status)
		ctl_render_node_status(w, r->status, 1);
	if (!inv)
		return;
	writer_str(w, "hostname", inv->hostname);
	writer_str(w, "kernel", inv->kernel);
	writer_str(w, "mgmt_interface", inv->mgmt_interface);
	writer_list_start(w, "interfaces");
	for (size_t i = 0; i < inv->n_interfaces; i++) {
		writer_obj_start(w, NULL);
		ctl_render_interface(w, inv->interfaces[i]);
		writer_obj_end(w);
	}
	writer_list_end(w);
	writer_list_start(w, "rdma_devices");
	for (size_t i = 0; i < inv->n_rdma_devices; i++) {
		writer_obj_start(w, NULL);
		ctl_render_rdma(w, inv->rdma_devices[i]);
		writer_obj_end(w);
	}
	writer_list_end(w);
	if (inv->rdma_error && *inv->rdma_error)
		writer_str(w, "rdma_error", inv->rdma_error);
	writer_obj_start(w, "memory");
	writer_uint(w, "total_kib", inv->memory ? inv->memory->total_kib : 0);
	writer_uint(w, "available_kib",
		    inv->memory ? inv->memory->available_kib : 0);
	writer_obj_end(w);
}
