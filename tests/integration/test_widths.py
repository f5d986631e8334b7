"""Every read-only ringctl command's plain output on the demo's ring (the
reference cluster's n1-n2-n4-n3, an unaddressed eth3 on every node, every
cable shaped to 1 Gbit against a 2 Gbit nominal) fits 100 columns; no
sentinel reaches it (-1, a blank value, the 0 of a direction that did not
run); and a finding that differs only by node is said once in plain, while
JSON keeps one record per node with its subject as fields."""

import json
import os
import re
import subprocess
import time

import pytest

from cluster import Cluster
from conftest import new_prefix
from ringtest import shape_ring, surveyed

ORDER = ["n1", "n2", "n4", "n3"]
WIDTH = 100
SANITIZER_MARKERS = ("AddressSanitizer", "runtime error:", "LeakSanitizer")


@pytest.fixture(scope="module")
def ring(root, ringd_bin, tmp_path_factory):
    cl = Cluster(ORDER, new_prefix(), extra_unaddressed_ports=1)
    with surveyed(cl, ringd_bin, prepare=lambda c: shape_ring(c, "1gbit"),
                  quiet=True, grace="600s", nominal="2G") as r:
        tmp = tmp_path_factory.mktemp("widths")
        hosts = os.path.join(str(tmp), "hosts")
        with open(hosts, "w") as f:
            f.write("".join(n + "\n" for n in ORDER))
        yield cl, r, hosts


def plain(r, *args, timeout_s=30):
    """(rc, stdout) of the command in plain format; stderr clean."""
    argv = [r.path("ringctl"), "-s", r.sock, "-t", str(timeout_s)]
    argv += list(args)
    p = subprocess.run(argv, capture_output=True, text=True,
                       timeout=timeout_s + 60, env=r.env())
    for m in SANITIZER_MARKERS:
        assert m not in p.stderr, (args, p.stderr)
    assert p.returncode in (0, 1, 2), (args, p.returncode, p.stderr)
    assert p.stdout.strip(), (args, p.returncode, p.stderr)
    return p.returncode, p.stdout


def watch_one(r, timeout_s=60):
    """`watch --count 1`'s plain output: the snapshot and the first event,
    which a survey's start makes (the ring quiet again after it)."""
    argv = [r.path("ringctl"), "-s", r.sock, "-t", "10", "watch",
            "--count", "1"]
    after = r.survey_id(r.status_doc()["topology"])
    w = subprocess.Popen(argv, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=r.env())
    first = ""
    try:
        # The snapshot first, so that the survey is an event past it.
        deadline = time.monotonic() + timeout_s
        first = w.stdout.readline()
        assert first, "watch: no snapshot (rc %r)" % (w.poll(),)
        p = r.ringctl("survey", fmt=None)
        assert p.returncode == 0, p.stderr
        w.wait(timeout=max(1, deadline - time.monotonic()))
        assert w.returncode == 0, "watch --count 1: rc %r" % (w.returncode,)
        r.wait_survey(after=after)
        r.wait_quiet()
    finally:
        if w.poll() is None:
            w.kill()
        out, err = w.communicate()
    for m in SANITIZER_MARKERS:
        assert m not in err, err
    return first + out


COMMANDS = [
    ["status"], ["status", "-v"], ["inventory", "n1"],
    ["explain", "n1-n2"], ["explain", "n1"], ["ranks"], ["alerts"],
    ["alerts", "--all"], ["history", "n1-n2"],
    ["plan", "--model-bytes", "100G"], ["plan", "--params", "70e9"],
    ["plan", "--weights", "/nonexistent"],
    ["plan", "--layers", "80", "--token-ms", "50"],
    ["check", "rendezvous", "n1"],
    ["test", "bw", "n1", "n2", "--duration", "1"],
    ["test", "bw", "n1", "n2", "--duration", "1", "--direction", "a-to-b"],
    ["test", "bw", "n1", "n2", "--duration", "1", "--direction", "b-to-a"],
    ["test", "lat", "n1", "n2", "--iterations", "10"],
    ["test", "allreduce", "--sizes", "1K..64K", "--iterations", "2"],
]


def all_outputs(ring):
    cl, r, hosts = ring
    out = {}
    for args in COMMANDS:
        out[" ".join(args)] = plain(r, *args)[1]
    for args in (["check", "ranks", hosts],
                 ["check", "all", "--hostfile", hosts]):
        out[" ".join(args[:2])] = plain(r, *args)[1]
    out["watch --count 1"] = watch_one(r)
    return out


