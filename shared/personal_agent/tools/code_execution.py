"""`run_python`: the model's code in the run's sandbox session (`sandbox/`), with the chat's files it names.

Governance, in order: the run's data must be allowed where the code runs (the run's tier, raised by any knowledge
document named, against the backend's trust tier: a restricted chat's data never goes to a backend below it); a
knowledge document some model of the run may not receive is refused; the result carries the labels of what went
in (a colleague's untrusted document makes it untrusted); its text is capped below the result size cap; the files
the code wrote become the chat's attachments (images shown inline, others downloads); the call's wall-clock
seconds are metered to the org (`sandbox_usage`)."""

from __future__ import annotations

import json
import logging
from typing import Any
from uuid import UUID

from pydantic_ai import ModelRetry, RunContext, ToolReturn

from personal_agent.attachments import sandbox_files
from personal_agent.errors import AppError
from personal_agent.governance.tiers import classification_tier, tool_tier_passes
from personal_agent.knowledge import documents
from personal_agent.knowledge.ownership import passage_untrusted
from personal_agent.knowledge.run_tier import receivable
from personal_agent.mcp_servers.toolsets import MAX_RESULT_CHARS
from personal_agent.sandbox import sessions, usage_store
from personal_agent.sandbox.interface import CallResult, InFile
from personal_agent.spec.labels import Labels, result_metadata, run_tier
from personal_agent.spec.run_deps import RunDeps

log = logging.getLogger("personal_agent.tools")

MAX_CODE_CHARS = 50_000
MAX_INPUT_FILES = 8


async def _knowledge_file(deps: RunDeps, document_id: UUID) -> tuple[InFile, Labels]:
    """A knowledge document the run's user may see and every model of the run may receive."""
    spec = deps.spec
    if spec.user_id is None:
        raise ModelRetry("this run acts for no person, so it reads no knowledge documents")
    try:
        row = await documents.get_document(spec.org_id, spec.user_id, document_id)
    except AppError as exc:
        raise ModelRetry(exc.message) from exc
    if not receivable(spec, row["classification"]):
        raise ModelRetry(f"{row['filename']} is classified above what this conversation's models may receive")
    found = await sandbox_files.read_object_bytes(row["object_key"])
    if found is None:
        raise ModelRetry(f"{row['filename']} is no longer stored or is larger than 25 MB")
    untrusted = passage_untrusted(row["created_by"], bool(row["trusted"]), spec.user_id)
    labels = Labels(content_tier=classification_tier(row["classification"]), untrusted=untrusted)
    return InFile(_plain_name(row["filename"]), found), labels


def _plain_name(name: str) -> str:
    return name.replace("\\", "/").rsplit("/", 1)[-1].lstrip(".")[:200] or "file"


async def _inputs(deps: RunDeps, names: list[str]) -> tuple[tuple[InFile, ...], Labels]:
    """The files named: a knowledge document's id, else one of the chat's sent files by name."""
    if len(names) > MAX_INPUT_FILES:
        raise ModelRetry(f"name at most {MAX_INPUT_FILES} files")
    spec, files, labels = deps.spec, [], Labels()
    chat_names = []
    for name in names:
        try:
            document_id = UUID(name)
        except ValueError:
            chat_names.append(name)
            continue
        file, file_labels = await _knowledge_file(deps, document_id)
        files.append(file)
        labels = labels.join(file_labels)
    if chat_names:
        if spec.user_id is None or spec.chat_id is None:
            raise ModelRetry("this run has no chat files")
        try:
            found = await sandbox_files.read_chat_files(spec.org_id, spec.user_id, spec.chat_id, chat_names)
        except sandbox_files.FileNotInChat as exc:
            raise ModelRetry(str(exc)) from exc
        files += [InFile(_plain_name(f.filename), f.data) for f in found]
    return tuple(files), labels


async def _outputs(deps: RunDeps, result: CallResult) -> tuple[list[dict[str, Any]], list[str]]:
    """The files the code wrote, stored as the chat's attachments; those that cannot be (no person, no chat)."""
    spec = deps.spec
    saved, left_out = [], list(result.files_left_out)
    for file in result.files:
        if spec.user_id is None or spec.chat_id is None or not file.data:
            left_out.append(file.name)
            continue
        saved.append(
            await sandbox_files.save_output(spec.org_id, spec.user_id, spec.chat_id, spec.run_id, file.name, file.data)
        )
    return saved, left_out


async def _meter(deps: RunDeps, seconds: float) -> None:
    spec = deps.spec
    async with deps.db() as conn:
        await usage_store.record(
            conn, spec.org_id, spec.user_id, spec.chat_id, spec.run_id, sessions.config().backend, seconds
        )


def _fit(body: dict[str, Any]) -> dict[str, Any]:
    """The result within the run's result size cap (stdout, then stderr, then the value shortened)."""
    for key in ("stdout", "stderr", "value"):
        size = len(json.dumps(body))
        if size <= MAX_RESULT_CHARS:
            break
        text = body.get(key) or ""
        keep = max(0, len(text) - (size - MAX_RESULT_CHARS) - 100)
        body[key] = text[:keep] + "\n[… cut off: the result size cap]"
    return body


async def run_python(ctx: RunContext[RunDeps], code: str, files: list[str] | None = None) -> ToolReturn:
    """Run Python 3.11 (pandas, numpy, matplotlib) in an isolated sandbox with no network. Variables and files
    persist between calls of this response. `files`: names of this chat's files (or knowledge document ids) to put
    in the working directory first. Returns stdout, stderr and the last expression's value; files the code writes
    in the working directory are returned to the user (charts saved with `plt.savefig('name.png')` are shown)."""
    deps = ctx.deps
    if len(code) > MAX_CODE_CHARS:
        raise ModelRetry(f"the code is longer than {MAX_CODE_CHARS} characters")
    inputs, labels = await _inputs(deps, files or [])
    tier = max(run_tier(deps.spec, ctx.messages), labels.content_tier)
    backend_tier = sessions.config().tier
    if not tool_tier_passes(backend_tier, tier):
        raise ModelRetry(
            f"this conversation's data needs trust tier {tier}; the code sandbox here is tier {backend_tier}. "
            "Answer without running code."
        )
    try:
        session = await sessions.session_for(deps.org_id, deps.run_id, durable=deps.spec.mode == "durable")
    except (sessions.SandboxUnavailable, RuntimeError) as exc:
        raise ModelRetry(f"the code sandbox is unavailable: {exc}") from exc
    result = await session.call(code, inputs)
    await _meter(deps, result.seconds)
    saved, left_out = await _outputs(deps, result)
    log.info("sandbox call", extra={"run_id": str(deps.run_id), "seconds": round(result.seconds, 3)})
    body: dict[str, Any] = {
        "stdout": result.stdout,
        "stderr": result.stderr,
        "value": result.value,
        "error": result.error,
        "files": saved,
        "files_left_out": left_out,
        "seconds": round(result.seconds, 3),
        "session_ended": result.ended,
    }
    return ToolReturn(return_value=_fit(body), metadata=result_metadata(labels, {"sandbox_seconds": result.seconds}))
