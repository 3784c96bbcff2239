"""The pydantic-ai toolset of one MCP server for one engine step, from the run's snapshot: connected when the
step's agent run starts and closed when it ends (a durable Task holds no session between states), offering only
the snapshotted tools, refusing a tool whose name, description or input schema changed since launch (its new
description never reaches the model), and telling the engine's review (`engine/tool_review.py`) whether the gates
(`governance/tool_gates.py`) want a person for a call. A server that cannot be reached, or whose URL changed since
launch, offers no tools; the engine reports it (and changed tools) and the run goes on. A result past
`MAX_RESULT_CHARS` is refused; a tier-0 server's results carry the untrusted label."""

from __future__ import annotations

import dataclasses
import json
from contextlib import AsyncExitStack
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.messages import ToolReturn
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.toolsets.abstract import ToolsetTool
from pydantic_core import SchemaValidator, core_schema

from personal_agent.governance.tiers import tool_tier_passes
from personal_agent.governance.tool_gates import needs_approval, untrusted_in_context
from personal_agent.mcp_servers.client import connect, describe_failure, load_headers, tool_entries
from personal_agent.spec.labels import Labels, result_metadata, run_tier
from personal_agent.spec.run_deps import RunDeps
from personal_agent.spec.run_spec import McpServerRef, RunSpec, ToolRef

TOOL_RETRIES = 2
MAX_RESULT_CHARS = 100_000
"""A tool result longer than this (as text) is refused: it would fill the model's context, the run's event stream
and every checkpoint after it."""
MAX_ERROR_CHARS = 2_000
TOOL_CHANGED = "mcp_tool_changed"
_UNTRUSTED = result_metadata(Labels(untrusted=True))
_ARGS = SchemaValidator(core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema()))


def call_needs_approval(ctx: RunContext[RunDeps], ref: ToolRef) -> bool:
    """Whether the gates want a person for a call of this MCP tool (`engine/tool_review.py` asks). `always`: a
    person approves; `gate`: the gates decide (untrusted content, then confidence, with `acts`);
    `never`: nobody, unless untrusted content is in the run and the tool acts."""
    spec = ctx.deps.spec
    if ref.approval == "never":
        return ref.acts and untrusted_in_context(spec, ctx.messages)
    return needs_approval(
        spec, ctx.messages, acts=ref.acts, declared=ref.approval == "always", routing=ctx.deps.routing
    )


def _size(value: Any) -> int:
    return len(value) if isinstance(value, str) else len(json.dumps(value, default=str))


def _refusal(name: str, server: str) -> str:
    return (
        f"refused: the description or input schema of {name} on MCP server {server} changed since this run "
        "started; start a new run to use the changed tool"
    )


def _result_text(result: Any) -> Any:
    texts = [block.text for block in result.content if getattr(block, "type", None) == "text"]
    if texts:
        return "\n".join(texts)
    return result.structured_content if result.structured_content is not None else ""


