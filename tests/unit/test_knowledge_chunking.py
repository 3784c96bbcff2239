"""Chunking and parsing without AWS or a database: chunks stay within the token budget, overlap their neighbours,
keep their page and heading; HTML and Markdown keep their headings (Markdown its heading path); text formats are
told from PDFs and ZIPs."""

from __future__ import annotations

import pytest

from personal_agent.knowledge.chunking import chunk_sections
from personal_agent.knowledge.embedders import count_tokens
from personal_agent.knowledge.formats import format_of, matches_content
from personal_agent.knowledge.parsing import Section, UnreadableDocument, parse


def test_chunks_respect_the_budget_overlap_and_keep_their_place() -> None:
    text = " ".join(f"Sentence number {i} says something about topic {i % 7}." for i in range(200))
    chunks = chunk_sections([Section(text, page=3, heading="Intro")], count_tokens, target=64, overlap=16)
    assert len(chunks) > 5
    assert all(c.tokens <= 64 and c.page == 3 and c.section == "Intro" for c in chunks)
    assert all(count_tokens([c.text])[0] <= 64 + 8 for c in chunks)  # joined text tokenizes about the same
    for first, second in zip(chunks, chunks[1:], strict=False):
        assert first.text.split(". ")[-1] in second.text  # the tail of each chunk opens the next


def test_tokens_are_counted_per_text_and_chunks_fill_their_budget() -> None:
    short, long = "Short one.", "A much longer sentence that goes on and on about many different things in turn."
    assert count_tokens([short, long]) == count_tokens([short]) + count_tokens([long])  # not padded to the longest
    text = " ".join([long] + [short] * 40)  # one long sentence, many short ones
    chunks = chunk_sections([Section(text)], count_tokens, target=64, overlap=0)
    assert sum(c.tokens for c in chunks) == sum(count_tokens([long] + [short] * 40))
    assert all(c.tokens > 64 - count_tokens([short])[0] for c in chunks[:-1])  # each full but for the next sentence


def test_a_chunk_never_crosses_a_page() -> None:
    chunks = chunk_sections([Section("Page one text.", page=1), Section("Page two text.", page=2)], count_tokens)
    assert [(c.page, c.text) for c in chunks] == [(1, "Page one text."), (2, "Page two text.")]


def test_html_and_markdown_sections_follow_their_headings() -> None:
    html = (
        b"<html><head><script>x()</script></head><body><h1>Leave</h1><p>Ask two weeks ahead.</p>"
        b"<h2>Sick days</h2><p>Tell your lead.</p></body></html>"
    )
    assert [(s.heading, s.text) for s in parse("html", html)] == [
        ("Leave", "Ask two weeks ahead."),
        ("Sick days", "Tell your lead."),
    ]
    md = b"# Setup\nInstall it.\n```\n# not a heading\n```\n## Use\nRun it.\n"
    assert [s.heading for s in parse("markdown", md)] == ["Setup", "Setup › Use"]  # the heading path


def test_formats_and_contents() -> None:
    assert format_of("text/plain; charset=utf-8") == "text" and format_of("image/gif") is None
    assert matches_content("pdf", b"%PDF-1.7 ...") and not matches_content("pdf", b"PK\x03\x04")
    assert matches_content("docx", b"PK\x03\x04...") and not matches_content("markdown", b"%PDF-1.4")
    with pytest.raises(UnreadableDocument) as refused:
        parse("text", b"   \n  ")
    assert refused.value.code == "no_text"
