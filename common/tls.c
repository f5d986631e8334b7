#include "tls.h"

#include <errno.h>
#include <stdint.h>
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

/* The certificate's CN for a log line: CA-signed, yet text from outside,
 * so anything but printable ASCII becomes '?'. */
static void tls_cert_cn(X509 *x, char *buf, size_t len)
{
	snprintf(buf, len, "?");
	if (X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName,
				      buf, (int)len) < 0) {
		snprintf(buf, len, "?");
		return;
	}
	for (char *p = buf; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			*p = '?';
}

/* NULL when x may play the role wanted (client: a node, server: the
 * coordinator), else why not. Certificates of no role or of both (all
 * those issued before roles existed) are refused: either could be the
 * other side's. */
static const char *tls_role_problem(X509 *x, int want_client)
{
	uint32_t xku = X509_get_extended_key_usage(x);
	int client, server;

	if (!(X509_get_extension_flags(x) & EXFLAG_XKUSAGE))
		return "has no role (no extendedKeyUsage); re-issue it with "
		       "'ringctl pki issue'";
	client = (xku & XKU_SSL_CLIENT) != 0;
	server = (xku & XKU_SSL_SERVER) != 0;
	if ((xku & XKU_ANYEKU) || (client && server))
		return "is for both server and client use; re-issue it with "
		       "'ringctl pki issue' (nodes) or 'ringctl pki issue "
		       "--coordinator'";
	if (want_client && !client)
		return "is not for client use (a node needs a node "
		       "certificate, not the coordinator's)";
	if (!want_client && !server)
		return "is not for server use (the coordinator needs a "
		       "certificate issued with --coordinator)";
	return NULL;
}

static void tls_log_role(X509 *x, const char *problem)
{
	char cn[80];

	tls_cert_cn(x, cn, sizeof(cn));
	log_warnx("tls: peer refused: certificate of '%s' %s", cn, problem);
}

/* The peer's leaf must have the role opposite to ours. OpenSSL's own
 * purpose check already refuses a leaf without the role wanted (before
 * checking signatures, so a stranger could forge the name in it): that
 * refusal is explained in the log only when the CA-trusted issuer signed
 * the leaf. Our check covers what OpenSSL lets through: no role, both. */
static int tls_verify_cb(int ok, X509_STORE_CTX *xs)
{
	SSL *ssl = X509_STORE_CTX_get_ex_data(
		xs, SSL_get_ex_data_X509_STORE_CTX_idx());
	X509 *leaf = X509_STORE_CTX_get_current_cert(xs);
	STACK_OF(X509) *chain = X509_STORE_CTX_get0_chain(xs);
	const char *problem;
	EVP_PKEY *ipub;

	if (!ssl || !leaf || X509_STORE_CTX_get_error_depth(xs) != 0)
		return ok;
	problem = tls_role_problem(leaf, SSL_is_server(ssl));
	if (ok) {
		if (!problem)
			return 1;
		tls_log_role(leaf, problem);
		X509_STORE_CTX_set_error(xs, X509_V_ERR_INVALID_PURPOSE);
		return 0;
	}
	if (problem &&
	    X509_STORE_CTX_get_error(xs) == X509_V_ERR_INVALID_PURPOSE &&
	    chain && sk_X509_num(chain) > 1) {
		ipub = X509_get0_pubkey(sk_X509_value(chain, 1));
		if (ipub && X509_verify(leaf, ipub) == 1)
			tls_log_role(leaf, problem);
		ERR_clear_error();
	}
	return 0;
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
	SSL_CTX_set_verify(ctx,
			   SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
			   tls_verify_cb);
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

int tls_peer_serial(SSL *ssl, char *out, size_t len)
{
	X509 *peer = SSL_get1_peer_certificate(ssl);
	const ASN1_INTEGER *sn;
	int n, rc = -1;

	if (len)
		out[0] = '\0';
	if (!peer) {
		errno = ENOENT;
		return -1;
	}
	sn = X509_get0_serialNumber(peer);
	n = sn ? ASN1_STRING_length(sn) : 0;
	if (!sn || ASN1_STRING_type(sn) == V_ASN1_NEG_INTEGER || n < 0) {
		errno = EINVAL;
		goto out;
	}
	if ((size_t)n * 2 + 1 > len || (n == 0 && len < 3)) {
		errno = ENOSPC;
		goto out;
	}
	/* ASN1_INTEGER keeps the magnitude, big-endian, without the DER
	 * sign byte: the same bytes `openssl x509 -serial` prints. */
	for (int i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", ASN1_STRING_get0_data(sn)[i]);
	if (n == 0)
		snprintf(out, len, "00");
	rc = 0;
out:
	X509_free(peer);
	return rc;
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
