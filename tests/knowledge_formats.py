"""Documents of the formats issue 36 added, made in the test: a scan (text drawn into an image with Pillow, the
image placed alone on a PDF page with fpdf2, so the PDF has no text layer), a photo of text, a workbook, a deck,
an e-mail and a CSV."""

from __future__ import annotations

import io

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"

STAFF = [
    ("Name", "Department", "Office", "Start date"),
    ("Alice Moreau", "Finance", "Lyon", "2019-03-04"),
    ("Bob Tran", "Sales", "Porto", "2021-09-13"),
    ("Chiara Rossi", "Legal", "Milan", "2016-01-11"),
    ("Dmitri Volkov", "Engineering", "Tallinn", "2023-06-01"),
]


def text_image(lines: list[str], fmt: str = "PNG") -> bytes:
    """An A4-shaped page (150 dpi) with `lines` drawn in a 36 px sans-serif font."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("L", (1240, 1754), 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(FONT, 36)
    for i, line in enumerate(lines):
        draw.text((100, 150 + 60 * i), line, fill=0, font=font)
    out = io.BytesIO()
    image.save(out, fmt)
    return out.getvalue()


def scanned_pdf(lines: list[str]) -> bytes:
    """A one-page PDF that is only an image of `lines` (no text layer), as a scanner makes it."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.image(io.BytesIO(text_image(lines)), x=0, y=0, w=210)
    return bytes(pdf.output())


def text_and_scan_pdf(text: str, scan: tuple[str, ...] = ("Scanned page two",)) -> bytes:
    """A two-page PDF: page 1 has a text layer saying `text`, page 2 is only an image of `scan`'s lines."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    pdf.add_page()
    pdf.multi_cell(0, 6, text)
    pdf.add_page()
    pdf.image(io.BytesIO(text_image(list(scan))), x=0, y=0, w=210)
    return bytes(pdf.output())


def make_xlsx(rows: list[tuple[str, ...]], sheet: str = "Staff") -> bytes:
    from openpyxl import Workbook  # type: ignore[import-untyped]

    book = Workbook()
    book.active.title = sheet
    for row in rows:
        book.active.append(list(row))
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def make_csv(rows: list[tuple[str, ...]]) -> bytes:
    return "\n".join(",".join(row) for row in rows).encode()


def make_pptx(slides: list[tuple[str, str, str]]) -> bytes:
    """Slides of (title, body, speaker notes)."""
    from pptx import Presentation

    deck = Presentation()
    for title, body, notes in slides:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
        slide.notes_slide.notes_text_frame.text = notes
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def make_eml(subject: str, body: str, sender: str = "ann@example.com") -> bytes:
    from email.message import EmailMessage

    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = sender, "team@example.com", subject
    message["Date"] = "Tue, 01 Dec 2026 10:00:00 +0000"
    message.set_content(body)
    message.add_attachment(b"%PDF-1.4", maintype="application", subtype="pdf", filename="floor-plan.pdf")
    return bytes(message)
