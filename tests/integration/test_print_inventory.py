"""`ring-agent --print-inventory` on the GB10 fixtures: the JSON an operator
reads to see what the agent makes of a node's ports and PCIe links, with
sysfs_root/procfs_root from the configuration. No namespaces, no PKI: the
option opens neither the certificate nor a connection."""

import json
import os
import subprocess

from cluster import SANITIZER_MARKERS
from daemons import REPO, SANITIZER_ENV

FIXTURES = os.path.join(REPO, "tests", "fixtures")


def print_inventory(ringd_bin, tmp_path, fixture, extra=""):
    root = os.path.join(FIXTURES, fixture)
    conf = tmp_path / "agent.conf"
    conf.write_text("coordinator 127.0.0.1\nnode n1\nmgmt_interface %s\n"
                    "sysfs_root %s\nprocfs_root %s\n%s" %
                    ("mgmt0" if fixture == "gb10-veth" else "enP7s7", root,
                     root, extra))
    e = dict(os.environ)
    e.update(SANITIZER_ENV)
    p = subprocess.run([os.path.join(ringd_bin, "ring-agent"), "-c",
                        str(conf), "--print-inventory"], capture_output=True,
                       text=True, timeout=60, env=e)
    for m in SANITIZER_MARKERS:
        assert m not in p.stderr, p.stderr
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("\n") == 1, p.stdout
    return json.loads(p.stdout)


def by(items, key):
    return {i[key]: i for i in items}


def test_gb10_x2(ringd_bin, tmp_path):
    inv = print_inventory(ringd_bin, tmp_path, "gb10-x2")
    assert inv["node"] == "n1" and inv["mgmt_interface"] == "enP7s7"
    assert inv["rdma_devices"] == []  # a fixture's are not this host's
    links = by(inv["pcie_links"], "id")
    assert sorted(links) == ["0000:01:00", "0002:01:00"]
    assert links["0000:01:00"]["interfaces"] == ["enp1s0f0np0",
                                                 "enp1s0f1np1"]
    assert links["0000:01:00"]["raw_gbps"] == 126
    assert links["0000:01:00"]["usable_gbps"] == 111
    assert links["0000:01:00"]["downtrained"] == ""
    assert links["0002:01:00"]["width"] == 2
    assert links["0002:01:00"]["max_width"] == 4
    assert links["0002:01:00"]["usable_gbps"] == 55.5
    assert links["0002:01:00"]["downtrained"] == "x2 of x4"
    # Its root port is itself x2: the board is wired so.
    assert links["0002:01:00"]["narrow"] == "wired_narrow"
    assert links["0002:01:00"]["upstream"] == "0002:00:00.0"
    assert links["0002:01:00"]["upstream_max_width"] == 2
    # No config space in the fixture: MPS 256 assumed, and said so.
    assert links["0002:01:00"]["mps_bytes"] == 256
    assert links["0002:01:00"]["mps_source"] == "assumed"
    ports = by(inv["phys_ports"], "id")
    p0 = ports["4cbb47fffe2a1040/p0"]
    assert p0["name"] == "p0"
    assert p0["interfaces"] == ["enP2p1s0f0np0", "enp1s0f0np0"]
    assert p0["speed_gbps"] == 200 and p0["aggregate_gbps"] == 83.3
    # The board's wiring: nothing to configure alike.
    assert p0["twins_differ"] == ""
    ifs = by(inv["interfaces"], "name")
    assert ifs["enp1s0f0np0"]["port_id"] == "4cbb47fffe2a1040/p0"
    assert ifs["enp1s0f0np0"]["pcie_link"] == "0000:01:00"
    assert ifs["enp1s0f0np0"]["nominal_gbps"] == 55.5
    assert ifs["enP2p1s0f0np0"]["nominal_gbps"] == 27.8
    assert ifs["enp1s0f0np0"]["phys_port_name"] == "p0"
    assert ifs["enp1s0f0np0"]["arp_ignore"] == 1
    assert ifs["enp1s0f0np0"]["arp_announce"] == 2
    assert ifs["enP7s7"]["management"] and ifs["enP7s7"]["port_id"] == ""
    # Below a root port that can do x4: downtrained, and the twins differ.
    inv = print_inventory(ringd_bin, tmp_path, "gb10-x2-down")
    links = by(inv["pcie_links"], "id")
    assert links["0002:01:00"]["narrow"] == "downtrained"
    assert links["0002:01:00"]["upstream_max_width"] == 4
    assert by(inv["phys_ports"], "id")["4cbb47fffe2a1040/p0"][
        "twins_differ"] == "pcie width: enP2p1s0f0np0 x2, enp1s0f0np0 x4"


