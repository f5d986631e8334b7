"""ringd on an emulated Cluster: PKI, configs, daemons, ringctl.

Every path (PKI, configs, sockets, state, logs) lives under the cluster's
work dir: all namespaces share /etc, /run and /tmp."""

import json
import os
import subprocess

from cluster import SANITIZER_MARKERS, sanitizer_reports, tail, wait_for

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BINARIES = ("ring-agent", "ring-coordinator", "ringctl")
# Sanitizer builds: report leaks at exit, keep running after a report so the
# log holds it, stack traces for UBSan.
SANITIZER_ENV = {
    "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0",
    "UBSAN_OPTIONS": "print_stacktrace=1",
}


EXPECT_PER_LINE = 30


def bin_dir():
    return os.path.abspath(os.environ.get("RINGD_BIN") or
                           os.path.join(REPO, "build", "bin"))


def missing_binaries(d=None):
    d = d or bin_dir()
    return [b for b in BINARIES
            if not os.access(os.path.join(d, b), os.X_OK)]


def all_well_unsurveyed(rc, doc):
    """What `ringctl status` says of a cluster that is all up and quiet
    but was never surveyed: not healthy (no rank order yet), degraded with
    the cause no_survey and nothing else, exit 1."""
    return (rc == 1 and doc is not None and doc.get("health") == "degraded"
            and doc.get("health_cause") == "no_survey" and
            not doc.get("alerts"))


class RingdError(Exception):
    pass


