/* One ringctl session on the control socket: its slot, the absolute
 * deadline for each request, back-pressure when its replies are not read,
 * and the helpers every reply uses. */
#include "control_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "feed.h"
#include "log.h"
#include "readrelay.h"
#include "resolve_fanout.h"
#include "manual_tests.h"
#include "survey.h"

/* A whole request must arrive within this long of accept, or of the
 * previous request on a kept connection: an absolute deadline, so a client
 * trickling bytes cannot hold its slot (a read timeout would be renewed by
 * each byte). A client waiting for its test has the test's deadline. */
#define CONTROL_REQUEST_MS 5000
/* A reply still being read when that deadline comes (a status of
 * thousands of nodes is megabytes; a busy host's ringctl reads it
 * slowly) has more time, a step at a time while the client reads (its
 * output shrinks), this much in all; a client that reads nothing is
 * closed at the first step. */
#define CONTROL_REPLY_MS 30000
#define CONTROL_REPLY_STEP_MS 2000
/* A control request is a few hundred bytes; agents' max_frame (1 MiB) would
 * let each client park a megabyte. */
#define CONTROL_MAX_FRAME (64u << 10)
/* Stop reading a client's requests while this much of its replies waits
 * (pipelined requests whose replies are not read); resume below LOW. */
#define CONTROL_OUT_HIGH (1u << 20)
#define CONTROL_OUT_LOW (256u << 10)

void control_client_free(struct client *cl)
{
	struct control *ctl = cl->ctl;

	LIST_REMOVE(cl, link);
	if (cl->watch) {
		feed_unsubscribe(cl->watch);
	} else {
		ctl->n_clients--;
		ctl->n_group -= cl->uid != 0;
	}
	manual_test_cancel(cl->test);
	manual_allreduce_cancel(cl->ar);
	resolve_fanout_cancel(cl->resolve);
	readrelay_cancel(cl->read);
	if (cl->deadline)
		event_free(cl->deadline);
	/* The bufferevent may outlive us (freed after the callback that is
	 * running): its output must not call back into a freed client. */
	if (cl->out_cb)
		evbuffer_remove_cb_entry(
			bufferevent_get_output(conn_bev(cl->conn)), cl->out_cb);
	if (cl->paused)
		evbuffer_free(cl->paused);
	conn_free(cl->conn);
	free(cl);
}

/* A new request may start: it has CONTROL_REQUEST_MS to arrive whole. */
void control_client_arm(struct client *cl)
{
	struct timeval tv = {.tv_sec = CONTROL_REQUEST_MS / 1000,
			     .tv_usec = (CONTROL_REQUEST_MS % 1000) * 1000};

	cl->reply_grace = 0;
	cl->reply_left = 0;
	if (cl->test || cl->watch || cl->ar || cl->resolve || cl->read)
		evtimer_del(cl->deadline); /* the test's own deadline rules;
					    * a stream has none */
	else
		evtimer_add(cl->deadline, &tv);
}

static void client_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct client *cl = arg;
	struct timeval tv = {.tv_sec = CONTROL_REPLY_STEP_MS / 1000,
			     .tv_usec = CONTROL_REPLY_STEP_MS % 1000 * 1000};
	size_t left =
		evbuffer_get_length(bufferevent_get_output(conn_bev(cl->conn)));

	(void)fd;
	(void)what;
	if (left && (!cl->reply_grace || left < cl->reply_left) &&
	    cl->reply_grace + CONTROL_REPLY_STEP_MS <=
		    CONTROL_REPLY_MS - CONTROL_REQUEST_MS) {
		cl->reply_grace += CONTROL_REPLY_STEP_MS;
		cl->reply_left = left;
		evtimer_add(cl->deadline, &tv);
		return;
	}
	/* Debug only: a local user could otherwise fill the log. */
	log_debug("control", "%s: no complete request within %u ms; closing",
		  conn_peer(cl->conn), CONTROL_REQUEST_MS);
	control_client_free(cl);
}

/* Replies are piling up unread: take the rest of the input out of the
 * connection's reach (its read loop stops at an empty buffer) and stop
 * reading until the output drains. */
