"""The agent a launch runs with: named by the request (a slug), else the chat's binding, else its project's default
agent (`projects.run_context`), else the org's built-in `assistant`, at its published version then. What the request
gives itself (a workflow's instructions, model or tools, a caller's tool choice) overrides the agent's; the agent
never widens what the caller may use (its tools were checked against the org's when saved, and pass the same tier
gate as any run's)."""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol, TypeVar
from uuid import UUID

from personal_agent.agents import sampling_store
from personal_agent.agents import service as agents
from personal_agent.agents.service import LaunchAgent
from personal_agent.chats import store as chat_store
from personal_agent.db import org_transaction
from personal_agent.governance.tiers import classification_tier
from personal_agent.projects import run_context as project_context
from personal_agent.spec.run_spec import AgentRef, DelegateAgent, ToolRef

MEMORY_TOOL = "remember"


class _Request(Protocol):
    """What `applied` reads of a `launch.LaunchRequest` (a frozen dataclass)."""

    @property
    def tools(self) -> tuple[str, ...] | None: ...
    @property
    def instructions(self) -> str | None: ...
    @property
    def model(self) -> str | None: ...
    @property
    def recall_memories(self) -> bool: ...
    @property
    def org_id(self) -> UUID: ...
    @property
    def user_id(self) -> UUID | None: ...
    @property
    def chat_id(self) -> UUID: ...
    @property
    def agent(self) -> str | None: ...


Request = TypeVar("Request", bound=_Request)


async def resolve(org_id: UUID, user_id: UUID | None, chat_id: UUID, named: str | None) -> LaunchAgent:
    """The agent the run launches with, at its published version; `named` is `slug`, `slug@version` or `@version`
    (the chat's agent): a version to try before it is published. 404 `agent_not_found` for one the user cannot
    see, `agent_version_not_found` for a version it does not have."""
    slug, _, version = (named or "").partition("@")
    async with org_transaction(org_id) as conn:
        bound = None if slug else await chat_store.bound_agent(conn, chat_id)
        if bound is None and not slug:  # a chat bound to none takes its project's default agent
            bound = await project_context.default_agent(conn, chat_id, user_id)
        agent = await agents.for_launch(
            conn, org_id, user_id, slug=slug or None, agent_id=bound, with_delegates=True, version=int(version or 0)
        )
        sampling = await sampling_store.get(conn, agent.slug)  # snapshotted: the run's end decides by it
    return dataclasses.replace(agent, sample_rate=sampling.rate) if sampling else agent


async def with_agent(request: Request) -> tuple[Request, LaunchAgent]:
    """The request with its agent applied (`applied`), and the agent."""
    agent = await resolve(request.org_id, request.user_id, request.chat_id, request.agent)
    return applied(request, agent), agent


def floor(agent: LaunchAgent) -> int:
    """The tier of the agent's classification floor (what its runs' data needs at least)."""
    return classification_tier(agent.config.classification)


def ref(agent: LaunchAgent) -> AgentRef:
    config = agent.config
    return AgentRef(
        id=agent.id,
        slug=agent.slug,
        version=agent.version,
        name=config.name,
        model=config.model,
        tools=tuple(config.tools) if config.tools is not None else None,
        knowledge=tuple(config.knowledge),
        memory=config.memory,
        delegates=tuple(config.delegates),
        approval=dict(config.approval),
        classification=config.classification,
        output_schema=config.output_schema,
        sample_rate=agent.sample_rate,
        delegate_agents=tuple(
            DelegateAgent(
                id=d.id,
                slug=d.slug,
                version=d.version,
                instructions=d.config.instructions,
                tools=tuple(d.config.tools) if d.config.tools is not None else None,
                model=d.config.model,
            )
            for d in agent.delegates
        ),
    )


def applied(request: Request, agent: LaunchAgent) -> Request:
    """The request with the agent's instructions, model and tools where the request names none of its own; an agent
    without memory neither recalls nor offers `remember`."""
    config = agent.config
    tools = request.tools if request.tools is not None else (tuple(config.tools) if config.tools is not None else None)
    if not config.memory and tools is not None:
        tools = tuple(t for t in tools if t != MEMORY_TOOL)
    replaced: Any = dataclasses.replace(
        request,  # type: ignore[type-var]
        instructions=request.instructions or config.instructions,
        model=request.model or config.model,
        tools=tools,
        recall_memories=request.recall_memories and config.memory,
    )
    return replaced  # type: ignore[no-any-return]


def without_memory_tool(tools: tuple[ToolRef, ...], agent: LaunchAgent) -> tuple[ToolRef, ...]:
    """The default toolset minus `remember` for an agent without memory."""
    return tools if agent.config.memory else tuple(t for t in tools if t.name != MEMORY_TOOL)


def stricter(tools: tuple[ToolRef, ...], agent: LaunchAgent) -> tuple[ToolRef, ...]:
    """The agent's approval overrides, only ever stricter: `always` makes a person decide each call; `gate` puts a
    tool nobody decided for (`never`) behind the confidence gate."""
    overrides = agent.config.approval
    out = []
    for tool in tools:
        wanted = overrides.get(tool.name)
        if wanted == "always":
            tool = tool.model_copy(update={"requires_approval": True, "approval": "always"})
        elif wanted == "gate" and tool.approval == "never":
            tool = tool.model_copy(update={"approval": "gate"})
        out.append(tool)
    return tuple(out)
