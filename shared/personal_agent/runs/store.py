"""Run rows, their checkpoints and usage rows: the only SQL on `runs`, `run_checkpoints` and the writes of
`usage_records`. Every run status change goes through here. Every call runs inside an org transaction (RLS).
Over 300 lines because it is the one module with SQL on `runs` (one store per table), a run's sub-agent tree
(children, descendants, tree cost, the children's task token) included."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn, jsonb
from personal_agent.settings import get_settings
from personal_agent.spec.run_spec import RunMode, RunSpec

TERMINAL = ("succeeded", "failed", "cancelled", "skipped")
COLUMNS = (
    "id, org_id, chat_id, user_id, parent_run_id, status, mode, trigger_source, execution_arn, spec, model_name,"
    " error, cancel_requested, created_at, started_at, finished_at, model_chain, answered_model, routing,"
    " lease_owner, lease_expires_at, attempts, children_task_token"
)


@dataclass(frozen=True)
class RunRow:
    """A run's whole row (`COLUMNS`)."""

    id: UUID
    org_id: UUID
    chat_id: UUID | None
    user_id: UUID | None
    parent_run_id: UUID | None
    status: str
    mode: RunMode
    trigger_source: str
    execution_arn: str | None
    spec: dict[str, Any]  # the RunSpec's JSON
    model_name: str | None
    error: dict[str, Any] | None
    cancel_requested: bool
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    model_chain: list[str] | None
    answered_model: str | None
    routing: dict[str, Any] | None
    lease_owner: str | None
    lease_expires_at: datetime | None
    attempts: int
    children_task_token: str | None


@dataclass(frozen=True)
class UnattendedRun:
    """A pointer to an unfinished inline run the recovery sweep looks at (its content stays behind RLS)."""

    org_id: UUID
    run_id: UUID
    lease_owner: str | None
    expired: bool


@dataclass(frozen=True)
class ChildRun:
    """A sub-agent run as its parent's run view lists it, with the cost of its own tree so far."""

    id: UUID
    status: str
    mode: RunMode
    error: dict[str, Any] | None
    delegation: dict[str, Any] | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    cost_usd: Decimal


@dataclass(frozen=True)
class DescendantRun:
    """A run below another that has not ended (what the cancel cascade stops)."""

    id: UUID
    parent_run_id: UUID  # below another run: it has a parent
    status: str
    mode: RunMode
    execution_arn: str | None


@dataclass(frozen=True)
class RoundChild:
    """One child of a round of `delegate` calls: its status, error and spec, and the call that started it."""

    id: UUID
    status: str
    error: dict[str, Any] | None
    spec: dict[str, Any]  # the RunSpec's JSON
    tool_call_id: str  # every child of a round was started by one `delegate` call


@dataclass(frozen=True)
class Checkpoint:
    seq: int
    kind: str
    messages: list[Any]  # pydantic-ai message JSON (the whole history the run continues from)
    state: dict[str, Any]


async def insert_run(
    conn: Conn,
    spec: RunSpec,
    status: str = "queued",
    error: dict[str, Any] | None = None,
    lease_owner: str | None = None,
) -> RunRow:
    """Store a new run and return its row; one stored in a terminal status (a `skipped` run) is finished at once,
    with `error`. With `lease_owner`, the run is stored already leased to that driver (its first drive), as
    `take_lease` would have left it."""
    cur = await conn.execute(
        "INSERT INTO runs (id, org_id, chat_id, user_id, parent_run_id, status, mode, trigger_source, spec, model_name,"
        " model_chain, lease_owner, attempts, lease_expires_at, error, finished_at) VALUES (%s, %s, %s, %s, %s, %s,"
        " %s, %s, %s, %s, %s, %s, %s, now() + make_interval(secs => %s), %s, CASE WHEN %s THEN now() END) RETURNING "
        + COLUMNS,
        [
            spec.run_id,
            spec.org_id,
            spec.chat_id,
            spec.user_id,
            spec.parent_run_id,
            status,
            spec.mode,
            spec.trigger_source,
            jsonb(spec.model_dump(mode="json")),
            spec.model,
            jsonb([ref.id for ref in spec.model_chain] or [spec.model]),
            lease_owner,
            1 if lease_owner else 0,
            get_settings().run_lease_seconds,  # a driver must take the run within one lease, or recovery does
            jsonb(error) if error else None,
            status in TERMINAL,
        ],
    )
    row = await cur.fetchone()
    assert row is not None
    return RunRow(**row)


