"""The SQL of `knowledge_settings`: the org's embedding model."""

from __future__ import annotations

from uuid import UUID

from personal_agent.db.pool import Conn


async def embedding_model(conn: Conn) -> str | None:
    """The org's chosen embedding model, or None (the deployment's default applies)."""
    cur = await conn.execute("SELECT embedding_model FROM knowledge_settings")
    row = await cur.fetchone()
    return str(row["embedding_model"]) if row else None


async def set_embedding_model(conn: Conn, org_id: UUID, model: str) -> None:
    await conn.execute(
        """INSERT INTO knowledge_settings (org_id, embedding_model) VALUES (%s, %s)
           ON CONFLICT (org_id) DO UPDATE SET embedding_model = EXCLUDED.embedding_model, updated_at = now()""",
        [org_id, model],
    )
