/* ringctl's client: one request and its reply over the coordinator's
 * control socket. */
#include "client.h"

#include "error_report.h"
#include "writer.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* A coordinator refusing the connection (too many clients) closes it at
 * once: writing then must fail with EPIPE, not kill ringctl by SIGPIPE,
 * so that the refusal it sent can still be read. */
static int client_write(int fd, const Ring__Envelope *req, int timeout_ms)
{
	const struct timespec zero = {0, 0};
	sigset_t pipe_set, old;
	int rc;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigprocmask(SIG_BLOCK, &pipe_set, &old);
	rc = frame_write_fd(fd, req, timeout_ms);
	if (rc == -EPIPE && !sigismember(&old, SIGPIPE))
		sigtimedwait(&pipe_set, NULL, &zero); /* the one we caused */
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}

#define CLIENT_HINT                                                                          \
	"choose the socket with -s SOCKET or RINGCTL_SOCKET (default " CLIENT_DEFAULT_SOCKET \
	")"

/* "root:ringctl" for st. */
static const char *client_owner(const struct stat *st, char *buf, size_t len)
{
	struct passwd *pw = getpwuid(st->st_uid);
	struct group *gr = getgrgid(st->st_gid);
	char u[32], g[32];

	snprintf(u, sizeof(u), "%u", (unsigned)st->st_uid);
	snprintf(g, sizeof(g), "%u", (unsigned)st->st_gid);
	snprintf(buf, len, "%s:%s", pw ? pw->pw_name : u, gr ? gr->gr_name : g);
	return buf;
}

/* The first directory above sock that this user cannot search, or that is
 * missing: 1 with its words in out, 0 if every one is passable. */
static int client_blocking_dir(const char *sock, char *out, size_t len)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)], own[96];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", sock);
	for (char *p = dir + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (stat(dir, &st) < 0) {
			snprintf(out, len, "%s: %s", dir, strerror(errno));
			return 1;
		}
		if (access(dir, X_OK) < 0) {
			snprintf(out, len,
				 "the directory %s (mode %04o, %s) does not "
				 "let you in",
				 dir, (unsigned)(st.st_mode & 07777),
				 client_owner(&st, own, sizeof(own)));
			return 1;
		}
		*p = '/';
	}
	return 0;
}

void client_connect_error(const char *sock, int e, char *err, size_t len)
{
	char why[320], own[96];
	struct stat st;

	if (client_blocking_dir(sock, why, sizeof(why))) {
		snprintf(err, len,
			 "cannot reach the coordinator at %s: %s; " CLIENT_HINT,
			 sock, why);
		return;
	}
	if (stat(sock, &st) == 0 && !S_ISSOCK(st.st_mode)) {
		snprintf(err, len, "%s is not a socket (%s); " CLIENT_HINT,
			 sock,
			 S_ISDIR(st.st_mode) ? "a directory" : "another file");
		return;
	}
	if (e == ENOENT)
		snprintf(err, len,
			 "cannot reach the coordinator at %s: no such socket "
			 "(is ring-coordinator running?); " CLIENT_HINT,
			 sock);
	else if (e == ECONNREFUSED)
		snprintf(err, len,
			 "cannot reach the coordinator at %s: nothing listens "
			 "there (is ring-coordinator running?); " CLIENT_HINT,
			 sock);
	else if ((e == EACCES || e == EPERM) && stat(sock, &st) == 0) {
		client_owner(&st, own, sizeof(own));
		snprintf(
			err, len,
			"cannot reach the coordinator at %s: permission denied "
			"by the socket (mode %04o, %s): run as root or as a "
			"member of group %s",
			sock, (unsigned)(st.st_mode & 07777), own,
			strchr(own, ':') + 1);
	} else
		snprintf(err, len, "cannot reach the coordinator at %s: %s",
			 sock, strerror(e));
}

/* The ring this command is about (--ring), or NULL: the site. */
static const char *client_ring;

void client_set_ring(const char *id)
{
	client_ring = id;
}

/* A request field left "" (the site) takes the command's ring. */
static void client_ring_field(char **field)
{
	if (!*field || !**field)
		*field = (char *)client_ring;
}

void client_stamp_ring(Ring__Envelope *req)
{
	if (!client_ring)
		return;
	switch (req->body_case) {
	case RING__ENVELOPE__BODY_STATUS_REQUEST:
		client_ring_field(&req->status_request->ring);
		break;
	case RING__ENVELOPE__BODY_RANKS_REQUEST:
		client_ring_field(&req->ranks_request->ring);
		break;
	case RING__ENVELOPE__BODY_HISTORY_REQUEST:
		client_ring_field(&req->history_request->ring);
		break;
	case RING__ENVELOPE__BODY_WATCH_REQUEST:
		client_ring_field(&req->watch_request->ring);
		break;
	case RING__ENVELOPE__BODY_ALLREDUCE_REQUEST:
		client_ring_field(&req->allreduce_request->ring);
		break;
	default: /* no ring field; survey names its rings itself */
		break;
	}
}