@pytest.fixture(scope="module")
def outputs(ring):
    return all_outputs(ring)


def test_every_plain_output_fits_100_columns(outputs):
    wide = wide_lines(outputs)
    assert not wide, "\n".join(wide)


# A key with nothing after it, a -1 standing for "none", or a gid index
# heading that a table fills with -1.
BLANK = re.compile(r"^\s*(- )?[a-z0-9_]+: *$")
MINUS_ONE = re.compile(r"(^|[\s:,])-1($|[\s,])")


def test_no_sentinel_in_plain(outputs):
    bad = []
    for what, text in outputs.items():
        lines = text.splitlines()
        for i, line in enumerate(lines):
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            # "key:" opening an object or a list goes on below, indented.
            opens = (len(nxt) - len(nxt.lstrip()) >
                     len(line) - len(line.lstrip()))
            if BLANK.match(line) and not opens:
                bad.append("%s: blank: %r" % (what, line))
            if MINUS_ONE.search(line):
                bad.append("%s: -1: %r" % (what, line))
    assert not bad, "\n".join(bad)
    one_way = outputs["test bw n1 n2 --duration 1 --direction a-to-b"]
    assert "gbps_a_to_b_measured" in one_way
    assert "gbps_b_to_a_measured" not in one_way, one_way
    other_way = outputs["test bw n1 n2 --duration 1 --direction b-to-a"]
    assert "gbps_b_to_a_measured" in other_way
    assert "gbps_a_to_b_measured" not in other_way, other_way
    inv = outputs["inventory n1"]
    for gone in ("driver:", "pcie_link_width: 0", "arp_ignore: -1"):
        assert gone not in inv, (gone, inv)
    assert "GID INDEX" not in outputs["ranks"], outputs["ranks"]
    # One nominal: the 2 Gbps the ceiling and the percentages use, not
    # beside it the 10 Gbps a shaped veth's link reports for its cable.
    for what in ("explain n1-n2", "status -v"):
        noms = re.findall(r"nominal_gbps(?:_computed)?: ([0-9.]+)",
                          outputs[what])
        assert {float(x) for x in noms} <= {2.0}, (what, noms)
        assert noms or what == "status -v", (what, noms)


def test_findings_alike_but_for_node_said_once(ring, outputs):
    cl, r, hosts = ring
    rc, doc, err = r.json("status", "-v")
    assert doc is not None, err
    unaddressed = [f for f in doc["topology"]["findings"]
                   if f["code"] == "unaddressed_port"]
    # JSON: one record a node, its subject as fields.
    assert sorted(f["node"] for f in unaddressed) == sorted(ORDER), \
        unaddressed
    assert {f["interface"] for f in unaddressed} == {"eth3"}, unaddressed
    # Plain: one line naming every node, in the findings' order.
    nodes = ", ".join(f["node"] for f in unaddressed)
    for what in ("status", "status -v"):
        text = outputs[what]
        said = [l for l in text.splitlines()
                if "carrier but no address" in l]
        assert len(said) == 1, (what, said)
        assert (nodes + " eth3: carrier but no address") in said[0], said


def wide_lines(outputs):
    return ["%s: %d: %s" % (what, len(line), line)
            for what, text in outputs.items()
            for line in text.splitlines() if len(line) > WIDTH]


def test_cut_cable_outputs_fit(ring):
    """Last (it cuts a cable): with an alert firing and an edge down, the
    commands that show them still fit, and alerts say each message once."""
    cl, r, hosts = ring
    cl.cut("n1", "n2")
    try:
        deadline = time.monotonic() + 60
        while not [a for a in r.status_doc().get("alerts", [])
                   if a.get("firing")]:
            assert time.monotonic() < deadline, "no alert after the cut"
            time.sleep(0.25)
        out = {}
        for args in (["status"], ["status", "-v"], ["alerts"],
                     ["alerts", "--all"], ["explain", "n1-n2"],
                     ["explain", "n1"], ["watch", "--count", "0"]):
            out[" ".join(args)] = plain(r, *args)[1]
        assert "n1-n2" in out["alerts"], out["alerts"]
        wide = wide_lines(out)
        assert not wide, "\n".join(wide)
    finally:
        cl.restore("n1", "n2")
