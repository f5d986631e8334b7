/* The requests every command makes the same way (cli.h): one request and
 * its reply, rendered or not, and the published topology. */
#include <string.h>

#include "cli.h"
#include "error_report.h"
#include "frame.h"
#include "client.h"

/* Send one request and hand back its reply of type want, or print why not
 * (unless rc->quiet: polling). */
Ring__Envelope *ringctl_call(const struct ringctl *rc, Ring__Envelope *req,
			     Ring__Envelope__BodyCase want)
{
	return client_call(rc->sock, rc->timeout_ms, req, want,
			   rc->quiet ? CLIENT_QUIET : CLIENT_LOUD);
}

int ringctl_verbose_flag(const char *arg)
{
	return !strcmp(arg, "-v") || !strcmp(arg, "--verbose");
}

/* Send a request and render its reply of type want; NULL: why not is
 * printed. The caller frees the reply (frame_free). */
Ring__Envelope *ringctl_show(const struct ringctl *rc, Ring__Envelope *req,
			     Ring__Envelope__BodyCase want,
			     void (*show)(struct writer *,
					  const Ring__Envelope *, int),
			     int verbose)
{
	Ring__Envelope *rep = ringctl_call(rc, req, want);
	struct writer *w;

	if (!rep)
		return NULL;
	w = writer_new(stdout, rc->fmt);
	show(w, rep, verbose);
	writer_finish(w);
	return rep;
}

Ring__Topology *ringctl_topology(const struct ringctl *rc,
				 Ring__Envelope **hold)
{
	Ring__Envelope req = RING__ENVELOPE__INIT, *rep;
	Ring__RanksRequest rr = RING__RANKS_REQUEST__INIT;

	req.body_case = RING__ENVELOPE__BODY_RANKS_REQUEST;
	req.ranks_request = &rr;
	rep = ringctl_call(rc, &req, RING__ENVELOPE__BODY_RANKS_REPLY);
	if (!rep)
		return NULL;
	if (!rep->ranks_reply->topology) {
		if (!rc->quiet)
			error_report(EXIT_TROUBLE, "reply", NULL, NULL,
				     "reply without a topology");
		frame_free(rep);
		return NULL;
	}
	*hold = rep;
	return rep->ranks_reply->topology;
}

/* ranks' text formats, beside the writer's. */
int ringctl_text_format(const char *name)
{
	return !strcmp(name, "hostfile") || !strcmp(name, "rankfile") ||
	       !strcmp(name, "torchrun") || !strcmp(name, "env");
}
