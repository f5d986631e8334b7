"""`ring-agent --capture DIR`: a node's sysfs/procfs subset, addresses and
verbs attributes as a tree that sysfs_root/procfs_root load. Captured from
every fixture (the capture honours sysfs_root/procfs_root as its source)
and from a live network namespace with veths, the tree gives the same
`--print-inventory` as its source; with --anonymise no original MAC, IPv4
address, GUID or switch id is left in any file, and the inventory's
structure (interfaces, ports and their twins, PCIe links, prefixes, which
addresses share a subnet) is unchanged."""

import ipaddress
import json
import os
import re
import subprocess

import pytest

import cluster as cl
import conftest
from cluster import SANITIZER_MARKERS
from daemons import REPO, SANITIZER_ENV

FIXTURES = os.path.join(REPO, "tests", "fixtures")
TREES = sorted(d for d in os.listdir(FIXTURES)
               if os.path.isdir(os.path.join(FIXTURES, d, "sys")))
MGMT = {"gb10-veth": "mgmt0", "veth": "mgmt0"}


def agent(ringd_bin, conf, *args, netns=None):
    argv = [os.path.join(ringd_bin, "ring-agent"), "-c", str(conf)]
    argv += list(args)
    if netns:
        argv = ["ip", "netns", "exec", netns] + argv
    e = dict(os.environ)
    e.update(SANITIZER_ENV)
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                       env=e)
    for m in SANITIZER_MARKERS:
        assert m not in p.stderr, p.stderr
    return p


def write_conf(path, root=None, mgmt="enP7s7", extra=""):
    text = "coordinator 127.0.0.1\nnode n1\nmgmt_interface %s\n%s" % (
        mgmt, extra)
    if root:
        text += "sysfs_root %s\nprocfs_root %s\n" % (root, root)
    path.write_text(text)
    return path


def inventory(ringd_bin, conf, netns=None):
    p = agent(ringd_bin, conf, "--print-inventory", netns=netns)
    assert p.returncode == 0, p.stderr
    inv = json.loads(p.stdout)
    # The one figure that moves between two readings.
    inv["memory"].pop("available_kib", None)
    return inv


def capture(ringd_bin, conf, out, *extra, netns=None):
    p = agent(ringd_bin, conf, "--capture", str(out), *extra, netns=netns)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("%s: " % out), p.stdout
    assert "tar -czf %s.tar.gz -C %s %s" % (
        out.name, out.parent, out.name) in p.stdout
    assert not os.path.exists(str(out) + ".tmp")
    return p.stdout


def tree_text(root):
    """Every regular file's bytes, as text, with its path."""
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            with open(p, "rb") as fh:
                yield p, fh.read().decode("latin-1")


def leaked(root, secrets):
    """(path, secret) for each original string found in the tree; an
    address counts only as a whole word (10.0.0.1 is not in 10.0.0.11)."""
    found = []
    for path, text in tree_text(root):
        for s in secrets:
            if re.search(r"(?<![0-9A-Za-z.:])%s(?![0-9A-Za-z.:])" %
                         re.escape(s), text, re.I):
                found.append((path, s))
    return found


def structure(inv):
    """What --anonymise keeps: names, ports and their members, links,
    prefixes, and the partition of addresses into subnets."""
    ifs = inv["interfaces"]
    nets = {}
    for f in ifs:
        for a in f["ipv4"]:
            n = ipaddress.ip_network("%s/%d" % (a["address"], a["prefix"]),
                                     strict=False)
            nets.setdefault(n, []).append(f["name"])
    return {
        "interfaces": [(f["name"], f["mtu"], f["carrier"], f["management"],
                        f["pcie_link"], f["nominal_gbps"],
                        [a["prefix"] for a in f["ipv4"]]) for f in ifs],
        "ports": [(p["name"], p["interfaces"], p["aggregate_gbps"])
                  for p in inv["phys_ports"]],
        "links": inv["pcie_links"],
        "subnets": sorted(sorted(v) for v in nets.values()),
        "rdma": [(d["name"], len(d["ports"])) for d in inv["rdma_devices"]],
    }


@pytest.mark.parametrize("fixture", TREES)
def test_fixture_round_trip(ringd_bin, tmp_path, fixture):
    root = os.path.join(FIXTURES, fixture)
    mgmt = MGMT.get(fixture, "enP7s7")
    src = inventory(ringd_bin, write_conf(tmp_path / "src.conf", root, mgmt))
    out = tmp_path / "cap"
    capture(ringd_bin, tmp_path / "src.conf", out)
    got = inventory(ringd_bin, write_conf(tmp_path / "cap.conf", out, mgmt))
    assert got == src
    manifest = (out / "MANIFEST").read_text()
    assert "anonymised: no" in manifest and "ring-agent 0.1.0" in manifest


def fixture_secrets(root):
    s = set()
    for d in os.listdir(os.path.join(root, "sys", "class", "net")):
        for f in ("address", "phys_switch_id"):
            p = os.path.join(root, "sys", "class", "net", d, f)
            if os.path.isfile(p):
                s.add(open(p).read().strip())
    for d, _, files in os.walk(os.path.join(root, "sys", "devices")):
        for f in files:
            if f in ("sys_image_guid", "node_guid"):
                s.add(open(os.path.join(d, f)).read().strip())
    with open(os.path.join(root, "addrs")) as f:
        s.update(line.split()[1].split("/")[0] for line in f)
    s.discard("00:00:00:00:00:00")
    return sorted(s)


