"""The control socket under a local flood (issue 8, defect 4): members of
the control group hold or trickle connections, pipeline requests and never
read; root's `ringctl status` still answers, trickled requests meet an
absolute deadline, each user and the group as a whole are capped, and the
ASan coordinator stays clean. No agents are needed: the coordinator serves
its socket alone."""

import grp
import json
import os
import queue
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

import pytest

import cluster as cl
from conftest import new_prefix
from daemons import Ringd
from fakeagent import varint
from ringtest import throwaway_users

# coordinator/control.c
REQUEST_MS = 5000
PER_UID = 8
MAX_CLIENTS = 64
ROOT_RESERVE = 16
MAX_FRAME = 64 << 10
GROUP_SLOTS = MAX_CLIENTS - ROOT_RESERVE
HOLDERS = GROUP_SLOTS // PER_UID  # users that fill the group's share
SLACK_S = 4.0  # ASan on a 2-core box

# The flood client, run as an unprivileged user (setpriv). One JSON line per
# event on stdout. Modes:
#   hold N     N connections, each sending a whole StatusRequest every
#              second and reading its reply (legitimate use keeps a slot);
#              once all N are served: one more connection, and what came of
#              it; then hold until stdin closes.
#   trickle N  N connections, one byte of a StatusRequest frame a second
#              each (the frame would be whole only after 15 s); when each
#              is closed by the coordinator, and whether a reply came.
#   probe      one connection, one request: what the answer was.
CLIENT = r'''
import json, os, select, socket, struct, sys, time

sock_path, mode = sys.argv[1], sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 1

def say(**kw):
    sys.stdout.write(json.dumps(kw) + "\n")
    sys.stdout.flush()

def varint(v):
    out = b""
    while True:
        b = v & 0x7f
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])

def status_request(rid):
    payload = b"\x08" + varint(rid) + b"\xaa\x01\x00"
    return struct.pack("!IHHI", 0x52494E47, 1, 21, len(payload)) + payload

def read_frame(s, timeout):
    """(type, payload) or None on EOF/reset; raises socket.timeout."""
    s.settimeout(timeout)
    buf = b""
    need = 12
    while len(buf) < need:
        try:
            chunk = s.recv(need - len(buf))
        except (ConnectionResetError, BrokenPipeError):
            return None
        if not chunk:
            return None
        buf += chunk
        if len(buf) == 12 and need == 12:
            need = 12 + struct.unpack("!I", buf[8:12])[0]
    return struct.unpack("!H", buf[6:8])[0], buf[12:]

def answer(s, rid, timeout=10):
    """What came back for one request: kind and text."""
    try:
        s.sendall(status_request(rid))
    except OSError as e:
        # Refused before we wrote: the refusal may still be readable.
        pass
    try:
        f = read_frame(s, timeout)
    except socket.timeout:
        return {"kind": "timeout"}
    if f is None:
        return {"kind": "closed"}
    typ, payload = f
    if typ == 16:
        return {"kind": "error", "text": payload.decode(errors="replace")}
    if typ == 22:
        return {"kind": "status"}
    return {"kind": "type%d" % typ}

def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock_path)
    return s

if mode == "probe":
    s = connect()
    say(event="probe", **answer(s, 7))
elif mode == "hold":
    conns = [connect() for _ in range(n)]
    rid = 1
    announced = False
    while True:
        for i, s in enumerate(conns):
            a = answer(s, rid)
            rid += 1
            if a["kind"] != "status":
                say(event="lost", index=i, **a)
                sys.exit(1)
        if not announced:
            say(event="holding", n=n)
            extra = connect()
            say(event="extra", **answer(extra, 99))
            extra.close()
            announced = True
        r, _, _ = select.select([sys.stdin], [], [], 1.0)
        if r and not sys.stdin.readline():
            break
elif mode == "trickle":
    frame = status_request(12345)
    conns = [connect() for _ in range(n)]
    start = time.monotonic()
    sent = [0] * n
    closed = [None] * n
    say(event="trickling", n=n)
    while time.monotonic() - start < 30 and None in closed:
        for i, s in enumerate(conns):
            if closed[i] is not None:
                continue
            r, _, _ = select.select([s], [], [], 0)
            if r:
                try:
                    data = s.recv(4096)
                except OSError:
                    data = b""
                closed[i] = time.monotonic() - start
                say(event="closed", index=i, after_s=closed[i],
                    sent=sent[i], reply=bool(data))
                continue
            if sent[i] < len(frame):
                try:
                    s.send(frame[sent[i]:sent[i] + 1])
                    sent[i] += 1
                except OSError:
                    closed[i] = time.monotonic() - start
                    say(event="closed", index=i, after_s=closed[i],
                        sent=sent[i], reply=False)
        time.sleep(1.0)
    for i in range(n):
        if closed[i] is None:
            say(event="survived", index=i, sent=sent[i])
'''


