/* RDMA async events of the devices the agent reports (see rdma_events.h).
 * Each watched device holds one verbs context open for its async event
 * channel only: no PD, no QP. */
#include "rdma_events.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "log.h"

/* Events read per wakeup: the loop comes back for the rest (level
 * triggered), so one chatty device cannot starve the others. */
#define RDMA_EVENTS_BATCH 32
#define RDMA_EVENTS_NAME_LEN 64

struct rdma_events_dev {
	struct rdma_events *owner;
	char name[RDMA_EVENTS_NAME_LEN];
	struct ibv_context *ctx;
	struct event *ev;
};

struct rdma_events {
	struct event_base *base;
	rdma_events_fn changed;
	void *arg;
	struct rdma_events_dev *devs[RDMA_EVENTS_MAX_DEVICES];
	size_t n_devs;
	/* Devices that could not be opened or were lost: logged once, not
	 * retried until they leave the inventory. */
	char refused[RDMA_EVENTS_MAX_DEVICES][RDMA_EVENTS_NAME_LEN];
	size_t n_refused;
	int full_logged; /* "watching only the first N" said */
};

static const char *rdma_events_name(enum ibv_event_type t)
{
	switch (t) {
	case IBV_EVENT_PORT_ACTIVE:
		return "PORT_ACTIVE";
	case IBV_EVENT_PORT_ERR:
		return "PORT_ERR";
	case IBV_EVENT_GID_CHANGE:
		return "GID_CHANGE";
	case IBV_EVENT_LID_CHANGE:
		return "LID_CHANGE";
	case IBV_EVENT_PKEY_CHANGE:
		return "PKEY_CHANGE";
	case IBV_EVENT_SM_CHANGE:
		return "SM_CHANGE";
	case IBV_EVENT_CLIENT_REREGISTER:
		return "CLIENT_REREGISTER";
	case IBV_EVENT_DEVICE_FATAL:
		return "DEVICE_FATAL";
	default:
		return "OTHER";
	}
}

static int rdma_events_is_port_event(enum ibv_event_type t)
{
	switch (t) {
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_GID_CHANGE:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
		return 1;
	default:
		return 0;
	}
}

static long rdma_events_find(const struct rdma_events *re, const char *name)
{
	for (size_t i = 0; i < re->n_devs; i++)
		if (!strcmp(re->devs[i]->name, name))
			return (long)i;
	return -1;
}

static long rdma_events_refused_index(const struct rdma_events *re,
				      const char *name)
{
	for (size_t i = 0; i < re->n_refused; i++)
		if (!strcmp(re->refused[i], name))
			return (long)i;
	return -1;
}

/* Remember name as not to be retried. 0 when it is new (the caller logs
 * why), 1 when it was already known or the set is full (say nothing). */
static int rdma_events_refuse(struct rdma_events *re, const char *name)
{
	if (rdma_events_refused_index(re, name) >= 0 ||
	    re->n_refused == RDMA_EVENTS_MAX_DEVICES)
		return 1;
	snprintf(re->refused[re->n_refused++], RDMA_EVENTS_NAME_LEN, "%s",
		 name);
	return 0;
}

/* Close and forget devs[i]; the order of the others does not matter. */
static void rdma_events_close(struct rdma_events *re, size_t i)
{
	struct rdma_events_dev *d = re->devs[i];

	if (d->ev)
		event_free(d->ev);
	if (d->ctx)
		ibv_close_device(d->ctx);
	free(d);
	re->devs[i] = re->devs[--re->n_devs];
	re->devs[re->n_devs] = NULL;
}

static void rdma_events_log(const struct rdma_events_dev *d,
			    const struct ibv_async_event *ev)
{
	enum ibv_event_type t = ev->event_type;

	if (rdma_events_is_port_event(t))
		log_info("%s port %d: RDMA async event %s (%s)", d->name,
			 ev->element.port_num, rdma_events_name(t),
			 ibv_event_type_str(t));
	else if (t == IBV_EVENT_DEVICE_FATAL)
		log_warnx("%s: RDMA async event %s (%s): no longer watching "
			  "its events",
			  d->name, rdma_events_name(t), ibv_event_type_str(t));
	else
		/* QP, CQ and SRQ events belong to the tests' own contexts;
		 * this one has none. */
		log_debug("rdma", "%s: RDMA async event %s", d->name,
			  ibv_event_type_str(t));
}

static void rdma_events_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rdma_events_dev *d = arg;
	struct rdma_events *re = d->owner;
	struct ibv_async_event ev;
	int n = 0, lost = 0;

	(void)fd;
	(void)what;
	while (n < RDMA_EVENTS_BATCH) {
		errno = 0;
		if (ibv_get_async_event(d->ctx, &ev) < 0) {
			/* A short read or an error other than "nothing
			 * more" is a channel gone (device removed or reset):
			 * stop, or the loop would spin on it. */
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR) {
				if (errno)
					log_warn("%s: RDMA async events",
						 d->name);
				else
					log_warnx("%s: RDMA async events: "
						  "channel closed",
						  d->name);
				lost = 1;
			}
			break;
		}
		n++;
		rdma_events_log(d, &ev);
		lost |= ev.event_type == IBV_EVENT_DEVICE_FATAL;
		ibv_ack_async_event(&ev);
	}
	if (lost) {
		long i = rdma_events_find(re, d->name);

		rdma_events_refuse(re, d->name);
		if (i >= 0)
			rdma_events_close(re, (size_t)i); /* frees d */
	}
	if ((n || lost) && re->changed)
		re->changed(re->arg);
}

