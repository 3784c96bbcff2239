"""PDF with pypdf (pure Python, ~2 MB installed, no native code): one section per page; an encrypted or corrupt
file is refused as a whole."""

from __future__ import annotations

import io
import logging

from personal_agent.knowledge.parsing.sections import Section, UnreadableDocument

MAX_PAGES = 2000


def parse_pdf(data: bytes) -> list[Section]:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # it warns about every oddity of a damaged file
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            raise UnreadableDocument("encrypted", "the PDF is encrypted; upload it without a password")
        if len(reader.pages) > MAX_PAGES:
            raise UnreadableDocument("too_many_pages", f"the PDF has more than {MAX_PAGES} pages")
        return [Section(page.extract_text() or "", page=i + 1) for i, page in enumerate(reader.pages)]
    except UnreadableDocument:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, IndexError, OSError) as exc:
        raise UnreadableDocument("corrupt", f"the PDF could not be read ({type(exc).__name__})") from None