class Flood:
    """A flood client process running as user:group; a thread reads its
    events (select on a buffered pipe would miss lines already read)."""

    def __init__(self, r, user, group, *args):
        self.p = subprocess.Popen(
            ["setpriv", "--reuid=%s" % user, "--regid=%s" % group,
             "--clear-groups", sys.executable, "-c", CLIENT, r.sock] +
            [str(a) for a in args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        self.events = []
        self.queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            self.queue.put(json.loads(line))
        self.queue.put(None)

    def next_event(self, timeout):
        """The next JSON event, waiting at most timeout seconds."""
        try:
            ev = self.queue.get(timeout=max(0.0, timeout))
        except queue.Empty:
            raise TimeoutError("no event from the flood client within "
                               "%.1fs; so far %r" % (timeout, self.events))
        if ev is None:
            raise EOFError("flood client exited (rc %s): %r; stderr %r" %
                           (self.p.wait(5), self.events, self.stderr()))
        self.events.append(ev)
        return ev

    def wait_event(self, name, timeout):
        deadline = time.monotonic() + timeout
        while True:
            ev = self.next_event(max(0.1, deadline - time.monotonic()))
            if ev["event"] == name:
                return ev
            if ev["event"] == "lost":
                raise AssertionError("flood client lost a connection: %r"
                                     % ev)

    def stderr(self):
        if self.p.poll() is None:
            return ""
        return self.p.stderr.read()

    def stop(self):
        if self.p.poll() is None:
            try:
                self.p.stdin.close()
            except OSError:
                pass
            try:
                self.p.wait(5)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait(5)


@pytest.fixture
def users(root):
    """A throwaway control group and HOLDERS + 1 users in it."""
    with throwaway_users("rgtc", HOLDERS + 1) as u:
        yield u


@pytest.fixture
def coord(root, ringd_bin, users):
    """The ASan coordinator alone, its socket in a world-traversable
    directory owned by the throwaway group."""
    group, _ = users
    c = cl.Cluster(["n1", "n2"], new_prefix())
    ctl_dir = tempfile.mkdtemp(prefix="rgt-ctl-")
    os.chmod(ctl_dir, 0o755)
    r = None
    floods = []
    c.up()
    try:
        r = Ringd(c, ringd_bin, coord_extra=["control_group %s" % group])
        r.sock = os.path.join(ctl_dir, "coord.sock")
        r.setup_pki(names=["coordinator"])
        r.start_coordinator()
        assert os.stat(r.sock).st_gid == grp.getgrnam(group).gr_gid
        yield r, floods
    finally:
        for f in floods:
            f.stop()
        alive = r.coord.alive() if r and r.coord else False
        stubborn = r.stop() if r else []
        probs = r.sanitizer_problems() if r else []
        tails = r.log_tails(30) if r else ""
        c.down(keep_workdir=bool(probs or os.environ.get("RINGD_KEEP")))
        shutil.rmtree(ctl_dir, ignore_errors=True)
        assert not probs, "sanitizer reports:\n%s" % "\n".join(probs)
        assert not stubborn, "ignored SIGTERM: %s\n%s" % (stubborn, tails)
        assert alive, "the coordinator died:\n%s" % tails


def root_status(r):
    """root's `ringctl status` answers in time: (seconds, doc)."""
    t0 = time.monotonic()
    p = r.ringctl("status", timeout_s=3)
    took = time.monotonic() - t0
    # 1: degraded (no agent is up), still an answer.
    assert p.returncode in (0, 1), "root's status refused: rc %d %s\n%s" % (
        p.returncode, p.stderr, r.log_tails(20))
    doc = json.loads(p.stdout)
    assert doc["coordinator"] == "coordinator"
    return took, doc


def test_root_answered_while_group_floods(coord, users):
    r, floods = coord
    group, names = users
    holders = [Flood(r, u, group, "hold", PER_UID) for u in names[:HOLDERS]]
    floods.extend(holders)
    for f in holders:
        f.wait_event("holding", 30)
    # Each user's ninth connection is refused, saying why.
    for f in holders:
        ev = f.wait_event("extra", 15)
        assert ev["kind"] == "error", ev
        assert "too many control connections from this user" in ev["text"]
    # The group holds its whole share: another member gets nothing more...
    late = Flood(r, names[HOLDERS], group, "probe")
    floods.append(late)
    ev = late.wait_event("probe", 15)
    assert ev["kind"] == "error", ev
    assert "kept for root" in ev["text"], ev
    # ringctl says so too.
    p = subprocess.run(
        ["setpriv", "--reuid=%s" % names[HOLDERS], "--regid=%s" % group,
         "--clear-groups", r.path("ringctl"), "-s", r.sock, "status"],
        capture_output=True, text=True, timeout=30, env=r.env())
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "kept for root" in p.stderr, p.stderr
    # ...while root always gets in, again and again.
    for _ in range(5):
        root_status(r)
    # The holders were served throughout (a lost connection raises).
    for f in holders:
        assert f.p.poll() is None, f.events
    # When a holder leaves, its slots are the group's again.
    holders[0].stop()
    cl.wait_for(lambda: Flood(r, names[HOLDERS], group, "probe")
                .wait_event("probe", 10)["kind"] == "status", 15,
                "a freed slot for another member")


def test_trickled_requests_meet_a_deadline(coord, users):
    r, floods = coord
    group, names = users
    # One byte a second renews any read timeout; the deadline is absolute.
    tricklers = [Flood(r, u, group, "trickle", PER_UID) for u in names[:3]]
    floods.extend(tricklers)
    for f in tricklers:
        f.wait_event("trickling", 30)
    # Root is served while they trickle.
    root_status(r)
    for f in tricklers:
        for _ in range(PER_UID):
            ev = f.next_event(REQUEST_MS / 1000.0 + 10 + SLACK_S)
            assert ev["event"] == "closed", "a trickler survived: %r" % ev
            # Closed by the deadline, long before the 16-byte request could
            # have been whole, and no reply to a request never made.
            assert ev["sent"] < 12, ev
            assert not ev["reply"], ev
            assert ev["after_s"] >= REQUEST_MS / 1000.0 - 1.5, ev
    root_status(r)


def frame(typ, payload):
    return struct.pack("!IHHI", 0x52494E47, 1, typ, len(payload)) + payload


def status_request(rid):
    return frame(21, b"\x08" + varint(rid) + b"\xaa\x01\x00")


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


def request_id(payload):
    """Envelope field 1 (request_id), which protobuf-c packs first."""
    if not payload or payload[0] != 0x08:
        return 0
    v, shift = 0, 0
    for b in payload[1:]:
        v |= (b & 0x7f) << shift
        shift += 7
        if not b & 0x80:
            return v
    return None


def test_pipelined_requests_each_answered_once(coord):
    """Far more pipelined requests than the output watermark holds replies
    for (~80 bytes each, 1 MiB): reading pauses and resumes, and every
    request gets exactly one reply, in order."""
    r, _ = coord
    n = 50000
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(r.sock)
    sent = []
    progress = [0, time.monotonic()]  # bytes sent, when last

    def send():
        data = b"".join(status_request(i) for i in range(1, n + 1))
        try:
            for off in range(0, len(data), 4096):
                s.sendall(data[off:off + 4096])
                progress[:] = [off, time.monotonic()]
            sent.append(True)
        except OSError as e:
            sent.append(e)
    t = threading.Thread(target=send, daemon=True)
    t.start()
    # Read nothing until the coordinator stops reading us (the sender
    # stalls): its replies have reached the watermark.
    cl.wait_for(lambda: not sent and time.monotonic() - progress[1] > 1.0,
                10, "the coordinator to stop reading a client that does "
                "not read its replies")
    ids = []
    replied = 0
    for _ in range(n):
        f = read_frame(s)
        assert f is not None, "closed after %d replies" % len(ids)
        assert f[0] == 22, f
        replied += len(f[1]) + 12
        ids.append(request_id(f[1]))
    t.join(30)
    assert sent == [True]
    assert ids == list(range(1, n + 1))
    assert replied > 2 << 20, "the watermark was never reached (%d bytes)" \
        % replied
    # Exactly one each: nothing more comes.
    s.settimeout(1.0)
    with pytest.raises(socket.timeout):
        s.recv(1)
    s.close()
    root_status(r)


def test_reader_that_never_reads_is_throttled(coord):
    """Requests pipelined without reading the replies: the coordinator
    stops reading that client (the sender blocks) instead of queueing
    replies without bound, and the request deadline closes it."""
    r, _ = coord
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(r.sock)
    s.setblocking(False)
    chunk = b"".join(status_request(i) for i in range(1, 1001))
    accepted = 0
    blocked_since = None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            accepted += s.send(chunk)
            blocked_since = None
        except BlockingIOError:
            if blocked_since is None:
                blocked_since = time.monotonic()
            elif time.monotonic() - blocked_since > 1.0:
                break
            time.sleep(0.05)
        except (BrokenPipeError, ConnectionResetError) as e:
            pytest.fail("closed before the sender blocked (%d bytes "
                        "accepted): %r" % (accepted, e))
    assert blocked_since is not None, "the coordinator read %d bytes of " \
        "requests whose replies nobody read" % accepted
    # ~16-byte requests; replies a few hundred bytes: reading stops once
    # about 1 MiB of replies waits, plus what the socket buffers hold.
    assert accepted < 4 << 20, accepted
    root_status(r)

    # Nothing is read any more, so no request completes: the deadline
    # closes the connection.
    def closed():
        try:
            s.send(b"\0")
        except BlockingIOError:
            return False
        except (BrokenPipeError, ConnectionResetError):
            return True
        return False
    cl.wait_for(closed, REQUEST_MS / 1000.0 + 10, "the stalled client to be "
                "closed")
    s.close()
    root_status(r)


def test_oversized_control_frame_refused(coord):
    """Control requests are small: a frame announcing more than 64 KiB is
    refused at its header, without waiting for (or buffering) the body."""
    r, _ = coord
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(r.sock)
    s.sendall(struct.pack("!IHHI", 0x52494E47, 1, 21, MAX_FRAME + 1))
    try:
        data = s.recv(1)
    except ConnectionResetError:
        data = b""
    assert data == b""
    s.close()
    # A request just under the limit is still read (and refused for what
    # it is, with a reply).
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(r.sock)
    pad = MAX_FRAME - 16
    # StatusRequest with request_id 5 and an unknown field 15 (bytes)
    # padding it out: unknown fields are skipped.
    payload = (b"\x08\x05" + b"\x7a" + varint(pad) + b"x" * pad +
               b"\xaa\x01\x00")
    assert len(payload) <= MAX_FRAME
    s.sendall(frame(21, payload))
    f = read_frame(s)
    assert f is not None and f[0] == 22 and request_id(f[1]) == 5, f
    s.close()
    root_status(r)
