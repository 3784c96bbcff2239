"""Durable-run steps as a Step Functions Activity: workers long-poll the activity and run each task with the same
steps handler the `lambda:invoke` Tasks call, so both modes emit the same events and checkpoints.

The ASL is the same file in both modes (its Task `Resource` is a substitution): a task's input is what the
lambda:invoke Task would send (`{"FunctionName", "Payload"}`) and a worker answers with `{"Payload": result}`,
the shape the Tasks' `ResultSelector`s read. An unhandled error is reported under its type name, as Lambda
reports it, so the Tasks' `Retry` and `Catch` match the same names. A callback step (`await_approval`) gets the
activity's own task token (an activity task has no `$$.Task.Token`) and is not answered here: the approval, its
timeout or a cancel answers it, exactly as with `.waitForTaskToken`. A callback step is the one whose input holds
`task_token_path`, the inert constant the ASL passes where lambda mode reads the token from `$$.Task.Token`.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from personal_agent.aws_clients import aws_client_at

log = logging.getLogger("personal_agent.durable.activity")

# Called with the task's event and the function the Task names (`FunctionName`; None when it names none).
StepRunner = Callable[[dict[str, Any], str | None], dict[str, Any]]
CALLBACK_MARK = "task_token_path"
# GetActivityTask holds a poll up to 60 s; the client must wait longer than that.
POLL_READ_TIMEOUT_SECONDS = 75


def task_event(task_input: str, token: str) -> tuple[dict[str, Any], str | None, bool]:
    """The steps handler's event for an activity task, the function name the Task gave, and whether it is a
    callback step (answered elsewhere, through the token the event carries)."""
    data = json.loads(task_input or "{}")
    event = dict(data.get("Payload", data)) if isinstance(data, dict) else {}
    callback = event.pop(CALLBACK_MARK, None) is not None
    if callback:
        event["task_token"] = token
    function = data.get("FunctionName") if isinstance(data, dict) else None
    return event, str(function) if function else None, callback


def run_task(sfn: Any, task: dict[str, Any], runner: StepRunner) -> None:
    """Run one activity task and report its result (or its error) to Step Functions."""
    token = str(task["taskToken"])
    event, function, callback = task_event(str(task.get("input") or "{}"), token)
    try:
        result = runner(event, function)
    except Exception as exc:  # as the Lambda runtime reports an unhandled error: its type is the Error name
        cause = json.dumps({"errorType": type(exc).__name__, "errorMessage": str(exc)[:1000]})
        sfn.send_task_failure(taskToken=token, error=type(exc).__name__[:256], cause=cause)
        return
    if callback:
        return
    sfn.send_task_success(taskToken=token, output=json.dumps({"Payload": result}))


def activity_client(endpoint_url: str | None, region: str) -> Any:
    """A Step Functions client whose reads outlast a long poll."""
    retries = {"max_attempts": 2, "mode": "standard"}
    return aws_client_at("stepfunctions", endpoint_url, region, read_timeout=POLL_READ_TIMEOUT_SECONDS, retries=retries)


class ActivityWorker:
    """`threads` pollers of one activity. `may_poll` is asked before each poll (a Lambda poller stops in time
    to finish what it took); `stop()` ends polling (a poll in flight still completes its task)."""

    def __init__(
        self,
        client_factory: Callable[[], Any],
        activity_arn: str,
        runner: StepRunner,
        threads: int = 4,
        may_poll: Callable[[], bool] = lambda: True,
    ) -> None:
        self.client_factory = client_factory
        self.activity_arn = activity_arn
        self.runner = runner
        self.may_poll = may_poll
        self.tasks_done = 0
        self._stop = threading.Event()
        name = f"{socket.gethostname()}-{os.getpid()}"
        self._threads = [
            threading.Thread(target=self._poll, args=(f"{name}-{i}",), name=f"pa-activity-{i}", daemon=True)
            for i in range(threads)
        ]

    def start(self) -> ActivityWorker:
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def join(self, timeout: float | None = None) -> None:
        for thread in self._threads:
            thread.join(timeout)

    def _poll(self, worker_name: str) -> None:
        sfn = self.client_factory()
        while not self._stop.is_set() and self.may_poll():
            try:
                task = sfn.get_activity_task(activityArn=self.activity_arn, workerName=worker_name)
            except Exception as exc:  # the emulator went away or the network blinked: poll again shortly
                if self._stop.wait(1.0):
                    return
                log.warning("polling the steps activity failed: %s", type(exc).__name__)
                continue
            if not task.get("taskToken"):
                continue  # the long poll ended empty
            try:
                run_task(sfn, task, self.runner)
            except Exception:
                log.exception("an activity task could not be reported")
            self.tasks_done += 1


def poll_scheduled(remaining_ms: Callable[[], int], runner: StepRunner, window_seconds: float = 55.0) -> int:
    """One scheduled poller invocation (the activity poller Lambda): poll for about `window_seconds`, and only while
    a task taken now still has the step timeout before the invocation's own ends; return the tasks run."""
    from personal_agent.settings import get_settings

    settings = get_settings()
    if not settings.steps_activity_arn:
        raise RuntimeError("PA_STEPS_ACTIVITY_ARN is not set")
    started = time.monotonic()
    reserve_ms = (settings.step_timeout_seconds + POLL_READ_TIMEOUT_SECONDS) * 1000

    def may_poll() -> bool:
        return time.monotonic() - started < window_seconds and remaining_ms() > reserve_ms

    if not may_poll():
        log.error("the poller's timeout leaves no time to take a task; lower StepTimeoutSeconds")
    region = settings.aws_region
    worker = ActivityWorker(
        lambda: activity_client(settings.aws_endpoint_url, region),
        settings.steps_activity_arn,
        runner,
        threads=settings.activity_worker_threads,
        may_poll=may_poll,
    ).start()
    worker.join()
    return worker.tasks_done
