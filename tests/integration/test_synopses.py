"""The three command lines are described in four places: each binary's
--help, its man page, the README and the docs. This test keeps them in
agreement: every command, subcommand and option --help lists is in the man
page's SYNOPSIS, OPTIONS and COMMANDS sections and the other way round;
every command line quoted in README.md, docs/*.md and the man pages'
examples uses only what --help lists (a doc that quotes a whole synopsis
block must list what --help lists; the README quotes none: the man page
holds the synopsis); and a number that --help and the man page both give
for one option (a limit from common/testlimits.h, a default) is the same.

The checks are functions of texts (help, man page, docs), so that the
negative tests below can feed them a mutated copy and see them fail."""

import glob
import itertools
import json
import os
import re
import subprocess

import pytest

import daemons
from ringtest import shell_invocations

REPO = daemons.REPO
MAN_DIR = os.path.join(REPO, "docs", "man")
PROGS = ("ring-agent", "ring-coordinator", "ringctl")
OPT_RE = re.compile(r"(?<![\w\-/=.])(--?[A-Za-z][A-Za-z0-9-]*)")

# ------------------------------------------------------------------ roff


_ROFF_NAMED = {"lq": '"', "rq": '"', "dq": '"', "oq": "'", "cq": "'",
               "mu": "x", "bu": "*", "em": "--", "en": "-", "aq": "'",
               "ti": "~", "ha": "^", "ga": "`", "co": "(C)"}


def _roff_text(s, font, out):
    """Append (char, font) for the text s with its inline escapes; returns
    the font in effect at its end."""
    i = 0
    prev = font
    while i < len(s):
        c = s[i]
        if c != "\\" or i + 1 == len(s):
            out.append((c, font))
            i += 1
            continue
        n = s[i + 1]
        if n == "f":  # font: \fB \fI \fR \fP \f(CW
            if s[i + 2:i + 3] == "(":
                f = s[i + 3:i + 5]
                i += 5
            else:
                f = s[i + 2:i + 3]
                i += 3
            f = {"P": prev, "CW": "R"}.get(f, f)
            prev, font = font, f if f in ("B", "I", "R") else "R"
        elif n == "(":
            for ch in _ROFF_NAMED.get(s[i + 2:i + 4], ""):
                out.append((ch, font))
            i += 4
        elif n in "-":
            out.append(("-", font))
            i += 2
        elif n == "e":
            out.append(("\\", font))
            i += 2
        elif n in "&|^":  # zero-width
            i += 2
        elif n == " ":
            out.append((" ", font))
            i += 2
        elif n == '"':  # comment to the end of the line
            break
        else:
            out.append((n, font))
            i += 2
    return font


def _roff_args(s):
    """A macro line's arguments, roff quoting ("" is a literal quote)."""
    args, cur, quoted, any_ = [], "", False, False
    i = 0
    while i < len(s):
        c = s[i]
        if quoted:
            if c == '"' and s[i + 1:i + 2] == '"':
                cur += '"'
                i += 2
                continue
            if c == '"':
                quoted = False
            else:
                cur += c
        elif c == '"':
            quoted = any_ = True
        elif c in " \t":
            if cur or any_:
                args.append(cur)
            cur, any_ = "", False
        elif c == "\\" and i + 1 < len(s):
            cur += s[i:i + 2]
            i += 2
            continue
        else:
            cur += c
        i += 1
    if cur or any_:
        args.append(cur)
    return args


_FONT_MACROS = {"B": "B", "I": "I", "R": "R", "SB": "B", "SM": "R"}
_ALT_MACROS = {"BR", "RB", "BI", "IB", "IR", "RI"}


class Roff:
    """A man page as sections (name -> list of events). An event is
    ("text", [(char, font), ...]) for a line of text, or ("mac", name) for
    a structural request (TP, PP, IP, RS, RE, br, nf, fi, ...)."""

    def __init__(self, text):
        self.sections = {}
        sec = None
        for raw in text.splitlines():
            if raw.startswith(".\\\"") or raw.startswith("'\\\""):
                continue
            if raw.startswith(".") or raw.startswith("'"):
                m = re.match(r"[.'](\S+)\s*(.*)", raw)
                if not m:
                    continue
                name, rest = m.group(1), m.group(2)
                if name == "SH":
                    sec = " ".join(_roff_args(rest)).upper()
                    self.sections.setdefault(sec, [])
                    continue
                if sec is None:
                    continue
                ev = self.sections[sec]
                if name in _FONT_MACROS and rest:
                    chars = []
                    _roff_text(" ".join(_roff_args(rest)),
                               _FONT_MACROS[name], chars)
                    ev.append(("text", chars))
                elif name in _ALT_MACROS:
                    chars = []
                    for k, a in enumerate(_roff_args(rest)):
                        _roff_text(a, name[k % 2], chars)
                    ev.append(("text", chars))
                else:
                    ev.append(("mac", name))
            elif sec is not None:
                chars = []
                _roff_text(raw, "R", chars)
                self.sections[sec].append(("text", chars))

    def section(self, name):
        return self.sections.get(name.upper(), [])


