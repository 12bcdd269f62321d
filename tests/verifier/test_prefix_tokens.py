"""``PrefixTokenCounter`` is exact: a shared prefix's head counted once plus the tail equals counting the
whole text — including where a cut would be wrong (no newline-then-letter, combining marks, CRLF,
contractions, a tail that starts with a space, a mark or a newline)."""

from __future__ import annotations

from verifier.tokens import PrefixTokenCounter, count_tokens


def test_prefix_token_counter_equals_counting_the_joined_text():
    counter = PrefixTokenCounter()
    prefixes = [
        "You are an expert.Program: softmax\n\nTensors:\n- A: input\n\nLEIR (canonical):\nfor i: B[i] = A[i]\n\nApply",
        "no newline before a letter here: \n 1\n\n",
        "\nA\u0301ccent: a combining mark after the letter\nZ",
        "crlf\r\nLine and tabs\t\n\tx\nY's contraction",
        "",
    ]
    rests = ["", " then inside <answer>{\"k\": 1}</answer>", "'s and 'll", "\n\nNext", "x" * 50, "\u0301 mark"]
    for prefix in prefixes:
        for rest in rests:
            assert counter(prefix, rest) == count_tokens(prefix + rest), (prefix, rest)
