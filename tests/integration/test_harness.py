"""The emulated cluster itself, without ringd: the wiring must behave like
the reference cluster's ring (neighbours reachable, diagonals not, LLDP crosses a
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


# ---------------------------------------------------------------- twin mode
# GB10 nodes: one adapter, ports p0/p1, each port two functions ("twins")
# on two PCIe links; see cluster.py's docstring.
TWIN_R = 200  # Mbit/s per emulated PCIe link and direction
ETH_P_TWINTEST = 0x88B5  # IEEE local experimental ethertype


@pytest.fixture(scope="module")
def twins4(root):
    c = cl.Cluster(ORDER, new_prefix(), twins=True, pcie_mbit=TWIN_R)
    c.up()
    yield c
    c.down()


def _mac(text):
    return bytes.fromhex(text.replace(":", ""))


def _flow(c, node, ifname, reverse=False):
    """A TCP flow from node's function ifname to its intended peer (or
    back, with reverse), for Cluster.tcp_goodput."""
    peer, peer_if = c.peer_function(node, ifname)
    f = (node, c.node(node).ports[ifname].addr, peer,
         c.node(peer).ports[peer_if].addr)
    return (f[2], f[3], f[0], f[1]) if reverse else f


def test_twins_layout(twins4):
    c = twins4
    assert [p.name for p in c.functions("n1")] == [
        "enp1s0f0np0", "enp1s0f1np1", "enP2p1s0f0np0", "enP2p1s0f1np1"]
    assert [p.name for p in c.link_functions("n1", 0)] == [
        "enp1s0f0np0", "enp1s0f1np1"]
    assert c.twin("n1", "enp1s0f1np1").name == "enP2p1s0f1np1"
    # Physical cable k: order[k] p1 -- order[k+1] p0, the halves of one
    # PCIe link meeting.
    pairs = [(cb.phys, cb.link, cb.a, cb.a_port, cb.b, cb.b_port)
             for cb in c.cables]
    assert pairs[:4] == [
        (1, 0, "n1", "enp1s0f1np1", "n2", "enp1s0f0np0"),
        (1, 2, "n1", "enP2p1s0f1np1", "n2", "enP2p1s0f0np0"),
        (2, 0, "n2", "enp1s0f1np1", "n4", "enp1s0f0np0"),
        (2, 2, "n2", "enP2p1s0f1np1", "n4", "enP2p1s0f0np0")]
    assert len(c.cables) == 8
    assert c.peer_function("n3", "enP2p1s0f1np1") == ("n1", "enP2p1s0f0np0")
    macs = set()
    for name in ORDER:
        out = subprocess.run(["ip", "-n", c.ns(name), "-j", "addr", "show"],
                             capture_output=True, text=True,
                             check=True).stdout
        links = {i["ifname"]: i for i in json.loads(out)}
        for p in c.functions(name):
            info = links[p.name]
            assert info["mtu"] == 9000, info
            assert info["address"] == p.mac
            assert {"UP", "LOWER_UP"} <= set(info["flags"]), info
            inet = [(a["local"], a["prefixlen"])
                    for a in info.get("addr_info", [])
                    if a["family"] == "inet"]
            assert inet == [(p.addr, 30)], (name, p.name, inet)
            macs.add(p.mac)
        # The PCIe links' transmit budgets: ifbs, no address.
        for dev in ("pcie0", "pcie2"):
            assert not [a for a in links[dev].get("addr_info", [])
                        if a["family"] == "inet"], links[dev]
        assert c.node(name).unaddressed == []
    assert len(macs) == 16
    # Link 0 pairs keep the plain ring's subnets, link 2 pairs 10.189.k.
    assert c.cables[0].subnet == "10.89.1.0/30"
    assert c.cables[1].subnet == "10.189.1.0/30"
    assert c.data_addr("n1", "n2") == "10.89.1.1"
    assert c.data_addr("n1", "n2", which=1) == "10.189.1.1"
    for link in (0, 2):
        for d in ("tx", "rx"):
            assert "rate %dMbit" % TWIN_R in c.pcie_class("n2", link, d)


def test_twins_unicast_and_arp_reach_the_intended_function(twins4):
    """TCP over every intended pair arrives from the right address, and
    ARP resolves the peer function's own MAC on the right netdev."""
    c = twins4
    for cb in c.cables:
        for node, port, addr, peer, peer_port, peer_addr in (
                (cb.a, cb.a_port, cb.a_addr, cb.b, cb.b_port, cb.b_addr),
                (cb.b, cb.b_port, cb.b_addr, cb.a, cb.a_port, cb.a_addr)):
            lst = c.socket(peer, bind=(peer_addr, 0))
            cli = c.socket(node, bind=(addr, 0))
            try:
                lst.listen(1)
                lst.settimeout(3)
                cli.settimeout(3)
                cli.connect((peer_addr, lst.getsockname()[1]))
                conn, src = lst.accept()
                conn.close()
                assert src[0] == addr, (cb, src)
            finally:
                cli.close()
                lst.close()
            out = subprocess.run(["ip", "-n", c.ns(node), "-j", "neigh",
                                  "show", "dev", port], capture_output=True,
                                 text=True, check=True).stdout
            neigh = {n["dst"]: n.get("lladdr") for n in json.loads(out)
                     if ":" not in n["dst"]}
            want = c.node(peer).ports[peer_port].mac
            assert neigh == {peer_addr: want}, (node, port, neigh)


