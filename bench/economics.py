"""What a typical chat turn costs to run on AWS, next to what its model costs (issue 17).

A typical turn: the model calls three tools, one model request each, then answers (four model requests). The
platform's share is measured on `pa dev` (the scripted model, no model latency) for both drivers:
- inline (the run worker Lambda runs the whole turn while the stream Lambda relays its events), durable (the real
  state machine on moto: its state transitions counted from the execution history, its Task durations from the
  history's timestamps), and streamed (`POST /chats/{id}/runs/stream`: the stream Lambda answering the POST drives
  the run itself, one Lambda per turn: `PA_STREAM_DRIVES_RUNS`);
- Redis commands per turn (Valkey `INFO commandstats`, publisher + relay + slots), the API calls, and how long the
  SSE stream (the stream Lambda) stays open.
Then the same turn again with the model's latency played by the scripted model (`ttft:`/`pace:`, from `--ttft` and
`--tokens-per-s`): events then come at a real stream's rate, so the Redis commands per turn are those of a real
turn (batches hold what one batch window gathers, not a whole instant reply); and once more through the Upstash REST
path (`pa dev` with `UPSTASH_REDIS_REST_URL` pointing at the tests' REST bridge in front of a Valkey of its own,
`bench/counting_bridge.py`), counting the REST requests (what Upstash bills if a script is one command) and the
commands behind them (if every command a script runs is billed).
Lambda time is then priced at the memory template.yaml gives each function (read from it, arm64),
once at the measured durations (platform only) and once with the model's own latency added, because a Lambda that
waits for a streaming model is billed for the wait. Model cost: genai-prices list prices for a cheap and a frontier
model at the token counts printed. Every input is printed; change them with the flags.

Run from the repo root (about 4-6 minutes): `.venv/bin/python bench/economics.py`. The last line is JSON with the
headline figures (model latency included), to compare runs.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.dev_process import HOST, DevProcess  # noqa: E402
from bench.raw_sse import RawSseClient  # noqa: E402
from bench.scripted_model import MODEL_ID  # noqa: E402

# AWS list prices, us-east-1, USD (arm64 Lambda; Step Functions Standard; HTTP API; Upstash pay-as-you-go).
PRICES = {
    "lambda_gb_s": 0.0000133334,
    "lambda_request": 0.20 / 1e6,
    "sfn_transition": 0.025 / 1000,
    "http_api_request": 1.00 / 1e6,
    "redis_command": 0.20 / 100_000,
}
ELASTICACHE_ECPU = 0.0034 / 1e6
FUNCTIONS = {"api": "ApiFunction", "stream": "StreamFunction", "worker": "RunWorkerFunction", "steps": "StepsFunction"}
MODELS = (("cheap", "openai", "gpt-4o-mini"), ("frontier", "anthropic", "claude-sonnet-4-0"))
MODES = ("inline", "durable", "streamed")


def template_memory_gb() -> dict[str, float]:
    """Each function's MemorySize in template.yaml (the Globals' where it sets none), in GB."""
    from personal_agent.local.lambda_registry import load_template

    template = load_template(ROOT / "template.yaml")
    default = template["Globals"]["Function"]["MemorySize"]
    resources = template["Resources"]
    return {k: resources[name]["Properties"].get("MemorySize", default) / 1024 for k, name in FUNCTIONS.items()}


MEMORY_GB = template_memory_gb()
UPSTASH_TOKEN = "bench-economics-upstash-token"


@dataclass
class TurnFigures:
    post_s: list[float]
    stream_s: list[float]
    redis_commands: list[int]
    redis_by_command: Counter[str]
    transitions: list[int]
    task_s: list[float]
    tasks: list[int]
    rest_requests: list[int]
    rest_by_command: Counter[str]


def redis_calls(port: int) -> Counter[str]:
    """Calls so far by command (commands a script runs count too: Valkey counts them like any other)."""
    import redis

    client = redis.Redis(host=HOST, port=port)
    stats: Any = client.info("commandstats")
    client.close()
    return Counter({name.removeprefix("cmdstat_"): int(v["calls"]) for name, v in stats.items()})


def executions(moto_port: int) -> dict[str, Any]:
    import boto3

    sfn = boto3.client(
        "stepfunctions",
        endpoint_url=f"http://{HOST}:{moto_port}",
        region_name=os.environ.get("AWS_DEFAULT_REGION", "us-east-1"),
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    out: dict[str, Any] = {}
    for machine in sfn.list_state_machines()["stateMachines"]:
        for ex in sfn.list_executions(stateMachineArn=machine["stateMachineArn"])["executions"]:
            out[ex["executionArn"]] = sfn.get_execution_history(executionArn=ex["executionArn"], maxResults=1000)[
                "events"
            ]
    return out


def history_figures(events: list[dict[str, Any]]) -> tuple[int, int, float]:
    """(state transitions, Task states run, seconds inside Task states) of one execution."""
    transitions = sum(1 for e in events if e["type"].endswith("StateEntered"))
    entered: dict[str, Any] = {}
    tasks, inside = 0, 0.0
    for e in events:
        if e["type"] == "TaskStateEntered":
            entered["t"] = e["timestamp"]
            tasks += 1
        elif e["type"] == "TaskStateExited" and "t" in entered:
            inside += (e["timestamp"] - entered.pop("t")).total_seconds()
    return transitions, tasks, inside


def turn_message(args: argparse.Namespace, paced: bool) -> str:
    """What the client sends: `tools:N` (and, paced, the model's latency for the scripted model to play)."""
    if not paced:
        return f"tools:{args.tool_calls} what time is it?"
    pace_ms = 1000 / args.tokens_per_s
    return (
        f"tools:{args.tool_calls} chunks:{args.answer_tokens} calls:{args.call_tokens} ttft:{args.ttft * 1000:.0f}"
        f" pace:{pace_ms:.2f} what time is it?"
    )


async def turns(
    dev: DevProcess, token: str, mode: str, count: int, valkey_port: int, calls: int, message: str, rest: Any = None
) -> TurnFigures:
    import httpx

    auth = {"Authorization": f"Bearer {token}"}
    figures = TurnFigures([], [], [], Counter(), [], [], [], [], Counter())
    before = executions(int(dev.env["PA_MOTO_PORT"])) if mode == "durable" else {}
    async with httpx.AsyncClient(base_url=dev.url, timeout=120, headers=auth) as http:
        chat = await http.post("/api/v1/chats", json={"title": "economics"})
        chat.raise_for_status()
        for _ in range(count):
            calls0 = redis_calls(valkey_port)
            rest0 = rest.snapshot() if rest is not None else (0, Counter())
            t0 = time.perf_counter()
            if mode == "streamed":
                t1, frames = await _streamed(http, chat.json()["id"], message)
            else:
                body = {"message": message, "model": MODEL_ID, "mode": mode}
                started = await http.post(f"/api/v1/chats/{chat.json()['id']}/runs", json=body)
                started.raise_for_status()
                t1 = time.perf_counter()
                sse = await RawSseClient.connect(HOST, dev.port, started.json()["events_url"], auth)
                frames = [data async for data in sse.frames()]
                await sse.close()
            t2 = time.perf_counter()
            results = b"".join(frames).count(b'"TOOL_CALL_RESULT"')
            if b'"RUN_FINISHED"' not in frames[-1] or results != calls:
                raise RuntimeError(f"the {mode} turn ran {results} tools: {frames[-1][:200]!r}")
            figures.post_s.append(t1 - t0)
            figures.stream_s.append(t2 - t1)
            used = redis_calls(valkey_port) - calls0
            figures.redis_commands.append(sum(used.values()))
            figures.redis_by_command.update(used)
            if rest is not None:
                requests, by_command = rest.snapshot()
                figures.rest_requests.append(requests - rest0[0])
                figures.rest_by_command.update(by_command - rest0[1])
    if mode == "durable":
        after = executions(int(dev.env["PA_MOTO_PORT"]))
        for arn, events in after.items():
            if arn in before:
                continue
            transitions, tasks, inside = history_figures(events)
            figures.transitions.append(transitions)
            figures.tasks.append(tasks)
            figures.task_s.append(inside)
    return figures


async def _streamed(http: Any, chat_id: str, message: str) -> tuple[float, list[bytes]]:
    """`POST …/runs/stream`: (when its response began, the `data:` payloads of its frames)."""
    body = {"message": message, "model": MODEL_ID, "mode": "inline"}
    async with http.stream("POST", f"/api/v1/chats/{chat_id}/runs/stream", json=body) as response:
        response.raise_for_status()
        began = time.perf_counter()
        frames = [line[5:].strip().encode() async for line in response.aiter_lines() if line.startswith("data:")]
    return began, frames


def model_turn(args: argparse.Namespace) -> list[tuple[int, int]]:
    """(input, output) tokens of the turn's four requests: the context grows by each call and its result."""
    requests = []
    for k in range(args.tool_calls + 1):
        context = args.system_tokens + args.history_tokens + args.user_tokens
        context += k * (args.call_tokens + args.result_tokens)
        requests.append((context, args.call_tokens if k < args.tool_calls else args.answer_tokens))
    return requests


def model_cost(provider: str, model: str, requests: list[tuple[int, int]]) -> float:
    from genai_prices import Usage, calc_price

    total = 0.0
    for input_tokens, output_tokens in requests:
        price = calc_price(Usage(input_tokens=input_tokens, output_tokens=output_tokens), model, provider_id=provider)
        total += float(price.total_price)
    return total


def model_seconds(requests: list[tuple[int, int]], ttft: float, tokens_per_s: float) -> float:
    return sum(ttft + out / tokens_per_s for _, out in requests)


def platform_cost(
    mode: str, f: TurnFigures, args: argparse.Namespace, wait_s: float, redis: float | None = None
) -> dict[str, float]:
    """USD per turn by line item; `wait_s` is model time the run's Lambda and the open stream also pay for;
    `redis` the Redis commands per turn when not `f`'s (the paced turn's, with the model's latency). Streamed: the
    POST goes to the stream function's URL, not the HTTP API, so the turn's API calls are one fewer (priced at the
    POST's duration, as for the other shapes), and the stream Lambda, open from the POST to the run's end, is the
    run's only Lambda."""
    med = statistics.median
    api_calls = args.api_calls - 1 if mode == "streamed" else args.api_calls
    api = med(f.post_s) * MEMORY_GB["api"] * PRICES["lambda_gb_s"] * api_calls + api_calls * PRICES["lambda_request"]
    stream_s = med(f.stream_s) + wait_s + (med(f.post_s) if mode == "streamed" else 0.0)
    what = "stream Lambda (drives the run)" if mode == "streamed" else "stream Lambda (open for the run)"
    cost = {
        "API Gateway (HTTP API)": api_calls * PRICES["http_api_request"],
        "API Lambda": api,
        what: stream_s * MEMORY_GB["stream"] * PRICES["lambda_gb_s"] + PRICES["lambda_request"],
        "Redis commands": (med(f.redis_commands) if redis is None else redis) * PRICES["redis_command"],
    }
    if mode == "inline":
        run_s = med(f.stream_s) + wait_s
        cost["run worker Lambda"] = run_s * MEMORY_GB["worker"] * PRICES["lambda_gb_s"] + PRICES["lambda_request"]
    elif mode == "durable":
        run_s = med(f.task_s) + wait_s
        tasks = med(f.tasks)
        cost["steps Lambda"] = run_s * MEMORY_GB["steps"] * PRICES["lambda_gb_s"] + tasks * PRICES["lambda_request"]
        cost["Step Functions transitions"] = med(f.transitions) * PRICES["sfn_transition"]
    return cost


def paced_report(args: argparse.Namespace, paced: dict[str, TurnFigures], upstash: dict[str, TurnFigures]) -> None:
    med = statistics.median
    print(f"\nInputs: measured with the model's latency played (message {turn_message(args, True)!r})")
    for mode, f in paced.items():
        top = ", ".join(f"{name} {n / len(f.post_s):.0f}" for name, n in f.redis_by_command.most_common(6))
        print(f"  {mode:<8} Valkey: Redis commands {med(f.redis_commands):.0f} per turn (n={len(f.post_s)}): {top}")
    for mode, f in upstash.items():
        top = ", ".join(f"{name} {n / len(f.post_s):.0f}" for name, n in f.rest_by_command.most_common(6))
        print(
            f"  {mode:<8} Upstash REST: {med(f.rest_requests):.0f} requests per turn ({top});"
            f" {med(f.redis_commands):.0f} commands behind them (n={len(f.post_s)})"
        )
    print(
        "  Upstash bills per command; its docs do not say whether the commands a script runs are billed one by one,"
        "\n  so Redis is priced below at the commands Valkey counts (every command a script runs: the upper bound);"
        "\n  at one command per REST request (a script = one EVALSHA) it is the lower bound printed above."
    )


def report(
    args: argparse.Namespace, figures: dict[str, TurnFigures], taken: str, paced: dict[str, TurnFigures]
) -> dict[str, Any]:
    """Print everything; the headline figures (model latency included) for the JSON line."""
    headline: dict[str, Any] = {"cheap_pct": {}, "frontier_pct": {}, "redis_commands": {}}
    med = statistics.median
    requests = model_turn(args)
    print(
        f"\nEconomics of one chat turn with {args.tool_calls} tool calls,"
        f" measured {taken}, load {os.getloadavg()[0]:.1f}"
    )
    print("\nInputs: AWS list prices (us-east-1)")
    for name, value in PRICES.items():
        print(f"  {name:<22} ${value:.10f}")
    print(f"  memory GB              {MEMORY_GB}")
    print(f"  PA_EVENT_BATCH_MS      {args.batch_ms if args.batch_ms is not None else 'pa dev default'}")
    print(f"  API calls per turn     {args.api_calls} (POST the run + GET the transcript); SSE goes to a Function URL")
    print("                         (streamed: the POST itself goes to the Function URL, so one API call)")
    print("\nInputs: measured on pa dev (scripted model, no model latency), median of the turns")
    for mode, f in figures.items():
        print(
            f"  {mode:<8} POST {med(f.post_s) * 1000:.1f} ms, stream open {med(f.stream_s) * 1000:.1f} ms,"
            f" Redis commands {med(f.redis_commands):.0f}",
            end="",
        )
        if f.transitions:
            print(
                f", state transitions {med(f.transitions):.0f}, Task states {med(f.tasks):.0f}"
                f" ({med(f.task_s) * 1000:.1f} ms inside)",
                end="",
            )
        print(f"  (n={len(f.post_s)})")
        top = ", ".join(f"{name} {n / len(f.post_s):.0f}" for name, n in f.redis_by_command.most_common(6))
        print(f"           Redis commands per turn by kind: {top}")
    print("\nInputs: the model's turn (tokens per request: input, output)")
    print(f"  {requests}")
    print(f"  model latency assumed: {args.ttft} s to first token + output at {args.tokens_per_s} tokens/s per request")
    wait = model_seconds(requests, args.ttft, args.tokens_per_s)
    print(f"  = {wait:.1f} s of model time per turn (the run's Lambda and the open stream wait through it)")
    for label, provider, model in MODELS:
        spend = model_cost(provider, model, requests)
        print(f"\n{label} model {provider}:{model}: ${spend:.6f} per turn (genai-prices)")
        for mode, f in figures.items():
            for waits, what in ((0.0, "platform time only"), (wait, "with the model's latency")):
                redis = med(paced[mode].redis_commands) if waits and mode in paced else None
                cost = platform_cost(mode, f, args, waits, redis)
                total = sum(cost.values())
                if waits:
                    headline[f"{label}_pct"][mode] = round(100 * total / spend, 2)
                    headline["redis_commands"][mode] = med(f.redis_commands) if redis is None else redis
                items = ", ".join(f"{k} ${v:.7f}" for k, v in cost.items())
                verdict = "met" if total <= 0.03 * spend else "missed"
                print(
                    f"  {mode:<8} {what:<25} ${total:.7f} = {100 * total / spend:5.2f} % of model spend"
                    f" (target <= 3 %: {verdict})"
                )
                print(f"           {items}")
    redis_per_turn = statistics.median(figures["inline"].redis_commands)
    print(
        f"\nThe same"
        f" {redis_per_turn:.0f} commands on ElastiCache Serverless (${ELASTICACHE_ECPU * 1e6:.4f} per million ECPUs,"
        f" 1 per command under 1 KB) cost ${redis_per_turn * ELASTICACHE_ECPU:.8f} per turn, but its storage"
        " minimum (1 GB at $0.125/GB-hour) is not $0 when idle; Upstash is."
    )
    print("\nIdle: $0. Every part above is billed per request or per GB-second (Lambda, Step Functions, HTTP API,")
    print("Upstash); storage (Postgres, S3, Redis data) is billed by size, not by time idle.")
    return headline


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=5, help="turns per driver")
    parser.add_argument("--tool-calls", type=int, default=3)
    parser.add_argument("--system-tokens", type=int, default=1500, help="instructions + tool schemas")
    parser.add_argument("--history-tokens", type=int, default=2000, help="the chat so far")
    parser.add_argument("--user-tokens", type=int, default=100)
    parser.add_argument("--call-tokens", type=int, default=40, help="output of a request that calls a tool")
    parser.add_argument("--result-tokens", type=int, default=200, help="a tool result, as model input")
    parser.add_argument("--answer-tokens", type=int, default=300, help="the final answer")
    parser.add_argument("--ttft", type=float, default=0.5, help="model seconds to first token")
    parser.add_argument("--tokens-per-s", type=float, default=80.0, help="model output speed")
    parser.add_argument("--api-calls", type=int, default=2)
    parser.add_argument("--paced-turns", type=int, default=3, help="turns per driver with the model's latency")
    parser.add_argument("--no-upstash", action="store_true", help="skip the Upstash REST path")
    parser.add_argument("--batch-ms", type=float, default=None, help="PA_EVENT_BATCH_MS for pa dev (default: its own)")
    return parser.parse_args()


