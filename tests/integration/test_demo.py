"""The demo as `make demo` runs it (demo.py up, a process that leaves the
ring running and exits): its metrics page answers from the host, demo-cut
takes an edge down and demo-mend brings it back, the operator user in the
control socket's group reads status while nobody is refused, a second
start is refused without touching the first, every banner line fits 100
columns, and `down` leaves nothing behind (namespaces, the host's veth,
the user, the group it made); a demo whose coordinator address another
demo's link already holds runs without a link of its own.

A demo of its own beside any real one: its own prefix, workdir,
coordinator address, host address and group, so a user's `make demo` and
this test never meet."""

import grp
import json
import os
import pwd
import re
import subprocess
import sys
import tempfile
import urllib.request

import pytest

import cluster as cl
from conftest import new_prefix

HERE = os.path.dirname(os.path.abspath(__file__))
DEMO = os.path.join(HERE, "demo.py")
WIDTH = 100
UP_S = 300  # ASan daemons and a first survey on a loaded 2-core box


class Demo:
    def __init__(self, bindir):
        self.bin = bindir
        self.prefix = new_prefix()
        self.workdir = tempfile.mkdtemp(prefix="ringd-%s-" % self.prefix)
        # Unused by the nodes (10.88.0.11+) and by the real demo (.0.2,
        # host 10.88.255.254); per pid so two sessions do not share a
        # host route.
        k = os.getpid() % 200
        self.coord_addr = "10.88.%d.2" % (20 + k)
        self.host_addr = "10.88.255.%d" % (20 + k)
        self.group = self.prefix + "-g"
        self.user = self.prefix + "-op"
        self.hostif = self.prefix[:13] + "-h"
        self.sock = self.workdir + "-ctl/coord.sock"
        self.ringctl_copy = self.workdir + "-ctl/ringctl"
        self.url = "http://%s:9464" % self.coord_addr

    def run(self, *args, timeout=60):
        argv = [sys.executable, DEMO, args[0], "--workdir", self.workdir,
                "--prefix", self.prefix, "--bin", self.bin,
                "--coord-addr", self.coord_addr, "--host-addr",
                self.host_addr, "--group", self.group] + list(args[1:])
        return subprocess.run(argv, capture_output=True, text=True,
                              timeout=timeout, cwd=os.path.dirname(
                                  os.path.dirname(HERE)))

    def state(self):
        with open(os.path.join(self.workdir, "demo.json")) as f:
            return json.load(f)

    def status(self, user=None):
        """ringctl -f json status, as root or (runuser, as the banner
        prints it) as another user with the banner's environment."""
        argv = [os.path.join(self.bin, "ringctl"), "-f", "json", "status"]
        if user:
            # The copy the banner names: the build may be closed to user.
            argv = ["runuser", "-u", user, "--", self.ringctl_copy] + \
                argv[1:]
        env = dict(os.environ, RINGCTL_SOCKET=self.sock)
        return subprocess.run(argv, capture_output=True, text=True,
                              timeout=30, env=env)


def _get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.status, r.headers.get("Content-Type", ""), r.read()


@pytest.fixture(scope="module")
def demo(root, ringd_bin):
    if not os.path.exists("/usr/sbin/useradd"):
        pytest.skip("needs useradd")
    d = Demo(ringd_bin)
    try:
        p = d.run("up", timeout=UP_S)
        assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
        d.out = p.stdout
        yield d
    finally:
        p = d.run("down")
        leftovers = [n for n in cl.list_netns()
                     if n.startswith(d.prefix + "-")]
        assert p.returncode == 0, p.stdout + p.stderr
        assert "sanitizer report" not in p.stdout, p.stdout
        assert not leftovers, leftovers
        assert not os.path.exists("/sys/class/net/" + d.hostif)
        assert not os.path.exists(d.workdir)
        with pytest.raises(KeyError):
            pwd.getpwnam(d.user)
        with pytest.raises(KeyError):
            grp.getgrnam(d.group)


def banner(out):
    """The demo's own lines: from "ringd demo is up" on (ringctl's status
    and ranks above them are checked by ringctl's own width tests)."""
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("ringd demo is up"):
            return lines[i:]
    raise AssertionError("no banner in:\n" + out)


def test_banner_fits_and_names_what_there_is(demo):
    lines = banner(demo.out)
    wide = [(len(x), x) for x in lines if len(x) > WIDTH]
    assert not wide, wide
    text = "\n".join(lines)
    for want in (demo.url + "/", demo.url + "/metrics",
                 demo.url + "/ring.svg", "curl ", "browser",
                 "demo-cut EDGE=n1-n2", "demo-mend", "ringctl status",
                 "ringctl watch", "demo-down",
                 "runuser -u %s -- %s status" % (demo.user,
                                                 demo.ringctl_copy),
                 "runuser -u nobody -- %s status" % demo.ringctl_copy,
                 "export RINGCTL_SOCKET=%s" % demo.sock):
        assert want in text, want


