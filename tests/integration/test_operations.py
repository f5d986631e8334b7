"""Operating the daemons: who may use the control socket, admin requests,
and valgrind-clean daemons on a real emulated cluster."""

import json
import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile

import pytest

import cluster as cl
import daemons
from conftest import new_prefix
from daemons import Ringd, all_well_unsurveyed

ORDER = ["n1", "n2", "n3"]


@pytest.fixture
def small(root, ringd_bin):
    """A 3-node ring whose control socket lives in a world-traversable
    directory, owned by group nogroup, so unprivileged callers can be
    tried."""
    c = cl.Cluster(ORDER, new_prefix())
    ctl_dir = tempfile.mkdtemp(prefix="rgt-ctl-")
    os.chmod(ctl_dir, 0o755)
    r = None
    c.up()
    try:
        r = Ringd(c, ringd_bin, heartbeat_ms=300,
                  coord_extra=["control_group nogroup",
                               "admit_unexpected yes"],
                  agent_extra=["reconnect_min 200ms", "reconnect_max 1s"])
        r.sock = os.path.join(ctl_dir, "coord.sock")
        r.setup_pki()
        r.start_all(timeout=20)
        yield r
    finally:
        if r:
            r.stop()
        probs = r.sanitizer_problems() if r else []
        c.down()
        shutil.rmtree(ctl_dir, ignore_errors=True)
        assert not probs, "\n".join(probs)


def as_user(r, user, group, *args):
    """ringctl as another uid/gid with no supplementary groups."""
    argv = ["setpriv", "--reuid=%s" % user, "--regid=%s" % group,
            "--clear-groups", r.path("ringctl"), "-s", r.sock] + list(args)
    return subprocess.run(argv, capture_output=True, text=True, timeout=30,
                          env=r.env())


def test_control_socket_mode_and_group(small):
    st = os.stat(small.sock)
    assert stat.S_ISSOCK(st.st_mode)
    assert stat.S_IMODE(st.st_mode) == 0o660
    assert st.st_gid == 65534  # nogroup


def test_group_member_reads_but_cannot_change(small):
    p = as_user(small, "nobody", "nogroup", "-f", "json", "status")
    # Read in full; never surveyed, so not healthy (no rank order yet).
    assert all_well_unsurveyed(p.returncode, json.loads(p.stdout)), \
        (p.returncode, p.stdout, p.stderr)
    p = as_user(small, "nobody", "nogroup", "inventory", "n1")
    assert p.returncode == 0, p.stderr
    # forget is an admin request: refused by SO_PEERCRED, not by the
    # socket's permissions.
    p = as_user(small, "nobody", "nogroup", "forget", "ghost")
    assert p.returncode == 2
    assert "needs root" in p.stderr
    assert p.stderr.count("\n") == 1


def test_outsider_cannot_connect(small):
    p = as_user(small, "nobody", "65533", "status")
    assert p.returncode == 2
    # One line naming the socket, what refused and the group to join.
    assert "permission denied" in p.stderr.lower(), p.stderr
    assert small.sock in p.stderr and "member of group" in p.stderr, \
        p.stderr
    assert p.stderr.count("\n") == 1


def test_forget_rules(small):
    r = small
    # An expected node cannot be forgotten, up or down.
    p = r.ringctl("forget", "n1", fmt=None)
    assert p.returncode == 2 and "expect list" in p.stderr
    p = r.ringctl("forget", "nosuch", fmt=None)
    assert p.returncode == 2 and "unknown node" in p.stderr
    # A node outside the expect list joins, leaves, and is forgotten.
    r.issue("extra")
    conf = r.write("agent-extra.conf", r.agent_conf_text("extra"))
    extra = r.spawn_agent("extra", conf, where="n3", label="agent-extra")
    cl.wait_for(lambda: r.node_state("extra") == "up", 15, "extra up")
    rc, doc, _ = r.status()
    assert all_well_unsurveyed(rc, doc), \
        "an unexpected node must not degrade health: %r" % (doc,)
    e = Ringd.node_entry(doc, "extra")
    assert e["expected"] is False
    p = r.ringctl("forget", "extra", fmt=None)
    assert p.returncode == 2 and "is up" in p.stderr
    extra.stop()
    cl.wait_for(lambda: r.node_state("extra") == "down", 10, "extra down")
    p = r.ringctl("forget", "extra", fmt=None)
    assert p.returncode == 0, p.stderr
    assert "forgotten" in p.stdout
    assert r.node_state("extra") is None


