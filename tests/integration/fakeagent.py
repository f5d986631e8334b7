"""A hand-driven agent for attacking the coordinator: real mutual TLS with a
CA-issued certificate, frames and protobuf messages built by hand so that
they can be anything (missing fields, duplicates, oversized, hostile
strings). Field numbers follow proto/ring.proto."""

import os
import socket
import ssl
import struct
import threading
import time

MAGIC = 0x52494E47
VERSION = 1

# Envelope body field numbers (= frame header type).
ERROR = 16
HELLO = 17
HELLO_ACK = 18
HEARTBEAT = 19
INVENTORY = 20
NEIGHBOUR_TABLE = 27
PROBE_REQUEST = 28
PROBE_REPLY = 29
TEST_LISTEN_REQUEST = 30
TEST_LISTEN_REPLY = 31
TEST_RUN_REQUEST = 32
TEST_RESULT = 33


# ------------------------------------------------------------ encoding

def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def f_varint(num, v):
    return varint(num << 3) + varint(v)


def f_bytes(num, b):
    if isinstance(b, str):
        b = b.encode()
    return varint(num << 3 | 2) + varint(len(b)) + b


def frame(typ, body, request_id=0):
    env = (f_varint(1, request_id) if request_id else b"") + f_bytes(typ, body)
    return struct.pack("!IHHI", MAGIC, VERSION, typ, len(env)) + env


def hello(node, version="fake-1", caps=()):
    return (f_bytes(1, node) + f_bytes(2, version) +
            b"".join(f_bytes(3, c) for c in caps))


def interface(name, ipv4=(), mgmt=False, carrier=True, rdma=None):
    b = f_bytes(1, name) + f_varint(5, 1500) + f_varint(6, 1)
    for addr, prefix in ipv4:
        b += f_bytes(4, f_bytes(1, addr) + f_varint(2, prefix))
    if carrier:
        b += f_varint(8, 1)
    if mgmt:
        b += f_varint(20, 1)
    if rdma:
        b += f_bytes(17, rdma)
    return b


def inventory(node=None, interfaces=(), mgmt_interface="mgmt0",
              hostname="fake", raw_interfaces=b""):
    b = b""
    if node is not None:
        b += f_bytes(1, node)
    b += f_bytes(2, hostname) + f_bytes(4, mgmt_interface)
    for i in interfaces:
        b += f_bytes(5, i)
    b += raw_interfaces
    b += f_bytes(7, f_varint(1, 1 << 20) + f_varint(2, 1 << 19))
    return b


def neighbour(local_if, remote_node, remote_if, ttl=120):
    return (f_bytes(1, local_if) + f_bytes(2, remote_node) +
            f_bytes(3, remote_if) + f_varint(6, ttl))


def neighbour_table(neighbours=(), refused=()):
    b = b"".join(f_bytes(1, n) for n in neighbours) + f_varint(2, 1)
    for port, count in refused:
        b += f_bytes(5, f_bytes(1, port) + f_varint(2, count))
    return b


def error(code, text):
    return f_varint(1, code) + f_bytes(2, text)


def probe_reply(reachable=False, kind="unreachable"):
    return f_bytes(1, kind) + (f_varint(6, 1) if reachable else b"")


def test_listen_reply(port):
    return f_varint(1, port)


def test_result(err=""):
    return f_bytes(1, err) if err else b""


# ------------------------------------------------------------ decoding

