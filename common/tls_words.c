/* See tls_words.h. */
#include "tls_words.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include "tls.h"

struct tls_words_out {
	char *buf;
	size_t len, used;
};

static void tls_words_put(struct tls_words_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void tls_words_put(struct tls_words_out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->used >= o->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->used, o->len - o->used, fmt, ap);
	va_end(ap);
	o->used += n > 0 ? (size_t)n : 0;
}

/* A name as RFC 2253 text ("CN=n1"); anything but printable ASCII
 * becomes '?' (the text comes from outside). */
static void tls_words_name(const X509_NAME *n, char *buf, size_t len)
{
	BIO *b = BIO_new(BIO_s_mem());
	int k = 0;

	snprintf(buf, len, "(no name)");
	if (!b || !n)
		goto out;
	if (X509_NAME_print_ex(b, n, 0, XN_FLAG_RFC2253) >= 0)
		k = BIO_read(b, buf, (int)len - 1);
	if (k > 0) {
		buf[k] = '\0';
		for (char *p = buf; *p; p++)
			if ((unsigned char)*p < 0x20 ||
			    (unsigned char)*p > 0x7e)
				*p = '?';
	} else if (len) {
		snprintf(buf, len, "(empty name)");
	}
out:
	BIO_free(b);
	ERR_clear_error();
}

/* The first 4 bytes of a key identifier in hex, "" when there is none. */
static void tls_words_keyid(const ASN1_OCTET_STRING *id, char *buf, size_t len)
{
	const unsigned char *p = id ? ASN1_STRING_get0_data(id) : NULL;
	int n = id ? ASN1_STRING_length(id) : 0;

	buf[0] = '\0';
	for (int i = 0; p && i < n && i < 4 && len > (size_t)(2 * i + 2); i++)
		snprintf(buf + 2 * i, len - 2 * i, "%02x", p[i]);
}

void tls_words_cert(X509 *x, char *buf, size_t len)
{
	char subj[256], iss[256], kid[16];

	if (!x) {
		snprintf(buf, len, "no certificate");
		return;
	}
	tls_words_name(X509_get_subject_name(x), subj, sizeof(subj));
	tls_words_name(X509_get_issuer_name(x), iss, sizeof(iss));
	tls_words_keyid(X509_get0_authority_key_id(x), kid, sizeof(kid));
	snprintf(buf, len, "%s, issued by %s%s%s%s", subj, iss,
		 *kid ? " (key " : "", kid, *kid ? ")" : "");
}

void tls_words_ca(X509 *x, char *buf, size_t len)
{
	char subj[256], kid[16];

	tls_words_name(X509_get_subject_name(x), subj, sizeof(subj));
	tls_words_keyid(X509_get0_subject_key_id(x), kid, sizeof(kid));
	snprintf(buf, len, "%s%s%s%s", subj, *kid ? " (key " : "", kid,
		 *kid ? ")" : "");
}

void tls_words_trusted(SSL *ssl, char *buf, size_t len)
{
	SSL_CTX *ctx = ssl ? SSL_get_SSL_CTX(ssl) : NULL;
	X509_STORE *st = ctx ? SSL_CTX_get_cert_store(ctx) : NULL;
	STACK_OF(X509_OBJECT) *objs = st ? X509_STORE_get0_objects(st) : NULL;
	struct tls_words_out o = {buf, len, 0};
	char one[300];
	int n = 0;

	if (len)
		buf[0] = '\0';
	for (int i = 0; objs && i < sk_X509_OBJECT_num(objs); i++) {
		X509 *x = X509_OBJECT_get0_X509(sk_X509_OBJECT_value(objs, i));

		if (!x)
			continue;
		tls_words_ca(x, one, sizeof(one));
		tls_words_put(&o, "%s%s", n++ ? " or " : "", one);
	}
	if (!n)
		tls_words_put(&o, "(none loaded)");
}

/* What to check for a certificate we refused, by the verify result. */
static const char *tls_words_verify_advice(long v, int server)
{
	switch (v) {
	case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
	case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
	case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
	case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
	case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
	case X509_V_ERR_CERT_SIGNATURE_FAILURE:
		return "the peer's certificate is not signed by the CA we "
		       "trust: the coordinator and every agent must use the "
		       "same ca file, and each certificate must be issued "
		       "from it (ringctl pki issue)";
	case X509_V_ERR_CERT_HAS_EXPIRED:
	case X509_V_ERR_CERT_NOT_YET_VALID:
		return "re-issue the peer's certificate (ringctl pki issue), "
		       "or check both hosts' clocks";
	case X509_V_ERR_INVALID_PURPOSE:
		return server ? "an agent needs a node certificate, not the "
				"coordinator's"
			      : "the coordinator needs a certificate issued "
				"with ringctl pki issue --coordinator";
	case X509_V_ERR_HOSTNAME_MISMATCH:
		return "the agent's coordinator_name must be the name the "
		       "coordinator's certificate was issued for";
	default:
		return "check both sides' ca, cert and key with ring-agent -n "
		       "and ring-coordinator -n";
	}
}