def _chars_join(lines):
    """Lines of (char, font) joined by spaces."""
    out = []
    for k, chars in enumerate(lines):
        if k:
            out.append((" ", "R"))
        out.extend(chars)
    return out


def _words(chars):
    """Whitespace-separated words: (text, all_bold, any_bold)."""
    words, cur = [], []
    for c, f in chars + [(" ", "R")]:
        if c.isspace():
            if cur:
                text = "".join(c for c, _ in cur)
                marks = [f for c, f in cur if c not in "[]|,.;:()"]
                words.append((text, bool(marks) and
                              all(f == "B" for f in marks),
                              any(f == "B" for f in marks)))
            cur = []
        else:
            cur.append((c, f))
    return words


def _plain(chars):
    return "".join(c for c, _ in chars)


def _options(text):
    return set(OPT_RE.findall(text))


def _is_word(w):
    return re.fullmatch(r"[a-z][a-z0-9-]*", w) is not None


# ------------------------------------------------------------------ help


class Synopsis:
    """What one description of a command line lists: the global options,
    the commands ("status", "test bw": a group word and its subcommand)
    with their own options, and the text that describes each, for
    numbers."""

    def __init__(self, prog):
        self.prog = prog
        self.globals = set()
        self.commands = {}  # "test bw" -> set of options
        self.text = {}  # "test bw" -> its text; "" -> global options' text
        self.groups = set()  # "test", "pki"
        self.takes_value = set()  # global options that take a value

    def command_options(self, cmd):
        return self.commands.get(cmd, set()) - self.globals


def parse_help(prog, text):
    """--help of one binary. ringctl's has a usage line, an options section
    and a commands section of two-space indented lines (the synopsis part
    separated from the description by two or more spaces; deeper lines
    continue the command above); a daemon's has options only."""
    s = Synopsis(prog)
    section = "usage"
    cmd = None
    opt_text = []
    for line in text.splitlines():
        if re.match(r"^(usage|\s+%s)\b" % re.escape(prog), line) or \
                line.startswith("usage:"):
            s.globals |= _options(line)
            for m in re.finditer(r"\[(--?[A-Za-z][\w-]*) [A-Z]", line):
                s.takes_value.add(m.group(1))
            continue
        if re.match(r"^\S.*:$", line) or re.match(r"^options\b", line):
            section = "commands" if line.startswith("commands") else \
                "options" if line.startswith("options") else "other"
            continue
        if not line.startswith(" "):
            section = "other"
            continue
        if section == "commands":
            if re.match(r"^  \S", line):
                head = re.split(r"\s{2,}", line.strip())[0].split()
                cmd = head[0]
                if len(head) > 1 and _is_word(head[1]):
                    s.groups.add(head[0])
                    cmd = head[0] + " " + head[1]
                s.commands.setdefault(cmd, set())
                s.text.setdefault(cmd, "")
            if cmd is not None:
                s.commands[cmd] |= _options(line)
                s.text[cmd] += line + "\n"
        elif section in ("usage", "options"):
            # A daemon's options follow its usage line directly.
            # "-h, --help   this help;  -V, --version  the version": every
            # part that starts with a dash names options.
            for first in re.split(r"\s{2,}", line.strip()):
                if not first.startswith("-"):
                    continue
                s.globals |= _options(first)
                m = re.match(r"(--?[A-Za-z][\w-]*) [A-Z]", first)
                if m:
                    s.takes_value.add(m.group(1))
            opt_text.append(line)
    s.text[""] = "\n".join(opt_text)
    return s


def parse_readme_synopsis(prog, text):
    """The README's synopsis block: ringctl's --help format without the
    section headings (commands are the two-space indented lines)."""
    lines = text.splitlines()
    heads = [x for x in lines if x.startswith(prog)]
    rest = [x for x in lines if not x.startswith(prog)]
    return parse_help(prog, "\n".join(
        ["usage: " + heads[0]] + ["  " + h for h in heads[1:]] +
        ["commands:"] + rest))


# ------------------------------------------------------------------ man


