"""ringctl check ranks / rendezvous on real 4-node emulated rings after a
short survey (n1-n2-n3-n4-n1, and the reference cluster's n1-n2-n4-n3-n1): a
launcher's rank order and rendezvous address compared with what the
survey measured."""

import json
import os
import subprocess

import pytest

import cluster as cl
from conftest import new_prefix
from ringtest import (SurveyRingd, facing_port, stop_and_check, surveyed,
                      surveyed_ring)

ORDER = ["n1", "n2", "n3", "n4"]
RANKS_ERROR = "ibv_modify_qp failed with 110 Connection timed out"


FN_ORDER = ["n1", "n2", "n4", "n3"]  # the reference cluster's physical order


@pytest.fixture(scope="module")
def ringd(root, ringd_bin):
    with surveyed_ring(ORDER, ringd_bin, heartbeat_ms=500) as r:
        yield r


def mgmt(r, node):
    return r.cl.node(node).mgmt_addr


def data_addr(r, node, peer):
    return r.cl.node(node).ports[facing_port(r.cl, node, peer)].addr


def ranks_text(r, fmt):
    p = r.ringctl("ranks", fmt=fmt)
    assert p.returncode == 0, (fmt, p.stderr)
    return p.stdout


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def check(r, *args, fmt="json", stdin=None):
    """(rc, parsed JSON or None, stdout, stderr) of ringctl check ARGS."""
    argv = ["ringctl", "-s", r.sock]
    if fmt:
        argv += ["-f", fmt]
    p = r.run(argv + ["check"] + list(args), timeout=30, input=stdin)
    # The writer reports a key given twice as an internal error.
    assert "internal error" not in p.stderr, p.stderr
    doc = None
    if fmt == "json" and p.stdout.strip():
        doc = json.loads(p.stdout)
    return p.returncode, doc, p.stdout, p.stderr


def test_right_order_in_every_format(ringd, tmp_path):
    r = ringd
    p = r.ringctl("ranks", fmt="json")
    assert p.returncode == 0, p.stderr
    ranks = [x["node"] for x in json.loads(p.stdout)["ranks"]]
    # What ringctl ranks prints is, by construction, a right order.
    for fmt in ("hostfile", "rankfile", "torchrun"):
        path = write(tmp_path, fmt, ranks_text(r, fmt))
        rc, doc, out, err = check(r, "ranks", path)
        assert rc == 0, (fmt, out, err)
        assert doc["verdict"] == "ok", doc
        assert doc["kind_measured"] == "ring"
        assert [s["node"] for s in doc["steps"]] == ranks
        assert all(s["cable"] for s in doc["steps"]), doc
        assert "corrected" not in doc and "problems" not in doc
        assert doc["cables_measured"] and doc["computed"], doc
    # A plain host list by name on stdin, the ring the other way round.
    rev = [ranks[0]] + ranks[:0:-1]
    rc, doc, out, err = check(r, "ranks", "-", stdin="\n".join(rev) + "\n")
    assert rc == 0, (out, err)
    assert doc["format"] == "host list" and doc["file"] == "<stdin>"