def fields(buf):
    """{field number: [values]}: ints for varints, bytes otherwise."""
    out, i = {}, 0
    while i < len(buf):
        key, i = _read_varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _read_varint(buf, i)
        elif wt == 2:
            n, i = _read_varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wt == 1:
            v, i = buf[i:i + 8], i + 8
        elif wt == 5:
            v, i = buf[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        out.setdefault(num, []).append(v)
    return out


def _read_varint(buf, i):
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, i


class Message:
    def __init__(self, typ, request_id, body):
        self.type = typ
        self.request_id = request_id
        self.body = fields(body)

    def text(self, num):
        return self.body.get(num, [b""])[0].decode(errors="replace")

    def __repr__(self):
        return "Message(type=%d, id=%d)" % (self.type, self.request_id)


# ------------------------------------------------------------ the agent

class FakeAgent:
    """Connects from namespace `where` with the certificate `cert_name`;
    says Hello as `node`; a thread heartbeats and hands requests from the
    coordinator to `on_request(agent, msg)` (default: remember them)."""

    def __init__(self, ringd, node, cert_name=None, where="n1",
                 on_request=None, port=None, hello_now=True):
        self.r = ringd
        self.node = node
        self.cert = cert_name or node
        self.where = where
        self.port = port or ringd.PORT
        self.on_request = on_request
        self.requests = []
        self.replies = []  # messages that answered us (errors, acks)
        self.lock = threading.Lock()
        self.closed = False
        self.close_reason = None  # why the reader stopped, for failures
        self.sock = None
        self.rbuf = bytearray()
        self._stop = threading.Event()
        self._thread = None
        if hello_now:
            self.connect()
            self.say_hello()

    def connect(self):
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        ctx.load_verify_locations(os.path.join(self.r.pki, "ca.crt"))
        ctx.load_cert_chain(os.path.join(self.r.pki, self.cert + ".crt"),
                            os.path.join(self.r.pki, self.cert + ".key"))
        raw = self.r.cl.socket(self.where, socket.AF_INET,
                               socket.SOCK_STREAM)
        raw.settimeout(5)
        raw.connect((self.r.cl.COORD_ADDR, self.port))
        self.sock = ctx.wrap_socket(raw, server_hostname="coordinator")
        return self.sock

    def send(self, typ, body, request_id=0):
        self.send_raw(frame(typ, body, request_id))

    def send_raw(self, data):
        with self.lock:
            self.sock.settimeout(5)
            self.sock.sendall(data)

    def _frame(self):
        """The next complete frame from the buffer, or None."""
        if len(self.rbuf) < 12:
            return None
        magic, ver, typ, length = struct.unpack("!IHHI", self.rbuf[:12])
        assert magic == MAGIC and ver == VERSION, (magic, ver)
        if len(self.rbuf) < 12 + length:
            return None
        env = fields(bytes(self.rbuf[12:12 + length]))
        del self.rbuf[:12 + length]
        rid = env.get(1, [0])[0]
        return Message(typ, rid, env.get(typ, [b""])[0])

    def recv(self, timeout=5):
        """The next message; socket.timeout if none within timeout (a
        partial frame stays buffered)."""
        deadline = time.monotonic() + timeout
        while True:
            m = self._frame()
            if m:
                return m
            left = deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout("no message")
            # OpenSSL's SSL object must not be used by two threads at
            # once: reads take the send lock too, a slice at a time, so
            # a send from the test waits at most 50 ms.
            with self.lock:
                self.sock.settimeout(min(left, 0.05))
                try:
                    chunk = self.sock.recv(65536)
                except (socket.timeout, ssl.SSLWantReadError):
                    continue
            if not chunk:
                raise ConnectionError("closed by the coordinator")
            self.rbuf += chunk

    def say_hello(self):
        self.send(HELLO, hello(self.node), request_id=1)
        m = self.recv()
        if m.type != HELLO_ACK:
            raise ConnectionError("Hello refused: %s" % m.text(2))
        self.hb_ms = m.body.get(2, [500])[0]
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return m

    def _loop(self):
        seq = 0
        next_hb = 0
        while not self._stop.is_set():
            now = time.monotonic()
            if now >= next_hb:
                seq += 1
                try:
                    self.send(HEARTBEAT, f_varint(1, seq))
                except OSError as e:
                    self.close_reason = "heartbeat: %r" % e
                    break
                next_hb = now + self.hb_ms / 1000.0
            try:
                m = self.recv(timeout=0.05)
            except (socket.timeout, ssl.SSLWantReadError):
                continue
            except (OSError, ConnectionError, ValueError) as e:
                self.close_reason = repr(e)
                break
            if m.type == HEARTBEAT:
                continue
            if m.type in (ERROR,):
                self.replies.append(m)
                continue
            self.requests.append(m)
            if self.on_request:
                try:
                    self.on_request(self, m)
                except OSError as e:
                    self.close_reason = "on_request: %r" % e
                    break
        self.closed = True

    def wait_request(self, typ, timeout=20, n=1):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = [m for m in self.requests if m.type == typ]
            if len(got) >= n:
                return got[n - 1]
            time.sleep(0.05)
        raise TimeoutError("no request of type %d for %s" % (typ, self.node))

    def wait_error(self, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.replies:
                return self.replies.pop(0)
            if self.closed:
                print("fake %s: reader stopped: %s" %
                      (self.node, self.close_reason))
                return None
            time.sleep(0.05)
        raise TimeoutError("no Error for %s" % self.node)

    def close(self):
        self._stop.set()
        if self._thread:
            self._thread.join(5)
        try:
            self.sock.close()
        except OSError:
            pass