def measure(label: str, data_dir: Path, env: dict[str, str], args: argparse.Namespace, **kw: Any) -> Any:
    """Turns on one `pa dev`: unpaced and paced for both drivers (or only paced, `paced_only`)."""
    valkey, rest, paced_only = kw.get("valkey"), kw.get("rest"), kw.get("paced_only", False)
    dev = DevProcess(label, data_dir, env)
    try:
        dev.wait_ready()
        (token,) = dev.tokens(1)
        port = valkey or int(dev.env["PA_VALKEY_PORT"])
        run = functools.partial(turns, dev, token, valkey_port=port, calls=args.tool_calls, rest=rest)
        unpaced = (
            {} if paced_only else {m: asyncio.run(run(m, args.turns, message=turn_message(args, False))) for m in MODES}
        )
        paced = {m: asyncio.run(run(m, args.paced_turns, message=turn_message(args, True))) for m in MODES}
    finally:
        dev.stop()
    return unpaced, paced


def main() -> None:
    args = parse_args()
    taken = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    upstash: dict[str, TurnFigures] = {}
    base = {} if args.batch_ms is None else {"PA_EVENT_BATCH_MS": str(args.batch_ms)}
    with tempfile.TemporaryDirectory(prefix="pa-economics-") as tmp:
        figures, paced = measure("economics", Path(tmp) / "economics", base, args)
        if not args.no_upstash:
            from bench.counting_bridge import counting_bridge
            from personal_agent.local.valkey import start_embedded_valkey

            server, redis_url = start_embedded_valkey(Path(tmp) / "upstash-valkey")
            try:
                with counting_bridge(redis_url, UPSTASH_TOKEN) as (url, counting):
                    env = {**base, "UPSTASH_REDIS_REST_URL": url, "UPSTASH_REDIS_REST_TOKEN": UPSTASH_TOKEN}
                    kw = {"valkey": server.port, "rest": counting, "paced_only": True}
                    _, upstash = measure("economics-upstash", Path(tmp) / "economics-upstash", env, args, **kw)
            finally:
                server.stop()
    paced_report(args, paced, upstash)
    headline = report(args, figures, taken, paced)
    if upstash:
        headline["upstash_requests"] = {m: statistics.median(f.rest_requests) for m, f in upstash.items()}
        headline["upstash_commands"] = {m: statistics.median(f.redis_commands) for m, f in upstash.items()}
    print(json.dumps(headline))


if __name__ == "__main__":
    main()
