"""ringctl plan --weights on a real 3-node ring (cables shaped to 1 Gbit):
n1 and n2 may read a temp dir (read_path) holding a 64 MiB file, n3 has no
read_path. The agents share this host's disk, so the disk figures are this
host's; the test asserts on structure, labels and the arithmetic within
one answer: every reading node measures GB/s > 0, a 1 Gbit edge (0.125
GB/s) loses to the disk, so the reference cluster's conclusion is stated; a path
outside read_path is refused naming read_path; an agent without read_path
is refused naming the option; --max-bytes is honoured to the byte.

Written as the attacks on read_path (n2 may also read /proc): outside
paths that exist and that do not get the same words; a symlink inside
leading out, and /proc's magic links, are refused; a middle directory
swapped for a symlink to outside while read tests run never gets a byte
read from outside (the outside file has another size)."""

import ctypes
import json
import os
import shutil
import tempfile
import threading
import time

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
        if node == "n2":
            text += "read_path /proc\n"
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


def notes(doc):
    return {n["node"]: n for n in doc["nodes"]}


def test_outside_probes_get_one_answer(fx):
    """Whether an outside path exists, is a file, a directory or a /proc
    magic link: the same refusal (the path aside), no strerror, no
    resolved target."""
    r, base, read_dir = fx
    probes = ["/root/.bashrc", "/root/no-such-file-ringd",
              "/etc/hostname", "/etc/no-such-file-ringd",
              os.path.join(base, "secret.bin"),
              os.path.join(base, "no-such.bin"),
              "/proc/self/cwd", "/proc/self/cwd/etc/hostname", "/root"]
    seen = {}
    for path in probes:
        p, doc = weights(r, path, "--nodes", "n1")
        assert p.returncode == 2, (path, p.stdout, p.stderr)
        note = notes(doc)["n1"]["note"]
        assert "outside read_path" in note and read_dir in note, note
        for word in ("No such file", "resolved", "Permission", "/home"):
            assert word not in note, (path, note)
        seen[path] = note.replace(path, "PATH")
    assert len(set(seen.values())) == 1, seen


def test_links_out_refused(fx):
    """A symlink inside read_path leading out (absolute, or relative
    through ..) and /proc's magic links (n2 may read /proc) are refused
    at the open; a symlink that stays inside is followed."""
    r, base, read_dir = fx
    for name, target in (("up", "../secret.bin"), ("escape2", base),
                         ("alias", "w.bin")):
        link = os.path.join(read_dir, name)
        if not os.path.islink(link):
            os.symlink(target, link)
    for path in (os.path.join(read_dir, "up"),
                 os.path.join(read_dir, "escape2", "secret.bin")):
        p, doc = weights(r, path, "--nodes", "n1")
        assert p.returncode == 2, (p.stdout, p.stderr)
        n1 = notes(doc)["n1"]
        assert "leads outside read_path" in n1["note"], n1
        assert not n1.get("disk_bytes_measured"), n1
    for path in ("/proc/self/cwd", "/proc/self/root/etc/hostname",
                 "/proc/1/root/etc/hostname", "/proc/self/fd/0"):
        p, doc = weights(r, path, "--nodes", "n2")
        assert p.returncode == 2, (path, p.stdout, p.stderr)
        n2 = notes(doc)["n2"]
        # Another process's: the kernel may deny it first.
        assert "magic link" in n2["note"] or (
            "/proc/1/" in path and "permission denied" in n2["note"]), \
            (path, n2)
        assert not n2.get("disk_bytes_measured"), n2
    p, doc = weights(r, os.path.join(read_dir, "alias"), "--nodes", "n1")
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert notes(doc)["n1"]["disk_bytes_measured"] == FILE_BYTES, doc


INSIDE_BYTES = (1 << 20) + 123
OUTSIDE_BYTES = (2 << 20) + 456


def test_swapped_middle_directory_never_reads_outside(fx):
    """read_dir/race/mid is exchanged (renameat2 RENAME_EXCHANGE) with a
    symlink to a directory outside, as fast as a thread can, while read
    tests of read_dir/race/mid/f.bin run on two nodes: each answer is
    the inside file's size or a refusal, never the outside file's."""
    r, base, read_dir = fx
    race = os.path.join(read_dir, "race")
    outdir = os.path.join(base, "outdir")
    os.makedirs(os.path.join(race, "mid"), exist_ok=True)
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(race, "mid", "f.bin"), "wb") as f:
        f.write(b"i" * INSIDE_BYTES)
    with open(os.path.join(outdir, "f.bin"), "wb") as f:
        f.write(b"o" * OUTSIDE_BYTES)
    link = os.path.join(race, "link")
    if not os.path.islink(link):
        os.symlink(outdir, link)
    libc = ctypes.CDLL(None, use_errno=True)
    mid = os.path.join(race, "mid").encode()
    stop = threading.Event()
    swaps = [0]

    def swapper():
        while not stop.is_set():
            if libc.renameat2(-100, mid, -100, link.encode(), 2) == 0:
                swaps[0] += 1

    t = threading.Thread(target=swapper, daemon=True)
    t.start()
    measured, refused = [], []
    try:
        deadline = time.monotonic() + 25
        while time.monotonic() < deadline and len(measured) + \
                len(refused) < 120:
            p, doc = weights(r, os.path.join(race, "mid", "f.bin"),
                             "--nodes", "n1,n2")
            assert doc, (p.stdout, p.stderr)
            for n in doc["nodes"]:
                b = n.get("disk_bytes_measured")
                if b:
                    measured.append(b)
                else:
                    refused.append((n["node"], n.get("note")))
    finally:
        stop.set()
        t.join(5)
        # Leave mid a directory for a rerun.
        if os.path.islink(os.path.join(race, "mid")):
            libc.renameat2(-100, mid, -100, link.encode(), 2)
    print("swap race: %d swaps, %d measured, %d refused" % (
        swaps[0], len(measured), len(refused)))
    assert swaps[0] > 0
    assert OUTSIDE_BYTES not in measured, (measured, refused[:5])
    assert all(b == INSIDE_BYTES for b in measured), measured
    assert refused, "the swap never caught a request: %d measured" % \
        len(measured)
