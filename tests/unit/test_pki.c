#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "log.h"
#include "pki.h"
#include "testutil.h"
#include "tls.h"

/* Each test gets a fresh temporary directory; the PKI lives in DIR/pki,
 * which pki_init has to create. */
struct fixture {
	char top[64];
	char dir[96];
	char err[512];
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	snprintf(fx->top, sizeof(fx->top), "/tmp/test_pki.XXXXXX");
	if (!mkdtemp(fx->top)) {
		free(fx);
		return -1;
	}
	snprintf(fx->dir, sizeof(fx->dir), "%s/pki", fx->top);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	testutil_rm_tree(fx->top);
	free(fx);
	return 0;
}

static const char *path_of(struct fixture *fx, const char *file)
{
	static char buf[4][PATH_MAX];
	static int next;
	char *p = buf[next++ % 4];

	snprintf(p, PATH_MAX, "%s/%s", fx->dir, file);
	return p;
}

/* A certificate (key 0) or a private key (key 1) from a PEM file. */
static void *load_pem(const char *path, int key)
{
	FILE *f = fopen(path, "r");
	void *x;

	assert_non_null(f);
	if (key)
		x = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	else
		x = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	assert_non_null(x);
	return x;
}

static X509 *load_cert(const char *path)
{
	return load_pem(path, 0);
}

static EVP_PKEY *load_key(const char *path)
{
	return load_pem(path, 1);
}

static unsigned file_mode(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_mode & 07777;
}

/* Entries in dir, so that no stray temporary file goes unnoticed. */
static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void init_ok(struct fixture *fx)
{
	int rc = pki_init(fx->dir, "ringd test CA", 30, fx->err,
			  sizeof(fx->err));

	if (rc)
		print_error("pki_init: %s\n", fx->err);
	assert_int_equal(rc, 0);
}

static void issue_role(struct fixture *fx, const char *name, enum pki_role role,
		       unsigned days, char *serial)
{
	int rc = pki_issue(fx->dir, name, role, days, serial,
			   serial ? PKI_SERIAL_LEN : 0, fx->err,
			   sizeof(fx->err));

	if (rc)
		print_error("pki_issue %s: %s\n", name, fx->err);
	assert_int_equal(rc, 0);
}

/* A node's certificate, the common case. */
static void issue_ok(struct fixture *fx, const char *name, unsigned days)
{
	issue_role(fx, name, PKI_ROLE_NODE, days, NULL);
}

/* pki_issue without a serial or a role to say, as most tests want. */
static int issue(const char *dir, const char *name, unsigned days, char *err,
		 size_t errlen)
{
	return pki_issue(dir, name, PKI_ROLE_NODE, days, NULL, 0, err, errlen);
}

/* X509_verify_cert of leaf against ca alone, for a TLS purpose. */
static int verify_chain(X509 *ca, X509 *leaf, int purpose)
{
	X509_STORE *store = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	int ok;

	assert_non_null(store);
	assert_non_null(ctx);
	assert_int_equal(X509_STORE_add_cert(store, ca), 1);
	assert_int_equal(X509_STORE_CTX_init(ctx, store, leaf, NULL), 1);
	assert_int_equal(X509_STORE_CTX_set_purpose(ctx, purpose), 1);
	ok = X509_verify_cert(ctx);
	if (ok != 1)
		print_message("verify: %s\n",
			      X509_verify_cert_error_string(
				      X509_STORE_CTX_get_error(ctx)));
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(store);
	ERR_clear_error();
	return ok;
}

