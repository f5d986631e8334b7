#include "tls.h"

#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include "log.h"

static void tls_log_errors(const char *what, const char *path)
{
	unsigned long e = ERR_get_error();
	char buf[256] = "unknown error";

	if (e)
		ERR_error_string_n(e, buf, sizeof(buf));
	ERR_clear_error();
	log_warnx("tls: %s %s: %s", what, path, buf);
}

SSL_CTX *tls_ctx_new(int server, const char *ca, const char *cert,
		     const char *key)
{
	SSL_CTX *ctx =
		SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());

	if (!ctx) {
		tls_log_errors("cannot create context", "");
		return NULL;
	}
	/* TLS 1.3 only: forward secrecy and no renegotiation by construction. */
	if (!SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) ||
	    !SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION)) {
		tls_log_errors("cannot restrict to TLS 1.3", "");
		goto fail;
	}
	if (SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) {
		tls_log_errors("cannot load CA certificate", ca);
		goto fail;
	}
	if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
		tls_log_errors("cannot load certificate", cert);
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
		tls_log_errors("cannot load private key", key);
		goto fail;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		tls_log_errors("private key does not match certificate", key);
		goto fail;
	}
	SSL_CTX_set_verify(
		ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	SSL_CTX_set_verify_depth(ctx, 4);
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	/* A peer that exits without close_notify is an ordinary EOF for us:
	 * every message is framed, so truncation is detected there. */
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
	/* Sessions are long-lived; resumption buys nothing and tickets would
	 * need key rotation. */
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_num_tickets(ctx, 0);
	if (server) {
		STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(ca);

		if (names)
			SSL_CTX_set_client_CA_list(ctx, names);
	}
	return ctx;
fail:
	SSL_CTX_free(ctx);
	return NULL;
}

int tls_client_expect_name(SSL *ssl, const char *name)
{
	SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	if (SSL_set1_host(ssl, name) != 1)
		return -1;
	/* SNI is harmless and lets a proxy route; skip it for IP literals. */
	if (!strchr(name, ':') && strspn(name, "0123456789.") != strlen(name))
		SSL_set_tlsext_host_name(ssl, name);
	return 0;
}

int tls_peer_has_name(SSL *ssl, const char *name)
{
	X509 *peer = SSL_get1_peer_certificate(ssl);
	int ok;

	if (!peer)
		return 0;
	ok = SSL_get_verify_result(ssl) == X509_V_OK &&
	     X509_check_host(peer, name, strlen(name),
			     X509_CHECK_FLAG_NO_WILDCARDS, NULL) == 1;
	X509_free(peer);
	return ok;
}

void tls_peer_cn(SSL *ssl, char *buf, size_t len)
{
	X509 *peer = SSL_get1_peer_certificate(ssl);

	snprintf(buf, len, "?");
	if (!peer)
		return;
	if (X509_NAME_get_text_by_NID(X509_get_subject_name(peer),
				      NID_commonName, buf, (int)len) < 0)
		snprintf(buf, len, "?");
	X509_free(peer);
}

const char *tls_last_error(SSL *ssl)
{
	static char buf[320];
	unsigned long e = ERR_get_error();
	long v = ssl ? SSL_get_verify_result(ssl) : X509_V_OK;

	buf[0] = '\0';
	if (e)
		ERR_error_string_n(e, buf, sizeof(buf));
	ERR_clear_error();
	if (v != X509_V_OK) {
		size_t n = strlen(buf);

		snprintf(buf + n, sizeof(buf) - n, "%scertificate verify: %s",
			 n ? "; " : "", X509_verify_cert_error_string(v));
	}
	if (!buf[0])
		snprintf(buf, sizeof(buf), "no TLS error recorded");
	return buf;
}
