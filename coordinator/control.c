/* The ringctl control socket: bound 0660 with the configured group, peer
 * credentials (SO_PEERCRED) and admission (per-uid caps, room kept for
 * root, refusals said and logged sparingly), and each request handed to
 * its handler, root's requests checked here. */
#include "control_int.h"

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "coord_conf.h"
#include "frame.h"
#include "log.h"
#include "store_keeper.h"

/* Memory is bounded by the slot count: a client holds at most one frame of
 * input, its paused input and its output up to the watermark (+ a reply). */
#define CONTROL_MAX_CLIENTS 64
/* Slots the control group can never take: root's `ringctl` always gets in. */
#define CONTROL_ROOT_RESERVE 16
#define CONTROL_MAX_PER_UID 8
/* Refusals are logged at most this often: a flood must not flood the log. */
#define CONTROL_REFUSE_LOG_MS 10000

void control_set_view(struct control *ctl, const struct control_view *view)
{
	ctl->view = view;
}

void control_set_feed(struct control *ctl, struct feed *feed)
{
	ctl->feed = feed;
}

int control_set_store(struct control *ctl, struct store_keeper *k)
{
	struct store *st = store_keeper_store(k);

	ctl->keeper = k;
	return st ? arlast_restore(&ctl->ar_last, st) : 0;
}

static void control_msg(struct conn *c, Ring__Envelope *env, void *arg)
{
	struct client *cl = arg;
	uint64_t id = env->request_id;

	(void)c;
	cl->in_msg++;
	if (cl->watch) {
		/* One reply per request, even here; the stream goes on. */
		conn_send_error(cl->conn, id,
				RING__ERROR_CODE__ERROR_BAD_REQUEST,
				"this connection is watching; send other "
				"requests on another");
		goto done;
	}
	switch (env->body_case) {
	case RING__ENVELOPE__BODY_STATUS_REQUEST:
		control_status(cl, id, env->status_request);
		break;
	case RING__ENVELOPE__BODY_INVENTORY_REQUEST:
		control_inventory(cl, id, env->inventory_request);
		break;
	case RING__ENVELOPE__BODY_FORGET_REQUEST:
		/* State changes are root's; the socket's group may only read. */
		if (cl->uid != 0) {
			conn_send_error(cl->conn, id,
					RING__ERROR_CODE__ERROR_PERMISSION,
					"this request needs root");
			break;
		}
		control_forget(cl, id, env->forget_request);
		break;
	case RING__ENVELOPE__BODY_RANKS_REQUEST:
		control_ranks(cl, id, env->ranks_request);
		break;
	case RING__ENVELOPE__BODY_ALERTS_REQUEST:
		control_alerts(cl, id, env->alerts_request);
		break;
	case RING__ENVELOPE__BODY_HISTORY_REQUEST:
		control_history(cl, id, env->history_request);
		break;
	case RING__ENVELOPE__BODY_WATCH_REQUEST:
		control_watch(cl, id, env->watch_request);
		break;
	case RING__ENVELOPE__BODY_RESOLVE_REQUEST:
		control_resolve(cl, id, env->resolve_request);
		break;
	case RING__ENVELOPE__BODY_ALLREDUCE_LAST_REQUEST:
		control_allreduce_last(cl, id, env->allreduce_last_request);
		break;
	case RING__ENVELOPE__BODY_TEST_REQUEST:
	case RING__ENVELOPE__BODY_SURVEY_REQUEST:
	case RING__ENVELOPE__BODY_ALLREDUCE_REQUEST:
	case RING__ENVELOPE__BODY_READ_TEST_REQUEST:
		if (cl->uid != 0) {
			conn_send_error(cl->conn, id,
					RING__ERROR_CODE__ERROR_PERMISSION,
					"this request needs root");
			break;
		}
		if (env->body_case == RING__ENVELOPE__BODY_TEST_REQUEST)
			control_test(cl, id, env->test_request);
		else if (env->body_case ==
			 RING__ENVELOPE__BODY_ALLREDUCE_REQUEST)
			control_allreduce(cl, id, env->allreduce_request);
		else if (env->body_case ==
			 RING__ENVELOPE__BODY_READ_TEST_REQUEST)
			control_read(cl, id, env->read_test_request);
		else
			control_survey(cl, id, env->survey_request);
		break;
	default:
		conn_send_error(cl->conn, id,
				RING__ERROR_CODE__ERROR_BAD_REQUEST,
				"%s is not a control request",
				frame_type_name((uint16_t)env->body_case));
		break;
	}
done:
	frame_free(env);
	cl->in_msg--;
	if (cl->dead) {
		control_client_free(cl);
		return;
	}
	control_client_arm(cl); /* the next request's deadline starts now */
	control_client_pause(cl);
}