/* Open dev and put its channel in the loop. -1 with errno; the caller
 * logs. */
static int rdma_events_open(struct rdma_events *re, struct ibv_device *dev,
			    const char *name)
{
	struct rdma_events_dev *d = calloc(1, sizeof(*d));
	int fl, e;

	if (!d)
		return -1;
	d->owner = re;
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->ctx = ibv_open_device(dev);
	if (!d->ctx)
		goto fail;
	fl = fcntl(d->ctx->async_fd, F_GETFL);
	if (fl < 0 || fcntl(d->ctx->async_fd, F_SETFL, fl | O_NONBLOCK) < 0)
		goto fail;
	d->ev = event_new(re->base, d->ctx->async_fd, EV_READ | EV_PERSIST,
			  rdma_events_cb, d);
	if (!d->ev || event_add(d->ev, NULL) < 0) {
		errno = ENOMEM;
		goto fail;
	}
	re->devs[re->n_devs++] = d;
	return 0;
fail:
	e = errno;
	if (d->ev)
		event_free(d->ev);
	if (d->ctx)
		ibv_close_device(d->ctx);
	free(d);
	errno = e;
	return -1;
}

static int rdma_events_in_inventory(const Ring__Inventory *inv,
				    const char *name)
{
	for (size_t i = 0; inv && i < inv->n_rdma_devices; i++)
		if (!strcmp(inv->rdma_devices[i]->name, name))
			return 1;
	return 0;
}

static struct ibv_device *rdma_events_lookup(struct ibv_device **list, int n,
					     const char *name)
{
	for (int i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			return list[i];
	return NULL;
}

size_t rdma_events_sync(struct rdma_events *re, const Ring__Inventory *inv)
{
	struct ibv_device **list = NULL;
	int n = 0, listed = 0;

	/* Gone from the inventory: close (a driver without disassociate
	 * support waits for us to before it can remove the device), and
	 * forget that it was refused. */
	for (size_t i = re->n_devs; i-- > 0;)
		if (!rdma_events_in_inventory(inv, re->devs[i]->name)) {
			log_info("%s: no longer reported, not watching its "
				 "RDMA events",
				 re->devs[i]->name);
			rdma_events_close(re, i);
		}
	for (size_t i = re->n_refused; i-- > 0;)
		if (!rdma_events_in_inventory(inv, re->refused[i])) {
			re->n_refused--;
			if (i != re->n_refused)
				memcpy(re->refused[i],
				       re->refused[re->n_refused],
				       RDMA_EVENTS_NAME_LEN);
		}
	for (size_t i = 0; inv && i < inv->n_rdma_devices; i++) {
		const char *name = inv->rdma_devices[i]->name;
		struct ibv_device *dev;

		if (!*name || strlen(name) >= RDMA_EVENTS_NAME_LEN ||
		    rdma_events_find(re, name) >= 0 ||
		    rdma_events_refused_index(re, name) >= 0)
			continue;
		if (re->n_devs == RDMA_EVENTS_MAX_DEVICES) {
			if (!re->full_logged)
				log_warnx("RDMA async events: watching only "
					  "the first %d devices; the others' "
					  "changes are seen at the periodic "
					  "scan",
					  RDMA_EVENTS_MAX_DEVICES);
			re->full_logged = 1;
			break;
		}
		/* Listed only when something is to be opened: a steady
		 * state costs nothing. */
		if (!listed) {
			list = ibv_get_device_list(&n);
			listed = 1;
		}
		dev = rdma_events_lookup(list, n, name);
		if (!dev) {
			if (!rdma_events_refuse(re, name))
				log_warnx("%s: cannot watch its RDMA events: "
					  "not in the verbs device list",
					  name);
			continue;
		}
		if (rdma_events_open(re, dev, name) < 0) {
			if (!rdma_events_refuse(re, name))
				log_warn("%s: cannot watch its RDMA events: "
					 "open",
					 name);
			continue;
		}
		log_debug("rdma", "%s: watching its RDMA async events", name);
	}
	if (list)
		ibv_free_device_list(list);
	return re->n_devs;
}

int rdma_events_watching(const struct rdma_events *re, const char *name)
{
	return rdma_events_find(re, name) >= 0;
}

struct rdma_events *rdma_events_new(struct event_base *base,
				    rdma_events_fn changed, void *arg)
{
	struct rdma_events *re = calloc(1, sizeof(*re));

	if (!re)
		return NULL;
	re->base = base;
	re->changed = changed;
	re->arg = arg;
	return re;
}

void rdma_events_free(struct rdma_events *re)
{
	if (!re)
		return;
	while (re->n_devs)
		rdma_events_close(re, re->n_devs - 1);
	free(re);
}
