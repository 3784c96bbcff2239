"""The `/v1` end-to-end tests' world: `pa dev` with two OpenAI-compatible providers on loopback (tier 2 `fake:m` and
tier 0 `cheap:m`) registered by an org admin, agents, and the official `openai` SDK as a member's client; and the
scripted model both providers answer with."""

from __future__ import annotations

from typing import Any

import httpx
import openai

from tests.e2e.pa_dev import DevServer
from tests.fake_provider import FakeProvider, Reply, last_user_text, tool_results

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "celsius": {"type": "integer"}},
    "required": ["city", "celsius"],
}


def script(messages: list[dict[str, Any]]) -> Reply:
    """Keyed on the last user message; a tool result after it is quoted back."""
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    asked, results = last_user_text(messages), tool_results(messages[last_user + 1 :])
    if results:
        return {"content": f"Result: {results[-1]}"}
    if "calc" in asked:
        return {"tool_calls": [{"name": "calculate", "arguments": {"expression": "6*7"}}]}
    if "weather" in asked:
        return {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}
    if "which city" in asked:
        return {
            "tool_calls": [{"name": "ask_user", "arguments": {"question": "Which city?", "choices": ["Paris", "Rome"]}}]
        }
    if "what do the docs say" in asked:
        return {"tool_calls": [{"name": "search_knowledge", "arguments": {"query": "when is the summer party"}}]}
    if "structured" in asked:
        return {"tool_calls": [{"name": "final_result", "arguments": {"city": "Paris", "celsius": 21}}]}
    return {"content": "Hello from the fake model."}


class World:
    def __init__(self, server: DevServer, fake: FakeProvider, cheap: FakeProvider) -> None:
        self.server, self.fake, self.cheap = server, fake, cheap
        self.http = httpx.Client(base_url=server.url, timeout=60)
        self.admin = server.auth_for("ada", "org-admin")
        self.member = server.auth_for("max", "user")
        self.provider("fake", fake, 2)
        self.provider("cheap", cheap, 0)

    def provider(self, name: str, fake: FakeProvider, tier: int, tags: tuple[str, ...] = ()) -> str:
        """Register `fake` as the org's provider `name` with one model `m` (`name:m`); its id."""
        body = {"name": name, "kind": "openai-compatible", "base_url": fake.base_url, "trust_tier": tier}
        provider = self.http.post("/api/v1/admin/providers", headers=self.admin, json=body)
        assert provider.status_code == 201, provider.text
        model = self.http.post(
            f"/api/v1/admin/providers/{provider.json()['id']}/models",
            headers=self.admin,
            json={"name": "m", "tags": list(tags)},
        )
        assert model.status_code == 201, model.text
        return str(provider.json()["id"])

    def agent(self, **fields: Any) -> dict[str, Any]:
        body = {
            "name": fields.get("slug", "Agent"),
            "instructions": "Be helpful.",
            "model": "fake:m",
            "visibility": "org",
            **fields,
        }
        created = self.http.post("/api/v1/agents", json=body, headers=self.admin)
        assert created.status_code == 201, created.text
        return dict(created.json())

    def client(self, auth: dict[str, str] | None = None) -> openai.OpenAI:
        token = (auth or self.member)["Authorization"].removeprefix("Bearer ")
        return openai.OpenAI(base_url=f"{self.server.url}/v1", api_key=token, max_retries=0, timeout=60)

    def run(self, run_id: str) -> dict[str, Any]:
        found = self.http.get(f"/api/v1/runs/{run_id}", headers=self.member)
        assert found.status_code == 200, found.text
        return dict(found.json())
