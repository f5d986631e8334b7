"""The emulated cluster itself, without ringd: the wiring must behave like
the field notes' ring (neighbours reachable, diagonals not, LLDP crosses a
cable, cuts drop carrier) or every later test proves nothing."""

import json
import os
import socket
import subprocess
import time

import pytest

import cluster as cl
from conftest import new_prefix

ORDER = ["n1", "n2", "n4", "n3"]  # physical ring 1-2-4-3-1
ETH_P_LLDP = 0x88CC
LLDP_MCAST = bytes.fromhex("0180c200000e")


@pytest.fixture(scope="module")
def ring4(root):
    c = cl.Cluster(ORDER, new_prefix(), extra_unaddressed_ports=1)
    c.up()
    yield c
    c.down()


def addrs(c, node, ifname):
    out = subprocess.run(["ip", "-n", c.ns(node), "-j", "addr", "show", "dev",
                          ifname], capture_output=True, text=True,
                         check=True).stdout
    info = json.loads(out)[0]
    return [(a["family"], a["local"], a["prefixlen"])
            for a in info.get("addr_info", [])]


def test_ring_wiring_follows_physical_order(ring4):
    c = ring4
    pairs = [(cb.a, cb.a_port, cb.b, cb.b_port) for cb in c.cables]
    assert pairs == [("n1", "eth2", "n2", "eth1"), ("n2", "eth2", "n4", "eth1"),
                     ("n4", "eth2", "n3", "eth1"), ("n3", "eth2", "n1", "eth1")]
    assert c.neighbours("n1") == ["n3", "n2"]  # eth1 faces n3, eth2 n2
    assert sorted(map(sorted, c.diagonals())) == [["n1", "n4"], ["n2", "n3"]]
    for name in ORDER:
        n = c.node(name)
        assert n.mgmt_addr == "10.88.0.%d" % (10 + int(name[1:]))
        for port in ("eth1", "eth2"):
            p = n.ports[port]
            assert ("inet", p.addr, 30) in addrs(c, name, port)


def test_neighbours_answer_ping_on_data_addresses(ring4):
    c = ring4
    for cb in c.cables:
        assert c.ping(cb.a, cb.b_addr), "%s -> %s %s" % (cb.a, cb.b, cb.b_addr)
        assert c.ping(cb.b, cb.a_addr), "%s -> %s %s" % (cb.b, cb.a, cb.a_addr)


def test_diagonals_have_no_data_path(ring4):
    c = ring4
    for a, b in (("n1", "n4"), ("n4", "n1"), ("n2", "n3"), ("n3", "n2")):
        for port in ("eth1", "eth2"):
            target = c.node(b).ports[port].addr
            route = c.exec(a, ["ip", "route", "get", target], check=True)
            assert "via %s dev mgmt0" % c.GATEWAY in route.stdout, route.stdout
            assert not c.ping(a, target, timeout=0.5), \
                "%s reached diagonal %s at %s" % (a, b, target)


def test_management_network(ring4):
    c = ring4
    for name in ORDER:
        assert c.ping(name, c.COORD_ADDR)
        assert c.ping(name, c.GATEWAY)
        other = c.node(ORDER[(ORDER.index(name) + 2) % 4]).mgmt_addr
        assert c.ping(name, other)  # diagonals meet on management
    # Names resolve from /etc/netns/<ns>/hosts, not the host's resolver.
    p = c.exec("n1", ["getent", "hosts", "coordinator"], check=True)
    assert p.stdout.split()[0] == c.COORD_ADDR
    p = c.exec("coord", ["getent", "hosts", "n4"], check=True)
    assert p.stdout.split()[0] == c.node("n4").mgmt_addr


def test_sysctls(ring4):
    c = ring4

    def get(where, key):
        p = c.exec(where, ["sysctl", "-n", key], check=True)
        return p.stdout.strip()
    for where in ("n1", "coord"):
        assert get(where, "net.ipv4.conf.all.rp_filter") == "0"
        assert get(where, "net.ipv4.conf.default.rp_filter") == "0"
        assert get(where, "net.ipv6.conf.all.accept_dad") == "0"
        assert get(where, "net.ipv6.conf.eth1.accept_dad" if where == "n1"
                   else "net.ipv6.conf.mgmt0.accept_dad") == "0"
    for where in ("gw", "br", "wire"):
        assert get(where, "net.ipv6.conf.all.disable_ipv6") == "1"
    assert get("gw", "net.ipv4.ip_forward") == "0"


def test_extra_ports_up_without_address(ring4):
    c = ring4
    for name in ORDER:
        assert c.node(name).unaddressed == ["eth3"]
        flags = c.link_flags(name, "eth3")
        assert {"UP", "LOWER_UP"} <= flags, flags
        assert [a for a in addrs(c, name, "eth3") if a[0] == "inet"] == []


