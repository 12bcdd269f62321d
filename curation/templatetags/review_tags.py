"""Template helpers of the step screen: one diff line as HTML, numbers in a readable scientific form."""

from __future__ import annotations

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from leir.diff import Line

register = template.Library()


@register.simple_tag
def line_html(line: Line, mark: str) -> SafeString:
    """The line's tokens, the changed ones inside ``<del>`` (before) or ``<ins>`` (after)."""
    tag = "del" if mark == "del" else "ins"
    parts = format_html_join("", "{}", ((format_html('<{0} class="diff-{0}">{1}</{0}>', tag, t.text)
                                         if t.changed else t.text,) for t in line.tokens))
    return format_html("<code>{}</code>", parts)


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
