"""The search excerpt on its own: where the query matched, its words marked, cut on word boundaries."""

from __future__ import annotations

from curation.services.snippets import match_snippet


def marked(snippet) -> list[str]:
    return [text for text, is_marked in snippet.pieces if is_marked]


def test_the_excerpt_marks_every_query_word_around_the_first_match():
    trace = " ".join(["Nothing to see here."] * 10) + " The producer is fused into the gelu consumer. " + \
        " ".join(["More filler text follows."] * 10)
    snippet = match_snippet("gelu consumer", trace)
    assert snippet.source == "trace" and marked(snippet) == ["gelu", "consumer"]
    text = "".join(t for t, _ in snippet.pieces)
    assert "fused into the gelu consumer." in text and len(text) < 200
    assert snippet.cut_start and snippet.cut_end
    assert not text.startswith(("ere", "othing")) and text.split()[0] in {"Nothing", "to", "see", "here."}


def test_stems_match_other_forms_and_operators_are_not_words():
    snippet = match_snippet('tiles OR "unrolled"', "Loop tiling then unrolling keeps the footprint small")
    assert marked(snippet) == ["tiling", "unrolling"]
    assert not snippet.cut_start and not snippet.cut_end


def test_the_leir_is_searched_when_the_trace_has_no_match_and_none_when_neither_does():
    snippet = match_snippet("exp", "A loop was split.", "B^{4}_{tx=0}[C^{f32,g}_{tx}=exp(A^{f32,g}_{tx});];")
    assert snippet.source == "leir" and marked(snippet) == ["exp"]
    assert match_snippet("softmax", "A loop was split.", "[A^{f32,g}=1;];") is None
    assert match_snippet("  ", "anything") is None