static void control_close(struct conn *c, int err, const char *reason,
			  void *arg)
{
	struct client *cl = arg;

	(void)c;
	if (err != -ECONNRESET)
		log_debug("control", "client closed: %s", reason);
	if (cl->in_msg)
		cl->dead = 1; /* a reply failed: control_msg frees it */
	else
		control_client_free(cl);
}

static unsigned control_uid_count(const struct control *ctl, uid_t uid)
{
	const struct client *cl;
	unsigned n = 0;

	LIST_FOREACH(cl, &ctl->clients, link)
	n += cl->uid == uid && !cl->watch; /* the feed counts watchers */
	return n;
}

/* Why a client of this uid may not connect now, or NULL. */
static const char *control_refusal(const struct control *ctl, uid_t uid)
{
	if (ctl->n_clients >= CONTROL_MAX_CLIENTS)
		return "too many control clients";
	if (uid == 0)
		return NULL;
	if (control_uid_count(ctl, uid) >= CONTROL_MAX_PER_UID)
		return "too many control connections from this user";
	if (ctl->n_group >= CONTROL_MAX_CLIENTS - CONTROL_ROOT_RESERVE)
		return "too many control clients (the rest is kept for root)";
	return NULL;
}

/* Tell the client why (ringctl prints an Error with request id 0) and
 * close; one line in the log per CONTROL_REFUSE_LOG_MS at most. */
static void control_refuse(struct control *ctl, evutil_socket_t fd,
			   const struct ucred *cred, const char *why)
{
	Ring__Envelope env = RING__ENVELOPE__INIT;
	Ring__Error err = RING__ERROR__INIT;
	uint64_t now = clock_now_ms();
	char text[160], junk[256];
	uint8_t *buf;
	size_t len;

	snprintf(text, sizeof(text), "%s (at most %u per user, %u in all)", why,
		 CONTROL_MAX_PER_UID, CONTROL_MAX_CLIENTS);
	err.code = RING__ERROR_CODE__ERROR_PERMISSION;
	err.text = text;
	env.body_case = RING__ENVELOPE__BODY_ERROR;
	env.error = &err;
	if (frame_encode(&env, &buf, &len) == 0) {
		/* A few dozen bytes fit any socket buffer; never wait. */
		if (send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			log_debug("control", "refusal not sent: %s",
				  strerror(errno));
		free(buf);
	}
	/* Closing with unread input would reset the connection before the
	 * client reads why. */
	for (int i = 0; i < 64; i++)
		if (recv(fd, junk, sizeof(junk), MSG_DONTWAIT) <= 0)
			break;
	evutil_closesocket(fd);
	if (now - ctl->refuse_logged_ms < CONTROL_REFUSE_LOG_MS) {
		ctl->refuse_quiet++;
		return;
	}
	if (cred)
		log_warnx("control: refusing pid %d uid %u: %s (and %u "
			  "refusals since the last such line)",
			  (int)cred->pid, (unsigned)cred->uid, why,
			  ctl->refuse_quiet);
	else
		log_warnx("control: refusing a client: %s", why);
	ctl->refuse_logged_ms = now;
	ctl->refuse_quiet = 0;
}

static void control_accept(struct evconnlistener *l, evutil_socket_t fd,
			   struct sockaddr *sa, int salen, void *arg)
{
	struct control *ctl = arg;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	const char *why;

	(void)l;
	(void)sa;
	(void)salen;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		control_refuse(ctl, fd, NULL, "no peer credentials");
		return;
	}
	why = control_refusal(ctl, cred.uid);
	if (why) {
		control_refuse(ctl, fd, &cred, why);
		return;
	}
	control_client_new(ctl, fd, &cred, control_msg, control_close);
}

