"""`ask_user` questions for the API (and `/v1/responses`): list the caller's, and answer one. A question is a row of
the run's wait beside its approvals (`approvals/store.py`, `kind = 'question'`), so answering it resumes the run the
way a decision does (`approval_decisions.resume_if_decided`): inline with a new drive, durable through the token of
the Task waiting on it. Only the person the run acts for answers; anyone else gets the 404 of a missing question."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal
from uuid import UUID

from personal_agent.approvals import store
from personal_agent.approvals.question_forms import AnswerMismatch, check_answer
from personal_agent.db import org_transaction
from personal_agent.errors import Conflict, InvalidInput, NotFound
from personal_agent.identity.principal import Principal
from personal_agent.lifecycle.approval_decisions import resume_if_decided
from personal_agent.runs import store as run_store

QuestionStatus = Literal["pending", "answered", "expired"]


async def list_questions(principal: Principal, status: QuestionStatus | None) -> list[store.ApprovalRow]:
    """The caller's questions (of runs acting for them), newest first."""
    async with org_transaction(principal.org_id) as conn:
        return await store.list_rows(conn, principal.user_id, status, kind="question")


async def answer_question(principal: Principal, question_id: UUID, answer: Any) -> store.ApprovalRow:
    """Answer the caller's pending question with `answer`, checked against its form (422 `answer_invalid`; nothing
    is stored), and resume the run once nothing of its wait is pending. 409 `question_expired` when its wait timed
    out or its run ended, `question_already_answered` when answered."""
    row, state = await _lock_pending(principal, question_id)
    if state != "pending":
        if state == "expired":  # nothing else resolves an inline run's wait that timed out: it goes on here
            await resume_if_decided(principal.org_id, row.run_id, row.checkpoint_seq)
        raise _closed("expired")
    try:
        value = check_answer(row.args, answer)
    except AnswerMismatch as exc:
        raise InvalidInput(f"the answer does not fit the question: {exc}", code="answer_invalid") from exc
    assert principal.user_id is not None  # `_lock_pending` found the question the caller's
    async with org_transaction(principal.org_id) as conn:
        updated = await store.record_answer(conn, question_id, value, principal.user_id)
        if updated is None:  # another answer, the wait's timeout or the run's end came first
            current = await store.lock(conn, question_id)
            raise _closed(current.status if current else "expired")
        await store.audit(conn, principal.org_id, question_id, principal.user_id, "answered", {})
    await resume_if_decided(principal.org_id, row.run_id, row.checkpoint_seq)
    return updated


async def _lock_pending(
    principal: Principal, question_id: UUID
) -> tuple[store.LockedApproval, Literal["pending", "expired", "run_ended"]]:
    """The caller's pending question (404 otherwise, 409 when closed) and its state: still `pending`, or just
    closed here because its wait timed out (`expired`: defaults taken) or its run ended (`run_ended`)."""
    async with org_transaction(principal.org_id) as conn:
        row = await store.lock(conn, question_id)
        if row is None or row.kind != "question" or principal.user_id is None or row.owner_id != principal.user_id:
            raise NotFound("question not found", code="question_not_found")
        if row.status != "pending":
            raise _closed(row.status)
        run = await run_store.get_run(conn, row.run_id)
        if run is None or run.status in run_store.TERMINAL:
            await store.expire_for_ended_run(conn, principal.org_id, row.run_id, run.status if run else "deleted")
            return row, "run_ended"
        if row.expires_at <= datetime.now(UTC):
            await store.take_default_answers(conn, principal.org_id, row.run_id)
            await store.resolve_pending(conn, principal.org_id, row.run_id, "expired", store.EXPIRED_REASON, {})
            return row, "expired"
    return row, "pending"


def _closed(status: str) -> Conflict:
    if status == "answered":
        return Conflict("this question was already answered", code="question_already_answered")
    return Conflict("this question can no longer be answered: it expired or its run ended", code="question_expired")
