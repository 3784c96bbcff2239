"""Share links (issue 38): a read-only snapshot of one branch of a chat up to a message, frozen when the link is made
(the chat going on changes nothing in it).

Classification decides: a `restricted` chat is never shared, a `confidential` one only inside its org; a public link
only where the org's admin allows it (`org_data_policies.allow_public_shares`). An `org` link is seen by a signed-in
member of the sharer's org; anyone else (another org, no sign-in), a revoked link, an expired one and a guessed
token all get the same 404. The link's secret is 32 random bytes; only its SHA-256 is stored. Tool-call arguments
(and tool results other than `search_knowledge`'s passages, the answer's citations) are left out unless the sharer
chose `show_tools`. The answers that drew on `search_knowledge` carry their numbered citations
(`chats/share_citations.py`), and the snapshot's files open through the link (`attachments/shared_files.py`).
Every share made, viewed, continued and revoked is audited (`share_audit`, no content).

"Continue this chat" copies the snapshot's user and assistant text (never tool calls, attachments' bytes or system
prompts) into a new chat of the viewer's, with the shared chat's classification and content labels."""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

from personal_agent.chats import message_store, policy_store, retention, share_store, store
from personal_agent.chats.share_citations import with_citations
from personal_agent.chats.share_store import NewShare, SharedSnapshot, ShareRow
from personal_agent.chats.transcript import row_items
from personal_agent.db import org_transaction, system_transaction
from personal_agent.errors import Forbidden, InvalidInput, NotFound
from personal_agent.identity.principal import Principal
from personal_agent.spec.labels import Labels

MAX_MESSAGES = 2000
CITATION_TOOLS = frozenset({"search_knowledge"})


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _missing() -> NotFound:
    return NotFound("share not found", code="share_not_found")


async def create_share(
    principal: Principal,
    chat_id: UUID,
    upto_message_id: int | None,
    audience: str,
    expires_in_days: int | None,
    show_tools: bool,
) -> tuple[ShareRow, str]:
    """Freeze the chat's branch up to `upto_message_id` (its newest message when None); the share and its token."""
    token = secrets.token_urlsafe(32)
    async with org_transaction(principal.org_id) as conn:
        chat = await store.get_owned(conn, chat_id, principal.user_id)
        if chat is None:
            raise NotFound("chat not found", code="chat_not_found")
        locked = await store.lock_chat(conn, chat_id)
        assert locked is not None
        await _check_audience(conn, principal, chat.classification, audience)
        tip = await _tip(conn, chat_id, upto_message_id)
        rows = await message_store.message_rows_before(conn, chat_id, tip, None, MAX_MESSAGES) if tip else []
        rows.reverse()
        items = [item for row in rows for item in row_items(row)]
        new = NewShare(
            chat_id=chat_id,
            token_hash=token_hash(token),
            audience=audience,
            title=chat.title,
            classification=chat.classification,
            content_tier=locked.labels.content_tier,
            untrusted=locked.labels.untrusted,
            upto_message_id=tip,
            show_tools=show_tools,
            snapshot=[_shown(item, show_tools) for item in items],
            messages=[m for m in (_text_only(row.message) for row in rows) if m is not None],
            expires_at=datetime.now(UTC) + timedelta(days=expires_in_days) if expires_in_days else None,
        )
        row = await share_store.insert_share(conn, principal.org_id, principal.user_id, new)
        await share_store.audit(conn, principal.org_id, row, principal.user_id, "created")
    return row, token


async def _check_audience(conn: Any, principal: Principal, classification: str, audience: str) -> None:
    if classification == "restricted":
        raise Forbidden("a restricted chat cannot be shared", code="share_restricted")
    if audience != "public":
        return
    if classification != "standard":
        raise Forbidden("a confidential chat can be shared only inside the org", code="share_public_confidential")
    if not (await policy_store.policy(conn, principal.org_id)).allow_public_shares:
        raise Forbidden("your org does not allow public share links", code="share_public_not_allowed")


async def _tip(conn: Any, chat_id: UUID, upto: int | None) -> int | None:
    if upto is None:
        return await message_store.latest_message_id(conn, chat_id)
    if await message_store.message_node(conn, chat_id, upto) is None:
        raise InvalidInput("the message is not in this chat", code="message_not_found")
    return upto


