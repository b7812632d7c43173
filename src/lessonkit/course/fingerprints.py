"""Fingerprints of a piece of Python code that survive the disguises copied code wears.

Tokens are normalised: every chosen name is `V`, while keywords, builtins and attribute
names (which cannot be renamed without changing the code) are kept, and comments, layout and
line breaks are dropped. The fingerprints are its k-grams, hashed and winnowed (Schleimer et
al., SIGMOD 2003: any match of `k + window - 1` tokens is found), plus its statements'
hashes, so reordered independent statements still match.
"""

from __future__ import annotations

import ast
import builtins
import functools
import hashlib
import keyword
import re
from collections import Counter

K = 5
"""Tokens per k-gram: `x = f(y)` is five."""
WINDOW = 4
"""Hashes per winnowing window: a match of K + WINDOW - 1 = 8 tokens is always kept."""

_KEPT_NAMES = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins))
_STATEMENT_END = "<end>"


def normal_tokens(source: str, names: bool = False) -> tuple[str, ...]:
    """The code's tokens, normalised; statement ends are marked `<end>` (a newline or `;`).
    With `names`, every name is kept as written: the code up to layout and comments.

    Code that stops tokenizing (an unclosed bracket or string) keeps the tokens read so far.
    """
    return tuple(text for text, _ in located_tokens(source, names))


_TOKEN = re.compile(
    r"""[ \t\f]*(?:
    (\\\r?\n|\#[^\r\n]*)
    |(\r?\n|\r)
    |([rRbBuUfF]{0,2}(?:'\'\'(?:\\.|[^\\])*?'\'\'|\"\"\"(?:\\.|[^\\])*?\"\"\"
        |'(?:\\.|[^'\\\r\n])*'|"(?:\\.|[^"\\\r\n])*"))
    |(0[xXoObB][0-9a-fA-F_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?[jJ]?)
    |([^\W\d]\w*)
    |(\*\*=|//=|>>=|<<=|->|:=|\.\.\.|[-+*/%&|^@<>=!]=|\*\*|//|<<|>>|\S))""",
    re.VERBOSE | re.DOTALL,
)
_SKIP, _NEWLINE, _STRING, _NUMBER, _NAME, _OP = range(1, 7)
_OPEN, _CLOSE = frozenset("([{"), frozenset(")]}")


def located_tokens(source: str, names: bool = False) -> tuple[tuple[str, int], ...]:
    """`normal_tokens`, each with the number of the line it starts on (from 1). Read by one
    regular expression, as Python's tokenizer would split them: a newline inside brackets
    or after a backslash does not end a statement, and code that would not tokenize (an
    unclosed bracket or string) is read on as well as it can be."""
    out: list[tuple[str, int]] = []
    previous, line, depth = "", 1, 0
    for match in _TOKEN.finditer(source):
        kind = match.lastindex
        text = match.group(kind)
        if kind == _NAME:
            kept = names or text in _KEPT_NAMES or previous == "."
            out.append((text if kept else "V", line))
        elif kind == _OP:
            if text == ";":
                if out and out[-1][0] != _STATEMENT_END:
                    out.append((_STATEMENT_END, line))
            else:
                if text in _OPEN:
                    depth += 1
                elif text in _CLOSE:
                    depth = max(depth - 1, 0)
                out.append((text, line))
        elif kind == _NEWLINE:
            if depth == 0 and out and out[-1][0] != _STATEMENT_END:
                out.append((_STATEMENT_END, line))
            line += 1
        elif kind == _SKIP:
            line += text.endswith("\n")
            continue
        else:  # a string or a number
            out.append((_literal(text), line))
            if kind == _STRING:
                line += text.count("\n")
        previous = text
    if out and out[-1][0] != _STATEMENT_END:
        out.append((_STATEMENT_END, line))
    return tuple(out)


@functools.lru_cache(maxsize=65536)
def _literal(text: str) -> str:
    """A number as its float value, a string as its value: `3.` is `3.0`, `'a'` is `"a"`."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return text
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"N:{float(value)!r}"
    return f"S:{value!r}"


def shared_lines(own: str, other: str, k: int = K) -> frozenset[int]:
    """The lines of `own` (numbered from 1) in a k-gram or a statement `other` has too: the
    matching regions a side-by-side view marks (a line only one token of a shared k-gram
    falls on, its closing bracket before a shared statement, is not). Every k-gram is
    compared here, not only the winnowed ones: two files are small, and a reader wants
    every match."""
    mine, theirs = located_tokens(own), normal_tokens(other)
    plain = [(t, n) for t, n in mine if t != _STATEMENT_END]
    their_grams = set(kgram_hashes(theirs, k))
    marked: set[int] = set()
    for start in range(max(1, len(plain) - k + 1)):
        gram = plain[start : start + k]
        if gram and _hash(tuple(t for t, _ in gram)) in their_grams:
            lines = Counter(n for _, n in gram)  # a line lending one token is not marked
            marked.update(n for n, count in lines.items() if count > 1 or len(lines) == 1)
    their_statements = set(statement_hashes(theirs))
    current: list[tuple[str, int]] = []
    for token in mine:
        if token[0] != _STATEMENT_END:
            current.append(token)
            continue
        if current and _hash(("stmt", *(t for t, _ in current))) in their_statements:
            marked.update(n for _, n in current)
        current = []
    return frozenset(marked)


def _hash(parts: tuple[str, ...]) -> int:
    """A hash that is the same in every process (Python's `hash` of a str is salted)."""
    digest = hashlib.blake2b("\x1f".join(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def winnow(hashes: tuple[int, ...], window: int = WINDOW) -> frozenset[tuple[int, int]]:
    """The (position, hash) pairs winnowing keeps: each window's smallest hash, the rightmost
    on a tie; fewer hashes than a window keep their smallest."""
    if not hashes:
        return frozenset()
    if len(hashes) <= window:
        low = min(hashes)
        return frozenset({(max(i for i, h in enumerate(hashes) if h == low), low)})
    kept: set[tuple[int, int]] = set()
    for start in range(len(hashes) - window + 1):
        chunk = hashes[start : start + window]
        low = min(chunk)
        offset = max(i for i, h in enumerate(chunk) if h == low)
        kept.add((start + offset, low))
    return frozenset(kept)


def kgram_hashes(tokens: tuple[str, ...], k: int = K) -> tuple[int, ...]:
    """The hash of every k-gram of the tokens, statement ends left out (joined lines match)."""
    plain = tuple(t for t in tokens if t != _STATEMENT_END)
    if not plain:
        return ()
    if len(plain) < k:
        return (_hash(plain),)
    return tuple(_hash(plain[i : i + k]) for i in range(len(plain) - k + 1))


def statement_hashes(tokens: tuple[str, ...]) -> tuple[int, ...]:
    """One hash per statement (a logical line), in order."""
    found, current = [], []
    for token in tokens:
        if token == _STATEMENT_END:
            if current:
                found.append(_hash(("stmt", *current)))
            current = []
        else:
            current.append(token)
    return tuple(found)


def fingerprints(tokens: tuple[str, ...], window: int = WINDOW) -> frozenset[int]:
    """The code's fingerprints: its winnowed k-gram hashes and its statements' hashes, each
    repeat counted (the second copy of a statement is a fingerprint of its own)."""
    seen: Counter[int] = Counter()
    out: set[int] = set()
    kept = sorted(winnow(kgram_hashes(tokens), window))
    for value in [h for _, h in kept] + list(statement_hashes(tokens)):
        out.add(_hash((str(value), str(seen[value]))))
        seen[value] += 1
    return frozenset(out)