static void test_init_issue_verify(void **state)
{
	struct fixture *fx = *state;
	const ASN1_OCTET_STRING *ca_ski, *leaf_aki;
	X509 *ca, *leaf;
	EVP_PKEY *key;
	BIGNUM *serial;
	char group[32];

	init_ok(fx);
	issue_ok(fx, "node1", 10);

	assert_int_equal(file_mode(fx->dir), 0700);
	assert_int_equal(file_mode(path_of(fx, "ca.key")), 0600);
	assert_int_equal(file_mode(path_of(fx, "ca.crt")), 0644);
	assert_int_equal(file_mode(path_of(fx, "node1.key")), 0600);
	assert_int_equal(file_mode(path_of(fx, "node1.crt")), 0644);
	assert_int_equal(count_entries(fx->dir), 4);

	ca = load_cert(path_of(fx, "ca.crt"));
	leaf = load_cert(path_of(fx, "node1.crt"));
	key = load_key(path_of(fx, "node1.key"));

	/* A node's certificate is for client use only. */
	assert_int_equal(verify_chain(ca, leaf, X509_PURPOSE_SSL_CLIENT), 1);
	assert_int_not_equal(verify_chain(ca, leaf, X509_PURPOSE_SSL_SERVER),
			     1);
	assert_int_equal(X509_check_host(leaf, "node1", 0, 0, NULL), 1);
	assert_int_not_equal(X509_check_host(leaf, "node2", 0, 0, NULL), 1);
	assert_int_not_equal(X509_check_host(leaf, "node", 0, 0, NULL), 1);
	assert_int_equal(X509_check_private_key(leaf, key), 1);

	/* P-256 ECDSA with SHA-256, v3, 127-bit positive serial. */
	assert_true(EVP_PKEY_is_a(key, "EC"));
	assert_int_equal(
		EVP_PKEY_get_group_name(key, group, sizeof(group), NULL), 1);
	assert_string_equal(group, "prime256v1");
	assert_int_equal(X509_get_signature_nid(leaf), NID_ecdsa_with_SHA256);
	assert_int_equal(X509_get_signature_nid(ca), NID_ecdsa_with_SHA256);
	assert_int_equal(X509_get_version(leaf), X509_VERSION_3);
	serial = ASN1_INTEGER_to_BN(X509_get0_serialNumber(leaf), NULL);
	assert_non_null(serial);
	assert_int_equal(BN_num_bits(serial), 127);
	assert_false(BN_is_negative(serial));
	BN_free(serial);

	/* CA: a CA that signs certificates only; leaf: a TLS end entity. */
	assert_int_equal(X509_check_ca(ca), 1);
	assert_int_equal(X509_check_ca(leaf), 0);
	assert_int_equal(X509_get_key_usage(ca),
			 KU_KEY_CERT_SIGN | KU_CRL_SIGN);
	assert_int_equal(X509_get_key_usage(leaf), KU_DIGITAL_SIGNATURE);
	assert_int_equal(X509_get_extended_key_usage(leaf), XKU_SSL_CLIENT);
	assert_int_equal(X509_check_issued(ca, leaf), X509_V_OK);
	ca_ski = X509_get0_subject_key_id(ca);
	leaf_aki = X509_get0_authority_key_id(leaf);
	assert_non_null(ca_ski);
	assert_non_null(leaf_aki);
	assert_non_null(X509_get0_subject_key_id(leaf));
	assert_int_equal(ASN1_OCTET_STRING_cmp(ca_ski, leaf_aki), 0);
	assert_int_equal(
		ASN1_OCTET_STRING_cmp(X509_get0_authority_key_id(ca), ca_ski),
		0);
	/* The CA's own certificate carries no address. */
	assert_int_not_equal(X509_check_host(ca, "node1", 0, 0, NULL), 1);

	EVP_PKEY_free(key);
	X509_free(leaf);
	X509_free(ca);
}

/* Missing parents are created like mkdir -p; only DIR itself is private,
 * however it is spelled. */