class Ringd:
    PORT = 7420

    def __init__(self, cluster, bindir=None, heartbeat_ms=500, misses=3,
                 coord_extra=(), agent_extra=(), coord_debug=None):
        self.cl = cluster
        self.bin = os.path.abspath(bindir or bin_dir())
        self.w = cluster.workdir
        self.pki = os.path.join(self.w, "pki")
        self.sock = os.path.join(self.w, "coord.sock")
        self.state_dir = os.path.join(self.w, "state")
        self.conf_dir = os.path.join(self.w, "conf")
        self.log_dir = os.path.join(self.w, "logs")
        self.heartbeat_ms = heartbeat_ms
        self.misses = misses
        self.coord_extra = list(coord_extra)
        self.agent_extra = list(agent_extra)
        self.coord_debug = coord_debug  # -d SUBSYS for the coordinator
        self.coord = None
        self.agents = {}  # node -> Proc of the real agent
        self.others = []  # extra processes (impostors, ...)
        self.tool_reports = []  # sanitizer output seen on tools' stderr
        for d in (self.conf_dir, self.log_dir, self.state_dir):
            os.makedirs(d, exist_ok=True)

    # ------------------------------------------------------------ helpers
    def path(self, name):
        return os.path.join(self.bin, name)

    def env(self):
        e = dict(os.environ)
        e.update(SANITIZER_ENV)
        return e

    def run(self, argv, timeout=30, where=None, input=None):
        """Run a tool (argv[0] a binary name from bindir) to completion.
        where: a namespace to run in (default: this host)."""
        full = [self.path(argv[0])] + list(argv[1:])
        if where is not None:
            full = ["ip", "netns", "exec", self.cl.ns(where)] + full
        p = subprocess.run(full, capture_output=True, text=True,
                           timeout=timeout, env=self.env(), input=input)
        for m in SANITIZER_MARKERS:
            if m in p.stderr or m in p.stdout:
                self.tool_reports.append((" ".join(argv), p.stderr))
                break
        return p

    def ringctl(self, *args, fmt="json", sock=None, timeout_s=5):
        argv = ["ringctl", "-s", sock or self.sock]
        if fmt:
            argv += ["-f", fmt]
        argv += ["-t", str(timeout_s)] + list(args)
        return self.run(argv, timeout=timeout_s + 20)

    def status(self):
        """(exit code, parsed JSON or None, stderr)."""
        p = self.ringctl("status")
        doc = None
        if p.returncode in (0, 1):
            try:
                doc = json.loads(p.stdout)
            except ValueError as e:
                raise RingdError("ringctl status: bad JSON (%s): %r" %
                                 (e, p.stdout[:500]))
        return p.returncode, doc, p.stderr

    @staticmethod
    def node_entry(doc, node):
        for n in doc.get("nodes", []):
            if n.get("node") == node:
                return n
        return None

    def node_state(self, node):
        rc, doc, _ = self.status()
        if doc is None:
            return None
        e = self.node_entry(doc, node)
        return e and e.get("state")

    def inventory(self, node):
        p = self.ringctl("inventory", node)
        doc = json.loads(p.stdout) if p.returncode == 0 else None
        return p.returncode, doc, p.stderr

    # ------------------------------------------------------------ setup
    def setup_pki(self, pki=None, names=None):
        pki = pki or self.pki
        p = self.run(["ringctl", "pki", "init", pki])
        if p.returncode != 0:
            raise RingdError("ringctl pki init %s: rc %d: %s" %
                             (pki, p.returncode, p.stderr.strip()))
        if names is None:
            names = ["coordinator"] + list(self.cl.order)
        for n in names:
            self.issue(n, pki)
        return pki

    def issue(self, name, pki=None, coordinator=None):
        """A node certificate (client role), or the coordinator's (server
        role): by default the certificate named "coordinator" is the
        coordinator's, as coord_conf_text and agent_conf_text assume."""
        pki = pki or self.pki
        if coordinator is None:
            coordinator = name == "coordinator"
        p = self.run(["ringctl", "pki", "issue", pki, name] +
                     (["--coordinator"] if coordinator else []))
        if p.returncode != 0:
            raise RingdError("ringctl pki issue %s %s: rc %d: %s" %
                             (pki, name, p.returncode, p.stderr.strip()))
        return (os.path.join(pki, name + ".crt"),
                os.path.join(pki, name + ".key"))

    def coord_conf_text(self, expect=None, extra=()):
        expect = self.cl.order if expect is None else expect
        lines = [
            "name coordinator",
            "listen %s:%d" % (self.cl.COORD_ADDR, self.PORT),
            "ca %s/ca.crt" % self.pki,
            "cert %s/coordinator.crt" % self.pki,
            "key %s/coordinator.key" % self.pki,
            "control_socket %s" % self.sock,
            "control_group root",
            "state_dir %s" % self.state_dir,
        ] + [
            # A directive takes at most 32 arguments: 30 names a line.
            "expect %s" % " ".join(expect[i:i + EXPECT_PER_LINE])
            for i in range(0, max(len(expect), 1), EXPECT_PER_LINE)
        ] + [
            "heartbeat_interval %dms" % self.heartbeat_ms,
            "heartbeat_misses %d" % self.misses,
        ]
        return "\n".join(lines + self.coord_extra + list(extra)) + "\n"

    def agent_conf_text(self, node, cert_name=None, pki=None, ca=None,
                        extra=()):
        pki = pki or self.pki
        cert_name = cert_name or node
        lines = [
            "node %s" % node,
            "coordinator %s:%d" % (self.cl.COORD_ADDR, self.PORT),
            "coordinator_name coordinator",
            "ca %s" % (ca or os.path.join(self.pki, "ca.crt")),
            "cert %s/%s.crt" % (pki, cert_name),
            "key %s/%s.key" % (pki, cert_name),
            "nominal_speed eth* 200G",
        ]
        if getattr(self.cl, "twins", False):
            # GB10 functions: the four enp*/enP* netdevs are the data
            # ports; the ifbs holding the PCIe budgets are not.
            lines += ["data_interface enp* enP*", "nominal_speed enp* 200G",
                      "nominal_speed enP* 200G"]
        return "\n".join(lines + self.agent_extra + list(extra)) + "\n"

    def write(self, name, text):
        path = os.path.join(self.conf_dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def start_coordinator(self, conf=None, wait=True):
        conf = conf or self.write("coordinator.conf", self.coord_conf_text())
        self.coord = self.cl.spawn(
            "coord", [self.path("ring-coordinator"), "-c", conf] +
            (["-d", self.coord_debug] if self.coord_debug else []),
            os.path.join(self.log_dir, "coordinator.log"),
            name="ring-coordinator", env=SANITIZER_ENV)
        if wait:
            def ready():
                if not self.coord.alive():
                    raise RingdError("ring-coordinator exited (rc %s):\n%s" %
                                     (self.coord.popen.returncode,
                                      tail(self.coord.log)))
                return (os.path.exists(self.sock) and
                        self.ringctl("status").returncode in (0, 1))
            wait_for(ready, 15, "the coordinator's control socket")
        return self.coord

    def spawn_agent(self, node, conf, where=None, label=None):
        label = label or "agent-" + node
        return self.cl.spawn(where or node,
                             [self.path("ring-agent"), "-c", conf],
                             os.path.join(self.log_dir, label + ".log"),
                             name=label, env=SANITIZER_ENV)

    def start_agent(self, node):
        conf = self.write("agent-%s.conf" % node, self.agent_conf_text(node))
        self.agents[node] = self.spawn_agent(node, conf)
        return self.agents[node]

    def start_all(self, timeout=20):
        self.start_coordinator()
        for n in self.cl.order:
            self.start_agent(n)
        self.wait_all_up(timeout)

    def start_agents_batched(self, nodes=None, batch=16, timeout=60):
        """Start the agents of nodes (default all) batch at a time, each
        batch connected (every one of it up in status) before the next:
        dozens of sanitizer-built agents starting at once on two cores
        would each take seconds to their first heartbeat."""
        nodes = list(self.cl.order if nodes is None else nodes)
        for i in range(0, len(nodes), batch):
            part = nodes[i:i + batch]
            for n in part:
                self.start_agent(n)
            self.wait_up(part, timeout)

    def wait_up(self, nodes, timeout=15):
        """Wait until each of nodes is up in status (its agent alive)."""
        want = set(nodes)

        def ok():
            for n in want:
                p = self.agents.get(n)
                if p is not None and not p.alive():
                    raise RingdError("agent %s exited (rc %s):\n%s" %
                                     (n, p.popen.returncode, tail(p.log)))
            rc, doc, _ = self.status()
            up = {e["node"] for e in (doc or {}).get("nodes", [])
                  if e.get("state") == "up"}
            return want <= up
        try:
            return wait_for(ok, timeout, "%d agents up (%s..%s)" % (
                len(nodes), nodes[0], nodes[-1]), interval=0.2)
        except (TimeoutError, RingdError) as e:
            raise RingdError("%s\n%s" % (e, self.log_tails()))

    def wait_all_up(self, timeout=15):
        def ok():
            for n, p in self.agents.items():
                if not p.alive():
                    raise RingdError("agent %s exited (rc %s):\n%s" %
                                     (n, p.popen.returncode, tail(p.log)))
            rc, doc, _ = self.status()
            # Up is the node table's word: health (and so the exit code)
            # is not healthy before a survey (no rank order yet).
            return rc in (0, 1) and doc and \
                doc.get("connected") == doc.get("expected") and \
                all(n["state"] == "up" for n in doc.get("nodes", [])
                    if n.get("expected")) and doc
        try:
            return wait_for(ok, timeout, "all agents up (every expected "
                            "node up in ringctl status)", interval=0.1)
        except (TimeoutError, RingdError) as e:
            raise RingdError("%s\n%s" % (e, self.log_tails()))

    def wait_state(self, node, state, timeout):
        return wait_for(lambda: self.node_state(node) == state, timeout,
                        "node %s to be %s" % (node, state), interval=0.05)

    # ------------------------------------------------------------ teardown
    def logs(self):
        try:
            return sorted(os.path.join(self.log_dir, f)
                          for f in os.listdir(self.log_dir))
        except FileNotFoundError:
            return []

    def log_tails(self, n=25):
        out = []
        for path in self.logs():
            out.append("---- %s (last %d lines)\n%s" % (path, n,
                                                       tail(path, n)))
        return "\n".join(out)

    def stop(self, grace=5.0):
        """SIGTERM everything; returns the names that needed SIGKILL."""
        return self.cl.stop_all(grace)

    def sanitizer_problems(self):
        probs = ["%s:\n%s" % r for r in sanitizer_reports(self.logs())]
        probs += ["%s (stderr):\n%s" % r for r in self.tool_reports]
        return probs

