"""An uploaded export as new chats (issue 38): the bytes of `POST /api/v1/me/import`, whichever way they came (the
body itself, or the `file` of a multipart form), as `chatgpt` (a `conversations.json`, or ChatGPT's export ZIP with
it inside), `claude` (the same for Claude's) or `personal-agent` (our own export ZIP, `chat_restore`).

A ZIP is checked from its central directory before anything is inflated (`check_archive`, the knowledge parsers'
zip-bomb check: parts, total size, compression ratio), and only the entries an import reads are inflated, together
at most `MAX_UNPACKED_BYTES`; attachments, documents and agents in an export are not read. Too large is 413
`import_too_large`, anything else wrong 422 `import_invalid`; nothing is written unless everything is good."""

from __future__ import annotations

import io
import json
import posixpath
import zipfile
from typing import Any
from uuid import UUID

from personal_agent.errors import InvalidInput
from personal_agent.identity.principal import Principal
from personal_agent.knowledge.parsing.docx import check_archive
from personal_agent.knowledge.parsing.sections import UnreadableDocument

FORMATS = ("chatgpt", "claude", "personal-agent")
MAX_UNPACKED_BYTES = 32 * 1024 * 1024
"""The entries an import reads, together, inflated (JSON becomes Python objects several times its size)."""


def too_large(message: str) -> InvalidInput:
    return InvalidInput(message, code="import_too_large", status=413)


def _invalid(message: str) -> InvalidInput:
    return InvalidInput(message, code="import_invalid")


class _Entries:
    """Reads a checked ZIP's entries, counting what it inflates against `MAX_UNPACKED_BYTES`."""

    def __init__(self, archive: zipfile.ZipFile) -> None:
        self.archive = archive
        self.left = MAX_UNPACKED_BYTES

    def __call__(self, name: str) -> bytes:
        info = self.archive.getinfo(name)  # KeyError: no such entry
        if info.file_size > self.left:
            raise too_large(f"the archive's chats unpack to more than {MAX_UNPACKED_BYTES // (1024 * 1024)} MB")
        self.left -= info.file_size
        try:
            # zipfile never inflates past the declared size (and then fails the CRC): the read is bounded
            return self.archive.read(info)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, OSError, EOFError) as exc:
            raise _invalid(f"{name[:100]} could not be read ({type(exc).__name__})") from None


def open_archive(data: bytes) -> zipfile.ZipFile:
    """The ZIP, after the zip-bomb check."""
    try:
        check_archive(data, "archive")
    except UnreadableDocument as exc:
        raise (too_large(exc.message) if exc.code == "too_large" else _invalid(exc.message)) from None
    return zipfile.ZipFile(io.BytesIO(data))


def _conversations(archive: zipfile.ZipFile, read: _Entries) -> Any:
    """The `conversations.json` of ChatGPT's or Claude's export ZIP (at its top, or in one folder)."""
    found = sorted(
        (n for n in archive.namelist() if posixpath.basename(n) == "conversations.json"), key=lambda n: n.count("/")
    )
    if not found:
        raise _invalid("the archive has no conversations.json")
    try:
        return json.loads(read(found[0]))
    except ValueError:
        raise _invalid("conversations.json is not JSON") from None


async def import_file(principal: Principal, kind: str, data: bytes) -> list[UUID]:
    """The upload as new chats of the caller's, all or nothing; their ids."""
    from personal_agent.lifecycle.chat_import import import_conversations
    from personal_agent.lifecycle.chat_restore import read_chats, restore_chats

    if kind not in FORMATS:
        raise InvalidInput(f"`format` must be one of {', '.join(FORMATS)}", code="import_format_unknown")
    if not data.startswith(b"PK"):
        if kind == "personal-agent":
            raise _invalid("a Personal Agent export is the ZIP it was downloaded as")
        try:
            conversations = json.loads(data)
        except ValueError:
            raise _invalid("the file is neither JSON nor a ZIP") from None
        return await import_conversations(principal, kind, conversations)
    archive = open_archive(data)
    read = _Entries(archive)
    if kind == "personal-agent":
        return await restore_chats(principal, read_chats(archive, read))
    return await import_conversations(principal, kind, _conversations(archive, read))
