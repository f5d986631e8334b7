"""ringctl's help and errors, from its one table (ringctl/help.c): `help
COMMAND` and `COMMAND --help` print that command's synopsis, options and
an example; a usage error prints the command's own synopsis; everything
fits 100 columns. With -f json every command prints a document (survey,
forget and pki included) and an error is one object on stderr
(ringctl.8 ERRORS), exit statuses as in plain."""

import json
import os
import subprocess

import pytest

import daemons
from ringtest import surveyed_ring

ORDER = ["n1", "n2", "n3"]


@pytest.fixture(scope="module")
def ringctl_bin(ringd_bin):
    return os.path.join(ringd_bin, "ringctl")


def run(ringctl_bin, *args, sock="/nonexistent/ringd.sock"):
    env = dict(os.environ, **daemons.SANITIZER_ENV)
    env.pop("RINGCTL_SOCKET", None)
    return subprocess.run([ringctl_bin, "-s", sock] + list(args),
                          capture_output=True, text=True, timeout=30,
                          env=env)


@pytest.fixture(scope="module")
def table(ringctl_bin):
    p = run(ringctl_bin, "-f", "json", "help")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def fits(text):
    return max(len(x) for x in text.splitlines()) <= 100


def json_error(p):
    """The one error object of a -f json run that failed."""
    assert p.returncode != 0 and p.stdout == "", (p.returncode, p.stdout)
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    e = json.loads(lines[0])["error"]
    assert e["exit_status"] == p.returncode, e
    return e


def test_overview(ringctl_bin, table):
    p = run(ringctl_bin, "--help")
    assert p.returncode == 0 and fits(p.stdout), p.stdout
    assert run(ringctl_bin, "help").stdout == p.stdout
    assert len(p.stdout.splitlines()) < 80, p.stdout
    for c in table["commands"]:
        assert "\n  " + c["name"] in p.stdout, c["name"]


def test_every_command_has_its_own_help(ringctl_bin, table):
    for c in table["commands"]:
        words = c["name"].split()
        p = run(ringctl_bin, "help", *words)
        assert p.returncode == 0, (c["name"], p.stderr)
        out = p.stdout
        assert out.startswith("usage: ringctl " + c["name"]), out
        assert fits(out), out
        for o in c["options"]:
            assert "\n  " + o["name"] in out, (c["name"], o["name"], out)
        assert "example:\n  " + c["example"] + "\n" in out, out
        # The same from COMMAND --help and -h, wherever they stand.
        assert run(ringctl_bin, *words, "--help").stdout == out
        assert run(ringctl_bin, "-h", *words).stdout == out
        # Its example parses as the command.
        ex = c["example"].split()[1:]
        assert ex[:len(words)] == words or words[0] in ex, c["example"]


def test_group_help(ringctl_bin, table):
    for group in ("test", "check", "pki"):
        p = run(ringctl_bin, "help", group)
        assert p.returncode == 0 and fits(p.stdout), p.stdout
        assert run(ringctl_bin, group, "--help").stdout == p.stdout
        for c in table["commands"]:
            if c["name"].split()[0] == group:
                assert "\n  " + c["name"] in p.stdout, (c, p.stdout)
    p = run(ringctl_bin, "help", "frobnicate")
    assert p.returncode == 2 and "frobnicate" in p.stderr, p.stderr


@pytest.mark.parametrize("args,synopsis", [
    (["test", "bw", "n1", "n2", "--streams"], "usage: ringctl test bw A B"),
    (["status", "--bogus"], "usage: ringctl status"),
    (["history"], "usage: ringctl history EDGE"),
    (["check", "ranks"], "usage: ringctl check ranks"),
    (["pki", "issue", "/tmp"], "usage: ringctl pki issue DIR NAME"),
    (["check"], "  check all"),
    (["frobnicate"], "usage: ringctl [-s SOCKET]"),
])
def test_usage_error_prints_the_commands_synopsis(ringctl_bin, args,
                                                  synopsis):
    p = run(ringctl_bin, *args)
    assert p.returncode == 2 and p.stdout == "", (p.returncode, p.stdout)
    lines = p.stderr.splitlines()
    assert lines[0].startswith("ringctl: "), p.stderr
    assert synopsis in p.stderr, p.stderr
    assert "usage: ringctl --help" not in p.stderr
    assert len(lines) < 15 and fits(p.stderr), p.stderr