def test_cut_drops_carrier_and_restore_brings_it_back(ring4):
    c = ring4
    c.cut("n2", "n4")
    try:
        for node, port in (("n2", "eth2"), ("n4", "eth1")):
            flags = c.link_flags(node, port)
            assert "UP" in flags and "LOWER_UP" not in flags, flags
            out = subprocess.run(["ip", "-n", c.ns(node), "-o", "link", "show",
                                  "dev", port], capture_output=True,
                                 text=True).stdout
            assert "NO-CARRIER" in out, out
        assert not c.ping("n2", c.data_addr("n4", "n2"), timeout=0.3)
        # The other cables are untouched.
        assert "LOWER_UP" in c.link_flags("n2", "eth1")
    finally:
        c.restore("n2", "n4")
    for node, port in (("n2", "eth2"), ("n4", "eth1")):
        cl.wait_for(lambda: "LOWER_UP" in c.link_flags(node, port), 5,
                    "carrier back on %s.%s" % (node, port))
    cl.wait_for(lambda: c.ping("n2", c.data_addr("n4", "n2"), timeout=0.5),
                5, "n2 -> n4 after restore")


def _lldp_frame(src_mac, text):
    payload = text.encode()
    frame = LLDP_MCAST + src_mac + ETH_P_LLDP.to_bytes(2, "big") + payload
    return frame + b"\0" * max(0, 60 - len(frame))


def test_lldp_frame_crosses_a_cable(ring4):
    """A Linux bridge would drop 01:80:c2:00:00:0e; the mirred wire must
    not, and must deliver it only to the far end of that cable."""
    c = ring4
    rx = c.socket("n2", socket.AF_PACKET, socket.SOCK_RAW,
                  socket.htons(ETH_P_LLDP), bind=("eth1", ETH_P_LLDP))
    other = c.socket("n4", socket.AF_PACKET, socket.SOCK_RAW,
                     socket.htons(ETH_P_LLDP), bind=("eth1", ETH_P_LLDP))
    tx = c.socket("n1", socket.AF_PACKET, socket.SOCK_RAW, 0,
                  bind=("eth2", 0))
    try:
        src_mac = tx.getsockname()[4]
        tag = "ringd-lldp-%d" % os.getpid()
        frame = _lldp_frame(src_mac, tag)
        deadline = time.monotonic() + 3
        got = None
        rx.settimeout(0.2)
        while got is None and time.monotonic() < deadline:
            tx.send(frame)
            try:
                while True:
                    data = rx.recv(2048)
                    if tag.encode() in data:
                        got = data
                        break
            except socket.timeout:
                pass
        assert got is not None, "LLDP frame n1.eth2 -> n2.eth1 never arrived"
        assert got[:6] == LLDP_MCAST and got[6:12] == src_mac
        assert got[12:14] == b"\x88\xcc"
        other.setblocking(False)
        try:
            stray = other.recv(2048)
        except BlockingIOError:
            stray = b""
        assert tag.encode() not in stray, "frame leaked to n4"
    finally:
        for s in (rx, other, tx):
            s.close()


def test_shape_installs_tbf_on_the_wire(ring4):
    c = ring4
    c.shape("n1", "n2", "100mbit")
    try:
        for toward in ("n1", "n2"):
            q = c.qdisc("n1", "n2", toward=toward)
            assert "tbf" in q and "rate 100Mbit" in q, q
            assert "burst 128Kb" in q, q
        # Invisible to the nodes: their ports keep their own qdisc.
        out = subprocess.run(["tc", "-n", c.ns("n1"), "qdisc", "show", "dev",
                              "eth2"], capture_output=True, text=True).stdout
        assert "tbf" not in out
        assert c.ping("n1", c.data_addr("n2", "n1"))
    finally:
        c.unshape("n1", "n2")
    assert "tbf" not in c.qdisc("n1", "n2")


def test_one_way_shape(make_cluster):
    c = make_cluster(["n1", "n2"])
    c.shape("n1", "n2", "10mbit", which=0, one_way=True)
    assert "tbf" in c.qdisc("n1", "n2", which=0, toward="n2")
    assert "tbf" not in c.qdisc("n1", "n2", which=0, toward="n1")


def test_switch_mode_everyone_reaches_everyone(make_cluster):
    c = make_cluster(["n1", "n2", "n3", "n4"], switch=True)
    assert c.cables == []
    for a in c.order:
        for b in c.order:
            if a != b:
                assert c.ping(a, c.data_addr(b, a)), "%s -> %s" % (a, b)