def _man_blocks(events, nested=False):
    """(tag chars, body lines of chars) per .TP item of a section; with
    nested False, what stands between .RS and .RE is left out (ringctl
    ranks' formats: their --nnodes are torchrun's options)."""
    items, depth, i = [], 0, 0
    cur = None
    while i < len(events):
        kind, v = events[i]
        if kind == "mac" and v == "RS":
            depth += 1
        elif kind == "mac" and v == "RE":
            depth = max(0, depth - 1)
        elif kind == "mac" and v == "TP" and depth == 0:
            if i + 1 < len(events) and events[i + 1][0] == "text":
                cur = (events[i + 1][1], [])
                items.append(cur)
                i += 2
                continue
        elif kind == "text" and cur is not None and (depth == 0 or nested):
            cur[1].append(v)
        i += 1
    return items


def man_synopsis_lines(roff):
    """SYNOPSIS as lines (split at .br): lists of words."""
    lines, cur = [], []
    for kind, v in roff.section("SYNOPSIS"):
        if kind == "mac":
            if v in ("br", "PP", "LP", "P", "sp") and cur:
                lines.append(cur)
                cur = []
        else:
            cur.append(v)
    if cur:
        lines.append(cur)
    return [_words(_chars_join(x)) for x in lines]


def parse_man(prog, text):
    """The man page's synopsis, and per command and per option its text
    in COMMANDS and OPTIONS."""
    roff = Roff(text)
    s = Synopsis(prog)
    for words in man_synopsis_lines(roff):
        if not words or words[0][0] != prog:
            continue
        cmd = None
        k = 1
        while k < len(words):
            w, bold, _ = words[k]
            if bold and _is_word(w):
                cmd = w
                if k + 1 < len(words) and words[k + 1][1] and \
                        _is_word(words[k + 1][0]):
                    s.groups.add(w)
                    cmd = w + " " + words[k + 1][0]
                    k += 1
                s.commands.setdefault(cmd, set())
                k += 1
                break
            s.globals |= _options(w)
            k += 1
        for w, _, _ in words[k:]:
            if cmd is not None:
                s.commands[cmd] |= _options(w)
            else:
                s.globals |= _options(w)
    m = {"synopsis": s, "options": {}, "option_text": {},
         "commands": {}, "command_text": {}, "examples": []}
    for tag, body in _man_blocks(roff.section("OPTIONS")):
        tagw = _plain(tag)
        for o in _options(tagw):
            m["options"][o] = tagw
            m["option_text"][o] = body
    for tag, body in _man_blocks(roff.section("COMMANDS")):
        words = _words(tag)
        name = []
        for w, bold, _ in words:
            if not bold or not _is_word(w) or len(name) == 2:
                break
            name.append(w)
        if not name:
            continue
        cmd = " ".join(name)
        m["commands"][cmd] = _options(_plain(tag))
        m["command_text"][cmd] = [tag] + body
    # Examples: the literal lines between .nf and .fi, anywhere.
    for events in roff.sections.values():
        lit = False
        for kind, v in events:
            if kind == "mac" and v == "nf":
                lit = True
            elif kind == "mac" and v == "fi":
                lit = False
            elif kind == "text" and lit:
                m["examples"].append(_plain(v))
    return m


def man_path(prog):
    for p in sorted(glob.glob(os.path.join(MAN_DIR, "*.[1-9]"))):
        with open(p) as f:
            head = f.read(200)
        if re.match(r'\.TH\s+"?%s"?\s' % re.escape(prog.upper()), head):
            return p
    return os.path.join(MAN_DIR, prog + ".8")


# ------------------------------------------------------------------ checks


def _diff(problems, prog, what, a, a_name, b, b_name):
    for x in sorted(a - b):
        problems.append("%s: %s %s is in %s but not in %s" % (
            prog, what, x, a_name, b_name))
    for x in sorted(b - a):
        problems.append("%s: %s %s is in %s but not in %s" % (
            prog, what, x, b_name, a_name))


def check_man(prog, help_text, man_text, man_name="the man page"):
    """Commands, subcommands and options: --help against the man page's
    SYNOPSIS, OPTIONS and COMMANDS, both ways. Returns the problems."""
    h = parse_help(prog, help_text)
    m = parse_man(prog, man_text)
    ms = m["synopsis"]
    p = []
    hn, syn = "--help", man_name + " SYNOPSIS"
    opts = man_name + " OPTIONS"
    cmds = man_name + " COMMANDS"
    _diff(p, prog, "command", set(h.commands), hn, set(ms.commands), syn)
    _diff(p, prog, "option", h.globals, hn, set(m["options"]), opts)
    for o in sorted(ms.globals - h.globals):
        p.append("%s: option %s is in %s but not in %s" % (prog, o, syn, hn))
    if not h.commands:
        # A daemon: every option is in its SYNOPSIS.
        _diff(p, prog, "option", h.globals, hn, ms.globals, syn)
        return p
    _diff(p, prog, "command", set(h.commands), hn, set(m["commands"]), cmds)
    for cmd in sorted(set(h.commands) & set(ms.commands)):
        _diff(p, prog, "option of '%s':" % cmd, h.command_options(cmd), hn,
              ms.command_options(cmd), syn)
    for cmd in sorted(set(h.commands) & set(m["commands"])):
        said = _options(_plain(_chars_join(m["command_text"][cmd])))
        for o in sorted(said - h.command_options(cmd) - h.globals):
            p.append("%s: option %s of '%s' is in %s but not in %s" % (
                prog, o, cmd, cmds, hn))
    return p


