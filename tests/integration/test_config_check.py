"""The daemons' command line and `-n`, as someone deploying them meets them:
--help and --version, one-line usage errors, -d checked, and a config check
that opens the CA, certificate and key as the service would, flags relative
paths and unknown groups, and says every mistake in one run: `error:` for
what stops the daemon (exit 1), `warning:` for what it survives (exit 0).
A start runs the same checks: what -n refuses, the daemon refuses with the
same lines; what -n accepts, the daemon starts with.

No namespaces: real PKI files made by ringctl, the binaries from RINGD_BIN
(the ASan build in `make check`), a coordinator on 127.0.0.1 for the one
start that must succeed."""

import os
import re
import signal
import socket
import subprocess

import pytest

from cluster import SANITIZER_MARKERS, wait_for
from daemons import REPO, SANITIZER_ENV

AGENT = "ring-agent"
COORD = "ring-coordinator"


class Run:
    def __init__(self, p):
        self.rc = p.returncode
        self.out = p.stdout
        self.err = p.stderr
        self.errors = re.findall(r"^\S+: error: (.*)$", p.stderr, re.M)
        self.warnings = re.findall(r"^\S+: warning: (.*)$", p.stderr, re.M)

    def __repr__(self):
        return "rc %s\nstdout:\n%s\nstderr:\n%s" % (self.rc, self.out,
                                                    self.err)


def env():
    e = dict(os.environ)
    e.update(SANITIZER_ENV)
    return e


def no_sanitizer_report(text):
    for m in SANITIZER_MARKERS:
        assert m not in text, text


def run(bindir, prog, *args):
    p = subprocess.run([os.path.join(bindir, prog)] + list(args),
                       capture_output=True, text=True, timeout=60, env=env())
    no_sanitizer_report(p.stderr + p.stdout)
    return Run(p)


def issue(bindir, pki, name, *extra):
    p = subprocess.run([os.path.join(bindir, "ringctl"), "pki", "issue", pki,
                        name] + list(extra), capture_output=True, text=True,
                       timeout=60, env=env())
    assert p.returncode == 0, p.stderr


class Setup:
    """A cluster PKI (coordinator, n1, n2), another CA with its own n1, and
    the configs that go with them."""

    def __init__(self, bindir, tmp):
        self.bin = bindir
        self.w = str(tmp)
        self.pki = os.path.join(self.w, "pki")
        self.other = os.path.join(self.w, "other")
        for d, names in ((self.pki, ["n1", "n2"]), (self.other, ["n1"])):
            p = subprocess.run([os.path.join(bindir, "ringctl"), "pki",
                                "init", d], capture_output=True, text=True,
                               timeout=60, env=env())
            assert p.returncode == 0, p.stderr
            for n in names:
                issue(bindir, d, n)
        issue(bindir, self.pki, "coordinator", "--coordinator")

    def coord_lines(self, port=7420):
        return [
            "name coordinator",
            "listen 127.0.0.1:%d" % port,
            "ca %s/ca.crt" % self.pki,
            "cert %s/coordinator.crt" % self.pki,
            "key %s/coordinator.key" % self.pki,
            "control_socket %s/c.sock" % self.w,
            "control_group root",
            "state_dir %s/state" % self.w,
        ]

    def agent_lines(self):
        return [
            "node n1",
            "coordinator 127.0.0.1:7420",
            "coordinator_name coordinator",
            "ca %s/ca.crt" % self.pki,
            "cert %s/n1.crt" % self.pki,
            "key %s/n1.key" % self.pki,
        ]

    def write(self, name, lines):
        path = os.path.join(self.w, name)
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path


def replace(lines, directive, value):
    """lines with the directive's value replaced (same line number)."""
    out = [(directive + " " + value) if ln.split()[0] == directive else ln
           for ln in lines]
    assert out != lines
    return out


def line_of(lines, directive):
    return [ln.split()[0] for ln in lines].index(directive) + 1


@pytest.fixture
def s(ringd_bin, tmp_path):
    return Setup(ringd_bin, tmp_path)


# ------------------------------------------------------------ good configs

def test_good_configs(s):
    for prog, lines in ((COORD, s.coord_lines()), (AGENT, s.agent_lines())):
        path = s.write(prog + ".conf", lines)
        r = run(s.bin, prog, "-n", "-c", path)
        assert r.rc == 0, r
        assert r.out.startswith("%s: ok" % path), r
        assert r.err == "", r


# ------------------------------------------------------- CA, cert and key