int client_request(const char *sock, int timeout_ms, Ring__Envelope *req,
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
		client_connect_error(sock, errno, err, errlen);
		goto fail;
	}
	req->request_id = (uint64_t)getpid();
	client_stamp_ring(req);
	rc = client_write(fd, req, timeout_ms);
	/* Refused at once (too many clients): the reason may be waiting. */
	if ((rc == -EPIPE || rc == -ECONNRESET) &&
	    frame_read_fd(fd, 64u << 10, 1000, &r) == 0) {
		if (r->request_id == 0 &&
		    r->body_case == RING__ENVELOPE__BODY_ERROR) {
			close(fd);
			*rep = r;
			return 0;
		}
		frame_free(r);
		r = NULL;
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s: sending request: %s", sock,
			 frame_strerror(rc));
		goto fail;
	}
	/* Skip anything that is not our answer (none today). An Error for
	 * request 0 is the coordinator refusing the connection itself (too
	 * many clients): that is the answer too. */
	do {
		frame_free(r);
		r = NULL;
		rc = frame_read_fd(fd, 64u << 20, timeout_ms, &r);
		if (rc < 0) {
			snprintf(err, errlen, "%s: reading reply: %s", sock,
				 frame_strerror(rc));
			goto fail;
		}
	} while (r->request_id != req->request_id &&
		 !(r->request_id == 0 &&
		   r->body_case == RING__ENVELOPE__BODY_ERROR));
	close(fd);
	*rep = r;
	return 0;
fail:
	close(fd);
	return -1;
}

/* The coordinator named a node it does not know: its text, then the known
 * nodes from a status request (the valid set, not guessed here). */
static void client_unknown_node(const char *sock, int timeout_ms,
				const Ring__Error *e)
{
	Ring__Envelope req = RING__ENVELOPE__INIT, *rep = NULL;
	Ring__StatusRequest sr = RING__STATUS_REQUEST__INIT;
	char err[512], *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f) {
		error_report(2, "unknown_node", e->unknown_node, NULL,
			     "coordinator: %s", e->text);
		return;
	}
	fprintf(f, "coordinator: %s", e->text);
	req.body_case = RING__ENVELOPE__BODY_STATUS_REQUEST;
	req.status_request = &sr;
	if (client_request(sock, timeout_ms, &req, &rep, err, sizeof(err)) ==
		    0 &&
	    rep->body_case == RING__ENVELOPE__BODY_STATUS_REPLY) {
		const Ring__StatusReply *st = rep->status_reply;

		fputs(st->n_nodes ? "; known nodes: "
				  : "; no node is known yet",
		      f);
		for (size_t i = 0; i < st->n_nodes; i++) {
			if (i)
				fputs(", ", f);
			fputs(st->nodes[i]->node, f);
		}
	}
	fclose(f);
	error_report(2, "unknown_node", e->unknown_node,
		     "one of the known nodes", "%s", text ? text : "");
	free(text);
	frame_free(rep);
}

Ring__Envelope *client_call(const char *sock, int timeout_ms,
			    Ring__Envelope *req, Ring__Envelope__BodyCase want,
			    enum client_quiet quiet)
{
	Ring__Envelope *rep = NULL;
	char err[512];

	if (client_request(sock, timeout_ms, req, &rep, err, sizeof(err)) < 0) {
		if (quiet != CLIENT_QUIET)
			error_report(2, "unreachable", sock,
				     "-s SOCKET or RINGCTL_SOCKET", "%s", err);
		return NULL;
	}
	if (rep->body_case == RING__ENVELOPE__BODY_ERROR) {
		if (quiet == CLIENT_LOUD && *rep->error->unknown_node) {
			client_unknown_node(sock, timeout_ms, rep->error);
		} else if (quiet == CLIENT_LOUD) {
			error_report(2, "refused", NULL, NULL,
				     "coordinator: %s", rep->error->text);
		}
		frame_free(rep);
		return NULL;
	}
	if (rep->body_case != want) {
		if (quiet != CLIENT_QUIET)
			error_report(2, "reply",
				     frame_type_name((uint16_t)rep->body_case),
				     NULL, "unexpected reply (%s)",
				     frame_type_name((uint16_t)rep->body_case));
		frame_free(rep);
		return NULL;
	}
	return rep;
}