_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
NUM = r"(\d+(?:\.\d+)?(?:[KMG](?:iB)?)?)(?!\w|\.\d)"


def _num(s):
    # K, M, G and KiB, MiB, GiB: powers of 1024 (ringctl(8), SIZES).
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([KMG]?)(?:iB)?", s)
    v = float(m.group(1)) * _SUFFIX[m.group(2)]
    return int(v) if v == int(v) else v


def _sizes(s):
    return tuple(_num(x) for x in s.split(","))


def help_numbers(h):
    """(scope, option) -> {kind: value} from --help: "--opt A-B" ranges,
    "at most N", "(default N", "up to N sizes of A-B" for --sizes, "the
    tx depth (default N)" for --tx-depth, and ringctl's closing line on
    latency defaults. scope: a command, or "" for a global option."""
    out = {}

    def put(scope, opt, kind, v):
        out.setdefault((scope, opt), {})[kind] = v

    for scope, text in h.text.items():
        flat = " ".join(text.split())
        for o, a, b in re.findall(r"(--?[a-z][\w-]*) \[?%s-%s" % (NUM, NUM),
                                  flat):
            put(scope, o, "min", _num(a))
            put(scope, o, "max", _num(b))
        for n, a, b in re.findall(r"up to (\d+) (?:distinct )?sizes of "
                                  r"%s-%s" % (NUM, NUM), flat):
            put(scope, "--sizes", "count", _num(n))
            put(scope, "--sizes", "min", _num(a))
            put(scope, "--sizes", "max", _num(b))
        for words, n in re.findall(r"the ([a-z]+(?: [a-z]+)?) \(default "
                                   + NUM + r"\)", flat):
            put(scope, "--" + words.replace(" ", "-"), "default", _num(n))
        m = re.search(r"latency sizes\s+default to ([\dKMGiB,]+), duration "
                      + NUM + r" s, warm-up " + NUM + r" s, iterations "
                      + NUM, flat)
        if m:
            for c in h.commands:
                # The all-reduce's sizes and counts are its own.
                if c == "test allreduce":
                    continue
                if "--sizes" in h.commands[c]:
                    put(c, "--sizes", "default", _sizes(m.group(1)))
                    if "--iterations" in h.commands[c]:
                        put(c, "--iterations", "default", _num(m.group(4)))
                if "--duration" in h.commands[c]:
                    put(c, "--duration", "default", _num(m.group(2)))
                if "--warmup" in h.commands[c]:
                    put(c, "--warmup", "default", _num(m.group(3)))
        if scope == "":
            for line in text.splitlines():
                parts = re.split(r"\s{2,}", line.strip(), maxsplit=1)
                o = _options(parts[0])
                if len(o) != 1 or len(parts) < 2:
                    continue
                o = o.pop()
                # The option's text runs on over the deeper lines below.
                rest = text[text.index(line) + len(line):].splitlines()
                desc = parts[1] + " " + " ".join(
                    x.strip() for x in
                    itertools.takewhile(
                        lambda x: not re.match(r"^\s{0,4}-", x), rest))
                m = re.search(r"at most " + NUM, desc)
                if m:
                    put("", o, "max", _num(m.group(1)))
                m = re.search(r"\(default " + NUM + r"[;,)]", desc)
                if m:
                    put("", o, "default", _num(m.group(1)))
    return out


def _man_option_texts(chars):
    """Split a man text at its bold options: [(option, text after it up to
    the next bold option)]. "--a and --b text" gives both options b's
    text."""
    words = _words(chars)
    runs, cur = [], None
    for w, bold, any_bold in words:
        o = _options(w)
        if any_bold and o and re.match(r"^\[?--?[A-Za-z]", w):
            cur = [sorted(o)[0], []]
            runs.append(cur)
        elif cur is not None:
            cur[1].append(w)
    out = []
    pending = []
    for o, ws in runs:
        text = " ".join(ws)
        if text in ("and", ",", "or"):
            pending.append(o)
            continue
        for p in pending + [o]:
            out.append((p, text))
        pending = []
    return out


