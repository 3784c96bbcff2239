"""moto in-process: Step Functions that execute the real ASL, with `lambda:invoke` served by our handlers."""

from __future__ import annotations

import json
import logging
import os
import re
import traceback
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from personal_agent.local.lambda_registry import REPO_ROOT, LambdaRegistry

ACCOUNT_ID = "123456789012"
log = logging.getLogger("personal_agent.local.aws")
STATE_MACHINES_DIR = REPO_ROOT / "infra" / "statemachines"
LOCAL_ROLE_ARN = f"arn:aws:iam::{ACCOUNT_ID}:role/pa-local-states"


@dataclass
class LocalLambdaContext:
    """The parts of the Lambda context object our handlers and Powertools read."""

    function_name: str
    region: str = "us-east-1"
    memory_limit_in_mb: int = 1024
    timeout_ms: int = 900_000
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    function_version: str = "$LATEST"
    log_group_name: str = "/aws/lambda/local"
    log_stream_name: str = "local"

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:{self.region}:{ACCOUNT_ID}:function:{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        return self.timeout_ms


class LambdaDispatcher:
    """Serves moto's docker-free Lambda invokes by calling the registered handler in-process."""

    def __init__(self, registry: LambdaRegistry, region: str, workers: int = 8) -> None:
        self.registry = registry
        self.region = region
        self.executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="pa-lambda")
        self.invocations: list[tuple[str, dict[str, Any]]] = []

    def call(self, name_or_arn: str, event: Any) -> tuple[bytes, bool]:
        """Invoke synchronously on a worker thread; return the payload and whether the function errored."""
        return self.executor.submit(self._call, name_or_arn, event).result()

    def _call(self, name_or_arn: str, event: Any) -> tuple[bytes, bool]:
        try:
            name, handler = self.registry.resolve(name_or_arn)
        except Exception as exc:  # on AWS: Runtime.ImportModuleError, and the execution's Catch cannot help
            _fail_unservable_run(name_or_arn, event, exc)
            return _error_payload(exc), True
        self.invocations.append((name, event))
        try:
            result = handler(event, LocalLambdaContext(function_name=name, region=self.region))
        except Exception as exc:  # the Lambda runtime reports any exception as an Unhandled function error
            return _error_payload(exc), True
        return json.dumps(result).encode(), False

    def invoke(self, function_name: str, body: Any, headers: Any, response_headers: dict[str, str]) -> bytes:
        event = json.loads(body) if body else {}
        if headers.get("X-Amz-Invocation-Type") == "Event":
            self.executor.submit(self._call, function_name, event)
            return b""
        payload, errored = self.call(function_name, event)
        if errored:
            response_headers["x-amz-function-error"] = "Unhandled"
        return payload


def _error_payload(exc: BaseException) -> bytes:
    payload = {
        "errorType": type(exc).__name__,
        "errorMessage": str(exc),
        "stackTrace": traceback.format_exception(exc)[-3:],
    }
    return json.dumps(payload).encode()


def _fail_unservable_run(function: str, event: Any, exc: BaseException) -> None:
    """A function that cannot even be loaded would leave its run queued forever (the state machine's failure
    step runs in the same function): end the run `failed` with `function_unavailable` from here."""
    log.error("local Lambda %s could not be loaded: %s: %s", function, type(exc).__name__, exc)
    if not isinstance(event, dict) or "run_id" not in event or "org_id" not in event:
        return
    from personal_agent.engine.runner import fail_run
    from personal_agent.runtime import run_sync

    try:
        run_id, org_id = uuid.UUID(str(event["run_id"])), uuid.UUID(str(event["org_id"]))
    except ValueError:
        return
    name = LambdaRegistry._name(function)
    run_sync(fail_run(run_id, org_id, "function_unavailable", f"the {name} function could not be loaded"))


_dispatcher: LambdaDispatcher | None = None


