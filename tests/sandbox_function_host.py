"""One execution environment of the sandbox function, as Lambda runs it, for tests: the BUILT function (the folder
`make build-SandboxFunction` fills: app.py, kernel.py, seccomp.py) imported from that folder alone, its handler
called once per event read from stdin (one JSON line), its reply written to stdout (one JSON line).

    python tests/sandbox_function_host.py TASK_DIR TMP_DIR LAYER_DIR

TMP_DIR stands in for Lambda's /tmp and LAYER_DIR for the layer's /opt/python. The tests start this under bwrap in
a PID namespace of its own (and as an unprivileged user), so the handler's kill of every process but its own and
its ancestors reaches only what the code started, as in a Lambda execution environment. It imports nothing of the
platform."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

FUNCTION_TIMEOUT_SECONDS = 60  # template.yaml's SandboxFunction Timeout


class Context:
    """The Lambda context the handler reads: the time left of the invocation."""

    def __init__(self) -> None:
        self.deadline = time.monotonic() + FUNCTION_TIMEOUT_SECONDS

    def get_remaining_time_in_millis(self) -> int:
        return int((self.deadline - time.monotonic()) * 1000)


def main() -> None:
    task, tmp, layer = sys.argv[1:4]
    sys.path.insert(0, task)  # Lambda's /var/task
    import app  # the built function

    app.TMP, app.LAYER = tmp, layer
    for line in sys.stdin:
        reply: dict[str, Any] = app.handler(json.loads(line), Context())
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
