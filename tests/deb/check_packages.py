#!/usr/bin/python3
"""The Debian packages `make deb` built, checked with Debian's own tools:
lintian on the .changes (an error or warning that no override in
debian/*.lintian-overrides explains fails), and with dpkg-deb each
package's files (where they belong, each in one package, nothing in /etc:
no conffiles), its dependencies, its units and sysusers/tmpfiles lines
(the role's part of systemd/ringd.*), and its maintainer scripts (syntax,
users before directories, the purge code run on a scratch root).

Usage: check_packages.py DIR (build/deb). Prints "[deb] PASS: what" or
"[deb] FAIL: what: why" per check (make deb-check counts them); exit 1
when one failed, 2 when the packages or a tool are missing (a failure
too: nothing here is skipped)."""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PACKAGES = ("ring-agent", "ring-coordinator", "ringctl")

DOC = "./usr/share/doc/%s/"
# Regular files each package must hold, and nothing else.
EXPECTED = {
    "ring-agent": [
        "./usr/sbin/ring-agent",
        "./lib/systemd/system/ring-agent.service",
        "./usr/lib/sysusers.d/ring-agent.conf",
        "./usr/lib/tmpfiles.d/ring-agent.conf",
        "./usr/share/man/man8/ring-agent.8.gz",
        DOC % "ring-agent" + "examples/agent.conf",
    ],
    "ring-coordinator": [
        "./usr/sbin/ring-coordinator",
        "./lib/systemd/system/ring-coordinator.service",
        "./usr/lib/sysusers.d/ring-coordinator.conf",
        "./usr/lib/tmpfiles.d/ring-coordinator.conf",
        "./usr/share/man/man8/ring-coordinator.8.gz",
        DOC % "ring-coordinator" + "examples/coordinator.conf",
    ],
    "ringctl": [
        "./usr/bin/ringctl",
        "./usr/share/man/man8/ringctl.8.gz",
        "./usr/share/man/man5/ringd.conf.5.gz",
        "./usr/share/bash-completion/completions/ringctl",
    ],
}
for _p in PACKAGES:
    EXPECTED[_p] += [DOC % _p + "copyright", DOC % _p + "changelog.gz"]
# The Prometheus rules and the Grafana dashboard go with the coordinator
# (debian/ring-coordinator.install) once the source tree has them.
for _src, _dst in (("docs/prometheus/ringd.rules.yml",
                    "./usr/share/ringd/prometheus/ringd.rules.yml"),
                   ("docs/grafana/ringd-dashboard.json",
                    "./usr/share/ringd/grafana/ringd-dashboard.json")):
    if os.path.exists(os.path.join(REPO, _src)):
        EXPECTED["ring-coordinator"].append(_dst)

EXECUTABLES = {"./usr/sbin/ring-agent", "./usr/sbin/ring-coordinator",
               "./usr/bin/ringctl"}
# Libraries each package must and must not link (ringctl is a client: no
# libevent, libsystemd or libibverbs; the agent keeps no SQLite state).
DEPENDS = {
    "ring-agent": (["libibverbs1", "libevent", "libsystemd0",
                    "systemd | systemd-standalone-sysusers"], ["libsqlite3"]),
    "ring-coordinator": (["libsqlite3", "libsystemd0",
                          "systemd | systemd-standalone-sysusers"], []),
    "ringctl": (["libprotobuf-c1", "libssl3"],
                ["libevent", "libsystemd0", "libibverbs1", "libsqlite3"]),
}
CONFIG = {"ring-agent": "agent.conf", "ring-coordinator": "coordinator.conf"}

results = []


def check(what, ok, why=""):
    results.append(ok)
    if ok:
        print("[deb] PASS: %s" % what)
    else:
        print("[deb] FAIL: %s: %s" % (what, why))
    sys.stdout.flush()
    return ok


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=300,
                          **kw)


def fatal(msg):
    print("[deb] FAIL: %s" % msg)
    sys.exit(2)


def directive_lines(path):
    with open(path) as f:
        return [ln.strip() for ln in f
                if ln.strip() and not ln.lstrip().startswith("#")]


