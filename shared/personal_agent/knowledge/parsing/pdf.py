"""PDF with pypdf (pure Python, ~2 MB installed, no native code): one section per page; an encrypted or corrupt
file is refused as a whole. A page without a text layer (a scan) is read from its images by OCR (`ocr.py`); a scan
whose recognition runs past the page limit is left out, and when that leaves the document no text it ends
`too_large` (not `no_text`).
A content stream is extracted once: pages that draw the same stream (a small file can point every page at one
large compressed stream) add nothing after the first."""

from __future__ import annotations

import io
import logging
from typing import Any

from personal_agent.knowledge.parsing.budget import TextBudget, too_large
from personal_agent.knowledge.parsing.sections import Section, UnreadableDocument

log = logging.getLogger("personal_agent.knowledge.parsing")
MAX_PAGES = 2000
MIN_TEXT_CHARS = 20
"""A page with fewer characters of text than this is taken for a scan (its images go through OCR)."""
MAX_OCR_IMAGES = 8
"""Images read per scanned page (a scan is one; the largest are read first)."""


def _contents_key(page: Any) -> tuple[Any, ...] | None:
    """The objects the page's `/Contents` points at (its stream, or its array of streams), or None when the
    streams are inline in the page (then they are the page's own)."""
    from pypdf.generic import IndirectObject

    contents = dict.get(page, "/Contents")  # unresolved: the references, not the streams
    if isinstance(contents, IndirectObject):
        resolved = contents.get_object()
        if isinstance(resolved, list):  # an indirect array of streams
            return tuple(_ref(c) for c in resolved)
        return (_ref(contents),)
    if isinstance(contents, list) and contents and all(isinstance(c, IndirectObject) for c in contents):
        return tuple(_ref(c) for c in contents)
    return None


def _ref(obj: Any) -> tuple[int, int] | None:
    return (obj.idnum, obj.generation) if hasattr(obj, "idnum") else None


def _pages(reader: Any, budget: TextBudget) -> list[Section]:
    sections: list[Section] = []
    seen: set[tuple[Any, ...]] = set()
    late: list[int] = []  # scanned pages whose recognition ran past the page limit: left out
    for number, page in enumerate(reader.pages, start=1):
        key = _contents_key(page)
        if key is not None and None not in key:
            if key in seen:
                continue
            seen.add(key)
        text = page.extract_text() or ""
        if len("".join(text.split())) < MIN_TEXT_CHARS:
            recognised = _recognised(page)
            late += [number] if recognised is None else []
            text = recognised or text
        sections.append(Section(budget.spend(text), page=number))
    if late and not any(s.text.strip() for s in sections):  # not `no_text`: the text is there, reading it took long
        from personal_agent.knowledge.parsing.ocr import page_seconds

        raise too_large(f"OCR of page {late[0]} took more than {page_seconds():g} s (the page limit)")
    if late:
        log.warning("OCR of pages %s took more than the page limit: left out", late[:20])
    return sections


def _recognised(page: Any) -> str | None:
    """The text OCR reads in the page's images (the largest first): "" when it has none, None when every image
    that was read ran past the page limit."""
    from personal_agent.knowledge.parsing.ocr import recognise

    images = sorted(page.images, key=lambda image: -len(image.data))[:MAX_OCR_IMAGES]
    texts = [recognise(image.data) for image in images]
    if texts and all(t is None for t in texts):
        return None
    return "\n".join(t for t in texts if t)


def parse_pdf(data: bytes, budget: TextBudget) -> list[Section]:
    from pypdf import PdfReader
    from pypdf.errors import LimitReachedError, PyPdfError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # it warns about every oddity of a damaged file
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            raise UnreadableDocument("encrypted", "the PDF is encrypted; upload it without a password")
        if len(reader.pages) > MAX_PAGES:
            raise UnreadableDocument("too_many_pages", f"the PDF has more than {MAX_PAGES} pages")
        return _pages(reader, budget)
    except UnreadableDocument:
        raise
    except (LimitReachedError, MemoryError, RecursionError) as exc:  # pypdf's decompression and nesting limits
        raise too_large(f"the PDF is past a reading limit ({type(exc).__name__})") from None
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError, OSError) as exc:
        raise UnreadableDocument("corrupt", f"the PDF could not be read ({type(exc).__name__})") from None