def test_twins_no_path_to_cross_twin_or_diagonal(twins4):
    c = twins4
    # A function's peer's other twin sits in the other link's subnet: the
    # route goes out of this function's own twin, never across.
    for node, ifname in (("n1", "enp1s0f1np1"), ("n2", "enP2p1s0f0np0")):
        peer, peer_if = c.peer_function(node, ifname)
        cross = c.twin(peer, peer_if)
        route = c.exec(node, ["ip", "route", "get", cross.addr],
                       check=True).stdout
        assert "dev %s" % c.twin(node, ifname).name in route, route
    for a, b in (("n1", "n4"), ("n2", "n3")):
        for p in c.functions(b):
            assert not c.ping(a, p.addr, timeout=0.3), (a, b, p)


def _frames_seen(c, sends, ethertype, timeout=2.0):
    """Send raw frames and see where they arrive. sends: [(node, ifname,
    dst mac bytes)]; every function of every node listens for ethertype.
    Returns {(node, ifname) sent from: {(node, ifname) received on}}."""
    rx = {}
    tx = {}
    try:
        for name in c.order:
            for p in c.functions(name):
                rx[(name, p.name)] = c.socket(
                    name, socket.AF_PACKET, socket.SOCK_RAW,
                    socket.htons(ethertype), bind=(p.name, ethertype))
        tags = {}
        for node, ifname, dst in sends:
            s = tx[(node, ifname)] = c.socket(
                node, socket.AF_PACKET, socket.SOCK_RAW, 0,
                bind=(ifname, 0))
            tag = ("twin-%d-%s-%s" % (os.getpid(), node, ifname)).encode()
            tags[tag] = (node, ifname)
            frame = dst + s.getsockname()[4] + ethertype.to_bytes(2, "big") \
                + tag
            s.send(frame + b"\0" * max(0, 60 - len(frame)))
        seen = {v: set() for v in tags.values()}
        deadline = time.monotonic() + timeout
        pending = dict(rx)
        # Everything is sent: collect until quiet (veth does not lose).
        while pending and time.monotonic() < deadline:
            for key, s in list(pending.items()):
                data = cl.recv_by(s, min(deadline, time.monotonic() + 0.05),
                                  lambda: s.recv(2048))
                if data is None:
                    continue
                for tag, src in tags.items():
                    if tag in data:
                        seen[src].add(key)
        return seen
    finally:
        for s in list(rx.values()) + list(tx.values()):
            s.close()


def test_twins_lldp_reaches_only_the_intended_twin(twins4):
    """A multicast LLDP frame sent on any function arrives on its intended
    peer function and nowhere else: not on the peer's other twin, not on
    the sender's other cable's neighbour."""
    c = twins4
    sends = [(n, p.name, LLDP_MCAST) for n in c.order
             for p in c.functions(n)]
    seen = _frames_seen(c, sends, ETH_P_LLDP)
    for (node, ifname), got in seen.items():
        assert got == {c.peer_function(node, ifname)}, (node, ifname, got)


def test_twins_unicast_to_the_cross_twin_never_gets_there(twins4):
    """Addressed to the peer's other twin's MAC, a frame still only
    reaches the function at the other end of this one's wire."""
    c = twins4
    sends = []
    for node in ("n1", "n4"):
        for p in c.functions(node):
            peer, peer_if = c.peer_function(node, p.name)
            sends.append((node, p.name, _mac(c.twin(peer, peer_if).mac)))
    seen = _frames_seen(c, sends, ETH_P_TWINTEST)
    for (node, ifname), got in seen.items():
        assert got == {c.peer_function(node, ifname)}, (node, ifname, got)


def test_twins_cut_one_function_pair_or_the_whole_cable(twins4):
    c = twins4
    link0, link2 = c.cables_between("n2", "n4")
    assert (link0.link, link2.link) == (0, 2)

    def carrier(node, ifname):
        return "LOWER_UP" in c.link_flags(node, ifname)
    c.cut("n2", "n4", which=1)
    try:
        assert not carrier("n2", link2.a_port)
        assert not carrier("n4", link2.b_port)
        assert carrier("n2", link0.a_port) and carrier("n4", link0.b_port)
        assert c.ping("n2", link0.b_addr)
        assert not c.ping("n2", link2.b_addr, timeout=0.3)
    finally:
        c.restore("n2", "n4", which=1)
    c.cut("n2", "n4")
    try:
        for cb in (link0, link2):
            assert not carrier("n2", cb.a_port)
            assert not carrier("n4", cb.b_port)
        assert carrier("n2", "enp1s0f0np0")  # the other cable
    finally:
        c.restore("n2", "n4")
    for cb in (link0, link2):
        cl.wait_for(lambda: c.ping("n2", cb.b_addr, timeout=0.5), 5,
                    "n2 -> n4 on link %d after restore" % cb.link)


