"""Import of another assistant's export into a person's chats (issue 38): ChatGPT's `conversations.json` (each
conversation a tree, `mapping` of nodes with `parent`, so its branches stay branches) and Claude's
`conversations.json` (each conversation a list of `chat_messages`). Only the user's and the assistant's text comes
in (no system prompts, tool calls or files); each message becomes a pydantic-ai message, so the chat can go on.
An imported chat is `standard` and labelled untrusted (its text came from outside)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from personal_agent.chats import message_store, store
from personal_agent.db import org_transaction
from personal_agent.errors import InvalidInput
from personal_agent.identity.principal import Principal
from personal_agent.spec.labels import Labels

MAX_CONVERSATIONS = 2000


@dataclass(frozen=True)
class Node:
    key: str
    parent: str | None
    role: str  # "user" | "assistant"
    text: str


def _bad(why: str) -> InvalidInput:
    return InvalidInput(f"not a valid export: {why}", code="import_invalid")


def _chatgpt_text(message: dict[str, Any]) -> str:
    content = message.get("content") or {}
    parts = content.get("parts") if isinstance(content, dict) else None
    return "\n".join(p for p in parts or [] if isinstance(p, str)).strip()


def chatgpt_nodes(conversation: dict[str, Any]) -> list[Node]:
    """The user and assistant messages of a ChatGPT conversation, parents first; a skipped node's (system, tool,
    empty) children hang from its nearest kept ancestor."""
    mapping = conversation.get("mapping")
    if not isinstance(mapping, dict):
        raise _bad("a conversation has no `mapping`")
    nodes: list[Node] = []
    stack = [(key, None) for key, node in mapping.items() if isinstance(node, dict) and not node.get("parent")]
    while stack:
        key, above = stack.pop()
        node = mapping.get(key) or {}
        message = node.get("message") or {}
        role = (message.get("author") or {}).get("role") if isinstance(message, dict) else None
        text = _chatgpt_text(message) if isinstance(message, dict) else ""
        here = above
        if role in ("user", "assistant") and text:
            nodes.append(Node(key, above, role, text))
            here = key
        stack.extend((child, here) for child in reversed(node.get("children") or []) if child in mapping)
    return nodes


def claude_nodes(conversation: dict[str, Any]) -> list[Node]:
    messages = conversation.get("chat_messages")
    if not isinstance(messages, list):
        raise _bad("a conversation has no `chat_messages`")
    nodes: list[Node] = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        text = message.get("text") or "\n".join(
            c.get("text", "") for c in message.get("content") or [] if isinstance(c, dict) and c.get("type") == "text"
        )
        role = {"human": "user", "assistant": "assistant"}.get(str(message.get("sender")))
        if role and text.strip():
            nodes.append(Node(str(index), nodes[-1].key if nodes else None, role, text.strip()))
    return nodes


def _message(node: Node) -> dict[str, Any]:
    from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, ModelResponse, TextPart, UserPromptPart

    built = (
        ModelRequest(parts=[UserPromptPart(content=node.text)])
        if node.role == "user"
        else ModelResponse(parts=[TextPart(content=node.text)], model_name="imported")
    )
    return dict(ModelMessagesTypeAdapter.dump_python([built], mode="json")[0])


async def import_conversations(principal: Principal, kind: str, data: Any) -> list[UUID]:
    """Each conversation as a new chat of the caller's; the chats' ids."""
    if not isinstance(data, list):
        raise _bad("expected a list of conversations (conversations.json)")
    if len(data) > MAX_CONVERSATIONS:
        raise InvalidInput(f"at most {MAX_CONVERSATIONS} conversations at once", code="import_too_large", status=413)
    parse = chatgpt_nodes if kind == "chatgpt" else claude_nodes
    parsed = [
        (str(c.get("title") or c.get("name") or "Imported chat")[:200], parse(c)) for c in data if isinstance(c, dict)
    ]
    ids: list[UUID] = []
    async with org_transaction(principal.org_id) as conn:  # all or nothing
        for title, nodes in parsed:
            chat = await store.insert_chat(conn, principal.org_id, principal.user_id, title or "Imported chat")
            await store.raise_labels(conn, chat.id, Labels(untrusted=True))
            stored: dict[str, int | None] = {}
            for node in nodes:
                parent = stored.get(node.parent) if node.parent else None
                stored[node.key] = await message_store.append_messages(
                    conn, principal.org_id, chat.id, None, [_message(node)], parent
                )
            ids.append(chat.id)
    return ids