def test_wrong_order_is_named_and_corrected(ringd, tmp_path):
    r = ringd
    wrong = ["n1", "n3", "n2", "n4"]
    # Management addresses, a name and a data address: all resolve.
    hosts = [mgmt(r, "n1"), "n3", mgmt(r, "n2"), data_addr(r, "n4", "n1")]
    text = "# natural order is not ring order\n" + "".join(
        "%s slots=2\n" % h for h in hosts)
    path = write(tmp_path, "hostfile", text)
    rc, doc, out, err = check(r, "ranks", path)
    assert rc == 1, (out, err)
    assert doc["verdict"] == "problems"
    assert [s["node"] for s in doc["steps"]] == wrong
    assert [s["cable"] for s in doc["steps"]] == [False, True, False, True]
    assert [s["via"] for s in doc["steps"]] == [
        "management", "name", "management", "data"]
    assert "warning_data_addresses" in doc
    probs = {p["pair"]: p for p in doc["problems"]}
    assert sorted(probs) == ["n1-n3", "n2-n4"], probs
    p = probs["n1-n3"]
    assert p["error_predicted"] == RANKS_ERROR
    # n1 would use its function facing n2 (its published next), with
    # n1's data address on that cable as the local GID.
    assert p["function"] == facing_port(r.cl, "n1", "n2")
    assert p["local_gid_computed"] == "::ffff:" + data_addr(r, "n1", "n2")
    assert p["remote_gid_computed"] == "::ffff:" + data_addr(r, "n3", "n2")
    assert "n1 (rank 0) and n3 (rank 1)" in p["text"]
    # The same lines in ring order, starting at the file's first host.
    order = [hosts[wrong.index(n)] for n in ORDER]
    assert doc["corrected"] == ["%s slots=2" % h for h in order], doc

    # Plain: the verdict, the pair and the corrected lines.
    rc, _, out, err = check(r, "ranks", path, fmt="keyvalue")
    assert rc == 1, err
    assert "problems.0.pair=n1-n3\n" in out, out
    assert "corrected.1=%s slots=2\n" % mgmt(r, "n2") in out, out
    rc, _, out, err = check(r, "ranks", path, fmt="plain")
    assert rc == 1, err
    assert "n1-n3" in out and RANKS_ERROR in out, out
    # ... the corrected file last, ready to paste.
    tail = out.rstrip("\n").split("\n")[-5:]
    assert tail[0].startswith("# corrected by ringctl check ranks"), out
    assert tail[1:] == ["%s slots=2" % h for h in order], out

    # A rankfile keeps its format: rank numbers are renumbered.
    rk = "".join("rank %d=%s slot=0\n" % (i, mgmt(r, n))
                 for i, n in enumerate(wrong))
    rc, doc, out, err = check(r, "ranks", write(tmp_path, "rankfile", rk))
    assert rc == 1, (out, err)
    assert doc["format"] == "rankfile"
    assert doc["corrected"] == ["rank %d=%s slot=0" % (i, mgmt(r, n))
                                for i, n in enumerate(ORDER)], doc


def test_bad_files_exit_2_with_file_and_line(ringd, tmp_path):
    r = ringd
    cases = [
        ("n1 slots=1\nn2 slots=x\n", ":2: 'slots=x' after the host"),
        ("n1\nrank 1=n2\n", ":2: a rankfile line"),
        ("rank 0=n1\nrank 0=n2\n", ":2: rank 0 again"),
        ("n1\nn2\nnosuchnode.invalid\n",
         ":3: 'nosuchnode.invalid' is no node ringd knows"),
        ("n1\nn2\n%s\n" % mgmt(r, "n1"), ":3: '%s' is n1 again" %
         mgmt(r, "n1")),
    ]
    for i, (text, want) in enumerate(cases):
        path = write(tmp_path, "bad%d" % i, text)
        rc, _, out, err = check(r, "ranks", path)
        assert rc == 2, (text, out, err)
        assert (path + want) in err, (want, err)
        assert len(err.strip().splitlines()) == 1, err
        assert out == "", out
    rc, _, out, err = check(r, "ranks", str(tmp_path / "missing"))
    assert rc == 2 and "missing" in err, err
    big = write(tmp_path, "big", "n1\n" * 5000)
    rc, _, out, err = check(r, "ranks", big)
    assert rc == 2 and "more than 4096 lines" in err, err
    # Usage: unknown subcommand, missing argument.
    for args in (("bogus",), ("ranks",), ()):
        rc, _, out, err = check(r, *args)
        assert rc == 2, (args, err)
        # -f json: one error object, with the command's usage.
        assert json.loads(err)["error"]["usage"].startswith(
            "usage: ringctl check") or "check commands" in err, err
    assert "unknown check 'bogus'" in check(r, "bogus")[3]


