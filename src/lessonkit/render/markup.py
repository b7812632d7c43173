"""Lesson text, math and code as HTML.

Lesson text is Markdown with raw HTML switched off, so no lesson sentence can inject markup;
math becomes MathML (no script, no web font); code is highlighted by Pygments with CSS classes
whose colours `code_css` writes once per site.
"""

from __future__ import annotations

import re
from functools import cache

from latex2mathml.converter import convert as latex_to_mathml
from markdown_it import MarkdownIt
from markupsafe import Markup
from mdit_py_plugins.dollarmath import dollarmath_plugin
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name

from lessonkit.errors import LessonError

CODE_STYLE = "xcode"  # the Pygments style whose colours all reach 4.5:1 on a white background


class _MathError(Exception):
    """latex2mathml refused a formula; re-raised with the lesson position by the caller."""


# A minus that opens a row or a cell, or follows an opening bracket, a comma or "=", is a sign
# rather than a subtraction; latex2mathml emits one flat row, so browsers would space it wide.
_SIGN_MINUS = re.compile(
    r"(<mrow>|<mtd[^>]*>|<mo[^>]*>(?:\(|\[|\{|&#x000(?:28|5B|7B|2C|3D);)</mo>)<mo>&#x02212;</mo>"
)
_PREFIX_MINUS = r'\1<mo form="prefix" lspace="0" rspace="0">&#x02212;</mo>'
_NAMESPACE = ' xmlns="http://www.w3.org/1998/Math/MathML"'  # implied in HTML; keeps pages URL-free


def _mathml(latex: str, display: bool) -> str:
    try:
        mathml = latex_to_mathml(latex.strip(), display="block" if display else "inline")
    except Exception as exc:  # latex2mathml raises many unrelated exception types
        reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        raise _MathError(f"cannot turn ${latex}$ into MathML ({reason})") from exc
    return _SIGN_MINUS.sub(_PREFIX_MINUS, mathml.replace(_NAMESPACE, "", 1))


def _external_links(md: MarkdownIt) -> None:
    """Mark links that leave the site, so they open apart from the lesson and say so."""

    def link_open(renderer, tokens, index, options, env):
        token = tokens[index]
        if str(token.attrGet("href") or "").startswith(("http://", "https://")):
            token.attrSet("class", "external")
            token.attrSet("rel", "external noopener noreferrer")
        return renderer.renderToken(tokens, index, options, env)

    md.add_render_rule("link_open", link_open)


@cache
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False})
    md.use(dollarmath_plugin, renderer=lambda latex, opts: _mathml(latex, opts["display_mode"]))
    _external_links(md)
    return md


def markdown_html(text: str, where: str = "lesson.md", *, inline: bool = False) -> Markup:
    """Lesson Markdown as HTML; raw HTML in the text is shown as text, `$...$` becomes MathML."""
    md = _markdown()
    try:
        html = md.renderInline(text) if inline else md.render(text)
    except _MathError as exc:
        raise LessonError(
            str(exc), where=where, fix="write LaTeX that latex2mathml accepts"
        ) from None
    return Markup(html)


def math_html(latex: str, where: str = "lesson.md") -> Markup:
    """A display formula as MathML."""
    try:
        return Markup(_mathml(latex, display=True))
    except _MathError as exc:
        raise LessonError(
            str(exc), where=where, fix="write LaTeX that latex2mathml accepts"
        ) from None


_FORMATTER = HtmlFormatter(nowrap=True)
_TOKEN_SPAN = re.compile(r'<span class="([\w-]+)">([^<]*)</span>')
_PLAIN = ("", "color: #000", "color: #000000")


@cache
def _coloured_classes() -> frozenset[str]:
    """Token classes the code style colours; spans for the rest (names, spaces) are dropped."""
    styles = HtmlFormatter(style=CODE_STYLE).class2style
    return frozenset(name for name, (style, _, _) in styles.items() if style not in _PLAIN)


@cache
def _lexer(language: str):
    return get_lexer_by_name(language, stripnl=False, ensurenl=False)


def code_html(code: str, language: str = "python") -> Markup:
    """Highlighted code as spans with Pygments classes, for a <pre><code> the template writes.

    Spans that would not change a colour are unwrapped: they are most of the markup, and the
    page has a weight budget.
    """
    coloured = _coloured_classes()
    html = highlight(code, _lexer(language), _FORMATTER)
    return Markup(_TOKEN_SPAN.sub(lambda m: m[0] if m[1] in coloured else m[2], html))


def code_css() -> str:
    """The Pygments rules for `.code` blocks, generated once per site build."""
    return HtmlFormatter(style=CODE_STYLE).get_style_defs(".code")
