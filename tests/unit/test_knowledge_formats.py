"""The formats of issue 36 parsed in the isolated child as ingest runs it (no AWS, no database): tables as rows of
`column: value`, slides with their notes, e-mail with its headers, and text recognised in images and in a PDF
page that has no text layer; plus what is refused before parsing."""

from __future__ import annotations

import pytest

from personal_agent.knowledge.formats import format_of, matches_content
from personal_agent.knowledge.parsing import UnreadableDocument, parse
from personal_agent.knowledge.parsing.isolated import parse_isolated
from tests.knowledge_formats import STAFF, make_csv, make_eml, make_pptx, make_xlsx, scanned_pdf, text_image


def _isolated(fmt: str, data: bytes) -> list[tuple[str | None, int | None, str]]:
    sections = parse_isolated(fmt, data, max_chars=100_000, memory_mb=1024, seconds=120)
    return [(s.heading, s.page, s.text) for s in sections]


def test_new_content_types_and_their_signatures() -> None:
    assert format_of("text/csv") == "csv" and format_of("message/rfc822") == "eml"
    assert format_of("image/jpeg") == format_of("image/png") == "image"
    assert format_of("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet") == "xlsx"
    assert format_of("application/vnd.openxmlformats-officedocument.presentationml.presentation") == "pptx"
    assert matches_content("image", b"\x89PNG\r\n\x1a\n...") and matches_content("image", b"\xff\xd8\xff\xe0")
    assert not matches_content("image", b"%PDF-1.7") and not matches_content("xlsx", b"\x89PNG\r\n\x1a\n")
    assert not matches_content("csv", b"\x89PNG\r\n\x1a\n") and matches_content("csv", b"a,b\n1,2\n")


def test_a_workbook_and_a_csv_become_rows_of_named_values() -> None:
    [(heading, page, text)] = _isolated("xlsx", make_xlsx(STAFF))
    assert (heading, page) == ("Staff, rows 2-5", None)
    assert "Name: Bob Tran | Department: Sales | Office: Porto | Start date: 2021-09-13" in text.split("\n\n")
    rows = parse("csv", make_csv(STAFF))
    assert rows[0].heading == "rows 2-5" and rows[0].text.startswith("Name: Alice Moreau | Department: Finance")


def test_a_long_table_is_cited_by_row_ranges() -> None:
    rows = [("Item", "Price")] + [(f"Part {i}", f"{i}.50") for i in range(200)]
    sections = parse("csv", make_csv(rows))
    assert len(sections) > 3 and sections[0].heading == "rows 2-" + sections[0].heading.split("-")[-1]
    assert all(len(s.text) <= 800 for s in sections)
    assert "Item: Part 199 | Price: 199.50" in sections[-1].text and sections[-1].heading.endswith("-201")


def test_slides_keep_their_titles_and_speaker_notes() -> None:
    deck = make_pptx([("Roadmap", "Ship the app in Q3", "Mention the freeze."), ("Budget", "Flat", "")])
    assert _isolated("pptx", deck) == [
        ("Slide 1: Roadmap", 1, "Ship the app in Q3\n\nSpeaker notes: Mention the freeze."),
        ("Slide 2: Budget", 2, "Flat"),
    ]


def test_an_email_has_its_headers_body_and_attachment_names() -> None:
    sections = _isolated("eml", make_eml("Office move", "We move to the fourth floor on Friday."))
    assert all(heading == "Office move" for heading, _, _ in sections)
    texts = [text for _, _, text in sections]
    assert "From: ann@example.com" in texts[0] and "Subject: Office move" in texts[0]
    assert texts[1].strip() == "We move to the fourth floor on Friday."
    assert texts[2] == "Attachments: floor-plan.pdf"


@pytest.mark.timeout(180)
def test_ocr_reads_a_photo_and_a_scanned_pdf_page() -> None:
    # PP-OCRv4's recogniser sometimes drops a space between words ("4471is"): compared without spaces.
    [(_, page, text)] = _isolated("image", text_image(["Invoice 4471 is due on 15 March"], "JPEG"))
    assert page == 1 and "Invoice4471isdueon15March" in "".join(text.split())
    [(_, page, text)] = _isolated("pdf", scanned_pdf(["Warranty claims must be filed", "within ninety days."]))
    lines = ["".join(line.split()) for line in text.splitlines()]
    assert page == 1 and lines == ["Warrantyclaimsmustbefiled", "withinninetydays."]


def test_an_image_too_large_to_decode_or_not_an_image_is_refused() -> None:
    import io

    from PIL import Image

    huge = io.BytesIO()
    Image.new("1", (9000, 9000)).save(huge, "PNG")  # 81 Mpx, a few KB compressed
    with pytest.raises(UnreadableDocument) as refused:
        parse("image", huge.getvalue())
    assert refused.value.code == "too_large"
    with pytest.raises(UnreadableDocument) as broken:
        parse("image", b"\x89PNG\r\n\x1a\n" + b"\x00" * 100)
    assert broken.value.code == "corrupt"
