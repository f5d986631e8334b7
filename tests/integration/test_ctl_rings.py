"""ringctl on a site of several rings (issue 24), against a stand-in
coordinator on a real Unix socket that answers with hand-encoded replies
(three rings of four: pod-a healthy, pod-b cut at n5-n6, pod-c with a
degraded edge n9-n10) and records every request ringctl sends: --ring
goes into the request's ring field (SurveyRequest.rings for survey), a
malformed id never reaches the socket, status leads with a line per ring,
and ranks and the checks without --ring say which rings there are. Then
the same commands on a real emulated site of two 3-node rings under one
coordinator, one of them cut (the coordinator's own filtering in depth is
test_rings.py's)."""

import json
import os
import socket
import struct
import subprocess
import threading

import pytest

import cluster as cl
import daemons
import fakeagent as fa
from conftest import new_prefix
from ringtest import (FAST_AGENT, NO_AUTO_SURVEY, SHORT_SURVEY,
                      neighbours_heard, ringd_up)

STATUS_REQUEST, STATUS_REPLY = 21, 22
ACK = 26
SURVEY_REQUEST = 36
RANKS_REQUEST, RANKS_REPLY = 37, 38
HISTORY_REQUEST = 44
ERROR_NOT_FOUND = 3

RINGS = {
    "pod-a": dict(kind="ring", nodes=["n1", "n2", "n3", "n4"],
                  health="healthy", alerts=0, slowest=("n1-n2", 1.9)),
    "pod-b": dict(kind="ring", nodes=["n5", "n6", "n7", "n8"],
                  health="critical", alerts=1, slowest=("n5-n6", 1.9),
                  live_kind="line", order_invalid="cable n5-n6 is down",
                  cables_down=["n5-n6"]),
    "pod-c": dict(kind="ring", nodes=["n9", "n10", "n11", "n12"],
                  health="degraded", alerts=1, slowest=("n9-n10", 0.4)),
}


def f_double(num, v):
    return fa.varint(num << 3 | 1) + struct.pack("<d", v)


def rank(i, node):
    return (fa.f_varint(1, i) + fa.f_bytes(2, node) +
            fa.f_bytes(3, "10.0.0.%d" % (int(node[1:]))) +
            fa.f_bytes(4, "mgmt0"))


def ring_view(rid, r):
    b = fa.f_bytes(1, rid) + fa.f_bytes(3, r["kind"])
    b += b"".join(fa.f_bytes(4, n) for n in r["nodes"])
    b += b"".join(fa.f_bytes(5, n) for n in r["nodes"])
    b += b"".join(fa.f_bytes(6, rank(i, n)) for i, n in enumerate(r["nodes"]))
    b += fa.f_varint(8, 1)
    b += fa.f_bytes(9, r.get("live_kind", r["kind"]))
    if r.get("order_invalid"):
        b += fa.f_bytes(12, r["order_invalid"])
    else:
        b += fa.f_varint(11, 1)
    b += b"".join(fa.f_bytes(14, c) for c in r.get("cables_down", []))
    b += fa.f_bytes(16, r["health"])
    if r["alerts"]:
        b += fa.f_varint(20, r["alerts"])
    b += fa.f_bytes(21, r["slowest"][0]) + f_double(22, r["slowest"][1])
    return b + fa.f_varint(23, 1765000000000)


def edges(nodes, gbps):
    out = b""
    for i, a in enumerate(nodes):
        b = nodes[(i + 1) % len(nodes)]
        g = gbps.get("%s-%s" % (a, b), 1.9)
        out += fa.f_bytes(3, fa.f_bytes(1, a) + fa.f_bytes(5, b) +
                          fa.f_bytes(12, fa.varint(8)) +
                          fa.f_bytes(13, struct.pack("<d", g)) +
                          fa.f_bytes(14, struct.pack("<d", g)) +
                          f_double(15, 2.0) +
                          fa.f_varint(17, 1765000000000))
    return out


def site_topology():
    b = fa.f_bytes(1, "rings") + fa.f_varint(8, 1765000000000)
    for r in RINGS.values():
        b += edges(r["nodes"], {"n9-n10": 0.4})
    b += fa.f_bytes(14, "rings")
    b += fa.f_bytes(18, "several rings: name one (--ring ID)")
    return b + b"".join(fa.f_bytes(25, ring_view(k, v))
                        for k, v in RINGS.items())


