/* The watch request: the connection becomes a stream of events from the
 * feed (feed.h), counted by the feed's bounds instead of the clients'. */
#include "control_int.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "feed.h"
#include "health.h"
#include "log.h"

/* The feed dropped a watcher that stopped reading. */
static void control_watch_gone(struct feed_sub *s, const char *why, void *arg)
{
	struct client *cl = arg;

	(void)s;
	log_debug("control", "%s: watch ended: %s", conn_peer(cl->conn), why);
	if (cl->in_msg)
		cl->dead = 1;
	else
		control_client_free(cl);
}

/* The reply is the stream: the snapshot first, then every event, until
 * either side closes. The watcher leaves the clients' count for the
 * feed's, so watchers never take the slots of status and ranks. */
void control_watch(struct client *cl, uint64_t id,
		   const Ring__WatchRequest *req)
{
	struct control *co = cl->ctl;
	struct health h;
	char why[256];
	unsigned kinds;

	if (co->view && co->view->health)
		co->view->health(co->view->arg, &h);

	if (!co->feed) {
		conn_send_error(cl->conn, id,
				RING__ERROR_CODE__ERROR_UNSUPPORTED,
				"this coordinator has no event feed");
		return;
	}
	{
		const Ring__RingView *ring;

		if (control_ring_find(cl, id, control_topology(co), req->ring,
				      &ring) < 0)
			return;
	}
	if (feed_kinds_parse(req->kinds, req->n_kinds, &kinds, why,
			     sizeof(why)) < 0) {
		conn_send_error(cl->conn, id,
				RING__ERROR_CODE__ERROR_BAD_REQUEST, "%s", why);
		return;
	}
	cl->watch = feed_subscribe(
		co->feed, bufferevent_get_output(conn_bev(cl->conn)), id,
		cl->uid, kinds, control_topology(co),
		co->view && co->view->health ? health_name(h.state) : NULL,
		control_watch_gone, cl, why, sizeof(why));
	if (cl->watch)
		feed_sub_set_ring(cl->watch, req->ring);
	if (!cl->watch) {
		conn_send_error(cl->conn, id,
				errno == EUSERS
					? RING__ERROR_CODE__ERROR_PERMISSION
					: RING__ERROR_CODE__ERROR_INTERNAL,
				"%s", why);
		return;
	}
	co->n_clients--;
	co->n_group -= cl->uid != 0;
	log_debug("control", "%s: watching (%u watchers)", conn_peer(cl->conn),
		  feed_watchers(co->feed));
}

/* At shutdown: what is queued for a watcher (the shutdown event), sent if
 * its socket takes it now: never wait. The bufferevent's output drains
 * only from its own write callback (its front is frozen), so the bytes
 * are sent from a peek. */
void control_watch_flush(struct client *cl)
{
	struct bufferevent *bev = conn_bev(cl->conn);
	struct evbuffer_iovec v[16];
	struct iovec iov[16];
	struct msghdr mh = {.msg_iov = iov};
	int n = evbuffer_peek(bufferevent_get_output(bev), -1, NULL, v, 16);

	for (int i = 0; i < n && i < 16; i++) {
		iov[i].iov_base = v[i].iov_base;
		iov[i].iov_len = v[i].iov_len;
	}
	mh.msg_iovlen = (size_t)(n < 16 ? n : 16);
	if (n > 0 && sendmsg(bufferevent_getfd(bev), &mh,
			     MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		log_debug("control", "watcher not told: %s", strerror(errno));
}
