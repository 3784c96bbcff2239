"""`pa dev`'s supervisor (`local/supervisor.py`) on a real part: a moto server that stops serving is started again
on its port, with what it held, and the console line says so; `pids.json` names what runs."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from moto.server import ThreadedMotoServer

from personal_agent.aws_clients import aws_client_at
from personal_agent.local.aws import LocalAws
from personal_agent.local.ports import free_port
from personal_agent.local.stack import LocalStack
from personal_agent.local.supervisor import Part, Supervisor


def test_a_moto_that_stops_serving_starts_again_on_its_port_with_its_state(stack: LocalStack, tmp_path: Path) -> None:
    assert stack.aws is not None  # the session's moto, whose Lambda dispatcher this one shares
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    aws = LocalAws(f"http://127.0.0.1:{port}", server, stack.aws.dispatcher)
    sqs = aws_client_at("sqs", aws.endpoint_url, "us-east-1")
    queue = sqs.create_queue(QueueName=f"supervised-{port}")["QueueUrl"]
    said: list[str] = []
    spoke = threading.Event()

    def say(line: str) -> None:
        said.append(line)
        spoke.set()

    pids = tmp_path / "pids.json"
    supervisor = Supervisor([Part("moto", aws.exited, aws.restart)], pids, extra_pids={"pa_dev": 1}, say=say)
    supervisor.start()
    try:
        assert json.loads(pids.read_text()) == {"pa_dev": 1}  # an in-process part has no pid of its own
        server.stop()  # its serving thread ends, as when it crashes
        assert spoke.wait(30), "the supervisor never said it restarted moto"
        assert said and said[0].startswith("moto stopped serving; restarted in "), said
        assert aws.server is not server
        assert queue in sqs.list_queues(QueueNamePrefix="supervised-")["QueueUrls"]
    finally:
        supervisor.stop()
        aws.server.stop()
    assert not pids.exists()
