"""Chats: CRUD under RLS and the transcript view of their pydantic-ai messages."""
