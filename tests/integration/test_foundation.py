"""ringd on a 4-node emulated ring (physical order n1-n2-n4-n3, one extra
unaddressed port per node): agents connect over mutual TLS, ringctl reports
them, failures are detected, and bad peers cannot hurt the good ones."""

import os
import re
import signal
import socket
import ssl
import struct
import subprocess
import time

import pytest

import cluster as cl
from conftest import new_prefix
from daemons import Ringd, all_well_unsurveyed
from ringtest import LogMark, ringd_up

ORDER = ["n1", "n2", "n4", "n3"]
HB_MS = 500
MISSES = 3
SLACK_S = 2.0  # scheduling on a 2-core box under ASan
HANDSHAKE_TIMEOUT_S = 2
FRAME_MAGIC = 0x52494E47
TYPE_HELLO = 17
TYPE_HEARTBEAT = 19


@pytest.fixture(scope="module")
def ringd(root, ringd_bin):
    with ringd_up(cl.Cluster(ORDER, new_prefix(), extra_unaddressed_ports=1),
                  ringd_bin, tail_lines=15, heartbeat_ms=HB_MS, misses=MISSES,
                  coord_extra=["handshake_timeout %ds" % HANDSHAKE_TIMEOUT_S,
                               # A node back resolves within a second.
                               "alert_hold_down 1s"],
                  agent_extra=["reconnect_min 200ms",
                               "reconnect_max 1s"]) as r:
        r.setup_pki()
        r.start_all(timeout=20)
        yield r


@pytest.fixture(autouse=True)
def all_up_before(request):
    """Every test starts from a healthy cluster, whatever the last one did."""
    if "ringd" in request.fixturenames:
        r = request.getfixturevalue("ringd")
        r.wait_all_up(15)
        # The last test's alerts resolved (their hold-down is short).
        cl.wait_for(lambda: all_well_unsurveyed(*r.status()[:2]), 15,
                    "no alert left from the test before")


def entries(doc):
    return {n["node"]: n for n in doc["nodes"]}


def snapshot(r):
    rc, doc, err = r.status()
    assert all_well_unsurveyed(rc, doc), "not well: rc %d %s\n%s" % (
        rc, err, r.log_tails())
    return {n: e["connected_since"] for n, e in entries(doc).items()}


def up_lines(r, node):
    """How often the coordinator logged this node coming up."""
    with open(r.coord.log, errors="replace") as f:
        return len(re.findall(r"node %s up\b" % re.escape(node), f.read()))


def baseline(r):
    """Every node's connection time and "up" log lines now: what
    assert_undisturbed compares with."""
    return snapshot(r), {n: up_lines(r, n) for n in ORDER}


def assert_undisturbed(r, base):
    before, ups_before = base
    rc, doc, err = r.status()
    assert all_well_unsurveyed(rc, doc), "cluster degraded: rc %d %s\n%s" % (
        rc, err, r.log_tails())
    assert doc["connected"] == 4
    now = {n: e["connected_since"] for n, e in entries(doc).items()}
    for n in ORDER:
        assert now[n] == before[n], "%s reconnected: %s -> %s" % (
            n, before[n], now[n])
        assert up_lines(r, n) == ups_before[n], "%s came up again" % n
    assert r.coord.alive(), "coordinator died:\n%s" % cl.tail(r.coord.log)


# ---------------------------------------------------------------- status

def test_status_all_agents_up(ringd):
    r = ringd
    rc, doc, err = r.status()
    # All up, never surveyed: not healthy (no rank order yet), and why.
    assert all_well_unsurveyed(rc, doc), (rc, doc, err)
    assert doc["health_why"].startswith("no survey yet")
    assert doc["coordinator"] == "coordinator"
    assert doc["version"]
    assert doc["expected"] == 4 and doc["connected"] == 4
    assert isinstance(doc["nodes"], list)
    e = entries(doc)
    assert sorted(e) == sorted(ORDER)
    for name in ORDER:
        n = e[name]
        assert n["state"] == "up", n
        assert n["expected"] is True
        assert n["mgmt_address"] == r.cl.node(name).mgmt_addr
        assert n["connected_since"]
        assert n["agent_version"]
        # As built: eth1, eth2 on the ring plus the extra port eth3; not
        # mgmt0, not lo.
        built = r.cl.node(name)
        assert n["data_interfaces"] == len(built.ports) == 3, n
        assert n["unaddressed_up"] == built.unaddressed == ["eth3"], n
        assert n["rdma_devices"] == 0


