/* TLS 1.3 with mutual certificate authentication against a cluster CA. */
#ifndef RING_TLS_H
#define RING_TLS_H

#include <openssl/ssl.h>

/* Room for tls_peer_serial(): 20 bytes (RFC 5280's most) in hex, and NUL. */
#define TLS_SERIAL_LEN 41

/* Build a context that only speaks TLS 1.3, presents cert/key, and requires
 * and verifies the peer's certificate against ca. server: 1 for the
 * coordinator's listener, 0 for agents. Each side also checks the peer's
 * role (extendedKeyUsage): the server accepts only client-only
 * certificates (nodes), the client only server-only ones (the
 * coordinator); a certificate with no role or with both is refused, and
 * the refusal is logged with its reason. NULL on error (logged, naming
 * the file that failed). */
SSL_CTX *tls_ctx_new(int server, const char *ca, const char *cert,
		     const char *key);
/* The files tls_check_files() reports about. */
enum tls_file {
	TLS_FILE_CA,
	TLS_FILE_CERT,
	TLS_FILE_KEY,
};
/* One problem: the file it is about, whether tls_ctx_new() or every peer
 * would refuse it (fatal) or not, and one line that names the path. */
typedef void (*tls_check_cb)(enum tls_file file, int fatal, const char *msg,
			     void *arg);
/* Open ca, cert and key as tls_ctx_new(server, ...) would, and check
 * before any peer does: each file holds what it should, the key matches
 * the certificate, the certificate has this side's role (server: the
 * coordinator's, else a node's), ca holds CA certificates only
 * (basicConstraints CA:TRUE), and the certificate verifies against ca
 * alone for this side's purpose (TLS server or client): a peer that uses
 * the same ca would refuse it otherwise (signed by another CA, expired).
 * All are fatal; each message names the file, the certificate's subject
 * and issuer, and what to do. Every problem goes to cb. 0 when none is fatal, else -1 (errno
 * EINVAL). */
int tls_check_files(int server, const char *ca, const char *cert,
		    const char *key, tls_check_cb cb, void *arg);
/* Client side: require the server certificate to carry name (SAN/CN). */
int tls_client_expect_name(SSL *ssl, const char *name);
/* 1 if the verified peer certificate is valid for name, else 0. */
int tls_peer_has_name(SSL *ssl, const char *name);
/* Copy the peer certificate's CN into buf ("?" if none). */
void tls_peer_cn(SSL *ssl, char *buf, size_t len);
/* The peer certificate's serial number into out: lower-case hex, two
 * digits per byte of its magnitude, no colons and no "0x" (what
 * `openssl x509 -noout -serial` prints, in lower case). 0, or -1 with
 * errno: ENOENT no peer certificate, EINVAL a negative serial, ENOSPC out
 * shorter than needed (TLS_SERIAL_LEN always suffices for RFC 5280). */
int tls_peer_serial(SSL *ssl, char *out, size_t len);
/* When a certificate stops being valid (notAfter), Unix ms: the peer's
 * (tls_peer_not_after) or the one in a PEM file (tls_file_not_after).
 * 0, or -1 with errno (ENOENT: no certificate, EINVAL: no usable time). */
int tls_peer_not_after(SSL *ssl, uint64_t *ms);
int tls_file_not_after(const char *path, uint64_t *ms);
/* The peer certificate a failed verification refused (kept by the
 * verify callback, also where OpenSSL keeps none), else the peer's
 * certificate, else NULL. Owned by ssl. */
X509 *tls_refused_peer(SSL *ssl);
/* Text of the last OpenSSL error queue entries plus the verify result. */
const char *tls_last_error(SSL *ssl);

#endif