async def active_run_in_chat(conn: Conn, chat_id: UUID) -> UUID | None:
    """The run a person or a trigger started on the chat that has not ended yet (sub-agents aside), if any."""
    cur = await conn.execute(
        "SELECT id FROM runs WHERE chat_id = %s AND parent_run_id IS NULL"
        " AND status NOT IN ('succeeded', 'failed', 'cancelled', 'skipped') LIMIT 1",
        [chat_id],
    )
    row = await cur.fetchone()
    return UUID(str(row["id"])) if row else None


async def set_answered_model(conn: Conn, run_id: UUID, model_name: str | None) -> None:
    await conn.execute("UPDATE runs SET answered_model = %s WHERE id = %s", [model_name, run_id])


async def set_routing(conn: Conn, run_id: UUID, routing: dict[str, Any] | None, attempted: bool = True) -> None:
    """The routing model's classification; `{"failed": true}` when it was asked and gave none, NULL when the run
    has no routing model to ask (nothing failed: acting tools then ask a person, as without a classification)."""
    if routing is None and not attempted:
        await conn.execute("UPDATE runs SET routing = NULL WHERE id = %s", [run_id])
        return
    await conn.execute(
        "UPDATE runs SET routing = %s WHERE id = %s",
        [jsonb(routing if routing is not None else {"failed": True}), run_id],
    )


async def get_run(conn: Conn, run_id: UUID | str) -> RunRow | None:
    cur = await conn.execute(f"SELECT {COLUMNS} FROM runs WHERE id = %s", [str(run_id)])
    row = await cur.fetchone()
    return RunRow(**row) if row else None


def cancelled_or_ended(run: RunRow | None) -> bool:
    """Whether a (locked) run row is gone, ended, or has a cancel requested: nothing should wait on it."""
    return run is None or run.status in TERMINAL or run.cancel_requested


async def lock_run(conn: Conn, run_id: UUID) -> RunRow | None:
    """The run row, locked until the transaction ends (one decision resumes a waiting run once)."""
    cur = await conn.execute(f"SELECT {COLUMNS} FROM runs WHERE id = %s FOR UPDATE", [run_id])
    row = await cur.fetchone()
    return RunRow(**row) if row else None


async def set_execution_arn(conn: Conn, run_id: UUID, arn: str) -> None:
    await conn.execute("UPDATE runs SET execution_arn = %s WHERE id = %s", [arn, run_id])


async def mark_running(conn: Conn, run_id: UUID) -> bool | None:
    """Mark the run running unless it ended: its cancel flag as of now, or None when it had ended."""
    cur = await conn.execute(
        "UPDATE runs SET status = 'running', started_at = coalesce(started_at, now())"
        " WHERE id = %s AND status NOT IN ('succeeded', 'failed', 'cancelled', 'skipped') RETURNING cancel_requested",
        [run_id],
    )
    row = await cur.fetchone()
    return bool(row["cancel_requested"]) if row else None


async def finish_run(conn: Conn, run_id: UUID, status: str, error: dict[str, Any] | None = None) -> bool:
    """Move a run to a terminal status once; False when it already was terminal (a retry or a race)."""
    cur = await conn.execute(
        "UPDATE runs SET status = %s, error = %s, finished_at = now()"
        " WHERE id = %s AND status NOT IN ('succeeded', 'failed', 'cancelled', 'skipped') RETURNING id",
        [status, jsonb(error) if error else None, run_id],
    )
    return await cur.fetchone() is not None