static void test_nested_dir(void **state)
{
	struct fixture *fx = *state;
	char dir[160], path[200];

	snprintf(dir, sizeof(dir), "%s/a/b/pki/", fx->top);
	assert_int_equal(
		pki_init(dir, "nested CA", 30, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(issue(dir, "node1", 10, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(file_mode(dir), 0700);
	snprintf(path, sizeof(path), "%s/a/b", fx->top);
	assert_int_equal(file_mode(path) & 0700, 0700);
	snprintf(path, sizeof(path), "%s/a/b/pki/node1.key", fx->top);
	assert_int_equal(file_mode(path), 0600);
}

/* A CA from another directory must not vouch for our leaf. */
static void test_foreign_ca_rejected(void **state)
{
	struct fixture *fx = *state;
	char other[128], err[256];
	X509 *ca2, *leaf;

	init_ok(fx);
	issue_ok(fx, "node1", 10);
	snprintf(other, sizeof(other), "%s/other", fx->top);
	assert_int_equal(pki_init(other, "other CA", 30, err, sizeof(err)), 0);
	snprintf(other, sizeof(other), "%s/other/ca.crt", fx->top);
	ca2 = load_cert(other);
	leaf = load_cert(path_of(fx, "node1.crt"));
	assert_int_not_equal(verify_chain(ca2, leaf, X509_PURPOSE_SSL_CLIENT),
			     1);
	X509_free(leaf);
	X509_free(ca2);
}

static void test_address_names(void **state)
{
	struct fixture *fx = *state;
	X509 *x;

	init_ok(fx);
	issue_ok(fx, "10.0.0.7", 10);
	issue_ok(fx, "fd00::7", 10);

	x = load_cert(path_of(fx, "10.0.0.7.crt"));
	assert_int_equal(X509_check_ip_asc(x, "10.0.0.7", 0), 1);
	assert_int_not_equal(X509_check_ip_asc(x, "10.0.0.8", 0), 1);
	assert_int_equal(X509_check_host(x, "10.0.0.7", 0, 0, NULL), 1);
	X509_free(x);

	x = load_cert(path_of(fx, "fd00::7.crt"));
	assert_int_equal(X509_check_ip_asc(x, "fd00::7", 0), 1);
	assert_int_equal(X509_check_ip_asc(x, "fd00:0:0::7", 0), 1);
	assert_int_not_equal(X509_check_ip_asc(x, "fd00::8", 0), 1);
	X509_free(x);

	/* A plain name gets no iPAddress entry. */
	issue_ok(fx, "node-1_a.example", 10);
	x = load_cert(path_of(fx, "node-1_a.example.crt"));
	assert_int_equal(X509_check_host(x, "node-1_a.example", 0, 0, NULL), 1);
	assert_int_not_equal(X509_check_ip_asc(x, "10.0.0.7", 0), 1);
	X509_free(x);
}

/* A leaf never outlives the CA that signed it. */
static void test_leaf_validity(void **state)
{
	struct fixture *fx = *state;
	X509 *ca, *longer, *shorter;

	init_ok(fx);
	issue_ok(fx, "long", 3650);
	issue_ok(fx, "short", 5);
	ca = load_cert(path_of(fx, "ca.crt"));
	longer = load_cert(path_of(fx, "long.crt"));
	shorter = load_cert(path_of(fx, "short.crt"));
	assert_int_equal(ASN1_TIME_compare(X509_get0_notAfter(longer),
					   X509_get0_notAfter(ca)),
			 0);
	assert_int_equal(ASN1_TIME_compare(X509_get0_notAfter(shorter),
					   X509_get0_notAfter(ca)),
			 -1);
	/* Usable now, despite clocks a little apart. */
	assert_true(X509_cmp_current_time(X509_get0_notBefore(shorter)) < 0);
	assert_true(X509_cmp_current_time(X509_get0_notAfter(shorter)) > 0);
	X509_free(shorter);
	X509_free(longer);
	X509_free(ca);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 8192);

	assert_non_null(f);
	assert_non_null(buf);
	assert_true(fread(buf, 1, 8191, f) > 0);
	fclose(f);
	return buf;
}

/* The whole of a small text file, which may be empty. */
static char *slurp_any(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 65536);

	assert_non_null(f);
	assert_non_null(buf);
	if (fread(buf, 1, 65535, f) == 0)
		buf[0] = '\0';
	fclose(f);
	return buf;
}

static void test_refuse_overwrite(void **state)
{
	struct fixture *fx = *state;
	char *ca_before, *leaf_before, *p;

	init_ok(fx);
	issue_ok(fx, "node1", 10);
	ca_before = slurp(path_of(fx, "ca.crt"));
	leaf_before = slurp(path_of(fx, "node1.crt"));

	errno = 0;
	assert_int_equal(
		pki_init(fx->dir, "again", 30, fx->err, sizeof(fx->err)), -1);
	assert_int_equal(errno, EEXIST);
	assert_non_null(strstr(fx->err, path_of(fx, "ca.key")));
	assert_non_null(strstr(fx->err, "refusing to overwrite"));
	assert_null(strchr(fx->err, '\n'));

	errno = 0;
	assert_int_equal(issue(fx->dir, "node1", 10, fx->err, sizeof(fx->err)),
			 -1);
	assert_int_equal(errno, EEXIST);
	assert_non_null(strstr(fx->err, path_of(fx, "node1.key")));

	/* Half a pair is still a pair: no new key beside an old cert. */
	assert_int_equal(unlink(path_of(fx, "node1.key")), 0);
	assert_int_equal(issue(fx->dir, "node1", 10, fx->err, sizeof(fx->err)),
			 -1);
	assert_non_null(strstr(fx->err, path_of(fx, "node1.crt")));
	assert_int_equal(access(path_of(fx, "node1.key"), F_OK), -1);
	assert_int_equal(unlink(path_of(fx, "ca.key")), 0);
	assert_int_equal(
		pki_init(fx->dir, "again", 30, fx->err, sizeof(fx->err)), -1);
	assert_non_null(strstr(fx->err, path_of(fx, "ca.crt")));
	assert_int_equal(access(path_of(fx, "ca.key"), F_OK), -1);

	/* Nothing changed, nothing left behind. */
	p = slurp(path_of(fx, "ca.crt"));
	assert_string_equal(p, ca_before);
	free(p);
	p = slurp(path_of(fx, "node1.crt"));
	assert_string_equal(p, leaf_before);
	free(p);
	assert_int_equal(count_entries(fx->dir), 2);
	free(ca_before);
	free(leaf_before);
}

static void test_bad_names(void **state)
{
	static const char *const bad[] = {
		"",
		"a/b",
		"../x",
		"..",
		".hidden",
		"-x",
		"ca",
		"a b",
		"x\n",
		"n\xc3\xbc",
		"a*",
		"fd00::7/64",
		"fe80::1%eth0",
		"::g",
		"a:b",
		"0123456789012345678901234567890123456789012345678901234567890123",
	};
	struct fixture *fx = *state;
	size_t i;

	init_ok(fx);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fx->err[0] = '\0';
		errno = 0;
		if (issue(fx->dir, bad[i], 10, fx->err, sizeof(fx->err)) != -1)
			fail_msg("name %zu accepted", i);
		assert_int_equal(errno, EINVAL);
		assert_non_null(strstr(fx->err, "invalid name"));
	}
	assert_int_equal(count_entries(fx->dir), 2);
	/* 63 characters is the longest allowed. */
	issue_ok(
		fx,
		"012345678901234567890123456789012345678901234567890123456789012",
		10);

	assert_int_equal(issue(fx->dir, "node1", 0, fx->err, sizeof(fx->err)),
			 -1);
	assert_non_null(strstr(fx->err, "days"));
	assert_int_equal(pki_init(fx->top, "", 30, fx->err, sizeof(fx->err)),
			 -1);
	assert_int_equal(
		pki_init(fx->top, "bad\nCN", 30, fx->err, sizeof(fx->err)), -1);
}

static void test_missing_ca(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(issue(fx->dir, "node1", 10, fx->err, sizeof(fx->err)),
			 -1);
	assert_non_null(strstr(fx->err, path_of(fx, "ca.crt")));
	assert_int_equal(access(fx->dir, F_OK), -1);

	/* A CA key that does not belong to the certificate is refused. */
	init_ok(fx);
	assert_int_equal(rename(path_of(fx, "ca.key"), path_of(fx, "old.key")),
			 0);
	assert_int_equal(rename(path_of(fx, "ca.crt"), path_of(fx, "old.crt")),
			 0);
	init_ok(fx);
	assert_int_equal(unlink(path_of(fx, "ca.key")), 0);
	assert_int_equal(rename(path_of(fx, "old.key"), path_of(fx, "ca.key")),
			 0);
	assert_int_equal(issue(fx->dir, "node1", 10, fx->err, sizeof(fx->err)),
			 -1);
	assert_non_null(strstr(fx->err, "does not match"));
	assert_int_equal(access(path_of(fx, "node1.key"), F_OK), -1);

	/* The directory must be a directory. */
	assert_int_equal(pki_init(path_of(fx, "ca.crt"), "x", 30, fx->err,
				  sizeof(fx->err)),
			 -1);
	assert_non_null(strstr(fx->err, "not a directory"));
}

/* Drive both ends of a TLS handshake over a non-blocking socketpair.
 * 1 when both completed, 0 when one side failed. */
static int handshake(SSL *client, SSL *server)
{
	int cdone = 0, sdone = 0, i, rc, e;

	for (i = 0; i < 1000 && !(cdone && sdone); i++) {
		if (!cdone) {
			rc = SSL_connect(client);
			if (rc == 1) {
				cdone = 1;
			} else {
				e = SSL_get_error(client, rc);
				if (e != SSL_ERROR_WANT_READ &&
				    e != SSL_ERROR_WANT_WRITE)
					return 0;
			}
		}
		if (!sdone) {
			rc = SSL_accept(server);
			if (rc == 1) {
				sdone = 1;
			} else {
				e = SSL_get_error(server, rc);
				if (e != SSL_ERROR_WANT_READ &&
				    e != SSL_ERROR_WANT_WRITE)
					return 0;
			}
		}
	}
	return cdone && sdone;
}

struct tls_pair {
	SSL_CTX *cctx, *sctx;
	SSL *c, *s;
	int fds[2];
};

/* Server presenting fx's server.*; the client presents cdir/client.* and
 * trusts fx's CA, expecting the server to be called expect. */
static void tls_pair_open_as(struct tls_pair *p, struct fixture *fx,
			     const char *cdir, const char *client,
			     const char *server, const char *expect)
{
	char crt[PATH_MAX], key[PATH_MAX], scrt[PATH_MAX], skey[PATH_MAX];

	memset(p, 0, sizeof(*p));
	snprintf(crt, sizeof(crt), "%s/%s.crt", cdir, client);
	snprintf(key, sizeof(key), "%s/%s.key", cdir, client);
	snprintf(scrt, sizeof(scrt), "%s/%s.crt", fx->dir, server);
	snprintf(skey, sizeof(skey), "%s/%s.key", fx->dir, server);
	p->cctx = tls_ctx_new(0, path_of(fx, "ca.crt"), crt, key);
	assert_non_null(p->cctx);
	p->sctx = tls_ctx_new(1, path_of(fx, "ca.crt"), scrt, skey);
	assert_non_null(p->sctx);
	assert_int_equal(
		socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, p->fds), 0);
	p->c = SSL_new(p->cctx);
	p->s = SSL_new(p->sctx);
	assert_non_null(p->c);
	assert_non_null(p->s);
	assert_int_equal(SSL_set_fd(p->c, p->fds[0]), 1);
	assert_int_equal(SSL_set_fd(p->s, p->fds[1]), 1);
	assert_int_equal(tls_client_expect_name(p->c, expect), 0);
}

