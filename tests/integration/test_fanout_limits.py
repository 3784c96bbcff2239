"""Fan-out limits of a whole run tree (issue 28, item 11): the sub-agents of every depth together and the model
requests of the root and all its sub-agents, counted at the root run, and the sub-agents one person has running at
once. Past any of them `delegate` is a tool error the model sees (`ModelRetry`), like the per-run limits; within
them it hands the call to the engine (`CallDeferred`). The tree is stored in the embedded Postgres as the engine
stores one; the tool is called as the engine calls it."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg
import pytest
from pydantic_ai import CallDeferred, ModelRetry, RunContext
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RunUsage

from personal_agent.spec.run_deps import RunDeps
from personal_agent.spec.run_spec import RunLimits, RunSpec
from personal_agent.tools.delegate import delegate


def _insert_run(conn: psycopg.Connection[Any], tenant: Any, chat_id: Any, parent: Any, status: str) -> uuid.UUID:
    run_id = uuid.uuid4()
    conn.execute(
        "INSERT INTO runs (id, org_id, chat_id, user_id, parent_run_id, status, mode, spec)"
        " VALUES (%s, %s, %s, %s, %s, %s, 'inline', '{}')",
        [run_id, tenant.org_id, chat_id, tenant.user_id, parent, status],
    )
    return run_id


def _tree(admin_url: str, tenant: Any, *, children: int, grandchildren: int, requests: int) -> dict[str, Any]:
    """A root with `children` ended children, the first with `grandchildren` ended children; the root made
    `requests` model requests."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        chat = conn.execute(
            "INSERT INTO chats (org_id, user_id, title) VALUES (%s, %s, 't') RETURNING id",
            [tenant.org_id, tenant.user_id],
        ).fetchone()
        assert chat is not None
        root = _insert_run(conn, tenant, chat[0], None, "running")
        kids = [_insert_run(conn, tenant, chat[0], root, "succeeded") for _ in range(children)]
        for _ in range(grandchildren):
            _insert_run(conn, tenant, chat[0], kids[0], "succeeded")
        for index in range(requests):
            conn.execute(
                "INSERT INTO usage_records (org_id, run_id, request_index, model_name) VALUES (%s, %s, %s, 'm')",
                [tenant.org_id, root, index],
            )
    return {"chat_id": chat[0], "root": root, "child": kids[0] if kids else None}


def _context(tenant: Any, chat_id: Any, run_id: Any, root: Any, depth: int, limits: RunLimits) -> RunContext[RunDeps]:
    spec = RunSpec(
        run_id=run_id,
        org_id=tenant.org_id,
        user_id=tenant.user_id,
        chat_id=chat_id,
        model="test",
        instructions="",
        mode="inline",
        limits=limits,
        depth=depth,
        root_run_id=root,
        parent_run_id=root if depth else None,
    )
    return RunContext(
        deps=RunDeps.for_run(spec, None), model=TestModel(), usage=RunUsage(), tool_call_id="call_1", messages=[]
    )


async def _outcome(ctx: RunContext[RunDeps]) -> str:
    try:
        await delegate(ctx, "look it up")
    except ModelRetry as refused:
        return f"refused: {refused.message}"
    except CallDeferred:
        return "started"
    raise AssertionError("delegate neither started nor refused the sub-agent")


async def test_a_tree_past_its_sub_agents_at_the_root_is_refused_at_any_depth(admin_url: str, make_tenant: Any) -> None:
    tenant = make_tenant()
    tree = _tree(admin_url, tenant, children=2, grandchildren=2, requests=0)  # 4 sub-agents below the root
    tight, roomy = RunLimits(max_tree_runs=4), RunLimits(max_tree_runs=5)
    child = _context(tenant, tree["chat_id"], tree["child"], tree["root"], 1, tight)
    assert await _outcome(child) == (
        "refused: this task's runs may start at most 4 sub-agents together; do the rest yourself"
    )
    root = _context(tenant, tree["chat_id"], tree["root"], None, 0, tight)  # the root counts its whole tree too
    assert (await _outcome(root)).startswith("refused: this task's runs may start at most 4 sub-agents")
    assert await _outcome(_context(tenant, tree["chat_id"], tree["child"], tree["root"], 1, roomy)) == "started"


async def test_a_tree_that_used_its_model_requests_starts_no_more_sub_agents(admin_url: str, make_tenant: Any) -> None:
    tenant = make_tenant()
    tree = _tree(admin_url, tenant, children=1, grandchildren=0, requests=6)
    with psycopg.connect(admin_url, autocommit=True) as conn:  # the child's own requests count at the root too
        for index in range(4):
            conn.execute(
                "INSERT INTO usage_records (org_id, run_id, request_index, model_name, parent_run_id, root_run_id)"
                " VALUES (%s, %s, %s, 'm', %s, %s)",
                [tenant.org_id, tree["child"], index, tree["root"], tree["root"]],
            )
    spent = _context(tenant, tree["chat_id"], tree["child"], tree["root"], 1, RunLimits(max_tree_model_requests=10))
    assert await _outcome(spent) == (
        "refused: this task's runs have used their 10 model requests; no more sub-agents: finish with what you have"
    )
    left = _context(tenant, tree["chat_id"], tree["child"], tree["root"], 1, RunLimits(max_tree_model_requests=11))
    assert await _outcome(left) == "started"


@pytest.mark.parametrize(("cap", "expected"), [(3, "refused"), (4, "started")])
async def test_one_person_has_at_most_the_capped_sub_agents_running_at_once(
    admin_url: str, make_tenant: Any, cap: int, expected: str
) -> None:
    tenant = make_tenant()
    other = _tree(admin_url, tenant, children=0, grandchildren=0, requests=0)  # another of their tasks, running
    with psycopg.connect(admin_url, autocommit=True) as conn:
        for status in ("running", "waiting", "queued", "succeeded", "failed"):
            _insert_run(conn, tenant, other["chat_id"], other["root"], status)  # 3 have not ended
    stranger = make_tenant()  # someone else's running sub-agents do not count
    theirs = _tree(admin_url, stranger, children=0, grandchildren=0, requests=0)
    with psycopg.connect(admin_url, autocommit=True) as conn:
        for _ in range(3):
            _insert_run(conn, stranger, theirs["chat_id"], theirs["root"], "running")
    tree = _tree(admin_url, tenant, children=0, grandchildren=0, requests=0)
    ctx = _context(tenant, tree["chat_id"], tree["root"], None, 0, RunLimits(max_user_active_children=cap))
    outcome = await _outcome(ctx)
    assert outcome.split(":")[0] == expected, outcome
    if expected == "refused":
        assert "at most 3 sub-agents may run at once for one person" in outcome
