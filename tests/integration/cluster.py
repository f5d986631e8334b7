"""Emulated ring cluster: every node is a network namespace.

Layout (prefix P, e.g. "rgt1234a" or "ringd-demo"):

  P-br     management bridge br0; one veth port per node, gateway, coordinator
  P-gw     management gateway 10.88.0.1 with IP forwarding OFF: nodes'
           default route points here, so data-plane traffic to a node that
           is not a cabled neighbour dies here (as on the real cluster)
  P-coord  the coordinator's namespace, 10.88.0.2
  P-wire   every cable's two wire-side veth ends; tc mirred copies each
           frame from one end to the other (a Linux bridge would swallow
           LLDP's 01:80:c2:00:00:0e); shaping and cuts happen here, out of
           the nodes' sight
  P-<node> one per node: mgmt0 (10.88.0.10+i/16), eth1/eth2 on the ring,
           eth3.. extra ports with carrier but no address, further ethN for
           extra cables

Ring: node order[k].eth2 -- cable k+1 -- order[k+1].eth1 (wrapping). Cable
c is the /30 10.(89 + c//256).(c%256).0: .1 on the eth2 (left) side, .2 on
the eth1 (right) side. A site of several rings (Cluster.site(rings, P))
cables each ring so, its own cables numbered on from the last ring's, all
nodes on the one management bridge. Switch mode puts every node's eth1 on one bridge in
P-wire, subnet 10.87.0.0/16, node i at 10.87.0.10+i.

Twin mode (twins=True) emulates GB10 nodes: one adapter, physical ports p0
and p1, each port exposed as two PCI functions ("twins") on two PCIe x4
links. Per node, four functions named as on GB10:

  link 0 (0000:01:00): enp1s0f0np0 (p0)    enp1s0f1np1 (p1)
  link 2 (0002:01:00): enP2p1s0f0np0 (p0)  enP2p1s0f1np1 (p1)

Each function is its own veth (MTU 9000, MAC 02:1b:<index>:<link>:<port>)
to its own wire end f<i>l<L>p<p>; physical cable k joins order[k]'s p1 to
order[k+1]'s p0, one TwinPair per link (link 0 halves meet, link 2 halves
meet), tc mirred as for plain cables, so each function hears only its
intended peer. A PCIe link's budget, shared by its two functions (one per
cable), is an htb class in an ifb per direction: pcie0/pcie2 in the node's
namespace (every function's egress is redirected there: transmit) and
r<i>l<L> in P-wire (every wire end's egress toward the node: receive).
Addressing "dual" (default): every TwinPair its own /30, link 0 pairs
10.(89+k//256).(k%256).0, link 2 pairs 10.(189+k//256).(k%256).0, .1 on
the p1 side; "single": link 2's twins up with carrier, no address.
twin_cross=True also delivers every frame to the peer port's other twin.
(VLAN devices, flower and act_vlan would be the lighter design; this
kernel has none of them, nor matchall or gact.)

All ip/tc work is batched per namespace (ip -n NS -batch -): each process
costs ~10 ms, so one per namespace keeps 256 nodes near 10 s.
"""

import ctypes
import dataclasses
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

NETNS_RUN = "/run/netns"
NETNS_ETC = "/etc/netns"
MGMT_PREFIX_LEN = 16
MAX_BRIDGE_PORTS = 1000  # a Linux bridge takes at most 1023 ports
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                     "runtime error:")
_NAME_RE = re.compile(r"^[a-z][a-z0-9]{0,15}$")
_RESERVED = {"br", "gw", "coord", "wire"}
CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


class ClusterError(Exception):
    pass


def wait_for(predicate, timeout, what, interval=0.05):
    """Poll predicate until it returns something truthy; return that.

    Raises TimeoutError naming `what` (and the last exception the predicate
    raised, if any) when the deadline passes."""
    deadline = time.monotonic() + timeout
    last_exc = None
    while True:
        try:
            v = predicate()
            if v:
                return v
            last_exc = None
        except Exception as e:  # keep polling; report it at the deadline
            last_exc = e
        if time.monotonic() >= deadline:
            msg = "timed out after %.1fs waiting for %s" % (timeout, what)
            if last_exc is not None:
                msg += " (last error: %r)" % (last_exc,)
            raise TimeoutError(msg)
        time.sleep(interval)


def _ip4(base, offset):
    """base: dotted quad; offset added as a 32-bit integer."""
    a, b, c, d = (int(x) for x in base.split("."))
    v = ((a << 24) | (b << 16) | (c << 8) | d) + offset
    return "%d.%d.%d.%d" % (v >> 24 & 255, v >> 16 & 255, v >> 8 & 255,
                            v & 255)


def _natural_key(s):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


def _run(argv, input=None, timeout=60, check=True):
    p = subprocess.run(argv, input=input, capture_output=True, text=True,
                       timeout=timeout)
    if check and p.returncode != 0:
        raise ClusterError("%s failed (rc %d): %s" % (
            " ".join(argv[:6]), p.returncode, (p.stderr or p.stdout).strip()))
    return p