@pytest.mark.parametrize("prog", [COORD, AGENT])
@pytest.mark.parametrize("which", ["ca", "cert", "key"])
def test_missing_file(s, prog, which):
    lines = s.coord_lines() if prog == COORD else s.agent_lines()
    gone = os.path.join(s.w, "gone", which + ".pem")
    bad = replace(lines, which, gone)
    path = s.write("c.conf", bad)
    r = run(s.bin, prog, "-n", "-c", path)
    assert r.rc == 1, r
    assert r.errors == ["%s:%d: %s %s: No such file or directory" %
                        (path, line_of(bad, which), which, gone)], r
    assert r.out == "", r
    assert "%s: %s: 1 error, 0 warnings" % (prog, path) in r.err, r


def test_all_three_missing_in_one_run(s):
    bad = s.agent_lines()
    for which in ("ca", "cert", "key"):
        bad = replace(bad, which, "/nonexistent/" + which)
    path = s.write("a.conf", bad)
    r = run(s.bin, AGENT, "-n", "-c", path)
    assert r.rc == 1, r
    assert [e.split(":")[1] for e in r.errors] == ["4", "5", "6"], r


def test_key_does_not_match(s):
    bad = replace(s.agent_lines(), "key", "%s/n2.key" % s.pki)
    path = s.write("a.conf", bad)
    r = run(s.bin, AGENT, "-n", "-c", path)
    assert r.rc == 1, r
    assert r.errors == ["%s:6: key %s/n2.key does not match cert %s/n1.crt"
                        % (path, s.pki, s.pki)], r


def test_certificate_from_another_ca(s):
    """A certificate the configured CA did not sign: every peer that uses
    the same ca refuses it, so the daemon does not start. The message
    names both files, the certificate's subject and issuer (with the key
    that tells two 'ringd cluster CA's apart) and what to do."""
    bad = replace(s.agent_lines(), "cert", "%s/n1.crt" % s.other)
    bad = replace(bad, "key", "%s/n1.key" % s.other)
    path = s.write("a.conf", bad)
    r = run(s.bin, AGENT, "-n", "-c", path)
    assert r.rc == 1, r
    assert len(r.errors) == 1, r
    e = r.errors[0]
    assert e.startswith(
        "%s:5: cert %s/n1.crt (CN=n1, issued by CN=ringd cluster CA (key "
        % (path, s.other)), r
    assert "does not verify against ca %s/ca.crt (CN=ringd cluster CA " \
        "(key " % s.pki in e, r
    assert "unable to get local issuer certificate" in e, r
    assert "issued by another CA" in e and "ringctl pki issue" in e, r
    # The two key ids differ: the words tell the CAs apart.
    keys = re.findall(r"\(key ([0-9a-f]{8})\)", e)
    assert len(keys) == 2 and keys[0] != keys[1], e

    # The same for the coordinator, whose ca is the other cluster's.
    bad = replace(s.coord_lines(), "ca", "%s/ca.crt" % s.other)
    path = s.write("c.conf", bad)
    r = run(s.bin, COORD, "-n", "-c", path)
    assert r.rc == 1 and len(r.errors) == 1, r
    assert r.errors[0].startswith(
        "%s:4: cert %s/coordinator.crt (CN=coordinator, issued by "
        % (path, s.pki)), r

    # A consistent pair of another cluster passes: which CA is right is
    # for the run-time words to say (test_tls_words.py).
    good = replace(s.agent_lines(), "ca", "%s/ca.crt" % s.other)
    good = replace(good, "cert", "%s/n1.crt" % s.other)
    good = replace(good, "key", "%s/n1.key" % s.other)
    path = s.write("a.conf", good)
    r = run(s.bin, AGENT, "-n", "-c", path)
    assert r.rc == 0 and r.errors == [] and r.warnings == [], r


@pytest.mark.parametrize("prog", [COORD, AGENT])
def test_ca_is_not_a_ca(s, prog):
    """ca pointing at a node's certificate (the mistake that used to pass
    with 'ok'): not a CA, so it trusts nothing the cluster signs."""
    lines = s.coord_lines() if prog == COORD else s.agent_lines()
    bad = replace(lines, "ca", "%s/n2.crt" % s.pki)
    path = s.write("x.conf", bad)
    r = run(s.bin, prog, "-n", "-c", path)
    assert r.rc == 1, r
    assert "ok" not in r.out, r
    assert r.errors == [
        "%s:%d: ca %s/n2.crt: certificate 1 (CN=n2, issued by CN=ringd "
        "cluster CA (key %s)) is not a CA certificate (no "
        "basicConstraints CA:TRUE): ca must be the cluster CA's "
        "certificate, ca.crt in the directory 'ringctl pki init' made, not "
        "a node's or the coordinator's"
        % (path, line_of(bad, "ca"), s.pki,
           re.search(r"\(key ([0-9a-f]{8})\)\)", r.errors[0]).group(1))], r
    # A start refuses it with the same words.
    start = run(s.bin, prog, "-c", path)
    assert start.rc == 1 and start.errors == r.errors, start


