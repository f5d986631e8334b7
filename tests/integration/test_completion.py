"""ringctl's bash completion (ringctl/ringctl.bash) run by a real bash: the
file is sourced, its `complete` registration read back, and the function it
names called the way bash calls it (COMP_WORDS, COMP_CWORD, COMP_LINE,
COMP_POINT). Commands and options are checked against ringctl's one table
(ringctl/help.c, as `ringctl -f json help` prints it) and -f formats
against `ringctl --help`, so the completion cannot drift from ringctl; node
and edge names come from a real coordinator on an emulated ring; with no
coordinator, or one that never answers, there are none, within a bound."""

import json
import os
import re
import socket
import subprocess
import tempfile
import time

import pytest

from daemons import REPO
from ringtest import (surveyed_ring)

SCRIPT = os.path.join(REPO, "ringctl", "ringctl.bash")
ORDER = ["n1", "n2", "n3"]
# What a completion may cost when the coordinator does not answer: the
# script's own bound is about 2 s (-t 1.5, timeout 2 s).
HUNG_BOUND_S = 4.0

# Sourced by a bash without startup files; complete_line LINE prints the
# candidates for LINE (the cursor at its end), one per line, after a line
# "#complete: SPEC" with the registration it used.
DRIVER = r'''
set -u
source "$RINGCTL_BASH"
spec=$(complete -p ringctl) || { echo "no completion for ringctl"; exit 3; }
fn=$(sed -n 's/.*-F \([^ ]*\) .*/\1/p' <<<"$spec")
complete_line() {
	local line="$1"
	COMP_LINE="$line"
	COMP_POINT=${#line}
	read -ra COMP_WORDS <<<"$line"
	[[ $line == *" " ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	local prev=""
	((COMP_CWORD > 0)) && prev="${COMP_WORDS[COMP_CWORD - 1]}"
	"$fn" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "$prev"
	echo "#complete: $spec"
	((${#COMPREPLY[@]})) && printf '%s\n' "${COMPREPLY[@]}"
	return 0
}
complete_line "$1"
'''


def complete(line, env=None, timeout=30, cwd=None):
    """The candidates bash's completion offers for `line` (sorted)."""
    e = dict(os.environ)
    e.pop("RINGCTL_SOCKET", None)
    e["RINGCTL_BASH"] = SCRIPT
    e.update(env or {})
    p = subprocess.run(["bash", "--norc", "--noprofile", "-c", DRIVER,
                        "driver", line], capture_output=True, text=True,
                       timeout=timeout, env=e, cwd=cwd)
    assert p.returncode == 0, "bash: rc %d: %s%s" % (
        p.returncode, p.stdout, p.stderr)
    lines = p.stdout.splitlines()
    assert lines and lines[0] == "#complete: complete -F _ringctl ringctl", \
        "registration: %r" % lines[:1]
    assert not p.stderr, "the completion wrote to stderr: %r" % p.stderr
    return sorted(lines[1:])


@pytest.fixture(scope="module")
def ringctl_bin(ringd_bin):
    return os.path.join(ringd_bin, "ringctl")


@pytest.fixture(scope="module")
def help_text(ringctl_bin):
    p = subprocess.run([ringctl_bin, "--help"], capture_output=True,
                       text=True, timeout=10)
    assert p.returncode == 0
    return p.stdout


@pytest.fixture(scope="module")
def table(ringctl_bin):
    p = subprocess.run([ringctl_bin, "-f", "json", "help"],
                       capture_output=True, text=True, timeout=10)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def table_commands(table):
    """Commands and their subcommands as the table lists them:
    {"status": set(), "test": {"bw", ...}, ...}."""
    out = {}
    for c in table["commands"]:
        words = c["name"].split()
        sub = out.setdefault(words[0], set())
        if len(words) > 1:
            sub.add(words[1])
    return out


def table_long_options(table):
    return {o["name"] for c in table["commands"] + [{"options":
                                                     table["globals"]}]
            for o in c["options"] if o["name"].startswith("--")}