def test_rendezvous(ringd):
    r = ringd
    rc, doc, out, err = check(r, "rendezvous", mgmt(r, "n1") + ":29500")
    assert rc == 0, (out, err)
    assert doc["verdict"] == "ok" and doc["address_kind"] == "management"
    assert doc["node"] == "n1" and doc["port"] == 29500
    # Rank 0's name: on this host (where it does not resolve: a note), and
    # on every node, by the node's own resolver (/etc/netns/NS/hosts here).
    r0 = doc["rank0_name"]
    assert r0["node"] == "n1" and r0["verdict"] == "ok", r0
    assert r0["checked"].startswith("on this host and on every node"), r0
    assert r0["nodes_ok"] == 4 and r0["nodes_wrong"] == 0, r0
    assert [n["resolves_to"] for n in r0["on_nodes"]] == [
        [mgmt(r, "n1")]] * 4, r0

    # On n3, n1's name leads to n2's management address (a stale hosts
    # line): c10d would go there.
    hosts = os.path.join(cl.NETNS_ETC, r.cl.ns("n3"), "hosts")
    with open(hosts) as f:
        saved = f.read()
    line = "%s n1\n" % mgmt(r, "n1")
    assert line in saved, saved
    try:
        with open(hosts, "w") as f:  # in place: the bind mount shows it
            f.write(saved.replace(line, "%s n1\n" % mgmt(r, "n2")))
        rc, doc, out, err = check(r, "rendezvous", mgmt(r, "n1") + ":29500")
        assert rc == 1, (out, err)
        r0 = doc["rank0_name"]
        assert r0["verdict"] == "problem" and r0["nodes_wrong"] == 1, r0
        want = "on n3 it resolves to %s first" % mgmt(r, "n2")
        assert want in r0["nodes_text"], r0
        assert want in doc["summary"], doc
    finally:
        with open(hosts, "w") as f:
            f.write(saved)

    # n2's address on its cable to n3: n1 and n4 have no path to it.
    addr = data_addr(r, "n2", "n3")
    rc, doc, out, err = check(r, "rendezvous", addr)
    assert rc == 1, (out, err)
    assert doc["address_kind"] == "data" and doc["node"] == "n2"
    assert doc["cable_peer"] == "n3"
    assert doc["no_path_computed"] == "n1 n4"
    assert doc["reach_computed"] == "n2 n3"
    assert (doc["nodes_total"], doc["nodes_reach"], doc["nodes_no_path"]) \
        == (4, 2, 2), doc
    want = "Timed out waiting for clients, 2/4 clients joined"
    assert doc["error_predicted"] == want, doc
    assert doc["use_address"] == mgmt(r, doc["use_node"]), doc
    assert "181 s" in doc["summary"], doc

    rc, _, out, err = check(r, "rendezvous", addr, fmt="plain")
    assert rc == 1 and want in out and "n1 n4" in out, out

    rc, doc, out, err = check(r, "rendezvous", "192.0.2.1:29500")
    assert rc == 1 and doc["address_kind"] == "unknown", doc
    assert "ringd does not know" in doc["summary"]
    rc, _, out, err = check(r, "rendezvous", mgmt(r, "n1") + ":0")
    assert rc == 2 and "HOST:PORT" in err, err


def test_no_coordinator_exits_2(ringd, tmp_path):
    r = ringd
    path = write(tmp_path, "ok", "n1\nn2\nn3\nn4\n")
    p = r.run(["ringctl", "-s", str(tmp_path / "nosock"), "check", "ranks",
               path], timeout=30)
    assert p.returncode == 2, p.stderr
    assert os.path.exists(path)
    p = r.run(["ringctl", "-s", str(tmp_path / "nosock"), "check",
               "rendezvous", mgmt(r, "n1")], timeout=30)
    assert p.returncode == 2, p.stderr


def test_before_any_survey_exits_2(make_cluster, ringd_bin, tmp_path):
    """A coordinator with no survey yet: nothing to check against."""
    c = make_cluster(["n1", "n2"])
    r = SurveyRingd(c, ringd_bin)
    try:
        r.setup_pki()
        r.start_coordinator()
        path = write(tmp_path, "hosts", "n1\nn2\n")
        for args in (("ranks", path), ("rendezvous", "10.88.0.11")):
            rc, _, out, err = check(r, *args)
            assert rc == 2, (args, out, err)
            assert out == "", out
            assert "no survey has completed yet (survey never)" in err, err
    finally:
        stop_and_check(c, r)


def test_field_notes_natural_order(root, ringd_bin, tmp_path):
    """The reference cluster's first failure: hosts in name order on the ring
    n1-n2-n4-n3 cross both diagonals; the fix is the physical order."""
    with surveyed_ring(FN_ORDER, ringd_bin, heartbeat_ms=500) as r:
        addrs = {n: mgmt(r, n) for n in FN_ORDER}
        text = "".join("%s slots=1\n" % addrs[n] for n in ORDER)
        rc, doc, out, err = check(r, "ranks",
                                  write(tmp_path, "natural", text))
        assert rc == 1, (out, err)
        assert sorted(p["pair"] for p in doc["problems"]) == \
            ["n2-n3", "n4-n1"], doc["problems"]
        assert all(p["error_predicted"] == RANKS_ERROR
                   for p in doc["problems"])
        assert doc["corrected"] == ["%s slots=1" % addrs[n]
                                    for n in FN_ORDER], doc
        # The corrected file checks out.
        fixed = "".join(x + "\n" for x in doc["corrected"])
        rc, doc, out, err = check(r, "ranks", "-", stdin=fixed)
        assert rc == 0 and doc["verdict"] == "ok", (out, err)


