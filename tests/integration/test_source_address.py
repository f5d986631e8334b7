"""agent.conf `source_address`: the agent binds its management connection
to the address given before connecting (multi-homed management hosts; on
loopback, each test agent its own 127.x.y.z), and the coordinator sees the
session come from it. An address this host does not have is said in words
and retried with the backoff until it appears; an address of the other
family than the coordinator's is said in words; `-n` refuses what is not
an address, at its line.

Real daemons in a network namespace of their own (only lo), the PKI made
by ringctl, binaries from RINGD_BIN."""

import json
import os
import signal
import subprocess

import pytest

from cluster import wait_for
from test_config_check import AGENT, COORD, Setup, env, no_sanitizer_report, \
    run


@pytest.fixture
def s(ringd_bin, tmp_path):
    return Setup(ringd_bin, tmp_path)


@pytest.fixture
def ns():
    if os.geteuid() != 0:
        pytest.skip("needs root (a network namespace)")
    name = "rgsrc%d" % os.getpid()
    subprocess.run(["ip", "netns", "del", name], capture_output=True)
    subprocess.run(["ip", "netns", "add", name], check=True)
    subprocess.run(["ip", "-n", name, "link", "set", "lo", "up"], check=True)
    yield name
    subprocess.run(["ip", "netns", "del", name], capture_output=True)


class Daemons:
    def __init__(self, s, ns):
        self.s, self.ns, self.procs = s, ns, []

    def start(self, prog, conf, log):
        f = open(os.path.join(self.s.w, log), "w")
        p = subprocess.Popen(["ip", "netns", "exec", self.ns,
                              os.path.join(self.s.bin, prog), "-c", conf],
                             stdout=f, stderr=subprocess.STDOUT, env=env())
        f.close()
        self.procs.append((p, os.path.join(self.s.w, log)))
        return p

    def log(self, name):
        with open(os.path.join(self.s.w, name)) as f:
            return f.read()

    def status(self):
        p = subprocess.run(["ip", "netns", "exec", self.ns,
                            os.path.join(self.s.bin, "ringctl"), "-s",
                            os.path.join(self.s.w, "c.sock"), "-f", "json",
                            "status"], capture_output=True, text=True,
                           timeout=30, env=env())
        try:
            return json.loads(p.stdout)
        except ValueError:
            return None

    def node(self, name):
        doc = self.status() or {}
        for n in doc.get("nodes") or []:
            if n.get("node") == name and n.get("state") == "up":
                return n
        return None

    def stop(self):
        texts = []
        for p, log in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            with open(log) as f:
                texts.append(f.read())
        for t in texts:
            no_sanitizer_report(t)


@pytest.fixture
def d(s, ns):
    d = Daemons(s, ns)
    yield d
    d.stop()


def agent_conf(s, name, source, coordinator="127.0.0.1:7420"):
    lines = [ln for ln in s.agent_lines() if not ln.startswith(
        ("node ", "coordinator ", "cert ", "key "))]
    lines += ["node %s" % name, "coordinator %s" % coordinator,
              "cert %s/%s.crt" % (s.pki, name),
              "key %s/%s.key" % (s.pki, name),
              "reconnect_min 200ms", "reconnect_max 1s",
              "source_address %s" % source]
    return s.write("%s.conf" % name, lines)


def start_coordinator(s, d):
    path = s.write("c.conf", s.coord_lines() + ["expect n1 n2",
                                                "heartbeat_interval 1s"])
    d.start(COORD, path, "coord.log")
    wait_for(lambda: d.status() is not None, 20,
             "the coordinator's control socket")


def test_session_comes_from_source_address(s, d):
    """Two agents on one host, each from its own loopback address: the
    coordinator lists each node with the address it bound."""
    start_coordinator(s, d)
    for name, src in (("n1", "127.0.0.77"), ("n2", "127.3.2.1")):
        conf = agent_conf(s, name, src)
        assert run(s.bin, AGENT, "-n", "-c", conf).rc == 0
        d.start(AGENT, conf, name + ".log")
    for name, src in (("n1", "127.0.0.77"), ("n2", "127.3.2.1")):
        n = wait_for(lambda: d.node(name), 20, "%s up" % name)
        assert n["mgmt_address"] == src, n


def test_missing_address_is_said_and_retried(s, d):
    """An address no interface has (yet): the agent says why in words, stays
    up and retries; once the address is added it connects from it."""
    start_coordinator(s, d)
    conf = agent_conf(s, "n1", "10.255.7.7")
    agent = d.start(AGENT, conf, "n1.log")
    want = ("cannot connect to coordinator 127.0.0.1:7420: cannot bind to "
            "source_address 10.255.7.7: Cannot assign requested address "
            "(no interface of this host has that address now; add it or "
            "change source_address)")
    wait_for(lambda: d.log("n1.log").count(want) >= 2, 20,
             "two refused binds, said in words")
    assert agent.poll() is None, d.log("n1.log")
    assert d.node("n1") is None
    subprocess.run(["ip", "-n", d.ns, "addr", "add", "10.255.7.7/32", "dev",
                    "lo"], check=True)
    n = wait_for(lambda: d.node("n1"), 20, "n1 up once the address exists")
    assert n["mgmt_address"] == "10.255.7.7", n


def test_family_mismatch_is_said(s, d):
    """An IPv6 source for an IPv4 coordinator: said in words, retried, the
    agent does not crash."""
    start_coordinator(s, d)
    conf = agent_conf(s, "n1", "::1")
    agent = d.start(AGENT, conf, "n1.log")
    want = ("cannot connect to coordinator 127.0.0.1:7420 from "
            "source_address ::1: the coordinator's address is IPv4 and the "
            "source is IPv6")
    wait_for(lambda: d.log("n1.log").count(want) >= 2, 20,
             "the family mismatch, said twice")
    assert agent.poll() is None, d.log("n1.log")


@pytest.mark.parametrize("value", ["mgmt.lan", "127.0.0.1:7420",
                                   "127.0.0.300"])
def test_check_refuses_a_non_address(s, value):
    lines = s.agent_lines() + ["source_address %s" % value]
    path = s.write("a.conf", lines)
    r = run(s.bin, AGENT, "-n", "-c", path)
    assert r.rc == 1, r
    assert r.errors == [
        "%s:%d: 'source_address': '%s' is not an IPv4 or IPv6 address "
        "(give one of this host's addresses, e.g. 10.0.0.5 or fd00::5, "
        "without a port)" % (path, len(lines), value)], r
