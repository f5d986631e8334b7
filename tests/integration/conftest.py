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


# Skips do not pass silently: a run with any skipped test fails (not root,
# binaries or the plain build missing, ...) unless RINGD_ALLOW_SKIP=1, and
# says what was skipped. `make check` relies on this.
_skipped = {}


def _skips_allowed():
    return os.environ.get("RINGD_ALLOW_SKIP") == "1"


def _note_skip(report):
    if report.skipped and not hasattr(report, "wasxfail"):
        why = report.longrepr
        if isinstance(why, tuple) and len(why) == 3:
            why = why[2]
        why = str(why)
        if why.startswith("Skipped: "):
            why = why[len("Skipped: "):]
        _skipped.setdefault(report.nodeid, str(why))


def pytest_runtest_logreport(report):
    _note_skip(report)


def pytest_collectreport(report):
    _note_skip(report)


def pytest_sessionfinish(session, exitstatus):
    if _skipped and not _skips_allowed() and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    st = terminalreporter.stats
    if _skipped:
        terminalreporter.write_sep("=", "ringd: %d test(s) skipped" %
                                   len(_skipped))
        by_why = {}
        for nodeid, why in sorted(_skipped.items()):
            by_why.setdefault(why, []).append(nodeid)
        for why, ids in sorted(by_why.items()):
            terminalreporter.write_line("%d skipped: %s (%s%s)" % (
                len(ids), why, ", ".join(ids[:2]),
                ", ..." if len(ids) > 2 else ""))
        if _skips_allowed():
            terminalreporter.write_line("skips allowed by RINGD_ALLOW_SKIP=1")
        else:
            terminalreporter.write_line(
                "a skipped test fails this run: fix the cause, or set "
                "RINGD_ALLOW_SKIP=1 to allow skips")
    out = os.environ.get("RINGD_CHECK_SUMMARY")
    if out:
        # One line for make check's summary, one "passed failed skipped"
        # line for its total (skips not allowed count as failed there).
        passed = len(st.get("passed", []))
        failed = len({r.nodeid for k in ("failed", "error")
                      for r in st.get(k, [])})
        skipped = len(_skipped)
        with open(out, "a") as f:
            f.write("integration: %d passed, %d failed, %d skipped%s\n" % (
                passed, failed, skipped,
                "" if not skipped else " (allowed by RINGD_ALLOW_SKIP=1)"
                if _skips_allowed() else " (not allowed: RINGD_ALLOW_SKIP "
                "unset)"))
        with open(out + ".counts", "a") as f:
            f.write("%d %d %d\n" % (passed, failed, skipped))


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
