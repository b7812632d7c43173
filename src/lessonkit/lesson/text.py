"""Text from outside (learner output, messages, file names) made safe to show and store.

Every learner-controlled string reaches its medium through one function here: a terminal
(`safe_text`; a name on one line: `safe_name`), Markdown (`markdown_text`), CSV (`csv_text`,
`csv_cell`) or HTML (`html_text`). Lone surrogates would crash any write and control
characters can move a terminal's cursor or hide lines: free text gets U+FFFD for them, a name
a visible backslash escape so it cannot pass for another line. The file media also replace
bidi controls (`display_text`): U+202E could make `ana` show as another student's name.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from collections.abc import Iterable, Sequence

from markupsafe import Markup, escape

_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def safe_text(text: str, limit: int | None = None) -> str:
    """`text` without surrogates or control characters, cut to `limit` characters."""
    cleaned = _UNSAFE.sub(REPLACEMENT, text)
    if limit is not None and len(cleaned) > limit:
        return cleaned[: max(0, limit - 1)] + "…"
    return cleaned


_NAME_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_NAME_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if char in _NAME_ESCAPES:
        return _NAME_ESCAPES[char]
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, kept by os.fsdecode
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_name(text: str, limit: int | None = None) -> str:
    """A file name or path shown on one line: control characters and surrogates escaped."""
    return safe_text(_NAME_UNSAFE.sub(_escape, text), limit)


FORMULA_START = frozenset("=+-@\t\r\uff1d\uff0b\uff0d\uff20")
"""What makes a spreadsheet read a cell as a formula (the fullwidth forms too, which an East
Asian spreadsheet may fold to ASCII)."""
BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Marks and overrides that reorder the text around them as it is shown: a name after U+202E
shows its letters backwards, and could pass for another."""
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Mn", "Me", "Zs", "Zl", "Zp"})


def _invisible(char: str) -> bool:
    """A character that shows nothing by itself (whitespace, a format character such as a
    zero-width space, word joiner or byte-order mark, a combining mark): a spreadsheet may
    skip it, so what follows it is where a formula would start."""
    return char.isspace() or unicodedata.category(char) in _INVISIBLE_CATEGORIES


def display_text(text: str) -> str:
    """`safe_text` for a file a person reads (CSV, Markdown, HTML): no bidi control either,
    each shown as U+FFFD, so no text reorders what is around it."""
    return BIDI_CONTROLS.sub(REPLACEMENT, safe_text(text))


def csv_cell(text: str) -> str:
    """A CSV cell that a spreadsheet shows as the text it is: never run as a formula (one
    that starts with a formula character, or whose leading invisible characters hide or
    are one, gets a `'` before it), and with no bidi control (`display_text`)."""
    text = display_text(text)
    for char in text:
        if char in FORMULA_START:
            return "'" + text
        if not _invisible(char):
            break
    return text


def csv_text(rows: Iterable[Sequence[str]]) -> str:
    """A CSV file of `rows`, every cell through `csv_cell`: the one way lessonkit writes CSV."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerows([csv_cell(cell) for cell in row] for row in rows)
    return buffer.getvalue()


def number_cell(value: float | None) -> str:
    """Points or a count as a CSV or table cell writes them: `3`, `2.5`, `1e+06`; None is blank."""
    return "" if value is None else f"{value:g}"


_BLOCK_START = re.compile(r"^( {0,3})(#|>|[-+*=_|]|`{3}|~{3}|\d{1,9}[.)])")
# Outside the code spans kept: brackets, `<`, every backtick (one left bare could pair with
# another on a later line) and a backslash before punctuation (it would escape what follows).
_INLINE = re.compile(r"([\[\]<`]|\\(?=[!-/:-@\[-`{-~]))")
_CODE_SPAN = re.compile(r"(?<![`\\])(`+)(?!`).*?(?<!`)\1(?!`)")
"""A code span, never one whose backticks follow a backslash (which may escape them): a
span Markdown does not see would leave its brackets unescaped."""


def _escape_inline(line: str) -> str:
    """Everything that could make markup escaped, outside the code spans on this line (left
    as they are: a code span shows its text as it is, backslashes included)."""
    out, at = [], 0
    for span in _CODE_SPAN.finditer(line):
        out += [_INLINE.sub(r"\\\1", line[at : span.start()]), span.group()]
        at = span.end()
    out.append(_INLINE.sub(r"\\\1", line[at:]))
    return "".join(out)


def markdown_text(text: str, *, cell: bool = False) -> str:
    """Text from outside as Markdown that shows it and nothing else: no line of it can start
    a heading, a quote, a list, a fence or a table, and no link, image or tag can form.
    Backticks stay: messages quote code with them. A table `cell` is one line, its `|`
    escaped. No bidi control reorders it (`display_text`)."""
    text = display_text(text)
    if cell:  # inside a table row no block can start; `|` would end the cell
        return _escape_inline(" ".join(text.split())).replace("|", "\\|")
    lines = []
    for line in text.split("\n"):
        start = _BLOCK_START.match(line)
        if start is None:
            lines.append(_escape_inline(line))
            continue
        marker = start[2]
        if marker[0].isdigit():  # `12.` -> `12\.`
            head, rest = start[1] + marker[:-1] + "\\" + marker[-1], start.end()
        else:  # `## x` -> `\## x`; the rest of the marker is the line's, read as such
            head, rest = start[1] + "\\" + marker[0], start.start(2) + 1
        lines.append(head + _escape_inline(line[rest:]))
    return "\n".join(lines)


def html_text(text: str) -> Markup:
    """Text from outside as HTML that shows it and nothing else: control characters replaced,
    `<`, `>`, `&` and both quotes escaped (safe in an element and in a quoted attribute), no
    bidi control (`display_text`)."""
    return escape(display_text(text))
