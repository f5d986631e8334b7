"""Every command the README and the demo's banner show exists and parses.

A newcomer pastes what the README and `make demo` print. Each `ringctl`,
`ring-agent`, `ring-coordinator` and `make` command line in README.md
(fenced blocks and `inline` spans) and in the demo's banner (the function
in tests/integration/demo.py that builds it, called with stand-ins for
the running cluster) is run here so that it cannot do anything:

- ringctl against a socket that does not exist (`-s /nonexistent/...`):
  it must get as far as trying to connect (exit 2, the socket named),
  not stop at a usage error; `pki` runs on a scratch directory;
- the daemons with a configuration file that does not exist: a
  configuration error, not a usage error;
- make: each target must be a rule of the Makefile. Not `make -n`: make
  runs recipe lines that hold $(MAKE) even then, and `check`'s would
  remove build/check while a `make check` is running this test.

No network namespaces and no root needed."""

import inspect
import os
import re
import subprocess
import sys

import pytest

import daemons
from ringtest import shell_invocations

REPO = daemons.REPO
PROGS = ("ringctl", "ring-agent", "ring-coordinator", "make")
NO_SOCKET = "/nonexistent/ringd-test.sock"
NO_CONF = "/nonexistent/ringd-test.conf"
# How the three programs word a usage error (ringctl's
# ringctl_bad_usage, the daemons' cfg_usage_error), and --help's usage.
USAGE_RE = re.compile(r"usage|unknown\b[^\n]*\b(command|option)|"
                      r"unexpected argument|missing argument|"
                      r"see '[^']*--help'", re.I)
# ------------------------------------------------------------ the texts


def _joined(lines):
    """Shell continuation lines (ending in a backslash) joined."""
    out, cur = [], ""
    for line in lines:
        if line.rstrip().endswith("\\"):
            cur += line.rstrip()[:-1] + " "
            continue
        out.append(cur + line)
        cur = ""
    if cur:
        out.append(cur)
    return out


def markdown_lines(text):
    """The command lines a Markdown text shows: each line of a fenced
    block, each `inline` span (joined over line breaks)."""
    fenced, prose, fence = [], [], False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            fence = not fence
            continue
        (fenced if fence else prose).append(line)
    spans = [" ".join(x.split()) for x in
             re.findall(r"`([^`]+)`", "\n".join(prose))]
    return _joined(fenced) + spans


class _Stub(str):
    """A stand-in for the demo's running cluster: any attribute, call,
    number or item the banner asks for, with the names it formats."""

    def __new__(cls, s="stub", **attrs):
        o = str.__new__(cls, s)
        o._attrs = attrs
        return o

    def __getattr__(self, k):
        if k.startswith("__"):
            raise AttributeError(k)
        return self._attrs.get(k, _Stub(k))

    def __call__(self, *a, **kw):
        return _Stub("ringd-demo-%s" % a[0] if a else "stub")

    def __int__(self):
        return 4242

    __index__ = __int__

    def __float__(self):
        return 12.5


class _Agent:
    def __init__(self, node):
        self.ns = "ringd-demo-" + node
        self.argv = [os.path.join(REPO, "build", "bin", "ring-agent"), "-c",
                     "/run/ringd-demo/conf/agent-%s.conf" % node]
        self.log = "/run/ringd-demo/logs/agent-%s.log" % node
        self.pid = 4242


class _Agents(dict):
    def __missing__(self, node):
        return _Agent(node)


