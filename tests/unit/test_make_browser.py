"""`make test` on a fresh machine: without Chromium, a user who cannot install it is told the one command to
run, at once (as root, `make browser` installs it with apt-get, as `.ci/run` and a fresh root shell get it)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_make_test_needs_the_browser_and_says_how_to_get_it() -> None:
    make = shutil.which("make")
    assert make is not None
    command = [make, "--no-print-directory", "-C", str(ROOT), "browser", "CHROMIUM=/nonexistent/chromium"]
    if os.geteuid() == 0:  # as an unprivileged user, who cannot apt-get
        command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "run: sudo apt-get install -y chromium" in done.stderr
    prerequisites = subprocess.run(
        [make, "-C", str(ROOT), "-pn", "test"], capture_output=True, text=True, timeout=60
    ).stdout
    assert any(line.startswith("test:") and " browser" in line for line in prerequisites.splitlines())
