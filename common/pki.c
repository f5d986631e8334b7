/* The cluster CA and certificates with roles (ringctl pki). */
#include "pki.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#define PKI_NAME_MAX 63
#define PKI_CN_MAX 64	   /* ub-common-name in RFC 5280 */
#define PKI_DAYS_MAX 36500 /* keeps day arithmetic far from overflow */
/* Certificates start an hour in the past so that a node whose clock is a
 * little behind the one that issued them still accepts them. */
#define PKI_BACKDATE_S 3600

static void pki_set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void pki_set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* "what: <OpenSSL's reason>", and the error queue left empty. */
static void pki_ossl_err(char *err, size_t errlen, const char *what)
{
	unsigned long e = ERR_peek_last_error();
	char buf[256] = "unknown OpenSSL error";

	if (e)
		ERR_error_string_n(e, buf, sizeof(buf));
	ERR_clear_error();
	pki_set_err(err, errlen, "%s: %s", what, buf);
	errno = EPROTO;
}

/* A name becomes a file name and a DNS name: keep it to a safe alphabet.
 * IPv6 literals are let through for their colons; "ca" is the CA's own. */
static int pki_name_valid(const char *name)
{
	struct in6_addr a6;
	size_t n = strlen(name);

	if (n == 0 || n > PKI_NAME_MAX || name[0] == '.' || name[0] == '-')
		return 0;
	if (!strcmp(name, "ca"))
		return 0;
	if (strchr(name, ':'))
		return inet_pton(AF_INET6, name, &a6) == 1;
	return strspn(name, "abcdefghijklmnopqrstuvwxyz"
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789.-_") == n;
}

static int pki_is_address(const char *name)
{
	unsigned char buf[sizeof(struct in6_addr)];

	return inet_pton(AF_INET, name, buf) == 1 ||
	       inet_pton(AF_INET6, name, buf) == 1;
}

/* A CN the CA is named by: printable text within X.509's bound. */
static int pki_cn_valid(const char *cn)
{
	size_t n = strlen(cn), i;

	if (n == 0 || n > PKI_CN_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)cn[i] < 0x20 || cn[i] == 0x7f)
			return 0;
	return 1;
}

static int pki_path(char *buf, size_t len, const char *dir, const char *name,
		    const char *ext, char *err, size_t errlen)
{
	size_t dl = strlen(dir);
	int n = snprintf(buf, len, "%s%s%s.%s", dir,
			 dl && dir[dl - 1] == '/' ? "" : "/", name, ext);

	if (n < 0 || (size_t)n >= len) {
		pki_set_err(err, errlen, "%s: path too long", dir);
		return -1;
	}
	return 0;
}

/* Both files of a pair must be new: nothing is written if either exists. */
static int pki_check_absent(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(path, &st) == 0) {
		pki_set_err(err, errlen,
			    "%s already exists, refusing to overwrite", path);
		errno = EEXIST;
		return -1;
	}
	if (errno != ENOENT) {
		pki_set_err(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Write a PEM file so that it appears complete or not at all, with its final
 * mode from the first byte: a 0600 temporary file in the same directory,
 * synced, then hard-linked into place (link never replaces an existing file,
 * unlike rename). */
static int pki_write_pem(const char *path, mode_t mode, EVP_PKEY *key, X509 *x,
			 char *err, size_t errlen)
{
	char tmp[PATH_MAX];
	const char *base = strrchr(path, '/');
	FILE *f = NULL;
	int fd, ok, saved, rc = -1;
	size_t dirlen;

	base = base ? base + 1 : path;
	dirlen = (size_t)(base - path);
	if (snprintf(tmp, sizeof(tmp), "%.*s.%s.XXXXXX", (int)dirlen, path,
		     base) >= (int)sizeof(tmp)) {
		pki_set_err(err, errlen, "%s: path too long", path);
		return -1;
	}
	fd = mkstemp(tmp); /* creates 0600 */
	if (fd < 0) {
		pki_set_err(err, errlen, "cannot create a file next to %s: %s",
			    path, strerror(errno));
		return -1;
	}
	if (fchmod(fd, mode) < 0) {
		pki_set_err(err, errlen, "%s: chmod: %s", tmp, strerror(errno));
		close(fd);
		goto out_unlink;
	}
	f = fdopen(fd, "w");
	if (!f) {
		pki_set_err(err, errlen, "%s: %s", tmp, strerror(errno));
		close(fd);
		goto out_unlink;
	}
	ok = key ? PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL)
		 : PEM_write_X509(f, x);
	if (!ok) {
		pki_ossl_err(err, errlen, path);
		goto out_close;
	}
	if (fflush(f) != 0 || fsync(fileno(f)) < 0) {
		pki_set_err(err, errlen, "%s: write: %s", path,
			    strerror(errno));
		goto out_close;
	}
	if (fclose(f) != 0) {
		f = NULL;
		pki_set_err(err, errlen, "%s: write: %s", path,
			    strerror(errno));
		goto out_unlink;
	}
	f = NULL;
	if (link(tmp, path) < 0) {
		if (errno == EEXIST) /* raced with another writer */
			pki_set_err(err, errlen,
				    "%s already exists, refusing to overwrite",
				    path);
		else
			pki_set_err(err, errlen, "%s: %s", path,
				    strerror(errno));
		goto out_unlink;
	}
	rc = 0;
out_close:
	if (f)
		fclose(f);
out_unlink:
	saved = errno;
	unlink(tmp);
	errno = saved;
	return rc;
}

/* Key then certificate; a certificate that cannot be written takes its
 * fresh key with it, so that the pair can simply be issued again. */
static int pki_write_pair(const char *keypath, const char *crtpath,
			  EVP_PKEY *key, X509 *x, char *err, size_t errlen)
{
	if (pki_write_pem(keypath, 0600, key, NULL, err, errlen) < 0)
		return -1;
	if (pki_write_pem(crtpath, 0644, NULL, x, err, errlen) < 0) {
		int saved = errno;

		unlink(keypath);
		errno = saved;
		return -1;
	}
	return 0;
}

static int pki_add_ext(X509 *x, X509V3_CTX *ctx, int nid, const char *value,
		       char *err, size_t errlen)
{
	X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, ctx, nid, value);
	char what[128];
	int ok;

	if (!ext) {
		snprintf(what, sizeof(what), "cannot build extension %s",
			 OBJ_nid2sn(nid));
		pki_ossl_err(err, errlen, what);
		return -1;
	}
	ok = X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	if (!ok) {
		pki_ossl_err(err, errlen, "cannot add extension");
		return -1;
	}
	return 0;
}