def install_dispatcher(dispatcher: LambdaDispatcher) -> None:
    """Route moto's docker-free Lambda backend to `dispatcher` (process-wide)."""
    global _dispatcher
    from moto.awslambda_simple.models import LambdaSimpleBackend

    _dispatcher = dispatcher

    def invoke(
        self: Any, function_name: str, qualifier: str | None, body: Any, headers: Any, response_headers: Any
    ) -> bytes:
        assert _dispatcher is not None
        return _dispatcher.invoke(function_name, body, headers, response_headers)

    LambdaSimpleBackend.invoke = invoke  # type: ignore[method-assign]


def configure_moto() -> None:
    """Execute state machines for real and use the docker-free Lambda backend."""
    from moto.core.config import default_user_config

    default_user_config["stepfunctions"] = {"execute_state_machine": True}
    default_user_config["lambda"] = {"use_docker": False}

    logging.getLogger("werkzeug").setLevel(logging.WARNING)


@dataclass
class LocalAws:
    endpoint_url: str
    server: Any
    dispatcher: LambdaDispatcher

    def stop(self) -> None:
        self.server.stop()
        self.dispatcher.executor.shutdown(wait=False, cancel_futures=True)

    def exited(self) -> str | None:
        """None while moto's server thread serves; "stopped serving" once it ended."""
        thread = self.server._thread  # ThreadedMotoServer's serving thread
        return None if thread is not None and thread.is_alive() else "stopped serving"

    def restart(self) -> None:
        """Serve again on the same port; moto keeps its state in this process, so nothing is lost."""
        from moto.server import ThreadedMotoServer

        if self.server._server is not None:
            self.server._server.server_close()  # frees the port (its start would wait forever on a taken one)
        host, port = self.endpoint_url.removeprefix("http://").rsplit(":", 1)
        server = ThreadedMotoServer(ip_address=host, port=int(port), verbose=False)
        server.start()
        self.server = server


def start_moto(port: int, registry: LambdaRegistry, region: str = "us-east-1") -> LocalAws:
    """Start moto on 127.0.0.1:port in a thread with our handlers behind `lambda:invoke`."""
    from moto.server import ThreadedMotoServer

    os.environ["MOTO_PORT"] = str(port)  # the SFN interpreter calls Lambda through this port
    for var, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing")):
        os.environ.setdefault(var, value)
    configure_moto()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    dispatcher = LambdaDispatcher(registry, region)
    install_dispatcher(dispatcher)
    return LocalAws(f"http://127.0.0.1:{port}", server, dispatcher)


def function_arn(name: str, region: str = "us-east-1") -> str:
    return f"arn:aws:lambda:{region}:{ACCOUNT_ID}:function:{name}"


def local_substitutions(
    registry: LambdaRegistry, region: str = "us-east-1", extra: dict[str, str] | None = None
) -> dict[str, str]:
    """The DefinitionSubstitutions the template gives, with local ARNs (`<LogicalId>Arn`)."""
    subs: dict[str, str] = {}
    for spec in {s.local_name: s for s in registry._specs.values()}.values():
        subs[f"{spec.logical_id}Arn"] = function_arn(spec.local_name, region)
    subs.update(extra or {})
    return subs


_SUBSTITUTION = re.compile(r"\$\{([A-Za-z0-9_]+)\}")


def render_asl(path: Path, substitutions: dict[str, str]) -> str:
    """The ASL text with `${Name}` substitutions applied; an undefined name is an error."""
    text = path.read_text()
    missing = sorted(set(_SUBSTITUTION.findall(text)) - substitutions.keys())
    if missing:
        raise KeyError(f"{path.name} uses undefined substitutions: {', '.join(missing)}")
    return _SUBSTITUTION.sub(lambda m: substitutions[m.group(1)], text)


def ensure_state_machine(sfn: Any, name: str, definition: str) -> str:
    """Create or update a state machine by name; return its ARN."""
    for page in sfn.get_paginator("list_state_machines").paginate():
        for sm in page["stateMachines"]:
            if sm["name"] == name:
                sfn.update_state_machine(stateMachineArn=sm["stateMachineArn"], definition=definition)
                return str(sm["stateMachineArn"])
    created = sfn.create_state_machine(name=name, definition=definition, roleArn=LOCAL_ROLE_ARN, type="STANDARD")
    return str(created["stateMachineArn"])