def test_roles(s):
    """The coordinator with a node's certificate, an agent with the
    coordinator's: every peer would refuse them, so the daemon does not
    start."""
    bad = replace(s.coord_lines(), "cert", "%s/n1.crt" % s.pki)
    bad = replace(bad, "key", "%s/n1.key" % s.pki)
    path = s.write("c.conf", bad)
    r = run(s.bin, COORD, "-n", "-c", path)
    assert r.rc == 1, r
    assert r.errors == ["%s:4: cert %s/n1.crt is not for server use (the "
                        "coordinator needs a certificate issued with "
                        "--coordinator)" % (path, s.pki)], r

    bad = replace(s.agent_lines(), "cert", "%s/coordinator.crt" % s.pki)
    bad = replace(bad, "key", "%s/coordinator.key" % s.pki)
    path = s.write("a.conf", bad)
    r = run(s.bin, AGENT, "-n", "-c", path)
    assert r.rc == 1, r
    assert len(r.errors) == 1 and "is not for client use" in r.errors[0], r


# ------------------------------------------------------ paths and groups

@pytest.mark.parametrize("directive", ["state_dir", "control_socket", "ca"])
def test_relative_path(s, directive):
    bad = replace(s.coord_lines(), directive, "rel/x")
    path = s.write("c.conf", bad)
    r = run(s.bin, COORD, "-n", "-c", path)
    assert r.rc == 1, r
    assert r.errors == ["%s:%d: '%s': 'rel/x' is not an absolute path" %
                        (path, line_of(bad, directive), directive)], r


def test_unknown_control_group(s):
    """The coordinator survives it (its control socket is then root's
    only): a warning at its line, exit 0."""
    bad = replace(s.coord_lines(), "control_group", "no-such-group-ringd")
    path = s.write("c.conf", bad)
    r = run(s.bin, COORD, "-n", "-c", path)
    assert r.rc == 0, r
    assert r.warnings == ["%s:7: control_group no-such-group-ringd does not "
                          "exist: the control socket will be for root only"
                          % path], r
    assert "ok, 1 warning" in r.out, r


# ------------------------------------------------------------- one pass

def test_every_error_in_one_run(s):
    """A bad line, an ordering error between two good lines and a missing
    key: all three in the first run, each an error."""
    bad = s.agent_lines() + ["reconnect_min 10s", "frobnicate yes",
                             "reconnect_max 2s"]
    bad = replace(bad, "key", "/nonexistent/n1.key")
    path = s.write("a.conf", bad)
    r = run(s.bin, AGENT, "-n", "-c", path)
    assert r.rc == 1, r
    assert r.errors == [
        "%s:8: unknown directive 'frobnicate'" % path,
        "%s: reconnect_min (10000ms) is greater than reconnect_max (2000ms)"
        % path,
        "%s:6: key /nonexistent/n1.key: No such file or directory" % path,
    ], r
    assert r.warnings == [], r
    assert "%s: 3 errors, 0 warnings" % path in r.err, r

    bad = s.coord_lines() + ["expect n1 n2", "heartbeat_misses 0",
                             "deny n2", "state_dir var/ringd"]
    path = s.write("c.conf", bad)
    r = run(s.bin, COORD, "-n", "-c", path)
    assert r.rc == 1, r
    assert len(r.errors) == 3, r
    assert r.errors[0].startswith("%s:10: 'heartbeat_misses'" % path), r
    assert r.errors[1].startswith("%s:12: 'state_dir'" % path), r
    assert "both expected and denied" in r.errors[2], r


# ------------------------------------------- a start runs the same checks

@pytest.mark.parametrize("prog", [COORD, AGENT])
def test_start_refuses_what_check_refuses(s, prog):
    lines = s.coord_lines() if prog == COORD else s.agent_lines()
    bad = replace(lines, "key", "/nonexistent/x.key") + ["frobnicate"]
    path = s.write("bad.conf", bad)
    check = run(s.bin, prog, "-n", "-c", path)
    start = run(s.bin, prog, "-c", path)
    assert check.rc == 1 and start.rc == 1, (check, start)
    assert start.errors == check.errors and len(start.errors) == 2, \
        (check, start)


