"""What a run in a project's chat takes from the project at launch: its instructions (added to the agent's, as
instructions) and a reference in the RunSpec (its memory scope and collection); and its default agent, for a chat
bound to none (`lifecycle.agent_launch`)."""

from __future__ import annotations

from uuid import UUID

from personal_agent.agents import store as agent_store
from personal_agent.db.pool import Conn
from personal_agent.projects import store
from personal_agent.spec.project_ref import ProjectRef


async def for_launch(conn: Conn, project_id: UUID | None) -> store.RunProject | None:
    """The chat's project (None: the chat is in none)."""
    return await store.for_run(conn, project_id) if project_id is not None else None


async def default_agent(conn: Conn, chat_id: UUID, user_id: UUID | None) -> UUID | None:
    """The project's default agent for a chat bound to none, if `user_id` may see it (a member who may not, such as
    one who is not the owner of a private agent, gets the built-in assistant, with the project's instructions)."""
    agent_id = await store.default_agent(conn, chat_id)
    if agent_id is None or await agent_store.get_visible(conn, agent_id, user_id) is None:
        return None
    return agent_id


def instructions(base: str, project: store.RunProject | None) -> str:
    """The agent's instructions, followed by the project's when it has some."""
    if project is None or not project.instructions:
        return base
    header = f"This conversation is part of the project {project.name!r}. The project's instructions:"
    return f"{base}\n\n{header}\n{project.instructions}"


def ref(project: store.RunProject | None) -> ProjectRef | None:
    if project is None:
        return None
    return ProjectRef(id=project.id, name=project.name, collection_id=project.collection_id)