def test_two_nodes_have_parallel_cables_and_extra_diagonal(make_cluster):
    c = make_cluster(["n1", "n2"])
    cabs = c.cables_between("n1", "n2")
    assert len(cabs) == 2
    for cb in cabs:
        assert c.ping("n1", cb.addr_of("n2"))
    c.cut("n1", "n2", which=0)
    assert "LOWER_UP" not in c.link_flags("n1", cabs[0].port_of("n1"))
    assert "LOWER_UP" in c.link_flags("n1", cabs[1].port_of("n1"))
    assert c.ping("n1", cabs[1].addr_of("n2"))

    r = make_cluster(["n1", "n2", "n4", "n3"], extra_cables=[("n2", "n3")])
    diag = r.cables_between("n2", "n3")[0]
    assert (diag.a_port, diag.b_port) == ("eth3", "eth3")
    assert r.ping("n2", diag.addr_of("n3"))
    late = r.extra_cable("n1", "n4")  # after up()
    assert r.ping("n4", late.addr_of("n1"))
    assert r.diagonals() == []


def test_sixteen_node_ring_up_and_down(root):
    order = ["n%d" % i for i in range(1, 17)]
    c = cl.Cluster(order, new_prefix(), extra_unaddressed_ports=2)
    t0 = time.monotonic()
    try:
        c.up()
        up_s = time.monotonic() - t0
        assert c.ping("n16", c.data_addr("n1", "n16"))  # the wrap cable
        assert c.ping("n8", c.data_addr("n9", "n8"))
        assert not c.ping("n1", c.data_addr("n3", "n2"), timeout=0.3)
    finally:
        t1 = time.monotonic()
        c.down()
        down_s = time.monotonic() - t1
    assert up_s < 30 and down_s < 30, (up_s, down_s)
    assert not [n for n in cl.list_netns() if n.startswith(c.prefix + "-")]


def test_teardown_is_complete(root):
    c = cl.Cluster(["n1", "n2", "n3"], new_prefix())
    c.up()
    work = c.workdir
    proc = c.spawn("n1", ["sleep", "600"], os.path.join(work, "sleep.log"))
    # A process the harness did not start, inside a namespace, dies too.
    stray = subprocess.Popen(["ip", "netns", "exec", c.ns("n2"), "sleep",
                              "600"], start_new_session=True)
    cl.wait_for(lambda: stray.pid in cl.pids_in_netns([c.ns("n2")]), 5,
                "stray sleep in n2's namespace")
    c.down()
    assert proc.wait(5) is not None
    assert stray.wait(5) is not None
    assert not [n for n in cl.list_netns() if n.startswith(c.prefix + "-")]
    assert not [n for n in os.listdir(cl.NETNS_ETC)
                if n.startswith(c.prefix + "-")]
    assert not os.path.exists(work)
    c.down()  # idempotent


def test_failed_setup_cleans_up(root):
    class Broken(cl.Cluster):
        def _sysctl_jobs(self):
            return super()._sysctl_jobs() + [(self.ns_gw, [("no.such.key",
                                                            1)])]
    c = Broken(["n1", "n2"], new_prefix())
    with pytest.raises(cl.ClusterError):
        c.up()
    assert not [n for n in cl.list_netns() if n.startswith(c.prefix + "-")]
    assert not [n for n in os.listdir(cl.NETNS_ETC)
                if n.startswith(c.prefix + "-")]


def test_cleanup_stale_removes_leftovers(root):
    prefix = new_prefix()
    c = cl.Cluster(["n1", "n2"], prefix)
    c.up()
    stray = subprocess.Popen(["ip", "netns", "exec", c.ns("n1"), "sleep",
                              "600"], start_new_session=True)
    cl.wait_for(lambda: stray.pid in cl.pids_in_netns([c.ns("n1")]), 5,
                "sleep in n1's namespace")
    # Pretend the run crashed: forget the object, clean by prefix.
    removed = cl.cleanup_stale(prefix)
    assert c.ns("n1") in removed
    assert stray.wait(5) is not None
    assert not [n for n in cl.list_netns() if n.startswith(prefix + "-")]
    c.down()


def test_wait_for_names_what_it_waited_for():
    with pytest.raises(TimeoutError, match="the moon"):
        cl.wait_for(lambda: False, 0.1, "the moon")
    assert cl.wait_for(lambda: 42, 1, "x") == 42


def test_sanitizer_reports_are_found(tmp_path):
    clean = tmp_path / "clean.log"
    clean.write_text("12:00 info: all fine\n")
    asan = tmp_path / "asan.log"
    asan.write_text("x\n==1==ERROR: AddressSanitizer: heap-use-after-free\n")
    ubsan = tmp_path / "ubsan.log"
    ubsan.write_text("agent.c:10:5: runtime error: signed integer overflow\n")
    lsan = tmp_path / "lsan.log"
    lsan.write_text("==2==ERROR: LeakSanitizer: detected memory leaks\n")
    found = [p for p, _ in cl.sanitizer_reports(
        [str(clean), str(asan), str(ubsan), str(lsan),
         str(tmp_path / "missing.log")])]
    assert found == [str(asan), str(ubsan), str(lsan)]
