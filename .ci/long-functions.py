#!/usr/bin/env python3
"""Fail when a function of a workspace crate is over 80 lines without saying why.

Every `fn` with a body in the `.rs` files of the workspace members (`[workspace] members`
of the root Cargo.toml) is measured from its `fn` line to its closing brace. Test code is
not measured (a member's `tests/` and `benches/`, `#[cfg(test)]` modules): a test reads
as one scenario. `target/` is skipped. A function over the limit must have, on the
comment lines just above it (among its doc comments and attributes), a comment
containing `long function:` and the reason, e.g.
`// long function: one parser loop over the input; its states share locals`.
The check fails when a function is over the limit without such a comment, or when more
than 10 functions are over the limit at all.

    .ci/long-functions.py [ROOT]          check the workspace at ROOT (default: .)
    .ci/long-functions.py --list [ROOT]   also list every function over the limit
    .ci/long-functions.py --tests [ROOT]  only list, test code included (no check)
    .ci/long-functions.py --self-test     check the measuring and the rules on planted files
"""
import os
import re
import sys
import tempfile

LIMIT = 80
MAX_LONG = 10
MARK = re.compile(r"long function:\s*\S")
FN = re.compile(r"\bfn\s+(r#)?(\w+)")
RAW = re.compile(r"(?:b|c)?r(#*)\"")
CHAR = re.compile(r"'(?:\\u\{[0-9a-fA-F_]+\}|\\x[0-9a-fA-F]{2}|\\.|[^\\'\n])'")


def blank_out(text):
    """`text` with comments, strings and char literals replaced by spaces (newlines kept),
    so braces and `fn` are found in code only."""
    out = list(text)
    n, i = len(text), 0

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if c == "/" and nxt == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif c == "/" and nxt == "*":
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif c in "bcr" and (m := RAW.match(text, i)) and (
            i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")
        ):
            end = text.find('"' + m.group(1), m.end())
            j = n if end < 0 else end + 1 + len(m.group(1))
            blank(i, j)
            i = j
        elif c == '"' or (c in "bc" and nxt == '"' and not (i and (text[i - 1].isalnum() or text[i - 1] == "_"))):
            j = i + (1 if c == '"' else 2)
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            blank(i, j + 1)
            i = j + 1
        elif c == "'":
            m = CHAR.match(text, i)
            if m:
                blank(i, m.end())
                i = m.end()
            else:
                i += 1  # a lifetime or a label
        else:
            i += 1
    return "".join(out)


CFG_TEST_MOD = re.compile(r"#\[cfg\(test\)\]\s*(?:pub(?:\([\w:]+\))?\s+)?mod\s+\w+\s*\{")


def block_end(code, open_at):
    """The index of the `}` closing the `{` at `open_at` (or the end of the text)."""
    level = 0
    for k in range(open_at, len(code)):
        if code[k] == "{":
            level += 1
        elif code[k] == "}":
            level -= 1
            if level == 0:
                return k
    return len(code)


def functions(text, tests=False):
    """(name, first line, line count) of every fn with a body, lines 1-based; without
    `tests`, none inside a `#[cfg(test)]` module."""
    code = blank_out(text)
    skipped = [] if tests else [(m.start(), block_end(code, m.end() - 1))
                                for m in CFG_TEST_MOD.finditer(code)]
    for m in FN.finditer(code):
        if any(a <= m.start() <= b for a, b in skipped):
            continue
        # The body starts at the first `{` outside the signature's brackets; a `;` first
        # means a declaration without a body.
        depth, j = 0, m.end()
        while j < len(code):
            ch = code[j]
            if ch in "([<":
                depth += 1
            elif ch in ")]" or (ch == ">" and code[j - 1] != "-" and code[j - 1] != "="):
                depth = max(depth - 1, 0)
            elif ch == ";" and depth == 0:
                j = -1
                break
            elif ch == "{" and depth == 0:
                break
            j += 1
        if j < 0 or j >= len(code):
            continue
        k = block_end(code, j)
        first = code.count("\n", 0, m.start()) + 1
        last = code.count("\n", 0, k) + 1
        yield m.group(2), first, last - first + 1


def justified(lines, first):
    """Whether the comment lines just above line `first` (1-based), among doc comments
    and attributes, say `long function:` and why."""
    k = first - 2
    while k >= 0:
        line = lines[k].strip()
        if line.startswith("//"):
            if MARK.search(line):
                return True
        elif not (line.startswith("#[") or line.startswith("#![") or line.endswith(")]")
                  or line.endswith("]")):
            return False
        k -= 1
    return False


def members(root):
    text = open(os.path.join(root, "Cargo.toml"), encoding="utf-8").read()
    m = re.search(r"^members\s*=\s*\[(.*?)\]", text, re.S | re.M)
    return re.findall(r'"([^"]+)"', m.group(1)) if m else []


TEST_DIRS = ("tests", "benches")


