"""A user's own preferences in an org (`user_settings`). Every call runs in an org transaction (RLS)."""

from __future__ import annotations

from uuid import UUID

from personal_agent.db import org_transaction


async def default_model(org_id: UUID, user_id: UUID) -> str | None:
    """The user's saved default model (None when nothing is saved)."""
    async with org_transaction(org_id) as conn:
        cur = await conn.execute("SELECT default_model FROM user_settings WHERE user_id = %s", [user_id])
        row = await cur.fetchone()
    return row["default_model"] if row else None


async def put_default_model(org_id: UUID, user_id: UUID, model: str | None) -> None:
    async with org_transaction(org_id) as conn:
        await conn.execute(
            "INSERT INTO user_settings (org_id, user_id, default_model) VALUES (%s, %s, %s)"
            " ON CONFLICT (org_id, user_id) DO UPDATE SET default_model = EXCLUDED.default_model, updated_at = now()",
            [org_id, user_id, model],
        )