/* The usual server: "coord", issued with the coordinator's role. */
static void tls_pair_open(struct tls_pair *p, struct fixture *fx,
			  const char *cdir, const char *client,
			  const char *expect)
{
	tls_pair_open_as(p, fx, cdir, client, "coord", expect);
}

static void tls_pair_close(struct tls_pair *p)
{
	SSL_free(p->c);
	SSL_free(p->s);
	SSL_CTX_free(p->cctx);
	SSL_CTX_free(p->sctx);
	close(p->fds[0]);
	close(p->fds[1]);
	ERR_clear_error();
}

/* A CA with a coordinator "coord" and a node "node1", for handshakes. */
static void init_coord_node1(struct fixture *fx)
{
	init_ok(fx);
	issue_role(fx, "coord", PKI_ROLE_COORDINATOR, 10, NULL);
	issue_ok(fx, "node1", 10);
}

static void test_tls_handshake(void **state)
{
	struct fixture *fx = *state;
	struct tls_pair p;
	char buf[16] = "";
	int n = -1, i;

	init_coord_node1(fx);
	tls_pair_open(&p, fx, fx->dir, "node1", "coord");
	assert_int_equal(handshake(p.c, p.s), 1);
	assert_int_equal(SSL_version(p.c), TLS1_3_VERSION);
	assert_int_equal(SSL_get_verify_result(p.c), X509_V_OK);
	assert_int_equal(SSL_get_verify_result(p.s), X509_V_OK);
	assert_int_equal(tls_peer_has_name(p.s, "node1"), 1);
	assert_int_equal(tls_peer_has_name(p.s, "node2"), 0);
	assert_int_equal(tls_peer_has_name(p.c, "coord"), 1);
	tls_peer_cn(p.s, buf, sizeof(buf));
	assert_string_equal(buf, "node1");

	/* Application data flows both ways. */
	assert_int_equal(SSL_write(p.c, "ping", 4), 4);
	for (i = 0; i < 100 && n <= 0; i++)
		n = SSL_read(p.s, buf, sizeof(buf));
	assert_int_equal(n, 4);
	assert_memory_equal(buf, "ping", 4);
	assert_int_equal(SSL_write(p.s, "pong", 4), 4);
	n = -1;
	for (i = 0; i < 100 && n <= 0; i++)
		n = SSL_read(p.c, buf, sizeof(buf));
	assert_int_equal(n, 4);
	assert_memory_equal(buf, "pong", 4);
	tls_pair_close(&p);
}

