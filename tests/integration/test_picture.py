"""The picture of the ring (issue 13) in a real browser: the coordinator
of the reference cluster's ring n1-n2-n4-n3 serves its page on metrics_listen;
Debian's Chromium, headless, loads it from inside the coordinator's
namespace, and the test asserts on the document Chromium built (the nodes
in ring order, clockwise; every cable up; the diagonals checked), then
pulls a cable (the wire's ends set down) and asserts that the page shows
that cable down once the coordinator has noticed. Chromium's screenshots
go to the test output directory (build/test-output/test_picture, or
$RINGD_TEST_OUTPUT). `ringctl status -f svg` draws the same picture: it is
parsed as XML and compared."""

import json
import math
import os
import re
import shutil
import sys
import tempfile
import time
import struct
import xml.etree.ElementTree as ET
import zlib
from html.parser import HTMLParser

import pytest

import cluster as cl
import daemons
from conftest import new_prefix
from ringtest import surveyed

ORDER = ["n1", "n2", "n4", "n3"]
PORT = 9466
DEVTOOLS_PORT = 9467
# The page reloads itself every 5 s (page.h).
REFRESH_S = 5
# Carrier loss reaches the coordinator within a second (test_watch); the
# bound leaves room for a loaded two-core machine and the ASan build.
SEEN_S = 15
# One Chromium run: start, load, dump. Seconds on an idle machine.
BROWSER_S = 90
OUT_DIR = os.path.join(os.environ.get("RINGD_TEST_OUTPUT") or os.path.join(
    daemons.REPO, "build", "test-output"), "test_picture")
SVG_NS = "{http://www.w3.org/2000/svg}"


def _chromium():
    return shutil.which("chromium")


class Doc(HTMLParser):
    """Every element with an id: {id: attrs}, in document order; and the
    meta refresh."""

    def __init__(self, text):
        super().__init__()
        self.ids = {}
        self.order = []
        self.refresh = None
        self.group = None
        self.lines = {}
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "g":
            self.group = a.get("id")
        elif tag == "line" and self.group and self.group not in self.lines:
            # A group's first line: an edge's own.
            self.lines[self.group] = tuple(float(a[k]) for k in
                                           ("x1", "y1", "x2", "y2"))
        if tag == "meta" and (a.get("http-equiv") or "").lower() == "refresh":
            self.refresh = a.get("content")
        if "id" in a:
            self.ids[a["id"]] = dict(a, tag=tag)
            self.order.append(a["id"])

    def nodes(self):
        """Node names by data-order (the circle), with their positions."""
        got = []
        for i in self.order:
            a = self.ids[i]
            if "node" not in (a.get("class") or "").split():
                continue
            m = re.match(r"translate\(([-\d.]+) ([-\d.]+)\)",
                         a.get("transform", ""))
            assert m, a
            got.append((int(a["data-order"]), a["data-name"],
                        float(m.group(1)), float(m.group(2))))
        return sorted(got)

    def edge_state(self, name):
        a = self.ids.get("edge-" + name)
        assert a, "no edge-%s in %s" % (name, sorted(self.ids))
        cls = a["class"].split()
        assert cls[0] == "edge", cls
        return cls[1]


class Browser:
    """Headless Chromium in the coordinator's network namespace (the
    listener is on its loopback). Root needs --no-sandbox."""

    def __init__(self, c):
        self.c = c
        self.profile = tempfile.mkdtemp(prefix="ringd-chromium-")
        self.runs = []

    def _run(self, url, *opts):
        argv = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                "--no-first-run", "--disable-extensions",
                "--disable-dev-shm-usage", "--hide-scrollbars",
                "--user-data-dir=" + self.profile] + list(opts) + [url]
        t0 = time.monotonic()
        p = self.c.exec("coord", ["timeout", "-k", "5", str(BROWSER_S)] +
                        argv, timeout=BROWSER_S + 15)
        self.runs.append(time.monotonic() - t0)
        return p

    def dom(self, url):
        p = self._run(url, "--dump-dom")
        assert p.returncode == 0 and "<svg" in p.stdout, (
            "chromium --dump-dom %s: rc %d\n%s\n%s" % (
                url, p.returncode, p.stdout[-2000:], p.stderr[-3000:]))
        return Doc(p.stdout)

    def screenshot(self, url, name, size=(1000, 1000)):
        os.makedirs(OUT_DIR, exist_ok=True)
        path = os.path.join(OUT_DIR, name)
        if os.path.exists(path):
            os.unlink(path)
        p = self._run(url, "--screenshot=" + path,
                      "--window-size=%d,%d" % size)
        assert p.returncode == 0 and os.path.exists(path), (
            "chromium --screenshot: rc %d\n%s" % (p.returncode,
                                                  p.stderr[-3000:]))
        with open(path, "rb") as f:
            head = f.read(24)
        # A PNG of the size asked for (IHDR: width, height).
        assert head[:8] == b"\x89PNG\r\n\x1a\n", head
        assert (int.from_bytes(head[16:20], "big"),
                int.from_bytes(head[20:24], "big")) == size
        return path

    def live(self, url, log):
        """A browser that stays: the page open, reloading itself; its
        pages' titles are read over the DevTools HTTP endpoint
        (/json/list)."""
        profile = tempfile.mkdtemp(prefix="ringd-chromium-live-",
                                   dir=self.profile)
        return self.c.spawn("coord", [
            _chromium(), "--headless", "--no-sandbox", "--disable-gpu",
            "--no-first-run", "--disable-extensions",
            "--disable-dev-shm-usage", "--user-data-dir=" + profile,
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=%d" % DEVTOOLS_PORT, url], log,
            name="chromium")

    def titles(self):
        """The titles of the live browser's pages ([] until it answers)."""
        p = self.c.exec("coord", [sys.executable, "-c", (
            "import json,urllib.request\n"
            "try:\n"
            "    r=urllib.request.urlopen('http://127.0.0.1:%d/json/list',"
            "timeout=3)\n"
            "    print(json.dumps([t.get('title') for t in "
            "json.load(r) if t.get('type')=='page']))\n"
            "except OSError:\n"
            "    print('[]')\n") % DEVTOOLS_PORT])
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout)

    def close(self):
        shutil.rmtree(self.profile, ignore_errors=True)


