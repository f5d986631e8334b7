"""One coordinator serves a thousand agents: real agent processes, each
with its own certificate, on one emulated node; the plain (non-sanitizer)
build, since a thousand ASan processes would not fit in memory."""

import os
import subprocess
import time

import pytest

import cluster as cl
import daemons
from conftest import new_prefix
from daemons import Ringd, all_well_unsurveyed
from ringtest import spawn_agents

N_AGENTS = int(os.environ.get("RINGD_SCALE_AGENTS", "1000"))


def plain_bin():
    return os.path.abspath(os.environ.get("RINGD_PLAIN_BIN") or
                           os.path.join(daemons.REPO, "build", "bin"))


def status_kib(pid, field="VmRSS"):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def agent_pids(launcher_pid):
    with open("/proc/%d/task/%d/children" % (launcher_pid,
                                             launcher_pid)) as f:
        return [int(p) for p in f.read().split()]


def cpu_ticks(pids):
    total = 0
    for p in pids:
        with open("/proc/%d/stat" % p) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime + stime
    return total


def test_thousand_agents(root):
    b = plain_bin()
    if daemons.missing_binaries(b):
        pytest.skip("plain build missing in %s (make all, or set "
                    "RINGD_PLAIN_BIN)" % b)
    names = ["a%04d" % i for i in range(N_AGENTS)]
    c = cl.Cluster(["n1", "n2"], new_prefix())
    c.up()
    try:
        # A node is judged down after 10 missed 2 s heartbeats, not 3:
        # what this test measures is serving a thousand sessions, and a
        # thousand agents on 2 cores of a loaded host (load average ~17
        # seen) can each be off the CPU for longer than 6 s.
        r = Ringd(c, b, heartbeat_ms=2000, misses=10,
                  agent_extra=["reconnect_min 500ms", "reconnect_max 5s",
                               "inventory_interval 1h"])
        t0 = time.monotonic()
        r.setup_pki(names=["coordinator"])
        # One shell loop instead of a thousand `ringctl` process trees
        # started from Python.
        subprocess.run(["sh", "-c", 'for n in "$@"; do "$0" pki issue "%s" '
                        '"$n" >/dev/null || exit 1; done' % r.pki,
                        r.path("ringctl")] + names, check=True, timeout=600)
        for n in names:
            r.write("agent-%s.conf" % n, r.agent_conf_text(n))
        t_pki = time.monotonic() - t0
        # expect lines of 30 names: a directive takes at most 32 arguments.
        chunks = [names[i:i + 30] for i in range(0, N_AGENTS, 30)]
        text = r.coord_conf_text(expect=chunks[0], extra=[
            "expect " + " ".join(ch) for ch in chunks[1:]])
        r.start_coordinator(r.write("coordinator.conf", text))
        t0 = time.monotonic()
        # All agents on node n1, started by one shell in its namespace.
        launcher = spawn_agents(c, r, "n1", names)

        def all_up():
            rc, doc, err = r.status()
            assert launcher.alive(), cl.tail(launcher.log)
            assert r.coord.alive(), cl.tail(r.coord.log)
            # Every node up with its inventory in the same reply: a
            # count of connected sessions alone runs ahead of the last
            # inventory on a loaded host.
            return doc and doc["connected"] == N_AGENTS and \
                all_well_unsurveyed(rc, doc) and \
                len(doc["nodes"]) == N_AGENTS and \
                all(e["state"] == "up" and e["data_interfaces"] >= 2
                    for e in doc["nodes"]) and doc
        doc = cl.wait_for(all_up, 240, "%d agents up" % N_AGENTS,
                          interval=1.0)
        t_up = time.monotonic() - t0
        assert doc["expected"] == N_AGENTS
        assert len(doc["nodes"]) == N_AGENTS
        assert all(e["state"] == "up" and e["data_interfaces"] >= 2
                   for e in doc["nodes"])
        coord_rss = status_kib(r.coord.pid)
        pids = agent_pids(launcher.pid)
        assert len(pids) == N_AGENTS
        anon = sorted(status_kib(p, "RssAnon") for p in pids)
        ticks0, t0 = cpu_ticks(pids), time.monotonic()
        # Stay up through a few heartbeat rounds: nobody is dropped.
        deadline = time.monotonic() + 6
        while time.monotonic() < deadline:
            rc, doc, _ = r.status()
            assert all_well_unsurveyed(rc, doc) and \
                doc["connected"] == N_AGENTS, \
                "agents dropped under load:\n%s" % cl.tail(r.coord.log)
            time.sleep(1)
        idle_ticks = cpu_ticks(pids) - ticks0
        idle_s = time.monotonic() - t0
        # An idle agent is a few MB of its own memory (shared libraries
        # aside) and next to no CPU: on average under 0.5% of a core each,
        # heartbeating every 2 s, with a thousand of them sharing 2 cores.
        assert anon[len(anon) // 2] < 8 * 1024, anon[len(anon) // 2]
        assert idle_ticks < (N_AGENTS * idle_s * os.sysconf("SC_CLK_TCK") *
                             0.005), idle_ticks
        launcher.stop(grace=30)
        cl.wait_for(lambda: r.status()[1]["connected"] == 0, 60,
                    "all agents down")
        print("%d agents: certificates %.1fs, all up in %.1fs, coordinator "
              "RSS %d KiB; agent anonymous RSS median %d KiB; all agents "
              "idle: %d CPU ticks in %.1fs" % (
                  N_AGENTS, t_pki, t_up, coord_rss, anon[len(anon) // 2],
                  idle_ticks, idle_s))
    finally:
        c.down()