def test_json_usage_error(ringctl_bin):
    e = json_error(run(ringctl_bin, "-f", "json", "test", "bw", "n1", "n2",
                       "--streams"))
    assert e["command"] == "test bw", e
    assert e["usage"].startswith("usage: ringctl test bw A B"), e
    assert not e["message"].startswith("ringctl:"), e
    # Before the command is known: no command, the global usage.
    e = json_error(run(ringctl_bin, "-f", "json", "-t", "banana", "status"))
    assert e["command"] is None and "banana" in e["message"], e
    # -f json after the command counts the same.
    e = json_error(run(ringctl_bin, "history", "-f", "json"))
    assert e["command"] == "history" and "usage" in e, e


def test_json_unreachable(ringctl_bin, tmp_path):
    sock = str(tmp_path / "none.sock")
    for args in (["status"], ["survey"], ["forget", "n1"], ["ranks"],
                 ["inventory", "n1"], ["explain", "n1"], ["alerts"],
                 ["history", "n1-n2"], ["watch", "--count", "0"],
                 ["plan", "--params", "7B"], ["check", "ranks", "-"],
                 ["test", "bw", "n1", "n2"], ["test", "allreduce"]):
        p = run(ringctl_bin, "-f", "json", *args, sock=sock)
        e = json_error(p)
        assert p.returncode == 2, (args, p.returncode)
        assert sock in e["message"] or "survey" in e["message"] or \
            e["message"], (args, e)
        assert "usage" not in e, (args, e)
    # Plain: the same failure as one "ringctl: " line.
    p = run(ringctl_bin, "status", sock=sock)
    assert p.returncode == 2 and p.stderr.startswith("ringctl: "), p.stderr


def test_pki_json(ringctl_bin, tmp_path):
    d = str(tmp_path / "pki")
    os.mkdir(d, 0o700)
    p = run(ringctl_bin, "-f", "json", "pki", "init", d)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    doc = json.loads(p.stdout)
    assert doc["created"] == "ca" and os.path.exists(doc["certificate"]), doc
    p = run(ringctl_bin, "-f", "json", "pki", "issue", d, "n1",
            "--coordinator")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["role"] == "coordinator" and doc["name"] == "n1", doc
    assert doc["serial"] and os.path.exists(doc["key"]), doc
    # Plain says the same in words.
    p = run(ringctl_bin, "pki", "issue", d, "n2")
    assert p.returncode == 0 and "node certificate" in p.stdout, p.stdout
    # A CA that is not there: a JSON error, exit 2.
    e = json_error(run(ringctl_bin, "-f", "json", "pki", "issue",
                       str(tmp_path / "nothing"), "n1"))
    assert e["command"] == "pki issue", e


# ---------------------------------------------------- with a coordinator

@pytest.fixture(scope="module")
def ringd(root, ringd_bin):
    with surveyed_ring(ORDER, ringd_bin) as r:
        yield r


def test_survey_and_forget_json(ringd):
    r = ringd
    p = r.ringctl("survey", fmt="json", timeout_s=10)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["survey"] == "started", doc
    assert doc["after"] in ("none", "re-check", "survey"), doc
    # --wait: the status document on stdout, the acknowledgement a notice.
    p = r.ringctl("survey", "--wait", fmt="json", timeout_s=60)
    assert p.returncode in (0, 1), p.stderr
    assert "topology" in json.loads(p.stdout)
    n = json.loads(p.stderr.strip())
    assert "notice" in n, (p.returncode, p.stderr)
    n = n["notice"]
    assert "survey started" in n["message"], n
    assert n["exit_status"] == p.returncode, n
    # forget of a node that is up: refused, as an error object.
    p = r.ringctl("forget", "n1", fmt="json")
    e = json_error(p)
    assert p.returncode == 2 and e["command"] == "forget", e
    p = r.ringctl("forget", "n1", fmt="keyvalue")
    assert p.returncode == 2 and p.stderr.startswith("ringctl: "), p.stderr
