"""Questions a run asked its person (`ask_user`): the caller's, and answering one.

`answer` is any JSON value; it must fit the question's form (one of its `choices`, a value of its `schema`, or
non-empty text): 422 `answer_invalid` otherwise, and the run keeps waiting. 409 `question_already_answered` or
`question_expired` once it cannot be answered; 404 `question_not_found` for anyone but the person it asks."""

from __future__ import annotations

from typing import Any, Literal
from uuid import UUID

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.approvals.store import ApprovalRow
from personal_agent.lifecycle import question_answers

router = APIRouter(prefix="/api/v1/questions", tags=["questions"])


class AnswerIn(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"answer": "blue"}, {"answer": {"amount": 250, "currency": "EUR"}}]}
    )

    answer: Any = Field(description="the answer: one of the choices, a value of the schema, or text")


class Question(BaseModel):
    id: str
    run_id: str
    chat_id: str | None
    tool_call_id: str
    question: str
    choices: list[str] | None = None
    form_schema: dict[str, Any] | None = Field(None, alias="schema", description="the JSON Schema the answer fits")
    default: Any = None
    status: Literal["pending", "answered", "expired"]
    answer: Any = None
    reason: str | None
    answered_at: str | None
    expires_at: str
    created_at: str

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)


class QuestionList(BaseModel):
    items: list[Question]


def question_view(row: ApprovalRow) -> dict[str, Any]:
    form = row.args or {}
    return {
        "id": str(row.id),
        "run_id": str(row.run_id),
        "chat_id": str(row.chat_id) if row.chat_id else None,
        "tool_call_id": row.tool_call_id,
        "question": str(form.get("question", "")),
        "choices": form.get("choices"),
        "schema": form.get("schema"),
        "default": form.get("default"),
        "status": row.status,
        "answer": row.answer,
        "reason": row.reason,
        "answered_at": row.decided_at.isoformat() if row.decided_at else None,
        "expires_at": row.expires_at.isoformat(),
        "created_at": row.created_at.isoformat(),
    }


@router.get("", operation_id="list_questions", response_model=QuestionList, response_model_by_alias=True)
async def list_questions(
    principal: CurrentPrincipal, status: Literal["pending", "answered", "expired"] | None = "pending"
) -> dict[str, Any]:
    """Questions runs acting for the caller asked them, newest first (`status`: pending by default)."""
    return {"items": [question_view(r) for r in await question_answers.list_questions(principal, status)]}


@router.post("/{question_id}", operation_id="answer_question", response_model=Question, response_model_by_alias=True)
async def answer_question(question_id: UUID, body: AnswerIn, principal: CurrentPrincipal) -> dict[str, Any]:
    """Answer a pending question; the run goes on with the answer."""
    row = await question_answers.answer_question(principal, question_id, body.answer)
    return question_view(row)