def env_block(r, node):
    """ranks -f env's block for one node."""
    for b in ranks_text(r, "env").strip("\n").split("\n\n"):
        if b.startswith("# %s " % node):
            return b + "\n"
    raise AssertionError("no env block for %s" % node)


def check_with_env(r, extra, *args):
    """ringctl -f json check ARGS with MASTER_* (and NCCL_*) from extra
    only."""
    env = {k: v for k, v in r.env().items()
           if not k.startswith("MASTER_") and not k.startswith("NCCL_")}
    env.update(extra)
    return subprocess.run([r.path("ringctl"), "-s", r.sock, "-f", "json",
                           "check"] + list(args), capture_output=True,
                          text=True, timeout=30, env=env)


def test_check_all(ringd, tmp_path):
    r = ringd
    hosts = write(tmp_path, "good", ranks_text(r, "hostfile"))
    env = write(tmp_path, "job.env", env_block(r, "n1"))
    rdzv = mgmt(r, "n1") + ":29500"
    rc, doc, out, err = check(r, "all", "--hostfile", hosts, "--env", env,
                              "--rendezvous", rdzv)
    assert rc == 0, (out, err)
    rows = {c["check"]: c for c in doc["checks"]}
    assert sorted(rows) == ["nccl-env", "ranks", "rendezvous", "ring"], doc
    assert all(c["verdict"] == "ok" for c in rows.values()), doc
    assert doc["problems"] == 0 and doc["could_not_check"] == 0, doc
    assert doc["survey_measured"], doc
    assert rows["ranks"]["details"] == "ringctl check ranks " + hosts, doc

    # A wrong order and a data-plane rendezvous: both rows say so, the
    # others stay ok, and the command exits 1.
    bad = write(tmp_path, "bad", "n1\nn3\nn2\nn4\n")
    rc, doc, out, err = check(r, "all", "--hostfile", bad, "--env", env,
                              "--rendezvous", data_addr(r, "n2", "n1"))
    assert rc == 1, (out, err)
    rows = {c["check"]: c for c in doc["checks"]}
    assert rows["ranks"]["verdict"] == "problems", doc
    assert "2 of 4 consecutive rank pairs" in rows["ranks"]["summary"], doc
    assert rows["rendezvous"]["verdict"] == "problems", doc
    assert rows["ring"]["verdict"] == "ok", doc
    assert rows["nccl-env"]["verdict"] == "ok", doc
    assert doc["problems"] == 2, doc

    # An unreadable hostfile is a check that could not run; with no
    # problem elsewhere the command exits 2, and the rows not asked for
    # are skipped, not passed.
    p = check_with_env(r, {}, "all", "--hostfile",
                       str(tmp_path / "missing"), "--env", env)
    assert p.returncode == 2, (p.stdout, p.stderr)
    rows = {c["check"]: c for c in json.loads(p.stdout)["checks"]}
    assert rows["ranks"]["verdict"] == "could not check", rows
    assert rows["rendezvous"]["verdict"] == "skipped", rows

    # MASTER_ADDR stands in for --rendezvous, as the launcher reads it.
    p = check_with_env(r, {"MASTER_ADDR": data_addr(r, "n2", "n1"),
                           "MASTER_PORT": "29500"}, "all", "--env", env)
    assert p.returncode == 1, (p.stdout, p.stderr)
    rows = {c["check"]: c for c in json.loads(p.stdout)["checks"]}
    assert rows["rendezvous"]["verdict"] == "problems", rows
    assert rows["rendezvous"]["details"].endswith(":29500"), rows

    # torchrun lines carry their own rendezvous: rank 0's --master-addr
    # is checked without --rendezvous or MASTER_ADDR.
    tr = ranks_text(r, "torchrun")
    good_tr = write(tmp_path, "torchrun", tr)
    p = check_with_env(r, {}, "all", "--hostfile", good_tr, "--env", env)
    assert p.returncode == 0, (p.stdout, p.stderr)
    rows = {c["check"]: c for c in json.loads(p.stdout)["checks"]}
    assert rows["rendezvous"]["details"] == (
        "ringctl check rendezvous %s:29500" % mgmt(r, "n1")), rows
    assert "--master-addr=" + mgmt(r, "n1") in tr, tr
    bad_tr = write(tmp_path, "torchrun-data",
                   tr.replace("--master-addr=" + mgmt(r, "n1"),
                              "--master-addr=" + data_addr(r, "n2", "n1")))
    p = check_with_env(r, {}, "all", "--hostfile", bad_tr, "--env", env)
    assert p.returncode == 1, (p.stdout, p.stderr)
    rows = {c["check"]: c for c in json.loads(p.stdout)["checks"]}
    assert rows["rendezvous"]["verdict"] == "problems", rows
    assert rows["ranks"]["verdict"] == "ok", rows

    # The demo's pre-flight, as it prints it: ranks -f env's whole file
    # (every node's block) passes on a correct ring.
    whole = write(tmp_path, "whole.env", ranks_text(r, "env"))
    p = check_with_env(r, {}, "all", "--hostfile", hosts, "--env", whole)
    assert p.returncode == 0, (p.stdout, p.stderr)
    rows = {c["check"]: c for c in json.loads(p.stdout)["checks"]}
    assert rows["nccl-env"]["verdict"] == "ok", rows
    # No --env and no NCCL_* variable here: "not given", not a failure.
    p = check_with_env(r, {}, "all", "--hostfile", hosts)
    assert p.returncode == 0, (p.stdout, p.stderr)
    rows = {c["check"]: c for c in json.loads(p.stdout)["checks"]}
    assert rows["nccl-env"]["verdict"] == "skipped", rows
    assert rows["nccl-env"]["summary"].startswith("not given"), rows
    p = check_with_env(r, {}, "nccl-env")
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert json.loads(p.stdout)["verdict"] == "not_given", p.stdout
    # A --nccl-version that is not a version: a usage error.
    for args in (("all", "--nccl-version", "x2"),
                 ("nccl-env", "--nccl-version")):
        p = check_with_env(r, {}, *args)
        assert p.returncode == 2 and "--nccl-version" in p.stderr, (
            args, p.stderr)

    # Plain: one screen, a table.
    rc, _, out, err = check(r, "all", "--hostfile", hosts, "--env", env,
                            "--rendezvous", rdzv, fmt=None)
    assert rc == 0 and len(out.splitlines()) < 40, out
    # Usage errors exit 2 with nothing on stdout.
    for args in (("all", "--hostfile"), ("all", "--bogus", "x"),
                 ("all", "--env", env, "--env", env)):
        rc, _, out, err = check(r, *args)
        assert rc == 2 and out == "" and json.loads(err)["error"], (
            args, out, err)