/* A certificate for key with CN = cn, not yet extended nor signed:
 * X.509 v3, a random positive 127-bit serial (its 16 bytes left in
 * serial), valid from a little before now for days. */
static X509 *pki_cert_new(EVP_PKEY *key, const char *cn, unsigned days,
			  unsigned char serial[16], char *err, size_t errlen)
{
	X509 *x = X509_new();
	BIGNUM *bn = NULL;
	X509_NAME *subj;

	if (!x)
		goto fail_ossl;
	if (RAND_bytes(serial, 16) != 1)
		goto fail_ossl;
	serial[0] &= 0x7f; /* DER INTEGER: keep it positive */
	serial[0] |= 0x40; /* and never zero, at full length */
	bn = BN_bin2bn(serial, 16, NULL);
	if (!bn || !BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)))
		goto fail_ossl;
	if (!X509_set_version(x, X509_VERSION_3) ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), -PKI_BACKDATE_S) ||
	    !X509_time_adj_ex(X509_getm_notAfter(x), (int)days, 0, NULL) ||
	    !X509_set_pubkey(x, key))
		goto fail_ossl;
	subj = X509_get_subject_name(x);
	if (!X509_NAME_add_entry_by_NID(subj, NID_commonName, MBSTRING_UTF8,
					(const unsigned char *)cn, -1, -1, 0))
		goto fail_ossl;
	BN_free(bn);
	return x;
fail_ossl:
	pki_ossl_err(err, errlen, "cannot build certificate");
	BN_free(bn);
	X509_free(x);
	return NULL;
}

static EVP_PKEY *pki_key_new(char *err, size_t errlen)
{
	EVP_PKEY *key = EVP_EC_gen("P-256");

	if (!key)
		pki_ossl_err(err, errlen, "cannot generate a P-256 key");
	return key;
}

static int pki_sign(X509 *x, EVP_PKEY *key, char *err, size_t errlen)
{
	if (!X509_sign(x, key, EVP_sha256())) {
		pki_ossl_err(err, errlen, "cannot sign certificate");
		return -1;
	}
	return 0;
}

