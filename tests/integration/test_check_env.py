"""ringctl check nccl-env on the reference cluster's ring, emulated (n1-n2-n4-n3,
an unaddressed eth3 on every node, every cable shaped to 1 Gbit): what
`ranks -f env` prints passes, NCCL_ALGO=Tree and the patched build's
NCCL_SWITCHLESS_RING_ONLY are named (exit 1), sockets on data ports are
caught, a malformed line is a file:line error (exit 2), and the corrected
environment it prints is ranks -f env's, node by node."""

import json
import os
import subprocess

import pytest

from cluster import Cluster
from conftest import new_prefix
from ringtest import NO_AUTO_SURVEY, ringd_up, shape_ring, surveyed

ORDER = ["n1", "n2", "n4", "n3"]
SANITIZER_MARKERS = ("AddressSanitizer", "runtime error:",
                     "LeakSanitizer")


@pytest.fixture(scope="module")
def fn(root, ringd_bin, tmp_path_factory):
    cl = Cluster(ORDER, new_prefix(), extra_unaddressed_ports=1)
    with surveyed(cl, ringd_bin, prepare=lambda c: shape_ring(c, "1gbit"),
                  quiet=True, grace="600s") as r:
        yield cl, r, tmp_path_factory.mktemp("ncclenv")


def blocks(env_text):
    """ranks -f env's text -> {node: its block}."""
    out = {}
    for b in env_text.strip("\n").split("\n\n"):
        head = b.splitlines()[0]
        assert head.startswith("# ") and "(rank " in head, head
        out[head[2:].split(" ")[0]] = b + "\n\n"
    return out


def check(r, path, fmt="json", env_extra=None, stdin=None):
    """(rc, stdout, stderr) of ringctl check nccl-env [path]."""
    argv = [r.path("ringctl"), "-s", r.sock, "-t", "10"]
    if fmt:
        argv += ["-f", fmt]
    argv += ["check", "nccl-env"] + ([path] if path else [])
    env = r.env()
    for k in list(env):
        if k.startswith("NCCL_"):
            del env[k]
    env.update(env_extra or {})
    p = subprocess.run(argv, capture_output=True, text=True, timeout=40,
                       env=env, input=stdin)
    for m in SANITIZER_MARKERS:
        assert m not in p.stderr, p.stderr
    return p.returncode, p.stdout, p.stderr


def write(tmp, name, text):
    path = os.path.join(str(tmp), name)
    with open(path, "w") as f:
        f.write(text)
    return path


def issues_of(doc, var):
    return [i for i in doc["issues"] if i["variable"] == var]


def test_good_file_passes(fn):
    cl, r, tmp = fn
    env = r.ranks_text("env")
    per_node = blocks(env)
    assert list(per_node) == ORDER
    good = write(tmp, "good.env", per_node["n4"])
    rc, out, err = check(r, good)
    assert rc == 0, (rc, out, err)
    doc = json.loads(out)
    assert doc["verdict"] == "ok"
    assert doc["problems"] == 0 and doc["warnings"] == 0
    assert doc["kind"] == "ring"
    assert doc["source"] == good
    sat = doc["saturation"]
    # Shaped at 1 Gbit, one stream already fills a cable.
    assert sat["ladder"] == "1,4,8" and sat["method"] == "tcp"
    assert sat["streams_computed"] in (1, 4), sat
    assert sat["edges"] == 4
    # The corrected environment: ranks -f env's block, node by node.
    got = {e["node"]: e["env"] for e in doc["corrected_env"]}
    assert got == per_node
    # Plain: the verdict, then ranks -f env's text itself.
    rc, out, err = check(r, good, fmt=None)
    assert rc == 0, (rc, out, err)
    assert out.startswith("verdict: ok\n"), out[:300]
    assert out.endswith(env), out[-600:]


