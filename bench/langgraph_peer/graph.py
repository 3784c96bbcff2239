"""The peer for `bench/langgraph_compare.py`: a LangGraph agent served by LangGraph's in-memory Agent Server
(`langgraph dev`, from `langgraph-cli[inmem]` in a venv of its own, never this project's), with a scripted chat
model of the same shape as `bench/scripted_model.py`: a message `tools:N ...` makes it call `current_time` N times,
one model request each, then reply 200 words as 200 streamed chunks; any other message gets the reply at once.
No network, no delay. Runs only inside that venv (it imports LangGraph)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

CHUNKS = 200
WORDS = ("the ", "run ", "has ", "one ", "more ", "word ", "for ", "you ", "and ", "then ")
_TOOLS = re.compile(r"\btools:(\d+)\b")


@tool
def current_time() -> str:
    """The current time (UTC, ISO 8601)."""
    return datetime.now(UTC).isoformat()


def _this_turn(messages: list[BaseMessage]) -> list[BaseMessage]:
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], HumanMessage):
            return messages[i:]
    return messages


class ScriptedChat(BaseChatModel):
    """Tool calls first (as many as `tools:N` asks, one per request), then the 200-chunk reply."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChat:
        return self

    def _next(self, messages: list[BaseMessage]) -> AIMessage | None:
        turn = _this_turn(messages)
        match = _TOOLS.search(str(turn[0].content)) if turn else None
        done = sum(1 for m in turn if isinstance(m, ToolMessage))
        if match and done < int(match.group(1)):
            call = {"name": "current_time", "args": {}, "id": f"call_{done}", "type": "tool_call"}
            return AIMessage(content="", tool_calls=[call])
        return None

    def _generate(
        self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        call = self._next(messages)
        message = call or AIMessage(content="".join(WORDS[i % len(WORDS)] for i in range(CHUNKS)))
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _chunks(self, messages: list[BaseMessage]) -> Iterator[ChatGenerationChunk]:
        call = self._next(messages)
        if call is not None:
            tc = call.tool_calls[0]
            chunk = AIMessageChunk(
                content="", tool_call_chunks=[{"name": tc["name"], "args": "{}", "id": tc["id"], "index": 0}]
            )
            yield ChatGenerationChunk(message=chunk)
            return
        for i in range(CHUNKS):
            yield ChatGenerationChunk(message=AIMessageChunk(content=WORDS[i % len(WORDS)]))

    def _stream(
        self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        yield from self._chunks(messages)

    # Natively async: LangChain's default `_astream` runs `_stream` in a thread, a hop per chunk the peer should not
    # pay. LangChain itself reports each chunk to the run's callbacks (LangGraph's token stream).
    async def _astream(
        self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        for chunk in self._chunks(messages):
            yield chunk


MODEL = ScriptedChat()


async def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
    reply = await MODEL.ainvoke(state["messages"])
    return {"messages": [reply]}


def route(state: MessagesState) -> str:
    last = state["messages"][-1]
    return "tools" if isinstance(last, AIMessage) and last.tool_calls else END


builder = StateGraph(MessagesState)
builder.add_node("agent", agent)
builder.add_node("tools", ToolNode([current_time]))
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", route, ["tools", END])
builder.add_edge("tools", "agent")
graph = builder.compile()
