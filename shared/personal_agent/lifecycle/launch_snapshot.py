"""What a launch snapshots into the RunSpec besides the request: the toolset (first-party tools by name, the tier
gate over MCP tools), the models as references, and the mode an `auto` run takes."""

from __future__ import annotations

from personal_agent.errors import InvalidInput
from personal_agent.governance.tiers import tool_tier_passes
from personal_agent.models.catalog import ModelInfo
from personal_agent.spec.run_spec import (
    GatedTool,
    McpServerRef,
    ModelRef,
    RequestedMode,
    RunMode,
    ToolRef,
    TriggerSource,
)
from personal_agent.tools.registry import default_tool_names, get_tool


def choose_mode(requested: RequestedMode, tools: tuple[ToolRef, ...], trigger: TriggerSource) -> RunMode:
    """`auto` is durable when the run may wait for a person or nobody is watching; otherwise inline."""
    if requested != "auto":
        return requested
    if trigger in ("webhook", "schedule") or any(t.requires_approval for t in tools):
        return "durable"
    return "inline"


def snapshot_tools(names: tuple[str, ...] | None) -> tuple[ToolRef, ...]:
    refs = []
    for name in names if names is not None else tuple(default_tool_names()):
        tool = get_tool(name)
        if tool is None:
            raise InvalidInput(f"unknown tool {name!r}", code="unknown_tool")
        refs.append(
            ToolRef(
                name=name,
                requires_approval=tool.requires_approval,
                acts=tool.acts,
                required_tier=tool.required_tier,
                untrusted=tool.untrusted,
            )
        )
    return tuple(refs)


def tier_gate(
    tools: tuple[ToolRef, ...], servers: tuple[McpServerRef, ...], tier: int
) -> tuple[tuple[ToolRef, ...], tuple[GatedTool, ...]]:
    """The tier gate: an MCP tool whose server's trust tier is below the run's routing tier never reaches the
    model; it is reported instead (`gated_tools`, and a CUSTOM `tool_gated` event when the run starts)."""
    names = {s.id: s.name for s in servers}
    kept = tuple(t for t in tools if tool_tier_passes(t.trust_tier, tier))
    gated = tuple(
        GatedTool(
            name=t.name,
            server=names.get(t.server_id, "") if t.server_id else "",
            trust_tier=t.trust_tier,
            required_tier=tier,
        )
        for t in tools
        if not tool_tier_passes(t.trust_tier, tier)
    )
    return kept, gated


def model_ref(info: ModelInfo) -> ModelRef:
    return ModelRef(
        id=info.id,
        provider=info.provider,
        kind=info.kind,
        tier=info.tier,
        model_name=info.model_name,
        base_url=info.base_url,
        key_id=info.key_id,
        input_price=info.input_price,
        output_price=info.output_price,
        platform_key=info.platform_key,
        context_window=info.context_window,
    )