def check_lintian(d):
    changes = glob.glob(os.path.join(d, "*.changes"))
    if len(changes) != 1:
        return check("lintian", False, "one .changes in %s expected, "
                     "found %d" % (d, len(changes)))
    # --fail-on error,warning: what dpkg's tools treat as a problem; info
    # and pedantic tags are printed but pass. Overridden tags are shown
    # (as O:) so that the log says what was overridden.
    p = run(["lintian", "--fail-on", "error,warning", "--show-overrides",
             "--tag-display-limit", "0", changes[0]])
    out = (p.stdout + p.stderr).strip()
    print("lintian %s (rc %d):\n%s" % (os.path.basename(changes[0]),
                                       p.returncode, out or "(no tags)"))
    tags = [ln for ln in out.splitlines() if re.match(r"^[EW]: ", ln)]
    check("lintian: no error or warning that is not overridden",
          p.returncode == 0 and not tags,
          "rc %d; %s" % (p.returncode, "; ".join(tags[:5]) or out[-300:]))
    # Each override says why: a comment above it in its block (overrides
    # under one comment, no blank line between, share it).
    bad = []
    for f in sorted(glob.glob(os.path.join(REPO, "debian",
                                           "*lintian-overrides"))):
        explained = False
        with open(f) as fh:
            for ln in fh:
                t = ln.strip()
                if not t:
                    explained = False
                elif t.startswith("#"):
                    explained = True
                elif not explained:
                    bad.append("%s: %s" % (os.path.basename(f), t))
    check("lintian overrides: each explained by a comment", not bad,
          "; ".join(bad))


def deb_of(d, pkg):
    found = glob.glob(os.path.join(d, "%s_*.deb" % pkg))
    return found[0] if len(found) == 1 else None


def contents(deb):
    """path -> (mode string, owner) for each entry of the data part."""
    p = run(["dpkg-deb", "-c", deb])
    out = {}
    for ln in p.stdout.splitlines():
        parts = ln.split(None, 5)
        if len(parts) < 6:
            continue
        mode, owner, path = parts[0], parts[1], parts[5]
        path = path.split(" -> ")[0]
        out[path] = (mode, owner)
    return out


def field(deb, name):
    p = run(["dpkg-deb", "-f", deb, name])
    return p.stdout.strip()


