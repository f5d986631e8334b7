/* TLS 1.3 contexts with mutual authentication, certificate roles and file
 * checks. */
#include "tls.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "log.h"
#include "tls_words.h"

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

/* The leaf a verification refused, kept with the SSL for the words of
 * the failure (a server never keeps a refused client's certificate). */
static int tls_refused_idx = -1;

static void tls_refused_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad,
			     int idx, long argl, void *argp)
{
	(void)parent;
	(void)ad;
	(void)idx;
	(void)argl;
	(void)argp;
	X509_free(ptr);
}

static void tls_keep_refused(SSL *ssl, X509_STORE_CTX *xs)
{
	X509 *leaf = X509_STORE_CTX_get0_cert(xs);

	if (tls_refused_idx < 0 || !leaf ||
	    SSL_get_ex_data(ssl, tls_refused_idx))
		return;
	if (X509_up_ref(leaf) != 1)
		return;
	if (!SSL_set_ex_data(ssl, tls_refused_idx, leaf))
		X509_free(leaf);
}

X509 *tls_refused_peer(SSL *ssl)
{
	X509 *x = tls_refused_idx >= 0 ? SSL_get_ex_data(ssl, tls_refused_idx)
				       : NULL;

	return x ? x : SSL_get0_peer_certificate(ssl);
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

	if (ssl && !ok)
		tls_keep_refused(ssl, xs);
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

	/* Contexts are made at start, before any thread. */
	if (tls_refused_idx < 0)
		tls_refused_idx = SSL_get_ex_new_index(0, NULL, NULL, NULL,
						       tls_refused_free);
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

struct tls_check {
	tls_check_cb cb;
	void *arg;
	int fatal;
};

static void tls_check_say(struct tls_check *tc, enum tls_file file, int fatal,
			  const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void tls_check_say(struct tls_check *tc, enum tls_file file, int fatal,
			  const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	tc->fatal += fatal;
	tc->cb(file, fatal, msg, tc->arg);
}

/* The reason OpenSSL gives for the last failure, and an empty queue. */
static const char *tls_check_ossl(char *buf, size_t len)
{
	unsigned long e = ERR_peek_last_error();

	snprintf(buf, len, "not PEM");
	if (e && ERR_reason_error_string(e))
		snprintf(buf, len, "%s", ERR_reason_error_string(e));
	ERR_clear_error();
	return buf;
}

/* -n must never wait for a passphrase on the terminal: the service could
 * not type one either. */
static int tls_check_no_pass(char *buf, int size, int rw, void *u)
{
	(void)buf;
	(void)size;
	(void)rw;
	(void)u;
	return -1;
}

/* Every certificate in path, in order (the first is the leaf for a
 * certificate file). NULL after saying why; fatal. */
static STACK_OF(X509) * tls_check_read_certs(struct tls_check *tc,
					     enum tls_file file,
					     const char *what, const char *path)
{
	STACK_OF(X509) *sk = NULL;
	char why[256];
	FILE *f;
	X509 *x;

	f = fopen(path, "re");
	if (!f) {
		tls_check_say(tc, file, 1, "%s %s: %s", what, path,
			      strerror(errno));
		return NULL;
	}
	sk = sk_X509_new_null();
	while (sk && (x = PEM_read_X509(f, NULL, tls_check_no_pass, NULL)))
		if (!sk_X509_push(sk, x)) {
			X509_free(x);
			sk_X509_pop_free(sk, X509_free);
			sk = NULL;
		}
	/* The loop ends on "no start line" at the end of the file; any
	 * other reason stops a load in tls_ctx_new() as well. */
	if (sk && sk_X509_num(sk) > 0 &&
	    ERR_GET_REASON(ERR_peek_last_error()) == PEM_R_NO_START_LINE)
		ERR_clear_error();
	fclose(f);
	if (!sk || sk_X509_num(sk) == 0 || ERR_peek_last_error()) {
		tls_check_say(tc, file, 1, "%s %s: no certificate in it (%s)",
			      what, path,
			      sk ? tls_check_ossl(why, sizeof(why))
				 : "out of memory");
		sk_X509_pop_free(sk, X509_free);
		return NULL;
	}
	return sk;
}

static EVP_PKEY *tls_check_read_key(struct tls_check *tc, const char *path)
{
	EVP_PKEY *pkey;
	char why[256];
	FILE *f;

	f = fopen(path, "re");
	if (!f) {
		tls_check_say(tc, TLS_FILE_KEY, 1, "key %s: %s", path,
			      strerror(errno));
		return NULL;
	}
	pkey = PEM_read_PrivateKey(f, NULL, tls_check_no_pass, NULL);
	fclose(f);
	if (!pkey)
		tls_check_say(tc, TLS_FILE_KEY, 1,
			      "key %s: no private key in it (%s; keys with a "
			      "passphrase are not supported)",
			      path, tls_check_ossl(why, sizeof(why)));
	ERR_clear_error();
	return pkey;
}

/* What to do when cert does not verify against ca, by the result. */
static const char *tls_check_chain_advice(int v)
{
	switch (v) {
	case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
	case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
	case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
	case X509_V_ERR_CERT_SIGNATURE_FAILURE:
	case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
	case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
		return "it was issued by another CA: ca must be the "
		       "certificate of the CA that issued it, the one the "
		       "coordinator and every agent use (or issue this "
		       "certificate from that CA: ringctl pki issue DIR NAME)";
	case X509_V_ERR_CERT_HAS_EXPIRED:
	case X509_V_ERR_CERT_NOT_YET_VALID:
		return "re-issue it (ringctl pki issue DIR NAME) or check "
		       "this host's clock";
	case X509_V_ERR_INVALID_PURPOSE:
		return "it lacks this daemon's role: re-issue it with "
		       "ringctl pki issue";
	default:
		return "every peer that trusts only this CA would refuse it";
	}
}

/* ca must hold CA certificates only (basicConstraints CA:TRUE): a node's
 * or the coordinator's certificate there trusts nothing they sign. 1
 * when all are, else 0 after saying which is not. */
static int tls_check_cas(struct tls_check *tc, STACK_OF(X509) * cas,
			 const char *ca)
{
	char who[600];

	for (int i = 0; i < sk_X509_num(cas); i++) {
		X509 *x = sk_X509_value(cas, i);
		uint32_t f = X509_get_extension_flags(x);

		if ((f & EXFLAG_BCONS) && (f & EXFLAG_CA))
			continue;
		tls_words_cert(x, who, sizeof(who));
		tls_check_say(tc, TLS_FILE_CA, 1,
			      "ca %s: certificate %d (%s) is not a CA "
			      "certificate (no basicConstraints CA:TRUE): ca "
			      "must be the cluster CA's certificate, ca.crt in "
			      "the directory 'ringctl pki init' made, not a "
			      "node's or the coordinator's",
			      ca, i + 1, who);
		return 0;
	}
	return 1;
}

/* Does the leaf verify against the CA certificates alone (no system
 * store), with the rest of the certificate file as intermediates, for
 * this daemon's purpose, as a peer trusting ca checks it? Fatal: every
 * peer that uses the same ca refuses it. */
static void tls_check_chain(struct tls_check *tc, STACK_OF(X509) * cas,
			    STACK_OF(X509) * chain, const char *ca,
			    const char *cert, int purpose)
{
	X509_STORE *store = X509_STORE_new();
	X509_STORE_CTX *xs = X509_STORE_CTX_new();
	STACK_OF(X509) *untrusted = NULL;
	char who[600], trusted[600];
	int i, v;

	if (!store || !xs)
		goto oom;
	for (i = 0; i < sk_X509_num(cas); i++)
		if (!X509_STORE_add_cert(store, sk_X509_value(cas, i)))
			goto oom;
	untrusted = sk_X509_dup(chain);
	if (!untrusted)
		goto oom;
	(void)sk_X509_shift(untrusted);
	if (!X509_STORE_CTX_init(xs, store, sk_X509_value(chain, 0),
				 untrusted) ||
	    (purpose && !X509_STORE_CTX_set_purpose(xs, purpose)))
		goto oom;
	if (X509_verify_cert(xs) != 1) {
		v = X509_STORE_CTX_get_error(xs);
		tls_words_cert(sk_X509_value(chain, 0), who, sizeof(who));
		tls_words_ca(sk_X509_value(cas, 0), trusted, sizeof(trusted));
		tls_check_say(tc, TLS_FILE_CERT, 1,
			      "cert %s (%s) does not verify against ca %s "
			      "(%s%s): %s; %s",
			      cert, who, ca, trusted,
			      sk_X509_num(cas) > 1 ? " and others" : "",
			      X509_verify_cert_error_string(v),
			      tls_check_chain_advice(v));
	}
	goto out;
oom:
	tls_check_say(tc, TLS_FILE_CERT, 1, "cert %s: out of memory", cert);
out:
	ERR_clear_error();
	sk_X509_free(untrusted);
	X509_STORE_CTX_free(xs);
	X509_STORE_free(store);
}

int tls_check_files(int server, const char *ca, const char *cert,
		    const char *key, tls_check_cb cb, void *arg)
{
	struct tls_check tc = {.cb = cb, .arg = arg};
	STACK_OF(X509) * cas, *chain;
	EVP_PKEY *pkey;
	const char *problem;
	X509 *leaf;

	ERR_clear_error();
	cas = tls_check_read_certs(&tc, TLS_FILE_CA, "ca", ca);
	chain = tls_check_read_certs(&tc, TLS_FILE_CERT, "cert", cert);
	pkey = tls_check_read_key(&tc, key);
	leaf = chain ? sk_X509_value(chain, 0) : NULL;
	if (leaf && pkey && X509_check_private_key(leaf, pkey) != 1)
		tls_check_say(&tc, TLS_FILE_KEY, 1,
			      "key %s does not match cert %s", key, cert);
	ERR_clear_error();
	problem = leaf ? tls_role_problem(leaf, !server) : NULL;
	if (problem)
		tls_check_say(&tc, TLS_FILE_CERT, 1, "cert %s %s", cert,
			      problem);
	if (cas && leaf && tls_check_cas(&tc, cas, ca))
		tls_check_chain(&tc, cas, chain, ca, cert,
				problem	 ? 0
				: server ? X509_PURPOSE_SSL_SERVER
					 : X509_PURPOSE_SSL_CLIENT);
	EVP_PKEY_free(pkey);
	sk_X509_pop_free(chain, X509_free);
	sk_X509_pop_free(cas, X509_free);
	if (tc.fatal) {
		errno = EINVAL;
		return -1;
	}
	return 0;
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

static int tls_cert_not_after(const X509 *x, uint64_t *ms)
{
	const ASN1_TIME *t = X509_get0_notAfter(x);
	struct tm tm;

	if (!t || !ASN1_TIME_to_tm(t, &tm)) {
		errno = EINVAL;
		return -1;
	}
	*ms = (uint64_t)timegm(&tm) * 1000;
	return 0;
}

int tls_peer_not_after(SSL *ssl, uint64_t *ms)
{
	X509 *peer = SSL_get1_peer_certificate(ssl);
	int rc;

	if (!peer) {
		errno = ENOENT;
		return -1;
	}
	rc = tls_cert_not_after(peer, ms);
	X509_free(peer);
	return rc;
}

int tls_file_not_after(const char *path, uint64_t *ms)
{
	FILE *f = fopen(path, "r");
	X509 *x;
	int rc;

	if (!f)
		return -1;
	x = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	if (!x) {
		errno = ENOENT;
		return -1;
	}
	rc = tls_cert_not_after(x, ms);
	X509_free(x);
	return rc;
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
