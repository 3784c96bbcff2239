"""A run's new messages go into the chat as one chain: three or more in two statements (ids drawn first), the same
tree as one insert each (ids ascending in chain order, each the parent of the next, the chat marked updated)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import httpx

from personal_agent.chats import message_store
from personal_agent.chats import store as chat_store
from personal_agent.db import org_transaction
from tests.auth import auth_headers


def _turn(kind: str, text: str) -> dict[str, Any]:
    part = "user-prompt" if kind == "request" else "text"
    return {"kind": kind, "parts": [{"part_kind": part, "content": text}]}


async def test_a_long_chain_is_the_same_tree_as_one_by_one(http: httpx.AsyncClient, make_tenant: Any) -> None:
    tenant = make_tenant()
    made = await http.post("/api/v1/chats", json={"title": "chain"}, headers=auth_headers(tenant))
    chat_id = UUID(made.raise_for_status().json()["id"])
    first = [_turn("request", "q1"), _turn("response", "a1")]  # two: one insert each
    rest = [_turn("request", f"r{i}") if i % 2 else _turn("response", f"s{i}") for i in range(5)]  # five: the chain
    async with org_transaction(tenant.org_id) as conn:
        tip = await message_store.append_messages(conn, tenant.org_id, chat_id, None, first)
        before = await message_store.latest_message_id(conn, chat_id)
        last = await message_store.append_messages(conn, tenant.org_id, chat_id, None, rest, tip)
        branch = await message_store.branch_messages(conn, chat_id, last)
        latest = await message_store.latest_message_id(conn, chat_id)
        chat = await chat_store.get_owned(conn, chat_id, tenant.user_id)
    assert before == tip
    assert chat is not None and chat.updated_at > chat.created_at  # marked updated
    assert last is not None and latest == last
    assert [m["parts"][0]["content"] for m in branch] == ["q1", "a1", "s0", "r1", "s2", "r3", "s4"]
    async with org_transaction(tenant.org_id) as conn:
        chain: list[int] = []
        node = await message_store.message_node(conn, chat_id, last)
        while node is not None:
            chain.append(node.id)
            node = await message_store.message_node(conn, chat_id, node.parent_id) if node.parent_id else None
    assert len(chain) == 7 and chain == sorted(chain, reverse=True)  # each the parent of the next, ids ascending
    assert chain[-2] == tip  # the chain hangs below the earlier turn
