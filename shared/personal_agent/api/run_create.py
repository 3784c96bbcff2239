"""The body of a new run in a chat: `POST /chats/{chat_id}/runs` (202, events at its URL) and
`POST /chats/{chat_id}/runs/stream` (its events in the response) take the same one."""

from __future__ import annotations

from typing import Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, model_validator

from personal_agent.identity.principal import Principal
from personal_agent.lifecycle.launch import LaunchRequest


class RunCreate(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"message": "Hello!"}, {"message": "Summarise this chat", "mode": "inline"}]}
    )

    message: str = Field(
        "", description="the user's turn (at most 32,000 characters: 413 `message_too_long`); none with `regenerate`"
    )
    model: str | None = None
    mode: Literal["inline", "durable", "auto"] = "auto"
    tools: list[str] | None = Field(
        None, max_length=50, description="tool names from `GET /api/v1/tools`; null: the default tools"
    )
    attachments: list[UUID] = Field(
        default_factory=list,
        max_length=8,
        description="ids from `POST /api/v1/chats/{chat_id}/attachments`, uploaded; an image needs a `vision` model"
        " (422 `model_lacks_vision` / `no_vision_model`)",
    )
    parent_message_id: int | None = Field(
        None,
        description="the message the turn continues from (`message_id` of a transcript item): an answer, to branch"
        " there; null to start the chat over (editing its first message); omitted: the chat's latest message."
        " With `regenerate`, the user message whose answer is written again (a sibling of the old one)."
        " 404 `message_not_found`, 422 `invalid_parent`",
    )
    regenerate: bool = Field(False, description="answer the user message `parent_message_id` again")
    agent: str | None = Field(
        None, pattern=r"^[a-z0-9-]{2,64}$", description="run this agent (its slug) instead of the chat's agent"
    )
    agent_version: int | None = Field(
        None, ge=1, le=1_000_000, description="run this version of the agent (a draft to try, unpublished)"
    )

    @model_validator(mode="after")
    def _message_unless_regenerating(self) -> RunCreate:
        if not self.regenerate and "message" not in self.model_fields_set:
            raise ValueError("`message` is required (only a regenerate sends none)")
        return self

    def launch_request(self, principal: Principal, chat_id: UUID) -> LaunchRequest:
        """The launch of this turn in `chat_id`; the chat must be the caller's (checked in the launch's one
        transaction)."""
        return LaunchRequest(
            org_id=principal.org_id,
            user_id=principal.user_id,
            chat_id=chat_id,
            message=self.message,
            model=self.model,
            mode=self.mode,
            tools=tuple(self.tools) if self.tools is not None else None,
            attachments=tuple(self.attachments),
            parent_message_id=self.parent_message_id if "parent_message_id" in self.model_fields_set else "latest",
            regenerate=self.regenerate,
            owned_chat=True,
            agent=self._agent(),
        )

    def _agent(self) -> str | None:
        """`slug`, `slug@version` or `@version` (the chat's agent at that version): `lifecycle.agent_launch`."""
        if self.agent_version is None:
            return self.agent
        return f"{self.agent or ''}@{self.agent_version}"
