/* A throwaway-or-real cluster PKI through OpenSSL's API: one CA, and one
 * key + certificate per name (node names for agents, the coordinator's
 * name for the coordinator). Keys are written 0600. Every certificate has
 * one role: a node's is for TLS client use only, the coordinator's for
 * server use only, so that neither can stand in for the other. */
#ifndef RING_PKI_H
#define RING_PKI_H

#include <stddef.h>

/* Create DIR (0700) with ca.key and ca.crt (CN = cn). Refuses to overwrite
 * an existing CA. 0, or -1 with a one-line reason in err. */
int pki_init(const char *dir, const char *cn, unsigned days, char *err,
	     size_t errlen);
enum pki_role {
	PKI_ROLE_NODE,	      /* extendedKeyUsage clientAuth: an agent */
	PKI_ROLE_COORDINATOR, /* extendedKeyUsage serverAuth */
};

/* Room for a serial as pki_issue writes it: 16 bytes in hex, and NUL. */
#define PKI_SERIAL_LEN 33

/* Issue DIR/NAME.key and DIR/NAME.crt signed by DIR/ca.*: CN = NAME,
 * subjectAltName DNS:NAME (plus IP:NAME when NAME is an address), for the
 * TLS role given. Refuses to overwrite. The certificate's serial goes to
 * serial (lower-case hex, no colons, as tls_peer_serial() gives it) unless
 * serial is NULL. */
int pki_issue(const char *dir, const char *name, enum pki_role role,
	      unsigned days, char *serial, size_t serial_len, char *err,
	      size_t errlen);

#endif
