"""Text from outside (learner output, messages, file names) made safe to show and store.

Lone surrogates cannot be encoded as UTF-8 and would crash any file or terminal write;
control characters include the escape sequences that move a terminal's cursor, change its
title or hide lines. Both are replaced by U+FFFD; tabs and newlines are kept.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def safe_text(text: str, limit: int | None = None) -> str:
    """`text` without surrogates or control characters, cut to `limit` characters."""
    cleaned = _UNSAFE.sub(REPLACEMENT, text)
    if limit is not None and len(cleaned) > limit:
        return cleaned[: max(0, limit - 1)] + "…"
    return cleaned


def csv_cell(text: str) -> str:
    """A CSV cell that a spreadsheet will not run as a formula."""
    text = safe_text(text)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
