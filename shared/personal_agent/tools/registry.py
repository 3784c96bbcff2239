"""Tools by name: what `lifecycle/launch.py` snapshots into a RunSpec (name, acts, requires_approval, required_tier)
and what the engine builds a run's toolset from (`tools/toolset.py`).

Every tool is declared here once: name, function, description (what the model reads) and flags. Light on purpose:
the API imports it at launch, and the API does not load pydantic-ai, so a first-party tool names the module its
function is in (a function of the tool's name, taking `RunContext[RunDeps]`), imported only when the engine
builds the tool; a tool registered later (tests register scripted ones) brings its function: plain, or taking
`RunContext[RunDeps]` first, as pydantic-ai infers.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from personal_agent.settings import get_settings


@dataclass(frozen=True)
class ToolDef:
    name: str
    function: Callable[..., Any] | str
    """The function, or for a first-party tool the module that has a function of the tool's name."""
    description: str
    acts: bool = False
    requires_approval: bool = False
    required_tier: int = 0
    untrusted: bool = False
    """Its results come from outside anyone's control (the web, a tier-0 server): once one is in a run's context,
    every acting tool needs a person's approval (`governance/tool_gates.py`)."""
    offered_when: str | None = None
    """A settings field that must be set for the tool to be offered at all (`web_search`: `web_search_url`)."""
    offered_if: Callable[[], bool] | None = None
    """A check that must pass for the tool to be offered at all (`run_python`: a sandbox is available here)."""

    def implementation(self) -> Callable[..., Any]:
        """The tool's function (a first-party tool's module is imported now)."""
        if isinstance(self.function, str):
            function: Callable[..., Any] = getattr(importlib.import_module(self.function), self.name)
            return function
        return self.function


_TOOLS: dict[str, ToolDef] = {}


def register_tool(tool: ToolDef) -> None:
    """Add a tool to the registry (first-party tools at import; tests add scripted ones)."""
    _TOOLS[tool.name] = tool


def unregister_tool(name: str) -> None:
    _TOOLS.pop(name, None)


def get_tool(name: str) -> ToolDef | None:
    """The tool, or None when it is unknown or not offered in this deployment (its setting is unset)."""
    tool = _TOOLS.get(name)
    if tool is not None and tool.offered_when is not None and not getattr(get_settings(), tool.offered_when):
        return None
    if tool is not None and tool.offered_if is not None and not tool.offered_if():
        return None
    return tool


def first_party_names() -> list[str]:
    """The platform's own tools (declared here with their function's module)."""
    return [name for name, tool in _TOOLS.items() if isinstance(tool.function, str)]


def default_tool_names() -> list[str]:
    """The tools a chat run gets unless it asks otherwise (locally also a demo tool that acts)."""
    names = ["current_time", "calculate", "web_fetch", "remember"]
    if get_tool("web_search") is not None:
        names.append("web_search")
    names.append("delegate")
    names.append("search_knowledge")
    if get_tool("run_python") is not None:  # the org's choice is applied at launch (`sandbox/policy.py`)
        names.append("run_python")
    if get_settings().is_local:
        names.append("send_demo_message")
    return names


FIRST_PARTY = "personal_agent.tools.first_party"

register_tool(ToolDef("current_time", FIRST_PARTY, "The current date and time in UTC."))
register_tool(ToolDef("calculate", FIRST_PARTY, "Evaluate an arithmetic expression."))
register_tool(
    ToolDef(
        "send_demo_message",
        FIRST_PARTY,
        "Send a message to a person or team (demo: nothing leaves the machine).",
        acts=True,
    )
)
register_tool(
    ToolDef(
        "search_knowledge",
        "personal_agent.tools.knowledge_search",
        "Search the knowledge base (the org's documents, your own, this chat's files): passages with citations.",
    )
)
register_tool(
    ToolDef("remember", FIRST_PARTY, "Save a fact or preference about the user for their later conversations.")
)
register_tool(
    ToolDef(
        "delegate",
        "personal_agent.tools.delegate",
        "Hand a self-contained task to a sub-agent (a child run; the sub-agents of one response work in parallel) "
        "and get its final answer back. `tools`: a subset of your own tools; `model`: `cheap` for the cheaper "
        "model; `preset`: `explore` for read-only tools and the cheaper model.",
    )
)
register_tool(
    ToolDef(
        "ask_user",
        "personal_agent.tools.ask_user",
        "Ask the user one question (free text, a list of choices, or a small JSON Schema form) and wait for the "
        "answer; `default` is taken when nobody answers in time.",
    )
)
register_tool(
    ToolDef(
        "web_fetch", FIRST_PARTY, "Fetch a public web page and return its readable text (untrusted).", untrusted=True
    )
)
register_tool(
    ToolDef(
        "web_search",
        FIRST_PARTY,
        "Search the web: titles, URLs and snippets (untrusted).",
        untrusted=True,
        offered_when="web_search_url",
    )
)


def _sandbox_available() -> bool:
    from personal_agent.sandbox.sessions import availability

    return availability().ok


register_tool(
    ToolDef(
        "run_python",
        "personal_agent.tools.code_execution",
        "Run Python (pandas, numpy, matplotlib) in an isolated sandbox without network: data questions, exact "
        "arithmetic, charts and file conversions. `files`: this chat's files by name, or knowledge document ids.",
        offered_if=_sandbox_available,
    )
)