def _batches(jobs, timeout=120):
    """Run many `cmd -batch -` processes at once. jobs: [(argv, text)]."""
    procs = []
    try:
        for argv, text in jobs:
            p = subprocess.Popen(argv, stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            procs.append((argv, text, p))
        errors = []
        for argv, text, p in procs:
            out, err = p.communicate(text, timeout=timeout)
            if p.returncode != 0:
                errors.append("%s: rc %d: %s" % (" ".join(argv), p.returncode,
                                                 (err or out).strip()))
        if errors:
            raise ClusterError("; ".join(errors[:5]))
    finally:
        for _, _, p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


# Writes sysctls inside many namespaces from one helper process (setns per
# namespace) instead of one `ip netns exec sysctl` per namespace.
_SYSCTL_HELPER = r"""
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
jobs = json.load(sys.stdin)
for ns, settings in jobs:
    fd = os.open("/run/netns/" + ns, os.O_RDONLY)
    if libc.setns(fd, 0x40000000) != 0:
        sys.exit("setns %s: %s" % (ns, os.strerror(ctypes.get_errno())))
    os.close(fd)
    for key, val in settings:
        path = "/proc/sys/" + key.replace(".", "/")
        try:
            with open(path, "w") as f:
                f.write(str(val))
        except OSError as e:
            sys.exit("%s: %s=%s: %s" % (ns, key, val, e))
"""


def set_sysctls(jobs):
    """jobs: [(netns, [(key, value), ...]), ...]"""
    if not jobs:
        return
    _run([sys.executable, "-c", _SYSCTL_HELPER], input=json.dumps(jobs))


def list_netns():
    try:
        return sorted(os.listdir(NETNS_RUN))
    except FileNotFoundError:
        return []


def _netns_ids(names):
    ids = {}
    for n in names:
        try:
            st = os.stat(os.path.join(NETNS_RUN, n))
            ids[(st.st_dev, st.st_ino)] = n
        except OSError:
            pass
    return ids


def pids_in_netns(names):
    """{pid: netns} for every process living in one of the named netns."""
    ids = _netns_ids(names)
    found = {}
    if not ids:
        return found
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            st = os.stat("/proc/%s/ns/net" % d)
        except OSError:
            continue
        ns = ids.get((st.st_dev, st.st_ino))
        if ns is not None:
            found[int(d)] = ns
    return found


def _stopped(pid):
    """True if pid is stopped (SIGSTOP, job control or a tracer)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("T", "t")
    except (OSError, IndexError):
        return False


def terminate(pid, group=False):
    """SIGTERM, continuing a stopped process first. Never SIGCONT after
    SIGTERM: one that lands while LeakSanitizer stops the world at exit
    can leave the dying daemon hung for good (seen with the ASan
    coordinator: its tracer waits for a thread that never stops)."""
    kill = os.killpg if group else os.kill
    for sig in ((signal.SIGCONT,) if _stopped(pid) else ()) + \
            (signal.SIGTERM,):
        try:
            kill(pid, sig)
        except OSError:
            pass


def _kill_pids(pids, grace=2.0):
    """SIGTERM (a stopped one continued first), then SIGKILL after grace."""
    pids = [p for p in pids if p != os.getpid()]
    for p in pids:
        terminate(p)
    deadline = time.monotonic() + grace
    while pids and time.monotonic() < deadline:
        pids = [p for p in pids if _pid_alive(p)]
        time.sleep(0.02)
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass


def _pid_alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
    except OSError:
        return False
    # A zombie is dead for our purposes (its parent reaps it).
    return st[st.rfind(")") + 2:][:1] != "Z"


def remove_netns(names):
    """Kill everything inside, delete the namespaces and their /etc/netns."""
    names = [n for n in names]
    existing = set(list_netns())
    live = [n for n in names if n in existing]
    if live:
        _kill_pids(list(pids_in_netns(live)), grace=1.0)
        text = "".join("netns del %s\n" % n for n in live)
        # -force: keep going past a namespace that vanished meanwhile.
        _run(["ip", "-force", "-batch", "-"], input=text, check=False)
        left = [n for n in live if os.path.exists(os.path.join(NETNS_RUN, n))]
        for n in left:  # e.g. busy mount: one more try, one by one
            _run(["ip", "netns", "del", n], check=False)
    for n in names:
        shutil.rmtree(os.path.join(NETNS_ETC, n), ignore_errors=True)


def cleanup_stale(prefix):
    """Remove every namespace named `prefix-*` (and its /etc/netns dir),
    killing the processes inside: leftovers of a crashed run."""
    pat = prefix + "-"
    names = [n for n in list_netns() if n.startswith(pat)]
    try:
        names += [n for n in os.listdir(NETNS_ETC)
                  if n.startswith(pat) and n not in names]
    except FileNotFoundError:
        pass
    remove_netns(names)
    return names


def cleanup_dead_test_clusters(base="rgt"):
    """Remove test clusters (`<base><pid><tag>-*`) whose pytest process is
    gone; never touches a concurrently running test session."""
    pat = re.compile(r"^%s(\d+)[a-z]*-" % re.escape(base))
    dead = set()
    cands = list_netns()
    try:
        cands += os.listdir(NETNS_ETC)
    except FileNotFoundError:
        pass
    for n in cands:
        m = pat.match(n)
        if m and not _pid_alive(int(m.group(1))):
            dead.add(n)
    remove_netns(sorted(dead))
    # Their work dirs (mkdtemp "ringd-<prefix>-*" under the temp dir).
    tmp = tempfile.gettempdir()
    wpat = re.compile(r"^ringd-%s(\d+)[a-z]*-" % re.escape(base))
    for d in os.listdir(tmp):
        m = wpat.match(d)
        if m and not _pid_alive(int(m.group(1))):
            shutil.rmtree(os.path.join(tmp, d), ignore_errors=True)
            dead.add(d)
    return sorted(dead)


# eq=False: a port is itself (hashable by identity); its cable refers back.
@dataclasses.dataclass(eq=False, repr=False)
class Port:
    node: str
    name: str
    addr: object = None
    plen: object = None
    cable: object = None
    wire_end: object = None
    # Twin mode only: the emulated PCIe link (0 or 2), the physical port
    # (0 for p0, 1 for p1) and the function's own MAC.
    link: object = None
    phys: object = None
    mac: object = None

    def __repr__(self):
        return "Port(%s.%s %s)" % (self.node, self.name, self.addr)


class Cable:
    """A point-to-point cable: a.a_port <-> wire ns <-> b.b_port."""

    def __init__(self, cid, a, a_port, b, b_port):
        self.id = cid
        self.a, self.a_port, self.b, self.b_port = a, a_port, b, b_port
        base = "10.%d.%d.0" % (89 + cid // 256, cid % 256)
        self.subnet = base + "/30"
        self.a_addr = _ip4(base, 1)
        self.b_addr = _ip4(base, 2)
        # Wire-side ends: frames leaving wire_a's egress reach node a.
        self.wire_a = "c%da" % cid
        self.wire_b = "c%db" % cid
        self.cut_state = False

    def ends(self):
        return ((self.a, self.a_port, self.a_addr, self.wire_a),
                (self.b, self.b_port, self.b_addr, self.wire_b))

    def addr_of(self, node):
        return self.a_addr if node == self.a else self.b_addr

    def port_of(self, node):
        return self.a_port if node == self.a else self.b_port

    def wire_toward(self, node):
        """The wire end whose egress leads to node."""
        return self.wire_a if node == self.a else self.wire_b

    def __repr__(self):
        return "Cable(%d %s.%s-%s.%s)" % (self.id, self.a, self.a_port,
                                          self.b, self.b_port)


class TwinPair(Cable):
    """Twin mode: one intended pair of functions, a's port p1 twin on PCIe
    link `link` <-> b's port p0 twin on the same link. `phys` numbers the
    physical cable (1-based, as a plain ring's cables); each physical cable
    is two TwinPairs (link 0 and link 2). Addresses: link 0 pairs use the
    plain ring's /30 10.(89+k//256).(k%256).0, link 2 pairs
    10.(189+k//256).(k%256).0; .1 on a (p1), .2 on b (p0). Unaddressed
    pairs (single addressing, link 2) have no addresses."""

    def __init__(self, cid, phys, link, a, a_port, b, b_port, wire_a,
                 wire_b, addressed=True):
        super().__init__(cid, a, a_port, b, b_port)
        self.phys = phys
        self.link = link
        base = "10.%d.%d.0" % ((89 if link == 0 else 189) + phys // 256,
                               phys % 256)
        self.subnet = base + "/30" if addressed else None
        self.a_addr = _ip4(base, 1) if addressed else None
        self.b_addr = _ip4(base, 2) if addressed else None
        self.wire_a = wire_a
        self.wire_b = wire_b

    def __repr__(self):
        return "TwinPair(%d cable %d link %d %s.%s-%s.%s)" % (
            self.id, self.phys, self.link, self.a, self.a_port, self.b,
            self.b_port)


# GB10 netdev names of the four functions, by (PCIe link, physical port):
# functions .0/.1 of 0000:01:00 ("link 0") are halves of p0 and p1, and so
# are those of 0002:01:00 ("link 2").
TWIN_NAMES = {(0, 0): "enp1s0f0np0", (0, 1): "enp1s0f1np1",
              (2, 0): "enP2p1s0f0np0", (2, 1): "enP2p1s0f1np1"}
TWIN_LINKS = (0, 2)
PCIE_LINK_ADDR = {0: "0000:01:00", 2: "0002:01:00"}
TWIN_MTU = 9000


def twin_mac(index, link, phys):
    """A function's MAC: locally administered, node index, link, port."""
    return "02:1b:%02x:%02x:%02x:%02x" % (index >> 8 & 255, index & 255, link,
                                           phys)


class Node:
    def __init__(self, name, index, ns, mgmt_addr):
        self.name = name
        self.index = index
        self.ns = ns
        self.mgmt_addr = mgmt_addr
        self.ports = {}  # ifname -> Port (data ports, not mgmt0)
        self.next_port = 1

    def new_port_name(self):
        n = "eth%d" % self.next_port
        self.next_port += 1
        return n

    @property
    def unaddressed(self):
        return sorted((p.name for p in self.ports.values()
                       if p.addr is None), key=_natural_key)

    @property
    def addressed(self):
        return sorted((p.name for p in self.ports.values()
                       if p.addr is not None), key=_natural_key)

    def __repr__(self):
        return "Node(%s %s)" % (self.name, self.ns)


class Proc:
    """A process the harness started inside a namespace."""

    def __init__(self, name, ns, argv, log, popen):
        self.name, self.ns, self.argv, self.log = name, ns, argv, log
        self.popen = popen
        self.pid = popen.pid

    def alive(self):
        return self.popen.poll() is None

    def signal(self, sig):
        try:
            os.killpg(self.pid, sig)
        except ProcessLookupError:
            pass

    def wait(self, timeout):
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, grace=5.0):
        """SIGTERM, then SIGKILL after grace. Returns (exit status, needed
        SIGKILL)."""
        if not self.alive():
            return self.popen.returncode, False
        terminate(self.pid, group=True)
        rc = self.wait(grace)
        if rc is not None:
            return rc, False
        self.signal(signal.SIGKILL)
        return self.wait(10), True

    def __repr__(self):
        return "Proc(%s pid %d in %s)" % (self.name, self.pid, self.ns)


class Cluster:
    MGMT_BASE = "10.88.0.0"
    GATEWAY = "10.88.0.1"
    COORD_ADDR = "10.88.0.2"
    SWITCH_BASE = "10.87.0.0"

    def __init__(self, order, prefix, switch=False, extra_unaddressed_ports=0,
                 extra_cables=(), workdir=None, twins=False,
                 twin_addressing="dual", pcie_mbit=None, cable_mbit=None,
                 twin_cross=False, rings=None):
        if rings is not None:
            order = self._site_order(order, rings, switch, twins)
        if len(order) < 2 and not switch:
            raise ValueError("a ring needs at least 2 nodes")
        if twins and switch:
            raise ValueError("twins and switch are exclusive")
        if twin_addressing not in ("dual", "single"):
            raise ValueError("twin_addressing: 'dual' or 'single', not %r" %
                             (twin_addressing,))
        if (pcie_mbit is not None or cable_mbit is not None or
                twin_cross) and not twins:
            raise ValueError("pcie_mbit, cable_mbit and twin_cross need "
                             "twins=True")
        if len(set(order)) != len(order):
            raise ValueError("duplicate node names in %r" % (order,))
        if len(order) + 2 > MAX_BRIDGE_PORTS:
            raise ValueError("%d nodes: over the bridge's port limit" %
                             len(order))
        for n in order:
            if not _NAME_RE.match(n) or n in _RESERVED:
                raise ValueError("bad node name %r" % n)
        self.prefix = prefix
        self.order = list(order)
        # Every ring in physical order: one, the order, unless a site of
        # several was asked for (rings=).
        self.rings = ([list(r) for r in rings] if rings is not None else
                      [list(order)])
        self.switch = switch
        self.twins = twins
        self.twin_addressing = twin_addressing
        self.twin_cross = twin_cross
        self.cable_mbit = cable_mbit
        # (node, link) -> {"tx": mbit or None, "rx": mbit or None}
        self.pcie_budgets = {}
        self.extra_unaddressed_ports = extra_unaddressed_ports
        self.ns_br = prefix + "-br"
        self.ns_gw = prefix + "-gw"
        self.ns_coord = prefix + "-coord"
        self.ns_wire = prefix + "-wire"
        self.nodes = {}
        for i, name in enumerate(sorted(order, key=_natural_key), 1):
            self.nodes[name] = Node(name, i, "%s-%s" % (prefix, name),
                                    _ip4(self.MGMT_BASE, 10 + i))
        self.cables = []
        self.switch_ports = {}  # node -> Port on the data bridge
        self.procs = []
        self._own_workdir = workdir is None
        self.workdir = workdir
        self._up = False
        self._plan(extra_cables)
        if twins:
            for name in self.order:
                for link in TWIN_LINKS:
                    self.pcie_budgets[(name, link)] = {"tx": pcie_mbit,
                                                       "rx": pcie_mbit}

    @classmethod
    def site(cls, rings, prefix, **kw):
        """A site of several separate rings, each cabled as a single
        ring (cables of its own, eth2 of node k to eth1 of node k+1), all
        nodes on the one management network: rings=[["n1", "n3", "n2",
        "n4"], ["n5", "n8", "n6", "n7"], ...]."""
        return cls(None, prefix, rings=rings, **kw)

    @staticmethod
    def _site_order(order, rings, switch, twins):
        if order is not None:
            raise ValueError("order or rings, not both")
        if switch or twins:
            raise ValueError("rings: plain cabled rings only (no switch "
                             "or twins)")
        if not rings:
            raise ValueError("rings: at least one ring")
        for r in rings:
            if len(r) < 2:
                raise ValueError("a ring needs at least 2 nodes: %r" %
                                 (list(r),))
        return [n for r in rings for n in r]

    # ------------------------------------------------------------ naming
    def node(self, name):
        return self.nodes[name]

    def ns(self, name):
        """Namespace of a node name, or of 'coord', 'gw', 'br', 'wire'."""
        if name in self.nodes:
            return self.nodes[name].ns
        return {"coord": self.ns_coord, "gw": self.ns_gw, "br": self.ns_br,
                "wire": self.ns_wire}.get(name, name)

    def all_netns(self):
        return ([self.ns_br, self.ns_gw, self.ns_coord, self.ns_wire] +
                [self.nodes[n].ns for n in self.order])

    def neighbours(self, name):
        """Nodes cabled to name, in port order, duplicates for parallel
        cables."""
        out = []
        for c in self.cables:
            if c.a == name:
                out.append((c.a_port, c.b))
            elif c.b == name:
                out.append((c.b_port, c.a))
        return [n for _, n in sorted(out, key=lambda t: _natural_key(t[0]))]

    def cables_between(self, a, b):
        return [c for c in self.cables
                if (c.a, c.b) == (a, b) or (c.a, c.b) == (b, a)]

    def _cables(self, a, b, which):
        cs = self.cables_between(a, b)
        if not cs:
            raise ClusterError("no cable between %s and %s" % (a, b))
        if which is None:
            return cs
        return [cs[which]]

    def data_addr(self, node, peer, which=0):
        """node's address on its (which-th) cable toward peer."""
        if self.switch:
            return self.switch_ports[node].addr
        return self._cables(node, peer, which)[0].addr_of(node)

    def ring_of(self, name):
        """The ring (physical order) name is cabled into."""
        for r in self.rings:
            if name in r:
                return r
        raise ClusterError("%s is in no ring" % name)

    def diagonals(self):
        """Pairs of nodes without a cable between them (ring mode; on a
        site of several rings, pairs of different rings too)."""
        out = []
        names = self.order
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                if not self.cables_between(a, b):
                    out.append((a, b))
        return out

    # ------------------------------------------------------------ planning
    def _add_cable(self, a, b):
        cid = len(self.cables) + 1
        na, nb = self.nodes[a], self.nodes[b]
        c = Cable(cid, a, na.new_port_name(), b, nb.new_port_name())
        self.cables.append(c)
        na.ports[c.a_port] = Port(a, c.a_port, c.a_addr, 30, c, c.wire_a)
        nb.ports[c.b_port] = Port(b, c.b_port, c.b_addr, 30, c, c.wire_b)
        return c

    def _plan(self, extra_cables):
        if self.twins:
            self._plan_twins()
        elif self.switch:
            for name in self.order:
                n = self.nodes[name]
                p = Port(name, n.new_port_name(),
                         _ip4(self.SWITCH_BASE, 10 + n.index), 16, None,
                         "s%d" % n.index)
                n.ports[p.name] = p
                self.switch_ports[name] = p
        else:
            # eth1 faces the previous node, eth2 the next one: reserve both
            # names first so eth2 of node k meets eth1 of node k+1. Each
            # ring of a site the same way, cables numbered on across them.
            for ring in self.rings:
                self._plan_ring(ring)
        for name in self.order:
            n = self.nodes[name]
            for _ in range(self.extra_unaddressed_ports):
                pn = n.new_port_name()
                n.ports[pn] = Port(name, pn, None, None, None,
                                   "x%de%s" % (n.index, pn[3:]))
        for a, b in extra_cables:
            self._add_cable(a, b)

    def _plan_ring(self, ring):
        k = len(ring)
        for name in ring:
            self.nodes[name].next_port = 3
        for i in range(k):
            a, b = ring[i], ring[(i + 1) % k]
            cid = len(self.cables) + 1
            c = Cable(cid, a, "eth2", b, "eth1")
            self.cables.append(c)
            self.nodes[a].ports["eth2"] = Port(a, "eth2", c.a_addr, 30, c,
                                               c.wire_a)
            self.nodes[b].ports["eth1"] = Port(b, "eth1", c.b_addr, 30, c,
                                               c.wire_b)

    def _plan_twins(self):
        """Four functions per node (see TWIN_NAMES); physical cable k:
        order[k] port p1 -- order[k+1] port p0, one TwinPair per PCIe link
        (the link 0 halves meet, the link 2 halves meet)."""
        for name in self.order:
            n = self.nodes[name]
            for (link, phys), ifname in sorted(TWIN_NAMES.items()):
                n.ports[ifname] = Port(
                    name, ifname, None, None, None,
                    "f%dl%dp%d" % (n.index, link, phys), link=link,
                    phys=phys, mac=twin_mac(n.index, link, phys))
        k = len(self.order)
        for i in range(k):
            a, b = self.order[i], self.order[(i + 1) % k]
            for link in TWIN_LINKS:
                pa = self.nodes[a].ports[TWIN_NAMES[(link, 1)]]
                pb = self.nodes[b].ports[TWIN_NAMES[(link, 0)]]
                addressed = link == 0 or self.twin_addressing == "dual"
                c = TwinPair(len(self.cables) + 1, i + 1, link, a, pa.name, b,
                             pb.name, pa.wire_end, pb.wire_end, addressed)
                self.cables.append(c)
                pa.cable, pb.cable = c, c
                pa.addr, pb.addr = c.a_addr, c.b_addr
                pa.plen = pb.plen = 30 if addressed else None

    # ------------------------------------------------------------ twins
    def functions(self, node):
        """node's four functions (Ports), GB10 order: link 0's p0, p1, then
        link 2's."""
        self._need_twins()
        ports = self.nodes[node].ports
        return [ports[TWIN_NAMES[k]] for k in sorted(TWIN_NAMES)]

    def function(self, node, phys, link):
        """The function of physical port phys (0, 1) on PCIe link (0, 2)."""
        self._need_twins()
        return self.nodes[node].ports[TWIN_NAMES[(link, phys)]]

    def twin(self, node, ifname):
        """The other function of the same physical port."""
        p = self._function_port(node, ifname)
        return self.function(node, p.phys, 2 - p.link)

    def link_functions(self, node, link):
        """The two functions sharing PCIe link `link` (p0's half, p1's)."""
        return [self.function(node, phys, link) for phys in (0, 1)]

    def peer_function(self, node, ifname):
        """(peer node, peer ifname) at the other end of ifname's intended
        pair."""
        p = self._function_port(node, ifname)
        c = p.cable
        return (c.b, c.b_port) if node == c.a else (c.a, c.a_port)

    def _function_port(self, node, ifname):
        self._need_twins()
        p = self.nodes[node].ports.get(ifname)
        if p is None or p.link is None:
            raise ClusterError("%s has no function %r" % (node, ifname))
        return p

    def _need_twins(self):
        if not self.twins:
            raise ClusterError("not a twin-mode cluster")

    def _rx_ifb(self, node, link):
        """The wire namespace's ifb carrying node's link receive budget."""
        return "r%dl%d" % (self.nodes[node].index, link)

    @staticmethod
    def _tx_ifb(link):
        """The node namespace's ifb carrying the link's transmit budget."""
        return "pcie%d" % link

    @staticmethod
    def _htb_cmds(dev, mbit, old=None):
        """tc commands taking dev's budget from old to mbit (None:
        unshaped). htb cannot be "replaced" by htb: change its class."""
        if mbit is None:
            return ["qdisc del dev %s root" % dev] if old else []
        # One leaf class is the link's budget; quantum set explicitly so
        # htb does not warn about r2q at these rates.
        cls = "dev %s parent 1: classid 1:1 htb rate %dmbit ceil %dmbit " \
            "quantum 65536" % (dev, mbit, mbit)
        if old:
            return ["class change " + cls]
        return ["qdisc add dev %s root handle 1: htb default 1" % dev,
                "class add " + cls]

    def set_pcie_budget(self, node, link, mbit, direction="both"):
        """Shape node's PCIe link `link` to mbit (None: unshaped) in
        direction "tx" (node to wire), "rx" (wire to node) or "both"; both
        functions of the link share it. Works before and after up()."""
        self._need_twins()
        if link not in TWIN_LINKS:
            raise ValueError("link: 0 or 2, not %r" % (link,))
        if direction not in ("tx", "rx", "both"):
            raise ValueError("direction: tx, rx or both, not %r" %
                             (direction,))
        budget = self.pcie_budgets[(node, link)]
        for d in ("tx", "rx") if direction == "both" else (direction,):
            old, budget[d] = budget[d], mbit
            if not self._up:
                continue
            if d == "tx":
                ns, dev = self.nodes[node].ns, self._tx_ifb(link)
            else:
                ns, dev = self.ns_wire, self._rx_ifb(node, link)
            cmds = self._htb_cmds(dev, mbit, old)
            if cmds:
                _run(["tc", "-n", ns, "-batch", "-"],
                     input="\n".join(cmds) + "\n")

    def pcie_class(self, node, link, direction="tx"):
        """`tc -s class show` of node's link budget in that direction."""
        self._need_twins()
        if direction == "tx":
            ns, dev = self.nodes[node].ns, self._tx_ifb(link)
        else:
            ns, dev = self.ns_wire, self._rx_ifb(node, link)
        return _run(["tc", "-n", ns, "-s", "class", "show", "dev",
                     dev]).stdout

    def _twin_wire_cmds(self):
        """ip and tc batches for the wire namespace in twin mode."""
        ip, tc = [], []
        for name in self.order:
            n = self.nodes[name]
            for link in TWIN_LINKS:
                rx = self._rx_ifb(name, link)
                ip += ["link add %s mtu %d type ifb" % (rx, TWIN_MTU),
                       "link set %s up" % rx]
                mbit = self.pcie_budgets[(name, link)]["rx"]
                if mbit:
                    tc += self._htb_cmds(rx, mbit)
            for p in self.functions(name):
                ip += ["link add %s mtu %d type veth peer name %s netns %s "
                       "mtu %d address %s" % (p.wire_end, TWIN_MTU, p.name,
                                              n.ns, TWIN_MTU, p.mac),
                       "link set %s up" % p.wire_end]
        for c in self.cables:
            if not isinstance(c, TwinPair):
                continue
            for src, dst, node in ((c.wire_a, c.wire_b, c.a),
                                   (c.wire_b, c.wire_a, c.b)):
                tc.append("qdisc add dev %s clsact" % src)
                # From the node: to the peer function's wire end (and, with
                # twin_cross, a copy to the peer's other twin as well).
                peer, peer_if = self.peer_function(node, c.port_of(node))
                acts = "action mirred egress redirect dev %s" % dst
                if self.twin_cross:
                    cross = self.twin(peer, peer_if).wire_end
                    acts = ("action mirred egress mirror dev %s %s" %
                            (dst, acts.replace(dst, cross)))
                tc.append("filter add dev %s ingress protocol all prio 1 "
                          "u32 match u32 0 0 %s" % (src, acts))
                # To the node: through its link's receive budget first.
                tc.append("filter add dev %s egress protocol all prio 1 "
                          "u32 match u32 0 0 action mirred egress redirect "
                          "dev %s" % (src, self._rx_ifb(node, c.link)))
        return ip, tc

    def _twin_node_cmds(self, name):
        """(ip, tc) for a node in twin mode: its transmit ifbs, functions'
        addresses, and every function's egress through its link's ifb."""
        ip, tc = [], []
        for link in TWIN_LINKS:
            ip += ["link add %s mtu %d type ifb" % (self._tx_ifb(link),
                                                    TWIN_MTU),
                   "link set %s up" % self._tx_ifb(link)]
            mbit = self.pcie_budgets[(name, link)]["tx"]
            if mbit:
                tc += self._htb_cmds(self._tx_ifb(link), mbit)
        for p in self.functions(name):
            tc += ["qdisc add dev %s clsact" % p.name,
                   "filter add dev %s egress protocol all prio 1 u32 match "
                   "u32 0 0 action mirred egress redirect dev %s" %
                   (p.name, self._tx_ifb(p.link))]
        return ip, tc

    # ------------------------------------------------------------ build
    def _hosts_text(self):
        lines = ["127.0.0.1 localhost", "::1 localhost ip6-localhost",
                 "%s gateway" % self.GATEWAY,
                 "%s coordinator" % self.COORD_ADDR]
        for name in self.order:
            lines.append("%s %s" % (self.nodes[name].mgmt_addr, name))
        return "\n".join(lines) + "\n"

    def _write_etc(self):
        hosts = self._hosts_text()
        for ns in self.all_netns():
            d = os.path.join(NETNS_ETC, ns)
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "hosts"), "w") as f:
                f.write(hosts)
            # Names not in hosts fail at once instead of waiting on the
            # host's resolver, which the namespaces cannot reach.
            with open(os.path.join(d, "resolv.conf"), "w") as f:
                f.write("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")

    def _sysctl_jobs(self):
        base = [("net.ipv4.conf.all.rp_filter", 0),
                ("net.ipv4.conf.default.rp_filter", 0)]
        infra = base + [("net.ipv6.conf.all.disable_ipv6", 1),
                        ("net.ipv6.conf.default.disable_ipv6", 1),
                        ("net.ipv4.ip_forward", 0)]
        host = base + [("net.ipv6.conf.all.accept_dad", 0),
                       ("net.ipv6.conf.default.accept_dad", 0)]
        jobs = [(ns, infra) for ns in (self.ns_br, self.ns_gw, self.ns_wire)]
        jobs.append((self.ns_coord, host))
        jobs += [(self.nodes[n].ns, host) for n in self.order]
        return jobs

    def _wire_cable_cmds(self, c):
        ip, tc = [], []
        for node, port, _, wend in c.ends():
            ip.append("link add %s type veth peer name %s netns %s" %
                      (wend, port, self.nodes[node].ns))
            ip.append("link set %s up" % wend)
        for src, dst in ((c.wire_a, c.wire_b), (c.wire_b, c.wire_a)):
            tc.append("qdisc add dev %s ingress" % src)
            tc.append("filter add dev %s parent ffff: protocol all prio 1 "
                      "u32 match u32 0 0 action mirred egress redirect dev %s"
                      % (src, dst))
        return ip, tc

    def up(self):
        """Build the cluster. On any failure everything built is removed."""
        if self._up:
            return self
        self._up = True  # from here on down() has work to do
        try:
            self._build()
        except BaseException:
            self.down()
            raise
        return self

    def _build(self):
        if self.workdir is None:
            self.workdir = tempfile.mkdtemp(prefix="ringd-%s-" % self.prefix)
        os.makedirs(self.workdir, exist_ok=True)
        clash = set(self.all_netns()) & set(list_netns())
        if clash:
            raise ClusterError("namespaces already exist: %s" %
                               " ".join(sorted(clash)))
        _run(["ip", "-batch", "-"],
             input="".join("netns add %s\n" % n for n in self.all_netns()))
        self._write_etc()
        set_sysctls(self._sysctl_jobs())

        # Management: one bridge, a veth per member.
        br = ["link add br0 type bridge stp_state 0 mcast_snooping 0",
              "link set br0 up"]
        members = [("mgw", self.ns_gw), ("mco", self.ns_coord)]
        members += [("m%d" % self.nodes[n].index, self.nodes[n].ns)
                    for n in self.order]
        for port, ns in members:
            br += ["link add %s type veth peer name mgmt0 netns %s" % (port, ns),
                   "link set %s master br0" % port, "link set %s up" % port]
        wire_ip, wire_tc = ["link set lo up"], []
        if self.switch:
            wire_ip += ["link add dbr type bridge stp_state 0 "
                        "mcast_snooping 0", "link set dbr up"]
            for name in self.order:
                p = self.switch_ports[name]
                wire_ip += ["link add %s type veth peer name %s netns %s" %
                            (p.wire_end, p.name, self.nodes[name].ns),
                            "link set %s master dbr" % p.wire_end,
                            "link set %s up" % p.wire_end]
        if self.twins:
            wire_ip, wire_tc = self._twin_wire_cmds()
            wire_ip.insert(0, "link set lo up")
        for c in self.cables:
            if isinstance(c, TwinPair):
                continue
            ip, tc = self._wire_cable_cmds(c)
            wire_ip += ip
            wire_tc += tc
        for name in self.order:
            for p in self.nodes[name].ports.values():
                if p.cable is None and p.addr is None:
                    wire_ip += ["link add %s type veth peer name %s netns %s" %
                                (p.wire_end, p.name, self.nodes[name].ns),
                                "link set %s up" % p.wire_end]
        _batches([(["ip", "-n", self.ns_br, "-batch", "-"],
                   "link set lo up\n" + "\n".join(br) + "\n"),
                  (["ip", "-n", self.ns_wire, "-batch", "-"],
                   "\n".join(wire_ip) + "\n")])

        jobs, node_tc = [], []
        if wire_tc:
            jobs.append((["tc", "-n", self.ns_wire, "-batch", "-"],
                         "\n".join(wire_tc) + "\n"))
        for ns, addr in ((self.ns_gw, self.GATEWAY),
                         (self.ns_coord, self.COORD_ADDR)):
            jobs.append((["ip", "-n", ns, "-batch", "-"],
                         "link set lo up\naddr add %s/%d dev mgmt0\n"
                         "link set mgmt0 up\n" % (addr, MGMT_PREFIX_LEN)))
        for name in self.order:
            n = self.nodes[name]
            cmds = ["link set lo up",
                    "addr add %s/%d dev mgmt0" % (n.mgmt_addr, MGMT_PREFIX_LEN),
                    "link set mgmt0 up"]
            if self.twins:
                tip, ttc = self._twin_node_cmds(name)
                cmds += tip
                node_tc.append((["tc", "-n", n.ns, "-batch", "-"],
                                "\n".join(ttc) + "\n"))
            for p in sorted(n.ports.values(),
                            key=lambda p: _natural_key(p.name)):
                if p.addr:
                    cmds.append("addr add %s/%d dev %s" % (p.addr, p.plen,
                                                           p.name))
                cmds.append("link set %s up" % p.name)
            cmds.append("route add default via %s dev mgmt0" % self.GATEWAY)
            jobs.append((["ip", "-n", n.ns, "-batch", "-"],
                         "\n".join(cmds) + "\n"))
        # A couple of dozen at a time: enough to hide latency on 2 cores.
        for i in range(0, len(jobs), 32):
            _batches(jobs[i:i + 32])
        # Twin mode: functions' egress redirects need the ifbs made above.
        for i in range(0, len(node_tc), 32):
            _batches(node_tc[i:i + 32])
        if self.twins and self.cable_mbit:
            for c in self.cables:
                if isinstance(c, TwinPair):
                    self._shape_cable(c, "%dmbit" % self.cable_mbit)

    def extra_cable(self, a, b):
        """Add a cable between a and b (a diagonal, or a parallel one) on
        the next free port of each; works before and after up()."""
        c = self._add_cable(a, b)
        if self._up:
            ip, tc = self._wire_cable_cmds(c)
            _run(["ip", "-n", self.ns_wire, "-batch", "-"],
                 input="\n".join(ip) + "\n")
            _run(["tc", "-n", self.ns_wire, "-batch", "-"],
                 input="\n".join(tc) + "\n")
            for node in (a, b):
                p = self.nodes[node].ports[c.port_of(node)]
                _run(["ip", "-n", self.nodes[node].ns, "-batch", "-"],
                     input="addr add %s/%d dev %s\nlink set %s up\n" %
                     (p.addr, p.plen, p.name, p.name))
        return c

    # ------------------------------------------------------------ cables
    def _wire(self, cmds):
        _run(["ip", "-n", self.ns_wire, "-batch", "-"],
             input="\n".join(cmds) + "\n")

    def cut(self, a, b, which=None):
        """Pull the cable(s) between a and b: the wire-side ends go down, so
        both node ports lose carrier while staying admin-up."""
        cs = self._cables(a, b, which)
        self._wire(["link set %s down" % w for c in cs
                    for w in (c.wire_a, c.wire_b)])
        for c in cs:
            c.cut_state = True

    def restore(self, a, b, which=None):
        cs = self._cables(a, b, which)
        self._wire(["link set %s up" % w for c in cs
                    for w in (c.wire_a, c.wire_b)])
        for c in cs:
            c.cut_state = False

    def shape(self, a, b, rate, burst="128kb", latency="50ms", which=None,
              one_way=False):
        """tbf on the wire's egress end(s): both directions, or only a->b
        with one_way. burst below ~128 KiB stalls TCP; expect goodput near
        95% of rate."""
        for c in self._cables(a, b, which):
            self._shape_cable(c, rate, burst, latency,
                              [c.wire_toward(b)] if one_way else None)

    def _shape_cable(self, c, rate, burst="128kb", latency="50ms",
                     ends=None):
        cmds = ["qdisc replace dev %s root tbf rate %s burst %s latency %s" %
                (w, rate, burst, latency)
                for w in (ends or [c.wire_a, c.wire_b])]
        _run(["tc", "-n", self.ns_wire, "-batch", "-"],
             input="\n".join(cmds) + "\n")

    def unshape(self, a, b, which=None):
        for c in self._cables(a, b, which):
            for w in (c.wire_a, c.wire_b):
                _run(["tc", "-n", self.ns_wire, "qdisc", "del", "dev", w,
                      "root"], check=False)

    def qdisc(self, a, b, which=0, toward=None):
        """`tc qdisc show` of the wire end leading to `toward` (default b)."""
        c = self._cables(a, b, which)[0]
        w = c.wire_toward(toward or b)
        return _run(["tc", "-n", self.ns_wire, "qdisc", "show", "dev",
                     w]).stdout

    # ------------------------------------------------------------ running
    def exec(self, where, argv, timeout=30, check=False, input=None):
        """Run argv in a namespace (node name, 'coord', ... or a netns)."""
        return _run(["ip", "netns", "exec", self.ns(where)] + list(argv),
                    input=input, timeout=timeout, check=check)

    def link_flags(self, node, ifname):
        """Flags of `ip -o link show`, e.g. {'UP', 'LOWER_UP'}."""
        out = _run(["ip", "-n", self.ns(node), "-o", "link", "show",
                    "dev", ifname]).stdout
        m = re.search(r"<([^>]*)>", out)
        return set(m.group(1).split(",")) if m else set()

    def ping(self, node, addr, timeout=1.0):
        """True if addr answers an ICMP echo sent from node's namespace
        (no ping binary needed)."""
        return icmp_ping(self.ns(node), addr, timeout)

    def socket(self, where, *args, **kw):
        """A socket that lives in a namespace (see socket_in)."""
        return socket_in(self.ns(where), *args, **kw)

    def tcp_goodput(self, flows, seconds=1.5, warmup=0.3):
        """Run TCP flows at the same time; each one's goodput in Mbit/s
        (bytes received in `seconds` after `warmup`). flows: [(src node,
        src addr, dst node, dst addr)]. Python sockets, no iperf: fine up
        to a few hundred Mbit/s on 2 cores, so compare with a shaped rate
        only."""
        socks, conns = [], []
        stop = threading.Event()
        got = [0] * len(flows)
        try:
            for sn, sa, dn, da in flows:
                lst = self.socket(dn, bind=(da, 0))
                socks.append(lst)
                lst.listen(1)
                lst.settimeout(5)
                cli = self.socket(sn, bind=(sa, 0))
                socks.append(cli)
                cli.settimeout(5)
                cli.connect((da, lst.getsockname()[1]))
                srv, peer = lst.accept()
                socks.append(srv)
                if peer[0] != sa:
                    raise ClusterError("flow %s -> %s arrived from %s" %
                                       (sa, da, peer[0]))
                cli.settimeout(0.2)
                srv.settimeout(0.2)
                conns.append((cli, srv))

            def send(s):
                buf = b"\0" * 65536
                while not stop.is_set():
                    try:
                        s.send(buf)
                    except socket.timeout:
                        pass
                    except OSError:
                        return

            def recv(i, s):
                while not stop.is_set():
                    try:
                        n = len(s.recv(1 << 18))
                    except socket.timeout:
                        continue
                    except OSError:
                        return
                    if not n:
                        return
                    got[i] += n
            threads = [threading.Thread(target=recv, args=(i, srv))
                       for i, (_, srv) in enumerate(conns)]
            threads += [threading.Thread(target=send, args=(cli,))
                        for cli, _ in conns]
            for t in threads:
                t.start()
            time.sleep(warmup)
            t0, b0 = time.monotonic(), list(got)
            time.sleep(seconds)
            t1, b1 = time.monotonic(), list(got)
            stop.set()
            for t in threads:
                t.join()
            return [(y - x) * 8 / (t1 - t0) / 1e6 for x, y in zip(b0, b1)]
        finally:
            stop.set()
            for s in socks:
                s.close()

    def spawn(self, where, argv, log, name=None, env=None):
        """Start argv inside a namespace via `ip netns exec` (which gives it
        the namespace's own /sys), in its own session, output to log."""
        os.makedirs(os.path.dirname(log), exist_ok=True)
        full_env = dict(os.environ)
        if env:
            full_env.update(env)
        with open(log, "ab") as f:
            p = subprocess.Popen(["ip", "netns", "exec", self.ns(where)] +
                                 list(argv), stdin=subprocess.DEVNULL,
                                 stdout=f, stderr=subprocess.STDOUT,
                                 env=full_env, start_new_session=True)
        proc = Proc(name or os.path.basename(argv[0]), self.ns(where), argv,
                    log, p)
        self.procs.append(proc)
        return proc

    def stop_all(self, grace=5.0):
        """Stop every process started with spawn(). Returns the names of
        those that ignored SIGTERM."""
        stubborn = []
        for p in self.procs:
            if p.alive():
                terminate(p.pid, group=True)
        deadline = time.monotonic() + grace
        for p in self.procs:
            left = max(0.0, deadline - time.monotonic())
            if p.alive() and p.wait(left) is None:
                stubborn.append(p.name)
                p.signal(signal.SIGKILL)
                p.wait(10)
        return stubborn

    # ------------------------------------------------------------ teardown
    def down(self, keep_workdir=False):
        """Complete teardown; idempotent; safe after a partial up()."""
        try:
            self.stop_all(grace=3.0)
        finally:
            remove_netns(self.all_netns())
            if self._own_workdir and self.workdir and not keep_workdir:
                shutil.rmtree(self.workdir, ignore_errors=True)
            self._up = False

    def __enter__(self):
        return self.up()

    def __exit__(self, *exc):
        self.down()
        return False


