"""Evaluations (org admins): datasets of cases (a list, JSONL, or a real conversation's question and answer; one
case at a time and the cases' files in `api/eval_cases.py`), evaluation runs of an agent version or a model over a
dataset (202, then its status and per-case results), and two evaluation runs compared side by side."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Annotated, Any, Literal
from uuid import UUID

from fastapi import APIRouter, Path, Query
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, model_validator

from personal_agent.api.deps import OrgAdmin
from personal_agent.evals import datasets, reports, sampling_admin
from personal_agent.evals.run_store import NewEvalRun

router = APIRouter(prefix="/api/v1/evals", tags=["evals"])


class CaseMessage(BaseModel):
    role: Literal["user", "assistant"]
    content: str = Field(min_length=1, max_length=100_000)


# a prompt, or a conversation ending with a user's message (the earlier turns the case run's history)
CaseInput = Annotated[str | list[CaseMessage], Field(description="a prompt, or `[{role, content}]`, a user's last")]


class CaseIn(BaseModel):
    input: CaseInput
    expected: str | None = Field(None, max_length=100_000)
    criteria: str | None = Field(None, max_length=4000)
    tags: list[str] = Field(default_factory=list, max_length=20)


class DatasetIn(BaseModel):
    name: str = Field(min_length=1, max_length=200)
    cases: list[CaseIn] = Field(default_factory=list)
    jsonl: str | None = Field(None, description="cases as JSONL, one `{input, expected?, criteria?, tags?}` a line")


class CaseFileOut(BaseModel):
    id: UUID
    filename: str
    content_type: str
    size: int
    created_at: datetime


class CaseOut(BaseModel):
    id: UUID
    position: int
    input: CaseInput
    expected: str | None
    criteria: str | None
    tags: list[str]
    source_run_id: UUID | None
    content_tier: int = Field(
        0,
        description="the tier of what its source run's chat held (0 when typed or imported): its run needs a model"
        " of at least this tier",
    )
    untrusted: bool = Field(False, description="its text came from a run where untrusted content had entered")
    files: list[CaseFileOut] = Field(description="files the case's run gets as its attachments")


class DatasetOut(BaseModel):
    id: UUID
    name: str
    created_at: datetime
    cases: int = Field(description="how many cases it has")


class DatasetDetail(DatasetOut):
    items: list[CaseOut]


class DatasetList(BaseModel):
    items: list[DatasetOut]


class Scorer(BaseModel):
    kind: str = Field(
        description="exact, contains, regex, json_schema, tool_called, passage_cited, latency, cost or judge"
    )
    tool: str | None = Field(None, description="tool_called: the tool the run must call")
    args: dict[str, Any] | None = Field(None, description="tool_called: arguments the call must include")
    max_ms: int | None = Field(None, description="latency: the most a case may take")
    max_usd: float | None = Field(None, description="cost: the most a case may cost")
    pattern: str | None = Field(None, description="regex: the pattern (else the case's expected answer)")
    document: str | None = Field(
        None, max_length=300, description="passage_cited: the document (file name) whose passage the answer cites"
    )
    text: str | None = Field(None, max_length=1000, description="passage_cited: a phrase the cited passage holds")
    schema_: dict[str, Any] | None = Field(None, alias="schema", description="json_schema: the schema")
    rubric: str | None = Field(None, max_length=4000, description="judge: criteria for cases without their own")
    model: str | None = Field(None, description="judge: a model of the org (default: the org's routing model)")


class EvalRunIn(BaseModel):
    dataset: UUID
    agent: str | None = Field(None, max_length=200, description="an agent's slug")
    version: int | None = Field(None, ge=1)
    model: str | None = Field(None, max_length=200)
    budget_usd: Decimal = Field(gt=0, le=10_000)
    scorers: list[Scorer] = Field(min_length=1, max_length=8)

    @model_validator(mode="after")
    def _version_needs_agent(self) -> EvalRunIn:
        if self.version is not None and self.agent is None:
            raise ValueError("a `version` is of an `agent`")
        return self


class EvalAccepted(BaseModel):
    id: UUID
    status: str
    status_url: str


class EvalSummary(BaseModel):
    score: float | None = Field(description="the mean score (0 to 1) over the cases done")
    cost_usd: float
    latency_ms_p50: int | None
    cases_done: int
    cases_total: int


class EvalCase(BaseModel):
    case_id: UUID
    position: int
    input: str
    run_id: UUID | None
    status: str
    answer: str
    scores: dict[str, float]
    score: float
    cost_usd: float
    latency_ms: int
    notes: dict[str, str] = Field(
        default_factory=dict,
        description="why a scorer gave what it gave, by scorer: `judge_refused: <code>: <why>` when the launch"
        " refused the judge (its model below the tier the case's data needs, the org's floor, the budget)",
    )


class EvalRunHead(BaseModel):
    id: UUID
    dataset_id: UUID
    agent: str | None
    version: int | None
    model: str | None
    budget_usd: float
    scorers: list[dict[str, Any]]
    status: str = Field(description="queued, running, succeeded, failed or budget_exhausted")
    error: dict[str, Any] | None
    created_at: datetime
    finished_at: datetime | None


class EvalRunOut(EvalRunHead):
    summary: EvalSummary
    cases: list[EvalCase]


class EvalRunList(BaseModel):
    items: list[EvalRunHead]


class CompareSide(BaseModel):
    score: float
    cost_usd: float
    latency_ms: int
    answer: str
    status: str
    run_id: UUID | None


class CompareCase(BaseModel):
    case_id: UUID
    position: int
    input: str
    a: CompareSide
    b: CompareSide | None
    changed: bool = Field(description="the two scores differ")


class CompareHead(BaseModel):
    id: UUID
    agent: str | None
    version: int | None
    model: str | None
    status: str
    summary: EvalSummary


class Comparison(BaseModel):
    a: CompareHead
    b: CompareHead
    cases: list[CompareCase]
    changed: int


@router.post("/datasets", operation_id="create_eval_dataset", response_model=DatasetOut, status_code=201)
async def create_dataset(body: DatasetIn, principal: OrgAdmin) -> dict[str, Any]:
    """A dataset from `cases` and/or `jsonl`."""
    raw = [case.model_dump() for case in body.cases]
    if body.jsonl:
        raw += datasets.parse_jsonl(body.jsonl)
    return await datasets.create(principal, body.name, raw)


@router.get("/datasets", operation_id="list_eval_datasets", response_model=DatasetList)
async def list_datasets(principal: OrgAdmin) -> dict[str, Any]:
    return {"items": await datasets.listed(principal)}


@router.get("/datasets/{dataset_id}", operation_id="get_eval_dataset", response_model=DatasetDetail)
async def get_dataset(dataset_id: UUID, principal: OrgAdmin) -> dict[str, Any]:
    return await datasets.detail(principal, dataset_id)


@router.post("/runs", operation_id="start_eval_run", response_model=EvalAccepted, status_code=202)
async def start_eval_run(body: EvalRunIn, principal: OrgAdmin) -> JSONResponse:
    """Run the agent version (or model) over the dataset's cases, each a normal metered run, within `budget_usd`."""
    scorers = [s.model_dump(by_alias=True, exclude_none=True) for s in body.scorers]
    new = NewEvalRun(body.dataset, body.agent, body.version, body.model, body.budget_usd, scorers)
    accepted = await reports.start(principal, new)
    return JSONResponse(EvalAccepted(**accepted).model_dump(mode="json"), status_code=202)


