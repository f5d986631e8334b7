/* ringctl's client: one request and its reply over the coordinator's
 * control socket. */
#include "client.h"

#include "writer.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
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

Ring__Envelope *client_call(const char *sock, int timeout_ms,
			    Ring__Envelope *req, Ring__Envelope__BodyCase want,
			    enum client_quiet quiet)
{
	Ring__Envelope *rep = NULL;
	char err[512];

	if (client_request(sock, timeout_ms, req, &rep, err, sizeof(err)) < 0) {
		if (quiet != CLIENT_QUIET)
			fprintf(stderr, "ringctl: %s\n", err);
		return NULL;
	}
	if (rep->body_case == RING__ENVELOPE__BODY_ERROR) {
		if (quiet == CLIENT_LOUD) {
			fputs("ringctl: coordinator: ", stderr);
			writer_fputs_safe(stderr, rep->error->text);
			fputc('\n', stderr);
		}
		frame_free(rep);
		return NULL;
	}
	if (rep->body_case != want) {
		if (quiet != CLIENT_QUIET)
			fprintf(stderr, "ringctl: unexpected reply (%s)\n",
				frame_type_name((uint16_t)rep->body_case));
		frame_free(rep);
		return NULL;
	}
	return rep;
}