async def take_lease(conn: Conn, run_id: UUID, owner: str, seconds: float) -> RunRow | None:
    """Become the run's one driver if nobody holds a live lease on it: the run's row as taken (`attempts`: the
    drives in a row so far, this one included), or None."""
    cur = await conn.execute(
        "UPDATE runs SET lease_owner = %s, lease_expires_at = now() + make_interval(secs => %s),"
        " attempts = attempts + 1 WHERE id = %s AND status IN ('queued', 'running')"
        " AND (lease_owner IS NULL OR lease_expires_at IS NULL OR lease_expires_at < now()) RETURNING " + COLUMNS,
        [owner, seconds, run_id],
    )
    row = await cur.fetchone()
    return RunRow(**row) if row else None


async def renew_lease(conn: Conn, run_id: UUID, owner: str, seconds: float) -> bool:
    """The heartbeat: False when the lease was taken over (this worker must stop driving)."""
    cur = await conn.execute(
        "UPDATE runs SET lease_expires_at = now() + make_interval(secs => %s)"
        " WHERE id = %s AND lease_owner = %s RETURNING id",
        [seconds, run_id, owner],
    )
    return await cur.fetchone() is not None


async def release_lease(conn: Conn, run_id: UUID, owner: str, *, paused: bool = False) -> None:
    """The drive ended in order: free the run for its next driver at once, and reset its count of lost drives (to
    1 when an outage `paused` it unfinished: its next drive is announced as a resumed one, and outages alone never
    add up to `worker_lost`)."""
    await conn.execute(
        "UPDATE runs SET lease_owner = NULL, lease_expires_at = now(), attempts = %s"
        " WHERE id = %s AND lease_owner = %s",
        [1 if paused else 0, run_id, owner],
    )


async def break_lease(conn: Conn, run_id: UUID, owner: str | None, *, owner_gone: bool = False) -> bool:
    """Free a run whose holder `owner` is known to be gone, or whose lease expired, so the next driver takes it
    at once. False when the run moved on meanwhile (another driver, a renewal, an end)."""
    cur = await conn.execute(
        "UPDATE runs SET lease_owner = NULL, lease_expires_at = now() WHERE id = %s"
        " AND lease_owner IS NOT DISTINCT FROM %s AND status IN ('queued', 'running')"
        " AND (%s OR lease_expires_at IS NULL OR lease_expires_at < now()) RETURNING id",
        [run_id, owner, owner_gone],
    )
    return await cur.fetchone() is not None


async def unattended_runs(conn: Conn, host_prefix: str, limit: int) -> list[UnattendedRun]:
    """Unfinished inline runs of every org whose lease expired or is held on this host (pointers only)."""
    cur = await conn.execute(
        "SELECT org_id, run_id, lease_owner, expired FROM pa_unattended_runs(%s, %s)", [host_prefix, limit]
    )
    return [UnattendedRun(**row) for row in await cur.fetchall()]


async def mark_waiting(conn: Conn, run_id: UUID) -> None:
    """A running run now waits for a person (its approvals are stored)."""
    await conn.execute("UPDATE runs SET status = 'waiting' WHERE id = %s AND status = 'running'", [run_id])


async def resume_waiting(conn: Conn, run_id: UUID) -> bool:
    """A waiting run goes on (its approvals are resolved); False when it was not waiting."""
    cur = await conn.execute(
        "UPDATE runs SET status = 'running' WHERE id = %s AND status = 'waiting' RETURNING id", [run_id]
    )
    return await cur.fetchone() is not None


async def request_cancel(conn: Conn, run_id: UUID) -> None:
    """Set the cancel flag the engine checks between stream chunks."""
    await conn.execute("UPDATE runs SET cancel_requested = true WHERE id = %s", [run_id])


async def cancel_requested(conn: Conn, run_id: UUID) -> bool:
    cur = await conn.execute("SELECT cancel_requested FROM runs WHERE id = %s", [run_id])
    row = await cur.fetchone()
    return bool(row and row["cancel_requested"])