@router.get("/runs", operation_id="list_eval_runs", response_model=EvalRunList)
async def list_eval_runs(principal: OrgAdmin, limit: Annotated[int, Query(ge=1, le=200)] = 50) -> dict[str, Any]:
    return {"items": await reports.listed(principal, limit)}


@router.get("/runs/{eval_run_id}", operation_id="get_eval_run", response_model=EvalRunOut)
async def get_eval_run(eval_run_id: UUID, principal: OrgAdmin) -> dict[str, Any]:
    """Its status, a summary of the cases done, and each case's answer, scores, cost and latency."""
    return await reports.view(principal, eval_run_id)


@router.get("/compare", operation_id="compare_eval_runs", response_model=Comparison)
async def compare_eval_runs(a: UUID, b: UUID, principal: OrgAdmin) -> dict[str, Any]:
    """Two evaluation runs of one dataset side by side: per case and in total, and the cases that changed."""
    return await reports.compare(principal, a, b)


class SamplingIn(BaseModel):
    rate: float = Field(ge=0, le=1, description="the share of the agent's production runs judged (0: off)")
    rubric: str = Field("", max_length=4000, description="what the judge grades against (empty: a default)")
    model: str | None = Field(None, max_length=200, description="the judge's model (default: the run's routing model)")


class SamplingOut(BaseModel):
    agent_slug: str
    rate: float
    rubric: str
    model: str | None
    updated_at: datetime


class SamplingList(BaseModel):
    items: list[SamplingOut]


class DayScoreOut(BaseModel):
    agent_slug: str
    day: date
    sampled: int = Field(description="production runs sampled that day")
    scored: int = Field(description="of them, judged")
    mean_score: float | None = Field(description="the judge's mean score, 0 to 1")
    cost_usd: float = Field(description="what judging them cost")


class DayScoreList(BaseModel):
    items: list[DayScoreOut]


@router.put("/sampling/{slug}", operation_id="set_agent_sampling", response_model=SamplingOut)
async def set_agent_sampling(
    slug: Annotated[str, Path(pattern=r"^[a-z0-9-]{2,64}$")], body: SamplingIn, principal: OrgAdmin
) -> dict[str, Any]:
    """Sample a share of the agent's production runs into an LLM judge, from their next launch (0 turns it off)."""
    return await sampling_admin.set_sampling(principal, slug, body.rate, body.rubric, body.model)


@router.get("/sampling", operation_id="list_agent_sampling", response_model=SamplingList)
async def list_agent_sampling(principal: OrgAdmin) -> dict[str, Any]:
    """The org's agents with online sampling set."""
    return {"items": await sampling_admin.list_sampling(principal)}


@router.get("/online-scores", operation_id="list_online_scores", response_model=DayScoreList)
async def list_online_scores(principal: OrgAdmin, days: Annotated[int, Query(ge=1, le=366)] = 30) -> dict[str, Any]:
    """The judge's scores of sampled production runs, per agent and day (UTC), newest first."""
    return {"items": await sampling_admin.scores_by_day(principal, days)}