def png_rgb(path):
    """(width, height, pixel(x, y) -> (r, g, b)) of an 8-bit RGB or RGBA
    PNG, as Chromium writes its screenshots (no library needed)."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(
                ">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and not interlace, body
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 0xff
            elif ftype == 2:
                line[i] = (line[i] + b) & 0xff
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xff
            elif ftype == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 0xff
        rows.append(line)
        prev = line

    def pixel(x, y):
        o = int(round(x)) * bpp
        return tuple(rows[int(round(y))][o:o + 3])
    return w, h, pixel


def painted(shot, doc, name, frac):
    """The colour Chromium painted at frac along edge name's line."""
    _, _, pixel = png_rgb(shot)
    x1, y1, x2, y2 = doc.lines["edge-" + name]
    return pixel(x1 + (x2 - x1) * frac, y1 + (y2 - y1) * frac)


def green(rgb):
    r, g, b = rgb
    return g > r + 40 and g > b + 40


def red(rgb):
    r, g, b = rgb
    return r > g + 80 and r > b + 80


def fetch(c, path):
    """(status, content type, body) of GET path, from the coordinator's
    namespace."""
    p = c.exec("coord", [sys.executable, "-c", (
        "import urllib.request,urllib.error,sys\n"
        "try:\n"
        "    r=urllib.request.urlopen('http://127.0.0.1:%d%s',timeout=5)\n"
        "except urllib.error.HTTPError as e:\n"
        "    r=e\n"
        "sys.stdout.write('%%d %%s\\n' %% (r.status, "
        "r.headers.get('Content-Type')))\n"
        "sys.stdout.write(r.read().decode())\n") % (PORT, path)])
    assert p.returncode == 0, p.stderr
    head, _, body = p.stdout.partition("\n")
    code, _, ctype = head.partition(" ")
    return int(code), ctype, body


@pytest.fixture(scope="module")
def ring(root, ringd_bin):
    if not _chromium():
        pytest.skip("chromium missing (Debian package chromium: "
                    "sudo make test-deps)")
    c = cl.Cluster(ORDER, new_prefix())
    with surveyed(c, ringd_bin, quiet=True, nominal="10G",
                  coord_extra=["metrics_listen 127.0.0.1:%d" % PORT]) as r:
        b = Browser(c)
        try:
            yield c, r, b
        finally:
            print("chromium runs: %s s" % ", ".join(
                "%.1f" % t for t in b.runs))
            b.close()


def edge_names(top):
    """{frozenset((a, b)): name} of the measured edges."""
    return {frozenset((e["a"], e["b"])): e["edge"] for e in top["edges"]}


def clockwise(nodes):
    """The circle's positions go round clockwise (screen coordinates: y
    down) from the top, each step the same angle."""
    cx = sum(n[2] for n in nodes) / len(nodes)
    cy = sum(n[3] for n in nodes) / len(nodes)
    ang = [math.atan2(n[2] - cx, -(n[3] - cy)) % (2 * math.pi)
           for n in nodes]
    step = 2 * math.pi / len(nodes)
    for i, a in enumerate(ang):
        assert abs(a - i * step) < 0.01, (nodes, ang)