def check_package(d, pkg, seen, scratch):
    deb = deb_of(d, pkg)
    if not check("%s: one .deb" % pkg, deb is not None,
                 "none or several %s_*.deb in %s" % (pkg, d)):
        return
    files = contents(deb)
    regular = {p for p, (m, _) in files.items() if m.startswith("-")}
    want = set(EXPECTED[pkg])
    check("%s: files where they belong" % pkg, regular == want,
          "missing %s, unexpected %s" % (sorted(want - regular),
                                          sorted(regular - want)))
    check("%s: every entry root:root" % pkg,
          all(o == "root/root" for _, o in files.values()),
          sorted(p for p, (_, o) in files.items() if o != "root/root"))
    modes = {p: files[p][0] for p in regular}
    badmode = sorted(p for p, m in modes.items()
                     if m != ("-rwxr-xr-x" if p in EXECUTABLES
                              else "-rw-r--r--"))
    check("%s: modes (0755 programs, 0644 the rest)" % pkg, not badmode,
          ["%s %s" % (p, modes[p]) for p in badmode])
    dup = sorted(regular & seen)
    check("%s: no file another package ships" % pkg, not dup, dup)
    seen |= regular
    # No conffiles: the operator writes the configs (their existence lets
    # the services start), the package ships nothing in /etc.
    etc = sorted(p for p in files if p.startswith("./etc"))
    check("%s: nothing in /etc" % pkg, not etc, etc)

    ctrl = os.path.join(scratch, pkg + ".ctrl")
    run(["dpkg-deb", "-e", deb, ctrl])
    conff = os.path.join(ctrl, "conffiles")
    check("%s: no conffiles" % pkg,
          not os.path.exists(conff) or not open(conff).read().strip(),
          open(conff).read() if os.path.exists(conff) else "")

    deps = field(deb, "Depends")
    must, must_not = DEPENDS[pkg]
    check("%s: Depends has %s" % (pkg, ", ".join(must)),
          all(m in deps for m in must), deps)
    check("%s: Depends has none of %s" % (pkg, ", ".join(must_not) or "-"),
          not any(m in deps for m in must_not), deps)

    scripts = {s: os.path.join(ctrl, s)
               for s in ("preinst", "postinst", "prerm", "postrm")
               if os.path.exists(os.path.join(ctrl, s))}
    for s, path in sorted(scripts.items()):
        p = run(["sh", "-n", path])
        check("%s: %s is valid sh" % (pkg, s), p.returncode == 0, p.stderr)

    data = os.path.join(scratch, pkg + ".data")
    run(["dpkg-deb", "-x", deb, data])

    if pkg == "ringctl":
        check("ringctl: no maintainer scripts (no service, no users)",
              not scripts, sorted(scripts))
        comp = os.path.join(data, "usr/share/bash-completion/completions/"
                            "ringctl")
        with open(comp) as f, open(os.path.join(
                REPO, "ringctl", "ringctl.bash")) as g:
            check("ringctl: the completion is ringctl/ringctl.bash",
                  f.read() == g.read(), "differs")
        # Where bash-completion's loader finds it when ringctl is first
        # completed: its own lookup, the unpacked package's /usr/share
        # first in XDG_DATA_DIRS. (test_completion.py checks what it
        # completes.)
        loader = "/usr/share/bash-completion/bash_completion"
        if not check("ringctl: bash-completion is installed", os.path.exists(
                loader), "%s missing (Debian package bash-completion)" %
                loader):
            return
        script = ('source %s; __load_completion ringctl && '
                  'complete -p ringctl' % loader)
        p = run(["bash", "--norc", "--noprofile", "-c", script],
                env=dict(os.environ, HOME=scratch, XDG_DATA_DIRS=os.path.join(
                    data, "usr", "share") + ":/usr/share"))
        check("ringctl: bash-completion loads it on demand",
              p.returncode == 0 and p.stdout.strip() ==
              "complete -F _ringctl ringctl",
              "rc %d: %r %r" % (p.returncode, p.stdout, p.stderr[-300:]))
        return

    role = CONFIG[pkg].split(".")[0]
    unit = os.path.join(data, "lib/systemd/system/%s.service" % pkg)
    text = open(unit).read()
    check("%s: unit runs /usr/sbin/%s" % (pkg, pkg),
          "\nExecStart=/usr/sbin/%s " % pkg in text and
          "@SBINDIR@" not in text,
          [ln for ln in text.splitlines() if "Exec" in ln or "@SB" in ln])
    check("%s: unit starts only with /etc/ringd/%s" % (pkg, CONFIG[pkg]),
          "\nConditionPathExists=/etc/ringd/%s\n" % CONFIG[pkg] in text,
          "no ConditionPathExists=/etc/ringd/%s" % CONFIG[pkg])

    # sysusers/tmpfiles: the role's part of systemd/ringd.*, as installed.
    for kind, src in (("sysusers", "ringd.sysusers"),
                      ("tmpfiles", "ringd.tmpfiles")):
        mine = directive_lines(os.path.join(
            data, "usr/lib/%s.d/%s.conf" % (kind, pkg)))
        ref = directive_lines(os.path.join(REPO, "systemd", src))
        extra = [ln for ln in mine if ln not in ref]
        check("%s: %s lines are systemd/%s's" % (pkg, kind, src),
              mine and not extra, extra or "empty")
    post = open(scripts.get("postinst", os.devnull)).read()
    su = post.find("systemd-sysusers")
    tf = post.find("systemd-tmpfiles")
    check("%s: postinst creates the user (sysusers) before the "
          "directories (tmpfiles)" % pkg, 0 <= su < tf,
          "sysusers at %d, tmpfiles at %d" % (su, tf))
    check("%s: postinst enables the unit" % pkg,
          "deb-systemd-helper" in post and "enable" in post and
          "%s.service" % pkg in post, "no deb-systemd-helper enable")

    # The package's own purge code (up to debhelper's snippets, which talk
    # to this host's systemd) on a scratch root: the role's files and
    # state go, the other role's files, the CA and what else an operator
    # put there stay.
    with open(scripts["postrm"]) as f:
        own = f.read().split("# Automatically added by dh_")[0]
    own_path = os.path.join(scratch, pkg + ".postrm-own")
    with open(own_path, "w") as f:
        f.write(own + "\nexit 0\n")
    other = "coordinator" if role == "agent" else "agent"
    for both in (False, True):
        root = os.path.join(scratch, "%s.root.%d" % (pkg, both))
        etc_ringd = os.path.join(root, "etc", "ringd")
        os.makedirs(os.path.join(etc_ringd, "pki"))
        os.makedirs(os.path.join(root, "var", "lib", "ringd"))
        names = ["%s.conf" % role, "%s.crt" % role, "%s.key" % role,
                 "ca.crt", "pki/ca.key"]
        if both:
            names += ["%s.conf" % other, "%s.key" % other]
        for n in names:
            open(os.path.join(etc_ringd, n), "w").close()
        open(os.path.join(root, "var/lib/ringd/ringd.db"), "w").close()
        for action in ("upgrade", "remove", "purge"):
            env = dict(os.environ, DPKG_ROOT=root)
            p = run(["sh", "-e", own_path, action, "0.1.0"], env=env)
            if action == "purge":
                break
            left = all(os.path.exists(os.path.join(etc_ringd, n))
                       for n in names)
            check("%s: postrm %s keeps the configuration" % (pkg, action),
                  p.returncode == 0 and left, p.stderr or "files gone")
        gone = ["%s.conf" % role, "%s.crt" % role, "%s.key" % role]
        kept = ["pki/ca.key"]
        if both:
            kept += ["%s.conf" % other, "%s.key" % other, "ca.crt"]
        else:
            gone.append("ca.crt")
        if role == "coordinator":
            gone.append("../../var/lib/ringd")
        else:
            kept.append("../../var/lib/ringd")
        wrong = [n for n in gone if os.path.exists(os.path.join(etc_ringd, n))]
        wrong += ["%s removed" % n for n in kept
                  if not os.path.exists(os.path.join(etc_ringd, n))]
        check("%s: postrm purge%s removes the role's config, keys%s" %
              (pkg, " (other role installed)" if both else "",
               " and state" if role == "coordinator" else ""),
              p.returncode == 0 and not wrong,
              p.stderr or "; ".join("%s left" % w if "removed" not in w
                                    else w for w in wrong))


