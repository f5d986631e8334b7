"""Decide on data, never on English text (issue 23).

No C code of the programs compares or searches the operator's words of a
finding, a verdict or an error: strstr/strncmp/strcmp (and their kin) on
a field or variable that holds such text fails here, naming file:line.
Findings carry their subject and figures as fields (Finding.edge, node,
interface, peer_*, cables, nodes, ring, pcie_link, gbps, mtu...), a
diagonal its outcome apart from its reason: decide on those.

EXCEPTIONS lists the few places left, each with why; a new one needs a
reason as good. Plain source reading: no daemon, no root."""

import os
import re

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DIRS = ("agent", "coordinator", "ringctl", "common", "proto")

# Searches and prefixes: any text argument is a decision on its words.
SEARCH = ("strstr", "strcasestr", "strncmp", "strncasecmp", "memcmp")
# Whole comparisons: a text against a literal is a decision on its words;
# two texts compared whole (a change noticed, a repeat said once) are not.
EQUAL = ("strcmp", "strcasecmp")
CALL = re.compile(r"\b(%s)\s*\(" % "|".join(SEARCH + EQUAL))
LITERAL = re.compile(r'^\s*"')
# Text for people: a member or variable of these names (and *_error,
# *_message, *_reason, *_text, *_verdict).
WORDS = (r"text|verdict|reason|why|error|message|msg|errmsg|gist|outcome|"
         r"failure|advice|detail|note")
FIELD = re.compile(
    r"(?:->|\.)\s*(?:\w+_)?(?:%s)\b(?!\s*\()" % WORDS)
VAR = re.compile(r"(?<![\w.>])(?:\w+_)?(?:%s)(?:\[\w*\])?\s*$" % WORDS)

# (file, the call as written, whitespace folded): why it may stay. None
# is left: the RDMA rule says its case in errno, the probe reply has
# not_probed, the survey flags an error that quotes the RDMA error.
EXCEPTIONS = {}


def _args(src, start):
    """The text between the call's parentheses (balanced)."""
    depth = 0
    for i in range(start, len(src)):
        c = src[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return src[start + 1:i]
    return src[start + 1:]


def _split(args):
    out, depth, cur = [], 0, ""
    for c in args:
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        if c == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += c
    out.append(cur.strip())
    return out


def _strip_comments(src):
    """Comments and string literals blanked, newlines kept (lines hold)."""
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|'
                  r"'(?:\\.|[^'\\\n])*'", blank, src, flags=re.S)


def offenders(root=ROOT):
    found = []
    for d in DIRS:
        top = os.path.join(root, d)
        for dirpath, _, files in os.walk(top):
            for name in sorted(files):
                if not name.endswith((".c", ".h")) or ".pb-c." in name:
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as f:
                    raw = f.read()
                src = _strip_comments(raw)
                for m in CALL.finditer(src):
                    open_at = src.index("(", m.end() - 1)
                    args = _args(src, open_at)
                    call = re.sub(r"\s+", " ", m.group(1) + "(" +
                                  _args(raw, open_at) + ")")
                    parts = _split(args)
                    text_args = [a for a in parts
                                 if FIELD.search(a) or VAR.search(a)]
                    if not text_args:
                        continue
                    if m.group(1) in EQUAL and not any(
                            LITERAL.match(a) for a in
                            _split(_args(raw, open_at))):
                        continue
                    if (rel, call) in EXCEPTIONS:
                        continue
                    line = src.count("\n", 0, m.start()) + 1
                    found.append("%s:%d: %s" % (rel, line, call))
    return found


def test_no_decision_on_text():
    bad = offenders()
    assert not bad, (
        "code decides on the English text of a finding, verdict or "
        "error; decide on its fields (or add a justified exception):\n  " +
        "\n  ".join(bad))


def test_exceptions_still_exist():
    """An exception whose code is gone goes from the list too."""
    for (rel, call), why in EXCEPTIONS.items():
        assert why
        with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
            src = re.sub(r"\s+", " ", f.read())
        assert call in src, "%s: %s no longer there" % (rel, call)


def test_the_check_sees_a_decision(tmp_path):
    """The grep itself: a planted decision on a finding's text is named
    with its file and line; one on its code is not."""
    d = tmp_path / "ringctl"
    d.mkdir()
    (d / "x.c").write_text(
        "int f(const Ring__Finding *f)\n{\n"
        "\tif (!strcmp(f->code, \"arp_flux\"))\n\t\treturn 1;\n"
        "\treturn strstr(f->text, \"active_mtu 4096\") != NULL ||\n"
        "\t       !strncmp(d->verdict, \"no\", 2);\n}\n")
    bad = offenders(str(tmp_path))
    assert len(bad) == 2, bad
    assert bad[0].startswith("ringctl/x.c:5: strstr(f->text")
    assert bad[1].startswith("ringctl/x.c:6: strncmp(d->verdict")
