"""A dataset's cases one at a time (org admins): add one (written by hand, or a real conversation's turn with the
files it was sent with), change or delete one, delete the dataset; and a case's files, uploaded like a chat's
attachments (201 with a presigned POST), fetched (a presigned GET) and removed. Another org's dataset, case or file
is a 404 like a missing one."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field, model_validator

from personal_agent.api.attachments import AttachmentDownload, AttachmentIn, AttachmentUpload
from personal_agent.api.deps import OrgAdmin
from personal_agent.api.evals import CaseFileOut, CaseMessage, CaseOut, DatasetOut
from personal_agent.evals import case_files, datasets

router = APIRouter(prefix="/api/v1/evals", tags=["evals"])


class CaseAdd(BaseModel):
    """Either `run_id` (a real conversation's turn) or the case itself (`input` and the rest)."""

    run_id: UUID | None = Field(None, description="take the run's question, answer (the reference) and files")
    input: str | list[CaseMessage] | None = Field(
        None, description="the prompt, or a conversation `[{role, content}]` ending with a user's message"
    )
    expected: str | None = Field(None, max_length=100_000)
    criteria: str | None = Field(None, max_length=4000)
    tags: list[str] = Field(default_factory=list, max_length=20)

    @model_validator(mode="after")
    def _one_source(self) -> CaseAdd:
        if (self.run_id is None) == (self.input is None):
            raise ValueError("give either `run_id` or `input`")
        return self


class CasePatch(BaseModel):
    """The fields to change; a field left out stays, `null` clears `expected` or `criteria`."""

    input: str | list[CaseMessage] | None = Field(
        None, description="the prompt, or a conversation `[{role, content}]` ending with a user's message"
    )
    expected: str | None = Field(None, max_length=100_000)
    criteria: str | None = Field(None, max_length=4000)
    tags: list[str] | None = Field(None, max_length=20)


class CaseFileCreated(CaseFileOut):
    upload: AttachmentUpload = Field(description="a presigned POST: multipart form with `fields`, then `file`")


_CASE_404: dict[int | str, dict[str, Any]] = {
    404: {"description": "`dataset_not_found` or `case_not_found`: none such in the caller's org"}
}


@router.post(
    "/datasets/{dataset_id}/cases",
    operation_id="add_eval_case_from_run",
    response_model=DatasetOut,
    responses=_CASE_404,
)
async def add_case(dataset_id: UUID, body: CaseAdd, principal: OrgAdmin) -> dict[str, Any]:
    """Add a case: a real conversation's turn (`run_id`: the run's question as the input, its answer as the
    reference, the files it was sent with as the case's files), or one written by hand (`input`, ...)."""
    if body.run_id is not None:
        return await datasets.add_from_run(principal, dataset_id, body.run_id)
    return await datasets.add_case(principal, dataset_id, body.model_dump(exclude={"run_id"}))


@router.patch(
    "/datasets/{dataset_id}/cases/{case_id}",
    operation_id="update_eval_case",
    response_model=CaseOut,
    responses=_CASE_404,
)
async def update_case(dataset_id: UUID, case_id: UUID, body: CasePatch, principal: OrgAdmin) -> dict[str, Any]:
    """Change a case's input, expected answer, criteria or tags; 422 `invalid_case` for an empty input."""
    changes = body.model_dump(exclude_unset=True)
    if "input" in changes and changes["input"] is None:
        changes["input"] = ""  # refused by the case's check like an empty one
    return await datasets.update_case(principal, dataset_id, case_id, changes)


@router.delete("/datasets/{dataset_id}/cases/{case_id}", status_code=204, operation_id="delete_eval_case")
async def delete_case(dataset_id: UUID, case_id: UUID, principal: OrgAdmin) -> Response:
    """Delete a case with its files (its results in past evaluations go too)."""
    await datasets.delete_case(principal, dataset_id, case_id)
    return Response(status_code=204)


@router.delete("/datasets/{dataset_id}", status_code=204, operation_id="delete_eval_dataset")
async def delete_dataset(dataset_id: UUID, principal: OrgAdmin) -> Response:
    """Delete a dataset with its cases, their files and its evaluations."""
    await datasets.delete_dataset(principal, dataset_id)
    return Response(status_code=204)


@router.post(
    "/datasets/{dataset_id}/cases/{case_id}/files",
    status_code=201,
    operation_id="create_eval_case_file",
    response_model=CaseFileCreated,
    responses=_CASE_404,
)
async def create_case_file(dataset_id: UUID, case_id: UUID, body: AttachmentIn, principal: OrgAdmin) -> dict[str, Any]:
    """Register a file of the case (the types and sizes a chat accepts); the browser then uploads it to `upload`."""
    return await case_files.create(principal, dataset_id, case_id, body.filename, body.content_type, body.size)


@router.get(
    "/datasets/{dataset_id}/cases/{case_id}/files/{file_id}/download",
    operation_id="download_eval_case_file",
    response_model=AttachmentDownload,
    responses={404: {"description": "`case_file_not_found`"}, 409: {"description": "`case_file_not_uploaded`"}},
)
async def download_case_file(dataset_id: UUID, case_id: UUID, file_id: UUID, principal: OrgAdmin) -> dict[str, Any]:
    return await case_files.download(principal, dataset_id, case_id, file_id)


@router.delete(
    "/datasets/{dataset_id}/cases/{case_id}/files/{file_id}", status_code=204, operation_id="delete_eval_case_file"
)
async def delete_case_file(dataset_id: UUID, case_id: UUID, file_id: UUID, principal: OrgAdmin) -> Response:
    await case_files.delete(principal, dataset_id, case_id, file_id)
    return Response(status_code=204)