class McpServerToolset(AbstractToolset[RunDeps]):
    """The snapshotted tools of one MCP server, over one connection per engine step."""

    def __init__(self, spec: RunSpec, server: McpServerRef, refs: list[ToolRef]) -> None:
        self.spec = spec
        self.server = server
        self.refs = {ref.name: ref for ref in refs}
        self.error: str | None = None
        self.changed: list[str] = []
        """The snapshotted tools whose definition on the server is no longer the one hashed at launch."""
        self._live: dict[str, dict[str, Any]] = {}
        self._client: Any = None
        self._stack: AsyncExitStack | None = None

    @property
    def id(self) -> str | None:
        return f"mcp:{self.server.name}"

    @property
    def label(self) -> str:
        return f"MCP server {self.server.name!r}"

    async def __aenter__(self) -> McpServerToolset:
        stack = AsyncExitStack()
        try:
            server = self.server
            headers = await load_headers(self.spec.org_id, server.id, server.url, server.transport)
            self._client = await stack.enter_async_context(connect(self.server.url, headers, self.server.transport))
            listed = await self._client.list_tools()
        except Exception as exc:  # down, refusing us, or no MCP: the run goes on without this server's tools
            await stack.aclose()
            self.error, self._client = describe_failure(exc), None
            return self
        self._stack = stack
        self._live = tool_entries(list(listed.tools))
        self.changed = sorted(
            name
            for name, ref in self.refs.items()
            if (live := self._live.get(ref.remote_name or "")) is not None and live["schema_hash"] != ref.schema_hash
        )
        return self

    async def __aexit__(self, *args: Any) -> bool | None:
        stack, self._stack, self._client = self._stack, None, None
        if stack is not None:
            await stack.aclose()
        return None

    async def get_tools(self, ctx: RunContext[RunDeps]) -> dict[str, ToolsetTool[RunDeps]]:
        tools: dict[str, ToolsetTool[RunDeps]] = {}
        tier = run_tier(ctx.deps.spec, ctx.messages)  # content that entered since launch may have raised it
        for name, ref in self.refs.items():
            if not tool_tier_passes(ref.trust_tier, tier):
                continue
            live = self._live.get(ref.remote_name or "")
            if live is None:
                continue
            definition = ToolDefinition(
                name=name,
                description=f"{live['description']} (from MCP server {self.server.name})",
                parameters_json_schema=live["input_schema"],
                metadata={"mcp_server": self.server.name, "trust_tier": ref.trust_tier},
            )
            if name in self.changed:  # what the server says of it now is not what was launched with: not shown
                definition = dataclasses.replace(
                    definition,
                    description=f"Unavailable: it changed on MCP server {self.server.name} since this run started.",
                    parameters_json_schema={"type": "object", "additionalProperties": True},
                )
            tools[name] = ToolsetTool(toolset=self, tool_def=definition, max_retries=TOOL_RETRIES, args_validator=_ARGS)
        return tools

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[RunDeps], tool: ToolsetTool[RunDeps]
    ) -> Any:
        ref = self.refs[name]
        live = self._live.get(ref.remote_name or "")
        if self._client is None or live is None:
            raise ToolFailed(f"the tool {name} is unavailable: MCP server {self.server.name} cannot be reached")
        if live["schema_hash"] != ref.schema_hash:
            raise ToolFailed(_refusal(name, self.server.name))
        try:
            result = await self._client.call_tool(ref.remote_name, tool_args)
        except Exception as exc:
            raise ToolFailed(f"the MCP server {self.server.name} failed the call ({describe_failure(exc)})") from exc
        value = _result_text(result)
        if result.is_error:
            raise ToolFailed(str(value)[:MAX_ERROR_CHARS] or f"{name} failed")
        if (size := _size(value)) > MAX_RESULT_CHARS:
            raise ToolFailed(
                f"refused: the result of {name} from MCP server {self.server.name} has {size} characters, more than "
                f"the {MAX_RESULT_CHARS} a run takes; it was dropped. Ask for less (a narrower query, fewer items)."
            )
        if ref.untrusted:  # a tier-0 server's words: the label goes with them wherever they are copied
            return ToolReturn(return_value=value, metadata=_UNTRUSTED)
        return value


def mcp_toolsets(spec: RunSpec) -> list[McpServerToolset]:
    """One toolset per MCP server the spec snapshotted tools of."""
    return [
        McpServerToolset(spec, server, [ref for ref in spec.tools if ref.server_id == server.id])
        for server in spec.mcp_servers
    ]


def unavailable(toolsets: list[Any]) -> list[dict[str, Any]]:
    """The MCP servers of this step that could not be reached (or whose URL changed since launch), with the tools
    the run goes without, and those whose tools changed since launch (`mcp_tool_changed`), with those tools."""
    out = []
    for t in toolsets:
        if not isinstance(t, McpServerToolset):
            continue
        if t.error is not None:
            out.append({"server": t.server.name, "error": t.error, "tools": sorted(t.refs)})
        elif t.changed:
            out.append({"server": t.server.name, "error": TOOL_CHANGED, "tools": t.changed})
    return out