def long_functions(root, tests=False):
    """(path, name, first line, lines, justified) of every fn over the limit."""
    found = []
    for member in members(root):
        base = os.path.join(root, member)
        for d, dirs, fs in os.walk(base):
            dirs[:] = sorted(x for x in dirs if x != "target" and not x.startswith(".")
                             and (tests or d != base or x not in TEST_DIRS))
            for f in sorted(fs):
                if not f.endswith(".rs"):
                    continue
                path = os.path.join(d, f)
                text = open(path, encoding="utf-8").read()
                lines = text.split("\n")
                for name, first, count in functions(text, tests):
                    if count > LIMIT:
                        found.append((os.path.relpath(path, root), name, first, count,
                                      justified(lines, first)))
    return found


def check(root, listing=False, tests=False, quiet=False):
    """Print the findings; (rule breaks, functions over the limit)."""
    found = long_functions(root, tests)
    bare = [f for f in found if not f[4]]
    for path, name, first, count, ok in found:
        if not quiet and (listing or not ok):
            why = "" if ok else "  (no `long function:` comment above it)"
            print(f"{path}:{first}: fn {name}: {count} lines{why}")
    breaks = len(bare)
    if len(found) > MAX_LONG and not tests:
        if not quiet:
            print(f"{len(found)} functions over {LIMIT} lines; at most {MAX_LONG} may be")
        breaks += 1
    return breaks, len(found)


SAMPLE_SHORT = """
pub fn short() -> u32 {
    1
}

trait T {
    fn declared(&self) -> u32;
}
"""


def sample_long(name, comment, body_lines=LIMIT):
    body = "".join(f"    let _x{i} = {i};\n" for i in range(body_lines - 2))
    return f"{comment}#[inline]\nfn {name}() {{\n{body}}}\n"


def self_test():
    # Braces, `fn` and quotes inside strings, chars and comments are not code.
    tricky = (
        'fn tricky<\'a>(x: &\'a str) -> Vec<u8> where u8: Copy {\n'
        '    let _ = "fn fake() { {";\n'
        '    let _ = r#"} " }"#;\n'
        "    let _ = '{';\n"
        "    let _ = b'}';\n"
        "    /* } /* nested } */ fn no() { */\n"
        "    // }\n"
        "    'outer: loop { break 'outer; }\n"
        "    x.bytes().collect()\n"
        "}\n"
    )
    got = list(functions(tricky))
    assert got == [("tricky", 1, 10)], f"tricky: {got}"
    assert list(functions(SAMPLE_SHORT)) == [("short", 2, 3)], list(functions(SAMPLE_SHORT))
    assert [c for _, _, c in functions(sample_long("f", ""))] == [LIMIT]
    assert [c for _, _, c in functions(sample_long("f", "", LIMIT + 1))] == [LIMIT + 1]

    def run(files, tests=False):
        with tempfile.TemporaryDirectory() as root:
            with open(os.path.join(root, "Cargo.toml"), "w", encoding="utf-8") as fh:
                fh.write('[workspace]\nmembers = ["demo"]\n')
            for name, text in files.items():
                path = os.path.join(root, "demo", name)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(text)
            return check(root, tests=tests, quiet=True)

    why = "// long function: one loop over the input, its states share locals\n"
    over = LIMIT + 1
    assert run({"src/lib.rs": SAMPLE_SHORT + sample_long("at_limit", "")}) == (0, 0)
    assert run({"src/lib.rs": sample_long("bare", "", over)}) == (1, 1)
    assert run({"src/lib.rs": sample_long("kept", why, over)}) == (0, 1)
    # A mark with no reason, or one separated by a blank line, does not count.
    assert run({"src/lib.rs": sample_long("empty", "// long function:\n", over)}) == (1, 1)
    assert run({"src/lib.rs": sample_long("far", why + "\n", over)}) == (1, 1)
    # Under `target/` nothing is measured; test code only with `--tests`.
    assert run({"target/x.rs": sample_long("built", "", over)}) == (0, 0)
    in_tests = {
        "tests/t.rs": sample_long("scenario", "", over),
        "benches/b.rs": sample_long("bench", "", over),
        "src/lib.rs": "#[cfg(test)]\nmod tests {\n" + sample_long("unit", "", over) + "}\n",
    }
    assert run(in_tests) == (0, 0)
    assert run(in_tests, tests=True) == (3, 3)
    many = "".join(sample_long(f"f{i}", why, over) for i in range(MAX_LONG + 1))
    assert run({"src/lib.rs": many}) == (1, MAX_LONG + 1)
    print("long-functions self-test: planted long functions were found and judged")


if __name__ == "__main__":
    args = sys.argv[1:]
    if args == ["--self-test"]:
        self_test()
        sys.exit(0)
    listing, tests = "--list" in args, "--tests" in args
    args = [a for a in args if a not in ("--list", "--tests")]
    breaks, count = check(args[0] if args else ".", listing, tests)
    if tests:
        print(f"{count} function(s) over {LIMIT} lines, test code included (not checked)")
        sys.exit(0)
    if breaks:
        print(f"split the functions over {LIMIT} lines (one function per case, each returning "
              f"its part), or say why one stays long with a `// long function: ..` comment "
              f"above it", file=sys.stderr)
        sys.exit(1)
    print(f"{count} function(s) over {LIMIT} lines, each with a reason (at most {MAX_LONG})")