def man_numbers(m):
    """(scope, option) -> {kind: value} from the man page's COMMANDS and
    OPTIONS texts: "A to B", "1 byte to B", "at most N", "(default N",
    "Default N.", "up to N ... sizes", "(default S,S,...)"."""
    out = {}

    def scan(scope, o, t):
        d = out.setdefault((scope, o), {})
        m = re.search(r"(?:^|[\s,(])" + NUM + r"(?: bytes?)? to " + NUM, t)
        if m:
            d["min"], d["max"] = _num(m.group(1)), _num(m.group(2))
        m = re.search(r"at most " + NUM, t)
        if m:
            d["max"] = _num(m.group(1))
        # "256, 512, 1024, 2048 or 4096": the values allowed.
        m = re.search(r"(?:^|\s)(%s(?:, %s)+ or %s)(?:[,;.]|$)" % (
            (NUM,) * 3), t)
        if m and "min" not in d:
            vals = [_num(x) for x in re.split(r", | or ", m.group(1))]
            d["min"], d["max"] = min(vals), max(vals)
        m = re.search(r"[Dd]efault:? (\d[\dKMGiB]*(?:,\d[\dKMGiB]*)+)\)", t)
        if m:
            d["default"] = _sizes(m.group(1))
        else:
            m = re.search(r"[Dd]efault:? " + NUM +
                          r"(?: (?:s|seconds|bytes))?(?:[,;)]|\.(?!\d))", t)
            if m:
                d["default"] = _num(m.group(1))
        m = re.search(r"up to (\d+) (?:[a-z-]+ )*?sizes", t)
        if m:
            d["count"] = _num(m.group(1))

    for cmd, lines in m["command_text"].items():
        for o, t in _man_option_texts(_chars_join(lines)):
            scan(cmd, o, t)
    for o, body in m["option_text"].items():
        scan("", o, _plain(_chars_join(body)))
    return out


def check_numbers(prog, help_text, man_text, man_name="the man page"):
    """Where --help and the man page both give a number of one kind (min,
    max, default, count) for one option, it must be the same."""
    h = parse_help(prog, help_text)
    hn = help_numbers(h)
    mn = man_numbers(parse_man(prog, man_text))
    p = []
    for key in sorted(set(hn) & set(mn)):
        for kind in sorted(set(hn[key]) & set(mn[key])):
            if hn[key][kind] != mn[key][kind]:
                p.append("%s: %s%s %s is %r in --help but %r in %s" % (
                    prog, "'%s' " % key[0] if key[0] else "", key[1], kind,
                    hn[key][kind], mn[key][kind], man_name))
    return p


def check_values(prog, help_text, man_text, man_name="the man page"):
    """The debug subsystems -d lists, and the default paths (-c, -s): the
    same in --help and in the man page's OPTIONS."""
    h = parse_help(prog, help_text)
    m = parse_man(prog, man_text)
    p = []
    flat = " ".join(h.text[""].split())
    sub = re.search(r"-d SUBSYS .*?: ([a-z,]+)", flat)
    if sub and "-d" in m["option_text"]:
        hs = set(sub.group(1).split(","))
        ms = {w.strip(",.;()") for w, bold, _ in
              _words(_chars_join(m["option_text"]["-d"])) if bold}
        _diff(p, prog, "-d subsystem", hs, "--help", ms,
              man_name + " OPTIONS")
    for o in ("-c", "-s"):
        d = re.search(r"%s [A-Z]+ .*?(/[\w/.-]+\w)" % o, flat)
        if d and o in m["option_text"]:
            if d.group(1) not in _plain(_chars_join(m["option_text"][o])):
                p.append("%s: %s default %s is in --help but not in %s "
                         "OPTIONS %s" % (prog, o, d.group(1), man_name, o))
    return p


# ------------------------------------------------------------ doc lines

def command_lines(text):
    """The command lines a Markdown text quotes: each line of a fenced
    block, each `inline` span (joined over line breaks)."""
    out, rest, fence = [], [], False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            fence = not fence
            continue
        (out if fence else rest).append(line)
    out += [" ".join(x.split()) for x in
            re.findall(r"`([^`]+)`", "\n".join(rest))]
    return out


def check_invocation(h, args):
    """Problems of one quoted command line against --help's synopsis h."""
    where = "%s %s" % (h.prog, " ".join(args))
    p = []
    cmd = None
    k = 0
    while k < len(args):
        a = args[k]
        if a.startswith("-") and len(a) > 1:
            o = a.split("=")[0]
            own = h.commands.get(cmd, set()) if cmd else set()
            if o not in h.globals and o not in own:
                p.append("%s: option %s in '%s' is not in --help%s" % (
                    h.prog, o, where, " for '%s'" % cmd if cmd else ""))
            if o in h.takes_value and "=" not in a:
                k += 1
        elif cmd is None and h.commands:
            if a in h.groups:
                if k + 1 < len(args) and "%s %s" % (a, args[k + 1]) in \
                        h.commands:
                    cmd = "%s %s" % (a, args[k + 1])
                    k += 1
                elif k + 1 < len(args) and not args[k + 1].startswith("-"):
                    p.append("%s: command '%s %s' in '%s' is not in "
                             "--help" % (h.prog, a, args[k + 1], where))
                    cmd = a
                else:
                    cmd = a  # the group named alone, in prose
            elif a in h.commands:
                cmd = a
            else:
                p.append("%s: command '%s' in '%s' is not in --help" % (
                    h.prog, a, where))
                cmd = a
        k += 1
    return p