/* Refuse to steal the socket of a coordinator that is still running. */
static int control_unlink_stale(const struct sockaddr_un *sun)
{
	struct stat st;
	int fd, rc;

	if (lstat(sun->sun_path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISSOCK(st.st_mode)) {
		errno = EEXIST;
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	rc = connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
	close(fd);
	if (rc == 0) {
		errno = EADDRINUSE;
		return -1;
	}
	return unlink(sun->sun_path);
}

struct control *control_new(struct event_base *base,
			    const struct coord_conf *conf, struct nodes *nodes,
			    struct survey *survey)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct control *ctl;
	struct group *gr;
	mode_t old_mask;
	int fd, rc;

	if (strlen(conf->control_socket) >= sizeof(sun.sun_path)) {
		log_warnx("control_socket %s: path too long",
			  conf->control_socket);
		return NULL;
	}
	ctl = calloc(1, sizeof(*ctl));
	if (!ctl)
		return NULL;
	ctl->base = base;
	ctl->conf = conf;
	ctl->nodes = nodes;
	ctl->survey = survey;
	/* Length checked above; memcpy keeps the terminating NUL. */
	memcpy(sun.sun_path, conf->control_socket,
	       strlen(conf->control_socket) + 1);
	memcpy(ctl->path, sun.sun_path, sizeof(ctl->path));
	if (control_unlink_stale(&sun) < 0) {
		log_warn("control socket %s%s", sun.sun_path,
			 errno == EADDRINUSE
				 ? " (is another coordinator running?)"
				 : "");
		goto fail_ctl;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		log_warn("control socket");
		goto fail_ctl;
	}
	/* Created 0660 from the start: no window with wider permissions. */
	old_mask = umask(0117);
	rc = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old_mask);
	if (rc < 0) {
		log_warn("control socket %s: bind", sun.sun_path);
		goto fail_fd;
	}
	gr = getgrnam(conf->control_group);
	if (!gr)
		log_warnx("control_group %s does not exist; the control socket "
			  "is for root only",
			  conf->control_group);
	else if (chown(sun.sun_path, (uid_t)-1, gr->gr_gid) < 0)
		log_warn("control socket %s: chown to group %s", sun.sun_path,
			 conf->control_group);
	ctl->listener = evconnlistener_new(
		base, control_accept, ctl,
		LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 64, fd);
	if (!ctl->listener) {
		log_warn("control socket %s: listen", sun.sun_path);
		goto fail_unlink;
	}
	log_info("control socket %s (group %s)", sun.sun_path,
		 gr ? conf->control_group : "root");
	return ctl;
fail_unlink:
	unlink(sun.sun_path);
fail_fd:
	close(fd);
fail_ctl:
	free(ctl);
	return NULL;
}

void control_free(struct control *ctl)
{
	struct client *cl;

	if (!ctl)
		return;
	/* Watchers get what is queued (the shutdown event) if their socket
	 * takes it now: never wait. */
	LIST_FOREACH(cl, &ctl->clients, link)
	if (cl->watch)
		control_watch_flush(cl);
	while (!LIST_EMPTY(&ctl->clients))
		control_client_free(LIST_FIRST(&ctl->clients));
	evconnlistener_free(ctl->listener);
	unlink(ctl->path);
	arlast_clear(&ctl->ar_last);
	free(ctl);
}
