"""The coordinator's HTTP listener (metrics_listen: /metrics, the page)
under the attacks that broke it when it was libevent's evhttp, performed
for real against the ASan coordinator from its own namespace's loopback,
each attacker bound to its own 127.0.0.x: a slowloris from one address
(connections sending a header line every few seconds, reopened when
closed) while /metrics is scraped from another every second; a connection
pipelining `GET /` as fast as it can and never reading (RSS must stay
flat); the per-source and total caps, oversized headers, and a request
that never completes, closed at its deadline. No agents are needed: the
coordinator serves its listener alone."""

import os
import select
import socket
import threading
import time

import pytest

import cluster as cl
import daemons
from conftest import new_prefix
from daemons import Ringd

PORT = 9468
# coordinator/http_serve.h
REQUEST_S = 10.0
PER_SOURCE = 8
MAX_CONNS = 64
MAX_HEAD = 8192
SLACK_S = 2.5  # ASan on a 2-core box shared with other work
SCRAPE_S = 1.0  # what a scrape may take while under attack


@pytest.fixture(scope="module")
def coord(root, ringd_bin):
    """The ASan coordinator alone, serving metrics_listen on loopback; a
    small ASan quarantine so that RSS shows what is held, not what was
    freed recently."""
    c = cl.Cluster(["n1", "n2"], new_prefix())
    r = None
    c.up()
    saved = dict(daemons.SANITIZER_ENV)
    try:
        r = Ringd(c, ringd_bin,
                  coord_extra=["metrics_listen 127.0.0.1:%d" % PORT,
                               "survey_interval 0"])
        r.setup_pki(names=["coordinator"])
        daemons.SANITIZER_ENV["ASAN_OPTIONS"] += ":quarantine_size_mb=4"
        try:
            r.start_coordinator()
        finally:
            daemons.SANITIZER_ENV.clear()
            daemons.SANITIZER_ENV.update(saved)
        yield r
    finally:
        alive = r.coord.alive() if r and r.coord else False
        stubborn = r.stop() if r else []
        probs = r.sanitizer_problems() if r else []
        tails = r.log_tails(30) if r else ""
        c.down(keep_workdir=bool(probs or os.environ.get("RINGD_KEEP")))
        assert not probs, "sanitizer reports:\n%s" % "\n".join(probs)
        assert not stubborn, "ignored SIGTERM: %s\n%s" % (stubborn, tails)
        assert alive, "the coordinator died:\n%s" % tails


def connect(r, src):
    """A TCP connection from src (an address on the coordinator's
    loopback) to the listener."""
    s = cl.socket_in(r.cl.ns("coord"), bind=(src, 0))
    s.settimeout(5)
    s.connect(("127.0.0.1", PORT))
    return s


def read_reply(s, deadline):
    """Bytes until EOF or deadline (time.monotonic())."""
    buf = b""
    while time.monotonic() < deadline:
        s.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            break
        except ConnectionResetError:
            break
        if not chunk:
            break
        buf += chunk
    return buf


def status_of(reply):
    parts = reply.split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1."):
        return None
    return int(parts[1])


