"""Template helpers of the step screen: one diff line as HTML, numbers in a readable scientific form."""

from __future__ import annotations

from itertools import groupby

from django import template
from django.utils.html import conditional_escape, format_html, format_html_join
from django.utils.safestring import SafeString

from leir.diff import Line, Token

register = template.Library()


def _token_html(token: Token, tag: str) -> SafeString:
    if token.changed:
        return format_html('<{0} class="diff-{0}">{1}</{0}>', tag, token.text)
    return conditional_escape(token.text)


@register.simple_tag
def line_html(line: Line, mark: str) -> SafeString:
    """The line's tokens: changed ones in ``<del>`` (before) / ``<ins>`` (after), the site's in ``<mark>``."""
    tag = "del" if mark == "del" else "ins"
    runs = []
    for site, tokens in groupby(line.tokens, key=lambda t: t.site):
        html = format_html_join("", "{}", ((_token_html(t, tag),) for t in tokens))
        runs.append(format_html('<mark class="site-token">{}</mark>', html) if site else html)
    return format_html("<code>{}</code>", format_html_join("", "{}", ((run,) for run in runs)))


@register.filter
def sci(value: float | None) -> str:
    """``1.234e-07`` style for errors and bounds; an em dash when there is none."""
    if value is None:
        return "—"
    return f"{value:.3e}"


@register.filter
def ms(value: float | None) -> str:
    """Seconds as milliseconds with four decimals (timings of small kernels)."""
    if value is None:
        return "—"
    return f"{value * 1e3:.4f} ms"