def check_docs(helps, docs):
    """Every command line quoted in docs ({name: text}; Markdown, or man
    pages whose .nf examples count) uses only commands and options of
    --help (helps: {prog: help text}); a synopsis block (a fenced block
    opening with "PROG [") lists what --help lists."""
    syn = {p: parse_help(p, t) for p, t in helps.items()}
    p = []
    for name, text in sorted(docs.items()):
        if re.match(r"^\.(TH|\\\")", text):
            prog = next((x for x in syn if man_path(x).endswith(
                os.path.basename(name))), None)
            lines = parse_man(prog or "", text)["examples"]
        else:
            lines = command_lines(text)
            for block in re.findall(r"```\n((%s) \[.*?)```" % "|".join(
                    map(re.escape, syn)), text, re.S):
                prog = block[1]
                r = parse_readme_synopsis(prog, block[0])
                h = syn[prog]
                src = name + " synopsis"
                _diff(p, prog, "command", set(h.commands), "--help",
                      set(r.commands), src)
                for o in sorted(r.globals - h.globals):
                    p.append("%s: option %s is in %s but not in --help" % (
                        prog, o, src))
                for c in sorted(set(h.commands) & set(r.commands)):
                    _diff(p, prog, "option of '%s':" % c,
                          h.command_options(c), "--help",
                          r.command_options(c), src)
                lines = [x for x in lines if x not in block[0].splitlines()]
        for line in lines:
            for prog, args in shell_invocations(line, syn):
                if args and args[0].startswith("["):
                    continue  # a synopsis line, checked above
                for q in check_invocation(syn[prog], args):
                    p.append("%s (in %s)" % (q, name))
    return p


# ------------------------------------------------------------ the tests


def help_text(bindir, prog):
    r = subprocess.run([os.path.join(bindir, prog), "--help"],
                       capture_output=True, text=True, timeout=30,
                       env=dict(os.environ, **daemons.SANITIZER_ENV))
    assert r.returncode == 0, "%s --help: exit %d: %s" % (
        prog, r.returncode, r.stderr)
    assert r.stdout.strip(), "%s --help printed nothing" % prog
    return r.stdout


def read(path):
    with open(path) as f:
        return f.read()


def doc_paths():
    return [os.path.join(REPO, "README.md")] + sorted(
        glob.glob(os.path.join(REPO, "docs", "*.md"))) + sorted(
        glob.glob(os.path.join(MAN_DIR, "*.[1-9]")))


def _fail(problems):
    assert not problems, "%d disagreement(s):\n  %s" % (
        len(problems), "\n  ".join(problems))


@pytest.fixture(scope="module")
def helps(ringd_bin):
    return {p: help_text(ringd_bin, p) for p in PROGS}


@pytest.mark.parametrize("prog", PROGS)
def test_man_lists_what_help_lists(helps, prog):
    path = man_path(prog)
    _fail(check_man(prog, helps[prog], read(path), os.path.relpath(
        path, REPO)))


@pytest.mark.parametrize("prog", PROGS)
def test_man_numbers_and_values_match_help(helps, prog):
    path = man_path(prog)
    name = os.path.relpath(path, REPO)
    _fail(check_numbers(prog, helps[prog], read(path), name) +
          check_values(prog, helps[prog], read(path), name))


def test_docs_quote_only_what_help_lists(helps):
    _fail(check_docs(helps, {os.path.relpath(p, REPO): read(p)
                             for p in doc_paths()}))


def test_the_checks_find_numbers_to_compare(helps):
    """The number check compares something: a parser that found nothing
    would pass any page."""
    h = help_numbers(parse_help("ringctl", helps["ringctl"]))
    m = man_numbers(parse_man("ringctl", read(man_path("ringctl"))))
    both = [(k, kind) for k in set(h) & set(m)
            for kind in set(h[k]) & set(m[k])]
    assert len(both) >= 15, "only %d numbers compared: %r" % (
        len(both), sorted(both))


# -------------------------------------------- the checks can fail


def _mutate(text, old, new=""):
    assert old in text, "the mutation's anchor %r is gone" % old
    return text.replace(old, new, 1)


