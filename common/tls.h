/* TLS 1.3 with mutual certificate authentication against a cluster CA. */
#ifndef RING_TLS_H
#define RING_TLS_H

#include <openssl/ssl.h>

/* Build a context that only speaks TLS 1.3, presents cert/key, and requires
 * and verifies the peer's certificate against ca. server: 1 for the
 * coordinator's listener, 0 for agents. NULL on error (logged, naming the
 * file that failed). */
SSL_CTX *tls_ctx_new(int server, const char *ca, const char *cert,
		     const char *key);
/* Client side: require the server certificate to carry name (SAN/CN). */
int tls_client_expect_name(SSL *ssl, const char *name);
/* 1 if the verified peer certificate is valid for name, else 0. */
int tls_peer_has_name(SSL *ssl, const char *name);
/* Copy the peer certificate's CN into buf ("?" if none). */
void tls_peer_cn(SSL *ssl, char *buf, size_t len);
/* Text of the last OpenSSL error queue entries plus the verify result. */
const char *tls_last_error(SSL *ssl);

#endif