/* The handshake must be able to fail: the wrong server name, and a client
 * certificate from another CA. */
static void test_tls_rejects(void **state)
{
	struct fixture *fx = *state;
	char other[128], err[256];
	struct tls_pair p;

	init_coord_node1(fx);

	tls_pair_open(&p, fx, fx->dir, "node1", "coord2");
	assert_int_equal(handshake(p.c, p.s), 0);
	assert_int_not_equal(SSL_get_verify_result(p.c), X509_V_OK);
	tls_pair_close(&p);

	snprintf(other, sizeof(other), "%s/other", fx->top);
	assert_int_equal(pki_init(other, "other CA", 30, err, sizeof(err)), 0);
	assert_int_equal(issue(other, "node1", 10, err, sizeof(err)), 0);
	tls_pair_open(&p, fx, other, "node1", "coord");
	assert_int_equal(handshake(p.c, p.s), 0);
	assert_int_not_equal(SSL_get_verify_result(p.s), X509_V_OK);
	tls_pair_close(&p);
}

/* The coordinator's certificate is for server use only, and the serial
 * pki_issue reports is the certificate's. */
static void test_coordinator_role(void **state)
{
	struct fixture *fx = *state;
	char serial[PKI_SERIAL_LEN], *hex;
	BIGNUM *bn;
	X509 *ca, *leaf;

	init_ok(fx);
	memset(serial, 'x', sizeof(serial));
	issue_role(fx, "coordinator", PKI_ROLE_COORDINATOR, 10, serial);
	ca = load_cert(path_of(fx, "ca.crt"));
	leaf = load_cert(path_of(fx, "coordinator.crt"));
	assert_int_equal(X509_get_extended_key_usage(leaf), XKU_SSL_SERVER);
	assert_int_equal(verify_chain(ca, leaf, X509_PURPOSE_SSL_SERVER), 1);
	assert_int_not_equal(verify_chain(ca, leaf, X509_PURPOSE_SSL_CLIENT),
			     1);
	assert_int_equal(X509_check_host(leaf, "coordinator", 0, 0, NULL), 1);

	bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(leaf), NULL);
	assert_non_null(bn);
	hex = BN_bn2hex(bn);
	assert_non_null(hex);
	for (char *q = hex; *q; q++)
		*q = (char)(*q >= 'A' && *q <= 'F' ? *q - 'A' + 'a' : *q);
	assert_int_equal(strlen(serial), 32);
	assert_string_equal(serial, hex);
	OPENSSL_free(hex);
	BN_free(bn);

	/* A role that does not exist, and a serial buffer too small, are
	 * refused before anything is written. */
	assert_int_equal(pki_issue(fx->dir, "n9", (enum pki_role)7, 10, NULL, 0,
				   fx->err, sizeof(fx->err)),
			 -1);
	assert_non_null(strstr(fx->err, "role"));
	assert_int_equal(pki_issue(fx->dir, "n9", PKI_ROLE_NODE, 10, serial, 8,
				   fx->err, sizeof(fx->err)),
			 -1);
	assert_int_equal(access(path_of(fx, "n9.key"), F_OK), -1);
	X509_free(leaf);
	X509_free(ca);
}

