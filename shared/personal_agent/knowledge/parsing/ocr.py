"""Text recognition for scans and photos with RapidOCR (PP-OCRv4 on onnxruntime; its models ship inside the
`rapidocr-onnxruntime` wheel, nothing is downloaded). Each image gets at most `PA_OCR_PAGE_SECONDS` (20 s; a
SIGALRM timer: the parser runs in its own child process's main thread; the models load before it starts); a page
past it is left out (an image alone, or a PDF whose every scanned page ran past it, ends `too_large`), and the
document's own deadline (`PA_INGEST_PARSE_SECONDS`) bounds the whole. Images are sized from their header before
they are decoded.

On AWS, where the package is not installed (the Lambda layers leave it out: docs/knowledge.md), the template sets
`PA_OCR_BACKEND=textract` and each image goes to Amazon Textract instead (`textract_ocr.py`). Without either, a
document that needs OCR ends `failed: ocr_unavailable` instead of `no_text`."""

from __future__ import annotations

import functools
import io
import logging
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from personal_agent.knowledge.parsing.budget import TextBudget, too_large
from personal_agent.knowledge.parsing.sections import Section, UnreadableDocument

log = logging.getLogger("personal_agent.knowledge.ocr")
MAX_PIXELS = 40_000_000
"""An A4 page scanned at 600 dpi is 35 Mpx; larger is refused before it is decoded."""
MIN_SCORE = 0.5
"""Recognised lines below this confidence are dropped (noise, stamps)."""


class _PageTimeout(Exception):
    pass


def _textract() -> bool:
    from personal_agent.settings import get_settings

    return get_settings().ocr_backend == "textract"


def page_seconds() -> float:
    """The most one page (or image) may take (`PA_OCR_PAGE_SECONDS`); about 1 s for a scanned page on one core."""
    from personal_agent.settings import get_settings

    return get_settings().ocr_page_seconds


def available() -> bool:
    if _textract():
        return True
    try:
        import rapidocr_onnxruntime  # type: ignore[import-untyped]  # noqa: F401
    except ImportError:
        return False
    return True


@functools.cache
def _engine() -> Any:
    import resource

    from rapidocr_onnxruntime import RapidOCR

    _, hard = resource.getrlimit(resource.RLIMIT_AS)  # the parse child's OCR headroom (`isolated.py`)
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
    return RapidOCR()


class _Timer:
    expired = False


@contextmanager
def _deadline(seconds: float) -> Iterator[_Timer]:
    """Raise `_PageTimeout` in this thread after `seconds` (only on the main thread: elsewhere, no page limit). The
    timer says whether it went off: RapidOCR wraps whatever its inference raises in its own `ONNXRuntimeError`."""
    timer = _Timer()
    if threading.current_thread() is not threading.main_thread():
        yield timer
        return

    def expire(_signum: int, _frame: Any) -> None:
        timer.expired = True
        raise _PageTimeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield timer
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _check_size(data: bytes) -> None:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise UnreadableDocument("corrupt", f"the image could not be read ({type(exc).__name__})") from None
    if width * height > MAX_PIXELS:
        raise too_large(f"the image has {width}x{height} pixels, more than {MAX_PIXELS // 1_000_000} million")


def recognise(data: bytes, seconds: float | None = None) -> str | None:
    """The text of one image (PNG, JPEG, or any image a PDF page holds), line by line; None past `seconds` (the
    page limit unless given)."""
    if not available():
        raise UnreadableDocument("ocr_unavailable", "text recognition (OCR) is not installed in this deployment")
    _check_size(data)
    if _textract():  # read by the worker, which may call Textract (`textract_ocr.py`)
        from personal_agent.knowledge.parsing.textract_ocr import defer

        return defer(data)
    seconds = page_seconds() if seconds is None else seconds
    engine = _engine()  # loaded once per parse child, outside the page's time
    timer = _Timer()
    try:
        with _deadline(seconds) as timer:
            lines, _ = engine(data)
    except Exception:  # `_PageTimeout`, raised where the timer found the thread, or wrapped by the engine
        if not timer.expired:
            raise
        log.warning("OCR of one image took more than %s s: left out", seconds)
        return None
    return "\n".join(str(text) for _, text, score in lines or () if float(score) >= MIN_SCORE)


def parse_image(data: bytes, budget: TextBudget) -> list[Section]:
    text = recognise(data)
    if text is None:
        raise too_large(f"the image took more than {page_seconds():g} s to read (the OCR page limit)")
    return [Section(budget.spend(text), page=1)]