def chat_prefix(chat_id: UUID, upto: int, count: int) -> dict[str, Any]:
    """The state entry saying a run's history starts with the `count` messages of the chat's branch that ends at
    message `upto`: its checkpoints then store only what comes after (flat bytes per turn however long the chat),
    and a resume rebuilds the same branch (a message's ancestors never change)."""
    return {"chat_id": str(chat_id), "upto": upto, "count": count}


async def latest_checkpoint(conn: Conn, run_id: UUID) -> Checkpoint | None:
    """The newest checkpoint, its messages the whole history (the chat's earlier messages put back in front)."""
    cur = await conn.execute(
        "SELECT seq, kind, messages, state FROM run_checkpoints WHERE run_id = %s ORDER BY seq DESC LIMIT 1", [run_id]
    )
    row = await cur.fetchone()
    if row is None:
        return None
    messages = row["messages"]
    prefix = row["state"].get("chat_prefix")
    if prefix:
        from personal_agent.chats.message_store import branch_messages

        prior = await branch_messages(conn, UUID(prefix["chat_id"]), int(prefix["upto"]))
        messages = prior + messages
    return Checkpoint(row["seq"], row["kind"], messages, row["state"])


async def save_checkpoint(
    conn: Conn, spec: RunSpec, seq: int, kind: str, messages_json: bytes, state: dict[str, Any]
) -> None:
    """Store the history after a model response or tool results; a retried step never overwrites one. With a
    `chat_prefix` in `state`, the history's first messages are the chat's and only the rest is stored."""
    prefix = state.get("chat_prefix")
    if prefix and prefix["count"]:
        import orjson

        messages_json = orjson.dumps(orjson.loads(messages_json)[int(prefix["count"]) :])
    await conn.execute(
        "INSERT INTO run_checkpoints (run_id, seq, org_id, kind, messages, state)"
        " VALUES (%s, %s, %s, %s, %s::jsonb, %s)"
        " ON CONFLICT (run_id, seq) DO NOTHING",
        [spec.run_id, seq, spec.org_id, kind, messages_json.decode(), jsonb(state)],
    )


async def record_usage(
    conn: Conn,
    spec: RunSpec,
    request_index: int,
    model_name: str,
    provider: str | None,
    usage: dict[str, int],
    cost_usd: Decimal | None,
    price_version: str | None,
) -> bool:
    """One row per model response; a replay of the same response writes nothing (UNIQUE(run_id, request_index))."""
    cur = await conn.execute(
        "INSERT INTO usage_records (org_id, run_id, request_index, user_id, chat_id, model_name, provider,"
        " input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, price_version,"
        " parent_run_id, root_run_id) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT (run_id, request_index) DO NOTHING RETURNING id",
        [
            spec.org_id,
            spec.run_id,
            request_index,
            spec.user_id,
            spec.chat_id,
            model_name,
            provider,
            usage.get("input_tokens", 0),
            usage.get("output_tokens", 0),
            usage.get("cache_read_tokens", 0),
            usage.get("cache_write_tokens", 0),
            cost_usd,
            price_version,
            spec.parent_run_id,
            spec.root_run_id,
        ],
    )
    return await cur.fetchone() is not None


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), default=str)


# ---- Sub-agents: a run's children and its tree (issue 16) ----

_TREE = (
    "WITH RECURSIVE tree AS (SELECT id, parent_run_id, status, mode, execution_arn, 0 AS depth FROM runs"
    " WHERE id = %s UNION ALL SELECT r.id, r.parent_run_id, r.status, r.mode, r.execution_arn, t.depth + 1 FROM runs r"
    " JOIN tree t ON r.parent_run_id = t.id)"
)


async def children(conn: Conn, run_id: UUID) -> list[ChildRun]:
    """The run's children, oldest first, each with the cost of its own tree (NULL cost counts as 0)."""
    cur = await conn.execute(
        "SELECT id, status, mode, error, spec->'delegation' AS delegation, created_at, started_at, finished_at"
        " FROM runs WHERE parent_run_id = %s ORDER BY created_at, spec->'delegation'->>'tool_call_id', id",
        [run_id],
    )
    return [ChildRun(**row, cost_usd=await tree_cost(conn, row["id"])) for row in await cur.fetchall()]


