"""How a long channel answer is cut into messages (`channels/long_posts.split`): pieces within the limit that join
back to the text, cut at paragraph breaks before line breaks, never inside a code fence that has a break before it,
and the same earlier pieces as the text grows (so a streamed answer only edits its last piece)."""

from __future__ import annotations

from personal_agent.channels.long_posts import split
from personal_agent.knowledge.cited import Sources


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


def test_a_long_answers_footnote_arrives_whole_in_its_last_piece() -> None:
    sources = Sources()
    sources.add([{"chunk_id": f"c{n}", "citation": f"handbook.pdf, p. {n}"} for n in (3, 1, 3, 7)])
    answer = "\n\n".join(f"paragraph {n}" + " word" * 60 for n in range(40))
    text = sources.appended_to(answer)
    footnote = "Sources:\n[1] handbook.pdf, p. 3\n[2] handbook.pdf, p. 1\n[3] handbook.pdf, p. 7"
    assert text == answer + "\n\n" + footnote
    for limit in (3900, 4096, len(answer) + 5):  # Slack's, Telegram's, and one that ends inside the footnote
        pieces = split(text, limit)
        assert "".join(pieces) == text and len(pieces) > 1
        assert pieces[-1].endswith(footnote) and all("Sources:" not in p for p in pieces[:-1])
    assert Sources().appended_to(answer) == answer and sources.appended_to("") == ""
