"""Postgres access: one pool per process, one helper that scopes a transaction to an org (RLS)."""

from personal_agent.db.pool import close_pool, get_pool, org_transaction, system_transaction

__all__ = ["close_pool", "get_pool", "org_transaction", "system_transaction"]