def table_context(c):
    """A command line up to where options may follow: the command and a
    word for each positional argument its first form requires ("test bw
    x x")."""
    n = len(c["name"].split())
    words = c["synopsis"][0].split()[n:]
    pos = []
    for w in words:
        if w.startswith("[") or w.startswith("-"):
            break
        pos.append("x")
    return " ".join([c["name"]] + pos)


def help_formats(text):
    """(the formats for every command, {command: the formats it alone
    adds}) from -f's lines in --help ("...; for ranks also A, B or C")."""
    m = re.search(r"-f FORMAT\s+(.*?)\n  -t", text, re.S)
    assert m, "no -f FORMAT in --help"
    parts = " ".join(m.group(1).split()).split("; for ")
    words = lambda s: set(re.findall(r"\b([a-z]+)\b",
                                     re.sub(r"\(.*?\)", "", s))) - {
        "default", "or", "also", "and"}
    extra = {}
    for p in parts[1:]:
        cmd, _, rest = p.partition(" ")
        extra[cmd] = words(rest)
    return words(parts[0]), extra


# ------------------------------------------------- without a coordinator

def test_commands(table):
    cmds = table_commands(table)
    assert set(complete("ringctl ")) == set(cmds)
    assert complete("ringctl st") == ["status"]
    assert complete("ringctl -s /nonexistent -f json st") == ["status"]
    for cmd, subs in cmds.items():
        if subs:
            assert set(complete("ringctl %s " % cmd)) == subs, cmd


def test_global_options():
    assert set(complete("ringctl -")) == {"-s", "-f", "-t", "-h", "--help",
                                          "-V", "--version"}
    assert "--version" in complete("ringctl status --v")
    assert complete("ringctl -t ") == []


def test_options_match_the_table(table):
    """Every long option the table lists is offered somewhere, and none
    that it does not list."""
    contexts = ["status", "survey", "ranks", "alerts", "history n1-n2",
                "watch", "plan", "check all", "test bw n1 n2",
                "test lat n1 n2", "test rdma-bw n1 n2", "test rdma-lat n1 n2",
                "test allreduce", "pki init d", "pki issue d n1"]
    offered = set()
    for c in contexts:
        got = complete("ringctl %s --" % c)
        assert "--help" in got, c
        offered |= set(got)
    want = table_long_options(table)
    assert offered == want, "offered, not in the table: %s; in the " \
        "table, not offered: %s" % (sorted(offered - want),
                                    sorted(want - offered))
    assert complete("ringctl status -") == sorted(
        ["-v", "--verbose", "--ring", "-s", "-f", "-t", "-h", "--help",
         "-V", "--version"])
    assert set(complete("ringctl test rdma-lat n1 n2 --op ")) == {
        "write", "read"}
    assert set(complete("ringctl test bw n1 n2 --direction ")) == {
        "a-to-b", "b-to-a", "both"}
    assert set(complete("ringctl test allreduce --transport ")) == {
        "auto", "tcp", "rdma"}


def test_formats(help_text):
    general, extra = help_formats(help_text)
    assert general == {"plain", "keyvalue", "json"}, general
    assert extra["ranks"] == {"hostfile", "rankfile", "torchrun", "env"}
    assert extra["status"] == {"svg"}, extra
    assert set(complete("ringctl -f ")) == general.union(*extra.values())
    assert set(complete("ringctl ranks -f ")) == general | extra["ranks"]
    assert set(complete("ringctl -f j")) == {"json"}
    assert set(complete("ringctl status -f ")) == general | extra["status"]
    assert set(complete("ringctl alerts -f ")) == general
    assert complete("ringctl ranks -f tor") == ["torchrun"]


def test_each_command_offers_exactly_its_options(table):
    """Per command: its own options (long and short) and the global ones,
    exactly as the table lists them."""
    glob = {o["name"] for o in table["globals"]}
    for c in table["commands"]:
        line = "ringctl %s -" % table_context(c)
        want = {o["name"] for o in c["options"]} | glob
        got = set(complete(line))
        assert got == want, "%s: offered, not in the table: %s; in the " \
            "table, not offered: %s" % (line, sorted(got - want),
                                        sorted(want - got))


