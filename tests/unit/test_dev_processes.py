"""`local.dev_processes`: how many processes `pa dev` serves with, and no fork while another thread runs (a forked
worker would inherit that thread's locks mid-use). The workers themselves: tests/e2e/test_dev_server_processes.py."""

from __future__ import annotations

import os
import threading

from personal_agent.local.dev_processes import DevWorkers, process_count


def test_the_configured_count_or_one_per_cpu() -> None:
    assert process_count(1) == 1
    assert process_count(3) == 3
    assert process_count(0) == (os.cpu_count() or 1)


def test_no_worker_is_forked_while_another_thread_runs() -> None:
    release = threading.Event()
    thread = threading.Thread(target=release.wait)
    thread.start()
    served: list[bool] = []
    try:
        workers = DevWorkers.fork(1, lambda ready: served.append(True))
    finally:
        release.set()
        thread.join()
    assert workers.workers == [] and served == []
    workers.stop()  # nothing to stop: returns at once