# ------------------------------------------------------------ valgrind

def plain_bin():
    return os.path.abspath(os.environ.get("RINGD_PLAIN_BIN") or
                           os.path.join(daemons.REPO, "build", "bin"))


VALGRIND = ["valgrind", "--error-exitcode=99", "--leak-check=full",
            "--show-leak-kinds=definite,indirect",
            "--errors-for-leak-kinds=definite,indirect",
            "--track-fds=no", "--quiet"]


def test_daemons_valgrind_clean(root):
    """The non-sanitizer build under valgrind: connect, survive a lost
    agent and a reconnect, shut down on SIGTERM with no error or leak."""
    b = plain_bin()
    if daemons.missing_binaries(b):
        pytest.skip("plain build missing in %s (make all)" % b)
    if not shutil.which("valgrind"):
        pytest.skip("valgrind not installed")
    c = cl.Cluster(["n1", "n2"], new_prefix())
    c.up()
    try:
        r = Ringd(c, b, heartbeat_ms=500,
                  agent_extra=["reconnect_min 200ms", "reconnect_max 1s"])
        r.setup_pki()
        conf = r.write("coordinator.conf", r.coord_conf_text())
        r.coord = c.spawn("coord", VALGRIND + [r.path("ring-coordinator"),
                                               "-c", conf],
                          os.path.join(r.log_dir, "coordinator.log"),
                          name="ring-coordinator")
        cl.wait_for(lambda: os.path.exists(r.sock) and
                    r.ringctl("status").returncode in (0, 1), 60,
                    "coordinator under valgrind")
        for n in c.order:
            conf = r.write("agent-%s.conf" % n, r.agent_conf_text(n))
            r.agents[n] = c.spawn(n, VALGRIND + [r.path("ring-agent"), "-c",
                                                 conf],
                                  os.path.join(r.log_dir, "agent-%s.log" % n),
                                  name="agent-" + n)
        r.wait_all_up(90)
        # Drop n2's session from the coordinator's side of things: the
        # agent reconnects, the coordinator frees the old session.
        r.agents["n2"].signal(signal.SIGSTOP)
        cl.wait_for(lambda: r.node_state("n2") == "down", 30, "n2 down")
        r.agents["n2"].signal(signal.SIGCONT)
        cl.wait_for(lambda: r.node_state("n2") == "up", 30, "n2 up again")
        assert r.inventory("n1")[0] == 0
        results = {}
        for p in [r.agents["n1"], r.agents["n2"], r.coord]:
            results[p.name] = p.stop(grace=30)
        for name, (rc, killed) in results.items():
            log = os.path.join(r.log_dir, ("coordinator" if name ==
                                           "ring-coordinator" else name) +
                               ".log")
            text = open(log, errors="replace").read()
            assert not killed, "%s ignored SIGTERM" % name
            assert rc == 0, "%s: exit %s under valgrind:\n%s" % (
                name, rc, "\n".join(text.splitlines()[-40:]))
            assert not re.search(r"==\d+== (Invalid|Conditional|Syscall)",
                                 text), text[-3000:]
    finally:
        c.down()


def test_agent_refuses_coordinator_with_another_name(small):
    """The agent checks the coordinator's certificate name against its
    configured coordinator_name before it says anything."""
    r = small
    r.issue("n9")
    text = r.agent_conf_text("n9").replace("coordinator_name coordinator",
                                           "coordinator_name impostor")
    conf = r.write("agent-n9.conf", text)
    p = r.spawn_agent("n9", conf, where="n3", label="agent-n9")

    def refused():
        with open(p.log, errors="replace") as f:
            log = f.read()
        return "certificate verify failed" in log and log
    log = cl.wait_for(refused, 15, "the agent's verify failure")
    assert "cannot connect to coordinator" in log
    # In words: our side, the certificate shown, what to check.
    assert "we (client) refused the peer's certificate (CN=coordinator" \
        in log, log
    assert "coordinator_name must be the name" in log, log
    assert r.node_state("n9") is None
    with open(r.coord.log, errors="replace") as f:
        assert "n9" not in f.read()
    p.stop()