def netns_call(ns, fn):
    """Run fn() on a fresh thread that has entered netns ns, and return its
    result. setns(CLONE_NEWNET) only moves the calling thread, and a socket
    stays in the namespace it was created in, so sockets made here can be
    used from any thread without spawning `ip netns exec`."""
    box = {}

    def body():
        try:
            fd = os.open(os.path.join(NETNS_RUN, ns), os.O_RDONLY)
            try:
                if _libc.setns(fd, CLONE_NEWNET) != 0:
                    e = ctypes.get_errno()
                    raise OSError(e, "setns %s: %s" % (ns, os.strerror(e)))
            finally:
                os.close(fd)
            box["v"] = fn()
        except BaseException as e:  # handed to the caller
            box["e"] = e

    t = threading.Thread(target=body, name="netns-" + ns)
    t.start()
    t.join()
    if "e" in box:
        raise box["e"]
    return box["v"]


def socket_in(ns, family=socket.AF_INET, type=socket.SOCK_STREAM, proto=0,
              bind=None):
    """A socket created (and optionally bound) inside netns ns."""
    def make():
        s = socket.socket(family, type, proto)
        try:
            if bind is not None:
                s.bind(bind)
        except BaseException:
            s.close()
            raise
        return s
    return netns_call(ns, make)


