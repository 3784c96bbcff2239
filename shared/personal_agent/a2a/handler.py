"""The A2A request handler (a2a-sdk's `RequestHandler`, served by its JSON-RPC dispatcher): a message starts one
of our runs through the one launch chokepoint (`trigger_source="a2a"`, the endpoint's agent); `message/stream`
answers with the run's events from the bus as A2A events; `message/send` waits for the same events to end (or for
an approval) and answers with the task; `tasks/get` and `tasks/cancel` are the run's status and cancel paths.

The context id is a chat of the caller's: no context id starts a new chat (bound to the agent), the context id of
an earlier task continues that chat, so the agent sees the conversation so far. Push notifications, task lists,
resubscribing and the extended card are not offered (the card says so)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing

from a2a.server.context import ServerCallContext
from a2a.server.events import Event
from a2a.server.request_handlers import RequestHandler
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a.utils.errors import (
    ExtendedAgentCardNotConfiguredError,
    PushNotificationNotSupportedError,
    UnsupportedOperationError,
)

from personal_agent.a2a import launch as a2a_launch
from personal_agent.a2a import tasks
from personal_agent.a2a.errors import a2a_errors
from personal_agent.a2a.translate import Translator, frame_events
from personal_agent.bus.key_names import run_stream
from personal_agent.settings import get_settings
from personal_agent.spec.run_spec import RunSpec
from personal_agent.stream.queued_runs import Queued
from personal_agent.stream.relay import relay

CANCEL_WAIT_SECONDS = 15.0
"""How long `tasks/cancel` follows the run's events for it to end (an inline run stops between stream chunks)."""


def caller_of(context: ServerCallContext) -> tasks.Caller:
    caller = context.state.get("caller")
    assert isinstance(caller, tasks.Caller), "the A2A route puts the verified caller in the call context"
    return caller


async def _not_gone() -> bool:
    return False  # a run this request started or is cancelling: its stream is being written


class RunsRequestHandler(RequestHandler):
    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        caller = caller_of(context)
        async with a2a_errors():
            spec, frames = await a2a_launch.start_streaming(caller, params.message)
        translator = Translator(str(spec.run_id), str(spec.chat_id))
        yield a2a_launch.submitted_task(spec, params.message)
        async with aclosing(frames):
            async for chunk in frames:
                for event in frame_events(chunk):
                    for out in translator.feed(event):
                        yield out
                if translator.outcome != "open":
                    break
        final = await _final_task(caller, spec, translator)
        yield TaskStatusUpdateEvent(task_id=final.id, context_id=final.context_id, status=final.status)

    async def on_message_send(self, params: SendMessageRequest, context: ServerCallContext) -> Task | Message:
        caller = caller_of(context)
        if params.configuration.return_immediately:
            async with a2a_errors():
                spec = await a2a_launch.start(caller, params.message)
            return await tasks.load_task(caller, str(spec.run_id))
        async with a2a_errors():
            spec, frames = await a2a_launch.start_streaming(caller, params.message)
        translator = Translator(str(spec.run_id), str(spec.chat_id))
        await _follow(frames, translator)
        return await _final_task(caller, spec, translator, _history(params))

    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task | None:
        history = params.history_length if params.HasField("history_length") else None
        return await tasks.load_task(caller_of(context), params.id, history)

    async def on_cancel_task(self, params: CancelTaskRequest, context: ServerCallContext) -> Task | None:
        caller = caller_of(context)
        async with a2a_errors():
            row = await tasks.cancel_task(caller, params.id)
        if row is None:  # a message still queued: cancelled before it started
            return await tasks.load_task(caller, params.id)
        settings = get_settings()
        frames = relay(
            run_stream(row.org_id, row.id),
            None,
            heartbeat=settings.sse_heartbeat_seconds,
            max_lifetime=CANCEL_WAIT_SECONDS,
            is_gone=_not_gone,
        )
        translator = Translator(str(row.id), str(row.chat_id))
        await _follow(a2a_launch.closing_frames(frames), translator, until_ended=True)
        return await tasks.load_task(caller, params.id)

    async def on_list_tasks(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        raise UnsupportedOperationError("listing tasks is not offered: GET /api/v1/runs lists your runs")

    async def on_subscribe_to_task(
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        nothing: tuple[Event, ...] = ()
        for event in nothing:  # an async generator, as the interface says, that refuses before its first event
            yield event
        raise UnsupportedOperationError("resubscribing is not offered: GET /api/v1/runs/{id}/events resumes a run")

    async def on_create_task_push_notification_config(
        self, params: TaskPushNotificationConfig, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        raise PushNotificationNotSupportedError

    async def on_get_task_push_notification_config(
        self, params: GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        raise PushNotificationNotSupportedError

    async def on_list_task_push_notification_configs(
        self, params: ListTaskPushNotificationConfigsRequest, context: ServerCallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        raise PushNotificationNotSupportedError

    async def on_delete_task_push_notification_config(
        self, params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> None:
        raise PushNotificationNotSupportedError

    async def on_get_extended_agent_card(
        self, params: GetExtendedAgentCardRequest, context: ServerCallContext
    ) -> AgentCard:
        raise ExtendedAgentCardNotConfiguredError


def _history(params: SendMessageRequest) -> int | None:
    config = params.configuration
    return config.history_length if config.HasField("history_length") else None


async def _follow(frames: AsyncGenerator[str], translator: Translator, *, until_ended: bool = False) -> None:
    """Read the run's events until it ends or waits for a person (or the stream closes); `until_ended`: past
    any wait (a cancel reads the run's stream from its start, where an earlier wait may be)."""
    async with aclosing(frames):
        async for chunk in frames:
            for event in frame_events(chunk):
                translator.feed(event)
                if until_ended and translator.outcome == "interrupted":
                    translator.outcome = "open"
            if translator.outcome != "open":
                return


async def _final_task(
    caller: tasks.Caller, spec: RunSpec | Queued, translator: Translator, history_length: int | None = None
) -> Task:
    """The task once its stream stopped: as stored; `input-required` when the run stopped to wait for a person
    (whatever its row says at this instant), naming the approvals it waits for."""
    task = await tasks.load_task(caller, str(spec.run_id), history_length)
    if translator.outcome == "interrupted":
        waiting = tasks.waiting_message(task.id, task.context_id, translator.approvals)
        task.status.CopyFrom(TaskStatus(state=TaskState.TASK_STATE_INPUT_REQUIRED, message=waiting))
    return task