def test_gb10_docker_ignored(ringd_bin, tmp_path):
    inv = print_inventory(ringd_bin, tmp_path, "gb10-docker")
    assert inv["ignored_interfaces"] == ["br-5f3e9a1c0d2e", "docker0",
                                         "veth3f2a1b0"]
    assert "docker0" not in by(inv["interfaces"], "name")
    # The file's list replaces the built-in one; naming docker0 as a data
    # interface outright wins over any ignore pattern.
    inv = print_inventory(ringd_bin, tmp_path, "gb10-docker",
                          "ignore_interface veth*\n"
                          "data_interface en* docker0\n")
    assert inv["ignored_interfaces"] == ["veth3f2a1b0"]
    names = by(inv["interfaces"], "name")
    assert "docker0" in names and "br-5f3e9a1c0d2e" not in names


def test_harness_twins_by_name(ringd_bin, tmp_path):
    """Devices named like GB10's, without PCI devices or phys_port_name
    (the harness's twin mode): ports and links from the names."""
    inv = print_inventory(ringd_bin, tmp_path, "gb10-veth")
    ports = by(inv["phys_ports"], "id")
    assert ports["enp1s0f0np0"]["interfaces"] == ["enP2p1s0f0np0",
                                                  "enp1s0f0np0"]
    assert ports["enp1s0f1np1"]["twins_differ"] == \
        "mtu: enP2p1s0f1np1 1500, enp1s0f1np1 9000"
    links = by(inv["pcie_links"], "id")
    assert links["0002:01:00"]["interfaces"] == ["enP2p1s0f0np0",
                                                 "enP2p1s0f1np1"]
    assert links["0002:01:00"]["raw_gbps"] == 0


def test_gb10_switch_id_per_domain(ringd_bin, tmp_path):
    """Each PCI domain reports its own phys_switch_id: the twins still
    make two ports of two functions (sys_image_guid, bus:device,
    function), and the disagreement is named, not split on."""
    inv = print_inventory(ringd_bin, tmp_path, "gb10-swid")
    ports = by(inv["phys_ports"], "id")
    assert sorted(ports) == ["4cbb:4703:002a:1040/p0",
                             "4cbb:4703:002a:1040/p1"]
    p0 = ports["4cbb:4703:002a:1040/p0"]
    assert p0["interfaces"] == ["enP2p1s0f0np0", "enp1s0f0np0"]
    assert p0["grouped_by"] == "pci"
    assert p0["switch_ids_differ"] == \
        "enP2p1s0f0np0 4cbb47fffe2a1042, enp1s0f0np0 4cbb47fffe2a1040"
    ifs = by(inv["interfaces"], "name")
    assert ifs["enP2p1s0f0np0"]["port_id"] == "4cbb:4703:002a:1040/p0"


def test_gb10_mps_read(ringd_bin, tmp_path):
    """Max payload size from config space where it can be read (the 0000
    functions' full 256 bytes: 128 B), assumed where only the first 64
    bytes can (the 0002 functions')."""
    inv = print_inventory(ringd_bin, tmp_path, "gb10-mps")
    links = by(inv["pcie_links"], "id")
    assert links["0000:01:00"]["mps_bytes"] == 128
    assert links["0000:01:00"]["mps_source"] == "read"
    assert links["0000:01:00"]["usable_gbps"] == 101.6
    assert links["0002:01:00"]["mps_bytes"] == 256
    assert links["0002:01:00"]["mps_source"] == "assumed"
    assert links["0002:01:00"]["usable_gbps"] == 111