/* A certificate signed by fx's CA the way ringctl signed them before
 * roles: eku is the extendedKeyUsage value, or NULL for none at all. */
static void issue_legacy(struct fixture *fx, const char *name, const char *eku)
{
	EVP_PKEY *cakey = load_key(path_of(fx, "ca.key")), *key;
	X509 *ca = load_cert(path_of(fx, "ca.crt")), *x = X509_new();
	X509_EXTENSION *ext;
	char san[96], path[PATH_MAX];
	X509V3_CTX v3;
	FILE *f;

	key = EVP_EC_gen("P-256");
	assert_non_null(key);
	assert_non_null(x);
	assert_int_equal(X509_set_version(x, X509_VERSION_3), 1);
	assert_int_equal(ASN1_INTEGER_set(X509_get_serialNumber(x), 4242), 1);
	assert_non_null(X509_gmtime_adj(X509_getm_notBefore(x), -3600));
	assert_non_null(X509_gmtime_adj(X509_getm_notAfter(x), 86400));
	assert_int_equal(X509_set_pubkey(x, key), 1);
	assert_int_equal(X509_NAME_add_entry_by_NID(
				 X509_get_subject_name(x), NID_commonName,
				 MBSTRING_UTF8, (const unsigned char *)name, -1,
				 -1, 0),
			 1);
	assert_int_equal(X509_set_issuer_name(x, X509_get_subject_name(ca)), 1);
	X509V3_set_ctx(&v3, ca, x, NULL, NULL, 0);
	snprintf(san, sizeof(san), "DNS:%s", name);
	ext = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_alt_name, san);
	assert_non_null(ext);
	assert_int_equal(X509_add_ext(x, ext, -1), 1);
	X509_EXTENSION_free(ext);
	if (eku) {
		ext = X509V3_EXT_conf_nid(NULL, &v3, NID_ext_key_usage, eku);
		assert_non_null(ext);
		assert_int_equal(X509_add_ext(x, ext, -1), 1);
		X509_EXTENSION_free(ext);
	}
	assert_true(X509_sign(x, cakey, EVP_sha256()) > 0);
	snprintf(path, sizeof(path), "%s/%s.crt", fx->dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(PEM_write_X509(f, x), 1);
	fclose(f);
	snprintf(path, sizeof(path), "%s/%s.key", fx->dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(
		PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL), 1);
	fclose(f);
	X509_free(x);
	X509_free(ca);
	EVP_PKEY_free(key);
	EVP_PKEY_free(cakey);
}

/* What tls_check_files() reported, in order. */
struct check_log {
	unsigned n;
	enum tls_file file[8];
	int fatal[8];
	char msg[8][1024];
};

static void check_cb(enum tls_file file, int fatal, const char *msg, void *arg)
{
	struct check_log *l = arg;

	if (l->n < 8) {
		l->file[l->n] = file;
		l->fatal[l->n] = fatal;
		snprintf(l->msg[l->n], sizeof(l->msg[0]), "%s", msg);
	}
	l->n++;
}

/* tls_check_files(server, DIR/ca, DIR/crt, DIR/key) into l; its result. */
static int check_files(struct fixture *fx, int server, const char *ca,
		       const char *crt, const char *key, struct check_log *l)
{
	char a[PATH_MAX], c[PATH_MAX], k[PATH_MAX];

	memset(l, 0, sizeof(*l));
	snprintf(a, sizeof(a), "%s", ca[0] == '/' ? ca : path_of(fx, ca));
	snprintf(c, sizeof(c), "%s", crt[0] == '/' ? crt : path_of(fx, crt));
	snprintf(k, sizeof(k), "%s", key[0] == '/' ? key : path_of(fx, key));
	return tls_check_files(server, a, c, k, check_cb, l);
}

static void assert_report(const struct check_log *l, unsigned i,
			  enum tls_file file, int fatal, const char *part)
{
	assert_true(i < l->n);
	if (!strstr(l->msg[i], part))
		print_error("report %u: '%s' lacks '%s'\n", i, l->msg[i], part);
	assert_non_null(strstr(l->msg[i], part));
	assert_int_equal(l->file[i], file);
	assert_int_equal(l->fatal[i], fatal);
}

/* What the daemons' -n checks in their CA, certificate and key, on real
 * files from the pki module: each mistake is named, with the file it is
 * in; all fatal: a peer with the same ca would refuse the daemon. */
