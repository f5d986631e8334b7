"""The coordinator's store (ringd.db under state_dir) against the faults a
disk brings, each written as the fault, on a surveyed ring n1-n2-n4-n3:

* ringd.db* deleted while the coordinator runs: a warning, the state
  rewritten into a fresh file at once, and a restart keeps the topology,
  the rank order and the alerts;
* a corrupt ringd.db at the start: the coordinator starts and serves,
  state_lost fires, the file is moved aside with a timestamp;
* a state_dir that cannot be used at the start: it runs without
  persistence (store unavailable, store_failing) and is back on its own
  once the directory can be made;
* a full disk (a tiny tmpfs as state_dir): store failing in status, the
  metric and store_failing, a bounded number of log lines; space back:
  saving resumes, the alert resolves, the latest topology is in the file.
"""

import os
import re
import sqlite3
import subprocess
import time

import pytest

import cluster as cl
from conftest import new_prefix
from ringtest import LogMark, scrape_metrics, surveyed

ORDER = ["n1", "n2", "n4", "n3"]
METRICS_PORT = 9466
HOLD_DOWN_S = 2
# The keeper checks, retries and says what it could not save this often
# (STORE_KEEPER_INTERVAL_MS); the deadlines leave room for an ASan build
# on a loaded machine.
INTERVAL_S = 5
BACK_S = 3 * INTERVAL_S


@pytest.fixture(scope="module")
def ring(root, ringd_bin):
    extra = ["alert_hold_down %ds" % HOLD_DOWN_S,
             "watchdog_interval 0",
             "metrics_listen 127.0.0.1:%d" % METRICS_PORT]
    c = cl.Cluster(ORDER, new_prefix())
    with surveyed(c, ringd_bin, quiet=True, coord_extra=extra,
                  nominal="10G") as r:
        yield c, r


def status(r):
    rc, doc, err = r.json("status")
    assert doc is not None, (rc, err)
    return doc


def firing(doc):
    return {(a["rule"], a["subject"]) for a in doc.get("alerts", [])}


def db_path(d):
    return os.path.join(d, "ringd.db")


def saved_topology_ms(d):
    """When the file's topology blob was saved (0: none), read as an
    operator's sqlite3 would, beside the running coordinator."""
    try:
        con = sqlite3.connect("file:%s?mode=ro" % db_path(d), uri=True,
                              timeout=2)
    except sqlite3.Error:
        return 0
    try:
        row = con.execute("SELECT saved_ms FROM blobs WHERE key = "
                          "'topology'").fetchone()
        return row[0] if row else 0
    except sqlite3.Error:
        return 0
    finally:
        con.close()


def conf_with_state_dir(r, d):
    text = r.coord_conf_text().replace("state_dir %s\n" % r.state_dir,
                                       "state_dir %s\n" % d)
    assert "state_dir %s\n" % d in text
    return r.write("coordinator-store.conf", text)


def restart(r, conf=None):
    r.coord.stop()
    return r.start_coordinator(conf)


def back_to_normal(c, r):
    """The fixture's state_dir and a whole ring again."""
    restart(r)
    r.wait_all_up(30)


def test_deleted_while_running(ring):
    """rm ringd.db* while it runs: a warning, the current state in a
    fresh file within an interval, and a restart keeps topology, ranks
    and the firing alerts."""
    c, r = ring
    c.cut("n1", "n2")
    cl.wait_for(lambda: ("cable_down", "n1-n2") in firing(status(r)), 10,
                "cable_down n1-n2")
    before = status(r)
    rc, ranks_before, _ = r.json("ranks")
    mark = LogMark(r.coord.log)
    for suffix in ("", "-wal", "-shm"):
        try:
            os.unlink(db_path(r.state_dir) + suffix)
        except FileNotFoundError:
            pass
    mark.wait(r"store: \S+ringd\.db was deleted while in use", BACK_S)
    cl.wait_for(lambda: saved_topology_ms(r.state_dir), BACK_S,
                "the topology rewritten into a fresh ringd.db")
    doc = status(r)
    assert doc["store"] == "ok", doc
    assert doc["store_reopened"] >= 1, doc

    restart(r)
    after = status(r)
    assert after["topology"]["surveyed"] == before["topology"]["surveyed"]
    assert after["topology"]["order"] == before["topology"]["order"]
    rc, ranks_after, err = r.json("ranks")
    assert ranks_after is not None, err
    assert [x["node"] for x in ranks_after["ranks"]] == \
        [x["node"] for x in ranks_before["ranks"]]
    assert ("cable_down", "n1-n2") in firing(after), after.get("alerts")
    c.restore("n1", "n2")
    r.wait_all_up(30)
    cl.wait_for(lambda: ("cable_down", "n1-n2") not in firing(status(r)),
                30, "cable_down n1-n2 to resolve")


