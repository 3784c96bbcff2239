"""What `pa chat` prints for a run's knowledge sources and its sub-agents, as the web chat shows them: the passages
a `search_knowledge` call returned become a numbered `Sources:` line under the answer that follows (document and
page or section, each passage once), and each sub-agent is one card updated in place from its `subagent_started`,
`subagent_progress` and `subagent_finished` events (task, status, steps, tools, cost, the start of its answer)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

SEARCH_TOOL = "search_knowledge"
MAX_SOURCES = 10


def passages(content: Any) -> list[dict[str, Any]]:
    """The cited passages in a `search_knowledge` result (its JSON text live); [] for anything else."""
    if isinstance(content, str):
        try:
            content = json.loads(content)
        except ValueError:
            return []
    if isinstance(content, dict):
        content = content.get("passages", content.get("items", content.get("return_value")))
    return [p for p in content if isinstance(p, dict) and "chunk_id" in p] if isinstance(content, list) else []


def source_label(passage: dict[str, Any]) -> str:
    """`notes.txt, p. 3`, `policy.md, § Travel` or the document alone (the web chat's label)."""
    document = str(passage.get("document") or passage.get("filename") or "document")
    if passage.get("page"):
        return f"{document}, p. {passage['page']}"
    return f"{document}, § {passage['section']}" if passage.get("section") else document


@dataclass
class Sources:
    """The passages a turn's searches returned since the last answer that listed them, in order, each once."""

    cited: dict[str, str] = field(default_factory=dict)  # chunk id -> label

    def add(self, content: Any) -> int:
        found = passages(content)
        for passage in found:
            self.cited.setdefault(str(passage["chunk_id"]), source_label(passage))
        return len(found)

    def take_line(self) -> str:
        """`Sources: [1] a · [2] b`, and forget them (empty when there are none)."""
        labels = list(self.cited.values())[:MAX_SOURCES]
        self.cited.clear()
        return "Sources: " + " · ".join(f"[{i}] {label}" for i, label in enumerate(labels, 1)) if labels else ""


def search_summary(content: Any) -> str:
    """A `search_knowledge` card's result line: how many passages, from which documents."""
    found = passages(content)
    documents = list(dict.fromkeys(str(p.get("document") or "document") for p in found))
    return f"{len(found)} passage{'' if len(found) == 1 else 's'}" + (f": {', '.join(documents)}" if documents else "")


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass
class SubagentCard:
    """One sub-agent of the run, from the events its parent's stream carries."""

    task: str = ""
    preset: str | None = None
    status: str = "working…"
    steps: int = 0
    tools: list[str] = field(default_factory=list)
    answer: str | None = None
    error: str | None = None
    cost_usd: float | None = None

    def apply(self, name: str, value: dict[str, Any]) -> None:
        if name == "subagent_started":
            self.task, self.preset = str(value.get("task") or ""), value.get("preset")
        elif name == "subagent_progress":
            self.steps = max(self.steps, int(value.get("request_index") or 0) + 1)
            self.tools += [t for t in value.get("tool_calls") or [] if t not in self.tools]
        elif name == "subagent_finished":
            self.status = str(value.get("status") or "finished")
            self.answer = value.get("answer")
            error = value.get("error") or {}
            self.error = f"{error.get('code')}: {error.get('message')}" if error else None
            self.cost_usd = value.get("cost_usd")

    def text(self) -> str:
        head = f"⇢ sub-agent{f' ({self.preset})' if self.preset else ''}: {_one_line(self.task, 70)}"
        facts = [self.status, f"{self.steps} step{'' if self.steps == 1 else 's'}"]
        if self.tools:
            facts.append("tools: " + ", ".join(self.tools))
        if self.cost_usd is not None:
            facts.append(f"${self.cost_usd:.4f}")
        lines = [head, "  " + " · ".join(facts)]
        if self.error:
            lines.append("  " + _one_line(self.error, 160))
        elif self.answer:
            lines.append("  → " + _one_line(self.answer, 160))
        return "\n".join(lines)