void control_client_pause(struct client *cl)
{
	struct bufferevent *bev = conn_bev(cl->conn);

	if (evbuffer_get_length(bufferevent_get_output(bev)) <=
	    CONTROL_OUT_HIGH)
		return;
	bufferevent_disable(bev, EV_READ);
	evbuffer_add_buffer(cl->paused, bufferevent_get_input(bev));
	evbuffer_cb_set_flags(bufferevent_get_output(bev), cl->out_cb,
			      EVBUFFER_CB_ENABLED);
}

static void client_output(struct evbuffer *out,
			  const struct evbuffer_cb_info *info, void *arg)
{
	struct client *cl = arg;
	struct bufferevent *bev = conn_bev(cl->conn);

	if (!info->n_deleted || evbuffer_get_length(out) > CONTROL_OUT_LOW)
		return;
	evbuffer_cb_clear_flags(out, cl->out_cb, EVBUFFER_CB_ENABLED);
	evbuffer_prepend_buffer(bufferevent_get_input(bev), cl->paused);
	bufferevent_enable(bev, EV_READ);
	/* From the loop, not from inside this write. */
	bufferevent_trigger(bev, EV_READ,
			    BEV_TRIG_IGNORE_WATERMARKS |
				    BEV_TRIG_DEFER_CALLBACKS);
}

void control_client_send(struct client *cl, uint64_t id,
			 Ring__Envelope__BodyCase type, void *body)
{
	conn_send_body(cl->conn, id, type, body);
}

/* A client admitted with these credentials: its connection (msg and
 * close_cb its callbacks), request deadline and output watch, counted in
 * the slots. Out of memory: fd closed and a line logged. */
void control_client_new(struct control *ctl, evutil_socket_t fd,
			const struct ucred *cred, conn_msg_cb msg,
			conn_close_cb close_cb)
{
	struct bufferevent *bev = NULL;
	struct client *cl;
	char peer[48];

	snprintf(peer, sizeof(peer), "ringctl[pid %d uid %u]", (int)cred->pid,
		 (unsigned)cred->uid);
	cl = calloc(1, sizeof(*cl));
	if (!cl)
		goto fail_fd;
	cl->deadline = evtimer_new(ctl->base, client_deadline, cl);
	cl->paused = evbuffer_new();
	if (!cl->deadline || !cl->paused)
		goto fail_cl;
	bev = bufferevent_socket_new(ctl->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (!bev)
		goto fail_cl;
	cl->out_cb =
		evbuffer_add_cb(bufferevent_get_output(bev), client_output, cl);
	if (!cl->out_cb)
		goto fail_bev;
	evbuffer_cb_clear_flags(bufferevent_get_output(bev), cl->out_cb,
				EVBUFFER_CB_ENABLED);
	cl->conn = conn_new(bev, peer, CONTROL_MAX_FRAME, msg, close_cb, cl);
	if (!cl->conn)
		goto fail_bev;
	cl->ctl = ctl;
	cl->uid = cred->uid;
	LIST_INSERT_HEAD(&ctl->clients, cl, link);
	ctl->n_clients++;
	ctl->n_group += cred->uid != 0;
	control_client_arm(cl);
	return;
fail_bev:
	bufferevent_free(bev); /* closes fd; its callbacks go with it */
	fd = -1;
fail_cl:
	if (cl->deadline)
		event_free(cl->deadline);
	if (cl->paused)
		evbuffer_free(cl->paused);
	free(cl);
fail_fd:
	if (fd >= 0)
		evutil_closesocket(fd);
	log_warnx("control: out of memory accepting a client");
}

const Ring__Topology *control_topology(const struct control *co)
{
	if (co->view && co->view->topology)
		return co->view->topology(co->view->arg);
	return survey_topology(co->survey);
}

/* A request named a node the table does not have: the name as a field,
 * so that ringctl lists the known nodes beside it. */
void control_unknown_node(struct client *cl, uint64_t id, const char *name)
{
	Ring__Error err = RING__ERROR__INIT;
	char text[128];

	snprintf(text, sizeof(text), "unknown node '%.64s'", name);
	err.code = RING__ERROR_CODE__ERROR_NOT_FOUND;
	err.text = text;
	err.unknown_node = (char *)name;
	conn_send_body(cl->conn, id, RING__ENVELOPE__BODY_ERROR, &err);
}