def ring_topology(rid):
    """What the coordinator answers for one ring: a site of one ring."""
    r = RINGS[rid]
    b = fa.f_bytes(1, r["kind"]) + fa.f_varint(8, 1765000000000)
    b += b"".join(fa.f_bytes(2, n) for n in r["nodes"])
    b += edges(r["nodes"], {"n9-n10": 0.4})
    b += b"".join(fa.f_bytes(5, rank(i, n))
                  for i, n in enumerate(r["nodes"]))
    return b + fa.f_bytes(25, ring_view(rid, r))


def alert(rule, ring, subject, severity, message):
    return (fa.f_bytes(1, rule) + fa.f_varint(2, severity) +
            fa.f_varint(3, 1) + fa.f_bytes(4, subject) +
            fa.f_bytes(7, message) + fa.f_varint(8, 1765000000000) +
            fa.f_bytes(15, ring))


def status_reply(topology, ring=None):
    nodes = RINGS[ring]["nodes"] if ring else [
        n for r in RINGS.values() for n in r["nodes"]]
    b = fa.f_bytes(1, "mgmt") + fa.f_bytes(2, "0.1.0")
    b += fa.f_varint(3, 1765000100000)
    b += fa.f_varint(4, len(nodes)) + fa.f_varint(5, len(nodes))
    for n in nodes:
        b += fa.f_bytes(6, fa.f_bytes(1, n) + fa.f_varint(2, 1) +
                        fa.f_bytes(3, "up"))
    b += fa.f_bytes(7, topology) + fa.f_bytes(8, "done")
    health = RINGS[ring]["health"] if ring else "critical"
    b += fa.f_bytes(9, health)
    if ring in (None, "pod-b"):
        b += fa.f_bytes(10, alert("cable_down", "pod-b", "n5-n6", 2,
                                  "cable n5-n6 is down"))
    if ring in (None, "pod-c"):
        b += fa.f_bytes(10, alert("edge_slow", "pod-c", "n9-n10", 1,
                                  "edge n9-n10 at 0.4 Gbps"))
    return b


class StandIn:
    """A coordinator's control socket that answers from RINGS and keeps
    every request: (envelope type, {field: [values]})."""

    def __init__(self, path):
        self.path = path
        self.requests = []
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(8)
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def close(self):
        self.sock.close()

    def serve(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            with c:
                c.settimeout(10)
                try:
                    self.answer(c)
                except (OSError, ValueError):
                    pass

    @staticmethod
    def read(c, n):
        b = b""
        while len(b) < n:
            chunk = c.recv(n - len(b))
            if not chunk:
                raise OSError("closed")
            b += chunk
        return b

    def answer(self, c):
        _, _, typ, length = struct.unpack("!IHHI", self.read(c, 12))
        env = fa.fields(self.read(c, length))
        rid = env.get(1, [0])[0]
        body = fa.fields(env.get(typ, [b""])[0])
        self.requests.append((typ, body))
        ring = body.get(1, [b""])[0].decode() if typ in (
            STATUS_REQUEST, RANKS_REQUEST) else ""
        if ring and ring not in RINGS:
            c.sendall(fa.frame(16, fa.error(
                ERROR_NOT_FOUND, "no ring '%s' (rings: %s)" % (
                    ring, ", ".join(RINGS))), rid))
            return
        topo = ring_topology(ring) if ring else site_topology()
        if typ == STATUS_REQUEST:
            c.sendall(fa.frame(STATUS_REPLY, status_reply(topo, ring or None),
                               rid))
        elif typ == RANKS_REQUEST:
            c.sendall(fa.frame(RANKS_REPLY, fa.f_bytes(1, topo), rid))
        elif typ == SURVEY_REQUEST:
            c.sendall(fa.frame(ACK, fa.f_bytes(1, "survey started"), rid))
        else:
            c.sendall(fa.frame(16, fa.error(ERROR_NOT_FOUND, "not here"),
                               rid))


@pytest.fixture
def site(tmp_path):
    s = StandIn(str(tmp_path / "coordinator.sock"))
    yield s
    s.close()


def ringctl(site, *args, stdin=None):
    cmd = [os.path.join(daemons.bin_dir(), "ringctl"), "-s", site.path,
           "-t", "5"] + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=30,
                          input=stdin,
                          env=dict(os.environ, **daemons.SANITIZER_ENV))


