"""Ingest limits (issue 28, item 8) on the parsers and the chunker: a DOCX zip bomb is refused from its central
directory, a PDF's shared content stream is extracted once, pypdf's decompression limit and the text and chunk
caps end `too_large`, and parsing in a child process is bounded in memory. XLSX and PPTX bombs (issue 36: a
declared or spread huge grid, many sheets or slides, a zip bomb, an oversized slide) are refused or cut with a
stable code in a child of 300 MB."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence
from typing import Any

import pytest

from personal_agent.knowledge.chunking import chunk_sections
from personal_agent.knowledge.formats import Format
from personal_agent.knowledge.parsing import Section, UnreadableDocument, parse
from personal_agent.knowledge.parsing.isolated import parse_isolated
from tests.knowledge import make_docx, make_pdf
from tests.knowledge_bombs import (
    SENTENCE,
    docx_bomb,
    inflating_stream_pdf,
    memory_hog_docx,
    pptx_bomb,
    pptx_many_slides,
    pptx_oversized,
    shared_stream_pdf,
    xlsx_bomb,
    xlsx_declared_grid,
    xlsx_many_sheets,
    xlsx_spread_grid,
)
from tests.knowledge_formats import make_csv, make_eml, make_pptx, make_xlsx


def _words(texts: Sequence[str]) -> list[int]:
    return [len(t.split()) for t in texts]


def test_a_docx_bomb_is_refused_before_it_is_unpacked() -> None:
    data = docx_bomb()
    assert len(data) < 150_000
    unpacked = sum(i.file_size for i in zipfile.ZipFile(io.BytesIO(data)).infolist())
    assert unpacked > 25_000_000  # what python-docx would have inflated and parsed
    with pytest.raises(UnreadableDocument) as refused:
        parse("docx", data)
    assert refused.value.code == "too_large" and "compressed more than" in refused.value.message


def test_an_ordinary_docx_still_reads() -> None:
    sections = parse("docx", make_docx([("Security", "Keys rotate every ninety days.")]))
    assert [(s.heading, s.text) for s in sections] == [("Security", "Keys rotate every ninety days.")]


def test_pages_that_share_one_content_stream_are_extracted_once() -> None:
    data = shared_stream_pdf()
    assert len(data) < 70_000
    sections = parse("pdf", data)
    assert [s.page for s in sections] == [1]
    assert sections[0].text.count("quarterly report") == 1300
    # Pages with their own streams are all read.
    distinct = parse("pdf", make_pdf(["First page text.", "Second page text.", "Third page text."]))
    assert [s.page for s in distinct] == [1, 2, 3]


def test_pypdf_decompression_limit_ends_too_large() -> None:
    with pytest.raises(UnreadableDocument) as refused:
        parse("pdf", inflating_stream_pdf())
    assert refused.value.code == "too_large" and "LimitReachedError" in refused.value.message


@pytest.mark.parametrize("fmt", ["pdf", "docx", "text", "markdown", "html", "csv", "xlsx", "pptx", "eml"])
def test_text_past_the_character_cap_ends_too_large(fmt: Format) -> None:
    pages = [f"Page {i}. " + SENTENCE * 20 for i in range(5)]
    rows: list[tuple[str, ...]] = [("Part", "Text"), *((f"Part {i}", p.replace(",", " ")) for i, p in enumerate(pages))]
    data = {
        "pdf": lambda: make_pdf(pages),
        "docx": lambda: make_docx([(f"Part {i}", p) for i, p in enumerate(pages)]),
        "text": lambda: "\n\n".join(pages).encode(),
        "markdown": lambda: "\n".join(f"# Part {i}\n{p}" for i, p in enumerate(pages)).encode(),
        "html": lambda: "".join(f"<h1>Part {i}</h1><p>{p}</p>" for i, p in enumerate(pages)).encode(),
        "csv": lambda: make_csv(rows),
        "xlsx": lambda: make_xlsx(rows),
        "pptx": lambda: make_pptx([(f"Part {i}", p, f"Notes {i}. {SENTENCE}") for i, p in enumerate(pages)]),
        "eml": lambda: make_eml("Every part", "\n\n".join(pages)),
    }[fmt]()
    whole = sum(len(s.text) for s in parse(fmt, data))
    with pytest.raises(UnreadableDocument) as refused:
        parse(fmt, data, max_chars=whole // 2)
    assert refused.value.code == "too_large"
    assert parse(fmt, data, max_chars=whole + 100)


def test_chunks_past_the_cap_end_too_large() -> None:
    sections = [Section(f"Section {i}. {SENTENCE}", heading=f"H{i}") for i in range(50)]
    assert len(chunk_sections(sections, _words, max_chunks=50)) == 50
    with pytest.raises(UnreadableDocument) as refused:
        chunk_sections(sections, _words, max_chunks=49)
    assert refused.value.code == "too_large"


def test_parsing_in_a_child_is_bounded_in_memory() -> None:
    # In-process this parse grows the worker by ~600 MB (and takes minutes); the child stops at its limit.
    with pytest.raises(UnreadableDocument) as refused:
        parse_isolated("docx", memory_hog_docx(), max_chars=10_000, memory_mb=300, seconds=300)
    assert refused.value.code == "too_large" and "300 MB of memory" in refused.value.message
    # The same limit reads an ordinary document.
    sections = parse_isolated("docx", make_docx([("Plan", "Ship it.")]), max_chars=10_000, memory_mb=300, seconds=60)
    assert [(s.heading, s.text) for s in sections] == [("Plan", "Ship it.")]


def test_a_parser_that_does_not_finish_in_time_ends_too_large() -> None:
    with pytest.raises(UnreadableDocument) as refused:
        parse_isolated("pdf", shared_stream_pdf(pages=1, lines=20_000), max_chars=10**8, memory_mb=1024, seconds=0.5)
    assert refused.value.code == "too_large" and "0.5 s" in refused.value.message


def test_a_child_returns_the_parsers_own_refusal() -> None:
    with pytest.raises(UnreadableDocument) as refused:
        parse_isolated("pdf", b"%PDF-1.4 not really", max_chars=1000, memory_mb=512, seconds=60)
    assert refused.value.code == "corrupt"


def test_a_workbook_is_read_as_wide_as_its_cells_not_as_its_declared_grid() -> None:
    # Padded to its declared A1:XFD1048576, each of the 200 rows would be 16,384 cells: past the cell cap.
    sections = parse("xlsx", xlsx_declared_grid(rows=200))
    text = "\n".join(s.text for s in sections)
    assert "Item: item 199 | Price: 199" in text and text.count("Item: item") == 199


@pytest.mark.parametrize(
    ("fmt", "make", "code", "says"),
    [
        ("xlsx", xlsx_spread_grid, "too_large", "more than 2,000,000 cells"),
        ("xlsx", lambda: xlsx_many_sheets(501), "too_many_pages", "more than 500 sheets"),
        ("xlsx", xlsx_bomb, "too_large", "'xl/worksheets/sheet1.xml' is compressed more than 100 times"),
        ("pptx", lambda: pptx_many_slides(2001), "too_many_pages", "more than 2000 slides"),
        ("pptx", pptx_bomb, "too_large", "'ppt/slides/slide1.xml' is compressed more than 100 times"),
        ("pptx", pptx_oversized, "too_large", "unpacks to more than 64 MB"),
    ],
    ids=["xlsx-spread-grid", "xlsx-501-sheets", "xlsx-zip-bomb", "pptx-2001-slides", "pptx-zip-bomb", "pptx-70-mb"],
)
def test_office_bombs_are_refused_with_a_stable_code(fmt: str, make: Any, code: str, says: str) -> None:
    data = make()
    assert len(data) < 25 * 1024 * 1024  # each is an upload the API takes
    with pytest.raises(UnreadableDocument) as refused:
        parse_isolated(fmt, data, max_chars=4_000_000, memory_mb=300, seconds=120)
    assert (refused.value.code, says in refused.value.message) == (code, True), refused.value.message
