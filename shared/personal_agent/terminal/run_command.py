"""`pa run` for scripts: start a run, stream its answer to stdout (or `--json`: one document at the end), exit with
its outcome: 0 succeeded, 1 failed or cancelled, 2 bad usage, 3 over budget, 4 an approval was denied."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from typing import Any

from personal_agent.terminal.client import Api, ClientError
from personal_agent.terminal.events import RunFollower

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_BUDGET, EXIT_DENIED = 0, 1, 2, 3, 4


def start_run(api: Api, message: str, *, agent: str | None, model: str | None, chat: str | None) -> dict[str, Any]:
    """A new chat (bound to `agent`) unless `chat` is given, and a run of `message` in it."""
    chat_id = chat or api.call("POST", "/api/v1/chats", json={"title": message[:80] or "pa run", "agent": agent})["id"]
    body: dict[str, Any] = {"message": message}
    if agent:
        body["agent"] = agent
    if model:
        body["model"] = model
    started: dict[str, Any] = api.call("POST", f"/api/v1/chats/{chat_id}/runs", json=body)
    started["chat_id"] = chat_id
    return started


def outcome_code(run: dict[str, Any], denied: bool) -> int:
    """The exit code of a finished run."""
    error = run.get("error") or {}
    if isinstance(error, dict) and error.get("code") == "budget_exceeded":
        return EXIT_BUDGET
    if run.get("status") != "succeeded":
        return EXIT_FAILED
    return EXIT_DENIED if denied else EXIT_OK


def denied_approvals(api: Api, run_id: str) -> bool:
    items = api.call("GET", "/api/v1/approvals", params={"status": "denied"})["items"]
    return any(a["run_id"] == run_id for a in items)


def _message(args: argparse.Namespace) -> str:
    prompt = " ".join(args.prompt)
    if not sys.stdin.isatty():
        extra = sys.stdin.read()
        if extra.strip():
            prompt = f"{prompt}\n\n{extra}" if prompt else extra
    if not prompt.strip():
        raise ClientError("pa run: give a prompt (an argument, stdin, or both)", exit_code=EXIT_USAGE)
    return prompt


def _follow(api: Api, started: dict[str, Any], quiet: bool) -> str:
    """Stream the run's answer (to stdout unless `quiet`); approvals and questions are announced on stderr."""
    answer: list[str] = []
    for event in RunFollower(api, started["events_url"]).events():
        kind = event.get("type")
        if kind == "TEXT_MESSAGE_CONTENT":
            answer.append(event.get("delta", ""))
            if not quiet:
                sys.stdout.write(event.get("delta", ""))
                sys.stdout.flush()
        elif kind == "CUSTOM" and event.get("name") in ("approval_requested", "question_asked"):
            value = event.get("value") or {}
            what = value.get("tool") or value.get("question")
            print(f"pa run: waiting for a person: {event['name']} ({what}); answer it in the web chat", file=sys.stderr)
    if answer and not quiet and not answer[-1].endswith("\n"):
        sys.stdout.write("\n")
    return "".join(answer)


def _interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def run_command(args: argparse.Namespace) -> int:
    message = _message(args)
    api = Api.connect(args.url, args.token)
    started = start_run(api, message, agent=args.agent, model=args.model, chat=args.chat)
    if not args.wait:
        print(
            json.dumps({"run_id": started["run_id"], "chat_id": started["chat_id"]}) if args.json else started["run_id"]
        )
        return EXIT_OK
    # A stopped CI job (SIGTERM) ends its run as Ctrl-C does. SIGINT keeps what the shell gave: a background job's
    # is ignored, and so is its Ctrl-C.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        answer = _follow(api, started, quiet=args.json)
    except KeyboardInterrupt:
        api.call("POST", f"/api/v1/runs/{started['run_id']}/cancel")
        print("pa run: cancelled", file=sys.stderr)
        return EXIT_FAILED
    run = api.call("GET", f"/api/v1/runs/{started['run_id']}")
    denied = denied_approvals(api, started["run_id"])
    if args.json:
        document = {
            "run_id": run["id"],
            "chat_id": run["chat_id"],
            "status": run["status"],
            "answer": answer,
            "output": run.get("output"),
            "cost_usd": run.get("cost_usd"),
            "error": run.get("error"),
        }
        print(json.dumps(document))
    elif run.get("error"):
        print(f"pa run: {run['status']}: {run['error'].get('message', run['error'])}", file=sys.stderr)
    return outcome_code(run, denied)


def add_run_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    run = sub.add_parser(
        "run",
        parents=[common],
        help="run an agent on a prompt and print the answer (for scripts)",
        description="Run a prompt (plus stdin, if piped) and print the answer. Exit codes: 0 succeeded, 1 failed or"
        " cancelled, 2 bad usage, 3 over budget, 4 an approval was denied.",
    )
    run.add_argument("prompt", nargs="*", help="the message (stdin, when piped, is appended)")
    run.add_argument("--agent", help="the agent's slug")
    run.add_argument("--model", help="a model name from `GET /api/v1/models`")
    run.add_argument("--chat", help="continue this chat (its id) instead of starting one")
    run.add_argument("--json", action="store_true", help="print {run_id, chat_id, status, answer, output, cost_usd}")
    run.add_argument("--wait", action=argparse.BooleanOptionalAction, default=True, help="follow the run (default)")
    run.set_defaults(func=run_command)