def test_tree_and_patched_variable(fn):
    cl, r, tmp = fn
    good = blocks(r.ranks_text("env"))["n1"]
    base = good.replace("NCCL_ALGO=Ring\n", "")
    assert base != good
    bad = write(tmp, "bad.env", base +
                "export NCCL_ALGO=Tree\nNCCL_SWITCHLESS_RING_ONLY=1\n")
    rc, out, err = check(r, bad)
    assert rc == 1, (rc, out, err)
    doc = json.loads(out)
    assert doc["verdict"] == "problems"
    algo = issues_of(doc, "NCCL_ALGO")
    assert len(algo) == 1, doc["issues"]
    assert algo[0]["level"] == "problem"
    assert algo[0]["value"] == "Tree"
    assert algo[0]["fix"] == "NCCL_ALGO=Ring"
    assert "no data-plane path" in algo[0]["why"]
    sw = issues_of(doc, "NCCL_SWITCHLESS_RING_ONLY")
    assert len(sw) == 1, doc["issues"]
    assert "not an upstream NCCL variable" in sw[0]["why"]
    lines = base.count("\n")
    assert algo[0]["line"] == lines + 1 and sw[0]["line"] == lines + 2
    assert doc["problems"] == 1 and doc["warnings"] == 1, doc["issues"]
    # The whole of ranks -f env with the two lines at the end of n1's
    # block: n1's environment is its block, whatever the later blocks
    # set (they used to override it, as one shell would).
    env = r.ranks_text("env")
    per_node = blocks(env)
    whole = "".join(
        per_node[n].rstrip("\n") + "\n" +
        ("NCCL_ALGO=Tree\nNCCL_SWITCHLESS_RING_ONLY=1\n" if n == "n1"
         else "") + "\n" for n in ORDER)
    rc, out, err = check(r, write(tmp, "whole.env", whole))
    assert rc == 1, (rc, out, err)
    doc = json.loads(out)
    algo = [i for i in issues_of(doc, "NCCL_ALGO") if i["level"] != "note"]
    assert [(i["node"], i["value"]) for i in algo] == [("n1", "Tree")], \
        doc["issues"]
    assert doc["problems"] == 1 and doc["warnings"] == 1, doc["issues"]
    # The same from stdin, in plain text for people.
    rc, out, err = check(r, "-", fmt=None, stdin=open(bad).read())
    assert rc == 1, (rc, out, err)
    assert "NCCL_SWITCHLESS_RING_ONLY" in out and "Tree" in out
    assert "source: stdin" in out


def test_environment_and_data_ports(fn):
    cl, r, tmp = fn
    # No FILE: the process's own NCCL_* variables. "eth" takes the data
    # ports (eth1, eth2 cabled; eth3 carrier, no address), not the
    # management interface.
    rc, out, err = check(r, None, env_extra={
        "NCCL_ALGO": "Ring", "NCCL_MIN_NCHANNELS": "4",
        "NCCL_SOCKET_IFNAME": "eth"})
    assert rc == 1, (rc, out, err)
    doc = json.loads(out)
    assert doc["source"] == "environment"
    sock = issues_of(doc, "NCCL_SOCKET_IFNAME")
    whys = {(i["node"], i["why"].split(":")[0]) for i in sock}
    for n in ORDER:
        assert any(node == n and "data port eth3" in w
                   for node, w in whys), whys
        assert any(node == n and "management interface" in w
                   for node, w in whys), whys
    assert doc["problems"] == len(sock) == 4 * 4, sock
    assert all(i["fix"].startswith("NCCL_SOCKET_IFNAME==") for i in sock)
    # Unset on a 4-ring: NCCL_ALGO must be set (NCCL may pick Tree).
    rc, out, err = check(r, None, env_extra={
        "NCCL_MIN_NCHANNELS": "4",
        "NCCL_SOCKET_IFNAME": "=" + blocks(r.ranks_text("env"))["n1"]
        .split("NCCL_SOCKET_IFNAME==")[1].split("\n")[0]})
    assert rc == 1, (rc, out, err)
    doc = json.loads(out)
    assert [i["variable"] for i in doc["issues"]] == ["NCCL_ALGO"], doc


def test_malformed_and_unreachable(fn):
    cl, r, tmp = fn
    path = write(tmp, "broken.env",
                 "# ok\nNCCL_ALGO=Ring\nNCCL_IB_HCA mlx5_0\n")
    rc, out, err = check(r, path)
    assert rc == 2, (rc, out, err)
    assert out == ""
    # -f json: the one error object (ringctl.8 ERRORS).
    assert json.loads(err)["error"]["message"] == \
        "%s:3: not a VAR=value assignment" % path, err
    rc, out, err = check(r, os.path.join(str(tmp), "absent.env"))
    assert rc == 2 and "No such file" in err, (rc, err)
    good = write(tmp, "g2.env", "NCCL_ALGO=Ring\n")
    p = subprocess.run([r.path("ringctl"), "-s", "/nonexistent.sock",
                        "check", "nccl-env", good], capture_output=True,
                       text=True, env=r.env(), timeout=30)
    assert p.returncode == 2, p
    p = subprocess.run([r.path("ringctl"), "-s", r.sock, "check", "nccl-envs"],
                       capture_output=True, text=True, env=r.env(),
                       timeout=30)
    assert p.returncode == 2 and "nccl-env" in p.stderr, p


def test_no_survey_yet(root, ringd_bin, tmp_path):
    """Before the first survey there is nothing to check against: 2."""
    cl = Cluster(["n1", "n2", "n3"], new_prefix())
    with ringd_up(cl, ringd_bin, coord_extra=NO_AUTO_SURVEY) as r:
        r.setup_pki()
        r.start_all(timeout=20)
        good = write(tmp_path, "g.env", "NCCL_ALGO=Ring\n")
        rc, out, err = check(r, good)
        assert rc == 2, (rc, out, err)
        assert out == ""
        assert "cannot check: no survey yet" in err, err
