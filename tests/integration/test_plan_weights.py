"""ringctl plan --weights on a real 3-node ring (cables shaped to 1 Gbit):
n1 and n2 may read a temp dir (read_path) holding a 64 MiB file, n3 has no
read_path. The agents share this host's disk, so the disk figures are this
host's; the test asserts on structure, labels and the arithmetic within
one answer: every reading node measures GB/s > 0, a 1 Gbit edge (0.125
GB/s) loses to the disk, so the field notes' conclusion is stated; a path
outside read_path is refused naming read_path; an agent without read_path
is refused naming the option; --max-bytes is honoured to the byte."""

import json
import os
import shutil
import tempfile

import pytest

from cluster import Cluster
from conftest import new_prefix
from ringtest import (NO_AUTO_SURVEY, SurveyRingd, ringd_up, shape_ring,
                      stop_and_check)

ORDER = ["n1", "n2", "n3"]
READERS = ("n1", "n2")
FILE_BYTES = 64 << 20
CONCLUSION = ("a local disk feeds weights faster than a neighbour: "
              "sharding buys memory, not load speed")


class WeightsRingd(SurveyRingd):
    read_dir = None

    def agent_conf_text(self, node, *a, **kw):
        text = super().agent_conf_text(node, *a, **kw)
        if node in READERS:
            text += "read_path %s\n" % self.read_dir
        return text


@pytest.fixture(scope="module")
def fx(root, ringd_bin):
    base = tempfile.mkdtemp(prefix="ringweights")
    read_dir = os.path.join(base, "models")
    os.mkdir(read_dir)
    with open(os.path.join(read_dir, "w.bin"), "wb") as f:
        for _ in range(FILE_BYTES >> 20):
            f.write(os.urandom(1 << 20))
    with open(os.path.join(base, "secret.bin"), "wb") as f:
        f.write(b"x" * 65536)
    cl = Cluster(ORDER, new_prefix())
    cl.up()
    r = None
    try:
        shape_ring(cl, "1gbit")
        r = WeightsRingd(cl, ringd_bin)
        r.read_dir = read_dir
        r.setup_pki()
        r.start_all(timeout=30)
        r.wait_survey()
        yield r, base, read_dir
    finally:
        stop_and_check(cl, r)
        shutil.rmtree(base, ignore_errors=True)


def weights(r, *args, fmt="json"):
    p = r.ringctl("plan", "--weights", *args, fmt=fmt, timeout_s=40)
    doc = json.loads(p.stdout) if fmt == "json" and p.stdout.strip() else None
    return p, doc


def test_readers_measure_and_conclude(fx):
    r, base, read_dir = fx
    p, doc = weights(r, os.path.join(read_dir, "w.bin"), "--nodes",
                     "n1,n2")
    assert p.returncode == 0, (p.stdout, p.stderr)
    nodes = {n["node"]: n for n in doc["nodes"]}
    assert sorted(nodes) == ["n1", "n2"], doc
    for n in nodes.values():
        assert n["disk_bytes_measured"] == FILE_BYTES, n
        assert n["disk_seconds_measured"] > 0, n
        gbs = n["disk_bytes_measured"] / n["disk_seconds_measured"] / 1e9
        assert n["disk_gbytes_per_s_computed"] > 0, n
        assert abs(n["disk_gbytes_per_s_computed"] - gbs) < 1e-6 * gbs, n
        assert n["disk_measured_at"].endswith("Z"), n
        assert n["files"] == 1, n
        # The 1 Gbit shaping: about 1 Gbps one way, 1/8 GB/s.
        assert 0.3 < n["edge_gbps_in_measured"] < 1.5, n
        assert abs(n["edge_gbytes_per_s_computed"] -
                   n["edge_gbps_in_measured"] / 8) < 1e-9, n
        assert n["edge"].split("-")[0] in ORDER, n
        assert n["faster"] == "disk", n
    assert doc["nodes_compared"] == 2, doc
    assert doc["conclusion"] == CONCLUSION, doc
    assert "measured" in doc and "computed" in doc, doc
    # A directory reads its regular files; plain output says it too.
    p, _ = weights(r, read_dir, "--nodes", "n1", fmt="plain")
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert CONCLUSION in p.stdout, p.stdout


def test_max_bytes_honoured(fx):
    r, base, read_dir = fx
    p, doc = weights(r, os.path.join(read_dir, "w.bin"), "--nodes", "n2",
                     "--max-bytes", "5000000")
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert doc["nodes"][0]["disk_bytes_measured"] == 5000000, doc


def test_outside_read_path_refused(fx):
    r, base, read_dir = fx
    # Directly outside, and through a symlink inside pointing out.
    link = os.path.join(read_dir, "escape")
    if not os.path.islink(link):
        os.symlink(base, link)
    for path in (os.path.join(base, "secret.bin"),
                 os.path.join(link, "secret.bin")):
        p, doc = weights(r, path, "--nodes", "n1")
        assert p.returncode == 2, (p.stdout, p.stderr)
        note = doc["nodes"][0]["note"]
        assert "outside read_path" in note and read_dir in note, doc
        assert doc["nodes_compared"] == 0, doc


def test_no_read_path_refused(fx):
    r, base, read_dir = fx
    p, doc = weights(r, os.path.join(read_dir, "w.bin"))
    assert p.returncode == 2, (p.stdout, p.stderr)
    nodes = {n["node"]: n for n in doc["nodes"]}
    assert sorted(nodes) == ORDER, doc
    assert "read_path" in nodes["n3"]["note"], nodes["n3"]
    assert "disk_bytes_measured" not in nodes["n3"] or \
        nodes["n3"]["disk_bytes_measured"] is None, nodes["n3"]
    assert nodes["n1"]["disk_bytes_measured"] == FILE_BYTES, doc


def test_bad_usage(fx):
    r, base, read_dir = fx
    for args in (["rel/path"], ["/x", "--max-bytes", "70G"],
                 ["/x", "--model-bytes", "1T"]):
        p, _ = weights(r, *args, fmt=None)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert len(p.stderr.strip().splitlines()) >= 1, p.stderr
    p, _ = weights(r, "/x", "--nodes", "n9", fmt=None)
    assert p.returncode == 2 and "n9" in p.stderr, p.stderr


def test_no_survey_yet(root, ringd_bin):
    """Before any survey there is nothing to compare with: exit 2 and
    the coordinator's reason, and no disk is read for nothing."""
    with ringd_up(Cluster(ORDER[:2], new_prefix()), ringd_bin,
                  heartbeat_ms=500, coord_extra=NO_AUTO_SURVEY) as r:
        r.setup_pki()
        r.start_all(timeout=20)
        p = r.ringctl("plan", "--weights", "/tmp", fmt=None)
        assert p.returncode == 2, (p.stdout, p.stderr)
        assert "no survey has completed yet" in p.stderr, p.stderr
        assert p.stdout == "", p.stdout