def test_corrupt_at_start(ring):
    """A corrupt ringd.db: the coordinator starts, serves status, fires
    state_lost and keeps the file aside with a timestamp."""
    c, r = ring
    r.coord.stop()
    with open(db_path(r.state_dir), "wb") as f:
        f.write(b"this is not an SQLite database at all " * 400)
    for suffix in ("-wal", "-shm"):
        try:
            os.unlink(db_path(r.state_dir) + suffix)
        except FileNotFoundError:
            pass
    r.start_coordinator()
    doc = status(r)
    lost = [a for a in doc.get("alerts", []) if a["rule"] == "state_lost"]
    assert lost, doc.get("alerts")
    assert "ringd.db was corrupt (moved to" in lost[0]["message"], lost
    assert doc["store"] == "ok", doc
    aside = [n for n in os.listdir(r.state_dir)
             if re.fullmatch(r"ringd\.db\.corrupt-\d{8}T\d{6}Z", n)]
    assert len(aside) == 1, os.listdir(r.state_dir)
    with open(os.path.join(r.state_dir, aside[0]), "rb") as f:
        assert f.read(38) == b"this is not an SQLite database at all "
    assert aside[0] in doc["store_lost"], doc
    # A survey re-learns what the file held: state_lost resolves.
    r.wait_all_up(30)
    r.survey_now()
    cl.wait_for(lambda: ("state_lost", "store") not in firing(status(r)),
                HOLD_DOWN_S + 10, "state_lost to resolve after a survey")
    assert saved_topology_ms(r.state_dir)


def test_overwritten_while_running(ring):
    """ringd.db overwritten in place while it runs (same file, junk from
    its first byte): noticed within an interval, moved aside, state_lost
    fires, and the current topology is in a fresh file."""
    c, r = ring
    with open(db_path(r.state_dir), "r+b") as f:
        f.write(b"\x5a" * 8192)
    cl.wait_for(lambda: ("state_lost", "store") in firing(status(r)),
                BACK_S, "state_lost after the file was overwritten")
    aside = [n for n in os.listdir(r.state_dir)
             if re.fullmatch(r"ringd\.db\.corrupt-\d{8}T\d{6}Z(\.\d+)?", n)]
    assert aside, os.listdir(r.state_dir)
    cl.wait_for(lambda: saved_topology_ms(r.state_dir), BACK_S,
                "the topology in a fresh ringd.db")
    assert status(r)["store"] == "ok"


def test_unusable_state_dir_at_start(ring):
    """state_dir is a file: the coordinator runs without persistence,
    says so in status and an alert, and is back by itself once the
    directory can be made."""
    c, r = ring
    bad = os.path.join(r.w, "state-unusable")
    with open(bad, "w") as f:
        f.write("a file where the directory should be\n")
    try:
        restart(r, conf_with_state_dir(r, bad))
        doc = status(r)
        assert doc["store"] == "unavailable", doc
        assert bad in doc["store_reason"], doc
        assert ("store_failing", "store") in firing(doc), doc.get("alerts")
        text = scrape_metrics(c, METRICS_PORT)
        assert 'ringd_store_state{state="unavailable"} 1' in text
        os.unlink(bad)
        cl.wait_for(lambda: status(r)["store"] == "ok", BACK_S,
                    "the store to be back on its own")
        cl.wait_for(lambda: ("store_failing", "store") not in
                    firing(status(r)), HOLD_DOWN_S + 10,
                    "store_failing to resolve")
        assert os.path.isdir(bad)
        cl.wait_for(lambda: saved_topology_ms(bad), BACK_S,
                    "the topology written once the store was back")
    finally:
        back_to_normal(c, r)