static int pki_check_days(unsigned days, char *err, size_t errlen)
{
	if (days == 0 || days > PKI_DAYS_MAX) {
		pki_set_err(err, errlen,
			    "validity of %u days out of range 1-%u", days,
			    PKI_DAYS_MAX);
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* mkdir -p: missing parents 0755 (they hold nothing secret), DIR itself
 * 0700; an existing DIR is accepted as it is. */
static int pki_mkdir(const char *dir, char *err, size_t errlen)
{
	char path[PATH_MAX], *p;
	struct stat st;
	size_t n;

	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path)) {
		pki_set_err(err, errlen, "%s: path too long", dir);
		errno = ENAMETOOLONG;
		return -1;
	}
	/* "pki/" must not create pki as a 0755 parent of itself. */
	for (n = strlen(path); n > 1 && path[n - 1] == '/'; n--)
		path[n - 1] = '\0';
	for (p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			pki_set_err(err, errlen,
				    "cannot create directory %s: %s", path,
				    strerror(errno));
			return -1;
		}
		*p = '/';
	}
	if (mkdir(path, 0700) == 0)
		return 0;
	if (errno != EEXIST) {
		pki_set_err(err, errlen, "cannot create directory %s: %s", dir,
			    strerror(errno));
		return -1;
	}
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		pki_set_err(err, errlen, "%s exists and is not a directory",
			    dir);
		errno = ENOTDIR;
		return -1;
	}
	return 0;
}

/* DIR/NAME.key and DIR/NAME.crt (each PATH_MAX bytes). */
static int pki_paths(const char *dir, const char *name, char *keypath,
		     char *crtpath, char *err, size_t errlen)
{
	if (pki_path(keypath, PATH_MAX, dir, name, "key", err, errlen) < 0 ||
	    pki_path(crtpath, PATH_MAX, dir, name, "crt", err, errlen) < 0)
		return -1;
	return 0;
}

/* A new key and its certificate for cn (serial: its 16 random bytes), not
 * yet issued or signed, for paths that must not exist yet. On failure what
 * was made is left in *key and *x for the caller to free. */
static int pki_pair_new(const char *keypath, const char *crtpath,
			const char *cn, unsigned days, unsigned char serial[16],
			EVP_PKEY **key, X509 **x, char *err, size_t errlen)
{
	if (pki_check_absent(keypath, err, errlen) < 0 ||
	    pki_check_absent(crtpath, err, errlen) < 0)
		return -1;
	*key = pki_key_new(err, errlen);
	if (!*key)
		return -1;
	*x = pki_cert_new(*key, cn, days, serial, err, errlen);
	return *x ? 0 : -1;
}

int pki_init(const char *dir, const char *cn, unsigned days, char *err,
	     size_t errlen)
{
	char keypath[PATH_MAX], crtpath[PATH_MAX];
	unsigned char serial[16];
	EVP_PKEY *key = NULL;
	X509 *x = NULL;
	X509V3_CTX ctx;
	int saved, rc = -1;

	if (!dir || !*dir || !cn || !pki_cn_valid(cn)) {
		pki_set_err(err, errlen,
			    "CA name must be 1-%d printable characters",
			    PKI_CN_MAX);
		errno = EINVAL;
		goto out;
	}
	if (pki_check_days(days, err, errlen) < 0 ||
	    pki_paths(dir, "ca", keypath, crtpath, err, errlen) < 0 ||
	    pki_mkdir(dir, err, errlen) < 0 ||
	    pki_pair_new(keypath, crtpath, cn, days, serial, &key, &x, err,
			 errlen) < 0)
		goto out;
	if (!X509_set_issuer_name(x, X509_get_subject_name(x))) {
		pki_ossl_err(err, errlen, "cannot build certificate");
		goto out;
	}
	X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
	/* The subject key identifier first: the authority one copies it. */
	if (pki_add_ext(x, &ctx, NID_basic_constraints, "critical,CA:TRUE", err,
			errlen) < 0 ||
	    pki_add_ext(x, &ctx, NID_key_usage, "critical,keyCertSign,cRLSign",
			err, errlen) < 0 ||
	    pki_add_ext(x, &ctx, NID_subject_key_identifier, "hash", err,
			errlen) < 0 ||
	    pki_add_ext(x, &ctx, NID_authority_key_identifier, "keyid:always",
			err, errlen) < 0 ||
	    pki_sign(x, key, err, errlen) < 0)
		goto out;
	rc = pki_write_pair(keypath, crtpath, key, x, err, errlen);
out:
	saved = errno;
	X509_free(x);
	EVP_PKEY_free(key);
	errno = saved;
	return rc;
}

