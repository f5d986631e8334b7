/* Certificates and TLS failures in words for operators: a certificate
 * by subject, issuer and key ids (two CAs made by `ringctl pki init`
 * share a subject; their keys tell them apart), and a failed TLS
 * session as which side we were, what the peer showed, which CA we
 * trust and what to check. Text from certificates is escaped. */
#ifndef RING_TLS_WORDS_H
#define RING_TLS_WORDS_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>
#include <openssl/x509.h>

/* A failed TLS session is logged in words once per peer per this long;
 * the repeats in between are counted into the next line (ratelimit.h). */
#define TLS_WORDS_LOG_MS 10000

/* "CN=n1, issued by CN=ringd cluster CA (key 1a2b3c4d)". */
void tls_words_cert(X509 *x, char *buf, size_t len);
/* A CA as we trust it: "CN=ringd cluster CA (key 1a2b3c4d)". */
void tls_words_ca(X509 *x, char *buf, size_t len);
/* The CA certificates ssl's context trusts, as tls_words_ca, joined with
 * " or ". */
void tls_words_trusted(SSL *ssl, char *buf, size_t len);
/* A failed TLS session on ssl, from the first OpenSSL error err (the
 * library's code, 0 when none): "TLS: we (client) refused the peer's
 * certificate (...): <verify result>; the CA we trust is ...: both sides
 * must use the same ca file ...", or "TLS: the peer rejected our
 * certificate (...) with alert 'unknown CA'; its ca must be the CA that
 * signed ours (...)", the raw error last in parentheses. */
void tls_words_failure(SSL *ssl, unsigned long err, char *buf, size_t len);
/* A client whose TLS 1.3 handshake finished but whose peer closed before
 * a word: the server most likely refused our certificate without the
 * alert reaching us. Our certificate, the CA we trust, what to check. */
void tls_words_closed(SSL *ssl, char *buf, size_t len);

#endif