def sent(site, typ):
    """The requests of type typ the stand-in received, in order."""
    return [b for t, b in site.requests if t == typ]


def ring_field(body, num=1):
    return [v.decode() for v in body.get(num, [])]


def test_status_leads_with_a_line_per_ring(site):
    p = ringctl(site, "status")
    assert p.returncode == 1, p.stderr  # critical
    lines = p.stdout.splitlines()
    assert all(len(line) <= 100 for line in lines), p.stdout
    rows = {line.split()[0]: line for line in lines
            if line.startswith("  pod-")}
    assert set(rows) == set(RINGS), p.stdout
    assert "ring, now line" in rows["pod-b"]
    assert "0.40" in rows["pod-c"] and "degraded" in rows["pod-c"]
    # Details for the rings with problems only.
    assert "ring pod-b:" in lines and "ring pod-c:" in lines
    assert "ring pod-a:" not in lines
    assert "nodes: 12, listed by 'ringctl status -v'" in lines
    assert ring_field(sent(site, STATUS_REQUEST)[0]) == []

    p = ringctl(site, "-f", "json", "status")
    doc = json.loads(p.stdout)
    rings = {r["id"]: r for r in doc["topology"]["rings"]}
    assert rings["pod-b"]["live_kind"] == "line"
    assert rings["pod-b"]["order_valid"] is False
    assert rings["pod-c"]["slowest_gbps"] == 0.4
    assert [r["node"] for r in rings["pod-a"]["ranks"]] == \
        RINGS["pod-a"]["nodes"]
    assert {a["ring"] for a in doc["alerts"]} == {"pod-b", "pod-c"}
    assert len(doc["nodes"]) == 12


def test_status_ring_is_sent_and_prints_one_ring(site):
    p = ringctl(site, "status", "--ring", "pod-c")
    assert p.returncode == 0 or p.returncode == 1, p.stderr
    assert ring_field(sent(site, STATUS_REQUEST)[-1]) == ["pod-c"]
    # A site of one ring: the node table, no table of rings.
    assert "  RING " not in p.stdout
    assert "picture: n9 =0.40= n10" in p.stdout
    assert "NODE" in p.stdout


@pytest.mark.parametrize("fmt", ["plain", "json", "hostfile", "rankfile",
                                 "torchrun", "env"])
def test_ranks_without_ring_names_the_rings(site, fmt):
    p = ringctl(site, "-f", fmt, "ranks")
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert p.stdout == ""
    if fmt == "json":
        err = json.loads(p.stderr.splitlines()[-1])["notice"]
        assert err["code"] == "ring_required"
        assert err["value"] == "pod-a,pod-b,pod-c"
        assert err["fix"] == "--ring ID"
    else:
        assert "pod-b (ring, 4 nodes)" in p.stderr
        assert "--ring ID" in p.stderr


def test_ranks_ring_in_every_format(site):
    p = ringctl(site, "-f", "hostfile", "ranks", "--ring", "pod-c")
    assert p.returncode == 0, p.stderr
    assert ring_field(sent(site, RANKS_REQUEST)[-1]) == ["pod-c"]
    # hostfile names each rank by its management address.
    assert [line.split()[0] for line in p.stdout.splitlines()
            if line and not line.startswith("#")] == [
        "10.0.0.%s" % n[1:] for n in RINGS["pod-c"]["nodes"]]
    for fmt in ("rankfile", "torchrun", "env", "json", "keyvalue"):
        p = ringctl(site, "-f", fmt, "ranks", "--ring=pod-a")
        assert p.returncode == 0, (fmt, p.stderr)
        assert "10.0.0.1" in p.stdout and "10.0.0.5" not in p.stdout, (
            fmt, p.stdout)


def test_unknown_ring_shows_the_coordinators_list(site):
    p = ringctl(site, "ranks", "--ring", "pod-z")
    assert p.returncode == 2
    assert "no ring 'pod-z' (rings: pod-a, pod-b, pod-c)" in p.stderr


