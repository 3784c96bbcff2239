"""A child process's output copied to a log file line by line, with an event set the moment a given line appears
(a server saying it is ready), or when the output ends (it exited): a readiness wait on the process's own word
instead of polling it."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path


def follow_output(process: subprocess.Popen[str], log: Path, marker: str) -> threading.Event:
    """Copy `process`'s stdout (a text pipe) to `log`; the event is set when a line holds `marker` or output ends."""
    seen = threading.Event()

    def copy() -> None:
        assert process.stdout is not None
        with log.open("w") as out:
            for line in process.stdout:
                out.write(line)
                out.flush()
                if marker in line:
                    seen.set()
        seen.set()

    threading.Thread(target=copy, name=f"output-{process.pid}", daemon=True).start()
    return seen


def wait_for_marker(
    process: subprocess.Popen[str], seen: threading.Event, log: Path, what: str, timeout: float
) -> None:
    """Return once `seen` is set by the marker line; fail with the log's tail if the process exited or timed out."""
    if not seen.wait(timeout):
        raise AssertionError(f"{what} did not become ready in {timeout:.0f}s:\n{log.read_text()[-4000:]}")
    if process.poll() is not None:
        raise AssertionError(f"{what} exited with {process.returncode}:\n{log.read_text()[-4000:]}")