def scrape(r, src="127.0.0.1", path="/metrics", timeout=5.0):
    """(status, seconds, reply) of one GET with Connection: close."""
    t0 = time.monotonic()
    s = connect(r, src)
    try:
        s.sendall(b"GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                  % path.encode())
        reply = read_reply(s, t0 + timeout)
    finally:
        s.close()
    return status_of(reply), time.monotonic() - t0, reply


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def served(r):
    st, took, reply = scrape(r)
    assert st == 200, reply[:300]
    assert b"ringd_coordinator_info{" in reply
    return took


class Slowloris(threading.Thread):
    """n connections from src, each sending one header line every
    `every` seconds and never the blank line that ends a request; each
    closed one is reopened a second later. Records each connection's
    life: (opened, closed, status of what came back, lines sent)."""

    def __init__(self, r, src, n, every, duration):
        super().__init__(daemon=True)
        self.r, self.src, self.n = r, src, n
        self.every, self.duration = every, duration
        self.lives = []
        self.error = None

    def run(self):
        try:
            self._run()
        except BaseException as e:  # reported by the test
            self.error = e

    def _run(self):
        slots = [None] * self.n  # [sock, opened, next_send, lines]
        reopen = [0.0] * self.n
        end = time.monotonic() + self.duration
        while time.monotonic() < end:
            now = time.monotonic()
            for i in range(self.n):
                if slots[i] is None and now < reopen[i]:
                    continue
                if slots[i] is None:
                    s = connect(self.r, self.src)
                    s.setblocking(False)
                    slots[i] = [s, time.monotonic(), 0.0, 0]
                s, opened, next_send, lines = slots[i]
                readable, _, _ = select.select([s], [], [], 0)
                if readable:
                    try:
                        data = s.recv(4096)
                    except OSError:
                        data = b""
                    self.lives.append((opened, time.monotonic(),
                                       status_of(data), lines))
                    s.close()
                    slots[i] = None
                    reopen[i] = now + 1.0
                    continue
                if now >= next_send:
                    line = (b"GET /metrics HTTP/1.1\r\n" if not lines
                            else b"X-Slow-%d: a\r\n" % lines)
                    try:
                        s.send(line)
                        slots[i][3] += 1
                    except OSError:
                        pass
                    slots[i][2] = now + self.every
            time.sleep(0.2)
        for slot in slots:
            if slot:
                self.lives.append((slot[1], None, None, slot[3]))
                slot[0].close()


def test_slowloris_does_not_starve_scrapes(coord):
    r = coord
    attack = Slowloris(r, "127.0.0.2", 3 * PER_SOURCE, every=3.0,
                       duration=30.0)
    attack.start()
    took = []
    t0 = time.monotonic()
    while attack.is_alive():
        took.append(served(r))
        time.sleep(max(0.0, 1.0 - (time.monotonic() - t0) % 1.0))
    attack.join()
    assert attack.error is None, attack.error
    print("slowloris: %d scrapes, slowest %.3fs; %d attacker connections "
          "ended" % (len(took), max(took), len(attack.lives)))
    assert len(took) >= 25, took
    assert max(took) < SCRAPE_S, took
    held = [lv for lv in attack.lives if lv[2] != 503]
    refused = [lv for lv in attack.lives if lv[2] == 503]
    # Never a request through; the ones let in were closed by the deadline
    # (408), bytes every 3 s notwithstanding; the ones beyond the cap were
    # refused at once.
    assert all(lv[2] in (408, 503, None) for lv in attack.lives), \
        attack.lives
    ended = [lv for lv in held if lv[1] is not None]
    for opened, closed, st, lines in ended:
        assert closed - opened <= REQUEST_S + SLACK_S, (closed - opened,
                                                        lines)
    # (a connection closed without a word was displaced by a newer one
    # from its address before it had sent anything)
    timed_out = [lv for lv in ended if lv[2] == 408]
    assert len(timed_out) >= PER_SOURCE, attack.lives
    for opened, closed, st, lines in timed_out:
        assert closed - opened >= REQUEST_S - 1.0, (closed - opened, lines)
    assert refused, attack.lives


def test_pipelined_flood_never_read(coord):
    r = coord
    pid = r.coord.popen.pid
    served(r)
    rss0 = rss_kib(pid)
    stop = threading.Event()
    sent = [0, 0]  # bytes, connections

    def flood():
        req = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * 64
        while not stop.is_set():
            s = connect(r, "127.0.0.3")
            s.setblocking(False)
            sent[1] += 1
            try:
                while not stop.is_set():
                    _, w, _ = select.select([], [s], [], 0.1)
                    try:
                        if w:
                            sent[0] += s.send(req)
                    except BlockingIOError:
                        pass
            except OSError:
                pass  # closed by the reply deadline: open another
            finally:
                s.close()

    t = threading.Thread(target=flood, daemon=True)
    t.start()
    peak = rss0
    took = []
    end = time.monotonic() + 12
    try:
        while time.monotonic() < end:
            took.append(served(r))
            peak = max(peak, rss_kib(pid))
            time.sleep(0.5)
    finally:
        stop.set()
        t.join(10)
    print("pipelined flood: %d bytes of requests on %d connections; RSS "
          "%d -> peak %d KiB; scrapes took at most %.3fs" %
          (sent[0], sent[1], rss0, peak, max(took)))
    assert sent[0] > 100000, sent
    assert peak - rss0 < 10 * 1024, (rss0, peak)
    assert max(took) < SCRAPE_S, took


def test_request_never_whole_closed_at_deadline(coord):
    r = coord
    s = connect(r, "127.0.0.5")
    t0 = time.monotonic()
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    reply = read_reply(s, t0 + REQUEST_S + 10)
    took = time.monotonic() - t0
    s.close()
    assert status_of(reply) == 408, reply
    assert b"Connection: close\r\n" in reply
    assert REQUEST_S - 0.5 <= took <= REQUEST_S + SLACK_S, took
    # An idle connection (nothing sent) is closed at the same deadline.
    s = connect(r, "127.0.0.5")
    t0 = time.monotonic()
    reply = read_reply(s, t0 + REQUEST_S + 10)
    took = time.monotonic() - t0
    s.close()
    assert reply == b""
    assert REQUEST_S - 0.5 <= took <= REQUEST_S + SLACK_S, took


def test_per_source_cap_keeps_room_for_others(coord):
    r = coord
    held = []
    try:
        for _ in range(PER_SOURCE):
            s = connect(r, "127.0.0.6")
            s.sendall(b"GET /metrics HTTP/1.1\r\n")  # started, not whole
            held.append(s)
        late = connect(r, "127.0.0.6")
        reply = read_reply(late, time.monotonic() + 5)
        late.close()
        assert status_of(reply) == 503, reply
        assert b"too many connections from this address" in reply
        # Another address is served meanwhile.
        served(r)
        st, _, reply = scrape(r, src="127.0.0.7", path="/")
        assert st == 200, reply[:300]
        # The held ones are still open (their deadline has not come).
        for s in held:
            s.setblocking(False)
            with pytest.raises(BlockingIOError):
                s.recv(1)
    finally:
        for s in held:
            s.close()


def test_total_cap(coord):
    r = coord
    held = []
    try:
        # Every slot busy, eight sources holding eight each: a newcomer
        # from a ninth gets in, one of the busiest source's closed for it.
        for i in range(MAX_CONNS):
            s = connect(r, "127.0.1.%d" % (1 + i // PER_SOURCE))
            s.sendall(b"GET /metrics HTTP/1.1\r\n")
            held.append(s)
        time.sleep(0.3)  # all accepted
        served(r)
        closed = []
        for s in held:
            s.setblocking(False)
            try:
                if s.recv(1) == b"":
                    closed.append(s)
            except BlockingIOError:
                pass
        assert len(closed) == 1, len(closed)
        for s in held:
            s.close()
        held = []
        # Sixty-four sources holding one each: a newcomer is refused (it
        # would be the busiest's equal), until one of them leaves.
        for i in range(MAX_CONNS):
            s = connect(r, "127.0.2.%d" % (1 + i))
            s.sendall(b"GET /metrics HTTP/1.1\r\n")
            held.append(s)
        time.sleep(0.3)
        st, _, reply = scrape(r)
        assert st == 503, reply
        assert b"too many connections (at most" in reply
        held.pop().close()
        cl.wait_for(lambda: scrape(r)[0] == 200, 5, "a freed slot")
    finally:
        for s in held:
            s.close()


def test_oversized_headers_refused(coord):
    r = coord
    s = connect(r, "127.0.0.8")
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Pad: " +
              b"a" * (MAX_HEAD + 4000) + b"\r\n\r\n")
    reply = read_reply(s, time.monotonic() + 5)
    s.close()
    assert status_of(reply) == 431, reply[:300]
    served(r)


def test_real_client_keep_alive_head_and_http10(coord):
    """curl as a real HTTP client: two pages on one kept connection, HEAD
    (the length, no body), HTTP/1.0 (closed after the reply)."""
    r = coord
    base = "http://127.0.0.1:%d" % PORT
    p = r.cl.exec("coord", ["curl", "-sv", "-m", "5", "-o", "/dev/null",
                            "-o", "/dev/null", base + "/metrics",
                            base + "/"])
    assert p.returncode == 0, p.stderr
    assert p.stderr.count("< HTTP/1.1 200 OK") == 2, p.stderr
    assert "Re-using existing connection" in p.stderr or \
        "Reusing existing" in p.stderr, p.stderr
    p = r.cl.exec("coord", ["curl", "-sI", "-m", "5", base + "/ring.svg"])
    assert p.returncode == 0, p.stderr
    head = p.stdout.lower()
    assert "content-type: image/svg+xml; charset=utf-8" in head, p.stdout
    assert int(head.split("content-length: ")[1].split()[0]) > 100
    assert "cache-control: no-store" in head
    assert "x-content-type-options: nosniff" in head
    p = r.cl.exec("coord", ["curl", "-sv", "-m", "5", "--http1.0",
                            base + "/metrics"])
    assert p.returncode == 0, p.stderr
    assert "ringd_coordinator_info{" in p.stdout
    assert "Connection: close" in p.stderr, p.stderr
    p = r.cl.exec("coord", ["curl", "-s", "-m", "5", "-X", "POST", "-d", "x",
                            "-w", "%{http_code}", "-o", "/dev/null",
                            base + "/metrics"])
    assert p.stdout == "405", p.stdout
