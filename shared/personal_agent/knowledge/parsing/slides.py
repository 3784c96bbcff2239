"""PPTX with python-pptx: one section per slide, headed `Slide N: title`, with the text of every shape (tables
row by row, groups opened) and the speaker notes after it. The archive's central directory is checked first
(`check_archive`: parts, unpacked size, compression ratio) and a deck of more than `MAX_SLIDES` slides is refused
from it too, before python-pptx parses every slide's XML."""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterable
from typing import Any

from personal_agent.knowledge.parsing.budget import TextBudget
from personal_agent.knowledge.parsing.docx import check_archive
from personal_agent.knowledge.parsing.sections import Section, UnreadableDocument

MAX_SLIDES = 2000
_SLIDE_PART = re.compile(r"^ppt/slides/slide[0-9]+\.xml$", re.MULTILINE)


def _names(data: bytes) -> str:
    """The archive's part names, one a line (`check_archive` has read the directory already)."""
    return "\n".join(zipfile.ZipFile(io.BytesIO(data)).namelist())


def _shape_texts(shapes: Iterable[Any]) -> list[str]:
    texts: list[str] = []
    for shape in shapes:
        if getattr(shape, "shape_type", None) == 6:  # MSO_SHAPE_TYPE.GROUP
            texts += _shape_texts(shape.shapes)
        elif getattr(shape, "has_table", False):
            texts += [" | ".join(c.text.strip() for c in row.cells) for row in shape.table.rows]
        elif getattr(shape, "has_text_frame", False) and shape.text_frame.text.strip():
            texts.append(shape.text_frame.text.strip())
    return texts


def parse_pptx(data: bytes, budget: TextBudget) -> list[Section]:
    from pptx import Presentation

    check_archive(data, "PPTX")
    if len(_SLIDE_PART.findall(_names(data))) > MAX_SLIDES:
        raise UnreadableDocument("too_many_pages", f"the PPTX has more than {MAX_SLIDES} slides")
    try:
        deck = Presentation(io.BytesIO(data))
    except Exception as exc:  # python-pptx raises whatever its XML and zip readers do
        raise UnreadableDocument("corrupt", f"the PPTX could not be read ({type(exc).__name__})") from None
    if len(deck.slides) > MAX_SLIDES:
        raise UnreadableDocument("too_many_pages", f"the PPTX has more than {MAX_SLIDES} slides")
    sections: list[Section] = []
    for number, slide in enumerate(deck.slides, start=1):
        title_shape = slide.shapes.title
        title = " ".join(title_shape.text.split()) if title_shape is not None and title_shape.has_text_frame else ""
        texts = [t for t in _shape_texts(slide.shapes) if " ".join(t.split()) != title]
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            notes = slide.notes_slide.notes_text_frame.text.strip()
            if notes:
                texts.append(f"Speaker notes: {notes}")
        heading = f"Slide {number}: {title}" if title else f"Slide {number}"
        sections.append(Section(budget.spend("\n\n".join(texts) or title), page=number, heading=heading))
    return sections
