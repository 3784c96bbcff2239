"""What the offline demo model does with a plain message: a few keyword and pattern rules on the newest user
message and the tools it is offered, so each capability can be shown without a provider key. Deterministic on
purpose (the same message and tools, the same choice), and it only ever calls a tool it is offered.

Rules, first match wins: "send …" → the acting demo tool (a person approves it); "remember that …" → `remember`;
"research X and Y in parallel" → two `delegate` calls; the weather or a note → the demo MCP server's tools; a
question about the user's documents → `search_knowledge`; a sum → `calculate`; the time or date → `current_time`;
any other question once a document was attached → `search_knowledge`; "research X" (a sub-agent's task) → notes
that say the demo cannot look things up; anything else → a helpful demo answer, no tool."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

SEND_TOOL = "send_demo_message"
DEFAULT_RECIPIENT = "team@example.com"
DOCUMENT_NOTE = "[The user attached the document"
"""What the model reads of a document attached to a message (`attachments/model_content.py`)."""

_SEND = re.compile(r"\bsend\b", re.I)
_SEND_HEAD = re.compile(r"^.*?\bsend\b\s*", re.I | re.S)
_SEND_TO = re.compile(r"\s+to\s+(?:the\s+)?\S+\s*[.!]?\s*$", re.I)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_REMEMBER = re.compile(
    r"^\s*(?:please\s+)?(?:remember|don'?t forget|note to self)[:,]?\s+(?:that\s+)?(.+)$", re.I | re.S
)
_PARALLEL = re.compile(
    r"\b(?:research|look up|compare|find out about|investigate)\s+(.+?)\s+and\s+(.+?)"
    r"(?:\s+in parallel\b|\s+at once\b|\s+side by side\b)",
    re.I | re.S,
)
_WEATHER = re.compile(r"\bweather\b|\bforecast\b", re.I)
_CITY = re.compile(
    r"\b(?:in|for|at)\s+([a-z][\w' -]*?)(?=\s+(?:today|tomorrow|now|right now|this week)\b|[?.!,]|$)", re.I
)
_NOTE = re.compile(
    r"\b(?:post|add|leave|put|write)\b.*?\bnote\b(?:\s+(?:to|for|on)\s+(?:the\s+)?(?P<team>[\w-]+?)(?:\s+(?:team|board))?)?"
    r"\s*[:,-]\s*(?P<text>.+)$",
    re.I | re.S,
)
_DOCS = re.compile(
    r"\b(?:my|our|the|these|this|uploaded|attached)\s+"
    r"(?:documents?|docs|files?|knowledge(?: base)?|notes|handbook|manual|policy)\b"
    r"|\bknowledge base\b|\bsearch (?:my|our|the) ",
    re.I,
)
_SEARCH_PREFIX = re.compile(
    r"^\s*(?:please\s+)?search\s+(?:my|our|the)\s+(?:documents?|docs|files|knowledge(?: base)?)\s*(?:for|:)?\s*", re.I
)
_QUESTION = re.compile(
    r"\?\s*$|^\s*(?:what|who|when|where|why|how|which|does|do|is|are|can|should|summari[sz]e|explain)\b", re.I
)
_TIME = re.compile(r"\b(?:time|date|what day|today's date|clock)\b", re.I)
_RESEARCH = re.compile(r"^\s*research\s+\S", re.I)
_SUM = re.compile(r"^\s*(?:calculate|compute|what is|what's)?\s*([-+*/().\d\s^%]*\d[-+*/().\d\s^%]*)\??\s*$", re.I)


@dataclass(frozen=True)
class ToolCall:
    name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class Plan:
    """The demo's first move on a message: say `lead`, then make `calls` (none: `lead` is the whole answer)."""

    lead: str
    calls: tuple[ToolCall, ...] = ()
    intent: str = "chat"


@dataclass(frozen=True)
class Offered:
    """The tools offered to this request: their names and, for each, its JSON schema's properties."""

    names: frozenset[str]
    properties: dict[str, list[str]] = field(default_factory=dict)

    def find(self, suffix: str) -> str | None:
        """The offered tool named `suffix` or `<server>_<suffix>` (an MCP tool), first by name."""
        return next((n for n in sorted(self.names) if n == suffix or n.endswith("_" + suffix)), None)