def test_a_man_page_without_an_option_fails(helps, tmp_path):
    """A man page copy without --tx-depth in its SYNOPSIS, one without
    -t in OPTIONS, one without a command, and one with an option --help
    does not list: each mismatch is found and named."""
    orig = read(man_path("ringctl"))
    cases = [
        (_mutate(orig, ".RB [ \\-\\-tx\\-depth\n.IR n ]\n"),
         "ringctl: option of 'test rdma-bw': --tx-depth is in --help but "
         "not in copy.8 SYNOPSIS"),
        (_mutate(orig, ".TP\n.BI \\-t \" seconds\"\n"),
         "ringctl: option -t is in --help but not in copy.8 OPTIONS"),
        (_mutate(orig, ".br\n.B ringctl\n.RI [ options ]\n.B forget\n"
                 ".I node\n"),
         "ringctl: command forget is in --help but not in copy.8 "
         "SYNOPSIS"),
        (_mutate(orig, ".B survey\n", ".B survey\n.RB [ \\-\\-quick ]\n"),
         "ringctl: option of 'survey': --quick is in copy.8 SYNOPSIS but "
         "not in --help"),
    ]
    for text, want in cases:
        copy = tmp_path / "copy.8"
        copy.write_text(text)
        got = check_man("ringctl", helps["ringctl"], copy.read_text(),
                        "copy.8")
        assert want in got, "not found: %r in %r" % (want, got)
    agent = _mutate(read(man_path("ring-agent")), ".TP\n.BI \\-r \" glob\"\n")
    agent = _mutate(agent, ".RB [ \\-r\n.IR glob ]...\n")
    got = check_man("ring-agent", helps["ring-agent"], agent, "copy.8")
    assert "ring-agent: option -r is in --help but not in copy.8 " \
        "OPTIONS" in got, got
    assert "ring-agent: option -r is in --help but not in copy.8 " \
        "SYNOPSIS" in got, got


def test_a_wrong_number_or_value_fails(helps):
    man = read(man_path("ringctl"))
    bad = _mutate(man, "outstanding work requests per queue pair, 1 to 8192",
                  "outstanding work requests per queue pair, 1 to 4096")
    got = check_numbers("ringctl", helps["ringctl"], bad, "copy.8")
    assert "ringctl: 'test rdma-bw' --tx-depth max is 8192 in --help but " \
        "4096 in copy.8" in got, got
    bad = _mutate(man, "than 0 and at most 3600", "than 0 and at most 60")
    got = check_numbers("ringctl", helps["ringctl"], bad, "copy.8")
    assert "ringctl: -t max is 3600 in --help but 60 in copy.8" in got, got
    bad = _mutate(read(man_path("ring-agent")), ".B probe\n", ".B probes\n")
    got = check_values("ring-agent", helps["ring-agent"], bad, "copy.8")
    assert "ring-agent: -d subsystem probe is in --help but not in copy.8 " \
        "OPTIONS" in got, got


def test_a_doc_quoting_an_unknown_option_fails(helps):
    readme = read(os.path.join(REPO, "README.md"))
    bad = readme + "\n```\nringctl test bw n1 n2 --stream 4\n" \
        "sudo ring-agent -x -c a.conf\nringctl statu\n```\n"
    got = check_docs(helps, {"copy.md": bad})
    for want in ["ringctl: option --stream in 'ringctl test bw n1 n2 "
                 "--stream 4' is not in --help for 'test bw' (in copy.md)",
                 "ring-agent: option -x in 'ring-agent -x -c a.conf' is "
                 "not in --help (in copy.md)",
                 "ringctl: command 'statu' in 'ringctl statu' is not in "
                 "--help (in copy.md)"]:
        assert want in got, "not found: %r in %r" % (want, got)


# ------------------------------------- ringctl's table (ringctl/help.c)
#
# ringctl prints its --help, `help COMMAND`, `COMMAND --help` and its usage
# errors from one table, which `ringctl -f json help` dumps. The man page's
# SYNOPSIS, each command's options and its limits are held against it here;
# test_completion.py holds the bash completion against it.


def ringctl_table(bindir):
    r = subprocess.run([os.path.join(bindir, "ringctl"), "-f", "json",
                        "help"], capture_output=True, text=True, timeout=30,
                       env=dict(os.environ, **daemons.SANITIZER_ENV))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _form_options(name, form):
    """The options a synopsis form names, the command's words left out."""
    return _options(form.split(None, len(name.split()))[-1]
                    if len(form.split()) > len(name.split()) else "")