/* Load DIR/ca.key and DIR/ca.crt and check that they belong together. */
static int pki_load_ca(const char *dir, EVP_PKEY **key, X509 **crt, char *err,
		       size_t errlen)
{
	char path[PATH_MAX], what[PATH_MAX + 32];
	FILE *f;

	*key = NULL;
	*crt = NULL;
	if (pki_path(path, sizeof(path), dir, "ca", "crt", err, errlen) < 0)
		return -1;
	f = fopen(path, "re");
	if (!f) {
		pki_set_err(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	*crt = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	if (!*crt) {
		snprintf(what, sizeof(what), "%s: not a PEM certificate", path);
		pki_ossl_err(err, errlen, what);
		return -1;
	}
	if (pki_path(path, sizeof(path), dir, "ca", "key", err, errlen) < 0)
		goto fail;
	f = fopen(path, "re");
	if (!f) {
		pki_set_err(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	*key = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	if (!*key) {
		snprintf(what, sizeof(what), "%s: not a PEM private key", path);
		pki_ossl_err(err, errlen, what);
		goto fail;
	}
	if (X509_check_private_key(*crt, *key) != 1) {
		snprintf(what, sizeof(what), "%s does not match %s/ca.crt",
			 path, dir);
		pki_ossl_err(err, errlen, what);
		goto fail;
	}
	return 0;
fail:
	EVP_PKEY_free(*key);
	X509_free(*crt);
	*key = NULL;
	*crt = NULL;
	return -1;
}

int pki_issue(const char *dir, const char *name, enum pki_role role,
	      unsigned days, char *serial, size_t serial_len, char *err,
	      size_t errlen)
{
	char keypath[PATH_MAX], crtpath[PATH_MAX], san[2 * PKI_NAME_MAX + 16];
	unsigned char sn[16];
	EVP_PKEY *cakey = NULL, *key = NULL;
	X509 *ca = NULL, *x = NULL;
	X509V3_CTX ctx;
	int saved, rc = -1;

	if (!dir || !*dir || !name || !pki_name_valid(name)) {
		pki_set_err(err, errlen,
			    "invalid name: use 1-%d letters, digits, '.', "
			    "'-', '_' (not first: '.', '-'; not \"ca\")",
			    PKI_NAME_MAX);
		errno = EINVAL;
		goto out;
	}
	if (role != PKI_ROLE_NODE && role != PKI_ROLE_COORDINATOR) {
		pki_set_err(err, errlen, "unknown certificate role %d",
			    (int)role);
		errno = EINVAL;
		goto out;
	}
	if (serial && serial_len < PKI_SERIAL_LEN) {
		pki_set_err(err, errlen, "serial buffer too small");
		errno = EINVAL;
		goto out;
	}
	if (pki_check_days(days, err, errlen) < 0 ||
	    pki_paths(dir, name, keypath, crtpath, err, errlen) < 0 ||
	    pki_load_ca(dir, &cakey, &ca, err, errlen) < 0 ||
	    pki_pair_new(keypath, crtpath, name, days, sn, &key, &x, err,
			 errlen) < 0)
		goto out;
	if (!X509_set_issuer_name(x, X509_get_subject_name(ca)) ||
	    /* A leaf outliving its CA would only fail later, confusingly. */
	    (ASN1_TIME_compare(X509_get0_notAfter(x), X509_get0_notAfter(ca)) >
		     0 &&
	     !X509_set1_notAfter(x, X509_get0_notAfter(ca)))) {
		pki_ossl_err(err, errlen, "cannot build certificate");
		goto out;
	}
	if (pki_is_address(name))
		snprintf(san, sizeof(san), "DNS:%s,IP:%s", name, name);
	else
		snprintf(san, sizeof(san), "DNS:%s", name);
	X509V3_set_ctx(&ctx, ca, x, NULL, NULL, 0);
	if (pki_add_ext(x, &ctx, NID_basic_constraints, "critical,CA:FALSE",
			err, errlen) < 0 ||
	    pki_add_ext(x, &ctx, NID_key_usage, "critical,digitalSignature",
			err, errlen) < 0 ||
	    /* One role each: the coordinator's certificate cannot join as
	     * a node, nor a node's serve agents as their coordinator. */
	    pki_add_ext(x, &ctx, NID_ext_key_usage,
			role == PKI_ROLE_COORDINATOR ? "serverAuth"
						     : "clientAuth",
			err, errlen) < 0 ||
	    pki_add_ext(x, &ctx, NID_subject_alt_name, san, err, errlen) < 0 ||
	    pki_add_ext(x, &ctx, NID_subject_key_identifier, "hash", err,
			errlen) < 0 ||
	    pki_add_ext(x, &ctx, NID_authority_key_identifier, "keyid:always",
			err, errlen) < 0 ||
	    pki_sign(x, cakey, err, errlen) < 0)
		goto out;
	rc = pki_write_pair(keypath, crtpath, key, x, err, errlen);
	/* The top byte is 0x40-0x7f, so these 16 bytes are exactly the
	 * serial's magnitude, as tls_peer_serial() prints it. */
	if (rc == 0 && serial)
		for (size_t i = 0; i < sizeof(sn); i++)
			snprintf(serial + 2 * i, 3, "%02x", sn[i]);
out:
	saved = errno;
	X509_free(x);
	EVP_PKEY_free(key);
	X509_free(ca);
	EVP_PKEY_free(cakey);
	errno = saved;
	return rc;
}
