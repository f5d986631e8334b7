import os
import shutil
import signal
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import cluster as cl  # noqa: E402
import daemons  # noqa: E402

TEST_BASE = "rgt"
_counter = [0]


def _letters(n):
    s = ""
    n += 1
    while n:
        n, r = divmod(n - 1, 26)
        s = chr(ord("a") + r) + s
    return s


def new_prefix():
    """rgt<pid><a, b, ...>: unique per cluster, and lets a later run tell
    leftovers of a dead session from a live concurrent one."""
    p = "%s%d%s" % (TEST_BASE, os.getpid(), _letters(_counter[0]))
    _counter[0] += 1
    return p


def _need_root():
    if os.geteuid() != 0:
        return "needs root (network namespaces)"
    if not shutil.which("ip") or not shutil.which("tc"):
        return "needs iproute2 (ip, tc)"
    return None


def pytest_sessionstart(session):
    if _need_root() is None:
        cl.cleanup_dead_test_clusters(TEST_BASE)

    # A killed run (SIGTERM from a CI timeout) still tears down.
    def on_term(signum, frame):
        raise KeyboardInterrupt("SIGTERM")
    signal.signal(signal.SIGTERM, on_term)


def pytest_collection_modifyitems(session, config, items):
    """The harness's own tests first: if the emulated wiring is broken, the
    daemon tests' failures mean nothing."""
    items.sort(key=lambda i: 0 if "test_harness" in i.nodeid else 1)


@pytest.fixture(scope="session")
def root():
    why = _need_root()
    if why:
        pytest.skip(why)


@pytest.fixture
def make_cluster(root):
    """Factory: make_cluster(order, **kw) -> a Cluster that is up; all are
    torn down after the test."""
    made = []

    def make(order, **kw):
        c = cl.Cluster(order, new_prefix(), **kw)
        made.append(c)
        return c.up()
    yield make
    for c in made:
        c.down()


@pytest.fixture(scope="session")
def ringd_bin():
    d = daemons.bin_dir()
    missing = daemons.missing_binaries(d)
    if missing:
        pytest.skip("ringd binaries missing in %s: %s (build them, or set "
                    "RINGD_BIN)" % (d, " ".join(missing)))
    return d
