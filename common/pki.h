/* A throwaway-or-real cluster PKI through OpenSSL's API: one CA, and one
 * key + certificate per name (node names for agents, the coordinator's
 * name for the coordinator). Keys are written 0600. */
#ifndef RING_PKI_H
#define RING_PKI_H

#include <stddef.h>

/* Create DIR (0700) with ca.key and ca.crt (CN = cn). Refuses to overwrite
 * an existing CA. 0, or -1 with a one-line reason in err. */
int pki_init(const char *dir, const char *cn, unsigned days, char *err,
	     size_t errlen);
/* Issue DIR/NAME.key and DIR/NAME.crt signed by DIR/ca.*: CN = NAME,
 * subjectAltName DNS:NAME (plus IP:NAME when NAME is an address), usable for
 * TLS server and client auth. Refuses to overwrite. */
int pki_issue(const char *dir, const char *name, unsigned days, char *err,
	      size_t errlen);

#endif
