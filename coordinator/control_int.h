/* Inside the control socket (control*.c only): a client's session and the
 * socket's state, shared by the socket (control.c), a session's lifecycle
 * (control_session.c) and the request handlers, one file per family:
 * node table and topology reads (control_status.c), alerts
 * (control_alerts.c), measured history (control_history.c), requests that
 * run work on the agents (control_tests.c), the watch stream
 * (control_watch.c). The handlers reply through control_session.c and
 * never call each other or back into control.c. */
#ifndef RING_CONTROL_INT_H
#define RING_CONTROL_INT_H

#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "arlast.h"
#include "conn.h"
#include "control.h"
#include "ring_view.h"

struct client {
	struct control *ctl;
	struct conn *conn;
	uid_t uid;
	struct event *deadline; /* CONTROL_REQUEST_MS, absolute */
	/* The deadline extended for a reply being read: ms granted so far,
	 * and what was left of the output at the last look. */
	unsigned reply_grace;
	size_t reply_left;
	struct evbuffer *paused;	  /* input held while output drains */
	struct evbuffer_cb_entry *out_cb; /* watches the output draining */
	int in_msg;			  /* inside control_msg */
	int dead;		  /* closed inside control_msg: free there */
	struct survey_test *test; /* a test this client waits for */
	uint64_t test_id;
	int test_adjacent; /* the pair's adjacency in the last survey */
	struct survey_allreduce *ar; /* an all-reduce this client waits for */
	struct resolve_fanout *resolve; /* a lookup on every node */
	uint64_t resolve_id;
	struct readrelay *read; /* read tests this client waits for */
	uint64_t read_id;
	uint64_t ar_id;
	/* A watcher: the connection is a stream of events (feed.h), counted
	 * by the feed's bounds instead of the clients'. */
	struct feed_sub *watch;
	LIST_ENTRY(client) link;
};

struct control {
	struct event_base *base;
	const struct coord_conf *conf;
	struct nodes *nodes;
	struct survey *survey;
	const struct control_view *view;
	struct feed *feed;
	struct evconnlistener *listener;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	LIST_HEAD(, client) clients;
	unsigned n_clients;
	unsigned n_group; /* clients other than root */
	uint64_t refuse_logged_ms;
	unsigned refuse_quiet; /* refusals not logged since */
	/* The last successful all-reduce per number of ranks: the next
	 * one's comparison, plan --layers' figures; kept in the store when
	 * there is one (control_set_store). */
	struct arlast ar_last;
	struct store_keeper *keeper;
};

/* control_session.c: one client's lifecycle and what every reply uses. */
void control_client_new(struct control *ctl, evutil_socket_t fd,
			const struct ucred *cred, conn_msg_cb msg,
			conn_close_cb close_cb);
void control_client_free(struct client *cl);
/* A new request may start: it has the request deadline to arrive whole
 * (none while the client waits for a test or watches). */
void control_client_arm(struct client *cl);
/* Stop reading while the client's replies pile up unread. */
void control_client_pause(struct client *cl);
void control_client_send(struct client *cl, uint64_t id,
			 Ring__Envelope__BodyCase type, void *body);
/* The topology shown: the view's (with its live overlay), else the
 * survey's. */
const Ring__Topology *control_topology(const struct control *co);
void control_unknown_node(struct client *cl, uint64_t id, const char *name);

/* control_status.c: the node table and the topology, as they are. */
void control_status(struct client *cl, uint64_t id,
		    const Ring__StatusRequest *req);
void control_inventory(struct client *cl, uint64_t id,
		       const Ring__InventoryRequest *req);
void control_forget(struct client *cl, uint64_t id,
		    const Ring__ForgetRequest *req);
void control_ranks(struct client *cl, uint64_t id,
		   const Ring__RanksRequest *req);
/* Issue 24: the ring a request names (NULL: the site, req_ring ""), or
 * an Error sent naming it and the rings there are (then -1). */
int control_ring_find(struct client *cl, uint64_t id, const Ring__Topology *t,
		      const char *req_ring, const Ring__RingView **out);
/* The topology a reply shows: the site's with each ring's health (r
 * NULL), or ring r's alone with its health; top NULL when t is. Valid
 * while t is; released by control_ring_reply_release. 0 or -1 (ENOMEM). */
struct control_ring_reply {
	const Ring__Topology *top;
	Ring__Topology site;
	struct ring_view view;
	int built;
	struct health_view_rings rings;
	Ring__RingView *one;
};
int control_ring_reply(const struct control *co, const Ring__Topology *t,
		       const Ring__RingView *r, struct control_ring_reply *out);
void control_ring_reply_release(struct control_ring_reply *r);

/* control_alerts.c; fill: the alerts as the wire carries them, status's
 * too (control_alerts.c says how). */
int control_alerts_fill(const struct control *co, int all, int no_watchdog,
			Ring__Alert **out, Ring__Alert ***outp, size_t *n);
void control_alerts(struct client *cl, uint64_t id,
		    const Ring__AlertsRequest *req);

/* control_history.c */
void control_history(struct client *cl, uint64_t id,
		     const Ring__HistoryRequest *req);

/* control_tests.c: each answered when its work is done (one outcome per
 * request, a refusal or the report). */
void control_test(struct client *cl, uint64_t id, const Ring__TestRequest *req);
void control_allreduce(struct client *cl, uint64_t id,
		       const Ring__AllreduceRequest *req);
void control_allreduce_last(struct client *cl, uint64_t id,
			    const Ring__AllreduceLastRequest *req);
void control_resolve(struct client *cl, uint64_t id,
		     const Ring__ResolveRequest *req);
void control_read(struct client *cl, uint64_t id,
		  const Ring__ReadTestRequest *req);
void control_survey(struct client *cl, uint64_t id,
		    const Ring__SurveyRequest *req);

/* control_watch.c */
void control_watch(struct client *cl, uint64_t id,
		   const Ring__WatchRequest *req);
void control_watch_flush(struct client *cl);

#endif