async def count_children(conn: Conn, run_id: UUID) -> int:
    cur = await conn.execute("SELECT count(*) AS n FROM runs WHERE parent_run_id = %s", [run_id])
    row = await cur.fetchone()
    return int(row["n"]) if row else 0


@dataclass(frozen=True)
class RunSummary:
    """One line of a user's run list."""

    id: UUID
    chat_id: UUID | None
    status: str
    mode: str
    trigger_source: str
    model_name: str | None
    agent: dict[str, Any] | None
    created_at: datetime
    finished_at: datetime | None
    cost_usd: Decimal


async def list_runs(
    conn: Conn, user_id: UUID, *, trigger_source: str | None, status: str | None, before: datetime | None, limit: int
) -> list[RunSummary]:
    """The user's runs (not sub-agents), newest first, with what each cost (its sub-agents included)."""
    cur = await conn.execute(
        "SELECT r.id, r.chat_id, r.status, r.mode, r.trigger_source, r.model_name, r.spec -> 'agent' AS agent,"
        " r.created_at, r.finished_at, (SELECT coalesce(sum(u.cost_usd), 0) FROM usage_records u"
        " WHERE u.run_id = r.id OR u.root_run_id = r.id) AS cost_usd"
        " FROM runs r WHERE r.user_id = %s AND r.parent_run_id IS NULL"
        " AND (%s::text IS NULL OR r.trigger_source = %s) AND (%s::text IS NULL OR r.status = %s)"
        " AND (%s::timestamptz IS NULL OR r.created_at < %s) ORDER BY r.created_at DESC, r.id DESC LIMIT %s",
        [user_id, trigger_source, trigger_source, status, status, before, before, limit],
    )
    return [RunSummary(**row) for row in await cur.fetchall()]


async def tree_tokens(conn: Conn, run_id: UUID) -> tuple[int, int]:
    """Input and output tokens of the run and every run below it (the ledger: the router's request included)."""
    cur = await conn.execute(
        f"{_TREE} SELECT coalesce(sum(u.input_tokens), 0) AS i, coalesce(sum(u.output_tokens), 0) AS o"
        " FROM usage_records u WHERE u.run_id IN (SELECT id FROM tree)",
        [run_id],
    )
    row = await cur.fetchone()
    return (int(row["i"]), int(row["o"])) if row else (0, 0)


async def tree_cost(conn: Conn, run_id: UUID) -> Decimal:
    """What the run and every run below it cost so far (the ledger; unpriced rows count as 0)."""
    cur = await conn.execute(
        f"{_TREE} SELECT coalesce(sum(u.cost_usd), 0) AS cost FROM usage_records u WHERE u.run_id IN"
        " (SELECT id FROM tree)",
        [run_id],
    )
    row = await cur.fetchone()
    return Decimal(row["cost"]) if row else Decimal(0)


async def unfinished_descendants(conn: Conn, run_id: UUID) -> list[DescendantRun]:
    """Every run below `run_id` that has not ended, deepest first (the cancel cascade stops leaves first)."""
    cur = await conn.execute(
        f"{_TREE} SELECT id, parent_run_id, status, mode, execution_arn FROM tree WHERE depth > 0"
        " AND status NOT IN ('succeeded', 'failed', 'cancelled', 'skipped') ORDER BY depth DESC",
        [run_id],
    )
    return [DescendantRun(**row) for row in await cur.fetchall()]


async def round_children(conn: Conn, run_id: UUID, ids: list[str]) -> list[RoundChild]:
    """The children `ids` of the run (one round of `delegate` calls) with their status, error and spec."""
    cur = await conn.execute(
        "SELECT id, status, error, spec, spec->'delegation'->>'tool_call_id' AS tool_call_id FROM runs"
        " WHERE parent_run_id = %s AND id = ANY(%s::uuid[])",
        [run_id, ids],
    )
    return [RoundChild(**row) for row in await cur.fetchall()]