@pytest.mark.parametrize("fixture", ["gb10-dual", "gb10-docker"])
def test_fixture_anonymised(ringd_bin, tmp_path, fixture):
    root = os.path.join(FIXTURES, fixture)
    secrets = fixture_secrets(root)
    assert len(secrets) >= 8  # MACs, the switch id, the GUID, addresses
    assert leaked(root, secrets)  # the check finds what is there
    src = inventory(ringd_bin, write_conf(tmp_path / "src.conf", root))
    out = tmp_path / "cap"
    stdout = capture(ringd_bin, tmp_path / "src.conf", out, "--anonymize")
    assert ", anonymised" in stdout
    assert leaked(out, secrets) == []
    got = inventory(ringd_bin, write_conf(tmp_path / "cap.conf", out))
    assert structure(got) == structure(src)
    # Twins share one (new) switch id, as they shared the old one.
    ids = {p["id"].split("/")[0] for p in got["phys_ports"]
           if len(p["interfaces"]) == 2}
    old = {p["id"].split("/")[0] for p in src["phys_ports"]
           if len(p["interfaces"]) == 2}
    assert len(ids) == len(old) == 1 and ids != old
    assert "anonymised: yes" in (out / "MANIFEST").read_text()


def test_refusals(ringd_bin, tmp_path):
    conf = write_conf(tmp_path / "a.conf",
                      os.path.join(FIXTURES, "gb10"))
    full = tmp_path / "full"
    full.mkdir()
    (full / "x").write_text("")
    p = agent(ringd_bin, conf, "--capture", str(full))
    assert p.returncode == 1
    assert p.stderr == ("ring-agent: capture: %s: exists and is not empty;"
                        " name a new directory\n" % full)
    (tmp_path / "cut.tmp").mkdir()
    p = agent(ringd_bin, conf, "--capture", str(tmp_path / "cut"))
    assert p.returncode == 1 and str(tmp_path / "cut.tmp") in p.stderr
    assert not (tmp_path / "cut").exists()
    p = agent(ringd_bin, conf, "--anonymise")
    assert p.returncode == 2 and "--capture" in p.stderr
    p = agent(ringd_bin, conf, "--capture")
    assert p.returncode == 2


@pytest.fixture
def netns():
    why = conftest._need_root()
    if why:
        pytest.skip(why)
    name = conftest.new_prefix() + "-cap"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        yield name
    finally:
        cl.remove_netns([name])


def ip(ns, *args):
    subprocess.run(["ip", "-n", ns] + list(args), check=True)


def test_live_netns(ringd_bin, tmp_path, netns):
    """A node's own sysfs and procfs (ip netns exec mounts the
    namespace's sysfs): two veth pairs as data ports (twins by name), a
    third pair's end as the management port, captured and loaded back."""
    ip(netns, "link", "set", "lo", "up")
    ip(netns, "link", "add", "m0", "type", "veth", "peer", "name", "m1")
    ip(netns, "addr", "add", "172.31.5.2/24", "dev", "m0")
    pairs = [("enp1s0f0np0", "enP2p1s0f0np0", "10.77.1.1", "10.77.1.5"),
             ("enp1s0f1np1", "enP2p1s0f1np1", "10.77.2.1", "10.77.2.5")]
    for a, b, aa, ba in pairs:
        ip(netns, "link", "add", a, "type", "veth", "peer", "name", b)
        ip(netns, "addr", "add", aa + "/30", "dev", a)
        ip(netns, "addr", "add", ba + "/30", "dev", b)
    for dev in ("m0", "m1") + tuple(d for p in pairs for d in p[:2]):
        ip(netns, "link", "set", dev, "up")
    only = "data_interface en*\n"
    conf = write_conf(tmp_path / "live.conf", mgmt="m0", extra=only)
    live = inventory(ringd_bin, conf, netns=netns)
    assert {f["name"] for f in live["interfaces"]} == {
        "m0", "enp1s0f0np0", "enP2p1s0f0np0", "enp1s0f1np1",
        "enP2p1s0f1np1"}

    out = tmp_path / "cap"
    capture(ringd_bin, conf, out, netns=netns)
    got = inventory(ringd_bin, write_conf(tmp_path / "cap.conf", out, "m0", only))
    assert got == live
    assert os.path.isfile(out / "proc" / "net" / "route")

    links = json.loads(subprocess.run(
        ["ip", "-n", netns, "-j", "link"], capture_output=True, text=True,
        check=True).stdout)
    secrets = [lk["address"] for lk in links
               if lk.get("address", "00:00:00:00:00:00") !=
               "00:00:00:00:00:00"]
    secrets += ["172.31.5.2", "10.77.1.1", "10.77.1.5", "10.77.2.1",
                "10.77.2.5", live["hostname"]]
    assert leaked(out, secrets)
    anon = tmp_path / "anon"
    capture(ringd_bin, conf, anon, "--anonymise", netns=netns)
    assert leaked(anon, secrets) == []
    got = inventory(ringd_bin, write_conf(tmp_path / "anon.conf", anon, "m0", only))
    assert structure(got) == structure(live)
    assert got["hostname"].startswith("host-")
