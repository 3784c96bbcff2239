"""`pa chat`: an interactive chat in the terminal (Textual; answers rendered as Markdown by Rich). Streams the
answer, shows tool calls as cards, asks approvals (`y`/`n`) and `ask_user` questions inline, Ctrl-C stops the
run (a second Ctrl-C, with no run, quits), resumes a dropped stream where it stopped (`Last-Event-ID`). The sources
of an answer (its `search_knowledge` passages) are listed under it, and each sub-agent is a card updated as it works.
Commands: /attach FILE, /agent SLUG, /model NAME, /new, /chats, /help, /quit. Fits an 80x24 terminal."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from rich.markdown import Markdown as RichMarkdown
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Input, Static

from personal_agent.terminal.chat_session import ChatSession
from personal_agent.terminal.client import Api, ClientError
from personal_agent.terminal.run_cards import SEARCH_TOOL, Sources, SubagentCard, search_summary

HELP = (
    "Commands: /attach FILE · /agent SLUG · /model NAME · /new · /chats · /quit. "
    "Ctrl-C stops a run; Ctrl-C again quits. An approval: y or n. A question: type the answer."
)


class Answer(Static):
    """An answer streaming in: the text so far, drawn as Markdown by Rich (code blocks highlighted); each delta
    redraws it, and the log lays it out again at its new height."""

    def __init__(self, text: str = "") -> None:
        super().__init__(RichMarkdown(text) if text else "")
        self.text = text

    def add(self, delta: str) -> None:
        self.text += delta
        self.update(RichMarkdown(self.text))


# Anything else that starts with "/" is a message (the demo model's `/tool NAME {args}`, a path, ...).
COMMANDS = frozenset({"/attach", "/agent", "/model", "/new", "/chats", "/help", "/quit", "/exit"})


class ChatApp(App[int]):
    CSS = """
    #status { height: 1; background: $primary-background; padding: 0 1; }
    #log { height: 1fr; padding: 0 1; }
    .user { color: $text-accent; margin-top: 1; }
    .card { border: round $secondary; padding: 0 1; }
    .ask { border: round $warning; padding: 0 1; }
    .subagent { border: round $accent; padding: 0 1; }
    .note { color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("ctrl+c", "interrupt", "Stop / quit", priority=True)]

    def __init__(self, session: ChatSession, history: list[dict[str, Any]] | None = None) -> None:
        super().__init__()
        self.session = session
        self.earlier = history or []  # the earlier messages of the chat it continues (`--chat ID`)
        self.running = self.stopped = False
        self.pending: list[dict[str, Any]] = []  # approvals and questions, oldest first: the next input answers [0]
        self.answer: Answer | None = None
        self.tools: dict[str, tuple[Static, str, str]] = {}  # call id -> (card, name, args so far)
        self.sources = Sources()  # passages found since the last answer that listed them
        self.subagents: dict[str, tuple[Static, SubagentCard]] = {}  # child run id -> its card

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        yield VerticalScroll(id="log")
        yield Input(placeholder="Message (/help)", id="prompt")

    def on_mount(self) -> None:
        self.query_one("#log", VerticalScroll).anchor()  # stays at the bottom as answers grow, unless scrolled up
        self.query_one("#prompt", Input).focus()
        self._status("ready")
        self._note(HELP)
        self._replay(self.earlier)

    def _replay(self, items: list[dict[str, Any]]) -> None:
        """The chat's earlier turns, as they were shown live: the messages, the tools called, the answers."""
        for item in items:
            if item.get("role") == "user" and item.get("text"):
                self._note(f"> {item['text']}", "user")
            elif item.get("role") == "assistant" and item.get("text"):
                self._add(Answer(str(item["text"])))
            for call in item.get("tool_calls") or []:
                self._note(f"⚙ {call.get('name')}", "card")
        if items:
            self._note(f"─ the chat so far ({len(items)} items); continue it below", "note")

    def _status(self, state: str) -> None:
        chat = (self.session.chat_id or "new")[:8]
        agent, model = self.session.agent or "assistant", self.session.model or "default model"
        self.query_one("#status", Static).update(f"pa chat · {agent} · {model} · chat {chat} · {state}")

    def _add(self, widget: Static) -> None:
        log = self.query_one("#log", VerticalScroll)
        log.mount(widget)
        log.call_after_refresh(log.scroll_end, animate=False)

    def _note(self, text: str, classes: str = "note") -> Static:
        widget = Static(text, classes=classes, markup=False)
        self._add(widget)
        return widget

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        event.input.value = ""
        if not text:
            return
        try:
            if self.pending:
                self._answer_pending(text)
            elif text.split(" ", 1)[0] in COMMANDS:
                self._command(text)
            elif self.running:
                self._note("A run is in progress: wait for it, or Ctrl-C to stop it.")
            else:
                self._note(f"> {text}", "user")
                self._start(text)
        except ClientError as exc:
            self._note(f"Error: {exc}")

    def _answer_pending(self, text: str) -> None:
        pending = self.pending.pop(0)
        if "approval_id" in pending:
            approve = text.lower() in {"y", "yes", "approve"}
            self.session.decide(pending["approval_id"], approve)
            self._note(f"{'Approved' if approve else 'Denied'}: {pending.get('tool')}")
        else:
            self.session.answer(pending["question_id"], text)
            self._note(f"Answered: {text}")
        self._status("waiting for you" if self.pending else "running")

    def _command(self, text: str) -> None:
        name, _, arg = text.partition(" ")
        arg = arg.strip()
        if name in ("/quit", "/exit"):
            self.exit(0)
        elif name == "/help":
            self._note(HELP)
        elif name == "/attach":
            self._note(f"Attached {self.session.attach(arg)} (sent with your next message)" if arg else "/attach FILE")
        elif name == "/agent":
            self.session.agent = arg or None
            self.session.new_chat()
            self._note(
                f"Agent: {arg or 'assistant'} (a new chat)" if arg else "Agents: " + ", ".join(self.session.agents())
            )
        elif name == "/model":
            self.session.model = arg or None
            self._note(f"Model: {arg}" if arg else "Models: " + ", ".join(self.session.models()[:12]))
        elif name == "/new":
            self.session.new_chat()
            self._note("A new chat.")
        elif name == "/chats":  # newest first, the one this is marked; `pa chat --chat ID` continues one
            chats = self.session.chats()
            for chat in chats:
                self._note(f"{'▸' if chat['id'] == self.session.chat_id else ' '} {chat['id']}  {chat['title']}")
            self._note("(pa chat --chat ID continues one)" if chats else "No chats yet.")
        self._status("ready")

    def _start(self, message: str) -> None:
        follower = self.session.send(message)
        self.running, self.answer, self.tools, self.stopped = True, None, {}, False
        self.sources, self.subagents = Sources(), {}
        self._status("running")
        self._follow(follower)

    @work(thread=True, exclusive=True)
    def _follow(self, follower: Any) -> None:
        try:
            for event in follower.events():
                self.call_from_thread(self._apply, event)
        except ClientError as exc:
            self.call_from_thread(self._note, f"Error: {exc}")
        self.call_from_thread(self._finished)

    def _finished(self) -> None:
        self.running, self.pending = False, []
        self._status("ready")

    def _apply(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "TEXT_MESSAGE_CONTENT":
            self._text(str(event.get("delta", "")))
        elif kind == "TEXT_MESSAGE_END":
            self.answer = None
            line = self.sources.take_line()
            if line:
                self._note(line, "note")
        elif kind in ("TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_RESULT"):
            self._tool(kind, event)
        elif kind == "CUSTOM":
            self._custom(str(event.get("name")), event.get("value") or {})
        elif kind == "RUN_ERROR":
            self._note(f"Run failed: {event.get('message')} ({event.get('code')})")
        elif kind == "RUN_FINISHED" and (event.get("outcome") or {}).get("type") != "interrupt" and not self.stopped:
            self._note("─ done", "note")

    def _text(self, delta: str) -> None:
        if self.answer is None:
            self.answer = Answer()
            self._add(self.answer)
        self.answer.add(delta)

    def _tool(self, kind: str, event: dict[str, Any]) -> None:
        call = str(event.get("toolCallId"))
        if kind == "TOOL_CALL_START":
            self.answer = None
            card = self._note(f"⚙ {event.get('toolCallName')}", "card")
            self.tools[call] = (card, str(event.get("toolCallName")), "")
        elif call in self.tools:
            card, name, args = self.tools[call]
            if kind == "TOOL_CALL_ARGS":
                self.tools[call] = (card, name, args + str(event.get("delta", "")))
                card.update(f"⚙ {name} {self.tools[call][2][:160]}")
            elif name == SEARCH_TOOL:
                self.sources.add(event.get("content"))
                card.update(f"⚙ {name} {args[:120]}\n→ {search_summary(event.get('content'))}")
            else:
                card.update(f"⚙ {name} {args[:120]}\n→ {str(event.get('content', ''))[:240]}")

    def _custom(self, name: str, value: dict[str, Any]) -> None:
        if name == "approval_requested":
            args = json.dumps(value.get("args"))[:200]
            self._note(f"Approve {value.get('tool')} {args}? Type y to approve, n to deny.", "ask")
            self.pending.append(value)
            self._status("waiting for your approval")
        elif name == "question_asked":
            choices = value.get("choices")
            extra = f" (choose: {', '.join(choices)})" if choices else ""
            self._note(f"Question: {value.get('question')}{extra}. Type your answer.", "ask")
            self.pending.append(value)
            self._status("waiting for your answer")
        elif name == "run_cancelled":
            self.stopped = True
            self._note("Run stopped.")
        elif name in ("subagent_started", "subagent_progress", "subagent_finished"):
            self._subagent(name, value)
        elif name == "resume_expired":
            self._note("· the run's events expired: reload the chat (pa chat --chat ID)")

    def _subagent(self, name: str, value: dict[str, Any]) -> None:
        child = str(value.get("child_run_id"))
        if child not in self.subagents:
            self.answer = None  # text after the card is a new answer below it
            self.subagents[child] = (self._note("⇢ sub-agent", "subagent"), SubagentCard())
        widget, card = self.subagents[child]
        card.apply(name, value)
        widget.update(card.text())

    def action_interrupt(self) -> None:
        if self.running:
            try:
                self.session.cancel()
            except ClientError as exc:
                self._note(f"Error: {exc}")
            self._note("Stopping the run (Ctrl-C again, once it stopped, quits).")
            self._status("stopping")
        else:
            self.exit(0)


def run_chat(api: Api, *, agent: str | None, chat_id: str | None, model: str | None) -> int:
    session = ChatSession(api, agent=agent, model=model, chat_id=chat_id)
    history = session.open_chat() if chat_id else []  # before the screen: an unknown chat is one line, exit 2
    return ChatApp(session, history).run() or 0
