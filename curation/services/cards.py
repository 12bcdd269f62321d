"""Dataset cards for reading in the browser: the YAML header apart, the Markdown body as safe HTML.

The card is Markdown written by ``exports.dataset_card`` from curated data (names, traces' strategy
names, licence text a curator typed), so it is rendered as untrusted text: markdown-it in CommonMark
mode with raw HTML *off* (``<script>`` in the card is shown as text, escaped) plus GFM tables, and
markdown-it's own link check, which refuses ``javascript:``/``vbscript:``/``file:``/``data:`` URLs.
"""

from __future__ import annotations

from dataclasses import dataclass

from markdown_it import MarkdownIt

_MD = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")


@dataclass(frozen=True)
class Card:
    """A card split in two: the YAML metadata Hugging Face reads (as text) and the body as HTML."""

    metadata: str
    html: str


def split_front_matter(text: str) -> tuple[str, str]:
    """(YAML between the leading ``---`` lines, the rest); no header gives ``("", text)``."""
    if not text.startswith("---\n"):
        return "", text
    end = text.find("\n---\n", 4)
    if end < 0:
        return "", text
    return text[4:end], text[end + 5:]


def render_markdown(text: str) -> str:
    """Markdown → HTML with every raw HTML tag escaped and unsafe link schemes refused."""
    html: str = _MD.render(text)
    return html


def render_card(text: str) -> Card:
    metadata, body = split_front_matter(text)
    return Card(metadata=metadata, html=render_markdown(body))