def parse_table(prog, table):
    """A Synopsis from the table: commands with the options of their
    synopsis and of their option lists; per command a text of its forms,
    its option lines ("--streams N  parallel streams (default 8)") and
    notes, for the numbers."""
    s = Synopsis(prog)
    lines = []
    for o in table["globals"]:
        s.globals.add(o["name"])
        if o["arg"]:
            s.takes_value.add(o["name"])
        lines.append("  %s%s  %s" % (o["name"], " " + o["arg"] if o["arg"]
                                     else "", o["desc"]))
    s.text[""] = "\n".join(lines)
    for c in table["commands"]:
        name = c["name"]
        if " " in name:
            s.groups.add(name.split()[0])
        opts = set()
        for form in c["synopsis"]:
            opts |= _form_options(name, form)
        opts |= {o["name"] for o in c["options"]}
        s.commands[name] = opts
        s.text[name] = "\n".join(
            c["synopsis"] + ["%s %s %s" % (o["name"], o["arg"] or "",
                                           o["desc"]) for o in c["options"]]
            + [c["notes"]])
    return s


def table_numbers(table):
    """help_numbers of the table, and each option's "(default N)"."""
    out = help_numbers(parse_table("ringctl", table))
    for c in table["commands"]:
        for o in c["options"]:
            d = out.setdefault((c["name"], o["name"]), {})
            m = re.search(r"\(default (\d[\dKMGiB]*(?:,\d[\dKMGiB]*)+)\)",
                          o["desc"])
            if m:
                d["default"] = _sizes(m.group(1))
                continue
            m = re.search(r"\(default " + NUM + r"[;,)]", o["desc"])
            if m:
                d["default"] = _num(m.group(1))
    return out


def check_table(table, man_text, man_name="the man page"):
    """Each command's synopsis names exactly the options it lists, and the
    man page's SYNOPSIS has the same commands with the same options."""
    prog = "ringctl"
    p = []
    for c in table["commands"]:
        syn = set()
        for form in c["synopsis"]:
            syn |= _form_options(c["name"], form)
        listed = {o["name"] for o in c["options"]}
        _diff(p, prog, "option of '%s':" % c["name"], syn,
              "the table's synopsis", listed, "the table's options")
        assert c["example"].startswith("ringctl "), c
    t = parse_table(prog, table)
    ms = parse_man(prog, man_text)["synopsis"]
    syn = man_name + " SYNOPSIS"
    _diff(p, prog, "command", set(t.commands), "the table", set(ms.commands),
          syn)
    for cmd in sorted(set(t.commands) & set(ms.commands)):
        _diff(p, prog, "option of '%s':" % cmd, t.command_options(cmd),
              "the table", ms.command_options(cmd), syn)
    mn = man_numbers(parse_man(prog, man_text))
    tn = table_numbers(table)
    for key in sorted(set(tn) & set(mn)):
        for kind in sorted(set(tn[key]) & set(mn[key])):
            if tn[key][kind] != mn[key][kind]:
                p.append("%s: %s%s %s is %r in the table but %r in %s" % (
                    prog, "'%s' " % key[0] if key[0] else "", key[1], kind,
                    tn[key][kind], mn[key][kind], man_name))
    return p


@pytest.fixture(scope="module")
def table(ringd_bin):
    return ringctl_table(ringd_bin)


def test_man_synopsis_is_the_table(table):
    path = man_path("ringctl")
    _fail(check_table(table, read(path), os.path.relpath(path, REPO)))
    # The number check compares something.
    tn = table_numbers(table)
    mn = man_numbers(parse_man("ringctl", read(path)))
    both = [(k, kind) for k in set(tn) & set(mn)
            for kind in set(tn[k]) & set(mn[k])]
    assert len(both) >= 20, sorted(both)


def test_help_overview_is_the_table(helps, table):
    """--help lists the table's commands, each with the table's options."""
    h = parse_help("ringctl", helps["ringctl"])
    t = parse_table("ringctl", table)
    p = []
    _diff(p, "ringctl", "command", set(h.commands), "--help",
          set(t.commands), "the table")
    for cmd in sorted(set(h.commands) & set(t.commands)):
        _diff(p, "ringctl", "option of '%s':" % cmd, h.command_options(cmd),
              "--help", t.command_options(cmd), "the table")
    _diff(p, "ringctl", "option", h.globals, "--help", t.globals,
          "the table")
    _fail(p)


def test_the_table_check_fails_on_a_mutated_man_page(table):
    orig = read(man_path("ringctl"))
    bad = _mutate(orig, ".RB [ \\-\\-tx\\-depth\n.IR n ]\n")
    got = check_table(table, bad, "copy.8")
    assert "ringctl: option of 'test rdma-bw': --tx-depth is in the table " \
        "but not in copy.8 SYNOPSIS" in got, got
    bad = _mutate(orig, ".B help\n.RI [ command ]\n", ".B helps\n")
    got = check_table(table, bad, "copy.8")
    assert "ringctl: command help is in the table but not in copy.8 " \
        "SYNOPSIS" in got, got