def test_metrics_page_from_the_host(demo):
    # The test runs in the host's namespace: what the banner promises.
    code, ctype, body = _get(demo.url + "/metrics")
    assert code == 200
    assert re.search(rb"^ringd_\w+", body, re.M), body[:500]
    code, ctype, body = _get(demo.url + "/ring.svg")
    assert code == 200 and "svg" in ctype, ctype
    assert b"<svg" in body[:500], body[:200]
    code, ctype, body = _get(demo.url + "/")
    assert code == 200 and "html" in ctype, ctype


def edge_state(demo, a, b):
    p = demo.status()
    if p.returncode not in (0, 1):
        return None
    for e in json.loads(p.stdout)["topology"]["edges"]:
        if {e["a"], e["b"]} == {a, b}:
            return e["live_state"]
    return None


def test_cut_and_mend(demo):
    p = demo.run("cut", "n2-n1")  # either order names the edge
    assert p.returncode == 0, p.stdout + p.stderr
    assert all(len(x) <= WIDTH for x in p.stdout.splitlines()), p.stdout
    cl.wait_for(lambda: edge_state(demo, "n1", "n2") == "down", 20,
                "n1-n2 down after demo-cut")
    assert edge_state(demo, "n2", "n4") == "up"
    # A diagonal is no cable; no EDGE is a question, not a guess.
    assert demo.run("cut", "n1-n4").returncode == 2
    assert demo.run("cut").returncode == 2
    p = demo.run("mend")  # every cut cable: n1-n2
    assert p.returncode == 0, p.stdout + p.stderr
    assert "n1-n2" in p.stdout and "n3-n4" not in p.stdout, p.stdout
    cl.wait_for(lambda: edge_state(demo, "n1", "n2") == "up", 20,
                "n1-n2 up after demo-mend")


def test_operator_reads_nobody_is_refused(demo):
    st = os.stat(demo.sock)
    assert st.st_gid == grp.getgrnam(demo.group).gr_gid
    assert pwd.getpwnam(demo.user).pw_gid == st.st_gid
    p = demo.status(demo.user)
    assert p.returncode in (0, 1), p.stderr
    assert json.loads(p.stdout)["topology"]["kind"] == "ring"
    p = demo.status("nobody")
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert p.stdout.strip() == "" or "topology" not in p.stdout
    assert demo.sock in p.stderr, p.stderr


def test_second_start_is_refused(demo):
    before = demo.state()["procs"]
    p = demo.run("up")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "already running" in p.stdout and "demo-down" in p.stdout
    assert all(len(x) <= WIDTH for x in p.stdout.splitlines()), p.stdout
    assert demo.run("running").returncode == 1
    # Nothing replaced: the same daemons, still answering.
    assert demo.state()["procs"] == before
    assert all(cl._pid_alive(x["pid"]) for x in before)
    assert demo.status().returncode in (0, 1)


def test_another_demo_holding_the_host_link(demo, ringd_bin):
    """A demo whose coordinator address the host already routes to another
    demo (one in a container or a fresh-machine run, say) still starts:
    its page is served inside its namespaces and the banner says so; the
    first demo's link is left alone."""
    other = Demo(ringd_bin)
    other.coord_addr = demo.coord_addr  # the host's route is taken
    try:
        p = other.run("up", timeout=UP_S)
        assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
        assert not os.path.exists("/sys/class/net/" + other.hostif)
        lines = banner(p.stdout)
        assert all(len(x) <= WIDTH for x in lines), lines
        assert "ip netns exec %s-n1 curl" % other.prefix in p.stdout
        out = subprocess.run(
            ["ip", "netns", "exec", other.prefix + "-n1", sys.executable,
             "-c",
             "import urllib.request as u; print(u.urlopen(%r, timeout=10)"
             ".read().decode())" % (other.url + "/metrics")],
            capture_output=True, text=True, timeout=30)
        assert re.search(r"^ringd_\w+", out.stdout, re.M), out.stderr
        # The first demo's page still answers from the host.
        assert _get(demo.url + "/metrics")[0] == 200
    finally:
        p = other.run("down")
        assert p.returncode == 0, p.stdout + p.stderr
        assert os.path.exists("/sys/class/net/" + demo.hostif)