def check_sysusers_union(scratch):
    """The two daemon packages together define all of
    systemd/ringd.sysusers and ringd.tmpfiles."""
    for kind, src in (("sysusers", "ringd.sysusers"),
                      ("tmpfiles", "ringd.tmpfiles")):
        have = set()
        for pkg in ("ring-agent", "ring-coordinator"):
            path = os.path.join(scratch, pkg + ".data", "usr/lib/%s.d/%s.conf"
                                % (kind, pkg))
            if os.path.exists(path):
                have |= set(directive_lines(path))
        ref = set(directive_lines(os.path.join(REPO, "systemd", src)))
        check("packages together: all of systemd/%s" % src, ref <= have,
              sorted(ref - have))


def postinst_sections(ctrl, tools):
    """The debhelper sections of a package's postinst that come from the
    given dh_ tools, as one sh script."""
    with open(os.path.join(ctrl, "postinst")) as f:
        text = f.read()
    out = []
    for m in re.finditer(r"# Automatically added by (dh_[a-z]+)/[^\n]*\n"
                         r"(.*?)# End automatically added section", text,
                         re.S):
        if m.group(1) in tools:
            out.append(m.group(2))
    return "set -e\n" + "".join(out)


def check_users_and_dirs(d, scratch):
    """The postinsts' own sysusers and tmpfiles sections, run with
    DPKG_ROOT on a scratch root that holds the unpacked packages (the
    agent's first, then the coordinator's, as on a host with both): the
    users, groups and directories they create, with their owners and
    modes. The real systemd-sysusers and systemd-tmpfiles do the work."""
    for tool in ("systemd-sysusers", "systemd-tmpfiles"):
        if not shutil.which(tool):
            return check("users and directories from the postinsts", False,
                         "%s not found (Debian package systemd)" % tool)
    root = os.path.join(scratch, "hostroot")
    os.makedirs(os.path.join(root, "etc"))

    def db(name):
        entries = {}
        path = os.path.join(root, "etc", name)
        if os.path.exists(path):
            for ln in open(path):
                f = ln.rstrip("\n").split(":")
                entries[f[0]] = f
        return entries

    for pkg in ("ring-agent", "ring-coordinator"):
        deb = deb_of(d, pkg)
        if deb is None:
            return check("%s: users and directories" % pkg, False, "no .deb")
        run(["dpkg-deb", "-x", deb, root])
        ctrl = os.path.join(scratch, pkg + ".ctrl")
        script = postinst_sections(ctrl, ("dh_installsysusers",
                                          "dh_installtmpfiles"))
        p = run(["sh", "-c", script, "postinst", "configure", ""],
                env=dict(os.environ, DPKG_ROOT=root))
        passwd, group = db("passwd"), db("group")
        u = passwd.get("ringd")
        why = []
        if p.returncode != 0:
            why.append("rc %d: %s" % (p.returncode, p.stderr.strip()))
        if not u or u[5:] != ["/var/lib/ringd", "/usr/sbin/nologin"] or \
                "ringd" not in group or u[3] != group["ringd"][2]:
            why.append("user ringd (group ringd, home /var/lib/ringd, "
                       "nologin): %s" % (u,))
        want_ctl = pkg == "ring-coordinator"
        if ("ringctl" in group) != want_ctl:
            why.append("group ringctl %s" % ("missing" if want_ctl
                                             else "created"))
        gid = int(group["ringd"][2]) if "ringd" in group else -1
        uid = int(u[2]) if u else -1
        st = os.stat(os.path.join(root, "etc", "ringd")) if os.path.isdir(
            os.path.join(root, "etc", "ringd")) else None
        if not st or (st.st_mode & 0o7777, st.st_uid, st.st_gid) != (
                0o750, 0, gid):
            why.append("/etc/ringd not 0750 root:ringd: %s" % (
                "missing" if not st else "%o %d:%d" % (
                    st.st_mode & 0o7777, st.st_uid, st.st_gid)))
        var = os.path.join(root, "var", "lib", "ringd")
        if want_ctl:
            st = os.stat(var) if os.path.isdir(var) else None
            if not st or (st.st_mode & 0o7777, st.st_uid, st.st_gid) != (
                    0o750, uid, gid):
                why.append("/var/lib/ringd not 0750 ringd:ringd")
        elif os.path.exists(var):
            why.append("/var/lib/ringd created by the agent")
        check("%s: postinst creates user ringd%s, /etc/ringd%s (real "
              "systemd-sysusers/-tmpfiles, scratch root)" % (
                  pkg, ", group ringctl" if want_ctl else "",
                  ", /var/lib/ringd" if want_ctl else ""),
              not why, "; ".join(why))


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    d = sys.argv[1]
    for tool in ("dpkg-deb", "lintian"):
        if not shutil.which(tool):
            fatal("%s not found: install it (make deb-deps); this check "
                  "does not skip" % tool)
    if not glob.glob(os.path.join(d, "*.deb")):
        fatal("no packages in %s: run make deb" % d)
    check_lintian(d)
    seen = set()
    with tempfile.TemporaryDirectory(prefix="ringd-deb.") as scratch:
        for pkg in PACKAGES:
            check_package(d, pkg, seen, scratch)
        check_sysusers_union(scratch)
        check_users_and_dirs(d, scratch)
    failed = results.count(False)
    print("[deb] %d checks, %d failed" % (len(results), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
