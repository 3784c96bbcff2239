"""Parse in a child process with an address-space limit (RLIMIT_AS) and a deadline. A document built to exhaust
memory or time (past what the format checks and the text budget catch) kills the child, not the worker: `pa dev`
runs the ingest function inside its own process, and on Lambda an out-of-memory or timed-out invocation returns
the message to SQS until it is dead-lettered with the document still `processing`. Every way the child fails ends
the document `failed` (`too_large` for memory and time), so a parse never leaves it `processing`.

The child is `python -m personal_agent.knowledge.parsing.isolated FORMAT MAX_CHARS MEMORY_MB`: the file on
stdin, `{"sections": [...]}` or `{"error": {"code", "message"}}` as JSON on stdout. It gets this process's
`sys.path` and nothing else of its environment (no secrets) but the OCR backend's name and page limit: with Textract
(`textract_ocr.py`) the child hands back the images to read (`"ocr"`) and this process reads them."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from dataclasses import asdict
from typing import Any

from personal_agent.knowledge.parsing.budget import too_large
from personal_agent.knowledge.parsing.sections import Section, UnreadableDocument
from personal_agent.settings import get_settings

log = logging.getLogger("personal_agent.knowledge.parsing")
OCR_EXTRA_MB = 1024
"""Address space a child may add once it runs OCR (`ocr.py`)."""


def parse_isolated(fmt: str, data: bytes, *, max_chars: int, memory_mb: int, seconds: float) -> list[Section]:
    """`parse(fmt, data, max_chars)` in a child of at most `memory_mb` MB of address space and `seconds` seconds."""
    command = [sys.executable, "-m", __name__, fmt, str(max_chars), str(memory_mb)]
    env = {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p), "PATH": os.environ.get("PATH", "")}
    settings = get_settings()
    env["PA_OCR_BACKEND"], env["PA_OCR_PAGE_SECONDS"] = settings.ocr_backend, str(settings.ocr_page_seconds)
    try:
        done = subprocess.run(command, input=data, capture_output=True, timeout=seconds, env=env, check=False)
    except subprocess.TimeoutExpired:  # the child is killed
        raise too_large(f"the document took more than {seconds:g} s to read") from None
    sections, images = _outcome(done, memory_mb)
    if images:
        from personal_agent.knowledge.parsing.textract_ocr import fill

        return fill(sections, images, settings.ocr_page_seconds)
    return sections


def _outcome(done: subprocess.CompletedProcess[bytes], memory_mb: int) -> tuple[list[Section], list[str]]:
    """The child's sections and the images it left for Textract."""
    try:
        result: dict[str, Any] = json.loads(done.stdout) if done.returncode == 0 else {}
    except ValueError:
        result = {}
    if "sections" in result:
        return [Section(**s) for s in result["sections"]], [str(i) for i in result.get("ocr") or []]
    if "error" in result:
        raise UnreadableDocument(str(result["error"]["code"]), str(result["error"]["message"]))
    stderr = done.stderr[-500:].decode("utf-8", "replace")
    log.warning("the parser exited %s without a result: %s", done.returncode, stderr)
    if "MemoryError" in stderr or done.returncode < 0:  # out of memory, or killed for it
        raise _out_of_memory(memory_mb)
    raise UnreadableDocument("corrupt", "the document could not be read (the parser failed)")


def _out_of_memory(memory_mb: int) -> UnreadableDocument:
    return too_large(f"the document needs more than {memory_mb} MB of memory to read")


def _child(fmt: str, max_chars: int, memory_mb: int, data: bytes) -> dict[str, Any]:
    from personal_agent.knowledge.parsing import parse

    out_of_memory = {"error": {"code": "too_large", "message": _out_of_memory(memory_mb).message}}
    try:
        sections = [asdict(s) for s in parse(fmt, data, max_chars)]  # type: ignore[arg-type]
        from personal_agent.knowledge.parsing.textract_ocr import deferred

        return {"sections": sections, "ocr": deferred()}
    except UnreadableDocument as exc:
        return {"error": {"code": exc.code, "message": exc.message}}
    except MemoryError:  # what it held is released by now: enough is left to say so
        return out_of_memory
    except Exception as exc:  # any other parser failure: the file cannot be read (a retry would fail the same way)
        if "NO_MEMORY" in str(getattr(exc, "error_log", "")):  # libxml2 out of memory, reported by lxml as bad XML
            return out_of_memory
        return {"error": {"code": "corrupt", "message": f"the document could not be read ({type(exc).__name__})"}}


def main() -> None:
    import resource

    fmt, max_chars, memory_mb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    # The hard limit leaves OCR room: onnxruntime's threads reserve address space (not memory) that a 1 GB limit
    # refuses, so `parsing/ocr.py` raises the soft limit to it when a page needs recognising, and only then.
    hard = (memory_mb + OCR_EXTRA_MB) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory_mb * 1024 * 1024, hard))
    result = _child(fmt, max_chars, memory_mb, sys.stdin.buffer.read())
    sys.stdout.write(json.dumps(result))


if __name__ == "__main__":
    main()