def _icmp_checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    s = (s >> 16) + (s & 0xffff)
    s += s >> 16
    return ~s & 0xffff


def recv_by(s, deadline, recv):
    """recv() (a call on socket s) with what is left until deadline
    (time.monotonic()); None once that has passed. Other errors raise."""
    left = deadline - time.monotonic()
    if left <= 0:
        return None
    s.settimeout(left)
    try:
        return recv()
    except socket.timeout:
        return None


def icmp_ping(ns, addr, timeout=1.0):
    """One ICMP echo from netns ns to addr; True if answered in time."""
    s = socket_in(ns, socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    try:
        ident = (os.getpid() ^ threading.get_ident()) & 0xffff
        seq = int(time.monotonic() * 1000) & 0xffff
        payload = b"ringd-harness-ping"
        hdr = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
        csum = _icmp_checksum(hdr + payload)
        pkt = struct.pack("!BBHHH", 8, 0, csum, ident, seq) + payload
        try:
            s.sendto(pkt, (addr, 0))
        except OSError:
            return False  # e.g. no route
        deadline = time.monotonic() + timeout
        while True:
            got = recv_by(s, deadline, lambda: s.recvfrom(2048))
            if got is None:
                return False
            data, src = got
            ihl = (data[0] & 0x0f) * 4
            icmp = data[ihl:ihl + 8]
            if len(icmp) < 8 or src[0] != addr:
                continue
            typ, _, _, rid, rseq = struct.unpack("!BBHHH", icmp)
            if typ == 0 and rid == ident and rseq == seq:
                return True
    finally:
        s.close()


def sanitizer_reports(paths):
    """[(path, excerpt)] for logs holding ASan/UBSan/LSan reports."""
    out = []
    for path in paths:
        try:
            with open(path, errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        for m in SANITIZER_MARKERS:
            i = text.find(m)
            if i >= 0:
                out.append((path, text[max(0, i - 200):i + 3000]))
                break
    return out


def tail(path, n=30):
    try:
        with open(path, errors="replace") as f:
            lines = f.readlines()
    except OSError as e:
        return "(%s)\n" % e
    return "".join(lines[-n:])