def test_help_completes_commands(table):
    cmds = table_commands(table)
    assert set(complete("ringctl help ")) == set(cmds)
    assert set(complete("ringctl help test ")) == cmds["test"]
    assert complete("ringctl help test bw ") == []


def test_watch_kinds(table):
    desc = next(o["desc"] for c in table["commands"] if c["name"] == "watch"
                for o in c["options"] if o["name"] == "--kind")
    m = re.search(r"\(KIND:\s*([a-z, \n]*?);", desc)
    assert m, "no KIND list in the table's watch --kind"
    kinds = set(re.findall(r"[a-z]+", m.group(1)))
    assert set(complete("ringctl watch --kind ")) == kinds
    assert complete("ringctl watch --kind node,e") == ["node,edge"]


def test_files_and_dirs(tmp_path):
    (tmp_path / "hosts.txt").write_text("n1\n")
    (tmp_path / "pkidir").mkdir()
    assert complete("ringctl check ranks ho", cwd=tmp_path) == ["hosts.txt"]
    assert complete("ringctl check all --hostfile h",
                    cwd=tmp_path) == ["hosts.txt"]
    assert complete("ringctl pki init p", cwd=tmp_path) == ["pkidir"]
    assert complete("ringctl -s h", cwd=tmp_path) == ["hosts.txt"]
    # One candidate per file, a blank in its name included.
    (tmp_path / "my hosts").write_text("n1\n")
    assert complete("ringctl check nccl-env m", cwd=tmp_path) == [
        "my hosts"]


def test_no_coordinator_no_names(ringctl_bin):
    for line in ("%s -s /nonexistent/coord.sock inventory ",
                 "%s -s /nonexistent/coord.sock test bw "):
        t0 = time.monotonic()
        assert complete(line % ringctl_bin) == []
        assert time.monotonic() - t0 < HUNG_BOUND_S
    # $RINGCTL_SOCKET is ringctl's own default: used the same way.
    assert complete("%s explain " % ringctl_bin,
                    env={"RINGCTL_SOCKET": "/nonexistent/coord.sock"}) == []


def test_hung_coordinator_bounded(ringctl_bin):
    """A socket that takes connections and never answers (as a stopped
    coordinator does: the kernel queues the connection): no names, and the
    completion comes back within its bound."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "hung.sock")
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.bind(path)
            s.listen(16)
            t0 = time.monotonic()
            got = complete("%s -s %s inventory " % (ringctl_bin, path))
            took = time.monotonic() - t0
        finally:
            s.close()
    assert got == []
    assert took < HUNG_BOUND_S, "completion took %.1f s" % took


# ---------------------------------------------------- with a coordinator

@pytest.fixture(scope="module")
def ringd(root, ringd_bin):
    with surveyed_ring(ORDER, ringd_bin) as r:
        yield r


def test_node_names(ringd, ringctl_bin):
    base = "%s -s %s " % (ringctl_bin, ringd.sock)
    assert complete(base + "inventory ") == ORDER
    assert complete(base + "inventory n") == ORDER
    assert complete(base + "forget n2") == ["n2"]
    assert complete(base + "test bw ") == ORDER
    assert complete(base + "test bw n1 ") == ORDER
    assert complete(base + "test bw n1 n2 ") == []
    assert complete(base + "test allreduce --nodes n1,") == [
        "n1,n1", "n1,n2", "n1,n3"]
    assert complete(base + "plan --nodes n") == ORDER
    # The socket from $RINGCTL_SOCKET, and with -s after the command.
    assert complete("%s inventory " % ringctl_bin,
                    env={"RINGCTL_SOCKET": ringd.sock}) == ORDER
    assert complete("%s inventory -s %s n" % (ringctl_bin, ringd.sock)) \
        == ORDER


def test_edge_names(ringd, ringctl_bin):
    edges = ["n1-n2", "n1-n3", "n2-n3"]
    base = "%s -s %s " % (ringctl_bin, ringd.sock)
    assert complete(base + "history ") == edges
    assert complete(base + "explain ") == sorted(ORDER + edges)
    assert complete(base + "explain n1-") == ["n1-n2", "n1-n3"]
