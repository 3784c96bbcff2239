"""Every CUSTOM event value has one model (personal_agent/events/custom.py): every name the code emits is
registered for its stream, a value that drifts from its model is refused where it is made, and the checked-in
OpenAPI document and the web chat's generated types carry the models as they are now (the events' drift test),
like the table of operation ids the web chat calls the API by."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from pydantic import ValidationError

from personal_agent.events import custom
from personal_agent.local.openapi_export import DOCUMENT

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT / "shared" / "personal_agent"
STALE = "run `make openapi` and commit the result"
# The places a CUSTOM event is made: on a run's stream (the emitter, a sub-agent's parent) or on a user's feed.
RUN_EMITS = (re.compile(r"CustomEvent\(\s*name=\"(\w+)\""), re.compile(r"to_parent\(\s*\w+,\s*\"(\w+)\""))
FEED_EMITS = (re.compile(r"\.announce\(\s*\"(\w+)\""), re.compile(r"feed\.announce\([^\n]*?,\s*\"(\w+)\",\s*\w+\)"))


def _emitted(patterns: tuple[re.Pattern[str], ...]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted(SHARED.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for pattern in patterns:
            for name in pattern.findall(text):
                found.setdefault(name, []).append(str(path.relative_to(ROOT)))
    return found


def test_every_custom_event_the_code_emits_has_a_model_for_its_stream() -> None:
    run, feed = _emitted(RUN_EMITS), _emitted(FEED_EMITS)
    assert {"approval_requested", "tool_gated", "run_resumed", "resume_expired", "subagent_progress"} <= set(run)
    assert {"run_started", "run_finished", "document_status", "output_delivery"} <= set(feed)
    assert {n: p for n, p in run.items() if n not in custom.RUN_EVENTS} == {}
    assert {n: p for n, p in feed.items() if n not in custom.FEED_EVENTS} == {}


def test_a_name_without_a_model_is_refused() -> None:
    with pytest.raises(custom.UnregisteredEvent, match="approval_decided"):
        custom.check("run", "approval_decided", {"approval_id": "a1", "decision": "deny"})
    with pytest.raises(custom.UnregisteredEvent):  # a feed name is not a run stream's
        custom.check("run", "document_status", {})


def test_a_value_that_drifts_from_its_model_is_refused() -> None:
    custom.check("run", "run_resumed", {"run_id": "r1", "attempt": 2})
    with pytest.raises(ValidationError):
        custom.check("run", "run_resumed", {"run_id": "r1"})  # a field missing
    with pytest.raises(ValidationError):
        custom.check("run", "run_resumed", {"run_id": "r1", "attempt": 2, "worker": "w1"})  # a field undeclared
    # The same name on the two streams is two shapes: the feed's approval_requested is a count.
    custom.check("feed", "approval_requested", {"run_id": "r1", "chat_id": "c1", "count": 2})
    with pytest.raises(ValidationError):
        custom.check("run", "approval_requested", {"run_id": "r1", "chat_id": "c1", "count": 2})


def test_the_checked_in_openapi_document_has_the_event_models_as_they_are() -> None:
    schemas = json.loads((ROOT / DOCUMENT).read_text(encoding="utf-8"))["components"]["schemas"]
    stale = sorted(name for name, schema in custom.openapi_components().items() if schemas.get(name) != schema)
    assert stale == [], f"{DOCUMENT}'s event schemas {stale} are stale ({STALE})"


def test_the_web_chats_generated_types_have_every_event_by_name() -> None:
    generated = (ROOT / "frontend" / "src" / "api" / "schema.d.ts").read_text(encoding="utf-8")
    for stream, registry in custom.REGISTRIES.items():
        union = re.search(rf"\n        {custom.UNION_NAMES[stream]}: (.*?)\n        }};\n", generated, re.S)
        assert union, f"schema.d.ts has no {custom.UNION_NAMES[stream]} ({STALE})"
        names = set(re.findall(r'name: "(\w+)";', union.group(1)))
        assert names == set(registry), f"schema.d.ts's {custom.UNION_NAMES[stream]} is stale ({STALE})"


def test_the_web_chats_operation_table_is_what_the_document_says() -> None:
    """The web chat calls the API by operation id; `operations.ts` maps each id to its method and path."""
    node = shutil.which("node")
    assert node, "node is needed to check the web chat's generated operation table (Node 20+)"
    done = subprocess.run(
        [node, "scripts/gen-operations.mjs", "--check"],
        cwd=ROOT / "frontend",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