def free_port():
    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        return so.getsockname()[1]


def test_start_accepts_what_check_accepts(s):
    """A config -n passes with a warning: the coordinator starts, says the
    same warning, and serves its control socket until told to stop."""
    lines = replace(s.coord_lines(free_port()), "control_group",
                    "no-such-group-ringd")
    path = s.write("c.conf", lines)
    check = run(s.bin, COORD, "-n", "-c", path)
    assert check.rc == 0 and len(check.warnings) == 1, check
    log = os.path.join(s.w, "coord.log")
    with open(log, "w") as f:
        p = subprocess.Popen([os.path.join(s.bin, COORD), "-c", path],
                             stdout=f, stderr=subprocess.STDOUT, env=env())
    try:
        wait_for(lambda: p.poll() is not None or
                 os.path.exists(os.path.join(s.w, "c.sock")), 15,
                 "the coordinator's control socket")
        assert p.poll() is None, open(log).read()
    finally:
        p.send_signal(signal.SIGTERM)
        rc = p.wait(timeout=30)
    text = open(log).read()
    no_sanitizer_report(text)
    assert rc == 0, text
    assert "warning: %s" % check.warnings[0] in text, text


# ----------------------------------------------------------- command line

@pytest.mark.parametrize("prog", [COORD, AGENT])
def test_help_and_version(s, prog):
    for arg in ("--help", "-h"):
        r = run(s.bin, prog, arg)
        assert r.rc == 0 and r.err == "", r
        assert r.out.startswith("usage: %s " % prog), r
        assert "--version" in r.out, r
    for arg in ("--version", "-V"):
        r = run(s.bin, prog, arg)
        assert r.rc == 0 and r.err == "", r
        assert re.fullmatch(r"%s \d+\.\d+\.\d+\n" % prog, r.out), r


@pytest.mark.parametrize("prog", [COORD, AGENT])
@pytest.mark.parametrize("args,what", [
    (["--bogus"], "unknown option '--bogus'"),
    (["-x"], "unknown option '-x'"),
    (["-c"], "missing argument to '-c'"),
    (["-n", "extra"], "unexpected argument 'extra'"),
])
def test_usage_errors_are_one_line(s, prog, args, what):
    r = run(s.bin, prog, *args)
    assert r.rc == 2, r
    assert r.out == "", r
    assert r.err == "%s: %s; see '%s --help'\n" % (prog, what, prog), r


def debug_names_in_sources():
    """{daemon: set of subsystems}: every log_debug("name", ...) in the
    sources each daemon is built from (common/ is in both)."""
    found = {AGENT: set(), COORD: set()}
    dirs = {"agent": [AGENT], "coordinator": [COORD],
            "common": [AGENT, COORD], "proto": [AGENT, COORD]}
    for d, progs in dirs.items():
        for root, _, files in os.walk(os.path.join(REPO, d)):
            for fn in files:
                if not fn.endswith(".c"):
                    continue
                with open(os.path.join(root, fn)) as f:
                    names = re.findall(r'log_debug\(\s*"([^"]*)"', f.read())
                for p in progs:
                    found[p].update(names)
    return found


@pytest.mark.parametrize("prog", [COORD, AGENT])
def test_debug_subsystems(s, prog):
    """-d knows exactly the subsystems the daemon's code logs under (the
    list is in one place, common/cfg.c, and --help prints it); anything
    else is a usage error that lists them."""
    want = debug_names_in_sources()[prog]
    assert want, "no log_debug calls found under %s" % REPO
    r = run(s.bin, prog, "--help")
    m = re.search(r"-d SUBSYS.*\n\s+(\S+)\n", r.out)
    assert m, r
    listed = m.group(1).split(",")
    assert listed[-1] == "all", r
    assert set(listed[:-1]) == want, (sorted(listed), sorted(want))

    path = s.write("good.conf", s.coord_lines() if prog == COORD
                   else s.agent_lines())
    ok = run(s.bin, prog, "-n", "-c", path, "-d", ",".join(listed))
    assert ok.rc == 0, ok
    for bad in ("bogus", "conn,bogus", "conn,", ""):
        r = run(s.bin, prog, "-n", "-c", path, "-d", bad)
        assert r.rc == 2, (bad, r)
        assert r.out == "", r
        assert r.err == ("%s: -d: unknown debug subsystem '%s' (known: %s)\n"
                         % (prog, "" if bad in ("conn,", "") else "bogus",
                            ",".join(listed))), r