@pytest.mark.parametrize("args", [
    ["status", "--ring", "a b"], ["ranks", "--ring="], ["ranks", "--ring"],
    ["status", "--ring", "x" * 64], ["watch", "--ring", "a/b"],
    ["ranks", "--ring", "pod-a", "--ring", "pod-b"],
    ["survey", "--ring", "pod-a", "--ring", "pod-a"],
    ["inventory", "n1", "--ring", "pod-a"]])
def test_bad_ring_is_a_usage_error_before_asking(site, args):
    p = ringctl(site, "-f", "json", *args)
    assert p.returncode == 2, p.stderr
    err = json.loads(p.stderr.splitlines()[-1])["error"]
    assert err["code"] == "usage"
    if args[0] != "inventory":
        assert "--ring" in err["message"]
    assert site.requests == []


def test_survey_names_its_rings(site):
    p = ringctl(site, "survey", "--ring", "pod-a", "--ring=pod-c")
    assert p.returncode == 0, p.stderr
    assert ring_field(sent(site, SURVEY_REQUEST)[-1]) == ["pod-a", "pod-c"]
    p = ringctl(site, "survey")
    assert ring_field(sent(site, SURVEY_REQUEST)[-1]) == []


def test_checks_need_a_ring(site, tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("n1\nn2\nn3\nn4\n")
    for args in (["check", "ranks", str(hosts)], ["check", "all"],
                 ["check", "nccl-env", "-"]):
        p = ringctl(site, "-f", "json", *args, stdin="NCCL_DEBUG=INFO\n")
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        err = json.loads(p.stderr.splitlines()[-1])["error"]
        assert err["code"] == "ring_required", (args, err)
    p = ringctl(site, "check", "ranks", str(hosts), "--ring", "pod-a")
    assert ring_field(sent(site, STATUS_REQUEST)[-1]) == ["pod-a"]
    assert "ring_required" not in p.stderr


def test_history_and_explain_send_the_ring(site):
    ringctl(site, "history", "n1-n2", "--ring", "pod-a")
    assert ring_field(sent(site, HISTORY_REQUEST)[-1], 6) == ["pod-a"]
    ringctl(site, "explain", "--ring", "pod-c", "n9-n10")
    assert ring_field(sent(site, STATUS_REQUEST)[0]) == ["pod-c"]


# ------------------------------------------------- a real site of two rings

def test_two_real_rings(root, ringd_bin, tmp_path):
    """Two 3-node rings (n1-n2-n3, n4-n5-n6) under one coordinator: status
    leads with both, ranks needs --ring and then gives that ring's order in
    every format, the checks likewise; a cable cut in ring-n4 puts its
    details under status, ring-n1 stays a line of the table."""
    order = ["n1", "n2", "n3", "n4", "n5", "n6"]
    c = cl.Cluster(order, new_prefix(),
                   extra_cables=[("n1", "n3"), ("n4", "n6")])
    with ringd_up(c, ringd_bin, coord_extra=NO_AUTO_SURVEY + SHORT_SURVEY,
                  agent_extra=FAST_AGENT) as r:
        c.cut("n3", "n4")
        c.cut("n6", "n1")
        r.setup_pki()
        r.start_all(timeout=20)
        cl.wait_for(lambda: neighbours_heard(r, order), 60,
                    "every node to hear its two neighbours")
        p = r.ringctl("survey", "--wait", fmt=None, timeout_s=60)
        assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)

        p = r.ringctl("status", fmt=None)
        assert p.returncode == 0, (p.stdout, p.stderr)
        lines = p.stdout.splitlines()
        assert all(len(x) <= 100 for x in lines), p.stdout
        rows = [x.split() for x in lines if x.startswith("  ring-n")]
        assert [x[0] for x in rows] == ["ring-n1", "ring-n4"], p.stdout
        assert all(x[1] == "ring" and x[2] == "healthy" and x[3] == "3"
                   for x in rows), p.stdout
        assert "details: every ring is healthy" in lines, p.stdout
        assert "nodes: 6, listed by 'ringctl status -v'" in lines

        # ranks: which ring?
        p = r.ringctl("ranks")
        assert p.returncode == 1 and p.stdout == "", (p.stdout, p.stderr)
        err = json.loads(p.stderr.splitlines()[-1])["notice"]
        assert (err["code"], err["value"]) == ("ring_required",
                                                "ring-n1,ring-n4"), err
        p = r.ringctl("ranks", "--ring", "ring-n4")
        assert p.returncode == 0, p.stderr
        assert [k["node"] for k in json.loads(p.stdout)["ranks"]] == [
            "n4", "n5", "n6"]
        for fmt in ("hostfile", "rankfile", "torchrun", "env"):
            p = r.ringctl("ranks", "--ring=ring-n1", fmt=fmt)
            assert p.returncode == 0, (fmt, p.stderr)
            assert c.node("n1").mgmt_addr in p.stdout, (fmt, p.stdout)
            for n in ("n4", "n5", "n6"):
                assert c.node(n).mgmt_addr not in p.stdout, (fmt, n,
                                                             p.stdout)
        p = r.ringctl("ranks", "--ring", "pod-z")
        assert p.returncode == 2
        assert "ring-n1" in p.stderr and "ring-n4" in p.stderr, p.stderr

        # A check of one ring's launcher file.
        hosts = tmp_path / "hosts"
        hosts.write_text("n4\nn5\nn6\n")
        p = r.ringctl("check", "ranks", str(hosts))
        assert p.returncode == 2, (p.stdout, p.stderr)
        assert json.loads(p.stderr.splitlines()[-1])["error"]["code"] == \
            "ring_required"
        p = r.ringctl("check", "ranks", str(hosts), "--ring", "ring-n4")
        assert p.returncode == 0, (p.stdout, p.stderr)

        # status --ring: a site of one ring, as before.
        p = r.ringctl("status", "--ring", "ring-n1", fmt=None)
        assert p.returncode == 0, p.stderr
        assert "  RING " not in p.stdout
        assert "order: n1, n2, n3" in p.stdout, p.stdout

        # watch, history and explain of one ring.
        p = r.ringctl("watch", "--ring", "ring-n1", "--count", "0")
        assert p.returncode == 0, p.stderr
        snap = json.loads(p.stdout.splitlines()[0])
        assert snap["kind"] == "snapshot", snap
        assert "ring" in snap, snap  # "" the site's snapshot
        p = r.ringctl("watch", "--ring", "pod-z", "--count", "0")
        assert p.returncode == 2, (p.stdout, p.stderr)
        assert "ring-n1" in p.stderr, p.stderr
        p = r.ringctl("history", "n1-n2", "--ring", "ring-n1")
        assert p.returncode == 0, p.stderr
        p = r.ringctl("history", "n1-n2", "--ring", "ring-n4")
        assert p.returncode == 2, (p.stdout, p.stderr)
        p = r.ringctl("explain", "--ring", "ring-n4", "n5-n6")
        assert p.returncode in (0, 1), p.stderr
        assert json.loads(p.stdout)["edge"] == "n5-n6", p.stdout

        # A survey of one ring, waited for: that ring's status.
        p = r.ringctl("survey", "--ring", "ring-n1", "--wait", timeout_s=60)
        assert p.returncode == 0, (p.stdout, p.stderr)
        top = json.loads(p.stdout)["topology"]
        assert (top["kind"], top["order"]) == ("ring", ["n1", "n2", "n3"])

        # One ring cut: its details under status, the other a row.
        c.cut("n4", "n5")

        def ring_n4_hurt():
            doc = json.loads(r.ringctl("status").stdout)
            x = {v["id"]: v for v in doc["topology"]["rings"]}["ring-n4"]
            return x["health"] != "healthy" or not x["order_valid"]
        cl.wait_for(ring_n4_hurt, 60, "ring-n4 to see its cut cable")
        p = r.ringctl("status", fmt=None)
        assert p.returncode == 1, (p.stdout, p.stderr)
        lines = p.stdout.splitlines()
        assert all(len(x) <= 100 for x in lines), p.stdout
        assert "ring ring-n4:" in lines and "ring ring-n1:" not in lines, \
            p.stdout
        p = r.ringctl("ranks", "--ring", "ring-n1", fmt="hostfile")
        assert p.returncode == 0, p.stderr