def test_status_other_formats(ringd):
    r = ringd
    p = r.ringctl("status", fmt="plain")
    assert p.returncode == 1, p.stderr
    assert p.stdout.startswith("health: degraded\nhealth_cause: no_survey\n"), \
        p.stdout[:300]
    assert "n4" in p.stdout
    p = r.ringctl("status", fmt="keyvalue")
    assert p.returncode == 1, p.stderr
    assert re.search(r"^health\W+degraded", p.stdout, re.M), p.stdout


def test_inventory_n1(ringd):
    r = ringd
    rc, inv, err = r.inventory("n1")
    assert rc == 0, err
    n1 = r.cl.node("n1")
    assert inv["node"] == "n1"
    assert inv["state"] == "up"
    assert inv["mgmt_address"] == n1.mgmt_addr
    assert inv["mgmt_interface"] == "mgmt0"
    assert inv["hostname"]
    assert isinstance(inv["rdma_devices"], list)
    ifs = {i["name"]: i for i in inv["interfaces"]}
    assert sorted(ifs) == ["eth1", "eth2", "eth3", "mgmt0"], sorted(ifs)
    for port in ("eth1", "eth2"):
        i = ifs[port]
        assert i["ipv4"] == [{"address": n1.ports[port].addr, "prefix": 30}]
        assert i["admin_up"] is True and i["carrier"] is True
        assert i["up_no_address"] is False
        assert i["management"] is False
        assert i["nominal_speed_mbps"] == 200000
        assert re.match(r"^([0-9a-f]{2}:){5}[0-9a-f]{2}$", i["mac"])
        assert i["mtu"] == 1500
    e3 = ifs["eth3"]
    assert e3["ipv4"] == [] and e3["up_no_address"] is True
    assert e3["carrier"] is True and e3["management"] is False
    m = ifs["mgmt0"]
    assert m["management"] is True and m["up_no_address"] is False
    assert m["ipv4"] == [{"address": n1.mgmt_addr, "prefix": 16}]
    mem = inv["memory"]
    assert 0 < mem["available_kib"] <= mem["total_kib"]


def test_inventory_follows_a_cut_cable(ringd):
    """Carrier loss on a node port reaches the inventory (IFF_LOWER_UP)."""
    r = ringd

    def carrier(node, port):
        rc, inv, err = r.inventory(node)
        assert rc == 0, err
        return {i["name"]: i for i in inv["interfaces"]}[port]["carrier"]
    r.cl.cut("n1", "n2")
    try:
        cl.wait_for(lambda: carrier("n1", "eth2") is False and
                    carrier("n2", "eth1") is False, 40,
                    "inventory to show n1.eth2/n2.eth1 without carrier")
    finally:
        r.cl.restore("n1", "n2")
    cl.wait_for(lambda: carrier("n1", "eth2") and carrier("n2", "eth1"), 40,
                "carrier back in the inventory")


def test_inventory_unknown_node(ringd):
    p = ringd.ringctl("inventory", "n99")
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert p.stderr.strip()


# ---------------------------------------------------------------- failures

def test_killed_agent_goes_down_and_comes_back(ringd):
    r = ringd
    victim = "n3"
    r.agents[victim].signal(signal.SIGKILL)
    t0 = time.monotonic()
    r.agents[victim].wait(10)
    r.wait_state(victim, "down", MISSES * HB_MS / 1000 + SLACK_S)
    took = time.monotonic() - t0
    rc, doc, _ = r.status()
    assert rc == 1, "status exit %d with %s down" % (rc, victim)
    # An expected node down: the coordinator's node_down alert, critical.
    assert doc["health"] == "critical"
    assert ("node_down", victim) in {(a["rule"], a["subject"])
                                     for a in doc["alerts"]}, doc["alerts"]
    assert doc["expected"] == 4 and doc["connected"] == 3
    e = entries(doc)
    assert e[victim]["state"] == "down" and e[victim]["down_reason"]
    assert all(e[n]["state"] == "up" for n in ORDER if n != victim)
    r.start_agent(victim)
    r.wait_state(victim, "up", 10)
    r.wait_all_up(10)
    print("%s down after %.2fs: %s" % (victim, took,
                                        e[victim]["down_reason"]))


def test_frozen_agent_goes_down_by_missed_heartbeats(ringd):
    r = ringd
    victim = "n4"
    before = snapshot(r)[victim]
    ups = up_lines(r, victim)
    p = r.agents[victim]
    p.signal(signal.SIGSTOP)
    t0 = time.monotonic()
    try:
        r.wait_state(victim, "down", MISSES * HB_MS / 1000 + SLACK_S)
        took = time.monotonic() - t0
        rc, doc, _ = r.status()
        assert rc == 1 and doc["health"] == "critical"  # node_down
        reason = entries(doc)[victim]["down_reason"]
        assert reason
        # No TCP close happened: only silence can have done this, and not
        # before most of the allowed misses went by.
        assert took >= (MISSES - 1) * HB_MS / 1000 * 0.8, took
    finally:
        p.signal(signal.SIGCONT)
    r.wait_state(victim, "up", 10)
    after = entries(r.status()[1])[victim]["connected_since"]
    assert after != before and up_lines(r, victim) == ups + 1, \
        "came back without a new session"
    assert p.alive()
    print("%s down after %.2fs: %s" % (victim, took, reason))


