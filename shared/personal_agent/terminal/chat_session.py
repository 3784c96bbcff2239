"""What `pa chat` does over the API, apart from drawing it: the chat it talks in, the agent and model it asks,
files attached to the next message, and the run in flight (start, follow, cancel, answer its approvals and
questions)."""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from personal_agent.terminal.client import Api, ClientError
from personal_agent.terminal.events import RunFollower

HISTORY = 40  # the transcript items `pa chat --chat ID` shows of the chat it continues


@dataclass
class ChatSession:
    api: Api
    agent: str | None = None
    model: str | None = None
    chat_id: str | None = None
    attachments: list[tuple[str, str]] = field(default_factory=list)  # (id, filename) for the next message
    run_id: str | None = None
    follower: RunFollower | None = None

    def ensure_chat(self, title: str) -> str:
        if self.chat_id is None:
            body = {"title": title[:80] or "pa chat", "agent": self.agent}
            self.chat_id = str(self.api.call("POST", "/api/v1/chats", json=body)["id"])
        return self.chat_id

    def new_chat(self) -> None:
        self.chat_id, self.run_id, self.follower = None, None, None
        self.attachments.clear()

    def send(self, message: str) -> RunFollower:
        """Start a run of `message` (with the pending attachments); its follower reads the events."""
        chat_id = self.ensure_chat(message)
        body: dict[str, Any] = {"message": message, "attachments": [a for a, _ in self.attachments]}
        if self.agent:
            body["agent"] = self.agent
        if self.model:
            body["model"] = self.model
        started = self.api.call("POST", f"/api/v1/chats/{chat_id}/runs", json=body)
        self.attachments.clear()
        self.run_id = str(started["run_id"])
        self.follower = RunFollower(self.api, started["events_url"])
        return self.follower

    def cancel(self) -> None:
        if self.run_id:
            self.api.call("POST", f"/api/v1/runs/{self.run_id}/cancel")

    def decide(self, approval_id: str, approve: bool) -> None:
        self.api.call("POST", f"/api/v1/approvals/{approval_id}", json={"decision": "approve" if approve else "deny"})

    def answer(self, question_id: str, answer: str) -> None:
        self.api.call("POST", f"/api/v1/questions/{question_id}", json={"answer": answer})

    def attach(self, path: str) -> str:
        """Upload a file (presigned POST) for the next message; returns its name."""
        file = Path(path).expanduser()
        if not file.is_file():
            raise ClientError(f"no such file: {path}")
        data = file.read_bytes()
        content_type = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        chat_id = self.ensure_chat(file.name)
        body = {"filename": file.name, "content_type": content_type, "size": len(data)}
        created = self.api.call("POST", f"/api/v1/chats/{chat_id}/attachments", json=body)
        form = created["upload"]
        sent = httpx.post(form["url"], data=form["fields"], files={"file": (file.name, data, content_type)}, timeout=60)
        if sent.status_code >= 300:
            raise ClientError(f"the upload of {file.name} failed: {sent.status_code}")
        self.attachments.append((str(created["id"]), file.name))
        return file.name

    def open_chat(self) -> list[dict[str, Any]]:
        """Continue `chat_id`: its agent (unless one was asked for) and its latest messages, oldest first (the
        transcript's newest page). An unknown chat is a ClientError (404, exit 2)."""
        chat = self.api.call("GET", f"/api/v1/chats/{self.chat_id}")
        if self.agent is None and chat.get("agent_id"):
            self.agent = str(self.api.call("GET", f"/api/v1/agents/{chat['agent_id']}")["slug"])
        page = self.api.call("GET", f"/api/v1/chats/{self.chat_id}/messages", params={"limit": HISTORY})
        items: list[dict[str, Any]] = page["items"]
        return items

    def chats(self) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = self.api.call("GET", "/api/v1/chats", params={"limit": 10})["items"]
        return items

    def agents(self) -> list[str]:
        return [str(a["slug"]) for a in self.api.call("GET", "/api/v1/agents")["items"]]

    def models(self) -> list[str]:
        return [str(m["id"]) for m in self.api.call("GET", "/api/v1/models")["items"]]
