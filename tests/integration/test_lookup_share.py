"""Host-name lookups on every node (ResolveRequest, behind `ringctl check
rendezvous`) under a flood from the control group: two unprivileged members
ask names that take the nodes' resolvers seconds (a DNS server in each
node's namespace that never answers), back to back, over raw control
connections; root's `check rendezvous` meanwhile gets every node's answer,
never "busy". The flood is real: the second member's lookups find the
non-root slot taken on the agents, or are held back by the coordinator's
one-per-user and group caps."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import pytest

from cluster import Cluster, wait_for
from conftest import new_prefix
from ringtest import (FAST_AGENT, NO_AUTO_SURVEY, SHORT_SURVEY,
                      neighbours_heard, ringd_up, throwaway_users)

ORDER = ["n1", "n2", "n3"]
SLOW_S = 3  # the nodes' resolver timeout for a name not in hosts

# Run as an unprivileged member of the control group (setpriv): lookups of
# names that are in no hosts file, one after another on one connection,
# until stdin closes; one JSON line per answer.
CLIENT = r'''
import json, select, socket, struct, sys, time

sock_path, tag = sys.argv[1], sys.argv[2]

def varint(v):
    out = b""
    while True:
        b = v & 0x7f
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])

def resolve_request(rid, name):
    inner = b"\x0a" + varint(len(name)) + name
    # Envelope: request_id = 1, resolve_request = 57; what a client says
    # of its requester (field 2) must not matter: it claims root (1).
    inner += b"\x10\x01"
    payload = (b"\x08" + varint(rid) + varint((57 << 3) | 2) +
               varint(len(inner)) + inner)
    return struct.pack("!IHHI", 0x52494E47, 1, 57, len(payload)) + payload

def read_frame(s):
    buf = b""
    need = 12
    while len(buf) < need:
        chunk = s.recv(need - len(buf))
        if not chunk:
            return None
        buf += chunk
        if len(buf) == 12 and need == 12:
            need = 12 + struct.unpack("!I", buf[8:12])[0]
    return struct.unpack("!H", buf[6:8])[0], buf[12:]

s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sock_path)
s.settimeout(30)
rid = 1
while True:
    r, _, _ = select.select([sys.stdin], [], [], 0)
    if r and not sys.stdin.readline():
        break
    t0 = time.monotonic()
    s.sendall(resolve_request(rid, ("slow-%s-%d" % (tag, rid)).encode()))
    f = read_frame(s)
    if f is None:
        print(json.dumps({"kind": "closed"}), flush=True)
        break
    typ, payload = f
    print(json.dumps({"kind": "reply" if typ == 58 else "error",
                      "busy": b"busy" in payload,
                      "took": time.monotonic() - t0}), flush=True)
    rid += 1
    if typ != 58:
        time.sleep(0.05)  # refused by the coordinator: ask again soon
'''

# A DNS server that never answers: the query waits out the timeout.
SILENT_DNS = r'''
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 53))
sys.stdin.read()
'''


@pytest.fixture
def users(root):
    """A throwaway control group and two users in it."""
    with throwaway_users("rglk", 2) as u:
        yield u


class Flood:
    def __init__(self, r, user, group, tag):
        self.p = subprocess.Popen(
            ["setpriv", "--reuid=%s" % user, "--regid=%s" % group,
             "--clear-groups", sys.executable, "-c", CLIENT, r.sock, tag],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        self.answers = []
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        for line in self.p.stdout:
            self.answers.append(json.loads(line))

    def stop(self):
        if self.p.poll() is None:
            try:
                self.p.stdin.close()
            except OSError:
                pass
            try:
                self.p.wait(SLOW_S + 15)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait(5)
        self.t.join(5)
        return self.p.stderr.read()


def check_rendezvous(r):
    p = r.run(["ringctl", "-s", r.sock, "-f", "json", "check",
               "rendezvous", r.cl.node("n1").mgmt_addr + ":29500"],
              timeout=40)
    assert p.returncode in (0, 1), (p.returncode, p.stdout, p.stderr)
    return json.loads(p.stdout)


def test_root_lookups_not_crowded_out(users, ringd_bin):
    group, names = users
    c = Cluster(ORDER, new_prefix())
    ctl_dir = tempfile.mkdtemp(prefix="rgt-lk-")
    os.chmod(ctl_dir, 0o755)
    dns, floods = [], []
    try:
        with ringd_up(c, ringd_bin, heartbeat_ms=500,
                      coord_extra=NO_AUTO_SURVEY + SHORT_SURVEY +
                      ["control_group %s" % group],
                      agent_extra=FAST_AGENT) as r:
            r.sock = os.path.join(ctl_dir, "coord.sock")
            # Every node's resolver: names not in hosts wait SLOW_S.
            for n in ORDER:
                ns = c.ns(n)
                with open(os.path.join("/etc/netns", ns, "resolv.conf"),
                          "w") as f:
                    f.write("nameserver 127.0.0.1\n"
                            "options timeout:%d attempts:1\n" % SLOW_S)
                dns.append(subprocess.Popen(
                    ["ip", "netns", "exec", ns, sys.executable, "-c",
                     SILENT_DNS], stdin=subprocess.PIPE,
                    stderr=subprocess.PIPE, text=True))
            r.setup_pki()
            r.start_all(timeout=20)
            wait_for(lambda: neighbours_heard(r, ORDER), 60,
                     "every node to hear its two neighbours")
            p = r.ringctl("survey", "--wait", fmt=None, timeout_s=60)
            assert p.returncode == 0, (p.stderr, r.log_tails())

            before = check_rendezvous(r)["rank0_name"]
            assert before["nodes_ok"] == len(ORDER), before

            floods += [Flood(r, u, group, "u%d" % i)
                       for i, u in enumerate(names)]
            # The flood holds the nodes' lookups: a slow answer is in.
            wait_for(lambda: any(a["kind"] == "reply" and
                                 a["took"] >= SLOW_S - 0.5
                                 for f in floods for a in f.answers),
                     SLOW_S + 20, "a flood lookup to take the slow path")
            for _ in range(3):
                r0 = check_rendezvous(r)["rank0_name"]
                assert r0["nodes_ok"] == len(ORDER), r0
                assert "busy" not in json.dumps(r0), r0
            errs = [f.stop() for f in floods]
            answers = [a for f in floods for a in f.answers]
            assert not any(a["kind"] == "closed" for a in answers), (
                answers, errs)
            # The flood did crowd its own class: some of it was turned
            # away (agents' non-root slot, or the coordinator's caps).
            assert any(a["busy"] for a in answers), answers
            # A client's claim to be root changed nothing: the slow
            # lookups held the others' slot, root's were never refused.
    finally:
        for f in floods:
            f.stop()
        for d in dns:
            try:
                d.stdin.close()
            except OSError:
                pass
            try:
                d.wait(5)
            except subprocess.TimeoutExpired:
                d.kill()
        shutil.rmtree(ctl_dir, ignore_errors=True)