def _sentence(text: str) -> str:
    text = " ".join(text.split()).strip().rstrip(".!")
    return text[:1].upper() + text[1:] if text else text


def _send(text: str, offered: Offered) -> Plan | None:
    if not _SEND.search(text) or SEND_TOOL not in offered.names:
        return None
    found = _EMAIL.search(text)
    to = found.group(0) if found else DEFAULT_RECIPIENT
    body = _SEND_TO.sub("", _SEND_HEAD.sub("", text.strip(), count=1)).strip(" .!") or text.strip()
    lead = f"I'll send that to {to} — it acts outside this chat, so it needs your approval first."
    return Plan(lead, (ToolCall(SEND_TOOL, {"to": to, "text": _sentence(body)[:200]}),), "send")


def _remember(text: str, offered: Offered) -> Plan | None:
    found = _REMEMBER.match(text)
    if found is None or "remember" not in offered.names:
        return None
    fact = _sentence(found.group(1))[:300]
    return Plan("I'll save that to your memories.", (ToolCall("remember", {"fact": fact + "."}),), "remember")


def _delegate(text: str, offered: Offered) -> Plan | None:
    found = _PARALLEL.search(text)
    if found is None or "delegate" not in offered.names:
        return None
    topics = [t.strip(" ,.") for t in found.groups()]
    calls = tuple(ToolCall("delegate", {"task": f"Research {t}", "preset": "explore"}) for t in topics)
    return Plan("I'll hand these to two sub-agents that work in parallel.", calls, "delegate")


def _city(text: str) -> str:
    found = _CITY.findall(text)
    return found[-1].strip().title() if found else "Paris"


def _mcp(text: str, offered: Offered) -> Plan | None:
    note = _NOTE.search(text)
    tool = offered.find("post_note")
    if note is not None and tool is not None:
        team = note.group("team") or "team"
        args = {"team": team, "text": _sentence(note.group("text"))[:200]}
        return Plan(
            f"I'll post that note to the {team} board with the demo MCP server.", (ToolCall(tool, args),), "mcp"
        )
    tool = offered.find("weather")
    if _WEATHER.search(text) and tool is not None:
        city = _city(text)
        key = next(iter(offered.properties.get(tool, [])), "city")
        return Plan(f"I'll ask the demo MCP server for the weather in {city}.", (ToolCall(tool, {key: city}),), "mcp")
    return None


def _knowledge(text: str, offered: Offered, document_attached: bool) -> Plan | None:
    if "search_knowledge" not in offered.names:
        return None
    explicit = _SEARCH_PREFIX.match(text)
    if not explicit and not (_QUESTION.search(text) and (_DOCS.search(text) or document_attached)):
        return None
    query = _SEARCH_PREFIX.sub("", text).strip() or text.strip()
    call = ToolCall("search_knowledge", {"query": query[:500]})
    return Plan("I'll search your documents for that.", (call,), "knowledge")


def _arithmetic(text: str, offered: Offered) -> Plan | None:
    found = _SUM.match(text)
    if found is None or "calculate" not in offered.names or not re.search(r"\d\s*[-+*/^%]\s*[\d(]", found.group(1)):
        return None
    return Plan("Let me calculate that.", (ToolCall("calculate", {"expression": found.group(1).strip()}),), "calculate")


def _time(text: str, offered: Offered) -> Plan | None:
    if not _TIME.search(text) or "current_time" not in offered.names:
        return None
    return Plan("Let me check the time first.", (ToolCall("current_time", {}),), "time")


def plan(text: str, offered: Offered, document_attached: bool = False) -> Plan:
    """The demo's move on the newest user message `text`, given the tools offered to it."""
    for rule in (_send, _remember, _delegate, _mcp):
        chosen = rule(text, offered)
        if chosen is not None:
            return chosen
    chosen = (
        _knowledge(text, offered, False)  # a question that names the documents searches them, whatever it asks
        or _arithmetic(text, offered)
        or _time(text, offered)
        or _knowledge(text, offered, document_attached)
    )
    if chosen is not None:
        return chosen
    return Plan("", (), "research" if _RESEARCH.match(text) else "chat")