async def set_children_token(conn: Conn, run_id: UUID, token: str | None) -> None:
    """Remember (or forget) the durable Task waiting on the run's children."""
    await conn.execute("UPDATE runs SET children_task_token = %s WHERE id = %s", [token, run_id])


async def take_children_token(conn: Conn, run_id: UUID) -> str | None:
    """The token of the Task waiting on the run's children, cleared so that only one caller sends it."""
    cur = await conn.execute(
        "UPDATE runs r SET children_task_token = NULL FROM (SELECT id, children_task_token FROM runs"
        " WHERE id = %s FOR UPDATE) old WHERE r.id = old.id RETURNING old.children_task_token AS token",
        [run_id],
    )
    row = await cur.fetchone()
    return row["token"] if row else None


@dataclass(frozen=True)
class TreeFanout:
    """What a run tree and its user have going, read before `delegate` starts another sub-agent."""

    descendants: int
    """Runs below the root, every depth, ended or not."""
    model_requests: int
    """Model requests of the root and every run below it (the ledger's rows)."""
    user_active_children: int
    """Sub-agents of the user (in any of their trees) that have not ended."""


async def tree_fanout(conn: Conn, root_run_id: UUID, user_id: UUID | None) -> TreeFanout:
    """The fan-out counts of the tree under `root_run_id` and of `user_id`'s running sub-agents, in one query."""
    cur = await conn.execute(
        f"{_TREE} SELECT (SELECT count(*) FROM tree WHERE depth > 0) AS descendants,"
        " (SELECT count(*) FROM usage_records u WHERE u.run_id IN (SELECT id FROM tree)) AS model_requests,"
        " (SELECT count(*) FROM runs WHERE user_id = %s AND parent_run_id IS NOT NULL"
        "  AND status NOT IN ('succeeded', 'failed', 'cancelled', 'skipped')) AS user_active_children",
        [root_run_id, user_id],
    )
    row = await cur.fetchone()
    assert row is not None  # aggregates always return a row
    return TreeFanout(int(row["descendants"]), int(row["model_requests"]), int(row["user_active_children"]))


# ---- What a chat's transcript shows of its runs: how each ended, and the sub-agents each started ----


@dataclass(frozen=True)
class RunEnd:
    """A run's status and, when it failed, its error (`{code, message}`)."""

    id: UUID
    status: str
    error: dict[str, Any] | None


@dataclass(frozen=True)
class SubagentRun:
    """A child run as its parent's transcript shows it: the `delegate` call that started it, its task, status,
    error and the cost of its own tree so far."""

    id: UUID
    parent_run_id: UUID
    tool_call_id: str | None
    task: str
    preset: str | None
    status: str
    error: dict[str, Any] | None
    cost_usd: Decimal


async def run_ends(conn: Conn, run_ids: list[UUID]) -> list[RunEnd]:
    """The status and error of each of the runs `run_ids` (those that exist)."""
    cur = await conn.execute("SELECT id, status, error FROM runs WHERE id = ANY(%s::uuid[])", [run_ids])
    return [RunEnd(**row) for row in await cur.fetchall()]


async def subagents_of(conn: Conn, run_ids: list[UUID]) -> list[SubagentRun]:
    """The children of the runs `run_ids`, oldest first, each with the cost of its own tree."""
    cur = await conn.execute(
        "SELECT id, parent_run_id, status, error, spec->'delegation' AS delegation FROM runs"
        " WHERE parent_run_id = ANY(%s::uuid[]) ORDER BY created_at, spec->'delegation'->>'tool_call_id', id",
        [run_ids],
    )
    children: list[SubagentRun] = []
    for row in await cur.fetchall():
        delegation = row["delegation"] or {}
        children.append(
            SubagentRun(
                id=row["id"],
                parent_run_id=row["parent_run_id"],
                tool_call_id=delegation.get("tool_call_id"),
                task=str(delegation.get("task") or ""),
                preset=delegation.get("preset"),
                status=row["status"],
                error=row["error"],
                cost_usd=await tree_cost(conn, row["id"]),
            )
        )
    return children