def test_agent_from_foreign_ca_is_refused(ringd):
    """A certificate the cluster CA never signed. ring-agent itself refuses
    to start with it (its certificate does not chain to its ca); a peer
    that presents it anyway is refused by the coordinator, which logs the
    verify failure, and nobody else notices."""
    r = ringd
    rogue_pki = os.path.join(r.w, "pki-rogue")
    r.setup_pki(rogue_pki, names=["rogue"])
    # Trusts the real CA (so it would go as far as presenting its
    # certificate) but holds a certificate the cluster CA never signed.
    conf = r.write("agent-rogue.conf", r.agent_conf_text(
        "rogue", pki=rogue_pki, ca=os.path.join(r.pki, "ca.crt")))
    p = subprocess.run([r.path("ring-agent"), "-n", "-c", conf],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode != 0, (p.stdout, p.stderr)
    assert "ca" in p.stderr.lower(), p.stderr
    base = baseline(r)
    mark = LogMark(r.coord.log)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.load_verify_locations(os.path.join(r.pki, "ca.crt"))
    ctx.load_cert_chain(os.path.join(rogue_pki, "rogue.crt"),
                        os.path.join(rogue_pki, "rogue.key"))
    s = ctx.wrap_socket(probe_socket(r, "n1"), server_hostname="coordinator")
    try:
        # TLS 1.3: the coordinator judges the client's certificate after
        # the client's side of the handshake is done.
        assert closed_by_peer(s, 5), "coordinator kept a foreign certificate"
    finally:
        s.close()
    cl.wait_for(lambda: re.search(r"verif", mark.new(), re.I), 10,
                "the coordinator to log a certificate verify failure")
    rc, doc, _ = r.status()
    assert "rogue" not in entries(doc)
    assert_undisturbed(r, base)


def test_agent_claiming_another_name_is_refused(ringd):
    """`node n2` with n1's certificate: refused, and neither the real n2 nor
    the real n1 (whose certificate it holds) notices."""
    r = ringd
    conf = r.write("agent-impostor.conf",
                   r.agent_conf_text("n2", cert_name="n1"))
    base = baseline(r)
    mark = LogMark(r.coord.log)
    p = r.spawn_agent("n2", conf, where="n2", label="agent-impostor")
    try:
        # Two refusals: the first attempt and a retry.
        cl.wait_for(lambda: len(re.findall(r"refuse|reject", mark.new(),
                                           re.I)) >= 2, 10,
                    "the coordinator to refuse the impostor twice")
        assert_undisturbed(r, base)
    finally:
        p.stop()
    assert_undisturbed(r, base)


# ---------------------------------------------------------------- bad peers

def probe_socket(r, where="n1"):
    s = r.cl.socket(where, socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect((r.cl.COORD_ADDR, Ringd.PORT))
    return s


def closed_by_peer(s, timeout):
    """True once the peer closes (EOF, reset, TLS alert) within timeout."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            data = cl.recv_by(s, deadline, lambda: s.recv(65536))
        except (ssl.SSLError, OSError):
            return True
        if data is None:
            return False
        if not data:
            return True


def sent_then_dropped(s, data, what):
    """Send data on s: the coordinator must close s within 5 s (s is
    closed either way)."""
    try:
        s.sendall(data)
        assert closed_by_peer(s, 5), what
    finally:
        s.close()


def tls_session(r, cert_name="n1", where="n1"):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.maximum_version = ssl.TLSVersion.TLSv1_3
    ctx.load_verify_locations(os.path.join(r.pki, "ca.crt"))
    ctx.load_cert_chain(os.path.join(r.pki, cert_name + ".crt"),
                        os.path.join(r.pki, cert_name + ".key"))
    s = ctx.wrap_socket(probe_socket(r, where),
                        server_hostname="coordinator")
    assert s.version() == "TLSv1.3"
    # TLS 1.3 verifies the client after the client's handshake is done: a
    # quiet moment shows the coordinator accepted the certificate, so a
    # close later is the frame's doing.
    assert not closed_by_peer(s, 0.3), \
        "coordinator refused a valid node certificate"
    return s


def header(version=1, typ=TYPE_HELLO, length=0, magic=FRAME_MAGIC):
    return struct.pack("!IHHI", magic, version, typ, length)


def test_plaintext_garbage_is_dropped(ringd):
    r = ringd
    base = baseline(r)
    sent_then_dropped(probe_socket(r), b"GET / HTTP/1.0\r\n\r\n" +
                      bytes(range(256)) * 16,
                      "coordinator kept a plaintext peer")
    assert_undisturbed(r, base)


def test_silent_connection_times_out(ringd):
    r = ringd
    s = probe_socket(r)
    try:
        t0 = time.monotonic()
        assert closed_by_peer(s, HANDSHAKE_TIMEOUT_S + SLACK_S + 1), \
            "a silent TCP peer was kept past handshake_timeout"
        assert time.monotonic() - t0 >= HANDSHAKE_TIMEOUT_S * 0.8
    finally:
        s.close()


BAD_FRAMES = {
    "bad_magic": header(magic=0x58585858),
    "huge_length": header(length=0x7FFFFFFF),
    "bad_version": header(version=99),
    "unpackable_payload": header(length=8) + b"\xff" * 8,
    "heartbeat_before_hello": None,  # built in the test (valid frame)
}


@pytest.mark.parametrize("kind", sorted(BAD_FRAMES))
def test_malformed_frame_closes_only_that_session(ringd, kind):
    r = ringd
    base = baseline(r)
    data = BAD_FRAMES[kind]
    if data is None:
        # Heartbeat{seq=1}: field 1 varint -> 08 01, wrapped as Envelope
        # field 19 (length-delimited: tag 0x9a 0x01).
        body = b"\x08\x01"
        env = b"\x9a\x01" + bytes([len(body)]) + body
        data = header(typ=TYPE_HEARTBEAT, length=len(env)) + env
    sent_then_dropped(tls_session(r), data,
                      "coordinator kept the session after %s" % kind)
    assert_undisturbed(r, base)


def test_truncated_frame_then_close(ringd):
    r = ringd
    base = baseline(r)
    s = tls_session(r)
    s.sendall(header(length=100) + b"\x0a" * 10)
    s.close()
    # Another broken session right behind it, closed mid-header.
    s = tls_session(r, cert_name="n2", where="n3")
    s.sendall(header()[:5])
    s.close()
    # The coordinator must notice and survive; let it process the EOFs.
    cl.wait_for(lambda: all_well_unsurveyed(*r.status()[:2]), 5,
                "status after truncation")
    assert_undisturbed(r, base)


# ---------------------------------------------------------------- CLI

def test_ringctl_unreachable_coordinator(ringd):
    r = ringd
    p = r.ringctl("status", sock="/nonexistent/ringd.sock")
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert p.stdout == ""


@pytest.mark.parametrize("args", [[], ["frobnicate"], ["inventory"],
                                  ["-f", "xml", "status"],
                                  ["-t", "banana", "status"],
                                  ["--no-such-option"]])
def test_ringctl_bad_usage(ringd, args):
    r = ringd
    p = r.run(["ringctl", "-s", r.sock] + args)
    assert p.returncode == 2, (args, p.returncode, p.stdout, p.stderr)
    assert p.stderr.strip()


def _broken(text, lineno, bad):
    lines = text.splitlines()
    lines.insert(lineno - 1, bad)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("bad", ["frobnicate yes", "heartbeat_interval banana",
                                 "heartbeat_misses 0"])
def test_coordinator_config_check(ringd, bad):
    r = ringd
    good = r.write("check-coord-good.conf", r.coord_conf_text())
    p = r.run(["ring-coordinator", "-c", good, "-n"])
    assert p.returncode == 0, p.stdout + p.stderr
    path = r.write("check-coord-bad.conf",
                   _broken(r.coord_conf_text(), 3, bad))
    p = r.run(["ring-coordinator", "-c", path, "-n"])
    assert p.returncode != 0
    assert "%s:3:" % path in p.stdout + p.stderr, p.stdout + p.stderr


@pytest.mark.parametrize("bad", ["frobnicate yes", "reconnect_min banana",
                                 "nominal_speed eth*"])
def test_agent_config_check(ringd, bad):
    r = ringd
    good = r.write("check-agent-good.conf", r.agent_conf_text("n1"))
    p = r.run(["ring-agent", "-c", good, "-n"])
    assert p.returncode == 0, p.stdout + p.stderr
    path = r.write("check-agent-bad.conf",
                   _broken(r.agent_conf_text("n1"), 2, bad))
    p = r.run(["ring-agent", "-c", path, "-n"])
    assert p.returncode != 0
    assert "%s:2:" % path in p.stdout + p.stderr, p.stdout + p.stderr