static void test_check_files(void **state)
{
	struct fixture *fx = *state;
	char other[128], path[PATH_MAX], err[256];
	struct check_log l;

	init_ok(fx);
	issue_role(fx, "coordinator", PKI_ROLE_COORDINATOR, 10, NULL);
	issue_ok(fx, "n1", 10);
	issue_ok(fx, "n2", 10);

	/* The right files for each side: nothing to say. */
	assert_int_equal(check_files(fx, 0, "ca.crt", "n1.crt", "n1.key", &l),
			 0);
	assert_int_equal(l.n, 0);
	assert_int_equal(check_files(fx, 1, "ca.crt", "coordinator.crt",
				     "coordinator.key", &l),
			 0);
	assert_int_equal(l.n, 0);

	/* Each side with the other's certificate: the role is wrong. */
	assert_int_equal(check_files(fx, 1, "ca.crt", "n1.crt", "n1.key", &l),
			 -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(l.n, 1);
	assert_report(&l, 0, TLS_FILE_CERT, 1, "is not for server use");
	assert_non_null(strstr(l.msg[0], path_of(fx, "n1.crt")));
	assert_int_equal(check_files(fx, 0, "ca.crt", "coordinator.crt",
				     "coordinator.key", &l),
			 -1);
	assert_int_equal(l.n, 1);
	assert_report(&l, 0, TLS_FILE_CERT, 1, "is not for client use");

	/* Another node's key. */
	assert_int_equal(check_files(fx, 0, "ca.crt", "n1.crt", "n2.key", &l),
			 -1);
	assert_int_equal(l.n, 1);
	assert_report(&l, 0, TLS_FILE_KEY, 1, "does not match cert");

	/* Nothing there: all three said, in one call. */
	assert_int_equal(
		check_files(fx, 0, "no-ca.crt", "no.crt", "no.key", &l), -1);
	assert_int_equal(l.n, 3);
	assert_report(&l, 0, TLS_FILE_CA, 1, "No such file or directory");
	assert_report(&l, 1, TLS_FILE_CERT, 1, "No such file or directory");
	assert_report(&l, 2, TLS_FILE_KEY, 1, "No such file or directory");
	assert_non_null(strstr(l.msg[0], path_of(fx, "no-ca.crt")));

	/* Files swapped: a key where a certificate belongs and back. */
	assert_int_equal(check_files(fx, 0, "n1.key", "n1.crt", "n1.crt", &l),
			 -1);
	assert_int_equal(l.n, 2);
	assert_report(&l, 0, TLS_FILE_CA, 1, "no certificate in it");
	assert_report(&l, 1, TLS_FILE_KEY, 1, "no private key in it");

	/* Signed by another CA: fatal (a coordinator with the same ca
	 * refuses it), said with OpenSSL's reason, subject and issuer. */
	snprintf(other, sizeof(other), "%s/other", fx->top);
	assert_int_equal(pki_init(other, "other CA", 30, err, sizeof(err)), 0);
	assert_int_equal(issue(other, "n1", 10, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/n1.crt", other);
	memcpy(err, path, strlen(path) + 1);
	snprintf(path, sizeof(path), "%s/n1.key", other);
	assert_int_equal(check_files(fx, 0, "ca.crt", err, path, &l), -1);
	assert_int_equal(l.n, 1);
	assert_report(&l, 0, TLS_FILE_CERT, 1, "does not verify against ca");
	assert_report(&l, 0, TLS_FILE_CERT, 1, "local issuer");
	assert_report(&l, 0, TLS_FILE_CERT, 1, "(CN=n1, issued by CN=other CA");
	assert_report(&l, 0, TLS_FILE_CERT, 1, "issued by another CA");

	/* A node's certificate as the CA: not a CA, fatal, said once. */
	assert_int_equal(check_files(fx, 0, "n2.crt", "n1.crt", "n1.key", &l),
			 -1);
	assert_int_equal(l.n, 1);
	assert_report(&l, 0, TLS_FILE_CA, 1, "is not a CA certificate");
	assert_report(&l, 0, TLS_FILE_CA, 1, "(CN=n2, issued by CN=");
	assert_report(&l, 0, TLS_FILE_CA, 1, "basicConstraints CA:TRUE");

	/* Certificates from before roles: refused by every peer, so fatal. */
	issue_legacy(fx, "old", NULL);
	assert_int_equal(check_files(fx, 0, "ca.crt", "old.crt", "old.key", &l),
			 -1);
	assert_int_equal(l.n, 1);
	assert_report(&l, 0, TLS_FILE_CERT, 1, "has no role");
	issue_legacy(fx, "both", "serverAuth,clientAuth");
	assert_int_equal(
		check_files(fx, 1, "ca.crt", "both.crt", "both.key", &l), -1);
	assert_report(&l, 0, TLS_FILE_CERT, 1, "both server and client");
	/* Nothing left on OpenSSL's error queue for the next caller. */
	assert_int_equal(ERR_peek_error(), 0);
}

/* stderr (where the log goes in tests) into a file while a handshake
 * runs, so that the reason for a refusal can be checked. */
struct capture {
	int saved;
	char path[64];
};

static void capture_begin(struct capture *c)
{
	int fd;

	snprintf(c->path, sizeof(c->path), "/tmp/test_pki_log.XXXXXX");
	fd = mkstemp(c->path);
	assert_true(fd >= 0);
	fflush(stderr);
	c->saved = dup(2);
	assert_true(c->saved >= 0);
	assert_int_equal(dup2(fd, 2), 2);
	close(fd);
}

static char *capture_end(struct capture *c)
{
	char *text;

	fflush(stderr);
	assert_int_equal(dup2(c->saved, 2), 2);
	close(c->saved);
	text = slurp_any(c->path);
	unlink(c->path);
	return text;
}

/* One handshake between a client presenting client and a server
 * presenting server: 1 if it completed; the log of it in *log. */
static int role_handshake(struct fixture *fx, const char *client,
			  const char *server, const char *expect, long *cres,
			  long *sres, char **log)
{
	struct capture cap;
	struct tls_pair p;
	int ok;

	tls_pair_open_as(&p, fx, fx->dir, client, server, expect);
	capture_begin(&cap);
	ok = handshake(p.c, p.s);
	*log = capture_end(&cap);
	*cres = SSL_get_verify_result(p.c);
	*sres = SSL_get_verify_result(p.s);
	tls_pair_close(&p);
	return ok;
}

/* Each side checks the other's role: the coordinator's certificate cannot
 * join as a node, a node's cannot serve as the coordinator, and the
 * certificates of no role or of both (as issued before roles) are
 * refused either way, each with its reason in the log. */
static void test_tls_roles(void **state)
{
	static const struct {
		const char *client, *server, *expect, *log;
		int client_refuses; /* else the server refuses */
	} cases[] = {
		{"coord", "coord", "coord",
		 "certificate of 'coord' is not for client use", 0},
		{"node1", "node2", "node2",
		 "certificate of 'node2' is not for server use", 1},
		{"both", "coord", "coord",
		 "certificate of 'both' is for both server and client use", 0},
		{"none", "coord", "coord", "certificate of 'none' has no role",
		 0},
		{"node1", "both", "both",
		 "certificate of 'both' is for both server and client use", 1},
		{"node1", "none", "none", "certificate of 'none' has no role",
		 1},
	};
	struct fixture *fx = *state;
	long cres, sres;
	char *log;
	size_t i;

	init_coord_node1(fx);
	issue_ok(fx, "node2", 10);
	issue_legacy(fx, "both", "serverAuth,clientAuth");
	issue_legacy(fx, "none", NULL);

	/* The right roles pass. */
	assert_int_equal(role_handshake(fx, "node1", "coord", "coord", &cres,
					&sres, &log),
			 1);
	assert_null(strstr(log, "refused"));
	free(log);

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ok = role_handshake(fx, cases[i].client, cases[i].server,
					cases[i].expect, &cres, &sres, &log);

		if (ok || !strstr(log, cases[i].log))
			fail_msg("case %zu: handshake %d, log: %s", i, ok, log);
		assert_int_equal(cases[i].client_refuses ? cres : sres,
				 X509_V_ERR_INVALID_PURPOSE);
		free(log);
	}
}

/* The serial each side reads from the other is the one pki_issue
 * reported, in the same form. */
static void test_tls_peer_serial(void **state)
{
	struct fixture *fx = *state;
	char cs[PKI_SERIAL_LEN], ns[PKI_SERIAL_LEN], got[TLS_SERIAL_LEN];
	struct tls_pair p;

	init_ok(fx);
	issue_role(fx, "coord", PKI_ROLE_COORDINATOR, 10, cs);
	issue_role(fx, "node1", PKI_ROLE_NODE, 10, ns);
	assert_string_not_equal(cs, ns);
	tls_pair_open(&p, fx, fx->dir, "node1", "coord");
	errno = 0;
	assert_int_equal(tls_peer_serial(p.s, got, sizeof(got)), -1);
	assert_int_equal(errno, ENOENT); /* no handshake yet */
	assert_int_equal(handshake(p.c, p.s), 1);
	assert_int_equal(tls_peer_serial(p.s, got, sizeof(got)), 0);
	assert_string_equal(got, ns);
	assert_int_equal(tls_peer_serial(p.c, got, sizeof(got)), 0);
	assert_string_equal(got, cs);
	errno = 0;
	assert_int_equal(tls_peer_serial(p.s, got, 32), -1);
	assert_int_equal(errno, ENOSPC);
	tls_pair_close(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_init_issue_verify, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_nested_dir, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_foreign_ca_rejected, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_address_names, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_leaf_validity, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_refuse_overwrite, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_names, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_missing_ca, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_tls_handshake, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_tls_rejects, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_coordinator_role, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_tls_roles, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_tls_peer_serial, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_check_files, setup,
						teardown),
	};

	log_init("test_pki", NULL, 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