def test_full_disk(ring):
    """A 2 MiB tmpfs as state_dir, filled: writes fail; status, metric
    and alert say so, a handful of log lines say it (not one per write);
    space back: saving resumes on its own, the alert resolves, and the
    file holds the topology of the survey that ran while it was full."""
    c, r = ring
    d = os.path.join(r.w, "state-tmpfs")
    os.makedirs(d, exist_ok=True)
    r.coord.stop()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0750",
                    "tmpfs", d], check=True)
    filler = os.path.join(d, "filler")
    try:
        # What the store held, so that the coordinator starts with it.
        _copy_db(r.state_dir, d)
        r.start_coordinator(conf_with_state_dir(r, d))
        r.wait_all_up(30)
        assert status(r)["store"] == "ok"
        with open(filler, "wb") as f:
            try:
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()
            except OSError:
                pass
        mark = LogMark(r.coord.log)
        t0 = time.monotonic()
        # Writes: alerts of a cut cable, a survey's history and topology.
        c.cut("n2", "n4")
        cl.wait_for(lambda: status(r)["store"] == "failing", 15,
                    "the store to be failing")
        c.restore("n2", "n4")
        r.wait_all_up(30)
        surveyed = r.survey_now()["surveyed"]
        doc = status(r)
        assert doc["store"] == "failing", doc
        assert "full" in doc["store_reason"], doc
        assert doc["store_unsaved_now"] > 0, doc
        assert ("store_failing", "store") in firing(doc), doc.get("alerts")
        text = scrape_metrics(c, METRICS_PORT)
        assert 'ringd_store_state{state="failing"} 1' in text
        m = re.search(r"^ringd_store_unsaved_writes_total (\S+)$", text,
                      re.M)
        assert m and float(m.group(1)) > 0, text[:3000]
        # Bounded: one line when it started, one per interval after.
        time.sleep(INTERVAL_S)
        # The store's own lines (not the alerts' "... store: ..."): one
        # when writes start failing, one when the free space falls
        # below the reserve, one per interval after.
        lines = [ln for ln in mark.new().splitlines()
                 if re.search(r"\] \w+: store: ", ln)]
        spent = time.monotonic() - t0
        print("full disk: %d store log lines in %.1f s, %d writes not "
              "saved" % (len(lines), spent, status(r)["store_unsaved_now"]))
        assert len(lines) <= 3 + spent / INTERVAL_S, "\n".join(lines)

        freed_ms = time.time() * 1000
        os.unlink(filler)
        cl.wait_for(lambda: status(r)["store"] == "ok", BACK_S,
                    "saving to resume once there is room")
        cl.wait_for(lambda: ("store_failing", "store") not in
                    firing(status(r)), HOLD_DOWN_S + 10,
                    "store_failing to resolve")
        cl.wait_for(lambda: saved_topology_ms(d) >= freed_ms - 1000, BACK_S,
                    "the topology rewritten once there was room")
        text = scrape_metrics(c, METRICS_PORT)
        assert 'ringd_store_state{state="ok"} 1' in text
        # The file holds the survey that ran while it was full.
        restart(r, conf_with_state_dir(r, d))
        assert status(r)["topology"]["surveyed"] == surveyed
    finally:
        r.coord.stop()
        subprocess.run(["umount", d])
        back_to_normal(c, r)


def _copy_db(src, dst):
    """ringd.db copied whole (SQLite's backup: the WAL folded in)."""
    a = sqlite3.connect(db_path(src))
    b = sqlite3.connect(db_path(dst))
    try:
        a.backup(b)
    finally:
        b.close()
        a.close()
    os.chmod(db_path(dst), 0o600)