def test_twins_pcie_link_budget_is_shared(twins4):
    """The two functions of one PCIe link (one per cable) share R each
    way; twins of one port (two links) get R each; set_pcie_budget makes
    one link the bottleneck. Loose bounds: behaviour, not timings."""
    c = twins4
    r = TWIN_R
    # n2 sends on both link 0 functions: one to n1, one to n4.
    shared_tx = c.tcp_goodput([_flow(c, "n2", "enp1s0f0np0"),
                               _flow(c, "n2", "enp1s0f1np1")])
    # n2 receives on both link 0 functions.
    shared_rx = c.tcp_goodput([_flow(c, "n2", "enp1s0f0np0", reverse=True),
                               _flow(c, "n2", "enp1s0f1np1", reverse=True)])
    # n2 sends to n4 on both twins of port p1 (links 0 and 2).
    twins = c.tcp_goodput([_flow(c, "n2", "enp1s0f1np1"),
                           _flow(c, "n2", "enP2p1s0f1np1")])
    assert all(x > 0.2 * r for x in shared_tx + shared_rx + twins), (
        shared_tx, shared_rx, twins)
    assert sum(shared_tx) < 1.4 * r, shared_tx
    assert sum(shared_rx) < 1.4 * r, shared_rx
    assert sum(twins) > 1.5 * r, twins
    c.set_pcie_budget("n2", 2, r // 4)
    try:
        assert "rate %dMbit" % (r // 4) in c.pcie_class("n2", 2, "tx")
        assert "rate %dMbit" % (r // 4) in c.pcie_class("n2", 2, "rx")
        slow = c.tcp_goodput([_flow(c, "n2", "enP2p1s0f1np1")])
        fast = c.tcp_goodput([_flow(c, "n2", "enp1s0f1np1")])
    finally:
        c.set_pcie_budget("n2", 2, r)
    assert slow[0] < 0.5 * r, slow
    assert fast[0] > 0.7 * r, fast


def test_twins_single_addressed(make_cluster):
    """The reference cluster as measured: only link 0's functions
    addressed; link 2's twins up with carrier and no address. Unshaped by
    default (no pcie_mbit)."""
    c = make_cluster(["n1", "n2", "n3"], twins=True,
                     twin_addressing="single")
    for name in c.order:
        assert c.node(name).unaddressed == ["enP2p1s0f0np0",
                                            "enP2p1s0f1np1"]
        for p in c.link_functions(name, 2):
            assert {"UP", "LOWER_UP"} <= c.link_flags(name, p.name)
            assert [a for a in addrs(c, name, p.name) if a[0] == "inet"] == []
        assert "htb" not in c.pcie_class(name, 0)
    for cb in c.cables:
        if cb.link == 0:
            assert c.ping(cb.a, cb.b_addr) and c.ping(cb.b, cb.a_addr)
        else:
            assert cb.a_addr is None and cb.subnet is None
    # Beacons still cross on the unaddressed twins.
    seen = _frames_seen(c, [("n2", "enP2p1s0f1np1", LLDP_MCAST)], ETH_P_LLDP)
    assert seen[("n2", "enP2p1s0f1np1")] == {("n3", "enP2p1s0f0np0")}


def test_twins_cross_option_hears_beacons_on_both_twins(make_cluster):
    """twin_cross=True: a NIC where one twin's frames reach both twins of
    the peer port; unicast IP still works on the intended pairs."""
    c = make_cluster(["n1", "n2", "n3"], twins=True, twin_cross=True)
    seen = _frames_seen(c, [("n1", "enp1s0f1np1", LLDP_MCAST),
                            ("n2", "enP2p1s0f0np0", LLDP_MCAST)], ETH_P_LLDP)
    assert seen[("n1", "enp1s0f1np1")] == {("n2", "enp1s0f0np0"),
                                           ("n2", "enP2p1s0f0np0")}
    assert seen[("n2", "enP2p1s0f0np0")] == {("n1", "enP2p1s0f1np1"),
                                             ("n1", "enp1s0f1np1")}
    for cb in c.cables:
        assert c.ping(cb.a, cb.b_addr)


def test_twins_options_are_checked(root):
    with pytest.raises(ValueError):
        cl.Cluster(ORDER, new_prefix(), twins=True, switch=True)
    with pytest.raises(ValueError):
        cl.Cluster(ORDER, new_prefix(), pcie_mbit=100)
    with pytest.raises(ValueError):
        cl.Cluster(ORDER, new_prefix(), twins=True, twin_addressing="triple")
    c = cl.Cluster(ORDER, new_prefix())
    with pytest.raises(cl.ClusterError):
        c.functions("n1")