def test_switch(root, ringd_bin, tmp_path):
    """On a switch every rank reaches every other: any order passes, and
    a data-plane rendezvous address is reachable from every node (still
    flagged: rendezvous belongs on the management network), with no
    predicted hang."""
    order = ["n1", "n2", "n3"]
    with surveyed(cl.Cluster(order, new_prefix(), switch=True),
                  ringd_bin) as r:
        st = json.loads(r.ringctl("status", fmt="json").stdout)
        assert st["topology"]["kind"] == "switch", st["topology"]
        hf = write(tmp_path, "hosts", "n3\nn1\nn2\n")
        rc, doc, out, err = check(r, "ranks", hf)
        assert rc == 0, (out, err)
        assert "switch" in doc["summary"], doc
        rc, doc, out, err = check(r, "rendezvous", mgmt(r, "n2") + ":29500")
        assert rc == 0 and doc["address_kind"] == "management", (out, err)
        addr = r.cl.switch_ports["n2"].addr
        rc, doc, out, err = check(r, "rendezvous", addr + ":29500")
        assert rc == 1, (out, err)
        assert doc["address_kind"] == "data" and doc["node"] == "n2", doc
        assert "181 s" not in doc["summary"], doc
        assert "on the switch" in doc["summary"], doc
        assert "management" in doc["summary"] and "cable_peer" not in doc
        print(doc["summary"])
