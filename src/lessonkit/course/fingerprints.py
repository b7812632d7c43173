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
import hashlib
import io
import keyword
import tokenize
from collections import Counter

K = 5
"""Tokens per k-gram: `x = f(y)` is five."""
WINDOW = 4
"""Hashes per winnowing window: a match of K + WINDOW - 1 = 8 tokens is always kept."""

_KEPT_NAMES = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins))
_DROPPED = frozenset(
    {
        tokenize.COMMENT,
        tokenize.NL,
        tokenize.NEWLINE,
        tokenize.INDENT,
        tokenize.DEDENT,
        tokenize.ENCODING,
        tokenize.ENDMARKER,
    }
)
_STATEMENT_END = "<end>"


def normal_tokens(source: str) -> tuple[str, ...]:
    """The code's tokens, normalised; statement ends are marked `<end>` (a newline or `;`).

    Code that stops tokenizing (an unclosed bracket or string) keeps the tokens read so far.
    """
    return tuple(text for text, _ in located_tokens(source))


def located_tokens(source: str) -> tuple[tuple[str, int], ...]:
    """`normal_tokens`, each with the number of the line it starts on (from 1)."""
    out: list[tuple[str, int]] = []
    previous, line = "", 1
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            line = token.start[0]
            if token.type == tokenize.NEWLINE or token.string == ";":
                if out and out[-1][0] != _STATEMENT_END:
                    out.append((_STATEMENT_END, line))
            elif token.type not in _DROPPED:
                out.append((_normal(token, previous), line))
            previous = token.string
    except (tokenize.TokenError, SyntaxError):
        pass
    if out and out[-1][0] != _STATEMENT_END:
        out.append((_STATEMENT_END, line))
    return tuple(out)


def shared_lines(own: str, other: str, k: int = K) -> frozenset[int]:
    """The lines of `own` (numbered from 1) in a k-gram or a statement `other` has too: the
    matching regions a side-by-side view marks. Every k-gram is compared here, not only the
    winnowed ones: two files are small, and a reader wants every match."""
    mine, theirs = located_tokens(own), normal_tokens(other)
    plain = [(t, n) for t, n in mine if t != _STATEMENT_END]
    their_grams = set(kgram_hashes(theirs, k))
    marked: set[int] = set()
    for start in range(max(1, len(plain) - k + 1)):
        gram = plain[start : start + k]
        if gram and _hash(tuple(t for t, _ in gram)) in their_grams:
            marked.update(n for _, n in gram)
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


def _normal(token: tokenize.TokenInfo, previous: str) -> str:
    text = token.string
    if token.type == tokenize.NAME:
        return text if text in _KEPT_NAMES or previous == "." else "V"
    if token.type in (tokenize.NUMBER, tokenize.STRING):
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return text
        if isinstance(value, int | float) and not isinstance(value, bool):
            return f"N:{float(value)!r}"
        return f"S:{value!r}"
    return text


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