def banner_lines():
    """The demo's banner as `make demo` prints it, from demo.py's own
    function (banner, or look_around before it was renamed)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import demo
    fn = getattr(demo, "banner", None) or getattr(demo, "look_around")
    known = {"bindir": os.path.join(REPO, "build", "bin"),
             "workdir": "/run/ringd-demo", "took": 19.5}
    stubs = {"r": _Stub("r", agents=_Agents(),
                        sock="/run/ringd-demo/coord.sock"),
             "o": _Stub("o", coord_addr="10.88.0.2", prefix="ringd-demo",
                        group="ringctl", user="ringd-demo-operator",
                        hostif="ringd-demo-host")}
    kw = {}
    for name, p in inspect.signature(fn).parameters.items():
        if p.default is not inspect.Parameter.empty:
            continue
        kw[name] = known.get(name, stubs.get(name, _Stub(name)))
    cwd = os.getcwd()
    os.chdir(REPO)  # the banner says `make` when run from the repository
    try:
        lines = fn(**kw)
    finally:
        os.chdir(cwd)
    out = []
    for line in _joined(lines):
        if line[:1].isspace():
            out.append(line.strip())
            continue
        out += re.findall(r"`([^`]+)`", line)
        # "Tear it down: sudo make demo-down   (or: ...)"
        m = re.match(r"^[^`(]*?:\s+(sudo .*|make .*)$", line)
        if m:
            out.append(m.group(1).split("(")[0].strip())
    return out


def invocations(line):
    """(prog, [args]) for each command of PROGS in one shell line."""
    return shell_invocations(line, PROGS)


def shown():
    """Every (source, prog, args) the README and the banner show."""
    with open(os.path.join(REPO, "README.md")) as f:
        readme = markdown_lines(f.read())
    out = []
    for source, lines in (("README.md", readme),
                          ("the demo banner", banner_lines())):
        for line in lines:
            for prog, args in invocations(line):
                if prog == "make" or args:
                    out.append((source, prog, args))
    return out


def distinct(cmds):
    """Each command line once (the first source that shows it)."""
    seen, out = set(), []
    for source, prog, args in cmds:
        if (prog, tuple(args)) not in seen:
            seen.add((prog, tuple(args)))
            out.append((source, prog, args))
    return out


# ------------------------------------------------------------- the runs


def _run(argv, cwd):
    env = {k: v for k, v in os.environ.items() if k != "RINGCTL_SOCKET"}
    env.update(daemons.SANITIZER_ENV)
    return subprocess.run(argv, capture_output=True, text=True, timeout=30,
                          cwd=cwd, env=env)


def _shell_vars(args):
    return [re.sub(r"\$\{?\w+\}?", "n1", a) for a in args]


def check_ringctl(bindir, args, tmp):
    exe = os.path.join(bindir, "ringctl")
    args = _shell_vars(args)
    words = [a for a in args if not a.startswith("-")]
    if words[:1] == ["pki"] and len(words) >= 2:
        # On a scratch CA, never the path the README names.
        ca = os.path.join(tmp, "pki-ca")
        if not os.path.exists(os.path.join(ca, "ca.crt")):
            r = _run([exe, "pki", "init", ca], tmp)
            assert r.returncode == 0, r.stderr
        i = args.index(words[1]) + 1
        d = ca if words[1] == "issue" else os.path.join(tmp, "pki-new")
        args = args[:i] + [d] + args[i + 1:]
        r = _run([exe] + args, tmp)
        return r, (r.returncode == 0 or
                   "already exists" in r.stderr.lower() or
                   "exist" in r.stderr.lower())
    r = _run([exe, "-s", NO_SOCKET] + args, tmp)
    # Exit 0: a command that needed no coordinator (check nccl-env with
    # nothing to check); else it must have tried the socket.
    return r, r.returncode == 0 or (r.returncode == 2 and
                                    NO_SOCKET in r.stdout + r.stderr)


def check_daemon(bindir, prog, args, tmp):
    args = list(args)
    if "-c" in args and args.index("-c") + 1 < len(args):
        args[args.index("-c") + 1] = NO_CONF
    elif not ({"-h", "--help", "-V", "--version"} & set(args)):
        args += ["-c", NO_CONF]
    if "--capture" in args and args.index("--capture") + 1 < len(args):
        args[args.index("--capture") + 1] = os.path.join(tmp, "capture")
    r = _run([os.path.join(bindir, prog)] + args, tmp)
    return r, r.returncode != 2


def make_targets():
    """The Makefile's rules, from make's own database (-p; -q runs
    nothing, and the goal names no rule)."""
    r = subprocess.run(["make", "-pq", "-C", REPO,
                        "no-such-target-for-the-database"],
                       capture_output=True, text=True, timeout=60)
    return {m.group(1) for m in re.finditer(
        r"^([A-Za-z0-9][\w.-]*):(?!=)", r.stdout, re.M)}


def check_make(args, targets):
    goals, k = [], 0
    while k < len(args):
        a = args[k]
        if a in ("-C", "-f", "-j") and k + 1 < len(args):
            k += 2
            continue
        if not a.startswith("-") and "=" not in a:
            goals.append(a)
        k += 1
    missing = [g for g in goals if g not in targets]
    return missing


def _ids(cmds):
    return ["%s %s" % (p, " ".join(a)) for _, p, a in cmds]


SHOWN = shown()
CMDS = distinct(SHOWN)


def test_the_texts_show_commands():
    """The extraction finds something in each source: a parser that found
    nothing would pass any README."""
    sources = {(s, p) for s, p, _ in SHOWN}
    for want in [("README.md", "ringctl"), ("README.md", "make"),
                 ("the demo banner", "ringctl"),
                 ("the demo banner", "make"),
                 ("the demo banner", "ring-agent")]:
        assert want in sources, "no %s command found in %s" % (want[1],
                                                                want[0])


@pytest.mark.parametrize("source,prog,args", CMDS, ids=_ids(CMDS))
def test_command_parses(ringd_bin, tmp_path, source, prog, args):
    where = "%s: %s %s" % (source, prog, " ".join(args))
    if prog == "make":
        missing = check_make(args, make_targets())
        assert not missing, "%s: no make target %s" % (where, missing)
        return
    if prog == "ringctl":
        r, ok = check_ringctl(ringd_bin, args, str(tmp_path))
    else:
        r, ok = check_daemon(ringd_bin, prog, args, str(tmp_path))
    out = r.stdout + r.stderr
    assert not USAGE_RE.search(r.stderr), \
        "%s is a usage error (exit %d): %s" % (where, r.returncode, out)
    assert ok, "%s: exit %d, expected it to get past parsing: %s" % (
        where, r.returncode, out)


def test_a_bad_command_is_caught(ringd_bin, tmp_path):
    """The checks fail on what a typo would print: an unknown command, an
    unknown option, a missing make target."""
    for args in (["statu"], ["test", "bw", "n1", "n2", "--stream", "4"],
                 ["ranks", "-f", "hostfle"]):
        r, ok = check_ringctl(ringd_bin, args, str(tmp_path))
        assert USAGE_RE.search(r.stderr) or not ok, (args, r.stderr)
    r, ok = check_daemon(ringd_bin, "ring-agent", ["-x"], str(tmp_path))
    assert USAGE_RE.search(r.stderr) and not ok, r.stderr
    assert check_make(["demo-cutt"], make_targets()) == ["demo-cutt"]
    line = "sudo runuser -u alice -- ringctl status > /tmp/s 2>&1; " \
        "make -C /x demo-down EDGE=n1-n2"
    assert invocations(line) == [("ringctl", ["status"]),
                                 ("make", ["-C", "/x", "demo-down",
                                           "EDGE=n1-n2"])]