/* What to check when the peer sent alert a about us. */
static const char *tls_words_alert_advice(int a)
{
	switch (a) {
	case SSL_AD_UNKNOWN_CA:
	case SSL_AD_BAD_CERTIFICATE:
	case SSL_AD_CERTIFICATE_UNKNOWN:
	case SSL_AD_DECRYPT_ERROR:
		return "its ca must be the CA that signed ours: the "
		       "coordinator and every agent must use the same ca file";
	case SSL_AD_CERTIFICATE_EXPIRED:
		return "re-issue our certificate (ringctl pki issue), or check "
		       "both hosts' clocks";
	case SSL_AD_UNSUPPORTED_CERTIFICATE:
		return "our certificate has the wrong role for it (a node "
		       "certificate for agents, --coordinator for the "
		       "coordinator)";
	case SSL_AD_CERTIFICATE_REQUIRED:
		return "it needs a certificate from us: check cert and key";
	case SSL_AD_PROTOCOL_VERSION:
		return "it does not speak TLS 1.3: is it a ringd daemon of "
		       "this version?";
	default:
		return "check both sides' ca, cert and key with ring-agent -n "
		       "and ring-coordinator -n";
	}
}

void tls_words_failure(SSL *ssl, unsigned long err, char *buf, size_t len)
{
	struct tls_words_out o = {buf, len, 0};
	int reason = err ? ERR_GET_REASON(err) : 0;
	int server = ssl ? SSL_is_server(ssl) : 0;
	const char *side = server ? "server" : "client";
	char raw[200] = "", cert[600], ca[600];
	X509 *peer;

	if (len)
		buf[0] = '\0';
	if (err)
		ERR_error_string_n(err, raw, sizeof(raw));
	tls_words_trusted(ssl, ca, sizeof(ca));
	if (ssl && ERR_GET_LIB(err) == ERR_LIB_SSL &&
	    reason == SSL_R_CERTIFICATE_VERIFY_FAILED) {
		long v = SSL_get_verify_result(ssl);

		peer = tls_refused_peer(ssl);
		tls_words_cert(peer, cert, sizeof(cert));
		tls_words_put(&o,
			      "TLS: we (%s) refused the peer's certificate "
			      "(%s): %s; the CA we trust is %s; %s",
			      side, cert, X509_verify_cert_error_string(v), ca,
			      tls_words_verify_advice(v, server));
	} else if (ssl && ERR_GET_LIB(err) == ERR_LIB_SSL &&
		   reason > SSL_AD_REASON_OFFSET) {
		int a = reason - SSL_AD_REASON_OFFSET;
		char theirs[600] = "no certificate";

		tls_words_cert(SSL_get_certificate(ssl), cert, sizeof(cert));
		peer = SSL_get0_peer_certificate(ssl);
		if (peer)
			tls_words_cert(peer, theirs, sizeof(theirs));
		tls_words_put(&o,
			      "TLS: the peer rejected our certificate (%s) "
			      "with alert '%s' (we are the %s; the peer "
			      "presented %s; the CA we trust is %s); %s",
			      cert, SSL_alert_desc_string_long(a), side, theirs,
			      ca, tls_words_alert_advice(a));
	} else {
		tls_words_put(&o,
			      "TLS (we are the %s) failed: %s; is the peer a "
			      "ringd daemon speaking TLS 1.3? the CA we trust "
			      "is %s",
			      side,
			      err && ERR_reason_error_string(err)
				      ? ERR_reason_error_string(err)
				      : "no reason given",
			      ca);
	}
	if (*raw)
		tls_words_put(&o, " (openssl: %s)", raw);
}

void tls_words_closed(SSL *ssl, char *buf, size_t len)
{
	char cert[600], ca[600];

	tls_words_cert(ssl ? SSL_get_certificate(ssl) : NULL, cert,
		       sizeof(cert));
	tls_words_trusted(ssl, ca, sizeof(ca));
	snprintf(buf, len,
		 "TLS: the peer closed the session before accepting us, most "
		 "likely refusing our certificate (%s) (we are the %s; the CA "
		 "we trust is %s): its ca must be the CA that signed ours, "
		 "and the certificate must be issued for this node's name",
		 cert, ssl && SSL_is_server(ssl) ? "server" : "client", ca);
}