def test_page_in_browser(ring):
    c, r, b = ring
    top = r.topology()
    assert top["order"] == ORDER, top["order"]
    names = edge_names(top)
    url = "http://127.0.0.1:%d/" % PORT
    doc = b.dom(url)
    nodes = doc.nodes()
    assert [n[1] for n in nodes] == ORDER, nodes
    assert [n[0] for n in nodes] == [0, 1, 2, 3], nodes
    clockwise(nodes)
    for n in ORDER:
        assert doc.ids["node-" + n]["class"] == "node up"
    for i, n in enumerate(ORDER):
        pair = frozenset((n, ORDER[(i + 1) % 4]))
        assert doc.edge_state(names[pair]) == "up", doc.ids
    # The diagonals checked: no data-plane path, as they must.
    for a, z in (("n1", "n4"), ("n2", "n3")):
        d = doc.ids["diag-%s-%s" % (a, z)]
        assert d["class"] == "diagonal ok", d
    assert doc.ids["health"]["class"] == "health healthy"
    assert doc.refresh == "5", doc.refresh
    shot = b.screenshot(url, "picture-healthy.png")
    print("screenshot: %s" % shot)
    # What Chromium painted: every cable green (a point a third along
    # it, clear of nodes and labels).
    for name in names.values():
        rgb = painted(shot, doc, name, 1 / 3)
        assert green(rgb), (name, rgb)
    # ringctl draws the same picture: well-formed XML (a real parser),
    # the same nodes in the same order, the same edges.
    p = r.ringctl("status", fmt="svg")
    assert p.returncode == 0, p.stderr
    svg = ET.fromstring(p.stdout)
    assert svg.tag == SVG_NS + "svg"
    groups = {g.get("id"): g for g in svg.iter(SVG_NS + "g")}
    got = sorted((int(g.get("data-order")), g.get("data-name"))
                 for g in groups.values()
                 if (g.get("class") or "").startswith("node "))
    assert [n for _, n in got] == ORDER, got
    for name in names.values():
        assert groups["edge-" + name].get("class") == "edge up"
    with open(os.path.join(OUT_DIR, "ringctl-status.svg"), "w") as f:
        f.write(p.stdout)
    # -f svg is the picture of status alone.
    p = r.ringctl("ranks", fmt="svg")
    assert p.returncode == 2 and p.stdout == ""
    assert "-f svg is for 'status' only" in p.stderr, p.stderr
    # Read-only and bounded to its paths.
    code, ctype, body = fetch(c, "/ring.svg")
    assert code == 200 and ctype == "image/svg+xml; charset=utf-8", ctype
    assert body.startswith("<svg xmlns=")
    code, _, _ = fetch(c, "/ring")
    assert code == 404


def test_cut_cable_shown_down(ring):
    """A browser keeps the page open; the cable is pulled; the page, by
    reloading itself, says so (its title), and a fresh load draws that
    cable down and the others up."""
    c, r, b = ring
    names = edge_names(r.topology())
    cut = names[frozenset(("n2", "n4"))]
    url = "http://127.0.0.1:%d/" % PORT
    live = b.live(url, os.path.join(r.log_dir, "chromium-live.log"))
    healthy = "ringd: healthy, 4 of 4 nodes up, 0 cables down"
    cl.wait_for(lambda: healthy in b.titles(), BROWSER_S,
                "the live browser to show the page (%s)" % healthy,
                interval=0.5)
    t0 = time.monotonic()
    c.cut("n2", "n4")
    try:
        # The coordinator notices (the agents' carrier watch): the page
        # it serves says so.
        cl.wait_for(lambda: re.search(
            r'id="edge-%s" class="edge down"' % re.escape(cut),
            fetch(c, "/ring.svg")[2]), SEEN_S,
            "the page to show %s down" % cut, interval=0.2)
        seen = time.monotonic() - t0
        # The open page reloads itself and shows the cut: no one asked
        # the browser to.
        cl.wait_for(lambda: any("1 cable down" in t for t in b.titles()),
                    SEEN_S + REFRESH_S + 5,
                    "the open page to reload itself and show 1 cable down",
                    interval=0.5)
        live_s = time.monotonic() - t0
        live.stop()
        doc = b.dom(url)
        assert doc.edge_state(cut) == "down", doc.ids["edge-" + cut]
        for pair, name in names.items():
            if name != cut:
                assert doc.edge_state(name) == "up", (name, doc.ids)
        # Still drawn in ring order: the order is the survey's.
        assert [n[1] for n in doc.nodes()] == ORDER
        assert doc.ids["health"]["class"] == "health critical", \
            doc.ids["health"]
        shot = b.screenshot(url, "picture-cut.png")
        # Painted: the cut cable's cross red at its middle, the others
        # still green.
        for name in names.values():
            rgb = painted(shot, doc, name, 0.5 if name == cut else 1 / 3)
            assert (red if name == cut else green)(rgb), (name, rgb)
        print("cut seen: served %.1f s, in the open page %.1f s after; "
              "screenshot: %s" % (seen, live_s, shot))
    finally:
        if live.alive():
            live.stop()
        c.restore("n2", "n4")
    cl.wait_for(lambda: re.search(
        r'id="edge-%s" class="edge up"' % re.escape(cut),
        fetch(c, "/ring.svg")[2]), SEEN_S,
        "the page to show %s up again" % cut, interval=0.2)
