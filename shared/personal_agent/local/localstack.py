"""LocalStack as the local AWS emulator instead of moto: its core, run from its own venv (`make localstack`), as a
child process on a loopback port. Its Lambda needs Docker, so durable runs use Step Functions Activities there,
polled by `personal_agent.lifecycle.activity_worker` in this process."""

from __future__ import annotations

import atexit
import os
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from personal_agent.errors import ConfigurationError
from personal_agent.lifecycle.activity_worker import ActivityWorker, StepRunner, activity_client
from personal_agent.local.aws import LocalLambdaContext
from personal_agent.local.lambda_registry import REPO_ROOT, LambdaRegistry

LOCALSTACK_PYTHON = REPO_ROOT / ".tools" / "localstack" / "bin" / "python"

# Offline and Docker-free: no DNS server (port 53, and its start-up probe of an upstream resolver needs the
# network), no certificate download, no analytics; state under the data dir, not in the venv.
_OFFLINE_ENV = {
    "DNS_ADDRESS": "0",
    "SKIP_SSL_CERT_DOWNLOAD": "1",
    "DISABLE_EVENTS": "1",
    "ACTIVATE_PRO": "0",
    "LS_LOG": "warn",
}


def localstack_python() -> Path:
    """The venv's interpreter (`PA_LOCALSTACK_PYTHON` overrides); a clear error when it is not installed."""
    path = Path(os.environ.get("PA_LOCALSTACK_PYTHON") or LOCALSTACK_PYTHON)
    if not path.exists():
        raise ConfigurationError(f"LocalStack is not installed at {path}; run `make localstack` (it needs python3.13)")
    return path


@dataclass
class LocalStackServer:
    """One LocalStack process on 127.0.0.1:port; `stop()` ends it (and only it)."""

    port: int
    data_dir: Path
    process: subprocess.Popen[bytes] | None = None
    log_path: Path = field(init=False)
    _log: IO[bytes] | None = None

    def __post_init__(self) -> None:
        self.log_path = self.data_dir / "localstack.log"

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 90.0) -> LocalStackServer:
        """Start the process and wait until its health endpoint answers; fail with the log's tail otherwise."""
        python = localstack_python()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PA_", "DATABASE_", "REDIS_"))}
        env |= _OFFLINE_ENV | {
            "GATEWAY_LISTEN": f"127.0.0.1:{self.port}",
            "FILESYSTEM_ROOT": str(self.data_dir / "filesystem"),
        }
        self._log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [str(python), "-m", "localstack.runtime.main"],
            cwd=self.data_dir,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        atexit.register(self.stop)  # a dev server that fails to start, or exits any other way, leaves no LocalStack
        deadline = time.monotonic() + timeout
        while not self._healthy():
            if self.process.poll() is not None or time.monotonic() > deadline:
                tail = self.log_path.read_text(errors="replace")[-3000:]
                self.stop()
                raise ConfigurationError(f"LocalStack did not start on port {self.port}; its log ends:\n{tail}")
            time.sleep(0.2)
        return self

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.endpoint_url}/_localstack/health", timeout=2) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            # It keeps no state worth a graceful shutdown, and its runtime can sit on SIGTERM for minutes.
            self.process.terminate()
            try:
                self.process.wait(timeout=3)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        if self._log is not None:
            self._log.close()
            self._log = None


def ensure_activity(sfn: Any, name: str) -> str:
    """Create (or find: creating is idempotent) the Step Functions activity the steps run behind; return its ARN."""
    return str(sfn.create_activity(name=name)["activityArn"])


def activity_substitutions(activity_arn: str) -> dict[str, str]:
    """The ASL substitutions of activity mode: every Task runs behind the activity; the callback Task's token is
    the activity task's own (`task_token_path` is an inert constant where lambda mode reads `$$.Task.Token`)."""
    return {"StepsTaskResource": activity_arn, "StepsCallbackResource": activity_arn, "TaskTokenKey": "task_token_path"}


def local_step_runner(registry: LambdaRegistry, region: str) -> StepRunner:
    """Run a task with the handler of the function its Task names (the steps function), in this process."""

    def run(event: dict[str, Any], function: str | None) -> dict[str, Any]:
        name, handler = registry.resolve(function or "pa-steps")
        result: dict[str, Any] = handler(event, LocalLambdaContext(function_name=name, region=region))
        return result

    return run


def start_activity_worker(
    endpoint_url: str, region: str, activity_arn: str, registry: LambdaRegistry, threads: int = 4
) -> ActivityWorker:
    """The dev server's (and the tests') pollers of the steps activity."""
    runner = local_step_runner(registry, region)
    return ActivityWorker(lambda: activity_client(endpoint_url, region), activity_arn, runner, threads).start()