def _shown(item: dict[str, Any], show_tools: bool) -> dict[str, Any]:
    """A transcript item as the link shows it: no branch siblings; tool arguments and results only when chosen."""
    shown = {k: v for k, v in item.items() if k not in ("sibling_ids", "parent_id")}
    if show_tools:
        return shown
    if shown.get("tool_calls"):
        shown["tool_calls"] = [{"id": c["id"], "name": c["name"], "args": None} for c in shown["tool_calls"]]
        shown.pop("truncated", None)
    if shown.get("role") == "tool" and shown.get("name") not in CITATION_TOOLS:
        shown["content"] = None
    return shown


def _text_only(message: Any) -> dict[str, Any] | None:
    """A stored message with only its user prompts (their text) and assistant text; None when nothing is left."""
    if not isinstance(message, dict):
        return None
    keep = {"request": "user-prompt", "response": "text"}.get(str(message.get("kind")))
    parts = []
    for part in message.get("parts", []):
        if not isinstance(part, dict) or part.get("part_kind") != keep:
            continue
        content = part.get("content")
        if isinstance(content, list):  # a prompt with files: its text only
            content = "\n".join(c for c in content if isinstance(c, str))
        parts.append({**part, "content": content})
    return {**message, "parts": parts} if parts else None


async def _live(token: str) -> SharedSnapshot:
    hashed = token_hash(token)
    async with system_transaction() as conn:
        org_id = await share_store.share_org(conn, hashed)
    if org_id is None:
        raise _missing()
    async with org_transaction(org_id) as conn:
        share = await share_store.live_share(conn, hashed, retention.clock())
    if share is None:
        raise _missing()
    return share


def _may_see(share: SharedSnapshot, viewer: Principal | None) -> bool:
    if share.row.audience == "public" and share.row.classification == "standard":
        return True
    return viewer is not None and viewer.org_id == share.org_id


async def visible_share(token: str, viewer: Principal | None) -> SharedSnapshot:
    """The live share behind the token if the viewer may see it; 404 `share_not_found` otherwise, whatever the
    reason."""
    share = await _live(token)
    if not _may_see(share, viewer):
        raise _missing()
    return share


async def view_share(token: str, viewer: Principal | None) -> dict[str, Any]:
    """The snapshot behind the token, for a viewer allowed to see it (404 otherwise, whatever the reason), its
    answers with their citations."""
    share = await visible_share(token, viewer)
    async with org_transaction(share.org_id) as conn:
        await share_store.audit(conn, share.org_id, share.row, _same_org_actor(share, viewer), "viewed")
    row = share.row
    return {
        "id": row.id,
        "title": row.title,
        "classification": row.classification,
        "audience": row.audience,
        "created_at": row.created_at,
        "expires_at": row.expires_at,
        "show_tools": row.show_tools,
        "items": with_citations(share.snapshot),
    }


def _same_org_actor(share: SharedSnapshot, viewer: Principal | None) -> UUID | None:
    """The viewer's id for the org's audit, only when the viewer is of that org (no foreign ids in it)."""
    return viewer.user_id if viewer is not None and viewer.org_id == share.org_id else None


async def continue_share(token: str, viewer: Principal) -> store.ChatRow:
    """Copy the snapshot's text into a new chat of the viewer's; the chat."""
    share = await visible_share(token, viewer)
    async with org_transaction(viewer.org_id) as conn:
        chat = await store.insert_chat(
            conn, viewer.org_id, viewer.user_id, share.row.title[:190] + " (copy)", share.row.classification
        )
        await store.raise_labels(conn, chat.id, Labels(content_tier=share.content_tier, untrusted=share.untrusted))
        if share.messages:
            await message_store.append_messages(conn, viewer.org_id, chat.id, None, share.messages)
    async with org_transaction(share.org_id) as conn:
        await share_store.audit(conn, share.org_id, share.row, _same_org_actor(share, viewer), "continued")
    return chat


async def my_shares(principal: Principal, limit: int = 100) -> list[ShareRow]:
    async with org_transaction(principal.org_id) as conn:
        return await share_store.list_of_user(conn, principal.user_id, limit)


async def revoke_share(principal: Principal, share_id: UUID) -> None:
    async with org_transaction(principal.org_id) as conn:
        row = await share_store.revoke(conn, share_id, principal.user_id)
        if row is None:
            raise _missing()
        await share_store.audit(conn, principal.org_id, row, principal.user_id, "revoked")


async def audit_trail(principal: Principal, limit: int) -> list[share_store.ShareAuditRow]:
    async with org_transaction(principal.org_id) as conn:
        return await share_store.audit_trail(conn, limit)
