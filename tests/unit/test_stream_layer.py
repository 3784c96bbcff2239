"""The SSE relay's server (uvicorn on uvloop and httptools, named in functions/stream/run.sh) ships in its own
stream layer beside the API layer, and the API function, held under 50 MB, carries none of it."""

from __future__ import annotations

import re
from pathlib import Path

from personal_agent.local.lambda_registry import load_template

ROOT = Path(__file__).resolve().parents[2]
RESOURCES = load_template(ROOT / "template.yaml")["Resources"]
MAKEFILE = (ROOT / "Makefile").read_text()


def _variable(name: str) -> str:
    match = re.search(rf"^{name} := (.*)$", MAKEFILE, re.MULTILINE)
    assert match, name
    return match.group(1)


def test_the_stream_function_has_the_api_or_worker_layer_and_the_stream_layer() -> None:
    layers = RESOURCES["StreamFunction"]["Properties"]["Layers"]
    assert {"Fn::If": ["DrivesStreamedRuns", {"Ref": "WorkerLayer"}, {"Ref": "ApiLayer"}]} in layers
    assert {"Ref": "StreamLayer"} in layers
    assert RESOURCES["StreamLayer"]["Metadata"]["BuildMethod"] == "makefile"
    assert "build-StreamLayer:" in (ROOT / "layers" / "Makefile").read_text()


def test_what_run_sh_names_is_in_the_stream_layer_and_left_out_of_the_api_layer() -> None:
    run_sh = (ROOT / "functions" / "stream" / "run.sh").read_text()
    named = {"uvicorn", *re.findall(r"--(?:loop|http) (\w+)", run_sh)}
    assert named == {"uvicorn", "uvloop", "httptools"}
    assert named <= set(_variable("STREAM_LAYER_ONLY").split("|"))
    assert named <= set(_variable("API_LAYER_PRUNE").split())


def test_the_arm64_layers_leave_out_wordllama_which_has_no_arm64_wheel() -> None:
    assert "wordllama" in _variable("API_LAYER_PRUNE").split()
    assert "wordllama" in _variable("WORKER_LAYER_PRUNE").split()


def test_the_lambda_relay_reads_each_stream_itself_since_one_invocation_serves_one_stream() -> None:
    env = RESOURCES["StreamFunction"]["Properties"]["Environment"]["Variables"]
    assert str(env["PA_SSE_FANOUT"]) == "0"
