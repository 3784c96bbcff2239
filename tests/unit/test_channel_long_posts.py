"""How a long channel answer is cut into messages (`channels/long_posts.split`): pieces within the limit that join
back to the text, cut at paragraph breaks before line breaks, never inside a code fence that has a break before it,
and the same earlier pieces as the text grows (so a streamed answer only edits its last piece)."""

from __future__ import annotations

from personal_agent.channels.long_posts import split


def test_pieces_fit_join_back_and_end_at_paragraphs() -> None:
    text = "\n\n".join(f"paragraph {n} " + "word " * 30 for n in range(60))
    pieces = split(text, 1000)
    assert "".join(pieces) == text and len(pieces) > 5
    assert all(len(p) <= 1000 for p in pieces)
    assert all(p.endswith("\n\n") for p in pieces[:-1])


def test_a_code_fence_is_not_cut_when_a_break_before_it_exists() -> None:
    text = "intro " * 100 + "\n" + "```\n" + "\n".join(f"line_{i} = {i}" for i in range(80)) + "\n```\nafter"
    pieces = split(text, 1000)
    assert "".join(pieces) == text
    assert pieces[0].count("```") == 0 and pieces[1].startswith("```")


def test_earlier_pieces_stay_as_the_text_grows() -> None:
    text = "\n".join(f"line {n}: " + "x" * (n % 50) for n in range(600))
    whole = split(text, 900)
    for end in range(len(text) // 2, len(text), 97):
        grown = split(text[:end], 900)
        assert grown[:-1] == whole[: len(grown) - 1]


def test_a_text_without_breaks_is_cut_at_the_limit() -> None:
    assert split("a" * 2500, 1000) == ["a" * 1000, "a" * 1000, "a" * 500]
    assert split("short", 1000) == ["short"]
