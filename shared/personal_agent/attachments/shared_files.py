"""The files of a shared chat, opened through its link (issue 38): a file the snapshot shows (a user turn of it names
the attachment) is handed to whoever may see the share, as a short-lived presigned GET, the same as its owner gets.
Who may is the share's rule (`chats.shares`): its org's signed-in members, anyone for a public link; a revoked or
expired link, a viewer outside the audience and a file the snapshot does not show are all 404."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from personal_agent.attachments import service, store
from personal_agent.chats import shares
from personal_agent.db import org_transaction
from personal_agent.errors import NotFound
from personal_agent.identity.principal import Principal


def _shown(snapshot: list[dict[str, Any]]) -> set[str]:
    """The ids of the files the snapshot's user turns carry."""
    return {
        str(f.get("id"))
        for item in snapshot
        if item.get("role") == "user"
        for f in item.get("attachments") or []
        if isinstance(f, dict)
    }


async def download(token: str, attachment_id: UUID, viewer: Principal | None) -> dict[str, Any]:
    """Where a viewer of the share fetches one of its files from (`service.download`'s answer)."""
    share = await shares.visible_share(token, viewer)
    if str(attachment_id) not in _shown(share.snapshot):
        raise NotFound("attachment not found", code="attachment_not_found")
    async with org_transaction(share.org_id) as conn:  # read as the sharer, who may read every file of the chat
        row = await store.get_in_chat(conn, attachment_id, share.row.chat_id, share.user_id)
    if row is None:
        raise NotFound("attachment not found", code="attachment_not_found")
    return await service.signed_download(row)
